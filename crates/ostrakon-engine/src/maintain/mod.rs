//! Upkeep: the periodic entry point and its schedule, segments, consolidation, tiers, intentions falling due, checkpoints.

pub(crate) mod checkpoint;
pub(crate) mod consolidate;
pub(crate) mod intentions;
pub(crate) mod schedule;
pub(crate) mod segment;
pub(crate) mod tiers;
pub(crate) mod upkeep;
