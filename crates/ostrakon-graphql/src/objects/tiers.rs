//! Tiers of context over GraphQL: the records placed in CORE and in ACTIVE scopes (with
//! who placed them and why), upkeep's open proposals, the settings, and the input that
//! names a record and a tier.

use std::sync::Arc;

use async_graphql::{Context, Enum, ID, InputObject, Object, Result, SimpleObject};
use ostrakon_core::{EntityId, EpisodeId, FactId, RecordRef, Tier};
use serde::Deserialize;

use crate::exec::context::{Pin, engine, store};
use crate::objects::graph::{EntityObject, EpisodeObject, FactObject};
use crate::types::input::{invalid, parse_id};

/// A tier of context.
#[derive(Enum, Copy, Clone, Debug, PartialEq, Eq)]
pub enum TierKind {
    /// Always loaded by `context`.
    Core,
    /// Loaded while its scope is named (or, unnamed, while it has records).
    Active,
    /// Everything else: found by search only.
    Archive,
}

/// Who placed or released a record.
#[derive(Enum, Copy, Clone, Debug, PartialEq, Eq)]
#[graphql(remote = "ostrakon_core::PlacedBy")]
pub enum PlacedByKind {
    /// A client.
    Client,
    /// The store: upkeep, or a correction following the core fact it corrects.
    Store,
}

/// What upkeep does about tiers.
#[derive(Enum, Deserialize, Copy, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[graphql(remote = "ostrakon_core::TierPolicy")]
pub enum TierPolicyKind {
    /// Nothing.
    Off,
    /// Proposes promotions and releases (`tiers { proposals }`).
    Propose,
    /// Applies them, each a logged placement or release with its reason.
    Apply,
}

/// The tier a record is placed in or released from: CORE, or ACTIVE with its scope.
pub(crate) fn tier(kind: TierKind, scope: Option<&str>) -> Result<Tier> {
    match (kind, scope) {
        (TierKind::Core, None) => Ok(Tier::Core),
        (TierKind::Active, Some(scope)) => Tier::active("scope", scope).map_err(crate::exec::context::engine),
        (TierKind::Core, Some(s)) => Err(invalid("scope", s, "CORE has no scope")),
        (TierKind::Active, None) => {
            Err(invalid("scope", "null", "ACTIVE needs the scope (a task or project)"))
        }
        (TierKind::Archive, _) => {
            Err(invalid("tier", "ARCHIVE", "ARCHIVE is where unplaced records are: release it instead"))
        }
    }
}

/// The record a placement names: exactly one of fact, entity, episode.
pub(crate) fn record(fact: Option<ID>, entity: Option<ID>, episode: Option<ID>) -> Result<RecordRef> {
    match (fact, entity, episode) {
        (Some(id), None, None) => Ok(RecordRef::Fact(FactId(parse_id("fact", &id)?))),
        (None, Some(id), None) => Ok(RecordRef::Entity(EntityId(parse_id("entity", &id)?))),
        (None, None, Some(id)) => Ok(RecordRef::Episode(EpisodeId(parse_id("episode", &id)?))),
        _ => Err(invalid("fact", "…", "name exactly one of fact, entity and episode")),
    }
}

/// Checks a context's scopes: valid names, at most a page of them.
pub(crate) fn check_scopes(ctx: &Context<'_>, scopes: &[String]) -> Result<()> {
    crate::types::paging::page_size(ctx, Some(i32::try_from(scopes.len()).unwrap_or(i32::MAX)))?;
    for (i, scope) in scopes.iter().enumerate() {
        Tier::active(&format!("scopes[{i}]"), scope).map_err(crate::exec::context::engine)?;
    }
    Ok(())
}

/// A tier as GraphQL shows it.
fn kind_and_scope(tier: &Tier) -> (TierKind, Option<String>) {
    match tier {
        Tier::Core => (TierKind::Core, None),
        Tier::Active(scope) => (TierKind::Active, Some(scope.clone())),
    }
}

/// A record in a tier (or, in a context block's ARCHIVE, found by search).
pub(crate) struct PlacedRecord {
    pub(crate) pin: Arc<Pin>,
    pub(crate) record: RecordRef,
    pub(crate) placement: Option<ostrakon_engine::views::Placement>,
}

#[Object]
impl PlacedRecord {
    /// The fact, if the record is one (as read at the read point).
    async fn fact(&self, ctx: &Context<'_>) -> Result<Option<FactObject>> {
        let RecordRef::Fact(id) = self.record else { return Ok(None) };
        Ok(FactObject::load(store(ctx)?, &self.pin, id))
    }

    /// The entity, if the record is one.
    async fn entity(&self, ctx: &Context<'_>) -> Result<Option<EntityObject>> {
        let RecordRef::Entity(id) = self.record else { return Ok(None) };
        EntityObject::load(store(ctx)?, &self.pin, id)
    }

    /// The episode, if the record is one.
    async fn episode(&self, ctx: &Context<'_>) -> Result<Option<EpisodeObject>> {
        let RecordRef::Episode(id) = self.record else { return Ok(None) };
        EpisodeObject::load(store(ctx)?, &self.pin, id)
    }

    /// The batch that placed it (null in ARCHIVE).
    async fn placed_seq(&self) -> Option<u64> {
        self.placement.as_ref().map(|p| p.seq.0)
    }

    /// Why it was placed.
    async fn reason(&self) -> Option<&str> {
        self.placement.as_ref().and_then(|p| p.reason.as_deref())
    }

    /// Who placed it.
    async fn by(&self) -> Option<PlacedByKind> {
        self.placement.as_ref().map(|p| p.by.into())
    }
}

/// An ACTIVE scope and its records.
pub(crate) struct ScopeObject {
    pub(crate) name: String,
    pub(crate) last_placed_seq: u64,
    pub(crate) records: Vec<PlacedRecord>,
}

#[Object(name = "Scope")]
impl ScopeObject {
    /// Its name (a task or project).
    async fn name(&self) -> &str {
        &self.name
    }

    /// The batch of its latest placement (when it was last touched).
    async fn last_placed_seq(&self) -> u64 {
        self.last_placed_seq
    }

    /// Its records, in the order they were placed (the first `first`).
    async fn records(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 100)] first: i32,
    ) -> Result<&[PlacedRecord]> {
        let first = crate::types::paging::page_size(ctx, Some(first))?;
        Ok(&self.records[..first.min(self.records.len())])
    }
}

/// A proposal of upkeep, open for review.
#[derive(SimpleObject)]
pub(crate) struct ProposalObject {
    /// What it proposes to place or release.
    pub record: PlacedRecord,
    /// CORE or ACTIVE.
    pub tier: TierKind,
    /// The scope, for ACTIVE.
    pub scope: Option<String>,
    /// A release rather than a placement.
    pub release: bool,
    /// Why.
    pub reason: String,
    /// The batch that proposed it.
    pub seq: u64,
}

/// A namespace's tiers as known at the read point.
pub(crate) struct TiersObject {
    pub(crate) pin: Arc<Pin>,
}

impl TiersObject {
    fn placed(
        &self,
        list: Vec<(RecordRef, ostrakon_engine::views::Placement)>,
        first: usize,
    ) -> Vec<PlacedRecord> {
        list.into_iter()
            .take(first)
            .map(|(record, p)| PlacedRecord { pin: Arc::clone(&self.pin), record, placement: Some(p) })
            .collect()
    }
}

#[Object(name = "Tiers")]
impl TiersObject {
    /// The records in CORE, in the order they were placed (the first `first`).
    async fn core(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 100)] first: i32,
    ) -> Result<Vec<PlacedRecord>> {
        let first = crate::types::paging::page_size(ctx, Some(first))?;
        let members = self.pin.reader(store(ctx)?).tier_members(&Tier::Core).map_err(engine)?;
        Ok(self.placed(members, first))
    }

    /// The ACTIVE scopes with records, by name (each with its first `first` records).
    async fn scopes(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 100)] first: i32,
    ) -> Result<Vec<ScopeObject>> {
        let first = crate::types::paging::page_size(ctx, Some(first))?;
        let reader = self.pin.reader(store(ctx)?);
        let mut out = Vec::new();
        for (name, _, touched) in reader.scopes().map_err(engine)?.into_iter().take(first) {
            let members = reader.tier_members(&Tier::Active(name.clone())).map_err(engine)?;
            out.push(ScopeObject {
                records: self.placed(members, usize::MAX),
                name,
                last_placed_seq: touched.0,
            });
        }
        Ok(out)
    }

    /// Upkeep's proposals that no placement or release has answered yet.
    async fn proposals(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 100)] first: i32,
    ) -> Result<Vec<ProposalObject>> {
        let first = crate::types::paging::page_size(ctx, Some(first))?;
        let open = self.pin.reader(store(ctx)?).open_proposals().map_err(engine)?;
        Ok(open
            .into_iter()
            .take(first)
            .map(|p| {
                let (tier, scope) = kind_and_scope(&p.tier);
                let record = PlacedRecord { pin: Arc::clone(&self.pin), record: p.record, placement: None };
                ProposalObject { record, tier, scope, release: p.release, reason: p.reason, seq: p.seq.0 }
            })
            .collect())
    }

    /// What upkeep does, and the budget shares and caps.
    async fn settings(&self, ctx: &Context<'_>) -> Result<TierSettingsObject> {
        Ok(self.pin.reader(store(ctx)?).tier_settings().map_err(engine)?.into())
    }

    /// The point they were read at.
    async fn basis(&self) -> crate::types::paging::Basis {
        (&self.pin.basis).into()
    }
}

/// A namespace's tier settings.
#[derive(SimpleObject)]
#[graphql(name = "TierSettings")]
pub(crate) struct TierSettingsObject {
    /// What upkeep does.
    pub policy: TierPolicyKind,
    /// CORE's share of a context's budget.
    pub core_share: f64,
    /// ACTIVE's share (all scopes together).
    pub active_share: f64,
    /// Most records in CORE.
    pub core_max_items: u32,
    /// Most tokens CORE's records take.
    pub core_max_tokens: u32,
    /// Most records in one scope.
    pub scope_max_items: u32,
    /// Most tokens one scope's records take.
    pub scope_max_tokens: u32,
    /// Threads a fact must be stated from (or days it must be recalled on) to become a
    /// CORE candidate.
    pub promote_after_threads: u32,
    /// Days without a placement after which upkeep releases a scope (null: never).
    pub release_idle_after_days: Option<f64>,
}

impl From<ostrakon_core::TierSettings> for TierSettingsObject {
    fn from(s: ostrakon_core::TierSettings) -> Self {
        TierSettingsObject {
            policy: s.policy.into(),
            core_share: s.core_share,
            active_share: s.active_share,
            core_max_items: s.core_max_items,
            core_max_tokens: s.core_max_tokens,
            scope_max_items: s.scope_max_items,
            scope_max_tokens: s.scope_max_tokens,
            promote_after_threads: s.promote_after_threads,
            release_idle_after_days: s
                .release_idle_after_micros
                .map(|m| m as f64 / ostrakon_core::DAY_MICROS as f64),
        }
    }
}

/// Tier settings to change (`configureNamespace(tiers:)`); the others stay.
#[derive(InputObject, Deserialize, Clone, Debug, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct TiersInput {
    /// What upkeep does: OFF (default), PROPOSE or APPLY.
    pub policy: Option<TierPolicyKind>,
    /// CORE's share of a context's budget, in [0, 1] (default 0.3).
    pub core_share: Option<f64>,
    /// ACTIVE's share, in [0, 1] (default 0.3; with CORE's at most 1).
    pub active_share: Option<f64>,
    /// Most records in CORE (default 50).
    pub core_max_items: Option<u32>,
    /// Most tokens of CORE (default 1000).
    pub core_max_tokens: Option<u32>,
    /// Most records in one scope (default 100).
    pub scope_max_items: Option<u32>,
    /// Most tokens of one scope (default 2000).
    pub scope_max_tokens: Option<u32>,
    /// Threads a fact must be stated from (or days it must be recalled on) to become a
    /// CORE candidate (default 3).
    pub promote_after_threads: Option<u32>,
    /// Days without a placement after which upkeep releases a scope (default 30; 0: never).
    pub release_idle_after_days: Option<f64>,
}

impl TiersInput {
    /// The patch it asks for.
    pub(crate) fn patch(&self) -> Result<ostrakon_engine::change::TierSettingsPatch> {
        let idle = match self.release_idle_after_days {
            None => None,
            Some(0.0) => Some(None),
            Some(d) if d.is_finite() && d > 0.0 && d <= 36_500.0 => {
                Some(Some((d * ostrakon_core::DAY_MICROS as f64) as i64))
            }
            Some(d) => {
                return Err(invalid("tiers.releaseIdleAfterDays", d, "must be from 0 (never) to 36500"));
            }
        };
        Ok(ostrakon_engine::change::TierSettingsPatch {
            policy: self.policy.map(Into::into),
            core_share: self.core_share,
            active_share: self.active_share,
            core_max_items: self.core_max_items,
            core_max_tokens: self.core_max_tokens,
            scope_max_items: self.scope_max_items,
            scope_max_tokens: self.scope_max_tokens,
            promote_after_threads: self.promote_after_threads,
            release_idle_after_micros: idle,
        })
    }
}

/// One tier's part of a context block.
pub(crate) struct ContextTier {
    pub(crate) pin: Arc<Pin>,
    pub(crate) used: ostrakon_engine::views::TierUse,
}

#[Object]
impl ContextTier {
    /// CORE, ACTIVE or ARCHIVE (what the search found).
    async fn tier(&self) -> TierKind {
        self.used.tier.as_ref().map_or(TierKind::Archive, |t| kind_and_scope(t).0)
    }

    /// The scope, for ACTIVE.
    async fn scope(&self) -> Option<String> {
        self.used.tier.as_ref().and_then(|t| kind_and_scope(t).1)
    }

    /// Its records in the block, in block order.
    async fn records(&self) -> Vec<PlacedRecord> {
        self.used
            .records
            .iter()
            .map(|r| PlacedRecord { pin: Arc::clone(&self.pin), record: *r, placement: None })
            .collect()
    }

    /// Its records the budget left out.
    async fn left_out(&self) -> u64 {
        self.used.left_out as u64
    }
}
