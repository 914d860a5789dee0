//! A namespace's search indexes: full text (alone and in context) and vectors, with how
//! far they have caught up with the log.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use ostrakon_core::{EmbeddingMode, EpisodeId, RecordRef, Seq};
use ostrakon_index::NamespaceIndex;
use ostrakon_log::LogBackend;
use ostrakon_search::{TextIndex, VectorIndex};

use crate::error::read::ReadError;
use crate::error::storage::StorageError;
use crate::retrieve::keys::key;
use crate::retrieve::saved_vectors::Stamp;
use crate::sync::lock;

/// How long a read waits for the indexes to catch up before giving up.
pub(crate) const INDEX_WAIT: Duration = Duration::from_secs(120);

/// The vectors of one namespace in one embedding mode.
pub(crate) struct Vectors {
    pub(crate) mode: EmbeddingMode,
    /// The built-in embedder's model id (empty for client vectors): vectors saved by
    /// one model are never used with another's queries.
    pub(crate) model: String,
    pub(crate) alone: VectorIndex,
    pub(crate) context: VectorIndex,
}

pub(crate) struct Progress {
    /// Every batch up to this one is searchable: its text and its vectors.
    pub(crate) indexed: u64,
    /// Every batch up to this one is in the text indexes (its vectors may still be to
    /// come, from the vector lane).
    pub(crate) text_indexed: u64,
    /// Bumped whenever every vector is written again (a rebuild): vectors of live batches
    /// queued before it are then neither needed nor counted.
    pub(crate) epoch: u64,
    /// The vectors of every batch up to this one are being written by the indexer itself
    /// (a rebuild, as a namespace opens or what is embedded changes): a search waits for
    /// them, not for the vector lane's.
    pub(crate) owed: u64,
    /// Why vectors are missing, if they are.
    pub(crate) warning: Option<String>,
    /// The vectors hold every text of the batches up to this one (none when embedding
    /// stopped short, failed, or is off).
    pub(crate) vectors_upto: Option<u64>,
    /// Texts embedded, and to embed, in the run of the indexer now going on.
    pub(crate) embedding: (u64, u64),
}

/// How far a namespace's search indexes are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Indexing {
    /// Every batch up to this one is searchable.
    pub indexed: Seq,
    /// The namespace's last batch.
    pub latest: Seq,
    /// Texts embedded so far in the indexer's current run over this namespace.
    pub embedded: u64,
    /// Texts that run embeds (0 when none is going on).
    pub to_embed: u64,
}

/// A thread's latest episode as the indexer saw it: when the next one comes, the two make
/// its second context document.
#[derive(Clone)]
pub(crate) struct Latest {
    pub(crate) id: EpisodeId,
    /// The text of the episode before it in the thread.
    pub(crate) before: Option<String>,
    pub(crate) text: String,
}

/// Search state of one namespace.
pub(crate) struct SearchIndex {
    pub(crate) text: TextIndex,
    pub(crate) context_text: TextIndex,
    pub(crate) vectors: RwLock<Option<Arc<Vectors>>>,
    /// Per thread, its latest episode (the indexer's own state).
    pub(crate) previous: Mutex<HashMap<String, Latest>>,
    pub(crate) progress: Mutex<Progress>,
    pub(crate) caught_up: Condvar,
    /// Whether the text indexes live in a directory, where each commit records the
    /// batch it covers ([`Stamp`]).
    pub(crate) persistent: bool,
    /// What the text indexes held when opened from their directory.
    pub(crate) stamp: Option<Stamp>,
    /// The directory of the persistent indexes, where the vectors are saved too.
    pub(crate) dir: Option<std::path::PathBuf>,
    /// The batch of the vectors last saved there.
    pub(crate) vectors_saved: Mutex<u64>,
    /// The log backend that keeps vectors for every store over it (a cluster's), so
    /// that a node opening the namespace embeds only what they lack.
    pub(crate) shared: Option<Arc<dyn LogBackend>>,
    /// The batch of the vectors last saved there, or loaded from there.
    pub(crate) vectors_shared: Mutex<u64>,
    /// Set once the namespace is erased from or dropped: the indexer and the vector lane
    /// do no more work for these indexes (queued work is dropped, a run stops at its next
    /// chunk), so that no text of the namespace as it was reaches a vector, an index file
    /// or the embedding cache after they were forgotten.
    abandoned: AtomicBool,
    /// Runs of the indexer or the vector lane going on over these indexes.
    busy: AtomicUsize,
}

/// A run of the indexer or the vector lane over a namespace's search indexes (see
/// [`SearchIndex::work`]).
pub(crate) struct Busy<'a>(&'a AtomicUsize);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl SearchIndex {
    /// The search indexes of a namespace: the text indexes in `dir` if given (kept
    /// across opens; a directory that cannot be opened is removed and made anew), else
    /// in RAM.
    pub(crate) fn open(dir: Option<&std::path::Path>) -> Result<Self, StorageError> {
        let Some(dir) = dir else { return Self::new() };
        let open = || -> Result<Self, ostrakon_search::SearchError> {
            let (text, a) = TextIndex::open_in(&dir.join("text"))?;
            let (context_text, b) = TextIndex::open_in(&dir.join("context"))?;
            // Both are committed with the same stamp; a crash between the two commits
            // leaves them unequal, and then neither is trusted.
            let stamp = match (a, b) {
                (Some(a), Some(b)) if a == b => Stamp::decode(&a),
                _ => None,
            };
            let mut search = Self::with(text, context_text);
            search.persistent = true;
            search.stamp = stamp;
            search.dir = Some(dir.to_path_buf());
            Ok(search)
        };
        match open() {
            Ok(search) => Ok(search),
            Err(e) => {
                tracing::warn!(dir = %dir.display(), error = %e, "search index unusable; building it anew");
                let _ = std::fs::remove_dir_all(dir);
                open().or_else(|_| Self::new())
            }
        }
    }

    pub(crate) fn new() -> Result<Self, StorageError> {
        Ok(Self::with(TextIndex::new().map_err(search_err)?, TextIndex::new().map_err(search_err)?))
    }

    pub(crate) fn with(text: TextIndex, context_text: TextIndex) -> Self {
        SearchIndex {
            text,
            context_text,
            vectors: RwLock::new(None),
            previous: Mutex::new(HashMap::new()),
            progress: Mutex::new(Progress {
                indexed: 0,
                text_indexed: 0,
                epoch: 0,
                owed: 0,
                warning: None,
                vectors_upto: None,
                embedding: (0, 0),
            }),
            caught_up: Condvar::new(),
            persistent: false,
            stamp: None,
            dir: None,
            vectors_saved: Mutex::new(0),
            shared: None,
            vectors_shared: Mutex::new(0),
            abandoned: AtomicBool::new(false),
            busy: AtomicUsize::new(0),
        }
    }

    /// A run over these indexes, counted until dropped; `None` once they are abandoned.
    /// (Counted before the check, and [`SearchIndex::abandon`] sets the flag before it
    /// waits for the count: either the run sees the flag, or the abandoning caller sees
    /// the run.)
    pub(crate) fn work(&self) -> Option<Busy<'_>> {
        self.busy.fetch_add(1, Ordering::SeqCst);
        let busy = Busy(&self.busy);
        (!self.is_abandoned()).then_some(busy)
    }

    pub(crate) fn is_abandoned(&self) -> bool {
        self.abandoned.load(Ordering::SeqCst)
    }

    /// Gives the indexes up (an erasure or a drop): no new run starts over them, and the
    /// run going on stops at its next chunk of texts; waits (at most `within`) until
    /// none goes on. Whether none does.
    pub(crate) fn abandon(&self, within: Duration) -> bool {
        self.abandoned.store(true, Ordering::SeqCst);
        let deadline = Instant::now() + within;
        while self.busy.load(Ordering::SeqCst) > 0 {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        true
    }

    /// The same, saving and loading its vectors through `backend` too when it keeps
    /// them for every store over it.
    pub(crate) fn sharing(mut self, backend: &Arc<dyn LogBackend>) -> Self {
        self.shared = backend.keeps_vectors().then(|| Arc::clone(backend));
        self
    }

    pub(crate) fn vectors_path(&self) -> Option<std::path::PathBuf> {
        self.dir.as_ref().map(|d| d.join("vectors"))
    }

    /// Saves the vectors beside the persistent text indexes, and through the log backend
    /// that shares them, where they hold batches the saved ones lack, so that opening the
    /// namespace again (or on another node) does not embed everything again. `index` is
    /// the namespace's state (for the batches' times). A failure is logged: the vectors
    /// are never needed.
    pub(crate) fn save_vectors(&self, namespace: &ostrakon_core::Namespace, index: &NamespaceIndex) {
        let path = self.vectors_path();
        if path.is_none() && self.shared.is_none() {
            return;
        }
        // The vectors may hold texts of a batch after `upto` that the indexer is adding
        // now: reopening indexes the batches after `upto` again, which puts the same
        // vectors under the same keys.
        let (upto, vectors) = {
            let progress = lock(&self.progress);
            (progress.vectors_upto, self.vectors())
        };
        let (Some(upto), Some(vectors)) = (upto, vectors) else { return };
        if Seq(upto) > index.last_seq() {
            return;
        }
        let stamp = Stamp::of(index, Seq(upto));
        let warn = |e: &dyn std::fmt::Display| {
            tracing::warn!(namespace = %namespace, error = %e, "search vectors not saved");
        };
        let mut saved = lock(&self.vectors_saved);
        if let Some(path) = path.filter(|_| upto > *saved) {
            match crate::retrieve::saved_vectors::save(
                &path,
                stamp,
                vectors.mode,
                &vectors.model,
                &vectors.alone,
                &vectors.context,
            ) {
                Ok(()) => *saved = upto,
                Err(e) => warn(&e),
            }
        }
        drop(saved);
        let mut shared = lock(&self.vectors_shared);
        if let Some(backend) = self.shared.as_ref().filter(|_| upto > *shared) {
            let sent = crate::retrieve::saved_vectors::encode(
                stamp,
                vectors.mode,
                &vectors.model,
                &vectors.alone,
                &vectors.context,
            )
            .map_err(ostrakon_log::LogError::Io)
            .and_then(|bytes| match bytes {
                Some(bytes) => backend.save_vectors(namespace.as_str(), &bytes),
                None => Ok(()),
            });
            match sent {
                Ok(()) => *shared = upto,
                Err(e) => warn(&e),
            }
        }
    }

    /// The batch the vectors saved on disk hold (0: none saved).
    pub(crate) fn vectors_saved(&self) -> Seq {
        Seq(*lock(&self.vectors_saved))
    }

    pub(crate) fn indexed(&self) -> Seq {
        Seq(lock(&self.progress).indexed)
    }

    /// Every batch up to this one is in the text indexes.
    pub(crate) fn text_indexed(&self) -> Seq {
        Seq(lock(&self.progress).text_indexed)
    }

    /// Marks the batches up to `upto` as in the text indexes.
    pub(crate) fn text_done(&self, upto: Seq) {
        let mut progress = lock(&self.progress);
        progress.text_indexed = progress.text_indexed.max(upto.0);
        drop(progress);
        self.caught_up.notify_all();
    }

    /// Notes that the indexer itself writes the vectors of the batches up to `upto`.
    pub(crate) fn owe(&self, upto: Seq) {
        let mut progress = lock(&self.progress);
        progress.owed = progress.owed.max(upto.0);
    }

    /// The current epoch of the vectors (see [`Progress::epoch`]).
    pub(crate) fn epoch(&self) -> u64 {
        lock(&self.progress).epoch
    }

    /// Starts a new epoch: every vector is about to be written again.
    pub(crate) fn new_epoch(&self) -> u64 {
        let mut progress = lock(&self.progress);
        progress.epoch += 1;
        progress.epoch
    }

    /// Marks the batches up to `upto` searchable once their vectors were written
    /// (`complete`: all of them) — unless written in an `epoch` that is over. `full`:
    /// these were all the namespace's vectors. The vectors are whole when these were
    /// written whole and follow on whole ones (or are all of them).
    pub(crate) fn settle(&self, upto: Seq, complete: bool, full: bool, warning: Option<String>, epoch: u64) {
        let mut progress = lock(&self.progress);
        if progress.epoch != epoch {
            return;
        }
        let follows = full || progress.vectors_upto.is_some_and(|v| v >= progress.indexed);
        progress.vectors_upto = (complete && follows).then(|| upto.0.max(progress.vectors_upto.unwrap_or(0)));
        progress.indexed = progress.indexed.max(upto.0);
        progress.text_indexed = progress.text_indexed.max(upto.0);
        if warning.is_some() {
            progress.warning = warning;
        }
        drop(progress);
        self.caught_up.notify_all();
    }

    /// Texts embedded and to embed in the indexer's current run.
    pub(crate) fn embedding(&self) -> (u64, u64) {
        lock(&self.progress).embedding
    }

    /// The entities whose names or aliases `text` contains as whole words, in text order.
    pub(crate) fn name_matches(&self, index: &NamespaceIndex, text: &str) -> Vec<ostrakon_core::EntityId> {
        let mut found = Vec::new();
        for (e, _) in index.names_in(text) {
            if !found.contains(&e) {
                found.push(e);
            }
        }
        found
    }

    /// An episode's own vector, once indexed (built-in or client-given).
    pub(crate) fn episode_vector(&self, id: ostrakon_core::EpisodeId) -> Option<Vec<f32>> {
        self.vectors()?.alone.get(key(RecordRef::Episode(id)))
    }

    pub(crate) fn vectors(&self) -> Option<Arc<Vectors>> {
        self.vectors.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Waits until batch `seq` is in the text indexes and the vectors the indexer owes
    /// (see [`Progress::owed`]) are written; with `vectors`, until the vectors hold it too.
    pub(crate) fn wait_for(&self, seq: Seq, vectors: bool) -> Result<(), ReadError> {
        let deadline = Instant::now() + INDEX_WAIT;
        let mut progress = lock(&self.progress);
        let held = |p: &Progress| {
            let vectors_needed = if vectors { seq.0 } else { p.owed.min(seq.0) };
            p.text_indexed >= seq.0 && p.indexed >= vectors_needed
        };
        while !held(&progress) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ReadError::IndexBehind { requested: seq, indexed: Seq(progress.indexed) });
            }
            // Wake at least every 100 ms to see whether the caller gave up.
            crate::interrupt::check("waiting for the search indexes")?;
            let left = left.min(std::time::Duration::from_millis(100));
            progress = self.caught_up.wait_timeout(progress, left).unwrap_or_else(PoisonError::into_inner).0;
        }
        Ok(())
    }
}

fn search_err(e: ostrakon_search::SearchError) -> StorageError {
    StorageError::Index(e.to_string())
}
