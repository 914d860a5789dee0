//! Erasure: removing records from a namespace's past on purpose (a person's request, a
//! retention rule), the one write that destroys content.
//!
//! An erasure is decided like any write, under the namespace's writer lock: the records
//! it takes are found in the state (`NamespaceIndex::erase_set_of_*`) and an
//! `Event::Erased` naming them with the hash of each one's content is appended. Then the
//! namespace is closed to writes and compacted: every batch that held an erased record
//! is written again with that event replaced by an `Event::Tombstone` (what it was, and
//! the hash of its bytes), the log replaced atomically ([`LogBackend::rewrite`]), and
//! everything derived from it dropped — checkpoint, search indexes and saved vectors,
//! the embedding cache's entries for erased texts — and the namespace opened again from
//! the compacted log. A crash before the rewrite leaves the old log with the erasure in
//! it: opening finds content the erasure names (`NamespaceIndex::erasure_pending`) and
//! compacts first.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use ostrakon_core::{
    EntityId, EpisodeId, ErasedRef, Erasure, Event, FactId, Namespace, RecordRef, Seq, Timestamp, TombstoneOf,
};
use ostrakon_index::{EraseRefused, ErasedMark, ErasureRecord, NamespaceIndex};
use ostrakon_log::{LogError, Record};
use sha2::Sha256;

use crate::error::read::ReadError;
use crate::error::storage::StorageError;
use crate::error::write::WriteError;
use crate::retrieve::indexer::Job;
use crate::shard::Shard;
use crate::store::Store;
use crate::sync::{lock, read};
use crate::write::codec::{decode, encode};
use crate::write::writer::Effects;

/// What to erase.
#[derive(Clone, Debug, PartialEq)]
pub enum EraseTarget {
    /// An entity, with its names and aliases, every fact whose subject or object it is,
    /// every episode that mentions it (recorded as a mention, or naming it in its text)
    /// and every intention triggered by mentions of it.
    Entity(EntityId),
    /// These episodes (the facts stated from them stay; their provenance names an
    /// erased episode).
    Episodes(Vec<EpisodeId>),
    /// These facts, each with every statement of it.
    Facts(Vec<FactId>),
}

impl EraseTarget {
    /// Its ids, as a person writes them: `5`, `3, 4`.
    fn ids(&self) -> String {
        let join = |ids: Vec<String>| ids.join(", ");
        match self {
            EraseTarget::Entity(id) => id.to_string(),
            EraseTarget::Episodes(ids) => join(ids.iter().map(ToString::to_string).collect()),
            EraseTarget::Facts(ids) => join(ids.iter().map(ToString::to_string).collect()),
        }
    }
}

/// An erasure as asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct EraseRequest {
    /// What.
    pub target: EraseTarget,
    /// Why, for the audit (kept in the log; never the content).
    pub reason: Option<String>,
    /// Who asked (a token's name, an operator's command).
    pub by: Option<String>,
}

/// What an erasure did.
#[derive(Clone, Debug, PartialEq)]
pub struct Erased {
    /// The batch that records it.
    pub seq: Seq,
    /// When it committed.
    pub system_time: Timestamp,
    /// Every record erased, with the SHA-256 (hex) of its content.
    pub records: Vec<(ErasedRef, String)>,
    /// Batches of the log written again with tombstones in place of what it erased (the
    /// same count whichever node of a cluster rewrote them).
    pub batches_rewritten: usize,
    /// Entries the embedding cache dropped.
    pub cache_entries_dropped: usize,
}

/// An erasure's batch once durable: where it committed, its events, what it erased.
type Decided = (ostrakon_log::Committed, Vec<Event>, Vec<(ErasedRef, String)>);

/// The digest an erasure keeps of an erased event: HMAC-SHA-256 (hex) of its bytes with
/// the store's erasure key, or nothing (an empty string) without one
/// ([`crate::options::StoreOptions::erasure_key`]).
fn hash_event(key: Option<&[u8]>, event: &Event) -> String {
    use hmac::Mac as _;
    let Some(key) = key else { return String::new() };
    let Ok(mut mac) = hmac::Hmac::<Sha256>::new_from_slice(key) else { return String::new() };
    mac.update(&postcard::to_stdvec(event).unwrap_or_default());
    mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect()
}

fn refused(target: &EraseTarget, e: EraseRefused) -> WriteError {
    let EraseRefused::Unknown(value) = e;
    match target {
        EraseTarget::Entity(_) => WriteError::UnknownEntity { field: "entity".into(), value },
        EraseTarget::Episodes(_) => WriteError::UnknownEpisode { field: "episodes".into(), value },
        EraseTarget::Facts(_) => WriteError::UnknownFact { field: "facts".into(), value },
    }
}

impl Store {
    /// Erases records from a namespace's past: see [`EraseTarget`] for what each target
    /// takes with it. On `Ok` the content is gone from the log, the checkpoint, the search
    /// indexes and the embedding cache, and no read at any read point returns it; the log
    /// keeps a tombstone (seq, system time, hash) where each erased event was, and the
    /// erasure itself (ids, hashes, who, why) for [`Store::erasures`]. An unknown id
    /// erases nothing ([`WriteError::UnknownEntity`] and its kin).
    /// ```
    /// use ostrakon_engine::{EraseRequest, EraseTarget};
    #[doc = include_str!("../../doc/ada_moves.txt")]
    /// let request = EraseRequest {
    ///     target: EraseTarget::Episodes(vec![moved]),
    ///     reason: Some("asked by Ada".into()),
    ///     by: None,
    /// };
    /// let erased = store.erase(&ns, request)?;
    /// assert_eq!(erased.records.len(), 1);
    /// // Gone from every read, at every point, and from the log itself.
    /// assert!(store.at(&ns, ReadAt::latest())?.episode_at(moved)?.is_none());
    /// let text = format!("{:?}", store.export(&ns)?);
    /// assert!(!text.contains("moved to Berlin"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn erase(&self, ns: &Namespace, request: EraseRequest) -> Result<Erased, WriteError> {
        self.check_damaged(ns)?;
        let target = &request.target;
        let Some(mut shard) = self.shard(ns)? else {
            return Err(refused(target, EraseRefused::Unknown(target.ids())));
        };
        let mut conflicts = 0;
        let deadline = std::time::Instant::now() + self.backend.write_budget();
        // On a shared log, records named that this node does not hold may be another
        // node's write not applied here yet: looked for once more after catching up.
        let mut refused_behind = !self.backend.shared();
        let (committed, events, records) = loop {
            if shard.retired.load(Ordering::SeqCst) {
                shard = self.reopened(ns, &shard)?;
            }
            match self.submit_erasure(&shard, &request, deadline) {
                Ok(Some(done)) => break done,
                // Batches of this node still being applied, or another node's erasure
                // being forgotten here: wait for them, then decide again.
                Ok(None) if std::time::Instant::now() < deadline => {
                    conflicts += 1;
                    self.settle(&shard);
                }
                Ok(None) => {
                    return Err(StorageError::Unavailable {
                        namespace: ns.to_string(),
                        reason: "the namespace kept changing under the erasure; retry".into(),
                    }
                    .into());
                }
                // On a shared log another node appended first: catch up (the records may
                // be gone by now: then the erasure is refused as unknown) and try again.
                Err(WriteError::Conflict { .. }) if std::time::Instant::now() < deadline => {
                    conflicts += 1;
                    crate::write::append::backoff(conflicts);
                    match self.catch_up_shard(&shard) {
                        Ok(_)
                        | Err(
                            StorageError::Log { source: LogError::Conflict { .. }, .. }
                            | StorageError::Unavailable { .. },
                        ) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                Err(
                    e @ (WriteError::UnknownEntity { .. }
                    | WriteError::UnknownEpisode { .. }
                    | WriteError::UnknownFact { .. }),
                ) if !refused_behind => {
                    refused_behind = true;
                    let before = read(&shard.index).last_seq();
                    if !self.catch_up_shard(&shard).is_ok_and(|now| now > before) {
                        return Err(e);
                    }
                }
                Err(e) => return Err(e),
            }
        };
        let system_time = Timestamp::from_micros(committed.system_time);
        if let Err(why) = shard.publish(committed.seq, system_time, events, &self.listeners, &self.retrieval)
        {
            return Err(self.refuse_damaged(&shard, why).into());
        }
        // From here on the erasure is acknowledged: a failure to rewrite is said as such.
        let (compacted, cache_entries_dropped) = self.compact_and_reopen(&shard).map_err(|e| match e {
            e @ (StorageError::Damaged { .. } | StorageError::NamespaceDropped { .. }) => e.into(),
            other => WriteError::ErasureUnfinished {
                namespace: ns.to_string(),
                seq: Seq(committed.seq),
                reason: match other {
                    StorageError::Unavailable { reason, .. } => format!("the log did not answer: {reason}"),
                    other => other.to_string(),
                },
            },
        })?;
        let batches_rewritten = compacted.get(&committed.seq).copied().unwrap_or(0);
        Ok(Erased { seq: Seq(committed.seq), system_time, records, batches_rewritten, cache_entries_dropped })
    }

    /// Decides an erasure under the writer lock and waits until its batch is durable;
    /// the shard is retired from then on (nothing is queued after it: the log is
    /// rewritten next), or serves on if the batch was refused. `None` when it cannot be
    /// decided now: batches queued before it are not applied yet, or the shard was
    /// retired (another erasure is being forgotten here).
    fn submit_erasure(
        &self,
        shard: &Arc<Shard>,
        request: &EraseRequest,
        deadline: std::time::Instant,
    ) -> Result<Option<Decided>, WriteError> {
        let (ns, target) = (&shard.name, &request.target);
        let log_err = |source| WriteError::of_log(ns, source);
        let (ticket, events, records) = {
            let mut writer = lock(&shard.writer);
            if shard.retired.load(Ordering::SeqCst) {
                return Ok(None);
            }
            let index = read(&shard.index);
            if shard.log.own_pending() > index.last_seq().0 {
                // Batches queued before are not applied yet: the erasure must see what
                // they wrote (a fact about the person), and go out in a message of its own.
                return Ok(None);
            }
            writer.follow(&index, &*shard.log);
            let set = match target {
                EraseTarget::Entity(id) => index.erase_set_of_entity(*id),
                EraseTarget::Episodes(ids) => index.erase_set_of_episodes(ids),
                EraseTarget::Facts(ids) => index.erase_set_of_facts(ids),
            }
            .map_err(|e| refused(target, e))?;
            let records: Vec<(ErasedRef, String)> = set
                .iter()
                .map(|r| {
                    (*r, index.content_of(*r).map(|e| hash_event(self.erasure_key(), &e)).unwrap_or_default())
                })
                .collect();
            drop(index);
            let erasure =
                Erasure { records: records.clone(), reason: request.reason.clone(), by: request.by.clone() };
            let events = vec![Event::Erased(erasure)];
            let payload = encode(&events)?;
            let after = ostrakon_log::After { seq: writer.last_seen(), refusals: writer.refusals, deadline };
            let ticket = shard.log.submit(&payload, after).map_err(log_err)?;
            writer.submitted(ticket.committed().seq, Effects::default());
            shard.retired.store(true, Ordering::SeqCst);
            (ticket, events, records)
        };
        match shard.log.wait(ticket) {
            Ok(c) => Ok(Some((c, events, records))),
            Err(e) => {
                shard.retired.store(false, Ordering::SeqCst);
                Err(log_err(e))
            }
        }
    }

    /// Another node erased records of a namespace open here (its `Erased` batch was just
    /// applied): this node compacts too — the log's rewrite converges whoever runs it —
    /// and drops its own copies (search indexes, the embedding cache's texts), then
    /// serves the namespace opened again. Returns the last batch applied then.
    pub(crate) fn forget_erased(&self, shard: &Arc<Shard>) -> Result<Seq, StorageError> {
        if !self.begin_forgetting(shard) {
            // Compacted already by someone else here (the erasure itself, another reader).
            return self.reopened(&shard.name, shard).map(|s| read(&s.index).last_seq());
        }
        self.finish_forgetting(shard)
    }

    /// The first, quick part of [`Store::forget_erased`]: retires the shard and marks the
    /// namespace compacting, so that from now reads and writes wait for it to open again.
    /// Returns whether this caller is the one to finish (nobody had retired it yet).
    pub(crate) fn begin_forgetting(&self, shard: &Arc<Shard>) -> bool {
        let owner = {
            // Under the writer lock: nothing is queued after this.
            let _writer = lock(&shard.writer);
            !shard.retired.swap(true, Ordering::SeqCst)
        };
        if owner {
            let _opening = lock(&self.opening);
            lock(&self.compacting).insert(shard.name.clone());
            let mut shards = self.shards.write().unwrap_or_else(PoisonError::into_inner);
            if shards.get(&shard.name).is_some_and(|s| Arc::ptr_eq(s, shard)) {
                shards.remove(&shard.name);
            }
        }
        owner
    }

    /// The rest of [`Store::forget_erased`], by the caller [`Store::begin_forgetting`]
    /// made the owner.
    pub(crate) fn finish_forgetting(&self, shard: &Arc<Shard>) -> Result<Seq, StorageError> {
        self.settle(shard);
        self.compact_and_reopen(shard)?;
        match read(&self.shards).get(&shard.name) {
            Some(now) => Ok(read(&now.index).last_seq()),
            None => Ok(read(&shard.index).last_seq()),
        }
    }

    /// Waits (a bounded time) until every batch this node queued on a shard's log is
    /// applied: writers publish what they queued before it was retired. Batches of other
    /// nodes the log has read are not waited for (an erasure among them is applied by
    /// opening the namespace again, never to this shard).
    pub(crate) fn settle(&self, shard: &Shard) {
        let deadline = std::time::Instant::now() + crate::limits::MAX_ERASE_WAIT;
        while read(&shard.index).last_seq().0 < shard.log.own_pending()
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    pub(crate) fn remove_search_dir(&self, ns: &Namespace) -> Result<(), StorageError> {
        let Some(data) = &self.data_dir else { return Ok(()) };
        let dir = data.join("search").join(ns.as_str());
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StorageError::Index(format!("{}: {e}", dir.display()))),
        }
    }

    /// Erases the episodes that the namespace's retention period has made due at `now`
    /// (recorded longer ago than the period), in erasures of at most
    /// [`MAX_ERASE_RECORDS`](crate::limits::MAX_ERASE_RECORDS) episodes, oldest first;
    /// the facts stated from them stay. Runs at most once per
    /// [`RETENTION_EVERY_MICROS`](crate::limits::RETENTION_EVERY_MICROS) per namespace;
    /// returns how many episodes it erased.
    pub fn apply_retention(&self, ns: &Namespace, now: Timestamp) -> Result<usize, WriteError> {
        let Some(after) = self.with_index(ns, |i| i.retention().episodes_after_micros)? else { return Ok(0) };
        {
            let mut retained = lock(&self.schedule.retained);
            let last = retained.get(ns).copied();
            if last.is_some_and(|t| now.as_micros().saturating_sub(t) < crate::limits::RETENTION_EVERY_MICROS)
            {
                return Ok(0);
            }
            retained.insert(ns.clone(), now.as_micros());
        }
        let cutoff = Timestamp::from_micros(now.as_micros().saturating_sub(after));
        let due = self.with_index(ns, |i| i.episodes_recorded_before(cutoff))?;
        let mut erased = 0;
        for chunk in due.chunks(crate::limits::MAX_ERASE_RECORDS) {
            let request = EraseRequest {
                target: EraseTarget::Episodes(chunk.to_vec()),
                reason: Some(format!("retention: episodes are kept {}", ostrakon_core::iso_duration(after))),
                by: Some("retention".into()),
            };
            match self.erase(ns, request) {
                Ok(done) => erased += done.records.len(),
                // On a shared log another node's retention erased them first.
                Err(WriteError::UnknownEpisode { .. }) if self.backend.shared() => break,
                Err(e) => return Err(e),
            }
        }
        Ok(erased)
    }

    /// Every erasure of a namespace, in log order (for audit: ids, hashes, who, why).
    pub fn erasures(&self, ns: &Namespace) -> Result<Vec<ErasureRecord>, ReadError> {
        Ok(self.shard(ns)?.map(|s| read(&s.index).erasures()).unwrap_or_default())
    }

    /// The `ERASED` marker of a record, if it was erased: where it was, when it went.
    pub fn erased(&self, ns: &Namespace, record: ErasedRef) -> Result<Option<ErasedMark>, ReadError> {
        Ok(self.shard(ns)?.and_then(|s| read(&s.index).erased(record)))
    }

    /// Compacts a retired namespace's log, drops what was derived from it and opens it
    /// again; returns what the compaction did and the cache entries dropped.
    fn compact_and_reopen(&self, shard: &Arc<Shard>) -> Result<(Compacted, usize), StorageError> {
        let ns = &shard.name;
        {
            // From here nobody opens the namespace until it is compacted; the others open
            // as usual.
            let _opening = lock(&self.opening);
            lock(&self.compacting).insert(ns.clone());
            self.shards.write().unwrap_or_else(PoisonError::into_inner).remove(ns);
        }
        let heard = read(&shard.index).last_seq().0;
        let done = self.compact_shard(shard);
        let _opening = lock(&self.opening);
        let outcome = match done {
            Ok((reopened, counts)) => {
                // Batches the namespace opened with that this node's listeners have not
                // heard (another node's erasure, what came meanwhile): handed to them, as
                // compacted, before anything newer can be.
                self.tell_listeners(&reopened, heard);
                self.retrieval.submit(Job::Rebuild(Arc::clone(&reopened)));
                self.shards.write().unwrap_or_else(PoisonError::into_inner).insert(ns.clone(), reopened);
                Ok(counts)
            }
            // A cluster that does not answer, a log that moved on or was dropped meanwhile:
            // not damage; the next open compacts (or finds nothing).
            Err(
                e @ (StorageError::Unavailable { .. }
                | StorageError::Log { source: LogError::Conflict { .. }, .. }
                | StorageError::NamespaceDropped { .. }),
            ) => Err(e),
            Err(e) => {
                self.damaged
                    .write()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(ns.clone(), e.to_string());
                Err(e)
            }
        };
        lock(&self.compacting).remove(ns);
        self.compacted.notify_all();
        outcome
    }

    /// Hands the listeners the batches of `shard` after `heard` (up to what it applied).
    fn tell_listeners(&self, shard: &Shard, heard: u64) {
        let upto = read(&shard.index).last_seq().0;
        if upto <= heard {
            return;
        }
        let records = match shard.log.read_after(heard) {
            Ok(records) => records,
            Err(e) => {
                tracing::warn!(namespace = %shard.name, error = %e, "subscribers miss the batches of a compaction");
                return;
            }
        };
        let listeners = read(&self.listeners).clone();
        for record in records.into_iter().filter(|r| r.seq <= upto) {
            let Ok(events) = decode(&shard.name, record.seq, &record.payload) else { continue };
            let batch = crate::shard::CommittedBatch {
                namespace: shard.name.clone(),
                seq: Seq(record.seq),
                system_time: Timestamp::from_micros(record.system_time),
                events,
            };
            for listener in &listeners {
                listener(&batch);
            }
        }
    }

    /// The work of [`Store::compact_and_reopen`]: the log rewritten, the derived copies
    /// dropped, the namespace opened from the compacted log; what the compaction did and
    /// the cache entries dropped.
    fn compact_shard(&self, shard: &Arc<Shard>) -> Result<(Arc<Shard>, (Compacted, usize)), StorageError> {
        let ns = &shard.name;
        // The embedding cache forgets the texts that exist no more: with no embedder there
        // is no cache, and nothing to compare.
        let embedders = self.retrieval.embedders_used(&read(&shard.index));
        let before = (!embedders.is_empty()).then(|| crate::retrieve::docs::all_texts(&read(&shard.index)));
        self.abandon_search(shard);
        // A checkpoint of the shard as it was is written before this or not at all.
        let _checkpointed = lock(&shard.checkpointed);
        // On a shared log another node may append (another erasure) while this one
        // rewrites: the rewrite then refuses to act on what it read, and it is read again.
        let mut attempts = 0;
        let deadline = std::time::Instant::now() + self.backend.write_budget();
        let rewritten = loop {
            attempts += 1;
            let read = shard.log.read_after(0).map_err(|source| StorageError::of_log(ns, source));
            match read.and_then(|records| self.compact_log(ns, records)) {
                // Another node appended (another erasure) meanwhile, or JetStream did not
                // answer for a moment: read again and rewrite, within the budget.
                Err(
                    StorageError::Log { source: LogError::Conflict { .. }, .. }
                    | StorageError::Unavailable { .. },
                ) if std::time::Instant::now() < deadline => {
                    crate::write::append::backoff(attempts);
                }
                other => break other?,
            }
        };
        let reopened = Arc::new(self.open_shard(ns)?);
        let mut dropped = 0;
        if let Some(before) = before {
            let after = crate::retrieve::docs::all_texts(&read(&reopened.index));
            let gone: Vec<&str> = before.difference(&after).map(String::as_str).collect();
            for embedder in &embedders {
                dropped += embedder.forget(&gone).map_err(|e| StorageError::Index(e.to_string()))?;
            }
        }
        Ok((reopened, (rewritten, dropped)))
    }

    /// The key of erasures' digests, if the store has one.
    fn erasure_key(&self) -> Option<&[u8]> {
        self.retrieval.indexer.options.erasure_key.as_deref()
    }

    /// Abandons the shard's search indexes: what the indexer and the vector lane still
    /// had queued for them is dropped, and the run going on stops at its next chunk of
    /// texts; waits (a bounded time) until it did, so that nothing writes the search
    /// directory once it is removed, nor puts an erased text in the embedding cache after
    /// it forgot them — however far behind the embedder was.
    pub(crate) fn abandon_search(&self, shard: &Shard) {
        if !shard.search.abandon(crate::limits::MAX_ERASE_WAIT) {
            tracing::warn!(namespace = %shard.name, "the search indexer did not stop within the wait; its last chunk may be embedded after the erasure");
        }
    }

    /// Rewrites the log of `ns` (whose records are `records`) without the content its
    /// erasures name, and removes what was derived from it: its checkpoint, its search
    /// indexes and saved vectors. Returns the batches holding each erasure's tombstones.
    pub(crate) fn compact_log(
        &self,
        ns: &Namespace,
        records: Vec<Record>,
    ) -> Result<Compacted, StorageError> {
        let started = std::time::Instant::now();
        // Each erased record, and the batch of the erasure that names it.
        let mut erased = BTreeMap::new();
        let mut decoded = Vec::with_capacity(records.len());
        for record in &records {
            let events = decode(ns, record.seq, &record.payload)?;
            for event in &events {
                if let Event::Erased(e) = event {
                    erased.extend(e.records.iter().map(|(r, _)| (*r, record.seq)));
                }
            }
            decoded.push(events);
        }
        let erasure_batches: BTreeSet<u64> = erased.values().copied().collect();
        let mut rewritten = 0;
        let mut tombstoned = BTreeMap::new();
        let mut out = Vec::with_capacity(records.len());
        for (record, events) in records.into_iter().zip(decoded) {
            let kept = scrub(&events, &|r| erased.contains_key(&r), self.erasure_key());
            let after = erasure_batches.range(record.seq + 1..).next().copied();
            for erasure in erasures_tombstoned(kept.as_ref().unwrap_or(&events), &erased, after) {
                *tombstoned.entry(erasure).or_insert(0) += 1;
            }
            match kept {
                Some(kept) => {
                    rewritten += 1;
                    out.push(Record { payload: encode(&kept)?, ..record });
                }
                None => out.push(record),
            }
        }
        let log_err = |source: LogError| StorageError::of_log(ns, source);
        if rewritten > 0 {
            self.backend.rewrite(ns.as_str(), &out).map_err(log_err)?;
        }
        self.backend.remove_checkpoint(ns.as_str()).map_err(log_err)?;
        self.remove_search_dir(ns)?;
        tracing::info!(
            namespace = %ns,
            rewritten,
            erased = erased.len(),
            took_ms = started.elapsed().as_millis() as u64,
            "log compacted for an erasure"
        );
        Ok(tombstoned)
    }
}

/// For each erasure in a log (by its batch), the batches that hold its tombstones,
/// whoever wrote them: the same count on every node and every run.
pub(crate) type Compacted = BTreeMap<u64, usize>;

/// The erasures (by batch) whose tombstones `events` hold: those of a record they name,
/// and, for a tombstone that stands for a reference (which does not say to what), the
/// first erasure after the batch — exact while no later erasure erases what the same
/// batch referred to.
fn erasures_tombstoned(
    events: &[Event],
    erased: &BTreeMap<ErasedRef, u64>,
    after: Option<u64>,
) -> BTreeSet<u64> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Tombstone { of: TombstoneOf::Record(r), .. } => erased.get(r).copied(),
            Event::Tombstone { of: TombstoneOf::Reference, .. } => after,
            _ => None,
        })
        .collect()
}

/// The batch's events without the erased content, or `None` when it held none.
fn scrub(events: &[Event], is: &dyn Fn(ErasedRef) -> bool, key: Option<&[u8]>) -> Option<Vec<Event>> {
    let is_record = |r: &RecordRef| is(NamespaceIndex::erased_ref(*r));
    let mut changed = false;
    let out = events
        .iter()
        .map(|event| {
            let record =
                |r: ErasedRef| Event::Tombstone { of: TombstoneOf::Record(r), hash: hash_event(key, event) };
            let reference = || Event::Tombstone { of: TombstoneOf::Reference, hash: hash_event(key, event) };
            let new = match event {
                Event::EpisodeRecorded(e) if is(ErasedRef::Episode(e.id)) => record(ErasedRef::Episode(e.id)),
                Event::EntityDeclared(e) | Event::EntityCreated(e) if is(ErasedRef::Entity(e.id)) => {
                    record(ErasedRef::Entity(e.id))
                }
                Event::FactAsserted(f) if is(ErasedRef::Fact(f.id)) => record(ErasedRef::Fact(f.id)),
                Event::IntentionAdded(i) if is(ErasedRef::Intention(i.id)) => {
                    record(ErasedRef::Intention(i.id))
                }
                Event::FactEnded { fact, .. } | Event::FactRetracted { fact, .. }
                    if is(ErasedRef::Fact(*fact)) =>
                {
                    reference()
                }
                Event::StatementWithdrawn { statement, .. } if is(ErasedRef::Fact(*statement)) => reference(),
                Event::EntitiesMerged { from, into }
                    if is(ErasedRef::Entity(*from)) || is(ErasedRef::Entity(*into)) =>
                {
                    reference()
                }
                Event::Embedded { record: r, .. } if is_record(r) => reference(),
                Event::Reinforced { records, at } if records.iter().any(is_record) => {
                    let kept: Vec<RecordRef> = records.iter().filter(|r| !is_record(r)).copied().collect();
                    if kept.is_empty() { reference() } else { Event::Reinforced { records: kept, at: *at } }
                }
                Event::Mentioned { episode, entities, source }
                    if is(ErasedRef::Episode(*episode))
                        || entities.iter().any(|e| is(ErasedRef::Entity(*e))) =>
                {
                    let kept: Vec<EntityId> =
                        entities.iter().filter(|e| !is(ErasedRef::Entity(**e))).copied().collect();
                    if is(ErasedRef::Episode(*episode)) || kept.is_empty() {
                        reference()
                    } else {
                        Event::Mentioned { episode: *episode, entities: kept, source: *source }
                    }
                }
                // A segment's centroid is made of its episodes' vectors: it goes whole.
                Event::SegmentClosed { episodes, .. }
                    if episodes.iter().any(|e| is(ErasedRef::Episode(*e))) =>
                {
                    reference()
                }
                Event::Extracted { episode, .. } if is(ErasedRef::Episode(*episode)) => reference(),
                Event::Placed { record: r, .. }
                | Event::Released { record: r, .. }
                | Event::PlacementProposed { record: r, .. }
                    if is_record(r) =>
                {
                    reference()
                }
                Event::IntentionCancelled { id, .. } if is(ErasedRef::Intention(*id)) => reference(),
                Event::IntentionFired { id, .. } if is(ErasedRef::Intention(*id)) => reference(),
                Event::IntentionFired { id, episode: Some(e), at } if is(ErasedRef::Episode(*e)) => {
                    Event::IntentionFired { id: *id, episode: None, at: *at }
                }
                other => return other.clone(),
            };
            changed = true;
            new
        })
        .collect();
    changed.then_some(out)
}
