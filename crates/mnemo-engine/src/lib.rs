//! Mnemo's engine: the [`Store`] facade over one durable log and one derived index per
//! namespace. Writes are validated and given ids, appended durably (group commit), then
//! applied in log order; reads are pinned at a (validAt, knownAt) and say their basis.
#![deny(missing_docs)]

mod analytics;
mod change;
mod checkpoint;
mod context;
mod error;
mod inspect;
mod intentions;
mod interrupt;
mod lookup;
mod maintain;
mod retrieve;
mod saved_vectors;
mod segment;
mod store;
mod topics;
mod write;

pub use analytics::{Changes, MAX_TOP, Overlaps, Series};
pub use change::{
    Change, EmbeddingPolicyPatch, EntityRef, EpisodeRef, MAX_MENTIONS, NamespacePatch, NewEntity, NewEpisode,
    NewFact, NewIntention, NewTrigger, NoteEntity, ObjectRef, Receipt, RecordId, SegmentationPatch,
};
pub use checkpoint::{CHECKPOINT_EVERY_BATCHES, CHECKPOINT_EVERY_BYTES, Checkpointed};
pub use context::{ContextBlock, MAX_CONTEXT_TOKENS, estimate_tokens};
pub use error::EngineError;
pub use inspect::{CheckpointFile, NamespaceReport, inspect_dir, inspect_storage};
pub use intentions::{Due, DueBecause, Firings};
pub use interrupt::Interrupt;
pub use lookup::Settings;
pub use maintain::{IDLE_AFTER_MICROS, Maintenance, Residency};
pub use mnemo_core as core;
// Answers are the core's plain data: nothing of the index crosses this API.
pub use mnemo_core::{
    Counts, EntityFilter, EntityView, EpisodeCursor, EpisodeFilter, FactFilter, FactView, Fading,
    IntentionView, Neighborhood, Page, Recallable, Retraction, RetractionView, Scope, SnapshotCursor,
    SnapshotPage, StatementView, View,
};
pub use mnemo_log::{LogError, LogFile, MemStorage, Storage, Truncation};
pub use mnemo_search::HnswConfig;
pub use retrieve::{
    Component, ComponentRank, DEFAULT_DIVERSITY_LAMBDA, DEFAULT_RETENTION_FLOOR, DEFAULT_SPEAKER_BOOST,
    DEFAULT_TIME_BOOST, EmbedderSource, Explanation, Indexing, MAX_QUERY_ENTITIES, MAX_SEARCH_LIMIT,
    MAX_TOPICS, SEARCH_ON_DISK_BYTES, SearchHit, SearchQuery, SearchResult, StoreOptions, TopicScore,
};
pub use segment::SegmentReport;
pub use store::{
    Answer, Basis, Clock, CommitListener, CommittedBatch, ConsolidationReport, KnownAt, MAX_BATCH_CHANGES,
    MAX_DEPTH, MAX_PAGE, MAX_TEXT_BYTES, ReadAt, Store, Submitted, system_clock,
};
pub use topics::{Association, SIMILARITY_MIN, Topic, TopicNetwork};
pub use write::{MAX_ALIASES, MAX_CONSOLIDATE_EVERY_SECONDS, MAX_PROPERTIES, MAX_REASON_BYTES};
