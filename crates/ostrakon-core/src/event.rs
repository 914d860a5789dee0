//! The log's vocabulary: every change to a namespace is one of these events, and
//! nothing else is stored as truth. A batch of events commits atomically at one
//! system time.
//!
//! Encodings stay readable across releases: variants and fields are only ever added
//! at the end, and the engine prefixes every encoded batch with [`EVENT_FORMAT`].

use serde::{Deserialize, Serialize};

use crate::decay::RecordRef;
use crate::erasure::{Erasure, RetentionPolicy, TombstoneOf};
use crate::ids::{EntityId, EpisodeId, FactId, IntentionId};
use crate::model::{
    EmbeddingMode, EmbeddingPolicy, Entity, Episode, Fact, Intention, MentionSource, NamespaceConfig,
    PredicateDef, SegmentConfig, SegmentEnd,
};
use crate::tiers::{PlacedBy, Tier, TierSettings};
use crate::time::Timestamp;

/// Version of the event encoding written by this build.
pub const EVENT_FORMAT: u8 = 1;

/// One change to a namespace. Not `#[non_exhaustive]`: the encoding's version
/// ([`EVENT_FORMAT`]) guards decoding, and every match over the kinds is exhaustive, so
/// a new kind fails to compile wherever it is not handled.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Event {
    /// An observation was recorded.
    EpisodeRecorded(Episode),
    /// An entity was declared, or its next version (same id).
    EntityDeclared(Entity),
    /// A fact was asserted (or denied, by its polarity).
    FactAsserted(Fact),
    /// A fact stops holding at `valid_to`: an update in valid time. The latest visible
    /// end wins.
    FactEnded {
        /// The fact.
        fact: FactId,
        /// Its new valid end (excluded).
        valid_to: Timestamp,
    },
    /// A fact was never true: a correction in system time.
    FactRetracted {
        /// The fact.
        fact: FactId,
        /// Why, for people.
        reason: Option<String>,
    },
    /// A predicate's cardinality, value type or description was declared.
    PredicateDefined(PredicateDef),
    /// The namespace's settings changed.
    NamespaceConfigured(NamespaceConfig),
    /// These records were recalled at `at` (reinforcement: salience, never truth).
    Reinforced {
        /// The records.
        records: Vec<RecordRef>,
        /// When they were recalled (the client's clock, not the system time).
        at: Timestamp,
    },
    /// Consolidation found that two entities are one: reads follow `from` to `into` from
    /// this batch on; both histories survive.
    EntitiesMerged {
        /// The entity merged away.
        from: EntityId,
        /// The entity it now reads as.
        into: EntityId,
    },
    /// Where the namespace's vectors come from changed (from this batch on).
    EmbeddingConfigured(EmbeddingMode),
    /// A client-given vector for a record (namespaces in client-vector mode).
    Embedded {
        /// The record.
        record: RecordRef,
        /// Its vector, as sent.
        vector: Vec<f32>,
    },
    /// An episode mentions these entities (an edge of the event progression graph). Name
    /// matches are recorded as found at write time, so a replay gives the same graph
    /// whatever entities are declared later.
    Mentioned {
        /// The episode.
        episode: EpisodeId,
        /// The entities, as named then (reads follow merges).
        entities: Vec<EntityId>,
        /// Who said so.
        source: MentionSource,
    },
    /// How the namespace cuts threads into segments changed (from this batch on).
    SegmentationConfigured(SegmentConfig),
    /// A stretch of one thread on one topic is over; from now on it feeds the topic
    /// network. Recorded, so a replay gives the same segments whatever the embedder.
    SegmentClosed {
        /// The thread.
        thread: String,
        /// Its episodes in the order they occurred.
        episodes: Vec<EpisodeId>,
        /// Why it ended.
        end: SegmentEnd,
        /// The mean of its episodes' unit vectors, if it had any.
        centroid: Option<Vec<f32>>,
    },
    /// The agent means to do something later.
    IntentionAdded(Intention),
    /// It no longer means to.
    IntentionCancelled {
        /// The intention.
        id: IntentionId,
        /// Why, for people.
        reason: Option<String>,
    },
    /// An intention became due: at an episode that triggered it, or when its time came.
    IntentionFired {
        /// The intention.
        id: IntentionId,
        /// The episode that triggered it, if one did.
        episode: Option<EpisodeId>,
        /// When (the episode's occurrence, or the trigger's time).
        at: Timestamp,
    },
    /// What the built-in embedder embeds besides episodes changed (from this batch on).
    EmbeddingPolicySet(EmbeddingPolicy),
    /// Whether the facts of a predicate are embedded (under `FactEmbedding::Declared`).
    PredicateEmbedding {
        /// The predicate.
        predicate: String,
        /// Embedded or not.
        embed: bool,
    },
    /// One statement of a fact was taken back: it no longer supports the fact, which
    /// stands while another statement does. `statement` is the id its assertion was given:
    /// a fact's own id names its first statement here (where `FactRetracted` of it
    /// retracts the whole fact).
    StatementWithdrawn {
        /// The statement.
        statement: FactId,
        /// Why, for people.
        reason: Option<String>,
    },
    /// Records were erased: compaction has removed (or, after a crash, will remove on
    /// open) their content from every earlier batch, leaving tombstones.
    Erased(Erasure),
    /// An event whose content was erased, in the batch that held it: what it stood for,
    /// and the SHA-256 (hex) of its encoding.
    Tombstone {
        /// What it was.
        of: TombstoneOf,
        /// The hash of the erased event's bytes.
        hash: String,
    },
    /// How long the namespace keeps episodes changed (from this batch on).
    RetentionConfigured(RetentionPolicy),
    /// The store's extractor read an episode: the facts of this batch that give it as
    /// provenance are what `source` (a model and a prompt version) found in it, none if
    /// it found nothing. Recorded once per (episode, source).
    Extracted {
        /// The episode read.
        episode: EpisodeId,
        /// Who read it: the model and the prompt's version.
        source: String,
    },
    /// A record was placed in a tier of context (CORE, or an ACTIVE scope).
    Placed {
        /// The record.
        record: RecordRef,
        /// Where.
        tier: Tier,
        /// Why, for people.
        reason: Option<String>,
        /// Who placed it.
        by: PlacedBy,
    },
    /// A record was taken out of a tier: back to ARCHIVE unless another tier holds it.
    Released {
        /// The record.
        record: RecordRef,
        /// The tier it leaves.
        tier: Tier,
        /// Why, for people.
        reason: Option<String>,
        /// Who released it.
        by: PlacedBy,
    },
    /// Upkeep proposes a placement (or, with `release`, a release) for review.
    PlacementProposed {
        /// The record.
        record: RecordRef,
        /// The tier.
        tier: Tier,
        /// A release rather than a placement.
        release: bool,
        /// Why.
        reason: String,
    },
    /// The namespace's tier settings changed (from this batch on).
    TiersConfigured(TierSettings),
    /// An entity was created, with an id no record of the namespace had before: the
    /// applier refuses (as damage) one whose id exists. Its later versions are
    /// [`Event::EntityDeclared`] (which also created entities in logs written before this
    /// kind existed).
    EntityCreated(Entity),
}

impl Event {
    /// The entity this event declares, created or as its next version.
    pub fn declared_entity(&self) -> Option<&Entity> {
        match self {
            Event::EntityDeclared(e) | Event::EntityCreated(e) => Some(e),
            _ => None,
        }
    }
}

/// Whether two batches hold the same events, reading an entity's creation as its
/// declaration (an export written before [`Event::EntityCreated`] declares new entities).
pub fn same_events(a: &[Event], b: &[Event]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (x, y) {
            (
                Event::EntityCreated(e) | Event::EntityDeclared(e),
                Event::EntityCreated(f) | Event::EntityDeclared(f),
            ) => e == f,
            _ => x == y,
        })
}
