//! Retrieval: per namespace, a full-text index and vector indexes fed off the write path
//! by a background indexer, and `search`, which fuses full text, vectors and the graph
//! neighbourhood of the entities a query names, weights by retention, and diversifies.
//!
//! Each episode is indexed twice: alone, and together with the episodes before and after
//! it in its thread (conversation turns lean on their neighbours: "yes, that one!" is
//! found through what it answers, and a statement through the reply it got). Both
//! rankings take part in the fusion. Episodes are also tagged with the days they
//! happened on and speak of, so that a query naming a day ranks among those episodes
//! too; the turns of a speaker it names weigh a little more.

use std::collections::{HashMap, HashSet};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError, RwLock};
use std::time::{Duration, Instant};

use mnemo_core::Status;
use mnemo_core::{
    EmbeddingMode, EntityId, EpisodeId, Event, Fact, FactId, Polarity, RecordKind, RecordRef, Seq, Timestamp,
    Value,
};
use mnemo_index::{FactFilter, FactView, NamespaceIndex, Scope, View};
use mnemo_search::Embedder;
use mnemo_search::{HnswConfig, RRF_K, TextIndex, VectorIndex, cue_strength, mmr, retention_weight, rrf};

use crate::error::EngineError;
use crate::store::{Answer, Basis, ReadAt, Shard, Store};

/// Gives the built-in embedder when first needed (loading a model can take seconds and
/// may fetch it): called at most once per store.
pub type EmbedderSource = Arc<dyn Fn() -> Result<Arc<dyn Embedder>, String> + Send + Sync>;

/// How a store retrieves.
#[derive(Clone, Default)]
pub struct StoreOptions {
    /// The built-in embedder, for namespaces in `Builtin` embedding mode. Without one,
    /// those namespaces search by full text and graph only.
    pub embedder: Option<EmbedderSource>,
    /// When vector indexes switch from exact scan to HNSW.
    pub hnsw: HnswConfig,
    /// Which namespaces stay open.
    pub residency: crate::maintain::Residency,
    /// Build no search index while this store is open: for bulk loads, which do not
    /// search. The indexes are derived, and built when a store next opens the namespace
    /// without this (searches here would wait for them in vain).
    pub defer_search: bool,
    /// Namespaces whose log holds at least this many bytes when they open keep their
    /// full-text indexes on disk (`None`: [`SEARCH_ON_DISK_BYTES`]); smaller ones index
    /// in RAM, which a replay rebuilds in milliseconds, and spare a new namespace the
    /// directories and synced commits.
    pub search_on_disk_from_bytes: Option<u64>,
}

/// See [`StoreOptions::search_on_disk_from_bytes`].
pub const SEARCH_ON_DISK_BYTES: u64 = 1 << 20;

/// The default floor of the retention weight: a forgotten memory keeps this share of its
/// relevance, so that a specific enough cue still finds it.
pub const DEFAULT_RETENTION_FLOOR: f64 = 0.5;
/// The default MMR trade-off (1 = relevance only). Measured on long chats (LoCoMo) and
/// on MemoryBank, 0.7 cost recall on both (the embeddings of one conversation's turns are
/// all alike, so relevant turns were pushed out as near-duplicates); 0.9 keeps only true
/// repeats apart and does about as well as 1.
pub const DEFAULT_DIVERSITY_LAMBDA: f64 = 0.9;
/// How much more the turns of a speaker the query names weigh by default: a tie-breaker
/// between a statement and the other speaker's echo of it, not a filter (a question may
/// name the wrong person).
pub const DEFAULT_SPEAKER_BOOST: f64 = 0.1;
/// How much more an episode that states a time weighs when the query asks when
/// ([`SearchQuery::time_boost`]). With fusion at k = 20 a fifth more lifts a hit over
/// at most about five places in the top ten (rank 10 to 5, 40 to 30): it reorders what
/// the lists already agree on and does not pull in what they rank far down. Measured on
/// LoCoMo (temporal recall@5 +0.038, MRR +0.051; 0.1: +0.013, +0.032) and no change on
/// MemoryBank.
pub const DEFAULT_TIME_BOOST: f64 = 0.2;
/// Most hits a search returns.
pub const MAX_SEARCH_LIMIT: usize = 200;

/// Most entities a search text names that a search follows (and lists as matched): the
/// first ones found.
pub const MAX_QUERY_ENTITIES: usize = 64;
/// Most topics a topic-first search may narrow to.
pub const MAX_TOPICS: usize = 100;
/// How long a read waits for the indexes to catch up before giving up.
pub const INDEX_WAIT: Duration = Duration::from_secs(120);
/// How long dropping a store waits for the indexer to stop.
const INDEXER_STOP_WAIT: Duration = Duration::from_secs(5);
/// Whose thread neighbours make the `Neighbour` list: the best this many episodes of the
/// other lists. Measured on LoCoMo (recall@10 +0.024, 3: +0.017, 10: +0.020) and
/// MemoryBank (+0.003).
const NEIGHBOUR_SEEDS: usize = 5;
/// Most day tags a query is narrowed by.
const MAX_QUERY_TAGS: usize = 64;
/// Most episodes a day list ranks by vector.
const MAX_TAGGED: usize = 50_000;
/// Texts embedded per call: the embedder sorts each call's texts by length before it
/// batches them, so a larger call pads less.
const EMBED_BATCH: usize = 256;

/// Runs a closure when dropped.
struct Reset<F: Fn()>(F);

impl<F: Fn()> Drop for Reset<F> {
    fn drop(&mut self) {
        (self.0)();
    }
}

const KIND_EPISODE: u64 = 0;
const KIND_FACT: u64 = 1;
const KIND_ENTITY: u64 = 2;
/// In the context indexes only: an episode together with the ones before and after it
/// (its documents there are keyed as episodes otherwise, with the one before it).
const KIND_WITH_NEXT: u64 = 3;

/// A context index's key as the episode's own key.
fn episode_key(context_key: u64) -> u64 {
    if context_key & 3 == KIND_WITH_NEXT { context_key & !3 | KIND_EPISODE } else { context_key }
}

/// A context list as a list of episodes, each at its best rank.
fn as_episodes(
    hits: Result<Vec<(u64, f32)>, mnemo_search::SearchError>,
) -> Result<Vec<(u64, f32)>, mnemo_search::SearchError> {
    hits.map(|hits| hits.into_iter().map(|(k, s)| (episode_key(k), s)).collect())
}

fn key(record: RecordRef) -> u64 {
    match record {
        RecordRef::Episode(id) => id.0 << 2 | KIND_EPISODE,
        RecordRef::Fact(id) => id.0 << 2 | KIND_FACT,
        RecordRef::Entity(id) => id.0 << 2 | KIND_ENTITY,
    }
}

fn record(key: u64) -> RecordRef {
    match key & 3 {
        KIND_EPISODE => RecordRef::Episode(EpisodeId(key >> 2)),
        KIND_FACT => RecordRef::Fact(FactId(key >> 2)),
        _ => RecordRef::Entity(EntityId(key >> 2)),
    }
}

fn kind_code(kind: RecordKind) -> u64 {
    match kind {
        RecordKind::Episode => KIND_EPISODE,
        RecordKind::Fact => KIND_FACT,
        RecordKind::Entity => KIND_ENTITY,
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `livesIn` → `lives in`, `works_at` → `works at`.
fn predicate_words(p: &str) -> String {
    let mut out = String::with_capacity(p.len() + 4);
    for (i, c) in p.chars().enumerate() {
        if c == '_' || c == '-' {
            out.push(' ');
        } else if c.is_uppercase() && i > 0 {
            out.push(' ');
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A fact as a sentence: `Alice lives in Paris`, `Alice not likes tea`.
pub(crate) fn fact_sentence(index: &NamespaceIndex, fact: &Fact) -> String {
    let name = |id: EntityId| index.entity(id).map_or_else(|| id.to_string(), |e| e.name.clone());
    let object = match &fact.object {
        Value::Entity(e) => name(*e),
        other => other.to_string(),
    };
    let not = if fact.polarity == Polarity::Negated { "not " } else { "" };
    format!("{} {not}{} {object}", name(fact.subject), predicate_words(&fact.predicate))
}

/// The text a record is searched by.
fn record_text(index: &NamespaceIndex, r: RecordRef) -> Option<String> {
    match r {
        RecordRef::Episode(id) => index.episode(id).map(|e| e.text.clone()),
        RecordRef::Fact(id) => index.fact(id).map(|f| fact_sentence(index, &f)),
        RecordRef::Entity(id) => index.entity(id).map(|e| {
            let mut t = e.name.clone();
            for a in &e.aliases {
                t.push_str(", ");
                t.push_str(a);
            }
            if let Some(k) = &e.kind {
                t.push_str(" (");
                t.push_str(k);
                t.push(')');
            }
            t
        }),
    }
}

/// The vectors of one namespace in one embedding mode.
struct Vectors {
    mode: EmbeddingMode,
    alone: VectorIndex,
    context: VectorIndex,
}

struct Progress {
    /// Every batch up to this one is searchable.
    indexed: u64,
    /// Why vectors are missing, if they are.
    warning: Option<String>,
    /// The vectors hold every text of the batches up to this one (none when embedding
    /// stopped short, failed, or is off).
    vectors_upto: Option<u64>,
    /// Texts embedded, and to embed, in the run of the indexer now going on.
    embedding: (u64, u64),
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
    id: EpisodeId,
    /// The text of the episode before it in the thread.
    before: Option<String>,
    text: String,
}

/// Search state of one namespace.
pub(crate) struct SearchIndex {
    text: TextIndex,
    context_text: TextIndex,
    vectors: RwLock<Option<Arc<Vectors>>>,
    /// Per thread, its latest episode (the indexer's own state).
    previous: Mutex<HashMap<String, Latest>>,
    progress: Mutex<Progress>,
    caught_up: Condvar,
    /// Whether the text indexes live in a directory, where each commit records the
    /// batch it covers ([`Stamp`]).
    persistent: bool,
    /// What the text indexes held when opened from their directory.
    stamp: Option<Stamp>,
    /// The directory of the persistent indexes, where the vectors are saved too.
    dir: Option<std::path::PathBuf>,
    /// The batch of the vectors last saved there.
    vectors_saved: Mutex<u64>,
}

/// What a persistent text index holds: every document of batches up to `seq`, of the
/// log whose batch `seq` and first batch have these system times. It is the payload of
/// each of its commits, and is checked against the log when the namespace opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub(crate) seq: u64,
    pub(crate) time: i64,
    pub(crate) first: i64,
}

impl Stamp {
    fn of(index: &NamespaceIndex, seq: Seq) -> Stamp {
        let time = |s: Seq| index.system_time(s).map_or(i64::MIN, Timestamp::as_micros);
        Stamp { seq: seq.0, time: time(seq), first: time(Seq(1)) }
    }

    fn encode(self) -> String {
        format!("mnemo-text-1 {} {} {}", self.seq, self.time, self.first)
    }

    fn decode(payload: &str) -> Option<Stamp> {
        let mut parts = payload.split(' ');
        if parts.next()? != "mnemo-text-1" {
            return None;
        }
        let mut n = || parts.next().and_then(|p| p.parse::<i64>().ok());
        let (seq, time, first) = (u64::try_from(n()?).ok()?, n()?, n()?);
        Some(Stamp { seq, time, first })
    }

    /// Whether it stands for the first batches of the log folded into `index` (whose
    /// batch times are the log's).
    fn fits(self, index: &NamespaceIndex) -> bool {
        self == Stamp::of(index, Seq(self.seq)) && Seq(self.seq) <= index.last_seq()
    }
}

impl SearchIndex {
    /// The search indexes of a namespace: the text indexes in `dir` if given (kept
    /// across opens; a directory that cannot be opened is removed and made anew), else
    /// in RAM.
    pub(crate) fn open(dir: Option<&std::path::Path>) -> Result<Self, EngineError> {
        let Some(dir) = dir else { return Self::new() };
        let open = || -> Result<Self, mnemo_search::SearchError> {
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

    pub(crate) fn new() -> Result<Self, EngineError> {
        Ok(Self::with(TextIndex::new().map_err(search_err)?, TextIndex::new().map_err(search_err)?))
    }

    fn with(text: TextIndex, context_text: TextIndex) -> Self {
        SearchIndex {
            text,
            context_text,
            vectors: RwLock::new(None),
            previous: Mutex::new(HashMap::new()),
            progress: Mutex::new(Progress {
                indexed: 0,
                warning: None,
                vectors_upto: None,
                embedding: (0, 0),
            }),
            caught_up: Condvar::new(),
            persistent: false,
            stamp: None,
            dir: None,
            vectors_saved: Mutex::new(0),
        }
    }

    fn vectors_path(&self) -> Option<std::path::PathBuf> {
        self.dir.as_ref().map(|d| d.join("vectors"))
    }

    /// Saves the vectors beside the persistent text indexes if they hold batches the
    /// saved ones lack, so that reopening does not embed everything again. `index` is the
    /// namespace's state (for the batches' times). A failure is logged: the file is
    /// never needed.
    pub(crate) fn save_vectors(&self, namespace: &mnemo_core::Namespace, index: &NamespaceIndex) {
        let Some(path) = self.vectors_path() else { return };
        // The vectors may hold texts of a batch after `upto` that the indexer is adding
        // now: reopening indexes the batches after `upto` again, which puts the same
        // vectors under the same keys.
        let (upto, vectors) = {
            let progress = lock(&self.progress);
            (progress.vectors_upto, self.vectors())
        };
        let (Some(upto), Some(vectors)) = (upto, vectors) else { return };
        let mut saved = lock(&self.vectors_saved);
        if upto <= *saved || Seq(upto) > index.last_seq() {
            return;
        }
        let stamp = Stamp::of(index, Seq(upto));
        match crate::saved_vectors::save(&path, stamp, vectors.mode, &vectors.alone, &vectors.context) {
            Ok(()) => *saved = upto,
            Err(e) => tracing::warn!(namespace = %namespace, error = %e, "search vectors not saved"),
        }
    }

    /// The batch the vectors saved on disk hold (0: none saved).
    pub(crate) fn vectors_saved(&self) -> Seq {
        Seq(*lock(&self.vectors_saved))
    }

    pub(crate) fn indexed(&self) -> Seq {
        Seq(lock(&self.progress).indexed)
    }

    /// Texts embedded and to embed in the indexer's current run.
    pub(crate) fn embedding(&self) -> (u64, u64) {
        lock(&self.progress).embedding
    }

    /// The entities whose names or aliases `text` contains as whole words, in text order.
    pub(crate) fn name_matches(&self, index: &NamespaceIndex, text: &str) -> Vec<mnemo_core::EntityId> {
        let mut found = Vec::new();
        for (e, _) in index.names_in(text) {
            if !found.contains(&e) {
                found.push(e);
            }
        }
        found
    }

    /// An episode's own vector, once indexed (built-in or client-given).
    pub(crate) fn episode_vector(&self, id: mnemo_core::EpisodeId) -> Option<Vec<f32>> {
        self.vectors()?.alone.get(key(RecordRef::Episode(id)))
    }

    fn vectors(&self) -> Option<Arc<Vectors>> {
        self.vectors.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Waits until batch `seq` is searchable.
    pub(crate) fn wait_for(&self, seq: Seq) -> Result<(), EngineError> {
        let deadline = Instant::now() + INDEX_WAIT;
        let mut progress = lock(&self.progress);
        while progress.indexed < seq.0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(EngineError::IndexBehind { requested: seq, indexed: Seq(progress.indexed) });
            }
            // Wake at least every 100 ms to see whether the caller gave up.
            crate::interrupt::check("waiting for the search indexes")?;
            let left = left.min(std::time::Duration::from_millis(100));
            progress = self.caught_up.wait_timeout(progress, left).unwrap_or_else(PoisonError::into_inner).0;
        }
        Ok(())
    }
}

fn search_err(e: mnemo_search::SearchError) -> EngineError {
    EngineError::Index(e.to_string())
}

/// A batch for the indexer.
pub(crate) enum Job {
    /// Index everything the namespace holds now (after opening its log).
    Rebuild(Arc<Shard>),
    /// Index one committed batch.
    Batch(Arc<Shard>, Seq, Vec<Event>),
}

/// The store's retrieval runtime: the indexer's state, and the channel to its thread.
/// Dropping it (with the store) stops the indexer and waits for it, so that nothing of
/// the store outlives it.
pub(crate) struct Retrieval {
    indexer: Arc<Indexer>,
    jobs: Mutex<Option<(Sender<Job>, std::thread::JoinHandle<()>)>>,
}

/// What the indexer thread works with: options and the embedder once loaded.
pub(crate) struct Indexer {
    options: StoreOptions,
    embedder: OnceLock<Result<Arc<dyn Embedder>, String>>,
    closing: std::sync::atomic::AtomicBool,
}

impl Retrieval {
    pub(crate) fn new(options: StoreOptions) -> Arc<Self> {
        Arc::new(Retrieval {
            indexer: Arc::new(Indexer {
                options,
                embedder: OnceLock::new(),
                closing: std::sync::atomic::AtomicBool::new(false),
            }),
            jobs: Mutex::new(None),
        })
    }

    pub(crate) fn embedder(&self) -> Option<Result<Arc<dyn Embedder>, String>> {
        self.indexer.embedder()
    }

    pub(crate) fn residency(&self) -> crate::maintain::Residency {
        self.indexer.options.residency
    }

    pub(crate) fn search_on_disk_from(&self) -> u64 {
        self.indexer.options.search_on_disk_from_bytes.unwrap_or(SEARCH_ON_DISK_BYTES)
    }

    /// Whether this store builds no search index ([`StoreOptions::defer_search`]).
    pub(crate) fn defers_search(&self) -> bool {
        self.indexer.options.defer_search
    }

    /// Hands a job to the indexer thread, starting it on first use.
    pub(crate) fn submit(&self, job: Job) {
        if self.indexer.options.defer_search {
            return;
        }
        let mut jobs = lock(&self.jobs);
        if jobs.is_none() {
            let (tx, rx) = channel();
            let indexer = Arc::clone(&self.indexer);
            match std::thread::Builder::new().name("mnemo-indexer".into()).spawn(move || indexer.run(rx)) {
                Ok(handle) => *jobs = Some((tx, handle)),
                Err(_) => {
                    // No thread to be had: index on this one.
                    drop(jobs);
                    self.indexer.process(vec![job]);
                    return;
                }
            }
        }
        let sent = jobs.as_ref().map(|(tx, _)| tx.send(job));
        if let Some(Err(std::sync::mpsc::SendError(job))) = sent {
            // The indexer died (it never should); index on this thread instead.
            *jobs = None;
            drop(jobs);
            self.indexer.process(vec![job]);
        }
    }
}

impl Drop for Retrieval {
    fn drop(&mut self) {
        self.indexer.closing.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some((tx, handle)) = lock(&self.jobs).take() {
            drop(tx);
            // The indexer finishes its current batch and stops; one stuck (an embedder
            // that hangs while loading) is left behind rather than holding up the exit:
            // everything it holds is derived from the log.
            let give_up = Instant::now() + INDEXER_STOP_WAIT;
            while !handle.is_finished() && Instant::now() < give_up {
                std::thread::sleep(Duration::from_millis(10));
            }
            if handle.is_finished() {
                let _ = handle.join();
            }
        }
    }
}

impl Indexer {
    fn embedder(&self) -> Option<Result<Arc<dyn Embedder>, String>> {
        let source = self.options.embedder.as_ref()?;
        Some(self.embedder.get_or_init(|| source()).clone())
    }

    fn closing(&self) -> bool {
        self.closing.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn run(self: Arc<Self>, rx: Receiver<Job>) {
        while let Ok(first) = rx.recv() {
            if self.closing() {
                // The store is going away: drop what is left (it is rebuilt on open).
                continue;
            }
            let mut jobs = vec![first];
            while jobs.len() < 256 {
                match rx.try_recv() {
                    Ok(job) => jobs.push(job),
                    Err(_) => break,
                }
            }
            self.process(jobs);
        }
    }

    /// Indexes jobs, grouping consecutive batches of one namespace.
    fn process(&self, jobs: Vec<Job>) {
        let mut group: Vec<(Seq, Vec<Event>)> = Vec::new();
        let mut group_shard: Option<Arc<Shard>> = None;
        for job in jobs {
            match job {
                Job::Rebuild(shard) => {
                    if let Some(s) = group_shard.take() {
                        self.index_batches(&s, std::mem::take(&mut group));
                    }
                    // What the namespace builds on first use, built here, off the
                    // request that opened it.
                    shard.index.read().unwrap_or_else(PoisonError::into_inner).warm();
                    self.rebuild(&shard, None);
                }
                Job::Batch(shard, seq, events) => {
                    if let Some(s) = &group_shard
                        && !Arc::ptr_eq(s, &shard)
                    {
                        self.index_batches(s, std::mem::take(&mut group));
                    }
                    group.push((seq, events));
                    group_shard = Some(shard);
                }
            }
        }
        if let Some(s) = group_shard {
            self.index_batches(&s, group);
        }
    }

    /// Indexes everything the namespace holds: text and vectors after it opened (its
    /// indexes are empty then), or with `vectors_only: Some(text_upto)` the vectors alone,
    /// when what is embedded changed and the text indexes hold the batches up to
    /// `text_upto`. Only those are marked searchable then: batches applied since are
    /// still to come as jobs and would otherwise be skipped as indexed, their text never
    /// added (their vectors are upserted again under the same keys).
    fn rebuild(&self, shard: &Shard, vectors_only: Option<Seq>) {
        let search = &shard.search;
        if vectors_only.is_none() && search.persistent {
            if self.catch_up(shard) {
                return;
            }
            // Not this log's, or of an unknown extent: from nothing (committed at once, so
            // that none of it stays visible should the rebuild add nothing).
            let stamp = Stamp { seq: 0, time: i64::MIN, first: i64::MIN }.encode();
            let cleared = search
                .text
                .clear()
                .and_then(|()| search.text.commit_with(&stamp))
                .and_then(|()| search.context_text.clear())
                .and_then(|()| search.context_text.commit_with(&stamp));
            if let Err(e) = cleared {
                tracing::warn!(namespace = %shard.name, error = %e, "search index not cleared");
            }
        }
        let index = shard.index.read().unwrap_or_else(PoisonError::into_inner);
        let upto = index.last_seq();
        let mut docs = Docs::default();
        {
            // From the first episode of each thread on, as if nothing had been indexed.
            // Only a rebuild of the text too moves the indexer's own record of each
            // thread's latest episode: after a rebuild of the vectors alone, the text
            // indexes hold the batches up to `text_upto`, and the batches applied since
            // are still to come as jobs, which must find that record as those batches
            // left it (their context documents are made from it). Moving it here, to
            // episodes not yet indexed, gave their turns wrong contexts, depending on how
            // many batches were applied by the time this ran.
            let mut shared = lock(&search.previous);
            let mut own = HashMap::new();
            let previous = if vectors_only.is_some() { &mut own } else { &mut *shared };
            previous.clear();
            let tz = index.config().time_zone;
            for (_, e) in index.all_episodes() {
                docs.episode(previous, e, &tz);
            }
        }
        let policy = index.embedding_policy();
        for (_, f) in index.all_facts() {
            docs.push(RecordRef::Fact(f.id), fact_sentence(&index, &f), Vec::new(), index.fact_embedded(&f));
        }
        for (_, e) in index.all_entities() {
            if let Some(t) = record_text(&index, RecordRef::Entity(e.id)) {
                docs.push(RecordRef::Entity(e.id), t, Vec::new(), policy.entities);
            }
        }
        docs.client = index.client_vectors().into_iter().map(|(id, v)| (id, v.to_vec())).collect();
        docs.vectors_only = vectors_only.is_some();
        docs.full = true;
        let mode = index.embedding_mode();
        drop(index);
        let upto = vectors_only.map_or(upto, |text_upto| text_upto.min(upto));
        self.write_docs(shard, docs, mode, upto, upto);
    }

    /// Brings persistent text indexes that hold the log up to their stamp up to the
    /// namespace's last batch, indexing only the batches after it, then the vectors;
    /// `false` when their stamp is not of this log.
    fn catch_up(&self, shard: &Shard) -> bool {
        let search = &shard.search;
        let Some(stamp) = search.stamp else { return false };
        let (fits, upto) = {
            let index = shard.index.read().unwrap_or_else(PoisonError::into_inner);
            (stamp.fits(&index), index.last_seq())
        };
        if !fits {
            tracing::warn!(namespace = %shard.name, batch = stamp.seq, "search index of another log; building it anew");
            return false;
        }
        // The log is read again only for batches the index lacks (none after a clean stop).
        let mut tail = Vec::new();
        if stamp.seq < upto.0 {
            let Ok(records) = shard.log.records() else { return false };
            for r in records.into_iter().filter(|r| r.seq > stamp.seq && r.seq <= upto.0) {
                match crate::store::decode(&shard.name, r.seq, &r.payload) {
                    Ok(events) => tail.push(events),
                    Err(_) => return false,
                }
            }
        }
        let index = shard.index.read().unwrap_or_else(PoisonError::into_inner);
        // Each commit is stamped with the batch it covers, so the index holds no document
        // of a later batch: these are added as the live indexer adds them.
        let mut docs = Docs::default();
        {
            let mut previous = lock(&search.previous);
            previous.clear();
            // The text of each thread's latest episode as of the stamp, as the indexer
            // had it then.
            let mut before = Docs::default();
            let tz = index.config().time_zone;
            for (seq, e) in index.all_episodes() {
                if seq.0 <= stamp.seq {
                    before.episode(&mut previous, e, &tz);
                }
            }
            for event in tail.iter().flatten() {
                docs.of_event(&index, &mut previous, event);
            }
        }
        let mode = index.embedding_mode();
        drop(index);
        tracing::info!(namespace = %shard.name, from = stamp.seq, to = upto.0, "search index caught up from disk");
        if mode == EmbeddingMode::Off {
            self.write_docs(shard, docs, mode, upto, upto);
        } else if let Some(vectors) = self.saved_vectors(shard, stamp, mode) {
            // The saved vectors hold the texts up to the stamp: the tail is embedded as
            // the live indexer embeds it, and search answers (by exact scan) before any
            // HNSW graph is built.
            *search.vectors.write().unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&vectors));
            lock(&search.progress).vectors_upto = Some(stamp.seq);
            self.write_docs(shard, docs, mode, upto, upto);
            vectors.alone.build_if_large();
            vectors.context.build_if_large();
        } else {
            // Text first (not yet marked searchable), then every vector as a rebuild.
            self.write_docs(shard, docs, EmbeddingMode::Off, Seq(0), upto);
            self.rebuild(shard, Some(upto));
        }
        true
    }

    /// The vectors saved beside the text indexes, if they hold at least the batches of
    /// the text indexes' `stamp`, of this log, in `mode` and of the embedder's length.
    fn saved_vectors(&self, shard: &Shard, stamp: Stamp, mode: EmbeddingMode) -> Option<Arc<Vectors>> {
        let path = shard.search.vectors_path()?;
        let saved = match crate::saved_vectors::load(&path, self.options.hnsw) {
            Ok(saved) => saved?,
            Err(why) => {
                tracing::warn!(namespace = %shard.name, reason = %why, "saved search vectors ignored; embedding again");
                return None;
            }
        };
        let fits = saved.stamp.seq >= stamp.seq
            && saved.stamp.fits(&shard.index.read().unwrap_or_else(PoisonError::into_inner));
        let dim = match mode {
            EmbeddingMode::Builtin => self.embedder()?.ok()?.dim(),
            EmbeddingMode::Client { dim } => dim as usize,
            EmbeddingMode::Off => return None,
        };
        if !fits || saved.mode != mode || saved.alone.dim() != dim || saved.context.dim() != dim {
            tracing::info!(namespace = %shard.name, batch = saved.stamp.seq, "saved search vectors are of other settings or batches; embedding again");
            return None;
        }
        *lock(&shard.search.vectors_saved) = saved.stamp.seq;
        Some(Arc::new(Vectors { mode, alone: saved.alone, context: saved.context }))
    }

    fn index_batches(&self, shard: &Shard, batches: Vec<(Seq, Vec<Event>)>) {
        let search = &shard.search;
        let done = search.indexed();
        let batches: Vec<(Seq, Vec<Event>)> = batches.into_iter().filter(|(s, _)| *s > done).collect();
        let Some(upto) = batches.last().map(|(s, _)| *s) else {
            return;
        };
        // What is embedded changed: the vectors are rebuilt as the new settings say, so
        // that they hold what a rebuild from the log would (derived state never depends
        // on when it was built).
        let reembed = batches.iter().flat_map(|(_, events)| events).any(|e| {
            matches!(
                e,
                Event::EmbeddingConfigured(_)
                    | Event::EmbeddingPolicySet(_)
                    | Event::PredicateEmbedding { .. }
            )
        });
        let index = shard.index.read().unwrap_or_else(PoisonError::into_inner);
        let mut docs = Docs::default();
        {
            let mut previous = lock(&search.previous);
            for event in batches.iter().flat_map(|(_, events)| events) {
                docs.of_event(&index, &mut previous, event);
            }
        }
        let mode = index.embedding_mode();
        drop(index);
        if reembed {
            // These batches' text, then every vector again as the new settings say.
            *search.vectors.write().unwrap_or_else(PoisonError::into_inner) = None;
            self.write_docs(shard, docs, EmbeddingMode::Off, Seq(0), upto);
            self.rebuild(shard, Some(upto));
            return;
        }
        self.write_docs(shard, docs, mode, upto, upto);
    }

    /// Adds documents to the text and vector indexes, then marks `upto` searchable; a
    /// persistent text index is stamped as holding the batches up to `text_upto`.
    fn write_docs(&self, shard: &Shard, docs: Docs, mode: EmbeddingMode, upto: Seq, text_upto: Seq) {
        let search = &shard.search;
        let mut warning = None;
        fn text_doc<'a>((r, t): &'a (RecordRef, String), tags: &'a [String]) -> mnemo_search::Doc<'a> {
            (key(*r), key(*r) & 3, t.as_str(), tags)
        }
        let text = if docs.vectors_only {
            Ok(())
        } else {
            let split = |replace: bool| {
                docs.alone
                    .iter()
                    .zip(&docs.tags)
                    .zip(&docs.replace)
                    .filter(move |(_, r)| **r == replace)
                    .map(|((d, tags), _)| text_doc(d, tags))
            };
            let context = || docs.context.iter().map(|(k, t)| (*k, KIND_EPISODE, t.as_str(), &[][..]));
            let stamp =
                (search.persistent && !(docs.alone.is_empty() && docs.context.is_empty())).then(|| {
                    Stamp::of(&shard.index.read().unwrap_or_else(PoisonError::into_inner), text_upto).encode()
                });
            let commit = |text: &TextIndex| match &stamp {
                Some(stamp) => text.commit_with(stamp),
                None => text.commit(),
            };
            search
                .text
                .add(split(false))
                .and_then(|()| search.text.upsert(split(true)))
                .and_then(|()| commit(&search.text))
                .and_then(|()| search.context_text.add(context()))
                .and_then(|()| commit(&search.context_text))
        };
        if let Err(e) = text {
            warning = Some(format!("full-text indexing failed: {e}"));
        }
        let complete = match self.write_vectors(shard, &docs, mode) {
            Ok(complete) => complete,
            Err(w) => {
                warning = Some(w);
                false
            }
        };
        let mut progress = lock(&search.progress);
        // Whole when these vectors were all written and follow on whole ones (or are all
        // of them).
        let follows = docs.full || progress.vectors_upto.is_some_and(|v| v >= progress.indexed);
        progress.vectors_upto = (complete && follows).then(|| upto.0.max(progress.vectors_upto.unwrap_or(0)));
        progress.indexed = progress.indexed.max(upto.0);
        if warning.is_some() {
            progress.warning = warning;
        }
        drop(progress);
        search.caught_up.notify_all();
    }

    /// Writes the documents' vectors; `Ok(false)` when it stopped short (the store is
    /// closing, or what is embedded changed) or there is no embedder to write them.
    fn write_vectors(&self, shard: &Shard, docs: &Docs, mode: EmbeddingMode) -> Result<bool, String> {
        let search = &shard.search;
        // A change of what is embedded stops a long run at its next chunk: the batch that
        // made it rebuilds the vectors as the new settings say.
        let policy = shard.index.read().unwrap_or_else(PoisonError::into_inner).embedding_policy();
        let changed = || {
            let index = shard.index.read().unwrap_or_else(PoisonError::into_inner);
            index.embedding_mode() != mode || index.embedding_policy() != policy
        };
        let vectors = match mode {
            EmbeddingMode::Off => {
                *search.vectors.write().unwrap_or_else(PoisonError::into_inner) = None;
                return Ok(false);
            }
            EmbeddingMode::Client { dim } => self.vectors_for(search, mode, dim as usize),
            EmbeddingMode::Builtin => {
                let Some(embedder) = self.embedder() else {
                    return Ok(false);
                };
                let embedder = embedder.map_err(|e| format!("no built-in embedder: {e}"))?;
                let vectors = self.vectors_for(search, mode, embedder.dim());
                let alone: Vec<(u64, String)> = docs
                    .alone
                    .iter()
                    .zip(&docs.embedded)
                    .filter(|(_, embedded)| **embedded)
                    .map(|((r, t), _)| (key(*r), t.clone()))
                    .collect();
                let total = (alone.len() + docs.context.len()) as u64;
                let mut done = 0u64;
                let report = |done: u64| lock(&search.progress).embedding = (done, total);
                report(0);
                let _reset = Reset(|| report(0));
                for (list, target) in [(&alone, &vectors.alone), (&docs.context, &vectors.context)] {
                    for chunk in list.chunks(EMBED_BATCH) {
                        if self.closing() || changed() {
                            return Ok(false);
                        }
                        done += chunk.len() as u64;
                        let texts: Vec<&str> = chunk.iter().map(|(_, t)| t.as_str()).collect();
                        let embedded =
                            embedder.embed(&texts).map_err(|e| format!("embedding failed: {e}"))?;
                        let items: Vec<(u64, Vec<f32>)> =
                            chunk.iter().map(|(k, _)| *k).zip(embedded).collect();
                        target.upsert(&items).map_err(|e| format!("vector index: {e}"))?;
                        report(done);
                    }
                }
                return Ok(true);
            }
        };
        let items: Vec<(u64, Vec<f32>)> =
            docs.client.iter().map(|(id, v)| (key(RecordRef::Episode(*id)), v.clone())).collect();
        vectors.alone.upsert(&items).map_err(|e| format!("vector index: {e}"))?;
        Ok(true)
    }

    /// The namespace's vector indexes for `mode`, replacing those of another mode (their
    /// vectors are not comparable).
    fn vectors_for(&self, search: &SearchIndex, mode: EmbeddingMode, dim: usize) -> Arc<Vectors> {
        let mut slot = search.vectors.write().unwrap_or_else(PoisonError::into_inner);
        match &*slot {
            Some(v) if v.mode == mode && v.alone.dim() == dim => Arc::clone(v),
            _ => {
                let v = Arc::new(Vectors {
                    mode,
                    alone: VectorIndex::new(dim, self.options.hnsw),
                    context: VectorIndex::new(dim, self.options.hnsw),
                });
                *slot = Some(Arc::clone(&v));
                v
            }
        }
    }
}

/// Documents to index.
#[derive(Default)]
struct Docs {
    alone: Vec<(RecordRef, String)>,
    /// The exact tags of each of `alone` (an episode's days and speaker).
    tags: Vec<Vec<String>>,
    /// Which of `alone` the built-in embedder embeds (the others: full text only).
    embedded: Vec<bool>,
    /// Which of `alone` may already be in the text index (a new version of an entity):
    /// replaced; the others are added.
    replace: Vec<bool>,
    /// Only vectors are wanted: the text indexes already hold these documents.
    vectors_only: bool,
    /// These are all the namespace's documents (a rebuild), not those of some batches.
    full: bool,
    /// Episodes together with the one before them in their thread, and (keyed
    /// [`KIND_WITH_NEXT`]) with the ones before and after them. Only ever added: a
    /// context index never holds a replaced document, whose statistics would linger in
    /// BM25's, so that what it ranks never depends on when it was built.
    context: Vec<(u64, String)>,
    client: Vec<(EpisodeId, Vec<f32>)>,
}

impl Docs {
    fn push(&mut self, r: RecordRef, text: String, tags: Vec<String>, embedded: bool) {
        self.alone.push((r, text));
        self.tags.push(tags);
        self.embedded.push(embedded);
        self.replace.push(false);
    }

    /// What one event adds to the indexes.
    fn of_event(&mut self, index: &NamespaceIndex, previous: &mut HashMap<String, Latest>, event: &Event) {
        match event {
            Event::EpisodeRecorded(e) => self.episode(previous, e, &index.config().time_zone),
            // A restatement is one more statement of a fact already indexed: a document
            // of its own would count the sentence twice (and a rebuild, which indexes
            // facts, would not).
            Event::FactAsserted(f) if index.is_restatement(f.id) => {}
            Event::FactAsserted(f) => {
                self.push(RecordRef::Fact(f.id), fact_sentence(index, f), Vec::new(), index.fact_embedded(f))
            }
            Event::EntityDeclared(e) => {
                if let Some(t) = record_text(index, RecordRef::Entity(e.id)) {
                    self.replace(RecordRef::Entity(e.id), t, index.embedding_policy().entities);
                }
            }
            Event::Embedded { record: RecordRef::Episode(id), vector } => {
                self.client.push((*id, vector.clone()))
            }
            _ => {}
        }
    }

    /// A document that may replace an earlier one with the same key.
    fn replace(&mut self, r: RecordRef, text: String, embedded: bool) {
        self.push(r, text, Vec::new(), embedded);
        if let Some(last) = self.replace.last_mut() {
            *last = true;
        }
    }

    fn episode(
        &mut self,
        previous: &mut HashMap<String, Latest>,
        e: &mnemo_core::Episode,
        tz: &mnemo_core::TimeZone,
    ) {
        let r = RecordRef::Episode(e.id);
        self.push(r, e.text.clone(), episode_tags(e, tz), true);
        let Some(thread) = &e.thread else {
            self.context.push((key(r), e.text.clone()));
            return;
        };
        let last = previous.remove(thread);
        previous.insert(
            thread.clone(),
            Latest { id: e.id, before: last.as_ref().map(|l| l.text.clone()), text: e.text.clone() },
        );
        let Some(last) = last else {
            self.context.push((key(r), e.text.clone()));
            return;
        };
        self.context.push((key(r), format!("{}\n{}", last.text, e.text)));
        // A single turn leans on the reply it got too: once that comes, the turn is
        // indexed again with both neighbours. An episode holding a whole exchange (several
        // speakers' lines) already holds its reply, and its next one is another exchange.
        if !is_exchange(&last.text) && !is_exchange(&e.text) {
            let mut both = last.before.map_or_else(String::new, |b| b + "\n");
            both.push_str(&last.text);
            both.push('\n');
            both.push_str(&e.text);
            self.context.push((last.id.0 << 2 | KIND_WITH_NEXT, both));
        }
    }
}

/// Whether a text is an exchange: two or more lines that each start with a speaker's
/// name (`User: …` then `Assistant: …`).
fn is_exchange(text: &str) -> bool {
    text.lines().filter(|l| leading_name(l).is_some()).take(2).count() == 2
}

/// The name before a leading `Name:` of a line (up to three capitalised words).
fn leading_name(line: &str) -> Option<&str> {
    let (head, _) = line.split_once(':')?;
    let head = head.trim();
    if head.is_empty() || head.len() > 40 {
        return None;
    }
    let words: Vec<&str> = head.split_whitespace().collect();
    let named = words.len() <= 3
        && words.iter().all(|w| {
            w.chars().next().is_some_and(char::is_uppercase)
                && w.chars().all(|c| c.is_alphabetic() || "'.-".contains(c))
        });
    named.then_some(head)
}

/// Who speaks in an episode: the name before a leading `Name:` (up to three capitalised
/// words), else its role.
fn speaker(e: &mnemo_core::Episode) -> Option<&str> {
    let first = e.text.lines().next().unwrap_or("");
    leading_name(first).or_else(|| e.role.as_deref().filter(|r| !r.trim().is_empty()))
}

/// The words of a text, in lower case (a speaker's name, a query), of two letters or more.
fn name_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 1).map(str::to_lowercase)
}

/// The exact tags an episode is indexed with: the days it happened on and speaks of
/// (`d20230507`, `m202305`, `y2023`).
fn episode_tags(e: &mnemo_core::Episode, tz: &mnemo_core::TimeZone) -> Vec<String> {
    mnemo_search::when::index_terms(&e.text, tz.local_date(e.occurred_at))
}

/// What to search for, and how.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchQuery {
    /// The cue: a message, a question, keywords.
    pub text: Option<String>,
    /// A query vector (client-vector namespaces, or instead of embedding `text`).
    pub vector: Option<Vec<f32>>,
    /// Kinds of record wanted (all when empty).
    pub kinds: Vec<RecordKind>,
    /// Most hits.
    pub limit: usize,
    /// Only episodes that occurred in `[from, to)` (and facts valid then).
    pub occurred_from: Option<Timestamp>,
    /// See `occurred_from`.
    pub occurred_to: Option<Timestamp>,
    /// Only episodes of this thread (and facts they sourced).
    pub thread: Option<String>,
    /// Only what concerns this entity: itself, its facts, the episodes behind them.
    pub entity: Option<EntityId>,
    /// Only facts with this predicate, and the episodes behind them.
    pub predicate: Option<String>,
    /// Keep facts that are not in force at (T, S) (superseded, ended, negated…).
    pub include_not_in_force: bool,
    /// Share of relevance a completely forgotten memory keeps, in [0, 1].
    pub retention_floor: f64,
    /// MMR trade-off in [0, 1]: 1 ranks by relevance only.
    pub diversity_lambda: f64,
    /// Wait until the indexes hold every batch the read sees.
    pub wait_for_index: bool,
    /// Topic-first: narrow to the best this many topics of the topic network, then rank
    /// inside them (0: off).
    pub topics: usize,
    /// Rank the topics too (`SearchResult::topics`), even without narrowing to them.
    pub rank_topics: bool,
    /// Whether records (episodes, facts, entities) are wanted; `false` with `rank_topics`
    /// searches for topics only.
    pub records: bool,
    /// Lists left out of the fusion (to measure what each one brings).
    pub without: Vec<Component>,
    /// How much more the turns of a speaker the query names weigh (0: no more).
    pub speaker_boost: f64,
    /// How much more an episode that states a time (a date, "yesterday", "last June")
    /// weighs when the query asks when ("When did…", "What year…"; 0: no more).
    pub time_boost: f64,
}

impl Default for SearchQuery {
    fn default() -> Self {
        SearchQuery {
            text: None,
            vector: None,
            kinds: Vec::new(),
            limit: 10,
            occurred_from: None,
            occurred_to: None,
            thread: None,
            entity: None,
            predicate: None,
            include_not_in_force: false,
            retention_floor: DEFAULT_RETENTION_FLOOR,
            diversity_lambda: DEFAULT_DIVERSITY_LAMBDA,
            wait_for_index: true,
            topics: 0,
            rank_topics: false,
            records: true,
            without: Vec::new(),
            speaker_boost: DEFAULT_SPEAKER_BOOST,
            time_boost: DEFAULT_TIME_BOOST,
        }
    }
}

/// A ranked list that took part in a search.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Component {
    /// BM25 over each record's own text.
    Text,
    /// BM25 over each episode with the ones before and after it in its thread.
    TextInContext,
    /// Vector similarity of each record's own text.
    Vector,
    /// Vector similarity of each episode with the ones before and after it.
    VectorInContext,
    /// The neighbourhood of the entities the query names.
    Graph,
    /// BM25 among the episodes of the days the query names ("on May 3, 2023", "last
    /// June"): those that happened then or speak of then ("yesterday" in a turn of May 4).
    Time,
    /// Vector similarity among the episodes of the days the query names.
    VectorInTime,
    /// The episodes before and after the best episodes of the other lists in their
    /// threads, in the order of those.
    Neighbour,
}

/// A hit's place in one component.
#[derive(Clone, Debug, PartialEq)]
pub struct ComponentRank {
    /// Which list.
    pub component: Component,
    /// Its rank there, from 1.
    pub rank: usize,
    /// Its score there (BM25, cosine, or 1/position for the graph).
    pub score: f32,
}

/// Why a hit ranks where it does.
#[derive(Clone, Debug, PartialEq)]
pub struct Explanation {
    /// Its rank in each list it was found in.
    pub components: Vec<ComponentRank>,
    /// Reciprocal-rank fusion score, Σ 1/(20 + rank).
    pub fused: f64,
    /// How directly the cue points at it: 1/(its best rank in any list).
    pub cue: f64,
    /// Retention at the decay clock.
    pub retention: f64,
    /// The weight it got: floor + (1 − floor)·max(retention, cue). A memory the cue
    /// points at directly keeps its weight however faded; the rest fade with retention.
    pub weight: f64,
    /// 1 + the speaker boost for a turn of a speaker the query names, else 1.
    pub speaker: f64,
    /// 1 + the time boost for an episode that states a time when the query asks when,
    /// else 1.
    pub time: f64,
    /// fused × weight × speaker × time.
    pub relevance: f64,
    /// Its MMR value when it was picked.
    pub mmr: f64,
    /// A fact's status at (T, S).
    pub status: Option<Status>,
    /// Whether it is dormant at the decay clock.
    pub dormant: bool,
}

/// One hit.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchHit {
    /// The record.
    pub record: RecordRef,
    /// Its final score (its relevance; order is MMR's).
    pub score: f64,
    /// How it got there.
    pub explanation: Explanation,
}

/// A search's answer.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchResult {
    /// Best first, diversified.
    pub hits: Vec<SearchHit>,
    /// Entities the query named (seeds of the graph component).
    pub matched_entities: Vec<EntityId>,
    /// The last batch the indexes held when searched.
    pub indexed_seq: Seq,
    /// Anything that made this answer weaker than it could be (no vectors, index behind).
    pub warnings: Vec<String>,
    /// With topic-first or topic ranking: the topics by relevance to the query (those
    /// searched inside first, when narrowing).
    pub topics: Vec<TopicScore>,
}

/// A topic's relevance to a query: the similarity of its centroid to the query's vector
/// plus the share of its members the query names.
#[derive(Clone, Debug, PartialEq)]
pub struct TopicScore {
    /// The topic, as the topic network reads at the search's point.
    pub topic: crate::topics::Topic,
    /// Its score.
    pub score: f64,
}

/// Whether a candidate is visible at the read and passes the filters, and its status.
struct Admit<'a> {
    index: &'a NamespaceIndex,
    view: View,
    query: &'a SearchQuery,
    kinds: Vec<u64>,
    /// With an entity or predicate filter: the facts that pass it.
    facts_allowed: Option<HashSet<FactId>>,
    episodes_allowed: Option<HashSet<EpisodeId>>,
    /// With topic-first: the entities of the chosen topics.
    entities_allowed: Option<HashSet<EntityId>>,
    cache: Mutex<HashMap<u64, Option<Option<Status>>>>,
}

impl Admit<'_> {
    fn kind_ok(&self, k: u64) -> bool {
        self.kinds.is_empty() || self.kinds.contains(&(k & 3))
    }

    /// `None`: not admitted; `Some(status)`: admitted (status for facts).
    fn check(&self, k: u64) -> Option<Option<Status>> {
        if !self.kind_ok(k) {
            return None;
        }
        if let Some(hit) = lock(&self.cache).get(&k) {
            return *hit;
        }
        let verdict = self.compute(k);
        lock(&self.cache).insert(k, verdict);
        verdict
    }

    fn window_has(&self, t: Timestamp) -> bool {
        self.query.occurred_from.is_none_or(|f| t >= f) && self.query.occurred_to.is_none_or(|to| t < to)
    }

    fn compute(&self, k: u64) -> Option<Option<Status>> {
        let q = self.query;
        match record(k) {
            RecordRef::Episode(id) => {
                let e = self.index.episode_at(id, self.view.known_at)?;
                let ok = self.window_has(e.occurred_at)
                    && q.thread.as_ref().is_none_or(|t| e.thread.as_ref() == Some(t))
                    && self.episodes_allowed.as_ref().is_none_or(|a| a.contains(&id));
                ok.then_some(None)
            }
            RecordRef::Fact(id) => {
                let f = self.index.fact_at(id, self.view)?;
                if !q.include_not_in_force && !f.in_force() {
                    return None;
                }
                if self.facts_allowed.as_ref().is_some_and(|a| !a.contains(&f.fact.id)) {
                    return None;
                }
                if let Some(thread) = &q.thread {
                    let in_thread = f.provenance.iter().any(|p| {
                        self.index
                            .episode_at(*p, self.view.known_at)
                            .is_some_and(|e| e.thread.as_ref() == Some(thread))
                    });
                    if !in_thread {
                        return None;
                    }
                }
                if q.occurred_from.is_some() || q.occurred_to.is_some() {
                    let from = q.occurred_from.unwrap_or(Timestamp::MIN);
                    let to = q.occurred_to.unwrap_or(Timestamp::MAX);
                    if !(f.valid.from() < to && f.valid.to().is_none_or(|end| end > from)) {
                        return None;
                    }
                }
                Some(Some(f.status))
            }
            RecordRef::Entity(id) => {
                if q.thread.is_some() || q.predicate.is_some() {
                    return None;
                }
                let canonical = self.index.canonical_entity(id, self.view.known_at);
                if canonical != id {
                    return None;
                }
                if q.entity.is_some_and(|e| self.index.canonical_entity(e, self.view.known_at) != id) {
                    return None;
                }
                if self.entities_allowed.as_ref().is_some_and(|a| !a.contains(&id)) {
                    return None;
                }
                self.index.entity_at(id, self.view).map(|_| None)
            }
        }
    }
}

impl Store {
    /// Hybrid search at a read point: BM25 ∪ vectors ∪ the graph around named entities,
    /// fused by reciprocal rank, weighted by retention (with a floor), diversified by
    /// MMR. Facts not in force at (T, S) are left out unless asked for.
    pub fn search(
        &self,
        ns: &mnemo_core::Namespace,
        query: &SearchQuery,
        at: ReadAt,
    ) -> Result<Answer<SearchResult>, EngineError> {
        check_query(query)?;
        let shard = self.shard(ns)?;
        let mut warnings = Vec::new();
        // Wait (outside any index lock) until the indexes hold what this read will see.
        if let Some(shard) = &shard
            && query.wait_for_index
        {
            let latest = shard.index.read().unwrap_or_else(PoisonError::into_inner).last_seq();
            let target = match at.known_at {
                // A batch that does not exist yet would be waited for in vain.
                crate::KnownAt::Seq(s) if s > latest => {
                    return Err(EngineError::NotYetKnown { requested: s, latest });
                }
                crate::KnownAt::Seq(s) => s,
                _ => latest,
            };
            shard.search.wait_for(target)?;
        }
        let query_vector = self.query_vector(shard.as_deref(), query, &mut warnings)?;
        crate::interrupt::check("a search")?;
        let answer = self.read_search(ns, at, |index, basis| match &shard {
            None => Ok(SearchResult {
                hits: Vec::new(),
                matched_entities: Vec::new(),
                indexed_seq: Seq(0),
                warnings: warnings.clone(),
                topics: Vec::new(),
            }),
            Some(shard) => {
                run_search(index, basis, &shard.search, query, query_vector.as_deref(), warnings.clone())
            }
        })?;
        Ok(Answer { basis: answer.basis, value: answer.value? })
    }

    /// The vector a query is searched with: the one given (checked), else its text
    /// embedded by the built-in embedder in a built-in namespace.
    fn query_vector(
        &self,
        shard: Option<&Shard>,
        query: &SearchQuery,
        warnings: &mut Vec<String>,
    ) -> Result<Option<Vec<f32>>, EngineError> {
        let Some(shard) = shard else { return Ok(None) };
        let mode = shard.index.read().unwrap_or_else(PoisonError::into_inner).embedding_mode();
        if let Some(w) = &lock(&shard.search.progress).warning {
            warnings.push(w.clone());
        }
        if let Some(v) = &query.vector {
            let dim = match mode {
                EmbeddingMode::Client { dim } => dim as usize,
                EmbeddingMode::Off => {
                    return Err(mnemo_core::CoreError::invalid_value(
                        "vector",
                        format!("{} numbers", v.len()),
                        "this namespace keeps no vectors",
                    )
                    .into());
                }
                EmbeddingMode::Builtin => match shard.search.vectors() {
                    Some(vectors) => vectors.alone.dim(),
                    None => v.len(),
                },
            };
            crate::write::check_vector("vector", v, dim)?;
            return Ok(Some(v.clone()));
        }
        let (EmbeddingMode::Builtin, Some(text)) = (mode, &query.text) else {
            return Ok(None);
        };
        match self.retrieval.embedder() {
            None => Ok(None),
            Some(Err(e)) => {
                warnings.push(format!("searching without vectors: {e}"));
                Ok(None)
            }
            Some(Ok(embedder)) => match embedder.embed(&[text.as_str()]) {
                Ok(mut v) => Ok(v.pop()),
                Err(e) => {
                    warnings.push(format!("searching without vectors: {e}"));
                    Ok(None)
                }
            },
        }
    }
}

fn check_query(q: &SearchQuery) -> Result<(), EngineError> {
    let invalid = |field: &str, value: String, why: &str| -> EngineError {
        mnemo_core::CoreError::invalid_value(field, value, why).into()
    };
    if q.text.as_deref().is_none_or(|t| t.trim().is_empty()) && q.vector.is_none() && q.entity.is_none() {
        return Err(invalid("text", String::new(), "a search needs text, a vector or an entity"));
    }
    if q.topics > MAX_TOPICS {
        return Err(EngineError::LimitExceeded {
            field: "topics".into(),
            value: q.topics as u64,
            max: MAX_TOPICS as u64,
        });
    }
    if let Some(t) = &q.text
        && t.len() > crate::MAX_TEXT_BYTES
    {
        return Err(EngineError::LimitExceeded {
            field: "text".into(),
            value: t.len() as u64,
            max: crate::MAX_TEXT_BYTES as u64,
        });
    }
    if q.limit == 0 || q.limit > MAX_SEARCH_LIMIT {
        return Err(EngineError::LimitExceeded {
            field: "limit".into(),
            value: q.limit as u64,
            max: MAX_SEARCH_LIMIT as u64,
        });
    }
    for (field, v) in [("retentionFloor", q.retention_floor), ("diversity", q.diversity_lambda)] {
        if !(0.0..=1.0).contains(&v) {
            return Err(invalid(field, v.to_string(), "must be in [0, 1]"));
        }
    }
    crate::store::check_window("occurredFrom..occurredTo", q.occurred_from, q.occurred_to)
}

/// The search proper, under the namespace's read lock.
fn run_search(
    index: &NamespaceIndex,
    basis: &Basis,
    search: &SearchIndex,
    query: &SearchQuery,
    query_vector: Option<&[f32]>,
    mut warnings: Vec<String>,
) -> Result<SearchResult, EngineError> {
    let view = View { valid_at: basis.valid_at, known_at: basis.known_at };
    let indexed = search.indexed();
    if indexed < basis.known_at {
        warnings.push(format!("indexes hold batches up to {indexed} of {}", basis.known_at));
    }
    let pool = (query.limit * 5).max(50);
    let (mut facts_allowed, mut episodes_allowed) = allowed(index, view, query);
    let mut matched: Vec<EntityId> = Vec::new();
    if let Some(text) = query.text.as_deref() {
        for (k, _) in index.names_in(text) {
            let e = index.canonical_entity(k, view.known_at);
            if !matched.contains(&e) {
                matched.push(e);
            }
            if matched.len() == MAX_QUERY_ENTITIES {
                break;
            }
        }
    }
    let mut topics = Vec::new();
    let mut entities_allowed = None;
    if query.topics > 0 || query.rank_topics {
        topics = rank_topics(index, basis, &matched, query_vector)?;
        if query.topics > 0 {
            topics.truncate(query.topics);
            let (f, e, n) = topic_scope(index, view, &topics, query.include_not_in_force);
            facts_allowed = Some(match facts_allowed {
                Some(a) => a.intersection(&f).copied().collect(),
                None => f,
            });
            episodes_allowed = Some(match episodes_allowed {
                Some(a) => a.intersection(&e).copied().collect(),
                None => e,
            });
            entities_allowed = Some(n);
        }
    }
    if !query.records {
        return Ok(SearchResult {
            hits: Vec::new(),
            matched_entities: matched,
            indexed_seq: indexed,
            warnings,
            topics,
        });
    }
    let admit = Admit {
        index,
        view,
        query,
        kinds: query.kinds.iter().map(|k| kind_code(*k)).collect(),
        facts_allowed,
        episodes_allowed,
        entities_allowed,
        cache: Mutex::new(HashMap::new()),
    };
    let keep = |k: u64| admit.check(k).is_some();
    let mut lists: Vec<(Component, Vec<(u64, f32)>)> = Vec::new();
    let push = |lists: &mut Vec<(Component, Vec<(u64, f32)>)>,
                c: Component,
                hits: Result<Vec<(u64, f32)>, mnemo_search::SearchError>,
                warnings: &mut Vec<String>| {
        if query.without.contains(&c) {
            return;
        }
        match hits {
            Ok(hits) => lists.push((c, hits.into_iter().filter(|h| keep(h.0)).take(pool).collect())),
            Err(e) => warnings.push(format!("{c:?} search failed: {e}")),
        }
    };
    if let Some(text) = query.text.as_deref() {
        // Full text over-fetches: visibility and filters are applied after.
        let kinds: Vec<u64> = admit.kinds.clone();
        push(&mut lists, Component::Text, search.text.search(text, &kinds, pool * 4), &mut warnings);
        if admit.kind_ok(KIND_EPISODE) {
            push(
                &mut lists,
                Component::TextInContext,
                as_episodes(search.context_text.search(text, &[], pool * 4)),
                &mut warnings,
            );
        }
    }
    if let (Some(v), Some(vectors)) = (query_vector, search.vectors()) {
        push(&mut lists, Component::Vector, vectors.alone.search(v, pool, &keep), &mut warnings);
        if admit.kind_ok(KIND_EPISODE) && !vectors.context.is_empty() {
            // Two documents an episode: twice the hits, to keep `pool` episodes.
            let keep_episode = |k: u64| keep(episode_key(k));
            push(
                &mut lists,
                Component::VectorInContext,
                as_episodes(vectors.context.search(v, pool * 2, &keep_episode)),
                &mut warnings,
            );
        }
    }
    // Lists among the episodes of the days the query names.
    if let Some(text) = query.text.as_deref()
        && admit.kind_ok(KIND_EPISODE)
    {
        let day = index.config().time_zone.local_date(basis.at);
        let mut days: Vec<String> = mnemo_search::when::mentions(text, day)
            .iter()
            .flat_map(mnemo_search::when::query_terms)
            .collect();
        days.sort();
        days.dedup();
        days.truncate(MAX_QUERY_TAGS);
        if !days.is_empty() {
            let time = search.text.search_tagged(text, &[KIND_EPISODE], &days, pool * 4);
            push(&mut lists, Component::Time, time, &mut warnings);
            if let (Some(v), Some(vectors)) = (query_vector, search.vectors())
                && !query.without.contains(&Component::VectorInTime)
            {
                match search.text.keys_tagged(&days, MAX_TAGGED) {
                    Ok(within) => {
                        let among = |k: u64| within.contains(&k) && keep(k);
                        let hits = vectors.alone.search(v, pool, &among);
                        push(&mut lists, Component::VectorInTime, hits, &mut warnings);
                    }
                    Err(e) => warnings.push(format!("VectorInTime search failed: {e}")),
                }
            }
        }
    }
    let mut seeds = matched.clone();
    if let Some(e) = query.entity {
        let e = index.canonical_entity(e, view.known_at);
        if !seeds.contains(&e) {
            seeds.push(e);
        }
    }
    if !seeds.is_empty() {
        let graph = graph_list(index, view, &seeds, query.include_not_in_force);
        push(&mut lists, Component::Graph, Ok(graph), &mut warnings);
    }

    // Evidence in a conversation spans turns: the turns before and after the best
    // episodes so far, in their order, make one more list.
    if admit.kind_ok(KIND_EPISODE) && !query.without.contains(&Component::Neighbour) {
        let ranked: Vec<Vec<(u64, f32)>> = lists.iter().map(|(_, l)| l.clone()).collect();
        let mut near = Vec::new();
        let best = rrf(&ranked, RRF_K).into_iter().filter(|f| f.key & 3 == KIND_EPISODE);
        for f in best.take(NEIGHBOUR_SEEDS) {
            for forward in [false, true] {
                if let Some(e) = index.thread_neighbour(EpisodeId(f.key >> 2), view.known_at, forward) {
                    near.push((key(RecordRef::Episode(e.id)), 1.0 / (near.len() + 1) as f32));
                }
            }
        }
        push(&mut lists, Component::Neighbour, Ok(near), &mut warnings);
    }
    let ranked: Vec<Vec<(u64, f32)>> = lists.iter().map(|(_, l)| l.clone()).collect();
    let fused = rrf(&ranked, RRF_K);
    // The words of the query, against which each episode's speaker is read.
    let named: HashSet<String> = match query.text.as_deref() {
        Some(text) if query.speaker_boost > 0.0 => name_words(text).collect(),
        _ => HashSet::new(),
    };
    // A question that asks when is answered by an episode that states a time.
    let asks_when =
        query.time_boost > 0.0 && query.text.as_deref().is_some_and(mnemo_search::when::asks_when);
    let tz = index.config().time_zone;
    let states_time = |r: RecordRef| match r {
        RecordRef::Episode(id) if asks_when => index
            .episode(id)
            .is_some_and(|e| mnemo_search::when::states_time(&e.text, tz.local_date(e.occurred_at))),
        _ => false,
    };
    let spoken_by_named = |r: RecordRef| match r {
        RecordRef::Episode(id) if !named.is_empty() => {
            index.episode(id).and_then(speaker).is_some_and(|who| name_words(who).any(|w| named.contains(&w)))
        }
        _ => false,
    };
    let mut scored: Vec<(u64, f64, Explanation)> = fused
        .into_iter()
        .take(pool)
        .filter_map(|f| {
            let status = admit.check(f.key)?;
            let r = record(f.key);
            let state = index.trace(r, view.known_at).map(|(trace, profile)| trace.state(&profile, basis.at));
            let retention = state.as_ref().map_or(1.0, |s| s.retention);
            let dormant = state.as_ref().is_some_and(|s| s.dormant);
            let cue = cue_strength(&f);
            let weight = retention_weight(retention.max(cue), query.retention_floor);
            let components = f
                .ranks
                .iter()
                .zip(&lists)
                .filter_map(|(r, (c, _))| r.map(|(rank, score)| ComponentRank { component: *c, rank, score }))
                .collect();
            let speaker = if spoken_by_named(r) { 1.0 + query.speaker_boost } else { 1.0 };
            let time = if states_time(r) { 1.0 + query.time_boost } else { 1.0 };
            let relevance = f.score * weight * speaker * time;
            Some((
                f.key,
                relevance,
                Explanation {
                    components,
                    fused: f.score,
                    cue,
                    retention,
                    weight,
                    speaker,
                    time,
                    relevance,
                    mmr: 0.0,
                    status,
                    dormant,
                },
            ))
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate((query.limit * 3).max(30));

    // Diversify: cosine between vectors where there are some, else overlap of terms.
    let vectors = search.vectors();
    let embedded: Vec<Option<Vec<f32>>> =
        scored.iter().map(|(k, _, _)| vectors.as_ref().and_then(|v| v.alone.get(*k))).collect();
    let terms: Vec<HashSet<String>> = scored
        .iter()
        .map(|(k, _, _)| {
            record_text(index, record(*k))
                .map(|t| search.text.terms(&t).into_iter().collect())
                .unwrap_or_default()
        })
        .collect();
    let sim = |a: usize, b: usize| match (&embedded[a], &embedded[b]) {
        (Some(x), Some(y)) => f64::from(mnemo_search::dot(x, y)).max(0.0),
        _ => {
            let (x, y) = (&terms[a], &terms[b]);
            let union = x.union(y).count();
            if union == 0 { 0.0 } else { x.intersection(y).count() as f64 / union as f64 }
        }
    };
    let relevance: Vec<f64> = scored.iter().map(|s| s.1).collect();
    let picked = mmr(&relevance, query.limit, query.diversity_lambda, sim);
    let hits = picked
        .into_iter()
        .map(|(i, value)| {
            let (k, score, mut explanation) = scored[i].clone();
            explanation.mmr = value;
            SearchHit { record: record(k), score, explanation }
        })
        .collect();
    Ok(SearchResult { hits, matched_entities: matched, indexed_seq: indexed, warnings, topics })
}

/// The topics of the network at the read, scored against the query: centroid similarity
/// to its vector (when both exist) plus the share of members it names; best first, those
/// scoring nothing left out.
fn rank_topics(
    index: &NamespaceIndex,
    basis: &Basis,
    named: &[EntityId],
    query_vector: Option<&[f32]>,
) -> Result<Vec<TopicScore>, EngineError> {
    let net = crate::topics::network(index, basis.known_at, basis.at)?;
    let mut scored: Vec<TopicScore> = net
        .topics
        .into_iter()
        .filter_map(|topic| {
            let sim = match (query_vector, topic.centroid.as_deref()) {
                (Some(q), Some(c)) => mnemo_topics::cosine(q, c).map_or(0.0, |s| f64::from(s.max(0.0))),
                _ => 0.0,
            };
            let hits = topic.members.iter().filter(|(e, _)| named.contains(e)).count();
            let share = hits as f64 / topic.members.len().max(1) as f64;
            let score = sim + share;
            (score > 0.0).then_some(TopicScore { topic, score })
        })
        .collect();
    scored.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.topic.id.cmp(&b.topic.id)));
    Ok(scored)
}

/// What lies inside some topics: their members' facts, the episodes of their segments
/// and those mentioning a member, and the members.
fn topic_scope(
    index: &NamespaceIndex,
    view: View,
    topics: &[TopicScore],
    all: bool,
) -> (HashSet<FactId>, HashSet<EpisodeId>, HashSet<EntityId>) {
    let scope = if all { Scope::All } else { Scope::InForce };
    let (mut facts, mut episodes, mut entities) = (HashSet::new(), HashSet::new(), HashSet::new());
    for t in topics {
        for n in &t.topic.segments {
            if let Some(seg) = index.segment(*n, view.known_at) {
                episodes.extend(seg.episodes.iter().copied());
            }
        }
        for (e, _) in &t.topic.members {
            entities.insert(*e);
            for filter in [
                FactFilter { subject: Some(*e), ..FactFilter::default() },
                FactFilter { object: Some(Value::Entity(*e)), ..FactFilter::default() },
            ] {
                facts.extend(index.facts(&filter, view, scope).into_iter().map(|f| f.fact.id));
            }
            let page = index.mentioning(*e, view.known_at, None, usize::MAX);
            episodes.extend(page.items.into_iter().map(|(_, ep)| ep.id));
        }
    }
    (facts, episodes, entities)
}

/// With an entity or predicate filter, the facts and episodes that pass it.
fn allowed(
    index: &NamespaceIndex,
    view: View,
    q: &SearchQuery,
) -> (Option<HashSet<FactId>>, Option<HashSet<EpisodeId>>) {
    if q.entity.is_none() && q.predicate.is_none() {
        return (None, None);
    }
    let scope = if q.include_not_in_force { Scope::All } else { Scope::InForce };
    let mut facts: Vec<FactView> = Vec::new();
    match q.entity {
        Some(e) => {
            let e = index.canonical_entity(e, view.known_at);
            for filter in [
                FactFilter { subject: Some(e), predicate: q.predicate.clone(), object: None },
                FactFilter { subject: None, predicate: q.predicate.clone(), object: Some(Value::Entity(e)) },
            ] {
                facts.extend(index.facts(&filter, view, scope));
            }
        }
        None => {
            let filter = FactFilter { subject: None, predicate: q.predicate.clone(), object: None };
            facts.extend(index.facts(&filter, view, scope));
        }
    }
    let episodes = facts.iter().flat_map(|f| f.provenance.iter().copied()).collect();
    (Some(facts.into_iter().map(|f| f.fact.id).collect()), Some(episodes))
}

/// The graph component: for each seed entity in turn, the entity, its facts (latest
/// valid first) and the episodes behind them.
fn graph_list(index: &NamespaceIndex, view: View, seeds: &[EntityId], all: bool) -> Vec<(u64, f32)> {
    let scope = if all { Scope::All } else { Scope::InForce };
    let mut keys: Vec<u64> = Vec::new();
    let mut seen = HashSet::new();
    let mut add = |k: u64, keys: &mut Vec<u64>| {
        if seen.insert(k) {
            keys.push(k);
        }
    };
    for &e in seeds {
        add(key(RecordRef::Entity(e)), &mut keys);
        let mut facts = index.facts(&FactFilter { subject: Some(e), ..FactFilter::default() }, view, scope);
        facts.extend(index.facts(
            &FactFilter { subject: None, predicate: None, object: Some(Value::Entity(e)) },
            view,
            scope,
        ));
        facts.sort_by(|a, b| b.valid.from().cmp(&a.valid.from()).then(b.fact.id.cmp(&a.fact.id)));
        for f in &facts {
            add(key(RecordRef::Fact(f.fact.id)), &mut keys);
        }
        for f in &facts {
            for p in f.provenance.iter().rev() {
                add(key(RecordRef::Episode(*p)), &mut keys);
            }
        }
    }
    keys.into_iter().enumerate().map(|(i, k)| (k, 1.0 / (i + 1) as f32)).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn ep(id: u64, text: &str, thread: Option<&str>) -> mnemo_core::Episode {
        mnemo_core::Episode {
            id: EpisodeId(id),
            text: text.into(),
            occurred_at: Timestamp::parse("t", "2023-05-08T13:56:00Z", &mnemo_core::TimeZone::Utc).unwrap(),
            thread: thread.map(Into::into),
            source: None,
            role: None,
            external_id: None,
            importance: None,
        }
    }

    #[test]
    fn speakers_are_a_leading_name_or_the_role() {
        let who = |t: &str| speaker(&ep(1, t, None)).map(str::to_owned);
        assert_eq!(who("Caroline: hi!").as_deref(), Some("Caroline"));
        assert_eq!(who("Mary Ann Lee: hello").as_deref(), Some("Mary Ann Lee"));
        assert_eq!(who("O'Brien: yes").as_deref(), Some("O'Brien"));
        assert_eq!(who("Note: buy milk"), Some("Note".into()));
        assert_eq!(who("the plan: buy milk"), None);
        assert_eq!(who("Meeting at 10:30"), None);
        assert_eq!(who("We met Anna, Bob and Carl Smith Jr yesterday: fun"), None);
        assert_eq!(who("no colon here"), None);
        let mut e = ep(1, "hello there", None);
        e.role = Some("user".into());
        assert_eq!(speaker(&e), Some("user"));
        assert_eq!(name_words("Mary Ann O'Brien").collect::<Vec<_>>(), ["mary", "ann", "brien"]);
        assert_eq!(
            name_words("What did Caroline's friend say?").collect::<Vec<_>>(),
            ["what", "did", "caroline", "friend", "say"]
        );
        let tags = episode_tags(&ep(1, "Mary Ann: I went there yesterday", None), &mnemo_core::TimeZone::Utc);
        assert_eq!(tags, ["d20230507", "d20230508", "m202305", "y2023"]);
    }

    /// A change of what is embedded rebuilds the vectors from the whole state, which may
    /// hold batches applied after the ones the indexer was handed: those are still to
    /// come as jobs, and must not be skipped as indexed (their text would never be added).
    #[test]
    fn a_vectors_rebuild_leaves_later_batches_to_their_own_jobs() {
        use crate::change::{Change, NewEpisode};
        let options = StoreOptions { defer_search: true, ..StoreOptions::default() };
        let store = Store::with_storage_and_options(
            Arc::new(mnemo_log::MemStorage::new()),
            crate::store::system_clock(),
            options,
        )
        .unwrap();
        let ns = mnemo_core::Namespace::new("ns", "n").unwrap();
        let episode = |text: &str| {
            Change::RecordEpisode(NewEpisode {
                text: text.into(),
                occurred_at: Timestamp::parse("t", "2029-06-01T00:00:00Z", &mnemo_core::TimeZone::Utc)
                    .unwrap(),
                ..NewEpisode::default()
            })
        };
        store.append(&ns, vec![episode("alpha garden")]).unwrap();
        store.append(&ns, vec![Change::ConfigureEmbedding(EmbeddingMode::Client { dim: 2 })]).unwrap();
        store.append(&ns, vec![episode("omega orchard")]).unwrap();
        let shard = store.shard(&ns).unwrap().unwrap();
        let mut batches: Vec<Job> = shard
            .log
            .records()
            .unwrap()
            .into_iter()
            .map(|r| {
                let events = crate::store::decode(&shard.name, r.seq, &r.payload).unwrap();
                Job::Batch(Arc::clone(&shard), Seq(r.seq), events)
            })
            .collect();
        assert_eq!(batches.len(), 3);
        let last = batches.pop().unwrap();
        let indexer =
            Indexer { options: StoreOptions::default(), embedder: OnceLock::new(), closing: false.into() };
        // The indexer is handed the first two batches while the third is applied already.
        indexer.process(batches);
        assert_eq!(shard.search.indexed(), Seq(2), "the third batch's text is not indexed yet");
        indexer.process(vec![last]);
        assert_eq!(shard.search.indexed(), Seq(3));
        let found = shard.search.text.search("omega", &[KIND_EPISODE], 10).unwrap();
        assert_eq!(found.len(), 1, "the episode after the change of embedding is found by its text");
    }

    #[test]
    fn context_documents_pair_each_turn_with_both_neighbours_and_are_only_added() {
        let tz = mnemo_core::TimeZone::Utc;
        let mut previous = HashMap::new();
        let mut docs = Docs::default();
        for (id, text) in [(1, "a"), (2, "b"), (3, "c")] {
            docs.episode(&mut previous, &ep(id, text, Some("t")), &tz);
        }
        docs.episode(&mut previous, &ep(9, "alone", None), &tz);
        let context = |docs: &Docs| -> Vec<(RecordRef, u64, String)> {
            docs.context.iter().map(|(k, t)| (record(episode_key(*k)), k & 3, t.clone())).collect()
        };
        let e = |id| RecordRef::Episode(EpisodeId(id));
        let (own, next) = (KIND_EPISODE, KIND_WITH_NEXT);
        assert_eq!(
            context(&docs),
            vec![
                (e(1), own, "a".into()),
                (e(2), own, "a\nb".into()),
                (e(1), next, "a\nb".into()),
                (e(3), own, "b\nc".into()),
                (e(2), next, "a\nb\nc".into()),
                (e(9), own, "alone".into()),
            ]
        );
        // The next set of documents pairs the thread's last turn with the new one.
        let mut later = Docs::default();
        later.episode(&mut previous, &ep(4, "d", Some("t")), &tz);
        assert_eq!(context(&later), vec![(e(4), own, "c\nd".into()), (e(3), next, "b\nc\nd".into())]);
        // Exchanges are paired with the one before only.
        let mut exchanges = Docs::default();
        let mut previous = HashMap::new();
        for (id, text) in [(1, "User: hi\nAssistant: hello"), (2, "User: and?\nAssistant: so")] {
            exchanges.episode(&mut previous, &ep(id, text, Some("t")), &tz);
        }
        assert!(exchanges.context.iter().all(|(k, _)| k & 3 == KIND_EPISODE));
        assert!(is_exchange("User: hi\nAssistant: hello") && !is_exchange("Caroline: hi\nhow are you?"));
    }
}
