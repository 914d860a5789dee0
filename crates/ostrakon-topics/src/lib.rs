//! The algorithms behind Ostrakon's topic network, free of storage, time semantics, I/O and
//! async: a conversation thread is cut into topical segments as its episodes arrive
//! ([`Segmenter`]); entities that occur together in a closed segment become weighted edges
//! ([`cooccurrences`], [`cosine`]); the resulting graph is split into communities
//! ([`louvain`], [`label_propagation`], judged by [`modularity`] and
//! [`adjusted_rand_index`]); and a community is named by its characteristic words
//! ([`characteristic_terms`]). What a key means and when an edge is visible is the engine's
//! business. Every function is deterministic, so derived state can be rebuilt from the log
//! and compared bit for bit.

#![deny(missing_docs)]

mod assoc;
mod communities;
mod label;
mod segment;

pub use assoc::{cooccurrences, cosine};
pub use communities::{adjusted_rand_index, label_propagation, louvain, modularity};
pub use label::characteristic_terms;
pub use segment::{CloseReason, Closed, Segmenter, SegmenterConfig};
