//! Why a write (a batch, a replay, an erasure, an upkeep pass) was refused. A write that
//! fails with one stores nothing, except where the variant says otherwise
//! ([`WriteError::ErasureUnfinished`]).

use ostrakon_core::{CoreError, Namespace, Seq};
use ostrakon_log::LogError;
use thiserror::Error;

use crate::error::read::ReadError;
use crate::error::storage::StorageError;

/// Why a write was refused.
#[derive(Debug, Error)]
pub enum WriteError {
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
    /// A change of a batch was refused: which one, and why. The error's field is
    /// relative to the change (`object`, `provenance[0]`), so that a protocol can place it
    /// at its own input's path ([`WriteError::within`]).
    #[error("in changes[{change}]: {error}")]
    InChange {
        /// The change's position in the batch.
        change: usize,
        /// Why it was refused.
        error: Box<WriteError>,
    },
    /// A read the write is decided on failed (a recorded recall searches first).
    #[error(transparent)]
    Read(ReadError),
    /// The store failed, or the namespace is damaged or was dropped.
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl WriteError {
    /// The input field it names, relative to its change when it is about one.
    pub fn field(&self) -> Option<&str> {
        match self {
            WriteError::Invalid(core) => Some(core.field()),
            WriteError::UnknownEntity { field, .. }
            | WriteError::UnknownIntention { field, .. }
            | WriteError::UnknownEpisode { field, .. }
            | WriteError::UnknownFact { field, .. }
            | WriteError::WrongValueType { field, .. }
            | WriteError::AlreadyRetracted { field, .. }
            | WriteError::NotAFact { field, .. }
            | WriteError::SupersedesOtherSlot { field, .. }
            | WriteError::DuplicateExternalId { field, .. }
            | WriteError::AlreadyExtracted { field, .. }
            | WriteError::LimitExceeded { field, .. } => Some(field),
            WriteError::InChange { error, .. } => error.field(),
            WriteError::Read(read) => read.field(),
            WriteError::ReplayMismatch { .. }
            | WriteError::Conflict { .. }
            | WriteError::ErasureUnfinished { .. }
            | WriteError::Storage(_) => None,
        }
    }

    /// The error with `prefix` before the field it names (a request's own path for the
    /// change: `facts[1]` and `object` give `facts[1].object`), and without its change.
    pub fn within(self, prefix: &str) -> WriteError {
        match self {
            WriteError::Invalid(core) => WriteError::Invalid(core.within(prefix)),
            WriteError::InChange { error, .. } => error.within(prefix),
            mut other => {
                if let WriteError::UnknownEntity { field, .. }
                | WriteError::UnknownIntention { field, .. }
                | WriteError::UnknownEpisode { field, .. }
                | WriteError::UnknownFact { field, .. }
                | WriteError::WrongValueType { field, .. }
                | WriteError::AlreadyRetracted { field, .. }
                | WriteError::SupersedesOtherSlot { field, .. }
                | WriteError::DuplicateExternalId { field, .. }
                | WriteError::AlreadyExtracted { field, .. }
                | WriteError::LimitExceeded { field, .. } = &mut other
                {
                    *field = ostrakon_core::join_field(prefix, field);
                }
                other
            }
        }
    }

    /// The error itself, past the change it is about.
    pub fn root(&self) -> &WriteError {
        match self {
            WriteError::InChange { error, .. } => error.root(),
            other => other,
        }
    }

    pub(crate) fn in_change(self, change: usize) -> WriteError {
        WriteError::InChange { change, error: Box::new(self) }
    }
}

impl WriteError {
    /// A log error met while appending to namespace `ns`: the log's refusal of a stale
    /// writer is [`WriteError::Conflict`], anything else the store's failure
    /// ([`StorageError::of_log`]).
    pub(crate) fn of_log(ns: &Namespace, source: LogError) -> WriteError {
        match source {
            LogError::Conflict { expected, found } => {
                WriteError::Conflict { namespace: ns.to_string(), expected, found }
            }
            source => WriteError::Storage(StorageError::of_log(ns, source)),
        }
    }

    /// The store's failure it is, if it is one (directly or through its read).
    pub fn storage(&self) -> Option<&StorageError> {
        match self.root() {
            WriteError::Storage(e) | WriteError::Read(ReadError::Storage(e)) => Some(e),
            _ => None,
        }
    }
}

impl From<ReadError> for WriteError {
    /// A read's failure inside a write; the store's own failures stay
    /// [`WriteError::Storage`], so a caller finds them in one place.
    fn from(e: ReadError) -> WriteError {
        match e {
            ReadError::Storage(e) => WriteError::Storage(e),
            other => WriteError::Read(other),
        }
    }
}
