//! The topic network: entities linked by association edges that only closed segments
//! create. Two entities mentioned in one closed segment are associated; each further
//! segment that repeats the association reinforces the edge, whose trace decays by the
//! namespace's entity profile like any memory. Entities whose segments' centroids are
//! close are associated too, more weakly. Communities over the network (Louvain, see
//! `ostrakon_topics`) are the topics.
//!
//! All of it is derived from the log at a read point (segments, mentions), so a replay
//! gives the same network; it is computed on read, under the index's read lock.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use ostrakon_core::{EntityId, EpisodeId, RecordKind, Seq, Timestamp, Trace, salient_strength};
use ostrakon_index::NamespaceIndex;
use petgraph::graph::UnGraph;

/// Entities whose segment centroids are at least this similar get a similarity edge.
pub const SIMILARITY_MIN: f32 = 0.8;
/// Above this many entities, similarity edges are skipped (their cost is quadratic).
const SIMILARITY_MAX_ENTITIES: usize = 2_000;

/// An association between two entities.
#[derive(Clone, Debug, PartialEq)]
pub struct Association {
    /// The entities, the smaller id first (as they read at S).
    pub pair: (EntityId, EntityId),
    /// Closed segments that mentioned both.
    pub segments: u32,
    /// Cosine similarity of their segment centroids, if both have one.
    pub similarity: Option<f32>,
    /// The edge's weight: co-occurring segments plus the similarity above
    /// [`SIMILARITY_MIN`], rescaled to [0, 1].
    pub weight: f64,
    /// Its retention at the clock: born at the first segment's end, reinforced by each later one.
    pub retention: f64,
    /// When the latest segment behind it ended (occurrence time of its last episode).
    pub last: Timestamp,
}

/// A community of the topic network.
#[derive(Clone, Debug, PartialEq)]
pub struct Topic {
    /// Its id: the smallest entity id among its members (stable while they stay together).
    pub id: u64,
    /// A label from its most central members and its most characteristic words.
    pub label: String,
    /// Members, most central (weighted degree) first.
    pub members: Vec<(EntityId, f64)>,
    /// Characteristic words of its segments' episodes.
    pub terms: Vec<String>,
    /// The mean of its segments' centroids, if any had one.
    pub centroid: Option<Vec<f32>>,
    /// Episodes that mention most of its members, up to three.
    pub episodes: Vec<EpisodeId>,
    /// Closed segments that mention a member.
    pub segments: Vec<usize>,
}

/// The network at a read point.
#[derive(Clone, Debug, Default)]
pub struct TopicNetwork {
    /// Every association, by pair.
    pub edges: Vec<Association>,
    /// The topics, largest first (ties by id).
    pub topics: Vec<Topic>,
    /// Entity → its topic's index in `topics`.
    pub topic_of: HashMap<EntityId, usize>,
}

/// The topic network as known at `known_at`, edges' retention read at `at`. Stops with
/// [`ReadError::Interrupted`](crate::error::read::ReadError::Interrupted) when the caller's
/// interrupt fires (it grows with segments, and pairwise with entities).
pub(crate) fn network(
    index: &NamespaceIndex,
    known_at: Seq,
    at: Timestamp,
) -> Result<TopicNetwork, crate::error::read::ReadError> {
    const DURING: &str = "the topic network";
    // Each closed segment: the entities its episodes mention, and when it ended.
    let mut seg_entities: Vec<(usize, BTreeSet<EntityId>, Timestamp)> = Vec::new();
    for (n, seg) in index.segments(known_at) {
        crate::interrupt::check(DURING)?;
        let mut entities = BTreeSet::new();
        let mut end = Timestamp::MIN;
        for e in &seg.episodes {
            if let Some(ep) = index.episode_at(*e, known_at) {
                end = end.max(ep.occurred_at);
            }
            entities.extend(index.mentions_of(*e, known_at).into_iter().map(|(id, _)| id));
        }
        seg_entities.push((n, entities, end));
    }
    // Co-occurrence: the segments' end times per pair, in time order.
    let mut pairs: BTreeMap<(EntityId, EntityId), Vec<Timestamp>> = BTreeMap::new();
    for (_, entities, end) in &seg_entities {
        let keys: Vec<u64> = entities.iter().map(|e| e.0).collect();
        for (a, b) in ostrakon_topics::cooccurrences(&keys) {
            pairs.entry((EntityId(a), EntityId(b))).or_default().push(*end);
        }
    }
    // Each entity's centroid: the mean of its segments' centroids.
    let mut by_entity: BTreeMap<EntityId, Vec<&Vec<f32>>> = BTreeMap::new();
    for (n, entities, _) in &seg_entities {
        if let Some(c) = index.segment(*n, known_at).and_then(|s| s.centroid.as_ref()) {
            for e in entities {
                by_entity.entry(*e).or_default().push(c);
            }
        }
    }
    let centroids: BTreeMap<EntityId, Vec<f32>> =
        by_entity.into_iter().filter_map(|(e, cs)| Some((e, centroid(cs.into_iter())?))).collect();
    let similarity =
        |a: EntityId, b: EntityId| ostrakon_topics::cosine(centroids.get(&a)?, centroids.get(&b)?);
    let mut similar: BTreeMap<(EntityId, EntityId), f32> = BTreeMap::new();
    if centroids.len() <= SIMILARITY_MAX_ENTITIES {
        let ids: Vec<EntityId> = centroids.keys().copied().collect();
        for (i, a) in ids.iter().enumerate() {
            crate::interrupt::check(DURING)?;
            for b in &ids[i + 1..] {
                if let Some(s) = similarity(*a, *b).filter(|s| *s >= SIMILARITY_MIN) {
                    similar.insert((*a, *b), s);
                }
            }
        }
    }
    let profile = index.config().decay.profile(RecordKind::Entity);
    let s0 = salient_strength(&profile, None, false);
    let keys: BTreeSet<(EntityId, EntityId)> = pairs.keys().chain(similar.keys()).copied().collect();
    let edges: Vec<Association> = keys
        .into_iter()
        .map(|pair| {
            let times = pairs.get(&pair).cloned().unwrap_or_default();
            let sim = similarity(pair.0, pair.1);
            let sim_weight =
                similar.get(&pair).map_or(0.0, |s| f64::from((s - SIMILARITY_MIN) / (1.0 - SIMILARITY_MIN)));
            let (retention, last) = match times.split_first() {
                Some((born, later)) => {
                    let trace = Trace { born: *born, initial_strength: s0, recalls: later.to_vec() };
                    (trace.state(&profile, at).retention, *times.iter().max().unwrap_or(born))
                }
                None => (0.0, Timestamp::MIN),
            };
            Association {
                pair,
                segments: times.len() as u32,
                similarity: sim,
                weight: times.len() as f64 + sim_weight,
                retention,
                last,
            }
        })
        .filter(|a| a.weight > 0.0)
        .collect();

    let mut topics = communities(index, known_at, &seg_entities, &edges)?;
    topics.sort_by(|a, b| b.members.len().cmp(&a.members.len()).then(a.id.cmp(&b.id)));
    let topic_of =
        topics.iter().enumerate().flat_map(|(i, t)| t.members.iter().map(move |(e, _)| (*e, i))).collect();
    Ok(TopicNetwork { edges, topics, topic_of })
}

/// The topics: Louvain communities of the association graph, each with its members by
/// weighted degree, its characteristic words, centroid and representative episodes.
fn communities(
    index: &NamespaceIndex,
    known_at: Seq,
    seg_entities: &[(usize, BTreeSet<EntityId>, Timestamp)],
    edges: &[Association],
) -> Result<Vec<Topic>, crate::error::read::ReadError> {
    const DURING: &str = "the topic network";
    let nodes: Vec<EntityId> =
        edges.iter().flat_map(|a| [a.pair.0, a.pair.1]).collect::<BTreeSet<_>>().into_iter().collect();
    let position: HashMap<EntityId, usize> = nodes.iter().enumerate().map(|(i, e)| (*e, i)).collect();
    let mut g: UnGraph<EntityId, f64> = UnGraph::with_capacity(nodes.len(), edges.len());
    let ix: Vec<_> = nodes.iter().map(|e| g.add_node(*e)).collect();
    for a in edges {
        g.add_edge(ix[position[&a.pair.0]], ix[position[&a.pair.1]], a.weight);
    }
    crate::interrupt::check(DURING)?;
    let community = ostrakon_topics::louvain(&g, 1.0);
    let mut degree: HashMap<EntityId, f64> = HashMap::new();
    for a in edges {
        *degree.entry(a.pair.0).or_default() += a.weight;
        *degree.entry(a.pair.1).or_default() += a.weight;
    }
    let mut groups: BTreeMap<usize, Vec<EntityId>> = BTreeMap::new();
    for (i, c) in community.iter().enumerate() {
        groups.entry(*c).or_default().push(nodes[i]);
    }
    let all_docs: Vec<&str> = seg_entities
        .iter()
        .filter_map(|(n, _, _)| index.segment(*n, known_at))
        .flat_map(|s| s.episodes.iter())
        .filter_map(|e| index.episode_at(*e, known_at).map(|e| e.text.as_str()))
        .collect();
    let topics: Vec<Topic> = groups
        .into_values()
        .map(|members| {
            let set: BTreeSet<EntityId> = members.iter().copied().collect();
            let mut members: Vec<(EntityId, f64)> =
                members.into_iter().map(|e| (e, degree.get(&e).copied().unwrap_or(0.0))).collect();
            members.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            let segments: Vec<usize> =
                seg_entities.iter().filter(|(_, es, _)| !es.is_disjoint(&set)).map(|(n, _, _)| *n).collect();
            let episodes_of =
                |n: &usize| index.segment(*n, known_at).map(|s| s.episodes.clone()).unwrap_or_default();
            let docs: Vec<&str> = segments
                .iter()
                .flat_map(episodes_of)
                .filter_map(|e| index.episode_at(e, known_at).map(|e| e.text.as_str()))
                .collect();
            // Its words beyond its members' names (those are in the label already).
            let named: BTreeSet<String> = members
                .iter()
                .filter_map(|(e, _)| index.entity_version(*e, known_at))
                .flat_map(|(_, v)| std::iter::once(v.name).chain(v.aliases))
                .flat_map(|n| n.split_whitespace().map(str::to_lowercase).collect::<Vec<_>>())
                .collect();
            let terms: Vec<String> = ostrakon_topics::characteristic_terms(&docs, &all_docs, 5 + named.len())
                .into_iter()
                .filter(|t| !named.contains(t))
                .take(5)
                .collect();
            let centroid =
                centroid(segments.iter().filter_map(|n| index.segment(*n, known_at)?.centroid.as_ref()));
            // Representative episodes: those mentioning the most members, earliest first.
            let mut scored: Vec<(usize, Timestamp, EpisodeId)> = segments
                .iter()
                .flat_map(episodes_of)
                .filter_map(|e| {
                    let hits =
                        index.mentions_of(e, known_at).iter().filter(|(id, _)| set.contains(id)).count();
                    let at = index.episode_at(e, known_at)?.occurred_at;
                    (hits > 0).then_some((hits, at, e))
                })
                .collect();
            scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
            let names: Vec<String> = members
                .iter()
                .take(3)
                .filter_map(|(e, _)| index.entity_version(*e, known_at).map(|(_, v)| v.name))
                .collect();
            let mut label = names.join(", ");
            if !terms.is_empty() {
                label.push_str(" · ");
                label.push_str(&terms.iter().take(3).cloned().collect::<Vec<_>>().join(", "));
            }
            Topic {
                id: set.iter().next().map_or(0, |e| e.0),
                label,
                members,
                terms,
                centroid,
                episodes: scored.into_iter().take(3).map(|s| s.2).collect(),
                segments,
            }
        })
        .collect();
    Ok(topics)
}

/// The mean of the vectors given, each scaled to unit length first, as a unit vector
/// (`None` without any usable one).
pub(crate) fn centroid<'v>(vectors: impl Iterator<Item = &'v Vec<f32>>) -> Option<Vec<f32>> {
    let mut sum: Option<Vec<f64>> = None;
    for v in vectors {
        let norm = v.iter().map(|x| f64::from(*x) * f64::from(*x)).sum::<f64>().sqrt();
        if !(norm.is_finite() && norm > 0.0) {
            continue;
        }
        let s = sum.get_or_insert_with(|| vec![0.0; v.len()]);
        if s.len() == v.len() {
            s.iter_mut().zip(v).for_each(|(s, x)| *s += f64::from(*x) / norm);
        }
    }
    let s = sum?;
    let norm = s.iter().map(|x| x * x).sum::<f64>().sqrt();
    (norm > 0.0).then(|| s.iter().map(|x| (x / norm) as f32).collect())
}
