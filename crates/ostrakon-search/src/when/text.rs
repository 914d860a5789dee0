//! The words of a text, as the languages' rules read them, and the mentions they find.

use chrono::NaiveDate;

use super::calendar::{Days, Grain};

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

/// A word of a text: a run of letters and digits.
pub(super) struct Word<'a> {
    /// Lower case.
    pub(super) text: String,
    pub(super) raw: &'a str,
    pub(super) start: usize,
    pub(super) end: usize,
}

pub(super) fn words(text: &str) -> Vec<Word<'_>> {
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

/// The mention of `days` said by the words `first..=last`.
pub(super) fn mention(ws: &[Word<'_>], first: usize, last: usize, days: Days) -> Mention {
    Mention { span: ws[first].start..ws[last].end, from: days.from, to: days.to, grain: days.grain }
}

/// A day of the month written in digits, `3` or `21`, with the given suffixes allowed
/// (`3rd`, `21st`).
pub(super) fn day_number(w: &str, suffixes: &[&str]) -> Option<u32> {
    let digits = w.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &w[digits.len()..];
    if digits.is_empty() || digits.len() > 2 || !(suffix.is_empty() || suffixes.contains(&suffix)) {
        return None;
    }
    digits.parse().ok().filter(|d| (1..=31).contains(d))
}

/// A year in four digits between 1900 and 2100.
pub(super) fn year_number(w: &str) -> Option<i32> {
    (w.len() == 4 && w.bytes().all(|b| b.is_ascii_digit()))
        .then(|| w.parse().ok())
        .flatten()
        .filter(|y| (1900..=2100).contains(y))
}
