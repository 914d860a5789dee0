//! Logs in memory shared by every store opened over the same backend: several writers on
//! one namespace, as several nodes over one replicated stream, in one process. A test
//! can also append as "another writer" at any moment ([`SharedBackend::append_foreign`],
//! [`SharedBackend::interfere`]) to drive the conflict path.

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use crate::format::{FRAME_HEADER_LEN, MAX_PAYLOAD_LEN};
use crate::log::{Clock, Ticket};
use crate::record::{Committed, Record, Recovery, Truncation};
use crate::seam::{LogBackend, RecordLog};
use crate::storage::validate_name;
use crate::{FORMAT_VERSION, LogError};

/// In-memory logs and checkpoints, shared by clones.
#[derive(Clone, Default)]
pub struct SharedBackend {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
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
        Committed { seq, system_time }
    }
}

impl SharedBackend {
    /// An empty backend.
    pub fn new() -> Self {
        SharedBackend::default()
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
        Ok((Box::new(Handle { log, clock }), recovery))
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

    fn load_vectors(&self, name: &str) -> Result<Option<Vec<u8>>, LogError> {
        Ok(lock(&self.inner.vectors).get(name).cloned())
    }

    fn save_vectors(&self, name: &str, blob: &[u8]) -> Result<(), LogError> {
        lock(&self.inner.vectors).insert(name.to_owned(), blob.to_vec());
        Ok(())
    }
}

/// One opened log: appends are durable as soon as they are made.
struct Handle {
    log: Arc<Shared>,
    clock: Clock,
}

impl RecordLog for Handle {
    fn submit(&self, payload: &[u8], expected: u64) -> Result<Ticket, LogError> {
        if payload.len() > MAX_PAYLOAD_LEN {
            return Err(LogError::TooLarge { len: payload.len(), max: MAX_PAYLOAD_LEN });
        }
        let mut state = lock(&self.log.state);
        if !state.interfere.is_empty() {
            let foreign = state.interfere.remove(0);
            state.push(foreign, (self.clock)());
            self.log.grew.notify_all();
        }
        let found = state.records.len() as u64;
        if found != expected {
            return Err(LogError::Conflict { expected, found });
        }
        let committed = state.push(payload.to_vec(), (self.clock)());
        self.log.grew.notify_all();
        Ok(Ticket::new(committed))
    }

    fn wait(&self, ticket: Ticket) -> Result<Committed, LogError> {
        Ok(ticket.committed())
    }

    fn read_after(&self, after: u64) -> Result<Vec<Record>, LogError> {
        let state = lock(&self.log.state);
        let from = usize::try_from(after).unwrap_or(usize::MAX).min(state.records.len());
        Ok(state.records[from..].to_vec())
    }

    fn follow(&self, after: u64, timeout: Duration) -> Result<Vec<Record>, LogError> {
        let state = lock(&self.log.state);
        let (state, _) = self
            .log
            .grew
            .wait_timeout_while(state, timeout, |s| s.records.len() as u64 <= after)
            .unwrap_or_else(PoisonError::into_inner);
        let from = usize::try_from(after).unwrap_or(usize::MAX).min(state.records.len());
        Ok(state.records[from..].to_vec())
    }

    fn last_seq(&self) -> u64 {
        lock(&self.log.state).records.len() as u64
    }

    fn size_bytes(&self) -> u64 {
        lock(&self.log.state).records.iter().map(|r| (FRAME_HEADER_LEN + r.payload.len()) as u64).sum()
    }
}
