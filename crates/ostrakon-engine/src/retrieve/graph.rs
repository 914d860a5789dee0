//! The graph component of a search: the facts the query finds with the episodes they
//! were stated from, and the neighbourhood of the entities it names — each entity, its
//! facts, and the episodes behind them.
//!
//! A fact often says plainly what its episode only hints at (an extractor's "Ann bought a
//! house in Lisbon" from the turn "guess who finally got the keys today!"), so a fact
//! the query's words or vector find brings its episodes, best first, whoever the query
//! names: a question that names the wrong person still finds them. And an entity may hold
//! hundreds of facts (a person in a long conversation): listed newest first, the one a
//! question is about would sink below any cut. A query that finds no fact gets the
//! neighbourhoods newest first, as it always did.

use std::collections::{HashMap, HashSet};

use ostrakon_core::{EntityId, FactId, RecordRef, Value};
use ostrakon_index::{FactFilter, FactView, NamespaceIndex, Scope, View};
use ostrakon_search::{RRF_K, rrf};

use crate::retrieve::index::SearchIndex;
use crate::retrieve::keys::{KIND_FACT, key, record};

/// The facts the query's words (full text) and vector find, as rank (0 best) by fact:
/// the two lists fused, `pool` of each at most. Only a query whose words find some fact
/// looks for facts by vector too.
pub(crate) fn relevant_facts(
    search: &SearchIndex,
    text: Option<&str>,
    vector: Option<&[f32]>,
    pool: usize,
) -> HashMap<FactId, usize> {
    let mut lists = Vec::new();
    if let Some(text) = text
        && let Ok(hits) = search.text.search(text, &[KIND_FACT], pool)
        && !hits.is_empty()
    {
        // Among the vectors only where facts have some: a filtered search among
        // vectors that hold none would walk the whole graph to find nothing.
        let embedded = |vectors: &crate::retrieve::index::Vectors| {
            hits.iter().any(|(k, _)| vectors.alone.get(*k).is_some())
        };
        let vectors = search.vectors().filter(|vectors| embedded(vectors));
        lists.push(hits);
        if let (Some(v), Some(vectors)) = (vector, vectors) {
            let is_fact = |k: u64| k & 3 == KIND_FACT;
            if let Ok(found) = vectors.alone.search(v, pool, &is_fact) {
                lists.push(found);
            }
        }
    }
    let mut ranks = HashMap::new();
    for fused in rrf(&lists, RRF_K) {
        if let RecordRef::Fact(id) = record(fused.key) {
            let next = ranks.len();
            ranks.entry(id).or_insert(next);
        }
    }
    ranks
}

/// The graph list: the seeds (the entities named); the facts in `relevant` (those in
/// force at the view, unless `all`), best first, each followed by its episodes (latest
/// first); then for each seed in turn, its other facts (latest valid first) and the
/// episodes behind them.
pub(crate) fn graph_list(
    index: &NamespaceIndex,
    view: View,
    seeds: &[EntityId],
    relevant: &HashMap<FactId, usize>,
    all: bool,
) -> Vec<(u64, f32)> {
    let scope = if all { Scope::All } else { Scope::InForce };
    let mut keys: Vec<u64> = Vec::new();
    let mut seen = HashSet::new();
    let mut add = |k: u64, keys: &mut Vec<u64>| {
        if seen.insert(k) {
            keys.push(k);
        }
    };
    let neighbourhoods: Vec<Vec<FactView>> = seeds
        .iter()
        .map(|&e| {
            let mut facts =
                index.facts(&FactFilter { subject: Some(e), ..FactFilter::default() }, view, scope);
            facts.extend(index.facts(
                &FactFilter { subject: None, predicate: None, object: Some(Value::Entity(e)) },
                view,
                scope,
            ));
            facts.sort_by(|a, b| b.valid.from().cmp(&a.valid.from()).then(b.fact.id.cmp(&a.fact.id)));
            facts
        })
        .collect();
    for &e in seeds {
        add(key(RecordRef::Entity(e)), &mut keys);
    }
    let mut ordered: Vec<(usize, FactId)> = relevant.iter().map(|(id, rank)| (*rank, *id)).collect();
    ordered.sort_unstable();
    let ids: Vec<FactId> = ordered.into_iter().map(|(_, id)| id).collect();
    for f in index.facts_by_id(&ids, view) {
        if !all && !f.in_force() {
            continue;
        }
        add(key(RecordRef::Fact(f.fact.id)), &mut keys);
        for p in f.provenance.iter().rev() {
            add(key(RecordRef::Episode(*p)), &mut keys);
        }
    }
    for facts in &neighbourhoods {
        for f in facts {
            add(key(RecordRef::Fact(f.fact.id)), &mut keys);
        }
        for f in facts {
            for p in f.provenance.iter().rev() {
                add(key(RecordRef::Episode(*p)), &mut keys);
            }
        }
    }
    keys.into_iter().enumerate().map(|(i, k)| (k, 1.0 / (i + 1) as f32)).collect()
}
