//! Opening a data directory: the store with the built-in embedder loaded when first
//! needed, within the process's file descriptors, with the operator's erasure key.

use std::path::Path;
use std::sync::Arc;

use anyhow::bail;
use ostrakon_embed::Embedder;
use ostrakon_engine::{Store, StoreOptions, search::EmbedderSource};

/// Opens a data directory with the built-in embedder (loaded, and fetched if need be,
/// when first needed; `OSTRAKON_EMBEDDER=off` leaves it out), run by `embed_workers`
/// threads: one for a server, which keeps the other cores for requests, every core for a
/// command that only waits for the indexes ([`all_cores`]).
pub(crate) fn open_store(
    data: &Path,
    residency: ostrakon_engine::admin::Residency,
    embed_workers: usize,
) -> anyhow::Result<Store> {
    let residency = within_descriptors(residency);
    let options = StoreOptions {
        residency,
        embedder: embedder_source(data, embed_workers)?,
        erasure_key: erasure_key(data)?,
        ..StoreOptions::default()
    };
    crate::cluster::open(data, options)
}

/// The built-in embedder, loaded when first needed, with its cache: multilingual-e5-small
/// (`OSTRAKON_EMBEDDER` unset, `on` or `e5`), all-MiniLM-L6-v2 (`minilm`), or none (`off`).
pub(crate) fn embedder_source(data: &Path, embed_workers: usize) -> anyhow::Result<Option<EmbedderSource>> {
    let choice = std::env::var("OSTRAKON_EMBEDDER").unwrap_or_default().to_ascii_lowercase();
    let multilingual = match choice.as_str() {
        "off" => return Ok(None),
        "" | "on" | "e5" => true,
        "minilm" => false,
        other => bail!("OSTRAKON_EMBEDDER={other:?}: expected e5 (the default), minilm or off"),
    };
    let cache_dir = data.join("embeddings");
    // One load of each model, whether a namespace names it or has it as the default.
    let loaded: Arc<[std::sync::OnceLock<Loaded>; 2]> = Arc::default();
    let source: EmbedderSource = Arc::new(move |named| {
        let multilingual = match named {
            None => multilingual,
            Some(model) => model == ostrakon_engine::core::BuiltinModel::E5,
        };
        loaded[usize::from(!multilingual)]
            .get_or_init(|| load_embedder(&cache_dir, multilingual, embed_workers))
            .clone()
    });
    Ok(Some(source))
}

/// A built-in embedder once loaded, or why it could not be.
type Loaded = Result<Arc<dyn Embedder>, String>;

/// Loads (fetching it once if need be) the built-in embedder of one model with its
/// embedding cache in `cache_dir`.
fn load_embedder(cache_dir: &Path, multilingual: bool, embed_workers: usize) -> Loaded {
    let report = |m: &str| {
        eprintln!("ostrakon: {m}");
        tracing::info!("{m}");
    };
    let models = ostrakon_embed::default_model_cache();
    let model: Arc<dyn Embedder> = if multilingual {
        let file = ostrakon_embed::locate_or_fetch_e5(&models, &report).map_err(|e| e.to_string())?;
        Arc::new(ostrakon_embed::E5::load_with_workers(&file, embed_workers).map_err(|e| e.to_string())?)
    } else {
        let dir = ostrakon_embed::locate_or_fetch(&models, &report).map_err(|e| e.to_string())?;
        Arc::new(ostrakon_embed::MiniLm::load_with_workers(&dir, embed_workers).map_err(|e| e.to_string())?)
    };
    let cache = ostrakon_embed::EmbeddingCache::open(cache_dir, model.model_id(), model.dim())
        .map_err(|e| e.to_string())?;
    let embedder: Arc<dyn Embedder> = Arc::new(ostrakon_embed::CachedEmbedder::new(model, cache));
    Ok(embedder)
}

/// File descriptors an open namespace may hold: its log, and a file opened for a while
/// as it checkpoints or its indexes write.
const DESCRIPTORS_PER_NAMESPACE: u64 = 2;

/// Descriptors kept for everything else: connections, the embedding cache, libraries.
const DESCRIPTORS_RESERVED: u64 = 512;

/// `residency` with at most as many namespaces open as the process's descriptors allow:
/// the soft limit is raised toward the hard one first (a default of 1,024 is common), and
/// `max_open` lowered, with a warning, when even that is too few.
fn within_descriptors(mut residency: ostrakon_engine::admin::Residency) -> ostrakon_engine::admin::Residency {
    let needed = (residency.max_open as u64).saturating_mul(DESCRIPTORS_PER_NAMESPACE) + DESCRIPTORS_RESERVED;
    let Ok(limit) = rlimit::increase_nofile_limit(needed) else { return residency };
    if limit < needed {
        let fits = usize::try_from(limit.saturating_sub(DESCRIPTORS_RESERVED) / DESCRIPTORS_PER_NAMESPACE)
            .unwrap_or(usize::MAX)
            .max(1);
        tracing::warn!(
            max_open = residency.max_open,
            descriptors = limit,
            open_at_most = fits,
            "the process may open too few files for namespaces.max_open; keeping fewer open (raise `ulimit -n`)"
        );
        residency.max_open = fits;
    }
    residency
}

/// The cores this process may use.
pub(crate) fn all_cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// The environment variable naming the erasure key's file.
const KEY_FILE_VAR: &str = "OSTRAKON_ERASURE_KEY_FILE";

/// The key erasures' digests are made with: the bytes of the file `OSTRAKON_ERASURE_KEY_FILE`
/// names (at least 32), which must lie outside the data directory — whoever has the
/// files must not have the key, and an operator destroys it to make every digest
/// meaningless. Unset: no digest is kept.
pub(crate) fn erasure_key(data: &std::path::Path) -> anyhow::Result<Option<std::sync::Arc<[u8]>>> {
    use anyhow::Context as _;
    let Some(path) = std::env::var_os(KEY_FILE_VAR) else { return Ok(None) };
    let path = std::path::PathBuf::from(path);
    let key =
        std::fs::read(&path).with_context(|| format!("{KEY_FILE_VAR}: cannot read {}", path.display()))?;
    if key.len() < 32 {
        anyhow::bail!(
            "{KEY_FILE_VAR}: {} holds {} bytes; an erasure key needs at least 32 (e.g. head -c 32 /dev/urandom)",
            path.display(),
            key.len()
        );
    }
    let resolved = std::fs::canonicalize(&path).unwrap_or(path);
    let data = std::fs::canonicalize(data).unwrap_or_else(|_| data.to_path_buf());
    if resolved.starts_with(&data) {
        anyhow::bail!(
            "{KEY_FILE_VAR}: {} is inside the data directory {}; keep the erasure key elsewhere, or whoever has \
             the files has the key",
            resolved.display(),
            data.display()
        );
    }
    Ok(Some(key.into()))
}
