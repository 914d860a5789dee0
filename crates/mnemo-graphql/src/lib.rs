//! Mnemo's GraphQL schema over the engine: queries at any (validAt, knownAt), mutations
//! that each write one atomic batch, and a subscription to committed events. Nested fields
//! resolve at their parent's (validAt, knownAt); every error has a stable
//! `extensions.code`. This crate knows no HTTP: a transport builds the schema with
//! [`schema`] and puts the caller's [`Access`] in each request's data.
#![deny(missing_docs)]

mod access;
mod budget;
mod error;
mod input;
mod intentions;
mod memory;
mod objects;
pub mod ops;
mod root;
mod scalars;
mod search;
mod topics;
mod validated;

use std::sync::Arc;

use async_graphql::{ID, Json, Schema};
use mnemo_core::Event;
use mnemo_engine::{CommittedBatch, Store};

pub use access::{Access, Mode};
pub use budget::{
    FANOUT, NETWORK_COST, SubscriptionsOnly, is_point_read, parse_document, parsed_document,
    selected_operation,
};
pub use error::{ErrorCodes, code, rdf_code, rdf_error};
pub use input::{EntityInput, EntityRefInput, EpisodeInput, FactInput, ValueInput};
pub use memory::{DecayInput, DecayModelKind, ProfileInput, RecordKind};
pub use mnemo_rdf::Sparql;
pub use root::{Mutation, Query, Subscription};
pub use scalars::DateTime;

/// The schema type.
pub type MnemoSchema = Schema<Query, Mutation, Subscription>;

/// The feed of committed batches behind the `events` subscription.
pub type Events = tokio::sync::broadcast::Sender<Arc<CommittedBatch>>;

/// Limits every request is held to; exceeding one is a `LIMIT_EXCEEDED` error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Deepest selection set.
    pub max_depth: usize,
    /// Highest complexity: a field costs 1 plus its children's cost times the items it may
    /// return (its page size for a listing, [`FANOUT`] for another list).
    pub max_complexity: usize,
    /// Most fields once fragments are expanded.
    pub max_fields: usize,
    /// Most aliased fields.
    pub max_aliases: usize,
    /// Most mutation fields (each is one batch) in one request.
    pub max_mutations: usize,
    /// Largest page (`first`) of a listing.
    pub max_page: usize,
    /// Most hops of `neighbors`.
    pub max_neighbor_depth: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 16,
            max_complexity: 50_000,
            max_fields: 2_000,
            max_aliases: 100,
            max_mutations: 20,
            max_page: 1_000,
            max_neighbor_depth: 4,
        }
    }
}

/// Builds the schema over a store; subscribes to the store's commits for `events`.
pub fn schema(store: Arc<Store>, limits: Limits) -> MnemoSchema {
    builder(store, limits).finish()
}

/// [`schema`] before it is finished: its data, limits and extensions are in place, and a
/// host may add extensions of its own (tracing, or a test's hooks).
pub fn builder(
    store: Arc<Store>,
    limits: Limits,
) -> async_graphql::SchemaBuilder<Query, Mutation, Subscription> {
    let (events, _) = tokio::sync::broadcast::channel::<Arc<CommittedBatch>>(4096);
    let feed = events.clone();
    store.on_commit(Arc::new(move |batch| {
        // No subscriber is not an error.
        let _ = feed.send(Arc::new(batch.clone()));
    }));
    Schema::build(Query::default(), Mutation::default(), Subscription)
        .data(store)
        .data(limits)
        .data(events)
        .data(Arc::new(mnemo_rdf::Sparql::default()))
        .extension(ErrorCodes)
        .extension(budget::Budget(limits))
        .extension(validated::Validated::default())
        .limit_depth(limits.max_depth)
}

/// The schema's SDL, as exported to `schema/schema.graphql`.
pub fn sdl() -> String {
    Schema::build(Query::default(), Mutation::default(), Subscription).finish().sdl()
}

/// One notice per event of a batch.
fn notices(batch: &CommittedBatch) -> Vec<objects::EventNotice> {
    batch
        .events
        .iter()
        .map(|event| {
            let id = |n: u64| Some(ID(n.to_string()));
            let (kind, entity, fact, episode, intention) = match event {
                Event::EpisodeRecorded(e) => ("EpisodeRecorded", None, None, id(e.id.0), None),
                Event::EntityDeclared(e) => ("EntityDeclared", id(e.id.0), None, None, None),
                Event::FactAsserted(f) => ("FactAsserted", id(f.subject.0), id(f.id.0), None, None),
                Event::FactEnded { fact, .. } => ("FactEnded", None, id(fact.0), None, None),
                Event::FactRetracted { fact, .. } => ("FactRetracted", None, id(fact.0), None, None),
                Event::PredicateDefined(_) => ("PredicateDefined", None, None, None, None),
                Event::NamespaceConfigured(_) => ("NamespaceConfigured", None, None, None, None),
                Event::Reinforced { .. } => ("Reinforced", None, None, None, None),
                Event::EntitiesMerged { from, .. } => ("EntitiesMerged", id(from.0), None, None, None),
                Event::EmbeddingConfigured(_) => ("EmbeddingConfigured", None, None, None, None),
                Event::EmbeddingPolicySet(_) => ("EmbeddingPolicySet", None, None, None, None),
                Event::PredicateEmbedding { .. } => ("PredicateEmbedding", None, None, None, None),
                Event::Embedded { .. } => ("Embedded", None, None, None, None),
                Event::Mentioned { episode, .. } => ("Mentioned", None, None, id(episode.0), None),
                Event::SegmentationConfigured(_) => ("SegmentationConfigured", None, None, None, None),
                Event::SegmentClosed { episodes, .. } => {
                    ("SegmentClosed", None, None, episodes.first().and_then(|e| id(e.0)), None)
                }
                Event::IntentionAdded(i) => ("IntentionAdded", None, None, None, id(i.id.0)),
                Event::IntentionCancelled { id: i, .. } => ("IntentionCancelled", None, None, None, id(i.0)),
                Event::IntentionFired { id: i, episode, .. } => {
                    ("IntentionFired", None, None, episode.and_then(|e| id(e.0)), id(i.0))
                }
            };
            objects::EventNotice {
                namespace: batch.namespace.to_string(),
                seq: batch.seq.0,
                system_time: batch.system_time.into(),
                kind: kind.to_owned(),
                entity,
                fact,
                episode,
                intention,
                data: Json(serde_json::to_value(event).unwrap_or_default()),
            }
        })
        .collect()
}
