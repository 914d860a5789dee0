//! The embedding cache: round trips, reopening, torn tails, damage, and the cached embedder.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs::OpenOptions;
use std::io::Write;
use std::sync::Mutex;

use ostrakon_embed::{CachedEmbedder, EmbedError, Embedder, EmbeddingCache};

const MODEL: &str = "fake/0.1";
const DIM: usize = 4;

/// Bytes of one record for `DIM`: key, vector, checksum.
const RECORD_LEN: u64 = 16 + 4 * DIM as u64 + 4;

fn vector(seed: f32) -> Vec<f32> {
    (0..DIM).map(|i| seed + i as f32 / 10.0).collect()
}

#[test]
fn put_then_get_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let cache = EmbeddingCache::open(dir.path(), MODEL, DIM).unwrap();
    assert!(cache.is_empty());
    assert_eq!(cache.get("a"), None);
    cache.put(&[("a", vector(1.0)), ("b", vector(2.0))]).unwrap();
    cache.put(&[("c", vector(3.0)), ("a", vector(9.0))]).unwrap();
    assert_eq!(cache.len(), 3);
    assert_eq!(cache.get("a"), Some(vector(1.0)), "a text keeps its first vector");
    assert_eq!(cache.get("c"), Some(vector(3.0)));
    let path = cache.path().to_owned();
    drop(cache);

    let reopened = EmbeddingCache::open(dir.path(), MODEL, DIM).unwrap();
    assert_eq!(reopened.path(), path);
    assert_eq!(reopened.len(), 3);
    assert_eq!(reopened.get("b"), Some(vector(2.0)));
    assert_eq!(reopened.get("c"), Some(vector(3.0)));
    assert_eq!(reopened.get("d"), None);
}

#[test]
fn models_get_separate_files() {
    let dir = tempfile::tempdir().unwrap();
    let one = EmbeddingCache::open(dir.path(), "m/1", DIM).unwrap();
    let other = EmbeddingCache::open(dir.path(), "m:1", DIM).unwrap();
    assert_ne!(one.path(), other.path(), "ids that sanitise alike still get their own files");
    one.put(&[("x", vector(1.0))]).unwrap();
    assert_eq!(other.get("x"), None);
    let name = one.path().file_name().unwrap().to_str().unwrap().to_owned();
    assert!(name.starts_with("m_1-") && name.ends_with(".emb"), "{name}");
}

#[test]
fn a_torn_tail_is_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let cache = EmbeddingCache::open(dir.path(), MODEL, DIM).unwrap();
    cache.put(&[("a", vector(1.0)), ("b", vector(2.0))]).unwrap();
    let path = cache.path().to_owned();
    drop(cache);
    let sound_len = std::fs::metadata(&path).unwrap().len();

    // A whole record whose bytes never made it (zeros), then half a record.
    let mut file = OpenOptions::new().append(true).open(&path).unwrap();
    file.write_all(&vec![0u8; RECORD_LEN as usize]).unwrap();
    file.write_all(&[7u8; RECORD_LEN as usize / 2]).unwrap();
    drop(file);

    let cache = EmbeddingCache::open(dir.path(), MODEL, DIM).unwrap();
    assert_eq!(cache.len(), 2);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), sound_len);
    cache.put(&[("c", vector(3.0))]).unwrap();
    drop(cache);
    let cache = EmbeddingCache::open(dir.path(), MODEL, DIM).unwrap();
    assert_eq!(cache.len(), 3);
    assert_eq!(cache.get("c"), Some(vector(3.0)));
    assert_eq!(std::fs::metadata(&path).unwrap().len(), sound_len + RECORD_LEN);
}

#[test]
fn a_torn_header_starts_afresh() {
    let dir = tempfile::tempdir().unwrap();
    let path = EmbeddingCache::open(dir.path(), MODEL, DIM).unwrap().path().to_owned();
    let header_len = std::fs::metadata(&path).unwrap().len();
    OpenOptions::new().write(true).open(&path).unwrap().set_len(header_len - 3).unwrap();
    let cache = EmbeddingCache::open(dir.path(), MODEL, DIM).unwrap();
    assert!(cache.is_empty());
    assert_eq!(std::fs::metadata(&path).unwrap().len(), header_len);
}

#[test]
fn damage_before_sound_records_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let cache = EmbeddingCache::open(dir.path(), MODEL, DIM).unwrap();
    cache.put(&[("a", vector(1.0)), ("b", vector(2.0)), ("c", vector(3.0))]).unwrap();
    let path = cache.path().to_owned();
    drop(cache);
    let mut bytes = std::fs::read(&path).unwrap();
    let len = bytes.len();
    // Flip one bit in the vector of the middle record.
    bytes[len - 2 * RECORD_LEN as usize + 20] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let err = EmbeddingCache::open(dir.path(), MODEL, DIM).unwrap_err();
    assert!(matches!(err, EmbedError::Cache { .. }), "{err:?}");
    assert!(err.to_string().contains("checksum"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "a damaged file is left as it is");
}

#[test]
fn a_damaged_header_or_a_foreign_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = EmbeddingCache::open(dir.path(), MODEL, DIM).unwrap().path().to_owned();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[21] ^= 0x20; // a letter of the model id
    std::fs::write(&path, &bytes).unwrap();
    let err = EmbeddingCache::open(dir.path(), MODEL, DIM).unwrap_err();
    assert!(matches!(err, EmbedError::Cache { .. }), "{err:?}");

    std::fs::write(&path, b"this is some other file entirely, long enough to hold a header").unwrap();
    let err = EmbeddingCache::open(dir.path(), MODEL, DIM).unwrap_err();
    assert!(err.to_string().contains("not an embedding cache"), "{err}");
}

#[test]
fn a_wrong_dimension_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let cache = EmbeddingCache::open(dir.path(), MODEL, DIM).unwrap();
    cache.put(&[("a", vector(1.0))]).unwrap();
    let err = cache.put(&[("b", vec![1.0; DIM + 1])]).unwrap_err();
    assert!(matches!(err, EmbedError::Dimension { expected: DIM, actual } if actual == DIM + 1), "{err:?}");
    assert_eq!(cache.len(), 1);
    drop(cache);
    let err = EmbeddingCache::open(dir.path(), MODEL, DIM * 2).unwrap_err();
    assert!(matches!(err, EmbedError::Dimension { expected, actual: DIM } if expected == DIM * 2), "{err:?}");
}

/// Embeds by text length and records every text it was asked for.
struct Counting {
    seen: Mutex<Vec<String>>,
    dim: usize,
}

impl Counting {
    fn new(dim: usize) -> Self {
        Counting { seen: Mutex::new(Vec::new()), dim }
    }
    fn take_seen(&self) -> Vec<String> {
        std::mem::take(&mut *self.seen.lock().unwrap())
    }
}

impl Embedder for Counting {
    fn model_id(&self) -> &str {
        MODEL
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.seen.lock().unwrap().extend(texts.iter().map(|t| t.to_string()));
        Ok(texts.iter().map(|t| vector(t.len() as f32)).collect())
    }
}

#[test]
fn the_cached_embedder_embeds_only_misses() {
    let dir = tempfile::tempdir().unwrap();
    let embedder =
        CachedEmbedder::new(Counting::new(DIM), EmbeddingCache::open(dir.path(), MODEL, DIM).unwrap());
    assert_eq!(embedder.model_id(), MODEL);
    assert_eq!(embedder.dim(), DIM);

    let out = embedder.embed(&["a", "bb", "a"]).unwrap();
    assert_eq!(out, vec![vector(1.0), vector(2.0), vector(1.0)]);
    assert_eq!(embedder.inner().take_seen(), ["a", "bb"], "each distinct text once");

    let out = embedder.embed(&["bb", "ccc", "a"]).unwrap();
    assert_eq!(out, vec![vector(2.0), vector(3.0), vector(1.0)]);
    assert_eq!(embedder.inner().take_seen(), ["ccc"]);

    assert!(embedder.embed(&["a", "ccc"]).unwrap().len() == 2);
    assert!(embedder.inner().take_seen().is_empty());
    assert_eq!(embedder.cache().len(), 3);
    drop(embedder);

    // After a restart nothing is embedded again.
    let embedder =
        CachedEmbedder::new(Counting::new(DIM), EmbeddingCache::open(dir.path(), MODEL, DIM).unwrap());
    let out = embedder.embed(&["ccc", "bb", "a"]).unwrap();
    assert_eq!(out, vec![vector(3.0), vector(2.0), vector(1.0)]);
    assert!(embedder.inner().take_seen().is_empty());
}

#[test]
fn a_cache_of_another_shape_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let embedder =
        CachedEmbedder::new(Counting::new(DIM + 1), EmbeddingCache::open(dir.path(), MODEL, DIM).unwrap());
    let err = embedder.embed(&["a"]).unwrap_err();
    assert!(matches!(err, EmbedError::Dimension { .. }), "{err:?}");
    assert!(embedder.inner().take_seen().is_empty());
}

#[test]
fn boxed_and_shared_embedders_work_through_the_trait() {
    let boxed: Box<dyn Embedder> = Box::new(Counting::new(DIM));
    assert_eq!(boxed.embed(&["xy"]).unwrap(), vec![vector(2.0)]);
    let shared: std::sync::Arc<dyn Embedder> = std::sync::Arc::new(Counting::new(DIM));
    let dir = tempfile::tempdir().unwrap();
    let cached = CachedEmbedder::new(shared, EmbeddingCache::open(dir.path(), MODEL, DIM).unwrap());
    assert_eq!(cached.embed(&["xyz"]).unwrap(), vec![vector(3.0)]);
}

#[test]
fn forgetting_drops_a_text_from_every_model_s_cache_and_every_query_vector_too() {
    let dir = tempfile::tempdir().unwrap();
    // Vectors of another model, made before (a namespace embedded by it, then by this one).
    let other = EmbeddingCache::open(dir.path(), "another/model", DIM).unwrap();
    other.put(&[("the secret", vector(9.0)), ("kept", vector(8.0))]).unwrap();
    drop(other);
    let embedder =
        CachedEmbedder::new(Counting::new(DIM), EmbeddingCache::open(dir.path(), MODEL, DIM).unwrap());
    embedder.embed(&["the secret", "kept"]).unwrap();
    embedder.embed_query("the secret").unwrap();
    embedder.embed_query("where does the secret live").unwrap();
    assert_eq!(embedder.cache().len(), 2, "a query's vector is kept apart from the passages'");
    // Queries' vectors are in memory only: no file holds a search's words.
    assert!(!std::fs::read(embedder.cache().path()).unwrap().is_empty());
    let reopened = EmbeddingCache::open(dir.path(), MODEL, DIM).unwrap();
    assert_eq!(reopened.len(), 2);
    drop(reopened);
    // The passage, and every query (which came from which namespace is not known).
    assert_eq!(embedder.forget(&["the secret"]).unwrap(), 4);
    assert_eq!(embedder.cache().len(), 1);
    let seen = embedder.inner().take_seen().len();
    embedder.embed_query("where does the secret live").unwrap();
    assert_eq!(embedder.inner().take_seen().len(), 1, "made again after {seen}: it was forgotten");
    let other = EmbeddingCache::open(dir.path(), "another/model", DIM).unwrap();
    assert_eq!((other.get("the secret"), other.get("kept")), (None, Some(vector(8.0))));
}
