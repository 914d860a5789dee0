//! Calendar expressions in free text, resolved to days: "on May 3, 2023", "in June",
//! "2022", "yesterday", "last weekend", "three weeks ago", "the week before August 3,
//! 2023". Episodes are indexed by the days they happened and the days they speak of
//! (resolved against when they happened); a query's expressions (resolved against its
//! clock) pick the episodes of those days.
//!
//! Written by hand: the date crates parse a whole string as one expression, and none
//! finds expressions inside a sentence or resolves them against a reference day. The
//! rules are English and deterministic; what they do not recognise is left alone.

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

/// An expression found in a text and the days it stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mention {
    /// Where it is in the text (bytes).
    pub span: std::ops::Range<usize>,
    /// First day meant.
    pub from: NaiveDate,
    /// Last day meant (inclusive).
    pub to: NaiveDate,
    /// Its precision.
    pub grain: Grain,
}

/// Longest span of days a `Day` mention may cover (a week and a bit).
const MAX_DAYS: i64 = 10;

/// The index terms of a day: the day, its month and its year.
pub fn day_terms(day: NaiveDate) -> [String; 3] {
    [
        format!("d{:04}{:02}{:02}", day.year(), day.month(), day.day()),
        format!("m{:04}{:02}", day.year(), day.month()),
        format!("y{:04}", day.year()),
    ]
}

/// The terms a text that happened on `day` is indexed by: `day`'s own, and those of every
/// day, month or year it speaks of. Sorted, without repeats.
pub fn index_terms(text: &str, day: NaiveDate) -> Vec<String> {
    let mut terms: Vec<String> = day_terms(day).into();
    for m in mentions(text, day) {
        match m.grain {
            Grain::Day => {
                let mut d = m.from;
                while d <= m.to {
                    terms.extend(day_terms(d));
                    d += Duration::days(1);
                }
            }
            Grain::Month => terms.extend(day_terms(m.from).into_iter().skip(1)),
            Grain::Year => terms.extend(day_terms(m.from).into_iter().skip(2)),
        }
    }
    terms.sort();
    terms.dedup();
    terms
}

/// The terms a query's mention is matched by, at its own precision.
pub fn query_terms(m: &Mention) -> Vec<String> {
    match m.grain {
        Grain::Day => {
            let mut out = Vec::new();
            let mut d = m.from;
            while d <= m.to {
                out.push(day_terms(d)[0].clone());
                d += Duration::days(1);
            }
            out
        }
        Grain::Month => vec![day_terms(m.from)[1].clone()],
        Grain::Year => vec![day_terms(m.from)[2].clone()],
    }
}

/// Whether a question asks for a time: it opens with "when" and an auxiliary ("When did…",
/// "When is…"; "When I was in Paris, what…" only sets the scene), or asks "what/which
/// date|day|week|weekend|month|year|time", or "how long". Its answer is a time, so the
/// text that answers it most likely states one (a date, "yesterday", "last June").
pub fn asks_when(question: &str) -> bool {
    const AUXILIARIES: [&str; 19] = [
        "did", "does", "do", "is", "was", "were", "are", "will", "would", "has", "have", "had", "can",
        "could", "should", "shall", "may", "might", "must",
    ];
    let w: Vec<String> = words(question).into_iter().map(|w| w.text).collect();
    (w.first().is_some_and(|first| first == "when")
        && w.get(1).is_some_and(|second| AUXILIARIES.contains(&second.as_str())))
        || w.windows(2).any(|pair| {
            matches!(
                (pair[0].as_str(), pair[1].as_str()),
                ("what" | "which", "date" | "day" | "week" | "weekend" | "month" | "year" | "time")
                    | ("how", "long")
            )
        })
}

/// Whether a text written on `day` states a time this module resolves.
pub fn states_time(text: &str, day: NaiveDate) -> bool {
    !mentions(text, day).is_empty()
}

struct Word<'a> {
    /// Lower case.
    text: String,
    raw: &'a str,
    start: usize,
    end: usize,
}

fn words(text: &str) -> Vec<Word<'_>> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
        let part = c.is_alphanumeric();
        match (start, part) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                let raw = &text[s..i];
                out.push(Word { text: raw.to_lowercase(), raw, start: s, end: i });
                start = None;
            }
            _ => {}
        }
    }
    out
}

fn month_of(w: &str) -> Option<u32> {
    const NAMES: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    if let Some(i) = NAMES.iter().position(|n| *n == w) {
        return Some(i as u32 + 1);
    }
    let short = match w {
        "jan" => 1,
        "feb" => 2,
        "mar" => 3,
        "apr" => 4,
        "jun" => 6,
        "jul" => 7,
        "aug" => 8,
        "sep" | "sept" => 9,
        "oct" => 10,
        "nov" => 11,
        "dec" => 12,
        _ => return None,
    };
    Some(short)
}

fn weekday_of(w: &str) -> Option<Weekday> {
    Some(match w {
        "monday" => Weekday::Mon,
        "tuesday" => Weekday::Tue,
        "wednesday" => Weekday::Wed,
        "thursday" => Weekday::Thu,
        "friday" => Weekday::Fri,
        "saturday" => Weekday::Sat,
        "sunday" => Weekday::Sun,
        _ => return None,
    })
}

/// A day of the month: `3`, `3rd`, `21st`.
fn day_number(w: &str) -> Option<u32> {
    let digits = w.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &w[digits.len()..];
    if digits.is_empty() || digits.len() > 2 || !matches!(suffix, "" | "st" | "nd" | "rd" | "th") {
        return None;
    }
    digits.parse().ok().filter(|d| (1..=31).contains(d))
}

fn year_number(w: &str) -> Option<i32> {
    (w.len() == 4 && w.bytes().all(|b| b.is_ascii_digit()))
        .then(|| w.parse().ok())
        .flatten()
        .filter(|y| (1900..=2100).contains(y))
}

/// A count: `3`, `three`, `a`, `a few` (3), `a couple` (2), `several` (3).
fn count(ws: &[Word<'_>], i: usize) -> Option<(i64, usize)> {
    let w = ws.get(i)?.text.as_str();
    let next = ws.get(i + 1).map(|w| w.text.as_str());
    let n = match w {
        "a" | "an" | "one" => match next {
            Some("few") => return Some((3, 2)),
            Some("couple") => {
                let skip = if ws.get(i + 2).is_some_and(|w| w.text == "of") { 3 } else { 2 };
                return Some((2, skip));
            }
            _ => 1,
        },
        "two" => 2,
        "three" => 3,
        "four" => 4,
        "five" => 5,
        "six" => 6,
        "seven" => 7,
        "eight" => 8,
        "nine" => 9,
        "ten" => 10,
        "few" | "several" => 3,
        _ => match w.parse::<i64>() {
            Ok(n) if (1..=100).contains(&n) => n,
            _ => return None,
        },
    };
    Some((n, 1))
}

fn month_start(year: i32, month: u32) -> Option<NaiveDate> {
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
fn nearest(reference: NaiveDate, month: u32, day: Option<u32>) -> Option<NaiveDate> {
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

fn mention(
    ws: &[Word<'_>],
    first: usize,
    last: usize,
    from: NaiveDate,
    to: NaiveDate,
    grain: Grain,
) -> Mention {
    Mention { span: ws[first].start..ws[last].end, from, to, grain }
}

/// The calendar year `y`, said by the words `first..=last`.
fn year(ws: &[Word<'_>], first: usize, last: usize, y: i32) -> Option<Mention> {
    let (from, to) = (NaiveDate::from_ymd_opt(y, 1, 1)?, NaiveDate::from_ymd_opt(y, 12, 31)?);
    Some(mention(ws, first, last, from, to, Grain::Year))
}

fn days(ws: &[Word<'_>], first: usize, last: usize, from: NaiveDate, to: NaiveDate) -> Option<Mention> {
    ((to - from).num_days() < MAX_DAYS && from <= to).then(|| mention(ws, first, last, from, to, Grain::Day))
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

/// An absolute date at `i`: `May 3, 2023`, `3 May 2023`, `May 3rd`, `June 2023`, `in June`,
/// `2022`. Returns the mention and the index of the word after it.
fn absolute(ws: &[Word<'_>], i: usize, reference: NaiveDate) -> Option<(Mention, usize)> {
    let w = &ws[i];
    if let Some(month) = month_of(&w.text) {
        if let Some(day) = ws.get(i + 1).and_then(|n| day_number(&n.text)) {
            let (date, next) = match ws.get(i + 2).and_then(|y| year_number(&y.text)) {
                Some(y) => (NaiveDate::from_ymd_opt(y, month, day), i + 3),
                None => (nearest(reference, month, Some(day)), i + 2),
            };
            let date = date?;
            return Some((mention(ws, i, next - 1, date, date, Grain::Day), next));
        }
        if let Some(y) = ws.get(i + 1).and_then(|y| year_number(&y.text)) {
            let start = month_start(y, month)?;
            return Some((mention(ws, i, i + 1, start, month_end(start), Grain::Month), i + 2));
        }
        // A bare month name: capitalised, and for the words that are also verbs ("may",
        // "march") after a word that introduces a time.
        let capital = w.raw.chars().next().is_some_and(char::is_uppercase);
        let introduced = i > 0
            && matches!(
                ws[i - 1].text.as_str(),
                "in" | "of"
                    | "since"
                    | "during"
                    | "until"
                    | "till"
                    | "by"
                    | "last"
                    | "next"
                    | "this"
                    | "early"
                    | "mid"
                    | "late"
                    | "end"
                    | "before"
                    | "after"
            );
        let ambiguous = matches!(w.text.as_str(), "may" | "march") || w.text.len() == 3;
        if capital && (introduced || !ambiguous) {
            let start = nearest(reference, month, None)?;
            return Some((mention(ws, i, i, start, month_end(start), Grain::Month), i + 1));
        }
        return None;
    }
    if let Some(day) = day_number(&w.text) {
        // `3 May`, `3rd of May`.
        let at = if ws.get(i + 1).is_some_and(|w| w.text == "of") { i + 2 } else { i + 1 };
        let month = ws.get(at).and_then(|m| month_of(&m.text))?;
        let (date, next) = match ws.get(at + 1).and_then(|y| year_number(&y.text)) {
            Some(y) => (NaiveDate::from_ymd_opt(y, month, day), at + 2),
            None => (nearest(reference, month, Some(day)), at + 1),
        };
        let date = date?;
        return Some((mention(ws, i, next - 1, date, date, Grain::Day), next));
    }
    if let Some(y) = year_number(&w.text) {
        return Some((year(ws, i, i, y)?, i + 1));
    }
    None
}

/// A unit relative to a day: `week`, `weekend`, `month`, `year`, a weekday, `night`;
/// `step` is −1 for last, +1 for next, 0 for this.
fn relative(ws: &[Word<'_>], first: usize, unit: usize, day: NaiveDate, step: i64) -> Option<Mention> {
    let w = ws.get(unit)?.text.as_str();
    if let Some(wd) = weekday_of(w) {
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
        return days(ws, first, unit, date, date);
    }
    match w {
        "week" => {
            let (from, to) = match step {
                -1 => (day - Duration::days(7), day - Duration::days(1)),
                1 => (day + Duration::days(1), day + Duration::days(7)),
                _ => {
                    let monday = day - Duration::days(i64::from(day.weekday().num_days_from_monday()));
                    (monday, monday + Duration::days(6))
                }
            };
            days(ws, first, unit, from, to)
        }
        "weekend" => {
            let (sat, sun) = match step {
                -1 => weekend(day, false),
                1 => weekend(day, true),
                _ if matches!(day.weekday(), Weekday::Sat | Weekday::Sun) => {
                    let sat = day - Duration::days(i64::from(day.weekday().num_days_from_monday()) - 5);
                    (sat, sat + Duration::days(1))
                }
                _ => weekend(day, true),
            };
            days(ws, first, unit, sat, sun)
        }
        "day" => {
            let d = day + Duration::days(step);
            days(ws, first, unit, d, d)
        }
        "night" if step == -1 => {
            let d = day - Duration::days(1);
            days(ws, first, unit, d, d)
        }
        "month" => {
            let start = shift_month(day, step)?;
            Some(mention(ws, first, unit, start, month_end(start), Grain::Month))
        }
        "year" => year(ws, first, unit, day.year() + i32::try_from(step).ok()?),
        _ => None,
    }
}

/// `N days|weeks|months|years ago` at `i`.
fn ago(ws: &[Word<'_>], i: usize, reference: NaiveDate) -> Option<Mention> {
    let (n, used) = count(ws, i)?;
    let unit = ws.get(i + used)?.text.trim_end_matches('s').to_owned();
    if ws.get(i + used + 1).is_none_or(|w| w.text != "ago") {
        return None;
    }
    let last = i + used + 1;
    let vague = ws[i].text == "few" || ws.get(i + 1).is_some_and(|w| w.text == "few" || w.text == "couple");
    match unit.as_str() {
        "day" if vague => {
            days(ws, i, last, reference - Duration::days(n + 1), reference - Duration::days(n - 1))
        }
        "day" => days(ws, i, last, reference - Duration::days(n), reference - Duration::days(n)),
        "week" => {
            let mid = reference - Duration::days(7 * n);
            days(ws, i, last, mid - Duration::days(3), mid + Duration::days(3))
        }
        "month" => {
            let start = shift_month(reference, -n)?;
            Some(mention(ws, i, last, start, month_end(start), Grain::Month))
        }
        "year" => year(ws, i, last, reference.year() - i32::try_from(n).ok()?),
        _ => None,
    }
}

/// The calendar expressions of `text`, resolved against `reference` (the day the text was
/// written, or a query's clock), in order.
pub fn mentions(text: &str, reference: NaiveDate) -> Vec<Mention> {
    let ws = words(text);
    // Absolute dates first: a relative phrase may be anchored on one ("the week before
    // August 3, 2023").
    let mut absolute_at: Vec<Option<(Mention, usize)>> = (0..ws.len()).map(|_| None).collect();
    let mut i = 0;
    while i < ws.len() {
        match absolute(&ws, i, reference) {
            Some((m, next)) => {
                absolute_at[i] = Some((m, next));
                i = next;
            }
            None => i += 1,
        }
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < ws.len() {
        if let Some((m, next)) = &absolute_at[i] {
            out.push(m.clone());
            i = *next;
            continue;
        }
        let w = ws[i].text.as_str();
        // `[the] <unit> before|after <date>`, `last <unit> before <date>`.
        let anchored = |unit: usize| -> Option<(Mention, usize)> {
            let link = ws.get(unit + 1)?.text.as_str();
            let (anchor, next) = absolute_at.get(unit + 2)?.as_ref()?;
            let step = match link {
                "before" => -1,
                "after" => 1,
                _ => return None,
            };
            let day = if step < 0 { anchor.from } else { anchor.to };
            let mut m = relative(&ws, i, unit, day, step)?;
            m.span.end = anchor.span.end;
            Some((m, *next))
        };
        let step = match w {
            "last" | "past" | "previous" => Some(-1),
            "next" | "coming" | "following" => Some(1),
            "this" => Some(0),
            _ => None,
        };
        if let Some(step) = step {
            if let Some((m, next)) = anchored(i + 1) {
                out.push(m);
                i = next;
                continue;
            }
            if let Some(m) = relative(&ws, i, i + 1, reference, step) {
                // "this month", "this year" say only when the text was written.
                if step != 0 || m.grain == Grain::Day {
                    out.push(m);
                }
                i += 2;
                continue;
            }
        }
        if w == "the"
            && let Some((m, next)) = anchored(i + 1)
        {
            out.push(m);
            i = next;
            continue;
        }
        if w == "day"
            && ws.get(i + 1).is_some_and(|w| w.text == "before")
            && ws.get(i + 2).is_some_and(|w| w.text == "yesterday")
        {
            let d = reference - Duration::days(2);
            out.extend(days(&ws, i, i + 2, d, d));
            i += 3;
            continue;
        }
        let single = match w {
            "yesterday" => Some(reference - Duration::days(1)),
            "tomorrow" => Some(reference + Duration::days(1)),
            _ => None,
        };
        if let Some(d) = single {
            out.extend(days(&ws, i, i, d, d));
            i += 1;
            continue;
        }
        if let Some(m) = ago(&ws, i, reference) {
            let next = ws.iter().position(|x| x.start >= m.span.end).unwrap_or(ws.len());
            out.push(m);
            i = next;
            continue;
        }
        i += 1;
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    fn found(text: &str, reference: NaiveDate) -> Vec<(NaiveDate, NaiveDate, Grain, String)> {
        mentions(text, reference)
            .into_iter()
            .map(|m| (m.from, m.to, m.grain, text[m.span.clone()].to_owned()))
            .collect()
    }

    #[test]
    fn absolute_dates_in_their_forms() {
        let r = d(2023, 10, 23);
        assert_eq!(
            found("Who did Maria have dinner with on May 3, 2023?", r),
            vec![(d(2023, 5, 3), d(2023, 5, 3), Grain::Day, "May 3, 2023".into())]
        );
        assert_eq!(found("on 1 February, 2023", r)[0].0, d(2023, 2, 1));
        assert_eq!(
            found("on the 3rd of June", r),
            vec![(d(2023, 6, 3), d(2023, 6, 3), Grain::Day, "3rd of June".into())]
        );
        assert_eq!(found("June 3rd", r)[0].0, d(2023, 6, 3));
        assert_eq!(
            found("in December 2023", r)[0].0..=found("in December 2023", r)[0].1,
            d(2023, 12, 1)..=d(2023, 12, 31)
        );
        assert_eq!(found("in 2022", r), vec![(d(2022, 1, 1), d(2022, 12, 31), Grain::Year, "2022".into())]);
        // A bare month is the nearest one: June before October, January after it.
        assert_eq!(found("camping in June?", r)[0].0, d(2023, 6, 1));
        assert_eq!(found("back in January", r)[0].0, d(2024, 1, 1));
        // "may" and "march" the verbs are not months.
        assert!(found("I may go. We march on. May I?", r).is_empty());
        assert_eq!(found("since May", r)[0].0, d(2023, 5, 1));
        assert!(found("I paid 3000 dollars", r).is_empty());
    }

    #[test]
    fn relative_expressions_against_the_day_written() {
        let monday = d(2023, 5, 8);
        let one = |t: &str| {
            let f = found(t, monday);
            assert_eq!(f.len(), 1, "{t}: {f:?}");
            (f[0].0, f[0].1, f[0].2)
        };
        assert_eq!(one("I went to a support group yesterday"), (d(2023, 5, 7), d(2023, 5, 7), Grain::Day));
        assert_eq!(one("the day before yesterday"), (d(2023, 5, 6), d(2023, 5, 6), Grain::Day));
        assert_eq!(one("see you tomorrow"), (d(2023, 5, 9), d(2023, 5, 9), Grain::Day));
        assert_eq!(one("last week"), (d(2023, 5, 1), d(2023, 5, 7), Grain::Day));
        assert_eq!(one("last weekend"), (d(2023, 5, 6), d(2023, 5, 7), Grain::Day));
        assert_eq!(one("next weekend"), (d(2023, 5, 13), d(2023, 5, 14), Grain::Day));
        assert_eq!(one("last Saturday"), (d(2023, 5, 6), d(2023, 5, 6), Grain::Day));
        assert_eq!(one("last Monday"), (d(2023, 5, 1), d(2023, 5, 1), Grain::Day));
        assert_eq!(one("next Friday"), (d(2023, 5, 12), d(2023, 5, 12), Grain::Day));
        assert_eq!(one("last night"), (d(2023, 5, 7), d(2023, 5, 7), Grain::Day));
        assert_eq!(one("last month"), (d(2023, 4, 1), d(2023, 4, 30), Grain::Month));
        assert_eq!(one("last year"), (d(2022, 1, 1), d(2022, 12, 31), Grain::Year));
        assert_eq!(one("two days ago"), (d(2023, 5, 6), d(2023, 5, 6), Grain::Day));
        assert_eq!(one("a few days ago"), (d(2023, 5, 4), d(2023, 5, 6), Grain::Day));
        assert_eq!(one("3 weeks ago"), (d(2023, 4, 14), d(2023, 4, 20), Grain::Day));
        assert_eq!(one("a couple of months ago"), (d(2023, 3, 1), d(2023, 3, 31), Grain::Month));
        assert_eq!(one("two years ago"), (d(2021, 1, 1), d(2021, 12, 31), Grain::Year));
        assert_eq!(one("this weekend"), (d(2023, 5, 13), d(2023, 5, 14), Grain::Day));
        // On a Sunday, this weekend is the one it is in, and last weekend the one before.
        assert_eq!(found("this weekend", d(2023, 5, 7))[0].0, d(2023, 5, 6));
        assert_eq!(found("last weekend", d(2023, 5, 7))[0].0, d(2023, 4, 29));
        // Only when it was written: no mention.
        assert!(found("this month has been busy", monday).is_empty());
    }

    #[test]
    fn relative_phrases_anchored_on_a_date() {
        let r = d(2023, 10, 23);
        let f = found("What did John do the week before August 3, 2023 with his kids?", r);
        assert_eq!(
            f,
            vec![(d(2023, 7, 27), d(2023, 8, 2), Grain::Day, "the week before August 3, 2023".into())]
        );
        let f = found("What did Maria do last weekend before April 10, 2023?", r);
        assert_eq!((f[0].0, f[0].1), (d(2023, 4, 8), d(2023, 4, 9)));
        let f = found("the day after 5 June 2023", r);
        assert_eq!((f[0].0, f[0].1), (d(2023, 6, 6), d(2023, 6, 6)));
    }

    #[test]
    fn questions_that_ask_for_a_time_and_texts_that_state_one() {
        for q in [
            "When did Caroline go to the support group?",
            "when is the wedding",
            "What year did Jon open his studio?",
            "In which month did they move?",
            "How long has Melanie been painting?",
            "What date was the concert on?",
        ] {
            assert!(asks_when(q), "{q}");
        }
        for q in [
            "What did Caroline research?",
            "Where did Jon go when he was in Paris?",
            "Which band does Gina like?",
            "Why did he stop?",
            "When I was studying in the library, I read a novel. What was its name?",
            "When Jon was in Paris, what did he eat?",
            "",
        ] {
            assert!(!asks_when(q), "{q}");
        }
        let day = d(2023, 5, 8);
        assert!(states_time("Caroline: I went to a support group yesterday.", day));
        assert!(states_time("We moved in June 2021.", day));
        assert!(!states_time("Caroline: The support group was so powerful.", day));
        // "may" the verb is not a month.
        assert!(!states_time("You may like it.", day));
    }

    #[test]
    fn terms_for_the_index_and_for_queries() {
        let t = index_terms("I went camping yesterday", d(2023, 6, 1));
        assert_eq!(t, vec!["d20230531", "d20230601", "m202305", "m202306", "y2023"]);
        let q = mentions("in June 2023", d(2023, 10, 1));
        assert_eq!(query_terms(&q[0]), vec!["m202306"]);
        let q = mentions("last weekend", d(2023, 5, 8));
        assert_eq!(query_terms(&q[0]), vec!["d20230506", "d20230507"]);
    }
}
