//! The write path: a batch validated and given ids under the namespace's writer lock
//! (`prepare`), queued on the log, then made durable, applied in log order and
//! acknowledged; and the same path for a batch replayed from an export.

use std::sync::{Arc, PoisonError};

use ostrakon_core::{EntityId, Event, Namespace, Seq, Timestamp};
use ostrakon_index::NamespaceIndex;
use ostrakon_log::{After, LogError};
use std::time::Instant;

use crate::change::{Change, Receipt};
use crate::error::storage::StorageError;
use crate::error::write::WriteError;
use crate::limits::MAX_BATCH_CHANGES;
use crate::retrieve::indexer::{Job, Retrieval};
use crate::shard::Listeners;
use crate::shard::{CommitListener, CommittedBatch, Shard};
use crate::store::Store;
use crate::sync::{lock, read};
use crate::write::codec::{decode, encode};
use crate::write::replay::changes_of;
use crate::write::validate::prepare;
use crate::write::writer::Writer;

impl Store {
    /// Validates a batch, gives its records ids, appends it durably and applies it.
    /// On `Ok` the batch is durable and visible to every later read. On a validation
    /// error nothing of it is stored. On a log error ([`StorageError::Log`] inside
    /// [`WriteError::Storage`]) the outcome is unknown: the namespace refuses writes until
    /// the store is reopened, and the batch may or may not be found then (whole, if at all).
    /// ```
    /// use ostrakon_engine::core::{EntityId, Namespace, Timestamp};
    /// use ostrakon_engine::{Change, NewEpisode, RecordId, Store};
    ///
    /// let store = Store::in_memory();
    /// let ns = Namespace::new("namespace", "demo")?;
    /// let said = NewEpisode {
    ///     text: "Ada: I moved to Berlin last spring.".into(),
    ///     occurred_at: Timestamp::from_micros(1_700_000_000_000_000),
    ///     ..NewEpisode::default()
    /// };
    /// let receipt = store.append(&ns, vec![Change::RecordEpisode(said)])?;
    /// assert_eq!(receipt.seq.0, 1);
    /// assert!(matches!(receipt.ids[0], Some(RecordId::Episode(_))));
    /// // A refused batch stores nothing: there are no entities 98 and 99 to merge.
    /// let merge = Change::MergeEntities { from: EntityId(98), into: EntityId(99) };
    /// assert!(store.append(&ns, vec![merge]).is_err());
    /// assert_eq!(store.counts(&ns)?.batches, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn append(&self, ns: &Namespace, changes: Vec<Change>) -> Result<Receipt, WriteError> {
        self.append_checked(ns, changes, None)
    }

    /// [`Store::append`], refusing the batch unless its events come out as `expected`.
    fn append_checked(
        &self,
        ns: &Namespace,
        changes: Vec<Change>,
        expected: Option<(Seq, &[Event])>,
    ) -> Result<Receipt, WriteError> {
        self.submit_checked(ns, changes, expected, None)?.finish()
    }

    /// The first half of [`Store::append`]: validates the batch, gives its records ids and
    /// queues it on the log, without waiting for it to be durable. The next batch can be
    /// validated at once (it sees this one's names and ids, as a concurrent writer would),
    /// and batches queued meanwhile share one fsync. The batch is acknowledged, and
    /// applied, by [`Submitted::finish`]; dropping a `Submitted` finishes it too, since a
    /// batch on the log must be applied before any later one is.
    pub fn submit(&self, ns: &Namespace, changes: Vec<Change>) -> Result<Submitted<'_>, WriteError> {
        self.submit_checked(ns, changes, None, None)
    }

    /// [`Store::submit`], refusing the batch unless its events come out as `expected`;
    /// retried (when another writer appended first) until `deadline`, by default the
    /// log's write budget from now.
    fn submit_checked(
        &self,
        ns: &Namespace,
        changes: Vec<Change>,
        expected: Option<(Seq, &[Event])>,
        deadline: Option<Instant>,
    ) -> Result<Submitted<'_>, WriteError> {
        let mismatch = |reason: String| WriteError::ReplayMismatch { namespace: ns.to_string(), reason };
        self.check_damaged(ns)?;
        if changes.len() > MAX_BATCH_CHANGES {
            return Err(WriteError::LimitExceeded {
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
                    &mut Writer::after(&NamespaceIndex::new(), 0),
                    &NamespaceIndex::new(),
                    changes.clone(),
                    expected.is_none(),
                )?;
                if let Some((seq, events)) = expected
                    && (seq != Seq(1) || !ostrakon_core::same_events(&dry.events, events))
                {
                    return Err(mismatch(format!("batch {seq} would be batch 1 of a new namespace")));
                }
                self.shard_or_create(ns)?
            }
        };
        let log_err = |source| WriteError::of_log(ns, source);
        // One budget for the whole write: refusals by other writers and a log that does
        // not answer are retried until it is spent.
        let deadline = deadline.unwrap_or_else(|| Instant::now() + self.backend.write_budget());
        // Only a log that other writers append to can refuse a batch as stale; each retry
        // prepares the batch again, so it needs a copy of the changes.
        let mut spare = (!shard.log.exclusive()).then(|| changes.clone());
        let mut changes = changes;
        let mut conflicts = 0;
        let mut shard = shard;
        // On a shared log a batch refused by validation is checked once more after catching
        // up: what it names may be another node's write this node has not applied yet.
        let mut refused_behind = false;
        let (ticket, events, ids) = loop {
            let mut writer = lock(&shard.writer);
            if shard.retired.load(std::sync::atomic::Ordering::SeqCst) {
                // An erasure is rewriting this log: wait for the namespace to open again.
                drop(writer);
                shard = self.reopened(ns, &shard)?;
                continue;
            }
            let prepared = {
                let index = read(&shard.index);
                writer.follow(&index, &*shard.log);
                let before = index.last_seq();
                match (prepare(&mut writer, &index, changes, expected.is_none()), &spare) {
                    (Ok(prepared), _) => prepared,
                    (Err(e), Some(again)) if !refused_behind => {
                        drop((index, writer));
                        refused_behind = true;
                        if self.catch_up_shard(&shard).is_ok_and(|now| now > before) {
                            changes = again.clone();
                            continue;
                        }
                        return Err(e);
                    }
                    (Err(e), _) => return Err(e),
                }
            };
            if let Some((seq, events)) = expected {
                // Under the writer lock nobody else here submits, so the next seq is exact.
                let next = writer.last_seen() + 1;
                if seq.0 != next {
                    return Err(mismatch(format!("batch {seq} would be batch {next} here")));
                }
                if !ostrakon_core::same_events(&prepared.events, events) {
                    return Err(mismatch("its ids do not follow this namespace's".into()));
                }
            }
            let payload = encode(&prepared.events)?;
            let after = After { seq: writer.last_seen(), refusals: writer.refusals, deadline };
            match shard.log.submit(&payload, after) {
                Ok(ticket) => {
                    writer.submitted(ticket.committed().seq, prepared.effects);
                    break (ticket, prepared.events, (prepared.ids, prepared.created));
                }
                Err(LogError::Conflict { expected: seen, found }) => {
                    drop(writer);
                    conflicts += 1;
                    let again = spare.take().filter(|_| Instant::now() < deadline);
                    let Some(again) = again else {
                        return Err(WriteError::Conflict {
                            namespace: ns.to_string(),
                            expected: seen,
                            found,
                        });
                    };
                    tracing::debug!(namespace = %ns, seen, found, "another writer appended first; catching up");
                    backoff(conflicts);
                    spare = Some(again.clone());
                    changes = again;
                    match self.catch_up_shard(&shard) {
                        Ok(_) => {}
                        // Another node dropped the namespace: the batch goes to the new one.
                        Err(StorageError::NamespaceDropped { .. }) => shard = self.shard_or_create(ns)?,
                        // The log did not answer the catch-up (a stream between leaders):
                        // within the budget, the next try catches up again.
                        Err(StorageError::Unavailable { .. }) if Instant::now() < deadline => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                Err(e) => return Err(log_err(e)),
            }
        };
        let retry = spare.map(|changes| Retry { changes, conflicts, deadline, replay: expected.is_some() });
        Ok(Submitted {
            store: self,
            pending: Some(Pending { ns: ns.clone(), shard, ticket, events, ids, retry }),
        })
    }

    /// The namespace opened again after `old` was retired by an erasure (a bounded wait).
    pub(crate) fn reopened(&self, ns: &Namespace, old: &Arc<Shard>) -> Result<Arc<Shard>, StorageError> {
        let deadline = std::time::Instant::now() + crate::limits::MAX_ERASE_WAIT;
        loop {
            // `shard` waits while an erasure compacts the namespace.
            match self.shard(ns)? {
                Some(shard) if !Arc::ptr_eq(&shard, old) => return Ok(shard),
                // An erasure refused by a shared log: the namespace serves on as it was.
                Some(shard) if !shard.retired.load(std::sync::atomic::Ordering::SeqCst) => return Ok(shard),
                None => return self.shard_or_create(ns),
                Some(_) if std::time::Instant::now() >= deadline => {
                    return Err(StorageError::Unavailable {
                        namespace: ns.to_string(),
                        reason: "the namespace is being compacted for an erasure; retry".into(),
                    });
                }
                Some(_) => std::thread::sleep(std::time::Duration::from_millis(2)),
            }
        }
    }

    /// Applies what other writers appended to a namespace's log since its index was built
    /// (and what this store appended but has not applied yet): a store that shares its
    /// log with others reads their batches here. Returns the last batch now applied.
    pub fn catch_up(&self, ns: &Namespace) -> Result<Seq, StorageError> {
        match self.shard(ns)? {
            Some(shard) => self.catch_up_shard(&shard),
            None => Ok(Seq(0)),
        }
    }

    pub(crate) fn catch_up_shard(&self, shard: &Arc<Shard>) -> Result<Seq, StorageError> {
        if self.apply_new(shard)? {
            // Another node erased records: this node forgets them too.
            return self.forget_erased(shard);
        }
        Ok(read(&shard.index).last_seq())
    }

    /// Applies what the shard's log holds past its index; returns whether an erasure
    /// applied now (another node's) leaves content this node must forget
    /// ([`Store::forget_erased`]).
    pub(crate) fn apply_new(&self, shard: &Arc<Shard>) -> Result<bool, StorageError> {
        let ns = &shard.name;
        let after = read(&shard.index).last_seq().0;
        let records = match shard.log.read_after(after) {
            Ok(records) => records,
            Err(LogError::Dropped) => return Err(self.close_dropped(shard)),
            Err(source) => return Err(StorageError::of_log(ns, source)),
        };
        for record in records {
            let events = decode(ns, record.seq, &record.payload)?;
            if events.iter().any(|e| matches!(e, ostrakon_core::Event::Erased(_))) {
                // Applied, the erasure would be a read point at which the content is still
                // there: the namespace is compacted and opened again instead, which
                // applies it without the content.
                return Ok(true);
            }
            let time = Timestamp::from_micros(record.system_time);
            if let Err(why) = shard.publish(record.seq, time, events, &self.listeners, &self.retrieval) {
                return Err(self.refuse_damaged(shard, why));
            }
        }
        Ok(read(&shard.index).erasure_pending())
    }

    /// Calls `listener` with every batch committed from now on, in log order per namespace.
    pub fn on_commit(&self, listener: CommitListener) {
        self.listeners.write().unwrap_or_else(PoisonError::into_inner).push(listener);
    }

    /// Every batch of a namespace's log, read back from durable storage, in order.
    /// ```
    #[doc = include_str!("../../doc/ada_moves.txt")]
    /// // Every batch of the log, in order, as written: what `replay` takes back.
    /// let batches = store.export(&ns)?;
    /// assert_eq!(batches.iter().map(|b| b.seq).collect::<Vec<_>>(), [first.seq, second.seq]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn export(&self, ns: &Namespace) -> Result<Vec<CommittedBatch>, StorageError> {
        let Some(shard) = self.shard(ns)? else {
            return Ok(Vec::new());
        };
        let records = shard
            .log
            .read_after(0)
            .map_err(|source| StorageError::Log { namespace: ns.to_string(), source })?;
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
    pub fn replay(&self, ns: &Namespace, seq: Seq, events: &[Event]) -> Result<Receipt, WriteError> {
        let changes = self.with_index(ns, |index| changes_of(index, events))?;
        self.append_checked(ns, changes, Some((seq, events)))
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
    ticket: ostrakon_log::Ticket,
    events: Vec<Event>,
    ids: (Vec<Option<crate::change::RecordId>>, Vec<EntityId>),
    /// On a log other writers share: what to prepare again if the batch is refused.
    retry: Option<Retry>,
}

/// A batch's changes, kept to prepare it again when a shared log refuses it.
struct Retry {
    changes: Vec<Change>,
    /// Refusals so far.
    conflicts: u32,
    /// When the write's budget is spent.
    deadline: Instant,
    /// A replayed batch must come out as exported: it is not prepared again.
    replay: bool,
}

impl Submitted<'_> {
    /// Waits until the batch is durable (leading a group commit of every batch queued
    /// by then), applies it in log order and acknowledges it, as [`Store::append`] does.
    pub fn finish(mut self) -> Result<Receipt, WriteError> {
        let Some(pending) = self.pending.take() else {
            // Unreachable: `finish` takes the batch by value, and only `drop` runs after it.
            return Err(StorageError::Index("a submitted batch was finished twice".into()).into());
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
    fn finish(&self, pending: Pending) -> Result<Receipt, WriteError> {
        let Pending { ns, shard, ticket, events, ids, retry } = pending;
        // Outside the writer lock, so that concurrent batches share one fsync.
        let committed = match shard.log.wait(ticket) {
            Ok(committed) => committed,
            // A shared log refused the group this batch went out in (another writer got
            // there first), or could not be reached: catch up with what it holds, then
            // prepare the batch again on top of that.
            Err(e @ (LogError::Conflict { .. } | LogError::Unavailable { .. })) => {
                let unreachable = matches!(e, LogError::Unavailable { .. });
                let caught_up = self.catch_up_shard(&shard);
                let again = retry.filter(|r| !unreachable && !r.replay && Instant::now() < r.deadline);
                return match (e, again) {
                    (LogError::Conflict { .. }, Some(mut again)) => {
                        // Dropped by another node: prepared again, the batch opens the new one;
                        // a log that did not answer the catch-up is caught up by the next try.
                        if !matches!(
                            caught_up,
                            Err(StorageError::NamespaceDropped { .. } | StorageError::Unavailable { .. })
                        ) {
                            caught_up?;
                        }
                        tracing::debug!(namespace = %ns, "batch refused as stale; preparing it again");
                        again.conflicts += 1;
                        backoff(again.conflicts);
                        // The write's one budget, counted from its first try.
                        let mut submitted =
                            self.submit_checked(&ns, again.changes.clone(), None, Some(again.deadline))?;
                        if let Some(pending) = submitted.pending.as_mut()
                            && let Some(retry) = pending.retry.as_mut()
                        {
                            retry.conflicts += again.conflicts;
                        }
                        submitted.finish()
                    }
                    (LogError::Conflict { expected, found }, _) => {
                        Err(WriteError::Conflict { namespace: ns.to_string(), expected, found })
                    }
                    (e, _) => Err(WriteError::of_log(&ns, e)),
                };
            }
            Err(e) => return Err(WriteError::of_log(&ns, e)),
        };
        let system_time = Timestamp::from_micros(committed.system_time);
        if let Err(why) = shard.publish(committed.seq, system_time, events, &self.listeners, &self.retrieval)
        {
            return Err(self.refuse_damaged(&shard, why).into());
        }
        let (ids, created) = ids;
        Ok(Receipt { seq: Seq(committed.seq), system_time, ids, created })
    }
}

impl Shard {
    /// Applies a durable batch in log order, then waits until it is visible. Batches
    /// committed by a group may come back out of order; each waits for its
    /// predecessors, and whoever holds the lock applies every batch that is ready. A batch
    /// the applier refuses ([`NamespaceIndex::admit`](ostrakon_index::NamespaceIndex::admit))
    /// damages the namespace: nothing from it on is applied, and `Err` says why (to this
    /// caller and every one waiting).
    pub(crate) fn publish(
        self: &Arc<Self>,
        seq: u64,
        system_time: Timestamp,
        events: Vec<Event>,
        listeners: &Listeners,
        retrieval: &Retrieval,
    ) -> Result<(), String> {
        let mut pending = lock(&self.pending);
        if seq <= read(&self.index).last_seq().0 {
            // Applied already: a batch of this writer that catching up read back from the
            // log before its own acknowledgement got here.
            return Ok(());
        }
        if let Some(why) = lock(&self.damage).clone() {
            return Err(why);
        }
        pending.insert(seq, (system_time, events));
        let mut applied_now = Vec::new();
        {
            let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
            loop {
                let next = index.last_seq().0 + 1;
                let Some((time, events)) = pending.remove(&next) else {
                    break;
                };
                if let Err(e) = index.apply(Seq(next), time, &events) {
                    *lock(&self.damage) = Some(e.to_string());
                    pending.clear();
                    break;
                }
                self.sweeps.note(Seq(next), &events, &index);
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
            if let Some(why) = lock(&self.damage).clone() {
                return Err(why);
            }
            pending = self.applied.wait(pending).unwrap_or_else(PoisonError::into_inner);
        }
        Ok(())
    }
}

/// Before preparing a refused batch again: a pause that doubles with each refusal (from
/// about 0.1 ms, jittered), so that writers on several nodes racing for one namespace
/// spread out instead of refusing each other in lockstep.
pub(crate) fn backoff(refusals: u32) {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let base = 100u64 << refusals.min(6);
    let jitter = u64::from(nanos % 1_000) * base / 1_000;
    std::thread::sleep(std::time::Duration::from_micros(base / 2 + jitter));
}
