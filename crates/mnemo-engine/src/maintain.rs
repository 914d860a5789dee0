//! Background upkeep: the one entry point ([`Store::maintain`]) that the server calls on
//! its tick. Reads never write; what time alone makes due is recorded here: intentions
//! whose time has come (or whose cue an embedded episode met), segments of threads that
//! moved on or went quiet, and idle consolidation where a namespace asks for it.

use std::collections::HashMap;
use std::sync::Mutex;

use mnemo_core::{Namespace, Timestamp, Trigger};
use mnemo_index::NamespaceIndex;

use crate::store::{ConsolidationReport, Store};

/// Which namespaces a store keeps open: those used in the last `idle_after_micros`, at
/// most `max_open` of them, and as many as fit in `max_state_bytes` (the least recently
/// used close first). A closed namespace holds no memory beyond its name, and reopens on
/// its next use from its checkpoint and the log after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Residency {
    /// A namespace unused for this long (by the store's clock) is closed by upkeep.
    pub idle_after_micros: i64,
    /// Most namespaces open at once, as upkeep leaves them.
    pub max_open: usize,
    /// The memory budget of the open namespaces' state (their estimated resident bytes,
    /// search indexes not included); `None`: no budget. Upkeep closes the least recently
    /// used until they fit; one namespace in use stays open even if it alone is larger.
    pub max_state_bytes: Option<u64>,
}

impl Default for Residency {
    fn default() -> Self {
        Residency { idle_after_micros: 5 * 60_000_000, max_open: 1024, max_state_bytes: None }
    }
}

/// When upkeep must next look at a namespace that is closing: its earliest pending
/// timed intention, the moment its quietest open thread has been idle long enough for
/// its segment to close, or its next consolidation; `None` if nothing will be due.
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
    consolidated: Mutex<HashMap<Namespace, i64>>,
}

/// What one [`Store::maintain`] call recorded, per namespace.
#[derive(Debug, Default)]
pub struct Maintenance {
    /// Intentions fired, by namespace (only namespaces where some fired).
    pub fired: Vec<(Namespace, usize)>,
    /// Segments closed, by namespace (only namespaces where some closed).
    pub segments_closed: Vec<(Namespace, usize)>,
    /// Consolidations run, by namespace.
    pub consolidated: Vec<(Namespace, ConsolidationReport)>,
    /// Work that failed, by namespace, with the reason (the other namespaces went on).
    pub failed: Vec<(Namespace, String)>,
    /// Namespaces closed for idleness.
    pub closed: usize,
    /// Checkpoints written (see [`crate::CHECKPOINT_EVERY_BATCHES`]).
    pub checkpointed: usize,
}

impl Store {
    /// Does, for every open namespace, what the passage of time has made due at `now`:
    /// fires due intentions, closes the segments of threads that moved on or went idle,
    /// and consolidates each namespace that asks for it (`consolidateEverySeconds`) once
    /// it has had no commit for [`IDLE_AFTER_MICROS`] and its period has passed since the
    /// last run. Each namespace's failure is reported and the others go on.
    ///
    /// Closed namespaces are left closed unless something falls due in them; then those
    /// unused for a while are closed (see [`Residency`]).
    pub fn maintain(&self, now: Timestamp) -> Maintenance {
        crate::store::as_upkeep(|| self.maintain_all(now))
    }

    fn maintain_all(&self, now: Timestamp) -> Maintenance {
        let mut report = Maintenance::default();
        let woken: Vec<Namespace> = {
            let sleeping = self.sleeping.lock().unwrap_or_else(|e| e.into_inner());
            sleeping
                .iter()
                .filter(|(_, wake)| wake.is_some_and(|w| w <= now))
                .map(|(ns, _)| ns.clone())
                .collect()
        };
        for ns in self.open_namespace_names().into_iter().chain(woken) {
            let seen = self.with_index(&ns, NamespaceIndex::last_seq);
            match self.maintain_one(&ns, now, &mut report) {
                Ok(()) => {
                    if let Ok(Some(shard)) = self.shard(&ns) {
                        shard.maintained.fetch_max(seen.0, std::sync::atomic::Ordering::SeqCst);
                    }
                }
                Err(e) => report.failed.push((ns, e.to_string())),
            }
        }
        report.checkpointed = self.checkpoint_due();
        let residency = self.retrieval.residency();
        report.closed = self.close_over(now, residency);
        report
    }

    fn maintain_one(
        &self,
        ns: &Namespace,
        now: Timestamp,
        report: &mut Maintenance,
    ) -> Result<(), crate::EngineError> {
        let fired = self.fire_due(ns, now)?.fired.len();
        if fired > 0 {
            report.fired.push((ns.clone(), fired));
        }
        let (every, last_commit) =
            self.with_index(ns, |i| (i.config().consolidate_every_seconds, i.system_time(i.last_seq())));
        let last_run = self.schedule.consolidated.lock().unwrap_or_else(|e| e.into_inner()).get(ns).copied();
        if let Some(every) = every {
            // Saturating: a period written before it was bounded must not overflow.
            let every = i64::try_from(every).unwrap_or(i64::MAX).saturating_mul(1_000_000);
            let due = last_run.is_none_or(|t| now.as_micros().saturating_sub(t) >= every);
            let idle = last_commit
                .is_none_or(|t| now.as_micros().saturating_sub(t.as_micros()) >= IDLE_AFTER_MICROS);
            if due && idle {
                let since = Timestamp::from_micros(last_run.unwrap_or(now.as_micros().saturating_sub(every)));
                let done = self.consolidate(ns, now, since)?;
                self.schedule
                    .consolidated
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(ns.clone(), now.as_micros());
                report.consolidated.push((ns.clone(), done));
                // Consolidation closed what was due.
                return Ok(());
            }
        }
        let closed = self.segment(ns, false)?.closed.len();
        if closed > 0 {
            report.segments_closed.push((ns.clone(), closed));
        }
        Ok(())
    }
}
