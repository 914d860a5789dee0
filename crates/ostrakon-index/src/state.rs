//! The materialised state of one namespace: a pure function of its log prefix.
//!
//! [`NamespaceIndex::apply`] folds one committed batch in. It is total: the log is the
//! truth, so an event that the write path would have refused (a dangling reference, an
//! end before a start) is kept in the log and given a deterministic, harmless meaning
//! here instead of failing the replay.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use crate::facts::{FactRecord, FactTable, PredId, Restatement, object_key};

use ostrakon_core::{
    Counts, EmbeddingMode, EmbeddingPolicy, Entity, EntityId, Episode, EpisodeId, Event, Fact, FactEmbedding,
    FactId, Intention, IntentionId, MentionSource, NamespaceConfig, PredicateDef, RecordRef, Retraction,
    SegmentConfig, SegmentEnd, Seq, Timestamp, find_names, matchable_name, name_words, normalize_name,
};

/// A big slot's facts by (valid start, object key).
pub(crate) type SlotStarts = HashMap<(Timestamp, u32), Vec<FactId>>;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct PredicateEntry {
    pub(crate) name: String,
    pub(crate) versions: Vec<(Seq, PredicateDef)>,
    /// Whether its facts are embedded (under `FactEmbedding::Declared`), as last set.
    pub(crate) embed: bool,
}

/// Past this many facts a slot keeps its facts by valid start (below it, a scan of the
/// slot is as fast as a probe and costs no memory).
const BIG_SLOT: usize = 32;

/// The derived state of one namespace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NamespaceIndex {
    /// System time of every applied batch; index `i` holds batch `Seq(i + 1)`.
    pub(crate) batches: Vec<Timestamp>,
    pub(crate) configs: Vec<(Seq, NamespaceConfig)>,
    pub(crate) embedding: Vec<(Seq, EmbeddingMode)>,
    /// What the built-in embedder embeds besides episodes, as last set.
    pub(crate) embedding_policy: EmbeddingPolicy,
    /// Client-given vectors of episodes (the latest for each).
    pub(crate) embedded: HashMap<EpisodeId, (Seq, Vec<f32>)>,
    pub(crate) predicate_ids: HashMap<String, PredId>,
    pub(crate) predicates: Vec<PredicateEntry>,
    /// Each entity's versions in log order (most have one: kept inline).
    pub(crate) entities: BTreeMap<EntityId, SmallVec<[(Seq, Entity); 1]>>,
    /// Normalised name or alias → the entities it names. Hashed with foldhash: every write
    /// that names an entity probes it (SipHash took a tenth of a bulk import).
    pub(crate) names: HashMap<String, Named, foldhash::fast::RandomState>,
    pub(crate) episodes: HashMap<EpisodeId, (Seq, Episode)>,
    pub(crate) external_ids: HashMap<String, EpisodeId>,
    /// Episodes by (occurred_at, id), and the same per thread.
    pub(crate) episode_order: BTreeSet<(Timestamp, EpisodeId)>,
    pub(crate) threads: HashMap<String, BTreeSet<(Timestamp, EpisodeId)>>,
    pub(crate) facts: FactTable,
    /// Re-assertions of identical facts: their id → the fact they corroborate.
    pub(crate) aliases: HashMap<FactId, FactId>,
    /// `(subject, predicate)` → facts, in assertion order.
    pub(crate) slots: BTreeMap<(EntityId, PredId), Vec<FactId>>,
    /// For slots of more than [`BIG_SLOT`] facts: their facts by valid start and object
    /// (its key), so that finding the fact a new assertion restates is a probe, not a scan
    /// of the slot, even when thousands of values start at one instant. Keyed by a hash,
    /// so never stored: rebuilt from the slots when a checkpoint loads
    /// ([`NamespaceIndex::rebuild_slot_starts`]).
    #[serde(skip)]
    pub(crate) slot_starts: HashMap<(EntityId, PredId), SlotStarts>,
    /// Predicate → subjects having it.
    pub(crate) by_predicate: HashMap<PredId, BTreeSet<EntityId>>,
    /// Merges: entity → (batch, the entity it was merged into).
    pub(crate) merged_into: HashMap<EntityId, Vec<(Seq, EntityId)>>,
    /// The reverse: entity → (batch, an entity merged into it).
    pub(crate) absorbed: HashMap<EntityId, Vec<(Seq, EntityId)>>,
    /// Recalls of each record: (batch, when recalled), in log order.
    pub(crate) reinforced: HashMap<RecordRef, Vec<(Seq, Timestamp)>>,
    /// The event progression graph: episode → (batch, entity, who said so), in log order.
    pub(crate) mentions: HashMap<EpisodeId, SmallVec<[Mention; 1]>>,
    /// The reverse: entity (as named) → (batch, episode), in log order.
    pub(crate) mentioned_in: HashMap<EntityId, Vec<(Seq, EpisodeId)>>,
    /// Episode → (batch, fact) for every fact statement that gives it as provenance.
    pub(crate) sourced: HashMap<EpisodeId, Vec<(Seq, FactId)>>,
    /// The most words (`name_words`) in a name or alias that can be found in texts, ever.
    pub(crate) max_name_words: usize,
    pub(crate) segmentation: Vec<(Seq, SegmentConfig)>,
    /// Closed segments in log order, and the segment of each episode.
    pub(crate) segments: Vec<Segment>,
    pub(crate) segment_of: HashMap<EpisodeId, usize>,
    /// Intentions, with their cancellation and firings.
    pub(crate) intentions: BTreeMap<IntentionId, IntentionRecord>,
    pub(crate) max_intention: u64,
    pub(crate) max_entity: u64,
    pub(crate) max_fact: u64,
    pub(crate) max_episode: u64,
    /// Erasures, in log order.
    pub(crate) erasures: Vec<(Seq, ostrakon_core::Erasure)>,
    /// Erased records whose event a tombstone replaced: the batch that held it.
    pub(crate) tombstones: HashMap<ostrakon_core::ErasedRef, Seq>,
    /// An erasure was applied while content it names was still in the state.
    pub(crate) pending_erasure: bool,
    /// How long episodes are kept, as last configured.
    pub(crate) retention: ostrakon_core::RetentionPolicy,
    /// Extractions: episode → (batch, who read it), in log order.
    pub(crate) extracted: HashMap<EpisodeId, Extractions>,
    /// The batch of each extraction → the episode it read.
    pub(crate) extraction_batches: HashMap<Seq, EpisodeId>,
    /// Placements in tiers of context: (tier, record) → its placements and releases in
    /// log order.
    pub(crate) placements: BTreeMap<(ostrakon_core::Tier, RecordRef), Vec<crate::placement::Placement>>,
    /// Upkeep's proposals, in log order.
    pub(crate) proposals: Vec<crate::placement::Proposal>,
    /// Tier settings as configured, in log order.
    pub(crate) tier_settings: Vec<(Seq, ostrakon_core::TierSettings)>,
}

/// The entities one normalised name stands for, each list sorted and without repeats.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Named {
    /// Every entity any version of which ever had it: the candidates of a by-name read at
    /// any point, checked against the version read there. Never shrinks.
    pub(crate) ever: IdList,
    /// The entities whose latest version has it.
    pub(crate) now: IdList,
}

/// The extractions of one episode: (batch, who read it), in log order (mostly one).
pub(crate) type Extractions = SmallVec<[(Seq, Box<str>); 1]>;

/// One mention of an entity by an episode: (batch, entity, who said so).
pub(crate) type Mention = (Seq, EntityId, MentionSource);

/// A sorted set of entity ids, one of them inline (most names name one entity).
pub(crate) type IdList = SmallVec<[EntityId; 1]>;

fn id_insert(list: &mut IdList, id: EntityId) {
    // Ids mostly arrive in increasing order: the search ends at the end, and so does the insert.
    if let Err(at) = list.binary_search(&id) {
        list.insert(at, id);
    }
}

/// An intention with what happened to it, in log order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct IntentionRecord {
    pub(crate) added: Seq,
    pub(crate) intention: Intention,
    pub(crate) cancelled: Option<(Seq, Option<String>)>,
    pub(crate) fired: Vec<(Seq, Option<EpisodeId>, Timestamp)>,
}

/// A closed segment: a stretch of one thread on one topic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// The batch that closed it.
    pub seq: Seq,
    /// Its thread.
    pub thread: String,
    /// Its episodes in the order they occurred (each in one segment only).
    pub episodes: Vec<EpisodeId>,
    /// Why it ended.
    pub end: SegmentEnd,
    /// The mean of its episodes' unit vectors, if it had any.
    pub centroid: Option<Vec<f32>>,
}

/// Highest ids seen, so that a writer can continue numbering after a replay.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IdHighWater {
    /// Highest entity id.
    pub entity: u64,
    /// Highest fact id.
    pub fact: u64,
    /// Highest episode id.
    pub episode: u64,
}

impl NamespaceIndex {
    /// An empty namespace.
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds the lookups that are made on first use rather than while facts load (the
    /// facts by object value), so that no later read waits for them.
    pub fn warm(&self) {
        self.facts.warm();
    }

    /// The last applied batch, `Seq(0)` when none.
    pub fn last_seq(&self) -> Seq {
        Seq(self.batches.len() as u64)
    }

    /// System time of batch `seq`, if applied.
    pub fn system_time(&self, seq: Seq) -> Option<Timestamp> {
        let i = usize::try_from(seq.0).ok()?.checked_sub(1)?;
        self.batches.get(i).copied()
    }

    /// The last batch committed at or before system time `t` (`Seq(0)` if none).
    pub fn seq_at(&self, t: Timestamp) -> Seq {
        Seq(self.batches.partition_point(|&bt| bt <= t) as u64)
    }

    /// Highest ids seen so far.
    pub fn high_water(&self) -> IdHighWater {
        IdHighWater { entity: self.max_entity, fact: self.max_fact, episode: self.max_episode }
    }

    /// Folds in one event of batch `seq` (once [`NamespaceIndex::admit`] let the batch in).
    pub(crate) fn apply_event(&mut self, seq: Seq, event: &Event) {
        match event {
            Event::EpisodeRecorded(episode) => self.apply_episode(seq, episode),
            Event::EntityDeclared(entity) | Event::EntityCreated(entity) => self.apply_entity(seq, entity),
            Event::FactAsserted(fact) => self.apply_fact(seq, fact),
            Event::FactEnded { fact, valid_to } => {
                let id = self.canonical(*fact);
                if id != *fact {
                    // A restatement ended on its own no longer restates the fact.
                    self.withdraw(seq, *fact, Retraction::Ended(*valid_to));
                } else if let Some(record) = self.facts.get_mut(&id)
                    && *valid_to > record.valid.from()
                {
                    record.more_mut().ends.push((seq, *valid_to));
                }
            }
            Event::FactRetracted { fact, reason } => self.apply_retraction(seq, *fact, reason.clone()),
            Event::StatementWithdrawn { statement, reason } => {
                self.withdraw(seq, *statement, Retraction::Retracted { reason: reason.clone() });
            }
            Event::PredicateDefined(def) => {
                let pred = self.intern(&def.name);
                self.predicates[pred.0 as usize].versions.push((seq, def.clone()));
            }
            Event::NamespaceConfigured(config) => self.configs.push((seq, config.clone())),
            Event::EntitiesMerged { from, into } => {
                // A merge that would close a cycle, or names an unknown entity, means nothing.
                let latest = Seq(u64::MAX);
                if from != into
                    && self.entities.contains_key(from)
                    && self.entities.contains_key(into)
                    && self.canonical_entity(*into, latest) != self.canonical_entity(*from, latest)
                {
                    self.merged_into.entry(*from).or_default().push((seq, *into));
                    self.absorbed.entry(*into).or_default().push((seq, *from));
                }
            }
            Event::Reinforced { records, at } => {
                for record in records {
                    let record = match record {
                        RecordRef::Fact(id) => RecordRef::Fact(self.canonical(*id)),
                        other => *other,
                    };
                    self.reinforced.entry(record).or_default().push((seq, *at));
                }
            }
            Event::EmbeddingConfigured(mode) => self.embedding.push((seq, *mode)),
            Event::EmbeddingPolicySet(policy) => self.embedding_policy = *policy,
            Event::PredicateEmbedding { predicate, embed } => {
                let pred = self.intern(predicate);
                self.predicates[pred.0 as usize].embed = *embed;
            }
            Event::Embedded { record: RecordRef::Episode(id), vector } => {
                self.embedded.insert(*id, (seq, vector.clone()));
            }
            // Only episodes take client vectors; the write path refuses the others.
            Event::Embedded { record: RecordRef::Fact(_) | RecordRef::Entity(_), .. } => {}
            Event::SegmentationConfigured(config) => self.segmentation.push((seq, *config)),
            Event::IntentionAdded(intention) => {
                self.max_intention = self.max_intention.max(intention.id.0);
                self.intentions.entry(intention.id).or_insert_with(|| IntentionRecord {
                    added: seq,
                    intention: intention.clone(),
                    cancelled: None,
                    fired: Vec::new(),
                });
            }
            Event::IntentionCancelled { id, reason } => {
                if let Some(r) = self.intentions.get_mut(id)
                    && r.cancelled.is_none()
                {
                    r.cancelled = Some((seq, reason.clone()));
                }
            }
            Event::IntentionFired { id, episode, at } => {
                if let Some(r) = self.intentions.get_mut(id) {
                    r.fired.push((seq, *episode, *at));
                }
            }
            Event::SegmentClosed { thread, episodes, end, centroid } => {
                let n = self.segments.len();
                let episodes: Vec<EpisodeId> =
                    episodes.iter().copied().filter(|e| !self.segment_of.contains_key(e)).collect();
                if episodes.is_empty() {
                    return;
                }
                for e in &episodes {
                    self.segment_of.insert(*e, n);
                }
                self.segments.push(Segment {
                    seq,
                    thread: thread.clone(),
                    episodes,
                    end: *end,
                    centroid: centroid.clone(),
                });
            }
            Event::Erased(erasure) => self.apply_erased(seq, erasure),
            Event::Tombstone { of, .. } => self.apply_tombstone(seq, *of),
            Event::RetentionConfigured(policy) => self.retention = *policy,
            Event::Placed { record, tier, reason, by } => {
                let placement =
                    crate::placement::Placement { seq, placed: true, reason: reason.clone(), by: *by };
                self.placements.entry((tier.clone(), *record)).or_default().push(placement);
            }
            Event::Released { record, tier, reason, by } => {
                let placement =
                    crate::placement::Placement { seq, placed: false, reason: reason.clone(), by: *by };
                self.placements.entry((tier.clone(), *record)).or_default().push(placement);
            }
            Event::PlacementProposed { record, tier, release, reason } => {
                self.proposals.push(crate::placement::Proposal {
                    seq,
                    record: *record,
                    tier: tier.clone(),
                    release: *release,
                    reason: reason.clone(),
                });
            }
            Event::TiersConfigured(settings) => self.tier_settings.push((seq, *settings)),
            Event::Extracted { episode, source } => {
                let list = self.extracted.entry(*episode).or_default();
                if !list.iter().any(|(_, known)| **known == **source) {
                    list.push((seq, source.as_str().into()));
                    self.extraction_batches.insert(seq, *episode);
                }
            }
            Event::Mentioned { episode, entities, source } => {
                let list = self.mentions.entry(*episode).or_default();
                for e in entities {
                    if !list.iter().any(|(_, known, _)| known == e) {
                        list.push((seq, *e, *source));
                        self.mentioned_in.entry(*e).or_default().push((seq, *episode));
                    }
                }
            }
        }
    }

    fn apply_episode(&mut self, seq: Seq, episode: &Episode) {
        if self.episodes.contains_key(&episode.id) {
            return;
        }
        self.max_episode = self.max_episode.max(episode.id.0);
        if let Some(ext) = &episode.external_id {
            self.external_ids.entry(ext.clone()).or_insert(episode.id);
        }
        let key = (episode.occurred_at, episode.id);
        self.episode_order.insert(key);
        if let Some(thread) = &episode.thread {
            self.threads.entry(thread.clone()).or_default().insert(key);
        }
        self.episodes.insert(episode.id, (seq, episode.clone()));
    }

    fn apply_entity(&mut self, seq: Seq, entity: &Entity) {
        self.max_entity = self.max_entity.max(entity.id.0);
        // Names index the latest version only: a renamed entity is no longer found by its old name.
        if let Some((_, previous)) = self.entities.get(&entity.id).and_then(|v| v.last()) {
            for name in std::iter::once(&previous.name).chain(&previous.aliases) {
                if let Some(named) = self.names.get_mut(&normalize_name(name))
                    && let Ok(at) = named.now.binary_search(&entity.id)
                {
                    named.now.remove(at);
                }
            }
        }
        for name in std::iter::once(&entity.name).chain(&entity.aliases) {
            if matchable_name(name) {
                self.max_name_words = self.max_name_words.max(name_words(name));
            }
            let named = self.names.entry(normalize_name(name)).or_default();
            id_insert(&mut named.ever, entity.id);
            id_insert(&mut named.now, entity.id);
        }
        self.entities.entry(entity.id).or_default().push((seq, entity.clone()));
    }

    /// Builds the lookup of every big slot's facts by start and object (after a checkpoint
    /// loads: it is not stored).
    pub(crate) fn rebuild_slot_starts(&mut self) {
        let facts = &self.facts;
        self.slot_starts = self
            .slots
            .iter()
            .filter(|(_, ids)| ids.len() > BIG_SLOT)
            .map(|(slot, ids)| {
                let mut starts = SlotStarts::new();
                for (id, r) in ids.iter().filter_map(|id| Some((*id, facts.get(id)?))) {
                    starts.entry((r.valid.from(), object_key(&r.object))).or_default().push(id);
                }
                (*slot, starts)
            })
            .collect();
    }

    fn apply_fact(&mut self, seq: Seq, fact: &Fact) {
        if self.facts.contains_key(&fact.id) || self.aliases.contains_key(&fact.id) {
            return;
        }
        for episode in &fact.provenance {
            self.sourced.entry(*episode).or_default().push((seq, fact.id));
        }
        self.max_fact = self.max_fact.max(fact.id.0);
        let pred = self.intern(&fact.predicate);
        // A correction withdraws the one statement it names.
        let corrected = fact.supersedes.map(|old| self.canonical(old));
        if let Some(old) = fact.supersedes {
            self.withdraw(seq, old, Retraction::CorrectedBy(fact.id));
        }
        // An identical fact with a live statement: this is another statement of it.
        let slot = (fact.subject, pred);
        let identical = |id: &FactId| {
            Some(*id) != corrected
                && self.facts.get(id).is_some_and(|r| {
                    r.live_at(seq).next().is_some()
                        && r.object == fact.object
                        && r.polarity == fact.polarity
                        && r.valid.from() == fact.valid.from()
                        && r.valid_to_at(seq) == fact.valid.to()
                })
        };
        let key = (fact.valid.from(), object_key(&fact.object));
        let same = match self.slot_starts.get(&slot) {
            Some(starts) => starts.get(&key).and_then(|ids| ids.iter().copied().find(identical)),
            None => self.slots.get(&slot).and_then(|ids| ids.iter().copied().find(identical)),
        };
        if let Some(existing) = same
            && let Some(record) = self.facts.get_mut(&existing)
        {
            record.more_mut().restatements.push(Restatement {
                id: fact.id,
                seq,
                confidence: fact.confidence,
                provenance: fact.provenance.clone().into_boxed_slice(),
                withdrawn: None,
            });
            self.aliases.insert(fact.id, existing);
            return;
        }
        let ids = self.slots.entry(slot).or_default();
        ids.push(fact.id);
        if let Some(starts) = self.slot_starts.get_mut(&slot) {
            starts.entry(key).or_default().push(fact.id);
        } else if ids.len() > BIG_SLOT {
            let facts = &self.facts;
            let mut starts = SlotStarts::new();
            for id in ids.iter() {
                let key = facts.get(id).map_or(key, |r| (r.valid.from(), object_key(&r.object)));
                starts.entry(key).or_default().push(*id);
            }
            self.slot_starts.insert(slot, starts);
        }
        self.by_predicate.entry(pred).or_default().insert(fact.subject);
        self.facts.insert(FactRecord::new(fact, pred, seq));
    }

    /// A retraction of the fact's own id retracts the fact with every statement of it (it
    /// was never true); a retraction of a restatement's id withdraws that statement only.
    fn apply_retraction(&mut self, seq: Seq, id: FactId, reason: Option<String>) {
        if self.aliases.contains_key(&id) {
            self.withdraw(seq, id, Retraction::Retracted { reason });
        } else if let Some(record) = self.facts.get_mut(&id)
            && !record.is_retracted_whole()
        {
            record.more_mut().retracted = Some((seq, Retraction::Retracted { reason }));
        }
    }

    /// Withdraws statement `id` (the fact's own first statement when `id` is the fact's).
    fn withdraw(&mut self, seq: Seq, id: FactId, why: Retraction) {
        let fact = self.canonical(id);
        if let Some(record) = self.facts.get_mut(&fact)
            && !record.is_retracted_whole()
            && let Some(slot) = record.withdrawal_slot(id)
        {
            *slot = Some((seq, why));
        }
    }

    fn intern(&mut self, name: &str) -> PredId {
        if let Some(&id) = self.predicate_ids.get(name) {
            return id;
        }
        let id = PredId(self.predicates.len() as u32);
        self.predicates.push(PredicateEntry { name: name.to_owned(), versions: Vec::new(), embed: false });
        self.predicate_ids.insert(name.to_owned(), id);
        id
    }

    /// The fact an id stands for: itself, or the fact it re-asserted.
    pub fn canonical(&self, id: FactId) -> FactId {
        self.aliases.get(&id).copied().unwrap_or(id)
    }

    /// Whether a fact id is known (as a fact or a re-assertion) at the latest seq.
    pub fn contains_fact(&self, id: FactId) -> bool {
        self.facts.contains_key(&id) || self.aliases.contains_key(&id)
    }

    /// Whether a fact still has a statement that supports it, at the latest seq.
    pub fn fact_is_live(&self, id: FactId) -> bool {
        self.facts.get(&self.canonical(id)).is_some_and(|r| r.live_at(Seq(u64::MAX)).next().is_some())
    }

    /// Whether statement `id` (a fact's own id names its first statement) still supports
    /// its fact, at the latest seq.
    pub fn statement_is_live(&self, id: FactId) -> bool {
        self.facts.get(&self.canonical(id)).is_some_and(|r| r.live_at(Seq(u64::MAX)).any(|st| st.id == id))
    }

    /// Whether `id` names a restatement rather than a fact's own first statement.
    pub fn is_restatement(&self, id: FactId) -> bool {
        self.aliases.contains_key(&id)
    }

    /// The fact an id names (following a re-assertion to the fact it corroborates), as
    /// stated when asserted.
    pub fn fact(&self, id: FactId) -> Option<Fact> {
        self.facts.get(&self.canonical(id)).map(|r| self.fact_of(r))
    }

    /// The latest version of an entity.
    pub fn entity(&self, id: EntityId) -> Option<&Entity> {
        self.entities.get(&id).and_then(|v| v.last()).map(|(_, e)| e)
    }

    /// An episode.
    pub fn episode(&self, id: EpisodeId) -> Option<&Episode> {
        self.episodes.get(&id).map(|(_, e)| e)
    }

    /// The episode with a client-given external id.
    pub fn episode_by_external_id(&self, external_id: &str) -> Option<EpisodeId> {
        self.external_ids.get(external_id).copied()
    }

    /// Entities whose canonical name or an alias normalises to `name`'s, at the latest seq,
    /// followed through merges.
    pub fn entities_named(&self, name: &str) -> Vec<EntityId> {
        self.entities_keyed(&normalize_name(name))
    }

    /// The first (lowest id) of [`NamespaceIndex::entities_named`], by a name already
    /// normalised ([`normalize_name`]), without collecting the others.
    pub fn entity_keyed(&self, key: &str) -> Option<EntityId> {
        let latest = Seq(u64::MAX);
        self.names.get(key)?.now.iter().map(|e| self.canonical_entity(*e, latest)).min()
    }

    /// [`NamespaceIndex::entities_named`] by a name already normalised.
    fn entities_keyed(&self, key: &str) -> Vec<EntityId> {
        let latest = Seq(u64::MAX);
        let ids: BTreeSet<EntityId> = self
            .names
            .get(key)
            .into_iter()
            .flat_map(|named| &named.now)
            .map(|e| self.canonical_entity(*e, latest))
            .collect();
        ids.into_iter().collect()
    }

    /// The entities whose latest name or an alias `text` holds as whole words, with the
    /// byte range of each mention, in text order (see [`find_names`]); several entities
    /// of one name come in id order.
    pub fn names_in(&self, text: &str) -> Vec<(EntityId, std::ops::Range<usize>)> {
        let now = |n: &str| self.names.get(n).map(|named| named.now.as_slice()).filter(|ids| !ids.is_empty());
        find_names(text, self.max_name_words, now)
            .into_iter()
            .flat_map(|(r, ids)| ids.iter().map(move |e| (*e, r.clone())))
            .collect()
    }

    /// A predicate's definition at the latest seq (undeclared ones are `many`/`any`).
    pub fn predicate(&self, name: &str) -> PredicateDef {
        self.predicate_ids
            .get(name)
            .and_then(|p| self.predicates[p.0 as usize].versions.last())
            .map_or_else(|| PredicateDef::undeclared(name), |(_, d)| d.clone())
    }

    /// Every predicate used or declared, by name, with its definition at the latest seq.
    pub fn predicates(&self) -> Vec<PredicateDef> {
        let mut defs: Vec<PredicateDef> = self
            .predicates
            .iter()
            .map(|p| p.versions.last().map_or_else(|| PredicateDef::undeclared(&p.name), |(_, d)| d.clone()))
            .collect();
        defs.sort_by(|a, b| a.name.cmp(&b.name));
        defs
    }

    /// The namespace's configuration at the latest seq.
    pub fn config(&self) -> NamespaceConfig {
        self.configs.last().map(|(_, c)| c.clone()).unwrap_or_default()
    }

    /// Where the namespace's vectors come from, at the latest seq.
    pub fn embedding_mode(&self) -> EmbeddingMode {
        self.embedding.last().map(|(_, m)| *m).unwrap_or_default()
    }

    /// Every embedding mode the namespace has had, the default it starts with first.
    pub fn embedding_modes(&self) -> Vec<EmbeddingMode> {
        std::iter::once(EmbeddingMode::default()).chain(self.embedding.iter().map(|(_, m)| *m)).collect()
    }

    /// What the built-in embedder embeds besides episodes, as last set.
    pub fn embedding_policy(&self) -> EmbeddingPolicy {
        self.embedding_policy
    }

    /// The predicates whose facts are embedded under `FactEmbedding::Declared`.
    pub fn embedded_predicates(&self) -> BTreeSet<String> {
        self.predicates.iter().filter(|p| p.embed).map(|p| p.name.clone()).collect()
    }

    /// Whether the predicate's facts are embedded under `FactEmbedding::Declared`.
    pub fn predicate_embedded(&self, name: &str) -> bool {
        self.predicate_ids.get(name).is_some_and(|p| self.predicates[p.0 as usize].embed)
    }

    /// Whether the built-in embedder embeds this fact.
    pub fn fact_embedded(&self, fact: &Fact) -> bool {
        match self.embedding_policy.facts {
            FactEmbedding::None => false,
            FactEmbedding::All => true,
            FactEmbedding::Declared => self.predicate_embedded(&fact.predicate),
        }
    }

    /// Every episode with the batch that recorded it, in id (recording) order.
    pub fn all_episodes(&self) -> Vec<(Seq, &Episode)> {
        let mut all: Vec<(Seq, &Episode)> = self.episodes.values().map(|(s, e)| (*s, e)).collect();
        all.sort_by_key(|(_, e)| e.id);
        all
    }

    /// Every fact (not re-assertions) with the batch that asserted it, in assertion order.
    pub fn all_facts(&self) -> impl Iterator<Item = (Seq, Fact)> + '_ {
        self.facts.values().map(|r| (r.seq, self.fact_of(r)))
    }

    /// The fact a record holds, as asserted.
    pub(crate) fn fact_of(&self, r: &FactRecord) -> Fact {
        r.to_fact(self.pred_name(r.pred))
    }

    /// A predicate's name.
    pub(crate) fn pred_name(&self, pred: PredId) -> &str {
        self.predicates.get(pred.0 as usize).map_or("", |p| p.name.as_str())
    }

    /// Every entity's latest version with the batch that declared it, in id order.
    pub fn all_entities(&self) -> impl Iterator<Item = (Seq, &Entity)> {
        self.entities.values().filter_map(|versions| versions.last().map(|(s, e)| (*s, e)))
    }

    /// Client-given vectors of episodes, in id order.
    pub fn client_vectors(&self) -> Vec<(EpisodeId, &[f32])> {
        let mut all: Vec<(EpisodeId, &[f32])> =
            self.embedded.iter().map(|(id, (_, v))| (*id, v.as_slice())).collect();
        all.sort_by_key(|(id, _)| *id);
        all
    }

    /// Counts of records, at the latest seq.
    pub fn counts(&self) -> Counts {
        Counts {
            batches: self.batches.len() as u64,
            episodes: self.episodes.len() as u64,
            entities: self.entities.len() as u64,
            facts: self.facts.len() as u64,
            predicates: self.predicates.len() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use ostrakon_core::{Literal, Polarity, Value};

    use super::*;

    fn fact(id: u64, value: i64) -> Event {
        Event::FactAsserted(Fact {
            id: FactId(id),
            subject: EntityId(1),
            predicate: "p".into(),
            object: Value::Literal(Literal::Integer(value)),
            valid: ostrakon_core::Interval::open(Timestamp::from_micros(1_000)),
            confidence: 1.0,
            polarity: Polarity::Asserted,
            provenance: vec![],
            supersedes: None,
            importance: None,
            correction: false,
        })
    }

    #[test]
    fn a_restatement_among_many_values_of_one_instant_is_found_by_a_probe() {
        let mut index = NamespaceIndex::new();
        let values: Vec<Event> = (1..=5_000).map(|i| fact(i as u64, i)).collect();
        index.apply(Seq(1), Timestamp::from_micros(1), &values).unwrap();
        let starts = index.slot_starts.values().next().unwrap();
        // One value per probe: finding what a new assertion restates reads one record,
        // not the 5,000 that start at the same instant.
        assert_eq!(starts.values().map(Vec::len).max(), Some(1));
        index.apply(Seq(2), Timestamp::from_micros(2), &[fact(9_999, 4_321)]).unwrap();
        assert_eq!(index.aliases.get(&FactId(9_999)), Some(&FactId(4_321)), "a restatement of fact 4321");
        // Loaded from a checkpoint, the lookup is built again.
        let (_, loaded) = crate::checkpoint::decode(&crate::checkpoint::encode(&index)).unwrap();
        assert_eq!(loaded, index);
    }
}
