//! Ostrakon's retrieval machinery, free of storage and of time semantics: a BM25 full-text
//! index (tantivy, in RAM or memory-mapped from a directory), a vector index that scans exactly while small and switches to
//! HNSW above a threshold, and the ranking steps
//! that turn several ranked lists into one answer (reciprocal-rank fusion, retention
//! weighting with a floor, greedy MMR). Documents are named by caller-chosen `u64` keys;
//! what a key means, and whether a hit is visible at a (T, S), is the engine's business.

#![deny(missing_docs)]

pub mod embedder;
mod error;
mod particles;
mod rank;
mod text;
mod vector;
pub mod when;

pub use embedder::{EmbedError, Embedder};
pub use error::SearchError;
pub use rank::{Fused, RRF_K, cue_strength, mmr, retention_weight, rrf};
pub use text::{Doc, TextIndex};
pub use vector::{HnswConfig, VectorIndex, dot};
