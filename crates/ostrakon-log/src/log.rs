//! The log itself: [`Log::open`] (recovery), [`Log::inspect`] (read-only recovery) and
//! [`Log::append`] (group commit).
//!
//! Commit protocol: an appender computes its frame's payload CRC outside the lock, then under the
//! lock takes the next seq and system time, seals its frame and queues it. If no thread is writing,
//! it becomes the leader: it takes the whole queue and the file, releases the lock, appends the
//! queued frames with one write, syncs once, then publishes the outcome and wakes everyone.
//! Threads that queued meanwhile wait, and one of them leads the next group. A batch is
//! acknowledged only after the sync covering its frame returned `Ok`.

use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::format::{MAX_PAYLOAD_LEN, seal_frame, unsealed_frame};
use crate::record::{Committed, Record, Recovery, Truncation};
use crate::recovery::{Scan, recover, scan};
use crate::{error::LogError, storage::LogFile, storage::validate_name};

/// The source of system time: microseconds since the Unix epoch. Injected so tests (and the
/// engine) can control time; the log never hands out a time below `last + 1` whatever it says.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// The wall clock, in microseconds since the Unix epoch (negative before 1970).
pub fn system_clock() -> Clock {
    Arc::new(|| match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_micros()).unwrap_or(i64::MAX),
        Err(e) => i64::try_from(e.duration().as_micros()).map_or(i64::MIN, |m| -m),
    })
}

/// A batch queued by [`Log::submit`]: its seq and system time, not yet durable.
#[derive(Debug, PartialEq, Eq)]
#[must_use = "a submitted batch is acknowledged only by Log::wait"]
pub struct Ticket(Committed);

impl Ticket {
    /// The ticket of a batch queued with this seq and system time: for backends of
    /// `RecordLog` to hand out.
    pub fn new(committed: Committed) -> Self {
        Ticket(committed)
    }

    /// The seq and system time the batch will have once durable.
    pub fn committed(&self) -> Committed {
        self.0
    }
}

/// A durable append-only log of byte batches with group commit. `Send + Sync`; share it with
/// an `Arc` and append from any number of threads.
pub struct Log {
    state: Mutex<State>,
    /// Signalled whenever a group's outcome is published.
    group_done: Condvar,
    clock: Clock,
}

/// Everything behind the log's lock.
struct State {
    /// The file; `None` only while a leader is writing (it holds the file then).
    file: Option<Box<dyn LogFile>>,
    /// Sealed frames queued for the next group, back to back in seq order.
    pending: Vec<u8>,
    /// Seq of the first frame in `pending` (meaningless while it is empty).
    pending_first: u64,
    /// The last frame in `pending`; `None` when nothing is queued.
    pending_last: Option<Committed>,
    /// Seq the next append gets.
    next_seq: u64,
    /// System time of the last frame sequenced (queued or durable); the next one is above it.
    last_time: Option<i64>,
    /// The last durable batch. Frames up to it are on disk and synced.
    durable: Option<Committed>,
    /// Durable file length in bytes.
    size: u64,
    /// Whether a leader is writing a group right now.
    writing: bool,
    /// The failed group, once an I/O error poisoned the log. Never cleared.
    failure: Option<Failure>,
}

/// The group whose write or sync failed; every seq from `first_seq` on is refused.
struct Failure {
    first_seq: u64,
    group_last_seq: u64,
    kind: io::ErrorKind,
    message: String,
}

impl Log {
    /// Opens the log `name` on `file`: recovers it (see `FORMAT.md`), truncating a torn tail and
    /// writing a header into an empty file, syncs it, and returns the log with everything it
    /// holds. Appends continue after the last recovered seq and time.
    ///
    /// `name` must pass [`validate_name`](crate::storage::validate_name); it is stored in the header of
    /// a new file, and a file whose header stores another name fails with
    /// [`LogError::WrongName`] (files of format version 1 store no name and are not checked).
    pub fn open(mut file: Box<dyn LogFile>, name: &str, clock: Clock) -> Result<(Log, Recovery), LogError> {
        validate_name(name)?;
        let Scan { recovery, size } = recover(file.as_mut(), name)?;
        let durable = recovery.records.last().map(|r| Committed { seq: r.seq, system_time: r.system_time });
        let state = State {
            file: Some(file),
            pending: Vec::new(),
            pending_first: 0,
            pending_last: None,
            next_seq: durable.map_or(1, |c| c.seq + 1),
            last_time: durable.map(|c| c.system_time),
            durable,
            size,
            writing: false,
            failure: None,
        };
        let log = Log { state: Mutex::new(state), group_done: Condvar::new(), clock };
        Ok((log, recovery))
    }

    /// Reads and classifies `file` exactly as [`Log::open`] would, without changing it: never
    /// truncates, never writes a header, never syncs. The returned [`Recovery`] holds the
    /// records open would recover and the [`Truncation`] it would make. The file's name is not
    /// checked (there is no expected one); `Recovery::name` tells what the header stores.
    ///
    /// Meant for files opened with [`Storage::open_read_only`](crate::storage::Storage::open_read_only).
    /// On a log that a writer has open, a group being written may show up as a torn tail.
    pub fn inspect(file: &dyn LogFile) -> Result<Recovery, LogError> {
        Ok(scan(file, None)?.recovery)
    }

    /// Checks `file` as the log `name` exactly as [`Log::open`] would (its name
    /// included), without changing it, and tells what open would cut off its end: the
    /// cheap look at every log a store takes on start, before opening any.
    pub fn check(file: &dyn LogFile, name: &str) -> Result<Option<Truncation>, LogError> {
        validate_name(name)?;
        Ok(scan(file, Some(name))?.recovery.truncation)
    }

    /// Appends one batch and returns once it is durable (written and fsynced), with its seq and
    /// system time. Concurrent calls are group committed: they share one write and one sync.
    ///
    /// On an I/O error this batch and every batch of the same group fail with
    /// [`LogError::Io`], and the log is poisoned: later appends fail with
    /// [`LogError::Poisoned`] until it is reopened. A failed batch may or may not be found on
    /// reopen, but only whole.
    pub fn append(&self, payload: &[u8]) -> Result<Committed, LogError> {
        let ticket = self.submit(payload)?;
        self.wait(ticket)
    }

    /// The first half of [`Log::append`]: queues the batch and gives it its seq and system
    /// time, without waiting for it to be durable. A caller that orders its own work by seq
    /// (validating the next batch against this one, say) does so between `submit` and
    /// [`Log::wait`], so that group commit still shares one fsync among concurrent writers.
    /// Every ticket must be waited for: a batch is acknowledged only by `wait`.
    pub fn submit(&self, payload: &[u8]) -> Result<Ticket, LogError> {
        self.submit_expecting(payload, None)
    }

    /// [`Log::submit`], refused with [`LogError::Conflict`] unless the last batch queued
    /// is `expected` (0: none), so that a writer that has not seen the log's end cannot
    /// append after it.
    pub fn submit_after(&self, payload: &[u8], expected: u64) -> Result<Ticket, LogError> {
        self.submit_expecting(payload, Some(expected))
    }

    fn submit_expecting(&self, payload: &[u8], expected: Option<u64>) -> Result<Ticket, LogError> {
        if payload.len() > MAX_PAYLOAD_LEN {
            return Err(LogError::TooLarge { len: payload.len(), max: MAX_PAYLOAD_LEN });
        }
        // Copy and checksum the payload before taking the lock: that is the expensive part.
        let mut frame = unsealed_frame(payload);

        let mut st = self.lock();
        if st.failure.is_some() {
            return Err(LogError::Poisoned);
        }
        let found = st.next_seq - 1;
        if let Some(expected) = expected
            && expected != found
        {
            return Err(LogError::Conflict { expected, found });
        }
        // Seq and time are assigned under the lock, so both follow queue order, which is file
        // order.
        let seq = st.next_seq;
        let next_seq = seq.checked_add(1).ok_or(LogError::Overflow)?;
        let floor = match st.last_time {
            Some(t) => t.checked_add(1).ok_or(LogError::Overflow)?,
            None => i64::MIN,
        };
        let system_time = (self.clock)().max(floor);
        seal_frame(&mut frame, seq, system_time);
        st.next_seq = next_seq;
        st.last_time = Some(system_time);
        if st.pending.is_empty() {
            st.pending = frame;
            st.pending_first = seq;
        } else {
            st.pending.extend_from_slice(&frame);
        }
        let mine = Committed { seq, system_time };
        st.pending_last = Some(mine);
        Ok(Ticket(mine))
    }

    /// The second half of [`Log::append`]: returns once the submitted batch is durable, leading
    /// a group commit if nobody else is writing.
    pub fn wait(&self, ticket: Ticket) -> Result<Committed, LogError> {
        let Ticket(mine) = ticket;
        let seq = mine.seq;
        let mut st = self.lock();
        loop {
            if st.durable.is_some_and(|d| d.seq >= seq) {
                return Ok(mine);
            }
            if let Some(f) = &st.failure
                && seq >= f.first_seq
            {
                return Err(if seq <= f.group_last_seq {
                    LogError::Io(io::Error::new(f.kind, f.message.clone()))
                } else {
                    LogError::Poisoned
                });
            }
            if st.writing {
                st = self.group_done.wait(st).unwrap_or_else(PoisonError::into_inner);
            } else {
                // Our frame is still queued (not durable, not failed, nobody writing): lead.
                st = self.commit_group(st);
            }
        }
    }

    /// Writes and syncs every queued frame as one group, with the lock released during I/O.
    fn commit_group<'a>(&'a self, mut st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        let (Some(last), Some(mut file)) = (st.pending_last.take(), st.file.take()) else {
            // Unreachable while the invariants hold (the caller's frame is queued, and the
            // file is present when nobody writes); fail the log rather than spin.
            let first_seq = st.durable.map_or(1, |d| d.seq + 1);
            st.failure = Some(Failure {
                first_seq,
                group_last_seq: st.next_seq,
                kind: io::ErrorKind::Other,
                message: "log state invariant violated".to_owned(),
            });
            self.group_done.notify_all();
            return st;
        };
        let first_seq = st.pending_first;
        let group = std::mem::take(&mut st.pending);
        st.writing = true;
        drop(st);

        // A panicking LogFile must not leave `writing` set forever (every appender would wait
        // on it): treat the panic as an I/O failure.
        let result = catch_unwind(AssertUnwindSafe(|| {
            file.append(&group)?;
            file.sync()
        }))
        .unwrap_or_else(|_| Err(io::Error::other("log file implementation panicked")));

        let mut st = self.lock();
        st.writing = false;
        st.file = Some(file);
        match result {
            Ok(()) => {
                st.size += group.len() as u64;
                st.durable = Some(last);
            }
            Err(e) => {
                st.failure = Some(Failure {
                    first_seq,
                    group_last_seq: last.seq,
                    kind: e.kind(),
                    message: e.to_string(),
                });
            }
        }
        self.group_done.notify_all();
        st
    }

    /// Every durable batch, read back from the file (for export and audits). Appends wait
    /// while it reads.
    pub fn records(&self) -> Result<Vec<Record>, LogError> {
        let mut st = self.lock();
        while st.writing {
            st = self.group_done.wait(st).unwrap_or_else(PoisonError::into_inner);
        }
        let file = st.file.as_mut().ok_or(LogError::Poisoned)?;
        // Between groups the file holds exactly the durable frames, so a read-only scan finds
        // them all (and nothing to cut).
        Ok(scan(file.as_ref(), None)?.recovery.records)
    }

    /// The seq the next submitted batch will get.
    pub fn next_seq(&self) -> u64 {
        self.lock().next_seq
    }

    /// The last durable batch, or `None` when the log is empty.
    pub fn last(&self) -> Option<Committed> {
        self.lock().durable
    }

    /// Durable size of the log file in bytes (header and whole frames).
    pub fn size_bytes(&self) -> u64 {
        self.lock().size
    }

    /// Whether an I/O failure poisoned the log (every append now fails until it is reopened).
    pub fn is_poisoned(&self) -> bool {
        self.lock().failure.is_some()
    }

    /// Locks the state. A panic while holding the lock (only a panicking clock can cause one)
    /// leaves the state consistent, since it is mutated only after the clock returned.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl std::fmt::Debug for Log {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.lock();
        f.debug_struct("Log")
            .field("last", &st.durable)
            .field("size_bytes", &st.size)
            .field("poisoned", &st.failure.is_some())
            .finish_non_exhaustive()
    }
}
