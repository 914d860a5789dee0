//! The records the output types are made of, loaded at a read's point: an entity, an
//! episode and what an episode stated that no longer holds, as known then. Their fields are resolved in `objects` (and a topic's members
//! are made of them in `topics`): the types that answer each other's fields share these
//! data without importing each other.

use std::sync::Arc;

use ostrakon_core::{Entity, EntityId, Episode, EpisodeId};
use ostrakon_engine::Store;
use ostrakon_engine::views::Outdated;

use crate::exec::context::Pin;

/// Something talked about, as known at the read's knownAt.
pub(crate) struct EntityObject {
    pub(crate) pin: Arc<Pin>,
    pub(crate) entity: Entity,
}

impl EntityObject {
    /// The entity `id` as known at the pin, if it was known then.
    pub(crate) fn load(store: &Store, pin: &Arc<Pin>, id: EntityId) -> async_graphql::Result<Option<Self>> {
        let entity = pin.reader(store).entity_version(id).map_err(crate::error::engine_error)?;
        Ok(entity.map(|entity| EntityObject { pin: Arc::clone(pin), entity }))
    }
}

/// Something said or observed, as known at the read's knownAt, with the batch that
/// recorded it.
pub(crate) struct EpisodeObject {
    pub(crate) pin: Arc<Pin>,
    pub(crate) episode: Episode,
    pub(crate) recorded_seq: u64,
}

impl EpisodeObject {
    pub(crate) fn load(store: &Store, pin: &Arc<Pin>, id: EpisodeId) -> async_graphql::Result<Option<Self>> {
        let found = pin.reader(store).episode_at(id).map_err(crate::error::engine_error)?;
        Ok(found.map(|(episode, recorded)| EpisodeObject {
            pin: Arc::clone(pin),
            episode,
            recorded_seq: recorded.0,
        }))
    }
}

/// A statement of an episode that does not hold at the read's point (its fields are
/// resolved in `outdated`).
pub(crate) struct OutdatedMark {
    pub(crate) pin: Arc<Pin>,
    pub(crate) mark: Outdated,
}
