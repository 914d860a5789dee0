//! A model's answer, read defensively: the completion's envelope (an answer or a
//! refusal), the facts in it within bounds, and the changes that write them, each with
//! the episode as provenance. Nothing a model says can make a batch the store refuses:
//! a fact that names nothing, has a predicate of another value type, or an unreadable
//! time is left out (and counted), never sent.

use ostrakon_core::{Episode, Interval, Literal, Timestamp, ValueType, validate_name};
use ostrakon_engine::{Change, EntityRef, NewFact, ObjectRef, change::EpisodeRef};
use serde::Deserialize;

/// The most facts written for one episode; the rest are left out.
pub const MAX_FACTS_PER_EPISODE: usize = 32;

/// The largest answer read (bytes of the HTTP body).
pub const MAX_ANSWER_BYTES: usize = 256 * 1024;

/// The longest name, predicate or text value kept from an answer.
const MAX_FIELD_BYTES: usize = 512;

/// What a completion said.
#[derive(Debug, PartialEq)]
pub enum Completion {
    /// The facts it found (possibly none), and how many items it gave that were left out.
    Facts {
        /// The facts, at most [`MAX_FACTS_PER_EPISODE`].
        facts: Vec<ExtractedFact>,
        /// Items left out: malformed, empty, or past the cap.
        skipped: usize,
    },
    /// The model declined to answer (a refusal, or its content filter).
    Refused(String),
}

/// Why an answer could not be read.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("the answer is malformed: {0}")]
pub struct Malformed(pub String);

/// One fact as the model gave it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtractedFact {
    /// The entity it is about, by name.
    pub subject: String,
    /// The relation.
    pub predicate: String,
    /// The value, or an entity's name.
    pub object: String,
    /// Whether `object` names an entity.
    #[serde(default)]
    pub object_is_entity: bool,
    /// When it starts holding, if said.
    #[serde(default)]
    pub valid_from: Option<String>,
    /// When it stops, if said.
    #[serde(default)]
    pub valid_to: Option<String>,
}

#[derive(Deserialize)]
struct Envelope {
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    message: Message,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
}

/// Reads a `chat/completions` response body.
pub fn read_completion(body: &[u8]) -> Result<Completion, Malformed> {
    let envelope: Envelope =
        serde_json::from_slice(body).map_err(|e| Malformed(format!("not a chat completion: {e}")))?;
    let choice = envelope.choices.into_iter().next().ok_or_else(|| Malformed("no choices".into()))?;
    if let Some(refusal) = choice.message.refusal.filter(|r| !r.trim().is_empty()) {
        return Ok(Completion::Refused(truncate(&refusal)));
    }
    if choice.finish_reason.as_deref() == Some("content_filter") {
        return Ok(Completion::Refused("the provider's content filter stopped the answer".into()));
    }
    let content = choice.message.content.ok_or_else(|| Malformed("no content".into()))?;
    read_facts(&content)
}

/// Reads the answer's content: `{"facts": [...]}`, tolerating a Markdown code fence
/// around it; items that are not facts are skipped and counted.
pub fn read_facts(content: &str) -> Result<Completion, Malformed> {
    let trimmed = content.trim();
    let unfenced = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|s| s.strip_suffix("```"))
        .unwrap_or(trimmed);
    let value: serde_json::Value =
        serde_json::from_str(unfenced).map_err(|e| Malformed(format!("the content is not JSON: {e}")))?;
    let items = value
        .get("facts")
        .and_then(serde_json::Value::as_array)
        .ok_or_else(|| Malformed("the content has no `facts` list".into()))?;
    let mut facts = Vec::new();
    let mut skipped = 0;
    for item in items {
        match serde_json::from_value::<ExtractedFact>(item.clone()) {
            Ok(fact) if facts.len() < MAX_FACTS_PER_EPISODE && fact.is_whole() => facts.push(fact),
            _ => skipped += 1,
        }
    }
    Ok(Completion::Facts { facts, skipped })
}

impl ExtractedFact {
    fn is_whole(&self) -> bool {
        [&self.subject, &self.predicate, &self.object].iter().all(|s| {
            !s.trim().is_empty() && s.len() <= MAX_FIELD_BYTES && validate_name("", s.trim()).is_ok()
        })
    }
}

fn truncate(s: &str) -> String {
    let mut end = s.len().min(MAX_FIELD_BYTES);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}

/// A relation as the store names it: lower case, words joined by `_`.
pub fn predicate_name(raw: &str) -> String {
    let words: Vec<String> = raw
        .split(|c: char| c.is_whitespace() || c == '-' || c == '_')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    words.join("_")
}

/// The changes that write `facts` as found in `episode` by `source`: each fact with the
/// episode as provenance and `confidence`, then the mark that the episode was read.
/// `value_type` gives a predicate's declared type: a fact whose value does not fit it is
/// left out. Returns the changes and how many facts were left out.
pub fn changes(
    episode: &Episode,
    facts: &[ExtractedFact],
    source: &str,
    confidence: f64,
    value_type: &dyn Fn(&str) -> ValueType,
) -> (Vec<Change>, usize) {
    let mut out = Vec::with_capacity(facts.len() + 1);
    let mut skipped = 0;
    for fact in facts {
        match new_fact(episode, fact, confidence, value_type) {
            Some(new) => out.push(Change::AssertFact(new)),
            None => skipped += 1,
        }
    }
    out.push(Change::MarkExtracted { episode: EpisodeRef::Id(episode.id), source: source.to_owned() });
    (out, skipped)
}

fn new_fact(
    episode: &Episode,
    fact: &ExtractedFact,
    confidence: f64,
    value_type: &dyn Fn(&str) -> ValueType,
) -> Option<NewFact> {
    let predicate = predicate_name(&fact.predicate);
    validate_name("predicate", &predicate).ok()?;
    let object = object(fact, value_type(&predicate))?;
    let from = fact.valid_from.as_deref().and_then(time).unwrap_or(episode.occurred_at);
    let to = fact.valid_to.as_deref().and_then(time).filter(|to| *to > from);
    let valid = Interval::new("valid", from, to).ok()?;
    let mut new = NewFact::new(EntityRef::Name(fact.subject.trim().to_owned()), predicate, object, valid);
    new.confidence = Some(confidence);
    new.provenance = vec![EpisodeRef::Id(episode.id)];
    Some(new)
}

/// The object as the predicate's declared type takes it, if it can.
fn object(fact: &ExtractedFact, declared: ValueType) -> Option<ObjectRef> {
    let text = fact.object.trim();
    let literal = |l: Literal| Some(ObjectRef::Literal(l));
    match declared {
        ValueType::Any if fact.object_is_entity => Some(ObjectRef::Entity(EntityRef::Name(text.to_owned()))),
        ValueType::Any | ValueType::String => literal(Literal::String(text.to_owned())),
        ValueType::Entity => Some(ObjectRef::Entity(EntityRef::Name(text.to_owned()))),
        ValueType::Integer => literal(Literal::Integer(text.parse().ok()?)),
        ValueType::Float => {
            text.parse::<f64>().ok().filter(|f| f.is_finite()).and_then(|f| literal(Literal::Float(f)))
        }
        ValueType::Boolean => literal(Literal::Boolean(text.parse().ok()?)),
        ValueType::Time => literal(Literal::Time(time(text)?)),
    }
}

/// A change that writes a found fact, as JSON for people (`ostrakon extract --dry-run`);
/// `None` for the mark that the episode was read.
pub fn describe(change: &Change) -> Option<serde_json::Value> {
    let Change::AssertFact(f) = change else { return None };
    let name = |r: &EntityRef| match r {
        EntityRef::Name(n) => n.clone(),
        EntityRef::Id(id) => id.to_string(),
        EntityRef::New(n) => format!("#{n}"),
    };
    let object = match &f.object {
        ObjectRef::Entity(e) => serde_json::json!({ "entity": name(e) }),
        ObjectRef::Literal(Literal::String(s)) => serde_json::json!({ "literal": s }),
        ObjectRef::Literal(Literal::Integer(i)) => serde_json::json!({ "literal": i }),
        ObjectRef::Literal(Literal::Float(x)) => serde_json::json!({ "literal": x }),
        ObjectRef::Literal(Literal::Boolean(b)) => serde_json::json!({ "literal": b }),
        ObjectRef::Literal(Literal::Time(t)) => serde_json::json!({ "literal": t.to_string() }),
    };
    Some(serde_json::json!({
        "subject": name(&f.subject),
        "predicate": f.predicate,
        "object": object,
        "validFrom": f.valid.from().to_string(),
        "validTo": f.valid.to().map(|t| t.to_string()),
        "confidence": f.confidence,
    }))
}

/// A time as a model writes one: RFC 3339, a date-time, or a date (UTC).
fn time(value: &str) -> Option<Timestamp> {
    let value = value.trim();
    if value.is_empty() || value.eq_ignore_ascii_case("null") {
        return None;
    }
    Timestamp::parse("validFrom", value, &ostrakon_core::TimeZone::default()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn episode() -> Episode {
        Episode {
            id: ostrakon_core::EpisodeId(7),
            text: "I moved to Lisbon last May.".into(),
            occurred_at: Timestamp::from_rfc3339("2024-06-10T12:00:00Z").unwrap_or(Timestamp::from_micros(0)),
            thread: None,
            source: None,
            role: Some("Ana".into()),
            external_id: None,
            importance: None,
        }
    }

    fn completion(content: &str) -> Vec<u8> {
        serde_json::json!({ "choices": [{ "message": { "content": content }, "finish_reason": "stop" }] })
            .to_string()
            .into_bytes()
    }

    #[test]
    fn an_answer_gives_its_facts_and_skips_what_is_not_one() {
        let body = completion(
            r#"{"facts": [
                {"subject": "Ana", "predicate": "Lives In", "object": "Lisbon", "objectIsEntity": true, "validFrom": "2024-05-01", "validTo": null},
                {"subject": "", "predicate": "likes", "object": "tea", "objectIsEntity": false, "validFrom": null, "validTo": null},
                {"predicate": "likes"}
            ]}"#,
        );
        let Ok(Completion::Facts { facts, skipped }) = read_completion(&body) else { panic!("not read") };
        assert_eq!((facts.len(), skipped), (1, 2));
        let (changes, left_out) = changes(&episode(), &facts, "m@extract-1", 0.6, &|_| ValueType::Any);
        assert_eq!(left_out, 0);
        let Change::AssertFact(fact) = &changes[0] else { panic!("{changes:?}") };
        assert_eq!(fact.predicate, "lives_in");
        assert_eq!(fact.object, ObjectRef::Entity(EntityRef::Name("Lisbon".into())));
        assert_eq!(
            fact.valid.from(),
            Timestamp::from_rfc3339("2024-05-01T00:00:00Z").unwrap_or(Timestamp::from_micros(1))
        );
        assert_eq!(fact.confidence, Some(0.6));
        assert_eq!(fact.provenance, vec![EpisodeRef::Id(ostrakon_core::EpisodeId(7))]);
        assert!(matches!(&changes[1], Change::MarkExtracted { source, .. } if source == "m@extract-1"));
    }

    #[test]
    fn a_value_of_another_type_than_its_predicate_is_left_out() {
        let fact = |object: &str| ExtractedFact {
            subject: "Ana".into(),
            predicate: "age".into(),
            object: object.into(),
            object_is_entity: false,
            valid_from: Some("yesterday-ish".into()),
            valid_to: Some("1999-01-01".into()),
        };
        let (changes, left_out) =
            changes(&episode(), &[fact("31"), fact("thirty")], "m@1", 0.6, &|_| ValueType::Integer);
        assert_eq!(left_out, 1);
        let Change::AssertFact(new) = &changes[0] else { panic!("{changes:?}") };
        assert_eq!(new.object, ObjectRef::Literal(Literal::Integer(31)));
        // An unreadable start is the episode's time; an end before it is dropped.
        assert_eq!((new.valid.from(), new.valid.to()), (episode().occurred_at, None));
    }

    #[test]
    fn refusals_fences_and_garbage_are_told_apart() {
        let refused =
            serde_json::json!({ "choices": [{ "message": { "content": null, "refusal": "I can't help" } }] });
        assert_eq!(
            read_completion(refused.to_string().as_bytes()),
            Ok(Completion::Refused("I can't help".into()))
        );
        let fenced = completion("```json\n{\"facts\": []}\n```");
        assert_eq!(read_completion(&fenced), Ok(Completion::Facts { facts: vec![], skipped: 0 }));
        assert!(read_completion(&completion("{\"facts\": [")).is_err());
        assert!(read_completion(&completion("{\"items\": []}")).is_err());
        assert!(read_completion(b"<html>").is_err());
        let many: Vec<String> = (0..40)
            .map(|i| format!(r#"{{"subject":"A","predicate":"p","object":"{i}","objectIsEntity":false,"validFrom":null,"validTo":null}}"#))
            .collect();
        let Ok(Completion::Facts { facts, skipped }) =
            read_completion(&completion(&format!("{{\"facts\": [{}]}}", many.join(","))))
        else {
            panic!("not read")
        };
        assert_eq!((facts.len(), skipped), (MAX_FACTS_PER_EPISODE, 40 - MAX_FACTS_PER_EPISODE));
    }
}
