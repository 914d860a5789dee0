//! The output objects: records read at a request's pin and everything that names them (search hits, tiers, topics, intentions, payloads).

pub(crate) mod erased;
pub(crate) mod graph;
pub(crate) mod intentions;
pub(crate) mod memory;
pub(crate) mod outdated;
pub(crate) mod payloads;
pub(crate) mod records;
pub(crate) mod search;
pub(crate) mod tiers;
pub(crate) mod topics;
