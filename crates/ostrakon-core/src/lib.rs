//! Ostrakon's pure model: identifiers, time, values, records, events and the bitemporal
//! resolution rules. This crate does no I/O, reads no clock and knows no async runtime.
#![deny(missing_docs)]

mod analytics;
mod answer;
mod decay;
mod erasure;
mod error;
mod event;
mod ids;
mod model;
pub mod particles;
mod redact;
mod resolve;
mod segments;
mod tiers;
mod ties;
mod time;
mod value;

pub use analytics::{
    Allen, ChangeCounts, Endpoints, Group, GroupBy, Held, HeldFor, Lane, MAX_PAIR_CHECKS, MAX_STEPS,
    OverlapQuery, SeriesGroup, Side, Step, Stretch, clip, count_at_points, join,
};
pub use answer::{
    Counts, EntityFilter, EntityView, EpisodeCursor, EpisodeFilter, FactFilter, FactView, Fading,
    IntentionView, Neighborhood, Page, Recallable, Retraction, RetractionView, Scope, SnapshotCursor,
    SnapshotPage, StatementView, View,
};
pub use decay::{
    DAY_MICROS, DecayModel, Increment, Profile, RecordKind, RecordRef, Trace, TraceState, salient_strength,
};
pub use erasure::{ErasedRef, Erasure, RetentionPolicy, TombstoneOf};
pub use error::{CoreError, join_field};
pub use event::{EVENT_FORMAT, Event, same_events};
pub use ids::{EntityId, EpisodeId, FactId, IntentionId, Seq};
pub use model::{
    BuiltinModel, Cardinality, DecayConfig, EmbeddingMode, EmbeddingPolicy, Entity, Episode, Fact,
    FactEmbedding, Intention, MAX_MATCHED_NAME_WORDS, MAX_NAME_LEN, MentionSource, Namespace,
    NamespaceConfig, Polarity, PredicateDef, SegmentConfig, SegmentEnd, Trigger, find_names, matchable_name,
    name_words, normalize_name, validate_name,
};
pub use redact::{REDACTED, redact};
pub use resolve::{Candidate, Status, Verdict, combine_confidence, resolve_current, resolve_slot};
pub use tiers::{MAX_SCOPE_LEN, PlacedBy, Tier, TierPolicy, TierSettings};
pub use ties::{Contradicts, TieGroup};
pub use time::{Interval, PartialTime, Precision, TimeZone, Timestamp, iso_duration, subtract_all};
pub use value::{Literal, MAX_LITERAL_BYTES, Value, ValueType};
