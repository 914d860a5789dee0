//! What the analytics over entity histories answer, and the pure parts of computing it:
//! Allen's interval relations, calendar steps, and counting stretches of valid time at
//! steps. The stretches themselves come from slot resolution (a fact's effective
//! intervals), so every analytic follows the same rules as every other read.

use std::collections::BTreeMap;
use std::fmt;

use chrono::Months;

use crate::error::CoreError;
use crate::ids::{EntityId, FactId};
use crate::time::{Interval, TimeZone, Timestamp};
use crate::value::Value;

/// Most steps one series may have.
pub const MAX_STEPS: usize = 10_000;

/// Most pairs of stretches `overlaps` compares before it stops and says so.
pub const MAX_PAIR_CHECKS: u64 = 20_000_000;

/// One side of `NamespaceIndex::overlaps`: facts of a predicate, of one subject or
/// all, with one value or any.
#[derive(Clone, Debug, PartialEq)]
pub struct Side {
    /// The subject, or every subject of the predicate.
    pub subject: Option<EntityId>,
    /// The predicate.
    pub predicate: String,
    /// The value, or any.
    pub value: Option<Value>,
}

/// What an overlap read asks: pairs of facts, one of each side (of one value when
/// `same_value`), whose stretches in force stand in `relation`; at most `limit`.
#[derive(Clone, Debug, PartialEq)]
pub struct OverlapQuery {
    /// The first side.
    pub a: Side,
    /// The second side.
    pub b: Side,
    /// How a's stretch stands to b's.
    pub relation: Allen,
    /// Only pairs of one value.
    pub same_value: bool,
    /// The most pairs answered.
    pub limit: usize,
}

/// A value a slot held over one stretch of valid time, after supersession, ends,
/// negations and retractions; touching or overlapping stretches of the same value are one.
#[derive(Clone, Debug, PartialEq)]
pub struct Held {
    /// The value.
    pub value: Value,
    /// The stretch of valid time.
    pub valid: Interval,
    /// The facts in force somewhere in it, sorted.
    pub facts: Vec<FactId>,
}

/// One predicate of an entity's timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct Lane {
    /// The predicate.
    pub predicate: String,
    /// What the slot held, by start then value.
    pub held: Vec<Held>,
}

/// How long a slot held one value within a window.
#[derive(Clone, Debug, PartialEq)]
pub struct HeldFor {
    /// The value.
    pub value: Value,
    /// Total time held within the window, in microseconds.
    pub micros: i64,
    /// Separate stretches it was held in within the window.
    pub stretches: u32,
    /// Whether it still held at the window's end.
    pub at_end: bool,
}

/// Subjects in force at each step: all of them, or those with one value.
#[derive(Clone, Debug, PartialEq)]
pub struct SeriesGroup {
    /// The value counted, when grouped by value.
    pub value: Option<Value>,
    /// Subjects in force at each step.
    pub counts: Vec<u64>,
}

/// Value changes per step bucket, and the subjects that changed most.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ChangeCounts {
    /// Changes in each bucket `[steps[i], steps[i+1])`.
    pub counts: Vec<u64>,
    /// Subjects with most changes in the whole range, most first (then by id).
    pub top: Vec<(EntityId, u64)>,
}

/// One side of an overlap: a fact and the stretch it was in force.
#[derive(Clone, Debug, PartialEq)]
pub struct Stretch {
    /// The fact.
    pub fact: FactId,
    /// Its subject, as read at S.
    pub subject: EntityId,
    /// Its value.
    pub value: Value,
    /// Where it was in force.
    pub valid: Interval,
}

/// One group of an aggregate and how many facts in force it has.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// The subject, when grouped by subject.
    pub subject: Option<EntityId>,
    /// The predicate, when grouped by predicate.
    pub predicate: Option<String>,
    /// The value, when grouped by value.
    pub value: Option<Value>,
    /// Facts in force in the group.
    pub count: u64,
}

/// What an aggregate groups by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupBy {
    /// One group in all.
    Nothing,
    /// Per subject.
    Subject,
    /// Per predicate.
    Predicate,
    /// Per value.
    Value,
}

/// Allen's thirteen relations between two intervals, and `Intersects` (any shared time:
/// every relation but before, after, meets and met-by). Open-ended intervals end after
/// every instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Allen {
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
    /// They share some time.
    Intersects,
}

/// An end as a comparable key: open-ended after every instant.
fn end_key(i: &Interval) -> (bool, Timestamp) {
    match i.to() {
        Some(t) => (false, t),
        None => (true, Timestamp::MAX),
    }
}

impl Allen {
    /// The one basic relation in which `a` stands to `b`.
    pub fn between(a: &Interval, b: &Interval) -> Allen {
        let (a0, a1, b0, b1) = (a.from(), end_key(a), b.from(), end_key(b));
        let before = |end: (bool, Timestamp), start: Timestamp| !end.0 && end.1 < start;
        let meets = |end: (bool, Timestamp), start: Timestamp| !end.0 && end.1 == start;
        if before(a1, b0) {
            Allen::Before
        } else if before(b1, a0) {
            Allen::After
        } else if meets(a1, b0) {
            Allen::Meets
        } else if meets(b1, a0) {
            Allen::MetBy
        } else if a0 == b0 && a1 == b1 {
            Allen::Equals
        } else if a0 == b0 {
            if a1 < b1 { Allen::Starts } else { Allen::StartedBy }
        } else if a1 == b1 {
            if a0 > b0 { Allen::Finishes } else { Allen::FinishedBy }
        } else if a0 > b0 && a1 < b1 {
            Allen::During
        } else if a0 < b0 && a1 > b1 {
            Allen::Contains
        } else if a0 < b0 {
            Allen::Overlaps
        } else {
            Allen::OverlappedBy
        }
    }

    /// Whether `a` stands to `b` in this relation.
    pub fn holds(self, a: &Interval, b: &Interval) -> bool {
        let basic = Allen::between(a, b);
        match self {
            Allen::Intersects => !matches!(basic, Allen::Before | Allen::After | Allen::Meets | Allen::MetBy),
            relation => basic == relation,
        }
    }
}

/// A step between points of a series: calendar months and days (in the namespace's time
/// zone, so "a month" runs from the first of one month to the first of the next there),
/// then a fixed time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    months: u32,
    days: u32,
    micros: i64,
}

impl Step {
    /// Its length in microseconds when it has no months or years (whose length depends
    /// on where they fall); `None` otherwise.
    pub fn fixed_micros(&self) -> Option<i64> {
        (self.months == 0).then(|| i64::from(self.days) * crate::decay::DAY_MICROS + self.micros)
    }

    /// An ISO 8601 duration: `P1Y`, `P3M`, `P1W`, `P10D`, `PT6H`, `P1DT12H`, `PT0.5S`…
    /// (years, months, weeks, days, hours, minutes, seconds; no negative or zero step).
    pub fn parse(field: impl fmt::Display, text: &str) -> Result<Step, CoreError> {
        let invalid = |reason: &str| CoreError::InvalidTime {
            field: field.to_string(),
            value: text.to_owned(),
            reason: reason.to_owned(),
        };
        let rest = text
            .strip_prefix('P')
            .ok_or_else(|| invalid("a step is an ISO 8601 duration such as P1M or PT1H"))?;
        let (date, time) = match rest.split_once('T') {
            Some((d, t)) if !t.is_empty() => (d, Some(t)),
            Some(_) => return Err(invalid("nothing follows T")),
            None => (rest, None),
        };
        let mut step = Step { months: 0, days: 0, micros: 0 };
        let mut any = false;
        let mut parse_part = |part: &str, units: &[(char, &str)]| -> Result<(), CoreError> {
            let mut number = String::new();
            let mut last = 0;
            for c in part.chars() {
                if c.is_ascii_digit() || c == '.' {
                    number.push(c);
                    continue;
                }
                let Some(rank) = units.iter().position(|(u, _)| *u == c) else {
                    return Err(invalid(&format!("unknown unit {c:?}")));
                };
                if rank < last || number.is_empty() {
                    return Err(invalid("units must come in order, each after its number"));
                }
                last = rank + 1;
                let unit = units[rank].1;
                let whole = || {
                    number
                        .parse::<u32>()
                        .map_err(|_| invalid(&format!("{unit} must be a whole number under 2^32")))
                };
                let overflow = || invalid("the step is too long");
                match unit {
                    "years" => {
                        step.months = whole()?
                            .checked_mul(12)
                            .and_then(|m| step.months.checked_add(m))
                            .ok_or_else(overflow)?
                    }
                    "months" => step.months = step.months.checked_add(whole()?).ok_or_else(overflow)?,
                    "weeks" => {
                        step.days = whole()?
                            .checked_mul(7)
                            .and_then(|d| step.days.checked_add(d))
                            .ok_or_else(overflow)?
                    }
                    "days" => step.days = step.days.checked_add(whole()?).ok_or_else(overflow)?,
                    _ => {
                        let scale = match unit {
                            "hours" => 3_600e6,
                            "minutes" => 60e6,
                            _ => 1e6,
                        };
                        let value: f64 =
                            number.parse().map_err(|_| invalid(&format!("bad number of {unit}")))?;
                        let micros = (value * scale).round();
                        if !micros.is_finite() || micros > 1e17 {
                            return Err(overflow());
                        }
                        step.micros = step.micros.checked_add(micros as i64).ok_or_else(overflow)?;
                    }
                }
                any = true;
                number.clear();
            }
            if number.is_empty() { Ok(()) } else { Err(invalid("a number lacks its unit")) }
        };
        parse_part(date, &[('Y', "years"), ('M', "months"), ('W', "weeks"), ('D', "days")])?;
        if let Some(time) = time {
            parse_part(time, &[('H', "hours"), ('M', "minutes"), ('S', "seconds")])?;
        }
        if !any || (step.months == 0 && step.days == 0 && step.micros == 0) {
            return Err(invalid("a step must be longer than zero"));
        }
        Ok(step)
    }

    /// `from + n` steps, in `tz`; `None` past the representable range.
    fn nth(self, from: Timestamp, n: u32, tz: &TimeZone) -> Option<Timestamp> {
        let utc = from.to_datetime();
        let shifted = |months: u32, days: u32| -> Option<chrono::DateTime<chrono::Utc>> {
            fn local<Z: chrono::TimeZone>(
                zone: &Z,
                utc: chrono::DateTime<chrono::Utc>,
                months: u32,
                days: u32,
            ) -> Option<chrono::DateTime<chrono::Utc>> {
                let naive = utc.with_timezone(zone).naive_local();
                let moved = naive
                    .checked_add_months(Months::new(months))?
                    .checked_add_days(chrono::Days::new(days.into()))?;
                // A local time skipped by a clock change is read after the change.
                let at = zone
                    .from_local_datetime(&moved)
                    .earliest()
                    .or_else(|| zone.from_local_datetime(&(moved + chrono::Duration::hours(1))).earliest())?;
                Some(at.with_timezone(&chrono::Utc))
            }
            match tz {
                TimeZone::Utc => local(&chrono::Utc, utc, months, days),
                TimeZone::Fixed(secs) => local(&chrono::FixedOffset::east_opt(*secs)?, utc, months, days),
                TimeZone::Named(zone) => local(zone, utc, months, days),
            }
        };
        let months = self.months.checked_mul(n)?;
        let days = self.days.checked_mul(n)?;
        let moved = if months == 0 && days == 0 { utc } else { shifted(months, days)? };
        Timestamp::from_datetime(moved).checked_add_micros(self.micros.checked_mul(i64::from(n))?)
    }

    /// The points `from, from + step, …` before `to` (at most [`MAX_STEPS`]).
    pub fn points(
        self,
        field: impl fmt::Display,
        from: Timestamp,
        to: Timestamp,
        tz: &TimeZone,
    ) -> Result<Vec<Timestamp>, CoreError> {
        if from >= to {
            return Err(CoreError::InvalidInterval {
                field: "from".into(),
                from: from.to_string(),
                to: to.to_string(),
            });
        }
        let mut points: Vec<Timestamp> = Vec::new();
        for n in 0.. {
            match self.nth(from, n, tz) {
                Some(t) if t < to => {
                    if points.len() == MAX_STEPS {
                        // The count, from the first step's length (exact for fixed steps).
                        let first = (points[1].as_micros() - points[0].as_micros()).max(1);
                        let span = i128::from(to.as_micros()) - i128::from(from.as_micros());
                        let len = (span + i128::from(first) - 1) / i128::from(first);
                        return Err(CoreError::TooLong {
                            field: field.to_string(),
                            len: usize::try_from(len).unwrap_or(usize::MAX),
                            unit: "steps",
                            max: MAX_STEPS,
                        });
                    }
                    points.push(t);
                }
                _ => break,
            }
        }
        Ok(points)
    }
}

/// The ends of many intervals, sorted apart: how many contain an instant is two binary
/// searches, however many intervals there are.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Endpoints {
    starts: Vec<Timestamp>,
    ends: Vec<Timestamp>,
}

impl Endpoints {
    /// The endpoints of `intervals`.
    pub fn new(intervals: impl IntoIterator<Item = Interval>) -> Self {
        let (mut starts, mut ends) = (Vec::new(), Vec::new());
        for i in intervals {
            starts.push(i.from());
            ends.extend(i.to());
        }
        starts.sort_unstable();
        ends.sort_unstable();
        Endpoints { starts, ends }
    }

    /// How many of the intervals contain `t`: those started at or before it, less those
    /// ended at or before it (an interval ended by `t` started before it).
    pub fn count_at(&self, t: Timestamp) -> u64 {
        let started = self.starts.partition_point(|s| *s <= t);
        let ended = self.ends.partition_point(|e| *e <= t);
        (started - ended) as u64
    }

    /// The endpoints of each key's stretches joined where they touch or overlap: how many
    /// keys have a stretch containing an instant (as [`count_at_points`] counts them).
    pub fn of_unions<K: Ord>(stretches: impl IntoIterator<Item = (K, Interval)>) -> Self {
        let mut by_key: BTreeMap<K, Vec<Interval>> = BTreeMap::new();
        for (k, i) in stretches {
            by_key.entry(k).or_default().push(i);
        }
        Endpoints::new(by_key.into_values().flat_map(union))
    }

    /// These endpoints less those of `removed` and with those of `added` (as multisets):
    /// the sweep of a set of intervals after some of them changed, in one pass over the
    /// sorted lists. `None` when `removed` holds an endpoint these do not.
    pub fn changed(&self, removed: &Endpoints, added: &Endpoints) -> Option<Endpoints> {
        Some(Endpoints {
            starts: change_sorted(&self.starts, &removed.starts, &added.starts)?,
            ends: change_sorted(&self.ends, &removed.ends, &added.ends)?,
        })
    }

    /// How many intervals there are.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        (self.starts.capacity() + self.ends.capacity()) * std::mem::size_of::<Timestamp>()
    }
}

/// The sorted `base` less the sorted `removed` and merged with the sorted `added`, each
/// element counted as often as it occurs; `None` when `removed` is not within `base`.
fn change_sorted(base: &[Timestamp], removed: &[Timestamp], added: &[Timestamp]) -> Option<Vec<Timestamp>> {
    let mut out = Vec::with_capacity((base.len() + added.len()).saturating_sub(removed.len()));
    let mut gone = removed.iter().peekable();
    let mut new = added.iter().peekable();
    for &b in base {
        while let Some(&&a) = new.peek() {
            if a > b {
                break;
            }
            out.push(a);
            new.next();
        }
        match gone.peek() {
            Some(&&r) if r == b => {
                gone.next();
            }
            Some(&&r) if r < b => return None,
            _ => out.push(b),
        }
    }
    if gone.next().is_some() {
        return None;
    }
    out.extend(new);
    Some(out)
}

/// For each point, how many of `stretches` contain it, counting each key once
/// (a subject whose stretches overlap is one subject). `points` is sorted.
pub fn count_at_points<K: Ord + Copy>(
    stretches: impl IntoIterator<Item = (K, Interval)>,
    points: &[Timestamp],
) -> Vec<u64> {
    // Union each key's stretches first, then add one over the points each piece covers.
    let mut by_key: BTreeMap<K, Vec<Interval>> = BTreeMap::new();
    for (k, i) in stretches {
        by_key.entry(k).or_default().push(i);
    }
    let mut delta = vec![0i64; points.len() + 1];
    for (_, stretches) in by_key {
        for piece in union(stretches) {
            let first = points.partition_point(|p| *p < piece.from());
            let past = piece.to().map_or(points.len(), |to| points.partition_point(|p| *p < to));
            if first < past {
                delta[first] += 1;
                delta[past] -= 1;
            }
        }
    }
    let mut running = 0i64;
    delta[..points.len()]
        .iter()
        .map(|d| {
            running += d;
            running.max(0) as u64
        })
        .collect()
}

/// Labelled intervals joined where they touch or overlap, each joined piece with its
/// labels folded by `absorb`: sorted, disjoint.
pub fn join<L>(mut pieces: Vec<(Interval, L)>, mut absorb: impl FnMut(&mut L, L)) -> Vec<(Interval, L)> {
    pieces.sort_by_key(|(i, _)| (i.from(), end_key(i)));
    let mut out: Vec<(Interval, L)> = Vec::with_capacity(pieces.len());
    for (i, label) in pieces {
        if let Some((last, labels)) = out.last_mut()
            && last.to().is_none_or(|end| i.from() <= end)
        {
            let to = if end_key(&i) > end_key(last) { i.to() } else { last.to() };
            *last = Interval::between(last.from(), to);
            absorb(labels, label);
            continue;
        }
        out.push((i, label));
    }
    out
}

/// The union of intervals: sorted, disjoint, touching ones joined.
fn union(stretches: Vec<Interval>) -> Vec<Interval> {
    join(stretches.into_iter().map(|i| (i, ())).collect(), |_, ()| {}).into_iter().map(|(i, ())| i).collect()
}

/// `interval` clipped to `[from, to)`, if anything is left.
pub fn clip(interval: &Interval, from: Timestamp, to: Timestamp) -> Option<Interval> {
    let start = interval.from().max(from);
    let end = interval.to().map_or(to, |e| e.min(to));
    (start < end).then(|| Interval::between(start, Some(end)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn t(s: &str) -> Timestamp {
        Timestamp::parse("t", s, &TimeZone::Utc).unwrap()
    }

    fn i(a: i64, b: Option<i64>) -> Interval {
        Interval::new("i", Timestamp::from_micros(a), b.map(Timestamp::from_micros)).unwrap()
    }

    #[test]
    fn changed_endpoints_equal_those_of_the_changed_intervals() {
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % n
        };
        for _ in 0..200 {
            let mut all: Vec<Interval> = (0..next(40))
                .map(|_| {
                    let a = next(20) as i64;
                    i(a, (next(3) > 0).then(|| a + 1 + next(10) as i64))
                })
                .collect();
            let before = Endpoints::new(all.clone());
            let mut removed = Vec::new();
            for _ in 0..next(5) {
                if !all.is_empty() {
                    removed.push(all.remove(next(all.len() as u64) as usize));
                }
            }
            let added: Vec<Interval> = (0..next(5)).map(|_| i(next(25) as i64, None)).collect();
            all.extend(added.clone());
            let changed = before.changed(&Endpoints::new(removed), &Endpoints::new(added)).unwrap();
            assert_eq!(changed, Endpoints::new(all));
        }
        // Per key, joined: as `count_at_points` counts.
        let keyed: Vec<(u8, Interval)> =
            (0..60).map(|_| (next(6) as u8, i(next(20) as i64, (next(2) == 0).then_some(25)))).collect();
        let points: Vec<Timestamp> = (0..26).map(Timestamp::from_micros).collect();
        let unions = Endpoints::of_unions(keyed.clone());
        let counted: Vec<u64> = points.iter().map(|p| unions.count_at(*p)).collect();
        assert_eq!(counted, count_at_points(keyed, &points));
        // Removing what is not there is refused.
        let one = Endpoints::new([i(5, Some(9))]);
        assert_eq!(one.changed(&Endpoints::new([i(4, None)]), &Endpoints::default()), None);
        assert_eq!(one.changed(&Endpoints::new([i(5, Some(10))]), &Endpoints::default()), None);
    }

    #[test]
    fn allen_relations_of_every_kind() {
        let cases = [
            (i(0, Some(2)), i(3, Some(5)), Allen::Before),
            (i(3, Some(5)), i(0, Some(2)), Allen::After),
            (i(0, Some(3)), i(3, Some(5)), Allen::Meets),
            (i(3, Some(5)), i(0, Some(3)), Allen::MetBy),
            (i(0, Some(4)), i(3, Some(5)), Allen::Overlaps),
            (i(3, Some(6)), i(0, Some(4)), Allen::OverlappedBy),
            (i(0, Some(2)), i(0, Some(5)), Allen::Starts),
            (i(0, None), i(0, Some(5)), Allen::StartedBy),
            (i(1, Some(2)), i(0, None), Allen::During),
            (i(0, None), i(1, Some(2)), Allen::Contains),
            (i(3, None), i(0, None), Allen::Finishes),
            (i(0, Some(5)), i(3, Some(5)), Allen::FinishedBy),
            (i(0, None), i(0, None), Allen::Equals),
        ];
        for (a, b, want) in cases {
            assert_eq!(Allen::between(&a, &b), want, "{a} {b}");
            assert!(want.holds(&a, &b));
            let shares = !matches!(want, Allen::Before | Allen::After | Allen::Meets | Allen::MetBy);
            assert_eq!(Allen::Intersects.holds(&a, &b), shares, "{a} {b}");
        }
    }

    #[test]
    fn calendar_steps_follow_the_time_zone() {
        let month = Step::parse("step", "P1M").unwrap();
        let points = month
            .points("from", t("2024-01-31T00:00:00Z"), t("2024-05-01T00:00:00Z"), &TimeZone::Utc)
            .unwrap();
        // Each from the start, clamped to the month's end: no drift after February.
        let want = ["2024-01-31", "2024-02-29", "2024-03-31", "2024-04-30"];
        let got: Vec<String> = points.iter().map(|p| p.to_string()[..10].to_owned()).collect();
        assert_eq!(got, want);
        let paris = TimeZone::parse("tz", "Europe/Paris").unwrap();
        let day = Step::parse("step", "P1D").unwrap();
        let points = day
            .points("from", t("2024-03-30T00:00:00+01:00"), t("2024-04-01T00:00:00+02:00"), &paris)
            .unwrap();
        // Local midnights; the day of the clock change has 23 hours.
        assert_eq!(points.len(), 2);
        assert_eq!(points[1].as_micros() - points[0].as_micros(), 24 * 3_600_000_000);
        let hours = Step::parse("step", "PT1H30M").unwrap();
        let points = hours
            .points("from", t("2024-01-01T00:00:00Z"), t("2024-01-01T04:00:00Z"), &TimeZone::Utc)
            .unwrap();
        assert_eq!(points.len(), 3);
        for bad in
            ["", "P", "1M", "PT", "P1H", "PM1", "P0D", "P1.5M", "P1D2Y", "PT1S2H", "P99999999999Y", "P-1D"]
        {
            assert!(Step::parse("step", bad).is_err(), "{bad}");
        }
        let second = Step::parse("step", "PT1S").unwrap();
        assert!(
            second
                .points("from", t("2000-01-01T00:00:00Z"), t("2001-01-01T00:00:00Z"), &TimeZone::Utc)
                .is_err()
        );
    }

    #[test]
    fn counts_at_points_count_each_key_once() {
        let points: Vec<Timestamp> = (0..6).map(|n| Timestamp::from_micros(n * 10)).collect();
        let stretches = [(1, i(0, Some(25))), (1, i(15, Some(35))), (2, i(30, None)), (3, i(51, None))];
        assert_eq!(count_at_points(stretches, &points), vec![1, 1, 1, 2, 1, 1]);
        assert_eq!(
            union(vec![i(5, Some(7)), i(0, Some(5)), i(9, None), i(10, Some(12))]),
            vec![i(0, Some(7)), i(9, None)]
        );
        assert_eq!(
            clip(&i(0, None), Timestamp::from_micros(3), Timestamp::from_micros(9)),
            Some(i(3, Some(9)))
        );
        assert_eq!(clip(&i(0, Some(3)), Timestamp::from_micros(3), Timestamp::from_micros(9)), None);
    }
}
