//! Calendar expressions in free text, resolved to days, in English, Korean and Spanish:
//! "on May 3, 2023", "in June", "2022", "yesterday", "last weekend", "three weeks ago",
//! "the week before August 3, 2023"; "3월 9일에", "어제", "지난 주말", "이틀 전";
//! "el 9 de mayo", "ayer", "la semana pasada", "hace dos días". Episodes are indexed by
//! the days they happened and the days they speak of (resolved against when they
//! happened); a query's expressions (resolved against its clock) pick the episodes of
//! those days, so "what did she do on 12 May" meets "two days ago" written on 14 May.
//!
//! Written by hand: the date crates parse a whole string as one expression, and none
//! finds expressions inside a sentence or resolves them against a reference day. The
//! rules are deterministic; what they do not recognise is left alone. Every language's
//! rules read every text (a memory mixes languages); where two read the same words, the
//! longer reading wins.

mod calendar;
mod english;
mod korean;
mod spanish;
mod text;

use std::cmp::Reverse;

use chrono::{Datelike, Duration, NaiveDate};

pub use calendar::Grain;
pub use text::Mention;
use text::words;

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

/// Whether a question asks for a time: "When did…", "What year…", "How long…"; "언제…",
/// "몇 월…", "며칠…"; "¿Cuándo…?", "¿Qué día…?", "¿Cuánto tiempo…?". Its answer is a time,
/// so the text that answers it most likely states one.
pub fn asks_when(question: &str) -> bool {
    let ws = words(question);
    english::asks_when(&ws) || spanish::asks_when(&ws) || korean::asks_when(&ws)
}

/// Whether a text written on `day` states a time this module resolves.
pub fn states_time(text: &str, day: NaiveDate) -> bool {
    !mentions(text, day).is_empty()
}

/// The calendar expressions of `text`, resolved against `reference` (the day the text was
/// written, or a query's clock), in order.
pub fn mentions(text: &str, reference: NaiveDate) -> Vec<Mention> {
    let ws = words(text);
    let mut all = english::mentions(&ws, reference);
    all.extend(spanish::mentions(&ws, reference));
    if text.chars().any(ostrakon_core::particles::is_hangul) {
        all.extend(korean::mentions(&ws, reference));
    }
    all.sort_by_key(|m| (m.span.start, Reverse(m.span.end)));
    let mut out: Vec<Mention> = Vec::with_capacity(all.len());
    for m in all {
        if out.last().is_none_or(|kept| m.span.start >= kept.span.end) {
            out.push(m);
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    pub(super) fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    /// Each mention of `text` as (from, to, grain, the words).
    pub(super) fn found(text: &str, reference: NaiveDate) -> Vec<(NaiveDate, NaiveDate, Grain, String)> {
        mentions(text, reference)
            .into_iter()
            .map(|m| (m.from, m.to, m.grain, text[m.span.clone()].to_owned()))
            .collect()
    }

    /// The one mention of `text`, as (from, to, grain).
    pub(super) fn one(text: &str, reference: NaiveDate) -> (NaiveDate, NaiveDate, Grain) {
        let f = found(text, reference);
        assert_eq!(f.len(), 1, "{text}: {f:?}");
        (f[0].0, f[0].1, f[0].2)
    }

    /// A single day, as [`one`] gives it.
    pub(super) fn day(y: i32, m: u32, dd: u32) -> (NaiveDate, NaiveDate, Grain) {
        (d(y, m, dd), d(y, m, dd), Grain::Day)
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

    #[test]
    fn a_question_naming_a_day_meets_a_text_that_said_it_relatively_in_each_language() {
        // Written on 14 May, speaking of 12 May; asked about 12 May from June.
        let written = d(2024, 5, 14);
        let asked = d(2024, 6, 20);
        for (text, question) in [
            ("We went to the lake two days ago.", "What did we do on May 12?"),
            ("이틀 전에 호수에 갔어요.", "5월 12일에 뭐 했어요?"),
            ("Fuimos al lago hace dos días.", "¿Qué hicimos el 12 de mayo?"),
        ] {
            let indexed = index_terms(text, written);
            let asked_for: Vec<String> = mentions(question, asked).iter().flat_map(query_terms).collect();
            assert_eq!(asked_for, vec!["d20240512"], "{question}");
            assert!(indexed.contains(&asked_for[0]), "{text}: {indexed:?}");
        }
    }

    #[test]
    fn the_longer_reading_wins_where_languages_overlap() {
        // Spanish "mayo de 2024" and English "2024" read the same year.
        assert_eq!(
            found("Me mudé en mayo de 2024.", d(2024, 9, 1)),
            vec![(d(2024, 5, 1), d(2024, 5, 31), Grain::Month, "mayo de 2024".into())]
        );
    }
}
