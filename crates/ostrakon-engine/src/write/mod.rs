//! The write path: a batch validated under the namespace's writer lock, given ids, encoded and appended; replayed exports.

pub(crate) mod append;
pub(crate) mod codec;
pub(crate) mod records;
pub(crate) mod replay;
pub(crate) mod settings;
pub(crate) mod tiers;
pub(crate) mod validate;
pub(crate) mod writer;
