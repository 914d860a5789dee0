//! A helper for the I/O errors of embedding; the error type itself is
//! `ostrakon_search::embedder::EmbedError`, re-exported by this crate.

use std::path::PathBuf;

use ostrakon_search::embedder::EmbedError;

/// Wraps an I/O error with the path it concerns.
pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> EmbedError {
    let path = path.into();
    move |source| EmbedError::Io { path, source }
}
