//! The event progression graph: a thread's episodes in order (`NEXT`/`PREVIOUS`), the
//! entities each episode mentions (`MENTIONS`), the facts each one sourced
//! (`SOURCED_FROM`), and an entity's mentions in time order. Every read is as known at S.

use std::collections::BTreeSet;
use std::ops::Bound;

use ostrakon_core::{EntityId, Episode, EpisodeId, FactId, IntentionId, MentionSource, SegmentConfig, Seq};

use crate::state::{NamespaceIndex, Segment};
use ostrakon_core::{EpisodeCursor, IntentionView, Page};

impl NamespaceIndex {
    /// The episode after (`forward`) or before `id` in its thread, ordered by
    /// (occurred_at, id), among those known at S; `None` without a thread.
    pub fn thread_neighbour(&self, id: EpisodeId, known_at: Seq, forward: bool) -> Option<&Episode> {
        let episode = self.episode_at(id, known_at)?;
        let order = self.threads.get(episode.thread.as_ref()?)?;
        let key = (episode.occurred_at, id);
        let known = |(_, e): &&(ostrakon_core::Timestamp, EpisodeId)| self.episode_at(*e, known_at);
        if forward {
            order.range((Bound::Excluded(key), Bound::Unbounded)).find_map(|k| known(&k))
        } else {
            order.range(..key).rev().find_map(|k| known(&k))
        }
    }

    /// The entities an episode mentions as known at S, each as it reads then (following
    /// merges), once, in the order they were recorded, with who said so first.
    pub fn mentions_of(&self, episode: EpisodeId, known_at: Seq) -> Vec<(EntityId, MentionSource)> {
        let mut seen = BTreeSet::new();
        self.mentions
            .get(&episode)
            .into_iter()
            .flatten()
            .filter(|(seq, _, _)| *seq <= known_at)
            .filter_map(|(_, e, source)| {
                let c = self.canonical_entity(*e, known_at);
                seen.insert(c).then_some((c, *source))
            })
            .collect()
    }

    /// The episodes that mention `entity` (or an entity merged into it) as known at S, by
    /// (occurred_at, id), at most `limit` after `after`.
    pub fn mentioning(
        &self,
        entity: EntityId,
        known_at: Seq,
        after: Option<EpisodeCursor>,
        limit: usize,
    ) -> Page<(Seq, Episode)> {
        let c = self.canonical_entity(entity, known_at);
        let keys: BTreeSet<EpisodeCursor> = self
            .merge_group(c, known_at)
            .into_iter()
            .filter_map(|member| self.mentioned_in.get(&member))
            .flatten()
            .filter(|(seq, _)| *seq <= known_at)
            .filter_map(|(_, id)| self.episode_at(*id, known_at).map(|e| (e.occurred_at, *id)))
            .collect();
        let lower = after.map_or(Bound::Unbounded, Bound::Excluded);
        let mut matching =
            keys.range((lower, Bound::Unbounded)).filter_map(|(_, id)| self.episodes.get(id)).cloned();
        let items = matching.by_ref().take(limit).collect();
        Page { items, more: matching.next().is_some() }
    }

    /// The facts stated with `episode` as provenance, as known at S (a re-assertion is
    /// listed as the fact it restated), by fact id; retracted ones included.
    pub fn sourced_facts(&self, episode: EpisodeId, known_at: Seq) -> Vec<FactId> {
        let mut facts: Vec<FactId> = self
            .sourced
            .get(&episode)
            .into_iter()
            .flatten()
            .filter(|(seq, _)| *seq <= known_at)
            .map(|(_, f)| self.canonical(*f))
            .collect();
        facts.sort();
        facts.dedup();
        facts
    }
}

impl NamespaceIndex {
    /// How threads are cut into segments at S.
    pub fn segment_config(&self, known_at: Seq) -> SegmentConfig {
        self.segmentation.iter().rev().find(|(seq, _)| *seq <= known_at).map(|(_, c)| *c).unwrap_or_default()
    }

    /// Segments closed at S, in the order they were closed.
    pub fn segments(&self, known_at: Seq) -> impl Iterator<Item = (usize, &Segment)> {
        self.segments.iter().enumerate().take_while(move |(_, s)| s.seq <= known_at)
    }

    /// Segment `n`, if closed at S.
    pub fn segment(&self, n: usize, known_at: Seq) -> Option<&Segment> {
        self.segments.get(n).filter(|s| s.seq <= known_at)
    }

    /// The closed segment an episode belongs to at S, if any.
    pub fn segment_of(&self, episode: EpisodeId, known_at: Seq) -> Option<usize> {
        self.segment_of.get(&episode).copied().filter(|n| self.segment(*n, known_at).is_some())
    }

    /// A thread's episodes not in any closed segment (the open part), by occurrence.
    pub fn open_episodes(&self, thread: &str) -> Vec<&Episode> {
        self.threads
            .get(thread)
            .into_iter()
            .flatten()
            .filter(|(_, id)| !self.segment_of.contains_key(id))
            .filter_map(|(_, id)| self.episodes.get(id).map(|(_, e)| e))
            .collect()
    }

    /// Names of the threads, sorted.
    pub fn thread_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.threads.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }
}

impl NamespaceIndex {
    /// Every intention added at S, by id.
    pub fn intentions(&self, known_at: Seq) -> Vec<IntentionView> {
        self.intentions
            .values()
            .filter(|r| r.added <= known_at)
            .map(|r| self.intention_view(r, known_at))
            .collect()
    }

    /// One intention as known at S.
    pub fn intention(&self, id: IntentionId, known_at: Seq) -> Option<IntentionView> {
        self.intentions.get(&id).filter(|r| r.added <= known_at).map(|r| self.intention_view(r, known_at))
    }

    fn intention_view(&self, r: &crate::state::IntentionRecord, known_at: Seq) -> IntentionView {
        IntentionView {
            intention: r.intention.clone(),
            added: r.added,
            cancelled: r.cancelled.clone().filter(|(s, _)| *s <= known_at),
            fired: r.fired.iter().filter(|(s, _, _)| *s <= known_at).cloned().collect(),
        }
    }

    /// Highest intention id seen.
    pub fn max_intention(&self) -> u64 {
        self.max_intention
    }
}
