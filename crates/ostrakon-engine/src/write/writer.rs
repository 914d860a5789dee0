//! The writer's state of one namespace, behind its writer lock: the next ids, and the
//! effects of batches submitted to the log and not yet applied (in flight), which later
//! validation must see.

use std::collections::{BTreeMap, HashMap, HashSet};

use ostrakon_core::{
    EmbeddingMode, EmbeddingPolicy, Entity, EntityId, EpisodeId, Event, FactId, IntentionId, NamespaceConfig,
    SegmentConfig, ValueType, matchable_name, name_words, normalize_name,
};
use ostrakon_index::NamespaceIndex;

/// What a committed-but-unapplied batch changes that later validation must see.
#[derive(Debug, Default)]
pub(crate) struct Effects {
    pub(crate) external_ids: HashSet<String>,
    /// Facts retracted as a whole (their own ids).
    pub(crate) retracted: HashSet<FactId>,
    /// Statements withdrawn on their own (corrected, or a restatement retracted or ended).
    pub(crate) withdrawn: HashSet<FactId>,
    pub(crate) predicate_types: HashMap<String, ValueType>,
    /// Entities created for a name nobody had (normalised name → id).
    pub(crate) names: HashMap<String, EntityId>,
    /// The embedding mode this batch set, if it did.
    pub(crate) embedding: Option<EmbeddingMode>,
    /// The embedding policy this batch left, if it changed it.
    pub(crate) policy: Option<EmbeddingPolicy>,
    /// The namespace settings this batch left, if it changed them.
    pub(crate) config: Option<NamespaceConfig>,
    /// The segmentation settings this batch left, if it changed them.
    pub(crate) segmentation: Option<SegmentConfig>,
    /// The latest version of each entity this batch declared.
    pub(crate) entities: HashMap<EntityId, Entity>,
    /// Intentions this batch fired or cancelled.
    pub(crate) fired: HashSet<IntentionId>,
    pub(crate) cancelled: HashSet<IntentionId>,
    /// Episodes this batch records as read, with who read them.
    pub(crate) extractions: HashSet<(EpisodeId, String)>,
    /// Records this batch placed, with the tokens of each, and released, in order.
    pub(crate) placements: Vec<(ostrakon_core::Tier, ostrakon_core::RecordRef, bool, usize)>,
    /// The tier settings this batch left, if it changed them.
    pub(crate) tiers: Option<ostrakon_core::TierSettings>,
}

/// The writer's state of one namespace, behind its writer lock.
#[derive(Debug, Default)]
pub(crate) struct Writer {
    pub(crate) next_entity: u64,
    pub(crate) next_fact: u64,
    pub(crate) next_episode: u64,
    pub(crate) next_intention: u64,
    /// Effects of batches submitted to the log and not yet applied, by seq.
    pub(crate) in_flight: BTreeMap<u64, Effects>,
    /// The last batch this writer has seen: applied, or submitted by it. A batch is
    /// appended expecting it as the log's last; another writer's batch after it is a
    /// conflict.
    pub(crate) last_seen: u64,
    /// The log's refusals when this writer last started from the index
    /// ([`RecordLog::refusals`](ostrakon_log::RecordLog::refusals)): once they move, batches
    /// it submitted since may have been refused, and what it numbered after them is void.
    pub(crate) refusals: u64,
}

/// The entities `events` say `episode` mentions.
pub(crate) fn mentioned_in(events: &[Event], episode: EpisodeId) -> impl Iterator<Item = EntityId> + '_ {
    events
        .iter()
        .filter_map(move |e| match e {
            Event::Mentioned { episode: id, entities, .. } if *id == episode => Some(entities),
            _ => None,
        })
        .flatten()
        .copied()
}

/// The names and aliases of entities a batch declares (normalised) → those entities,
/// and the most words in one.
pub(crate) fn declared_names<'e>(
    entities: impl Iterator<Item = &'e Entity>,
) -> (HashMap<String, Vec<EntityId>>, usize) {
    let mut names: HashMap<String, Vec<EntityId>> = HashMap::new();
    let mut words = 0;
    for e in entities {
        for name in std::iter::once(&e.name).chain(&e.aliases).filter(|n| matchable_name(n)) {
            words = words.max(name_words(name));
            let ids = names.entry(normalize_name(name)).or_default();
            if !ids.contains(&e.id) {
                ids.push(e.id);
            }
        }
    }
    (names, words)
}

impl Writer {
    /// A writer that numbers records after the highest ids in `index`, on a log that has
    /// refused `refusals` groups so far.
    pub(crate) fn after(index: &NamespaceIndex, refusals: u64) -> Self {
        let high = index.high_water();
        Writer {
            next_entity: high.entity + 1,
            next_fact: high.fact + 1,
            next_episode: high.episode + 1,
            next_intention: index.max_intention() + 1,
            in_flight: BTreeMap::new(),
            last_seen: index.last_seq().0,
            refusals,
        }
    }

    /// Makes the writer follow what the log holds, before it prepares a batch on `index`:
    /// ids are a function of the log, never of what this writer numbered before. It
    /// starts again from the index when another writer's batches were applied since, when
    /// the log holds other batches than it queued, or when the log refused a group since
    /// it last started (batches it queued may be gone, and their seqs handed out again).
    /// Otherwise it goes on after its own batches in flight, which the log stores only
    /// right after the ones before them.
    pub(crate) fn follow(&mut self, index: &NamespaceIndex, log: &dyn ostrakon_log::RecordLog) {
        let refusals = log.refusals();
        if self.last_seen < index.last_seq().0
            || self.last_seen != log.last_seq()
            || self.refusals != refusals
        {
            *self = Writer::after(index, refusals);
        }
        // Never below what the index holds (a guard: on a whole chain this changes nothing).
        let high = index.high_water();
        self.next_entity = self.next_entity.max(high.entity + 1);
        self.next_fact = self.next_fact.max(high.fact + 1);
        self.next_episode = self.next_episode.max(high.episode + 1);
        self.next_intention = self.next_intention.max(index.max_intention() + 1);
    }

    /// The last batch this writer has seen (see `last_seen`).
    pub(crate) fn last_seen(&self) -> u64 {
        self.last_seen
    }

    /// Remembers what batch `seq` does until it is applied.
    pub(crate) fn submitted(&mut self, seq: u64, effects: Effects) {
        self.in_flight.insert(seq, effects);
        self.last_seen = self.last_seen.max(seq);
    }

    /// Forgets the effects of batches up to `seq`, now visible in the index.
    pub(crate) fn applied(&mut self, seq: u64) {
        self.in_flight.retain(|s, _| *s > seq);
    }

    /// The embedding mode set by the latest batch in flight, if any did.
    pub(crate) fn embedding_mode(&self) -> Option<EmbeddingMode> {
        self.in_flight.values().rev().find_map(|e| e.embedding)
    }

    /// The embedding policy left by the latest batch in flight that changed it.
    pub(crate) fn policy(&self) -> Option<EmbeddingPolicy> {
        self.in_flight.values().rev().find_map(|e| e.policy)
    }

    /// The namespace settings left by the latest batch in flight that changed them.
    pub(crate) fn config(&self) -> Option<NamespaceConfig> {
        self.in_flight.values().rev().find_map(|e| e.config.clone())
    }

    /// The segmentation settings left by the latest batch in flight that changed them.
    pub(crate) fn segmentation(&self) -> Option<SegmentConfig> {
        self.in_flight.values().rev().find_map(|e| e.segmentation)
    }

    /// The latest version of entity `id` declared by a batch in flight.
    pub(crate) fn entity(&self, id: EntityId) -> Option<&Entity> {
        self.in_flight.values().rev().find_map(|e| e.entities.get(&id))
    }

    pub(crate) fn external_id_taken(&self, ext: &str) -> bool {
        self.in_flight.values().any(|e| e.external_ids.contains(ext))
    }

    pub(crate) fn retracted(&self, id: FactId) -> bool {
        self.in_flight.values().any(|e| e.retracted.contains(&id))
    }

    pub(crate) fn withdrawn(&self, id: FactId) -> bool {
        self.in_flight.values().any(|e| e.withdrawn.contains(&id))
    }

    pub(crate) fn predicate_type(&self, name: &str) -> Option<ValueType> {
        self.in_flight.values().rev().find_map(|e| e.predicate_types.get(name).copied())
    }

    pub(crate) fn fired(&self, id: IntentionId) -> bool {
        self.in_flight.values().any(|e| e.fired.contains(&id))
    }

    pub(crate) fn cancelled(&self, id: IntentionId) -> bool {
        self.in_flight.values().any(|e| e.cancelled.contains(&id))
    }

    /// The placements and releases of the batches in flight, in log order.
    pub(crate) fn placements(
        &self,
    ) -> impl Iterator<Item = &(ostrakon_core::Tier, ostrakon_core::RecordRef, bool, usize)> {
        self.in_flight.values().flat_map(|e| &e.placements)
    }

    /// The tier settings left by the latest batch in flight that changed them.
    pub(crate) fn tiers(&self) -> Option<ostrakon_core::TierSettings> {
        self.in_flight.values().rev().find_map(|e| e.tiers)
    }

    /// Whether a batch in flight records that `source` read `episode`.
    pub(crate) fn extracted(&self, episode: EpisodeId, source: &str) -> bool {
        self.in_flight.values().any(|e| e.extractions.contains(&(episode, source.to_owned())))
    }

    pub(crate) fn named(&self, key: &str) -> Option<EntityId> {
        self.in_flight.values().find_map(|e| e.names.get(key).copied())
    }
}
