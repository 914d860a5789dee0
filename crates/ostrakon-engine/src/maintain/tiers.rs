//! Tiers of context through the store: what is in CORE and in each ACTIVE scope at a
//! read point, a record's placements over time, upkeep's open proposals, and upkeep
//! itself: a fact stated from episodes of enough different threads, or recalled on
//! enough different days, is proposed for (or, under the apply policy, placed in) CORE,
//! and a scope without a placement for the configured period is released. Each is an
//! event with its reason.

use std::collections::{BTreeSet, HashSet};

use ostrakon_core::{FactFilter, Namespace, PlacedBy, RecordRef, Scope, Tier, TierPolicy, Timestamp, View};
use ostrakon_index::NamespaceIndex;

use crate::change::Change;
use crate::error::write::WriteError;
use crate::store::Store;

/// What upkeep did about tiers in one namespace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TierUpkeep {
    /// Placements proposed (or made, under the apply policy).
    pub promoted: Vec<RecordRef>,
    /// Releases proposed (or made).
    pub released: Vec<(Tier, RecordRef)>,
}

impl Store {
    /// Tier upkeep of one namespace at `now`, as its policy says (nothing when off).
    /// Promotions are looked for once per new batch, releases at every call.
    pub fn maintain_tiers(&self, ns: &Namespace, now: Timestamp) -> Result<TierUpkeep, WriteError> {
        let latest = self.with_index(ns, NamespaceIndex::last_seq)?.0;
        let promote = {
            let mut checked = self.schedule.tiers_checked.lock().unwrap_or_else(|e| e.into_inner());
            checked.insert(ns.clone(), latest) != Some(latest)
        };
        let (changes, done) = self.with_index(ns, |i| tier_changes(i, now, promote))?;
        if !changes.is_empty() {
            self.append(ns, changes)?;
        }
        Ok(done)
    }
}

/// The changes tier upkeep makes now, and what they are.
fn tier_changes(index: &NamespaceIndex, now: Timestamp, promote: bool) -> (Vec<Change>, TierUpkeep) {
    let latest = index.last_seq();
    let settings = index.tier_settings(latest);
    let mut done = TierUpkeep::default();
    if settings.policy == TierPolicy::Off {
        return (Vec::new(), done);
    }
    let apply = settings.policy == TierPolicy::Apply;
    let mut changes = Vec::new();
    let mut core_count = index.tier_members(&Tier::Core, latest).len();
    // What stands proposed already, once: a proposal is made once, not at every tick.
    let proposed: HashSet<(RecordRef, Tier, bool)> =
        index.open_proposals(latest).into_iter().map(|p| (p.record, p.tier, p.release)).collect();
    let view = View { valid_at: now, known_at: latest };
    let facts = if promote { index.facts(&FactFilter::default(), view, Scope::InForce) } else { Vec::new() };
    for fact in facts {
        let record = RecordRef::Fact(fact.fact.id);
        if !fact.in_force()
            || index.is_placed(&Tier::Core, record, latest)
            || proposed.contains(&(record, Tier::Core, false))
        {
            continue;
        }
        let threads: BTreeSet<&str> = fact
            .provenance
            .iter()
            .filter_map(|e| index.episode(*e).and_then(|e| e.thread.as_deref()))
            .collect();
        let needed = settings.promote_after_threads as usize;
        let recalled = index.recall_days(record, latest);
        let reason = if threads.len() >= needed {
            format!("stated in {} different threads", threads.len())
        } else if recalled >= needed {
            format!("recalled on {recalled} different days")
        } else {
            continue;
        };
        if apply && core_count >= settings.core_max_items as usize {
            break;
        }
        changes.push(if apply {
            core_count += 1;
            Change::Place { record, tier: Tier::Core, reason: Some(reason), by: PlacedBy::Store }
        } else {
            Change::ProposePlacement { record, tier: Tier::Core, release: false, reason }
        });
        done.promoted.push(record);
    }
    if let Some(idle) = settings.release_idle_after_micros {
        for (scope, _, touched) in index.scopes(latest) {
            let last = index.system_time(touched).map_or(0, Timestamp::as_micros);
            if now.as_micros().saturating_sub(last) < idle {
                continue;
            }
            let tier = Tier::Active(scope);
            let days = idle / ostrakon_core::DAY_MICROS;
            for (record, _) in index.tier_members(&tier, latest) {
                if !apply && proposed.contains(&(record, tier.clone(), true)) {
                    continue;
                }
                let reason = format!("the scope had no placement for {days} days");
                changes.push(if apply {
                    Change::Release { record, tier: tier.clone(), reason: Some(reason), by: PlacedBy::Store }
                } else {
                    Change::ProposePlacement { record, tier: tier.clone(), release: true, reason }
                });
                done.released.push((tier.clone(), record));
            }
        }
    }
    (changes, done)
}
