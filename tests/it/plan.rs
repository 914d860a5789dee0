//! Compiled plans answer exactly as the executor: random `facts` and `history` point reads (random
//! fields, aliases, argument forms, variables — valid, unknown and malformed) over the
//! golden fixture, each run through the executor (which uses a plan once the document
//! has passed validation, and falls back to its schema whenever the plan is unsure) and
//! through the schema alone, must serialize to the same bytes; so must every operation
//! of `queries/`.

use std::sync::Arc;

use ostrakon_engine::core::{TimeZone, Timestamp};
use ostrakon_engine::{Store, log::MemStorage};
use ostrakon_graphql::{Access, Executor, Limits, ops};
use serde_json::{Value, json};

async fn fixture() -> Executor {
    let now = Timestamp::parse("clock", "2030-01-01T00:00:00Z", &TimeZone::Utc).unwrap();
    let store = Arc::new(Store::with_storage(Arc::new(MemStorage::new()), Arc::new(move || now)).unwrap());
    let executor = Executor::new(Arc::clone(&store), Limits::default(), |schema| schema);
    let fixture =
        std::fs::read_to_string(crate::common::project_root().join("queries/fixture.jsonl")).unwrap();
    for line in fixture.lines().filter(|l| !l.trim().is_empty()) {
        ops::apply_line(executor.schema(), &store, line).await.unwrap();
    }
    executor
}

fn request(query: &str, variables: &Value, access: Access) -> async_graphql::Request {
    async_graphql::Request::new(query)
        .variables(async_graphql::Variables::from_json(variables.clone()))
        .data(access)
}

/// The same request through the executor and through the schema alone, as bytes.
async fn both(executor: &Executor, query: &str, variables: &Value, access: &Access) -> (String, String) {
    let planned = executor.execute(request(query, variables, access.clone())).await;
    let plain = executor.schema().execute(request(query, variables, access.clone())).await;
    (serde_json::to_string(&planned).unwrap(), serde_json::to_string(&plain).unwrap())
}

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const LEAVES: [&str; 13] = [
    "id",
    "predicate",
    "polarity",
    "status",
    "reason",
    "contradictionCount",
    "confidence",
    "corroborations",
    "assertedSeq",
    "assertedAt",
    "retractedSeq",
    "importance",
    "correction",
];
const VALUE_LEAVES: [&str; 6] = ["type", "string", "integer", "float", "boolean", "time"];

/// A random `facts` or `history` read: its document and variables.
fn random_read(rng: &mut Rng) -> (String, Value) {
    // `facts` of a subject, or `history` of a slot (which takes a predicate, not `includeAll`).
    let history = rng.below(3) == 0;
    let mut declared = Vec::new();
    let mut variables = serde_json::Map::new();
    let mut args = Vec::new();
    let mut inner = None;
    let mut arg = |rng: &mut Rng, name: &str, ty: &str, literal: String, value: Value| {
        if rng.below(2) == 0 {
            args.push(format!("{name}: {literal}"));
        } else {
            declared.push(format!("${name}: {ty}"));
            args.push(format!("{name}: ${name}"));
            if rng.below(12) > 0 {
                variables.insert(name.to_owned(), value);
            }
        }
    };
    let namespace =
        *rng.pick(&["demo", "demo", "demo", "demo", "demo", "demo", "demo", "demo", "nope", "Bad Name!"]);
    arg(rng, "namespace", "String!", format!("{namespace:?}"), json!(namespace));
    let (key, value) = match rng.below(4) {
        0 => ("id", json!(*rng.pick(&["1", "2", "3", "4", "5", "99", "abc", " 2"]))),
        1 => ("id", json!(*rng.pick(&[1, 2, 3, 4, 99]))),
        _ => (
            "name",
            json!(*rng.pick(&["Alice", "alice", "Alice", "Bob", "Paris", "Acme", "Nobody", "the big smoke"])),
        ),
    };
    if rng.below(3) == 0 {
        // A variable inside the input object, as clients usually write it.
        let ty = if key == "id" { "ID!" } else { "String!" };
        inner = Some((
            format!("$who: {ty}"),
            format!("subject: {{{key}: $who}}"),
            (rng.below(12) > 0).then_some(value),
        ));
    } else {
        arg(rng, "subject", "EntityRefInput!", format!("{{{key}: {value}}}"), json!({ key: value }));
    }
    if history || rng.below(3) > 0 {
        // An unknown predicate is the executor's (UNKNOWN_PREDICATE, with the nearest
        // names): the plan steps aside, and both must still answer the same.
        let p = *rng.pick(&["livesIn", "worksAt", "knows", "age", "bornIn", "unknownPredicate"]);
        arg(rng, "predicate", "String", format!("{p:?}"), json!(p));
    }
    for (name, times) in [
        (
            "validAt",
            &[
                "2010",
                "2012-06",
                "2016-01-01",
                "2020-05-05T10:00:00Z",
                "2011",
                "2013",
                "garbage",
                "2015-13-01",
            ][..],
        ),
        ("knownAt", &["2030-01-01T00:00:00.000010Z", "2029"][..]),
        ("at", &["2031"][..]),
    ] {
        if rng.below(if name == "validAt" { 2 } else { 6 }) == 0 {
            let t = *rng.pick(times);
            arg(rng, name, "DateTime", format!("{t:?}"), json!(t));
        }
    }
    if rng.below(6) == 0 {
        let s = *rng.pick(&[1i64, 3, 5, 8, 12, 1000, 0]);
        arg(rng, "knownAtSeq", "Int", s.to_string(), json!(s));
    }
    if !history && rng.below(3) == 0 {
        let all = rng.below(2) == 0;
        arg(rng, "includeAll", "Boolean", all.to_string(), json!(all));
    }
    if let Some((declaration, argument, value)) = inner {
        declared.push(declaration);
        args.push(argument);
        if let Some(value) = value {
            variables.insert("who".into(), value);
        }
    }
    let mut node = Vec::new();
    for _ in 0..1 + rng.below(6) {
        let alias = if rng.below(4) == 0 { format!("a{}: ", rng.below(3)) } else { String::new() };
        if rng.below(5) == 0 {
            let inner: Vec<&str> = (0..1 + rng.below(4)).map(|_| *rng.pick(&VALUE_LEAVES)).collect();
            node.push(format!("{alias}object {{ {} }}", dedup(inner).join(" ")));
        } else {
            node.push(format!("{alias}{}", rng.pick(&LEAVES)));
        }
    }
    let node = dedup(node).join(" ");
    let nodes = if rng.below(6) == 0 {
        format!("nodes {{ {node} }} again: nodes {{ {node} }}")
    } else {
        format!("nodes {{ {node} }}")
    };
    let root = match (history, rng.below(5) == 0) {
        (false, false) => "facts",
        (false, true) => "mine: facts",
        (true, false) => "history",
        (true, true) => "mine: history",
    };
    let head =
        if declared.is_empty() { "query".to_owned() } else { format!("query({})", declared.join(", ")) };
    (format!("{head} {{ {root}({}) {{ {nodes} }} }}", args.join(", ")), Value::Object(variables))
}

/// Fields asked twice under one key must be the same field: keep the first of each.
fn dedup(items: Vec<impl AsRef<str>>) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    items
        .into_iter()
        .map(|i| i.as_ref().to_owned())
        .filter(|i| {
            seen.insert(i.split(['{', ' ']).next().unwrap_or_default().trim_end_matches(':').to_owned())
        })
        .collect()
}

#[tokio::test]
async fn plans_answer_byte_for_byte_as_the_executor() {
    let executor = fixture().await;
    let mut rng = Rng(17);
    let (mut answered, mut errors) = (0, 0);
    // (Reads of an unknown predicate are the executor's: a few more cases keep the
    // plans' share as it was.)
    for case in 0..660 {
        let (query, variables) = random_read(&mut rng);
        let access = if rng.below(10) == 0 { Access::Denied } else { Access::Local };
        // The first run validates the document; the next may run its plan.
        for _ in 0..2 {
            let (planned, plain) = both(&executor, &query, &variables, &access).await;
            assert_eq!(planned, plain, "case {case}: {query} {variables}");
            if plain.contains("\"errors\"") {
                errors += 1;
            } else {
                answered += 1;
            }
        }
    }
    let planned = executor.planned_runs();
    assert!(planned > 200, "{planned} plans ran ({answered} answers, {errors} errors)");
    assert!(errors > 100 && answered > 400, "{answered} answers, {errors} errors");
}

#[tokio::test]
async fn every_operation_of_queries_answers_alike_through_the_executor() {
    let dir = crate::common::project_root().join("queries");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "graphql"))
        .collect();
    files.sort();
    for path in files {
        let query = std::fs::read_to_string(&path).unwrap();
        let document = async_graphql::parser::parse_query(&query).unwrap();
        if !matches!(document.operations, async_graphql::parser::types::DocumentOperations::Single(_))
            || query.contains("mutation")
            || query.contains("subscription")
        {
            continue;
        }
        let executor = fixture().await;
        let first = both(&executor, &query, &json!({}), &Access::Local).await;
        let second = both(&executor, &query, &json!({}), &Access::Local).await;
        assert_eq!(first.0, first.1, "{}", path.display());
        assert_eq!(second.0, second.1, "{}", path.display());
    }
}
