//! Why a store could not be opened.

use thiserror::Error;

use crate::error::storage::StorageError;

/// Why `Store::open` (or one of its kin) failed.
#[derive(Debug, Error)]
pub enum OpenError {
    /// The data directory is in use by another store (another process, or another
    /// `Store::open` in this one).
    #[error(
        "data directory {path} is locked by another Ostrakon store (a `ostrakon serve` or `ostrakon mcp` running on it): \
         stop that one, give this command another `--data` directory, or use the running server instead \
         (GraphQL at /graphql, MCP at /mcp)"
    )]
    Locked {
        /// The directory.
        path: String,
    },
    /// The directory, the log or a namespace could not be read.
    #[error(transparent)]
    Storage(#[from] StorageError),
}
