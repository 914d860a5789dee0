//! Ostrakon's engine: the [`Store`] facade over one durable log and one derived index per
//! namespace. Writes are validated and given ids, appended durably (group commit), then
//! applied in log order; reads are pinned at a (validAt, knownAt) and say their basis.
#![deny(missing_docs)]

mod analytics;
mod append;
mod backup;
pub mod change;
mod checkpoint;
mod codec;
mod consolidate;
mod context;
mod context_lines;
mod context_tiers;
mod drop;
mod erase;
mod error;
mod follow;
mod inspect;
mod intentions;
mod interrupt;
mod lag;
pub mod limits;
mod lookup;
mod maintain;
mod options;
mod read_point;
mod reader;
mod reads;
mod replay;
mod retrieve;
mod saved_vectors;
mod schedule;
mod segment;
mod shard;
mod store;
mod sweeps;
mod sync;
mod tiers;
mod topics;
mod write;
mod write_records;
mod write_settings;
mod write_tiers;
mod writer;

pub use ostrakon_core as core;

// The entry points: a store, a reader pinned at a point, and what a write and a read take
// and give. The rest is grouped by concept in the modules below.
pub use change::{Change, EntityRef, NewEntity, NewEpisode, NewFact, ObjectRef, Receipt, RecordId};
pub use context::ContextBlock;
pub use erase::{EraseRequest, EraseTarget, Erased};
pub use error::EngineError;
pub use interrupt::Interrupt;
pub use options::StoreOptions;
pub use read_point::{Answer, Basis, KnownAt, ReadAt};
pub use reader::Reader;
pub use retrieve::query::{SearchQuery, SearchResult};
pub use store::Store;

/// What reads answer: views of records at a read point, pages and filters, analytics,
/// topics, tiers and intentions. Answers are plain data: nothing of the index crosses
/// this API.
pub mod views {
    pub use crate::analytics::{Changes, ChangesQuery, Overlaps, Series, SeriesQuery};
    pub use crate::context_lines::estimate_tokens;
    pub use crate::context_tiers::TierUse;
    pub use crate::intentions::{Due, DueBecause, Firings};
    pub use crate::tiers::TierUpkeep;
    pub use crate::topics::{Association, SIMILARITY_MIN, Topic, TopicNetwork};
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
    pub use crate::append::Submitted;
    pub use crate::read_point::{Clock, system_clock};
    pub use crate::shard::{CommitListener, CommittedBatch};
    pub use ostrakon_log::{
        LogBackend, LogError, LogFile, MemStorage, RecordLog, SharedBackend, Storage, StorageBackend,
        Truncation,
    };
}

/// Running a store: backup and restore, inspection of a data directory, checkpoints,
/// upkeep and its reports, residency, and a namespace's settings.
pub mod admin {
    pub use crate::backup::{BackupReport, backup, restore};
    pub use crate::checkpoint::{CHECKPOINT_EVERY_BATCHES, CHECKPOINT_EVERY_BYTES, Checkpointed};
    pub use crate::consolidate::ConsolidationReport;
    pub use crate::inspect::{CheckpointFile, NamespaceReport, inspect_dir, inspect_storage};
    pub use crate::lag::Lag;
    pub use crate::lookup::Settings;
    pub use crate::maintain::Maintenance;
    pub use crate::options::{Residency, SEARCH_ON_DISK_BYTES};
    pub use crate::schedule::IDLE_AFTER_MICROS;
    pub use crate::segment::SegmentReport;
}
