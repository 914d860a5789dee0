//! Ostrakon's derived indexes: the state of a namespace folded from its events, and the
//! reads that resolve it at a pinned (validAt, knownAt). Every structure here is a
//! cache of the log: it knows no storage and can always be rebuilt by replay.
#![deny(missing_docs)]

mod admit;
mod analytics;
pub mod checkpoint;
mod erasure;
mod extraction;
mod facts;
mod heap;
mod merge;
mod placement;
mod progress;
mod read;
mod size;
mod state;
mod tiers;
mod trace;

// What reads answer is plain data of the core's; re-exported for the index's callers.
pub use admit::ApplyError;
pub use erasure::{EraseRefused, ErasedMark, ErasureRecord};
pub use ostrakon_core::{
    Counts, EntityFilter, EntityView, EpisodeCursor, EpisodeFilter, FactFilter, FactView, Fading,
    IntentionView, Neighborhood, Page, Recallable, Retraction, RetractionView, Scope, SnapshotCursor,
    SnapshotPage, View,
};
pub use placement::{Placement, Proposal};
pub use state::{IdHighWater, NamespaceIndex, Segment};
