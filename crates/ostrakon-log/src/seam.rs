//! The record-level seam: what a store needs of durable storage, one level above bytes.
//!
//! A store keeps each namespace's batches in a log of records and its derived state in
//! checkpoint blobs. [`LogBackend`] is where those live; [`RecordLog`] is one
//! namespace's log. The file log ([`StorageBackend`] over a [`Storage`], with
//! [`Log`] inside) is one implementation; a replicated stream is another. What every
//! implementation promises:
//!
//! - An append names the last batch its writer has seen (`expected`). When the log has
//!   moved past it — another writer got there first — the append is refused with
//!   [`LogError::Conflict`] and nothing is written: a stale writer is refused, never
//!   silently ordered after a batch it did not validate against.
//! - Records come back exactly as appended, numbered 1, 2, … with strictly increasing
//!   system times; a submitted batch is acknowledged only once `wait` returns `Ok`.
//! - Checkpoints (and shared search vectors) are derived: a backend may lose one (loading returns `None`), never hand
//!   back another log's or a torn one as valid bytes.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::atomic::replace_file;
use crate::error::LogError;
use crate::group::After;
use crate::log::{Clock, Log, Ticket};
use crate::record::{Committed, Record, Recovery, Truncation};
use crate::storage::{Storage, validate_name};

/// How far a namespace's log, as its backend heard it, is ahead of what was applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Behind {
    /// The last batch heard of.
    pub last: u64,
    /// When the oldest batch heard of and not applied was heard.
    pub since: std::time::Instant,
}

/// How long one write may take in all on a log other writers share, unless its backend
/// says otherwise ([`LogBackend::write_budget`]).
pub const DEFAULT_WRITE_BUDGET: Duration = Duration::from_secs(12);

/// Where a store's namespaces keep their logs and checkpoints.
pub trait LogBackend: Send + Sync {
    /// The names of the logs that exist, sorted.
    fn list(&self) -> Result<Vec<String>, LogError>;
    /// What opening `name` would cut off its end (a torn tail), found without opening it
    /// for writing; `Ok(None)` when it is whole. A backend that cannot tell without
    /// opening answers an I/O error of kind `Unsupported`.
    fn check(&self, name: &str) -> Result<Option<Truncation>, LogError>;
    /// Opens the log `name` (creating it when absent): the records it holds, and a handle
    /// that appends after them. System times come from `clock`, never below the last one.
    fn open(&self, name: &str, clock: Clock) -> Result<(Box<dyn RecordLog>, Recovery), LogError>;
    /// Opens `name` as [`LogBackend::open`] does, where the caller needs only the records
    /// after batch `after` (it holds a checkpoint up to there): a backend that can seek
    /// returns those, and batch `after` itself so that the checkpoint can be checked
    /// against it; one that cannot returns every record. Records come in seq order either way.
    fn open_from(
        &self,
        name: &str,
        clock: Clock,
        after: u64,
    ) -> Result<(Box<dyn RecordLog>, Recovery), LogError> {
        let _ = after;
        self.open(name, clock)
    }
    /// Whether other writers (other stores, other nodes) append to its logs too, so that
    /// a log may hold batches this store has not seen and a name it never listed.
    fn shared(&self) -> bool {
        false
    }
    /// Whether it keeps checkpoints at all (a store skips making them when not).
    fn keeps_checkpoints(&self) -> bool;
    /// The newest checkpoint blob saved for `name`, if any.
    fn load_checkpoint(&self, name: &str) -> Result<Option<Vec<u8>>, LogError>;
    /// Saves `blob` as the newest checkpoint of `name`, whole or not at all; an error
    /// of kind `Unsupported` from a backend that keeps none.
    fn save_checkpoint(&self, name: &str, blob: &[u8]) -> Result<(), LogError>;
    /// Calls `news` with a log's name whenever another writer may have appended to it: a
    /// hint to read it (it may come for a batch that was refused, and a lost hint loses
    /// nothing but freshness). A backend with one writer per log never calls it.
    fn watch(&self, news: std::sync::Arc<dyn Fn(&str) + Send + Sync>) {
        let _ = news;
    }
    /// Whether the storage can be reached now (`Err` says why not).
    fn health(&self) -> Result<(), String> {
        Ok(())
    }
    /// How far the appends this backend heard of on `name` (by any writer) are past batch
    /// `applied`: the last batch heard, and since when the oldest one not applied was
    /// heard. `None` when nothing heard is past it (or the backend hears nothing: a log
    /// with one writer).
    fn behind(&self, name: &str, applied: u64) -> Option<Behind> {
        let _ = (name, applied);
        None
    }
    /// The bytes each of the backend's streams holds, by stream name, as last measured
    /// (empty for a backend without streams).
    fn stream_bytes(&self) -> Vec<(String, u64)> {
        Vec::new()
    }
    /// How long one write may take in all, retries included: a batch another writer's
    /// refused is prepared again, and a log that does not answer asked again, until it is
    /// spent; then the write fails (`Conflict` or `Unavailable`).
    fn write_budget(&self) -> Duration {
        DEFAULT_WRITE_BUDGET
    }
    /// Replaces the log `name` with `records` (the same seqs and system times, some
    /// payloads rewritten: compaction for an erasure), atomically, while nobody appends
    /// to it; the caller reopens it afterwards. A backend that cannot answers an I/O error
    /// of kind `Unsupported`.
    fn rewrite(&self, name: &str, records: &[Record]) -> Result<(), LogError> {
        let _ = (name, records);
        Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "this log cannot be rewritten").into())
    }
    /// Removes the log `name` and its checkpoint, while nobody uses them.
    fn remove(&self, name: &str) -> Result<(), LogError> {
        let _ = name;
        Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "this log cannot be removed").into())
    }
    /// The names of the namespaces that have a checkpoint (whether or not they have a
    /// log: a checkpoint without its log tells of a log deleted behind the store's back).
    fn checkpointed(&self) -> Result<Vec<String>, LogError> {
        Ok(Vec::new())
    }
    /// Removes the checkpoint of `name`, if it has one, and the vectors kept beside it.
    fn remove_checkpoint(&self, name: &str) -> Result<(), LogError> {
        let _ = name;
        Ok(())
    }
    /// Whether it keeps a namespace's saved search vectors for every store over it to
    /// load ([`LogBackend::save_vectors`]): a backend whose logs only one store reads
    /// keeps none (that store saves them beside its own indexes).
    fn keeps_vectors(&self) -> bool {
        false
    }
    /// The newest search vectors saved for `name`, if any (derived like a checkpoint).
    fn load_vectors(&self, name: &str) -> Result<Option<Vec<u8>>, LogError> {
        let _ = name;
        Ok(None)
    }
    /// Saves `blob` as the search vectors of `name`, whole or not at all; an error of kind
    /// `Unsupported` from a backend that keeps none.
    fn save_vectors(&self, name: &str, blob: &[u8]) -> Result<(), LogError> {
        let _ = (name, blob);
        Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "this store keeps no shared vectors").into())
    }
}

/// One namespace's log of records.
pub trait RecordLog: Send + Sync {
    /// Queues `payload` as the batch after `after.seq` (the last batch this writer has
    /// seen; 0: none), giving it its seq and system time; [`LogError::Conflict`] when the
    /// log's last batch is another, or when a group was refused since the writer caught up
    /// (`after.refusals` is not [`RecordLog::refusals`]). Acknowledged only by
    /// [`RecordLog::wait`].
    fn submit(&self, payload: &[u8], after: After) -> Result<Ticket, LogError>;
    /// Returns once the submitted batch is durable.
    fn wait(&self, ticket: Ticket) -> Result<Committed, LogError>;
    /// Every durable record after batch `after`, in order.
    fn read_after(&self, after: u64) -> Result<Vec<Record>, LogError>;
    /// The records after `after`, waiting up to `timeout` for one when there is none yet
    /// (empty when none came): how a reader follows what other writers append.
    fn follow(&self, after: u64, timeout: Duration) -> Result<Vec<Record>, LogError>;
    /// The last batch queued on this log (0: none).
    fn last_seq(&self) -> u64;
    /// The last batch this handle queued that may still become durable (queued, or in a
    /// group being written); 0 when it has none. What a reader of this handle's own
    /// writes waits for: on a log with one writer every batch is its own.
    fn own_pending(&self) -> u64 {
        self.last_seq()
    }
    /// The log's durable size in bytes, as its backend counts it.
    fn size_bytes(&self) -> u64;
    /// How many groups of this handle's batches the log refused so far (another writer
    /// appended first, or the log did not answer). A writer that prepared on batches of
    /// its own still in flight must start again from what the log holds once this moves:
    /// those batches were refused, and a seq handed out again names another record.
    /// Always 0 on a log with one writer.
    fn refusals(&self) -> u64 {
        0
    }
    /// Whether this handle is the log's only writer (the file log, locked by its process),
    /// so that a writer that saw every batch of its own can never be refused as stale.
    fn exclusive(&self) -> bool {
        false
    }
}

impl RecordLog for Log {
    fn submit(&self, payload: &[u8], after: After) -> Result<Ticket, LogError> {
        self.submit_after(payload, after.seq)
    }

    fn wait(&self, ticket: Ticket) -> Result<Committed, LogError> {
        Log::wait(self, ticket)
    }

    fn read_after(&self, after: u64) -> Result<Vec<Record>, LogError> {
        if self.last().is_none_or(|c| c.seq <= after) {
            return Ok(Vec::new());
        }
        let mut records = self.records()?;
        records.retain(|r| r.seq > after);
        Ok(records)
    }

    fn follow(&self, after: u64, _timeout: Duration) -> Result<Vec<Record>, LogError> {
        // The file is locked by this process: every record after `after` was appended
        // through this handle, so there is nothing to wait for.
        self.read_after(after)
    }

    fn last_seq(&self) -> u64 {
        self.next_seq() - 1
    }

    fn size_bytes(&self) -> u64 {
        Log::size_bytes(self)
    }

    fn exclusive(&self) -> bool {
        true
    }
}

/// The file log as a [`LogBackend`]: each log a [`Log`] in a file of `storage`, each
/// checkpoint a file `<name>.ckpt` in `checkpoints`, replaced atomically (none kept
/// without a directory).
pub struct StorageBackend {
    storage: Arc<dyn Storage>,
    checkpoints: Option<PathBuf>,
}

impl StorageBackend {
    /// Logs in `storage`, checkpoints in the directory `checkpoints` (if any).
    pub fn new(storage: Arc<dyn Storage>, checkpoints: Option<PathBuf>) -> Self {
        StorageBackend { storage, checkpoints }
    }

    /// The checkpoint file of `name`, if checkpoints are kept.
    pub fn checkpoint_path(&self, name: &str) -> Option<PathBuf> {
        self.checkpoints.as_ref().map(|dir| dir.join(format!("{name}.ckpt")))
    }
}

impl LogBackend for StorageBackend {
    fn list(&self) -> Result<Vec<String>, LogError> {
        self.storage.list()
    }

    fn check(&self, name: &str) -> Result<Option<Truncation>, LogError> {
        let file = self.storage.open_read_only(name)?;
        Log::check(&*file, name)
    }

    fn open(&self, name: &str, clock: Clock) -> Result<(Box<dyn RecordLog>, Recovery), LogError> {
        let file = self.storage.open(name)?;
        let (log, recovery) = Log::open(file, name, clock)?;
        Ok((Box::new(log), recovery))
    }

    fn keeps_checkpoints(&self) -> bool {
        self.checkpoints.is_some()
    }

    fn load_checkpoint(&self, name: &str) -> Result<Option<Vec<u8>>, LogError> {
        validate_name(name)?;
        let Some(path) = self.checkpoint_path(name) else { return Ok(None) };
        match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(LogError::Io(e)),
        }
    }

    fn save_checkpoint(&self, name: &str, blob: &[u8]) -> Result<(), LogError> {
        validate_name(name)?;
        let (Some(dir), Some(path)) = (&self.checkpoints, self.checkpoint_path(name)) else {
            return Err(LogError::Io(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "this store keeps no checkpoints",
            )));
        };
        std::fs::create_dir_all(dir)?;
        replace_file(&path, |file| std::io::Write::write_all(file, blob))?;
        Ok(())
    }

    fn rewrite(&self, name: &str, records: &[Record]) -> Result<(), LogError> {
        self.storage.replace(name, &mut |out| crate::compact::write_log(out, name, records))
    }

    fn remove(&self, name: &str) -> Result<(), LogError> {
        self.remove_checkpoint(name)?;
        self.storage.remove(name)
    }

    fn checkpointed(&self) -> Result<Vec<String>, LogError> {
        let Some(dir) = &self.checkpoints else { return Ok(Vec::new()) };
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(LogError::Io(e)),
        };
        let mut names = Vec::new();
        for entry in entries {
            let name = entry?.file_name();
            if let Some(name) = name.to_str().and_then(|n| n.strip_suffix(".ckpt")) {
                names.push(name.to_owned());
            }
        }
        names.sort();
        Ok(names)
    }

    fn remove_checkpoint(&self, name: &str) -> Result<(), LogError> {
        validate_name(name)?;
        let Some(path) = self.checkpoint_path(name) else { return Ok(()) };
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(LogError::Io(e)),
        }
    }
}
