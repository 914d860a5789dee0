//! Tiers of context: where a record is placed for `context` to load it. CORE is always
//! loaded (identity, rules, what must never be forgotten); an ACTIVE scope (a task or
//! project) is loaded while it is named or current; everything else is ARCHIVE, reached
//! by search only. A placement is an event like any other, so what was core at a past
//! system time is read as of it; it never changes what is true.

use serde::{Deserialize, Serialize};

use crate::{error::CoreError, model::validate_name};

/// Where a record is placed.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Tier {
    /// Always loaded.
    Core,
    /// Loaded while this scope (a task or project) is named or current.
    Active(String),
}

impl Tier {
    /// An ACTIVE scope by name, checked (`field` names it in errors).
    pub fn active(field: &str, scope: &str) -> Result<Tier, CoreError> {
        validate_name(field, scope)?;
        if scope.len() > MAX_SCOPE_LEN {
            return Err(CoreError::invalid_value(field, scope, "a scope's name is at most 128 bytes"));
        }
        Ok(Tier::Active(scope.trim().to_owned()))
    }
}

impl Tier {
    /// Its name as a list shows it: `CORE`, or `ACTIVE` and the scope.
    pub fn label(&self) -> String {
        match self {
            Tier::Core => "CORE".to_owned(),
            Tier::Active(scope) => format!("ACTIVE {scope}"),
        }
    }
}

impl std::fmt::Display for Tier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tier::Core => f.write_str("CORE"),
            Tier::Active(scope) => write!(f, "ACTIVE {scope:?}"),
        }
    }
}

/// The longest scope name.
pub const MAX_SCOPE_LEN: usize = 128;

/// Who placed or released a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PlacedBy {
    /// A client.
    Client,
    /// The store: upkeep's promotions and releases, or a correction following the core
    /// fact it corrects.
    Store,
}

/// What upkeep does about tiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum TierPolicy {
    /// Nothing.
    #[default]
    Off,
    /// Proposes promotions and releases, for a client to review.
    Propose,
    /// Applies them, each as a placement or release with its reason.
    Apply,
}

/// A namespace's tier settings.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TierSettings {
    /// What upkeep does.
    pub policy: TierPolicy,
    /// The share of a context's budget CORE may take, in [0, 1].
    pub core_share: f64,
    /// The share ACTIVE scopes may take, in [0, 1] (with CORE's, at most 1).
    pub active_share: f64,
    /// Most records in CORE.
    pub core_max_items: u32,
    /// Most tokens CORE's records may take in a context block.
    pub core_max_tokens: u32,
    /// Most records in one ACTIVE scope.
    pub scope_max_items: u32,
    /// Most tokens one scope's records may take.
    pub scope_max_tokens: u32,
    /// A fact stated from episodes of this many different threads, or recalled on this
    /// many different days, becomes a CORE candidate (upkeep).
    pub promote_after_threads: u32,
    /// A scope with no placement for this long is released (upkeep); `None`: never.
    pub release_idle_after_micros: Option<i64>,
}

impl Default for TierSettings {
    fn default() -> Self {
        TierSettings {
            policy: TierPolicy::Off,
            core_share: 0.3,
            active_share: 0.3,
            core_max_items: 50,
            core_max_tokens: 1_000,
            scope_max_items: 100,
            scope_max_tokens: 2_000,
            promote_after_threads: 3,
            release_idle_after_micros: Some(30 * crate::decay::DAY_MICROS),
        }
    }
}

impl TierSettings {
    /// Checks the settings' own bounds.
    pub fn validate(&self) -> Result<(), CoreError> {
        let share = |field: &str, v: f64| {
            if (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(CoreError::invalid_value(field, v.to_string(), "must be in [0, 1]"))
            }
        };
        share("tiers.coreShare", self.core_share)?;
        share("tiers.activeShare", self.active_share)?;
        if self.core_share + self.active_share > 1.0 {
            return Err(CoreError::invalid_value(
                "tiers.activeShare",
                self.active_share.to_string(),
                "CORE's and ACTIVE's shares add up to at most 1",
            ));
        }
        let caps = [
            ("tiers.coreMaxItems", self.core_max_items),
            ("tiers.coreMaxTokens", self.core_max_tokens),
            ("tiers.scopeMaxItems", self.scope_max_items),
            ("tiers.scopeMaxTokens", self.scope_max_tokens),
            ("tiers.promoteAfterThreads", self.promote_after_threads),
        ];
        for (field, v) in caps {
            if v == 0 || v > 100_000 {
                return Err(CoreError::invalid_value(field, v.to_string(), "must be from 1 to 100000"));
            }
        }
        if self.release_idle_after_micros.is_some_and(|m| m <= 0) {
            return Err(CoreError::invalid_value("tiers.releaseIdleAfter", "0", "must be positive"));
        }
        Ok(())
    }
}
