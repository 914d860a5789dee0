//! Ostrakon's engine: the [`Store`] facade over one durable log and one derived index per
//! namespace. Writes are validated and given ids, appended durably (group commit), then
//! applied in log order; reads are pinned at a (validAt, knownAt) and say their basis.
#![deny(missing_docs)]

pub mod admin;
pub mod change;
mod context;
mod erase;
mod error;
mod interrupt;
pub mod limits;
mod maintain;
mod options;
mod read;
mod retrieve;
mod shard;
mod store;
mod sync;
mod write;

pub use ostrakon_core as core;

// The entry points: a store, a reader pinned at a point, and what a write and a read take
// and give. The rest is grouped by concept in the modules below.
pub use change::{Change, EntityRef, NewEntity, NewEpisode, NewFact, ObjectRef, Receipt, RecordId};
pub use context::block::ContextBlock;
pub use erase::records::{EraseRequest, EraseTarget, Erased};
pub use error::open::OpenError;
pub use error::read::ReadError;
pub use error::storage::StorageError;
pub use error::write::WriteError;
pub use interrupt::Interrupt;
pub use options::StoreOptions;
pub use read::point::{Answer, Basis, KnownAt, ReadAt};
pub use read::reader::Reader;
pub use retrieve::query::{SearchQuery, SearchResult};
pub use store::Store;

/// What reads answer: views of records at a read point, pages and filters, analytics,
/// topics, tiers and intentions. Answers are plain data: nothing of the index crosses
/// this API.
pub mod views {
    pub use crate::context::lines::estimate_tokens;
    pub use crate::context::tiers::TierUse;
    pub use crate::maintain::intentions::{Due, DueBecause, Firings};
    pub use crate::maintain::tiers::TierUpkeep;
    pub use crate::read::analytics::{Changes, ChangesQuery, Overlaps, Series, SeriesQuery};
    pub use crate::read::outdated::Outdated;
    pub use crate::read::topics::{Association, SIMILARITY_MIN, Topic, TopicNetwork};
    pub use ostrakon_core::{
        Counts, EntityFilter, EntityView, EpisodeCursor, EpisodeFilter, FactFilter, FactView, Fading,
        IntentionView, Neighborhood, Page, Recallable, Retraction, RetractionView, Scope, SnapshotCursor,
        SnapshotPage, StatementView, View,
    };
    pub use ostrakon_index::{ErasedMark, ErasureRecord, Placement, Proposal};
}

/// Search: how a hit was ranked, the defaults of its boosts, the embedders and the
/// state of a namespace's indexes.
pub mod search {
    pub use crate::options::EmbedderSource;
    pub use crate::retrieve::index::Indexing;
    pub use crate::retrieve::query::{
        Component, ComponentRank, DEFAULT_DIVERSITY_LAMBDA, DEFAULT_RETENTION_FLOOR, DEFAULT_SPEAKER_BOOST,
        DEFAULT_TIME_BOOST, Explanation, SearchHit, TopicScore,
    };
    pub use ostrakon_search::{EmbedError, Embedder, HnswConfig};
}

/// Where the logs live and what a commit tells its listeners: the log seam the store is
/// opened on (a file log, memory, or a shared log such as JetStream).
pub mod log {
    pub use crate::read::point::{Clock, system_clock};
    pub use crate::shard::{CommitListener, CommittedBatch};
    pub use crate::write::append::Submitted;
    pub use ostrakon_log::{
        LogBackend, LogError, LogFile, MemStorage, RecordLog, SharedBackend, Storage, StorageBackend,
        Truncation,
    };
}
