//! What the extractor has done and has left, for `/metrics` and `/healthz`: counters
//! only it writes, read at any time without a lock but the last error's.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

/// The extractor's counters.
#[derive(Debug, Default)]
pub struct Status {
    pub(crate) calls: AtomicU64,
    pub(crate) retries: AtomicU64,
    pub(crate) read: AtomicU64,
    pub(crate) facts: AtomicU64,
    pub(crate) left_out: AtomicU64,
    pub(crate) refused: AtomicU64,
    pub(crate) failed: AtomicU64,
    pub(crate) in_flight: AtomicU64,
    pub(crate) calls_today: AtomicU64,
    pub(crate) budget: u64,
    pub(crate) source: String,
    /// Episodes not read yet, per namespace, as last counted.
    pub(crate) pending: Mutex<HashMap<String, Pending>>,
    pub(crate) last_error: Mutex<Option<String>>,
    /// The model endpoint's API key, never shown in an error.
    pub(crate) secret: Option<String>,
}

/// Batches announced since the last count, at most: enough for the commits of one look.
const MAX_ANNOUNCED: usize = 4096;

/// A namespace's backlog: its count, and the batches that announced episodes since the
/// count was taken (batch, episodes).
#[derive(Debug, Default)]
pub(crate) struct Pending {
    pub(crate) count: u64,
    announced: VecDeque<(u64, u64)>,
}

/// The counters at one moment.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusSnapshot {
    /// Who extractions are recorded as: the model and the prompt's version.
    pub source: String,
    /// Episodes waiting to be read, in the namespaces written to since the start.
    pub queue: u64,
    /// Calls under way (0 or 1).
    pub in_flight: u64,
    /// Calls made, retries included.
    pub calls: u64,
    /// Calls that were retries.
    pub retries: u64,
    /// Episodes read (their extraction recorded, with facts or none).
    pub episodes_read: u64,
    /// Facts written.
    pub facts_written: u64,
    /// Facts an answer gave that were left out (malformed, of another type, past the cap).
    pub facts_left_out: u64,
    /// Episodes the model declined to read (recorded as read, with no facts).
    pub refused: u64,
    /// Episodes given up after their tries (read again after the next start).
    pub failed: u64,
    /// Calls made today (UTC).
    pub calls_today: u64,
    /// Calls allowed a day.
    pub daily_budget: u64,
    /// The last failure, if any.
    pub last_error: Option<String>,
}

impl Status {
    pub(crate) fn new(source: String, budget: u64) -> Self {
        Status { source, budget, ..Status::default() }
    }

    /// The counters now.
    pub fn snapshot(&self) -> StatusSnapshot {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        StatusSnapshot {
            source: self.source.clone(),
            queue: self
                .pending
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .values()
                .map(|p| p.count)
                .sum(),
            in_flight: get(&self.in_flight),
            calls: get(&self.calls),
            retries: get(&self.retries),
            episodes_read: get(&self.read),
            facts_written: get(&self.facts),
            facts_left_out: get(&self.left_out),
            refused: get(&self.refused),
            failed: get(&self.failed),
            calls_today: get(&self.calls_today),
            daily_budget: self.budget,
            last_error: self.last_error.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone(),
        }
    }

    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    /// The backlog counted at batch `as_of`, with the episodes announced by later batches
    /// (which the count could not see) added: announcements of a batch the count saw are
    /// not counted twice, and those that came while it ran are not lost.
    pub(crate) fn set_pending(&self, ns: &str, counted: u64, as_of: u64) {
        let mut pending = self.pending.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let entry = pending.entry(ns.to_owned()).or_default();
        entry.announced.retain(|(seq, _)| *seq > as_of);
        entry.count = counted + entry.announced.iter().map(|(_, n)| n).sum::<u64>();
    }

    /// `n` episodes recorded by batch `seq`, announced as it commits.
    pub(crate) fn more_pending(&self, ns: &str, seq: u64, n: u64) {
        let mut pending = self.pending.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let entry = pending.entry(ns.to_owned()).or_default();
        entry.count += n;
        if entry.announced.len() == MAX_ANNOUNCED {
            // Only the batches since the last count matter; a count comes at every look.
            entry.announced.pop_front();
        }
        entry.announced.push_back((seq, n));
    }

    pub(crate) fn one_less_pending(&self, ns: &str) {
        if let Some(p) = self.pending.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get_mut(ns) {
            p.count = p.count.saturating_sub(1);
        }
    }

    /// Records a failure; the API key, a URL's credentials and anything shaped like a
    /// key are left out of the log line and of the last error `/readyz` shows.
    pub(crate) fn failure(&self, why: String) {
        let why = ostrakon_core::redact(&why, &self.secret.iter().map(String::as_str).collect::<Vec<_>>());
        tracing::warn!(error = %why, "extraction failed");
        *self.last_error.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(why);
    }
}

#[cfg(test)]
mod pending_tests {
    use super::*;

    #[test]
    fn a_count_keeps_what_later_batches_announced_and_does_not_count_twice() {
        let status = Status::new("m@p".into(), 10);
        // Batches 1 to 4 each record an episode; the count was taken at batch 1.
        for seq in 1..=4 {
            status.more_pending("ana", seq, 1);
        }
        status.set_pending("ana", 1, 1);
        assert_eq!(status.snapshot().queue, 4, "the three announced after the count are kept");
        // A count at batch 4 has seen them all: nothing is added twice.
        status.set_pending("ana", 4, 4);
        assert_eq!(status.snapshot().queue, 4);
        status.one_less_pending("ana");
        status.more_pending("ana", 5, 2);
        assert_eq!(status.snapshot().queue, 5);
    }
}
