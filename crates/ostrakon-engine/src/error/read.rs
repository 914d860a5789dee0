//! Why a read at a read point could not be answered.

use ostrakon_core::{CoreError, Seq};
use thiserror::Error;

use crate::error::storage::StorageError;

/// Why a read was refused or stopped. A read writes nothing, so every one of these
/// leaves the store as it was.
#[derive(Debug, Error)]
pub enum ReadError {
    /// An argument broke a rule of the model (a time, an interval, a query's shape).
    #[error(transparent)]
    Invalid(#[from] CoreError),
    /// A request exceeds a limit (page size, depth, window, text size).
    #[error("limit exceeded in `{field}`: {value} (at most {max})")]
    LimitExceeded {
        /// The argument.
        field: String,
        /// What was asked.
        value: u64,
        /// The limit.
        max: u64,
    },
    /// A read pinned `knownAt` past the last committed batch (on a cluster: past the last
    /// batch this node has applied, after waiting for it).
    #[error("knownAt {requested} is past the last batch known here, {latest} ({} batches behind)", requested.0.saturating_sub(latest.0))]
    NotYetKnown {
        /// The requested sequence.
        requested: Seq,
        /// The last committed one.
        latest: Seq,
    },
    /// The search indexes did not catch up with the read in time.
    #[error("search indexes hold batches up to {indexed}, the read needs {requested}")]
    IndexBehind {
        /// The batch the read needs.
        requested: Seq,
        /// The last batch indexed.
        indexed: Seq,
    },
    /// The read was stopped by its caller's deadline or cancellation (`Interrupt`).
    #[error("stopped during {during}: {reason}")]
    Interrupted {
        /// Why: `deadline passed` or `cancelled`.
        reason: &'static str,
        /// What was running.
        during: String,
    },
    /// The store failed, or the namespace is damaged or was dropped.
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl ReadError {
    /// The argument it names, when it is about one.
    pub fn field(&self) -> Option<&str> {
        match self {
            ReadError::Invalid(core) => Some(core.field()),
            ReadError::LimitExceeded { field, .. } => Some(field),
            ReadError::NotYetKnown { .. }
            | ReadError::IndexBehind { .. }
            | ReadError::Interrupted { .. }
            | ReadError::Storage(_) => None,
        }
    }

    /// The store's failure it is, if it is one.
    pub fn storage(&self) -> Option<&StorageError> {
        match self {
            ReadError::Storage(e) => Some(e),
            _ => None,
        }
    }
}
