//! The indexer: a background thread that feeds each namespace's search indexes off the
//! write path, rebuilds them when a namespace opens, and saves its vectors.

use std::collections::HashMap;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use ostrakon_core::{BuiltinModel, EmbeddingMode, Event, RecordRef, Seq};
use ostrakon_search::Embedder;
use ostrakon_search::{TextIndex, VectorIndex};

use crate::options::{SEARCH_ON_DISK_BYTES, StoreOptions};
use crate::retrieve::docs::Docs;
use crate::retrieve::index::SearchIndex;
use crate::retrieve::index::Vectors;
use crate::retrieve::keys::KIND_EPISODE;
use crate::retrieve::keys::key;
use crate::retrieve::lane::{Lane, VectorWork, embed_into};
use crate::retrieve::query::EMBED_BATCH;
use crate::retrieve::query::INDEXER_STOP_WAIT;
use crate::retrieve::saved_vectors::Stamp;
use crate::shard::Shard;
use crate::sync::{lock, stop_thread};

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
    pub(crate) indexer: Arc<Indexer>,
    pub(crate) jobs: Mutex<Option<(Sender<Job>, std::thread::JoinHandle<()>)>>,
}

/// What the indexer thread works with: options and the embedder once loaded.
pub(crate) struct Indexer {
    pub(crate) options: StoreOptions,
    /// The built-in embedder of each model once loaded: the store's default, then each
    /// [`BuiltinModel`] in declaration order.
    pub(crate) embedders: [OnceLock<Result<Arc<dyn Embedder>, String>>; 3],
    pub(crate) closing: std::sync::atomic::AtomicBool,
    /// Where the built-in embedder's vectors of live batches are written.
    pub(crate) lane: Lane,
}

impl Retrieval {
    pub(crate) fn new(options: StoreOptions) -> Arc<Self> {
        Arc::new(Retrieval {
            indexer: Arc::new(Indexer {
                options,
                embedders: Default::default(),
                closing: std::sync::atomic::AtomicBool::new(false),
                lane: Lane::new(),
            }),
            jobs: Mutex::new(None),
        })
    }

    /// The built-in embedder of a namespace in embedding mode `mode`, if it has one.
    pub(crate) fn embedder(&self, mode: EmbeddingMode) -> Option<Result<Arc<dyn Embedder>, String>> {
        self.indexer.embedder(mode)
    }

    /// Whether the store has a built-in embedder.
    pub(crate) fn has_embedder(&self) -> bool {
        self.indexer.options.embedder.is_some()
    }

    /// The built-in embedders a namespace has used (every model its embedding modes
    /// named), loaded if need be: each keeps an embedding cache that must forget the
    /// namespace's texts when they are erased.
    pub(crate) fn embedders_used(&self, index: &ostrakon_index::NamespaceIndex) -> Vec<Arc<dyn Embedder>> {
        let mut found: Vec<Arc<dyn Embedder>> = Vec::new();
        for mode in index.embedding_modes() {
            let Some(Ok(embedder)) = self.embedder(mode) else { continue };
            if !found.iter().any(|e| e.model_id() == embedder.model_id()) {
                found.push(embedder);
            }
        }
        found
    }

    pub(crate) fn residency(&self) -> crate::options::Residency {
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
            match std::thread::Builder::new().name("ostrakon-indexer".into()).spawn(move || indexer.run(rx)) {
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
        // The indexer finishes its current batch and stops, then the lane.
        if let Some(jobs) = lock(&self.jobs).take() {
            stop_thread(jobs, INDEXER_STOP_WAIT);
        }
        self.indexer.lane.stop();
    }
}

impl Indexer {
    pub(crate) fn embedder(&self, mode: EmbeddingMode) -> Option<Result<Arc<dyn Embedder>, String>> {
        let model = mode.builtin()?;
        let source = self.options.embedder.as_ref()?;
        let slot = match model {
            None => 0,
            Some(BuiltinModel::E5) => 1,
            Some(BuiltinModel::MiniLm) => 2,
        };
        Some(self.embedders[slot].get_or_init(|| source(model)).clone())
    }

    pub(crate) fn closing(&self) -> bool {
        self.closing.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub(crate) fn run(self: Arc<Self>, rx: Receiver<Job>) {
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
    pub(crate) fn process(&self, jobs: Vec<Job>) {
        let mut group: Vec<(Seq, Vec<Event>)> = Vec::new();
        let mut group_shard: Option<Arc<Shard>> = None;
        for job in jobs {
            match job {
                Job::Rebuild(shard) => {
                    if let Some(s) = group_shard.take() {
                        self.index_batches(&s, std::mem::take(&mut group));
                    }
                    if shard.search.is_abandoned() {
                        continue;
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
    pub(crate) fn rebuild(&self, shard: &Shard, vectors_only: Option<Seq>) {
        let search = &shard.search;
        let Some(_busy) = search.work() else { return };
        // Every vector is written below: those of live batches queued before are not.
        search.new_epoch();
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
        let mut docs = {
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
            crate::retrieve::docs::whole(&index, previous)
        };
        docs.client = index.client_vectors().into_iter().map(|(id, v)| (id, v.to_vec())).collect();
        docs.vectors_only = vectors_only.is_some();
        docs.full = true;
        let mode = index.embedding_mode();
        drop(index);
        if vectors_only.is_none() {
            docs = match self.index_on_shared_vectors(shard, docs, mode, upto) {
                None => return,
                Some(docs) => docs,
            };
        }
        let upto = vectors_only.map_or(upto, |text_upto| text_upto.min(upto));
        self.write_docs(shard, docs, mode, upto, upto);
    }

    /// Brings persistent text indexes that hold the log up to their stamp up to the
    /// namespace's last batch, indexing only the batches after it, then the vectors;
    /// `false` when their stamp is not of this log.
    pub(crate) fn catch_up(&self, shard: &Shard) -> bool {
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
        let Some(tail) = batches_after(shard, stamp.seq, upto) else { return false };
        let index = shard.index.read().unwrap_or_else(PoisonError::into_inner);
        // Each commit is stamped with the batch it covers, so the index holds no document
        // of a later batch: these are added as the live indexer adds them.
        let docs = docs_after(&index, &mut lock(&search.previous), stamp.seq, &tail);
        let mode = index.embedding_mode();
        drop(index);
        tracing::info!(namespace = %shard.name, from = stamp.seq, to = upto.0, "search index caught up from disk");
        if mode == EmbeddingMode::Off {
            self.write_docs(shard, docs, mode, upto, upto);
        } else if let Some((_, vectors)) = self.saved_vectors(shard, stamp.seq, mode, &tail) {
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

    /// The vectors saved beside the text indexes, or else those the log backend shares,
    /// if they hold at least the batches up to `at_least`, of this log, in `mode`, of
    /// the embedder's length, and nothing since them (in `tail`, the batches after some
    /// batch up to theirs, up to the namespace's last) changed what is embedded or erased
    /// what they hold. With the batch they hold.
    pub(crate) fn saved_vectors(
        &self,
        shard: &Shard,
        at_least: u64,
        mode: EmbeddingMode,
        tail: &[(Seq, Vec<Event>)],
    ) -> Option<(u64, Arc<Vectors>)> {
        let local = shard.search.vectors_path().and_then(|path| {
            crate::retrieve::saved_vectors::load(&path, self.options.hnsw).unwrap_or_else(|why| {
                tracing::warn!(namespace = %shard.name, reason = %why, "saved search vectors ignored");
                None
            })
        });
        if let Some(found) = local.and_then(|saved| self.usable(shard, saved, at_least, mode, tail)) {
            *lock(&shard.search.vectors_saved) = found.0;
            return Some(found);
        }
        let backend = shard.search.shared.as_ref()?;
        let shared = match backend.load_vectors(shard.name.as_str()) {
            Ok(bytes) => bytes?,
            Err(e) => {
                tracing::warn!(namespace = %shard.name, error = %e, "shared search vectors unreadable; embedding again");
                return None;
            }
        };
        let saved = match crate::retrieve::saved_vectors::decode(&shared, self.options.hnsw) {
            Ok(saved) => saved,
            Err(why) => {
                tracing::warn!(namespace = %shard.name, reason = %why, "shared search vectors ignored; embedding again");
                return None;
            }
        };
        let found = self.usable(shard, saved, at_least, mode, tail)?;
        *lock(&shard.search.vectors_shared) = found.0;
        tracing::info!(namespace = %shard.name, batch = found.0, "search vectors loaded from the shared store");
        Some(found)
    }

    fn usable(
        &self,
        shard: &Shard,
        saved: crate::retrieve::saved_vectors::Saved,
        at_least: u64,
        mode: EmbeddingMode,
        tail: &[(Seq, Vec<Event>)],
    ) -> Option<(u64, Arc<Vectors>)> {
        let held = saved.stamp.seq;
        let fits = {
            let index = shard.index.read().unwrap_or_else(PoisonError::into_inner);
            // An erasure after them leaves them holding what it erased.
            let erased_since = index.erasures().iter().any(|e| e.seq.0 > held);
            held >= at_least && saved.stamp.fits(&index) && !erased_since
        };
        let (dim, model) = match mode {
            EmbeddingMode::Builtin | EmbeddingMode::Model(_) => {
                let embedder = self.embedder(mode)?.ok()?;
                (embedder.dim(), embedder.model_id().to_owned())
            }
            EmbeddingMode::Client { dim } => (dim as usize, String::new()),
            EmbeddingMode::Off => return None,
        };
        let reembeds = tail.iter().any(|(seq, events)| seq.0 > held && reembeds(events));
        let other = saved.mode != mode || saved.model != model;
        if !fits || reembeds || other || saved.alone.dim() != dim || saved.context.dim() != dim {
            tracing::info!(namespace = %shard.name, batch = held, "saved search vectors are of other settings or batches; embedding again");
            return None;
        }
        Some((held, Arc::new(Vectors { mode, model, alone: saved.alone, context: saved.context })))
    }

    /// Builds the indexes of a namespace whose text indexes start empty from the vectors
    /// another node shared: the text of everything, those vectors, and the vectors of the
    /// batches after theirs; `docs` back (nothing done) when there are none to use.
    pub(crate) fn index_on_shared_vectors(
        &self,
        shard: &Shard,
        docs: Docs,
        mode: EmbeddingMode,
        upto: Seq,
    ) -> Option<Docs> {
        if shard.search.shared.is_none() || !mode.is_builtin() {
            return Some(docs);
        }
        // Which batches the shared vectors hold is known only once they are read: the
        // tail is read from the log after that.
        let Some((held, vectors)) = self.saved_vectors(shard, 0, mode, &[]) else { return Some(docs) };
        let Some(tail) = batches_after(shard, held, upto) else { return Some(docs) };
        if tail.iter().any(|(_, events)| reembeds(events)) {
            return Some(docs);
        }
        let mut later = {
            let index = shard.index.read().unwrap_or_else(PoisonError::into_inner);
            docs_after(&index, &mut HashMap::new(), held, &tail)
        };
        later.vectors_only = true;
        // Text first (not yet marked searchable), then the shared vectors and the later ones.
        self.write_docs(shard, docs, EmbeddingMode::Off, Seq(0), upto);
        *shard.search.vectors.write().unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&vectors));
        lock(&shard.search.progress).vectors_upto = Some(held);
        self.write_docs(shard, later, mode, upto, upto);
        vectors.alone.build_if_large();
        vectors.context.build_if_large();
        None
    }

    pub(crate) fn index_batches(&self, shard: &Arc<Shard>, batches: Vec<(Seq, Vec<Event>)>) {
        let search = &shard.search;
        // Abandoned (erased from, dropped): its queued batches are dropped unread.
        let Some(_busy) = search.work() else { return };
        let done = search.text_indexed();
        let batches: Vec<(Seq, Vec<Event>)> = batches.into_iter().filter(|(s, _)| *s > done).collect();
        let Some(upto) = batches.last().map(|(s, _)| *s) else {
            return;
        };
        // What is embedded changed: the vectors are rebuilt as the new settings say, so
        // that they hold what a rebuild from the log would (derived state never depends
        // on when it was built).
        let reembed = batches.iter().any(|(_, events)| reembeds(events));
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
            search.new_epoch();
            *search.vectors.write().unwrap_or_else(PoisonError::into_inner) = None;
            self.write_docs(shard, docs, EmbeddingMode::Off, Seq(0), upto);
            self.rebuild(shard, Some(upto));
            return;
        }
        if mode.is_builtin() && self.options.embedder.is_some() {
            // The text now (before the embedder is loaded, which can take a while), the
            // vectors on the lane behind it.
            let warning = self.write_text(shard, &docs, upto, upto);
            let epoch = search.epoch();
            let embedder = match self.embedder(mode) {
                Some(Ok(embedder)) => embedder,
                failed => {
                    let why = failed.and_then(Result::err).map(|e| format!("no built-in embedder: {e}"));
                    return search.settle(upto, false, false, why.or(warning), epoch);
                }
            };
            let target = self.vectors_for(search, mode, embedder.dim());
            // Even with nothing to embed, through the lane: the batches are marked in order,
            // never ahead of the ones whose vectors it still writes.
            let (alone, context) = docs.embedded_texts();
            let work = VectorWork {
                shard: Arc::clone(shard),
                embedder,
                target,
                alone,
                context,
                upto,
                epoch,
                warning,
            };
            if let Err(work) = self.lane.submit(work) {
                work.write(EMBED_BATCH, &|| self.closing());
            }
            return;
        }
        self.write_docs(shard, docs, mode, upto, upto);
    }

    /// Adds documents to the text and vector indexes, then marks `upto` searchable; a
    /// persistent text index is stamped as holding the batches up to `text_upto`.
    pub(crate) fn write_docs(
        &self,
        shard: &Shard,
        docs: Docs,
        mode: EmbeddingMode,
        upto: Seq,
        text_upto: Seq,
    ) {
        let search = &shard.search;
        search.owe(upto);
        let warning = self.write_text(shard, &docs, upto, text_upto);
        let epoch = search.epoch();
        let (complete, warning) = match self.write_vectors(shard, &docs, mode) {
            Ok(complete) => (complete, warning),
            Err(w) => (false, Some(w)),
        };
        search.settle(upto, complete, docs.full, warning, epoch);
    }

    /// Adds documents to the text indexes and marks `upto` as in them; a persistent text
    /// index is stamped as holding the batches up to `text_upto`. Why it failed, if it did.
    pub(crate) fn write_text(&self, shard: &Shard, docs: &Docs, upto: Seq, text_upto: Seq) -> Option<String> {
        let search = &shard.search;
        fn text_doc<'a>((r, t): &'a (RecordRef, String), tags: &'a [String]) -> ostrakon_search::Doc<'a> {
            (key(*r), key(*r) & 3, t.as_str(), tags)
        }
        if docs.vectors_only {
            return None;
        }
        let split = |replace: bool| {
            docs.alone
                .iter()
                .zip(&docs.tags)
                .zip(&docs.replace)
                .filter(move |(_, r)| **r == replace)
                .map(|((d, tags), _)| text_doc(d, tags))
        };
        let context = || docs.context.iter().map(|(k, t)| (*k, KIND_EPISODE, t.as_str(), &[][..]));
        let stamp = (search.persistent && !(docs.alone.is_empty() && docs.context.is_empty())).then(|| {
            Stamp::of(&shard.index.read().unwrap_or_else(PoisonError::into_inner), text_upto).encode()
        });
        let commit = |text: &TextIndex| match &stamp {
            Some(stamp) => text.commit_with(stamp),
            None => text.commit(),
        };
        let written = search
            .text
            .add(split(false))
            .and_then(|()| search.text.upsert(split(true)))
            .and_then(|()| commit(&search.text))
            .and_then(|()| search.context_text.add(context()))
            .and_then(|()| commit(&search.context_text));
        search.text_done(upto);
        written.err().map(|e| format!("full-text indexing failed: {e}"))
    }

    /// Writes the documents' vectors; `Ok(false)` when it stopped short (the store is
    /// closing, or what is embedded changed) or there is no embedder to write them.
    pub(crate) fn write_vectors(
        &self,
        shard: &Shard,
        docs: &Docs,
        mode: EmbeddingMode,
    ) -> Result<bool, String> {
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
            EmbeddingMode::Builtin | EmbeddingMode::Model(_) => {
                let Some(embedder) = self.embedder(mode) else {
                    return Ok(false);
                };
                let embedder = embedder.map_err(|e| format!("no built-in embedder: {e}"))?;
                let vectors = self.vectors_for(search, mode, embedder.dim());
                let (alone, context) = docs.embedded_texts();
                let stop = || self.closing() || changed();
                let lists = [(&alone[..], &vectors.alone), (&context[..], &vectors.context)];
                return embed_into(&*embedder, lists, search, EMBED_BATCH, &stop);
            }
        };
        let items: Vec<(u64, Vec<f32>)> =
            docs.client.iter().map(|(id, v)| (key(RecordRef::Episode(*id)), v.clone())).collect();
        vectors.alone.upsert(&items).map_err(|e| format!("vector index: {e}"))?;
        Ok(true)
    }

    /// The namespace's vector indexes for `mode`, replacing those of another mode (their
    /// vectors are not comparable).
    pub(crate) fn vectors_for(&self, search: &SearchIndex, mode: EmbeddingMode, dim: usize) -> Arc<Vectors> {
        let mut slot = search.vectors.write().unwrap_or_else(PoisonError::into_inner);
        match &*slot {
            Some(v) if v.mode == mode && v.alone.dim() == dim => Arc::clone(v),
            _ => {
                let model = self
                    .embedder(mode)
                    .and_then(Result::ok)
                    .map(|e| e.model_id().to_owned())
                    .unwrap_or_default();
                let v = Arc::new(Vectors {
                    mode,
                    model,
                    alone: VectorIndex::new(dim, self.options.hnsw),
                    context: VectorIndex::new(dim, self.options.hnsw),
                });
                *slot = Some(Arc::clone(&v));
                v
            }
        }
    }
}

/// Whether a batch's events change what is embedded (then every vector is made again).
fn reembeds(events: &[Event]) -> bool {
    events.iter().any(|e| {
        matches!(
            e,
            Event::EmbeddingConfigured(_) | Event::EmbeddingPolicySet(_) | Event::PredicateEmbedding { .. }
        )
    })
}

/// The batches after `from` up to `upto`, decoded from the namespace's log; `None` when
/// it cannot be read.
fn batches_after(shard: &Shard, from: u64, upto: Seq) -> Option<Vec<(Seq, Vec<Event>)>> {
    if from >= upto.0 {
        return Some(Vec::new());
    }
    let records = shard.log.read_after(from).ok()?;
    records
        .into_iter()
        .filter(|r| r.seq > from && r.seq <= upto.0)
        .map(|r| {
            crate::write::codec::decode(&shard.name, r.seq, &r.payload)
                .ok()
                .map(|events| (Seq(r.seq), events))
        })
        .collect()
}

/// The documents of `batches` (those after batch `from`) as the live indexer made them:
/// `previous` is set to each thread's latest episode as of `from` first, and left as
/// `batches` leave it.
fn docs_after(
    index: &ostrakon_index::NamespaceIndex,
    previous: &mut HashMap<String, crate::retrieve::index::Latest>,
    from: u64,
    batches: &[(Seq, Vec<Event>)],
) -> Docs {
    previous.clear();
    let mut before = Docs::default();
    let tz = index.config().time_zone;
    for (seq, e) in index.all_episodes() {
        if seq.0 <= from {
            before.episode(previous, e, &tz);
        }
    }
    let mut docs = Docs::default();
    for (_, events) in batches {
        for event in events {
            docs.of_event(index, previous, event);
        }
    }
    docs
}
