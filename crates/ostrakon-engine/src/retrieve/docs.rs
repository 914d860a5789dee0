//! What is indexed for each record: its text (a fact as a sentence), the tags of the days
//! an episode happened on and speaks of, its speaker, and an episode read together with
//! its neighbours in the thread.

use std::collections::HashMap;

use ostrakon_core::{EntityId, EpisodeId, Event, Fact, Polarity, RecordRef, Value};
use ostrakon_index::NamespaceIndex;

use crate::retrieve::index::Latest;
use crate::retrieve::keys::KIND_WITH_NEXT;
use crate::retrieve::keys::key;

/// `livesIn` → `lives in`, `works_at` → `works at`.
fn predicate_words(p: &str) -> String {
    let mut out = String::with_capacity(p.len() + 4);
    for (i, c) in p.chars().enumerate() {
        if c == '_' || c == '-' {
            out.push(' ');
        } else if c.is_uppercase() && i > 0 {
            out.push(' ');
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A fact as a sentence for a reader: `Alice lives in Paris`, `Alice not likes tea`,
/// `Alice nickname "Al"` (a string quoted, as written).
pub(crate) fn fact_sentence(index: &NamespaceIndex, fact: &Fact) -> String {
    sentence(index, fact, |value| value.to_string())
}

/// A fact as the text search ranks it: the sentence with a string's own text, not its
/// quoted and escaped form (`"a\nb"` is the words a and b, not `a` and `nb`).
pub(crate) fn fact_text(index: &NamespaceIndex, fact: &Fact) -> String {
    sentence(index, fact, |value| match value {
        Value::Literal(ostrakon_core::Literal::String(s)) => s.clone(),
        other => other.to_string(),
    })
}

fn sentence(index: &NamespaceIndex, fact: &Fact, literal: impl Fn(&Value) -> String) -> String {
    let name = |id: EntityId| index.entity(id).map_or_else(|| id.to_string(), |e| e.name.clone());
    let object = match &fact.object {
        Value::Entity(e) => name(*e),
        other => literal(other),
    };
    let not = if fact.polarity == Polarity::Negated { "not " } else { "" };
    format!("{} {not}{} {object}", name(fact.subject), predicate_words(&fact.predicate))
}

/// The text a record is searched by.
pub(crate) fn record_text(index: &NamespaceIndex, r: RecordRef) -> Option<String> {
    match r {
        RecordRef::Episode(id) => index.episode(id).map(|e| e.text.clone()),
        RecordRef::Fact(id) => index.fact(id).map(|f| fact_text(index, &f)),
        RecordRef::Entity(id) => index.entity(id).map(|e| {
            let mut t = e.name.clone();
            for a in &e.aliases {
                t.push_str(", ");
                t.push_str(a);
            }
            if let Some(k) = &e.kind {
                t.push_str(" (");
                t.push_str(k);
                t.push(')');
            }
            t
        }),
    }
}

/// Texts to embed, each under its document key.
pub(crate) type Texts = Vec<(u64, String)>;

/// Documents to index.
#[derive(Default)]
pub(crate) struct Docs {
    pub(crate) alone: Vec<(RecordRef, String)>,
    /// The exact tags of each of `alone` (an episode's days and speaker).
    pub(crate) tags: Vec<Vec<String>>,
    /// Which of `alone` the built-in embedder embeds (the others: full text only).
    pub(crate) embedded: Vec<bool>,
    /// Which of `alone` may already be in the text index (a new version of an entity):
    /// replaced; the others are added.
    pub(crate) replace: Vec<bool>,
    /// Only vectors are wanted: the text indexes already hold these documents.
    pub(crate) vectors_only: bool,
    /// These are all the namespace's documents (a rebuild), not those of some batches.
    pub(crate) full: bool,
    /// Episodes together with the one before them in their thread, and (keyed
    /// [`KIND_WITH_NEXT`]) with the ones before and after them. Only ever added: a
    /// context index never holds a replaced document, whose statistics would linger in
    /// BM25's, so that what it ranks never depends on when it was built.
    pub(crate) context: Vec<(u64, String)>,
    pub(crate) client: Vec<(EpisodeId, Vec<f32>)>,
}

impl Docs {
    pub(crate) fn push(&mut self, r: RecordRef, text: String, tags: Vec<String>, embedded: bool) {
        self.alone.push((r, text));
        self.tags.push(tags);
        self.embedded.push(embedded);
        self.replace.push(false);
    }

    /// What one event adds to the indexes.
    pub(crate) fn of_event(
        &mut self,
        index: &NamespaceIndex,
        previous: &mut HashMap<String, Latest>,
        event: &Event,
    ) {
        match event {
            Event::EpisodeRecorded(e) => self.episode(previous, e, &index.config().time_zone),
            // A restatement is one more statement of a fact already indexed: a document
            // of its own would count the sentence twice (and a rebuild, which indexes
            // facts, would not).
            Event::FactAsserted(f) if index.is_restatement(f.id) => {}
            Event::FactAsserted(f) => {
                self.push(RecordRef::Fact(f.id), fact_text(index, f), Vec::new(), index.fact_embedded(f))
            }
            Event::EntityDeclared(e) | Event::EntityCreated(e) => {
                if let Some(t) = record_text(index, RecordRef::Entity(e.id)) {
                    self.replace(RecordRef::Entity(e.id), t, index.embedding_policy().entities);
                }
            }
            Event::Embedded { record: RecordRef::Episode(id), vector } => {
                self.client.push((*id, vector.clone()))
            }
            _ => {}
        }
    }

    /// What the built-in embedder embeds of these documents, as (key, text): the records
    /// embedded alone, and the episodes in context.
    pub(crate) fn embedded_texts(&self) -> (Texts, Texts) {
        let alone = self
            .alone
            .iter()
            .zip(&self.embedded)
            .filter(|(_, embedded)| **embedded)
            .map(|((r, t), _)| (crate::retrieve::keys::key(*r), t.clone()))
            .collect();
        (alone, self.context.clone())
    }

    /// A document that may replace an earlier one with the same key.
    pub(crate) fn replace(&mut self, r: RecordRef, text: String, embedded: bool) {
        self.push(r, text, Vec::new(), embedded);
        if let Some(last) = self.replace.last_mut() {
            *last = true;
        }
    }

    pub(crate) fn episode(
        &mut self,
        previous: &mut HashMap<String, Latest>,
        e: &ostrakon_core::Episode,
        tz: &ostrakon_core::TimeZone,
    ) {
        let r = RecordRef::Episode(e.id);
        self.push(r, e.text.clone(), episode_tags(e, tz), true);
        let Some(thread) = &e.thread else {
            self.context.push((key(r), e.text.clone()));
            return;
        };
        let last = previous.remove(thread);
        previous.insert(
            thread.clone(),
            Latest { id: e.id, before: last.as_ref().map(|l| l.text.clone()), text: e.text.clone() },
        );
        let Some(last) = last else {
            self.context.push((key(r), e.text.clone()));
            return;
        };
        self.context.push((key(r), format!("{}\n{}", last.text, e.text)));
        // A single turn leans on the reply it got too: once that comes, the turn is
        // indexed again with both neighbours. An episode holding a whole exchange (several
        // speakers' lines) already holds its reply, and its next one is another exchange.
        if !is_exchange(&last.text) && !is_exchange(&e.text) {
            let mut both = last.before.map_or_else(String::new, |b| b + "\n");
            both.push_str(&last.text);
            both.push('\n');
            both.push_str(&e.text);
            self.context.push((last.id.0 << 2 | KIND_WITH_NEXT, both));
        }
    }
}

/// Whether a text is an exchange: two or more lines that each start with a speaker's
/// name (`User: …` then `Assistant: …`).
pub(crate) fn is_exchange(text: &str) -> bool {
    text.lines().filter(|l| leading_name(l).is_some()).take(2).count() == 2
}

/// The name before a leading `Name:` of a line (up to three capitalised words, or words
/// in a script without case: "서연:", "사용자:").
fn leading_name(line: &str) -> Option<&str> {
    let (head, _) = line.split_once(':')?;
    let head = head.trim();
    if head.is_empty() || head.len() > 40 {
        return None;
    }
    let words: Vec<&str> = head.split_whitespace().collect();
    let named = words.len() <= 3
        && words.iter().all(|w| {
            w.chars().next().is_some_and(|c| c.is_alphabetic() && !c.is_lowercase())
                && w.chars().all(|c| c.is_alphabetic() || "'.-".contains(c))
        });
    named.then_some(head)
}

/// Who speaks in an episode: the name before a leading `Name:` (up to three capitalised
/// words), else its role.
pub(crate) fn speaker(e: &ostrakon_core::Episode) -> Option<&str> {
    let first = e.text.lines().next().unwrap_or("");
    leading_name(first).or_else(|| e.role.as_deref().filter(|r| !r.trim().is_empty()))
}

/// The words of a text, in lower case (a speaker's name, a query), of two letters or more.
pub(crate) fn name_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 1).map(str::to_lowercase)
}

/// The exact tags an episode is indexed with: the days it happened on and speaks of
/// (`d20230507`, `m202305`, `y2023`).
pub(crate) fn episode_tags(e: &ostrakon_core::Episode, tz: &ostrakon_core::TimeZone) -> Vec<String> {
    ostrakon_search::when::index_terms(&e.text, tz.local_date(e.occurred_at))
}

/// Every document of a namespace, as a rebuild indexes them: its episodes (alone and in
/// context, `previous` holding each thread's latest episode as it goes), its facts and its
/// entities, each marked as the namespace embeds it.
pub(crate) fn whole(index: &NamespaceIndex, previous: &mut HashMap<String, Latest>) -> Docs {
    let mut docs = Docs::default();
    let tz = index.config().time_zone;
    for (_, e) in index.all_episodes() {
        docs.episode(previous, e, &tz);
    }
    let policy = index.embedding_policy();
    for (_, f) in index.all_facts() {
        docs.push(RecordRef::Fact(f.id), fact_text(index, &f), Vec::new(), index.fact_embedded(&f));
    }
    for (_, e) in index.all_entities() {
        if let Some(t) = record_text(index, RecordRef::Entity(e.id)) {
            docs.push(RecordRef::Entity(e.id), t, Vec::new(), policy.entities);
        }
    }
    docs
}

/// Every text the namespace's documents are made of (alone and in context): what an
/// erasure compares before and after to tell which texts the embedding cache must forget.
pub(crate) fn all_texts(index: &NamespaceIndex) -> std::collections::HashSet<String> {
    let docs = whole(index, &mut HashMap::new());
    docs.alone.into_iter().map(|(_, t)| t).chain(docs.context.into_iter().map(|(_, t)| t)).collect()
}
