//! A disk cache of embeddings, one append-only file per model, and the embedder that consults it.
//!
//! # File format
//!
//! A cache is a pile of fixed-size records that is only ever appended to and read whole at open,
//! so a file of records is simpler and faster than a database here: no index to maintain (the map
//! lives in memory), no compaction (a text's vector never changes for a given model), and a
//! crash can only cut the last record short. All integers are little-endian.
//!
//! ```text
//! header  magic     8 bytes   "MNEMOEMB"
//!         version   u32       1
//!         dim       u32       vector length
//!         id_len    u32       length of the model id
//!         model id  id_len bytes, UTF-8
//!         crc       u32       CRC-32 of every header byte before it
//! record  key       16 bytes  SHA-256 of the text's UTF-8 bytes, first 16 bytes
//!         vector    dim × f32
//!         crc       u32       CRC-32 of key and vector
//! ```
//!
//! Records are written whole, each `put` in one append, and not synced: losing the newest
//! entries in a crash costs only their recomputation. At open, records from the first one that
//! is cut short or fails its checksum to the end of the file are a torn tail and are truncated
//! away; a damaged record followed by a sound one is an error, never skipped silently.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use sha2::{Digest, Sha256};

use crate::fetch::hex;
use ostrakon_search::embedder::EmbedError;
use ostrakon_search::embedder::Embedder;

const MAGIC: &[u8; 8] = b"MNEMOEMB";
const VERSION: u32 = 1;
/// magic + version + dim + id_len.
const FIXED_HEADER_LEN: usize = 20;
const KEY_LEN: usize = 16;
/// Longest model id a cache file accepts; longer ids are not ids.
const MAX_ID_LEN: usize = 4096;

/// The content hash a text is cached under: 128 bits of SHA-256, the same on every platform and
/// in every version.
type Key = [u8; KEY_LEN];

/// The key of `text` embedded as a query ([`Embedder::embed_query`]): the key of the text
/// marked as one, so a model whose query and passage vectors differ keeps both. (A stored
/// text beginning with that mark would share its key; no text of Ostrakon's does.)
fn query_key(text: &str) -> Key {
    key_of(&format!("\u{0}query\u{0}{text}"))
}

fn key_of(text: &str) -> Key {
    let digest = Sha256::digest(text.as_bytes());
    let mut key = [0u8; KEY_LEN];
    key.copy_from_slice(&digest[..KEY_LEN]);
    key
}

/// Disk cache of embeddings keyed by model id and a content hash of the text, so a restart never
/// re-embeds.
///
/// One process at a time appends to a cache file. Every entry is held in memory too; the file
/// is read once, at [`EmbeddingCache::open`].
#[derive(Debug)]
pub struct EmbeddingCache {
    path: PathBuf,
    model_id: String,
    dim: usize,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    file: File,
    /// Length of the file's sound prefix: where the next record goes.
    end: u64,
    entries: HashMap<Key, Vec<f32>>,
    /// Set when a failed append could not be rolled back; the file then takes no more records.
    broken: bool,
}

impl EmbeddingCache {
    /// Opens (or creates) the cache file of `model_id` in `dir` and loads every entry.
    ///
    /// The file name is the model id with every character other than ASCII letters, digits, `-`,
    /// `.` and `_` replaced, plus a hash of the exact id. A torn last record is truncated away. A
    /// file whose header says another vector length is [`EmbedError::Dimension`]; another model,
    /// or damage before the last records, is [`EmbedError::Cache`].
    pub fn open(dir: &Path, model_id: &str, dim: usize) -> Result<EmbeddingCache, EmbedError> {
        fs::create_dir_all(dir).map_err(crate::error::io(dir))?;
        let path = dir.join(file_name(model_id));
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .map_err(crate::error::io(&path))?;
        let header = header(model_id, dim);
        let len = file.metadata().map_err(crate::error::io(&path))?.len();
        let mut entries = HashMap::new();
        let end = if len < header.len() as u64 && is_prefix_of_header(&mut file, &path, &header)? {
            // New, or a crash cut the header short before any record: start afresh.
            file.set_len(0).map_err(crate::error::io(&path))?;
            file.write_all(&header).map_err(crate::error::io(&path))?;
            header.len() as u64
        } else {
            load(&mut file, &path, model_id, dim, len, &mut entries)?
        };
        if end < len {
            file.set_len(end).map_err(crate::error::io(&path))?;
        }
        Ok(EmbeddingCache {
            path,
            model_id: model_id.to_owned(),
            dim,
            state: Mutex::new(State { file, end, entries, broken: false }),
        })
    }

    /// The cached vector of `text`, if any.
    pub fn get(&self, text: &str) -> Option<Vec<f32>> {
        self.get_key(&key_of(text))
    }

    /// Stores vectors; texts already cached are skipped. All vectors must have the cache's length.
    pub fn put(&self, entries: &[(&str, Vec<f32>)]) -> Result<(), EmbedError> {
        let keyed: Vec<(Key, &[f32])> =
            entries.iter().map(|(text, vector)| (key_of(text), vector.as_slice())).collect();
        self.put_keys(&keyed)
    }

    /// Drops the entries of `texts` (an erasure: no vector of an erased text may stay on
    /// disk). The file is written again without them, beside the old one, synced and
    /// renamed over it; returns how many entries went.
    pub fn forget(&self, texts: &[&str]) -> Result<usize, EmbedError> {
        let mut state = self.lock();
        let before = state.entries.len();
        for text in texts {
            state.entries.remove(&key_of(text));
            state.entries.remove(&query_key(text));
        }
        let dropped = before - state.entries.len();
        if dropped == 0 {
            return Ok(0);
        }
        let mut bytes = header(&self.model_id, self.dim);
        for (key, vector) in &state.entries {
            let start = bytes.len();
            bytes.extend_from_slice(key);
            for x in vector {
                bytes.extend_from_slice(&x.to_le_bytes());
            }
            let crc = crc32fast::hash(&bytes[start..]);
            bytes.extend_from_slice(&crc.to_le_bytes());
        }
        let io = crate::error::io(&self.path);
        let mut tmp = self.path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        {
            let mut file = File::create(&tmp).map_err(crate::error::io(&tmp))?;
            file.write_all(&bytes).map_err(crate::error::io(&tmp))?;
            file.sync_all().map_err(crate::error::io(&tmp))?;
        }
        fs::rename(&tmp, &self.path).map_err(crate::error::io(&self.path))?;
        if let Some(dir) = self.path.parent() {
            File::open(dir).and_then(|d| d.sync_all()).map_err(crate::error::io(dir))?;
        }
        state.file = OpenOptions::new().read(true).append(true).open(&self.path).map_err(io)?;
        state.end = bytes.len() as u64;
        state.broken = false;
        Ok(dropped)
    }

    /// [`EmbeddingCache::forget`] in the caches of the other models in the same folder (a
    /// namespace's vectors may have been made by another model before): an erased text
    /// leaves no vector in any of them. Returns how many entries went.
    pub fn forget_in_others(&self, texts: &[&str]) -> Result<usize, EmbedError> {
        let Some(dir) = self.path.parent() else { return Ok(0) };
        let mut dropped = 0;
        for entry in fs::read_dir(dir).map_err(crate::error::io(dir))? {
            let path = entry.map_err(crate::error::io(dir))?.path();
            if path == self.path || path.extension().is_none_or(|e| e != "emb") {
                continue;
            }
            let mut fixed = [0u8; FIXED_HEADER_LEN];
            let mut file = File::open(&path).map_err(crate::error::io(&path))?;
            if file.read_exact(&mut fixed).is_err() || &fixed[..8] != MAGIC {
                continue;
            }
            let (dim, id_len) = (u32_at(&fixed, 12) as usize, u32_at(&fixed, 16) as usize);
            let mut id = vec![0u8; id_len.min(MAX_ID_LEN)];
            if file.read_exact(&mut id).is_err() {
                continue;
            }
            let Ok(model_id) = String::from_utf8(id) else { continue };
            if dir.join(file_name(&model_id)) != path {
                continue;
            }
            dropped += EmbeddingCache::open(dir, &model_id, dim)?.forget(texts)?;
        }
        Ok(dropped)
    }

    /// Number of texts cached.
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether no text is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The cache file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The model id the cache was opened for.
    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// The vector length the cache was opened for.
    pub fn dim(&self) -> usize {
        self.dim
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the map and the file out of step in a way
        // that matters: `end` only moves after a whole append succeeded.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn get_key(&self, key: &Key) -> Option<Vec<f32>> {
        self.lock().entries.get(key).cloned()
    }

    fn put_keys(&self, entries: &[(Key, &[f32])]) -> Result<(), EmbedError> {
        if let Some((_, vector)) = entries.iter().find(|(_, vector)| vector.len() != self.dim) {
            return Err(EmbedError::Dimension { expected: self.dim, actual: vector.len() });
        }
        let mut state = self.lock();
        if state.broken {
            return Err(EmbedError::Cache {
                path: self.path.clone(),
                reason: "an earlier append failed and could not be undone".into(),
            });
        }
        let mut buf = Vec::new();
        let mut fresh: Vec<(Key, &[f32])> = Vec::new();
        for &(key, vector) in entries {
            if state.entries.contains_key(&key) || fresh.iter().any(|(k, _)| *k == key) {
                continue;
            }
            let start = buf.len();
            buf.extend_from_slice(&key);
            for x in vector {
                buf.extend_from_slice(&x.to_le_bytes());
            }
            let crc = crc32fast::hash(&buf[start..]);
            buf.extend_from_slice(&crc.to_le_bytes());
            fresh.push((key, vector));
        }
        if buf.is_empty() {
            return Ok(());
        }
        if let Err(source) = state.file.write_all(&buf) {
            // Cut a partial record away, or later records would sit at the wrong offsets.
            let end = state.end;
            if state.file.set_len(end).is_err() {
                state.broken = true;
            }
            return Err(EmbedError::Io { path: self.path.clone(), source });
        }
        state.end += buf.len() as u64;
        for (key, vector) in fresh {
            state.entries.insert(key, vector.to_vec());
        }
        Ok(())
    }
}

/// `<sanitised model id>-<8 hex digits of its SHA-256>.emb`: readable, and distinct for ids that
/// sanitise alike.
fn file_name(model_id: &str) -> String {
    let readable: String = model_id
        .chars()
        .take(64)
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_') { c } else { '_' })
        .collect();
    let digest = hex(&Sha256::digest(model_id.as_bytes()));
    format!("{readable}-{}.emb", &digest[..8])
}

fn header(model_id: &str, dim: usize) -> Vec<u8> {
    let mut header = Vec::with_capacity(FIXED_HEADER_LEN + model_id.len() + 4);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&VERSION.to_le_bytes());
    header.extend_from_slice(&(dim as u32).to_le_bytes());
    header.extend_from_slice(&(model_id.len() as u32).to_le_bytes());
    header.extend_from_slice(model_id.as_bytes());
    let crc = crc32fast::hash(&header);
    header.extend_from_slice(&crc.to_le_bytes());
    header
}

/// Whether the whole (short) file is a beginning of `header`.
fn is_prefix_of_header(file: &mut File, path: &Path, header: &[u8]) -> Result<bool, EmbedError> {
    let mut bytes = Vec::new();
    (&*file).read_to_end(&mut bytes).map_err(crate::error::io(path))?;
    Ok(header.starts_with(&bytes))
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(word)
}

/// Checks the header and reads every sound record into `entries`; returns where the sound part of
/// the file ends.
fn load(
    file: &mut File,
    path: &Path,
    model_id: &str,
    dim: usize,
    len: u64,
    entries: &mut HashMap<Key, Vec<f32>>,
) -> Result<u64, EmbedError> {
    let corrupt = |reason: String| EmbedError::Cache { path: path.to_owned(), reason };
    let mut reader = BufReader::with_capacity(1 << 16, &*file);
    let mut fixed = [0u8; FIXED_HEADER_LEN];
    reader.read_exact(&mut fixed).map_err(|_| corrupt("not an embedding cache file".into()))?;
    if &fixed[..8] != MAGIC {
        return Err(corrupt("not an embedding cache file".into()));
    }
    let id_len = u32_at(&fixed, 16) as usize;
    if id_len > MAX_ID_LEN {
        return Err(corrupt("its header is damaged".into()));
    }
    let mut rest = vec![0u8; id_len + 4];
    reader.read_exact(&mut rest).map_err(|_| corrupt("its header is cut short".into()))?;
    let mut whole = fixed.to_vec();
    whole.extend_from_slice(&rest[..id_len]);
    if crc32fast::hash(&whole) != u32_at(&rest, id_len) {
        return Err(corrupt("its header fails its checksum".into()));
    }
    let version = u32_at(&fixed, 8);
    if version != VERSION {
        return Err(corrupt(format!("format version {version}, expected {VERSION}")));
    }
    let file_dim = u32_at(&fixed, 12) as usize;
    if file_dim != dim {
        return Err(EmbedError::Dimension { expected: dim, actual: file_dim });
    }
    if &rest[..id_len] != model_id.as_bytes() {
        let found = String::from_utf8_lossy(&rest[..id_len]);
        return Err(corrupt(format!("it holds vectors of model {found:?}, not {model_id:?}")));
    }

    let header_len = (FIXED_HEADER_LEN + id_len + 4) as u64;
    let record_len = (KEY_LEN + 4 * dim + 4) as u64;
    let whole_records = (len - header_len) / record_len;
    let mut record = vec![0u8; record_len as usize];
    let mut first_bad: Option<u64> = None;
    for index in 0..whole_records {
        reader.read_exact(&mut record).map_err(crate::error::io(path))?;
        let (body, crc) = record.split_at(record.len() - 4);
        let sound = crc32fast::hash(body) == u32_at(crc, 0);
        match (sound, first_bad) {
            (true, None) => {
                let mut key = [0u8; KEY_LEN];
                key.copy_from_slice(&body[..KEY_LEN]);
                let vector = body[KEY_LEN..]
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
                entries.insert(key, vector);
            }
            (false, None) => first_bad = Some(index),
            (true, Some(bad)) => {
                return Err(corrupt(format!(
                    "record {bad} of {whole_records} fails its checksum but later ones are sound"
                )));
            }
            (false, Some(_)) => {}
        }
    }
    Ok(header_len + first_bad.unwrap_or(whole_records) * record_len)
}

/// An embedder that consults the cache first and only embeds misses (storing them).
#[derive(Debug)]
pub struct CachedEmbedder<E> {
    inner: E,
    cache: EmbeddingCache,
    /// Queries' vectors, in memory only (at most [`MAX_QUERIES`]): a search's words may
    /// name what is later erased, and no file may keep them; an erasure or a drop clears
    /// them all (which text came from which namespace is not known).
    queries: Mutex<HashMap<Key, Vec<f32>>>,
}

/// Queries' vectors kept in memory; the map starts over when full.
const MAX_QUERIES: usize = 4096;

impl<E: Embedder> CachedEmbedder<E> {
    /// Puts `cache` in front of `inner`. The cache should have been opened with the inner
    /// embedder's model id and length; [`Embedder::embed`] fails if it was not.
    pub fn new(inner: E, cache: EmbeddingCache) -> Self {
        CachedEmbedder { inner, cache, queries: Mutex::new(HashMap::new()) }
    }

    /// The cache.
    pub fn cache(&self) -> &EmbeddingCache {
        &self.cache
    }

    /// The embedder behind the cache.
    pub fn inner(&self) -> &E {
        &self.inner
    }

    /// The vector under `key`: from the cache, or else made by `make` and stored.
    fn one(
        &self,
        key: Key,
        make: impl FnOnce() -> Result<Vec<f32>, EmbedError>,
    ) -> Result<Vec<f32>, EmbedError> {
        self.check_inner()?;
        if let Some(vector) = self.cache.get_key(&key) {
            return Ok(vector);
        }
        let vector = make()?;
        self.cache.put_keys(&[(key, vector.as_slice())])?;
        Ok(vector)
    }

    /// That the inner embedder is the one the cache was opened for.
    fn check_inner(&self) -> Result<(), EmbedError> {
        let dim = self.inner.dim();
        if dim != self.cache.dim {
            return Err(EmbedError::Dimension { expected: self.cache.dim, actual: dim });
        }
        if self.inner.model_id() != self.cache.model_id {
            return Err(EmbedError::Cache {
                path: self.cache.path.clone(),
                reason: format!(
                    "opened for model {:?}, used with {:?}",
                    self.cache.model_id,
                    self.inner.model_id()
                ),
            });
        }
        Ok(())
    }
}

impl<E: Embedder> Embedder for CachedEmbedder<E> {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn forget(&self, texts: &[&str]) -> Result<usize, EmbedError> {
        let queries = {
            let mut queries = self.queries.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            std::mem::take(&mut *queries).len()
        };
        Ok(queries
            + self.cache.forget(texts)?
            + self.cache.forget_in_others(texts)?
            + self.inner.forget(texts)?)
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    /// From the cache, or else the inner embedder's own `embed_now`, stored before returning.
    fn embed_now(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.one(key_of(text), || self.inner.embed_now(text))
    }

    /// As [`CachedEmbedder::embed_now`], for a query, kept in memory only (never in the
    /// file: a search's words may name what is later erased) under the key of the text marked as a query
    /// (`"\0query\0"` before it), so that a model whose query and passage vectors differ
    /// keeps both.
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.check_inner()?;
        let key = query_key(text);
        let lock = || self.queries.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(vector) = lock().get(&key) {
            return Ok(vector.clone());
        }
        let vector = self.inner.embed_query(text)?;
        let mut queries = lock();
        if queries.len() >= MAX_QUERIES {
            queries.clear();
        }
        queries.insert(key, vector.clone());
        Ok(vector)
    }

    /// Cached vectors come from the cache; the other texts (each distinct text once) go to the
    /// inner embedder in one call and are stored before returning.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.check_inner()?;
        let keys: Vec<Key> = texts.iter().map(|text| key_of(text)).collect();
        let mut out: Vec<Option<Vec<f32>>> = keys.iter().map(|key| self.cache.get_key(key)).collect();
        let mut miss_keys: Vec<Key> = Vec::new();
        let mut miss_texts: Vec<&str> = Vec::new();
        let mut seen: HashSet<Key> = HashSet::new();
        for ((key, text), hit) in keys.iter().zip(texts).zip(&out) {
            if hit.is_none() && seen.insert(*key) {
                miss_keys.push(*key);
                miss_texts.push(text);
            }
        }
        if !miss_texts.is_empty() {
            let vectors = self.inner.embed(&miss_texts)?;
            if vectors.len() != miss_texts.len() {
                return Err(EmbedError::Inference {
                    reason: format!("{} vectors for {} texts", vectors.len(), miss_texts.len()),
                });
            }
            let fresh: Vec<(Key, &[f32])> =
                miss_keys.iter().copied().zip(vectors.iter().map(Vec::as_slice)).collect();
            self.cache.put_keys(&fresh)?;
            let by_key: HashMap<Key, &Vec<f32>> = miss_keys.iter().copied().zip(&vectors).collect();
            for (slot, key) in out.iter_mut().zip(&keys) {
                if slot.is_none() {
                    *slot = by_key.get(key).map(|v| (*v).clone());
                }
            }
        }
        out.into_iter()
            .map(|vector| {
                vector.ok_or_else(|| EmbedError::Inference {
                    reason: "a text was left without a vector".into(),
                })
            })
            .collect()
    }
}
