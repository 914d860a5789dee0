//! Ostrakon's GraphQL schema over the engine: queries at any (validAt, knownAt), mutations
//! that each write one atomic batch, and a subscription to committed events. Nested fields
//! resolve at their parent's (validAt, knownAt); every error has a stable
//! `extensions.code`. This crate knows no HTTP: a transport builds the schema with
//! [`schema`] (or an [`Executor`], which runs requests on it faster) and puts the
//! caller's [`Access`] in each request's data.
#![deny(missing_docs)]

mod access;
mod budget;
mod build;
mod context;
mod enums;
mod erased;
mod error;
mod event_notices;
mod events;
mod executor;
pub mod import;
mod info;
mod input;
mod intentions;
mod limits;
mod memory;
mod objects;
pub mod ops;
mod paging;
mod payloads;
mod plan;
mod predicates;
mod records;
mod retention;
mod root;
mod scalars;
mod search;
mod tiers;
mod topics;
mod validated;

pub use access::{Access, Mode};
pub use budget::{
    DocumentCheck, DocumentCheckFn, NETWORK_COST, SubscriptionsOnly, is_point_read, parse_document,
    parsed_document, selected_operation,
};
pub use build::{OstrakonSchema, OstrakonSchemaBuilder, builder, schema, sdl};
pub use error::{ErrorCodes, code, rdf_code, rdf_error};
pub use events::Events;
pub use executor::Executor;
pub use input::{EntityInput, EntityRefInput, EpisodeInput, FactInput, ValueInput};
pub use limits::Limits;
pub use ostrakon_rdf::Sparql;
pub use retention::{DecayInput, DecayModelKind, ProfileInput, RecordKind};
pub use root::{Mutation, Query, Subscription};
pub use scalars::DateTime;
