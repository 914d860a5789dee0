//! The records of a namespace: episodes, entities, facts, predicates and configuration.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::decay::{Profile, RecordKind};
use crate::error::CoreError;
use crate::ids::{EntityId, EpisodeId, FactId, IntentionId};
use crate::particles::{MAX_TAIL_PIECES, is_hangul, is_particle_tail};
use crate::time::{Interval, TimeZone, Timestamp};
use crate::value::{Literal, Value, ValueType};

/// Longest accepted name of a namespace, predicate or entity kind.
pub const MAX_NAME_LEN: usize = 512;

/// The name of an isolated memory (a user, an agent, a tenant).
///
/// `[A-Za-z0-9_.-]`, 1 to 64 characters, not starting with `.` or `-`: it names files.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Namespace(String);

impl Namespace {
    /// Validates a namespace name; `field` names the input in the error.
    pub fn new(field: impl fmt::Display, name: &str) -> Result<Self, CoreError> {
        let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
        let reason = if name.is_empty() || name.len() > 64 {
            Some("must have 1 to 64 characters")
        } else if !name.chars().all(ok_char) {
            Some("may hold only letters, digits, '_', '.' and '-'")
        } else if name.starts_with(['.', '-']) {
            Some("must not start with '.' or '-'")
        } else {
            None
        };
        match reason {
            Some(reason) => Err(CoreError::invalid_value(field, name, reason)),
            None => Ok(Namespace(name.to_owned())),
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Namespace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// One observation, kept verbatim: a node of the event progression graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Episode {
    /// Its id.
    pub id: EpisodeId,
    /// The text, verbatim.
    pub text: String,
    /// When it happened (its valid time).
    pub occurred_at: Timestamp,
    /// The conversation or session it belongs to.
    pub thread: Option<String>,
    /// Where it came from (a channel, a tool, a document).
    pub source: Option<String>,
    /// Who spoke (`user`, `assistant`, `tool`…).
    pub role: Option<String>,
    /// A client-given id, unique in the namespace.
    pub external_id: Option<String>,
    /// How much it matters, in [0, 1]: raises its initial strength (salience, not truth).
    pub importance: Option<f64>,
}

/// Something talked about. A later declaration with the same id is its next version.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entity {
    /// Its id.
    pub id: EntityId,
    /// Canonical name.
    pub name: String,
    /// Other names it goes by.
    pub aliases: Vec<String>,
    /// What kind of thing it is (`person`, `city`…).
    pub kind: Option<String>,
    /// Properties that are not worth a fact of their own.
    pub properties: BTreeMap<String, Literal>,
}

/// Whether a fact states or denies its triple.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum Polarity {
    /// "Alice lives in Paris."
    #[default]
    Asserted,
    /// "Alice no longer lives in Paris": never in force itself; removes the matching
    /// positive value wherever it ranks above it.
    Negated,
}

/// A statement `subject —predicate→ object` with a valid-time interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fact {
    /// Its id: the same triple may hold in several disjoint periods, each its own fact.
    pub id: FactId,
    /// The entity it is about.
    pub subject: EntityId,
    /// The relation's name.
    pub predicate: String,
    /// An entity or a literal.
    pub object: Value,
    /// When it holds in the world.
    pub valid: Interval,
    /// How sure the source was, in (0, 1].
    pub confidence: f64,
    /// Stated or denied.
    pub polarity: Polarity,
    /// The episodes it was extracted from.
    pub provenance: Vec<EpisodeId>,
    /// A fact this one corrects: that fact is retracted as of this fact's system time.
    pub supersedes: Option<FactId>,
    /// How much it matters, in [0, 1]: raises its initial strength (salience, not truth).
    pub importance: Option<f64>,
    /// Whether it is the user's correction of the agent: maximal initial strength.
    pub correction: bool,
}

impl Fact {
    /// Checks the fact's own fields (not its references); `field` prefixes error fields.
    pub fn validate(&self, field: impl fmt::Display) -> Result<(), CoreError> {
        let prefix = field.to_string();
        let field = |name: &str| crate::error::join_field(&prefix, name);
        validate_name(field("predicate"), &self.predicate)?;
        if !(self.confidence > 0.0 && self.confidence <= 1.0) {
            return Err(CoreError::invalid_value(
                field("confidence"),
                self.confidence.to_string(),
                "must be in (0, 1]",
            ));
        }
        if let Value::Literal(l) = &self.object {
            l.validate(field("object"))?;
        }
        self.valid.from().validate(field("validFrom"))?;
        if let Some(to) = self.valid.to() {
            to.validate(field("validTo"))?;
        }
        Interval::new(field("valid"), self.valid.from(), self.valid.to())?;
        if let Some(i) = self.importance
            && !(0.0..=1.0).contains(&i)
        {
            return Err(CoreError::invalid_value(field("importance"), i.to_string(), "must be in [0, 1]"));
        }
        Ok(())
    }
}

/// Whether a new value of a predicate replaces the old one or joins it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum Cardinality {
    /// One value at a time: a newer value supersedes the old (Datomic's cardinality-one).
    One,
    /// Values coexist. Unknown predicates are `Many`.
    #[default]
    Many,
}

/// A named relation's declaration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PredicateDef {
    /// Its name.
    pub name: String,
    /// One or many values at a time.
    pub cardinality: Cardinality,
    /// The values it accepts.
    pub value_type: ValueType,
    /// What it means, for people.
    pub description: Option<String>,
    /// How its facts fade, overriding the namespace's fact profile.
    pub decay: Option<Profile>,
}

impl PredicateDef {
    /// The definition an undeclared predicate has.
    pub fn undeclared(name: &str) -> Self {
        PredicateDef {
            name: name.to_owned(),
            cardinality: Cardinality::Many,
            value_type: ValueType::Any,
            description: None,
            decay: None,
        }
    }
}

/// Something the agent means to do later (prospective memory), and when it is due.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Intention {
    /// Its id.
    pub id: IntentionId,
    /// What to do, for the agent.
    pub payload: String,
    /// When it is due.
    pub trigger: Trigger,
    /// After this it is never due again.
    pub expires_at: Option<Timestamp>,
    /// Higher first.
    pub priority: i32,
    /// Whether it stays after firing (else it fires once).
    pub repeat: bool,
}

/// What makes an intention due.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Trigger {
    /// A time is reached.
    At(Timestamp),
    /// An episode (or message) mentions one of these entities.
    Mentions(Vec<EntityId>),
    /// An episode (or message) is this close in meaning to a cue.
    Cue {
        /// The cue, for people.
        text: String,
        /// Its vector, computed when the intention was added (so replays do not depend on
        /// the embedder).
        vector: Vec<f32>,
        /// Cosine similarity at or above which it fires, in (0, 1].
        threshold: f32,
    },
}

/// Who said that an episode mentions an entity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum MentionSource {
    /// The client, with the episode.
    Client,
    /// The store, finding a known name or alias in the episode's text as a whole word.
    NameMatch,
}

/// How a namespace cuts its threads into segments (stretches on one topic).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SegmentConfig {
    /// Cosine distance (1 − cos) from the running segment's centroid above which an
    /// episode is off-topic.
    pub threshold: f32,
    /// The episode after an off-topic one confirms the shift only if it too is farther than
    /// `threshold − hysteresis` from the old centroid; otherwise both stay.
    pub hysteresis: f32,
    /// A pause longer than this (microseconds) between episodes closes the segment; so
    /// does a thread left idle this long.
    pub max_gap_micros: i64,
    /// A shift never closes a segment shorter than this (a gap still does).
    pub min_len: u32,
}

impl Default for SegmentConfig {
    fn default() -> Self {
        SegmentConfig { threshold: 0.6, hysteresis: 0.1, max_gap_micros: 6 * 3_600_000_000, min_len: 2 }
    }
}

impl SegmentConfig {
    /// Checks the ranges; `field` prefixes error fields.
    pub fn validate(&self, field: impl fmt::Display) -> Result<(), CoreError> {
        let prefix = field.to_string();
        let bad = |name: &str, v: String, why: &str| {
            Err(CoreError::invalid_value(crate::error::join_field(&prefix, name), v, why))
        };
        if !(self.threshold.is_finite() && self.threshold > 0.0 && self.threshold <= 2.0) {
            return bad("threshold", self.threshold.to_string(), "must be in (0, 2]");
        }
        if !(self.hysteresis.is_finite() && self.hysteresis >= 0.0 && self.hysteresis < self.threshold) {
            return bad("hysteresis", self.hysteresis.to_string(), "must be in [0, threshold)");
        }
        if self.max_gap_micros <= 0 {
            return bad("maxGap", self.max_gap_micros.to_string(), "must be positive");
        }
        if self.min_len == 0 {
            return bad("minLength", "0".into(), "must be at least 1");
        }
        Ok(())
    }
}

/// Why a segment was closed.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum SegmentEnd {
    /// The conversation moved on: the next episodes left the segment's centroid.
    Shift {
        /// Cosine distance of the first episode after it from its centroid.
        distance: f32,
    },
    /// A pause this long (microseconds) before the next episode.
    Gap {
        /// The pause.
        micros: i64,
    },
    /// The thread stayed idle longer than the namespace's gap.
    Idle,
    /// Consolidation closed it on request.
    Forced,
}

/// Where a namespace's vectors come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum EmbeddingMode {
    /// The store's built-in embedder embeds every text.
    #[default]
    Builtin,
    /// Clients send vectors of this many dimensions with their episodes and queries.
    Client {
        /// The vectors' length.
        dim: u32,
    },
    /// No vectors: full text and the graph only.
    Off,
    /// The store's built-in embedder with this model, whatever the store's default.
    Model(BuiltinModel),
}

impl EmbeddingMode {
    /// The model asked of the built-in embedder when it embeds: `Some(None)` for the
    /// store's default, `None` when vectors come from clients or nowhere.
    pub fn builtin(self) -> Option<Option<BuiltinModel>> {
        match self {
            EmbeddingMode::Builtin => Some(None),
            EmbeddingMode::Model(model) => Some(Some(model)),
            EmbeddingMode::Client { .. } | EmbeddingMode::Off => None,
        }
    }

    /// Whether the built-in embedder makes its vectors.
    pub fn is_builtin(self) -> bool {
        self.builtin().is_some()
    }
}

/// A model of the built-in embedder, for a namespace that names one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum BuiltinModel {
    /// multilingual-e5-small: about a hundred languages (384 dimensions).
    E5,
    /// all-MiniLM-L6-v2: English, about 2.7 times faster to embed (384 dimensions).
    MiniLm,
}

/// Which facts the built-in embedder embeds (episodes always are).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum FactEmbedding {
    /// None: facts are found by full text and the graph.
    None,
    /// Those whose predicate was defined with `embed: true`.
    #[default]
    Declared,
    /// Every fact.
    All,
}

/// What the built-in embedder embeds besides episodes. Embedding a short fact sentence
/// costs as much as embedding an episode, and a namespace of millions of facts would
/// keep a core busy for hours, so facts and entities are embedded only where asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EmbeddingPolicy {
    /// Which facts.
    pub facts: FactEmbedding,
    /// Whether entities (their names, aliases and kind) are.
    pub entities: bool,
}

/// A namespace's settings.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct NamespaceConfig {
    /// Where dates and local date-times are placed.
    pub time_zone: TimeZone,
    /// How its records fade.
    pub decay: DecayConfig,
    /// Run consolidation when idle, at most this often (seconds); never when unset.
    pub consolidate_every_seconds: Option<u64>,
}

/// Forgetting profiles of a namespace: one for every record, overridable per kind (and,
/// for facts, per predicate through its definition). Unset means the built-in default.
#[derive(Clone, Copy, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct DecayConfig {
    /// For every kind of record.
    pub default: Option<Profile>,
    /// For episodes.
    pub episode: Option<Profile>,
    /// For entities.
    pub entity: Option<Profile>,
    /// For facts.
    pub fact: Option<Profile>,
}

impl DecayConfig {
    /// The profile of a kind of record: its own, else the namespace's, else the built-in.
    pub fn profile(&self, kind: RecordKind) -> Profile {
        let own = match kind {
            RecordKind::Episode => self.episode,
            RecordKind::Entity => self.entity,
            RecordKind::Fact => self.fact,
        };
        own.or(self.default).unwrap_or(Profile::default_for(kind))
    }
}

/// Rejects empty, overlong or control-character names; `field` names the input.
pub fn validate_name(field: impl fmt::Display, name: &str) -> Result<(), CoreError> {
    // Checked first: a refusal must not echo a megabyte back.
    CoreError::check_len(&field, name.len(), MAX_NAME_LEN, "bytes")?;
    if name.trim().is_empty() {
        return Err(CoreError::invalid_value(field, name, "must not be empty"));
    }
    if name.chars().any(char::is_control) {
        return Err(CoreError::invalid_value(field, name, "must not contain control characters"));
    }
    Ok(())
}

/// The part of an entity's name used to match it: trimmed, case-folded, inner
/// whitespace collapsed.
pub fn normalize_name(name: &str) -> String {
    // One allocation: every write that names an entity, and every lookup by name, comes here.
    let mut out = String::with_capacity(name.len());
    for word in name.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        if word.is_ascii() {
            out.extend(word.bytes().map(|b| char::from(b.to_ascii_lowercase())));
        } else {
            // `str::to_lowercase` knows word-final sigma, which lowering each char does not.
            out.push_str(&word.to_lowercase());
        }
    }
    out
}

/// Names of at most this many words are found in texts by [`find_names`].
pub const MAX_MATCHED_NAME_WORDS: usize = 16;

/// The longest span of text looked at as one name, in bytes (a name has at most
/// [`MAX_NAME_LEN`]; the text may spread it with more spaces).
const MAX_MATCHED_SPAN: usize = 2 * MAX_NAME_LEN;

/// The longest run of characters other than letters, digits and `_` inside a name found
/// in texts.
const MAX_MATCHED_GAP: usize = 16;

/// The words of a name as [`find_names`] counts them: runs of letters, digits and `_`.
pub fn name_words(name: &str) -> usize {
    let mut words = 0;
    let mut in_word = false;
    for c in name.chars() {
        if is_word(c) && !in_word {
            words += 1;
        }
        in_word = is_word(c);
    }
    words
}

/// Whether a name may be found in texts: two characters at least, and a letter or digit
/// (shorter ones, or punctuation alone, would match everywhere).
pub fn matchable_name(name: &str) -> bool {
    let name = name.trim();
    name.chars().nth(1).is_some() && name.chars().any(char::is_alphanumeric)
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether a name whose last character is `last` may end before `rest` (whose first
/// character is `next`): at a word's end, or, in Korean, before the particles that end
/// the word ("서연" in "서연이는", "Paris" in "Paris에서"; see [`crate::particles`]).
fn name_may_end(last: char, next: Option<char>, rest: &str) -> bool {
    if !next.is_some_and(is_word) {
        return true;
    }
    if !is_hangul(last) && !next.is_some_and(is_hangul) {
        return false;
    }
    // Only the word's next few characters are read: a tail is short.
    let mut tail = 0;
    for (count, (k, c)) in rest.char_indices().enumerate() {
        if !is_word(c) {
            break;
        }
        if count >= 4 * MAX_TAIL_PIECES {
            return false;
        }
        tail = k + c.len_utf8();
    }
    is_particle_tail(&rest[..tail])
}

/// Finds names in `text` as whole words: the byte ranges `r` for which `known` finds
/// `normalize_name(&text[r])`, with what it found, at most `max_words` words long (see
/// [`name_words`]; capped at [`MAX_MATCHED_NAME_WORDS`]), neither preceded nor followed by
/// a letter, digit or `_`.
/// Scanning left to right, the longest name starting at a place wins and the scan goes
/// on after it; ranges come in text order and never overlap.
///
/// This looks names up in a hash of the normalised names (the index's own), so nothing
/// is built per name set: an automaton over hundreds of thousands of names (Aho-Corasick)
/// took seconds to build, and more than linearly longer as names shared prefixes.
/// Candidates are only the spans that end at a word boundary, so a text costs
/// O(length × the longest name's words) character steps and a lookup per boundary.
pub fn find_names<T>(
    text: &str,
    max_words: usize,
    mut known: impl FnMut(&str) -> Option<T>,
) -> Vec<(std::ops::Range<usize>, T)> {
    let max_words = max_words.min(MAX_MATCHED_NAME_WORDS);
    let mut found = Vec::new();
    if max_words == 0 {
        return found;
    }
    let mut prev: Option<char> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let starts = !c.is_whitespace() && !prev.is_some_and(is_word);
        prev = Some(c);
        if !starts {
            continue;
        }
        // The spans from `i` ending at a boundary, within `max_words` words and with no
        // run of more than MAX_MATCHED_GAP other characters (so that a text of punctuation
        // or of one endless word costs a bounded scan per place).
        let mut best = None;
        let (mut words, mut gap) = (usize::from(is_word(c)), usize::from(!is_word(c)));
        let (mut alnum, mut count, mut last) = (c.is_alphanumeric(), 1, c);
        let mut rest =
            text[i + c.len_utf8()..].char_indices().map(|(k, ch)| (i + c.len_utf8() + k, ch)).peekable();
        loop {
            let end = rest.peek().map_or(text.len(), |(k, _)| *k);
            if end - i > MAX_MATCHED_SPAN {
                break;
            }
            let next = rest.peek().map(|(_, ch)| *ch);
            // A findable name: two characters, a letter or digit (`matchable_name`).
            if alnum
                && count >= 2
                && !last.is_whitespace()
                && name_may_end(last, next, &text[end..])
                && let Some(hit) = known(&normalize_name(&text[i..end]))
            {
                best = Some((end, hit));
            }
            let Some((_, ch)) = rest.next() else { break };
            if is_word(ch) {
                if !is_word(last) {
                    words += 1;
                    if words > max_words {
                        break;
                    }
                }
                gap = 0;
            } else {
                gap += 1;
                if gap > MAX_MATCHED_GAP {
                    break;
                }
            }
            alnum |= ch.is_alphanumeric();
            count += 1;
            last = ch;
        }
        if let Some((end, hit)) = best {
            found.push((i..end, hit));
            // Go on after the name.
            while chars.peek().is_some_and(|(k, _)| *k < end) {
                prev = chars.next().map(|(_, ch)| ch);
            }
        }
    }
    found
}

#[cfg(test)]
mod find_names_tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// The one-allocation normalisation is the plain definition: words lowercased as
        /// strings (word-final sigma included), joined by one space.
        #[test]
        fn normalize_name_is_words_lowercased_and_joined(name in "[ \t\naAzZΣσςİßé\u{3000}·-]{0,24}") {
            let plain = name.split_whitespace().map(str::to_lowercase).collect::<Vec<_>>().join(" ");
            prop_assert_eq!(normalize_name(&name), plain);
        }
    }

    fn found<'t>(text: &'t str, names: &[&str]) -> Vec<&'t str> {
        let known: Vec<String> = names.iter().map(|n| normalize_name(n)).collect();
        let words = names.iter().map(|n| name_words(n)).max().unwrap_or(0);
        find_names(text, words, |n| known.iter().any(|k| k == n).then_some(()))
            .into_iter()
            .map(|(r, ())| &text[r])
            .collect()
    }

    #[test]
    fn whole_words_any_case_longest_first() {
        let names = ["Paris", "Paris Hilton", "Al", "A", "Émile", "C++", "#"];
        assert_eq!(
            found("paris  HILTON visited Paris; Alice met al. ÉMILE! c++, C++x", &names),
            vec!["paris  HILTON", "Paris", "al", "ÉMILE", "c++"]
        );
        assert!(found("Parisian cafés", &names).is_empty());
        assert!(found("anything", &[]).is_empty());
        assert!(found("", &names).is_empty());
        // Texts of one endless word, or of punctuation, are looked at a bounded span at a
        // time; names with punctuation inside still count their words right.
        for long in ["a,".repeat(200_000), "!".repeat(400_000), "a".repeat(400_000)] {
            assert!(found(&long, &["zz", "at&t", "a, a, a, a, a, a, a, a, a, a"]).is_empty());
        }
        assert_eq!(found("AT&T and at & t", &["at&t"]), vec!["AT&T"]);
        assert_eq!(name_words("at&t"), 2);
        assert_eq!(name_words("  New   York "), 2);
    }

    #[test]
    fn a_korean_name_is_found_before_its_particles() {
        let names = ["서연", "지민", "서울"];
        assert_eq!(
            found("서연은 서연이가 서연의 책을, 지민이에요. 서울에서 왔어요", &names),
            vec!["서연", "서연", "서연", "지민", "서울"]
        );
        // A name in another script written the Korean way.
        assert_eq!(found("Paris에서 만났어요, Parisian은 아니고", &["Paris"]), vec!["Paris"]);
        // Not inside another word, nor before what is not a particle.
        assert!(found("서연희 서연구소 고서연", &names).is_empty());
        // An endless Hangul word costs a bounded look at its tail, and is no mention.
        assert!(found(&"서연은".repeat(100_000), &names).is_empty());
    }

    #[test]
    fn a_name_inside_a_longer_one_is_not_found_again() {
        assert_eq!(
            found("New York City and York", &["New York City", "York"]),
            vec!["New York City", "York"]
        );
        assert_eq!(found("e12 e123 e1234", &["e1", "e12", "e123"]), vec!["e12", "e123"]);
    }
}
