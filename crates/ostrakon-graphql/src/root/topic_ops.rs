//! The topic network and segmentation.

use crate::objects::topics;
use async_graphql::{Context, ID, Object, Result};

use crate::exec::access::Mode;
use crate::exec::context::Pin;
use crate::exec::context::engine;
use crate::exec::context::namespace;
use crate::exec::context::read_at;
use crate::exec::context::store;
use crate::objects::graph::EpisodeObject;
use crate::objects::payloads::MAX_REPORTED;
use crate::objects::payloads::MAX_REPORTED_EPISODES;
use crate::objects::topics::ClosedSegment;
use crate::objects::topics::SegmentsPayload;
use crate::objects::topics::TopicObject;
use crate::types::input::parse_id;
use crate::types::paging::page_size;
use crate::types::scalars::DateTime;
use ostrakon_engine::KnownAt;
use ostrakon_engine::ReadAt;
use std::sync::Arc;
/// Queries: the topic network and segmentation.
#[derive(Default)]
pub(super) struct TopicQuery;

#[Object]
impl TopicQuery {
    /// The topics of the topic network (communities of entities associated in closed
    /// segments), largest first. Reading the latest state first closes the segments whose
    /// conversation moved on.
    async fn topics(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
        #[graphql(default = 20)] first: i32,
    ) -> Result<Vec<TopicObject>> {
        let ns = self::namespace(ctx, &namespace, Mode::Read)?;
        let store = Arc::clone(store(ctx)?);
        let first = page_size(ctx, Some(first))?;
        let at = read_at(&store, &ns, None, known_at.as_ref(), known_at_seq, at.as_ref())?;
        let answer = store.at(&ns, at).and_then(|r| r.topic_network()).map_err(engine)?;
        let pin = Pin::new(ns, answer.basis);
        let mut all = topics::topics(&store, &pin, answer.value);
        all.truncate(first);
        Ok(all)
    }

    /// One topic by id (the smallest entity id among its members).
    async fn topic(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        id: ID,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
    ) -> Result<Option<TopicObject>> {
        let ns = self::namespace(ctx, &namespace, Mode::Read)?;
        let store = Arc::clone(store(ctx)?);
        let id = parse_id("id", &id)?;
        let at = read_at(&store, &ns, None, known_at.as_ref(), known_at_seq, at.as_ref())?;
        let answer = store.at(&ns, at).and_then(|r| r.topic_network()).map_err(engine)?;
        let pin = Pin::new(ns, answer.basis);
        Ok(topics::topics(&store, &pin, answer.value).into_iter().find(|t| t.topic.id == id))
    }
}

/// Mutations: the topic network and segmentation.
#[derive(Default)]
pub(super) struct TopicMutation;

#[Object]
impl TopicMutation {
    /// Closes the segments whose conversation moved on (a semantic shift or a pause, once
    /// the indexer has embedded the thread) and records them; with `force`, every open
    /// segment closes too. Only closed segments feed the topic network.
    async fn close_segments(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        #[graphql(default = false)] force: bool,
    ) -> Result<SegmentsPayload> {
        let ns = self::namespace(ctx, &namespace, Mode::ReadWrite)?;
        let store = Arc::clone(store(ctx)?);
        let report = store.segment(&ns, force).map_err(engine)?;
        let Some(seq) = report.seq else {
            return Ok(SegmentsPayload { seq: None, closed: Vec::new() });
        };
        let basis =
            store.basis(&ns, ReadAt { known_at: KnownAt::Seq(seq), ..ReadAt::default() }).map_err(engine)?;
        let pin = Pin::new(ns, basis);
        let closed = report
            .closed
            .into_iter()
            .take(MAX_REPORTED)
            .map(|(thread, episodes, end)| {
                let (end, distance) = topics::end_kind(end);
                Ok(ClosedSegment {
                    thread,
                    episodes: episodes
                        .into_iter()
                        .take(MAX_REPORTED_EPISODES)
                        .filter_map(|e| EpisodeObject::load(&store, &pin, e).transpose())
                        .collect::<Result<_>>()?,
                    end,
                    distance,
                })
            })
            .collect::<Result<_>>()?;
        Ok(SegmentsPayload { seq: Some(seq.0), closed })
    }
}
