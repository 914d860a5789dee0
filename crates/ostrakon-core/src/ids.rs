//! Identifiers: newtypes so that an entity id is never taken for a fact id.

use std::fmt;

use serde::{Deserialize, Serialize};

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub struct $name(pub u64);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

id_type!(
    /// An entity, unique within its namespace.
    EntityId,
    "entity:"
);
id_type!(
    /// A fact, unique within its namespace.
    FactId,
    "fact:"
);
id_type!(
    /// An episode, unique within its namespace.
    EpisodeId,
    "episode:"
);
id_type!(
    /// An intention (something the agent means to do later), unique within its namespace.
    IntentionId,
    "intention:"
);

/// A position in a namespace's log: batch `n` is the n-th committed batch (from 1).
/// System time advances strictly with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Seq(pub u64);

impl fmt::Display for Seq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}
