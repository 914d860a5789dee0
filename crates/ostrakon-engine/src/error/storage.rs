//! The store's own failures: the log, the disk, the indexes, a namespace damaged or
//! dropped. Nothing a caller changes in the request makes them pass.

use ostrakon_core::Namespace;
use ostrakon_log::LogError;
use thiserror::Error;

/// A failure of the store itself, met by a read, a write or an administration alike.
#[derive(Debug, Error)]
pub enum StorageError {
    /// A batch in the log could not be decoded.
    #[error("cannot decode batch {seq} of namespace {namespace:?}: {reason}")]
    Decode {
        /// The namespace.
        namespace: String,
        /// The batch.
        seq: u64,
        /// What went wrong.
        reason: String,
    },
    /// The durable log failed.
    #[error("log of namespace {namespace:?}: {source}")]
    Log {
        /// The namespace.
        namespace: String,
        /// The log's error.
        #[source]
        source: LogError,
    },
    /// A file or directory could not be read or written.
    #[error("data directory {path}: {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// Encoding a batch failed (a bug rather than bad input).
    #[error("cannot encode a batch: {0}")]
    Encode(String),
    /// A search index failed.
    #[error("search index: {0}")]
    Index(String),
    /// The log's service (a cluster's JetStream) cannot be reached. For a write: the
    /// batch was not acknowledged; nothing of it is visible; if the service stored it
    /// before going away it appears, whole, once the namespace catches up. Retrying is
    /// safe only for a write that is harmless twice (one with an external id, or a read).
    #[error("namespace {namespace:?}: the log is unavailable ({reason}); nothing was acknowledged")]
    Unavailable {
        /// The namespace.
        namespace: String,
        /// What failed.
        reason: String,
    },
    /// The namespace's log is damaged; the namespace is refused until it is repaired,
    /// while every other namespace serves.
    #[error("namespace {namespace:?} is unavailable: {reason}")]
    Damaged {
        /// The namespace.
        namespace: String,
        /// What is wrong with its log.
        reason: String,
    },
    /// The namespace was dropped after this read pinned its read point (or while this
    /// node had it open): what it asked about is gone.
    #[error("namespace {namespace:?} was dropped")]
    NamespaceDropped {
        /// The namespace.
        namespace: String,
    },
}

impl StorageError {
    /// A log error of namespace `ns` as the engine reports it: an unreachable service is
    /// [`StorageError::Unavailable`], a dropped namespace [`StorageError::NamespaceDropped`],
    /// anything else [`StorageError::Log`]. (A write sees the log's refusal of a stale
    /// writer as its own `Conflict` first: `WriteError::of_log`.)
    pub(crate) fn of_log(ns: &Namespace, source: LogError) -> StorageError {
        match source {
            LogError::Unavailable { reason } => {
                StorageError::Unavailable { namespace: ns.to_string(), reason }
            }
            LogError::Dropped => StorageError::NamespaceDropped { namespace: ns.to_string() },
            source => StorageError::Log { namespace: ns.to_string(), source },
        }
    }
}
