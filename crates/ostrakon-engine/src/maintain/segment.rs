//! Cutting threads into segments: per thread, a running segment whose centroid embedding
//! is compared with each new episode ([`ostrakon_topics::Segmenter`]). Closing a segment is
//! recorded in the log (`SegmentClosed`, with its centroid), so a replay gives the same
//! segments even if the embedder changes; only closed segments feed the topic network.
//!
//! Segmentation runs behind the write path, once the indexer has embedded the thread's
//! episodes: on demand ([`Store::segment`]), before the topic network is read, and at
//! consolidation. Its state is not kept between runs: the open part of each thread (its
//! episodes in no closed segment, in the order they occurred) is fed again from the start.

use ostrakon_core::{EpisodeId, Namespace, SegmentConfig, SegmentEnd};
use ostrakon_topics::{CloseReason, Segmenter, SegmenterConfig};

use crate::change::Change;
use crate::error::write::WriteError;
use crate::read::topics::centroid;
use crate::store::Store;

/// What one segmentation run closed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SegmentReport {
    /// The batch that recorded the closes (none if nothing closed).
    pub seq: Option<ostrakon_core::Seq>,
    /// Segments closed: thread, episodes, why.
    pub closed: Vec<(String, Vec<EpisodeId>, SegmentEnd)>,
}

fn segmenter(c: &SegmentConfig) -> Segmenter {
    Segmenter::new(SegmenterConfig {
        threshold: c.threshold,
        hysteresis: c.hysteresis,
        max_gap_micros: c.max_gap_micros,
        min_len: c.min_len as usize,
    })
}

fn end_of(reason: CloseReason) -> SegmentEnd {
    match reason {
        CloseReason::Shift { distance } => SegmentEnd::Shift { distance },
        CloseReason::Gap { micros } => SegmentEnd::Gap { micros },
        CloseReason::Forced => SegmentEnd::Forced,
    }
}

impl Store {
    /// Brings a namespace's segments up to date: waits until the indexer has embedded
    /// what the log holds, feeds each thread's open episodes to a segmenter, and records
    /// the segments that closed in one batch. With `force`, what is still open closes
    /// too (consolidation); without it, a thread idle for longer than the namespace's gap
    /// (by the store's clock) closes as well.
    pub fn segment(&self, ns: &Namespace, force: bool) -> Result<SegmentReport, WriteError> {
        let Some(shard) = self.shard(ns)? else {
            return Ok(SegmentReport::default());
        };
        // One run at a time per namespace: two would close the same episodes.
        let _running = shard.segmenting.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let last = self.with_index(ns, |i| i.last_seq())?;
        shard.search.wait_for(last, true)?;
        let now = self.now();
        let mut changes = Vec::new();
        let mut closed = Vec::new();
        self.with_index(ns, |index| {
            let config = index.segment_config(last);
            for thread in index.thread_names() {
                let open = index.open_episodes(thread);
                let Some(newest) = open.last().map(|e| e.occurred_at) else { continue };
                let vectors: Vec<Option<Vec<f32>>> =
                    open.iter().map(|e| shard.search.episode_vector(e.id)).collect();
                let mut s = segmenter(&config);
                let mut ends = Vec::new();
                for (e, v) in open.iter().zip(&vectors) {
                    if let Some(c) = s.push(e.id.0, e.occurred_at.as_micros(), v.as_deref()) {
                        ends.push((c.episodes, end_of(c.reason)));
                    }
                }
                let idle = now.as_micros().saturating_sub(newest.as_micros()) > config.max_gap_micros;
                if (force || idle)
                    && let Some(c) = s.close_now()
                {
                    ends.push((c.episodes, if force { SegmentEnd::Forced } else { SegmentEnd::Idle }));
                }
                for (keys, end) in ends {
                    let episodes: Vec<EpisodeId> = keys.into_iter().map(EpisodeId).collect();
                    let centroid = centroid(
                        open.iter()
                            .zip(&vectors)
                            .filter(|(e, _)| episodes.contains(&e.id))
                            .filter_map(|(_, v)| v.as_ref()),
                    );
                    closed.push((thread.to_owned(), episodes.clone(), end));
                    changes.push(Change::CloseSegment { thread: thread.to_owned(), episodes, end, centroid });
                }
            }
        })?;
        if changes.is_empty() {
            return Ok(SegmentReport::default());
        }
        let receipt = self.append(ns, changes)?;
        Ok(SegmentReport { seq: Some(receipt.seq), closed })
    }
}
