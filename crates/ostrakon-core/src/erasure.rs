//! Erasure: the one change that removes content from the past, on purpose.
//!
//! An erasure is two things in the log. The batch that decides it holds an
//! `Event::Erased` naming what was erased (ids, the hash of each
//! record's content, who asked and why; never the content). Then compaction rewrites
//! every earlier batch that held erased content, replacing each such event with an
//! `Event::Tombstone` that keeps what kind of record it was,
//! its id and the hash of the event's bytes, so the log's sequence numbers, times and
//! checksums stay valid and what was there can still be accounted for.

use serde::{Deserialize, Serialize};

use crate::ids::{EntityId, EpisodeId, FactId, IntentionId};

/// A record that an erasure removes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ErasedRef {
    /// An entity: every version of it, its names and aliases.
    Entity(EntityId),
    /// A fact statement (an assertion, or a restatement of one).
    Fact(FactId),
    /// An episode: its text and everything recorded with it.
    Episode(EpisodeId),
    /// An intention that names an erased entity or was set off by an erased episode.
    Intention(IntentionId),
}

impl std::fmt::Display for ErasedRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ErasedRef::Entity(id) => id.fmt(f),
            ErasedRef::Fact(id) => id.fmt(f),
            ErasedRef::Episode(id) => id.fmt(f),
            ErasedRef::Intention(id) => id.fmt(f),
        }
    }
}

/// What an `Event::Erased` records: what went, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Erasure {
    /// Every record erased, each with the SHA-256 of its content as it stood (the
    /// postcard encoding of its latest version), hex.
    pub records: Vec<(ErasedRef, String)>,
    /// Why, for people (e.g. "request of the data subject, ticket 4411").
    pub reason: Option<String>,
    /// Who asked: the name of the token, or the operator's command.
    pub by: Option<String>,
}

/// What a tombstone stands in for: a record's event, or an event that only referred to
/// erased records (a mention, an end, a recall, a segment, a client vector).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TombstoneOf {
    /// The event that recorded or declared this record.
    Record(ErasedRef),
    /// An event about erased records.
    Reference,
}

/// How long a namespace keeps what it is told to forget with age: episodes (their raw
/// text) are erased once recorded longer ago than `episodes_after_micros`, the facts
/// extracted from them kept. `None`: kept forever (the default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetentionPolicy {
    /// The age (by the system time that recorded them) past which episodes are erased.
    pub episodes_after_micros: Option<i64>,
}
