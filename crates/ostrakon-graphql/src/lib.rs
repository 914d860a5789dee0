//! Ostrakon's GraphQL schema over the engine: queries at any (validAt, knownAt), mutations
//! that each write one atomic batch, and a subscription to committed events. Nested fields
//! resolve at their parent's (validAt, knownAt); every error has a stable
//! `extensions.code`. This crate knows no HTTP: a transport builds the schema with
//! [`schema`] (or an [`Executor`], which runs requests on it faster) and puts the
//! caller's [`Access`] in each request's data.
#![deny(missing_docs)]

mod error;
mod exec;
pub mod import;
mod objects;
pub mod ops;
mod root;
mod types;

pub use error::{ErrorCodes, code, rdf_code, rdf_error};
pub use exec::access::{Access, Mode};
pub use exec::budget::{
    DocumentCheck, DocumentCheckFn, NETWORK_COST, SubscriptionsOnly, is_point_read, parse_document,
    parsed_document, selected_operation,
};
pub use exec::build::{OstrakonSchema, OstrakonSchemaBuilder, builder, schema, sdl};
pub use exec::events::Events;
pub use exec::executor::Executor;
pub use exec::limits::Limits;
pub use ostrakon_rdf::Sparql;
pub use root::{Mutation, Query, Subscription};
pub use types::input::{EntityInput, EntityRefInput, EpisodeInput, FactInput, ValueInput};
pub use types::retention::{DecayInput, DecayModelKind, ProfileInput, RecordKind};
pub use types::scalars::DateTime;
