//! The turns around the best episodes: evidence in a conversation spans turns ("Yes! It
//! was amazing" answers the turn before it), so the turn before and the turn after each
//! of the best episodes so far make one more list (`Neighbour`).
//!
//! Only a single turn has neighbours there: an episode that holds a whole exchange
//! (`User: …` then `Assistant: …`) holds its reply already, and the exchange beside it
//! is another conversation about another thing. Its place in the list would be a vote
//! it owes to its seed, not to the query, and a run of seeds from one day would lift
//! each other above an answer that stands alone.

use ostrakon_core::{EpisodeId, RecordRef};
use ostrakon_index::{NamespaceIndex, View};

use crate::retrieve::docs::is_exchange;
use crate::retrieve::keys::key;

/// The `Neighbour` list for `seeds` (best first): each single-turn seed's thread
/// neighbours, the one before then the one after, in the seeds' order.
pub(crate) fn neighbour_list(index: &NamespaceIndex, view: View, seeds: &[EpisodeId]) -> Vec<(u64, f32)> {
    let mut near = Vec::new();
    for seed in seeds {
        if index.episode(*seed).is_none_or(|e| is_exchange(&e.text)) {
            continue;
        }
        for forward in [false, true] {
            if let Some(e) = index.thread_neighbour(*seed, view.known_at, forward) {
                near.push((key(RecordRef::Episode(e.id)), 1.0 / (near.len() + 1) as f32));
            }
        }
    }
    near
}
