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
