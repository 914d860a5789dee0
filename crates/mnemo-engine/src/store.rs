//! The `Store` facade: one durable log and one derived index per namespace; writes
//! are validated, given ids, made durable, then applied in log order; reads are pinned
//! at a (validAt, knownAt) and report the basis they were answered at.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard};

use mnemo_core::{
    EVENT_FORMAT, EntityId, Event, Namespace, RecordKind, RecordRef, Seq, TimeZone, Timestamp, TraceState,
};
use mnemo_index::{
    Counts, EntityFilter, EntityView, EpisodeCursor, EpisodeFilter, FactFilter, FactView, Fading,
    NamespaceIndex, Neighborhood, Page, Recallable, Scope, SnapshotCursor, SnapshotPage, View,
};
use mnemo_log::{FileStorage, Log, LogError, MemStorage, Record, Storage, Truncation};

use crate::change::{Change, Receipt};
use crate::checkpoint::{CHECKPOINT_EVERY_BATCHES, CHECKPOINT_EVERY_BYTES, Checkpointed, Checkpoints};
use crate::error::EngineError;
use crate::retrieve::{Job, Retrieval, SearchIndex, StoreOptions};
use crate::write::{Writer, changes_of, prepare};

/// Most changes in one batch.
pub const MAX_BATCH_CHANGES: usize = 100_000;
/// Longest episode text, in bytes.
pub const MAX_TEXT_BYTES: usize = 1 << 20;
/// Largest snapshot page.
pub const MAX_PAGE: usize = 10_000;
/// Deepest neighbourhood.
pub const MAX_DEPTH: u32 = 8;

thread_local! {
    /// Set while background upkeep runs on this thread: what it reads and writes does
    /// not count as use, so that upkeep never keeps an idle namespace open.
    static UPKEEP: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` as background upkeep (see `UPKEEP`).
pub(crate) fn as_upkeep<T>(f: impl FnOnce() -> T) -> T {
    let was = UPKEEP.with(|u| u.replace(true));
    let out = f();
    UPKEEP.with(|u| u.set(was));
    out
}

/// The store's clock: now, in UTC microseconds. Injected so that tests can pin it.
pub type Clock = Arc<dyn Fn() -> Timestamp + Send + Sync>;

/// The wall clock.
pub fn system_clock() -> Clock {
    let log_clock = mnemo_log::system_clock();
    Arc::new(move || Timestamp::from_micros(log_clock()))
}

/// Which system time a read sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum KnownAt {
    /// Everything committed so far.
    #[default]
    Latest,
    /// Batches up to and including this one.
    Seq(Seq),
    /// Batches committed at or before this system time.
    Time(Timestamp),
}

/// Where a read is pinned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ReadAt {
    /// Valid time; the clock when `None`.
    pub valid_at: Option<Timestamp>,
    /// System time; the latest when `Latest`.
    pub known_at: KnownAt,
    /// The clock decay is read at; the clock (now) when `None`. Salience only: it never
    /// changes what is true.
    pub at: Option<Timestamp>,
}

impl ReadAt {
    /// Now, as known now.
    pub fn latest() -> Self {
        ReadAt::default()
    }

    /// Valid time `t`, as known now.
    pub fn valid(t: Timestamp) -> Self {
        ReadAt { valid_at: Some(t), known_at: KnownAt::Latest, at: None }
    }

    /// Valid time `t`, as known after batch `s`.
    pub fn bitemporal(t: Timestamp, s: Seq) -> Self {
        ReadAt { valid_at: Some(t), known_at: KnownAt::Seq(s), at: None }
    }
}

/// What an answer was computed from: pinning a read to it replays it exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Basis {
    /// The last batch visible to the read.
    pub known_at: Seq,
    /// That batch's system time (`None` before the first batch).
    pub system_time: Option<Timestamp>,
    /// The valid time the read resolved at.
    pub valid_at: Timestamp,
    /// The clock when the read ran.
    pub clock: Timestamp,
    /// The clock decay was read at.
    pub at: Timestamp,
}

impl Basis {
    /// The read point that reproduces this answer.
    pub fn point(&self) -> ReadAt {
        ReadAt { at: Some(self.at), ..ReadAt::bitemporal(self.valid_at, self.known_at) }
    }
}

/// An answer with its basis.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer<T> {
    /// How it was computed.
    pub basis: Basis,
    /// What was found.
    pub value: T,
}

/// What consolidation did.
#[derive(Clone, Debug, PartialEq)]
pub struct ConsolidationReport {
    /// The batch that recorded the merges, if any.
    pub seq: Option<Seq>,
    /// Entities merged: (merged away, kept).
    pub merged: Vec<(EntityId, EntityId)>,
    /// Facts that merging made corroborate each other, with their statement counts now.
    pub corroborated: Vec<(mnemo_core::FactId, u32)>,
    /// Records that turned dormant in the window, and when.
    pub dormant: Vec<Fading>,
}

impl Drop for Store {
    /// A clean close checkpoints every open namespace, so the next open replays nothing.
    fn drop(&mut self) {
        self.checkpoint_all();
    }
}

/// A batch as committed, for those who follow the log.
#[derive(Clone, Debug, PartialEq)]
pub struct CommittedBatch {
    /// Its namespace.
    pub namespace: Namespace,
    /// Its position in the namespace's log.
    pub seq: Seq,
    /// Its system time.
    pub system_time: Timestamp,
    /// Its events.
    pub events: Vec<Event>,
}

/// Called with every batch once it is durable and applied, in log order per namespace.
/// It runs on the writer's thread while the namespace's next batches wait: keep it short
/// (hand the batch to a channel).
pub type CommitListener = Arc<dyn Fn(&CommittedBatch) + Send + Sync>;

type Listeners = RwLock<Vec<CommitListener>>;

/// One namespace: its log, its index, its writer, and the batches durable but not yet
/// applied. Lock order: `writer` before `index`; `pending` before `index`; `writer` is
/// never taken while `index` is held.
pub(crate) struct Shard {
    pub(crate) name: Namespace,
    pub(crate) log: Log,
    pub(crate) index: RwLock<NamespaceIndex>,
    /// Full-text and vector indexes, fed by the indexer.
    pub(crate) search: SearchIndex,
    /// Held from validating a batch until the log has given it its seq.
    writer: Mutex<Writer>,
    /// Batches durable in the log, waiting for their predecessors to be applied.
    pending: Mutex<BTreeMap<u64, (Timestamp, Vec<Event>)>>,
    applied: Condvar,
    /// Held by a segmentation run.
    pub(crate) segmenting: Mutex<()>,
    /// When it was last asked for (the store's clock, µs): idle namespaces are closed.
    last_used: AtomicI64,
    /// The last batch that background upkeep has seen: a namespace closes only once
    /// upkeep has caught up with every write (nothing due is left behind).
    pub(crate) maintained: AtomicU64,
    /// The batch and log size of its newest checkpoint (loaded or written).
    checkpointed: Mutex<(Seq, u64)>,
    /// Its state's estimated bytes, and the batch they were estimated at.
    state_bytes: Mutex<(Seq, u64)>,
    /// Stretches in force by (S, predicate), kept for counts at any T (derived, dropped
    /// with the shard): see `analytics.rs`.
    pub(crate) sweeps: crate::analytics::Sweeps,
}

impl Shard {
    /// Its state's estimated bytes (`NamespaceIndex::heap_bytes`), estimated again only
    /// after a batch: the estimate walks every fact.
    fn state_bytes(&self) -> u64 {
        let index = read(&self.index);
        let mut cached = lock(&self.state_bytes);
        if cached.0 != index.last_seq() {
            *cached = (index.last_seq(), index.heap_bytes());
        }
        cached.1 + self.sweeps.heap_bytes() as u64
    }
}

/// Mnemo's store: namespaces of bitemporal memory over a durable log.
pub struct Store {
    storage: Arc<dyn Storage>,
    clock: Clock,
    /// The open namespaces. The others with a log are in `known` only, and open on use.
    shards: RwLock<HashMap<Namespace, Arc<Shard>>>,
    /// Every namespace that has a log.
    known: RwLock<BTreeSet<Namespace>>,
    /// Held while a namespace is opened, so that two uses do not open it twice.
    opening: Mutex<()>,
    /// Namespaces closed while idle, with when upkeep must next look at them (a pending
    /// timed intention, a segment that a quiet thread will close, a consolidation).
    pub(crate) sleeping: Mutex<BTreeMap<Namespace, Option<Timestamp>>>,
    listeners: Listeners,
    pub(crate) retrieval: Arc<Retrieval>,
    /// Namespaces whose log could not be opened, and why: refused, while the others serve.
    damaged: RwLock<BTreeMap<Namespace, String>>,
    /// What recovery cut off each namespace's log (torn tails): found when the store
    /// opened, cut when the namespace first opens.
    truncations: Mutex<BTreeMap<Namespace, Truncation>>,
    /// When background upkeep last ran what it runs on a period.
    pub(crate) schedule: crate::maintain::Schedule,
    /// Where checkpoints go; none for a store without a data directory.
    checkpoints: Option<Checkpoints>,
    /// Held while the store is open: one process per data directory (the directory and
    /// its `LOCK` file, both locked).
    _dir_lock: Option<(std::fs::File, std::fs::File)>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic in another thread cannot leave these structures half-updated in a way a
    // reader could observe (apply is only ever run to completion), so keep going.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(PoisonError::into_inner)
}

impl Store {
    /// Opens (or creates) a store in a directory, replaying every namespace's log.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, EngineError> {
        Self::open_with(dir, StoreOptions::default())
    }

    /// [`Store::open`] with retrieval options (the built-in embedder, HNSW settings).
    pub fn open_with(dir: impl AsRef<Path>, options: StoreOptions) -> Result<Self, EngineError> {
        let dir = dir.as_ref();
        let io = |source: std::io::Error| EngineError::Io { path: dir.display().to_string(), source };
        std::fs::create_dir_all(dir).map_err(io)?;
        // The lock is held on the directory itself, which cannot be swapped under a running
        // store as a file can: with `LOCK` deleted, a second process would create and lock
        // a new one. `LOCK` is locked too, so a build that locks only it is kept out.
        let locked = |file: &std::fs::File| match file.try_lock() {
            Ok(()) => Ok(()),
            Err(std::fs::TryLockError::WouldBlock) => {
                Err(EngineError::Locked { path: dir.display().to_string() })
            }
            Err(std::fs::TryLockError::Error(e)) if e.kind() == std::io::ErrorKind::Unsupported => Ok(()),
            Err(std::fs::TryLockError::Error(e)) => Err(io(e)),
        };
        let dir_file = std::fs::File::open(dir).map_err(io)?;
        locked(&dir_file)?;
        let lock_file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join("LOCK"))
            .map_err(io)?;
        locked(&lock_file)?;
        let storage = FileStorage::new(dir.join("logs"))
            .map_err(|source| EngineError::Log { namespace: String::new(), source })?;
        let mut store = Self::with_storage_and_options(Arc::new(storage), system_clock(), options)?;
        store._dir_lock = Some((dir_file, lock_file));
        store.checkpoints = Some(Checkpoints::new(dir.join("checkpoints")));
        Ok(store)
    }

    /// A store that lives in memory only.
    pub fn in_memory() -> Self {
        Store {
            storage: Arc::new(MemStorage::new()),
            clock: system_clock(),
            shards: RwLock::default(),
            known: RwLock::default(),
            opening: Mutex::default(),
            sleeping: Mutex::default(),
            listeners: Listeners::default(),
            retrieval: Retrieval::new(StoreOptions::default()),
            damaged: RwLock::default(),
            truncations: Mutex::default(),
            schedule: Default::default(),
            checkpoints: None,
            _dir_lock: None,
        }
    }

    /// A store over any storage, with an injected clock; replays every log found.
    pub fn with_storage(storage: Arc<dyn Storage>, clock: Clock) -> Result<Self, EngineError> {
        Self::with_storage_and_options(storage, clock, StoreOptions::default())
    }

    /// [`Store::with_storage`] with retrieval options.
    pub fn with_storage_and_options(
        storage: Arc<dyn Storage>,
        clock: Clock,
        options: StoreOptions,
    ) -> Result<Self, EngineError> {
        let store = Store {
            storage,
            clock,
            shards: RwLock::default(),
            known: RwLock::default(),
            opening: Mutex::default(),
            sleeping: Mutex::default(),
            listeners: Listeners::default(),
            retrieval: Retrieval::new(options),
            damaged: RwLock::default(),
            truncations: Mutex::default(),
            schedule: Default::default(),
            checkpoints: None,
            _dir_lock: None,
        };
        let names =
            store.storage.list().map_err(|source| EngineError::Log { namespace: String::new(), source })?;
        // No namespace is opened here: each is checked (read through once, as opening
        // would, without building anything) so that damage and torn tails are known from
        // the start, and opened on first use.
        let mut known = BTreeSet::new();
        let mut damaged = BTreeMap::new();
        for name in names {
            let ns = Namespace::new("namespace", &name)?;
            let checked =
                store.storage.open_read_only(ns.as_str()).and_then(|file| Log::check(&*file, ns.as_str()));
            match checked {
                Ok(cut) => {
                    if let Some(cut) = cut {
                        lock(&store.truncations).insert(ns.clone(), cut);
                    }
                    known.insert(ns);
                }
                // Storage that cannot read a log without opening it: opening will tell.
                Err(LogError::Io(e)) if e.kind() == std::io::ErrorKind::Unsupported => {
                    known.insert(ns);
                }
                // One damaged log must not take every other namespace down with it.
                Err(e) => {
                    let e = EngineError::Log { namespace: ns.to_string(), source: e };
                    tracing::error!(namespace = %ns, error = %e, "namespace refused: its log cannot be opened");
                    damaged.insert(ns, e.to_string());
                }
            }
        }
        *store.known.write().unwrap_or_else(PoisonError::into_inner) = known;
        *store.damaged.write().unwrap_or_else(PoisonError::into_inner) = damaged;
        Ok(store)
    }

    fn open_shard(&self, ns: &Namespace) -> Result<Shard, EngineError> {
        let log_err = |source: LogError| EngineError::Log { namespace: ns.to_string(), source };
        let started = std::time::Instant::now();
        let file = self.storage.open(ns.as_str()).map_err(log_err)?;
        let clock = Arc::clone(&self.clock);
        let (log, recovery) =
            Log::open(file, ns.as_str(), Arc::new(move || clock().as_micros())).map_err(log_err)?;
        if let Some(cut) = recovery.truncation {
            tracing::warn!(
                namespace = %ns,
                offset = cut.offset,
                bytes = cut.bytes,
                batches = cut.batches,
                file_len_before = cut.file_len_before,
                "log recovery cut a torn tail: damage with no whole frame after it, taken for a write a crash interrupted before it was acknowledged"
            );
            lock(&self.truncations).insert(ns.clone(), cut);
        }
        let read_took = started.elapsed();
        let mut index =
            self.checkpoints.as_ref().and_then(|c| c.load(ns, &recovery.records)).unwrap_or_default();
        let skip = usize::try_from(index.last_seq().0).unwrap_or(usize::MAX);
        // Log bytes up to the checkpoint's batch: what later checkpoints count growth from.
        let tail: u64 = recovery.records.iter().skip(skip).map(Record::frame_len).sum();
        let from_checkpoint =
            (index.last_seq(), if skip > 0 { log.size_bytes().saturating_sub(tail) } else { 0 });
        let loaded = started.elapsed();
        let replayed = recovery.records.len().saturating_sub(skip);
        for record in recovery.records.into_iter().skip(skip) {
            let events = decode(ns, record.seq, &record.payload)?;
            index.apply(Seq(record.seq), Timestamp::from_micros(record.system_time), &events);
        }
        tracing::info!(
            namespace = %ns,
            checkpoint = from_checkpoint.0.0,
            replayed,
            read_ms = read_took.as_millis() as u64,
            loaded_ms = loaded.as_millis() as u64,
            total_ms = started.elapsed().as_millis() as u64,
            "namespace opened"
        );
        let search_dir = self.search_dir(ns, log.size_bytes());
        Ok(Shard {
            name: ns.clone(),
            log,
            writer: Mutex::new(Writer::after(&index)),
            index: RwLock::new(index),
            search: SearchIndex::open(search_dir.as_deref())?,
            pending: Mutex::default(),
            applied: Condvar::new(),
            segmenting: Mutex::new(()),
            last_used: AtomicI64::new(self.now().as_micros()),
            maintained: AtomicU64::new(0),
            checkpointed: Mutex::new(from_checkpoint),
            state_bytes: Mutex::new((Seq(0), 0)),
            sweeps: crate::analytics::Sweeps::default(),
        })
    }

    /// The namespace, opened if it has a log and is closed; `None` if it has no log. A
    /// damaged log is refused ([`EngineError::Damaged`]).
    pub(crate) fn shard(&self, ns: &Namespace) -> Result<Option<Arc<Shard>>, EngineError> {
        if let Some(shard) = self.open_one(ns) {
            return Ok(Some(shard));
        }
        self.check_damaged(ns)?;
        if !read(&self.known).contains(ns) {
            return Ok(None);
        }
        let _opening = lock(&self.opening);
        if let Some(shard) = self.open_one(ns) {
            return Ok(Some(shard));
        }
        self.check_damaged(ns)?;
        match self.open_shard(ns) {
            Ok(shard) => {
                let shard = Arc::new(shard);
                self.retrieval.submit(Job::Rebuild(Arc::clone(&shard)));
                self.shards
                    .write()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(ns.clone(), Arc::clone(&shard));
                lock(&self.sleeping).remove(ns);
                Ok(Some(shard))
            }
            Err(e) => {
                tracing::error!(namespace = %ns, error = %e, "namespace refused: its log cannot be opened");
                self.damaged
                    .write()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(ns.clone(), e.to_string());
                Err(EngineError::Damaged { namespace: ns.to_string(), reason: e.to_string() })
            }
        }
    }

    /// The namespace if it is open, marked as used now (unless upkeep is asking).
    fn open_one(&self, ns: &Namespace) -> Option<Arc<Shard>> {
        let shard = read(&self.shards).get(ns).cloned()?;
        if !UPKEEP.with(std::cell::Cell::get) {
            shard.last_used.store(self.now().as_micros(), Ordering::Relaxed);
        }
        Some(shard)
    }

    fn shard_or_create(&self, ns: &Namespace) -> Result<Arc<Shard>, EngineError> {
        if let Some(shard) = self.shard(ns)? {
            return Ok(shard);
        }
        let _opening = lock(&self.opening);
        if let Some(shard) = self.open_one(ns) {
            return Ok(shard);
        }
        let shard = Arc::new(self.open_shard(ns)?);
        self.shards.write().unwrap_or_else(PoisonError::into_inner).insert(ns.clone(), Arc::clone(&shard));
        self.known.write().unwrap_or_else(PoisonError::into_inner).insert(ns.clone());
        Ok(shard)
    }

    /// The open namespaces, sorted.
    pub(crate) fn open_namespace_names(&self) -> Vec<Namespace> {
        let mut names: Vec<Namespace> = read(&self.shards).keys().cloned().collect();
        names.sort();
        names
    }

    /// Opens every namespace that has a log (recovering it: a torn tail is cut, damage
    /// refused and reported by [`Store::damaged`]); the next upkeep closes those idle.
    pub fn open_all(&self) {
        for ns in self.namespaces() {
            let _ = self.shard(&ns);
        }
    }

    /// How many namespaces are open now (the others with a log open on first use).
    pub fn open_namespaces(&self) -> usize {
        read(&self.shards).len()
    }

    /// Closes the namespaces nobody uses, to free what they hold: those unused for
    /// `idle_micros` (by the store's clock), and past `max_open`, the least recently used.
    /// A namespace closes only when nothing is in flight for it (no reader or writer holds
    /// it, the search indexes have caught up, upkeep has seen its last batch); it reopens
    /// on its next use, answering exactly as before. Returns how many closed.
    pub fn close_idle(&self, now: Timestamp, idle_micros: i64, max_open: usize) -> usize {
        self.close_over(
            now,
            crate::Residency { idle_after_micros: idle_micros, max_open, max_state_bytes: None },
        )
    }

    /// [`Store::close_idle`], and past the residency's memory budget, the least recently
    /// used namespaces until the open ones' state fits in it.
    pub(crate) fn close_over(&self, now: Timestamp, residency: crate::Residency) -> usize {
        let crate::Residency { idle_after_micros: idle_micros, max_open, max_state_bytes } = residency;
        let mut shards = self.shards.write().unwrap_or_else(PoisonError::into_inner);
        let mut resident: u64 = match max_state_bytes {
            Some(_) => shards.values().map(|s| s.state_bytes()).sum(),
            None => 0,
        };
        let mut by_use: Vec<(i64, Namespace)> =
            shards.iter().map(|(ns, s)| (s.last_used.load(Ordering::Relaxed), ns.clone())).collect();
        by_use.sort();
        let mut open = shards.len();
        let mut closed = 0;
        // The budget never closes the namespace used last: one larger than the budget
        // alone would otherwise close and reopen between every two requests.
        let newest = by_use.last().map(|(_, ns)| ns.clone());
        for (used, ns) in by_use {
            let idle = now.as_micros().saturating_sub(used) >= idle_micros;
            let over =
                max_state_bytes.is_some_and(|budget| resident > budget) && Some(&ns) != newest.as_ref();
            if !idle && open <= max_open && !over {
                break;
            }
            let Some(shard) = shards.get(&ns) else { continue };
            let last = read(&shard.index).last_seq();
            let quiet = Arc::strong_count(shard) == 1
                && lock(&shard.pending).is_empty()
                && shard.search.indexed() >= last
                && shard.maintained.load(Ordering::SeqCst) >= last.0;
            if !quiet {
                continue;
            }
            let wake =
                crate::maintain::wake_at(&read(&shard.index), now, self.schedule.last_consolidated(&ns));
            // Reopening loads this instead of replaying the log.
            if let Err(e) = self.write_checkpoint(shard) {
                tracing::warn!(namespace = %ns, error = %e, "checkpoint not written");
            }
            if max_state_bytes.is_some() {
                resident = resident.saturating_sub(shard.state_bytes());
            }
            shards.remove(&ns);
            lock(&self.sleeping).insert(ns, wake);
            open -= 1;
            closed += 1;
        }
        closed
    }

    /// Writes the checkpoint of a namespace that is open and has batches no checkpoint
    /// holds: opening it next loads that state and replays only the log after it. Returns
    /// what was written, or `None` when nothing was (closed, or its checkpoint is current).
    /// Checkpoints are derived: losing one costs a replay, never an answer.
    pub fn checkpoint(&self, ns: &Namespace) -> Result<Option<Checkpointed>, EngineError> {
        match self.open_one(ns) {
            Some(shard) => self.write_checkpoint(&shard),
            None => Ok(None),
        }
    }

    fn write_checkpoint(&self, shard: &Shard) -> Result<Option<Checkpointed>, EngineError> {
        let Some(checkpoints) = &self.checkpoints else { return Ok(None) };
        let mut done = lock(&shard.checkpointed);
        let index = read(&shard.index);
        shard.search.save_vectors(&shard.name, &index);
        if index.last_seq() <= done.0 {
            return Ok(None);
        }
        let written = checkpoints.write(&shard.name, &index).map_err(|source| EngineError::Io {
            path: checkpoints.path(&shard.name).display().to_string(),
            source,
        })?;
        *done = (written.seq, shard.log.size_bytes());
        Ok(Some(written))
    }

    /// Where a namespace's persistent search indexes live: `<data>/search/<namespace>`,
    /// if it has them already or its log (of `log_bytes`) is large enough to want them;
    /// none for a store without a data directory, or one that defers search.
    fn search_dir(&self, ns: &Namespace, log_bytes: u64) -> Option<std::path::PathBuf> {
        let data = self.checkpoints.as_ref()?.data_dir()?;
        let dir = data.join("search").join(ns.as_str());
        let wanted = dir.exists() || log_bytes >= self.retrieval.search_on_disk_from();
        (wanted && !self.retrieval.defers_search()).then_some(dir)
    }

    /// The last batch of the newest checkpoint an open namespace was loaded from or has
    /// written (`Seq(0)`: none); `None` when it is not open.
    pub fn checkpoint_seq(&self, ns: &Namespace) -> Option<Seq> {
        let shard = read(&self.shards).get(ns).cloned()?;
        Some(lock(&shard.checkpointed).0)
    }

    /// Where an open namespace's search indexes are: every batch up to the first is
    /// searchable, and its vectors saved on disk hold the batches up to the second
    /// (`Seq(0)`: none saved); `None` when it is not open.
    pub fn search_batches(&self, ns: &Namespace) -> Option<(Seq, Seq)> {
        let shard = read(&self.shards).get(ns).cloned()?;
        Some((shard.search.indexed(), shard.search.vectors_saved()))
    }

    /// How far a namespace's search indexes are, opening it if need be (its indexes are
    /// then built in the background); `None` when there is no such namespace.
    pub fn indexing(&self, ns: &Namespace) -> Result<Option<crate::Indexing>, EngineError> {
        if self.shard(ns)?.is_none() {
            return Ok(None);
        }
        Ok(self.search_progress(ns))
    }

    /// How far an open namespace's search indexes are; `None` when it is not open.
    pub fn search_progress(&self, ns: &Namespace) -> Option<crate::Indexing> {
        let shard = read(&self.shards).get(ns).cloned()?;
        let latest = read(&shard.index).last_seq();
        let (embedded, to_embed) = shard.search.embedding();
        Some(crate::Indexing { indexed: shard.search.indexed(), latest, embedded, to_embed })
    }

    /// About how many bytes of memory an open namespace's state holds (see
    /// `NamespaceIndex::heap_bytes`; search indexes and the log not included); `None`
    /// when it is not open.
    pub fn state_bytes(&self, ns: &Namespace) -> Option<u64> {
        let shard = read(&self.shards).get(ns).cloned()?;
        Some(shard.state_bytes())
    }

    /// [`Store::checkpoint`] of a namespace, opened first if it is closed.
    pub fn checkpoint_after_open(&self, ns: &Namespace) -> Result<Option<Checkpointed>, EngineError> {
        match self.shard(ns)? {
            Some(shard) => self.write_checkpoint(&shard),
            None => Ok(None),
        }
    }

    /// [`Store::checkpoint`] of every open namespace; failures are logged, not returned
    /// (a checkpoint is never needed). Returns how many were written.
    pub fn checkpoint_all(&self) -> usize {
        // Each checkpoint waits for its own fsync: a thousand namespaces one after the
        // other took seconds of a shutdown's grace, so a few are written at once.
        let names = self.open_namespace_names();
        let workers = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get).clamp(1, 4);
        let next = std::sync::atomic::AtomicUsize::new(0);
        let written = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..workers.min(names.len()) {
                scope.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(ns) = names.get(i) else { break };
                        if self.checkpoint_or_warn(ns) {
                            written.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        written.into_inner()
    }

    fn checkpoint_or_warn(&self, ns: &Namespace) -> bool {
        match self.checkpoint(ns) {
            Ok(written) => written.is_some(),
            Err(e) => {
                tracing::warn!(namespace = %ns, error = %e, "checkpoint not written");
                false
            }
        }
    }

    /// Checkpoints the namespaces that have gone [`CHECKPOINT_EVERY_BATCHES`] batches or
    /// [`CHECKPOINT_EVERY_BYTES`] of log since their last checkpoint (run by upkeep).
    pub(crate) fn checkpoint_due(&self) -> usize {
        let due: Vec<Namespace> = read(&self.shards)
            .iter()
            .filter(|(_, shard)| {
                let (seq, bytes) = *lock(&shard.checkpointed);
                let last = read(&shard.index).last_seq();
                last.0.saturating_sub(seq.0) >= CHECKPOINT_EVERY_BATCHES
                    || (last > seq && shard.log.size_bytes().saturating_sub(bytes) >= CHECKPOINT_EVERY_BYTES)
            })
            .map(|(ns, _)| ns.clone())
            .collect();
        due.iter().filter(|ns| self.checkpoint_or_warn(ns)).count()
    }

    /// Refuses a namespace whose log is damaged.
    pub(crate) fn check_damaged(&self, ns: &Namespace) -> Result<(), EngineError> {
        match read(&self.damaged).get(ns) {
            Some(reason) => Err(EngineError::Damaged { namespace: ns.to_string(), reason: reason.clone() }),
            None => Ok(()),
        }
    }

    /// Namespaces refused because their log could not be opened, with the reason; every
    /// read and write of them fails with [`EngineError::Damaged`].
    pub fn damaged(&self) -> Vec<(Namespace, String)> {
        read(&self.damaged).iter().map(|(ns, why)| (ns.clone(), why.clone())).collect()
    }

    /// What recovery cuts off each namespace's log (torn tails of writes a crash
    /// interrupted, never acknowledged): found when this store opened, and cut when the
    /// namespace is first used (or by [`Store::open_all`]).
    pub fn truncations(&self) -> Vec<(Namespace, Truncation)> {
        lock(&self.truncations).iter().map(|(ns, t)| (ns.clone(), *t)).collect()
    }

    /// The namespaces that have a log (and opened), sorted.
    pub fn namespaces(&self) -> Vec<Namespace> {
        let damaged = read(&self.damaged);
        read(&self.known).iter().filter(|ns| !damaged.contains_key(*ns)).cloned().collect()
    }

    /// The clock's reading now.
    pub fn now(&self) -> Timestamp {
        (self.clock)()
    }

    /// Validates a batch, gives its records ids, appends it durably and applies it.
    /// On `Ok` the batch is durable and visible to every later read. On a validation
    /// error nothing of it is stored. On a log error ([`EngineError::Log`]) the outcome
    /// is unknown: the namespace refuses writes until the store is reopened, and the
    /// batch may or may not be found then (whole, if at all).
    pub fn append(&self, ns: &Namespace, changes: Vec<Change>) -> Result<Receipt, EngineError> {
        self.append_checked(ns, changes, None)
    }

    /// [`Store::append`], refusing the batch unless its events come out as `expected`.
    fn append_checked(
        &self,
        ns: &Namespace,
        changes: Vec<Change>,
        expected: Option<(Seq, &[Event])>,
    ) -> Result<Receipt, EngineError> {
        self.submit_checked(ns, changes, expected)?.finish()
    }

    /// The first half of [`Store::append`]: validates the batch, gives its records ids and
    /// queues it on the log, without waiting for it to be durable. The next batch can be
    /// validated at once (it sees this one's names and ids, as a concurrent writer would),
    /// and batches queued meanwhile share one fsync. The batch is acknowledged, and
    /// applied, by [`Submitted::finish`]; dropping a `Submitted` finishes it too, since a
    /// batch on the log must be applied before any later one is.
    pub fn submit(&self, ns: &Namespace, changes: Vec<Change>) -> Result<Submitted<'_>, EngineError> {
        self.submit_checked(ns, changes, None)
    }

    fn submit_checked(
        &self,
        ns: &Namespace,
        changes: Vec<Change>,
        expected: Option<(Seq, &[Event])>,
    ) -> Result<Submitted<'_>, EngineError> {
        let mismatch = |reason: String| EngineError::ReplayMismatch { namespace: ns.to_string(), reason };
        self.check_damaged(ns)?;
        if changes.len() > MAX_BATCH_CHANGES {
            return Err(EngineError::LimitExceeded {
                field: "changes".into(),
                value: changes.len() as u64,
                max: MAX_BATCH_CHANGES as u64,
            });
        }
        let shard = match self.shard(ns)? {
            Some(shard) => shard,
            None => {
                // A refused first batch must not leave an empty namespace behind.
                let dry = prepare(
                    &mut Writer::after(&NamespaceIndex::new()),
                    &NamespaceIndex::new(),
                    changes.clone(),
                    expected.is_none(),
                )?;
                if let Some((seq, events)) = expected
                    && (seq != Seq(1) || dry.events != events)
                {
                    return Err(mismatch(format!("batch {seq} would be batch 1 of a new namespace")));
                }
                self.shard_or_create(ns)?
            }
        };
        let log_err = |source| EngineError::Log { namespace: ns.to_string(), source };
        let (ticket, events, ids) = {
            let mut writer = lock(&shard.writer);
            let prepared = {
                let index = read(&shard.index);
                prepare(&mut writer, &index, changes, expected.is_none())?
            };
            if let Some((seq, events)) = expected {
                // Under the writer lock nobody else submits, so the next seq is exact.
                let next = shard.log.next_seq();
                if seq.0 != next {
                    return Err(mismatch(format!("batch {seq} would be batch {next} here")));
                }
                if prepared.events != events {
                    return Err(mismatch("its ids do not follow this namespace's".into()));
                }
            }
            let mut payload = vec![EVENT_FORMAT];
            postcard::to_io(&prepared.events, &mut payload)
                .map_err(|e| EngineError::Encode(e.to_string()))?;
            let ticket = shard.log.submit(&payload).map_err(log_err)?;
            writer.submitted(ticket.committed().seq, prepared.effects);
            (ticket, prepared.events, (prepared.ids, prepared.created))
        };
        Ok(Submitted { store: self, pending: Some(Pending { ns: ns.clone(), shard, ticket, events, ids }) })
    }

    /// The read point `at` made concrete: the seq it sees, its valid time and its decay
    /// clock, each fixed now. A request pins its point once and resolves every nested
    /// read at the result, so a batch committed while it runs is not seen by any part.
    pub fn pin(&self, ns: &Namespace, at: ReadAt) -> Result<ReadAt, EngineError> {
        Ok(self.basis(ns, at)?.point())
    }

    /// What a read at `at` would be computed from: its seq, times and clock.
    pub fn basis(&self, ns: &Namespace, at: ReadAt) -> Result<Basis, EngineError> {
        Ok(self.read_basis(ns, at, |_, _| ())?.basis)
    }

    /// Runs `f` on a namespace's index pinned at `at`, and wraps its result with the basis.
    pub(crate) fn read_at<T>(
        &self,
        ns: &Namespace,
        at: ReadAt,
        f: impl FnOnce(&NamespaceIndex, View) -> T,
    ) -> Result<Answer<T>, EngineError> {
        self.read_basis(ns, at, |index, basis| {
            f(index, View { valid_at: basis.valid_at, known_at: basis.known_at })
        })
    }

    /// [`Store::read_at`], handing `f` the whole basis (the decay clock included).
    pub(crate) fn read_search<T>(
        &self,
        ns: &Namespace,
        at: ReadAt,
        f: impl FnOnce(&NamespaceIndex, &Basis) -> T,
    ) -> Result<Answer<T>, EngineError> {
        self.read_basis(ns, at, f)
    }

    fn read_basis<T>(
        &self,
        ns: &Namespace,
        at: ReadAt,
        f: impl FnOnce(&NamespaceIndex, &Basis) -> T,
    ) -> Result<Answer<T>, EngineError> {
        crate::interrupt::check("a read")?;
        let shard = self.shard(ns)?;
        let clock = self.now();
        let valid_at = at.valid_at.unwrap_or(clock);
        let guard = shard.as_ref().map(|s| read(&s.index));
        // An empty index only for a namespace that does not exist: building one for every
        // read cost about 1 % of a point read's CPU.
        let empty;
        let index = match guard.as_deref() {
            Some(index) => index,
            None => {
                empty = NamespaceIndex::new();
                &empty
            }
        };
        let latest = index.last_seq();
        let known_at = match at.known_at {
            KnownAt::Latest => latest,
            KnownAt::Seq(s) if s > latest => return Err(EngineError::NotYetKnown { requested: s, latest }),
            KnownAt::Seq(s) => s,
            KnownAt::Time(t) => index.seq_at(t),
        };
        let at = at.at.unwrap_or(clock);
        let basis = Basis { known_at, system_time: index.system_time(known_at), valid_at, clock, at };
        let value = f(index, &basis);
        Ok(Answer { basis, value })
    }

    /// Facts matching `filter` at `at`: those in force, or every visible one with its status.
    pub fn facts(
        &self,
        ns: &Namespace,
        filter: &FactFilter,
        at: ReadAt,
        scope: Scope,
    ) -> Result<Answer<Vec<FactView>>, EngineError> {
        self.read_at(ns, at, |index, view| index.facts(filter, view, scope))
    }

    /// Every version of the slot `(subject, predicate)` known at S, with statuses at T.
    pub fn history(
        &self,
        ns: &Namespace,
        subject: EntityId,
        predicate: &str,
        at: ReadAt,
    ) -> Result<Answer<Vec<FactView>>, EngineError> {
        self.read_at(ns, at, |index, view| index.history(subject, predicate, view))
    }

    /// One entity as known at S with its facts in force at T.
    pub fn entity(
        &self,
        ns: &Namespace,
        id: EntityId,
        at: ReadAt,
    ) -> Result<Answer<Option<EntityView>>, EngineError> {
        self.read_at(ns, at, |index, view| index.entity_at(id, view))
    }

    /// A page of every fact in force at `at`.
    pub fn snapshot(
        &self,
        ns: &Namespace,
        at: ReadAt,
        after: Option<SnapshotCursor>,
        limit: usize,
    ) -> Result<Answer<SnapshotPage>, EngineError> {
        check_page(limit)?;
        self.read_at(ns, at, |index, view| index.snapshot(view, Scope::InForce, after, limit))
    }

    /// A page of every fact visible at `at`'s S whatever its status at T (retracted ones
    /// included), in the order of [`Store::snapshot`]: the whole history as known then.
    pub fn all_facts(
        &self,
        ns: &Namespace,
        at: ReadAt,
        after: Option<SnapshotCursor>,
        limit: usize,
    ) -> Result<Answer<SnapshotPage>, EngineError> {
        check_page(limit)?;
        self.read_at(ns, at, |index, view| index.snapshot(view, Scope::All, after, limit))
    }

    /// Entities within `depth` hops of `start`, every hop resolved at `at`.
    pub fn neighbors(
        &self,
        ns: &Namespace,
        start: EntityId,
        depth: u32,
        at: ReadAt,
    ) -> Result<Answer<Neighborhood>, EngineError> {
        check_limit("depth", u64::from(depth), u64::from(MAX_DEPTH))?;
        self.read_at(ns, at, |index, view| index.neighbors(start, depth, view))
    }

    /// A record's trace as known at S, read at the decay clock.
    pub fn trace(
        &self,
        ns: &Namespace,
        record: RecordRef,
        at: ReadAt,
    ) -> Result<Answer<Option<TraceState>>, EngineError> {
        self.read_basis(ns, at, |index, basis| {
            index.trace(record, basis.known_at).map(|(trace, profile)| trace.state(&profile, basis.at))
        })
    }

    /// When a record was recalled, as known at S and up to the decay clock, in order.
    pub fn recall_history(
        &self,
        ns: &Namespace,
        record: RecordRef,
        at: ReadAt,
    ) -> Result<Answer<Vec<Timestamp>>, EngineError> {
        self.read_basis(ns, at, |index, basis| {
            index
                .trace(record, basis.known_at)
                .map(|(trace, _)| trace.recalls.into_iter().filter(|t| *t <= basis.at).collect())
                .unwrap_or_default()
        })
    }

    /// What an agent might bring up unprompted: records that are not dormant at the decay
    /// clock, by retention, at most `limit`.
    pub fn recallable(
        &self,
        ns: &Namespace,
        at: ReadAt,
        kinds: &[RecordKind],
        limit: usize,
    ) -> Result<Answer<Vec<Recallable>>, EngineError> {
        check_page(limit)?;
        self.read_basis(ns, at, |index, basis| {
            let view = View { valid_at: basis.valid_at, known_at: basis.known_at };
            index.recallable(view, basis.at, kinds, limit)
        })
    }

    /// Records that turn dormant within `[from, to)` unless recalled, by when.
    pub fn forecast(
        &self,
        ns: &Namespace,
        from: Timestamp,
        to: Timestamp,
        at: ReadAt,
        kinds: &[RecordKind],
    ) -> Result<Answer<Vec<Fading>>, EngineError> {
        check_window("from..to", Some(from), Some(to))?;
        self.read_at(ns, at, |index, view| index.forecast(view, from, to, kinds))
    }

    /// Consolidation ("sleep"): merges entities that are the same (equal names or aliases,
    /// agreeing kinds) with `EntitiesMerged` events in one batch, and reports what it merged,
    /// the facts that merging made corroborate each other, and the records that turned
    /// dormant between `since` and `now`. Nothing in the past is edited; with nothing to
    /// merge it writes nothing, so running it again changes nothing.
    pub fn consolidate(
        &self,
        ns: &Namespace,
        now: Timestamp,
        since: Timestamp,
    ) -> Result<ConsolidationReport, EngineError> {
        let (before, merges) = self.with_index(ns, |index| (index.last_seq(), index.merge_candidates()));
        let mut seq = None;
        let mut corroborated = Vec::new();
        if !merges.is_empty() {
            let changes = merges.iter().map(|&(from, into)| Change::MergeEntities { from, into }).collect();
            let receipt = self.append(ns, changes)?;
            seq = Some(receipt.seq);
            // Facts of the merged entities that now have more statements behind them.
            corroborated = self.with_index(ns, |index| {
                let count = |e: EntityId, s: Seq| {
                    let view = View { valid_at: now, known_at: s };
                    let filter = FactFilter { subject: Some(e), ..FactFilter::default() };
                    index
                        .facts(&filter, view, Scope::All)
                        .into_iter()
                        .map(|f| (f.fact.id, f.corroborations))
                        .collect::<HashMap<_, _>>()
                };
                let mut out = Vec::new();
                let kept: std::collections::BTreeSet<EntityId> =
                    merges.iter().map(|(_, into)| *into).collect();
                for into in kept {
                    let mut earlier = count(into, before);
                    for (from, _) in merges.iter().filter(|(_, i)| *i == into) {
                        earlier.extend(count(*from, before));
                    }
                    for (fact, n) in count(into, receipt.seq) {
                        if earlier.get(&fact).is_some_and(|m| *m < n) {
                            out.push((fact, n));
                        }
                    }
                }
                out.sort();
                out
            });
        }
        // Conversations that moved on or went quiet join the topic network.
        self.segment(ns, false)?;
        let kinds = [RecordKind::Fact, RecordKind::Entity, RecordKind::Episode];
        let dormant = if since < now {
            self.forecast(
                ns,
                since,
                now,
                ReadAt { valid_at: Some(now), known_at: KnownAt::Latest, at: Some(now) },
                &kinds,
            )?
            .value
        } else {
            Vec::new()
        };
        Ok(ConsolidationReport { seq, merged: merges, corroborated, dormant })
    }

    /// Calls `listener` with every batch committed from now on, in log order per namespace.
    pub fn on_commit(&self, listener: CommitListener) {
        self.listeners.write().unwrap_or_else(PoisonError::into_inner).push(listener);
    }

    /// Every batch of a namespace's log, read back from durable storage, in order.
    pub fn export(&self, ns: &Namespace) -> Result<Vec<CommittedBatch>, EngineError> {
        let Some(shard) = self.shard(ns)? else {
            return Ok(Vec::new());
        };
        let records =
            shard.log.records().map_err(|source| EngineError::Log { namespace: ns.to_string(), source })?;
        records
            .into_iter()
            .map(|r| {
                Ok(CommittedBatch {
                    namespace: ns.clone(),
                    seq: Seq(r.seq),
                    system_time: Timestamp::from_micros(r.system_time),
                    events: decode(ns, r.seq, &r.payload)?,
                })
            })
            .collect()
    }

    /// Appends an exported batch again with the same ids, as the next batch of `ns`: the
    /// events go through the same validation as any write and must come out identical,
    /// which holds when a whole export is replayed, in order, into an empty namespace.
    /// The store gives the batch a new system time.
    pub fn replay(&self, ns: &Namespace, seq: Seq, events: &[Event]) -> Result<Receipt, EngineError> {
        let changes = self.with_index(ns, |index| changes_of(index, events));
        self.append_checked(ns, changes, Some((seq, events)))
    }

    /// Entities known at `at` matching `filter`, by id, a page of at most `limit`.
    pub fn entities(
        &self,
        ns: &Namespace,
        filter: &EntityFilter,
        at: ReadAt,
        after: Option<EntityId>,
        limit: usize,
    ) -> Result<Answer<Page<(Seq, mnemo_core::Entity)>>, EngineError> {
        check_page(limit)?;
        self.read_at(ns, at, |index, view| index.entities(filter, view.known_at, after, limit))
    }

    /// Episodes known at `at` matching `filter`, by (occurred_at, id), a page of at most `limit`.
    pub fn episodes(
        &self,
        ns: &Namespace,
        filter: &EpisodeFilter,
        at: ReadAt,
        after: Option<EpisodeCursor>,
        limit: usize,
    ) -> Result<Answer<Page<(Seq, mnemo_core::Episode)>>, EngineError> {
        check_page(limit)?;
        check_window("from..to", filter.from, filter.to)?;
        self.read_at(ns, at, |index, view| index.episodes(filter, view.known_at, after, limit))
    }

    /// Runs `f` on a namespace's latest index: for tests and tools that look inside
    /// (feature `inspect`). The protocol crates use the typed reads, so that nothing of
    /// the index crosses the engine's API.
    #[cfg(feature = "inspect")]
    pub fn inspect<T>(&self, ns: &Namespace, f: impl FnOnce(&NamespaceIndex) -> T) -> T {
        self.with_index(ns, f)
    }

    /// Runs `f` on a namespace's latest index (lookups by name, counts, configuration).
    pub(crate) fn with_index<T>(&self, ns: &Namespace, f: impl FnOnce(&NamespaceIndex) -> T) -> T {
        // A damaged namespace reads as empty here; the reads and writes that take its
        // answer from here refuse it with their own check.
        match self.shard(ns).ok().flatten() {
            Some(shard) => f(&read(&shard.index)),
            None => f(&NamespaceIndex::new()),
        }
    }

    /// The namespace's time zone (UTC until configured).
    pub fn time_zone(&self, ns: &Namespace) -> TimeZone {
        self.with_index(ns, |index| index.config().time_zone)
    }

    /// Reads a time as a client wrote it (RFC 3339, a local date-time, a date or a
    /// partial date), placing dates in the namespace's time zone.
    pub fn parse_time(&self, ns: &Namespace, field: &str, value: &str) -> Result<Timestamp, EngineError> {
        Ok(Timestamp::parse(field, value, &self.time_zone(ns))?)
    }

    /// Record counts of a namespace.
    pub fn counts(&self, ns: &Namespace) -> Counts {
        self.with_index(ns, NamespaceIndex::counts)
    }

    /// Size of a namespace's log in bytes.
    pub fn log_size(&self, ns: &Namespace) -> u64 {
        self.shard(ns).ok().flatten().map_or(0, |s| s.log.size_bytes())
    }
}

/// A batch [`Store::submit`] queued on the log: finish it to have it acknowledged.
#[must_use = "a submitted batch is acknowledged only by `finish`"]
pub struct Submitted<'s> {
    store: &'s Store,
    pending: Option<Pending>,
}

struct Pending {
    ns: Namespace,
    shard: Arc<Shard>,
    ticket: mnemo_log::Ticket,
    events: Vec<Event>,
    ids: (Vec<Option<crate::RecordId>>, Vec<EntityId>),
}

impl Submitted<'_> {
    /// Waits until the batch is durable (leading a group commit of every batch queued
    /// by then), applies it in log order and acknowledges it, as [`Store::append`] does.
    pub fn finish(mut self) -> Result<Receipt, EngineError> {
        let Some(pending) = self.pending.take() else {
            // Unreachable: `finish` takes the batch by value, and only `drop` runs after it.
            return Err(EngineError::Index("a submitted batch was finished twice".into()));
        };
        self.store.finish(pending)
    }
}

impl Drop for Submitted<'_> {
    fn drop(&mut self) {
        if let Some(pending) = self.pending.take() {
            // Its outcome has nobody to go to; a log error already fails the namespace.
            let _ = self.store.finish(pending);
        }
    }
}

impl Store {
    fn finish(&self, pending: Pending) -> Result<Receipt, EngineError> {
        let Pending { ns, shard, ticket, events, ids } = pending;
        let log_err = |source| EngineError::Log { namespace: ns.to_string(), source };
        // Outside the writer lock, so that concurrent batches share one fsync.
        let committed = shard.log.wait(ticket).map_err(log_err)?;
        let system_time = Timestamp::from_micros(committed.system_time);
        shard.publish(committed.seq, system_time, events, &self.listeners, &self.retrieval);
        let (ids, created) = ids;
        Ok(Receipt { seq: Seq(committed.seq), system_time, ids, created })
    }
}

impl Shard {
    /// Applies a durable batch in log order, then waits until it is visible. Batches
    /// committed by a group may come back out of order; each waits for its
    /// predecessors, and whoever holds the lock applies every batch that is ready.
    fn publish(
        self: &Arc<Self>,
        seq: u64,
        system_time: Timestamp,
        events: Vec<Event>,
        listeners: &Listeners,
        retrieval: &Retrieval,
    ) {
        let mut pending = lock(&self.pending);
        pending.insert(seq, (system_time, events));
        let mut applied_now = Vec::new();
        {
            let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
            loop {
                let next = index.last_seq().0 + 1;
                let Some((time, events)) = pending.remove(&next) else {
                    break;
                };
                index.apply(Seq(next), time, &events);
                applied_now.push(CommittedBatch {
                    namespace: self.name.clone(),
                    seq: Seq(next),
                    system_time: time,
                    events,
                });
            }
        }
        // Still under `pending`: listeners see batches in log order, once each.
        let listeners = read(listeners).clone();
        for batch in &applied_now {
            for listener in &listeners {
                listener(batch);
            }
        }
        for batch in applied_now {
            retrieval.submit(Job::Batch(Arc::clone(self), batch.seq, batch.events));
        }
        let applied = read(&self.index).last_seq().0;
        lock(&self.writer).applied(applied);
        self.applied.notify_all();
        // The log fails every later append once one fails, so a gap before `seq` is
        // always a batch that is durable and about to be published.
        while read(&self.index).last_seq().0 < seq {
            pending = self.applied.wait(pending).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

pub(crate) fn decode(ns: &Namespace, seq: u64, payload: &[u8]) -> Result<Vec<Event>, EngineError> {
    let err = |reason: String| EngineError::Decode { namespace: ns.to_string(), seq, reason };
    match payload.split_first() {
        Some((&EVENT_FORMAT, body)) => postcard::from_bytes(body).map_err(|e| err(e.to_string())),
        Some((version, _)) => Err(err(format!("unsupported event format {version}"))),
        None => Err(err("empty batch".into())),
    }
}

/// A time window `[from, to)` must not be empty: an inverted window is a mistake, not a
/// question with an empty answer (episodes, forecast and search agree on it).
pub(crate) fn check_window(
    field: &str,
    from: Option<Timestamp>,
    to: Option<Timestamp>,
) -> Result<(), EngineError> {
    match (from, to) {
        (Some(from), Some(to)) if from >= to => Err(mnemo_core::CoreError::InvalidInterval {
            field: field.into(),
            from: from.to_string(),
            to: to.to_string(),
        }
        .into()),
        _ => Ok(()),
    }
}

/// A page holds 1 to `MAX_PAGE` items: an empty page would read as the last one.
fn check_page(limit: usize) -> Result<(), EngineError> {
    if limit == 0 {
        return Err(EngineError::LimitExceeded { field: "limit".into(), value: 0, max: MAX_PAGE as u64 });
    }
    check_limit("limit", limit as u64, MAX_PAGE as u64)
}

fn check_limit(field: &str, value: u64, max: u64) -> Result<(), EngineError> {
    if value > max {
        return Err(EngineError::LimitExceeded { field: field.into(), value, max });
    }
    Ok(())
}
