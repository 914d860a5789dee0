//! Background upkeep: the one entry point ([`Store::maintain`]) that the server calls on
//! its tick. Reads never write; what time alone makes due is recorded here: intentions
//! whose time has come (or whose cue an embedded episode met), segments of threads that
//! moved on or went quiet, idle consolidation where a namespace asks for it, and the
//! erasure of episodes older than a namespace's retention period.

use ostrakon_core::{Namespace, Timestamp};
use ostrakon_index::NamespaceIndex;

use crate::maintain::consolidate::ConsolidationReport;
use crate::maintain::schedule::IDLE_AFTER_MICROS;
use crate::store::Store;

/// What one [`Store::maintain`] call recorded, per namespace.
#[derive(Debug, Default)]
pub struct Maintenance {
    /// Intentions fired, by namespace (only namespaces where some fired).
    pub fired: Vec<(Namespace, usize)>,
    /// Segments closed, by namespace (only namespaces where some closed).
    pub segments_closed: Vec<(Namespace, usize)>,
    /// Consolidations run, by namespace.
    pub consolidated: Vec<(Namespace, ConsolidationReport)>,
    /// Episodes erased because the namespace's retention period passed, by namespace.
    pub retained: Vec<(Namespace, usize)>,
    /// Tier promotions and releases proposed or made, by namespace.
    pub tiers: Vec<(Namespace, crate::maintain::tiers::TierUpkeep)>,
    /// Work that failed, by namespace, with the reason (the other namespaces went on).
    pub failed: Vec<(Namespace, String)>,
    /// Namespaces closed for idleness.
    pub closed: usize,
    /// Checkpoints written (see [`crate::maintain::checkpoint::CHECKPOINT_EVERY_BATCHES`]).
    pub checkpointed: usize,
}

impl Store {
    /// Stops upkeep: a run going on returns at its next namespace, and later runs do
    /// nothing (the server stopping; the store writes its checkpoints itself).
    pub fn stop_upkeep(&self) {
        self.upkeep_stopped.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    fn upkeep_stopped(&self) -> bool {
        self.upkeep_stopped.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Does, for every open namespace, what the passage of time has made due at `now`:
    /// fires due intentions, closes the segments of threads that moved on or went idle,
    /// and consolidates each namespace that asks for it (`consolidateEverySeconds`) once
    /// it has had no commit for [`IDLE_AFTER_MICROS`] and its period has passed since the
    /// last run. Each namespace's failure is reported and the others go on.
    ///
    /// Closed namespaces are left closed unless something falls due in them; then those
    /// unused for a while are closed (see [`Residency`](crate::options::Residency)).
    pub fn maintain(&self, now: Timestamp) -> Maintenance {
        crate::shard::as_upkeep(|| self.maintain_all(now))
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
            // Stopping: what upkeep has not done is done at the next start.
            if self.upkeep_stopped() {
                return report;
            }
            let seen = match self.with_index(&ns, NamespaceIndex::last_seq) {
                Ok(seen) => seen,
                Err(e) => {
                    report.failed.push((ns, e.to_string()));
                    continue;
                }
            };
            match self.maintain_one(&ns, now, &mut report) {
                Ok(()) => {
                    if let Ok(Some(shard)) = self.shard(&ns) {
                        shard.maintained.fetch_max(seen.0, std::sync::atomic::Ordering::SeqCst);
                    }
                }
                Err(e) => report.failed.push((ns, e.to_string())),
            }
        }
        if self.upkeep_stopped() {
            return report;
        }
        report.checkpointed = self.checkpoint_due();
        let residency = self.retrieval.residency();
        report.closed = self.close_over(now, residency, false);
        report
    }

    fn maintain_one(
        &self,
        ns: &Namespace,
        now: Timestamp,
        report: &mut Maintenance,
    ) -> Result<(), crate::error::write::WriteError> {
        let fired = self.fire_due(ns, now)?.fired.len();
        if fired > 0 {
            report.fired.push((ns.clone(), fired));
        }
        let erased = self.apply_retention(ns, now)?;
        if erased > 0 {
            report.retained.push((ns.clone(), erased));
        }
        let tiers = self.maintain_tiers(ns, now)?;
        if tiers != crate::maintain::tiers::TierUpkeep::default() {
            report.tiers.push((ns.clone(), tiers));
        }
        let (every, last_commit) =
            self.with_index(ns, |i| (i.config().consolidate_every_seconds, i.system_time(i.last_seq())))?;
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
