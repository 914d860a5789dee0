//! Retrieval over GraphQL: `search`, `context` and `remember`, with each hit's
//! explanation.

use std::sync::Arc;

use async_graphql::{Context, Enum, ID, InputObject, Object, Result, SimpleObject};
use ostrakon_core::RecordRef;
use ostrakon_engine::{ContextBlock, SearchQuery, SearchResult, Store};

use crate::exec::context::{Pin, store};
use crate::objects::graph::{EntityObject, EpisodeObject, FactObject};
use crate::types::enums::FactStatus;
use crate::types::input::{invalid, parse_id, time};
use crate::types::paging::Basis;
use crate::types::retention::RecordKind;
use crate::types::scalars::DateTime;

/// Filters and tuning of a search.
#[derive(InputObject, Clone, Debug, Default)]
pub(crate) struct SearchFilter {
    /// Kinds of result wanted (records of every kind when absent); `TOPIC` ranks the
    /// topics of the topic network too (`topics`).
    pub kinds: Option<Vec<SearchKind>>,
    /// Topic-first: narrow to the best this many topics, then rank inside them.
    pub topics: Option<i32>,
    /// Only episodes that occurred at or after this (and facts valid then).
    pub occurred_from: Option<DateTime>,
    /// Only episodes that occurred before this (and facts valid then).
    pub occurred_to: Option<DateTime>,
    /// Only episodes of this thread, and facts they sourced.
    pub thread: Option<String>,
    /// Only this entity, its facts and the episodes behind them.
    pub entity: Option<ID>,
    /// Only facts with this predicate and the episodes behind them.
    pub predicate: Option<String>,
    /// Keep facts not in force at (validAt, knownAt): superseded, ended, negated…
    pub include_not_in_force: Option<bool>,
    /// Share of relevance a completely forgotten memory keeps, in [0, 1] (default 0.5).
    pub retention_floor: Option<f64>,
    /// Relevance against diversity in [0, 1]: 1 ranks by relevance only (default 0.7).
    pub diversity: Option<f64>,
}

/// A kind of search result.
#[derive(async_graphql::Enum, Copy, Clone, Eq, PartialEq, Debug)]
pub enum SearchKind {
    /// Facts.
    Fact,
    /// Entities.
    Entity,
    /// Episodes.
    Episode,
    /// Topics of the topic network, ranked in `topics`.
    Topic,
}

/// The query, waiting for the vectors when the read names its batch (`knownAtSeq`): its
/// answer is then the one every later read at that batch gives.
pub(crate) fn vectors_awaited(mut query: SearchQuery, known_at_seq: Option<u64>) -> SearchQuery {
    query.wait_for_vectors = known_at_seq.is_some();
    query
}

/// Builds the engine's query from the API's arguments.
pub(crate) fn query(
    store: &Store,
    ns: &ostrakon_core::Namespace,
    text: Option<String>,
    vector: Option<Vec<f64>>,
    limit: Option<i32>,
    filter: Option<SearchFilter>,
) -> Result<SearchQuery> {
    let f = filter.unwrap_or_default();
    let limit = match limit {
        None => 10,
        Some(n) if n < 1 => return Err(invalid("limit", n, "must be at least 1")),
        Some(n) => n as usize,
    };
    let defaults = SearchQuery::default();
    let wanted = f.kinds.unwrap_or_default();
    let kinds: Vec<ostrakon_core::RecordKind> = wanted
        .iter()
        .filter_map(|k| match k {
            SearchKind::Fact => Some(RecordKind::Fact.into()),
            SearchKind::Entity => Some(RecordKind::Entity.into()),
            SearchKind::Episode => Some(RecordKind::Episode.into()),
            SearchKind::Topic => None,
        })
        .collect();
    let topic_kind = wanted.contains(&SearchKind::Topic);
    let topics = match f.topics {
        None => 0,
        Some(n) if n < 0 => return Err(invalid("filter.topics", n, "must not be negative")),
        Some(n) => n as usize,
    };
    Ok(SearchQuery {
        text,
        vector: vector.map(|v| v.into_iter().map(|x| x as f32).collect()),
        records: !(topic_kind && kinds.is_empty()),
        rank_topics: topic_kind,
        topics,
        kinds,
        limit,
        occurred_from: f
            .occurred_from
            .as_ref()
            .map(|t| time(store, ns, "filter.occurredFrom", t))
            .transpose()?,
        occurred_to: f.occurred_to.as_ref().map(|t| time(store, ns, "filter.occurredTo", t)).transpose()?,
        thread: f.thread,
        entity: f
            .entity
            .as_ref()
            .map(|id| parse_id("filter.entity", id).map(ostrakon_core::EntityId))
            .transpose()?,
        predicate: f.predicate,
        include_not_in_force: f.include_not_in_force.unwrap_or(false),
        retention_floor: f.retention_floor.unwrap_or(defaults.retention_floor),
        diversity_lambda: f.diversity.unwrap_or(defaults.diversity_lambda),
        wait_for_index: true,
        // Unless the read names its batch ([`vectors_awaited`]).
        wait_for_vectors: false,
        without: Vec::new(),
        speaker_boost: ostrakon_engine::search::DEFAULT_SPEAKER_BOOST,
        time_boost: ostrakon_engine::search::DEFAULT_TIME_BOOST,
    })
}

/// A ranked list a search fuses.
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
#[graphql(remote = "ostrakon_engine::search::Component")]
pub enum SearchComponent {
    /// BM25 over each record's own text.
    Text,
    /// BM25 over each episode together with the ones before and after it in its thread.
    TextInContext,
    /// Embedding similarity of each record's own text.
    Vector,
    /// Embedding similarity of each episode together with the ones before and after it.
    VectorInContext,
    /// The facts the query finds, and the neighbourhood of the entities it names: each
    /// with the episodes its facts were stated from.
    Graph,
    /// BM25 among the episodes of the days the query names ("on May 3, 2023", "last
    /// June"): those that happened then or speak of then ("yesterday" in a turn of May 4).
    Time,
    /// Embedding similarity among the episodes of the days the query names.
    VectorInTime,
    /// The episodes before and after the best episodes of the other lists in their threads.
    Neighbour,
    /// The other episodes of the closed segments (stretches of a thread on one topic) of
    /// the best episodes of the other lists, those most like the query first.
    Segment,
}

/// A hit's rank in one list.
#[derive(SimpleObject, Clone, Debug)]
pub(crate) struct ComponentRank {
    /// Which list.
    pub component: SearchComponent,
    /// Its rank there, from 1.
    pub rank: u32,
    /// Its score there: BM25, cosine, or 1/position for the graph.
    pub score: f64,
}

/// Why a hit ranks where it does.
#[derive(SimpleObject, Clone, Debug)]
pub(crate) struct Explanation {
    /// Its rank in each list it was found in.
    pub components: Vec<ComponentRank>,
    /// Reciprocal-rank fusion: Σ 1/(20 + rank).
    pub fused: f64,
    /// How directly the cue points at it: 1 / its best rank in any list.
    pub cue: f64,
    /// Its retention at the read's clock.
    pub retention: f64,
    /// floor + (1 − floor) × max(retention, cue): what the cue points at directly is
    /// found however faded; the rest is weighted by retention.
    pub weight: f64,
    /// 1.1 for a turn of a speaker the query names (its leading `Name:`, or its role),
    /// else 1.
    pub speaker: f64,
    /// 1.2 for an episode that states a time (a date, "yesterday", "last June") when the
    /// query asks when ("When did…", "What year…", "How long…"), else 1.
    pub time: f64,
    /// More than 1 for an episode lifted just above an episode found for the query whose
    /// statement it replaced (read at the present), else 1.
    pub newer: f64,
    /// fused × weight × speaker × time × newer.
    pub relevance: f64,
    /// Its maximal-marginal-relevance value when picked.
    pub mmr: f64,
    /// A fact's status at (validAt, knownAt).
    pub status: Option<FactStatus>,
    /// Whether it is dormant at the read's clock.
    pub dormant: bool,
}

/// One hit: a fact, an entity or an episode.
pub(crate) struct SearchHit {
    pin: Arc<Pin>,
    hit: ostrakon_engine::search::SearchHit,
}

#[Object]
impl SearchHit {
    /// Its kind.
    async fn kind(&self) -> RecordKind {
        match self.hit.record {
            RecordRef::Fact(_) => RecordKind::Fact,
            RecordRef::Entity(_) => RecordKind::Entity,
            RecordRef::Episode(_) => RecordKind::Episode,
        }
    }

    /// Its relevance (the list is ordered by MMR, which also weighs diversity).
    async fn score(&self) -> f64 {
        self.hit.score
    }

    /// How it got here.
    async fn explain(&self) -> Explanation {
        let e = &self.hit.explanation;
        Explanation {
            components: e
                .components
                .iter()
                .map(|c| ComponentRank {
                    component: c.component.into(),
                    rank: c.rank as u32,
                    score: f64::from(c.score),
                })
                .collect(),
            fused: e.fused,
            cue: e.cue,
            retention: e.retention,
            weight: e.weight,
            speaker: e.speaker,
            time: e.time,
            newer: e.newer,
            relevance: e.relevance,
            mmr: e.mmr,
            status: e.status.map(Into::into),
            dormant: e.dormant,
        }
    }

    /// The fact, when it is one.
    async fn fact(&self, ctx: &Context<'_>) -> Result<Option<FactObject>> {
        Ok(match self.hit.record {
            RecordRef::Fact(id) => FactObject::load(store(ctx)?, &self.pin, id),
            _ => None,
        })
    }

    /// The entity, when it is one.
    async fn entity(&self, ctx: &Context<'_>) -> Result<Option<EntityObject>> {
        Ok(match self.hit.record {
            RecordRef::Entity(id) => EntityObject::load(store(ctx)?, &self.pin, id)?,
            _ => None,
        })
    }

    /// The episode, when it is one.
    async fn episode(&self, ctx: &Context<'_>) -> Result<Option<EpisodeObject>> {
        Ok(match self.hit.record {
            RecordRef::Episode(id) => EpisodeObject::load(store(ctx)?, &self.pin, id)?,
            _ => None,
        })
    }
}

/// A search's answer.
pub(crate) struct Search {
    pub(crate) pin: Arc<Pin>,
    pub(crate) result: SearchResult,
}

#[Object(name = "SearchResult")]
impl Search {
    /// The point it was read at.
    async fn basis(&self) -> Basis {
        (&self.pin.basis).into()
    }

    /// Hits, best first, diversified.
    async fn hits(&self) -> Vec<SearchHit> {
        self.result.hits.iter().map(|h| SearchHit { pin: Arc::clone(&self.pin), hit: h.clone() }).collect()
    }

    /// Entities the query text names (they seed the graph component).
    async fn matched_entities(&self, ctx: &Context<'_>) -> Result<Vec<EntityObject>> {
        let store = store(ctx)?;
        self.result
            .matched_entities
            .iter()
            .filter_map(|e| EntityObject::load(store, &self.pin, *e).transpose())
            .collect::<Result<_>>()
    }

    /// The last batch the search indexes held whole (text and vectors); the text holds
    /// every batch the read sees.
    async fn indexed_seq(&self) -> u64 {
        self.result.indexed_seq.0
    }

    /// What made this answer weaker than it could be (no vectors, indexes behind).
    async fn warnings(&self) -> &[String] {
        &self.result.warnings
    }

    /// With kind `TOPIC` or topic-first: topics by relevance (centroid similarity to the
    /// query plus the share of members it names), those searched inside first.
    async fn topics(&self, ctx: &Context<'_>) -> Result<Vec<TopicHit>> {
        let store = store(ctx)?;
        Ok(self
            .result
            .topics
            .iter()
            .map(|t| TopicHit {
                topic: crate::objects::topics::TopicObject {
                    pin: Arc::clone(&self.pin),
                    topic: t.topic.clone(),
                    store: Arc::clone(store),
                },
                score: t.score,
            })
            .collect())
    }
}

/// A topic found by a search.
#[derive(async_graphql::SimpleObject)]
pub(crate) struct TopicHit {
    /// The topic.
    pub topic: crate::objects::topics::TopicObject,
    /// Its relevance to the query.
    pub score: f64,
}

/// What an agent puts in its prompt for a message.
pub(crate) struct ContextObject {
    pub(crate) pin: Arc<Pin>,
    pub(crate) block: ContextBlock,
}

#[Object(name = "Context")]
impl ContextObject {
    /// The point it was read at.
    async fn basis(&self) -> Basis {
        (&self.pin.basis).into()
    }

    /// The block as text, within the budget.
    async fn text(&self) -> &str {
        &self.block.text
    }

    /// Its estimated size in tokens (one per four bytes).
    async fn tokens(&self) -> u64 {
        self.block.tokens as u64
    }

    /// Whether something relevant was left out for the budget.
    async fn truncated(&self) -> bool {
        self.block.truncated
    }

    /// What each tier gave the block: CORE, then the ACTIVE scopes, then ARCHIVE (what
    /// the message's search found), each with what the budget left out.
    async fn tiers(&self) -> Vec<crate::objects::tiers::ContextTier> {
        self.block
            .tiers
            .iter()
            .map(|used| crate::objects::tiers::ContextTier { pin: Arc::clone(&self.pin), used: used.clone() })
            .collect()
    }

    /// Intentions the message (or the time) makes due, first in the block.
    async fn intentions(
        &self,
        ctx: &async_graphql::Context<'_>,
    ) -> async_graphql::Result<Vec<crate::objects::intentions::DueIntention>> {
        let store = crate::exec::context::store(ctx)?;
        crate::objects::intentions::due(store, &self.pin, self.block.intentions.clone())
    }

    /// The facts in the block: in force, most relevant first.
    async fn facts(&self) -> Vec<FactObject> {
        self.block.facts.iter().map(|v| FactObject { pin: Arc::clone(&self.pin), view: v.clone() }).collect()
    }

    /// The episodes in the block, most relevant first.
    async fn episodes(&self, ctx: &Context<'_>) -> Result<Vec<EpisodeObject>> {
        let store = store(ctx)?;
        self.block
            .episodes
            .iter()
            .filter_map(|e| EpisodeObject::load(store, &self.pin, e.id).transpose())
            .collect::<Result<_>>()
    }

    /// The entities in the block.
    async fn entities(&self, ctx: &Context<'_>) -> Result<Vec<EntityObject>> {
        let store = store(ctx)?;
        self.block
            .entities
            .iter()
            .filter_map(|e| EntityObject::load(store, &self.pin, e.id).transpose())
            .collect::<Result<_>>()
    }

    /// The search it was built from.
    async fn search(&self) -> Search {
        Search { pin: Arc::clone(&self.pin), result: self.block.search.clone() }
    }
}

/// What `remember` did.
#[derive(SimpleObject)]
pub(crate) struct RememberPayload {
    /// The batch that recorded the recall (null when nothing was found).
    pub seq: Option<u64>,
    /// The search, as it was before the recall strengthened its hits.
    pub result: Search,
}

/// A budget within bounds.
pub(crate) fn budget(budget: Option<i32>) -> Result<usize> {
    match budget {
        None => Ok(1000),
        Some(n) if n < 1 => Err(invalid("budget", n, "must be at least 1")),
        Some(n) => Ok(n as usize),
    }
}
