//! The operations: queries at any (validAt, knownAt), mutations that write one atomic
//! batch each, and the `events` subscription. One module per domain, merged into the
//! `Query` and `Mutation` roots; the resolver prologue (namespace and access, store, read
//! point) and the write helpers are here, paging in `paging`.

use std::sync::Arc;

use async_graphql::connection::{Connection, Edge};
use async_graphql::{Context, ID, MergedObject, Object, Result, SimpleObject, Subscription};
use futures_util::Stream;
use futures_util::StreamExt as _;
use futures_util::future::ready;
use mnemo_core::{FactId, Namespace, PredicateDef, RecordRef, Seq, Timestamp};
use mnemo_engine::{
    Change, EntityFilter, EntityRef, EpisodeFilter, EpisodeRef, FactFilter, KnownAt, NamespacePatch,
    NewEpisode, NewIntention, NoteEntity, ReadAt, Receipt, RecordId, Scope, SnapshotCursor, Store,
};
use tokio_stream::wrappers::BroadcastStream;

use crate::access::{Access, Mode};
use crate::error::{code, coded, engine_error};
use crate::input::{
    EmbeddingInput, EntityInput, EntityRefInput, EpisodeInput, FactInput, FactOrStatement, ValueInput,
    existing_entity, fact_id, fact_or_statement, invalid, new_fact, object_value, parse_id, time,
};
use crate::intentions::{self, DueIntention, FiringPayload, IntentionObject, TriggerInput};
use crate::memory::{self, DecayInput, ProfileInput, RecordItem, RecordKind, RecordList};
use crate::objects::{
    Basis, Cardinality, EntityObject, EpisodeObject, EventNotice, FactObject, Listing, NamespaceInfo,
    Neighbor, Neighborhood, Pin, Predicate, StatementObject, ValueType, engine, statement_id, store,
};
use crate::scalars::DateTime;
use crate::search::{self, ContextObject, RememberPayload, Search, SearchFilter};
use crate::topics::{self, ClosedSegment, SegmentationInput, SegmentsPayload, TopicObject};
use crate::{Events, Limits};

pub(crate) type Page<T> = Connection<String, T, Listing>;

fn limits<'a>(ctx: &Context<'a>) -> Result<&'a Limits> {
    ctx.data::<Limits>().map_err(|_| coded(code::INTERNAL, "no limits in the schema"))
}

/// The namespace named `name`, if the caller may use it that way.
fn namespace(ctx: &Context<'_>, name: &str, mode: Mode) -> Result<Namespace> {
    let ns = Namespace::new("namespace", name).map_err(|e| engine(e.into()))?;
    let access = ctx.data_opt::<Access>().cloned().unwrap_or(Access::Denied);
    if !access.allows(ns.as_str(), mode) {
        let verb = if mode == Mode::ReadWrite { "write to" } else { "read" };
        return Err(coded(code::FORBIDDEN, format!("this token may not {verb} namespace {name:?}")));
    }
    Ok(ns)
}

/// What every resolver starts from: the namespace the caller may use in this mode, and
/// the store. With [`read_at`] (the read point) and [`page_size`] it is the whole
/// prologue of a resolver.
pub(crate) struct Start<'a> {
    pub(crate) ns: Namespace,
    pub(crate) store: &'a Arc<Store>,
}

/// The prologue: the namespace checked against the caller's access, and the store.
pub(crate) fn start<'a>(ctx: &Context<'a>, name: &str, mode: Mode) -> Result<Start<'a>> {
    Ok(Start { ns: namespace(ctx, name, mode)?, store: store(ctx)? })
}

/// The point a read is pinned at, from its arguments: a concrete seq, valid time and
/// decay clock.
fn read_at(
    store: &Store,
    ns: &Namespace,
    valid_at: Option<&DateTime>,
    known_at: Option<&DateTime>,
    known_at_seq: Option<u64>,
    at: Option<&DateTime>,
) -> Result<ReadAt> {
    let valid_at = valid_at.map(|t| time(store, ns, "validAt", t)).transpose()?;
    let at = at.map(|t| time(store, ns, "at", t)).transpose()?;
    let known_at = match (known_at, known_at_seq) {
        (Some(_), Some(_)) => return Err(invalid("knownAt", "…", "give knownAt or knownAtSeq, not both")),
        (Some(t), None) => KnownAt::Time(time(store, ns, "knownAt", t)?),
        (None, Some(s)) => KnownAt::Seq(Seq(s)),
        (None, None) => KnownAt::Latest,
    };
    // Pinned here, once: every read of the request resolves at this seq and these times.
    store.pin(ns, ReadAt { valid_at, known_at, at }).map_err(engine)
}

mod admin;
mod analytics_ops;
mod graph;
mod intention_ops;
mod memory_ops;
mod paging;
mod rdf_ops;
mod retrieval;
mod topic_ops;

use paging::fact_page;
pub(crate) use paging::{episode_cursor, page_size};

/// Most items a report of upkeep lists (intentions fired, segments closed and their
/// episodes, entities merged, facts corroborated, records gone dormant); the work is
/// done whatever is listed.
pub const MAX_REPORTED: usize = 1_000;

/// Most episodes listed for one segment closed.
pub const MAX_REPORTED_EPISODES: usize = 100;

/// The queries.
#[derive(MergedObject, Default)]
pub struct Query(
    admin::AdminQuery,
    analytics_ops::AnalyticsQuery,
    graph::GraphQuery,
    memory_ops::MemoryQuery,
    rdf_ops::RdfQuery,
    retrieval::RetrievalQuery,
    topic_ops::TopicQuery,
    intention_ops::IntentionQuery,
);

/// What a write committed, read back at its own batch.
#[derive(SimpleObject)]
#[graphql(complex)]
pub struct WritePayload {
    /// The batch's position in the namespace's log.
    pub seq: u64,
    /// Its system time.
    pub system_time: DateTime,
    /// The facts it wrote (or ended, or retracted), as seen right after it, at now. An
    /// assertion identical to a live fact is another statement of that fact: the fact is
    /// listed, and `statements` has the new statement.
    pub facts: Vec<FactObject>,
    /// Entities created because a fact named one nobody had.
    pub created_entities: Vec<EntityObject>,
    /// The point the payload was read at.
    pub basis: Basis,
    #[graphql(skip)]
    pub(crate) written: Written,
}

/// The statements a write made, to list on demand.
#[derive(Default)]
pub(crate) struct Written {
    pin: Option<Arc<Pin>>,
    statements: Vec<FactId>,
}

impl Written {
    /// The statements `receipt`'s assertions made, read at `pin`.
    fn of(pin: &Arc<Pin>, receipt: &Receipt) -> Written {
        let statements = receipt
            .ids
            .iter()
            .filter_map(|id| match id {
                Some(RecordId::Fact(f)) => Some(*f),
                _ => None,
            })
            .collect();
        Written { pin: Some(Arc::clone(pin)), statements }
    }

    fn statements(&self, ctx: &Context<'_>) -> Result<Vec<StatementObject>> {
        let Some(pin) = &self.pin else { return Ok(Vec::new()) };
        let store = crate::objects::store(ctx)?;
        Ok(self.statements.iter().filter_map(|id| StatementObject::load(store, pin, *id)).collect())
    }
}

#[async_graphql::ComplexObject]
impl WritePayload {
    /// The statement each assertion made, in the order given (`statement { id }` beside
    /// `fact { id }`): a new fact's first statement has the fact's number; a restatement
    /// is a statement of the fact it repeats.
    async fn statements(&self, ctx: &Context<'_>) -> Result<Vec<StatementObject>> {
        self.written.statements(ctx)
    }
}

/// What `recordEpisode` committed.
#[derive(SimpleObject)]
#[graphql(complex)]
pub struct RecordEpisodePayload {
    /// The batch's position in the namespace's log.
    pub seq: u64,
    /// Its system time.
    pub system_time: DateTime,
    /// The episode.
    pub episode: Option<EpisodeObject>,
    /// The entities given, created or updated.
    pub entities: Vec<EntityObject>,
    /// The facts, sourced from the episode.
    pub facts: Vec<FactObject>,
    /// Entities created because a fact named one nobody had.
    pub created_entities: Vec<EntityObject>,
    /// The point the payload was read at.
    pub basis: Basis,
    #[graphql(skip)]
    pub(crate) written: Written,
}

#[async_graphql::ComplexObject]
impl RecordEpisodePayload {
    /// The statement each of its facts made, in the order given.
    async fn statements(&self, ctx: &Context<'_>) -> Result<Vec<StatementObject>> {
        self.written.statements(ctx)
    }
}

/// Two entities found to be one.
#[derive(SimpleObject)]
pub struct Merge {
    /// The entity merged away, as it was just before.
    pub from: EntityObject,
    /// The entity both now read as.
    pub into: EntityObject,
}

/// A fact that merging made corroborate another statement of it.
#[derive(SimpleObject)]
pub struct Corroborated {
    /// The fact.
    pub fact: FactObject,
    /// How many statements it has now.
    pub statements: u32,
}

/// What consolidation did.
#[derive(SimpleObject)]
pub struct ConsolidationPayload {
    /// The batch that recorded the merges (null when nothing was merged).
    pub seq: Option<u64>,
    /// Entities merged.
    pub merged: Vec<Merge>,
    /// Facts now corroborated by a merged entity's identical fact.
    pub corroborated: Vec<Corroborated>,
    /// Records that turned dormant in the window, and when.
    pub dormant: Vec<RecordItem>,
    /// The point the report was read at.
    pub basis: Basis,
}

/// What `recall` committed.
#[derive(SimpleObject)]
pub struct RecallPayload {
    /// The batch's position in the namespace's log.
    pub seq: u64,
    /// Its system time.
    pub system_time: DateTime,
    /// When the records were recalled.
    pub at: DateTime,
    /// The records, read right after the recall at its time.
    pub records: Vec<RecordItem>,
}

/// What `definePredicate` committed.
#[derive(SimpleObject)]
pub struct DefinePredicatePayload {
    /// The batch's position in the namespace's log.
    pub seq: u64,
    /// Its system time.
    pub system_time: DateTime,
    /// The predicate as now declared.
    pub predicate: Predicate,
}

/// The mutations: each writes one atomic batch; a rejected one stores nothing.
#[derive(MergedObject, Default)]
pub struct Mutation(
    graph::GraphMutation,
    memory_ops::MemoryMutation,
    retrieval::RetrievalMutation,
    topic_ops::TopicMutation,
    intention_ops::IntentionMutation,
    admin::AdminMutation,
);

/// Appends `changes`, naming each change's input path in errors.
pub(crate) fn commit(
    store: &Store,
    ns: &Namespace,
    changes: Vec<Change>,
    paths: &[String],
) -> Result<Receipt> {
    commit_named(store, ns, changes, |n| paths.get(n).cloned().unwrap_or_default())
}

/// [`commit`], naming change `n`'s input `path(n)` only when it is wrong.
pub(crate) fn commit_named(
    store: &Store,
    ns: &Namespace,
    changes: Vec<Change>,
    path: impl Fn(usize) -> String,
) -> Result<Receipt> {
    store.append(ns, changes).map_err(|e| named_error(e, path))
}

/// An error of a batch as the request's: change `n` of the batch is the request's input
/// at `path(n)` (`facts[1]`).
pub(crate) fn named_error(
    e: mnemo_engine::EngineError,
    path: impl Fn(usize) -> String,
) -> async_graphql::Error {
    match e {
        mnemo_engine::EngineError::InChange { change, error } => engine_error(error.within(&path(change))),
        other => engine_error(other),
    }
}

/// Objects for what a receipt wrote, read at now as known right after it.
fn pin_after(store: &Store, ns: &Namespace, receipt: &Receipt, clock: Option<Timestamp>) -> Result<Arc<Pin>> {
    let at = ReadAt { valid_at: None, known_at: KnownAt::Seq(receipt.seq), at: clock };
    let basis = store.basis(ns, at).map_err(engine)?;
    Ok(Pin::new(ns.clone(), basis))
}

fn created(store: &Store, pin: &Arc<Pin>, receipt: &Receipt) -> Vec<EntityObject> {
    receipt.created.iter().filter_map(|id| EntityObject::load(store, pin, *id)).collect()
}

fn written_facts(store: &Store, pin: &Arc<Pin>, receipt: &Receipt) -> Vec<FactObject> {
    let ids: Vec<FactId> = receipt
        .ids
        .iter()
        .filter_map(|id| match id {
            Some(RecordId::Fact(f)) => Some(*f),
            _ => None,
        })
        .collect();
    FactObject::load_many(store, pin, &ids)
}

/// Intention `id` read at the batch that wrote it.
fn intention_after(
    store: &Store,
    ns: Namespace,
    receipt: &Receipt,
    id: mnemo_core::IntentionId,
) -> Result<IntentionObject> {
    let answer = store
        .intentions_by_id(&ns, &[id], ReadAt { known_at: KnownAt::Seq(receipt.seq), ..ReadAt::default() })
        .map_err(engine)?;
    let view = answer
        .value
        .into_iter()
        .next()
        .ok_or_else(|| coded(code::INTERNAL, "intention not found after its write"))?;
    Ok(IntentionObject { pin: Pin::new(ns, answer.basis), view })
}

fn fact_payload(
    store: &Store,
    ns: &Namespace,
    receipt: &Receipt,
    id: mnemo_core::FactId,
) -> Result<WritePayload> {
    let pin = pin_after(store, ns, receipt, None)?;
    Ok(WritePayload {
        seq: receipt.seq.0,
        system_time: receipt.system_time.into(),
        facts: FactObject::load(store, &pin, id).into_iter().collect(),
        created_entities: Vec::new(),
        basis: (&pin.basis).into(),
        written: Written::default(),
    })
}

/// The subscriptions.
pub struct Subscription;

#[Subscription]
impl Subscription {
    /// Every event committed to a namespace from now on, in log order.
    async fn events(&self, ctx: &Context<'_>, namespace: String) -> Result<impl Stream<Item = EventNotice>> {
        let ns = self::namespace(ctx, &namespace, Mode::Read)?;
        let events =
            ctx.data::<Events>().map_err(|_| coded(code::INTERNAL, "no event feed in the schema"))?;
        let stream = BroadcastStream::new(events.subscribe())
            // A subscriber too slow for the feed is dropped rather than silently skipped.
            .take_while(|batch| ready(batch.is_ok()))
            .filter_map(move |batch| ready(batch.ok().filter(|b| b.namespace == ns)))
            .flat_map(|batch| futures_util::stream::iter(crate::notices(&batch)));
        Ok(stream)
    }
}
