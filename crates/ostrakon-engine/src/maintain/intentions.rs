//! Prospective memory: what the agent means to do later, and when it is due.
//!
//! An intention is pending until it fires (once) or for as long as it repeats, unless it
//! expires or is cancelled. It fires — an `IntentionFired` event in the log, delivered on
//! the `events` subscription — at the first episode that satisfies its trigger: one that
//! mentions a given entity or occurs at or after its time (checked on the write path, in
//! the episode's own batch), or one close in meaning to its cue (checked once the indexer
//! has embedded the episode, by [`Store::fire_due`]); a time trigger also fires when the
//! clock passes it ([`Store::fire_due`], which the server runs on its idle tick).
//! `Reader::due_intentions` asks, without recording anything, which pending intentions a
//! message (or the time) makes due.

use ostrakon_core::{EntityId, EpisodeId, IntentionId, Namespace, Timestamp, Trigger};
use ostrakon_index::IntentionView;

use crate::change::Change;
use crate::error::read::ReadError;
use crate::error::storage::StorageError;
use crate::error::write::WriteError;
use crate::read::point::{Answer, ReadAt};
use crate::store::Store;

/// Why an intention is due.
#[derive(Clone, Debug, PartialEq)]
pub enum DueBecause {
    /// Its time has come.
    Time,
    /// The message names one of its entities.
    Mentioned(EntityId),
    /// The message is this similar to its cue.
    Cue(f32),
}

/// A pending intention that is due, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Due {
    /// The intention as known at the read.
    pub intention: IntentionView,
    /// Why it is due.
    pub because: DueBecause,
}

/// What [`Store::fire_due`] recorded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Firings {
    /// The batch, if anything fired.
    pub seq: Option<ostrakon_core::Seq>,
    /// The intentions fired, with the episode that triggered each (if one did) and when.
    pub fired: Vec<(IntentionId, Option<EpisodeId>, Timestamp)>,
}

impl Store {
    /// Records the firings the write path cannot see: time triggers the clock (`now`)
    /// has passed with no episode, and cue triggers met by episodes the indexer has
    /// embedded since. Waits for the indexer first. One batch for all of them.
    pub fn fire_due(&self, ns: &Namespace, now: Timestamp) -> Result<Firings, WriteError> {
        // A write may fire the same one-off intention meanwhile (an episode past its time):
        // the batch is then refused whole, and the next look no longer sees it pending.
        let mut tries = 0;
        loop {
            match self.fire_due_once(ns, now) {
                Err(e) if matches!(e.root(), WriteError::Invalid(_)) && tries < 3 => tries += 1,
                other => return other,
            }
        }
    }

    fn fire_due_once(&self, ns: &Namespace, now: Timestamp) -> Result<Firings, WriteError> {
        let Some(shard) = self.shard(ns)? else {
            return Ok(Firings::default());
        };
        let _running = shard.segmenting.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let last = self.with_index(ns, |i| i.last_seq())?;
        if self.with_index(ns, |i| i.intentions(last).iter().all(|v| !v.pending_at(now)))? {
            return Ok(Firings::default());
        }
        shard.search.wait_for(last, true)?;
        let fired = self.with_index(ns, |index| {
            let mut fired = Vec::new();
            for view in index.intentions(last) {
                if !view.pending_at(now) {
                    continue;
                }
                match &view.intention.trigger {
                    Trigger::At(t) if *t <= now => fired.push((view.intention.id, None, *t)),
                    Trigger::Cue { vector, threshold, .. } => {
                        // Episodes recorded after it was added, after its last firing.
                        let after = view.fired.last().and_then(|f| f.1);
                        let mut candidates: Vec<_> = index
                            .all_episodes()
                            .into_iter()
                            .filter(|(seq, e)| *seq > view.added && after.is_none_or(|a| e.id > a))
                            .collect();
                        candidates.sort_by_key(|(_, e)| e.id);
                        for (_, e) in candidates {
                            if view.intention.expires_at.is_some_and(|x| e.occurred_at >= x) {
                                continue;
                            }
                            let close = shard
                                .search
                                .episode_vector(e.id)
                                .and_then(|v| ostrakon_topics::cosine(&v, vector))
                                .is_some_and(|s| s >= *threshold);
                            if close {
                                fired.push((view.intention.id, Some(e.id), e.occurred_at));
                                if !view.intention.repeat {
                                    break;
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
            fired
        })?;
        if fired.is_empty() {
            return Ok(Firings::default());
        }
        let changes = fired
            .iter()
            .map(|(id, episode, at)| Change::FireIntention { id: *id, episode: *episode, at: *at })
            .collect();
        let receipt = self.append(ns, changes)?;
        Ok(Firings { seq: Some(receipt.seq), fired })
    }

    /// `Reader::due_intentions`, positional.
    pub(crate) fn due_intentions(
        &self,
        ns: &Namespace,
        message: Option<&str>,
        at: ReadAt,
    ) -> Result<Answer<Vec<Due>>, ReadError> {
        let mode = self.with_index(ns, |i| i.embedding_mode())?;
        let query_vector = match (message, self.retrieval.embedder(mode)) {
            (Some(m), Some(Ok(embedder))) => embedder.embed_query(m).ok(),
            _ => None,
        };
        let shard = self.shard(ns)?;
        self.read_search(ns, at, |index, basis| {
            let named: Vec<EntityId> = match (message, &shard) {
                (Some(m), Some(shard)) => shard
                    .search
                    .name_matches(index, m)
                    .into_iter()
                    .map(|e| index.canonical_entity(e, basis.known_at))
                    .collect(),
                _ => Vec::new(),
            };
            let mut due: Vec<Due> = index
                .intentions(basis.known_at)
                .into_iter()
                .filter(|v| v.pending_at(basis.at))
                .filter_map(|v| {
                    let because = match &v.intention.trigger {
                        Trigger::At(t) => (*t <= basis.at).then_some(DueBecause::Time),
                        Trigger::Mentions(entities) => entities
                            .iter()
                            .map(|e| index.canonical_entity(*e, basis.known_at))
                            .find(|e| named.contains(e))
                            .map(DueBecause::Mentioned),
                        Trigger::Cue { vector, threshold, .. } => query_vector
                            .as_ref()
                            .and_then(|q| ostrakon_topics::cosine(q, vector))
                            .filter(|s| s >= threshold)
                            .map(DueBecause::Cue),
                    }?;
                    Some(Due { intention: v, because })
                })
                .collect();
            due.sort_by(|a, b| {
                b.intention
                    .intention
                    .priority
                    .cmp(&a.intention.intention.priority)
                    .then(a.intention.intention.id.cmp(&b.intention.intention.id))
            });
            due
        })
    }
}

impl Store {
    /// The vector of a cue for a new intention, from the namespace's built-in embedder.
    /// A namespace taking client vectors, or none, cannot make one: the client sends it.
    pub fn cue_vector(&self, ns: &Namespace, text: &str) -> Result<Vec<f32>, WriteError> {
        let no = |why: &str| -> WriteError {
            ostrakon_core::CoreError::invalid_value("trigger.cueVector", "none", why).into()
        };
        match self.with_index(ns, |i| i.embedding_mode())? {
            mode @ (ostrakon_core::EmbeddingMode::Builtin | ostrakon_core::EmbeddingMode::Model(_)) => {
                match self.retrieval.embedder(mode) {
                    Some(Ok(embedder)) => {
                        embedder.embed_now(text).map_err(|e| StorageError::Index(e.to_string()).into())
                    }
                    Some(Err(e)) => Err(StorageError::Index(e).into()),
                    None => Err(no("this store runs without an embedder: send the cue's vector")),
                }
            }
            ostrakon_core::EmbeddingMode::Client { .. } => {
                Err(no("this namespace takes client vectors: send one"))
            }
            ostrakon_core::EmbeddingMode::Off => {
                Err(no("this namespace has no embeddings: use another trigger"))
            }
        }
    }
}
