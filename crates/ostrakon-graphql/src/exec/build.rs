//! Building the schema over a store: its types, data and limits, and the extensions
//! every request goes through (error codes, the budget, validation once per document).

use std::sync::Arc;

use async_graphql::Schema;
use ostrakon_engine::Store;

use crate::error::ErrorCodes;
use crate::exec::events::Events;
use crate::exec::limits::Limits;
use crate::exec::{budget, validated};
use crate::root::{Mutation, Query, Subscription};

/// The schema type.
pub type OstrakonSchema = Schema<Query, Mutation, Subscription>;

/// What builds a schema.
pub type OstrakonSchemaBuilder = async_graphql::SchemaBuilder<Query, Mutation, Subscription>;

/// Builds the schema over a store; subscribes to the store's commits for `events`.
pub fn schema(store: Arc<Store>, limits: Limits) -> OstrakonSchema {
    builder(store, limits).finish()
}

/// [`schema`] before it is finished: its data, limits and extensions are in place, and a
/// host may add extensions of its own (tracing, or a test's hooks).
pub fn builder(store: Arc<Store>, limits: Limits) -> OstrakonSchemaBuilder {
    let events = crate::exec::events::feed(&store);
    checked(bare(store, limits, events), budget::Budget::new(limits), validated::Validated::default())
}

/// The schema's types and data, without extensions.
pub(crate) fn bare(store: Arc<Store>, limits: Limits, events: Events) -> OstrakonSchemaBuilder {
    Schema::build(Query::default(), Mutation::default(), Subscription)
        .data(store)
        .data(limits)
        .data(events)
        .data(Arc::new(ostrakon_rdf::Sparql::default()))
        .limit_depth(limits.max_depth)
}

/// `builder` with the extensions every request goes through: error codes, the budget,
/// and validation once per document.
pub(crate) fn checked(
    builder: OstrakonSchemaBuilder,
    budget: budget::Budget,
    validated: validated::Validated,
) -> OstrakonSchemaBuilder {
    builder.extension(ErrorCodes).extension(budget).extension(validated)
}

/// The schema's SDL, as exported to `schema/schema.graphql`.
pub fn sdl() -> String {
    Schema::build(Query::default(), Mutation::default(), Subscription).finish().sdl()
}
