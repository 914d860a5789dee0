//! What a subscriber of `events` is told of each event of a committed batch: its kind,
//! the records it concerns, and the event itself as data (ids, never erased content).

use async_graphql::{ID, Json};
use ostrakon_core::Event;
use ostrakon_engine::log::CommittedBatch;

use crate::types::info;

/// A record's id as a notice's entity, fact or episode.
fn record_ids(record: ostrakon_core::RecordRef) -> (Option<ID>, Option<ID>, Option<ID>) {
    let id = |n: u64| Some(ID(n.to_string()));
    match record {
        ostrakon_core::RecordRef::Entity(e) => (id(e.0), None, None),
        ostrakon_core::RecordRef::Fact(f) => (None, id(f.0), None),
        ostrakon_core::RecordRef::Episode(e) => (None, None, id(e.0)),
    }
}

/// One notice per event of a batch.
pub(crate) fn notices(batch: &CommittedBatch) -> Vec<info::EventNotice> {
    batch
        .events
        .iter()
        .map(|event| {
            let id = |n: u64| Some(ID(n.to_string()));
            let (kind, entity, fact, episode, intention) = match event {
                Event::EpisodeRecorded(e) => ("EpisodeRecorded", None, None, id(e.id.0), None),
                // A creation is a declaration to clients: the kinds they see do not change.
                Event::EntityDeclared(e) | Event::EntityCreated(e) => {
                    ("EntityDeclared", id(e.id.0), None, None, None)
                }
                Event::FactAsserted(f) => ("FactAsserted", id(f.subject.0), id(f.id.0), None, None),
                Event::FactEnded { fact, .. } => ("FactEnded", None, id(fact.0), None, None),
                Event::FactRetracted { fact, .. } => ("FactRetracted", None, id(fact.0), None, None),
                // The statement's id is in `data`; its fact is not known here.
                Event::StatementWithdrawn { .. } => ("StatementWithdrawn", None, None, None, None),
                Event::PredicateDefined(_) => ("PredicateDefined", None, None, None, None),
                Event::NamespaceConfigured(_) => ("NamespaceConfigured", None, None, None, None),
                Event::Reinforced { .. } => ("Reinforced", None, None, None, None),
                Event::EntitiesMerged { from, .. } => ("EntitiesMerged", id(from.0), None, None, None),
                Event::EmbeddingConfigured(_) => ("EmbeddingConfigured", None, None, None, None),
                Event::EmbeddingPolicySet(_) => ("EmbeddingPolicySet", None, None, None, None),
                Event::PredicateEmbedding { .. } => ("PredicateEmbedding", None, None, None, None),
                Event::Embedded { .. } => ("Embedded", None, None, None, None),
                Event::Mentioned { episode, .. } => ("Mentioned", None, None, id(episode.0), None),
                Event::SegmentationConfigured(_) => ("SegmentationConfigured", None, None, None, None),
                Event::SegmentClosed { episodes, .. } => {
                    ("SegmentClosed", None, None, episodes.first().and_then(|e| id(e.0)), None)
                }
                Event::IntentionAdded(i) => ("IntentionAdded", None, None, None, id(i.id.0)),
                Event::IntentionCancelled { id: i, .. } => ("IntentionCancelled", None, None, None, id(i.0)),
                Event::IntentionFired { id: i, episode, .. } => {
                    ("IntentionFired", None, None, episode.and_then(|e| id(e.0)), id(i.0))
                }
                // What was erased is named in `data` (ids and hashes, never content).
                Event::Erased(_) => ("Erased", None, None, None, None),
                Event::Tombstone { .. } => ("Tombstone", None, None, None, None),
                Event::RetentionConfigured(_) => ("RetentionConfigured", None, None, None, None),
                Event::Extracted { episode, .. } => ("Extracted", None, None, id(episode.0), None),
                Event::Placed { record, .. } => {
                    let (e, f, ep) = record_ids(*record);
                    ("Placed", e, f, ep, None)
                }
                Event::Released { record, .. } => {
                    let (e, f, ep) = record_ids(*record);
                    ("Released", e, f, ep, None)
                }
                Event::PlacementProposed { record, .. } => {
                    let (e, f, ep) = record_ids(*record);
                    ("PlacementProposed", e, f, ep, None)
                }
                Event::TiersConfigured(_) => ("TiersConfigured", None, None, None, None),
            };
            info::EventNotice {
                namespace: batch.namespace.to_string(),
                seq: batch.seq.0,
                system_time: batch.system_time.into(),
                kind: kind.to_owned(),
                entity,
                fact,
                episode,
                intention,
                data: Json(serde_json::to_value(event).unwrap_or_default()),
            }
        })
        .collect()
}
