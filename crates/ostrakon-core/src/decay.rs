//! Memory dynamics: how accessible a record is at a clock `at`, from when it was first
//! experienced and when it was recalled. Salience only: nothing here ever changes what an
//! as-of read says is true.
//!
//! - MemoryBank: `R(at) = exp(−(at − L) / (S · unit))`; each recall sets `S ← S + Δ` and
//!   `L ← t`. (The paper's formula; the reference code's `exp(-t / 5*S)` divides by 5 and
//!   multiplies by S, so strong memories would fade faster.)
//! - ACT-R base-level activation: `B = ln Σⱼ ((at − tⱼ)/unit)^(−d)` over the first
//!   experience and every recall, mapped to `R = 1 / (1 + exp(−(B − τ) / s))`.
//! - None: always fully accessible.

use serde::{Deserialize, Serialize};

use crate::error::CoreError;
use crate::ids::{EntityId, EpisodeId, FactId};
use crate::time::Timestamp;

/// Microseconds in a day.
pub const DAY_MICROS: i64 = 86_400_000_000;

/// A record a trace belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum RecordRef {
    /// A fact.
    Fact(FactId),
    /// An entity.
    Entity(EntityId),
    /// An episode.
    Episode(EpisodeId),
}

/// As a person says it: `fact 3`, `entity 2`, `episode 5`.
impl std::fmt::Display for RecordRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordRef::Fact(id) => write!(f, "fact {id}"),
            RecordRef::Entity(id) => write!(f, "entity {id}"),
            RecordRef::Episode(id) => write!(f, "episode {id}"),
        }
    }
}

/// The kinds of record, for per-kind profiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RecordKind {
    /// Facts.
    Fact,
    /// Entities.
    Entity,
    /// Episodes.
    Episode,
}

impl RecordRef {
    /// Its kind.
    pub fn kind(&self) -> RecordKind {
        match self {
            RecordRef::Fact(_) => RecordKind::Fact,
            RecordRef::Entity(_) => RecordKind::Entity,
            RecordRef::Episode(_) => RecordKind::Episode,
        }
    }
}

/// The forgetting curve.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum DecayModel {
    /// MemoryBank's exponential curve with strength.
    MemoryBank,
    /// ACT-R base-level activation.
    ActR {
        /// Decay exponent `d` (0.5 in ACT-R).
        decay: f64,
        /// Activation `τ` at which retention is one half.
        threshold: f64,
        /// Logistic noise `s`.
        noise: f64,
    },
    /// No forgetting.
    None,
}

/// What a recall adds to strength.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Increment {
    /// `S ← S + Δ`.
    Constant(f64),
    /// `S ← S + 1 / ln(S + e)`: each recall adds less to an already strong memory.
    Diminishing,
}

/// A forgetting profile.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// The curve.
    pub model: DecayModel,
    /// The time unit of strength, in microseconds.
    pub unit_micros: i64,
    /// Strength when first experienced (before salience).
    pub initial_strength: f64,
    /// What a recall adds.
    pub increment: Increment,
    /// Below this retention a record is dormant.
    pub threshold: f64,
}

impl Profile {
    /// MemoryBank with a unit of one day.
    pub const fn memory_bank(initial_strength: f64, increment: f64, threshold: f64) -> Self {
        Profile {
            model: DecayModel::MemoryBank,
            unit_micros: DAY_MICROS,
            initial_strength,
            increment: Increment::Constant(increment),
            threshold,
        }
    }

    /// The built-in default for a kind of record: MemoryBank, unit one day, θ = 0.05.
    /// Facts and entities start at S₀ = 30 days (half-life ≈ 20.8 days; dormant after
    /// ≈ 90 days unrecalled), episodes at S₀ = 7 (half-life ≈ 4.9 days; dormant after
    /// ≈ 21 days); each recall adds 7 days of strength. Dormant records stay in every
    /// as-of read and can still be found by a direct question.
    pub const fn default_for(kind: RecordKind) -> Self {
        match kind {
            RecordKind::Episode => Profile::memory_bank(7.0, 7.0, 0.05),
            RecordKind::Fact | RecordKind::Entity => Profile::memory_bank(30.0, 7.0, 0.05),
        }
    }

    /// Rejects a profile whose numbers make no curve; `field` names the input.
    pub fn validate(&self, field: impl std::fmt::Display) -> Result<(), CoreError> {
        let bad = |what: &str, value: String, reason: &str| {
            Err(CoreError::invalid_value(format_args!("{field}.{what}"), value, reason))
        };
        if self.unit_micros <= 0 {
            return bad("unit", self.unit_micros.to_string(), "must be positive");
        }
        if !(self.initial_strength.is_finite() && self.initial_strength > 0.0) {
            return bad("initialStrength", self.initial_strength.to_string(), "must be a positive number");
        }
        if let Increment::Constant(d) = self.increment
            && !(d.is_finite() && d >= 0.0)
        {
            return bad("increment", d.to_string(), "must be a number ≥ 0");
        }
        if !(self.threshold.is_finite() && (0.0..1.0).contains(&self.threshold)) {
            return bad("threshold", self.threshold.to_string(), "must be in [0, 1)");
        }
        if let DecayModel::ActR { decay, threshold, noise } = self.model
            && !(decay.is_finite()
                && decay > 0.0
                && threshold.is_finite()
                && noise.is_finite()
                && noise > 0.0)
        {
            return bad(
                "model",
                format!("ACT-R decay {decay}, threshold {threshold}, noise {noise}"),
                "ACT-R needs decay > 0 and noise > 0",
            );
        }
        Ok(())
    }

    fn add(&self, strength: f64) -> f64 {
        match self.increment {
            Increment::Constant(d) => strength + d,
            Increment::Diminishing => strength + 1.0 / (strength + std::f64::consts::E).ln(),
        }
    }
}

/// When a record was first experienced and recalled, with its starting strength.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// When it was first experienced (an episode's time, a fact's first source episode's).
    pub born: Timestamp,
    /// Strength when born (profile × salience).
    pub initial_strength: f64,
    /// When it was recalled, sorted; recalls before `born` count at `born`.
    pub recalls: Vec<Timestamp>,
}

/// A trace read at a clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceState {
    /// Strength S (MemoryBank), or the number of presentations (ACT-R).
    pub strength: f64,
    /// Retention in [0, 1].
    pub retention: f64,
    /// Time for retention to halve, in microseconds (MemoryBank only).
    pub half_life_micros: Option<f64>,
    /// Recalls up to the clock.
    pub recall_count: u32,
    /// The last recall up to the clock.
    pub last_recalled_at: Option<Timestamp>,
    /// Whether retention is below the profile's threshold.
    pub dormant: bool,
}

impl Trace {
    /// A trace with no recalls.
    pub fn new(born: Timestamp, initial_strength: f64) -> Self {
        Trace { born, initial_strength, recalls: Vec::new() }
    }

    /// The trace read at `at` (recalls after `at` do not count).
    pub fn state(&self, profile: &Profile, at: Timestamp) -> TraceState {
        let recalls: Vec<Timestamp> = self.recalls.iter().copied().filter(|r| *r <= at).collect();
        let last_recalled_at = recalls.last().copied();
        let unit = profile.unit_micros as f64;
        let (strength, retention, half_life) = match profile.model {
            DecayModel::None => (self.initial_strength, 1.0, None),
            DecayModel::MemoryBank => {
                let strength = recalls.iter().fold(self.initial_strength, |s, _| profile.add(s));
                let last = last_recalled_at.map_or(self.born, |r| r.max(self.born));
                let elapsed = (at.as_micros().saturating_sub(last.as_micros())).max(0) as f64;
                let retention = (-elapsed / (strength * unit)).exp();
                (strength, retention, Some(strength * unit * std::f64::consts::LN_2))
            }
            DecayModel::ActR { decay, threshold, noise } => {
                let presentations =
                    std::iter::once(self.born).chain(recalls.iter().map(|r| (*r).max(self.born)));
                let mut sum = 0.0;
                let mut fresh = false;
                for t in presentations.filter(|t| *t <= at) {
                    let age = (at.as_micros() - t.as_micros()) as f64 / unit;
                    if age <= 0.0 {
                        fresh = true;
                    } else {
                        sum += age.powf(-decay);
                    }
                }
                let retention = if fresh {
                    1.0
                } else if sum > 0.0 {
                    1.0 / (1.0 + (-(sum.ln() - threshold) / noise).exp())
                } else {
                    // Not experienced yet at `at`.
                    1.0
                };
                (1.0 + recalls.len() as f64, retention, None)
            }
        };
        TraceState {
            strength,
            retention,
            half_life_micros: half_life,
            recall_count: recalls.len() as u32,
            last_recalled_at,
            dormant: retention < profile.threshold,
        }
    }

    /// ACT-R base-level activation at `at`, in natural log units (`None` before `born`).
    pub fn activation(&self, decay: f64, unit_micros: i64, at: Timestamp) -> Option<f64> {
        let sum: f64 = std::iter::once(self.born)
            .chain(self.recalls.iter().copied())
            .filter(|t| *t < at)
            .map(|t| ((at.as_micros() - t.as_micros()) as f64 / unit_micros as f64).powf(-decay))
            .sum();
        (sum > 0.0).then(|| sum.ln())
    }

    /// When, within `[from, to)`, the record turns dormant if nothing recalls it: the first
    /// instant its retention falls below the threshold. `None` if it is dormant already
    /// at `from` or stays active until `to`.
    pub fn turns_dormant(&self, profile: &Profile, from: Timestamp, to: Timestamp) -> Option<Timestamp> {
        if from >= to || self.state(profile, from).dormant || !self.state(profile, to).dormant {
            return None;
        }
        // Between recalls retention only falls: bisect on the first dormant instant.
        let (mut lo, mut hi) = (from.as_micros(), to.as_micros());
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.state(profile, Timestamp::from_micros(mid)).dormant {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Some(Timestamp::from_micros(hi))
    }
}

/// Initial strength from salience: `importance` in [0, 1] multiplies the profile's S₀ by
/// up to 5; a user's correction of the agent gets the maximum.
pub fn salient_strength(profile: &Profile, importance: Option<f64>, correction: bool) -> f64 {
    let boost = if correction { 1.0 } else { importance.unwrap_or(0.0).clamp(0.0, 1.0) };
    profile.initial_strength * (1.0 + 4.0 * boost)
}
