//! The block an agent puts in its prompt: what is known that matters for a message,
//! facts in force with their validity, the most relevant episodes with their dates, the
//! entities involved; deterministic, trimmed to a token budget.

use std::collections::HashSet;

use mnemo_core::{Entity, EntityId, Episode, Namespace, RecordRef, Timestamp, Value};
use mnemo_index::{FactFilter, FactView, NamespaceIndex, Scope, View};

use crate::change::{Change, Receipt};
use crate::error::EngineError;
use crate::limits::MAX_CONTEXT_TOKENS;
use crate::read_point::{Answer, ReadAt};
use crate::retrieve::docs::fact_sentence;
use crate::retrieve::query::{SearchQuery, SearchResult};
use crate::store::Store;

/// Candidates a context is chosen from.
const CONTEXT_CANDIDATES: usize = 40;

/// The context for one message.
#[derive(Clone, Debug, PartialEq)]
pub struct ContextBlock {
    /// The block as text, ready for a prompt.
    pub text: String,
    /// Its estimated size in tokens (a token per four bytes, rounded up).
    pub tokens: usize,
    /// Facts in force, most relevant first.
    pub facts: Vec<FactView>,
    /// Episodes, most relevant first.
    pub episodes: Vec<Episode>,
    /// Entities involved.
    pub entities: Vec<Entity>,
    /// Whether something relevant was left out for the budget.
    pub truncated: bool,
    /// Intentions the message (or the time) makes due, kept within the budget.
    pub intentions: Vec<crate::intentions::Due>,
    /// The search the block was built from.
    pub search: SearchResult,
}

/// Estimated tokens of a text: one per four bytes, rounded up.
pub fn estimate_tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}

/// A timestamp as a prompt reads it: the date, then the time of day (UTC) to the minute,
/// or to the second when it has seconds; never fractions.
fn short(t: Timestamp) -> String {
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
fn fact_line(index: &NamespaceIndex, f: &FactView, valid_at: Timestamp, values: usize) -> String {
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

fn episode_line(e: &Episode) -> String {
    let mut who = String::new();
    if let Some(role) = &e.role {
        who = format!("{role}: ");
    }
    let text: String = e.text.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("- [{}] {who}{text}\n", short(e.occurred_at))
}

fn entity_line(e: &Entity) -> String {
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
struct Builder {
    text: String,
    budget: usize,
    truncated: bool,
}

impl Builder {
    fn fits(&self, extra: &str) -> bool {
        (self.text.len() + extra.len()).div_ceil(4) <= self.budget
    }

    /// Adds a section's lines in order (with its header before the first) until one does
    /// not fit, so a shorter, less relevant line never jumps ahead of a longer, more
    /// relevant one; returns how many fitted.
    fn section(&mut self, header: &str, lines: &[String]) -> usize {
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

impl Store {
    /// The context block for `message` within `budget` tokens, read at `at`.
    pub fn context(
        &self,
        ns: &Namespace,
        message: &str,
        budget: usize,
        query: &SearchQuery,
        at: ReadAt,
    ) -> Result<Answer<ContextBlock>, EngineError> {
        if budget == 0 || budget > MAX_CONTEXT_TOKENS {
            return Err(EngineError::LimitExceeded {
                field: "budget".into(),
                value: budget as u64,
                max: MAX_CONTEXT_TOKENS as u64,
            });
        }
        let query = SearchQuery {
            text: Some(message.to_owned()),
            kinds: Vec::new(),
            limit: CONTEXT_CANDIDATES,
            include_not_in_force: false,
            ..query.clone()
        };
        let found = self.search(ns, &query, at)?;
        let basis = found.basis;
        let due = self.due_intentions(ns, Some(message), basis.point())?.value;
        let answer =
            self.read_at(ns, basis.point(), |index, view| build(index, view, budget, found.value, due))?;
        Ok(Answer { basis, value: answer.value })
    }

    /// Searches and records the hits as recalled at the decay clock (a `Reinforced`
    /// event), in one step.
    pub fn remember(
        &self,
        ns: &Namespace,
        query: &SearchQuery,
        at: ReadAt,
    ) -> Result<(Answer<SearchResult>, Option<Receipt>), EngineError> {
        let found = self.search(ns, query, at)?;
        let records: Vec<RecordRef> = found.value.hits.iter().map(|h| h.record).collect();
        if records.is_empty() {
            return Ok((found, None));
        }
        let receipt = self.append(ns, vec![Change::Recall { records, at: found.basis.at }])?;
        Ok((found, Some(receipt)))
    }
}

fn build(
    index: &NamespaceIndex,
    view: View,
    budget: usize,
    search: SearchResult,
    mut intentions: Vec<crate::intentions::Due>,
) -> ContextBlock {
    let mut facts: Vec<FactView> = Vec::new();
    let mut episodes: Vec<Episode> = Vec::new();
    let mut entity_ids: Vec<EntityId> = Vec::new();
    let mut seen_facts = HashSet::new();
    let mut add_fact = |f: FactView, facts: &mut Vec<FactView>| {
        if f.in_force() && seen_facts.insert(f.fact.id) {
            facts.push(f);
        }
    };
    for hit in &search.hits {
        match hit.record {
            RecordRef::Fact(id) => {
                if let Some(f) = index.fact_at(id, view) {
                    add_fact(f, &mut facts);
                }
            }
            RecordRef::Episode(id) => {
                if let Some(e) = index.episode_at(id, view.known_at) {
                    episodes.push(e.clone());
                }
            }
            RecordRef::Entity(id) => {
                entity_ids.push(id);
                for f in index.facts(
                    &FactFilter { subject: Some(id), ..FactFilter::default() },
                    view,
                    Scope::InForce,
                ) {
                    add_fact(f, &mut facts);
                }
            }
        }
    }
    let mut b = Builder { text: String::new(), budget, truncated: false };
    let intention_lines: Vec<String> = intentions
        .iter()
        .map(|d| {
            format!("- {}\n", d.intention.intention.payload.split_whitespace().collect::<Vec<_>>().join(" "))
        })
        .collect();
    intentions.truncate(b.section("Intentions due now:", &intention_lines));
    let header = format!("Facts in force at {}:", short(view.valid_at));
    let slot =
        |f: &FactView| (index.canonical_entity(f.fact.subject, view.known_at), f.fact.predicate.clone());
    let mut per_slot: std::collections::HashMap<_, usize> = std::collections::HashMap::new();
    for f in &facts {
        *per_slot.entry(slot(f)).or_default() += 1;
    }
    let fact_lines: Vec<String> =
        facts.iter().map(|f| fact_line(index, f, view.valid_at, per_slot[&slot(f)])).collect();
    facts.truncate(b.section(&header, &fact_lines));
    let episode_lines: Vec<String> = episodes.iter().map(episode_line).collect();
    episodes.truncate(b.section("Relevant episodes:", &episode_lines));

    // The entities involved: those found, then those the kept facts name.
    for f in &facts {
        entity_ids.push(index.canonical_entity(f.fact.subject, view.known_at));
        if let Value::Entity(o) = f.fact.object {
            entity_ids.push(index.canonical_entity(o, view.known_at));
        }
    }
    let mut seen = HashSet::new();
    entity_ids.retain(|e| seen.insert(*e));
    let mut entities: Vec<Entity> =
        entity_ids.iter().filter_map(|e| index.entity_at(*e, view).map(|v| v.entity)).collect();
    let entity_lines: Vec<String> = entities.iter().map(entity_line).collect();
    entities.truncate(b.section("Entities:", &entity_lines));
    ContextBlock {
        tokens: estimate_tokens(&b.text),
        text: b.text,
        truncated: b.truncated,
        facts,
        episodes,
        entities,
        intentions,
        search,
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
        let mut b = Builder { text: String::new(), budget: 6, truncated: false };
        let lines =
            ["- first line\n".to_owned(), "- a much longer second line\n".to_owned(), "- 3\n".to_owned()];
        assert_eq!(b.section("H:", &lines), 1);
        assert!(b.truncated);
        assert_eq!(b.text, "H:\n- first line\n");
    }
}
