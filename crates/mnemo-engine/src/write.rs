//! The write path's checks: a batch is validated against the namespace's index, the
//! batches already queued in the log but not yet applied (in flight), and the batch so
//! far; then its records get ids and become events.
//!
//! Validation runs under the namespace's writer lock, and a batch's effects stay in
//! flight from its submission to the log until it is applied, so two concurrent batches
//! can never both pass a check that only one of them may pass (the same external id,
//! retracting the same fact twice).

use std::collections::{BTreeMap, HashMap, HashSet};

use mnemo_core::{
    CoreError, EmbeddingMode, EmbeddingPolicy, Entity, EntityId, EpisodeId, Event, Fact, FactId, IntentionId,
    MentionSource, NamespaceConfig, RecordRef, SegmentConfig, Trigger, Value, ValueType, find_names,
    matchable_name, name_words, normalize_name, validate_name,
};
use mnemo_index::NamespaceIndex;

use crate::change::{
    Change, EmbeddingPolicyPatch, EntityRef, EpisodeRef, MAX_MENTIONS, NamespacePatch, NewTrigger,
    NoteEntity, ObjectRef, RecordId, SegmentationPatch,
};
use crate::error::EngineError;
use crate::limits::MAX_TEXT_BYTES;

/// What a committed-but-unapplied batch changes that later validation must see.
#[derive(Debug, Default)]
pub(crate) struct Effects {
    external_ids: HashSet<String>,
    /// Facts retracted as a whole (their own ids).
    retracted: HashSet<FactId>,
    /// Statements withdrawn on their own (corrected, or a restatement retracted or ended).
    withdrawn: HashSet<FactId>,
    predicate_types: HashMap<String, ValueType>,
    /// Entities created for a name nobody had (normalised name → id).
    names: HashMap<String, EntityId>,
    /// The embedding mode this batch set, if it did.
    embedding: Option<EmbeddingMode>,
    /// The embedding policy this batch left, if it changed it.
    policy: Option<EmbeddingPolicy>,
    /// The namespace settings this batch left, if it changed them.
    config: Option<NamespaceConfig>,
    /// The segmentation settings this batch left, if it changed them.
    segmentation: Option<SegmentConfig>,
    /// The latest version of each entity this batch declared.
    entities: HashMap<EntityId, Entity>,
    /// Intentions this batch fired or cancelled.
    fired: HashSet<IntentionId>,
    cancelled: HashSet<IntentionId>,
}

/// The writer's state of one namespace, behind its writer lock.
#[derive(Debug, Default)]
pub(crate) struct Writer {
    next_entity: u64,
    next_fact: u64,
    next_episode: u64,
    next_intention: u64,
    /// Effects of batches submitted to the log and not yet applied, by seq.
    in_flight: BTreeMap<u64, Effects>,
}

/// The entities `events` say `episode` mentions.
fn mentioned_in(events: &[Event], episode: EpisodeId) -> impl Iterator<Item = EntityId> + '_ {
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
fn declared_names<'e>(entities: impl Iterator<Item = &'e Entity>) -> (HashMap<String, Vec<EntityId>>, usize) {
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
    /// A writer that numbers records after the highest ids in `index`.
    pub(crate) fn after(index: &NamespaceIndex) -> Self {
        let high = index.high_water();
        Writer {
            next_entity: high.entity + 1,
            next_fact: high.fact + 1,
            next_episode: high.episode + 1,
            next_intention: index.max_intention() + 1,
            in_flight: BTreeMap::new(),
        }
    }

    /// Remembers what batch `seq` does until it is applied.
    pub(crate) fn submitted(&mut self, seq: u64, effects: Effects) {
        self.in_flight.insert(seq, effects);
    }

    /// Forgets the effects of batches up to `seq`, now visible in the index.
    pub(crate) fn applied(&mut self, seq: u64) {
        self.in_flight.retain(|s, _| *s > seq);
    }

    /// The embedding mode set by the latest batch in flight, if any did.
    fn embedding_mode(&self) -> Option<EmbeddingMode> {
        self.in_flight.values().rev().find_map(|e| e.embedding)
    }

    /// The embedding policy left by the latest batch in flight that changed it.
    fn policy(&self) -> Option<EmbeddingPolicy> {
        self.in_flight.values().rev().find_map(|e| e.policy)
    }

    /// The namespace settings left by the latest batch in flight that changed them.
    fn config(&self) -> Option<NamespaceConfig> {
        self.in_flight.values().rev().find_map(|e| e.config.clone())
    }

    /// The segmentation settings left by the latest batch in flight that changed them.
    fn segmentation(&self) -> Option<SegmentConfig> {
        self.in_flight.values().rev().find_map(|e| e.segmentation)
    }

    /// The latest version of entity `id` declared by a batch in flight.
    fn entity(&self, id: EntityId) -> Option<&Entity> {
        self.in_flight.values().rev().find_map(|e| e.entities.get(&id))
    }

    fn external_id_taken(&self, ext: &str) -> bool {
        self.in_flight.values().any(|e| e.external_ids.contains(ext))
    }

    fn retracted(&self, id: FactId) -> bool {
        self.in_flight.values().any(|e| e.retracted.contains(&id))
    }

    fn withdrawn(&self, id: FactId) -> bool {
        self.in_flight.values().any(|e| e.withdrawn.contains(&id))
    }

    fn predicate_type(&self, name: &str) -> Option<ValueType> {
        self.in_flight.values().rev().find_map(|e| e.predicate_types.get(name).copied())
    }

    fn fired(&self, id: IntentionId) -> bool {
        self.in_flight.values().any(|e| e.fired.contains(&id))
    }

    fn cancelled(&self, id: IntentionId) -> bool {
        self.in_flight.values().any(|e| e.cancelled.contains(&id))
    }

    fn named(&self, key: &str) -> Option<EntityId> {
        self.in_flight.values().find_map(|e| e.names.get(key).copied())
    }
}

/// A prepared batch: its events, the id each change produced, and its effects.
pub(crate) struct Prepared {
    pub(crate) events: Vec<Event>,
    pub(crate) ids: Vec<Option<RecordId>>,
    /// Entities created because a change named one that did not exist.
    pub(crate) created: Vec<EntityId>,
    pub(crate) effects: Effects,
}

/// An input field of the change being checked (relative to it: the batch wraps each
/// change's error with its position, [`EngineError::InChange`]).
#[derive(Clone, Copy)]
struct Field<'a>(&'a str);

impl std::fmt::Display for Field<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// Longest vector a namespace may configure.
pub const MAX_DIM: u32 = 4096;

/// A vector of `dim` finite numbers, not all zero.
pub(crate) fn check_vector(field: impl std::fmt::Display, v: &[f32], dim: usize) -> Result<(), EngineError> {
    let why = if v.len() != dim {
        format!("must have {dim} dimensions, has {}", v.len())
    } else if v.iter().any(|x| !x.is_finite()) {
        "must be finite".to_owned()
    } else if v.iter().all(|x| *x == 0.0) {
        "must not be all zeros".to_owned()
    } else {
        return Ok(());
    };
    Err(CoreError::invalid_value(field, format!("{} numbers", v.len()), why).into())
}

/// Checks every change and turns the batch into events with fresh ids; with
/// `match_names`, known entity names found in the new episodes' texts are recorded as
/// their mentions (a replay has them recorded already). On error the writer is left as
/// it was.
/// Most aliases one entity may have (its declarations together).
pub const MAX_ALIASES: usize = 1_000;
/// Most properties one entity declaration may carry.
pub const MAX_PROPERTIES: usize = 1_000;
/// Longest free-text note (a retraction's or cancellation's reason, a predicate's
/// description), in bytes.
pub const MAX_REASON_BYTES: usize = 16 * 1024;
/// Longest idle-consolidation period: ten years, so the period in microseconds fits an
/// `i64` with room to spare.
pub const MAX_CONSOLIDATE_EVERY_SECONDS: u64 = 10 * 366 * 86_400;

pub(crate) fn prepare(
    writer: &mut Writer,
    index: &NamespaceIndex,
    changes: Vec<Change>,
    match_names: bool,
) -> Result<Prepared, EngineError> {
    let mut batch = Batch {
        next_entity: writer.next_entity,
        next_fact: writer.next_fact,
        next_episode: writer.next_episode,
        next_intention: writer.next_intention,
        writer,
        index,
        ids: Vec::with_capacity(changes.len()),
        events: Vec::with_capacity(changes.len()),
        created: Vec::new(),
        effects: Effects::default(),
    };
    for (n, change) in changes.into_iter().enumerate() {
        let checked = match change {
            Change::RecordEpisode(e) => batch.record_episode(e),
            Change::DeclareEntity(e) => batch.declare_entity(e),
            Change::AssertFact(f) => batch.assert_fact(f),
            Change::EndFact { fact, valid_to } => batch.end_fact(fact, valid_to),
            Change::RetractFact { fact, reason } => batch.retract_fact(fact, reason),
            Change::WithdrawStatement { statement, reason } => batch.withdraw_statement(statement, reason),
            Change::DefinePredicate(def) => batch.define_predicate(def),
            Change::ConfigureNamespace(config) => batch.configure_namespace(config),
            Change::MergeEntities { from, into } => batch.merge_entities(from, into),
            Change::ConfigureEmbedding(mode) => batch.configure_embedding(mode),
            Change::ConfigureEmbeddingPolicy(patch) => batch.configure_embedding_policy(patch),
            Change::EmbedPredicate { predicate, embed } => batch.embed_predicate(predicate, embed),
            Change::Embed { episode, vector } => batch.embed(episode, vector),
            Change::Recall { records, at } => batch.recall(records, at),
            Change::Mention { episode, entities, source } => batch.mention(episode, entities, source),
            Change::AddIntention(new) => batch.add_intention(new),
            Change::CancelIntention { id, reason } => batch.cancel_intention(id, reason),
            Change::FireIntention { id, episode, at } => batch.fire_intention(id, episode, at),
            Change::ConfigureSegmentation(config) => batch.configure_segmentation(config),
            Change::NoteEntity(e) => batch.note_entity(e),
            Change::CloseSegment { thread, episodes, end, centroid } => {
                batch.close_segment(thread, episodes, end, centroid)
            }
        };
        let id = checked.map_err(|e| e.in_change(n))?;
        batch.ids.push(id);
    }
    if match_names {
        batch.match_names();
        batch.fire_intentions();
    }
    let Batch {
        writer,
        ids,
        events,
        created,
        effects,
        next_entity,
        next_fact,
        next_episode,
        next_intention,
        ..
    } = batch;
    (writer.next_entity, writer.next_fact, writer.next_episode, writer.next_intention) =
        (next_entity, next_fact, next_episode, next_intention);
    Ok(Prepared { events, ids, created, effects })
}

/// Validation context: the index, what is in flight, and the batch so far.
struct Batch<'a> {
    writer: &'a mut Writer,
    index: &'a NamespaceIndex,
    ids: Vec<Option<RecordId>>,
    events: Vec<Event>,
    created: Vec<EntityId>,
    effects: Effects,
    next_entity: u64,
    next_fact: u64,
    next_episode: u64,
    next_intention: u64,
}

fn take(counter: &mut u64) -> u64 {
    let id = *counter;
    *counter += 1;
    id
}

/// One method per change kind: each checks its change against the index, the batches
/// in flight and the batch so far, and pushes its events.
impl Batch<'_> {
    fn record_episode(&mut self, e: crate::change::NewEpisode) -> Result<Option<RecordId>, EngineError> {
        let field = Field;
        if e.text.len() > MAX_TEXT_BYTES {
            return Err(EngineError::LimitExceeded {
                field: field("text").to_string(),
                value: e.text.len() as u64,
                max: MAX_TEXT_BYTES as u64,
            });
        }
        e.occurred_at.validate(field("occurredAt"))?;
        if let Some(i) = e.importance
            && !(0.0..=1.0).contains(&i)
        {
            return Err(
                CoreError::invalid_value(field("importance"), i.to_string(), "must be in [0, 1]").into()
            );
        }
        for (name, value) in [("thread", &e.thread), ("source", &e.source), ("role", &e.role)] {
            if let Some(v) = value {
                validate_name(field(name), v)?;
            }
        }
        if let Some(ext) = &e.external_id {
            validate_name(field("externalId"), ext)?;
            if self.index.episode_by_external_id(ext).is_some()
                || self.writer.external_id_taken(ext)
                || !self.effects.external_ids.insert(ext.clone())
            {
                return Err(EngineError::DuplicateExternalId {
                    field: field("externalId").to_string(),
                    value: ext.clone(),
                });
            }
        }
        let id = EpisodeId(take(&mut self.next_episode));
        self.events.push(Event::EpisodeRecorded(mnemo_core::Episode {
            id,
            text: e.text,
            occurred_at: e.occurred_at,
            thread: e.thread,
            source: e.source,
            role: e.role,
            external_id: e.external_id,
            importance: e.importance,
        }));
        Ok(Some(RecordId::Episode(id)))
    }

    fn declare_entity(&mut self, e: crate::change::NewEntity) -> Result<Option<RecordId>, EngineError> {
        let field = Field;
        validate_name(field("name"), &e.name)?;
        let known_aliases = e.id.and_then(|id| self.index.entity(id)).map_or(0, |k| k.aliases.len());
        CoreError::check_len(field("aliases"), known_aliases + e.aliases.len(), MAX_ALIASES, "aliases")?;
        CoreError::check_len(field("properties"), e.properties.len(), MAX_PROPERTIES, "properties")?;
        for (i, alias) in e.aliases.iter().enumerate() {
            validate_name(format_args!("aliases[{i}]"), alias)?;
        }
        if let Some(kind) = &e.kind {
            validate_name(field("kind"), kind)?;
        }
        let mut properties = std::collections::BTreeMap::new();
        for (key, value) in e.properties {
            validate_name(field("properties"), &key)?;
            value.validate(format_args!("properties.{key}"))?;
            properties.insert(key, value.normalized());
        }
        let id = match e.id {
            Some(id) if self.current_entity(id).is_none() => {
                return Err(EngineError::UnknownEntity {
                    field: field("id").to_string(),
                    value: id.to_string(),
                });
            }
            Some(id) => id,
            None => EntityId(take(&mut self.next_entity)),
        };
        self.declared(Entity { id, name: e.name, aliases: e.aliases, kind: e.kind, properties });
        Ok(Some(RecordId::Entity(id)))
    }

    fn note_entity(&mut self, e: NoteEntity) -> Result<Option<RecordId>, EngineError> {
        let field = Field;
        validate_name(field("name"), &e.name)?;
        CoreError::check_len(field("aliases"), e.aliases.len(), MAX_ALIASES, "aliases")?;
        for (i, alias) in e.aliases.iter().enumerate() {
            validate_name(format_args!("aliases[{i}]"), alias)?;
        }
        if let Some(kind) = &e.kind {
            validate_name(field("kind"), kind)?;
        }
        // The entity as it stands (this batch, then the batches in flight, then the
        // index), or a new one; the aliases and kind given are merged into it.
        let current = self.find_named(&e.name).and_then(|id| self.current_entity(id)).cloned();
        let is_new = current.is_none();
        let current = current.unwrap_or_else(|| Entity {
            id: EntityId(take(&mut self.next_entity)),
            name: e.name.trim().to_owned(),
            aliases: Vec::new(),
            kind: None,
            properties: Default::default(),
        });
        let mut next = current.clone();
        let mut names: Vec<String> =
            std::iter::once(&next.name).chain(&next.aliases).map(|a| normalize_name(a)).collect();
        for alias in e.aliases {
            let k = normalize_name(&alias);
            if !names.contains(&k) {
                names.push(k);
                next.aliases.push(alias);
            }
        }
        CoreError::check_len(field("aliases"), next.aliases.len(), MAX_ALIASES, "aliases")?;
        if e.kind.is_some() {
            next.kind = e.kind;
        }
        let id = next.id;
        if is_new || next != current {
            self.declared(next);
        }
        Ok(Some(RecordId::Entity(id)))
    }

    /// The entity a canonical name or alias names: as this batch, then the batches in
    /// flight, then the index (the lowest id when several) have it.
    fn find_named(&self, name: &str) -> Option<EntityId> {
        let key = normalize_name(name);
        self.effects
            .names
            .get(&key)
            .copied()
            .or_else(|| self.writer.named(&key))
            .or_else(|| self.index.entity_keyed(&key))
    }

    /// Records a declaration: later changes of this batch, and concurrent batches, that
    /// name the entity find it.
    fn declared(&mut self, entity: Entity) {
        for name in std::iter::once(&entity.name).chain(&entity.aliases) {
            self.effects.names.entry(normalize_name(name)).or_insert(entity.id);
        }
        self.effects.entities.insert(entity.id, entity.clone());
        self.events.push(Event::EntityDeclared(entity));
    }

    /// The latest version of entity `id`: as this batch, then the batches in flight, then
    /// the index have it.
    fn current_entity(&self, id: EntityId) -> Option<&Entity> {
        self.effects.entities.get(&id).or_else(|| self.writer.entity(id)).or_else(|| self.index.entity(id))
    }

    fn assert_fact(&mut self, f: crate::change::NewFact) -> Result<Option<RecordId>, EngineError> {
        let field = Field;
        let subject = self.entity(&f.subject, field("subject"))?;
        let object = match f.object {
            ObjectRef::Entity(r) => Value::Entity(self.entity(&r, field("object"))?),
            ObjectRef::Literal(l) => Value::Literal(l.normalized()),
        };
        let expected = self.predicate_type(&f.predicate);
        if !expected.accepts(object.value_type()) {
            return Err(EngineError::WrongValueType {
                field: field("object").to_string(),
                predicate: f.predicate,
                expected: format!("{expected:?}"),
                actual: format!("{:?}", object.value_type()),
            });
        }
        let mut provenance = Vec::with_capacity(f.provenance.len());
        for (i, r) in f.provenance.iter().enumerate() {
            provenance.push(self.episode(r, format_args!("provenance[{i}]"))?);
        }
        if let Some(old) = f.supersedes {
            // A correction withdraws the one statement it names.
            self.live_fact(old, field("supersedes"), Level::Statement)?;
            self.effects.withdrawn.insert(old);
        }
        let id = FactId(take(&mut self.next_fact));
        let fact = Fact {
            id,
            subject,
            predicate: f.predicate,
            object,
            valid: f.valid,
            confidence: f.confidence.unwrap_or(1.0),
            polarity: f.polarity,
            provenance,
            supersedes: f.supersedes,
            importance: f.importance,
            correction: f.correction,
        };
        fact.validate("")?;
        self.events.push(Event::FactAsserted(fact));
        Ok(Some(RecordId::Fact(id)))
    }

    fn end_fact(
        &mut self,
        fact: FactId,
        valid_to: mnemo_core::Timestamp,
    ) -> Result<Option<RecordId>, EngineError> {
        let field = Field;
        let stated = self.live_fact(fact, field("fact"), Level::of(self.index, fact))?;
        valid_to.validate(field("validTo"))?;
        if valid_to <= stated.valid.from() {
            return Err(CoreError::InvalidInterval {
                field: field("validTo").to_string(),
                from: stated.valid.from().to_string(),
                to: valid_to.to_string(),
            }
            .into());
        }
        if self.index.is_restatement(fact) {
            // Its validity is the fact's: narrowing it alone would make it another fact.
            return Err(EngineError::NotAFact { field: field("fact").to_string(), value: fact.to_string() });
        }
        self.events.push(Event::FactEnded { fact, valid_to });
        Ok(None)
    }

    fn withdraw_statement(
        &mut self,
        statement: FactId,
        reason: Option<String>,
    ) -> Result<Option<RecordId>, EngineError> {
        let field = Field;
        if let Some(r) = &reason {
            CoreError::check_len(field("reason"), r.len(), MAX_REASON_BYTES, "bytes")?;
        }
        self.live_fact(statement, field("statement"), Level::Statement)?;
        self.effects.withdrawn.insert(statement);
        self.events.push(Event::StatementWithdrawn { statement, reason });
        Ok(None)
    }

    fn retract_fact(
        &mut self,
        fact: FactId,
        reason: Option<String>,
    ) -> Result<Option<RecordId>, EngineError> {
        let field = Field;
        if let Some(r) = &reason {
            CoreError::check_len(field("reason"), r.len(), MAX_REASON_BYTES, "bytes")?;
        }
        let level = Level::of(self.index, fact);
        self.live_fact(fact, field("fact"), level)?;
        match level {
            Level::Fact => self.effects.retracted.insert(fact),
            Level::Statement => self.effects.withdrawn.insert(fact),
        };
        self.events.push(Event::FactRetracted { fact, reason });
        Ok(None)
    }

    fn define_predicate(&mut self, def: mnemo_core::PredicateDef) -> Result<Option<RecordId>, EngineError> {
        let field = Field;
        validate_name(field("name"), &def.name)?;
        if let Some(d) = &def.description {
            CoreError::check_len(field("description"), d.len(), MAX_REASON_BYTES, "bytes")?;
        }
        if let Some(profile) = &def.decay {
            profile.validate(field("decay"))?;
        }
        self.effects.predicate_types.insert(def.name.clone(), def.value_type);
        self.events.push(Event::PredicateDefined(def));
        Ok(None)
    }

    fn configure_namespace(&mut self, patch: NamespacePatch) -> Result<Option<RecordId>, EngineError> {
        let field = Field;
        if let Some(Some(every)) = patch.consolidate_every_seconds
            && !(1..=MAX_CONSOLIDATE_EVERY_SECONDS).contains(&every)
        {
            return Err(CoreError::invalid_value(
                field("consolidateEverySeconds"),
                every.to_string(),
                format!("must be from 1 to {MAX_CONSOLIDATE_EVERY_SECONDS} (ten years)"),
            )
            .into());
        }
        if let Some(time_zone) = &patch.time_zone {
            time_zone.validate(field("timeZone"))?;
        }
        if let Some(decay) = &patch.decay {
            for (name, profile) in [
                ("decay.default", decay.default),
                ("decay.episode", decay.episode),
                ("decay.entity", decay.entity),
                ("decay.fact", decay.fact),
            ] {
                if let Some(p) = profile {
                    p.validate(field(name))?;
                }
            }
        }
        // Applied to the settings as the batches before this one leave them.
        let current = self
            .effects
            .config
            .clone()
            .or_else(|| self.writer.config())
            .unwrap_or_else(|| self.index.config());
        let config = patch.apply(current);
        self.effects.config = Some(config.clone());
        self.events.push(Event::NamespaceConfigured(config));
        Ok(None)
    }

    fn merge_entities(&mut self, from: EntityId, into: EntityId) -> Result<Option<RecordId>, EngineError> {
        let field = Field;
        for (name, id) in [("from", from), ("into", into)] {
            if self.index.entity(id).is_none() {
                return Err(EngineError::UnknownEntity {
                    field: field(name).to_string(),
                    value: id.to_string(),
                });
            }
        }
        let latest = self.index.last_seq();
        if self.index.canonical_entity(from, latest) == self.index.canonical_entity(into, latest) {
            return Err(CoreError::invalid_value(
                field("from"),
                from.to_string(),
                "already reads as the same entity",
            )
            .into());
        }
        self.events.push(Event::EntitiesMerged { from, into });
        Ok(None)
    }

    fn configure_embedding(&mut self, mode: EmbeddingMode) -> Result<Option<RecordId>, EngineError> {
        let field = Field;
        if mode == (EmbeddingMode::Client { dim: 0 })
            || matches!(mode, EmbeddingMode::Client { dim } if dim > MAX_DIM)
        {
            return Err(CoreError::invalid_value(
                field("embedding.dimensions"),
                format!("{mode:?}"),
                format!("must be in [1, {MAX_DIM}]"),
            )
            .into());
        }
        self.effects.embedding = Some(mode);
        self.events.push(Event::EmbeddingConfigured(mode));
        Ok(None)
    }

    fn configure_embedding_policy(
        &mut self,
        patch: EmbeddingPolicyPatch,
    ) -> Result<Option<RecordId>, EngineError> {
        // Applied to the policy as the batches before this one leave it.
        let current = self
            .effects
            .policy
            .or_else(|| self.writer.policy())
            .unwrap_or_else(|| self.index.embedding_policy());
        let policy = patch.apply(current);
        self.effects.policy = Some(policy);
        self.events.push(Event::EmbeddingPolicySet(policy));
        Ok(None)
    }

    fn embed_predicate(&mut self, predicate: String, embed: bool) -> Result<Option<RecordId>, EngineError> {
        validate_name(Field("predicate"), &predicate)?;
        self.events.push(Event::PredicateEmbedding { predicate, embed });
        Ok(None)
    }

    fn embed(&mut self, episode: EpisodeRef, vector: Vec<f32>) -> Result<Option<RecordId>, EngineError> {
        let field = Field;
        let id = self.episode(&episode, format_args!("episode"))?;
        let mode = self
            .effects
            .embedding
            .or_else(|| self.writer.embedding_mode())
            .unwrap_or_else(|| self.index.embedding_mode());
        let EmbeddingMode::Client { dim } = mode else {
            return Err(CoreError::invalid_value(
                field("embedding"),
                format!("{} numbers", vector.len()),
                "this namespace makes its own vectors: configure it for client vectors first",
            )
            .into());
        };
        check_vector(field("embedding"), &vector, dim as usize)?;
        self.events.push(Event::Embedded { record: RecordRef::Episode(id), vector });
        Ok(None)
    }

    fn recall(
        &mut self,
        records: Vec<RecordRef>,
        at: mnemo_core::Timestamp,
    ) -> Result<Option<RecordId>, EngineError> {
        let field = Field;
        at.validate(field("at"))?;
        for (i, record) in records.iter().enumerate() {
            let known = match record {
                RecordRef::Fact(id) => self.index.fact(*id).is_some(),
                RecordRef::Entity(id) => self.index.entity(*id).is_some() || self.declares_entity(*id),
                RecordRef::Episode(id) => {
                    self.index.episode(*id).is_some() || self.ids.contains(&Some(RecordId::Episode(*id)))
                }
            };
            if !known {
                let field = format!("records[{i}]");
                return Err(match record {
                    RecordRef::Fact(id) => EngineError::UnknownFact { field, value: id.to_string() },
                    RecordRef::Entity(id) => EngineError::UnknownEntity { field, value: id.to_string() },
                    RecordRef::Episode(id) => EngineError::UnknownEpisode { field, value: id.to_string() },
                });
            }
        }
        self.events.push(Event::Reinforced { records, at });
        Ok(None)
    }

    fn mention(
        &mut self,
        episode: EpisodeRef,
        entities: Vec<EntityRef>,
        source: MentionSource,
    ) -> Result<Option<RecordId>, EngineError> {
        let field = Field;
        let episode = self.episode(&episode, format_args!("episode"))?;
        if entities.is_empty() {
            return Err(CoreError::invalid_value(field("entities"), "[]", "name at least one entity").into());
        }
        if entities.len() > MAX_MENTIONS {
            return Err(EngineError::LimitExceeded {
                field: field("entities").to_string(),
                value: entities.len() as u64,
                max: MAX_MENTIONS as u64,
            });
        }
        let mut ids = Vec::with_capacity(entities.len());
        for r in &entities {
            let id = self.entity(r, field("entities"))?;
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        self.events.push(Event::Mentioned { episode, entities: ids, source });
        Ok(None)
    }

    fn add_intention(&mut self, new: crate::change::NewIntention) -> Result<Option<RecordId>, EngineError> {
        let field = Field;
        if new.payload.trim().is_empty() {
            return Err(CoreError::invalid_value(field("payload"), "\"\"", "say what to do").into());
        }
        if new.payload.len() > MAX_TEXT_BYTES {
            return Err(EngineError::LimitExceeded {
                field: field("payload").to_string(),
                value: new.payload.len() as u64,
                max: MAX_TEXT_BYTES as u64,
            });
        }
        if let Some(x) = new.expires_at {
            x.validate(field("expiresAt"))?;
        }
        let trigger = match new.trigger {
            NewTrigger::At(t) => Trigger::At(t.validate(field("trigger.at"))?),
            NewTrigger::Mentions(refs) => {
                if refs.is_empty() || refs.len() > MAX_MENTIONS {
                    return Err(CoreError::invalid_value(
                        field("trigger.entities"),
                        refs.len().to_string(),
                        "name between 1 and 1000 entities",
                    )
                    .into());
                }
                let mut ids = Vec::with_capacity(refs.len());
                for r in &refs {
                    let id = self.entity(r, field("trigger.entities"))?;
                    if !ids.contains(&id) {
                        ids.push(id);
                    }
                }
                Trigger::Mentions(ids)
            }
            NewTrigger::Cue { text, vector, threshold } => {
                if text.trim().is_empty() {
                    return Err(CoreError::invalid_value(field("trigger.cue"), "\"\"", "give a cue").into());
                }
                if vector.len() > MAX_DIM as usize {
                    return Err(EngineError::LimitExceeded {
                        field: field("trigger.cueVector").to_string(),
                        value: vector.len() as u64,
                        max: u64::from(MAX_DIM),
                    });
                }
                check_vector(field("trigger.cueVector"), &vector, vector.len())?;
                if !(threshold.is_finite() && threshold > 0.0 && threshold <= 1.0) {
                    return Err(CoreError::invalid_value(
                        field("trigger.threshold"),
                        threshold.to_string(),
                        "must be in (0, 1]",
                    )
                    .into());
                }
                Trigger::Cue { text, vector, threshold }
            }
        };
        let id = IntentionId(take(&mut self.next_intention));
        self.events.push(Event::IntentionAdded(mnemo_core::Intention {
            id,
            payload: new.payload,
            trigger,
            expires_at: new.expires_at,
            priority: new.priority,
            repeat: new.repeat,
        }));
        Ok(Some(RecordId::Intention(id)))
    }

    fn cancel_intention(
        &mut self,
        id: IntentionId,
        reason: Option<String>,
    ) -> Result<Option<RecordId>, EngineError> {
        let field = Field;
        if let Some(r) = &reason {
            CoreError::check_len(field("reason"), r.len(), MAX_REASON_BYTES, "bytes")?;
        }
        let known = self.index.intention(id, mnemo_core::Seq(u64::MAX));
        let added_here = self.ids.contains(&Some(RecordId::Intention(id)));
        if known.is_none() && !added_here {
            return Err(EngineError::UnknownIntention {
                field: field("id").to_string(),
                value: id.to_string(),
            });
        }
        if known.is_some_and(|v| v.cancelled.is_some())
            || self.writer.cancelled(id)
            || !self.effects.cancelled.insert(id)
        {
            return Err(CoreError::invalid_value(field("id"), id.to_string(), "already cancelled").into());
        }
        self.events.push(Event::IntentionCancelled { id, reason });
        Ok(None)
    }

    fn fire_intention(
        &mut self,
        id: IntentionId,
        episode: Option<EpisodeId>,
        at: mnemo_core::Timestamp,
    ) -> Result<Option<RecordId>, EngineError> {
        let field = Field;
        let known = self.index.intention(id, mnemo_core::Seq(u64::MAX)).is_some()
            || self.ids.contains(&Some(RecordId::Intention(id)));
        if !known {
            return Err(EngineError::UnknownIntention {
                field: field("id").to_string(),
                value: id.to_string(),
            });
        }
        if let Some(e) = episode {
            self.episode(&EpisodeRef::Id(e), format_args!("episode"))?;
        }
        at.validate(field("at"))?;
        // A one-off intention fires once, whoever records it first.
        let view = self.index.intention(id, mnemo_core::Seq(u64::MAX));
        let once = view.as_ref().is_some_and(|v| !v.intention.repeat);
        if once
            && (view.is_some_and(|v| !v.fired.is_empty())
                || self.writer.fired(id)
                || self.effects.fired.contains(&id))
        {
            return Err(CoreError::invalid_value(field("id"), id.to_string(), "already fired").into());
        }
        self.effects.fired.insert(id);
        self.events.push(Event::IntentionFired { id, episode, at });
        Ok(None)
    }

    fn configure_segmentation(&mut self, patch: SegmentationPatch) -> Result<Option<RecordId>, EngineError> {
        let field = Field;
        let current = self
            .effects
            .segmentation
            .or_else(|| self.writer.segmentation())
            .unwrap_or_else(|| self.index.segment_config(mnemo_core::Seq(u64::MAX)));
        let config = patch.apply(current);
        config.validate(field("segmentation"))?;
        self.effects.segmentation = Some(config);
        self.events.push(Event::SegmentationConfigured(config));
        Ok(None)
    }

    fn close_segment(
        &mut self,
        thread: String,
        episodes: Vec<EpisodeId>,
        end: mnemo_core::SegmentEnd,
        centroid: Option<Vec<f32>>,
    ) -> Result<Option<RecordId>, EngineError> {
        let field = Field;
        validate_name(field("thread"), &thread)?;
        if episodes.is_empty() {
            return Err(CoreError::invalid_value(field("episodes"), "[]", "a segment has episodes").into());
        }
        for (i, id) in episodes.iter().enumerate() {
            let in_thread =
                self.index.episode(*id).is_some_and(|e| e.thread.as_deref() == Some(thread.as_str()));
            let taken = self.index.segment_of(*id, mnemo_core::Seq(u64::MAX)).is_some()
                || episodes[..i].contains(id)
                || self
                    .events
                    .iter()
                    .any(|e| matches!(e, Event::SegmentClosed { episodes, .. } if episodes.contains(id)));
            if !in_thread || taken {
                return Err(EngineError::UnknownEpisode {
                    field: format!("episodes[{i}]"),
                    value: format!("{id} (not an unsegmented episode of thread {thread:?})"),
                });
            }
        }
        if let Some(c) = &centroid {
            check_vector(field("centroid"), c, c.len())?;
        }
        self.events.push(Event::SegmentClosed { thread, episodes, end, centroid });
        Ok(None)
    }
}

impl<'a> Batch<'a> {
    /// Fires, at each episode of the batch in order, the pending intentions it triggers:
    /// it mentions one of their entities, or occurs at or after their time.
    fn fire_intentions(&mut self) {
        if !self.events.iter().any(|e| matches!(e, Event::EpisodeRecorded(_))) {
            return;
        }
        let latest = mnemo_core::Seq(u64::MAX);
        let intentions = self.index.intentions(latest);
        if intentions.is_empty() {
            return;
        }
        let mut fired = Vec::new();
        for event in &self.events {
            let Event::EpisodeRecorded(episode) = event else { continue };
            let mentioned: Vec<EntityId> = mentioned_in(&self.events, episode.id)
                .map(|e| self.index.canonical_entity(e, latest))
                .collect();
            for view in &intentions {
                let i = &view.intention;
                let id = i.id;
                let once_done = !i.repeat
                    && (!view.fired.is_empty() || self.writer.fired(id) || self.effects.fired.contains(&id));
                if once_done
                    || view.cancelled.is_some()
                    || self.writer.cancelled(id)
                    || self.effects.cancelled.contains(&id)
                    || i.expires_at.is_some_and(|x| episode.occurred_at >= x)
                {
                    continue;
                }
                let due = match &i.trigger {
                    Trigger::At(t) => episode.occurred_at >= *t,
                    Trigger::Mentions(entities) => {
                        entities.iter().any(|e| mentioned.contains(&self.index.canonical_entity(*e, latest)))
                    }
                    Trigger::Cue { .. } => false,
                };
                if due {
                    self.effects.fired.insert(id);
                    fired.push(Event::IntentionFired {
                        id,
                        episode: Some(episode.id),
                        at: episode.occurred_at,
                    });
                }
            }
        }
        self.events.extend(fired);
    }

    /// Records, for each episode of the batch, the known entities (and those this batch
    /// declares) whose name or alias its text contains as a whole word, past those the
    /// client already gave.
    fn match_names(&mut self) {
        if !self.events.iter().any(|e| matches!(e, Event::EpisodeRecorded(_))) {
            return;
        }
        let declared: Vec<&Entity> = self
            .events
            .iter()
            .filter_map(|e| match e {
                Event::EntityDeclared(entity) => Some(entity),
                _ => None,
            })
            .collect();
        let (local, local_words) = declared_names(declared.into_iter());
        let mut found = Vec::new();
        for event in &self.events {
            let Event::EpisodeRecorded(episode) = event else { continue };
            let given: Vec<EntityId> = mentioned_in(&self.events, episode.id).collect();
            let mut entities = Vec::new();
            let known = self.index.names_in(&episode.text).into_iter().map(|(e, _)| e);
            let text = &episode.text;
            let declared = find_names(text, local_words, |n| local.get(n))
                .into_iter()
                .flat_map(|(_, ids)| ids.iter().copied());
            for e in known.chain(declared) {
                if !given.contains(&e) && !entities.contains(&e) {
                    entities.push(e);
                }
            }
            if !entities.is_empty() {
                found.push(Event::Mentioned {
                    episode: episode.id,
                    entities,
                    source: MentionSource::NameMatch,
                });
            }
        }
        self.events.extend(found);
    }

    /// The entity a reference names. A name is matched against canonical names and
    /// aliases (the lowest id wins when several match); an unknown name creates an
    /// entity, declared just before the change that named it.
    fn entity(&mut self, r: &EntityRef, field: Field<'_>) -> Result<EntityId, EngineError> {
        let unknown = |value: String| EngineError::UnknownEntity { field: field.to_string(), value };
        match r {
            EntityRef::Id(id) if self.index.entity(*id).is_some() || self.declares_entity(*id) => Ok(*id),
            EntityRef::Id(id) => Err(unknown(id.to_string())),
            EntityRef::Name(name) => {
                validate_name(field, name)?;
                if let Some(id) = self.find_named(name) {
                    return Ok(id);
                }
                let id = EntityId(take(&mut self.next_entity));
                let entity = Entity {
                    id,
                    name: name.trim().to_owned(),
                    aliases: Vec::new(),
                    kind: None,
                    properties: Default::default(),
                };
                self.declared(entity);
                self.created.push(id);
                Ok(id)
            }
            EntityRef::New(n) => match self.ids.get(*n) {
                Some(Some(RecordId::Entity(id))) => Ok(*id),
                _ => Err(unknown(format!(
                    "change {n} of this batch, which does not declare an entity before this one"
                ))),
            },
        }
    }

    fn episode(&self, r: &EpisodeRef, field: std::fmt::Arguments<'_>) -> Result<EpisodeId, EngineError> {
        let unknown = |value: String| EngineError::UnknownEpisode { field: field.to_string(), value };
        match r {
            EpisodeRef::Id(id)
                if self.index.episode(*id).is_some() || self.ids.contains(&Some(RecordId::Episode(*id))) =>
            {
                Ok(*id)
            }
            EpisodeRef::Id(id) => Err(unknown(id.to_string())),
            EpisodeRef::External(ext) => {
                self.index.episode_by_external_id(ext).ok_or_else(|| unknown(format!("{ext:?}")))
            }
            EpisodeRef::New(n) => match self.ids.get(*n) {
                Some(Some(RecordId::Episode(id))) => Ok(*id),
                _ => Err(unknown(format!(
                    "change {n} of this batch, which does not record an episode before this one"
                ))),
            },
        }
    }

    /// Whether this batch declared (or created by name) entity `id` so far.
    fn declares_entity(&self, id: EntityId) -> bool {
        self.ids.contains(&Some(RecordId::Entity(id))) || self.created.contains(&id)
    }

    /// The type a predicate accepts: as this batch, then the batches in flight, then the
    /// index define it.
    fn predicate_type(&self, name: &str) -> ValueType {
        self.effects
            .predicate_types
            .get(name)
            .copied()
            .or_else(|| self.writer.predicate_type(name))
            .unwrap_or_else(|| self.index.predicate(name).value_type)
    }

    /// A fact that exists and still stands at `level`, in the index, in flight and
    /// earlier in this batch: as a whole (it has a live statement and was not
    /// retracted), or the one statement `id` names.
    fn live_fact(&self, id: FactId, field: Field<'_>, level: Level) -> Result<Fact, EngineError> {
        let index = self.index;
        let fact = index
            .fact(id)
            .ok_or_else(|| EngineError::UnknownFact { field: field.to_string(), value: id.to_string() })?;
        let canonical = index.canonical(id);
        let whole_gone = self.writer.retracted(canonical) || self.effects.retracted.contains(&canonical);
        let gone = match level {
            Level::Fact => whole_gone || !index.fact_is_live(id),
            Level::Statement => {
                whole_gone
                    || !index.statement_is_live(id)
                    || self.writer.withdrawn(id)
                    || self.effects.withdrawn.contains(&id)
            }
        };
        if gone {
            return Err(EngineError::AlreadyRetracted { field: field.to_string(), value: id.to_string() });
        }
        Ok(fact)
    }
}

/// What a retraction, an end or a correction applies to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    /// The fact with all its statements (its own id was given).
    Fact,
    /// One statement (a restatement's id, or any id named by `supersedes`).
    Statement,
}

impl Level {
    fn of(index: &NamespaceIndex, id: FactId) -> Level {
        if index.is_restatement(id) { Level::Statement } else { Level::Fact }
    }
}

/// The changes that reproduce `events` when appended to a namespace whose writer is
/// where the events' writer was: ids are referred to, never chosen.
pub(crate) fn changes_of(index: &NamespaceIndex, events: &[Event]) -> Vec<Change> {
    let mut declared = HashSet::new();
    events
        .iter()
        .filter_map(|event| match event {
            Event::EpisodeRecorded(e) => Some(Change::RecordEpisode(crate::change::NewEpisode {
                text: e.text.clone(),
                occurred_at: e.occurred_at,
                thread: e.thread.clone(),
                source: e.source.clone(),
                role: e.role.clone(),
                external_id: e.external_id.clone(),
                importance: e.importance,
            })),
            Event::EntityDeclared(e) => {
                let exists = index.entity(e.id).is_some() || !declared.insert(e.id);
                Some(Change::DeclareEntity(crate::change::NewEntity {
                    id: exists.then_some(e.id),
                    name: e.name.clone(),
                    aliases: e.aliases.clone(),
                    kind: e.kind.clone(),
                    properties: e.properties.clone(),
                }))
            }
            Event::FactAsserted(f) => Some(Change::AssertFact(crate::change::NewFact {
                subject: EntityRef::Id(f.subject),
                predicate: f.predicate.clone(),
                object: match &f.object {
                    Value::Entity(e) => ObjectRef::Entity(EntityRef::Id(*e)),
                    Value::Literal(l) => ObjectRef::Literal(l.clone()),
                },
                valid: f.valid,
                confidence: Some(f.confidence),
                polarity: f.polarity,
                provenance: f.provenance.iter().map(|e| EpisodeRef::Id(*e)).collect(),
                supersedes: f.supersedes,
                importance: f.importance,
                correction: f.correction,
            })),
            // A restatement ended on its own was withdrawn (ending a statement is refused now).
            Event::FactEnded { fact, valid_to } if index.is_restatement(*fact) => {
                Some(Change::WithdrawStatement {
                    statement: *fact,
                    reason: Some(format!("ended at {valid_to}")),
                })
            }
            Event::FactEnded { fact, valid_to } => Some(Change::EndFact { fact: *fact, valid_to: *valid_to }),
            Event::FactRetracted { fact, reason } => {
                Some(Change::RetractFact { fact: *fact, reason: reason.clone() })
            }
            Event::StatementWithdrawn { statement, reason } => {
                Some(Change::WithdrawStatement { statement: *statement, reason: reason.clone() })
            }
            Event::PredicateDefined(def) => Some(Change::DefinePredicate(def.clone())),
            Event::NamespaceConfigured(config) => {
                Some(Change::ConfigureNamespace(NamespacePatch::all(config.clone())))
            }
            Event::Reinforced { records, at } => Some(Change::Recall { records: records.clone(), at: *at }),
            Event::EntitiesMerged { from, into } => Some(Change::MergeEntities { from: *from, into: *into }),
            Event::EmbeddingConfigured(mode) => Some(Change::ConfigureEmbedding(*mode)),
            Event::EmbeddingPolicySet(policy) => {
                Some(Change::ConfigureEmbeddingPolicy(EmbeddingPolicyPatch::all(*policy)))
            }
            Event::PredicateEmbedding { predicate, embed } => {
                Some(Change::EmbedPredicate { predicate: predicate.clone(), embed: *embed })
            }
            Event::Embedded { record: RecordRef::Episode(id), vector } => {
                Some(Change::Embed { episode: EpisodeRef::Id(*id), vector: vector.clone() })
            }
            Event::Embedded { record: RecordRef::Fact(_) | RecordRef::Entity(_), .. } => None,
            Event::SegmentationConfigured(config) => {
                Some(Change::ConfigureSegmentation(SegmentationPatch::all(*config)))
            }
            Event::IntentionAdded(i) => Some(Change::AddIntention(crate::change::NewIntention {
                payload: i.payload.clone(),
                trigger: match &i.trigger {
                    Trigger::At(t) => NewTrigger::At(*t),
                    Trigger::Mentions(es) => {
                        NewTrigger::Mentions(es.iter().map(|e| EntityRef::Id(*e)).collect())
                    }
                    Trigger::Cue { text, vector, threshold } => {
                        NewTrigger::Cue { text: text.clone(), vector: vector.clone(), threshold: *threshold }
                    }
                },
                expires_at: i.expires_at,
                priority: i.priority,
                repeat: i.repeat,
            })),
            Event::IntentionCancelled { id, reason } => {
                Some(Change::CancelIntention { id: *id, reason: reason.clone() })
            }
            Event::IntentionFired { id, episode, at } => {
                Some(Change::FireIntention { id: *id, episode: *episode, at: *at })
            }
            Event::SegmentClosed { thread, episodes, end, centroid } => Some(Change::CloseSegment {
                thread: thread.clone(),
                episodes: episodes.clone(),
                end: *end,
                centroid: centroid.clone(),
            }),
            Event::Mentioned { episode, entities, source } => Some(Change::Mention {
                episode: EpisodeRef::Id(*episode),
                entities: entities.iter().map(|e| EntityRef::Id(*e)).collect(),
                source: *source,
            }),
        })
        .collect()
}
