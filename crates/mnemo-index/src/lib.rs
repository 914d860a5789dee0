//! Mnemo's derived indexes: the state of a namespace folded from its events, and the
//! reads that resolve it at a pinned (validAt, knownAt). Every structure here is a
//! cache of the log: it knows no storage and can always be rebuilt by replay.
#![deny(missing_docs)]

mod merge;
mod progress;

pub use progress::IntentionView;
mod read;
mod state;
mod trace;

pub use read::{
    EntityFilter, EntityView, EpisodeCursor, EpisodeFilter, FactFilter, FactView, Neighborhood, Page,
    RetractionView, Scope, SnapshotCursor, SnapshotPage, View,
};
pub use state::{Counts, IdHighWater, NamespaceIndex, Retraction, Segment};
pub use trace::{Fading, Recallable};
