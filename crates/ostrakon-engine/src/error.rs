//! The engine's error type. A write that fails with one stores nothing.

use ostrakon_core::{CoreError, Seq};
use ostrakon_log::LogError;
use thiserror::Error;

/// Why a write was refused or a read could not be answered.
#[derive(Debug, Error)]
pub enum EngineError {
    /// An input broke a rule of the model (time, interval, name, value).
    #[error(transparent)]
    Invalid(#[from] CoreError),
    /// A referenced entity does not exist (or not yet at this point of the batch).
    #[error("unknown entity in `{field}`: {value}")]
    UnknownEntity {
        /// The input field.
        field: String,
        /// The reference as given.
        value: String,
    },
    /// A referenced intention does not exist.
    #[error("unknown intention in `{field}`: {value}")]
    UnknownIntention {
        /// The input field.
        field: String,
        /// The reference as given.
        value: String,
    },
    /// A referenced episode does not exist.
    #[error("unknown episode in `{field}`: {value}")]
    UnknownEpisode {
        /// The input field.
        field: String,
        /// The reference as given.
        value: String,
    },
    /// A referenced fact does not exist.
    #[error("unknown fact in `{field}`: {value}")]
    UnknownFact {
        /// The input field.
        field: String,
        /// The reference as given.
        value: String,
    },
    /// A fact's object has a type its predicate does not accept.
    #[error("wrong value type in `{field}`: predicate {predicate:?} takes {expected}, got {actual}")]
    WrongValueType {
        /// The input field.
        field: String,
        /// The predicate.
        predicate: String,
        /// What the predicate accepts.
        expected: String,
        /// What was given.
        actual: String,
    },
    /// The fact was already retracted; it can be neither ended, corrected nor retracted again.
    #[error("fact already retracted in `{field}`: {value}")]
    AlreadyRetracted {
        /// The input field.
        field: String,
        /// The fact.
        value: String,
    },
    /// The id names a statement (a restatement) where a fact is needed.
    #[error(
        "`{field}` names a statement ({value}), not a fact: a statement's validity is its fact's, so it cannot \
         be ended alone; end the fact, or withdraw the statement"
    )]
    NotAFact {
        /// The input field.
        field: String,
        /// The statement.
        value: String,
    },
    /// A correction (`supersedes`) names a statement of another subject or predicate: a
    /// correction replaces what was said about the same thing.
    #[error(
        "`{field}` names fact {value}, which is about {found}, not {expected}: a correction supersedes a \
         statement of the same subject and predicate"
    )]
    SupersedesOtherSlot {
        /// The input field.
        field: String,
        /// The fact named.
        value: String,
        /// The slot of the new fact (subject id and predicate).
        expected: String,
        /// The slot of the fact named.
        found: String,
    },
    /// Another episode already has this external id.
    #[error("duplicate external id in `{field}`: {value:?}")]
    DuplicateExternalId {
        /// The input field.
        field: String,
        /// The external id.
        value: String,
    },
    /// This source has read this episode already (its extraction is recorded once).
    #[error("`{field}`: episode {value} was read by {source_name:?} already")]
    AlreadyExtracted {
        /// The input field.
        field: String,
        /// The episode.
        value: String,
        /// Who read it.
        source_name: String,
    },
    /// A request exceeds a limit (batch size, page size, depth, text size).
    #[error("limit exceeded in `{field}`: {value} (at most {max})")]
    LimitExceeded {
        /// The input field.
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
    /// The data directory could not be prepared.
    #[error("data directory {path}: {source}")]
    Io {
        /// The directory.
        path: String,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// A replayed batch would not reproduce the exported events.
    #[error("cannot replay into namespace {namespace:?}: {reason}")]
    ReplayMismatch {
        /// The namespace.
        namespace: String,
        /// Why.
        reason: String,
    },
    /// Other writers kept appending to the namespace's log before this batch: it was
    /// prepared again after each, and refused after the last try. Nothing of it was
    /// written; retrying the request is safe.
    #[error(
        "namespace {namespace:?}: other writers appended first (the log ended at batch {found}, not {expected}); nothing was written, retry"
    )]
    Conflict {
        /// The namespace.
        namespace: String,
        /// The last batch this writer had seen.
        expected: u64,
        /// The log's last batch.
        found: u64,
    },
    /// The log's service (a cluster's JetStream) cannot be reached: the batch was not
    /// acknowledged. Nothing of it is visible; if the service stored it before going
    /// away it appears, whole, once the namespace catches up. Retrying is safe only for
    /// a write that is harmless twice (one with an external id, or a read).
    #[error("namespace {namespace:?}: the log is unavailable ({reason}); nothing was acknowledged")]
    Unavailable {
        /// The namespace.
        namespace: String,
        /// What failed.
        reason: String,
    },
    /// An erasure is recorded (at batch `seq`, acknowledged) but rewriting the copies that
    /// still hold its content failed; the namespace finishes it when it next opens, on
    /// any node. Do not send it again.
    #[error(
        "namespace {namespace:?}: the erasure is recorded at batch {seq} and acknowledged; removing the content from the log's copies failed ({reason}) and is finished when the namespace next opens"
    )]
    ErasureUnfinished {
        /// The namespace.
        namespace: String,
        /// The erasure's batch.
        seq: Seq,
        /// What failed.
        reason: String,
    },
    /// Encoding a batch failed (a bug rather than bad input).
    #[error("cannot encode a batch: {0}")]
    Encode(String),
    /// The search indexes did not catch up with the read in time.
    #[error("search indexes hold batches up to {indexed}, the read needs {requested}")]
    IndexBehind {
        /// The batch the read needs.
        requested: Seq,
        /// The last batch indexed.
        indexed: Seq,
    },
    /// A search index failed.
    #[error("search index: {0}")]
    Index(String),
    /// The work was stopped by its caller's deadline or cancellation
    /// (`Interrupt`). Only reads are interrupted: a write is decided
    /// and appended as one step, so the stopped work wrote nothing.
    #[error("stopped during {during}: {reason}")]
    Interrupted {
        /// Why: `deadline passed` or `cancelled`.
        reason: &'static str,
        /// What was running.
        during: String,
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
    /// A change of a batch was refused: which one, and why. The error's field is
    /// relative to the change (`object`, `provenance[0]`), so that a protocol can place it
    /// at its own input's path ([`EngineError::within`]).
    #[error("in changes[{change}]: {error}")]
    InChange {
        /// The change's position in the batch.
        change: usize,
        /// Why it was refused.
        error: Box<EngineError>,
    },
}

impl EngineError {
    /// The input field it names, relative to its change when it is about one.
    pub fn field(&self) -> Option<&str> {
        match self {
            EngineError::Invalid(core) => Some(core.field()),
            EngineError::UnknownEntity { field, .. }
            | EngineError::UnknownIntention { field, .. }
            | EngineError::UnknownEpisode { field, .. }
            | EngineError::UnknownFact { field, .. }
            | EngineError::WrongValueType { field, .. }
            | EngineError::AlreadyRetracted { field, .. }
            | EngineError::NotAFact { field, .. }
            | EngineError::SupersedesOtherSlot { field, .. }
            | EngineError::DuplicateExternalId { field, .. }
            | EngineError::AlreadyExtracted { field, .. }
            | EngineError::LimitExceeded { field, .. } => Some(field),
            EngineError::InChange { error, .. } => error.field(),
            _ => None,
        }
    }

    /// The error with `prefix` before the field it names (a request's own path for the
    /// change: `facts[1]` and `object` give `facts[1].object`), and without its change.
    pub fn within(self, prefix: &str) -> EngineError {
        match self {
            EngineError::Invalid(core) => EngineError::Invalid(core.within(prefix)),
            EngineError::InChange { error, .. } => error.within(prefix),
            mut other => {
                if let EngineError::UnknownEntity { field, .. }
                | EngineError::UnknownIntention { field, .. }
                | EngineError::UnknownEpisode { field, .. }
                | EngineError::UnknownFact { field, .. }
                | EngineError::WrongValueType { field, .. }
                | EngineError::AlreadyRetracted { field, .. }
                | EngineError::SupersedesOtherSlot { field, .. }
                | EngineError::DuplicateExternalId { field, .. }
                | EngineError::AlreadyExtracted { field, .. }
                | EngineError::LimitExceeded { field, .. } = &mut other
                {
                    *field = ostrakon_core::join_field(prefix, field);
                }
                other
            }
        }
    }

    /// The error itself, past the change it is about.
    pub fn root(&self) -> &EngineError {
        match self {
            EngineError::InChange { error, .. } => error.root(),
            other => other,
        }
    }

    pub(crate) fn in_change(self, change: usize) -> EngineError {
        EngineError::InChange { change, error: Box::new(self) }
    }
}

impl EngineError {
    /// A log error of namespace `ns` as the engine reports it: an unreachable service is
    /// [`EngineError::Unavailable`], anything else [`EngineError::Log`].
    pub(crate) fn of_log(ns: &ostrakon_core::Namespace, source: LogError) -> EngineError {
        match source {
            LogError::Unavailable { reason } => {
                EngineError::Unavailable { namespace: ns.to_string(), reason }
            }
            LogError::Conflict { expected, found } => {
                EngineError::Conflict { namespace: ns.to_string(), expected, found }
            }
            LogError::Dropped => EngineError::NamespaceDropped { namespace: ns.to_string() },
            source => EngineError::Log { namespace: ns.to_string(), source },
        }
    }
}
