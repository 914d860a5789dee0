//! Retrieval: per namespace, a full-text index and vector indexes fed off the write path
//! by a background indexer, and `search`, which fuses full text, vectors and the graph
//! (the facts a query finds and the neighbourhood of the entities it names, with the
//! episodes behind those facts), weights by retention, and diversifies.
//!
//! Each episode is indexed twice: alone, and together with the episodes before and after
//! it in its thread (conversation turns lean on their neighbours: "yes, that one!" is
//! found through what it answers, and a statement through the reply it got). Both
//! rankings take part in the fusion. Episodes are also tagged with the days they
//! happened on and speak of, so that a query naming a day ranks among those episodes
//! too; the turns of a speaker it names weigh a little more.

pub(crate) mod docs;
pub(crate) mod graph;
pub(crate) mod index;
pub(crate) mod indexer;
pub(crate) mod keys;
pub(crate) mod lane;
pub(crate) mod neighbours;
pub(crate) mod newer;
pub(crate) mod query;
pub(crate) mod rank;
pub(crate) mod saved_vectors;
pub(crate) mod topical;

#[cfg(test)]
mod tests;
