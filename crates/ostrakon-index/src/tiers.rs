//! Tiers of context as the log placed them: which records are in CORE or in an ACTIVE
//! scope at a system time, each record's placements over time, the scopes, upkeep's
//! proposals, and the settings. Every read is as known at S.

use std::collections::BTreeMap;

use ostrakon_core::{RecordRef, Seq, Tier, TierSettings};

use crate::placement::{Placement, Proposal};
use crate::state::NamespaceIndex;

impl NamespaceIndex {
    /// The tier settings at S.
    pub fn tier_settings(&self, known_at: Seq) -> TierSettings {
        self.tier_settings.iter().rev().find(|(seq, _)| *seq <= known_at).map(|(_, s)| *s).unwrap_or_default()
    }

    /// The last placement or release of `record` in `tier` at S.
    fn latest(&self, tier: &Tier, record: RecordRef, known_at: Seq) -> Option<&Placement> {
        self.placements.get(&(tier.clone(), record))?.iter().rev().find(|p| p.seq <= known_at)
    }

    /// Whether `record` is in `tier` at S.
    pub fn is_placed(&self, tier: &Tier, record: RecordRef, known_at: Seq) -> bool {
        self.latest(tier, record, known_at).is_some_and(|p| p.placed)
    }

    /// The records in `tier` at S, with the placement that put each there, in the order
    /// they were placed.
    pub fn tier_members(&self, tier: &Tier, known_at: Seq) -> Vec<(RecordRef, Placement)> {
        let start = (tier.clone(), RecordRef::Fact(ostrakon_core::FactId(0)));
        let mut members: Vec<(RecordRef, Placement)> = self
            .placements
            .range(start..)
            .take_while(|((t, _), _)| t == tier)
            .filter_map(|((_, record), list)| {
                let last = list.iter().rev().find(|p| p.seq <= known_at)?;
                last.placed.then(|| (*record, last.clone()))
            })
            .collect();
        members.sort_by_key(|(record, p)| (p.seq, *record));
        members
    }

    /// The tiers `record` is in at S.
    pub fn tiers_of(&self, record: RecordRef, known_at: Seq) -> Vec<Tier> {
        let mut tiers: Vec<Tier> = self
            .placements
            .iter()
            .filter(|((_, r), _)| *r == record)
            .filter(|((tier, r), _)| self.is_placed(tier, *r, known_at))
            .map(|((tier, _), _)| tier.clone())
            .collect();
        tiers.dedup();
        tiers
    }

    /// Every placement and release of `record`, in log order, as known at S.
    pub fn placement_history(&self, record: RecordRef, known_at: Seq) -> Vec<(Tier, Placement)> {
        let mut history: Vec<(Tier, Placement)> = self
            .placements
            .iter()
            .filter(|((_, r), _)| *r == record)
            .flat_map(|((tier, _), list)| list.iter().map(move |p| (tier.clone(), p.clone())))
            .filter(|(_, p)| p.seq <= known_at)
            .collect();
        history.sort_by_key(|(_, p)| p.seq);
        history
    }

    /// The ACTIVE scopes with records at S: each with its member count and the batch of
    /// its latest placement (when it was last touched).
    pub fn scopes(&self, known_at: Seq) -> Vec<(String, usize, Seq)> {
        let mut scopes: BTreeMap<String, (usize, Seq)> = BTreeMap::new();
        for ((tier, record), list) in &self.placements {
            let Tier::Active(scope) = tier else { continue };
            let placed = list.iter().filter(|p| p.seq <= known_at && p.placed).map(|p| p.seq).max();
            let entry = scopes.entry(scope.clone()).or_insert((0, Seq(0)));
            if let Some(seq) = placed {
                entry.1 = entry.1.max(seq);
            }
            entry.0 += usize::from(self.is_placed(tier, *record, known_at));
        }
        scopes.into_iter().filter(|(_, (n, _))| *n > 0).map(|(s, (n, seq))| (s, n, seq)).collect()
    }

    /// Upkeep's proposals at S not acted on since: no placement or release of the record
    /// in that tier after the proposal.
    pub fn open_proposals(&self, known_at: Seq) -> Vec<Proposal> {
        self.proposals
            .iter()
            .filter(|p| p.seq <= known_at)
            .filter(|p| self.latest(&p.tier, p.record, known_at).is_none_or(|last| last.seq < p.seq))
            .cloned()
            .collect()
    }

    /// On how many different days (UTC, by the clocks the recalls give) `record` was
    /// recalled, as known at S.
    pub fn recall_days(&self, record: RecordRef, known_at: Seq) -> usize {
        let days: std::collections::BTreeSet<i64> = self
            .reinforced
            .get(&record)
            .into_iter()
            .flatten()
            .filter(|(seq, _)| *seq <= known_at)
            .map(|(_, at)| at.as_micros().div_euclid(ostrakon_core::DAY_MICROS))
            .collect();
        days.len()
    }
}
