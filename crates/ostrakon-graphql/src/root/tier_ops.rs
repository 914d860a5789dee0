//! Tiers of context: what is in CORE and in each ACTIVE scope, and placing or releasing
//! a record (each a logged event with its reason).

use async_graphql::{Context, ID, Object, Result};
use ostrakon_core::PlacedBy;
use ostrakon_engine::Change;

use crate::exec::access::Mode;
use crate::exec::context::{Pin, Start, commit, engine, read_at, start};
use crate::objects::tiers::{TierKind, TiersObject, record};
use crate::types::scalars::DateTime;

/// Queries: tiers of context.
#[derive(Default)]
pub(super) struct TierQuery;

#[Object]
impl TierQuery {
    /// The namespace's tiers as known at knownAt: CORE, the ACTIVE scopes, upkeep's open
    /// proposals, the settings. Everything not in them is ARCHIVE.
    async fn tiers(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
    ) -> Result<TiersObject> {
        let Start { ns, store } = start(ctx, &namespace, Mode::Read)?;
        let at = read_at(store, &ns, None, known_at.as_ref(), known_at_seq, None)?;
        let basis = store.basis(&ns, at).map_err(engine)?;
        Ok(TiersObject { pin: Pin::new(ns, basis) })
    }
}

/// Mutations: tiers of context.
#[derive(Default)]
pub(super) struct TierMutation;

#[Object]
impl TierMutation {
    /// Places one record (a fact, an entity or an episode) in CORE, which `context` always
    /// loads, or in an ACTIVE scope (a task or project), loaded while it is named or
    /// current. Refused when it is there already or past the tier's caps
    /// (`LIMIT_EXCEEDED`). Placement changes what `context` loads, never what is true. The
    /// answer: the tiers right after.
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn place_memory(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        fact: Option<ID>,
        entity: Option<ID>,
        episode: Option<ID>,
        tier: TierKind,
        scope: Option<String>,
        reason: Option<String>,
    ) -> Result<TiersObject> {
        let started = start(ctx, &namespace, Mode::ReadWrite)?;
        let record = record(fact, entity, episode)?;
        let tier = crate::objects::tiers::tier(tier, scope.as_deref())?;
        let change = Change::Place { record, tier, reason, by: PlacedBy::Client };
        write(started, change)
    }

    /// Takes one record out of CORE or an ACTIVE scope: back to ARCHIVE unless another
    /// tier holds it. The answer: the tiers right after.
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn release_memory(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        fact: Option<ID>,
        entity: Option<ID>,
        episode: Option<ID>,
        tier: TierKind,
        scope: Option<String>,
        reason: Option<String>,
    ) -> Result<TiersObject> {
        let started = start(ctx, &namespace, Mode::ReadWrite)?;
        let record = record(fact, entity, episode)?;
        let tier = crate::objects::tiers::tier(tier, scope.as_deref())?;
        let change = Change::Release { record, tier, reason, by: PlacedBy::Client };
        write(started, change)
    }
}

/// Writes one placement or release; the tiers right after it.
fn write(Start { ns, store }: Start<'_>, change: Change) -> Result<TiersObject> {
    let receipt = commit(store, &ns, vec![change], &[String::new()])?;
    let after = ostrakon_engine::ReadAt {
        known_at: ostrakon_engine::KnownAt::Seq(receipt.seq),
        ..Default::default()
    };
    let basis = store.basis(&ns, after).map_err(engine)?;
    Ok(TiersObject { pin: Pin::new(ns, basis) })
}
