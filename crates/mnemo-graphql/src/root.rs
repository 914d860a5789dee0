//! The operations: queries at any (validAt, knownAt), mutations that write one atomic
//! batch each, and the `events` subscription.

use std::sync::Arc;

use async_graphql::connection::{Connection, Edge};
use async_graphql::{Context, ID, Object, Result, SimpleObject, Subscription};
use futures_util::Stream;
use futures_util::StreamExt as _;
use futures_util::future::ready;
use mnemo_core::{Namespace, PredicateDef, RecordRef, Seq, Timestamp};
use mnemo_engine::{
    Change, EntityFilter, EntityRef, EpisodeFilter, EpisodeRef, FactFilter, KnownAt, NamespacePatch,
    NewEpisode, NewIntention, NoteEntity, ReadAt, Receipt, RecordId, Scope, SnapshotCursor, Store,
};
use tokio_stream::wrappers::BroadcastStream;

use crate::access::{Access, Mode};
use crate::error::{code, coded, engine_error};
use crate::input::{
    EmbeddingInput, EntityInput, EntityRefInput, EpisodeInput, FactInput, ValueInput, existing_entity,
    fact_id, invalid, new_fact, object_value, parse_id, time,
};
use crate::intentions::{self, DueIntention, FiringPayload, IntentionObject, TriggerInput};
use crate::memory::{self, DecayInput, ProfileInput, RecordItem, RecordKind, RecordList};
use crate::objects::{
    Basis, Cardinality, EntityObject, EpisodeObject, EventNotice, FactObject, Listing, NamespaceInfo,
    Neighbor, Neighborhood, Pin, Predicate, ValueType, engine, store,
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

/// How many items a page may hold.
/// Reads an episode listing's cursor (`micros:id`).
pub(crate) fn episode_cursor(a: &str) -> Result<(Timestamp, mnemo_core::EpisodeId)> {
    let bad = || invalid("after", format!("{a:?}"), "not a cursor of this listing");
    let (t, id) = a.split_once(':').ok_or_else(bad)?;
    Ok((
        Timestamp::from_micros(t.parse().map_err(|_| bad())?),
        mnemo_core::EpisodeId(id.parse().map_err(|_| bad())?),
    ))
}

pub(crate) fn page_size(ctx: &Context<'_>, first: Option<i32>) -> Result<usize> {
    let max = limits(ctx)?.max_page;
    match first {
        None => Ok(max.min(50)),
        Some(n) if n < 1 => Err(invalid("first", n, "must be at least 1")),
        Some(n) if n as usize > max => {
            Err(coded(code::LIMIT_EXCEEDED, format!("limit exceeded in `first`: {n} (at most {max})")))
        }
        Some(n) => Ok(n as usize),
    }
}

/// Pages a fully ordered list of facts by fact id cursors.
fn fact_page(
    pin: &Arc<Pin>,
    views: Vec<mnemo_engine::FactView>,
    after: Option<String>,
    first: usize,
) -> Result<Page<FactObject>> {
    let start = match after {
        None => 0,
        Some(cursor) => {
            let id = parse_id("after", &ID(cursor.clone()))?;
            views
                .iter()
                .position(|v| v.fact.id.0 == id)
                .map(|p| p + 1)
                .ok_or_else(|| invalid("after", format!("{cursor:?}"), "not a cursor of this listing"))?
        }
    };
    let more = views.len() > start + first;
    let mut page =
        Connection::with_additional_fields(start > 0, more, Listing { basis: (&pin.basis).into() });
    page.edges.extend(
        views
            .into_iter()
            .skip(start)
            .take(first)
            .map(|view| Edge::new(view.fact.id.0.to_string(), FactObject { pin: Arc::clone(pin), view })),
    );
    Ok(page)
}

/// The queries.
pub struct Query;

#[Object]
impl Query {
    /// A namespace's settings, predicates and size.
    async fn namespace(&self, ctx: &Context<'_>, name: String) -> Result<NamespaceInfo> {
        let ns = namespace(ctx, &name, Mode::Read)?;
        Ok(NamespaceInfo::of(store(ctx)?, &ns))
    }

    /// One entity, by id or by name, as known at knownAt, its facts at validAt.
    #[allow(clippy::too_many_arguments)]
    async fn entity(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        id: Option<ID>,
        name: Option<String>,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
    ) -> Result<Option<EntityObject>> {
        let ns = self::namespace(ctx, &namespace, Mode::Read)?;
        let store = store(ctx)?;
        let at = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, at.as_ref())?;
        let basis = store.basis(&ns, at).map_err(engine)?;
        let pin = Pin::new(ns.clone(), basis);
        let reference = EntityRefInput { id, name };
        match existing_entity(store, &ns, basis.known_at, "entity", &reference) {
            Ok(id) => Ok(EntityObject::load(store, &pin, id)),
            Err(_) if reference.id.is_some() != reference.name.is_some() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Entities known at knownAt, by id; filtered by name (or alias) and kind.
    #[allow(clippy::too_many_arguments)]
    async fn entities(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        name: Option<String>,
        kind: Option<String>,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Page<EntityObject>> {
        let ns = self::namespace(ctx, &namespace, Mode::Read)?;
        let store = store(ctx)?;
        let first = page_size(ctx, first)?;
        let at = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, at.as_ref())?;
        let after = after.map(|a| parse_id("after", &ID(a)).map(mnemo_core::EntityId)).transpose()?;
        let answer = store.entities(&ns, &EntityFilter { name, kind }, at, after, first).map_err(engine)?;
        let pin = Pin::new(ns, answer.basis);
        let mut page = Connection::with_additional_fields(
            after.is_some(),
            answer.value.more,
            Listing { basis: (&answer.basis).into() },
        );
        page.edges.extend(answer.value.items.into_iter().map(|(_, entity)| {
            Edge::new(entity.id.0.to_string(), EntityObject { pin: Arc::clone(&pin), entity })
        }));
        Ok(page)
    }

    /// Facts by subject, predicate and/or object (at least one): those in force at
    /// validAt as known at knownAt, or every visible one with its status (`includeAll`).
    #[allow(clippy::too_many_arguments)]
    async fn facts(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        subject: Option<EntityRefInput>,
        predicate: Option<String>,
        object: Option<ValueInput>,
        #[graphql(default = false)] include_all: bool,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Page<FactObject>> {
        let ns = self::namespace(ctx, &namespace, Mode::Read)?;
        let store = store(ctx)?;
        let first = page_size(ctx, first)?;
        if subject.is_none() && predicate.is_none() && object.is_none() {
            return Err(invalid("facts", "{}", "give a subject, a predicate or an object (or use snapshot)"));
        }
        let at = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, at.as_ref())?;
        let known = store.basis(&ns, at).map_err(engine)?.known_at;
        let filter = FactFilter {
            subject: subject
                .as_ref()
                .map(|s| existing_entity(store, &ns, known, "subject", s))
                .transpose()?,
            predicate,
            object: object.as_ref().map(|o| object_value(store, &ns, known, "object", o)).transpose()?,
        };
        let scope = if include_all { Scope::All } else { Scope::InForce };
        let answer = store.facts(&ns, &filter, at, scope).map_err(engine)?;
        fact_page(&Pin::new(ns, answer.basis), answer.value, after, first)
    }

    /// Every version of one slot (subject, predicate) known at knownAt, retracted ones
    /// included, each with its status at validAt.
    #[allow(clippy::too_many_arguments)]
    async fn history(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        subject: EntityRefInput,
        predicate: String,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Page<FactObject>> {
        let ns = self::namespace(ctx, &namespace, Mode::Read)?;
        let store = store(ctx)?;
        let first = page_size(ctx, first)?;
        let at = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, at.as_ref())?;
        let known = store.basis(&ns, at).map_err(engine)?.known_at;
        let subject = existing_entity(store, &ns, known, "subject", &subject)?;
        let answer = store.history(&ns, subject, &predicate, at).map_err(engine)?;
        fact_page(&Pin::new(ns, answer.basis), answer.value, after, first)
    }

    /// Every fact in force at validAt as known at knownAt, by (subject, predicate, id).
    #[allow(clippy::too_many_arguments)]
    async fn snapshot(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Page<FactObject>> {
        let ns = self::namespace(ctx, &namespace, Mode::Read)?;
        let store = store(ctx)?;
        let first = page_size(ctx, first)?;
        let at = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, at.as_ref())?;
        let cursor = after
            .as_ref()
            .map(|a| {
                SnapshotCursor::decode(a)
                    .ok_or_else(|| invalid("after", format!("{a:?}"), "not a cursor of this listing"))
            })
            .transpose()?;
        let answer = store.snapshot(&ns, at, cursor, first).map_err(engine)?;
        let pin = Pin::new(ns, answer.basis);
        let mut page = Connection::with_additional_fields(
            cursor.is_some(),
            answer.value.next.is_some(),
            Listing { basis: (&answer.basis).into() },
        );
        for (view, cursor) in answer.value.facts.into_iter().zip(answer.value.cursors) {
            page.edges.push(Edge::new(cursor.encode(), FactObject { pin: Arc::clone(&pin), view }));
        }
        Ok(page)
    }

    /// Entities within `depth` hops of one entity over facts in force, every hop at the
    /// same (validAt, knownAt).
    #[allow(clippy::too_many_arguments)]
    async fn neighbors(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        entity: EntityRefInput,
        #[graphql(default = 1)] depth: u32,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
    ) -> Result<Neighborhood> {
        let ns = self::namespace(ctx, &namespace, Mode::Read)?;
        let store = store(ctx)?;
        let max = limits(ctx)?.max_neighbor_depth;
        if depth > max {
            return Err(coded(
                code::LIMIT_EXCEEDED,
                format!("limit exceeded in `depth`: {depth} (at most {max})"),
            ));
        }
        let at = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, at.as_ref())?;
        let known = store.basis(&ns, at).map_err(engine)?.known_at;
        let start = existing_entity(store, &ns, known, "entity", &entity)?;
        let answer = store.neighbors(&ns, start, depth, at).map_err(engine)?;
        let pin = Pin::new(ns, answer.basis);
        Ok(Neighborhood {
            basis: (&answer.basis).into(),
            nodes: answer
                .value
                .nodes
                .into_iter()
                .filter_map(|(id, distance)| {
                    EntityObject::load(store, &pin, id).map(|entity| Neighbor { entity, distance })
                })
                .collect(),
            edges: answer
                .value
                .edges
                .into_iter()
                .map(|view| FactObject { pin: Arc::clone(&pin), view })
                .collect(),
        })
    }

    /// What an agent might bring up unprompted at the clock `at` (default: now): records
    /// that are not dormant — facts in force at validAt, entities and episodes known at
    /// knownAt — by retention, highest first.
    #[allow(clippy::too_many_arguments)]
    async fn recallable(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        kinds: Option<Vec<RecordKind>>,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
        first: Option<i32>,
    ) -> Result<RecordList> {
        let ns = self::namespace(ctx, &namespace, Mode::Read)?;
        let store = store(ctx)?;
        let first = page_size(ctx, first)?;
        let read = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, at.as_ref())?;
        let answer = store.recallable(&ns, read, &memory::kinds(kinds), first).map_err(engine)?;
        let pin = Pin::new(ns, answer.basis);
        Ok(RecordList {
            basis: (&answer.basis).into(),
            items: answer
                .value
                .into_iter()
                .map(|r| RecordItem { pin: Arc::clone(&pin), record: r.record, dormant_at: None })
                .collect(),
        })
    }

    /// Records that turn dormant between `from` and `to` unless recalled, and when.
    #[allow(clippy::too_many_arguments)]
    async fn forecast(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        from: DateTime,
        to: DateTime,
        kinds: Option<Vec<RecordKind>>,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
    ) -> Result<RecordList> {
        let ns = self::namespace(ctx, &namespace, Mode::Read)?;
        let store = store(ctx)?;
        let from = time(store, &ns, "from", &from)?;
        let to = time(store, &ns, "to", &to)?;
        let mut read = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, None)?;
        read.at = Some(from);
        let answer = store.forecast(&ns, from, to, read, &memory::kinds(kinds)).map_err(engine)?;
        let pin = Pin::new(ns, answer.basis);
        let items = answer
            .value
            .into_iter()
            .map(|f| RecordItem { pin: Arc::clone(&pin), record: f.record, dormant_at: Some(f.dormant_at) })
            .collect();
        Ok(RecordList { basis: (&answer.basis).into(), items })
    }

    /// What is known that matters for a cue: full text (BM25) ∪ embedding similarity ∪
    /// the graph around the entities the text names, fused by reciprocal rank (k = 60),
    /// weighted by retention at `at` with a floor (a specific cue still finds an old
    /// memory), diversified by MMR. Facts not in force at (validAt, knownAt) are left out
    /// unless `filter.includeNotInForce`. Waits until the search indexes hold what the
    /// read sees. Every hit explains itself.
    #[allow(clippy::too_many_arguments)]
    async fn search(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        text: Option<String>,
        vector: Option<Vec<f64>>,
        limit: Option<i32>,
        filter: Option<SearchFilter>,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
    ) -> Result<Search> {
        let ns = self::namespace(ctx, &namespace, Mode::Read)?;
        let store = store(ctx)?;
        let read = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, at.as_ref())?;
        let query = search::query(store, &ns, text, vector, limit, filter)?;
        let answer = store.search(&ns, &query, read).map_err(engine)?;
        Ok(Search { pin: Pin::new(ns, answer.basis), result: answer.value })
    }

    /// The block an agent puts in its prompt for `message`, within `budget` tokens
    /// (default 1000; a token is estimated as four bytes): facts in force with their
    /// validity, the most relevant episodes with their dates, the entities involved.
    /// Deterministic for a given store and read point.
    #[allow(clippy::too_many_arguments)]
    async fn context(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        message: String,
        budget: Option<i32>,
        filter: Option<SearchFilter>,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
    ) -> Result<ContextObject> {
        let ns = self::namespace(ctx, &namespace, Mode::Read)?;
        let store = store(ctx)?;
        let read = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, at.as_ref())?;
        let query = search::query(store, &ns, Some(message.clone()), None, None, filter)?;
        let answer = store.context(&ns, &message, search::budget(budget)?, &query, read).map_err(engine)?;
        Ok(ContextObject { pin: Pin::new(ns, answer.basis), block: answer.value })
    }

    /// Episodes known at knownAt, by the time they occurred; by thread and time window.
    #[allow(clippy::too_many_arguments)]
    async fn episodes(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        thread: Option<String>,
        from: Option<DateTime>,
        to: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Page<EpisodeObject>> {
        let ns = self::namespace(ctx, &namespace, Mode::Read)?;
        let store = store(ctx)?;
        let first = page_size(ctx, first)?;
        let at = read_at(store, &ns, None, known_at.as_ref(), known_at_seq, at.as_ref())?;
        let filter = EpisodeFilter {
            thread,
            from: from.as_ref().map(|t| time(store, &ns, "from", t)).transpose()?,
            to: to.as_ref().map(|t| time(store, &ns, "to", t)).transpose()?,
        };
        let after = after.as_deref().map(episode_cursor).transpose()?;
        let answer = store.episodes(&ns, &filter, at, after, first).map_err(engine)?;
        let pin = Pin::new(ns, answer.basis);
        let mut page = Connection::with_additional_fields(
            after.is_some(),
            answer.value.more,
            Listing { basis: (&answer.basis).into() },
        );
        page.edges.extend(answer.value.items.into_iter().map(|(seq, episode)| {
            Edge::new(
                format!("{}:{}", episode.occurred_at.as_micros(), episode.id.0),
                EpisodeObject { pin: Arc::clone(&pin), episode, recorded_seq: seq.0 },
            )
        }));
        Ok(page)
    }

    /// Intentions (prospective memory) as known at knownAt: pending ones, or all with
    /// `includeInactive` (fired once, cancelled, expired at `at`); by id.
    async fn intentions(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        #[graphql(default = false)] include_inactive: bool,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
    ) -> Result<Vec<IntentionObject>> {
        let ns = self::namespace(ctx, &namespace, Mode::Read)?;
        let store = store(ctx)?;
        let at = read_at(store, &ns, None, known_at.as_ref(), known_at_seq, at.as_ref())?;
        let answer = store.intentions(&ns, at, include_inactive).map_err(engine)?;
        let pin = Pin::new(ns, answer.basis);
        Ok(answer.value.into_iter().map(|view| IntentionObject { pin: Arc::clone(&pin), view }).collect())
    }

    /// The pending intentions due at `at` (default: now) for a message: those whose time
    /// has come, whose entities the message names, or whose cue it is close to; by
    /// priority. Reads only: firings are recorded by writes and `fireDueIntentions`.
    async fn due_intentions(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        message: Option<String>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
    ) -> Result<Vec<DueIntention>> {
        let ns = self::namespace(ctx, &namespace, Mode::Read)?;
        let store = store(ctx)?;
        let at = read_at(store, &ns, None, known_at.as_ref(), known_at_seq, at.as_ref())?;
        let answer = store.due_intentions(&ns, message.as_deref(), at).map_err(engine)?;
        let pin = Pin::new(ns, answer.basis);
        Ok(intentions::due(store, &pin, answer.value))
    }

    /// The topics of the topic network (communities of entities associated in closed
    /// segments), largest first. Reading the latest state first closes the segments whose
    /// conversation moved on.
    async fn topics(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
        #[graphql(default = 20)] first: i32,
    ) -> Result<Vec<TopicObject>> {
        let ns = self::namespace(ctx, &namespace, Mode::Read)?;
        let store = Arc::clone(store(ctx)?);
        let first = page_size(ctx, Some(first))?;
        let at = read_at(&store, &ns, None, known_at.as_ref(), known_at_seq, at.as_ref())?;
        let answer = store.topic_network(&ns, at).map_err(engine)?;
        let pin = Pin::new(ns, answer.basis);
        let mut all = topics::topics(&store, &pin, answer.value);
        all.truncate(first);
        Ok(all)
    }

    /// One topic by id (the smallest entity id among its members).
    async fn topic(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        id: ID,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
    ) -> Result<Option<TopicObject>> {
        let ns = self::namespace(ctx, &namespace, Mode::Read)?;
        let store = Arc::clone(store(ctx)?);
        let id = parse_id("id", &id)?;
        let at = read_at(&store, &ns, None, known_at.as_ref(), known_at_seq, at.as_ref())?;
        let answer = store.topic_network(&ns, at).map_err(engine)?;
        let pin = Pin::new(ns, answer.basis);
        Ok(topics::topics(&store, &pin, answer.value).into_iter().find(|t| t.topic.id == id))
    }

    /// A thread of the event progression graph: its episodes known at knownAt, in the
    /// order they occurred (ties by id); each links to its `next` and `previous`.
    #[allow(clippy::too_many_arguments)]
    async fn thread(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        thread: String,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Page<EpisodeObject>> {
        mnemo_core::validate_name("thread", &thread).map_err(|e| engine(e.into()))?;
        self.episodes(ctx, namespace, Some(thread), None, None, known_at, known_at_seq, at, first, after)
            .await
    }
}

/// What a write committed, read back at its own batch.
#[derive(SimpleObject)]
pub struct WritePayload {
    /// The batch's position in the namespace's log.
    pub seq: u64,
    /// Its system time.
    pub system_time: DateTime,
    /// The facts it wrote (or ended, or retracted), as seen right after it, at now.
    pub facts: Vec<FactObject>,
    /// Entities created because a fact named one nobody had.
    pub created_entities: Vec<EntityObject>,
    /// The point the payload was read at.
    pub basis: Basis,
}

/// What `recordEpisode` committed.
#[derive(SimpleObject)]
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
pub struct Mutation;

/// Appends `changes`, naming each change's input path in errors.
fn commit(store: &Store, ns: &Namespace, changes: Vec<Change>, paths: &[String]) -> Result<Receipt> {
    store.append(ns, changes).map_err(|e| match e {
        // Change `n` of the batch is the request's input at `paths[n]` (`facts[1]`).
        mnemo_engine::EngineError::InChange { change, error } => {
            engine_error(error.within(paths.get(change).map_or("", String::as_str)))
        }
        other => engine_error(other),
    })
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
    receipt
        .ids
        .iter()
        .filter_map(|id| match id {
            Some(RecordId::Fact(f)) => FactObject::load(store, pin, *f),
            _ => None,
        })
        .collect()
}

#[Object]
impl Mutation {
    /// Records that facts, entities and episodes were recalled at `at` (default: now):
    /// each recall strengthens their traces. Reads never do this by themselves.
    async fn recall(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        #[graphql(default)] facts: Vec<ID>,
        #[graphql(default)] entities: Vec<ID>,
        #[graphql(default)] episodes: Vec<ID>,
        at: Option<DateTime>,
    ) -> Result<RecallPayload> {
        let ns = self::namespace(ctx, &namespace, Mode::ReadWrite)?;
        let store = store(ctx)?;
        let at = match &at {
            Some(t) => time(store, &ns, "at", t)?,
            None => store.now(),
        };
        let mut records = Vec::new();
        for (i, id) in facts.iter().enumerate() {
            records.push(RecordRef::Fact(fact_id(&format!("facts[{i}]"), id)?));
        }
        for (i, id) in entities.iter().enumerate() {
            records.push(RecordRef::Entity(mnemo_core::EntityId(parse_id(&format!("entities[{i}]"), id)?)));
        }
        for (i, id) in episodes.iter().enumerate() {
            records.push(RecordRef::Episode(mnemo_core::EpisodeId(parse_id(&format!("episodes[{i}]"), id)?)));
        }
        if records.is_empty() {
            return Err(invalid("facts", "[]", "name at least one fact, entity or episode"));
        }
        let receipt =
            commit(store, &ns, vec![Change::Recall { records: records.clone(), at }], &[String::new()])?;
        let pin = pin_after(store, &ns, &receipt, Some(at))?;
        Ok(RecallPayload {
            seq: receipt.seq.0,
            system_time: receipt.system_time.into(),
            at: at.into(),
            records: records
                .into_iter()
                .map(|record| RecordItem { pin: Arc::clone(&pin), record, dormant_at: None })
                .collect(),
        })
    }

    /// `search`, then records its hits as recalled at `at` (default: now) in one step, so
    /// that what is recalled is strengthened. The result is the search as it was read.
    #[allow(clippy::too_many_arguments)]
    async fn remember(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        text: Option<String>,
        vector: Option<Vec<f64>>,
        limit: Option<i32>,
        filter: Option<SearchFilter>,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
    ) -> Result<RememberPayload> {
        let ns = self::namespace(ctx, &namespace, Mode::ReadWrite)?;
        let store = store(ctx)?;
        let read = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, at.as_ref())?;
        let query = search::query(store, &ns, text, vector, limit, filter)?;
        let (answer, receipt) = store.remember(&ns, &query, read).map_err(engine)?;
        Ok(RememberPayload {
            seq: receipt.map(|r| r.seq.0),
            result: Search { pin: Pin::new(ns, answer.basis), result: answer.value },
        })
    }

    /// Consolidation ("sleep"): merges entities that are the same (equal names or aliases,
    /// agreeing kinds), and reports what it merged, which facts now corroborate each other,
    /// and what turned dormant since `dormantSince` (default: a day before `at`). With
    /// nothing to merge it writes nothing.
    async fn consolidate(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        at: Option<DateTime>,
        dormant_since: Option<DateTime>,
    ) -> Result<ConsolidationPayload> {
        let ns = self::namespace(ctx, &namespace, Mode::ReadWrite)?;
        let store = store(ctx)?;
        let now = match &at {
            Some(t) => time(store, &ns, "at", t)?,
            None => store.now(),
        };
        let since = match &dormant_since {
            Some(t) => time(store, &ns, "dormantSince", t)?,
            None => Timestamp::from_micros(now.as_micros().saturating_sub(mnemo_core::DAY_MICROS)),
        };
        let report = store.consolidate(&ns, now, since).map_err(engine)?;
        let read = ReadAt { valid_at: Some(now), known_at: KnownAt::Latest, at: Some(now) };
        let basis = store.basis(&ns, read).map_err(engine)?;
        let pin = Pin::new(ns.clone(), basis);
        let before = Pin::new(
            ns.clone(),
            mnemo_engine::Basis {
                known_at: Seq(report.seq.map_or(basis.known_at.0, |s| s.0.saturating_sub(1))),
                ..basis
            },
        );
        Ok(ConsolidationPayload {
            seq: report.seq.map(|s| s.0),
            merged: report
                .merged
                .iter()
                .filter_map(|(from, into)| {
                    Some(Merge {
                        from: EntityObject::load(store, &before, *from)?,
                        into: EntityObject::load(store, &pin, *into)?,
                    })
                })
                .collect(),
            corroborated: report
                .corroborated
                .iter()
                .filter_map(|(id, n)| {
                    Some(Corroborated { fact: FactObject::load(store, &pin, *id)?, statements: *n })
                })
                .collect(),
            dormant: report
                .dormant
                .iter()
                .map(|f| RecordItem {
                    pin: Arc::clone(&pin),
                    record: f.record,
                    dormant_at: Some(f.dormant_at),
                })
                .collect(),
            basis: (&basis).into(),
        })
    }

    /// Records one episode and, in the same atomic batch, the entities and facts the client
    /// extracted from it; the facts get the episode as provenance and, unless they say
    /// otherwise, start when it occurred.
    async fn record_episode(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        episode: EpisodeInput,
        #[graphql(default)] entities: Vec<EntityInput>,
        #[graphql(default)] facts: Vec<FactInput>,
    ) -> Result<RecordEpisodePayload> {
        let ns = self::namespace(ctx, &namespace, Mode::ReadWrite)?;
        let store = store(ctx)?;
        let occurred_at = match &episode.occurred_at {
            Some(t) => time(store, &ns, "episode.occurredAt", t)?,
            None => store.now(),
        };
        let mut changes = vec![Change::RecordEpisode(NewEpisode {
            importance: episode.importance,
            text: episode.text,
            occurred_at,
            thread: episode.thread,
            source: episode.source,
            role: episode.role,
            external_id: episode.external_id,
        })];
        let mut paths = vec!["episode".to_owned()];
        if let Some(vector) = episode.embedding {
            changes.push(Change::Embed {
                episode: EpisodeRef::New(0),
                vector: vector.into_iter().map(|x| x as f32).collect(),
            });
            paths.push("episode".to_owned());
        }
        // Each entity is found by name or created under the writer lock, so concurrent
        // episodes naming one new entity create it once.
        let mut noted = Vec::with_capacity(entities.len());
        let mut mentioned = Vec::with_capacity(entities.len());
        for (i, e) in entities.into_iter().enumerate() {
            noted.push(changes.len());
            mentioned.push(EntityRef::New(changes.len()));
            changes.push(Change::NoteEntity(NoteEntity { name: e.name, aliases: e.aliases, kind: e.kind }));
            paths.push(format!("entities[{i}]"));
        }
        // The entities given with an episode are the ones it mentions.
        if !mentioned.is_empty() {
            changes.push(Change::Mention {
                episode: EpisodeRef::New(0),
                entities: mentioned,
                source: mnemo_core::MentionSource::Client,
            });
            paths.push("entities".to_owned());
        }
        for (i, f) in facts.iter().enumerate() {
            let field = format!("facts[{i}]");
            changes.push(Change::AssertFact(new_fact(store, &ns, &field, f, occurred_at, Some(0))?));
            paths.push(field);
        }
        let receipt = commit(store, &ns, changes, &paths)?;
        let pin = pin_after(store, &ns, &receipt, None)?;
        let entities = noted
            .into_iter()
            .filter_map(|n| match receipt.ids.get(n) {
                Some(Some(RecordId::Entity(id))) => EntityObject::load(store, &pin, *id),
                _ => None,
            })
            .collect();
        Ok(RecordEpisodePayload {
            seq: receipt.seq.0,
            system_time: receipt.system_time.into(),
            episode: receipt.episode(0).and_then(|id| EpisodeObject::load(store, &pin, id)),
            entities,
            facts: written_facts(store, &pin, &receipt),
            created_entities: created(store, &pin, &receipt),
            basis: (&pin.basis).into(),
        })
    }

    /// Asserts (or denies) facts in one atomic batch; without `validFrom` they start now.
    async fn assert_facts(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        facts: Vec<FactInput>,
    ) -> Result<WritePayload> {
        let ns = self::namespace(ctx, &namespace, Mode::ReadWrite)?;
        let store = store(ctx)?;
        if facts.is_empty() {
            return Err(invalid("facts", "[]", "give at least one fact"));
        }
        let now = store.now();
        let mut changes = Vec::with_capacity(facts.len());
        let mut paths = Vec::with_capacity(facts.len());
        for (i, f) in facts.iter().enumerate() {
            let field = format!("facts[{i}]");
            changes.push(Change::AssertFact(new_fact(store, &ns, &field, f, now, None)?));
            paths.push(field);
        }
        let receipt = commit(store, &ns, changes, &paths)?;
        let pin = pin_after(store, &ns, &receipt, None)?;
        Ok(WritePayload {
            seq: receipt.seq.0,
            system_time: receipt.system_time.into(),
            facts: written_facts(store, &pin, &receipt),
            created_entities: created(store, &pin, &receipt),
            basis: (&pin.basis).into(),
        })
    }

    /// Ends a fact's validity at `validTo`: it held until then (an update in valid time).
    /// Given the fact's own id, this ends the fact; given the id of a restatement (an
    /// identical assertion, counted as a statement of the same fact), it withdraws that
    /// statement only, and the fact stands as its other statements say.
    async fn end_fact(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        fact: ID,
        valid_to: DateTime,
    ) -> Result<WritePayload> {
        let ns = self::namespace(ctx, &namespace, Mode::ReadWrite)?;
        let store = store(ctx)?;
        let id = fact_id("fact", &fact)?;
        let valid_to = time(store, &ns, "validTo", &valid_to)?;
        let receipt = commit(store, &ns, vec![Change::EndFact { fact: id, valid_to }], &[String::new()])?;
        fact_payload(store, &ns, &receipt, id)
    }

    /// Retracts a fact: it was never true (a correction in system time). Reads pinned
    /// before this write still see it. Given the fact's own id, this retracts the fact
    /// with every statement of it; given the id of a restatement, it withdraws that one
    /// statement (one source taking back what it said), and the fact stands while another
    /// statement supports it.
    async fn retract_fact(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        fact: ID,
        reason: Option<String>,
    ) -> Result<WritePayload> {
        let ns = self::namespace(ctx, &namespace, Mode::ReadWrite)?;
        let store = store(ctx)?;
        let id = fact_id("fact", &fact)?;
        let receipt = commit(store, &ns, vec![Change::RetractFact { fact: id, reason }], &[String::new()])?;
        fact_payload(store, &ns, &receipt, id)
    }

    /// Declares a predicate's cardinality and value type (undeclared ones are MANY, ANY),
    /// and optionally how its facts fade.
    #[allow(clippy::too_many_arguments)]
    async fn define_predicate(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        name: String,
        cardinality: Cardinality,
        #[graphql(default)] value_type: ValueType,
        description: Option<String>,
        decay: Option<ProfileInput>,
    ) -> Result<DefinePredicatePayload> {
        let ns = self::namespace(ctx, &namespace, Mode::ReadWrite)?;
        let store = store(ctx)?;
        let def = PredicateDef {
            name: name.clone(),
            cardinality: cardinality.into(),
            value_type: value_type.into(),
            description,
            decay: decay.as_ref().map(mnemo_core::Profile::from),
        };
        let receipt = commit(store, &ns, vec![Change::DefinePredicate(def)], &[String::new()])?;
        Ok(DefinePredicatePayload {
            seq: receipt.seq.0,
            system_time: receipt.system_time.into(),
            predicate: store.predicate(&ns, &name).into(),
        })
    }

    /// Adds an intention: a payload for the agent, due when its trigger holds (a time, a
    /// mention of given entities, or an episode close to a cue), until it expires; it fires
    /// once unless `repeat`.
    #[allow(clippy::too_many_arguments)]
    async fn add_intention(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        payload: String,
        trigger: TriggerInput,
        expires_at: Option<DateTime>,
        #[graphql(default = 0)] priority: i32,
        #[graphql(default = false)] repeat: bool,
    ) -> Result<IntentionObject> {
        let ns = self::namespace(ctx, &namespace, Mode::ReadWrite)?;
        let store = store(ctx)?;
        let trigger = trigger.resolve(store, &ns, |t| time(store, &ns, "trigger.at", t))?;
        let expires_at = expires_at.as_ref().map(|t| time(store, &ns, "expiresAt", t)).transpose()?;
        let change = Change::AddIntention(NewIntention { payload, trigger, expires_at, priority, repeat });
        let receipt = commit(store, &ns, vec![change], &[String::new()])?;
        let id = receipt.intention(0).ok_or_else(|| coded(code::INTERNAL, "no intention id"))?;
        intention_after(store, ns, &receipt, id)
    }

    /// Cancels a pending intention: it never fires again.
    async fn cancel_intention(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        id: ID,
        reason: Option<String>,
    ) -> Result<IntentionObject> {
        let ns = self::namespace(ctx, &namespace, Mode::ReadWrite)?;
        let store = store(ctx)?;
        let id = mnemo_core::IntentionId(parse_id("id", &id)?);
        let receipt = commit(store, &ns, vec![Change::CancelIntention { id, reason }], &[String::new()])?;
        intention_after(store, ns, &receipt, id)
    }

    /// Records the firings no write made: time triggers the clock (or `at`) has passed,
    /// and cue triggers met by episodes embedded since. The server also runs this when idle.
    async fn fire_due_intentions(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        at: Option<DateTime>,
    ) -> Result<FiringPayload> {
        let ns = self::namespace(ctx, &namespace, Mode::ReadWrite)?;
        let store = store(ctx)?;
        let now = match &at {
            Some(t) => time(store, &ns, "at", t)?,
            None => store.now(),
        };
        let firings = store.fire_due(&ns, now).map_err(engine)?;
        let Some(seq) = firings.seq else {
            return Ok(FiringPayload { seq: None, fired: Vec::new() });
        };
        let fired: Vec<_> = firings.fired.iter().map(|(id, _, _)| *id).collect();
        let answer = store
            .intentions_by_id(
                &ns,
                &fired,
                ReadAt { known_at: KnownAt::Seq(seq), at: Some(now), ..ReadAt::default() },
            )
            .map_err(engine)?;
        let pin = Pin::new(ns, answer.basis);
        Ok(FiringPayload {
            seq: Some(seq.0),
            fired: answer
                .value
                .into_iter()
                .map(|view| IntentionObject { pin: Arc::clone(&pin), view })
                .collect(),
        })
    }

    /// Closes the segments whose conversation moved on (a semantic shift or a pause, once
    /// the indexer has embedded the thread) and records them; with `force`, every open
    /// segment closes too. Only closed segments feed the topic network.
    async fn close_segments(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        #[graphql(default = false)] force: bool,
    ) -> Result<SegmentsPayload> {
        let ns = self::namespace(ctx, &namespace, Mode::ReadWrite)?;
        let store = Arc::clone(store(ctx)?);
        let report = store.segment(&ns, force).map_err(engine)?;
        let Some(seq) = report.seq else {
            return Ok(SegmentsPayload { seq: None, closed: Vec::new() });
        };
        let basis =
            store.basis(&ns, ReadAt { known_at: KnownAt::Seq(seq), ..ReadAt::default() }).map_err(engine)?;
        let pin = Pin::new(ns, basis);
        let closed = report
            .closed
            .into_iter()
            .map(|(thread, episodes, end)| {
                let (end, distance) = topics::end_kind(end);
                ClosedSegment {
                    thread,
                    episodes: episodes
                        .into_iter()
                        .filter_map(|e| EpisodeObject::load(&store, &pin, e))
                        .collect(),
                    end,
                    distance,
                }
            })
            .collect();
        Ok(SegmentsPayload { seq: Some(seq.0), closed })
    }

    /// Changes a namespace's settings.
    #[allow(clippy::too_many_arguments)]
    async fn configure_namespace(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        time_zone: Option<String>,
        decay: Option<DecayInput>,
        consolidate_every_seconds: Option<u64>,
        embedding: Option<EmbeddingInput>,
        segmentation: Option<SegmentationInput>,
    ) -> Result<NamespaceInfo> {
        let ns = self::namespace(ctx, &namespace, Mode::ReadWrite)?;
        let store = store(ctx)?;
        // Patches: each names only the settings given, and the engine applies them to
        // the settings as they are under the writer lock, so concurrent calls compose.
        let time_zone = time_zone
            .map(|tz| mnemo_core::TimeZone::parse("timeZone", &tz).map_err(|e| engine(e.into())))
            .transpose()?;
        let decay = decay.map(|decay| {
            let profile = |p: &Option<ProfileInput>| p.as_ref().map(mnemo_core::Profile::from);
            mnemo_core::DecayConfig {
                default: profile(&decay.default),
                episode: profile(&decay.episode),
                entity: profile(&decay.entity),
                fact: profile(&decay.fact),
            }
        });
        let patch = NamespacePatch {
            time_zone,
            decay,
            consolidate_every_seconds: consolidate_every_seconds.map(Some),
        };
        let mut changes = Vec::new();
        if patch != NamespacePatch::default() {
            changes.push(Change::ConfigureNamespace(patch));
        }
        if let Some(e) = embedding {
            changes.push(Change::ConfigureEmbedding(e.mode()?));
        }
        if let Some(seg) = segmentation {
            changes.push(Change::ConfigureSegmentation(seg.patch()));
        }
        if changes.is_empty() {
            return Ok(NamespaceInfo::of(store, &ns));
        }
        let paths = vec![String::new(); changes.len()];
        commit(store, &ns, changes, &paths)?;
        Ok(NamespaceInfo::of(store, &ns))
    }
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
