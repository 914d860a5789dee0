//! What can go wrong in an index.

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
