//! The lines of a context block: a fact with its validity, an episode with its date (and
//! what it stated that no longer holds), an entity with its kind and aliases; and the
//! builder that adds sections line by line while they fit a token budget.

use ostrakon_core::{Entity, Episode, FactView, Timestamp};
use ostrakon_index::{NamespaceIndex, View};

use crate::read::outdated::outdated;
use crate::retrieve::docs::fact_sentence;

/// Estimated tokens of a text: one per four bytes, rounded up.
pub fn estimate_tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}

/// A timestamp as a prompt reads it: the date, then the time of day (UTC) to the minute,
/// or to the second when it has seconds; never fractions.
pub(crate) fn short(t: Timestamp) -> String {
    let s = t.to_string(); // 2015-06-01T08:30:00.000000Z
    let (date, time) = (s.get(..10).unwrap_or(&s), s.get(11..19).unwrap_or(""));
    match time {
        "" | "00:00:00" => date.to_owned(),
        _ if time.ends_with(":00") => format!("{date} {}", &time[..5]),
        _ => format!("{date} {time}"),
    }
}

/// A fact with the stretch of its effective validity (as known at S) that holds `valid_at`,
/// so a fact later superseded shows when it stopped.
/// When its subject holds `values` values of its predicate at once (a MANY predicate),
/// the line says so, so that a model does not read "lives in Lyon" and "lives in Berlin"
/// as a contradiction, or as one replacing the other.
pub(crate) fn fact_line(index: &NamespaceIndex, f: &FactView, valid_at: Timestamp, values: usize) -> String {
    let span = f.effective.iter().find(|i| i.contains(valid_at)).unwrap_or(&f.valid);
    let mut when = match span.to() {
        Some(to) => format!("valid {} to {}", short(span.from()), short(to)),
        None => format!("since {}", short(span.from())),
    };
    if values > 1 {
        when.push_str(&format!("; one of {values} values at once"));
    }
    format!("- {} ({when})\n", fact_sentence(index, &f.fact))
}

/// An episode's line; one that happened after `as_of` (a block read as of a past day)
/// says so, since it may state what only came later; one that stated what no longer
/// holds says what holds instead, and since when.
pub(crate) fn episode_line(
    index: &NamespaceIndex,
    view: View,
    e: &Episode,
    as_of: Option<Timestamp>,
) -> String {
    let mut who = String::new();
    if let Some(role) = &e.role {
        who = format!("{role}: ");
    }
    let text: String = e.text.split_whitespace().collect::<Vec<_>>().join(" ");
    let marks: String = outdated(index, e.id, view).iter().map(|o| format!(" [{}]", o.note)).collect();
    match as_of.filter(|day| e.occurred_at > *day) {
        Some(day) => format!("- [{}, later than {}] {who}{text}{marks}\n", short(e.occurred_at), short(day)),
        None => format!("- [{}] {who}{text}{marks}\n", short(e.occurred_at)),
    }
}

pub(crate) fn entity_line(e: &Entity) -> String {
    let mut extra = Vec::new();
    if let Some(k) = &e.kind {
        extra.push(k.clone());
    }
    if !e.aliases.is_empty() {
        extra.push(format!("also {}", e.aliases.join(", ")));
    }
    if extra.is_empty() {
        format!("- {}\n", e.name)
    } else {
        format!("- {} ({})\n", e.name, extra.join("; "))
    }
}

/// Appends sections line by line while they fit the budget.
pub(crate) struct Builder {
    pub(crate) text: String,
    pub(crate) budget: usize,
    pub(crate) truncated: bool,
    /// The valid time of a block read as of a past day (episodes after it are marked).
    pub(crate) as_of: Option<Timestamp>,
}

impl Builder {
    /// The tokens written so far.
    pub(crate) fn tokens(&self) -> usize {
        estimate_tokens(&self.text)
    }

    /// [`Builder::section`] within `limit` tokens for the section itself as well.
    pub(crate) fn section_within(&mut self, header: &str, lines: &[String], limit: usize) -> usize {
        let start = self.text.len();
        for (n, line) in lines.iter().enumerate() {
            let piece = if n > 0 { line.clone() } else { format!("{header}\n{line}") };
            if !self.fits(&piece) || (self.text.len() - start + piece.len()).div_ceil(4) > limit {
                self.truncated = true;
                return n;
            }
            self.text.push_str(&piece);
        }
        lines.len()
    }

    fn fits(&self, extra: &str) -> bool {
        (self.text.len() + extra.len()).div_ceil(4) <= self.budget
    }

    /// Adds a section's lines in order (with its header before the first) until one does
    /// not fit, so a shorter, less relevant line never jumps ahead of a longer, more
    /// relevant one; returns how many fitted.
    pub(crate) fn section(&mut self, header: &str, lines: &[String]) -> usize {
        for (n, line) in lines.iter().enumerate() {
            let piece = if n > 0 { line.clone() } else { format!("{header}\n{line}") };
            if !self.fits(&piece) {
                self.truncated = true;
                return n;
            }
            self.text.push_str(&piece);
        }
        lines.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(micros: i64) -> Timestamp {
        Timestamp::from_micros(micros)
    }

    #[test]
    fn short_times_drop_what_is_zero_and_never_show_fractions() {
        const DAY: i64 = 86_400_000_000;
        // 2024-01-01 is day 19723 after the epoch.
        let midnight = 19_723 * DAY;
        assert_eq!(short(at(midnight)), "2024-01-01");
        assert_eq!(short(at(midnight + (8 * 3600 + 30 * 60) * 1_000_000)), "2024-01-01 08:30");
        assert_eq!(
            short(at(midnight + (8 * 3600 + 30 * 60 + 7) * 1_000_000 + 143_602)),
            "2024-01-01 08:30:07"
        );
        assert_eq!(short(at(midnight + 5)), "2024-01-01", "fractions of a second are dropped");
    }

    #[test]
    fn sections_stop_at_the_first_line_that_does_not_fit() {
        let mut b = Builder { text: String::new(), budget: 6, truncated: false, as_of: None };
        let lines =
            ["- first line\n".to_owned(), "- a much longer second line\n".to_owned(), "- 3\n".to_owned()];
        assert_eq!(b.section("H:", &lines), 1);
        assert!(b.truncated);
        assert_eq!(b.text, "H:\n- first line\n");
    }
}
