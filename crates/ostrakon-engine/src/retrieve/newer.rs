//! What holds now before what was said before it: read at the present, an episode whose
//! statement was replaced ranks below the episodes behind what replaced it, when both are
//! found for a query (the marks themselves are `read::outdated`).

use std::collections::{HashMap, HashSet};

use ostrakon_core::RecordRef;
use ostrakon_index::{NamespaceIndex, View};

use crate::retrieve::keys::key;
use crate::retrieve::keys::record;
use crate::retrieve::query::{Explanation, SearchHit};

/// How far above the episode it replaced a newer one is lifted.
const NEWER_MARGIN: f64 = 1.01;
/// Most passes that settle chains of replacements (each pass settles one more link).
const MAX_LIFT_PASSES: usize = 4;

/// Read at the present, an episode that stated what no longer holds ranks below the
/// episodes behind what replaced it, when those are candidates too: for "where does she
/// live?", "I moved to Berlin" comes before "I live in Lyon". The older one keeps its
/// place otherwise (a question about the past still finds it, marked in the block).
/// Returns the pairs (older, newer) found among the candidates.
pub(crate) fn lift_newer(
    index: &NamespaceIndex,
    view: View,
    scored: &mut [(u64, f64, Explanation)],
) -> Vec<(u64, u64)> {
    let place: HashMap<u64, usize> = scored.iter().enumerate().map(|(i, s)| (s.0, i)).collect();
    let outdated: Vec<(usize, HashSet<usize>)> = (0..scored.len())
        .filter_map(|i| {
            let RecordRef::Episode(old) = record(scored[i].0) else { return None };
            let newer: HashSet<usize> = crate::read::outdated::replacements(index, old, view)
                .into_iter()
                .filter_map(|f| index.fact_at(f, view))
                .flat_map(|f| f.provenance)
                .filter(|e| *e != old)
                .filter_map(|e| place.get(&key(RecordRef::Episode(e))).copied())
                .collect();
            (!newer.is_empty()).then_some((i, newer))
        })
        .collect();
    let mut lifted = false;
    // A chain of replacements (Lyon, then Berlin, then Rome) settles in as many passes.
    for _ in 0..=outdated.len().min(MAX_LIFT_PASSES) {
        let mut moved = false;
        for (i, newer) in &outdated {
            let floor = scored[*i].1 * NEWER_MARGIN;
            for j in newer {
                let s = &mut scored[*j];
                if s.1 < floor {
                    s.2.newer *= floor / s.1;
                    s.1 = floor;
                    s.2.relevance = floor;
                    moved = true;
                }
            }
        }
        lifted |= moved;
        if !moved {
            break;
        }
    }
    let pairs =
        outdated.iter().flat_map(|(i, newer)| newer.iter().map(|j| (scored[*i].0, scored[*j].0))).collect();
    if lifted {
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    }
    pairs
}

/// After diversification, which may push a newer statement below the one it replaced
/// (it is alike to what was picked before it, a fact stating the same value), each newer
/// episode moves up to just before the older one it follows.
pub(crate) fn newer_first(hits: &mut Vec<SearchHit>, replaced: &[(u64, u64)]) {
    for _ in 0..MAX_LIFT_PASSES {
        let mut moved = false;
        for (old, newer) in replaced {
            let at = |k: u64| hits.iter().position(|h| key(h.record) == k);
            if let (Some(i), Some(j)) = (at(*old), at(*newer))
                && j > i
            {
                let hit = hits.remove(j);
                hits.insert(i, hit);
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
}
