//! What the mutations answer: each write's payload, read back at its own batch.

use std::sync::Arc;

use crate::error::code;
use crate::error::coded;
use crate::exec::context::Pin;
use crate::exec::context::engine;
use crate::exec::context::pin_after;
use crate::objects::graph::EntityObject;
use crate::objects::graph::EpisodeObject;
use crate::objects::graph::FactObject;
use crate::objects::graph::StatementObject;
use crate::objects::intentions::IntentionObject;
use crate::objects::memory::RecordItem;
use crate::types::info::Predicate;
use crate::types::paging::Basis;
use crate::types::scalars::DateTime;
use async_graphql::{Context, Result, SimpleObject};
use ostrakon_core::FactId;
use ostrakon_core::Namespace;
use ostrakon_engine::KnownAt;
use ostrakon_engine::ReadAt;
use ostrakon_engine::Receipt;
use ostrakon_engine::RecordId;
use ostrakon_engine::Store;

/// Most items a report of upkeep lists (intentions fired, segments closed and their
/// episodes, entities merged, facts corroborated, records gone dormant); the work is
/// done whatever is listed.
pub(crate) const MAX_REPORTED: usize = 1_000;

/// Most episodes listed for one segment closed.
pub(crate) const MAX_REPORTED_EPISODES: usize = 100;

/// What a write committed, read back at its own batch.
#[derive(SimpleObject)]
#[graphql(complex)]
pub(crate) struct WritePayload {
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
    pub(crate) fn of(pin: &Arc<Pin>, receipt: &Receipt) -> Written {
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
        let store = crate::exec::context::store(ctx)?;
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
pub(crate) struct RecordEpisodePayload {
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
pub(crate) struct Merge {
    /// The entity merged away, as it was just before.
    pub from: EntityObject,
    /// The entity both now read as.
    pub into: EntityObject,
}

/// A fact that merging made corroborate another statement of it.
#[derive(SimpleObject)]
pub(crate) struct Corroborated {
    /// The fact.
    pub fact: FactObject,
    /// How many statements it has now.
    pub statements: u32,
}

/// What consolidation did.
#[derive(SimpleObject)]
pub(crate) struct ConsolidationPayload {
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
pub(crate) struct RecallPayload {
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
pub(crate) struct DefinePredicatePayload {
    /// The batch's position in the namespace's log.
    pub seq: u64,
    /// Its system time.
    pub system_time: DateTime,
    /// The predicate as now declared.
    pub predicate: Predicate,
}

pub(crate) fn created(store: &Store, pin: &Arc<Pin>, receipt: &Receipt) -> Result<Vec<EntityObject>> {
    receipt.created.iter().filter_map(|id| EntityObject::load(store, pin, *id).transpose()).collect()
}

pub(crate) fn written_facts(store: &Store, pin: &Arc<Pin>, receipt: &Receipt) -> Vec<FactObject> {
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
pub(crate) fn intention_after(
    store: &Store,
    ns: Namespace,
    receipt: &Receipt,
    id: ostrakon_core::IntentionId,
) -> Result<IntentionObject> {
    let answer = store
        .at(&ns, ReadAt { known_at: KnownAt::Seq(receipt.seq), ..ReadAt::default() })
        .and_then(|r| r.intentions_by_id(&[id]))
        .map_err(engine)?;
    let view = answer
        .value
        .into_iter()
        .next()
        .ok_or_else(|| coded(code::INTERNAL, "intention not found after its write"))?;
    Ok(IntentionObject { pin: Pin::new(ns, answer.basis), view })
}

pub(crate) fn fact_payload(
    store: &Store,
    ns: &Namespace,
    receipt: &Receipt,
    id: ostrakon_core::FactId,
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
