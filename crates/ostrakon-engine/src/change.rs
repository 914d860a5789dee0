//! What a client asks to write, before the store has given it ids, and the receipt it
//! gets back once the batch is durable.

use std::collections::BTreeMap;

use ostrakon_core::{
    DecayConfig, EmbeddingMode, EmbeddingPolicy, EntityId, EpisodeId, FactEmbedding, FactId, IntentionId,
    Interval, Literal, MentionSource, NamespaceConfig, Polarity, PredicateDef, RecordRef, SegmentConfig,
    SegmentEnd, Seq, TimeZone, Timestamp,
};

/// An entity named by id, or by its position among the changes of the same batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntityRef {
    /// An entity that already exists.
    Id(EntityId),
    /// The entity declared by change number `n` of this batch (it must come earlier).
    New(usize),
    /// The entity with this canonical name or alias (case and spacing ignored; the
    /// lowest id if several), created when none has it.
    Name(String),
}

/// An episode named by id, by its client-given external id, or by its position in
/// the batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EpisodeRef {
    /// An episode that already exists.
    Id(EpisodeId),
    /// An existing episode's external id.
    External(String),
    /// The episode recorded by change number `n` of this batch (it must come earlier).
    New(usize),
}

/// The object of a new fact.
#[derive(Clone, Debug, PartialEq)]
pub enum ObjectRef {
    /// An entity.
    Entity(EntityRef),
    /// A literal.
    Literal(Literal),
}

/// A new episode.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct NewEpisode {
    /// The text, verbatim.
    pub text: String,
    /// When it happened.
    pub occurred_at: Timestamp,
    /// Its conversation or session.
    pub thread: Option<String>,
    /// Where it came from.
    pub source: Option<String>,
    /// Who spoke.
    pub role: Option<String>,
    /// A client-given id, unique in the namespace.
    pub external_id: Option<String>,
    /// How much it matters, in [0, 1] (raises its initial strength).
    pub importance: Option<f64>,
}

/// A new entity, or the next version of an existing one.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct NewEntity {
    /// `Some` to write the next version of an existing entity.
    pub id: Option<EntityId>,
    /// Canonical name.
    pub name: String,
    /// Other names.
    pub aliases: Vec<String>,
    /// Its kind.
    pub kind: Option<String>,
    /// Properties.
    pub properties: BTreeMap<String, Literal>,
}

/// A new fact.
#[derive(Clone, Debug, PartialEq)]
pub struct NewFact {
    /// What it is about.
    pub subject: EntityRef,
    /// The relation.
    pub predicate: String,
    /// An entity or a literal.
    pub object: ObjectRef,
    /// When it holds.
    pub valid: Interval,
    /// How sure the source is, in (0, 1]; 1 when absent.
    pub confidence: Option<f64>,
    /// Stated or denied.
    pub polarity: Polarity,
    /// The episodes it comes from.
    pub provenance: Vec<EpisodeRef>,
    /// The statement this one corrects (a fact's own id names its first statement):
    /// withdrawn as of this batch.
    pub supersedes: Option<FactId>,
    /// How much it matters, in [0, 1] (raises its initial strength).
    pub importance: Option<f64>,
    /// Whether it is the user's correction of the agent (maximal initial strength).
    pub correction: bool,
}

impl NewFact {
    /// A positive fact with confidence 1 and no provenance.
    pub fn new(subject: EntityRef, predicate: impl Into<String>, object: ObjectRef, valid: Interval) -> Self {
        NewFact {
            subject,
            predicate: predicate.into(),
            object,
            valid,
            confidence: None,
            polarity: Polarity::Asserted,
            provenance: Vec::new(),
            supersedes: None,
            importance: None,
            correction: false,
        }
    }
}

/// Tier settings to change; `None` leaves one as it is.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TierSettingsPatch {
    /// What upkeep does.
    pub policy: Option<ostrakon_core::TierPolicy>,
    /// CORE's share of a context's budget.
    pub core_share: Option<f64>,
    /// ACTIVE's share.
    pub active_share: Option<f64>,
    /// Most records in CORE.
    pub core_max_items: Option<u32>,
    /// Most tokens of CORE.
    pub core_max_tokens: Option<u32>,
    /// Most records in one scope.
    pub scope_max_items: Option<u32>,
    /// Most tokens of one scope.
    pub scope_max_tokens: Option<u32>,
    /// Threads a fact's statements come from for it to become a CORE candidate.
    pub promote_after_threads: Option<u32>,
    /// How long a scope may go without a placement before upkeep releases it
    /// (`Some(None)`: never).
    pub release_idle_after_micros: Option<Option<i64>>,
}

impl TierSettingsPatch {
    /// `base` with this patch applied.
    pub fn apply(&self, base: ostrakon_core::TierSettings) -> ostrakon_core::TierSettings {
        ostrakon_core::TierSettings {
            policy: self.policy.unwrap_or(base.policy),
            core_share: self.core_share.unwrap_or(base.core_share),
            active_share: self.active_share.unwrap_or(base.active_share),
            core_max_items: self.core_max_items.unwrap_or(base.core_max_items),
            core_max_tokens: self.core_max_tokens.unwrap_or(base.core_max_tokens),
            scope_max_items: self.scope_max_items.unwrap_or(base.scope_max_items),
            scope_max_tokens: self.scope_max_tokens.unwrap_or(base.scope_max_tokens),
            promote_after_threads: self.promote_after_threads.unwrap_or(base.promote_after_threads),
            release_idle_after_micros: self
                .release_idle_after_micros
                .unwrap_or(base.release_idle_after_micros),
        }
    }
}

/// One change of a batch.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Change {
    /// Record an episode.
    RecordEpisode(NewEpisode),
    /// Declare an entity (or its next version).
    DeclareEntity(NewEntity),
    /// Assert or deny a fact.
    AssertFact(NewFact),
    /// End a fact's validity at `valid_to`: an update in valid time. A restatement's id
    /// is refused ([`WriteError::NotAFact`](crate::error::write::WriteError::NotAFact)): a statement's validity is its fact's.
    EndFact {
        /// The fact.
        fact: FactId,
        /// Its new end (excluded); must be after its start.
        valid_to: Timestamp,
    },
    /// Retract a fact: it was never true (a correction in system time). A restatement's
    /// id withdraws that statement only.
    RetractFact {
        /// The fact.
        fact: FactId,
        /// Why.
        reason: Option<String>,
    },
    /// Withdraw one statement: the source takes back what it said, and the fact stands
    /// while another statement supports it. The id its assertion was given: a fact's own id
    /// names its first statement.
    WithdrawStatement {
        /// The statement.
        statement: FactId,
        /// Why.
        reason: Option<String>,
    },
    /// Declare a predicate's cardinality and value type.
    DefinePredicate(PredicateDef),
    /// Change some of the namespace's settings; the others stay as they are when the
    /// batch is validated (under the writer lock, so concurrent patches compose).
    ConfigureNamespace(NamespacePatch),
    /// The entity with this name or alias, created (with these aliases and kind) when
    /// nobody has the name; an existing one gets its next version when this adds
    /// aliases or a kind it lacks. Decided under the writer lock, so concurrent batches
    /// naming one new entity create it once. Its id counts as declared by this change
    /// ([`EntityRef::New`]).
    NoteEntity(NoteEntity),
    /// Merge `from` into `into`: reads follow `from` to `into` from this batch on.
    MergeEntities {
        /// The entity merged away.
        from: EntityId,
        /// The entity it reads as from now on.
        into: EntityId,
    },
    /// Record that these records were recalled at `at` (salience only).
    Recall {
        /// The records.
        records: Vec<RecordRef>,
        /// When they were recalled.
        at: Timestamp,
    },
    /// Set where the namespace's vectors come from.
    ConfigureEmbedding(EmbeddingMode),
    /// Change what the built-in embedder embeds besides episodes; what the patch leaves
    /// out stays as it is when the batch is validated.
    ConfigureEmbeddingPolicy(EmbeddingPolicyPatch),
    /// Embed the facts of a predicate (or stop), under `FactEmbedding::Declared`.
    EmbedPredicate {
        /// The predicate.
        predicate: String,
        /// Embedded or not.
        embed: bool,
    },
    /// Give an episode its vector (namespaces whose clients send vectors).
    Embed {
        /// The episode.
        episode: EpisodeRef,
        /// Its vector: the namespace's dimension, finite, not all zero.
        vector: Vec<f32>,
    },
    /// Record that an episode mentions these entities (a name nobody has creates an
    /// entity). Name matches in new episodes are recorded by the store itself.
    Mention {
        /// The episode.
        episode: EpisodeRef,
        /// The entities, at least one, at most [`MAX_MENTIONS`](crate::limits::MAX_MENTIONS).
        entities: Vec<EntityRef>,
        /// Who says so: [`MentionSource::Client`] unless replaying an export.
        source: MentionSource,
    },
    /// Change some of the settings that cut threads into segments; the others stay.
    ConfigureSegmentation(SegmentationPatch),
    /// Set how long the namespace keeps episodes (`None`: forever); upkeep erases older
    /// ones ([`Store::maintain`](crate::store::Store::maintain)).
    ConfigureRetention(ostrakon_core::RetentionPolicy),
    /// An erasure's record (`Event::Erased`) or a tombstone, as an export holds them:
    /// accepted only in a replayed export ([`Store::replay`](crate::store::Store::replay)).
    Restore(ostrakon_core::Event),
    /// Record that `source` (a model and a prompt version) has read the episode: the
    /// facts of the same batch citing it are what it found. Refused
    /// ([`WriteError::AlreadyExtracted`](crate::error::write::WriteError::AlreadyExtracted)) when that
    /// source has read it already, so that two extractors never both write what they found.
    MarkExtracted {
        /// The episode.
        episode: EpisodeRef,
        /// Who read it.
        source: String,
    },
    /// Place a record in a tier of context (CORE, or an ACTIVE scope): refused when it is
    /// there already, or past the tier's caps.
    Place {
        /// The record.
        record: RecordRef,
        /// Where.
        tier: ostrakon_core::Tier,
        /// Why.
        reason: Option<String>,
        /// Who: [`PlacedBy::Client`](ostrakon_core::PlacedBy) unless upkeep or a replay.
        by: ostrakon_core::PlacedBy,
    },
    /// Take a record out of a tier it is in.
    Release {
        /// The record.
        record: RecordRef,
        /// The tier.
        tier: ostrakon_core::Tier,
        /// Why.
        reason: Option<String>,
        /// Who.
        by: ostrakon_core::PlacedBy,
    },
    /// Record upkeep's proposal of a placement or release, for review.
    ProposePlacement {
        /// The record.
        record: RecordRef,
        /// The tier.
        tier: ostrakon_core::Tier,
        /// A release rather than a placement.
        release: bool,
        /// Why.
        reason: String,
    },
    /// Change some tier settings; the others stay as they are when the batch is validated.
    ConfigureTiers(TierSettingsPatch),
    /// Add an intention (prospective memory).
    AddIntention(NewIntention),
    /// Cancel a pending intention.
    CancelIntention {
        /// The intention.
        id: IntentionId,
        /// Why, for people.
        reason: Option<String>,
    },
    /// Record that an intention fired (the store does this itself, see `Store::fire_due`).
    FireIntention {
        /// The intention.
        id: IntentionId,
        /// The episode that triggered it, if one did.
        episode: Option<EpisodeId>,
        /// When.
        at: Timestamp,
    },
    /// Close a segment of a thread (the store does this itself, see `Store::segment`).
    CloseSegment {
        /// The thread.
        thread: String,
        /// Its episodes, of that thread, in no closed segment yet; at least one.
        episodes: Vec<EpisodeId>,
        /// Why it ended.
        end: SegmentEnd,
        /// The mean of its episodes' unit vectors, if they had any.
        centroid: Option<Vec<f32>>,
    },
}

/// Something the agent means to do later.
#[derive(Clone, Debug, PartialEq)]
pub struct NewIntention {
    /// What to do, for the agent (not empty).
    pub payload: String,
    /// When it is due.
    pub trigger: NewTrigger,
    /// After this it is never due again.
    pub expires_at: Option<Timestamp>,
    /// Higher first.
    pub priority: i32,
    /// Whether it stays after firing (else it fires once).
    pub repeat: bool,
}

/// What makes a new intention due.
#[derive(Clone, Debug, PartialEq)]
pub enum NewTrigger {
    /// A time is reached.
    At(Timestamp),
    /// An episode mentions one of these entities (at least one, at most [`MAX_MENTIONS`](crate::limits::MAX_MENTIONS)).
    Mentions(Vec<EntityRef>),
    /// An episode is close in meaning to a cue.
    Cue {
        /// The cue.
        text: String,
        /// Its vector (see `Store::cue_vector`).
        vector: Vec<f32>,
        /// Cosine similarity at or above which it fires, in (0, 1].
        threshold: f32,
    },
}

/// The id a change produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordId {
    /// An episode.
    Episode(EpisodeId),
    /// An entity.
    Entity(EntityId),
    /// A fact.
    Fact(FactId),
    /// An intention.
    Intention(IntentionId),
}

/// What the store acknowledges once a batch is durable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Receipt {
    /// The batch's position in the namespace's log.
    pub seq: Seq,
    /// Its system time.
    pub system_time: Timestamp,
    /// For each change in order, the id it produced, if any.
    pub ids: Vec<Option<RecordId>>,
    /// Entities created because a change named one that did not exist, in order.
    pub created: Vec<EntityId>,
}

impl Receipt {
    /// The fact id produced by change `n`.
    pub fn fact(&self, n: usize) -> Option<FactId> {
        match self.ids.get(n)? {
            Some(RecordId::Fact(id)) => Some(*id),
            _ => None,
        }
    }

    /// The entity id produced by change `n`.
    pub fn entity(&self, n: usize) -> Option<EntityId> {
        match self.ids.get(n)? {
            Some(RecordId::Entity(id)) => Some(*id),
            _ => None,
        }
    }

    /// The intention id produced by change `n`.
    pub fn intention(&self, n: usize) -> Option<IntentionId> {
        match self.ids.get(n)? {
            Some(RecordId::Intention(id)) => Some(*id),
            _ => None,
        }
    }

    /// The episode id produced by change `n`.
    pub fn episode(&self, n: usize) -> Option<EpisodeId> {
        match self.ids.get(n)? {
            Some(RecordId::Episode(id)) => Some(*id),
            _ => None,
        }
    }
}

/// An entity named in passing (the entities given with an episode): see
/// [`Change::NoteEntity`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoteEntity {
    /// Its canonical name, or one of its aliases.
    pub name: String,
    /// Other names, added to those it has.
    pub aliases: Vec<String>,
    /// Its kind, when it has none yet or this replaces it.
    pub kind: Option<String>,
}

/// Settings of a namespace to change: each `Some` replaces that setting.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NamespacePatch {
    /// Where dates and local date-times are placed.
    pub time_zone: Option<TimeZone>,
    /// How its records fade (the whole set of profiles).
    pub decay: Option<DecayConfig>,
    /// The idle-consolidation period: `Some(None)` turns it off.
    pub consolidate_every_seconds: Option<Option<u64>>,
}

impl NamespacePatch {
    /// A patch that sets every field to `config`'s (a replay of a recorded configuration).
    pub fn all(config: NamespaceConfig) -> Self {
        NamespacePatch {
            time_zone: Some(config.time_zone),
            decay: Some(config.decay),
            consolidate_every_seconds: Some(config.consolidate_every_seconds),
        }
    }

    /// `config` with this patch applied.
    pub fn apply(&self, mut config: NamespaceConfig) -> NamespaceConfig {
        if let Some(tz) = self.time_zone {
            config.time_zone = tz;
        }
        if let Some(decay) = self.decay {
            config.decay = decay;
        }
        if let Some(every) = self.consolidate_every_seconds {
            config.consolidate_every_seconds = every;
        }
        config
    }
}

/// Some of a namespace's embedding policy: the fields given replace those in force.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EmbeddingPolicyPatch {
    /// Which facts are embedded.
    pub facts: Option<FactEmbedding>,
    /// Whether entities are.
    pub entities: Option<bool>,
}

impl EmbeddingPolicyPatch {
    /// The patch that sets every field to `policy`'s.
    pub fn all(policy: EmbeddingPolicy) -> Self {
        EmbeddingPolicyPatch { facts: Some(policy.facts), entities: Some(policy.entities) }
    }

    /// `current` with this patch's fields.
    pub fn apply(self, current: EmbeddingPolicy) -> EmbeddingPolicy {
        EmbeddingPolicy {
            facts: self.facts.unwrap_or(current.facts),
            entities: self.entities.unwrap_or(current.entities),
        }
    }
}

/// Segmentation settings to change: each `Some` replaces that setting.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SegmentationPatch {
    /// Cosine distance from the running centroid above which an episode is off-topic.
    pub threshold: Option<f32>,
    /// How much closer the next episode may be and still confirm a shift.
    pub hysteresis: Option<f32>,
    /// A pause longer than this (microseconds) closes a segment.
    pub max_gap_micros: Option<i64>,
    /// A shift never closes a segment shorter than this.
    pub min_len: Option<u32>,
}

impl SegmentationPatch {
    /// A patch that sets every field to `config`'s.
    pub fn all(config: SegmentConfig) -> Self {
        SegmentationPatch {
            threshold: Some(config.threshold),
            hysteresis: Some(config.hysteresis),
            max_gap_micros: Some(config.max_gap_micros),
            min_len: Some(config.min_len),
        }
    }

    /// `config` with this patch applied.
    pub fn apply(&self, mut config: SegmentConfig) -> SegmentConfig {
        config.threshold = self.threshold.unwrap_or(config.threshold);
        config.hysteresis = self.hysteresis.unwrap_or(config.hysteresis);
        config.max_gap_micros = self.max_gap_micros.unwrap_or(config.max_gap_micros);
        config.min_len = self.min_len.unwrap_or(config.min_len);
        config
    }
}
