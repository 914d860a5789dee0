//! The context block an agent puts in its prompt: its lines and its tiers.

pub(crate) mod block;
pub(crate) mod lines;
pub(crate) mod tiers;
