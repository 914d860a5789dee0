//! Ostrakon's GraphQL schema over the engine: queries at any (validAt, knownAt), mutations
//! that each write one atomic batch, and a subscription to committed events. Nested fields
//! resolve at their parent's (validAt, knownAt); every error has a stable
//! `extensions.code`. This crate knows no HTTP: a transport builds the schema with
//! [`schema`] (or an [`Executor`], which runs requests on it faster) and puts the
//! caller's [`Access`] in each request's data.
#![deny(missing_docs)]

mod access;
mod budget;
mod context;
mod enums;
mod erased;
mod error;
pub mod import;
mod info;
mod input;
mod intentions;
mod memory;
mod objects;
pub mod ops;
mod paging;
mod payloads;
mod plan;
mod predicates;
mod retention;
mod root;
mod scalars;
mod search;
mod tiers;
mod topics;
mod validated;

use std::sync::Arc;

use async_graphql::{ID, Json, Schema};
use ostrakon_core::Event;
use ostrakon_engine::{CommittedBatch, Store};

pub use access::{Access, Mode};
pub use budget::{
    DocumentCheck, DocumentCheckFn, NETWORK_COST, SubscriptionsOnly, is_point_read, parse_document,
    parsed_document, selected_operation,
};
pub use error::{ErrorCodes, code, rdf_code, rdf_error};
pub use input::{EntityInput, EntityRefInput, EpisodeInput, FactInput, ValueInput};
pub use ostrakon_rdf::Sparql;
pub use retention::{DecayInput, DecayModelKind, ProfileInput, RecordKind};
pub use root::{Mutation, Query, Subscription};
pub use scalars::DateTime;

/// The schema type.
pub type OstrakonSchema = Schema<Query, Mutation, Subscription>;

/// The feed of committed batches behind the `events` subscription.
pub type Events = tokio::sync::broadcast::Sender<Arc<CommittedBatch>>;

/// Limits every request is held to; exceeding one is a `LIMIT_EXCEEDED` error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Deepest selection set.
    pub max_depth: usize,
    /// Highest complexity: a field costs 1 plus its children's cost times the items it may
    /// return (its page size for a listing, the bound its field enforces for another list).
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
            max_complexity: 500_000,
            max_fields: 2_000,
            max_aliases: 100,
            max_mutations: 20,
            max_page: 1_000,
            max_neighbor_depth: 4,
        }
    }
}

/// What builds a schema.
pub type OstrakonSchemaBuilder = async_graphql::SchemaBuilder<Query, Mutation, Subscription>;

/// Builds the schema over a store; subscribes to the store's commits for `events`.
pub fn schema(store: Arc<Store>, limits: Limits) -> OstrakonSchema {
    builder(store, limits).finish()
}

/// [`schema`] before it is finished: its data, limits and extensions are in place, and a
/// host may add extensions of its own (tracing, or a test's hooks).
pub fn builder(store: Arc<Store>, limits: Limits) -> OstrakonSchemaBuilder {
    let events = events(&store);
    checked(bare(store, limits, events), budget::Budget::new(limits), validated::Validated::default())
}

/// The feed of the store's commits.
fn events(store: &Store) -> Events {
    let (events, _) = tokio::sync::broadcast::channel::<Arc<CommittedBatch>>(4096);
    let feed = events.clone();
    store.on_commit(Arc::new(move |batch| {
        // No subscriber is not an error.
        let _ = feed.send(Arc::new(batch.clone()));
    }));
    events
}

/// The schema's types and data, without extensions.
fn bare(store: Arc<Store>, limits: Limits, events: Events) -> OstrakonSchemaBuilder {
    Schema::build(Query::default(), Mutation::default(), Subscription)
        .data(store)
        .data(limits)
        .data(events)
        .data(Arc::new(ostrakon_rdf::Sparql::default()))
        .limit_depth(limits.max_depth)
}

/// `builder` with the extensions every request goes through: error codes, the budget,
/// and validation once per document.
fn checked(
    builder: OstrakonSchemaBuilder,
    budget: budget::Budget,
    validated: validated::Validated,
) -> OstrakonSchemaBuilder {
    builder.extension(ErrorCodes).extension(budget).extension(validated)
}

/// Runs requests as the [`schema`] does, faster where it can say in advance that the
/// extensions have nothing to do.
///
/// async-graphql runs every field of a schema with extensions through their chain (a
/// boxed call per extension and a registry lookup per field) even when, as here, none of
/// them looks at fields. So the executor holds two schemas of the same types and data:
/// the checked one, with the extensions, and a bare one with a single extension that only
/// skips validation (async-graphql has no other way to skip it, and its fast mode still
/// walks the whole document). A request whose document passed validation before, whose
/// variables surely conform to its declared types (the test the validation skip uses),
/// and whose cost is within the limits runs on the bare schema and gets its error codes
/// added as the extension adds them; any other runs on the checked schema, so that every
/// refusal reads as it does there. On a point read over HTTP (callgrind, instructions in
/// the request's handler) this took 91 k instructions to 83 k.
#[derive(Clone)]
pub struct Executor {
    checked: OstrakonSchema,
    bare: OstrakonSchema,
    budget: budget::Budget,
    validated: validated::Validated,
    bare_runs: Arc<std::sync::atomic::AtomicU64>,
    plans: Arc<plan::Plans>,
    planned_runs: Arc<std::sync::atomic::AtomicU64>,
    store: Arc<Store>,
    limits: Limits,
}

impl Executor {
    /// Both schemas over `store`; `host` adds the host's data to each (the extensions it
    /// adds run on both).
    pub fn new(
        store: Arc<Store>,
        limits: Limits,
        host: impl Fn(OstrakonSchemaBuilder) -> OstrakonSchemaBuilder,
    ) -> Self {
        let events = events(&store);
        let (budget, validated) = (budget::Budget::new(limits), validated::Validated::default());
        let checked =
            checked(bare(Arc::clone(&store), limits, events.clone()), budget.clone(), validated.clone());
        let bare = bare(Arc::clone(&store), limits, events).extension(validated::Trusted);
        Executor {
            checked: host(checked).finish(),
            bare: host(bare).finish(),
            budget,
            validated,
            bare_runs: Arc::default(),
            plans: Arc::default(),
            planned_runs: Arc::default(),
            store,
            limits,
        }
    }

    /// How many requests a compiled plan answered (`plan.rs`).
    pub fn planned_runs(&self) -> u64 {
        self.planned_runs.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The answer of a compiled plan, if one covers the request and is sure of it.
    fn planned(
        &self,
        request: &async_graphql::Request,
        document: &async_graphql::parser::types::ExecutableDocument,
    ) -> Option<async_graphql::Response> {
        let plan = self.plans.get(&request.query, request.operation_name.as_deref(), document)?;
        let access =
            request.data.get(&std::any::TypeId::of::<Access>()).and_then(|a| a.downcast_ref::<Access>());
        let response = plan.run(&self.store, &self.limits, access, &request.variables)?;
        self.planned_runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Some(response)
    }

    /// The schema with its extensions: the one subscriptions and the SDL come from.
    pub fn schema(&self) -> &OstrakonSchema {
        &self.checked
    }

    /// How many requests ran on the bare schema.
    pub fn bare_runs(&self) -> u64 {
        self.bare_runs.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Runs `request` (which carries its caller's [`Access`]).
    pub async fn execute(&self, request: async_graphql::Request) -> async_graphql::Response {
        match self.runs_bare(&request) {
            Some((document, passed)) => {
                if let Some(response) = self.planned(&request, &document) {
                    return response;
                }
                self.bare_runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let mut request = request.data(validated::Passed(passed));
                request.set_parsed_query(Arc::unwrap_or_clone(document));
                error::with_codes(self.bare.execute(request).await)
            }
            None => self.checked.execute(request).await,
        }
    }

    /// The request's document and what its validation gives, when the checked schema's
    /// extensions surely have nothing to do for it.
    fn runs_bare(
        &self,
        request: &async_graphql::Request,
    ) -> Option<(Arc<async_graphql::parser::types::ExecutableDocument>, async_graphql::ValidationResult)>
    {
        let registry = &self.validated.schema()?.registry;
        let document = parsed_document(&request.query).ok()?;
        let (query, name, variables) =
            (&request.query, request.operation_name.as_deref(), &request.variables);
        let passed = self.validated.passes(query, name, &document, variables)?;
        self.budget.allows(registry, query, &document, variables).then_some((document, passed))
    }
}

/// The schema's SDL, as exported to `schema/schema.graphql`.
pub fn sdl() -> String {
    Schema::build(Query::default(), Mutation::default(), Subscription).finish().sdl()
}

/// A record's id as a notice's entity, fact or episode.
fn record_ids(record: ostrakon_core::RecordRef) -> (Option<ID>, Option<ID>, Option<ID>) {
    let id = |n: u64| Some(ID(n.to_string()));
    match record {
        ostrakon_core::RecordRef::Entity(e) => (id(e.0), None, None),
        ostrakon_core::RecordRef::Fact(f) => (None, id(f.0), None),
        ostrakon_core::RecordRef::Episode(e) => (None, None, id(e.0)),
    }
}

/// One notice per event of a batch.
fn notices(batch: &CommittedBatch) -> Vec<info::EventNotice> {
    batch
        .events
        .iter()
        .map(|event| {
            let id = |n: u64| Some(ID(n.to_string()));
            let (kind, entity, fact, episode, intention) = match event {
                Event::EpisodeRecorded(e) => ("EpisodeRecorded", None, None, id(e.id.0), None),
                // A creation is a declaration to clients: the kinds they see do not change.
                Event::EntityDeclared(e) | Event::EntityCreated(e) => {
                    ("EntityDeclared", id(e.id.0), None, None, None)
                }
                Event::FactAsserted(f) => ("FactAsserted", id(f.subject.0), id(f.id.0), None, None),
                Event::FactEnded { fact, .. } => ("FactEnded", None, id(fact.0), None, None),
                Event::FactRetracted { fact, .. } => ("FactRetracted", None, id(fact.0), None, None),
                // The statement's id is in `data`; its fact is not known here.
                Event::StatementWithdrawn { .. } => ("StatementWithdrawn", None, None, None, None),
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
                // What was erased is named in `data` (ids and hashes, never content).
                Event::Erased(_) => ("Erased", None, None, None, None),
                Event::Tombstone { .. } => ("Tombstone", None, None, None, None),
                Event::RetentionConfigured(_) => ("RetentionConfigured", None, None, None, None),
                Event::Extracted { episode, .. } => ("Extracted", None, None, id(episode.0), None),
                Event::Placed { record, .. } => {
                    let (e, f, ep) = record_ids(*record);
                    ("Placed", e, f, ep, None)
                }
                Event::Released { record, .. } => {
                    let (e, f, ep) = record_ids(*record);
                    ("Released", e, f, ep, None)
                }
                Event::PlacementProposed { record, .. } => {
                    let (e, f, ep) = record_ids(*record);
                    ("PlacementProposed", e, f, ep, None)
                }
                Event::TiersConfigured(_) => ("TiersConfigured", None, None, None, None),
            };
            info::EventNotice {
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
