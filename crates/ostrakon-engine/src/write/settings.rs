//! Validation of the changes that configure and maintain a namespace (settings,
//! embeddings, recalls, mentions, intentions, segments): one method of `Batch` per kind.

use ostrakon_core::{
    CoreError, EmbeddingMode, EntityId, EpisodeId, Event, IntentionId, MentionSource, RecordRef, Trigger,
    validate_name,
};

use crate::change::{
    EmbeddingPolicyPatch, EntityRef, EpisodeRef, NamespacePatch, NewTrigger, RecordId, SegmentationPatch,
};
use crate::error::write::WriteError;
use crate::limits::MAX_CONSOLIDATE_EVERY_SECONDS;
use crate::limits::MAX_DIM;
use crate::limits::MAX_MENTIONS;
use crate::limits::MAX_REASON_BYTES;
use crate::limits::MAX_TEXT_BYTES;
use crate::write::validate::Batch;
use crate::write::validate::Field;
use crate::write::validate::check_vector;
use crate::write::validate::take;

/// The changes that configure a namespace, embed, recall, mention, schedule intentions
/// and close segments: one method per change kind, as for records.
impl Batch<'_> {
    pub(crate) fn configure_namespace(
        &mut self,
        patch: NamespacePatch,
    ) -> Result<Option<RecordId>, WriteError> {
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

    pub(crate) fn merge_entities(
        &mut self,
        from: EntityId,
        into: EntityId,
    ) -> Result<Option<RecordId>, WriteError> {
        let field = Field;
        for (name, id) in [("from", from), ("into", into)] {
            if self.index.entity(id).is_none() {
                return Err(WriteError::UnknownEntity {
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

    pub(crate) fn configure_embedding(
        &mut self,
        mode: EmbeddingMode,
    ) -> Result<Option<RecordId>, WriteError> {
        let field = Field;
        if mode == (EmbeddingMode::Client { dim: 0 })
            || matches!(mode, EmbeddingMode::Client { dim } if dim > MAX_DIM)
        {
            return Err(CoreError::invalid_value(
                field("embedding.dimensions"),
                match mode {
                    EmbeddingMode::Client { dim } => dim.to_string(),
                    _ => String::new(),
                },
                format!("must be in [1, {MAX_DIM}]"),
            )
            .into());
        }
        self.effects.embedding = Some(mode);
        self.events.push(Event::EmbeddingConfigured(mode));
        Ok(None)
    }

    pub(crate) fn configure_embedding_policy(
        &mut self,
        patch: EmbeddingPolicyPatch,
    ) -> Result<Option<RecordId>, WriteError> {
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

    pub(crate) fn configure_retention(
        &mut self,
        policy: ostrakon_core::RetentionPolicy,
    ) -> Result<Option<RecordId>, WriteError> {
        if let Some(after) = policy.episodes_after_micros
            && !(1..=crate::limits::MAX_RETENTION_MICROS).contains(&after)
        {
            return Err(CoreError::invalid_value(
                Field("retention.episodesAfter"),
                format!("{after} µs"),
                "must be positive and at most 1,000 years",
            )
            .into());
        }
        self.events.push(Event::RetentionConfigured(policy));
        Ok(None)
    }

    pub(crate) fn embed_predicate(
        &mut self,
        predicate: String,
        embed: bool,
    ) -> Result<Option<RecordId>, WriteError> {
        validate_name(Field("predicate"), &predicate)?;
        self.events.push(Event::PredicateEmbedding { predicate, embed });
        Ok(None)
    }

    pub(crate) fn embed(
        &mut self,
        episode: EpisodeRef,
        vector: Vec<f32>,
    ) -> Result<Option<RecordId>, WriteError> {
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

    pub(crate) fn recall(
        &mut self,
        records: Vec<RecordRef>,
        at: ostrakon_core::Timestamp,
    ) -> Result<Option<RecordId>, WriteError> {
        let field = Field;
        at.validate(field("at"))?;
        for (i, record) in records.iter().enumerate() {
            self.check_record(*record, format!("records[{i}]"))?;
        }
        self.events.push(Event::Reinforced { records, at });
        Ok(None)
    }

    pub(crate) fn mention(
        &mut self,
        episode: EpisodeRef,
        entities: Vec<EntityRef>,
        source: MentionSource,
    ) -> Result<Option<RecordId>, WriteError> {
        let field = Field;
        let episode = self.episode(&episode, format_args!("episode"))?;
        if entities.is_empty() {
            return Err(CoreError::invalid_value(field("entities"), "[]", "name at least one entity").into());
        }
        if entities.len() > MAX_MENTIONS {
            return Err(WriteError::LimitExceeded {
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

    pub(crate) fn mark_extracted(
        &mut self,
        episode: EpisodeRef,
        source: String,
    ) -> Result<Option<RecordId>, WriteError> {
        let field = Field;
        let episode = self.episode(&episode, format_args!("episode"))?;
        validate_name(field("source"), &source)?;
        if self.index.extracted_by(episode, ostrakon_core::Seq(u64::MAX)).contains(&source.as_str())
            || self.writer.extracted(episode, &source)
            || !self.effects.extractions.insert((episode, source.clone()))
        {
            return Err(WriteError::AlreadyExtracted {
                field: field("episode").to_string(),
                value: episode.to_string(),
                source_name: source,
            });
        }
        self.events.push(Event::Extracted { episode, source });
        Ok(None)
    }

    pub(crate) fn add_intention(
        &mut self,
        new: crate::change::NewIntention,
    ) -> Result<Option<RecordId>, WriteError> {
        let field = Field;
        if new.payload.trim().is_empty() {
            return Err(CoreError::invalid_value(field("payload"), "\"\"", "say what to do").into());
        }
        if new.payload.len() > MAX_TEXT_BYTES {
            return Err(WriteError::LimitExceeded {
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
                    return Err(WriteError::LimitExceeded {
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
        self.events.push(Event::IntentionAdded(ostrakon_core::Intention {
            id,
            payload: new.payload,
            trigger,
            expires_at: new.expires_at,
            priority: new.priority,
            repeat: new.repeat,
        }));
        Ok(Some(RecordId::Intention(id)))
    }

    pub(crate) fn cancel_intention(
        &mut self,
        id: IntentionId,
        reason: Option<String>,
    ) -> Result<Option<RecordId>, WriteError> {
        let field = Field;
        if let Some(r) = &reason {
            CoreError::check_len(field("reason"), r.len(), MAX_REASON_BYTES, "bytes")?;
        }
        let known = self.index.intention(id, ostrakon_core::Seq(u64::MAX));
        let added_here = self.ids.contains(&Some(RecordId::Intention(id)));
        if known.is_none() && !added_here {
            return Err(WriteError::UnknownIntention {
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

    pub(crate) fn fire_intention(
        &mut self,
        id: IntentionId,
        episode: Option<EpisodeId>,
        at: ostrakon_core::Timestamp,
    ) -> Result<Option<RecordId>, WriteError> {
        let field = Field;
        let known = self.index.intention(id, ostrakon_core::Seq(u64::MAX)).is_some()
            || self.ids.contains(&Some(RecordId::Intention(id)));
        if !known {
            return Err(WriteError::UnknownIntention {
                field: field("id").to_string(),
                value: id.to_string(),
            });
        }
        if let Some(e) = episode {
            self.episode(&EpisodeRef::Id(e), format_args!("episode"))?;
        }
        at.validate(field("at"))?;
        // A one-off intention fires once, whoever records it first.
        let view = self.index.intention(id, ostrakon_core::Seq(u64::MAX));
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

    pub(crate) fn configure_segmentation(
        &mut self,
        patch: SegmentationPatch,
    ) -> Result<Option<RecordId>, WriteError> {
        let field = Field;
        let current = self
            .effects
            .segmentation
            .or_else(|| self.writer.segmentation())
            .unwrap_or_else(|| self.index.segment_config(ostrakon_core::Seq(u64::MAX)));
        let config = patch.apply(current);
        config.validate(field("segmentation"))?;
        self.effects.segmentation = Some(config);
        self.events.push(Event::SegmentationConfigured(config));
        Ok(None)
    }

    pub(crate) fn close_segment(
        &mut self,
        thread: String,
        episodes: Vec<EpisodeId>,
        end: ostrakon_core::SegmentEnd,
        centroid: Option<Vec<f32>>,
    ) -> Result<Option<RecordId>, WriteError> {
        let field = Field;
        validate_name(field("thread"), &thread)?;
        if episodes.is_empty() {
            return Err(CoreError::invalid_value(field("episodes"), "[]", "a segment has episodes").into());
        }
        for (i, id) in episodes.iter().enumerate() {
            let in_thread =
                self.index.episode(*id).is_some_and(|e| e.thread.as_deref() == Some(thread.as_str()));
            let taken = self.index.segment_of(*id, ostrakon_core::Seq(u64::MAX)).is_some()
                || episodes[..i].contains(id)
                || self
                    .events
                    .iter()
                    .any(|e| matches!(e, Event::SegmentClosed { episodes, .. } if episodes.contains(id)));
            if !in_thread || taken {
                return Err(WriteError::UnknownEpisode {
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
