//! Day arithmetic the languages share: months, weeks and weekends, a unit shifted from a
//! day ("last week", "지난주", "la semana pasada") and a unit counted back or on ("three
//! weeks ago", "이틀 전", "hace un mes").

use chrono::{Datelike, Duration, NaiveDate, Weekday};

/// How precise an expression is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Grain {
    /// Some days (a date, yesterday, a week, a weekend).
    Day,
    /// A calendar month.
    Month,
    /// A calendar year.
    Year,
}

/// Longest span of days a `Day` mention may cover (a week and a bit).
const MAX_DAYS: i64 = 10;

/// The days an expression stands for, before it has a place in a text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Days {
    /// First day meant.
    pub from: NaiveDate,
    /// Last day meant (inclusive).
    pub to: NaiveDate,
    /// Its precision.
    pub grain: Grain,
}

/// What a relative expression counts in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Unit {
    Day,
    /// Only "last night": the day before.
    Night,
    Week,
    Weekend,
    Month,
    Year,
    Weekday(Weekday),
}

/// Some days, at most `MAX_DAYS` of them.
pub(super) fn days(from: NaiveDate, to: NaiveDate) -> Option<Days> {
    ((to - from).num_days() < MAX_DAYS && from <= to).then_some(Days { from, to, grain: Grain::Day })
}

/// One day.
pub(super) fn day(d: NaiveDate) -> Days {
    Days { from: d, to: d, grain: Grain::Day }
}

/// The calendar month that begins on `start`.
pub(super) fn month(start: NaiveDate) -> Days {
    Days { from: start, to: month_end(start), grain: Grain::Month }
}

/// The calendar year `y`.
pub(super) fn year(y: i32) -> Option<Days> {
    Some(Days {
        from: NaiveDate::from_ymd_opt(y, 1, 1)?,
        to: NaiveDate::from_ymd_opt(y, 12, 31)?,
        grain: Grain::Year,
    })
}

pub(super) fn month_start(year: i32, month: u32) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(year, month, 1)
}

fn month_end(start: NaiveDate) -> NaiveDate {
    let (y, m) = if start.month() == 12 { (start.year() + 1, 1) } else { (start.year(), start.month() + 1) };
    month_start(y, m).map_or(start, |next| next - Duration::days(1))
}

/// The month `n` months after (before, if negative) `day`'s.
fn shift_month(day: NaiveDate, n: i64) -> Option<NaiveDate> {
    let index = i64::from(day.year()) * 12 + i64::from(day.month0()) + n;
    month_start(i32::try_from(index.div_euclid(12)).ok()?, u32::try_from(index.rem_euclid(12)).ok()? + 1)
}

/// Of the given month and day in the years around `reference`, the one nearest to it.
pub(super) fn nearest(reference: NaiveDate, month: u32, day: Option<u32>) -> Option<NaiveDate> {
    (-1..=1)
        .filter_map(|dy| {
            let y = reference.year() + dy;
            match day {
                Some(d) => NaiveDate::from_ymd_opt(y, month, d),
                None => month_start(y, month),
            }
        })
        .min_by_key(|d| (*d - reference).num_days().abs())
}

/// A month named without its year ("in June", "3월에", "en junio"), or a day of it: the
/// nearest such to `reference`.
pub(super) fn month_or_day(reference: NaiveDate, month_number: u32, day_number: Option<u32>) -> Option<Days> {
    let d = nearest(reference, month_number, day_number)?;
    Some(if day_number.is_some() { day(d) } else { month(d) })
}

/// The weekend (Saturday and Sunday) before `day`, or the one after it.
fn weekend(day: NaiveDate, after: bool) -> (NaiveDate, NaiveDate) {
    let today = i64::from(day.weekday().num_days_from_monday());
    let sat = if after {
        day + Duration::days(match (5 - today).rem_euclid(7) {
            0 => 7,
            n => n,
        })
    } else {
        // Days since the last Saturday (0 on a Saturday, 1 on a Sunday): inside a weekend,
        // the one before it.
        let since = (today - 5).rem_euclid(7);
        day - Duration::days(if since < 2 { since + 7 } else { since })
    };
    (sat, sat + Duration::days(1))
}

/// The Monday of `day`'s week.
fn monday(day: NaiveDate) -> NaiveDate {
    day - Duration::days(i64::from(day.weekday().num_days_from_monday()))
}

/// `unit` shifted from `day` by `step`: −1 for last, +1 for next, 0 for this.
pub(super) fn shifted(unit: Unit, day: NaiveDate, step: i64) -> Option<Days> {
    match unit {
        Unit::Weekday(wd) => {
            let (target, today) =
                (i64::from(wd.num_days_from_monday()), i64::from(day.weekday().num_days_from_monday()));
            let date = match step {
                -1 => {
                    day - Duration::days(match (today - target).rem_euclid(7) {
                        0 => 7,
                        n => n,
                    })
                }
                1 => {
                    day + Duration::days(match (target - today).rem_euclid(7) {
                        0 => 7,
                        n => n,
                    })
                }
                _ => day + Duration::days((target - today).rem_euclid(7)),
            };
            days(date, date)
        }
        Unit::Week => {
            let (from, to) = match step {
                -1 => (day - Duration::days(7), day - Duration::days(1)),
                1 => (day + Duration::days(1), day + Duration::days(7)),
                _ => (monday(day), monday(day) + Duration::days(6)),
            };
            days(from, to)
        }
        Unit::Weekend => {
            let (sat, sun) = match step {
                -1 => weekend(day, false),
                1 => weekend(day, true),
                _ if matches!(day.weekday(), Weekday::Sat | Weekday::Sun) => {
                    let sat = monday(day) + Duration::days(5);
                    (sat, sat + Duration::days(1))
                }
                _ => weekend(day, true),
            };
            days(sat, sun)
        }
        Unit::Day => Some(self::day(day + Duration::days(step))),
        Unit::Night => (step == -1).then(|| self::day(day - Duration::days(1))),
        Unit::Month => Some(month(shift_month(day, step)?)),
        Unit::Year => year(day.year() + i32::try_from(step).ok()?),
    }
}

/// A weekday of the calendar week `step` weeks from `day`'s ("지난주 금요일", the Friday of
/// last week).
pub(super) fn weekday_of_week(day: NaiveDate, step: i64, wd: Weekday) -> Option<Days> {
    let d = monday(day) + Duration::days(7 * step + i64::from(wd.num_days_from_monday()));
    days(d, d)
}

/// `n` units before `reference`, or after it when `forward` ("three weeks ago", "이틀 후").
/// A vague count ("a few days", "며칠", "unos días") widens a count of days by one either
/// side; weeks are a week wide around their middle; months and years are whole.
pub(super) fn counted(n: i64, unit: Unit, reference: NaiveDate, vague: bool, forward: bool) -> Option<Days> {
    let sign = if forward { 1 } else { -1 };
    match unit {
        Unit::Day if vague => {
            let (a, b) =
                (reference + Duration::days(sign * (n + 1)), reference + Duration::days(sign * (n - 1)));
            days(a.min(b), a.max(b))
        }
        Unit::Day => Some(day(reference + Duration::days(sign * n))),
        Unit::Week => {
            let mid = reference + Duration::days(sign * 7 * n);
            days(mid - Duration::days(3), mid + Duration::days(3))
        }
        Unit::Month => Some(month(shift_month(reference, sign * n)?)),
        Unit::Year => year(reference.year() + i32::try_from(sign * n).ok()?),
        Unit::Night | Unit::Weekend | Unit::Weekday(_) => None,
    }
}
