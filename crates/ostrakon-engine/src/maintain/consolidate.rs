//! Consolidation ("sleep"): entities that are the same merged, in one batch, and what
//! that merge and the passing time changed.

use std::collections::HashMap;

use ostrakon_core::{EntityId, FactFilter, Fading, Namespace, RecordKind, Scope, Seq, Timestamp, View};

use crate::change::Change;
use crate::error::write::WriteError;
use crate::read::point::{KnownAt, ReadAt};
use crate::store::Store;

/// What consolidation did.
#[derive(Clone, Debug, PartialEq)]
pub struct ConsolidationReport {
    /// The batch that recorded the merges, if any.
    pub seq: Option<Seq>,
    /// Entities merged: (merged away, kept).
    pub merged: Vec<(EntityId, EntityId)>,
    /// Facts that merging made corroborate each other, with their statement counts now.
    pub corroborated: Vec<(ostrakon_core::FactId, u32)>,
    /// Records that turned dormant in the window, and when.
    pub dormant: Vec<Fading>,
}

impl Store {
    /// Consolidation ("sleep"): merges entities that are the same (equal names or aliases,
    /// agreeing kinds) with `EntitiesMerged` events in one batch, and reports what it merged,
    /// the facts that merging made corroborate each other, and the records that turned
    /// dormant between `since` and `now`. Nothing in the past is edited; with nothing to
    /// merge it writes nothing, so running it again changes nothing.
    pub fn consolidate(
        &self,
        ns: &Namespace,
        now: Timestamp,
        since: Timestamp,
    ) -> Result<ConsolidationReport, WriteError> {
        let (before, merges) = self.with_index(ns, |index| (index.last_seq(), index.merge_candidates()))?;
        let mut seq = None;
        let mut corroborated = Vec::new();
        if !merges.is_empty() {
            let changes = merges.iter().map(|&(from, into)| Change::MergeEntities { from, into }).collect();
            let receipt = self.append(ns, changes)?;
            seq = Some(receipt.seq);
            // Facts of the merged entities that now have more statements behind them.
            corroborated = self.with_index(ns, |index| {
                let count = |e: EntityId, s: Seq| {
                    let view = View { valid_at: now, known_at: s };
                    let filter = FactFilter { subject: Some(e), ..FactFilter::default() };
                    index
                        .facts(&filter, view, Scope::All)
                        .into_iter()
                        .map(|f| (f.fact.id, f.corroborations))
                        .collect::<HashMap<_, _>>()
                };
                let mut out = Vec::new();
                let kept: std::collections::BTreeSet<EntityId> =
                    merges.iter().map(|(_, into)| *into).collect();
                for into in kept {
                    let mut earlier = count(into, before);
                    for (from, _) in merges.iter().filter(|(_, i)| *i == into) {
                        earlier.extend(count(*from, before));
                    }
                    for (fact, n) in count(into, receipt.seq) {
                        if earlier.get(&fact).is_some_and(|m| *m < n) {
                            out.push((fact, n));
                        }
                    }
                }
                out.sort();
                out
            })?;
        }
        // Conversations that moved on or went quiet join the topic network.
        self.segment(ns, false)?;
        let kinds = [RecordKind::Fact, RecordKind::Entity, RecordKind::Episode];
        let dormant = if since < now {
            self.forecast(
                ns,
                since,
                now,
                ReadAt { valid_at: Some(now), known_at: KnownAt::Latest, at: Some(now) },
                &kinds,
            )?
            .value
        } else {
            Vec::new()
        };
        Ok(ConsolidationReport { seq, merged: merges, corroborated, dormant })
    }
}
