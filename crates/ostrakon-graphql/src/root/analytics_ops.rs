//! Analytics over entity histories: timelines, durations, series of subjects in force,
//! change counts, interval relations and aggregates, each at one pinned read point and
//! resolved by the same rules as every other read.

use async_graphql::{Context, Enum, ID, Object, Result, SimpleObject};

use crate::exec::access::Mode;
use crate::exec::context::Pin;
use crate::exec::context::Start;
use crate::exec::context::engine;
use crate::exec::context::read_at;
use crate::exec::context::start;
use crate::exec::context::store;
use crate::objects::graph::EntityObject;
use crate::objects::graph::FactObject;
use crate::objects::graph::ValueObject;
use crate::types::info::Interval;
use crate::types::info::interval;
use crate::types::input::EntityRefInput;
use crate::types::input::ValueInput;
use crate::types::input::existing_entity;
use crate::types::input::object_value;
use crate::types::input::time;
use crate::types::paging::Basis;
use crate::types::paging::page_size;
use crate::types::scalars::DateTime;
use ostrakon_core::FactId;
use ostrakon_core::GroupBy;
use ostrakon_core::OverlapQuery;
use ostrakon_core::Side;
use ostrakon_core::Step;
use ostrakon_engine::views::{ChangesQuery, SeriesQuery};
use std::sync::Arc;
/// Queries: analytics over the histories of entities.
#[derive(Default)]
pub(super) struct AnalyticsQuery;

/// What a series counts separately.
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug, Default)]
pub enum SeriesGroupBy {
    /// One count per step.
    #[default]
    Nothing,
    /// One count per step for each value.
    Value,
}

/// What an aggregate counts separately.
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug, Default)]
#[graphql(remote = "ostrakon_core::GroupBy")]
pub enum AggregateGroupBy {
    /// One count in all.
    #[default]
    Nothing,
    /// Per subject.
    Subject,
    /// Per predicate.
    Predicate,
    /// Per value.
    Value,
}

/// How interval A stands to interval B (Allen's relations; open ends last forever).
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
#[graphql(remote = "ostrakon_core::Allen")]
pub enum AllenRelation {
    /// A ends before B starts.
    Before,
    /// A starts after B ends.
    After,
    /// A ends where B starts.
    Meets,
    /// A starts where B ends.
    MetBy,
    /// A starts first and ends inside B.
    Overlaps,
    /// B starts first and ends inside A.
    OverlappedBy,
    /// Same start, A ends first.
    Starts,
    /// Same start, B ends first.
    StartedBy,
    /// A lies strictly inside B.
    During,
    /// B lies strictly inside A.
    Contains,
    /// Same end, A starts later.
    Finishes,
    /// Same end, B starts later.
    FinishedBy,
    /// Same start and end.
    Equals,
    /// They share some time: any relation but before, after, meets and met-by ("while").
    Intersects,
}

/// One side of `overlaps`: facts of a predicate, of one entity or of every subject, with
/// one value or any.
#[derive(async_graphql::InputObject, Clone, Debug)]
pub(super) struct OverlapSide {
    /// The subject; every subject of the predicate when absent.
    pub entity: Option<EntityRefInput>,
    /// The predicate.
    pub predicate: String,
    /// The value; any when absent.
    pub value: Option<ValueInput>,
}

/// An entity's timeline.
#[derive(SimpleObject)]
pub(super) struct Timeline {
    /// What it was read from.
    pub basis: Basis,
    /// The entity.
    pub entity: Option<EntityObject>,
    /// One lane per predicate.
    pub lanes: Vec<Lane>,
}

/// What one predicate of an entity held over valid time.
#[derive(SimpleObject)]
pub(super) struct Lane {
    /// The predicate.
    pub predicate: String,
    /// The stretches, by start then value.
    pub held: Vec<Held>,
}

/// A value in force over one stretch of valid time (touching stretches of one value
/// joined), with the facts in force in it.
#[derive(SimpleObject)]
#[graphql(complex)]
pub(super) struct Held {
    /// The value.
    pub value: ValueObject,
    /// The stretch.
    pub valid: Interval,
    #[graphql(skip)]
    pin: Arc<Pin>,
    #[graphql(skip)]
    ids: Vec<FactId>,
}

#[async_graphql::ComplexObject]
impl Held {
    /// The facts behind it.
    async fn fact_ids(&self) -> Vec<ID> {
        self.ids.iter().map(|f| ID(f.0.to_string())).collect()
    }

    /// The facts behind it, as read at the same point (the first `first` by id; a
    /// stretch has a few, so a timeline of many stretches costs little).
    async fn facts(&self, ctx: &Context<'_>, #[graphql(default = 10)] first: i32) -> Result<Vec<FactObject>> {
        let first = crate::types::paging::page_size(ctx, Some(first))?;
        Ok(FactObject::load_many(store(ctx)?, &self.pin, &self.ids[..first.min(self.ids.len())]))
    }
}

/// How long each value of a slot held.
#[derive(SimpleObject)]
pub(super) struct Durations {
    /// What it was read from.
    pub basis: Basis,
    /// The window's start (null: all time before `to`).
    pub from: Option<DateTime>,
    /// The window's end.
    pub to: DateTime,
    /// Per value, longest first.
    pub values: Vec<HeldFor>,
}

/// How long a value held within the window.
#[derive(SimpleObject)]
pub(super) struct HeldFor {
    /// The value.
    pub value: ValueObject,
    /// Time held, in seconds.
    pub seconds: f64,
    /// Separate stretches it was held in.
    pub stretches: u32,
    /// Whether it still held at the window's end.
    pub at_end: bool,
}

/// Subjects in force at each step.
#[derive(SimpleObject)]
pub(super) struct Series {
    /// What it was read from.
    pub basis: Basis,
    /// The steps.
    pub points: Vec<DateTime>,
    /// One group, or one per value (by value).
    pub groups: Vec<SeriesGroup>,
}

/// Counts at each step of a series.
#[derive(SimpleObject)]
pub(super) struct SeriesGroup {
    /// The value counted (grouped by value).
    pub value: Option<ValueObject>,
    /// Subjects in force at each point.
    pub counts: Vec<u64>,
}

/// Value changes per step.
#[derive(SimpleObject)]
pub(super) struct Changes {
    /// What it was read from.
    pub basis: Basis,
    /// Where each bucket starts; the last ends at `to`.
    pub points: Vec<DateTime>,
    /// Changes in each bucket.
    pub counts: Vec<u64>,
    /// The subjects with most changes over the whole range.
    pub top: Vec<SubjectChanges>,
}

/// A subject and how often its values changed.
#[derive(SimpleObject)]
pub(super) struct SubjectChanges {
    /// The subject's id.
    pub entity_id: ID,
    /// The subject.
    pub entity: Option<EntityObject>,
    /// Its changes in the range.
    pub changes: u64,
}

/// Pairs of facts in a relation.
#[derive(SimpleObject)]
pub(super) struct Overlaps {
    /// What it was read from.
    pub basis: Basis,
    /// The pairs, by a's start then b's.
    pub pairs: Vec<OverlapPair>,
    /// Whether pairs were left out (the limit, or too many comparisons).
    pub truncated: bool,
}

/// A fact of each side.
#[derive(SimpleObject)]
pub(super) struct OverlapPair {
    /// Of side a.
    pub a: Stretch,
    /// Of side b.
    pub b: Stretch,
}

/// A fact and one stretch where it is in force.
#[derive(SimpleObject)]
#[graphql(complex)]
pub(super) struct Stretch {
    /// Its subject.
    pub subject: Option<EntityObject>,
    /// Its value.
    pub value: ValueObject,
    /// Where it is in force.
    pub valid: Interval,
    #[graphql(skip)]
    pin: Arc<Pin>,
    #[graphql(skip)]
    id: FactId,
}

#[async_graphql::ComplexObject]
impl Stretch {
    /// The fact's id.
    async fn fact_id(&self) -> ID {
        ID(self.id.0.to_string())
    }

    /// The fact, as read at the same point.
    async fn fact(&self, ctx: &Context<'_>) -> Result<Option<FactObject>> {
        Ok(FactObject::load(store(ctx)?, &self.pin, self.id))
    }
}

/// Facts in force at one point, counted in groups.
#[derive(SimpleObject)]
pub(super) struct Aggregate {
    /// What it was read from.
    pub basis: Basis,
    /// The groups, most facts first.
    pub groups: Vec<AggregateGroup>,
}

/// One group of an aggregate.
#[derive(SimpleObject)]
pub(super) struct AggregateGroup {
    /// The subject (grouped by subject).
    pub subject: Option<EntityObject>,
    /// The predicate (grouped by predicate).
    pub predicate: Option<String>,
    /// The value (grouped by value).
    pub value: Option<ValueObject>,
    /// Facts in force in it.
    pub count: u64,
}

fn value(pin: &Arc<Pin>, v: ostrakon_core::Value) -> ValueObject {
    ValueObject { pin: Arc::clone(pin), value: v }
}

fn step(text: &str) -> Result<Step> {
    Step::parse("step", text).map_err(engine)
}

#[Object]
impl AnalyticsQuery {
    /// An entity's timeline: per predicate (those named, or all it has), the values in
    /// force over all valid time as known at knownAt, after supersession, ends,
    /// negations and retractions, with the facts behind each stretch. At most `first`
    /// lanes, and `first` stretches a lane (the earliest).
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn timeline(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        entity: EntityRefInput,
        predicates: Option<Vec<String>>,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
        #[graphql(default = 100)] first: i32,
    ) -> Result<Timeline> {
        let first = page_size(ctx, Some(first))?;
        let Start { ns, store } = start(ctx, &namespace, Mode::Read)?;
        let at = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, at.as_ref())?;
        let known = store.basis(&ns, at).map_err(engine)?;
        let subject = existing_entity(store, &ns, known, "entity", &entity)?;
        let answer =
            store.at(&ns, at).and_then(|r| r.timeline(subject, predicates.as_deref())).map_err(engine)?;
        let basis = (&answer.basis).into();
        let pin = Pin::new(ns, answer.basis);
        let lanes = answer
            .value
            .into_iter()
            .take(first)
            .map(|lane| Lane {
                predicate: lane.predicate,
                held: lane
                    .held
                    .into_iter()
                    .take(first)
                    .map(|h| Held {
                        value: value(&pin, h.value),
                        valid: interval(&h.valid),
                        pin: Arc::clone(&pin),
                        ids: h.facts,
                    })
                    .collect(),
            })
            .collect();
        Ok(Timeline { basis, entity: EntityObject::load(store, &pin, subject)?, lanes })
    }

    /// How long each value of one slot held within `[from, to)` (default: all time before
    /// validAt), longest first: "how long did Alice live in each city". The `first`
    /// longest.
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn durations(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        entity: EntityRefInput,
        predicate: String,
        from: Option<DateTime>,
        to: Option<DateTime>,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
        #[graphql(default = 100)] first: i32,
    ) -> Result<Durations> {
        let first = page_size(ctx, Some(first))?;
        let Start { ns, store } = start(ctx, &namespace, Mode::Read)?;
        let at = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, at.as_ref())?;
        let known = store.basis(&ns, at).map_err(engine)?;
        let subject = existing_entity(store, &ns, known, "entity", &entity)?;
        let from = from.as_ref().map(|t| time(store, &ns, "from", t)).transpose()?;
        let to = to.as_ref().map(|t| time(store, &ns, "to", t)).transpose()?;
        let answer =
            store.at(&ns, at).and_then(|r| r.durations(subject, &predicate, from, to)).map_err(engine)?;
        let basis = (&answer.basis).into();
        let end = to.unwrap_or(answer.basis.valid_at);
        let pin = Pin::new(ns, answer.basis);
        let values = answer
            .value
            .into_iter()
            .take(first)
            .map(|d| HeldFor {
                value: value(&pin, d.value),
                seconds: d.micros as f64 / 1e6,
                stretches: d.stretches,
                at_end: d.at_end,
            })
            .collect();
        Ok(Durations { basis, from: from.map(DateTime::from), to: end.into(), values })
    }

    /// How many subjects had `predicate` (with `value`, if given) in force at each step
    /// from `from` up to `to`, as known at knownAt: "how many customers were on the
    /// premium plan each month of 2024". `step` is an ISO 8601 duration (`P1M`, `P1Y`,
    /// `P7D`, `PT1H`); months and days follow the namespace's time zone. At most 10,000
    /// steps. `groupBy: VALUE` counts each value apart ("how many lived in each city"):
    /// the first `first` groups.
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn in_force_series(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        predicate: String,
        value: Option<ValueInput>,
        from: DateTime,
        to: DateTime,
        step: String,
        #[graphql(default)] group_by: SeriesGroupBy,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        #[graphql(default = 100)] first: i32,
    ) -> Result<Series> {
        let first = page_size(ctx, Some(first))?;
        let Start { ns, store } = start(ctx, &namespace, Mode::Read)?;
        let at = read_at(store, &ns, None, known_at.as_ref(), known_at_seq, None)?;
        let known = store.basis(&ns, at).map_err(engine)?;
        let wanted = value.as_ref().map(|v| object_value(store, &ns, known, "value", v)).transpose()?;
        let (from, to) = (time(store, &ns, "from", &from)?, time(store, &ns, "to", &to)?);
        let step = self::step(&step)?;
        let by_value = group_by == SeriesGroupBy::Value;
        let query = SeriesQuery { predicate: &predicate, value: wanted.as_ref(), from, to, step, by_value };
        let answer = store.at(&ns, at).and_then(|r| r.in_force_series(&query)).map_err(engine)?;
        let basis = (&answer.basis).into();
        let pin = Pin::new(ns, answer.basis);
        Ok(Series {
            basis,
            points: answer.value.points.into_iter().map(DateTime::from).collect(),
            groups: answer
                .value
                .groups
                .into_iter()
                .take(first)
                .map(|g| SeriesGroup { value: g.value.map(|v| self::value(&pin, v)), counts: g.counts })
                .collect(),
        })
    }

    /// How often the values in force of `predicate` (or of every predicate) changed in
    /// each step from `from` up to `to`, as known at knownAt, and the `top` subjects that
    /// changed most. A change is an instant where a slot's values in force change: a value
    /// starting, ending, or giving way to another (one change).
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn changes(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        predicate: Option<String>,
        from: DateTime,
        to: DateTime,
        step: String,
        #[graphql(default = 10)] top: u32,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
    ) -> Result<Changes> {
        let Start { ns, store } = start(ctx, &namespace, Mode::Read)?;
        let at = read_at(store, &ns, None, known_at.as_ref(), known_at_seq, None)?;
        let (from, to) = (time(store, &ns, "from", &from)?, time(store, &ns, "to", &to)?);
        let step = self::step(&step)?;
        let query = ChangesQuery { predicate: predicate.as_deref(), from, to, step, top: top as usize };
        let answer = store.at(&ns, at).and_then(|r| r.changes(&query)).map_err(engine)?;
        let basis = (&answer.basis).into();
        let pin = Pin::new(ns, answer.basis);
        let counts = answer.value.counts;
        Ok(Changes {
            basis,
            points: answer.value.points.into_iter().map(DateTime::from).collect(),
            counts: counts.counts,
            top: counts
                .top
                .into_iter()
                .map(|(id, changes)| {
                    let entity = EntityObject::load(store, &pin, id)?;
                    Ok(SubjectChanges { entity_id: ID(id.0.to_string()), entity, changes })
                })
                .collect::<Result<_>>()?,
        })
    }

    /// Pairs of facts, one of each side, whose stretches in force stand in `relation`:
    /// "who worked at ACME while Bob managed it" is a = {predicate: "worksAt", value:
    /// ACME}, b = {entity: Bob, predicate: "manages", value: ACME}, relation INTERSECTS.
    /// With `sameValue`, only pairs of one value ("who played for the same club at the same
    /// time as X": a = {predicate: "playsFor"}, b = {entity: X, predicate: "playsFor"}).
    /// At most `limit` pairs (default 100, at most 1000); `truncated` says when more were
    /// left, or when 20 million comparisons were reached.
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn overlaps(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        a: OverlapSide,
        b: OverlapSide,
        relation: AllenRelation,
        #[graphql(default = false)] same_value: bool,
        #[graphql(default = 100)] limit: u32,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
    ) -> Result<Overlaps> {
        let Start { ns, store } = start(ctx, &namespace, Mode::Read)?;
        let at = read_at(store, &ns, None, known_at.as_ref(), known_at_seq, None)?;
        let known = store.basis(&ns, at).map_err(engine)?;
        let side = |name: &str, s: &OverlapSide| -> Result<Side> {
            Ok(Side {
                subject: s
                    .entity
                    .as_ref()
                    .map(|e| existing_entity(store, &ns, known, &format!("{name}.entity"), e))
                    .transpose()?,
                predicate: s.predicate.clone(),
                value: s
                    .value
                    .as_ref()
                    .map(|v| object_value(store, &ns, known, &format!("{name}.value"), v))
                    .transpose()?,
            })
        };
        let (a, b) = (side("a", &a)?, side("b", &b)?);
        let query = OverlapQuery { a, b, relation: relation.into(), same_value, limit: limit as usize };
        let answer = store.at(&ns, at).and_then(|r| r.overlaps(&query)).map_err(engine)?;
        let basis = (&answer.basis).into();
        let pin = Pin::new(ns, answer.basis);
        let stretch = |s: ostrakon_core::Stretch| -> Result<Stretch> {
            Ok(Stretch {
                subject: EntityObject::load(store, &pin, s.subject)?,
                value: value(&pin, s.value),
                valid: interval(&s.valid),
                pin: Arc::clone(&pin),
                id: s.fact,
            })
        };
        Ok(Overlaps {
            basis,
            pairs: answer
                .value
                .pairs
                .into_iter()
                .map(|(x, y)| Ok(OverlapPair { a: stretch(x)?, b: stretch(y)? }))
                .collect::<Result<_>>()?,
            truncated: answer.value.truncated,
        })
    }

    /// Facts in force at validAt as known at knownAt (of `predicate`, or all), counted in
    /// groups, most first: the first `first` groups.
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn aggregate(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        predicate: Option<String>,
        #[graphql(default)] group_by: AggregateGroupBy,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        #[graphql(default = 100)] first: i32,
    ) -> Result<Aggregate> {
        let first = page_size(ctx, Some(first))?;
        let Start { ns, store } = start(ctx, &namespace, Mode::Read)?;
        let at = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, None)?;
        let answer = store
            .at(&ns, at)
            .and_then(|r| r.aggregate(predicate.as_deref(), GroupBy::from(group_by)))
            .map_err(engine)?;
        let basis = (&answer.basis).into();
        let pin = Pin::new(ns, answer.basis);
        let groups = answer
            .value
            .into_iter()
            .take(first)
            .map(|g| {
                Ok(AggregateGroup {
                    subject: g.subject.map(|id| EntityObject::load(store, &pin, id)).transpose()?.flatten(),
                    predicate: g.predicate,
                    value: g.value.map(|v| value(&pin, v)),
                    count: g.count,
                })
            })
            .collect::<Result<_>>()?;
        Ok(Aggregate { basis, groups })
    }
}
