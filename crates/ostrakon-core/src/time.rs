//! Instants, intervals and the parsing of times as clients and data sets write them.
//!
//! Every instant is a UTC microsecond count since the Unix epoch. Inputs are RFC 3339
//! with an offset, a local date-time, a date, or a partial date (`2014`, `2014-05`,
//! YAGO's `19##-##-##`, negative and three-digit years); a date or partial date means
//! the start of its span in the namespace's time zone. Nothing here reads a clock.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Datelike, LocalResult, NaiveDate, NaiveDateTime, TimeZone as _, Utc};
use serde::{Deserialize, Serialize};

use crate::error::CoreError;

/// A UTC instant with microsecond precision (the default is the Unix epoch).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Timestamp(i64);

impl Timestamp {
    /// The Unix epoch.
    pub const EPOCH: Timestamp = Timestamp(0);
    /// The smallest representable instant.
    pub const MIN: Timestamp = Timestamp(i64::MIN);
    /// The largest representable instant.
    pub const MAX: Timestamp = Timestamp(i64::MAX);

    /// The instant `micros` microseconds after the Unix epoch.
    pub const fn from_micros(micros: i64) -> Self {
        Timestamp(micros)
    }

    /// Microseconds since the Unix epoch.
    pub const fn as_micros(self) -> i64 {
        self.0
    }

    /// This instant moved by `micros` microseconds, or `None` on overflow.
    pub fn checked_add_micros(self, micros: i64) -> Option<Self> {
        self.0.checked_add(micros).map(Timestamp)
    }

    /// Converts from a chrono UTC date-time.
    pub fn from_datetime(dt: DateTime<Utc>) -> Self {
        Timestamp(dt.timestamp_micros())
    }

    /// Converts to a chrono UTC date-time; instants outside chrono's range (about
    /// ±262,000 years) are clamped to it. [`Timestamp::validate`] keeps them out of the store.
    pub fn to_datetime(self) -> DateTime<Utc> {
        DateTime::<Utc>::from_timestamp_micros(self.0).unwrap_or(if self.0 < 0 {
            DateTime::<Utc>::MIN_UTC
        } else {
            DateTime::<Utc>::MAX_UTC
        })
    }

    /// Rejects instants that cannot be written as a calendar date (beyond about ±262,000
    /// years); `field` names the input in the error.
    pub fn validate(self, field: impl fmt::Display) -> Result<Self, CoreError> {
        match DateTime::<Utc>::from_timestamp_micros(self.0) {
            Some(_) => Ok(self),
            None => Err(CoreError::InvalidTime {
                field: field.to_string(),
                value: self.0.to_string(),
                reason: "microseconds since 1970 out of the calendar's range".into(),
            }),
        }
    }

    /// Parses a point in time (see the module docs), for the input field `field`.
    ///
    /// An unknown time (`####-##-##`) is an error here; use [`PartialTime::parse`] where
    /// unknown is meaningful.
    pub fn parse(field: &str, value: &str, tz: &TimeZone) -> Result<Self, CoreError> {
        if let Some(t) = Timestamp::from_rfc3339(value) {
            return Ok(t);
        }
        match PartialTime::parse(field, value, tz)? {
            PartialTime::Known { start, .. } => Ok(start),
            PartialTime::Unknown => Err(CoreError::InvalidTime {
                field: field.to_owned(),
                value: value.to_owned(),
                reason: "the time is unknown".into(),
            }),
        }
    }
}

/// RFC 3339 in UTC with microseconds (ISO 8601 extended years outside 0000–9999).
impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dt = self.to_datetime();
        let year = dt.year();
        if (0..=9999).contains(&year) {
            write!(f, "{}", dt.format("%Y-%m-%dT%H:%M:%S%.6fZ"))
        } else {
            let sign = if year < 0 { '-' } else { '+' };
            write!(f, "{sign}{:06}-{}", year.unsigned_abs(), dt.format("%m-%dT%H:%M:%S%.6fZ"))
        }
    }
}

/// How precisely a time was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Precision {
    /// An instant (RFC 3339 or a local date-time).
    Instant,
    /// A calendar day.
    Day,
    /// A calendar month.
    Month,
    /// A year.
    Year,
    /// A decade (`195#`).
    Decade,
    /// A century (`19##`).
    Century,
    /// A millennium (`1###`).
    Millennium,
}

/// A time as given: its span's start and end (exclusive), or unknown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartialTime {
    /// `####-##-##`: nothing is known.
    Unknown,
    /// A known span `[start, end)`; for an instant, `end` is `start` + 1 µs.
    Known {
        /// First instant of the span.
        start: Timestamp,
        /// First instant after the span.
        end: Timestamp,
        /// How precisely it was given.
        precision: Precision,
    },
}

/// Every form of time a client may write, as an error names them.
const TIME_FORMS: &str = "expected RFC 3339 (2024-05-01T10:00:00Z), a local date-time (2024-05-01 10:00), a date \
                          (2024-05-01) or a partial date (2024, 2024-05, 19##)";

impl PartialTime {
    /// Parses a time as written by a client or a data set, for the input field `field`.
    pub fn parse(field: &str, value: &str, tz: &TimeZone) -> Result<Self, CoreError> {
        let err = |reason: &str| CoreError::InvalidTime {
            field: field.to_owned(),
            value: value.to_owned(),
            reason: reason.to_owned(),
        };
        let s = value.trim();
        if s.is_empty() {
            return Err(err("empty"));
        }
        if s.contains('T') || s.contains(' ') || s.contains(':') {
            return parse_instant(s, tz)
                .map(|start| PartialTime::Known {
                    start,
                    end: Timestamp(start.0.saturating_add(1)),
                    precision: Precision::Instant,
                })
                .ok_or_else(|| err(TIME_FORMS));
        }
        parse_partial_date(s, tz).map_err(|reason| err(&reason))
    }
}

impl Timestamp {
    /// An RFC 3339 time (with its offset), as [`Timestamp::parse`] reads it in any time
    /// zone: the form nearly every write gives, read without a zone or a field name.
    pub fn from_rfc3339(value: &str) -> Option<Timestamp> {
        DateTime::parse_from_rfc3339(value)
            .ok()
            .map(|dt| Timestamp(dt.with_timezone(&Utc).timestamp_micros()))
    }
}

fn parse_instant(s: &str, tz: &TimeZone) -> Option<Timestamp> {
    if let Some(t) = Timestamp::from_rfc3339(s) {
        return Some(t);
    }
    // ISO 8601 extended years (`-000044-03-15T12:00:00Z`, `+012024-…`), as times outside
    // 0000–9999 are written: RFC 3339 itself has four-digit years only.
    if s.starts_with(['+', '-']) {
        let offset = match s.strip_suffix(['Z', 'z']) {
            Some(rest) => format!("{rest}+00:00"),
            None => s.to_owned(),
        };
        if let Ok(dt) = DateTime::parse_from_str(&offset, "%Y-%m-%dT%H:%M:%S%.f%:z") {
            return Some(Timestamp(dt.with_timezone(&Utc).timestamp_micros()));
        }
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M"] {
        if let Ok(naive) = NaiveDateTime::parse_from_str(s, format) {
            return tz.local_to_utc(naive);
        }
    }
    None
}

/// `[-]Y…Y[-MM[-DD]]`, where trailing year digits and whole month/day fields may be `#`.
fn parse_partial_date(s: &str, tz: &TimeZone) -> Result<PartialTime, String> {
    let (negative, body) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let mut parts = body.split('-');
    let year_text = parts.next().unwrap_or_default();
    let month_text = parts.next();
    let day_text = parts.next();
    if parts.next().is_some() {
        return Err("too many '-' separated parts; expected YEAR[-MM[-DD]]".into());
    }
    if !year_text.bytes().all(|b| b.is_ascii_digit() || b == b'#') {
        return Err(TIME_FORMS.into());
    }
    if year_text.is_empty() || year_text.len() > 6 {
        return Err("the year must have 1 to 6 digits".into());
    }
    let digits = year_text.trim_end_matches('#');
    let hashes = year_text.len() - digits.len();
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("the year {year_text:?} is not a number"));
    }
    let unknown_field = |t: Option<&str>| t.is_none_or(|t| !t.is_empty() && t.bytes().all(|b| b == b'#'));
    if digits.is_empty() {
        // `####-##-##`: every field must be unknown too.
        if unknown_field(month_text) && unknown_field(day_text) {
            return Ok(PartialTime::Unknown);
        }
        return Err("a month or day is given but the year is unknown".into());
    }
    let scale = 10i64.pow(hashes as u32);
    let leading: i64 = digits.parse().map_err(|_| format!("the year {year_text:?} is not a number"))?;
    let magnitude = leading * scale;
    // A negative partial year counts backwards: `-4##` spans -499 ..= -400.
    let (first_year, span_years) =
        if negative { (-(magnitude + scale - 1), scale) } else { (magnitude, scale) };
    if hashes > 0 {
        if !(unknown_field(month_text) && unknown_field(day_text)) {
            return Err("a month or day is given but the year is partial".into());
        }
        let precision = match hashes {
            1 => Precision::Decade,
            2 => Precision::Century,
            _ => Precision::Millennium,
        };
        return year_span(first_year, span_years, precision, tz);
    }
    let month = match month_text {
        None => None,
        Some(t) if unknown_field(Some(t)) => None,
        Some(t) => Some(parse_field(t, "month", 1, 12)?),
    };
    let Some(month) = month else {
        if !unknown_field(day_text) {
            return Err("a day is given but the month is unknown".into());
        }
        return year_span(first_year, 1, Precision::Year, tz);
    };
    let year = i32::try_from(first_year).map_err(|_| "the year is out of range".to_owned())?;
    let month_start = NaiveDate::from_ymd_opt(year, month, 1).ok_or("the year is out of range")?;
    let next_month =
        month_start.checked_add_months(chrono::Months::new(1)).ok_or("the year is out of range")?;
    let day = match day_text {
        None => None,
        Some(t) if unknown_field(Some(t)) => None,
        Some(t) => Some(parse_field(t, "day", 1, 31)?),
    };
    let (start, end, precision) = match day {
        None => (month_start, next_month, Precision::Month),
        Some(day) => {
            let date = NaiveDate::from_ymd_opt(year, month, day)
                .ok_or_else(|| format!("day {day} does not exist in {year}-{month:02}"))?;
            let next = date.succ_opt().ok_or("the date is out of range")?;
            (date, next, Precision::Day)
        }
    };
    Ok(PartialTime::Known { start: tz.midnight(start)?, end: tz.midnight(end)?, precision })
}

fn parse_field(text: &str, what: &str, min: u32, max: u32) -> Result<u32, String> {
    if text.is_empty() || text.len() > 2 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("the {what} {text:?} is not a number from {min} to {max}"));
    }
    let n: u32 = text.parse().map_err(|_| format!("the {what} {text:?} is not a number"))?;
    if !(min..=max).contains(&n) {
        return Err(format!("the {what} {n} is not from {min} to {max}"));
    }
    Ok(n)
}

fn year_span(
    first_year: i64,
    years: i64,
    precision: Precision,
    tz: &TimeZone,
) -> Result<PartialTime, String> {
    let date = |y: i64| {
        i32::try_from(y)
            .ok()
            .and_then(|y| NaiveDate::from_ymd_opt(y, 1, 1))
            .ok_or_else(|| format!("the year {y} is out of range"))
    };
    Ok(PartialTime::Known {
        start: tz.midnight(date(first_year)?)?,
        end: tz.midnight(date(first_year + years)?)?,
        precision,
    })
}

/// A namespace's time zone, used to place dates and local date-times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TimeZone {
    /// Coordinated Universal Time.
    #[default]
    Utc,
    /// A fixed offset east of UTC, in seconds.
    Fixed(i32),
    /// An IANA zone such as `Europe/Paris`.
    Named(chrono_tz::Tz),
}

impl TimeZone {
    /// Rejects a fixed offset of a day or more, or with seconds: it could not be written
    /// and read back.
    pub fn validate(&self, field: impl fmt::Display) -> Result<(), CoreError> {
        match self {
            TimeZone::Fixed(secs) if secs.unsigned_abs() >= 86_400 || secs % 60 != 0 => {
                Err(CoreError::InvalidTime {
                    field: field.to_string(),
                    value: format!("{secs} s"),
                    reason: "an offset must be whole minutes under 24 hours".into(),
                })
            }
            _ => Ok(()),
        }
    }

    /// Parses `UTC`, `Z`, an offset like `+02:00`, or an IANA name, for the field `field`.
    pub fn parse(field: &str, value: &str) -> Result<Self, CoreError> {
        value.parse().map_err(|reason: String| CoreError::InvalidTime {
            field: field.to_owned(),
            value: value.to_owned(),
            reason,
        })
    }

    /// The calendar day an instant falls on in this zone.
    pub fn local_date(&self, t: Timestamp) -> NaiveDate {
        let utc = t.to_datetime();
        match self {
            TimeZone::Utc => utc.date_naive(),
            TimeZone::Fixed(secs) => chrono::FixedOffset::east_opt(*secs)
                .map_or_else(|| utc.date_naive(), |o| utc.with_timezone(&o).date_naive()),
            TimeZone::Named(tz) => utc.with_timezone(tz).date_naive(),
        }
    }

    fn local_to_utc(&self, naive: NaiveDateTime) -> Option<Timestamp> {
        // In a daylight-saving gap the local time does not exist: take the first whole
        // hour after the gap (gaps are at most a few hours).
        (0..=4).filter_map(|h| naive.checked_add_signed(chrono::TimeDelta::hours(h))).find_map(|candidate| {
            match self.lookup(candidate)? {
                LocalResult::Single(d) | LocalResult::Ambiguous(d, _) => {
                    Some(Timestamp(d.timestamp_micros()))
                }
                LocalResult::None => None,
            }
        })
    }

    fn lookup(&self, naive: NaiveDateTime) -> Option<LocalResult<DateTime<Utc>>> {
        Some(match self {
            TimeZone::Utc => LocalResult::Single(Utc.from_utc_datetime(&naive)),
            TimeZone::Fixed(secs) => chrono::FixedOffset::east_opt(*secs)?
                .from_local_datetime(&naive)
                .map(|d| d.with_timezone(&Utc)),
            TimeZone::Named(tz) => tz.from_local_datetime(&naive).map(|d| d.with_timezone(&Utc)),
        })
    }

    fn midnight(&self, date: NaiveDate) -> Result<Timestamp, String> {
        date.and_hms_opt(0, 0, 0)
            .and_then(|naive| self.local_to_utc(naive))
            .ok_or_else(|| format!("{date} has no midnight in {self}"))
    }
}

impl FromStr for TimeZone {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("utc") || s == "Z" {
            return Ok(TimeZone::Utc);
        }
        if let Some(rest) =
            s.strip_prefix('+').map(|r| (1, r)).or_else(|| s.strip_prefix('-').map(|r| (-1, r)))
        {
            let (sign, body) = rest;
            let (h, m) = body.split_once(':').unwrap_or((body, "0"));
            let (Ok(h), Ok(m)) = (h.parse::<i32>(), m.parse::<i32>()) else {
                return Err("expected an offset like +02:00".into());
            };
            if !(0..=23).contains(&h) || !(0..=59).contains(&m) {
                return Err("the offset is out of range".into());
            }
            return Ok(TimeZone::Fixed(sign * (h * 3600 + m * 60)));
        }
        s.parse::<chrono_tz::Tz>()
            .map(TimeZone::Named)
            .map_err(|_| "expected UTC, an offset like +02:00 or an IANA zone like Europe/Paris".into())
    }
}

impl fmt::Display for TimeZone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeZone::Utc => f.write_str("UTC"),
            TimeZone::Fixed(secs) => {
                let sign = if *secs < 0 { '-' } else { '+' };
                let abs = secs.unsigned_abs();
                write!(f, "{sign}{:02}:{:02}", abs / 3600, (abs % 3600) / 60)
            }
            TimeZone::Named(tz) => f.write_str(tz.name()),
        }
    }
}

impl Serialize for TimeZone {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TimeZone {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A half-open valid-time interval `[from, to)`; `to = None` means "until further notice".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Interval {
    from: Timestamp,
    to: Option<Timestamp>,
}

impl Interval {
    /// `[from, to)`, rejecting `from >= to`; `field` names the input in the error.
    pub fn new(field: impl fmt::Display, from: Timestamp, to: Option<Timestamp>) -> Result<Self, CoreError> {
        match to {
            Some(to) if from >= to => Err(CoreError::InvalidInterval {
                field: field.to_string(),
                from: from.to_string(),
                to: to.to_string(),
            }),
            _ => Ok(Interval { from, to }),
        }
    }

    /// `[from, to)` from bounds already known to be in order.
    pub(crate) const fn between(from: Timestamp, to: Option<Timestamp>) -> Self {
        Interval { from, to }
    }

    /// `[from, ∞)`.
    pub const fn open(from: Timestamp) -> Self {
        Interval { from, to: None }
    }

    /// Start (included).
    pub const fn from(&self) -> Timestamp {
        self.from
    }

    /// End (excluded), `None` when open-ended.
    pub const fn to(&self) -> Option<Timestamp> {
        self.to
    }

    /// Whether `t` lies in `[from, to)`.
    pub fn contains(&self, t: Timestamp) -> bool {
        t >= self.from && self.to.is_none_or(|to| t < to)
    }

    /// This interval minus `other`: zero, one or two pieces, in order.
    pub fn subtract(&self, other: &Interval) -> Vec<Interval> {
        let mut out = Vec::with_capacity(2);
        // Piece before `other`.
        if self.from < other.from {
            let end = min_end(self.to, Some(other.from));
            out.push(Interval { from: self.from, to: end });
        }
        // Piece after `other`.
        if let Some(other_to) = other.to {
            let start = self.from.max(other_to);
            if self.to.is_none_or(|to| start < to) {
                out.push(Interval { from: start, to: self.to });
            }
        }
        out
    }
}

fn min_end(a: Option<Timestamp>, b: Option<Timestamp>) -> Option<Timestamp> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

/// Subtracts every interval of `remove` from every interval of `set`; the result is sorted.
pub fn subtract_all(set: Vec<Interval>, remove: &[Interval]) -> Vec<Interval> {
    let mut current = set;
    for r in remove {
        current = current.iter().flat_map(|piece| piece.subtract(r)).collect();
        if current.is_empty() {
            break;
        }
    }
    current.sort_by_key(|i| i.from);
    current
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to {
            Some(to) => write!(f, "[{}, {})", self.from, to),
            None => write!(f, "[{}, ∞)", self.from),
        }
    }
}

/// A span of microseconds as an ISO 8601 duration in its largest whole unit: `P90D`,
/// `PT36H`, `PT10S`, `PT0.5S`.
pub fn iso_duration(micros: i64) -> String {
    const HOUR: i64 = 3_600_000_000;
    const DAY: i64 = 24 * HOUR;
    if micros != 0 && micros % DAY == 0 {
        format!("P{}D", micros / DAY)
    } else if micros != 0 && micros % HOUR == 0 {
        format!("PT{}H", micros / HOUR)
    } else if micros % 1_000_000 == 0 {
        format!("PT{}S", micros / 1_000_000)
    } else {
        format!("PT{}S", micros as f64 / 1e6)
    }
}

#[cfg(test)]
mod iso_duration_tests {
    #[test]
    fn spans_are_written_in_their_largest_whole_unit() {
        let second = 1_000_000;
        assert_eq!(super::iso_duration(90 * 86_400 * second), "P90D");
        assert_eq!(super::iso_duration(36 * 3600 * second), "PT36H");
        assert_eq!(super::iso_duration(10 * second), "PT10S");
        assert_eq!(super::iso_duration(second / 2), "PT0.5S");
    }
}
