//! Document keys: a record (episode, fact, entity) and an episode read with its
//! neighbours, packed into the `u64` the text and vector indexes key documents by.

use ostrakon_core::{EntityId, EpisodeId, FactId, RecordKind, RecordRef};

pub(crate) const KIND_EPISODE: u64 = 0;
pub(crate) const KIND_FACT: u64 = 1;
const KIND_ENTITY: u64 = 2;
/// In the context indexes only: an episode together with the ones before and after it
/// (its documents there are keyed as episodes otherwise, with the one before it).
pub(crate) const KIND_WITH_NEXT: u64 = 3;

/// A context index's key as the episode's own key.
pub(crate) fn episode_key(context_key: u64) -> u64 {
    if context_key & 3 == KIND_WITH_NEXT { context_key & !3 | KIND_EPISODE } else { context_key }
}

/// A context list as a list of episodes, each at its best rank.
pub(crate) fn as_episodes(
    hits: Result<Vec<(u64, f32)>, ostrakon_search::SearchError>,
) -> Result<Vec<(u64, f32)>, ostrakon_search::SearchError> {
    hits.map(|hits| hits.into_iter().map(|(k, s)| (episode_key(k), s)).collect())
}

pub(crate) fn key(record: RecordRef) -> u64 {
    match record {
        RecordRef::Episode(id) => id.0 << 2 | KIND_EPISODE,
        RecordRef::Fact(id) => id.0 << 2 | KIND_FACT,
        RecordRef::Entity(id) => id.0 << 2 | KIND_ENTITY,
    }
}

pub(crate) fn record(key: u64) -> RecordRef {
    match key & 3 {
        KIND_EPISODE => RecordRef::Episode(EpisodeId(key >> 2)),
        KIND_FACT => RecordRef::Fact(FactId(key >> 2)),
        _ => RecordRef::Entity(EntityId(key >> 2)),
    }
}

pub(crate) fn kind_code(kind: RecordKind) -> u64 {
    match kind {
        RecordKind::Episode => KIND_EPISODE,
        RecordKind::Fact => KIND_FACT,
        RecordKind::Entity => KIND_ENTITY,
    }
}
