//! English calendar expressions: "May 3, 2023", "3rd of June", "in June", "2022",
//! "yesterday", "last weekend", "next Friday", "three weeks ago", "the week before August
//! 3, 2023".

use chrono::{Duration, NaiveDate, Weekday};

use super::calendar::{self, Grain, Unit};
use super::text::{Mention, Word, day_number, mention, year_number};

/// Whether the question asks for a time: it opens with "when" and an auxiliary ("When
/// did…", "When is…"; "When I was in Paris, what…" only sets the scene), or asks "what/which
/// date|day|week|weekend|month|year|time", or "how long".
pub(super) fn asks_when(ws: &[Word<'_>]) -> bool {
    const AUXILIARIES: [&str; 19] = [
        "did", "does", "do", "is", "was", "were", "are", "will", "would", "has", "have", "had", "can",
        "could", "should", "shall", "may", "might", "must",
    ];
    (ws.first().is_some_and(|first| first.text == "when")
        && ws.get(1).is_some_and(|second| AUXILIARIES.contains(&second.text.as_str())))
        || ws.windows(2).any(|pair| {
            matches!(
                (pair[0].text.as_str(), pair[1].text.as_str()),
                ("what" | "which", "date" | "day" | "week" | "weekend" | "month" | "year" | "time")
                    | ("how", "long")
            )
        })
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

fn unit_of(w: &str) -> Option<Unit> {
    Some(match w {
        "monday" => Unit::Weekday(Weekday::Mon),
        "tuesday" => Unit::Weekday(Weekday::Tue),
        "wednesday" => Unit::Weekday(Weekday::Wed),
        "thursday" => Unit::Weekday(Weekday::Thu),
        "friday" => Unit::Weekday(Weekday::Fri),
        "saturday" => Unit::Weekday(Weekday::Sat),
        "sunday" => Unit::Weekday(Weekday::Sun),
        "week" => Unit::Week,
        "weekend" => Unit::Weekend,
        "day" => Unit::Day,
        "night" => Unit::Night,
        "month" => Unit::Month,
        "year" => Unit::Year,
        _ => return None,
    })
}

/// A day of the month: `3`, `3rd`, `21st`.
fn day_of(w: &str) -> Option<u32> {
    day_number(w, &["st", "nd", "rd", "th"])
}

/// A count: `3`, `three`, `a`, `a few` (3), `a couple` (2), `several` (3); with the
/// number of words it takes.
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

/// An absolute date at `i`: `May 3, 2023`, `3 May 2023`, `May 3rd`, `June 2023`, `in June`,
/// `2022`. Returns the mention and the index of the word after it.
fn absolute(ws: &[Word<'_>], i: usize, reference: NaiveDate) -> Option<(Mention, usize)> {
    let w = &ws[i];
    if let Some(month) = month_of(&w.text) {
        if let Some(day) = ws.get(i + 1).and_then(|n| day_of(&n.text)) {
            let (date, next) = match ws.get(i + 2).and_then(|y| year_number(&y.text)) {
                Some(y) => (NaiveDate::from_ymd_opt(y, month, day), i + 3),
                None => (calendar::nearest(reference, month, Some(day)), i + 2),
            };
            return Some((mention(ws, i, next - 1, calendar::day(date?)), next));
        }
        if let Some(y) = ws.get(i + 1).and_then(|y| year_number(&y.text)) {
            let start = calendar::month_start(y, month)?;
            return Some((mention(ws, i, i + 1, calendar::month(start)), i + 2));
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
            return Some((mention(ws, i, i, calendar::month_or_day(reference, month, None)?), i + 1));
        }
        return None;
    }
    if let Some(day) = day_of(&w.text) {
        // `3 May`, `3rd of May`.
        let at = if ws.get(i + 1).is_some_and(|w| w.text == "of") { i + 2 } else { i + 1 };
        let month = ws.get(at).and_then(|m| month_of(&m.text))?;
        let (date, next) = match ws.get(at + 1).and_then(|y| year_number(&y.text)) {
            Some(y) => (NaiveDate::from_ymd_opt(y, month, day), at + 2),
            None => (calendar::nearest(reference, month, Some(day)), at + 1),
        };
        return Some((mention(ws, i, next - 1, calendar::day(date?)), next));
    }
    if let Some(y) = year_number(&w.text) {
        return Some((mention(ws, i, i, calendar::year(y)?), i + 1));
    }
    None
}

/// The unit at `unit`, shifted from `day` by `step`, said by the words `first..=unit`.
fn relative(ws: &[Word<'_>], first: usize, unit: usize, day: NaiveDate, step: i64) -> Option<Mention> {
    let days = calendar::shifted(unit_of(&ws.get(unit)?.text)?, day, step)?;
    Some(mention(ws, first, unit, days))
}

/// `N days|weeks|months|years ago` at `i`.
fn ago(ws: &[Word<'_>], i: usize, reference: NaiveDate) -> Option<Mention> {
    let (n, used) = count(ws, i)?;
    let unit = unit_of(ws.get(i + used)?.text.trim_end_matches('s'))?;
    if ws.get(i + used + 1).is_none_or(|w| w.text != "ago") {
        return None;
    }
    let vague = ws[i].text == "few" || ws.get(i + 1).is_some_and(|w| w.text == "few" || w.text == "couple");
    let days = calendar::counted(n, unit, reference, vague, false)?;
    Some(mention(ws, i, i + used + 1, days))
}

/// The English calendar expressions among `ws`, resolved against `reference`, in order.
pub(super) fn mentions(ws: &[Word<'_>], reference: NaiveDate) -> Vec<Mention> {
    // Absolute dates first: a relative phrase may be anchored on one ("the week before
    // August 3, 2023").
    let mut absolute_at: Vec<Option<(Mention, usize)>> = (0..ws.len()).map(|_| None).collect();
    let mut i = 0;
    while i < ws.len() {
        match absolute(ws, i, reference) {
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
            let mut m = relative(ws, i, unit, day, step)?;
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
            if let Some(m) = relative(ws, i, i + 1, reference, step) {
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
            out.push(mention(ws, i, i + 2, calendar::day(reference - Duration::days(2))));
            i += 3;
            continue;
        }
        let single = match w {
            "yesterday" => Some(reference - Duration::days(1)),
            "tomorrow" => Some(reference + Duration::days(1)),
            _ => None,
        };
        if let Some(d) = single {
            out.push(mention(ws, i, i, calendar::day(d)));
            i += 1;
            continue;
        }
        if let Some(m) = ago(ws, i, reference) {
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
    use super::super::tests::{d, day, found, one};
    use super::super::{Grain, asks_when, states_time};

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
        let one = |t: &str| one(t, monday);
        assert_eq!(one("I went to a support group yesterday"), day(2023, 5, 7));
        assert_eq!(one("the day before yesterday"), day(2023, 5, 6));
        assert_eq!(one("see you tomorrow"), day(2023, 5, 9));
        assert_eq!(one("last week"), (d(2023, 5, 1), d(2023, 5, 7), Grain::Day));
        assert_eq!(one("last weekend"), (d(2023, 5, 6), d(2023, 5, 7), Grain::Day));
        assert_eq!(one("next weekend"), (d(2023, 5, 13), d(2023, 5, 14), Grain::Day));
        assert_eq!(one("last Saturday"), day(2023, 5, 6));
        assert_eq!(one("last Monday"), day(2023, 5, 1));
        assert_eq!(one("next Friday"), day(2023, 5, 12));
        assert_eq!(one("last night"), day(2023, 5, 7));
        assert_eq!(one("last month"), (d(2023, 4, 1), d(2023, 4, 30), Grain::Month));
        assert_eq!(one("last year"), (d(2022, 1, 1), d(2022, 12, 31), Grain::Year));
        assert_eq!(one("two days ago"), day(2023, 5, 6));
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
}
