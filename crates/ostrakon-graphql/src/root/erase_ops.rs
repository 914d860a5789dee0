//! Forgetting for real: erasing an entity, episodes or facts (content removed from the
//! log and every derived copy, a tombstone and an audit record left), dropping a
//! namespace, and the audit list of erasures.

use async_graphql::{Context, ID, InputObject, Object, Result, SimpleObject};
use ostrakon_core::ErasedRef;
use ostrakon_engine::{EraseRequest, EraseTarget, Erased, views::ErasureRecord};

use crate::error::{code, coded};
use crate::exec::access::{Access, Mode};
use crate::exec::context::{Start, engine, start};
use crate::types::input::parse_id;
use crate::types::scalars::DateTime;

/// Longest reason an erasure keeps.
const MAX_REASON_CHARS: usize = 1_000;
/// Most ids one erasure names.
const MAX_ERASE_IDS: usize = 10_000;

/// How long a namespace keeps episodes.
#[derive(InputObject)]
pub(super) struct RetentionInput {
    /// Erase episodes recorded longer ago than this ISO 8601 duration in days, weeks,
    /// hours, minutes or seconds (`P90D`, `P12W`, `PT36H`; not months or years, whose
    /// length varies), keeping the facts stated from them; upkeep erases them within the
    /// hour they fall due. Null: keep them forever (the default).
    pub episodes_after: Option<String>,
}

impl RetentionInput {
    pub(crate) fn policy(&self) -> Result<ostrakon_core::RetentionPolicy> {
        let field = "retention.episodesAfter";
        let episodes_after_micros = match &self.episodes_after {
            None => None,
            Some(text) => {
                let step = ostrakon_core::Step::parse(field, text).map_err(engine)?;
                let micros = step.fixed_micros().ok_or_else(|| {
                    crate::types::input::invalid(
                        field,
                        text,
                        "give days, weeks or a time (P90D), not months or years",
                    )
                })?;
                Some(micros)
            }
        };
        Ok(ostrakon_core::RetentionPolicy { episodes_after_micros })
    }
}

/// A record an erasure removed: what it was and, when the server has an erasure key, the
/// keyed digest of its content (the content itself is gone).
#[derive(SimpleObject, Clone, Debug)]
pub(super) struct ErasedRecord {
    /// `ENTITY`, `FACT`, `EPISODE` or `INTENTION`.
    pub kind: String,
    /// Its id.
    pub id: ID,
    /// HMAC-SHA-256 (hex) of its content as it stood, with the server's erasure key
    /// (`OSTRAKON_ERASURE_KEY_FILE`); null without one: no digest is kept.
    pub content_hash: Option<String>,
}

/// What an erasure did.
#[derive(SimpleObject, Clone, Debug)]
pub(super) struct ErasePayload {
    /// The batch that records the erasure.
    pub seq: u64,
    /// When it committed.
    pub system_time: DateTime,
    /// Every record erased (an entity takes its facts, the episodes that mention it and
    /// the intentions it triggers with it).
    pub records: Vec<ErasedRecord>,
    /// Batches of the log written again with tombstones in place of erased content (the
    /// same count whichever node of a cluster rewrote them).
    pub batches_rewritten: u64,
}

/// An erasure as the log keeps it, for audit.
#[derive(SimpleObject, Clone, Debug)]
pub(super) struct Erasure {
    /// The batch that records it.
    pub seq: u64,
    /// When it committed.
    pub at: DateTime,
    /// Why, as given.
    pub reason: Option<String>,
    /// Who asked (a token's name, `local`, or the operator's command).
    pub by: Option<String>,
    /// What it erased.
    pub records: Vec<ErasedRecord>,
}

fn erased_record((record, hash): &(ErasedRef, String)) -> ErasedRecord {
    let (kind, id) = crate::objects::erased::kind_and_id(*record);
    ErasedRecord {
        kind: kind.into(),
        id: ID(id.to_string()),
        content_hash: (!hash.is_empty()).then(|| hash.clone()),
    }
}

fn payload(erased: Erased) -> ErasePayload {
    ErasePayload {
        seq: erased.seq.0,
        system_time: erased.system_time.into(),
        records: erased.records.iter().map(erased_record).collect(),
        batches_rewritten: erased.batches_rewritten as u64,
    }
}

fn ids(field: &str, ids: &[ID]) -> Result<Vec<u64>> {
    if ids.is_empty() || ids.len() > MAX_ERASE_IDS {
        return Err(coded(
            code::LIMIT_EXCEEDED,
            format!("`{field}` names {} ids: give 1 to {MAX_ERASE_IDS}", ids.len()),
        ));
    }
    ids.iter().enumerate().map(|(i, id)| parse_id(format!("{field}[{i}]"), id)).collect()
}

fn erase(
    ctx: &Context<'_>,
    namespace: &str,
    target: EraseTarget,
    reason: Option<String>,
) -> Result<ErasePayload> {
    let Start { ns, store } = start(ctx, namespace, Mode::Erase)?;
    if reason.as_ref().is_some_and(|r| r.chars().count() > MAX_REASON_CHARS) {
        return Err(coded(
            code::LIMIT_EXCEEDED,
            format!("`reason` is longer than {MAX_REASON_CHARS} characters"),
        ));
    }
    let by = ctx.data_opt::<Access>().and_then(Access::who);
    store.erase(&ns, EraseRequest { target, reason, by }).map(payload).map_err(engine)
}

/// Queries: the audit list of erasures.
#[derive(Default)]
pub(super) struct EraseQuery;

#[Object]
impl EraseQuery {
    /// The erasures of a namespace, in log order, from the one after batch `after`: what
    /// was erased (ids and content hashes, never the content), when, by whom and why.
    async fn erasures(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        #[graphql(default = 100)] first: i32,
        after: Option<u64>,
    ) -> Result<Vec<Erasure>> {
        let Start { ns, store } = start(ctx, &namespace, Mode::Read)?;
        let first = crate::types::paging::page_size(ctx, Some(first))?;
        let list = store.erasures(&ns).map_err(engine)?;
        Ok(list
            .into_iter()
            .filter(|e| after.is_none_or(|a| e.seq.0 > a))
            .take(first)
            .map(|ErasureRecord { seq, at, erasure }| Erasure {
                seq: seq.0,
                at: at.into(),
                reason: erasure.reason,
                by: erasure.by,
                records: erasure.records.iter().map(erased_record).collect(),
            })
            .collect())
    }
}

/// Mutations: erasure and dropping a namespace. Unlike a correction, these change the
/// past on purpose; they need a token with the `erase` (or `admin`) right.
#[derive(Default)]
pub(super) struct EraseMutation;

#[Object]
impl EraseMutation {
    /// Erases an entity: its names and aliases, every fact whose subject or object it is
    /// (every statement of each), every episode that mentions it (a mention recorded
    /// when written, or one of its names or aliases in the text), and every intention
    /// triggered by mentions of it. The content leaves the log and every index; reads at
    /// any read point, earlier ones too, no longer return it. All or nothing: an unknown
    /// id erases nothing.
    async fn erase_entity(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        id: ID,
        reason: Option<String>,
    ) -> Result<ErasePayload> {
        let id = ostrakon_core::EntityId(parse_id("id", &id)?);
        erase(ctx, &namespace, EraseTarget::Entity(id), reason)
    }

    /// Erases episodes (their text and everything recorded with them). The facts stated
    /// from them stay, their provenance naming an erased episode.
    async fn erase_episodes(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        ids: Vec<ID>,
        reason: Option<String>,
    ) -> Result<ErasePayload> {
        let ids = self::ids("ids", &ids)?.into_iter().map(ostrakon_core::EpisodeId).collect();
        erase(ctx, &namespace, EraseTarget::Episodes(ids), reason)
    }

    /// Erases facts, each with every statement of it (a restatement's id erases the fact
    /// it restates).
    async fn erase_facts(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        ids: Vec<ID>,
        reason: Option<String>,
    ) -> Result<ErasePayload> {
        let ids = self::ids("ids", &ids)?.into_iter().map(ostrakon_core::FactId).collect();
        erase(ctx, &namespace, EraseTarget::Facts(ids), reason)
    }

    /// Drops a namespace whole — log, checkpoint, search indexes, vectors — and frees its
    /// name. `confirm` must repeat the name. Needs the `admin` right. Answers whether
    /// there was a namespace to drop.
    async fn drop_namespace(&self, ctx: &Context<'_>, name: String, confirm: String) -> Result<bool> {
        let Start { ns, store } = start(ctx, &name, Mode::Admin)?;
        if confirm != name {
            return Err(coded(code::CONFIRMATION_MISMATCH, "`confirm` must repeat the namespace's name"));
        }
        store.drop_namespace(&ns).map_err(engine)
    }
}
