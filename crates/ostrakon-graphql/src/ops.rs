//! Operations as JSON lines: the import format. Each line names a namespace and an `op`;
//! the GraphQL-shaped ones run as the matching mutation (so they are validated and
//! rejected exactly like API calls), and `replay` appends an exported batch again.
//!
//! ```text
//! {"namespace":"alice","op":"recordEpisode","episode":{...},"entities":[...],"facts":[...]}
//! {"namespace":"alice","op":"assertFacts","facts":[...]}
//! {"namespace":"alice","op":"endFact","fact":"12","validTo":"2024-01-01"}
//! {"namespace":"alice","op":"retractFact","fact":"12","reason":"mistaken"}
//! {"namespace":"alice","op":"definePredicate","name":"livesIn","cardinality":"ONE","valueType":"ENTITY"}
//! {"namespace":"alice","op":"configureNamespace","timeZone":"Europe/Paris","decay":{...}}
//! {"namespace":"alice","op":"recall","facts":["12"],"episodes":["3"],"at":"2024-05-02"}
//! {"namespace":"alice","op":"replay","seq":3,"systemTime":"…","events":[...]}
//! ```

use async_graphql::{Request, Variables};
use ostrakon_core::{Event, Namespace, Seq};
use ostrakon_engine::{Store, log::CommittedBatch, log::Submitted};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::code;
use crate::exec::{access::Access, build::OstrakonSchema};

/// Why a line was not applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// A stable code (`INVALID_TIME`, `BAD_REQUEST`, …).
    pub code: String,
    /// What was wrong, naming the field and value.
    pub message: String,
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

fn reject(code: &str, message: impl Into<String>) -> Rejection {
    Rejection { code: code.to_owned(), message: message.into() }
}

/// An exported batch, as `ostrakon export` writes it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReplayLine {
    /// Its namespace.
    pub namespace: String,
    /// Always `replay`.
    pub op: String,
    /// Its position in the namespace's log.
    pub seq: u64,
    /// Its system time when exported (informational: a replay gets a new one).
    pub system_time: String,
    /// Its events.
    pub events: Vec<Event>,
}

impl From<&CommittedBatch> for ReplayLine {
    fn from(b: &CommittedBatch) -> Self {
        ReplayLine {
            namespace: b.namespace.to_string(),
            op: "replay".into(),
            seq: b.seq.0,
            system_time: b.system_time.to_string(),
            events: b.events.clone(),
        }
    }
}

/// The ops that run a mutation of the same name.
pub const OPS: [&str; 9] = [
    "recordEpisode",
    "assertFacts",
    "endFact",
    "retractFact",
    "definePredicate",
    "configureNamespace",
    "recall",
    "addIntention",
    "cancelIntention",
];

/// The arguments op `op` takes besides `namespace` (those of its mutation), if it is one.
pub fn op_arguments(op: &str) -> Option<&'static [&'static str]> {
    mutation(op).map(|(_, args)| args)
}

/// The mutation each GraphQL-shaped op runs, with the arguments it takes from the line.
fn mutation(op: &str) -> Option<(&'static str, &'static [&'static str])> {
    Some(match op {
        "recordEpisode" => (
            "mutation($namespace: String!, $episode: EpisodeInput!, $entities: [EntityInput!]! = [], $facts: [FactInput!]! = []) \
             { recordEpisode(namespace: $namespace, episode: $episode, entities: $entities, facts: $facts) \
             { seq episode { id } facts { id } } }",
            &["episode", "entities", "facts"],
        ),
        "assertFacts" => (
            "mutation($namespace: String!, $facts: [FactInput!]!) \
             { assertFacts(namespace: $namespace, facts: $facts) { seq facts { id } } }",
            &["facts"],
        ),
        "endFact" => (
            "mutation($namespace: String!, $fact: ID!, $validTo: DateTime!) \
             { endFact(namespace: $namespace, fact: $fact, validTo: $validTo) { seq } }",
            &["fact", "validTo"],
        ),
        "retractFact" => (
            "mutation($namespace: String!, $fact: ID!, $reason: String) \
             { retractFact(namespace: $namespace, fact: $fact, reason: $reason) { seq } }",
            &["fact", "reason"],
        ),
        "definePredicate" => (
            "mutation($namespace: String!, $name: String!, $cardinality: Cardinality!, $valueType: ValueType! = ANY, \
             $description: String, $decay: ProfileInput, $embed: Boolean) { definePredicate(namespace: $namespace, \
             name: $name, cardinality: $cardinality, valueType: $valueType, description: $description, decay: $decay, \
             embed: $embed) { seq } }",
            &["name", "cardinality", "valueType", "description", "decay", "embed"],
        ),
        "configureNamespace" => (
            "mutation($namespace: String!, $timeZone: String, $decay: DecayInput, $consolidateEverySeconds: Int, \
             $embedding: EmbeddingInput, $segmentation: SegmentationInput, $retention: RetentionInput, $tiers: TiersInput) \
             { configureNamespace(namespace: $namespace, timeZone: $timeZone, decay: $decay, \
             consolidateEverySeconds: $consolidateEverySeconds, embedding: $embedding, segmentation: $segmentation, \
             retention: $retention, tiers: $tiers) { name } }",
            &[
                "timeZone",
                "decay",
                "consolidateEverySeconds",
                "embedding",
                "segmentation",
                "retention",
                "tiers",
            ],
        ),
        "recall" => (
            "mutation($namespace: String!, $facts: [ID!]! = [], $entities: [ID!]! = [], $episodes: [ID!]! = [], \
             $at: DateTime) { recall(namespace: $namespace, facts: $facts, entities: $entities, \
             episodes: $episodes, at: $at) { seq } }",
            &["facts", "entities", "episodes", "at"],
        ),
        "addIntention" => (
            "mutation($namespace: String!, $payload: String!, $trigger: TriggerInput!, $expiresAt: DateTime, \
             $priority: Int! = 0, $repeat: Boolean! = false) { addIntention(namespace: $namespace, \
             payload: $payload, trigger: $trigger, expiresAt: $expiresAt, priority: $priority, repeat: $repeat) { id } }",
            &["payload", "trigger", "expiresAt", "priority", "repeat"],
        ),
        "cancelIntention" => (
            "mutation($namespace: String!, $id: ID!, $reason: String) \
             { cancelIntention(namespace: $namespace, id: $id, reason: $reason) { id } }",
            &["id", "reason"],
        ),
        _ => return None,
    })
}

/// A line as read, before it is applied: what reading it needs nothing of the store
/// for (an import reads the next lines on another core while one is applied).
pub struct ReadLine(Read);

enum Read {
    /// `assertFacts`, the bulk of an import, read straight into its type: no tree of
    /// JSON values for thousands of facts.
    Facts(Result<AssertFactsLine, Rejection>),
    Other(String),
}

/// Reads one JSON line (see [`ReadLine`]).
pub fn read_line(line: String) -> ReadLine {
    read_facts(&line).unwrap_or(ReadLine(Read::Other(line)))
}

/// [`read_line`] from a borrowed line (a reader's buffer, used again for the next one):
/// only a line that is not `assertFacts` is copied.
pub fn read_str(line: &str) -> ReadLine {
    read_facts(line).unwrap_or_else(|| ReadLine(Read::Other(line.to_owned())))
}

/// An `assertFacts` line, read into its type; `None` for any other line.
fn read_facts(line: &str) -> Option<ReadLine> {
    if let Ok(Head { op: Some(op) }) = serde_json::from_str::<Head>(line)
        && op == "assertFacts"
    {
        let parsed = serde_json::from_str(line).map_err(|e| {
            let message = e.to_string();
            match message.strip_prefix("unknown field ").and_then(|m| m.split(',').next()) {
                Some(field) => reject(code::BAD_REQUEST, format!("unknown field {field} for op assertFacts")),
                None => reject(code::BAD_REQUEST, format!("assertFacts: {message}")),
            }
        });
        return Some(ReadLine(Read::Facts(parsed)));
    }
    None
}

/// Applies one JSON line with full (local) access; returns what the mutation answered.
pub async fn apply_line(schema: &OstrakonSchema, store: &Store, line: &str) -> Result<Value, Rejection> {
    apply_read(schema, store, read_line(line.to_owned())).await
}

/// Applies a line read by [`read_line`], as [`apply_line`] does.
pub async fn apply_read(schema: &OstrakonSchema, store: &Store, read: ReadLine) -> Result<Value, Rejection> {
    let line = match read.0 {
        Read::Facts(parsed) => {
            let parsed = parsed?;
            return assert_facts(store, &parsed.namespace, parsed.facts);
        }
        Read::Other(line) => line,
    };
    let line = line.as_str();
    let value: Value =
        serde_json::from_str(line).map_err(|e| reject(code::BAD_REQUEST, format!("not JSON: {e}")))?;
    let Value::Object(fields) = &value else {
        return Err(reject(code::BAD_REQUEST, "a line must be a JSON object"));
    };
    let op = fields
        .get("op")
        .and_then(Value::as_str)
        .ok_or_else(|| reject(code::BAD_REQUEST, "missing string field `op`"))?;
    let namespace = fields
        .get("namespace")
        .and_then(Value::as_str)
        .ok_or_else(|| reject(code::BAD_REQUEST, "missing string field `namespace`"))?;
    if op == "replay" {
        let line: ReplayLine = serde_json::from_value(value.clone())
            .map_err(|e| reject(code::BAD_REQUEST, format!("replay: {e}")))?;
        let ns =
            Namespace::new("namespace", namespace).map_err(|e| reject(code::INVALID_VALUE, e.to_string()))?;
        let receipt = store
            .replay(&ns, Seq(line.seq), &line.events)
            .map_err(|e| reject(code::BAD_REQUEST, e.to_string()))?;
        return Ok(json!({ "seq": receipt.seq.0 }));
    }
    let (document, arguments) = mutation(op).ok_or_else(|| {
        reject(code::BAD_REQUEST, format!("unknown op {op:?}; expected recordEpisode, assertFacts, endFact, retractFact, definePredicate, configureNamespace, recall, addIntention, cancelIntention or replay"))
    })?;
    if let Some(extra) =
        fields.keys().find(|k| *k != "op" && *k != "namespace" && !arguments.contains(&k.as_str()))
    {
        return Err(reject(code::BAD_REQUEST, format!("unknown field `{extra}` for op {op}")));
    }
    let mut variables = serde_json::Map::new();
    variables.insert("namespace".into(), Value::String(namespace.to_owned()));
    for name in arguments {
        if let Some(v) = fields.get(*name) {
            variables.insert((*name).to_owned(), v.clone());
        }
    }
    let request =
        Request::new(document).variables(Variables::from_json(Value::Object(variables))).data(Access::Local);
    let response = schema.execute(request).await;
    if let Some(error) = response.errors.first() {
        return Err(Rejection { code: code_of(error.extensions.as_ref()), message: error.message.clone() });
    }
    response.data.into_json().map_err(|e| reject(code::INTERNAL, e.to_string()))
}

/// The op of a line, read without building the rest of it.
#[derive(Deserialize)]
struct Head {
    op: Option<String>,
}

/// An `assertFacts` line.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AssertFactsLine {
    namespace: String,
    #[serde(rename = "op")]
    _op: serde::de::IgnoredAny,
    facts: Vec<crate::types::input::FactInput>,
}

/// `assertFacts`, the bulk of an import: the line goes straight from JSON to the
/// store's changes, through the same conversions and checks as the mutation and with the
/// same errors, but without a GraphQL request (parsing a document, coercing thousands of
/// variables, building a response) per line.
fn assert_facts(
    store: &Store,
    namespace: &str,
    facts: Vec<crate::types::input::FactInput>,
) -> Result<Value, Rejection> {
    finish_facts(submit_facts(store, namespace, facts)?)
}

/// The first half of [`assert_facts`]: validated and queued on the log ([`Store::submit`]).
fn submit_facts<'s>(
    store: &'s Store,
    namespace: &str,
    facts: Vec<crate::types::input::FactInput>,
) -> Result<Submitted<'s>, Rejection> {
    let ns =
        Namespace::new("namespace", namespace).map_err(|e| rejection(crate::exec::context::engine(e)))?;
    if facts.is_empty() {
        return Err(rejection(crate::types::input::invalid("facts", "[]", "give at least one fact")));
    }
    let now = store.now();
    let mut changes = Vec::with_capacity(facts.len());
    for (i, f) in facts.iter().enumerate() {
        let fact = crate::types::input::new_fact(store, &ns, &format_args!("facts[{i}]"), f, now, None)
            .map_err(rejection)?;
        changes.push(ostrakon_engine::Change::AssertFact(fact));
    }
    store
        .submit(&ns, changes)
        .map_err(|e| rejection(crate::exec::context::named_error(e, |n| format!("facts[{n}]"))))
}

/// The second half of [`assert_facts`]: durable, applied, and answered as the mutation.
fn finish_facts(submitted: Submitted<'_>) -> Result<Value, Rejection> {
    let receipt = submitted.finish().map_err(|e| rejection(crate::exec::context::engine(e)))?;
    let facts: Vec<Value> = receipt
        .ids
        .iter()
        .filter_map(|id| match id {
            Some(ostrakon_engine::RecordId::Fact(f)) => Some(json!({ "id": f.0.to_string() })),
            _ => None,
        })
        .collect();
    Ok(json!({ "assertFacts": { "seq": receipt.seq.0, "facts": facts } }))
}

impl ReadLine {
    /// Whether the line can be queued behind batches not yet applied ([`start_read`]): an
    /// `assertFacts` line that names its entities and cites no record by id (a batch still
    /// in flight gives its names to the next, but a fact or an episode is found by id only
    /// once applied). Any other line waits until the earlier ones are applied.
    pub fn queues(&self) -> bool {
        use crate::types::input::{EntityRefInput, ValueInput};
        let by_name = |r: &EntityRefInput| matches!(r, EntityRefInput::Name(_));
        match &self.0 {
            Read::Facts(Ok(line)) => line.facts.iter().all(|f| {
                by_name(&f.subject)
                    && !matches!(&f.object, ValueInput::Entity(r) if !by_name(r))
                    && f.provenance.is_empty()
                    && f.supersedes.is_none()
            }),
            Read::Facts(Err(_)) => true,
            Read::Other(_) => false,
        }
    }
}

/// A line started by [`start_read`].
pub enum Started<'s> {
    /// A batch of facts validated and queued on the log: [`finish_started`] acknowledges it.
    Queued(Submitted<'s>),
    /// A line applied whole (or refused).
    Done(Result<Value, Rejection>),
}

/// Starts a line that [`ReadLine::queues`]: validates it and queues it on the log, so
/// that the next lines can be validated while this one is made durable and applied
/// (batches queued together share one fsync). Other lines are applied whole, as
/// [`apply_read`] does; the caller must have finished every earlier line first.
pub async fn start_read<'s>(schema: &OstrakonSchema, store: &'s Store, read: ReadLine) -> Started<'s> {
    match read.0 {
        Read::Facts(parsed) => match parsed.and_then(|p| submit_facts(store, &p.namespace, p.facts)) {
            Ok(submitted) => Started::Queued(submitted),
            Err(rejection) => Started::Done(Err(rejection)),
        },
        other => Started::Done(apply_read(schema, store, ReadLine(other)).await),
    }
}

/// Waits for a queued line to be durable and applied. Whether it was accepted, without
/// its answer: an import counts lines, and the answer of a batch of thousands of facts
/// (an id each) cost a tenth of the applying thread's time.
pub fn finish_started(started: Started<'_>) -> Result<(), Rejection> {
    match started {
        Started::Queued(submitted) => {
            submitted.finish().map(drop).map_err(|e| rejection(crate::exec::context::engine(e)))
        }
        Started::Done(done) => done.map(drop),
    }
}

/// A resolver's error as a line's rejection.
fn rejection(error: async_graphql::Error) -> Rejection {
    Rejection { code: code_of(error.extensions.as_ref()), message: error.message }
}

/// The code an error's extensions give (`BAD_REQUEST` when they give none).
fn code_of(extensions: Option<&async_graphql::ErrorExtensionValues>) -> String {
    extensions
        .and_then(|e| e.get("code"))
        .map(|c| c.to_string().trim_matches('"').to_owned())
        .unwrap_or_else(|| code::BAD_REQUEST.to_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use async_graphql::parser::parse_schema;
    use async_graphql::parser::types::{TypeKind, TypeSystemDefinition};

    use super::*;

    /// Every op takes exactly the arguments of its mutation: a field added to a mutation
    /// and forgotten here fails this test.
    #[test]
    fn every_op_takes_every_argument_of_its_mutation() {
        let sdl = crate::sdl();
        let doc = parse_schema(&sdl).expect("the exported SDL parses");
        let mutation = doc
            .definitions
            .iter()
            .find_map(|d| match d {
                TypeSystemDefinition::Type(t) if t.node.name.node == "Mutation" => match &t.node.kind {
                    TypeKind::Object(o) => Some(o.fields.clone()),
                    _ => None,
                },
                _ => None,
            })
            .expect("a Mutation type");
        for op in OPS {
            let field = mutation
                .iter()
                .find(|f| f.node.name.node == op)
                .unwrap_or_else(|| panic!("no mutation {op}"));
            let mut expected: Vec<String> = field
                .node
                .arguments
                .iter()
                .map(|a| a.node.name.node.to_string())
                .filter(|a| a != "namespace")
                .collect();
            let mut taken: Vec<String> = op_arguments(op).unwrap().iter().map(|a| (*a).to_owned()).collect();
            expected.sort();
            taken.sort();
            assert_eq!(taken, expected, "op {op}");
        }
    }
}
