//! What a search asks ([`SearchQuery`]) and what it answers ([`SearchResult`]), with the
//! defaults and limits of its knobs.

use std::time::Duration;

use ostrakon_core::Status;
use ostrakon_core::{EntityId, RecordKind, RecordRef, Seq, Timestamp};

/// The default floor of the retention weight: a forgotten memory keeps this share of its
/// relevance, so that a specific enough cue still finds it.
pub const DEFAULT_RETENTION_FLOOR: f64 = 0.5;
/// The default MMR trade-off (1 = relevance only). Measured on long chats (LoCoMo) and
/// on MemoryBank, 0.7 cost recall on both (the embeddings of one conversation's turns are
/// all alike, so relevant turns were pushed out as near-duplicates); 0.9 keeps only true
/// repeats apart and does about as well as 1.
pub const DEFAULT_DIVERSITY_LAMBDA: f64 = 0.9;
/// How much more the turns of a speaker the query names weigh by default: a tie-breaker
/// between a statement and the other speaker's echo of it, not a filter (a question may
/// name the wrong person).
pub const DEFAULT_SPEAKER_BOOST: f64 = 0.1;
/// How much more an episode that states a time weighs when the query asks when
/// ([`SearchQuery::time_boost`]). With fusion at k = 20 a fifth more lifts a hit over
/// at most about five places in the top ten (rank 10 to 5, 40 to 30): it reorders what
/// the lists already agree on and does not pull in what they rank far down. Measured on
/// LoCoMo (temporal recall@5 +0.038, MRR +0.051; 0.1: +0.013, +0.032) and no change on
/// MemoryBank.
pub const DEFAULT_TIME_BOOST: f64 = 0.2;

/// How long dropping a store waits for the indexer to stop.
pub(crate) const INDEXER_STOP_WAIT: Duration = Duration::from_secs(5);
/// Whose thread neighbours make the `Neighbour` list: the best this many episodes of the
/// other lists. Measured on LoCoMo (recall@10 +0.024, 3: +0.017, 10: +0.020) and
/// MemoryBank (+0.003).
pub(crate) const NEIGHBOUR_SEEDS: usize = 5;
/// Most day tags a query is narrowed by.
pub(crate) const MAX_QUERY_TAGS: usize = 64;
/// Most episodes a day list ranks by vector.
pub(crate) const MAX_TAGGED: usize = 50_000;
/// Texts embedded per call: the embedder sorts each call's texts by length before it
/// batches them, so a larger call pads less.
pub(crate) const EMBED_BATCH: usize = 256;

/// What to search for, and how.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchQuery {
    /// The cue: a message, a question, keywords.
    pub text: Option<String>,
    /// A query vector (client-vector namespaces, or instead of embedding `text`).
    pub vector: Option<Vec<f32>>,
    /// Kinds of record wanted (all when empty).
    pub kinds: Vec<RecordKind>,
    /// Most hits.
    pub limit: usize,
    /// Only episodes that occurred in `[from, to)` (and facts valid then).
    pub occurred_from: Option<Timestamp>,
    /// See `occurred_from`.
    pub occurred_to: Option<Timestamp>,
    /// Only episodes of this thread (and facts they sourced).
    pub thread: Option<String>,
    /// Only what concerns this entity: itself, its facts, the episodes behind them.
    pub entity: Option<EntityId>,
    /// Only facts with this predicate, and the episodes behind them.
    pub predicate: Option<String>,
    /// Keep facts that are not in force at (T, S) (superseded, ended, negated…).
    pub include_not_in_force: bool,
    /// Share of relevance a completely forgotten memory keeps, in [0, 1].
    pub retention_floor: f64,
    /// MMR trade-off in [0, 1]: 1 ranks by relevance only.
    pub diversity_lambda: f64,
    /// Wait until the text indexes hold every batch the read sees.
    pub wait_for_index: bool,
    /// With `wait_for_index`, wait until the vectors too hold every batch the read sees
    /// (the built-in embedder writes them behind the text), so that the answer is the one
    /// every later read at that basis gives. Otherwise the vectors answer with the
    /// batches they hold, and the result says which (`indexed_seq`, a warning).
    pub wait_for_vectors: bool,
    /// Topic-first: narrow to the best this many topics of the topic network, then rank
    /// inside them (0: off).
    pub topics: usize,
    /// Rank the topics too (`SearchResult::topics`), even without narrowing to them.
    pub rank_topics: bool,
    /// Whether records (episodes, facts, entities) are wanted; `false` with `rank_topics`
    /// searches for topics only.
    pub records: bool,
    /// Lists left out of the fusion (to measure what each one brings).
    pub without: Vec<Component>,
    /// How much more the turns of a speaker the query names weigh (0: no more).
    pub speaker_boost: f64,
    /// How much more an episode that states a time (a date, "yesterday", "last June")
    /// weighs when the query asks when ("When did…", "What year…"; 0: no more).
    pub time_boost: f64,
}

impl Default for SearchQuery {
    fn default() -> Self {
        SearchQuery {
            text: None,
            vector: None,
            kinds: Vec::new(),
            limit: 10,
            occurred_from: None,
            occurred_to: None,
            thread: None,
            entity: None,
            predicate: None,
            include_not_in_force: false,
            retention_floor: DEFAULT_RETENTION_FLOOR,
            diversity_lambda: DEFAULT_DIVERSITY_LAMBDA,
            wait_for_index: true,
            wait_for_vectors: true,
            topics: 0,
            rank_topics: false,
            records: true,
            without: Vec::new(),
            speaker_boost: DEFAULT_SPEAKER_BOOST,
            time_boost: DEFAULT_TIME_BOOST,
        }
    }
}

/// A ranked list that took part in a search.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Component {
    /// BM25 over each record's own text.
    Text,
    /// BM25 over each episode with the ones before and after it in its thread.
    TextInContext,
    /// Vector similarity of each record's own text.
    Vector,
    /// Vector similarity of each episode with the ones before and after it.
    VectorInContext,
    /// The facts the query finds, and the neighbourhood of the entities it names: each
    /// with the episodes its facts were stated from.
    Graph,
    /// BM25 among the episodes of the days the query names ("on May 3, 2023", "last
    /// June"): those that happened then or speak of then ("yesterday" in a turn of May 4).
    Time,
    /// Vector similarity among the episodes of the days the query names.
    VectorInTime,
    /// The episodes before and after the best episodes of the other lists in their
    /// threads, in the order of those.
    Neighbour,
    /// The other episodes of the closed segments (stretches of a thread on one topic) of
    /// the best episodes of the other lists, those most like the query first.
    Segment,
}

impl Component {
    /// In words, for a warning.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Component::Text => "full-text",
            Component::TextInContext => "full-text in context",
            Component::Vector => "vector",
            Component::VectorInContext => "vector in context",
            Component::Graph => "graph",
            Component::Time => "time",
            Component::VectorInTime => "vector in time",
            Component::Neighbour => "neighbour",
            Component::Segment => "segment",
        }
    }
}

/// A hit's place in one component.
#[derive(Clone, Debug, PartialEq)]
pub struct ComponentRank {
    /// Which list.
    pub component: Component,
    /// Its rank there, from 1.
    pub rank: usize,
    /// Its score there (BM25, cosine, or 1/position for the graph).
    pub score: f32,
}

/// Why a hit ranks where it does.
#[derive(Clone, Debug, PartialEq)]
pub struct Explanation {
    /// Its rank in each list it was found in.
    pub components: Vec<ComponentRank>,
    /// Reciprocal-rank fusion score, Σ 1/(20 + rank).
    pub fused: f64,
    /// How directly the cue points at it: 1/(its best rank in any list).
    pub cue: f64,
    /// Retention at the decay clock.
    pub retention: f64,
    /// The weight it got: floor + (1 − floor)·max(retention, cue). A memory the cue
    /// points at directly keeps its weight however faded; the rest fade with retention.
    pub weight: f64,
    /// 1 + the speaker boost for a turn of a speaker the query names, else 1.
    pub speaker: f64,
    /// 1 + the time boost for an episode that states a time when the query asks when,
    /// else 1.
    pub time: f64,
    /// More than 1 for an episode lifted just above an episode found for the query
    /// whose statement it replaced (read at the present: what holds now comes before
    /// what was said before it), else 1.
    pub newer: f64,
    /// fused × weight × speaker × time × newer.
    pub relevance: f64,
    /// Its MMR value when it was picked.
    pub mmr: f64,
    /// A fact's status at (T, S).
    pub status: Option<Status>,
    /// Whether it is dormant at the decay clock.
    pub dormant: bool,
}

/// One hit.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchHit {
    /// The record.
    pub record: RecordRef,
    /// Its final score (its relevance; order is MMR's).
    pub score: f64,
    /// How it got there.
    pub explanation: Explanation,
}

/// A search's answer.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchResult {
    /// Best first, diversified.
    pub hits: Vec<SearchHit>,
    /// Entities the query named (seeds of the graph component).
    pub matched_entities: Vec<EntityId>,
    /// The last batch the indexes held when searched.
    pub indexed_seq: Seq,
    /// Anything that made this answer weaker than it could be (no vectors, index behind).
    pub warnings: Vec<String>,
    /// With topic-first or topic ranking: the topics by relevance to the query (those
    /// searched inside first, when narrowing).
    pub topics: Vec<TopicScore>,
}

/// A topic's relevance to a query: the similarity of its centroid to the query's vector
/// plus the share of its members the query names.
#[derive(Clone, Debug, PartialEq)]
pub struct TopicScore {
    /// The topic, as the topic network reads at the search's point.
    pub topic: crate::read::topics::Topic,
    /// Its score.
    pub score: f64,
}
