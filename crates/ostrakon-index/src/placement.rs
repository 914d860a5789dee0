//! What the state keeps of tiers of context: each placement or release of a record, and
//! upkeep's proposals (read through `tiers.rs`).

use ostrakon_core::{PlacedBy, RecordRef, Seq, Tier};
use serde::{Deserialize, Serialize};

/// One placement or release of a record in a tier.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    /// The batch.
    pub seq: Seq,
    /// Placed (true) or released.
    pub placed: bool,
    /// Why.
    pub reason: Option<String>,
    /// Who.
    pub by: PlacedBy,
}

/// A proposal of upkeep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Proposal {
    /// The batch that made it.
    pub seq: Seq,
    /// The record.
    pub record: RecordRef,
    /// The tier.
    pub tier: Tier,
    /// A release rather than a placement.
    pub release: bool,
    /// Why.
    pub reason: String,
}
