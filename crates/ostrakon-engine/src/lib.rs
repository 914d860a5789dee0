//! Ostrakon's engine: the [`Store`] facade over one durable log and one derived index per
//! namespace. Writes are validated and given ids, appended durably (group commit), then
//! applied in log order; reads are pinned at a (validAt, knownAt) and say their basis.
#![deny(missing_docs)]

mod analytics;
mod append;
mod backup;
mod change;
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
mod limits;
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

pub use analytics::{Changes, Overlaps, Series};
pub use backup::{BackupReport, backup, restore};
pub use change::{
    Change, EmbeddingPolicyPatch, EntityRef, EpisodeRef, NamespacePatch, NewEntity, NewEpisode, NewFact,
    NewIntention, NewTrigger, NoteEntity, ObjectRef, Receipt, RecordId, SegmentationPatch, TierSettingsPatch,
};
pub use checkpoint::{CHECKPOINT_EVERY_BATCHES, CHECKPOINT_EVERY_BYTES, Checkpointed};
pub use context::ContextBlock;
pub use context_lines::estimate_tokens;
pub use context_tiers::TierUse;
pub use erase::{EraseRequest, EraseTarget, Erased};
pub use error::EngineError;
pub use inspect::{CheckpointFile, NamespaceReport, inspect_dir, inspect_storage};
pub use intentions::{Due, DueBecause, Firings};
pub use interrupt::Interrupt;
pub use lag::Lag;
pub use lookup::Settings;
pub use maintain::Maintenance;
pub use options::{EmbedderSource, Residency, SEARCH_ON_DISK_BYTES, StoreOptions};
pub use ostrakon_core as core;
pub use ostrakon_index::{ErasedMark, ErasureRecord};
pub use ostrakon_index::{Placement, Proposal};
pub use schedule::IDLE_AFTER_MICROS;
pub use tiers::TierUpkeep;
// Answers are the core's plain data: nothing of the index crosses this API.
pub use append::Submitted;
pub use consolidate::ConsolidationReport;
pub use limits::{
    MAX_ALIASES, MAX_BATCH_CHANGES, MAX_CATCH_UP_WAIT, MAX_CONSOLIDATE_EVERY_SECONDS, MAX_CONTEXT_TOKENS,
    MAX_DEPTH, MAX_DIM, MAX_ERASE_RECORDS, MAX_ERASE_WAIT, MAX_MENTIONS, MAX_PAGE, MAX_PROPERTIES,
    MAX_QUERY_ENTITIES, MAX_REASON_BYTES, MAX_RETENTION_MICROS, MAX_SEARCH_LIMIT, MAX_TEXT_BYTES, MAX_TOP,
    MAX_TOPICS, RETENTION_EVERY_MICROS,
};
pub use ostrakon_core::{
    Counts, EntityFilter, EntityView, EpisodeCursor, EpisodeFilter, FactFilter, FactView, Fading,
    IntentionView, Neighborhood, Page, Recallable, Retraction, RetractionView, Scope, SnapshotCursor,
    SnapshotPage, StatementView, View,
};
pub use ostrakon_log::{
    LogBackend, LogError, LogFile, MemStorage, RecordLog, SharedBackend, Storage, StorageBackend, Truncation,
};
pub use ostrakon_search::{EmbedError, Embedder, HnswConfig};
pub use read_point::{Answer, Basis, Clock, KnownAt, ReadAt, system_clock};
pub use reader::Reader;
pub use retrieve::index::Indexing;
pub use retrieve::query::{
    Component, ComponentRank, DEFAULT_DIVERSITY_LAMBDA, DEFAULT_RETENTION_FLOOR, DEFAULT_SPEAKER_BOOST,
    DEFAULT_TIME_BOOST, Explanation, SearchHit, SearchQuery, SearchResult, TopicScore,
};
pub use segment::SegmentReport;
pub use shard::{CommitListener, CommittedBatch};
pub use store::Store;
pub use topics::{Association, SIMILARITY_MIN, Topic, TopicNetwork};
