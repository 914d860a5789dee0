//! Logs in memory shared by every store opened over the same backend: several writers on
//! one namespace, as several nodes over one replicated stream, in one process. Appends go
//! through the same group commit as the replicated stream's ([`GroupCommit`]): a batch is
//! queued, then stored with its group only if the log still ends where its writer
//! expected, and a simulated store latency ([`SharedBackend::with_latency`]) lets groups
//! form and race as they do over a network. A test can also append as "another writer"
//! at any moment ([`SharedBackend::append_foreign`], [`SharedBackend::interfere`]) to
//! drive the conflict path.

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use crate::format::{FRAME_HEADER_LEN, MAX_PAYLOAD_LEN};
use crate::frames::decode_frames;
use crate::group::{After, GroupCommit, Known, Publish, Refusal};
use crate::log::{Clock, Ticket};
use crate::record::{Committed, Record, Recovery, Truncation};
use crate::seam::{LogBackend, RecordLog};
use crate::storage::validate_name;
use crate::{error::LogError, format::FORMAT_VERSION};

/// In-memory logs and checkpoints, shared by clones.
#[derive(Clone, Default)]
pub struct SharedBackend {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    /// How long storing a group takes (before it is checked and stored).
    latency: Duration,
    /// How long a write may take, retries included (`None`: the seam's default).
    budget: Option<Duration>,
    logs: Mutex<BTreeMap<String, Arc<Shared>>>,
    checkpoints: Mutex<BTreeMap<String, Vec<u8>>>,
    vectors: Mutex<BTreeMap<String, Vec<u8>>>,
}

/// One log: its records, and foreign appends still to make before the next submits.
#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    grew: Condvar,
}

#[derive(Default)]
struct State {
    records: Vec<Record>,
    /// When each record was stored (what every store over the backend "hears").
    stored: Vec<std::time::Instant>,
    /// Payloads another writer appends just before each of the next submits.
    interfere: Vec<Vec<u8>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl State {
    fn push(&mut self, payload: Vec<u8>, now: i64) -> Committed {
        let seq = self.records.len() as u64 + 1;
        let system_time = self.records.last().map_or(now, |r| now.max(r.system_time.saturating_add(1)));
        self.records.push(Record { seq, system_time, payload });
        self.stored.push(std::time::Instant::now());
        Committed { seq, system_time }
    }
}

impl SharedBackend {
    /// An empty backend.
    pub fn new() -> Self {
        SharedBackend::default()
    }

    /// An empty backend whose stores take `latency` to store each group of batches, as a
    /// replicated stream does: writers on several stores then queue behind each other's
    /// groups and refuse each other as they would over a network.
    pub fn with_latency(latency: Duration) -> Self {
        SharedBackend { inner: Arc::new(Inner { latency, ..Inner::default() }) }
    }

    /// An empty backend on which a write gives up after `budget` (retries included),
    /// instead of the default.
    pub fn with_write_budget(budget: Duration) -> Self {
        SharedBackend { inner: Arc::new(Inner { budget: Some(budget), ..Inner::default() }) }
    }

    fn log(&self, name: &str) -> Arc<Shared> {
        Arc::clone(lock(&self.inner.logs).entry(name.to_owned()).or_default())
    }

    /// Appends `payload` to `name` as another writer would, now (time `at`).
    pub fn append_foreign(&self, name: &str, payload: Vec<u8>, at: i64) -> Committed {
        let log = self.log(name);
        let committed = lock(&log.state).push(payload, at);
        log.grew.notify_all();
        committed
    }

    /// Before each of the next `times` submits to `name`, another writer appends
    /// `payload` first (so each of those submits is refused as stale).
    pub fn interfere(&self, name: &str, times: usize, payload: Vec<u8>) {
        let log = self.log(name);
        lock(&log.state).interfere.extend(std::iter::repeat_n(payload, times));
    }

    /// Every record of `name`.
    pub fn records(&self, name: &str) -> Vec<Record> {
        lock(&self.log(name).state).records.clone()
    }
}

impl LogBackend for SharedBackend {
    fn list(&self) -> Result<Vec<String>, LogError> {
        Ok(lock(&self.inner.logs).keys().cloned().collect())
    }

    fn check(&self, name: &str) -> Result<Option<Truncation>, LogError> {
        validate_name(name)?;
        Ok(None)
    }

    fn open(&self, name: &str, clock: Clock) -> Result<(Box<dyn RecordLog>, Recovery), LogError> {
        validate_name(name)?;
        let log = self.log(name);
        let records = lock(&log.state).records.clone();
        let recovery = Recovery {
            records,
            truncation: None,
            format_version: FORMAT_VERSION,
            name: Some(name.to_owned()),
            new_header: false,
        };
        let handle = Handle {
            group: GroupCommit::new(name, MAX_PAYLOAD_LEN + FRAME_HEADER_LEN),
            store: Store { log, latency: self.inner.latency },
            clock,
        };
        handle.learn(&recovery.records);
        Ok((Box::new(handle), recovery))
    }

    fn shared(&self) -> bool {
        true
    }

    fn keeps_checkpoints(&self) -> bool {
        true
    }

    fn load_checkpoint(&self, name: &str) -> Result<Option<Vec<u8>>, LogError> {
        Ok(lock(&self.inner.checkpoints).get(name).cloned())
    }

    fn save_checkpoint(&self, name: &str, blob: &[u8]) -> Result<(), LogError> {
        lock(&self.inner.checkpoints).insert(name.to_owned(), blob.to_vec());
        Ok(())
    }

    fn remove_checkpoint(&self, name: &str) -> Result<(), LogError> {
        lock(&self.inner.checkpoints).remove(name);
        lock(&self.inner.vectors).remove(name);
        Ok(())
    }

    fn keeps_vectors(&self) -> bool {
        true
    }

    fn write_budget(&self) -> Duration {
        self.inner.budget.unwrap_or(crate::seam::DEFAULT_WRITE_BUDGET)
    }

    /// Batches appended since `records` were read stay as they are.
    fn rewrite(&self, name: &str, records: &[Record]) -> Result<(), LogError> {
        let log = self.log(name);
        let mut state = lock(&log.state);
        for record in records {
            let at = usize::try_from(record.seq).ok().and_then(|s| s.checked_sub(1));
            match at.and_then(|i| state.records.get_mut(i)) {
                Some(held) if held.system_time == record.system_time => {
                    held.payload.clone_from(&record.payload)
                }
                _ => {
                    return Err(LogError::Conflict {
                        expected: record.seq,
                        found: state.records.len() as u64,
                    });
                }
            }
        }
        Ok(())
    }

    /// Every store over the backend hears each record as it is stored.
    fn behind(&self, name: &str, applied: u64) -> Option<crate::seam::Behind> {
        let log = lock(&self.inner.logs).get(name).cloned()?;
        let state = lock(&log.state);
        let since = *state.stored.get(usize::try_from(applied).ok()?)?;
        Some(crate::seam::Behind { last: state.records.len() as u64, since })
    }

    fn load_vectors(&self, name: &str) -> Result<Option<Vec<u8>>, LogError> {
        Ok(lock(&self.inner.vectors).get(name).cloned())
    }

    fn save_vectors(&self, name: &str, blob: &[u8]) -> Result<(), LogError> {
        lock(&self.inner.vectors).insert(name.to_owned(), blob.to_vec());
        Ok(())
    }
}

/// One opened log: its group commit over the shared records.
struct Handle {
    group: GroupCommit,
    store: Store,
    clock: Clock,
}

/// Where a handle's groups are stored: the shared records, after a latency.
struct Store {
    log: Arc<Shared>,
    latency: Duration,
}

impl Publish for Store {
    fn publish(
        &self,
        frames: Vec<u8>,
        after: Known,
        (first, _last): (Committed, Committed),
        _deadline: std::time::Instant,
    ) -> Result<u64, Refusal> {
        if !self.latency.is_zero() {
            std::thread::sleep(self.latency);
        }
        let mut state = lock(&self.log.state);
        if !state.interfere.is_empty() {
            let foreign = state.interfere.remove(0);
            state.push(foreign, first.system_time);
        }
        let found = state.records.len() as u64;
        if found != after.position {
            self.log.grew.notify_all();
            return Err(Refusal::Conflict { found });
        }
        let records =
            decode_frames(&frames).map_err(|(at, why)| Refusal::Unavailable(format!("{at}: {why}")))?;
        let now = std::time::Instant::now();
        state.stored.extend(records.iter().map(|_| now));
        state.records.extend(records);
        self.log.grew.notify_all();
        Ok(state.records.len() as u64)
    }
}

impl Handle {
    /// Takes in records read from the shared log (the position of a record is its seq:
    /// one record per message here).
    fn learn(&self, records: &[Record]) {
        if let Some(last) = records.last() {
            let bytes = records.iter().map(Record::frame_len).sum();
            self.group.learn(Known { seq: last.seq, time: last.system_time, position: last.seq }, bytes);
        }
    }
}

impl RecordLog for Handle {
    fn submit(&self, payload: &[u8], after: After) -> Result<Ticket, LogError> {
        self.group.submit(payload, after, &self.clock)
    }

    fn wait(&self, ticket: Ticket) -> Result<Committed, LogError> {
        self.group.wait(ticket, &self.store)
    }

    fn read_after(&self, after: u64) -> Result<Vec<Record>, LogError> {
        let records = {
            let state = lock(&self.store.log.state);
            let from = usize::try_from(after).unwrap_or(usize::MAX).min(state.records.len());
            state.records[from..].to_vec()
        };
        self.learn(&records);
        Ok(records)
    }

    fn follow(&self, after: u64, timeout: Duration) -> Result<Vec<Record>, LogError> {
        let records = {
            let state = lock(&self.store.log.state);
            let (state, _) = self
                .store
                .log
                .grew
                .wait_timeout_while(state, timeout, |s| s.records.len() as u64 <= after)
                .unwrap_or_else(PoisonError::into_inner);
            let from = usize::try_from(after).unwrap_or(usize::MAX).min(state.records.len());
            state.records[from..].to_vec()
        };
        self.learn(&records);
        Ok(records)
    }

    fn last_seq(&self) -> u64 {
        self.group.last_seq()
    }

    fn own_pending(&self) -> u64 {
        self.group.own_pending()
    }

    fn refusals(&self) -> u64 {
        self.group.refusals()
    }

    fn size_bytes(&self) -> u64 {
        self.group.size()
    }
}
