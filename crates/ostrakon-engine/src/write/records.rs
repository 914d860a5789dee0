//! Validation of the changes that write records (episodes, entities, facts and their
//! ends and retractions, predicates, merges): one method of `Batch` per change kind.

use ostrakon_core::{
    CoreError, Entity, EntityId, EpisodeId, Event, Fact, FactId, RecordRef, Value, normalize_name,
    validate_name,
};

use crate::change::{NoteEntity, ObjectRef, RecordId};
use crate::error::write::WriteError;
use crate::limits::MAX_ALIASES;
use crate::limits::MAX_PROPERTIES;
use crate::limits::MAX_REASON_BYTES;
use crate::limits::MAX_TEXT_BYTES;
use crate::write::validate::Batch;
use crate::write::validate::Field;
use crate::write::validate::Level;
use crate::write::validate::take;

/// One method per change kind: each checks its change against the index, the batches
/// in flight and the batch so far, and pushes its events.
impl Batch<'_> {
    pub(crate) fn record_episode(
        &mut self,
        e: crate::change::NewEpisode,
    ) -> Result<Option<RecordId>, WriteError> {
        let field = Field;
        if e.text.len() > MAX_TEXT_BYTES {
            return Err(WriteError::LimitExceeded {
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
                return Err(WriteError::DuplicateExternalId {
                    field: field("externalId").to_string(),
                    value: ext.clone(),
                });
            }
        }
        let id = EpisodeId(take(&mut self.next_episode));
        self.events.push(Event::EpisodeRecorded(ostrakon_core::Episode {
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

    pub(crate) fn declare_entity(
        &mut self,
        e: crate::change::NewEntity,
    ) -> Result<Option<RecordId>, WriteError> {
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
                return Err(WriteError::UnknownEntity {
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

    pub(crate) fn note_entity(&mut self, e: NoteEntity) -> Result<Option<RecordId>, WriteError> {
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
    pub(crate) fn find_named(&self, name: &str) -> Option<EntityId> {
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
    pub(crate) fn declared(&mut self, entity: Entity) {
        // New when this batch numbered it and has not declared it yet: the applier then
        // holds it to an id nobody had.
        let new = entity.id.0 >= self.writer.next_entity && !self.effects.entities.contains_key(&entity.id);
        for name in std::iter::once(&entity.name).chain(&entity.aliases) {
            self.effects.names.entry(normalize_name(name)).or_insert(entity.id);
        }
        self.effects.entities.insert(entity.id, entity.clone());
        self.events.push(if new { Event::EntityCreated(entity) } else { Event::EntityDeclared(entity) });
    }

    /// The latest version of entity `id`: as this batch, then the batches in flight, then
    /// the index have it.
    pub(crate) fn current_entity(&self, id: EntityId) -> Option<&Entity> {
        self.effects.entities.get(&id).or_else(|| self.writer.entity(id)).or_else(|| self.index.entity(id))
    }

    pub(crate) fn assert_fact(&mut self, f: crate::change::NewFact) -> Result<Option<RecordId>, WriteError> {
        let field = Field;
        let subject = self.entity(&f.subject, field("subject"))?;
        let object = match f.object {
            ObjectRef::Entity(r) => Value::Entity(self.entity(&r, field("object"))?),
            ObjectRef::Literal(l) => Value::Literal(l.normalized()),
        };
        let expected = self.predicate_type(&f.predicate);
        if !expected.accepts(object.value_type()) {
            return Err(WriteError::WrongValueType {
                field: field("object").to_string(),
                predicate: f.predicate,
                expected: expected.to_string(),
                actual: object.value_type().to_string(),
            });
        }
        let mut provenance = Vec::with_capacity(f.provenance.len());
        for (i, r) in f.provenance.iter().enumerate() {
            provenance.push(self.episode(r, format_args!("provenance[{i}]"))?);
        }
        if let Some(old) = f.supersedes
            && !self.erased(ostrakon_core::ErasedRef::Fact(old))
        {
            // A correction withdraws the one statement it names, of the same slot.
            let named = self.live_fact(old, field("supersedes"), Level::Statement)?;
            let latest = self.index.last_seq();
            let same_subject = self.index.canonical_entity(named.subject, latest)
                == self.index.canonical_entity(subject, latest);
            // A replayed export is history already accepted (older versions allowed it).
            if !self.replay && (!same_subject || named.predicate != f.predicate) {
                return Err(WriteError::SupersedesOtherSlot {
                    field: field("supersedes").to_string(),
                    value: old.to_string(),
                    expected: format!("entity {} {}", subject.0, f.predicate),
                    found: format!("entity {} {}", named.subject.0, named.predicate),
                });
            }
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
        // A correction of a core fact is core too (a replay has the placement already).
        if let Some(old) = f.supersedes
            && !self.replay
        {
            let corrected = RecordRef::Fact(self.index.canonical(old));
            if self.index.is_placed(&ostrakon_core::Tier::Core, corrected, ostrakon_core::Seq(u64::MAX)) {
                let reason = Some(format!("corrects fact {old}, which is core"));
                self.place(
                    RecordRef::Fact(id),
                    ostrakon_core::Tier::Core,
                    reason,
                    ostrakon_core::PlacedBy::Store,
                )?;
            }
        }
        Ok(Some(RecordId::Fact(id)))
    }

    pub(crate) fn end_fact(
        &mut self,
        fact: FactId,
        valid_to: ostrakon_core::Timestamp,
    ) -> Result<Option<RecordId>, WriteError> {
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
            return Err(WriteError::NotAFact { field: field("fact").to_string(), value: fact.to_string() });
        }
        self.events.push(Event::FactEnded { fact, valid_to });
        Ok(None)
    }

    pub(crate) fn withdraw_statement(
        &mut self,
        statement: FactId,
        reason: Option<String>,
    ) -> Result<Option<RecordId>, WriteError> {
        let field = Field;
        if let Some(r) = &reason {
            CoreError::check_len(field("reason"), r.len(), MAX_REASON_BYTES, "bytes")?;
        }
        self.live_fact(statement, field("statement"), Level::Statement)?;
        self.effects.withdrawn.insert(statement);
        self.events.push(Event::StatementWithdrawn { statement, reason });
        Ok(None)
    }

    pub(crate) fn retract_fact(
        &mut self,
        fact: FactId,
        reason: Option<String>,
    ) -> Result<Option<RecordId>, WriteError> {
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

    pub(crate) fn define_predicate(
        &mut self,
        def: ostrakon_core::PredicateDef,
    ) -> Result<Option<RecordId>, WriteError> {
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
}
