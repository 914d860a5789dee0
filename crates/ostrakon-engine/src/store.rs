//! The `Store` facade: one durable log and one derived index per namespace, opened on
//! use and closed when idle; the typed reads (`reads.rs`), the write path (`append.rs`)
//! and the other capabilities are its methods, each in its own file.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, RwLock};

use ostrakon_core::{Namespace, Seq, Timestamp};
use ostrakon_log::{
    FileStorage, LogBackend, LogError, MemStorage, Record, Storage, StorageBackend, Truncation,
};

use crate::error::open::OpenError;
use crate::error::storage::StorageError;
use crate::maintain::checkpoint::{CHECKPOINT_EVERY_BATCHES, CHECKPOINT_EVERY_BYTES, Checkpointed};
use crate::options::{Residency, StoreOptions};
use crate::read::point::{Clock, system_clock};
use crate::retrieve::index::Indexing;
use crate::retrieve::index::SearchIndex;
use crate::retrieve::indexer::{Job, Retrieval};
use crate::shard::{Listeners, Shard, UPKEEP};
use crate::sync::{lock, read};
use crate::write::codec::decode;
use crate::write::writer::Writer;

impl Drop for Store {
    /// A clean close checkpoints every open namespace, so the next open replays nothing.
    fn drop(&mut self) {
        self.checkpoint_all();
    }
}

/// Ostrakon's store: namespaces of bitemporal memory over a durable log.
pub struct Store {
    /// Where the namespaces' logs and checkpoints are kept.
    pub(crate) backend: Arc<dyn LogBackend>,
    pub(crate) clock: Clock,
    /// The open namespaces. The others with a log are in `known` only, and open on use.
    pub(crate) shards: RwLock<HashMap<Namespace, Arc<Shard>>>,
    /// Every namespace that has a log.
    pub(crate) known: RwLock<BTreeSet<Namespace>>,
    /// Held while a namespace is opened, so that two uses do not open it twice.
    pub(crate) opening: Mutex<()>,
    /// Namespaces whose log an erasure is rewriting: they open again once it is done
    /// (`compacted` is notified), while every other namespace opens as usual.
    pub(crate) compacting: Mutex<BTreeSet<Namespace>>,
    /// Namespaces dropped while this store ran, until their name is used again.
    pub(crate) dropped: Mutex<BTreeSet<Namespace>>,
    pub(crate) compacted: Condvar,
    /// Namespaces closed while idle, with when upkeep must next look at them (a pending
    /// timed intention, a segment that a quiet thread will close, a consolidation).
    pub(crate) sleeping: Mutex<BTreeMap<Namespace, Option<Timestamp>>>,
    pub(crate) listeners: Listeners,
    pub(crate) retrieval: Arc<Retrieval>,
    /// Namespaces whose log could not be opened, and why: refused, while the others serve.
    pub(crate) damaged: RwLock<BTreeMap<Namespace, String>>,
    /// What recovery cut off each namespace's log (torn tails): found when the store
    /// opened, cut when the namespace first opens.
    pub(crate) truncations: Mutex<BTreeMap<Namespace, Truncation>>,
    /// When background upkeep last ran what it runs on a period.
    pub(crate) schedule: crate::maintain::schedule::Schedule,
    /// The data directory (search indexes live under it); none for a store in memory.
    pub(crate) data_dir: Option<std::path::PathBuf>,
    /// Held while the store is open: one process per data directory (the directory and
    /// its `LOCK` file, both locked).
    pub(crate) _dir_lock: Option<(std::fs::File, std::fs::File)>,
    /// Set when upkeep must stop ([`Store::stop_upkeep`]).
    pub(crate) upkeep_stopped: std::sync::atomic::AtomicBool,
}

impl Store {
    /// Opens (or creates) a store in a directory, replaying every namespace's log.
    /// ```
    /// use ostrakon_engine::core::Namespace;
    /// use ostrakon_engine::{Change, NewEntity, Store};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let ns = Namespace::new("namespace", "demo")?;
    /// {
    ///     let store = Store::open(dir.path())?;
    ///     let ada = NewEntity { name: "Ada".into(), ..NewEntity::default() };
    ///     store.append(&ns, vec![Change::DeclareEntity(ada)])?;
    /// }
    /// // Opened again, the store holds every acknowledged batch.
    /// let store = Store::open(dir.path())?;
    /// assert_eq!(store.counts(&ns)?.entities, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, OpenError> {
        Self::open_with(dir, StoreOptions::default())
    }

    /// [`Store::open`] with retrieval options (the built-in embedder, HNSW settings).
    pub fn open_with(dir: impl AsRef<Path>, options: StoreOptions) -> Result<Self, OpenError> {
        let dir = dir.as_ref();
        let io = |source: std::io::Error| StorageError::Io { path: dir.display().to_string(), source };
        std::fs::create_dir_all(dir).map_err(io)?;
        // The lock is held on the directory itself, which cannot be swapped under a running
        // store as a file can: with `LOCK` deleted, a second process would create and lock
        // a new one. `LOCK` is locked too, so a build that locks only it is kept out.
        let locked = |file: &std::fs::File| match ostrakon_log::lock_exclusive(file) {
            Ok(true) => Ok(()),
            Ok(false) => Err(OpenError::Locked { path: dir.display().to_string() }),
            Err(e) => Err(io(e).into()),
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
            .map_err(|source| StorageError::Log { namespace: String::new(), source })?;
        let backend = StorageBackend::new(Arc::new(storage), Some(dir.join("checkpoints")));
        let mut store = Self::with_backend(Arc::new(backend), system_clock(), options)?;
        store._dir_lock = Some((dir_file, lock_file));
        store.data_dir = Some(dir.to_owned());
        Ok(store)
    }

    /// A store that lives in memory only.
    /// ```
    /// use ostrakon_engine::core::Namespace;
    /// use ostrakon_engine::{Change, NewEntity, Store};
    ///
    /// // Nothing is kept once it is dropped: for tests and embedding in a short-lived process.
    /// let store = Store::in_memory();
    /// let ns = Namespace::new("namespace", "scratch")?;
    /// store.append(&ns, vec![Change::DeclareEntity(NewEntity { name: "Ada".into(), ..NewEntity::default() })])?;
    /// assert_eq!(store.counts(&ns)?.entities, 1);
    /// assert_eq!(store.namespaces(), [ns]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn in_memory() -> Self {
        Store {
            backend: Arc::new(StorageBackend::new(Arc::new(MemStorage::new()), None)),
            clock: system_clock(),
            shards: RwLock::default(),
            known: RwLock::default(),
            opening: Mutex::default(),
            compacting: Mutex::default(),
            dropped: Mutex::default(),
            compacted: Condvar::new(),
            sleeping: Mutex::default(),
            listeners: Listeners::default(),
            retrieval: Retrieval::new(StoreOptions::default()),
            damaged: RwLock::default(),
            truncations: Mutex::default(),
            schedule: Default::default(),
            data_dir: None,
            _dir_lock: None,
            upkeep_stopped: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// A store over any storage, with an injected clock; replays every log found.
    pub fn with_storage(storage: Arc<dyn Storage>, clock: Clock) -> Result<Self, OpenError> {
        Self::with_storage_and_options(storage, clock, StoreOptions::default())
    }

    /// [`Store::with_storage`] with retrieval options.
    pub fn with_storage_and_options(
        storage: Arc<dyn Storage>,
        clock: Clock,
        options: StoreOptions,
    ) -> Result<Self, OpenError> {
        Self::with_backend(Arc::new(StorageBackend::new(storage, None)), clock, options)
    }

    /// A store over any log backend (the file log, a replicated stream, logs in memory
    /// shared by several stores), with an injected clock; checks every log found.
    pub fn with_backend(
        backend: Arc<dyn LogBackend>,
        clock: Clock,
        options: StoreOptions,
    ) -> Result<Self, OpenError> {
        let store = Store {
            backend,
            clock,
            shards: RwLock::default(),
            known: RwLock::default(),
            opening: Mutex::default(),
            compacting: Mutex::default(),
            dropped: Mutex::default(),
            compacted: Condvar::new(),
            sleeping: Mutex::default(),
            listeners: Listeners::default(),
            retrieval: Retrieval::new(options),
            damaged: RwLock::default(),
            truncations: Mutex::default(),
            schedule: Default::default(),
            data_dir: None,
            _dir_lock: None,
            upkeep_stopped: std::sync::atomic::AtomicBool::new(false),
        };
        let names =
            store.backend.list().map_err(|source| StorageError::Log { namespace: String::new(), source })?;
        // No namespace is opened here: each is checked (read through once, as opening
        // would, without building anything) so that damage and torn tails are known from
        // the start, and opened on first use.
        let mut known = BTreeSet::new();
        let mut damaged = BTreeMap::new();
        for name in names {
            let ns = Namespace::new("namespace", &name).map_err(|e| StorageError::Damaged {
                namespace: name.clone(),
                reason: format!("the log's name is not a namespace's: {e}"),
            })?;
            let checked = store.backend.check(ns.as_str());
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
                    let e = StorageError::Log { namespace: ns.to_string(), source: e };
                    tracing::error!(namespace = %ns, error = %e, "namespace refused: its log cannot be opened");
                    damaged.insert(ns, e.to_string());
                }
            }
        }
        // A checkpoint whose log is gone: the log was deleted behind the store's back.
        // Served as it is, the namespace would answer as if it never were.
        let checkpointed = store.backend.checkpointed().unwrap_or_default();
        for name in checkpointed.iter().filter(|_| !store.backend.shared()) {
            let Ok(ns) = Namespace::new("namespace", name) else { continue };
            if known.contains(&ns) || damaged.contains_key(&ns) {
                continue;
            }
            let Some((_, seq)) = crate::maintain::checkpoint::read_blob(&*store.backend, &ns) else {
                continue;
            };
            let why = lost_log(seq, 0);
            tracing::error!(namespace = %ns, error = %why, "namespace refused: its log is gone");
            damaged.insert(ns, why);
        }
        *store.known.write().unwrap_or_else(PoisonError::into_inner) = known;
        *store.damaged.write().unwrap_or_else(PoisonError::into_inner) = damaged;
        Ok(store)
    }

    /// Opens a namespace from its checkpoint and log. An erasure whose content the log
    /// still holds (a crash came before its compaction, or another node made it) is
    /// compacted first; a few times at most, since on a shared log another erasure may
    /// come meanwhile.
    pub(crate) fn open_shard(&self, ns: &Namespace) -> Result<Shard, StorageError> {
        for _ in 0..crate::limits::MAX_OPEN_COMPACTIONS {
            match self.open_shard_once(ns)? {
                Ok(shard) => return Ok(shard),
                Err(records) => {
                    tracing::warn!(namespace = %ns, "an erasure was not compacted; compacting before opening");
                    self.compact_log(ns, records)?;
                }
            }
        }
        Err(StorageError::Unavailable {
            namespace: ns.to_string(),
            reason: "erasures kept coming while the namespace opened; retry".into(),
        })
    }

    /// [`Store::open_shard`] once: the shard, or the whole log when an erasure must be
    /// compacted before it serves.
    fn open_shard_once(&self, ns: &Namespace) -> Result<Result<Shard, Vec<Record>>, StorageError> {
        let log_err = |source: LogError| StorageError::of_log(ns, source);
        let started = std::time::Instant::now();
        let clock = Arc::clone(&self.clock);
        let clock: ostrakon_log::Clock = Arc::new(move || clock().as_micros());
        // The checkpoint first: a backend that can seek then reads only the log after it.
        let blob = if self.backend.keeps_checkpoints() {
            crate::maintain::checkpoint::read_blob(&*self.backend, ns)
        } else {
            None
        };
        let from = blob.as_ref().map_or(0, |(_, seq)| *seq);
        let (mut log, mut recovery) =
            self.backend.open_from(ns.as_str(), Arc::clone(&clock), from).map_err(log_err)?;
        if from > log.last_seq() {
            // The log is the truth, and it lacks batches a checkpoint was made of. With no
            // batch at all its file was deleted behind the store's back: served, the
            // namespace would answer as if it never was, so it is refused until repaired.
            // Shorter, recovery cut a damaged tail: the log is served, and said to be.
            if log.last_seq() == 0 {
                return Err(StorageError::Damaged { namespace: ns.to_string(), reason: lost_log(from, 0) });
            }
            tracing::warn!(namespace = %ns, error = %lost_log(from, log.last_seq()), "the log lacks batches its checkpoint holds; serving the log");
        }
        let mut loaded =
            blob.and_then(|(bytes, _)| crate::maintain::checkpoint::load(ns, &bytes, &recovery.records));
        if loaded.is_none() && recovery.records.first().is_some_and(|r| r.seq > 1) {
            // Read from a checkpoint that turned out unusable: the whole log, then.
            (log, recovery) = self.backend.open(ns.as_str(), clock).map_err(log_err)?;
            loaded = None;
        }
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
        let mut index = loaded.unwrap_or_default();
        let held = index.last_seq().0;
        // Log bytes up to the checkpoint's batch: what later checkpoints count growth from.
        let tail: u64 = recovery.records.iter().filter(|r| r.seq > held).map(Record::frame_len).sum();
        let from_checkpoint =
            (index.last_seq(), if held > 0 { log.size_bytes().saturating_sub(tail) } else { 0 });
        let loaded = started.elapsed();
        let replayed = recovery.records.iter().filter(|r| r.seq > held).count();
        for record in recovery.records.into_iter().filter(|r| r.seq > held) {
            let events = decode(ns, record.seq, &record.payload)?;
            index
                .apply(Seq(record.seq), Timestamp::from_micros(record.system_time), &events)
                .map_err(|e| StorageError::Damaged { namespace: ns.to_string(), reason: e.to_string() })?;
        }
        if index.erasure_pending() {
            return Ok(Err(log.read_after(0).map_err(log_err)?));
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
        let refusals = log.refusals();
        Ok(Ok(Shard {
            name: ns.clone(),
            log,
            writer: Mutex::new(Writer::after(&index, refusals)),
            index: RwLock::new(index),
            search: SearchIndex::open(search_dir.as_deref())?.sharing(&self.backend),
            pending: Mutex::default(),
            applied: Condvar::new(),
            segmenting: Mutex::new(()),
            last_used: AtomicI64::new(self.now().as_micros()),
            maintained: AtomicU64::new(0),
            checkpointed: Mutex::new(from_checkpoint),
            state_bytes: Mutex::new((Seq(0), 0)),
            sweeps: crate::read::sweeps::Sweeps::default(),
            retired: std::sync::atomic::AtomicBool::new(false),
            damage: Mutex::new(None),
        }))
    }

    /// The namespace, opened if it has a log and is closed; `None` if it has no log. A
    /// damaged log is refused ([`StorageError::Damaged`]).
    pub(crate) fn shard(&self, ns: &Namespace) -> Result<Option<Arc<Shard>>, StorageError> {
        if let Some(shard) = self.open_one(ns) {
            return Ok(Some(shard));
        }
        self.check_damaged(ns)?;
        let known = read(&self.known).contains(ns);
        // On a shared log another node may have made the namespace since: look.
        if !known && !self.backend.shared() {
            return Ok(None);
        }
        let _opening = self.opening_lock(ns);
        if let Some(shard) = self.open_one(ns) {
            return Ok(Some(shard));
        }
        self.check_damaged(ns)?;
        self.make_room(ns)?;
        match self.open_shard(ns) {
            Ok(shard) if !known && shard.log.last_seq() == 0 => Ok(None),
            // Unreachable now is not damage: the next use tries again.
            Err(e @ StorageError::Unavailable { .. }) => Err(e),
            Ok(shard) => {
                if !known {
                    self.known.write().unwrap_or_else(PoisonError::into_inner).insert(ns.clone());
                }
                let shard = Arc::new(shard);
                if shard.log.last_seq() > 0 {
                    lock(&self.dropped).remove(ns);
                }
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
                Err(StorageError::Damaged { namespace: ns.to_string(), reason: e.to_string() })
            }
        }
    }

    /// The lock under which `ns` is opened, taken once no erasure is compacting it.
    pub(crate) fn opening_lock(&self, ns: &Namespace) -> std::sync::MutexGuard<'_, ()> {
        loop {
            self.wait_compacted(ns);
            let opening = lock(&self.opening);
            if !lock(&self.compacting).contains(ns) {
                return opening;
            }
        }
    }

    /// Waits until no erasure is compacting `ns`.
    pub(crate) fn wait_compacted(&self, ns: &Namespace) {
        let mut compacting = lock(&self.compacting);
        while compacting.contains(ns) {
            compacting = self.compacted.wait(compacting).unwrap_or_else(PoisonError::into_inner);
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

    pub(crate) fn shard_or_create(&self, ns: &Namespace) -> Result<Arc<Shard>, StorageError> {
        if let Some(shard) = self.shard(ns)? {
            return Ok(shard);
        }
        let _opening = self.opening_lock(ns);
        if let Some(shard) = self.open_one(ns) {
            return Ok(shard);
        }
        self.make_room(ns)?;
        let shard = Arc::new(self.open_shard(ns)?);
        // Indexed as an opened one is: its vectors are then whole from the start (and
        // saved with its checkpoints), and on a shared log what another node wrote
        // meanwhile is indexed too.
        self.retrieval.submit(Job::Rebuild(Arc::clone(&shard)));
        self.shards.write().unwrap_or_else(PoisonError::into_inner).insert(ns.clone(), Arc::clone(&shard));
        self.known.write().unwrap_or_else(PoisonError::into_inner).insert(ns.clone());
        lock(&self.dropped).remove(ns);
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

    /// Before `ns` opens (under the opening lock): with as many namespaces open as the
    /// residency allows, the least recently used that nothing is in flight for is closed
    /// now — the cap holds at every open, not only when upkeep next runs (a burst of
    /// opens between two upkeeps opened thousands, and ran out of file descriptors).
    /// When every open one stays in use for [`crate::limits::MAX_ROOM_WAIT`], the open is
    /// refused as `Unavailable` (retry).
    fn make_room(&self, ns: &Namespace) -> Result<(), StorageError> {
        let max_open = self.retrieval.residency().max_open.max(1);
        if read(&self.shards).len() < max_open {
            return Ok(());
        }
        let residency =
            Residency { idle_after_micros: i64::MAX, max_open: max_open - 1, max_state_bytes: None };
        // A namespace just opened is in use a moment longer (its indexes being built):
        // room is waited for, a bounded time.
        let deadline = std::time::Instant::now() + crate::limits::MAX_ROOM_WAIT;
        let open = loop {
            self.close_over(self.now(), residency, true);
            let open = read(&self.shards).len();
            if open < max_open {
                return Ok(());
            }
            if std::time::Instant::now() >= deadline {
                break open;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        };
        Err(StorageError::Unavailable {
            namespace: ns.to_string(),
            reason: format!(
                "{open} namespaces are open, the most this server keeps open ([namespaces] max_open), and every one is \
                 in use; retry in a moment"
            ),
        })
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
            Residency { idle_after_micros: idle_micros, max_open, max_state_bytes: None },
            false,
        )
    }

    /// [`Store::close_idle`], and past the residency's memory budget, the least recently
    /// used namespaces until the open ones' state fits in it. `opening`: to make room for
    /// a namespace that opens now, which does not wait for upkeep to have seen a
    /// namespace's last batch (what upkeep owes it is in the wake time it sleeps with).
    pub(crate) fn close_over(&self, now: Timestamp, residency: Residency, opening: bool) -> usize {
        let Residency { idle_after_micros: idle_micros, max_open, max_state_bytes } = residency;
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
                && (shard.search.indexed() >= last || self.retrieval.defers_search())
                && (opening || shard.maintained.load(Ordering::SeqCst) >= last.0);
            if !quiet {
                continue;
            }
            let wake = crate::maintain::schedule::wake_at(
                &read(&shard.index),
                now,
                self.schedule.last_consolidated(&ns),
            );
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
    pub fn checkpoint(&self, ns: &Namespace) -> Result<Option<Checkpointed>, StorageError> {
        match self.open_one(ns) {
            Some(shard) => self.write_checkpoint(&shard),
            None => Ok(None),
        }
    }

    fn write_checkpoint(&self, shard: &Shard) -> Result<Option<Checkpointed>, StorageError> {
        if !self.backend.keeps_checkpoints() {
            return Ok(None);
        }
        let mut done = lock(&shard.checkpointed);
        // Retired (an erasure is being forgotten, or the namespace dropped): its state is
        // the namespace as it was, which the erasure removes — under this same lock, so
        // that no checkpoint nor saved vectors of it are written after they were removed.
        if shard.retired.load(std::sync::atomic::Ordering::SeqCst) {
            return Ok(None);
        }
        let index = read(&shard.index);
        shard.search.save_vectors(&shard.name, &index);
        if index.last_seq() <= done.0 {
            return Ok(None);
        }
        let written = crate::maintain::checkpoint::write(&*self.backend, &shard.name, &index)
            .map_err(|source| StorageError::Log { namespace: shard.name.to_string(), source })?;
        *done = (written.seq, shard.log.size_bytes());
        Ok(Some(written))
    }

    /// Where a namespace's persistent search indexes live: `<data>/search/<namespace>`,
    /// if it has them already or its log (of `log_bytes`) is large enough to want them;
    /// none for a store without a data directory, or one that defers search.
    fn search_dir(&self, ns: &Namespace, log_bytes: u64) -> Option<std::path::PathBuf> {
        let data = self.data_dir.as_ref()?;
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
    pub fn indexing(&self, ns: &Namespace) -> Result<Option<Indexing>, StorageError> {
        if self.shard(ns)?.is_none() {
            return Ok(None);
        }
        Ok(self.search_progress(ns))
    }

    /// How far an open namespace's search indexes are; `None` when it is not open.
    pub fn search_progress(&self, ns: &Namespace) -> Option<Indexing> {
        let shard = read(&self.shards).get(ns).cloned()?;
        let latest = read(&shard.index).last_seq();
        let (embedded, to_embed) = shard.search.embedding();
        Some(Indexing { indexed: shard.search.indexed(), latest, embedded, to_embed })
    }

    /// About how many bytes of memory an open namespace's state holds (see
    /// `NamespaceIndex::heap_bytes`; search indexes and the log not included); `None`
    /// when it is not open.
    pub fn state_bytes(&self, ns: &Namespace) -> Option<u64> {
        let shard = read(&self.shards).get(ns).cloned()?;
        Some(shard.state_bytes())
    }

    /// [`Store::checkpoint`] of a namespace, opened first if it is closed.
    pub fn checkpoint_after_open(&self, ns: &Namespace) -> Result<Option<Checkpointed>, StorageError> {
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

    /// Refuses the namespace of `shard` from now on: a batch of its log was refused by
    /// the applier (`why`). Logged, counted in [`Store::damaged`] (and `/metrics`), and
    /// closed here; every later read and write of it fails with [`StorageError::Damaged`].
    pub(crate) fn refuse_damaged(&self, shard: &Arc<Shard>, why: String) -> StorageError {
        let ns = &shard.name;
        tracing::error!(namespace = %ns, reason = %why, "namespace refused: its log holds a batch the applier refuses");
        self.damaged.write().unwrap_or_else(PoisonError::into_inner).insert(ns.clone(), why.clone());
        let mut shards = self.shards.write().unwrap_or_else(PoisonError::into_inner);
        if shards.get(ns).is_some_and(|s| Arc::ptr_eq(s, shard)) {
            shards.remove(ns);
        }
        StorageError::Damaged { namespace: ns.to_string(), reason: why }
    }

    /// Refuses a namespace whose log is damaged.
    pub(crate) fn check_damaged(&self, ns: &Namespace) -> Result<(), StorageError> {
        match read(&self.damaged).get(ns) {
            Some(reason) => Err(StorageError::Damaged { namespace: ns.to_string(), reason: reason.clone() }),
            None => Ok(()),
        }
    }

    /// Namespaces refused because their log could not be opened, with the reason; every
    /// read and write of them fails with [`StorageError::Damaged`].
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

    /// Whether other nodes write to the same logs (a cluster): a read may then wait for
    /// a batch they wrote, and reaches the network to catch up.
    pub fn shares_log(&self) -> bool {
        self.backend.shared()
    }

    /// Whether the log's storage can be reached (`Err` says why not): always, for a
    /// data directory; for a cluster, whether the node is connected to JetStream.
    pub fn log_health(&self) -> Result<(), String> {
        self.backend.health()
    }

    /// The clock's reading now.
    pub fn now(&self) -> Timestamp {
        (self.clock)()
    }
}

/// Why a namespace whose log lacks batches its checkpoint holds is refused.
fn lost_log(checkpoint: u64, log: u64) -> String {
    format!(
        "its checkpoint holds batches up to {checkpoint} but its log ends at batch {log}: the log was deleted or cut \
         short (restore it from a backup, or remove the checkpoint to accept the loss)"
    )
}
