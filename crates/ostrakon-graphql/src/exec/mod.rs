//! Running requests: the schema's assembly, each resolver's start (store, namespace, pin), access, limits and budgets, compiled plans, validated documents, the events feed.

pub(crate) mod access;
pub(crate) mod budget;
pub(crate) mod build;
pub(crate) mod context;
pub(crate) mod event_notices;
pub(crate) mod events;
pub(crate) mod executor;
pub(crate) mod limits;
pub(crate) mod plan;
pub(crate) mod predicates;
pub(crate) mod validated;
