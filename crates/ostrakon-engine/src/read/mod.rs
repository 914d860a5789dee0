//! Reads at a pinned point: read points and answers, the reader, the typed reads and lookups, analytics and the sweeps behind counts, what episodes stated that no longer holds, the topic network, following a shared log.

pub(crate) mod analytics;
pub(crate) mod follow;
pub(crate) mod lookup;
pub(crate) mod outdated;
pub(crate) mod point;
pub(crate) mod reader;
pub(crate) mod reads;
pub(crate) mod sweeps;
pub(crate) mod topics;
