//! Output types that name no other object: intervals, predicates, a namespace's settings
//! and counts, properties, and the events a subscription sends.

use crate::types::enums::Cardinality;
use crate::types::enums::ValueType;
use crate::types::retention::{DecayProfiles, ProfileInfo};
use crate::types::scalars::DateTime;
use async_graphql::{ID, Json, SimpleObject};
use ostrakon_core::SegmentConfig;
use ostrakon_core::{Interval as CoreInterval, Namespace, PredicateDef, RecordKind as CoreKind};
use ostrakon_engine::Store;

/// A half-open interval `[from, to)`; `to` null means "until further notice".
#[derive(SimpleObject, Clone, Debug)]
pub(crate) struct Interval {
    /// Start, included.
    pub from: DateTime,
    /// End, excluded.
    pub to: Option<DateTime>,
}

pub(crate) fn interval(i: &CoreInterval) -> Interval {
    Interval { from: i.from().into(), to: i.to().map(DateTime::from) }
}

/// A predicate's declaration.
#[derive(SimpleObject, Clone, Debug)]
pub(crate) struct Predicate {
    /// Its name.
    pub name: String,
    /// One value at a time or several.
    pub cardinality: Cardinality,
    /// The values it takes.
    pub value_type: ValueType,
    /// What it means.
    pub description: Option<String>,
    /// How its facts fade, when it overrides the namespace's fact profile.
    pub decay: Option<ProfileInfo>,
    /// Whether the built-in embedder embeds its facts (when the namespace embeds
    /// `DECLARED` facts).
    pub embed: bool,
}

impl From<PredicateDef> for Predicate {
    fn from(d: PredicateDef) -> Self {
        Predicate {
            name: d.name,
            cardinality: d.cardinality.into(),
            value_type: d.value_type.into(),
            description: d.description,
            decay: d.decay.map(ProfileInfo::from),
            embed: false,
        }
    }
}

/// Record counts of a namespace.
#[derive(SimpleObject, Clone, Debug)]
pub(crate) struct Counts {
    /// Committed batches.
    pub batches: u64,
    /// Episodes.
    pub episodes: u64,
    /// Entities.
    pub entities: u64,
    /// Distinct facts (a re-assertion counts on the fact it restated).
    pub facts: u64,
    /// Predicates used or declared.
    pub predicates: u64,
}

/// A namespace: its settings, predicates and size.
#[derive(SimpleObject, Clone, Debug)]
#[graphql(name = "Namespace")]
pub(crate) struct NamespaceInfo {
    /// Its name.
    pub name: String,
    /// Where dates without an offset are placed.
    pub time_zone: String,
    /// Predicates used or declared, by name.
    pub predicates: Vec<Predicate>,
    /// How much it holds.
    pub counts: Counts,
    /// Size of its log in bytes.
    pub log_bytes: u64,
    /// How its records fade.
    pub decay: DecayProfiles,
    /// How often consolidation runs when the server is idle (seconds; null: never).
    pub consolidate_every_seconds: Option<u64>,
    /// Where its vectors come from.
    pub embedding: EmbeddingInfo,
    /// How its threads are cut into segments.
    pub segmentation: Segmentation,
    /// How long it keeps episodes.
    pub retention: Retention,
    /// How far its search indexes (and embeddings) have caught up with its log.
    pub indexing: Indexing,
}

/// How far a namespace's search indexes have caught up with its log: search answers from
/// the batches up to `indexedSeq`; until it reaches `latestSeq` the newest are not yet
/// found by `search`, `context` and `remember`.
#[derive(SimpleObject, Clone, Debug)]
pub(crate) struct Indexing {
    /// Every batch up to this one is searchable.
    pub indexed_seq: u64,
    /// The namespace's last batch.
    pub latest_seq: u64,
    /// Texts the indexer has embedded in its current run.
    pub embedded: u64,
    /// Texts its current run embeds (0 when none is going on).
    pub to_embed: u64,
    /// Whether every batch is searchable.
    pub done: bool,
}

/// How long a namespace keeps what it forgets with age.
#[derive(SimpleObject, Clone, Debug)]
pub(crate) struct Retention {
    /// Episodes recorded longer ago than this (an ISO 8601 duration, `P90D`) are erased by
    /// upkeep, the facts stated from them kept; null: kept forever.
    pub episodes_after: Option<String>,
}

impl From<ostrakon_core::RetentionPolicy> for Retention {
    fn from(p: ostrakon_core::RetentionPolicy) -> Self {
        Retention { episodes_after: p.episodes_after_micros.map(ostrakon_core::iso_duration) }
    }
}

/// Where a namespace's vectors come from.
#[derive(SimpleObject, Clone, Debug)]
pub(crate) struct EmbeddingInfo {
    /// Built in, sent by clients, or none.
    pub mode: crate::types::input::EmbeddingModeKind,
    /// The vectors' length when clients send them.
    pub dimensions: Option<u32>,
    /// The built-in embedder's model when the namespace names one (null: the server's
    /// default model, or no built-in vectors).
    pub model: Option<crate::types::input::EmbeddingModel>,
    /// Which facts the built-in embedder embeds.
    pub facts: crate::types::input::FactEmbeddingKind,
    /// Whether it embeds entities.
    pub entities: bool,
}

impl NamespaceInfo {
    pub(crate) fn of(store: &Store, ns: &Namespace) -> Result<Self, ostrakon_engine::StorageError> {
        let ostrakon_engine::admin::Settings {
            config,
            predicates,
            counts: c,
            embedding: mode,
            embedding_policy: policy,
            embedded_predicates,
            segmentation,
            retention,
        } = store.settings(ns)?;
        let model = match mode {
            ostrakon_core::EmbeddingMode::Model(m) => Some(m.into()),
            _ => None,
        };
        let (mode, dimensions) = match mode {
            ostrakon_core::EmbeddingMode::Builtin | ostrakon_core::EmbeddingMode::Model(_) => {
                (crate::types::input::EmbeddingModeKind::Builtin, None)
            }
            ostrakon_core::EmbeddingMode::Client { dim } => {
                (crate::types::input::EmbeddingModeKind::Client, Some(dim))
            }
            ostrakon_core::EmbeddingMode::Off => (crate::types::input::EmbeddingModeKind::Off, None),
        };
        let embedding =
            EmbeddingInfo { mode, dimensions, model, facts: policy.facts.into(), entities: policy.entities };
        let time_zone = config.time_zone;
        Ok(NamespaceInfo {
            name: ns.to_string(),
            time_zone: time_zone.to_string(),
            predicates: predicates
                .into_iter()
                .map(|d| {
                    let embed = embedded_predicates.contains(&d.name);
                    Predicate { embed, ..Predicate::from(d) }
                })
                .collect(),
            counts: Counts {
                batches: c.batches,
                episodes: c.episodes,
                entities: c.entities,
                facts: c.facts,
                predicates: c.predicates,
            },
            log_bytes: store.log_size(ns)?,
            consolidate_every_seconds: config.consolidate_every_seconds,
            embedding,
            segmentation: segmentation.into(),
            retention: retention.into(),
            indexing: indexing(store, ns, c.batches),
            decay: DecayProfiles {
                episode: config.decay.profile(CoreKind::Episode).into(),
                entity: config.decay.profile(CoreKind::Entity).into(),
                fact: config.decay.profile(CoreKind::Fact).into(),
            },
        })
    }
}

fn indexing(store: &Store, ns: &Namespace, batches: u64) -> Indexing {
    match store.search_progress(ns) {
        Some(p) => Indexing {
            indexed_seq: p.indexed.0,
            latest_seq: p.latest.0,
            embedded: p.embedded,
            to_embed: p.to_embed,
            done: p.indexed >= p.latest,
        },
        // Not open: nothing is being indexed, and its indexes are built when it is next
        // searched.
        None => {
            Indexing { indexed_seq: 0, latest_seq: batches, embedded: 0, to_embed: 0, done: batches == 0 }
        }
    }
}

/// One committed change, as the `events` subscription delivers it.
#[derive(SimpleObject, Clone, Debug)]
pub(crate) struct EventNotice {
    /// Its namespace.
    pub namespace: String,
    /// Its batch.
    pub seq: u64,
    /// The batch's system time.
    pub system_time: DateTime,
    /// The kind of event (`EpisodeRecorded`, `FactAsserted`, …).
    pub kind: String,
    /// The entity it declares, if any.
    pub entity: Option<ID>,
    /// The fact it asserts, ends or retracts, if any.
    pub fact: Option<ID>,
    /// The episode it records, mentions from, or fired at, if any.
    pub episode: Option<ID>,
    /// The intention it adds, cancels or fires, if any.
    pub intention: Option<ID>,
    /// The event itself.
    pub data: Json<serde_json::Value>,
}

/// A namespace's segmentation settings.
#[derive(SimpleObject, Clone, Debug)]
pub(crate) struct Segmentation {
    /// Distance threshold.
    pub threshold: f64,
    /// Hysteresis.
    pub hysteresis: f64,
    /// Longest pause within a segment, in seconds.
    pub max_gap_seconds: i64,
    /// Shortest segment a shift may close.
    pub min_length: u32,
}

impl From<SegmentConfig> for Segmentation {
    fn from(c: SegmentConfig) -> Self {
        Segmentation {
            threshold: round6(c.threshold),
            hysteresis: round6(c.hysteresis),
            max_gap_seconds: c.max_gap_micros / 1_000_000,
            min_length: c.min_len,
        }
    }
}

/// An `f32` setting as written (0.6, not 0.6000000238418579).
pub(crate) fn round6(x: f32) -> f64 {
    (f64::from(x) * 1e6).round() / 1e6
}
