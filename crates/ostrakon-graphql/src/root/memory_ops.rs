//! Memory dynamics: what is recallable or fading, recalls and consolidation.

use async_graphql::{Context, ID, Object, Result};

use crate::exec::access::Mode;
use crate::exec::context::Pin;
use crate::exec::context::Start;
use crate::exec::context::commit;
use crate::exec::context::engine;
use crate::exec::context::pin_after;
use crate::exec::context::read_at;
use crate::exec::context::start;
use crate::objects::graph::EntityObject;
use crate::objects::graph::FactObject;
use crate::objects::memory::RecordItem;
use crate::objects::memory::RecordList;
use crate::objects::payloads::ConsolidationPayload;
use crate::objects::payloads::Corroborated;
use crate::objects::payloads::MAX_REPORTED;
use crate::objects::payloads::Merge;
use crate::objects::payloads::RecallPayload;
use crate::types::input::fact_id;
use crate::types::input::invalid;
use crate::types::input::parse_id;
use crate::types::input::time;
use crate::types::paging::page_size;
use crate::types::retention::RecordKind;
use crate::types::scalars::DateTime;
use ostrakon_core::RecordRef;
use ostrakon_core::Seq;
use ostrakon_core::Timestamp;
use ostrakon_engine::Change;
use ostrakon_engine::KnownAt;
use ostrakon_engine::ReadAt;
use std::sync::Arc;
/// Queries: memory dynamics: what is recallable or fading, recalls and consolidation.
#[derive(Default)]
pub(super) struct MemoryQuery;

#[Object]
impl MemoryQuery {
    /// What an agent might bring up unprompted at the clock `at` (default: now): records
    /// that are not dormant — facts in force at validAt, entities and episodes known at
    /// knownAt — by retention, highest first.
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn recallable(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        kinds: Option<Vec<RecordKind>>,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
        first: Option<i32>,
    ) -> Result<RecordList> {
        let Start { ns, store } = start(ctx, &namespace, Mode::Read)?;
        let first = page_size(ctx, first)?;
        let read = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, at.as_ref())?;
        let answer = store
            .at(&ns, read)
            .and_then(|r| r.recallable(&crate::types::retention::kinds(kinds), first))
            .map_err(engine)?;
        let pin = Pin::new(ns, answer.basis);
        Ok(RecordList {
            basis: (&answer.basis).into(),
            items: answer
                .value
                .into_iter()
                .map(|r| RecordItem { pin: Arc::clone(&pin), record: r.record, dormant_at: None })
                .collect(),
        })
    }

    /// Records that turn dormant between `from` and `to` unless recalled, and when (the
    /// first `first`).
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn forecast(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        from: DateTime,
        to: DateTime,
        kinds: Option<Vec<RecordKind>>,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        first: Option<i32>,
    ) -> Result<RecordList> {
        let first = page_size(ctx, first)?;
        let Start { ns, store } = start(ctx, &namespace, Mode::Read)?;
        let from = time(store, &ns, "from", &from)?;
        let to = time(store, &ns, "to", &to)?;
        let mut read = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, None)?;
        read.at = Some(from);
        let answer = store
            .at(&ns, read)
            .and_then(|r| r.forecast(from, to, &crate::types::retention::kinds(kinds)))
            .map_err(engine)?;
        let pin = Pin::new(ns, answer.basis);
        let items = answer
            .value
            .into_iter()
            .take(first)
            .map(|f| RecordItem { pin: Arc::clone(&pin), record: f.record, dormant_at: Some(f.dormant_at) })
            .collect();
        Ok(RecordList { basis: (&answer.basis).into(), items })
    }
}

/// Mutations: memory dynamics: what is recallable or fading, recalls and consolidation.
#[derive(Default)]
pub(super) struct MemoryMutation;

#[Object]
impl MemoryMutation {
    /// Records that facts, entities and episodes were recalled at `at` (default: now):
    /// each recall strengthens their traces. Reads never do this by themselves.
    async fn recall(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        #[graphql(default)] facts: Vec<ID>,
        #[graphql(default)] entities: Vec<ID>,
        #[graphql(default)] episodes: Vec<ID>,
        at: Option<DateTime>,
    ) -> Result<RecallPayload> {
        let Start { ns, store } = start(ctx, &namespace, Mode::ReadWrite)?;
        let at = match &at {
            Some(t) => time(store, &ns, "at", t)?,
            None => store.now(),
        };
        let mut records = Vec::new();
        for (i, id) in facts.iter().enumerate() {
            records.push(RecordRef::Fact(fact_id(format_args!("facts[{i}]"), id)?));
        }
        for (i, id) in entities.iter().enumerate() {
            records.push(RecordRef::Entity(ostrakon_core::EntityId(parse_id(
                format_args!("entities[{i}]"),
                id,
            )?)));
        }
        for (i, id) in episodes.iter().enumerate() {
            records.push(RecordRef::Episode(ostrakon_core::EpisodeId(parse_id(
                format_args!("episodes[{i}]"),
                id,
            )?)));
        }
        if records.is_empty() {
            return Err(invalid("facts", "[]", "name at least one fact, entity or episode"));
        }
        let receipt =
            commit(store, &ns, vec![Change::Recall { records: records.clone(), at }], &[String::new()])?;
        let pin = pin_after(store, &ns, &receipt, Some(at))?;
        Ok(RecallPayload {
            seq: receipt.seq.0,
            system_time: receipt.system_time.into(),
            at: at.into(),
            records: records
                .into_iter()
                .map(|record| RecordItem { pin: Arc::clone(&pin), record, dormant_at: None })
                .collect(),
        })
    }

    /// Consolidation ("sleep"): merges entities that are the same (equal names or aliases,
    /// agreeing kinds), and reports what it merged, which facts now corroborate each other,
    /// and what turned dormant since `dormantSince` (default: a day before `at`). With
    /// nothing to merge it writes nothing.
    async fn consolidate(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        at: Option<DateTime>,
        dormant_since: Option<DateTime>,
    ) -> Result<ConsolidationPayload> {
        let Start { ns, store } = start(ctx, &namespace, Mode::ReadWrite)?;
        let now = match &at {
            Some(t) => time(store, &ns, "at", t)?,
            None => store.now(),
        };
        let since = match &dormant_since {
            Some(t) => time(store, &ns, "dormantSince", t)?,
            None => Timestamp::from_micros(now.as_micros().saturating_sub(ostrakon_core::DAY_MICROS)),
        };
        let report = store.consolidate(&ns, now, since).map_err(engine)?;
        let read = ReadAt { valid_at: Some(now), known_at: KnownAt::Latest, at: Some(now) };
        let basis = store.basis(&ns, read).map_err(engine)?;
        let pin = Pin::new(ns.clone(), basis);
        let before = Pin::new(
            ns.clone(),
            ostrakon_engine::Basis {
                known_at: Seq(report.seq.map_or(basis.known_at.0, |s| s.0.saturating_sub(1))),
                ..basis
            },
        );
        Ok(ConsolidationPayload {
            seq: report.seq.map(|s| s.0),
            merged: report
                .merged
                .iter()
                .take(MAX_REPORTED)
                .filter_map(|(from, into)| {
                    let from = EntityObject::load(store, &before, *from).transpose()?;
                    let into = EntityObject::load(store, &pin, *into).transpose()?;
                    Some(from.and_then(|from| into.map(|into| Merge { from, into })))
                })
                .collect::<Result<_>>()?,
            corroborated: report
                .corroborated
                .iter()
                .take(MAX_REPORTED)
                .filter_map(|(id, n)| {
                    Some(Corroborated { fact: FactObject::load(store, &pin, *id)?, statements: *n })
                })
                .collect(),
            dormant: report
                .dormant
                .iter()
                .take(MAX_REPORTED)
                .map(|f| RecordItem {
                    pin: Arc::clone(&pin),
                    record: f.record,
                    dormant_at: Some(f.dormant_at),
                })
                .collect(),
            basis: (&basis).into(),
        })
    }
}
