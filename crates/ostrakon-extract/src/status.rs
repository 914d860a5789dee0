//! What the extractor has done and has left, for `/metrics` and `/healthz`: counters
//! only it writes, read at any time without a lock but the last error's.

use std::collections::HashMap;
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
    pub(crate) pending: Mutex<HashMap<String, u64>>,
    pub(crate) last_error: Mutex<Option<String>>,
    /// The model endpoint's API key, never shown in an error.
    pub(crate) secret: Option<String>,
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
            queue: self.pending.lock().unwrap_or_else(std::sync::PoisonError::into_inner).values().sum(),
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

    pub(crate) fn set_pending(&self, ns: &str, n: u64) {
        self.pending.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(ns.to_owned(), n);
    }

    pub(crate) fn more_pending(&self, ns: &str, n: u64) {
        let mut pending = self.pending.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *pending.entry(ns.to_owned()).or_default() += n;
    }

    pub(crate) fn one_less_pending(&self, ns: &str) {
        if let Some(n) = self.pending.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get_mut(ns) {
            *n = n.saturating_sub(1);
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
