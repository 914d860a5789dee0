//! The block an agent puts in its prompt: what is known that matters for a message,
//! facts in force with their validity, the most relevant episodes with their dates, the
//! entities involved; deterministic, trimmed to a token budget.

use std::collections::HashSet;

use mnemo_core::{Entity, EntityId, Episode, Namespace, RecordRef, Timestamp, Value};
use mnemo_index::{FactFilter, FactView, NamespaceIndex, Scope, View};

use crate::change::{Change, Receipt};
use crate::error::EngineError;
use crate::retrieve::{SearchQuery, SearchResult, fact_sentence};
use crate::store::{Answer, ReadAt, Store};

/// Largest budget a context may ask for.
pub const MAX_CONTEXT_TOKENS: usize = 100_000;
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
    /// The search the block was built from.
    pub search: SearchResult,
}

/// Estimated tokens of a text: one per four bytes, rounded up.
pub fn estimate_tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}

fn short(t: Timestamp) -> String {
    let s = t.to_string();
    match s.strip_suffix("T00:00:00.000000Z") {
        Some(date) => date.to_owned(),
        None => s.trim_end_matches(".000000Z").trim_end_matches('Z').replace('T', " "),
    }
}

fn fact_line(index: &NamespaceIndex, f: &FactView) -> String {
    let when = match f.valid.to() {
        Some(to) => format!("valid {} to {}", short(f.valid.from()), short(to)),
        None => format!("since {}", short(f.valid.from())),
    };
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
        let answer =
            self.read_at(ns, basis.read_at(), |index, view| build(index, view, budget, found.value))?;
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

fn build(index: &NamespaceIndex, view: View, budget: usize, search: SearchResult) -> ContextBlock {
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
    let header = format!("Facts in force at {}:", short(view.valid_at));
    let fact_lines: Vec<String> = facts.iter().map(|f| fact_line(index, f)).collect();
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
        search,
    }
}
