//! The engine's limits: the most one request may ask of it, checked before the work.
//! Each is part of the API (the protocol crates report them and document them).

/// Most changes in one batch.
pub const MAX_BATCH_CHANGES: usize = 100_000;
/// Longest episode text, in bytes.
pub const MAX_TEXT_BYTES: usize = 1 << 20;
/// Largest snapshot page.
pub const MAX_PAGE: usize = 10_000;
/// Deepest neighbourhood.
pub const MAX_DEPTH: u32 = 8;

/// Compactions an open may run before it gives up (on a shared log another node's
/// erasure can come while one is compacted).
pub(crate) const MAX_OPEN_COMPACTIONS: usize = 3;

/// Longest vector a namespace may configure.
pub const MAX_DIM: u32 = 4096;

/// Checks every change and turns the batch into events with fresh ids; with
/// `match_names`, known entity names found in the new episodes' texts are recorded as
/// their mentions (a replay has them recorded already). On error the writer is left as
/// it was.
/// Most aliases one entity may have (its declarations together).
pub const MAX_ALIASES: usize = 1_000;

/// Most properties one entity declaration may carry.
pub const MAX_PROPERTIES: usize = 1_000;

/// Longest free-text note (a retraction's or cancellation's reason, a predicate's
/// description), in bytes.
pub const MAX_REASON_BYTES: usize = 16 * 1024;

/// Longest idle-consolidation period: ten years, so the period in microseconds fits an
/// `i64` with room to spare.
pub const MAX_CONSOLIDATE_EVERY_SECONDS: u64 = 10 * 366 * 86_400;

/// Most subjects `Reader::changes` ranks.
pub const MAX_TOP: usize = 1_000;

/// Most marks of what an episode stated that no longer holds, in fact order (an episode
/// that sourced more shows the first ones).
pub const MAX_OUTDATED: usize = 16;

/// Most facts one such mark names as holding instead (a slot with many values in force).
pub const MAX_REPLACEMENTS: usize = 3;

/// Most entities one `Mention` may name.
pub const MAX_MENTIONS: usize = 1_000;

/// Largest budget a context may ask for.
pub const MAX_CONTEXT_TOKENS: usize = 100_000;

/// Most hits a search returns.
pub const MAX_SEARCH_LIMIT: usize = 200;

/// Most entities a search text names that a search follows (and lists as matched): the
/// first ones found.
pub const MAX_QUERY_ENTITIES: usize = 64;

/// Most topics a topic-first search may narrow to.
pub const MAX_TOPICS: usize = 100;

/// How long a read that names a batch this node has not applied yet (on a log other
/// nodes share) waits for it before answering `NotYetKnown`.
pub const MAX_CATCH_UP_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// How long a write to a namespace that an erasure is compacting waits for it to open
/// again before it is refused as `Unavailable` (to be retried).
pub const MAX_ERASE_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

/// Longest retention period a namespace may set: 1,000 years.
pub const MAX_RETENTION_MICROS: i64 = 1_000 * 366 * ostrakon_core::DAY_MICROS;

/// How often upkeep erases what a namespace's retention period has made due: each run
/// rewrites the log, so due episodes are gathered for this long rather than erased one
/// by one as they age.
pub const RETENTION_EVERY_MICROS: i64 = 3_600_000_000;

/// Most records one erasure by retention names (a larger due set is erased in several).
pub const MAX_ERASE_RECORDS: usize = 10_000;

/// How long opening a namespace waits for one of the open ones to fall quiet, when as many
/// are open as the residency allows, before it is refused as `Unavailable` (to be retried).
pub(crate) const MAX_ROOM_WAIT: std::time::Duration = std::time::Duration::from_secs(5);
