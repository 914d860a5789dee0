//! Prospective memory: intentions and their firings.

use crate::objects::intentions;
use async_graphql::{Context, ID, Object, Result};

use crate::error::code;
use crate::error::coded;
use crate::exec::access::Mode;
use crate::exec::context::Pin;
use crate::exec::context::Start;
use crate::exec::context::commit;
use crate::exec::context::engine;
use crate::exec::context::read_at;
use crate::exec::context::start;
use crate::objects::intentions::DueIntention;
use crate::objects::intentions::FiringPayload;
use crate::objects::intentions::IntentionObject;
use crate::objects::intentions::TriggerInput;
use crate::objects::payloads::MAX_REPORTED;
use crate::objects::payloads::intention_after;
use crate::types::input::parse_id;
use crate::types::input::time;
use crate::types::paging::page_size;
use crate::types::scalars::DateTime;
use ostrakon_engine::Change;
use ostrakon_engine::KnownAt;
use ostrakon_engine::ReadAt;
use ostrakon_engine::change::NewIntention;
use std::sync::Arc;
/// Queries: prospective memory: intentions and their firings.
#[derive(Default)]
pub(super) struct IntentionQuery;

#[Object]
impl IntentionQuery {
    /// Intentions (prospective memory) as known at knownAt: pending ones, or all with
    /// `includeInactive` (fired once, cancelled, expired at `at`); by id.
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn intentions(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        #[graphql(default = false)] include_inactive: bool,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
        #[graphql(default = 100)] first: i32,
    ) -> Result<Vec<IntentionObject>> {
        let first = page_size(ctx, Some(first))?;
        let Start { ns, store } = start(ctx, &namespace, Mode::Read)?;
        let at = read_at(store, &ns, None, known_at.as_ref(), known_at_seq, at.as_ref())?;
        let answer = store.at(&ns, at).and_then(|r| r.intentions(include_inactive)).map_err(engine)?;
        let pin = Pin::new(ns, answer.basis);
        Ok(answer
            .value
            .into_iter()
            .take(first)
            .map(|view| IntentionObject { pin: Arc::clone(&pin), view })
            .collect())
    }

    /// The pending intentions due at `at` (default: now) for a message: those whose time
    /// has come, whose entities the message names, or whose cue it is close to; by
    /// priority. Reads only: firings are recorded by writes and `fireDueIntentions`.
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn due_intentions(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        message: Option<String>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
        #[graphql(default = 100)] first: i32,
    ) -> Result<Vec<DueIntention>> {
        let first = page_size(ctx, Some(first))?;
        let Start { ns, store } = start(ctx, &namespace, Mode::Read)?;
        let at = read_at(store, &ns, None, known_at.as_ref(), known_at_seq, at.as_ref())?;
        let mut answer =
            store.at(&ns, at).and_then(|r| r.due_intentions(message.as_deref())).map_err(engine)?;
        answer.value.truncate(first);
        let pin = Pin::new(ns, answer.basis);
        intentions::due(store, &pin, answer.value)
    }
}

/// Mutations: prospective memory: intentions and their firings.
#[derive(Default)]
pub(super) struct IntentionMutation;

#[Object]
impl IntentionMutation {
    /// Adds an intention: a payload for the agent, due when its trigger holds (a time, a
    /// mention of given entities, or an episode close to a cue), until it expires; it fires
    /// once unless `repeat`.
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn add_intention(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        payload: String,
        trigger: TriggerInput,
        expires_at: Option<DateTime>,
        #[graphql(default = 0)] priority: i32,
        #[graphql(default = false)] repeat: bool,
    ) -> Result<IntentionObject> {
        let Start { ns, store } = start(ctx, &namespace, Mode::ReadWrite)?;
        let trigger = trigger.resolve(store, &ns, |t| time(store, &ns, "trigger.at", t))?;
        let expires_at = expires_at.as_ref().map(|t| time(store, &ns, "expiresAt", t)).transpose()?;
        let change = Change::AddIntention(NewIntention { payload, trigger, expires_at, priority, repeat });
        let receipt = commit(store, &ns, vec![change], &[String::new()])?;
        let id = receipt.intention(0).ok_or_else(|| coded(code::INTERNAL, "no intention id"))?;
        intention_after(store, ns, &receipt, id)
    }

    /// Cancels a pending intention: it never fires again.
    async fn cancel_intention(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        id: ID,
        reason: Option<String>,
    ) -> Result<IntentionObject> {
        let Start { ns, store } = start(ctx, &namespace, Mode::ReadWrite)?;
        let id = ostrakon_core::IntentionId(parse_id("id", &id)?);
        let receipt = commit(store, &ns, vec![Change::CancelIntention { id, reason }], &[String::new()])?;
        intention_after(store, ns, &receipt, id)
    }

    /// Records the firings no write made: time triggers the clock (or `at`) has passed,
    /// and cue triggers met by episodes embedded since. The server also runs this when idle.
    async fn fire_due_intentions(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        at: Option<DateTime>,
    ) -> Result<FiringPayload> {
        let Start { ns, store } = start(ctx, &namespace, Mode::ReadWrite)?;
        let now = match &at {
            Some(t) => time(store, &ns, "at", t)?,
            None => store.now(),
        };
        let firings = store.fire_due(&ns, now).map_err(engine)?;
        let Some(seq) = firings.seq else {
            return Ok(FiringPayload { seq: None, fired: Vec::new() });
        };
        let fired: Vec<_> = firings.fired.iter().take(MAX_REPORTED).map(|(id, _, _)| *id).collect();
        let answer = store
            .at(&ns, ReadAt { known_at: KnownAt::Seq(seq), at: Some(now), ..ReadAt::default() })
            .and_then(|r| r.intentions_by_id(&fired))
            .map_err(engine)?;
        let pin = Pin::new(ns, answer.basis);
        Ok(FiringPayload {
            seq: Some(seq.0),
            fired: answer
                .value
                .into_iter()
                .map(|view| IntentionObject { pin: Arc::clone(&pin), view })
                .collect(),
        })
    }
}
