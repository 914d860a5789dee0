//! The topic network over GraphQL: topics, an entity's associations, segment closing and
//! its configuration.

use std::sync::Arc;

use async_graphql::{ID, InputObject, Object, SimpleObject};
use ostrakon_core::{EntityId, SegmentEnd};
use ostrakon_engine::{Store, views::Association, views::Topic, views::TopicNetwork};

use crate::exec::context::Pin;
use crate::objects::records::{EntityObject, EpisodeObject};

/// A topic: a community of the topic network, which only closed segments feed.
pub(crate) struct TopicObject {
    pub(crate) pin: Arc<Pin>,
    pub(crate) topic: Topic,
    pub(crate) store: Arc<Store>,
}

/// A member of a topic with its centrality (summed weight of its associations).
#[derive(SimpleObject)]
pub(crate) struct TopicMember {
    /// The entity.
    pub entity: EntityObject,
    /// Its weighted degree in the topic network.
    pub centrality: f64,
}

#[Object(name = "Topic")]
impl TopicObject {
    /// Its id: the smallest entity id among its members (stable while they stay together).
    async fn id(&self) -> ID {
        ID(self.topic.id.to_string())
    }

    /// Its most central members, then its most characteristic words.
    async fn label(&self) -> &str {
        &self.topic.label
    }

    /// Characteristic words of its segments' episodes (tf·idf against all segments).
    async fn terms(&self) -> &[String] {
        &self.topic.terms
    }

    /// Its members, most central first (the first `first`).
    async fn members(
        &self,
        ctx: &async_graphql::Context<'_>,
        #[graphql(default = 100)] first: i32,
    ) -> async_graphql::Result<Vec<TopicMember>> {
        let first = crate::types::paging::page_size(ctx, Some(first))?;
        self.topic
            .members
            .iter()
            .filter_map(|(e, c)| {
                let entity = EntityObject::load(&self.store, &self.pin, *e).transpose()?;
                Some(entity.map(|entity| TopicMember { entity, centrality: *c }))
            })
            .take(first)
            .collect::<async_graphql::Result<_>>()
    }

    /// Episodes that mention most of its members (up to three).
    async fn episodes(&self) -> async_graphql::Result<Vec<EpisodeObject>> {
        self.topic
            .episodes
            .iter()
            .filter_map(|e| EpisodeObject::load(&self.store, &self.pin, *e).transpose())
            .collect()
    }

    /// How many closed segments mention a member.
    async fn segment_count(&self) -> usize {
        self.topic.segments.len()
    }

    /// The mean of its segments' centroids (unit length), if they had vectors.
    async fn centroid(&self) -> Option<Vec<f32>> {
        self.topic.centroid.clone()
    }
}

/// An association of the topic network, seen from one of its entities.
#[derive(SimpleObject)]
pub(crate) struct Related {
    /// The other entity.
    pub entity: EntityObject,
    /// The edge's weight: closed segments mentioning both, plus their centroids' similarity
    /// above 0.8 rescaled to [0, 1].
    pub weight: f64,
    /// Closed segments that mentioned both.
    pub segments: u32,
    /// Cosine similarity of their segments' centroids, if both have one.
    pub similarity: Option<f32>,
    /// The edge's retention at the read's clock (born with the first segment, reinforced by
    /// each later one, decaying by the namespace's entity profile).
    pub retention: f64,
}

pub(crate) fn topics(store: &Arc<Store>, pin: &Arc<Pin>, net: TopicNetwork) -> Vec<TopicObject> {
    net.topics
        .into_iter()
        .map(|topic| TopicObject { pin: Arc::clone(pin), topic, store: Arc::clone(store) })
        .collect()
}

pub(crate) fn related(
    store: &Store,
    pin: &Arc<Pin>,
    net: &TopicNetwork,
    of: EntityId,
    first: usize,
) -> async_graphql::Result<Vec<Related>> {
    let mut found: Vec<&Association> =
        net.edges.iter().filter(|a| a.pair.0 == of || a.pair.1 == of).collect();
    found.sort_by(|a, b| {
        (b.weight * b.retention.max(f64::MIN_POSITIVE))
            .total_cmp(&(a.weight * a.retention.max(f64::MIN_POSITIVE)))
            .then(a.pair.cmp(&b.pair))
    });
    found
        .into_iter()
        .take(first)
        .filter_map(|a| {
            let other = if a.pair.0 == of { a.pair.1 } else { a.pair.0 };
            let entity = match EntityObject::load(store, pin, other) {
                Ok(Some(entity)) => entity,
                Ok(None) => return None,
                Err(e) => return Some(Err(e)),
            };
            Some(Ok(Related {
                entity,
                weight: a.weight,
                segments: a.segments,
                similarity: a.similarity,
                retention: a.retention,
            }))
        })
        .collect()
}

/// How threads are cut into segments; unset fields keep their current value.
#[derive(InputObject)]
pub(crate) struct SegmentationInput {
    /// Cosine distance (1 − cos) from the running segment's centroid above which an
    /// episode is off-topic, in (0, 2].
    pub threshold: Option<f32>,
    /// How much less far the next episode may be and still confirm the shift.
    pub hysteresis: Option<f32>,
    /// A pause longer than this (seconds) closes a segment; so does a thread idle this long.
    pub max_gap_seconds: Option<u64>,
    /// A shift never closes a segment shorter than this.
    pub min_length: Option<u32>,
}

impl SegmentationInput {
    pub(crate) fn patch(&self) -> ostrakon_engine::change::SegmentationPatch {
        ostrakon_engine::change::SegmentationPatch {
            threshold: self.threshold,
            hysteresis: self.hysteresis,
            max_gap_micros: self
                .max_gap_seconds
                .map(|g| i64::try_from(g.saturating_mul(1_000_000)).unwrap_or(i64::MAX)),
            min_len: self.min_length,
        }
    }
}

/// A segment that closed.
#[derive(SimpleObject)]
pub(crate) struct ClosedSegment {
    /// Its thread.
    pub thread: String,
    /// Its episodes in the order they occurred.
    pub episodes: Vec<EpisodeObject>,
    /// Why it ended: `SHIFT`, `GAP`, `IDLE` or `FORCED`.
    pub end: SegmentEndKind,
    /// For a shift, the distance of the first episode after it from its centroid.
    pub distance: Option<f32>,
}

/// Why a segment ended.
#[derive(async_graphql::Enum, Copy, Clone, Eq, PartialEq, Debug)]
pub enum SegmentEndKind {
    /// The conversation moved to another topic.
    Shift,
    /// A long pause before the next episode.
    Gap,
    /// The thread stayed idle longer than the namespace's gap.
    Idle,
    /// Closed on request.
    Forced,
}

pub(crate) fn end_kind(e: SegmentEnd) -> (SegmentEndKind, Option<f32>) {
    match e {
        SegmentEnd::Shift { distance } => (SegmentEndKind::Shift, Some(distance)),
        SegmentEnd::Gap { .. } => (SegmentEndKind::Gap, None),
        SegmentEnd::Idle => (SegmentEndKind::Idle, None),
        SegmentEnd::Forced => (SegmentEndKind::Forced, None),
    }
}

/// What `closeSegments` did.
#[derive(SimpleObject)]
pub(crate) struct SegmentsPayload {
    /// The batch that recorded the closes; null if nothing closed.
    pub seq: Option<u64>,
    /// The segments closed.
    pub closed: Vec<ClosedSegment>,
}
