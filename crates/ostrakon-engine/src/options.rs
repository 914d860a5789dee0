//! How a store is opened: its embedder, vector index settings, which namespaces stay
//! open, and where search indexes live.

use std::sync::Arc;

use ostrakon_search::{Embedder, HnswConfig};

/// Gives the built-in embedder of a model (`None`: the store's default) when first needed
/// (loading a model can take seconds and may fetch it): called at most once per model
/// and store.
pub type EmbedderSource =
    Arc<dyn Fn(Option<ostrakon_core::BuiltinModel>) -> Result<Arc<dyn Embedder>, String> + Send + Sync>;

/// How a store retrieves.
#[derive(Clone, Default)]
pub struct StoreOptions {
    /// The built-in embedder, for namespaces in `Builtin` or `Model` embedding mode.
    /// Without one, those namespaces search by full text and graph only.
    pub embedder: Option<EmbedderSource>,
    /// When vector indexes switch from exact scan to HNSW.
    pub hnsw: HnswConfig,
    /// Which namespaces stay open.
    pub residency: Residency,
    /// Build no search index while this store is open: for bulk loads, which do not
    /// search. The indexes are derived, and built when a store next opens the namespace
    /// without this (searches here would wait for them in vain).
    pub defer_search: bool,
    /// Namespaces whose log holds at least this many bytes when they open keep their
    /// full-text indexes on disk (`None`: [`SEARCH_ON_DISK_BYTES`]); smaller ones index
    /// in RAM, which a replay rebuilds in milliseconds, and spare a new namespace the
    /// directories and synced commits.
    pub search_on_disk_from_bytes: Option<u64>,
    /// The key an erasure's digests of what it erased are made with (HMAC-SHA-256), kept
    /// by the operator outside the data directory; `None`: no digest is kept. An unkeyed
    /// hash of a name would let anyone with the files confirm a guessed name; a keyed one
    /// proves what was erased only to whoever holds the key, and destroying the key makes
    /// every digest meaningless.
    pub erasure_key: Option<Arc<[u8]>>,
}

/// See [`StoreOptions::search_on_disk_from_bytes`].
pub const SEARCH_ON_DISK_BYTES: u64 = 1 << 20;

/// Which namespaces a store keeps open: those used in the last `idle_after_micros`, at
/// most `max_open` of them, and as many as fit in `max_state_bytes` (the least recently
/// used close first). A closed namespace holds no memory beyond its name, and reopens on
/// its next use from its checkpoint and the log after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Residency {
    /// A namespace unused for this long (by the store's clock) is closed by upkeep.
    pub idle_after_micros: i64,
    /// Most namespaces open at once, as upkeep leaves them.
    pub max_open: usize,
    /// The memory budget of the open namespaces' state (their estimated resident bytes,
    /// search indexes not included); `None`: no budget. Upkeep closes the least recently
    /// used until they fit; one namespace in use stays open even if it alone is larger.
    pub max_state_bytes: Option<u64>,
}

impl Default for Residency {
    fn default() -> Self {
        Residency { idle_after_micros: 5 * 60_000_000, max_open: 1024, max_state_bytes: None }
    }
}
