//! `search`: full text, vectors and the graph (the facts a query finds and the
//! neighbourhood of the entities it names), fused, weighted by retention and diversified.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, PoisonError};

use ostrakon_core::Status;
use ostrakon_core::{EmbeddingMode, EntityId, EpisodeId, FactId, RecordRef, Seq, Timestamp, Value};
use ostrakon_index::{FactFilter, FactView, NamespaceIndex, Scope, View};
use ostrakon_search::Embedder;
use ostrakon_search::{RRF_K, cue_strength, mmr, retention_weight, rrf};

use crate::error::read::ReadError;
use crate::limits::MAX_QUERY_ENTITIES;
use crate::limits::MAX_SEARCH_LIMIT;
use crate::limits::MAX_TOPICS;
use crate::read::point::{Answer, Basis, ReadAt};
use crate::retrieve::docs::name_words;
use crate::retrieve::docs::record_text;
use crate::retrieve::docs::speaker;
use crate::retrieve::graph::{graph_list, relevant_facts};
use crate::retrieve::index::SearchIndex;
use crate::retrieve::keys::KIND_EPISODE;
use crate::retrieve::keys::as_episodes;
use crate::retrieve::keys::episode_key;
use crate::retrieve::keys::kind_code;
use crate::retrieve::keys::record;
use crate::retrieve::neighbours::neighbour_list;
use crate::retrieve::newer::{lift_newer, newer_first};
use crate::retrieve::query::Component;
use crate::retrieve::query::ComponentRank;
use crate::retrieve::query::Explanation;
use crate::retrieve::query::MAX_QUERY_TAGS;
use crate::retrieve::query::MAX_TAGGED;
use crate::retrieve::query::NEIGHBOUR_SEEDS;
use crate::retrieve::query::SearchHit;
use crate::retrieve::query::SearchQuery;
use crate::retrieve::query::SearchResult;
use crate::retrieve::query::TopicScore;
use crate::retrieve::topical::{SEGMENT_SEEDS, segment_list};
use crate::shard::Shard;
use crate::store::Store;
use crate::sync::lock;

/// Whether a candidate is visible at the read and passes the filters, and its status.
struct Admit<'a> {
    pub(crate) index: &'a NamespaceIndex,
    pub(crate) view: View,
    pub(crate) query: &'a SearchQuery,
    pub(crate) kinds: Vec<u64>,
    /// With an entity or predicate filter: the facts that pass it.
    pub(crate) facts_allowed: Option<HashSet<FactId>>,
    pub(crate) episodes_allowed: Option<HashSet<EpisodeId>>,
    /// With topic-first: the entities of the chosen topics.
    pub(crate) entities_allowed: Option<HashSet<EntityId>>,
    pub(crate) cache: Mutex<HashMap<u64, Option<Option<Status>>>>,
}

impl Admit<'_> {
    pub(crate) fn kind_ok(&self, k: u64) -> bool {
        self.kinds.is_empty() || self.kinds.contains(&(k & 3))
    }

    /// `None`: not admitted; `Some(status)`: admitted (status for facts).
    pub(crate) fn check(&self, k: u64) -> Option<Option<Status>> {
        if !self.kind_ok(k) {
            return None;
        }
        if let Some(hit) = lock(&self.cache).get(&k) {
            return *hit;
        }
        let verdict = self.compute(k);
        lock(&self.cache).insert(k, verdict);
        verdict
    }

    pub(crate) fn window_has(&self, t: Timestamp) -> bool {
        self.query.occurred_from.is_none_or(|f| t >= f) && self.query.occurred_to.is_none_or(|to| t < to)
    }

    pub(crate) fn compute(&self, k: u64) -> Option<Option<Status>> {
        let q = self.query;
        match record(k) {
            RecordRef::Episode(id) => {
                let e = self.index.episode_at(id, self.view.known_at)?;
                let ok = self.window_has(e.occurred_at)
                    && q.thread.as_ref().is_none_or(|t| e.thread.as_ref() == Some(t))
                    && self.episodes_allowed.as_ref().is_none_or(|a| a.contains(&id));
                ok.then_some(None)
            }
            RecordRef::Fact(id) => {
                let f = self.index.fact_at(id, self.view)?;
                if !q.include_not_in_force && !f.in_force() {
                    return None;
                }
                if self.facts_allowed.as_ref().is_some_and(|a| !a.contains(&f.fact.id)) {
                    return None;
                }
                if let Some(thread) = &q.thread {
                    let in_thread = f.provenance.iter().any(|p| {
                        self.index
                            .episode_at(*p, self.view.known_at)
                            .is_some_and(|e| e.thread.as_ref() == Some(thread))
                    });
                    if !in_thread {
                        return None;
                    }
                }
                if q.occurred_from.is_some() || q.occurred_to.is_some() {
                    let from = q.occurred_from.unwrap_or(Timestamp::MIN);
                    let to = q.occurred_to.unwrap_or(Timestamp::MAX);
                    if !(f.valid.from() < to && f.valid.to().is_none_or(|end| end > from)) {
                        return None;
                    }
                }
                Some(Some(f.status))
            }
            RecordRef::Entity(id) => {
                if q.thread.is_some() || q.predicate.is_some() {
                    return None;
                }
                let canonical = self.index.canonical_entity(id, self.view.known_at);
                if canonical != id {
                    return None;
                }
                if q.entity.is_some_and(|e| self.index.canonical_entity(e, self.view.known_at) != id) {
                    return None;
                }
                if self.entities_allowed.as_ref().is_some_and(|a| !a.contains(&id)) {
                    return None;
                }
                self.index.entity_at(id, self.view).map(|_| None)
            }
        }
    }
}

impl Store {
    /// `Reader::search`, positional.
    pub(crate) fn search(
        &self,
        ns: &ostrakon_core::Namespace,
        query: &SearchQuery,
        at: ReadAt,
    ) -> Result<Answer<SearchResult>, ReadError> {
        check_query(query)?;
        let shard = self.shard(ns)?;
        let mut warnings = Vec::new();
        // Wait (outside any index lock) until the indexes hold what this read will see.
        if let Some(shard) = &shard
            && query.wait_for_index
        {
            let latest = shard.index.read().unwrap_or_else(PoisonError::into_inner).last_seq();
            let target = match at.known_at {
                // A batch that does not exist yet would be waited for in vain.
                crate::read::point::KnownAt::Seq(s) if s > latest => {
                    return Err(ReadError::NotYetKnown { requested: s, latest });
                }
                crate::read::point::KnownAt::Seq(s) => s,
                _ => latest,
            };
            shard.search.wait_for(target, query.wait_for_vectors)?;
        }
        let query_vector = self.query_vector(shard.as_deref(), query, &mut warnings)?;
        crate::interrupt::check("a search")?;
        let answer = self.read_search(ns, at, |index, basis| match &shard {
            None => Ok(SearchResult {
                hits: Vec::new(),
                matched_entities: Vec::new(),
                indexed_seq: Seq(0),
                warnings: warnings.clone(),
                topics: Vec::new(),
            }),
            Some(shard) => {
                run_search(index, basis, &shard.search, query, query_vector.as_deref(), warnings.clone())
            }
        })?;
        Ok(Answer { basis: answer.basis, value: answer.value? })
    }

    /// The vector a query is searched with: the one given (checked), else its text
    /// embedded by the built-in embedder in a built-in namespace.
    pub(crate) fn query_vector(
        &self,
        shard: Option<&Shard>,
        query: &SearchQuery,
        warnings: &mut Vec<String>,
    ) -> Result<Option<Vec<f32>>, ReadError> {
        let Some(shard) = shard else { return Ok(None) };
        let mode = shard.index.read().unwrap_or_else(PoisonError::into_inner).embedding_mode();
        if let Some(w) = &lock(&shard.search.progress).warning {
            warnings.push(w.clone());
        }
        if let Some(v) = &query.vector {
            let dim = match mode {
                EmbeddingMode::Client { dim } => dim as usize,
                EmbeddingMode::Off => {
                    return Err(ostrakon_core::CoreError::invalid_value(
                        "vector",
                        format!("{} numbers", v.len()),
                        "this namespace keeps no vectors",
                    )
                    .into());
                }
                EmbeddingMode::Builtin | EmbeddingMode::Model(_) => match shard.search.vectors() {
                    Some(vectors) => vectors.alone.dim(),
                    None => v.len(),
                },
            };
            crate::write::validate::check_vector("vector", v, dim)?;
            return Ok(Some(v.clone()));
        }
        let (true, Some(text)) = (mode.is_builtin(), &query.text) else {
            return Ok(None);
        };
        match self.retrieval.embedder(mode) {
            None => Ok(None),
            Some(Err(e)) => {
                warnings.push(format!("searching without vectors: {e}"));
                Ok(None)
            }
            Some(Ok(embedder)) => match embedder.embed_query(text) {
                Ok(v) => Ok(Some(v)),
                Err(e) => {
                    warnings.push(format!("searching without vectors: {e}"));
                    Ok(None)
                }
            },
        }
    }
}

fn check_query(q: &SearchQuery) -> Result<(), ReadError> {
    let invalid = |field: &str, value: String, why: &str| -> ReadError {
        ostrakon_core::CoreError::invalid_value(field, value, why).into()
    };
    if q.text.as_deref().is_none_or(|t| t.trim().is_empty()) && q.vector.is_none() && q.entity.is_none() {
        return Err(invalid("text", String::new(), "a search needs text, a vector or an entity"));
    }
    if q.topics > MAX_TOPICS {
        return Err(ReadError::LimitExceeded {
            field: "topics".into(),
            value: q.topics as u64,
            max: MAX_TOPICS as u64,
        });
    }
    if let Some(t) = &q.text
        && t.len() > crate::limits::MAX_TEXT_BYTES
    {
        return Err(ReadError::LimitExceeded {
            field: "text".into(),
            value: t.len() as u64,
            max: crate::limits::MAX_TEXT_BYTES as u64,
        });
    }
    if q.limit == 0 || q.limit > MAX_SEARCH_LIMIT {
        return Err(ReadError::LimitExceeded {
            field: "limit".into(),
            value: q.limit as u64,
            max: MAX_SEARCH_LIMIT as u64,
        });
    }
    for (field, v) in [("retentionFloor", q.retention_floor), ("diversity", q.diversity_lambda)] {
        if !(0.0..=1.0).contains(&v) {
            return Err(invalid(field, v.to_string(), "must be in [0, 1]"));
        }
    }
    crate::read::point::check_window("occurredFrom..occurredTo", q.occurred_from, q.occurred_to)
}

/// The search proper, under the namespace's read lock: the entities the query names, the
/// topics in scope, the ranked lists of candidates, their fused and weighted scores, and
/// a diverse pick of the best.
fn run_search(
    index: &NamespaceIndex,
    basis: &Basis,
    search: &SearchIndex,
    query: &SearchQuery,
    query_vector: Option<&[f32]>,
    mut warnings: Vec<String>,
) -> Result<SearchResult, ReadError> {
    let view = View { valid_at: basis.valid_at, known_at: basis.known_at };
    let indexed = search.indexed();
    if indexed < basis.known_at {
        let text = search.text_indexed().min(basis.known_at);
        warnings
            .push(format!("vectors hold batches up to {indexed} of {}, text up to {text}", basis.known_at));
    }
    let pool = (query.limit * 5).max(50);
    let (facts_allowed, episodes_allowed) = allowed(index, view, query);
    let matched = matched_entities(index, view, query);
    let (topics, scope) =
        topics_in_scope(index, basis, query, query_vector, &matched, (facts_allowed, episodes_allowed))?;
    if !query.records {
        return Ok(SearchResult {
            hits: Vec::new(),
            matched_entities: matched,
            indexed_seq: indexed,
            warnings,
            topics,
        });
    }
    let (facts_allowed, episodes_allowed, entities_allowed) = scope;
    let admit = Admit {
        index,
        view,
        query,
        kinds: query.kinds.iter().map(|k| kind_code(*k)).collect(),
        facts_allowed,
        episodes_allowed,
        entities_allowed,
        cache: Mutex::new(HashMap::new()),
    };
    let lists = candidate_lists(basis, search, &admit, query_vector, &matched, pool, &mut warnings);
    let (scored, replaced) = score(basis, &admit, &lists, pool);
    let mut hits = diversify(index, search, query, scored);
    newer_first(&mut hits, &replaced);
    Ok(SearchResult { hits, matched_entities: matched, indexed_seq: indexed, warnings, topics })
}

/// The entities the query's text names, as they read at the view (at most
/// `MAX_QUERY_ENTITIES`).
fn matched_entities(index: &NamespaceIndex, view: View, query: &SearchQuery) -> Vec<EntityId> {
    let mut matched: Vec<EntityId> = Vec::new();
    if let Some(text) = query.text.as_deref() {
        for (k, _) in index.names_in(text) {
            let e = index.canonical_entity(k, view.known_at);
            if !matched.contains(&e) {
                matched.push(e);
            }
            if matched.len() == MAX_QUERY_ENTITIES {
                break;
            }
        }
    }
    matched
}

/// Which records a search may return: the facts and episodes its filters allow, narrowed
/// to its best topics when it asks for them (with those topics' entities); and the topics
/// ranked against it.
type Allowed = (Option<HashSet<FactId>>, Option<HashSet<EpisodeId>>, Option<HashSet<EntityId>>);

fn topics_in_scope(
    index: &NamespaceIndex,
    basis: &Basis,
    query: &SearchQuery,
    query_vector: Option<&[f32]>,
    matched: &[EntityId],
    (mut facts_allowed, mut episodes_allowed): (Option<HashSet<FactId>>, Option<HashSet<EpisodeId>>),
) -> Result<(Vec<TopicScore>, Allowed), ReadError> {
    let view = View { valid_at: basis.valid_at, known_at: basis.known_at };
    let mut topics = Vec::new();
    let mut entities_allowed = None;
    if query.topics > 0 || query.rank_topics {
        topics = rank_topics(index, basis, matched, query_vector)?;
        if query.topics > 0 {
            topics.truncate(query.topics);
            let (f, e, n) = topic_scope(index, view, &topics, query.include_not_in_force);
            facts_allowed = Some(match facts_allowed {
                Some(a) => a.intersection(&f).copied().collect(),
                None => f,
            });
            episodes_allowed = Some(match episodes_allowed {
                Some(a) => a.intersection(&e).copied().collect(),
                None => e,
            });
            entities_allowed = Some(n);
        }
    }
    Ok((topics, (facts_allowed, episodes_allowed, entities_allowed)))
}

/// The ranked lists a search fuses, one per component: full text (alone and in
/// context), vectors (alone and in context), the days the query names, the graph around
/// the entities it names, and the turns around the best hits so far.
fn candidate_lists(
    basis: &Basis,
    search: &SearchIndex,
    admit: &Admit<'_>,
    query_vector: Option<&[f32]>,
    matched: &[EntityId],
    pool: usize,
    warnings: &mut Vec<String>,
) -> Vec<(Component, Vec<(u64, f32)>)> {
    let (index, view, query) = (admit.index, admit.view, admit.query);
    let keep = |k: u64| admit.check(k).is_some();
    let mut lists: Vec<(Component, Vec<(u64, f32)>)> = Vec::new();
    let push = |lists: &mut Vec<(Component, Vec<(u64, f32)>)>,
                c: Component,
                hits: Result<Vec<(u64, f32)>, ostrakon_search::SearchError>,
                warnings: &mut Vec<String>| {
        if query.without.contains(&c) {
            return;
        }
        match hits {
            Ok(hits) => lists.push((c, hits.into_iter().filter(|h| keep(h.0)).take(pool).collect())),
            Err(e) => warnings.push(format!("{} search failed: {e}", c.describe())),
        }
    };
    if let Some(text) = query.text.as_deref() {
        // Full text over-fetches: visibility and filters are applied after.
        let kinds: Vec<u64> = admit.kinds.clone();
        push(&mut lists, Component::Text, search.text.search(text, &kinds, pool * 4), warnings);
        if admit.kind_ok(KIND_EPISODE) {
            push(
                &mut lists,
                Component::TextInContext,
                as_episodes(search.context_text.search(text, &[], pool * 4)),
                warnings,
            );
        }
    }
    if let (Some(v), Some(vectors)) = (query_vector, search.vectors()) {
        push(&mut lists, Component::Vector, vectors.alone.search(v, pool, &keep), warnings);
        if admit.kind_ok(KIND_EPISODE) && !vectors.context.is_empty() {
            // Two documents an episode: twice the hits, to keep `pool` episodes.
            let keep_episode = |k: u64| keep(episode_key(k));
            push(
                &mut lists,
                Component::VectorInContext,
                as_episodes(vectors.context.search(v, pool * 2, &keep_episode)),
                warnings,
            );
        }
    }
    // Lists among the episodes of the days the query names.
    if let Some(text) = query.text.as_deref()
        && admit.kind_ok(KIND_EPISODE)
    {
        let day = index.config().time_zone.local_date(basis.at);
        let mut days: Vec<String> = ostrakon_search::when::mentions(text, day)
            .iter()
            .flat_map(ostrakon_search::when::query_terms)
            .collect();
        days.sort();
        days.dedup();
        days.truncate(MAX_QUERY_TAGS);
        if !days.is_empty() {
            let time = search.text.search_tagged(text, &[KIND_EPISODE], &days, pool * 4);
            push(&mut lists, Component::Time, time, warnings);
            if let (Some(v), Some(vectors)) = (query_vector, search.vectors())
                && !query.without.contains(&Component::VectorInTime)
            {
                match search.text.keys_tagged(&days, MAX_TAGGED) {
                    Ok(within) => {
                        let among = |k: u64| within.contains(&k) && keep(k);
                        let hits = vectors.alone.search(v, pool, &among);
                        push(&mut lists, Component::VectorInTime, hits, warnings);
                    }
                    Err(e) => warnings.push(format!("VectorInTime search failed: {e}")),
                }
            }
        }
    }
    let mut seeds = matched.to_vec();
    if let Some(e) = query.entity {
        let e = index.canonical_entity(e, view.known_at);
        if !seeds.contains(&e) {
            seeds.push(e);
        }
    }
    // Made only when it takes part: its fact search costs a query.
    if !query.without.contains(&Component::Graph) {
        let relevant = relevant_facts(search, query.text.as_deref(), query_vector, pool);
        if !seeds.is_empty() || !relevant.is_empty() {
            let graph = graph_list(index, view, &seeds, &relevant, query.include_not_in_force);
            push(&mut lists, Component::Graph, Ok(graph), warnings);
        }
    }

    // Evidence in a conversation spans turns: the turns before and after the best
    // episodes so far, in their order, make one more list; the other turns of their
    // topical segments another.
    let wants = |c: Component| admit.kind_ok(KIND_EPISODE) && !query.without.contains(&c);
    if wants(Component::Neighbour) || wants(Component::Segment) {
        let ranked: Vec<Vec<(u64, f32)>> = lists.iter().map(|(_, l)| l.clone()).collect();
        let best: Vec<EpisodeId> = rrf(&ranked, RRF_K)
            .into_iter()
            .filter(|f| f.key & 3 == KIND_EPISODE)
            .take(NEIGHBOUR_SEEDS.max(SEGMENT_SEEDS))
            .map(|f| EpisodeId(f.key >> 2))
            .collect();
        if wants(Component::Segment) {
            let seeds = &best[..best.len().min(SEGMENT_SEEDS)];
            let topical = segment_list(index, view, search, seeds, query_vector, pool);
            push(&mut lists, Component::Segment, Ok(topical), warnings);
        }
        if wants(Component::Neighbour) {
            let near = neighbour_list(index, view, &best[..best.len().min(NEIGHBOUR_SEEDS)]);
            push(&mut lists, Component::Neighbour, Ok(near), warnings);
        }
    }
    lists
}

/// A candidate: its key, its relevance and how it got it.
type Scored = (u64, f64, Explanation);

/// The fused candidates, each weighted by retention (or its cue), speaker and whether it
/// states a time for a question that asks when; best first, with their explanations. And,
/// read at the present, which candidates state what replaced another's statement.
fn score(
    basis: &Basis,
    admit: &Admit<'_>,
    lists: &[(Component, Vec<(u64, f32)>)],
    pool: usize,
) -> (Vec<Scored>, Vec<(u64, u64)>) {
    let (index, view, query) = (admit.index, admit.view, admit.query);
    let ranked: Vec<Vec<(u64, f32)>> = lists.iter().map(|(_, l)| l.clone()).collect();
    let fused = rrf(&ranked, RRF_K);
    // The words of the query, against which each episode's speaker is read.
    let named: HashSet<String> = match query.text.as_deref() {
        Some(text) if query.speaker_boost > 0.0 => name_words(text).collect(),
        _ => HashSet::new(),
    };
    // A question that asks when is answered by an episode that states a time.
    let asks_when =
        query.time_boost > 0.0 && query.text.as_deref().is_some_and(ostrakon_search::when::asks_when);
    let tz = index.config().time_zone;
    let states_time = |r: RecordRef| match r {
        RecordRef::Episode(id) if asks_when => index
            .episode(id)
            .is_some_and(|e| ostrakon_search::when::states_time(&e.text, tz.local_date(e.occurred_at))),
        _ => false,
    };
    let spoken_by_named = |r: RecordRef| match r {
        RecordRef::Episode(id) if !named.is_empty() => {
            index.episode(id).and_then(speaker).is_some_and(|who| name_words(who).any(|w| named.contains(&w)))
        }
        _ => false,
    };
    let mut scored: Vec<(u64, f64, Explanation)> = fused
        .into_iter()
        .take(pool)
        .filter_map(|f| {
            let status = admit.check(f.key)?;
            let r = record(f.key);
            let state = index.trace(r, view.known_at).map(|(trace, profile)| trace.state(&profile, basis.at));
            let retention = state.as_ref().map_or(1.0, |s| s.retention);
            let dormant = state.as_ref().is_some_and(|s| s.dormant);
            let cue = cue_strength(&f);
            let weight = retention_weight(retention.max(cue), query.retention_floor);
            let components = f
                .ranks
                .iter()
                .zip(lists)
                .filter_map(|(r, (c, _))| r.map(|(rank, score)| ComponentRank { component: *c, rank, score }))
                .collect();
            let speaker = if spoken_by_named(r) { 1.0 + query.speaker_boost } else { 1.0 };
            let time = if states_time(r) { 1.0 + query.time_boost } else { 1.0 };
            let relevance = f.score * weight * speaker * time;
            Some((
                f.key,
                relevance,
                Explanation {
                    components,
                    fused: f.score,
                    cue,
                    retention,
                    weight,
                    speaker,
                    time,
                    newer: 1.0,
                    relevance,
                    mmr: 0.0,
                    status,
                    dormant,
                },
            ))
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let replaced = if basis.of_the_present() { lift_newer(index, view, &mut scored) } else { Vec::new() };
    scored.truncate((query.limit * 3).max(30));
    (scored, replaced)
}

/// A diverse pick of the best scored candidates (MMR): cosine between vectors where
/// there are some, else overlap of terms.
fn diversify(
    index: &NamespaceIndex,
    search: &SearchIndex,
    query: &SearchQuery,
    scored: Vec<(u64, f64, Explanation)>,
) -> Vec<SearchHit> {
    let vectors = search.vectors();
    let embedded: Vec<Option<Vec<f32>>> =
        scored.iter().map(|(k, _, _)| vectors.as_ref().and_then(|v| v.alone.get(*k))).collect();
    let terms: Vec<HashSet<String>> = scored
        .iter()
        .map(|(k, _, _)| {
            record_text(index, record(*k))
                .map(|t| search.text.terms(&t).into_iter().collect())
                .unwrap_or_default()
        })
        .collect();
    let sim = |a: usize, b: usize| match (&embedded[a], &embedded[b]) {
        (Some(x), Some(y)) => f64::from(ostrakon_search::dot(x, y)).max(0.0),
        _ => {
            let (x, y) = (&terms[a], &terms[b]);
            let union = x.union(y).count();
            if union == 0 { 0.0 } else { x.intersection(y).count() as f64 / union as f64 }
        }
    };
    let relevance: Vec<f64> = scored.iter().map(|s| s.1).collect();
    let picked = mmr(&relevance, query.limit, query.diversity_lambda, sim);
    picked
        .into_iter()
        .map(|(i, value)| {
            let (k, score, mut explanation) = scored[i].clone();
            explanation.mmr = value;
            SearchHit { record: record(k), score, explanation }
        })
        .collect()
}

/// The topics of the network at the read, scored against the query: centroid similarity
/// to its vector (when both exist) plus the share of members it names; best first, those
/// scoring nothing left out.
fn rank_topics(
    index: &NamespaceIndex,
    basis: &Basis,
    named: &[EntityId],
    query_vector: Option<&[f32]>,
) -> Result<Vec<TopicScore>, ReadError> {
    let net = crate::read::topics::network(index, basis.known_at, basis.at)?;
    let mut scored: Vec<TopicScore> = net
        .topics
        .into_iter()
        .filter_map(|topic| {
            let sim = match (query_vector, topic.centroid.as_deref()) {
                (Some(q), Some(c)) => ostrakon_topics::cosine(q, c).map_or(0.0, |s| f64::from(s.max(0.0))),
                _ => 0.0,
            };
            let hits = topic.members.iter().filter(|(e, _)| named.contains(e)).count();
            let share = hits as f64 / topic.members.len().max(1) as f64;
            let score = sim + share;
            (score > 0.0).then_some(TopicScore { topic, score })
        })
        .collect();
    scored.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.topic.id.cmp(&b.topic.id)));
    Ok(scored)
}

/// What lies inside some topics: their members' facts, the episodes of their segments
/// and those mentioning a member, and the members.
fn topic_scope(
    index: &NamespaceIndex,
    view: View,
    topics: &[TopicScore],
    all: bool,
) -> (HashSet<FactId>, HashSet<EpisodeId>, HashSet<EntityId>) {
    let scope = if all { Scope::All } else { Scope::InForce };
    let (mut facts, mut episodes, mut entities) = (HashSet::new(), HashSet::new(), HashSet::new());
    for t in topics {
        for n in &t.topic.segments {
            if let Some(seg) = index.segment(*n, view.known_at) {
                episodes.extend(seg.episodes.iter().copied());
            }
        }
        for (e, _) in &t.topic.members {
            entities.insert(*e);
            for filter in [
                FactFilter { subject: Some(*e), ..FactFilter::default() },
                FactFilter { object: Some(Value::Entity(*e)), ..FactFilter::default() },
            ] {
                facts.extend(index.facts(&filter, view, scope).into_iter().map(|f| f.fact.id));
            }
            let page = index.mentioning(*e, view.known_at, None, usize::MAX);
            episodes.extend(page.items.into_iter().map(|(_, ep)| ep.id));
        }
    }
    (facts, episodes, entities)
}

/// With an entity or predicate filter, the facts and episodes that pass it.
fn allowed(
    index: &NamespaceIndex,
    view: View,
    q: &SearchQuery,
) -> (Option<HashSet<FactId>>, Option<HashSet<EpisodeId>>) {
    if q.entity.is_none() && q.predicate.is_none() {
        return (None, None);
    }
    let scope = if q.include_not_in_force { Scope::All } else { Scope::InForce };
    let mut facts: Vec<FactView> = Vec::new();
    match q.entity {
        Some(e) => {
            let e = index.canonical_entity(e, view.known_at);
            for filter in [
                FactFilter { subject: Some(e), predicate: q.predicate.clone(), object: None },
                FactFilter { subject: None, predicate: q.predicate.clone(), object: Some(Value::Entity(e)) },
            ] {
                facts.extend(index.facts(&filter, view, scope));
            }
        }
        None => {
            let filter = FactFilter { subject: None, predicate: q.predicate.clone(), object: None };
            facts.extend(index.facts(&filter, view, scope));
        }
    }
    let episodes = facts.iter().flat_map(|f| f.provenance.iter().copied()).collect();
    (Some(facts.into_iter().map(|f| f.fact.id).collect()), Some(episodes))
}
