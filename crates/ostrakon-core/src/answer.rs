//! What reads answer: owned values the store hands out with their basis, and the filters
//! and cursors that ask for them. Plain data, shared by the index that computes them and
//! the protocols that show them; nothing here knows how the index is built.

use crate::decay::{RecordRef, TraceState};
use crate::ids::{EntityId, EpisodeId, FactId, Seq};
use crate::model::{Entity, Fact, Intention, Polarity};
use crate::resolve::Status;
use crate::ties::Contradicts;
use crate::time::{Interval, Timestamp};
use crate::value::Value;

/// The point a read is pinned at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct View {
    /// Valid time T: what was true then.
    pub valid_at: Timestamp,
    /// System sequence S: as we knew it after batch S.
    pub known_at: Seq,
}

/// A fact as seen from a [`View`].
#[derive(Clone, Debug, PartialEq)]
pub struct FactView {
    /// The fact as asserted (its `valid.to` is the asserted end).
    pub fact: Fact,
    /// Its valid interval with the end of the latest `FactEnded` visible at S.
    pub valid: Interval,
    /// The batch that asserted it.
    pub asserted_seq: Seq,
    /// The system time of that batch.
    pub asserted_at: Timestamp,
    /// Where it stands at (T, S).
    pub status: Status,
    /// The fact that beat it at T (or corrected it), if any.
    pub beaten_by: Option<FactId>,
    /// Competing facts with the same valid start (a contradiction), if any: a view of
    /// their group, listed in id order.
    pub contradicts: Contradicts,
    /// Where it is in force over all valid time, as known at S (empty if retracted).
    pub effective: Vec<Interval>,
    /// The confidences of its live statements combined (noisy-or).
    pub confidence: f64,
    /// How many live statements it has (for a retracted fact: how many it had).
    pub corroborations: u32,
    /// The episodes of its live statements (of every statement, once retracted), sorted.
    pub provenance: Vec<EpisodeId>,
    /// How it was retracted, if it was at S.
    pub retraction: Option<RetractionView>,
    /// A sentence saying why it has its status.
    pub reason: String,
}

impl FactView {
    /// Whether it is a positive fact in force at T.
    pub fn in_force(&self) -> bool {
        self.status == Status::Current && self.fact.polarity == Polarity::Asserted
    }
}

/// One statement of a fact as seen from a [`View`]: an assertion of it, with its own
/// batch, confidence and provenance, and its withdrawal if it was withdrawn by S.
#[derive(Clone, Debug, PartialEq)]
pub struct StatementView {
    /// The id its assertion was given (a fact's own id for its first statement).
    pub id: FactId,
    /// The fact it states.
    pub fact: FactId,
    /// The batch that asserted it.
    pub seq: Seq,
    /// The system time of that batch.
    pub asserted_at: Timestamp,
    /// Its confidence.
    pub confidence: f64,
    /// The episodes it was stated from.
    pub provenance: Vec<EpisodeId>,
    /// How it stopped supporting the fact, if it did by S: withdrawn alone, or with the
    /// whole fact.
    pub withdrawn: Option<RetractionView>,
}

/// A visible retraction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetractionView {
    /// The batch that retracted it.
    pub seq: Seq,
    /// Explicit retraction or correction.
    pub kind: Retraction,
}

/// Which facts a read returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Scope {
    /// Positive facts in force at T.
    #[default]
    InForce,
    /// Every visible fact, whatever its status at T, retracted ones included.
    All,
}

/// Which facts to look at; at least one field narrows the search.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FactFilter {
    /// The subject.
    pub subject: Option<EntityId>,
    /// The predicate's name.
    pub predicate: Option<String>,
    /// The object.
    pub object: Option<Value>,
}

/// An entity as seen from a [`View`].
#[derive(Clone, Debug, PartialEq)]
pub struct EntityView {
    /// Its version as known at S.
    pub entity: Entity,
    /// The batch that declared that version.
    pub declared_seq: Seq,
    /// Its facts (as subject) in force at T.
    pub facts: Vec<FactView>,
}

/// Position after the last fact of a snapshot page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SnapshotCursor {
    /// The subject of the last fact.
    pub subject: EntityId,
    /// Its predicate, as the index numbers predicates.
    pub predicate: u32,
    /// The fact.
    pub fact: FactId,
}

impl SnapshotCursor {
    /// An opaque text form, for APIs.
    pub fn encode(&self) -> String {
        format!("{}.{}.{}", self.subject.0, self.predicate, self.fact.0)
    }

    /// Reads [`SnapshotCursor::encode`]'s form back; `None` if it is not one.
    pub fn decode(s: &str) -> Option<Self> {
        let mut parts = s.split('.');
        let subject = EntityId(parts.next()?.parse().ok()?);
        let predicate = parts.next()?.parse().ok()?;
        let fact = FactId(parts.next()?.parse().ok()?);
        parts.next().is_none().then_some(SnapshotCursor { subject, predicate, fact })
    }
}

/// One page of a snapshot.
#[derive(Clone, Debug, PartialEq)]
pub struct SnapshotPage {
    /// Facts in force, ordered by (subject, predicate, fact id).
    pub facts: Vec<FactView>,
    /// The position of each fact, to resume after it.
    pub cursors: Vec<SnapshotCursor>,
    /// Where the next page starts, if there is one.
    pub next: Option<SnapshotCursor>,
}

/// One page of a listing.
#[derive(Clone, Debug, PartialEq)]
pub struct Page<T> {
    /// The items, in the listing's order.
    pub items: Vec<T>,
    /// Whether more follow.
    pub more: bool,
}

/// Which episodes to list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EpisodeFilter {
    /// Only this thread.
    pub thread: Option<String>,
    /// Only episodes that occurred at or after this instant.
    pub from: Option<Timestamp>,
    /// Only episodes that occurred before this instant.
    pub to: Option<Timestamp>,
}

/// Position after the last episode of a page: (occurred_at, id).
pub type EpisodeCursor = (Timestamp, EpisodeId);

/// Which entities to list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntityFilter {
    /// Only entities with this canonical name or alias (case and spacing ignored).
    pub name: Option<String>,
    /// Only entities of this kind.
    pub kind: Option<String>,
}

/// The entities within N hops and the facts joining them, every hop at one (T, S).
#[derive(Clone, Debug, PartialEq)]
pub struct Neighborhood {
    /// Each reached entity with its distance from the start (the start has 0).
    pub nodes: Vec<(EntityId, u32)>,
    /// Facts in force between reached entities, by id.
    pub edges: Vec<FactView>,
}

/// An intention as known at S.
#[derive(Clone, Debug, PartialEq)]
pub struct IntentionView {
    /// The intention as added.
    pub intention: Intention,
    /// The batch that added it.
    pub added: Seq,
    /// The batch that cancelled it and why, if it was cancelled at S.
    pub cancelled: Option<(Seq, Option<String>)>,
    /// Its firings visible at S: batch, triggering episode, when.
    pub fired: Vec<(Seq, Option<EpisodeId>, Timestamp)>,
}

impl IntentionView {
    /// Whether it can still fire at `at`: not cancelled, not expired, and repeating or
    /// not fired yet.
    pub fn pending_at(&self, at: Timestamp) -> bool {
        self.cancelled.is_none()
            && (self.intention.repeat || self.fired.is_empty())
            && self.intention.expires_at.is_none_or(|x| at < x)
    }
}

/// Why a fact stopped being a candidate.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Retraction {
    /// Retracted explicitly.
    Retracted {
        /// The reason given.
        reason: Option<String>,
    },
    /// Corrected: a fact with `supersedes` pointing here was asserted.
    CorrectedBy(FactId),
    /// A restatement whose own validity was ended: it no longer restates the fact (the
    /// fact's other statements still hold it).
    Ended(Timestamp),
}

/// How many records a namespace holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Committed batches.
    pub batches: u64,
    /// Episodes.
    pub episodes: u64,
    /// Entities.
    pub entities: u64,
    /// Distinct facts (re-assertions count on the fact they corroborate).
    pub facts: u64,
    /// Predicates used or declared.
    pub predicates: u64,
}

/// A record with its trace read at a clock.
#[derive(Clone, Debug, PartialEq)]
pub struct Recallable {
    /// The record.
    pub record: RecordRef,
    /// Its trace at the clock.
    pub state: TraceState,
}

/// A record that turns dormant in a window, and when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fading {
    /// The record.
    pub record: RecordRef,
    /// The first instant its retention is below its profile's threshold.
    pub dormant_at: Timestamp,
}
