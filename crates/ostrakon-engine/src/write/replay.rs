//! The changes that reproduce a batch's events, for replaying an export: ids are
//! referred to, never chosen.

use std::collections::HashSet;

use ostrakon_core::{Event, RecordRef, Trigger, Value};
use ostrakon_index::NamespaceIndex;

use crate::change::{
    Change, EmbeddingPolicyPatch, EntityRef, EpisodeRef, NamespacePatch, NewTrigger, ObjectRef,
    SegmentationPatch,
};

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
            Event::EntityDeclared(e) | Event::EntityCreated(e) => {
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
            // An erasure and its tombstones come back as they were: ids and hashes only.
            Event::Erased(_) | Event::Tombstone { .. } => Some(Change::Restore(event.clone())),
            Event::RetentionConfigured(policy) => Some(Change::ConfigureRetention(*policy)),
            Event::Placed { record, tier, reason, by } => {
                Some(Change::Place { record: *record, tier: tier.clone(), reason: reason.clone(), by: *by })
            }
            Event::Released { record, tier, reason, by } => {
                Some(Change::Release { record: *record, tier: tier.clone(), reason: reason.clone(), by: *by })
            }
            Event::PlacementProposed { record, tier, release, reason } => Some(Change::ProposePlacement {
                record: *record,
                tier: tier.clone(),
                release: *release,
                reason: reason.clone(),
            }),
            Event::TiersConfigured(settings) => {
                Some(Change::ConfigureTiers(crate::change::TierSettingsPatch {
                    policy: Some(settings.policy),
                    core_share: Some(settings.core_share),
                    active_share: Some(settings.active_share),
                    core_max_items: Some(settings.core_max_items),
                    core_max_tokens: Some(settings.core_max_tokens),
                    scope_max_items: Some(settings.scope_max_items),
                    scope_max_tokens: Some(settings.scope_max_tokens),
                    promote_after_threads: Some(settings.promote_after_threads),
                    release_idle_after_micros: Some(settings.release_idle_after_micros),
                }))
            }
            Event::Extracted { episode, source } => {
                Some(Change::MarkExtracted { episode: EpisodeRef::Id(*episode), source: source.clone() })
            }
            Event::Mentioned { episode, entities, source } => Some(Change::Mention {
                episode: EpisodeRef::Id(*episode),
                entities: entities.iter().map(|e| EntityRef::Id(*e)).collect(),
                source: *source,
            }),
        })
        .collect()
}
