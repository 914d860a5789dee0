//! Analytics over entity histories at a pinned read point: the [`Store`] side of the
//! index's analytics (`ostrakon_index::analytics`), with their inputs checked and their
//! steps laid out in the namespace's time zone.

use ostrakon_core::{
    ChangeCounts, EntityId, Group, GroupBy, HeldFor, Lane, Namespace, OverlapQuery, SeriesGroup, Step,
    Stretch, Timestamp, Value,
};

use crate::error::read::ReadError;
use crate::limits::MAX_PAGE;
use crate::limits::MAX_TOP;
use crate::read::point::{Answer, ReadAt};
use crate::read::sweeps::What;
use crate::store::Store;

/// What a series read asks: how many subjects had `predicate` (with `value`, if given)
/// in force at each step of `[from, to)`; with `by_value`, one group per value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeriesQuery<'a> {
    /// The predicate.
    pub predicate: &'a str,
    /// Only this value, or any.
    pub value: Option<&'a Value>,
    /// The first point.
    pub from: Timestamp,
    /// Where the points stop (excluded).
    pub to: Timestamp,
    /// The step between points.
    pub step: Step,
    /// One group per value.
    pub by_value: bool,
}

/// What a changes read asks: value changes of `predicate` (or of every predicate) per
/// step of `[from, to)`, and the `top` subjects that changed most.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChangesQuery<'a> {
    /// The predicate, or every one.
    pub predicate: Option<&'a str>,
    /// The first point.
    pub from: Timestamp,
    /// Where the points stop (excluded).
    pub to: Timestamp,
    /// The step between points.
    pub step: Step,
    /// How many of the subjects that changed most.
    pub top: usize,
}

/// Points of a series and its groups.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The steps, from `from` up to (not including) `to`.
    pub points: Vec<Timestamp>,
    /// Counts at each point: one group, or one per value.
    pub groups: Vec<SeriesGroup>,
}

/// Change counts per bucket of a series.
#[derive(Clone, Debug, PartialEq)]
pub struct Changes {
    /// Where each bucket starts; the last ends at the range's end.
    pub points: Vec<Timestamp>,
    /// The counts and the subjects that changed most.
    pub counts: ChangeCounts,
}

/// Pairs of stretches in a relation.
#[derive(Clone, Debug, PartialEq)]
pub struct Overlaps {
    /// The pairs, by a's start then b's.
    pub pairs: Vec<(Stretch, Stretch)>,
    /// Whether more pairs were left out (the limit, or [`ostrakon_core::MAX_PAIR_CHECKS`] comparisons).
    pub truncated: bool,
}

impl Store {
    /// `Reader::timeline`, positional.
    pub(crate) fn timeline(
        &self,
        ns: &Namespace,
        subject: EntityId,
        predicates: Option<&[String]>,
        at: ReadAt,
    ) -> Result<Answer<Vec<Lane>>, ReadError> {
        self.read_at(ns, at, |index, view| index.timeline(subject, predicates, view))
    }

    /// `Reader::durations`, positional.
    pub(crate) fn durations(
        &self,
        ns: &Namespace,
        subject: EntityId,
        predicate: &str,
        from: Option<Timestamp>,
        to: Option<Timestamp>,
        at: ReadAt,
    ) -> Result<Answer<Vec<HeldFor>>, ReadError> {
        if let (Some(f), Some(t)) = (from, to) {
            window(f, t)?;
        }
        let answer = self.read_at(ns, at, |index, view| {
            let to = to.unwrap_or(view.valid_at);
            let from = from.unwrap_or(Timestamp::MIN);
            window(from, to).map(|()| index.durations(subject, predicate, from, to, view))
        })?;
        Ok(Answer { value: answer.value?, basis: answer.basis })
    }

    /// `Reader::in_force_series`, positional.
    pub(crate) fn in_force_series(
        &self,
        ns: &Namespace,
        query: &SeriesQuery<'_>,
        at: ReadAt,
    ) -> Result<Answer<Series>, ReadError> {
        let SeriesQuery { predicate, value, from, to, step, by_value } = *query;
        let points = step.points("step", from, to, &self.time_zone(ns)?)?;
        if value.is_none() && !by_value {
            // Subjects in force at each step, from the sweep kept (or carried forward) for S.
            let shard = self.shard(ns)?;
            return self.read_at(ns, at, move |index, view| {
                let counts = match &shard {
                    Some(shard) => {
                        let sweep = shard.sweeps.get(index, What::Subjects(predicate), view);
                        points.iter().map(|p| sweep.count_at(*p)).collect()
                    }
                    None => vec![0; points.len()],
                };
                Series { groups: vec![ostrakon_core::SeriesGroup { value: None, counts }], points }
            });
        }
        self.read_at(ns, at, move |index, view| {
            let groups = index.in_force_series(predicate, value, &points, by_value, view);
            Series { points, groups }
        })
    }

    /// `Reader::changes`, positional.
    pub(crate) fn changes(
        &self,
        ns: &Namespace,
        query: &ChangesQuery<'_>,
        at: ReadAt,
    ) -> Result<Answer<Changes>, ReadError> {
        let ChangesQuery { predicate, from, to, step, top } = *query;
        if top > MAX_TOP {
            return Err(ReadError::LimitExceeded {
                field: "top".into(),
                value: top as u64,
                max: MAX_TOP as u64,
            });
        }
        let points = step.points("step", from, to, &self.time_zone(ns)?)?;
        self.read_at(ns, at, move |index, view| {
            let counts = index.changes(predicate, &points, to, top, view);
            Changes { points, counts }
        })
    }

    /// `Reader::overlaps`, positional.
    pub(crate) fn overlaps(
        &self,
        ns: &Namespace,
        query: &OverlapQuery,
        at: ReadAt,
    ) -> Result<Answer<Overlaps>, ReadError> {
        if query.limit == 0 || query.limit > MAX_PAGE {
            return Err(ReadError::LimitExceeded {
                field: "limit".into(),
                value: query.limit as u64,
                max: MAX_PAGE as u64,
            });
        }
        self.read_at(ns, at, |index, view| {
            let (pairs, truncated) = index.overlaps(query, view);
            Overlaps { pairs, truncated }
        })
    }

    /// `Reader::aggregate`, positional.
    pub(crate) fn aggregate(
        &self,
        ns: &Namespace,
        predicate: Option<&str>,
        group_by: GroupBy,
        at: ReadAt,
    ) -> Result<Answer<Vec<Group>>, ReadError> {
        if group_by != GroupBy::Nothing {
            return self.read_at(ns, at, |index, view| index.aggregate(predicate, group_by, view));
        }
        let shard = self.shard(ns)?;
        self.read_at(ns, at, |index, view| {
            let count = match &shard {
                Some(shard) => shard.sweeps.get(index, What::Facts(predicate), view).count_at(view.valid_at),
                None => 0,
            };
            vec![Group { subject: None, predicate: None, value: None, count }]
        })
    }
}

fn window(from: Timestamp, to: Timestamp) -> Result<(), ReadError> {
    if from < to {
        Ok(())
    } else {
        Err(ostrakon_core::CoreError::InvalidInterval {
            field: "from".into(),
            from: from.to_string(),
            to: to.to_string(),
        }
        .into())
    }
}
