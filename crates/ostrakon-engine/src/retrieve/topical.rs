//! The `Segment` list: evidence for one question often sits in several turns of the same
//! stretch of talk, and only one of them shares the question's words. The topic network's
//! unit is the closed segment (a stretch of one thread on one topic); when an episode
//! ranks among the best, the other episodes of its segment become candidates, those most
//! like the query first. Segments close behind the write path (the server's upkeep,
//! `Store::segment`); episodes in no closed segment yet are not in this list.

use std::collections::HashSet;

use ostrakon_core::{EpisodeId, RecordRef};
use ostrakon_index::{NamespaceIndex, View};

use crate::retrieve::index::SearchIndex;
use crate::retrieve::keys::key;

/// Whose segments make the list: the best this many episodes of the other lists.
/// Measured on LoCoMo's development conversations (recall@10, e5, one run each; none of
/// the segment list: 0.793 overall, 0.418 multi-hop): 1 seed 0.813 / 0.410, 3 seeds
/// 0.810 / 0.418, 5 seeds 0.811 / 0.432, 8 seeds 0.804 / 0.448. Five (the neighbours'
/// seeds) lifts every category and every conversation.
pub(crate) const SEGMENT_SEEDS: usize = 5;

/// The seeds that lie in closed segments, in their order, then the other episodes of
/// those segments: by similarity to the query vector when there is one, else by distance
/// in the segment from their seed; at most `pool`. The seeds lead the list so that it
/// strengthens a stretch of talk around what ranks best instead of raising a seed's
/// neighbours above the seed itself (without them recall@1 fell from 0.382 to 0.348).
pub(crate) fn segment_list(
    index: &NamespaceIndex,
    view: View,
    search: &SearchIndex,
    seeds: &[EpisodeId],
    query_vector: Option<&[f32]>,
    pool: usize,
) -> Vec<(u64, f32)> {
    let vectors = search.vectors();
    let mut seen: HashSet<EpisodeId> = seeds.iter().copied().collect();
    let mut led: Vec<(u64, f32)> = Vec::new();
    let mut others: Vec<(u64, f32)> = Vec::new();
    for seed in seeds {
        let Some(segment) =
            index.segment_of(*seed, view.known_at).and_then(|n| index.segment(n, view.known_at))
        else {
            continue;
        };
        led.push((key(RecordRef::Episode(*seed)), 1.0));
        let at = segment.episodes.iter().position(|e| e == seed).unwrap_or(0);
        for (i, e) in segment.episodes.iter().enumerate() {
            if !seen.insert(*e) {
                continue;
            }
            let k = key(RecordRef::Episode(*e));
            let score = match (query_vector, vectors.as_ref().and_then(|v| v.alone.get(k))) {
                (Some(q), Some(v)) => ostrakon_search::dot(q, &v),
                _ => 1.0 / (1 + i.abs_diff(at)) as f32,
            };
            others.push((k, score));
        }
    }
    others.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    led.extend(others);
    led.truncate(pool);
    led
}
