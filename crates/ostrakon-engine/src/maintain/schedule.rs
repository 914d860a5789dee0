//! When background upkeep must look at a namespace again: what time alone makes due
//! (timed intentions, threads going quiet, periodic consolidation), and when each
//! namespace was last consolidated.

use std::collections::HashMap;
use std::sync::Mutex;

use ostrakon_core::{Namespace, Timestamp, Trigger};
use ostrakon_index::NamespaceIndex;

/// When upkeep must next look at a namespace that is closing: its earliest pending
/// timed intention, the moment its quietest open thread has been idle long enough for
/// its segment to close, its next consolidation, or the next episode its retention period
/// makes due; `None` if nothing will be due.
pub(crate) fn wake_at(
    index: &NamespaceIndex,
    now: Timestamp,
    last_consolidated: Option<i64>,
) -> Option<Timestamp> {
    let last = index.last_seq();
    let mut wake: Option<Timestamp> = None;
    let mut at = |t: Timestamp| wake = Some(wake.map_or(t, |w| w.min(t)));
    for view in index.intentions(last) {
        if let Trigger::At(t) = view.intention.trigger
            && view.pending_at(now)
            && t > now
        {
            at(t);
        }
    }
    let gap = index.segment_config(last).max_gap_micros;
    for thread in index.thread_names() {
        if let Some(newest) = index.open_episodes(thread).last() {
            at(Timestamp::from_micros(newest.occurred_at.as_micros().saturating_add(gap).saturating_add(1))
                .max(now));
        }
    }
    // The next episode the retention period makes due (upkeep erases what is due then,
    // at most once per `RETENTION_EVERY_MICROS`).
    if let Some(due) = index.retention_due_at() {
        at(due.max(now));
    }
    if let Some(every) = index.config().consolidate_every_seconds {
        let every = i64::try_from(every).unwrap_or(i64::MAX).saturating_mul(1_000_000);
        at(Timestamp::from_micros(last_consolidated.map_or(now.as_micros(), |t| t.saturating_add(every)))
            .max(now));
    }
    wake
}

impl Schedule {
    /// When upkeep last consolidated `ns` (µs by the store's clock).
    pub(crate) fn last_consolidated(&self, ns: &Namespace) -> Option<i64> {
        self.consolidated.lock().unwrap_or_else(|e| e.into_inner()).get(ns).copied()
    }
}

/// A namespace with no commit for this long is idle, and may be consolidated.
pub const IDLE_AFTER_MICROS: i64 = 60_000_000;

/// When each namespace was last consolidated by [`Store::maintain`] (by the store's
/// clock, microseconds). Derived, not truth: lost on restart, which only means one early
/// consolidation, and consolidation is idempotent.
#[derive(Debug, Default)]
pub(crate) struct Schedule {
    pub(crate) consolidated: Mutex<HashMap<Namespace, i64>>,
    /// When retention last ran for each namespace (µs, the store's clock).
    pub(crate) retained: Mutex<HashMap<Namespace, i64>>,
    /// The batch up to which tier upkeep last looked for promotions, per namespace.
    pub(crate) tiers_checked: Mutex<HashMap<Namespace, u64>>,
}
