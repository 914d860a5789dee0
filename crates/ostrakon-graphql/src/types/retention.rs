//! Memory dynamics on every record: its trace (retention, strength, recalls, dormancy)
//! and the forgetting profiles that shape it, with their inputs. Salience only: none of
//! this changes what a read says is true.

use std::sync::Arc;

use async_graphql::{Context, Enum, InputObject, Object, Result, SimpleObject};
use ostrakon_core::{
    DecayModel, Increment, Profile as CoreProfile, RecordKind as CoreKind, RecordRef, TraceState,
};
use serde::Deserialize;

use crate::exec::context::{Pin, engine, store};
use crate::types::input::time;
use crate::types::scalars::DateTime;

/// A kind of record.
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[graphql(remote = "ostrakon_core::RecordKind")]
pub enum RecordKind {
    /// Facts.
    Fact,
    /// Entities.
    Entity,
    /// Episodes.
    Episode,
}

pub(crate) fn kinds(given: Option<Vec<RecordKind>>) -> Vec<CoreKind> {
    given.map_or_else(
        || vec![CoreKind::Fact, CoreKind::Entity, CoreKind::Episode],
        |k| k.into_iter().map(CoreKind::from).collect(),
    )
}

/// A forgetting curve.
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug, Default, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DecayModelKind {
    /// MemoryBank: `R = exp(−(at − L) / (S · unit))`.
    #[default]
    MemoryBank,
    /// ACT-R base-level activation, mapped to [0, 1] by a logistic.
    ActR,
    /// No forgetting.
    None,
}

/// A forgetting profile to set.
#[derive(InputObject, Deserialize, Clone, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProfileInput {
    /// The curve.
    #[graphql(default)]
    #[serde(default)]
    pub model: DecayModelKind,
    /// The unit of strength, in seconds (one day by default).
    #[graphql(default = 86400.0)]
    #[serde(default = "day")]
    pub unit_seconds: f64,
    /// Strength when first experienced.
    #[graphql(default = 1.0)]
    #[serde(default = "one")]
    pub initial_strength: f64,
    /// What a recall adds to strength (ignored when `diminishing`).
    #[graphql(default = 1.0)]
    #[serde(default = "one")]
    pub increment: f64,
    /// Each recall adds `1 / ln(S + e)` instead: less to an already strong memory.
    #[graphql(default = false)]
    #[serde(default)]
    pub diminishing: bool,
    /// Below this retention a record is dormant.
    #[graphql(default = 0.1)]
    #[serde(default = "tenth")]
    pub threshold: f64,
    /// ACT-R decay exponent d.
    #[graphql(default = 0.5)]
    #[serde(default = "half")]
    pub actr_decay: f64,
    /// ACT-R activation at which retention is one half.
    #[graphql(default = 0.0)]
    #[serde(default)]
    pub actr_threshold: f64,
    /// ACT-R logistic noise s.
    #[graphql(default = 0.4)]
    #[serde(default = "noise")]
    pub actr_noise: f64,
}

fn day() -> f64 {
    86_400.0
}
fn one() -> f64 {
    1.0
}
fn tenth() -> f64 {
    0.1
}
fn half() -> f64 {
    0.5
}
fn noise() -> f64 {
    0.4
}

impl From<&ProfileInput> for CoreProfile {
    fn from(p: &ProfileInput) -> Self {
        CoreProfile {
            model: match p.model {
                DecayModelKind::MemoryBank => DecayModel::MemoryBank,
                DecayModelKind::ActR => {
                    DecayModel::ActR { decay: p.actr_decay, threshold: p.actr_threshold, noise: p.actr_noise }
                }
                DecayModelKind::None => DecayModel::None,
            },
            // Saturating: an absurd unit is then refused by the engine's validation.
            unit_micros: (p.unit_seconds * 1e6).round().clamp(i64::MIN as f64, i64::MAX as f64) as i64,
            initial_strength: p.initial_strength,
            increment: if p.diminishing { Increment::Diminishing } else { Increment::Constant(p.increment) },
            threshold: p.threshold,
        }
    }
}

/// Profiles of a namespace: for every record, and per kind (a kind's own wins).
#[derive(InputObject, Deserialize, Clone, Debug, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DecayInput {
    /// For every kind of record.
    pub default: Option<ProfileInput>,
    /// For episodes.
    pub episode: Option<ProfileInput>,
    /// For entities.
    pub entity: Option<ProfileInput>,
    /// For facts (a predicate's own profile wins).
    pub fact: Option<ProfileInput>,
}

/// A forgetting profile in force.
#[derive(SimpleObject, Clone, Debug)]
pub(crate) struct ProfileInfo {
    /// The curve.
    pub model: DecayModelKind,
    /// The unit of strength, in seconds.
    pub unit_seconds: f64,
    /// Strength when first experienced (before salience).
    pub initial_strength: f64,
    /// What a recall adds (null when diminishing).
    pub increment: Option<f64>,
    /// Whether recalls add less to strong memories.
    pub diminishing: bool,
    /// Below this retention a record is dormant.
    pub threshold: f64,
    /// Half-life of a never-recalled record, in seconds (MemoryBank only).
    pub half_life_seconds: Option<f64>,
}

impl From<CoreProfile> for ProfileInfo {
    fn from(p: CoreProfile) -> Self {
        let unit_seconds = p.unit_micros as f64 / 1e6;
        ProfileInfo {
            model: match p.model {
                DecayModel::MemoryBank => DecayModelKind::MemoryBank,
                DecayModel::ActR { .. } => DecayModelKind::ActR,
                DecayModel::None => DecayModelKind::None,
            },
            unit_seconds,
            initial_strength: p.initial_strength,
            increment: match p.increment {
                Increment::Constant(d) => Some(d),
                Increment::Diminishing => None,
            },
            diminishing: p.increment == Increment::Diminishing,
            threshold: p.threshold,
            half_life_seconds: (p.model == DecayModel::MemoryBank)
                .then_some(p.initial_strength * unit_seconds * std::f64::consts::LN_2),
        }
    }
}

/// The profiles a namespace's records fade by.
#[derive(SimpleObject, Clone, Debug)]
pub(crate) struct DecayProfiles {
    /// Episodes.
    pub episode: ProfileInfo,
    /// Entities.
    pub entity: ProfileInfo,
    /// Facts (unless their predicate has its own).
    pub fact: ProfileInfo,
}

/// How accessible a record is: the trace fields every record has.
pub(crate) struct TraceFields {
    pub(crate) pin: Arc<Pin>,
    pub(crate) record: RecordRef,
}

impl TraceFields {
    fn state(&self, ctx: &Context<'_>, at: Option<&DateTime>) -> Result<TraceState> {
        let store = store(ctx)?;
        let mut read = self.pin.at();
        if let Some(at) = at {
            read.at = Some(time(store, &self.pin.ns, "at", at)?);
        }
        let answer = store.at(&self.pin.ns, read).and_then(|r| r.trace(self.record)).map_err(engine)?;
        Ok(answer.value.unwrap_or(TraceState {
            strength: 0.0,
            retention: 0.0,
            half_life_micros: None,
            recall_count: 0,
            last_recalled_at: None,
            dormant: true,
        }))
    }
}

#[Object]
impl TraceFields {
    /// Strength S of its trace at the read's clock `at` (ACT-R: presentations).
    async fn strength(&self, ctx: &Context<'_>) -> Result<f64> {
        Ok(self.state(ctx, None)?.strength)
    }

    /// Retention in [0, 1] at `at` (default: the read's clock). Salience, not truth.
    async fn retention(&self, ctx: &Context<'_>, at: Option<DateTime>) -> Result<f64> {
        Ok(self.state(ctx, at.as_ref())?.retention)
    }

    /// Time for its retention to halve at its current strength, in seconds (MemoryBank).
    async fn half_life(&self, ctx: &Context<'_>) -> Result<Option<f64>> {
        Ok(self.state(ctx, None)?.half_life_micros.map(|m| m / 1e6))
    }

    /// How often it was recalled up to the read's clock.
    async fn recall_count(&self, ctx: &Context<'_>) -> Result<u32> {
        Ok(self.state(ctx, None)?.recall_count)
    }

    /// Every recall up to the read's clock, in order (inherited ones included).
    async fn recalled_at(&self, ctx: &Context<'_>) -> Result<Vec<DateTime>> {
        let answer = self.pin.reader(store(ctx)?).recall_history(self.record).map_err(engine)?;
        Ok(answer.value.into_iter().map(DateTime::from).collect())
    }

    /// Its last recall up to the read's clock.
    async fn last_recalled_at(&self, ctx: &Context<'_>) -> Result<Option<DateTime>> {
        Ok(self.state(ctx, None)?.last_recalled_at.map(DateTime::from))
    }

    /// Whether its retention at `at` is below its profile's threshold: left out of
    /// `recallable`, still in every as-of read.
    async fn dormant(&self, ctx: &Context<'_>, at: Option<DateTime>) -> Result<bool> {
        Ok(self.state(ctx, at.as_ref())?.dormant)
    }
}
