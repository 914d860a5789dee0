//! What the store's extractor has read: each episode's extractions (who read it, in
//! which batch), the extraction a batch is, and the episodes a source has yet to read.

use ostrakon_core::{Episode, EpisodeId, Seq};

use crate::state::NamespaceIndex;

impl NamespaceIndex {
    /// The sources that have read `episode` as known at S, in log order.
    pub fn extracted_by(&self, episode: EpisodeId, known_at: Seq) -> Vec<&str> {
        self.extracted
            .get(&episode)
            .into_iter()
            .flatten()
            .filter(|(seq, _)| *seq <= known_at)
            .map(|(_, source)| &**source)
            .collect()
    }

    /// The extraction batch `seq` is, if it is one: the episode read and who read it
    /// (the facts of that batch are what it found).
    pub fn extraction_of_batch(&self, seq: Seq) -> Option<(EpisodeId, &str)> {
        let episode = *self.extraction_batches.get(&seq)?;
        let (_, source) = self.extracted.get(&episode)?.iter().find(|(at, _)| *at == seq)?;
        Some((episode, source))
    }

    /// Up to `limit` episodes with ids above `after`, in id order, that `source` has not
    /// read, at the latest batch; and the last id looked at (the next call's `after`).
    pub fn unextracted(&self, source: &str, after: EpisodeId, limit: usize) -> (Vec<Episode>, EpisodeId) {
        let mut found = Vec::new();
        let mut last = after;
        for id in after.0.saturating_add(1)..=self.max_episode {
            if found.len() >= limit {
                break;
            }
            last = EpisodeId(id);
            let Some((_, episode)) = self.episodes.get(&last) else { continue };
            if !self.read_by(last, source) {
                found.push(episode.clone());
            }
        }
        (found, last)
    }

    /// How many episodes with ids above `after` `source` has not read, at the latest batch.
    pub fn unextracted_count(&self, source: &str, after: EpisodeId) -> u64 {
        (after.0.saturating_add(1)..=self.max_episode)
            .map(EpisodeId)
            .filter(|id| self.episodes.contains_key(id) && !self.read_by(*id, source))
            .count() as u64
    }

    fn read_by(&self, episode: EpisodeId, source: &str) -> bool {
        self.extracted.get(&episode).is_some_and(|list| list.iter().any(|(_, s)| **s == *source))
    }
}
