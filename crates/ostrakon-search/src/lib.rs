//! Ostrakon's retrieval machinery, free of storage and of time semantics: a BM25 full-text
//! index (tantivy, in RAM or memory-mapped from a directory), a vector index that scans exactly while small and switches to
//! HNSW above a threshold, and the ranking steps
//! that turn several ranked lists into one answer (reciprocal-rank fusion, retention
//! weighting with a floor, greedy MMR). Documents are named by caller-chosen `u64` keys;
//! what a key means, and whether a hit is visible at a (T, S), is the engine's business.

#![deny(missing_docs)]

pub mod embedder;
mod rank;
mod text;
mod vector;
pub mod when;

pub use embedder::{EmbedError, Embedder};
pub use rank::{Fused, RRF_K, cue_strength, mmr, retention_weight, rrf};
pub use text::{Doc, TextIndex};
pub use vector::{HnswConfig, VectorIndex, dot};

/// What can go wrong in an index.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The full-text engine failed.
    #[error("full-text index: {0}")]
    Text(String),
    /// A vector of the wrong length.
    #[error("vector has {actual} dimensions, the index has {expected}")]
    Dimension {
        /// The index's dimension.
        expected: usize,
        /// The vector's.
        actual: usize,
    },
    /// A vector with a NaN or infinite component, or of zero length.
    #[error("vector must be finite and non-zero")]
    BadVector,
}

impl From<tantivy::TantivyError> for SearchError {
    fn from(e: tantivy::TantivyError) -> Self {
        SearchError::Text(e.to_string())
    }
}
