//! The block an agent puts in its prompt: what is known that matters for a message,
//! facts in force with their validity, the most relevant episodes with their dates, the
//! entities involved; deterministic, trimmed to a token budget.

use std::collections::HashSet;

use ostrakon_core::{Entity, EntityId, Episode, Namespace, RecordRef, Timestamp, Value};
use ostrakon_index::{FactFilter, FactView, NamespaceIndex, Scope, View};

use crate::change::{Change, Receipt};
use crate::context::lines::{Builder, entity_line, episode_line, estimate_tokens, fact_line, short};
use crate::error::read::ReadError;
use crate::error::write::WriteError;
use crate::limits::MAX_CONTEXT_TOKENS;
use crate::read::point::{Answer, ReadAt};
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
    pub intentions: Vec<crate::maintain::intentions::Due>,
    /// The search the block was built from.
    pub search: SearchResult,
    /// What each tier gave: CORE, the ACTIVE scopes, then ARCHIVE (the search's finds),
    /// each with what the budget left out. The lists above hold them all, in block order.
    pub tiers: Vec<crate::context::tiers::TierUse>,
}

impl Store {
    /// `Reader::context`, positional.
    pub(crate) fn context(
        &self,
        ns: &Namespace,
        message: &str,
        budget: usize,
        query: &SearchQuery,
        at: ReadAt,
    ) -> Result<Answer<ContextBlock>, ReadError> {
        self.context_in(ns, message, budget, query, None, at)
    }

    /// `Reader::context_in`, positional.
    pub(crate) fn context_in(
        &self,
        ns: &Namespace,
        message: &str,
        budget: usize,
        query: &SearchQuery,
        scopes: Option<&[String]>,
        at: ReadAt,
    ) -> Result<Answer<ContextBlock>, ReadError> {
        if budget == 0 || budget > MAX_CONTEXT_TOKENS {
            return Err(ReadError::LimitExceeded {
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
        // Read as of a valid time before now, the block tells that time: an episode that
        // happened after it is marked so (its text may state what only came later).
        let as_of = (!basis.of_the_present()).then_some(basis.valid_at);
        let answer = self.read_at(ns, basis.point(), |index, view| {
            build(index, view, budget, found.value, due, scopes, as_of)
        })?;
        Ok(Answer { basis, value: answer.value })
    }

    /// Searches and records the hits as recalled at the decay clock (a `Reinforced`
    /// event), in one step.
    pub fn remember(
        &self,
        ns: &Namespace,
        query: &SearchQuery,
        at: ReadAt,
    ) -> Result<(Answer<SearchResult>, Option<Receipt>), WriteError> {
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
    mut intentions: Vec<crate::maintain::intentions::Due>,
    scopes: Option<&[String]>,
    as_of: Option<Timestamp>,
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
    let mut b = Builder { text: String::new(), budget, truncated: false, as_of };
    let intention_lines: Vec<String> = intentions
        .iter()
        .map(|d| {
            format!("- {}\n", d.intention.intention.payload.split_whitespace().collect::<Vec<_>>().join(" "))
        })
        .collect();
    intentions.truncate(b.section("Intentions due now:", &intention_lines));
    let rank = |r: RecordRef| search.hits.iter().position(|h| h.record == r);
    let placed = crate::context::tiers::add_tiers(&mut b, index, view, budget, scopes, &rank);
    facts.retain(|f| !placed.shown.contains(&RecordRef::Fact(f.fact.id)));
    episodes.retain(|e| !placed.shown.contains(&RecordRef::Episode(e.id)));
    let found = (facts.len(), episodes.len());
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
    let episode_lines: Vec<String> = episodes.iter().map(|e| episode_line(index, view, e, as_of)).collect();
    episodes.truncate(b.section("Relevant episodes:", &episode_lines));

    // The entities involved: those found, then those the kept facts name.
    for f in &facts {
        entity_ids.push(index.canonical_entity(f.fact.subject, view.known_at));
        if let Value::Entity(o) = f.fact.object {
            entity_ids.push(index.canonical_entity(o, view.known_at));
        }
    }
    let mut seen = HashSet::new();
    entity_ids.retain(|e| seen.insert(*e) && !placed.shown.contains(&RecordRef::Entity(*e)));
    let mut entities: Vec<Entity> =
        entity_ids.iter().filter_map(|e| index.entity_at(*e, view).map(|v| v.entity)).collect();
    let entity_lines: Vec<String> = entities.iter().map(entity_line).collect();
    let found_entities = entities.len();
    entities.truncate(b.section("Entities:", &entity_lines));
    let archive = crate::context::tiers::TierUse {
        tier: None,
        records: (facts.iter().map(|f| RecordRef::Fact(f.fact.id)))
            .chain(episodes.iter().map(|e| RecordRef::Episode(e.id)))
            .chain(entities.iter().map(|e| RecordRef::Entity(e.id)))
            .collect(),
        left_out: found.0 - facts.len() + found.1 - episodes.len() + found_entities - entities.len(),
    };
    let mut tiers = placed.uses;
    tiers.push(archive);
    ContextBlock {
        tokens: estimate_tokens(&b.text),
        text: b.text,
        truncated: b.truncated,
        facts: placed.facts.into_iter().chain(facts).collect(),
        episodes: placed.episodes.into_iter().chain(episodes).collect(),
        entities: placed.entities.into_iter().chain(entities).collect(),
        intentions,
        search,
        tiers,
    }
}
