//! The write path's checks: a batch is validated against the namespace's index, the
//! batches already queued in the log but not yet applied (in flight), and the batch so
//! far; then its records get ids and become events.
//!
//! Validation runs under the namespace's writer lock, and a batch's effects stay in
//! flight from its submission to the log until it is applied, so two concurrent batches
//! can never both pass a check that only one of them may pass (the same external id,
//! retracting the same fact twice).

use ostrakon_core::{
    CoreError, Entity, EntityId, EpisodeId, Event, Fact, FactId, MentionSource, RecordRef, Trigger,
    ValueType, find_names, validate_name,
};
use ostrakon_index::NamespaceIndex;

use crate::change::{Change, EntityRef, EpisodeRef, RecordId};
use crate::error::write::WriteError;
use crate::write::writer::Effects;
use crate::write::writer::Writer;
use crate::write::writer::declared_names;
use crate::write::writer::mentioned_in;

/// A prepared batch: its events, the id each change produced, and its effects.
pub(crate) struct Prepared {
    pub(crate) events: Vec<Event>,
    pub(crate) ids: Vec<Option<RecordId>>,
    /// Entities created because a change named one that did not exist.
    pub(crate) created: Vec<EntityId>,
    pub(crate) effects: Effects,
}

/// An input field of the change being checked (relative to it: the batch wraps each
/// change's error with its position, [`WriteError::InChange`]).
#[derive(Clone, Copy)]
pub(crate) struct Field<'a>(pub(crate) &'a str);

impl std::fmt::Display for Field<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// A vector of `dim` finite numbers, not all zero.
pub(crate) fn check_vector(field: impl std::fmt::Display, v: &[f32], dim: usize) -> Result<(), CoreError> {
    let why = if v.len() != dim {
        format!("must have {dim} dimensions, has {}", v.len())
    } else if v.iter().any(|x| !x.is_finite()) {
        "must be finite".to_owned()
    } else if v.iter().all(|x| *x == 0.0) {
        "must not be all zeros".to_owned()
    } else {
        return Ok(());
    };
    Err(CoreError::invalid_value(field, format!("{} numbers", v.len()), why))
}

pub(crate) fn prepare(
    writer: &mut Writer,
    index: &NamespaceIndex,
    changes: Vec<Change>,
    match_names: bool,
) -> Result<Prepared, WriteError> {
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
        replay: !match_names,
        restored: Vec::new(),
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
            Change::ConfigureRetention(policy) => batch.configure_retention(policy),
            Change::NoteEntity(e) => batch.note_entity(e),
            Change::CloseSegment { thread, episodes, end, centroid } => {
                batch.close_segment(thread, episodes, end, centroid)
            }
            Change::Restore(event) => batch.restore(event),
            Change::MarkExtracted { episode, source } => batch.mark_extracted(episode, source),
            Change::Place { record, tier, reason, by } => batch.place(record, tier, reason, by),
            Change::Release { record, tier, reason, by } => batch.release(record, tier, reason, by),
            Change::ProposePlacement { record, tier, release, reason } => {
                batch.propose_placement(record, tier, release, reason)
            }
            Change::ConfigureTiers(patch) => batch.configure_tiers(&patch),
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
pub(crate) struct Batch<'a> {
    pub(crate) writer: &'a mut Writer,
    pub(crate) index: &'a NamespaceIndex,
    pub(crate) ids: Vec<Option<RecordId>>,
    pub(crate) events: Vec<Event>,
    pub(crate) created: Vec<EntityId>,
    pub(crate) effects: Effects,
    pub(crate) next_entity: u64,
    pub(crate) next_fact: u64,
    pub(crate) next_episode: u64,
    pub(crate) next_intention: u64,
    /// A replayed export: its batches may hold an erasure's record and tombstones, and
    /// refer to the records they erased.
    pub(crate) replay: bool,
    /// The records this batch restored as tombstones so far.
    pub(crate) restored: Vec<ostrakon_core::ErasedRef>,
}

pub(crate) fn take(counter: &mut u64) -> u64 {
    let id = *counter;
    *counter += 1;
    id
}

impl<'a> Batch<'a> {
    /// Fires, at each episode of the batch in order, the pending intentions it triggers:
    /// it mentions one of their entities, or occurs at or after their time.
    pub(crate) fn fire_intentions(&mut self) {
        if !self.events.iter().any(|e| matches!(e, Event::EpisodeRecorded(_))) {
            return;
        }
        let latest = ostrakon_core::Seq(u64::MAX);
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
    pub(crate) fn match_names(&mut self) {
        if !self.events.iter().any(|e| matches!(e, Event::EpisodeRecorded(_))) {
            return;
        }
        let declared: Vec<&Entity> = self.events.iter().filter_map(Event::declared_entity).collect();
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
    pub(crate) fn entity(&mut self, r: &EntityRef, field: Field<'_>) -> Result<EntityId, WriteError> {
        let unknown = |value: String| WriteError::UnknownEntity { field: field.to_string(), value };
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

    pub(crate) fn episode(
        &self,
        r: &EpisodeRef,
        field: std::fmt::Arguments<'_>,
    ) -> Result<EpisodeId, WriteError> {
        let unknown = |value: String| WriteError::UnknownEpisode { field: field.to_string(), value };
        match r {
            EpisodeRef::Id(id)
                if self.index.episode(*id).is_some()
                    || self.ids.contains(&Some(RecordId::Episode(*id)))
                    || self.erased(ostrakon_core::ErasedRef::Episode(*id)) =>
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

    /// Whether a replayed export may name `record`: an erasure removed it (the
    /// provenance of a fact stated from an erased episode, a correction of an erased fact).
    pub(crate) fn erased(&self, record: ostrakon_core::ErasedRef) -> bool {
        self.replay && (self.restored.contains(&record) || self.index.is_erased(record))
    }

    /// An erasure's record or a tombstone, as an export holds them: only in a replayed
    /// export. A tombstone of a record takes the id it had, as its record did.
    pub(crate) fn restore(&mut self, event: ostrakon_core::Event) -> Result<Option<RecordId>, WriteError> {
        use ostrakon_core::{ErasedRef, Event, TombstoneOf};
        if !self.replay {
            return Err(CoreError::invalid_value(
                Field("changes"),
                "a tombstone",
                "only a replayed export restores an erasure or its tombstones",
            )
            .into());
        }
        match &event {
            Event::Tombstone { of: TombstoneOf::Record(record), .. } => {
                let bump = |next: &mut u64, id: u64| *next = (*next).max(id + 1);
                match *record {
                    ErasedRef::Entity(id) => bump(&mut self.next_entity, id.0),
                    ErasedRef::Fact(id) => bump(&mut self.next_fact, id.0),
                    ErasedRef::Episode(id) => bump(&mut self.next_episode, id.0),
                    ErasedRef::Intention(id) => bump(&mut self.next_intention, id.0),
                }
                self.restored.push(*record);
            }
            Event::Tombstone { of: TombstoneOf::Reference, .. } | Event::Erased(_) => {}
            _ => {
                return Err(CoreError::invalid_value(
                    Field("changes"),
                    "an event",
                    "not a tombstone or an erasure",
                )
                .into());
            }
        }
        self.events.push(event);
        Ok(None)
    }

    /// Whether this batch declared (or created by name) entity `id` so far.
    pub(crate) fn declares_entity(&self, id: EntityId) -> bool {
        self.ids.contains(&Some(RecordId::Entity(id))) || self.created.contains(&id)
    }

    /// The type a predicate accepts: as this batch, then the batches in flight, then the
    /// index define it.
    pub(crate) fn predicate_type(&self, name: &str) -> ValueType {
        self.effects
            .predicate_types
            .get(name)
            .copied()
            .or_else(|| self.writer.predicate_type(name))
            .unwrap_or_else(|| self.index.predicate(name).value_type)
    }

    /// A record that exists, or that this batch made (`field` names it otherwise).
    pub(crate) fn check_record(&self, record: RecordRef, field: String) -> Result<(), WriteError> {
        let known = match record {
            RecordRef::Fact(id) => self.index.fact(id).is_some() || self.asserted_here(id).is_some(),
            RecordRef::Entity(id) => self.index.entity(id).is_some() || self.declares_entity(id),
            RecordRef::Episode(id) => {
                self.index.episode(id).is_some() || self.ids.contains(&Some(RecordId::Episode(id)))
            }
        };
        if known {
            return Ok(());
        }
        Err(match record {
            RecordRef::Fact(id) => WriteError::UnknownFact { field, value: id.to_string() },
            RecordRef::Entity(id) => WriteError::UnknownEntity { field, value: id.to_string() },
            RecordRef::Episode(id) => WriteError::UnknownEpisode { field, value: id.to_string() },
        })
    }

    /// A fact this batch asserted.
    pub(crate) fn asserted_here(&self, id: FactId) -> Option<&Fact> {
        self.events.iter().find_map(|e| match e {
            Event::FactAsserted(f) if f.id == id => Some(f),
            _ => None,
        })
    }

    /// A fact that exists and still stands at `level`, in the index, in flight and
    /// earlier in this batch: as a whole (it has a live statement and was not
    /// retracted), or the one statement `id` names.
    pub(crate) fn live_fact(&self, id: FactId, field: Field<'_>, level: Level) -> Result<Fact, WriteError> {
        let index = self.index;
        let fact = index
            .fact(id)
            .ok_or_else(|| WriteError::UnknownFact { field: field.to_string(), value: id.to_string() })?;
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
            return Err(WriteError::AlreadyRetracted { field: field.to_string(), value: id.to_string() });
        }
        Ok(fact)
    }
}

/// What a retraction, an end or a correction applies to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    /// The fact with all its statements (its own id was given).
    Fact,
    /// One statement (a restatement's id, or any id named by `supersedes`).
    Statement,
}

impl Level {
    pub(crate) fn of(index: &NamespaceIndex, id: FactId) -> Level {
        if index.is_restatement(id) { Level::Statement } else { Level::Fact }
    }
}
