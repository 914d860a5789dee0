//! What the requests a hostile or careless client can send cost, each through the real
//! server (`app(state)`, in process): time, and the growth of this process's peak
//! resident memory. Run with `cargo bench --bench hardening`; prints one table. Nothing
//! is asserted here: the tests check that each request is refused or answered, and count
//! work; this says what it costs on this machine.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, header};
use http_body_util::BodyExt as _;
use ostrakon_engine::Store;
use ostrakon_server::{AppState, Config, app};
use serde_json::{Value, json};
use tower::ServiceExt as _;

/// A process's resident memory, or its peak since the last reset, in bytes.
fn rss(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap_or("x: 0 kB");
    line.split_whitespace().nth(1).and_then(|n| n.parse::<u64>().ok()).unwrap_or(0) * 1024
}

/// Starts measuring the peak anew from the present resident memory.
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

async fn post(state: &AppState, path: &str, content_type: &str, body: String) -> (u16, Value, usize) {
    let request =
        Request::post(path).header(header::CONTENT_TYPE, content_type).body(Body::from(body)).unwrap();
    let response = app(state.clone()).oneshot(request).await.unwrap();
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null), bytes.len())
}

async fn graphql(state: &AppState, query: &str, variables: Value) -> (u16, Value, usize) {
    post(state, "/graphql", "application/json", json!({ "query": query, "variables": variables }).to_string())
        .await
}

/// Runs `f`, printing its time, peak memory growth and outcome.
async fn row<F: std::future::Future<Output = (u16, Value, usize)>>(name: &str, f: F) -> Value {
    reset_peak();
    let before = rss("VmRSS:");
    let start = Instant::now();
    let (status, body, len) = f.await;
    let took = start.elapsed();
    let grew = rss("VmHWM:").saturating_sub(before);
    let outcome = match body["errors"][0]["extensions"]["code"].as_str() {
        Some(code) => code.to_owned(),
        None => format!("{status}, {len} bytes"),
    };
    println!("| {name} | {} | {} MB | {outcome} |", show(took), grew >> 20);
    body
}

fn show(d: Duration) -> String {
    if d < Duration::from_millis(10) {
        format!("{:.2} ms", d.as_secs_f64() * 1e3)
    } else {
        format!("{:.0} ms", d.as_secs_f64() * 1e3)
    }
}

async fn ties(state: &AppState) {
    graphql(
        state,
        r#"mutation { definePredicate(namespace: "t", name: "value", cardinality: ONE) { seq } }"#,
        json!({}),
    )
    .await;
    let facts: Vec<Value> = (0..19_500)
        .map(|i| json!({ "subject": { "name": "Tied" }, "predicate": "value", "object": { "integer": i }, "validFrom": "2020-01-01" }))
        .collect();
    let write = "mutation($facts: [FactInput!]!) { assertFacts(namespace: \"t\", facts: $facts) { seq } }";
    row(
        "assertFacts of 19,500 values from one instant, ONE slot (1.7 MB)",
        graphql(state, write, json!({ "facts": facts })),
    )
    .await;
    let page = r#"{ history(namespace: "t", subject: {name: "Tied"}, predicate: "value", first: 100) { nodes { id status contradictionCount contradicts { id } } } }"#;
    row("history(first: 100) { contradicts { id } } of that slot", graphql(state, page, json!({}))).await;
    row("… again (the request's first pass warmed nothing)", graphql(state, page, json!({}))).await;
}

/// What a document costs by the budget: read from the refusal of a server that allows
/// nothing.
async fn cost(query: &str) -> String {
    let config = Config::parse("[limits]\nmax_complexity = 1\n", "cost.toml").unwrap();
    let state = AppState::new(Arc::new(Store::in_memory()), config);
    let (_, body, _) = graphql(&state, query, json!({})).await;
    let message = body["errors"][0]["message"].as_str().unwrap_or("");
    message.split_whitespace().find(|w| w.chars().all(|c| c.is_ascii_digit())).unwrap_or("?").to_owned()
}

const RICH_FACT: &str =
    "id predicate polarity object { entity { id name } string integer float boolean time }
    valid { from to } effective { from to } status reason supersededBy { id object { string } }
    contradicts { id } contradictionCount confidence corroborations assertedSeq assertedAt retractedSeq
    correction importance subject { id name } provenance { id text occurredAt source role thread }";

async fn lists(state: &AppState) {
    let slot = format!(
        r#"{{ now: facts(namespace: "t", subject: {{name: "Tied"}}, predicate: "value", first: 50) {{ nodes {{ {RICH_FACT} }} }}
             history(namespace: "t", subject: {{name: "Tied"}}, predicate: "value", first: 50) {{ nodes {{ {RICH_FACT} }} }}
             all: facts(namespace: "t", subject: {{name: "Tied"}}, predicate: "value", includeAll: true, first: 50) {{ nodes {{ {RICH_FACT} }} }} }}"#
    );
    let name = format!(
        "one slot: facts, history, facts(includeAll), every field (complexity {} of 500,000)",
        cost(&slot).await
    );
    row(&name, graphql(state, &slot, json!({}))).await;
    let mut walk = "id".to_owned();
    for _ in 0..4 {
        walk = format!("incoming {{ subject {{ {walk} }} }}");
    }
    let walk = format!(r#"{{ entity(namespace: "t", name: "Tied") {{ {walk} }} }}"#);
    let name = format!("incoming {{ subject {{ … }} }} four deep (complexity {})", cost(&walk).await);
    row(&name, graphql(state, &walk, json!({}))).await;
}

async fn sparql(state: &AppState) {
    let nested = format!("SELECT * WHERE {}?s ?p ?o{}", "{ ".repeat(1000), " }".repeat(1000));
    row(
        "SPARQL, groups nested 1,000 deep (4 KB)",
        post(state, "/sparql?namespace=t", "application/sparql-query", nested),
    )
    .await;
    let parens = format!("SELECT * WHERE {{ ?s ?p ?o FILTER({}1{}) }}", "(".repeat(1000), ")".repeat(1000));
    row(
        "SPARQL, 1,000 parentheses in a FILTER",
        post(state, "/sparql?namespace=t", "application/sparql-query", parens),
    )
    .await;
    let doubling: String = (0..40).map(|i| format!("BIND(CONCAT(?s{i}, ?s{i}) AS ?s{}) ", i + 1)).collect();
    let concat =
        format!("SELECT (STRLEN(?s40) AS ?n) WHERE {{ BIND(\"aaaaaaaaaaaaaaaa\" AS ?s0) {doubling} }}");
    row(
        "SPARQL, a string doubled 40 times",
        post(state, "/sparql?namespace=t", "application/sparql-query", concat),
    )
    .await;
    for (name, q) in [
        (
            "SPARQL, value* over the tied slot's subject",
            "SELECT (COUNT(*) AS ?n) WHERE { ?a (p:value|!p:value)* ?b }",
        ),
        ("SPARQL, a cross product sorted", "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f } ORDER BY ?a LIMIT 1"),
    ] {
        row(name, post(state, "/sparql?namespace=t", "application/sparql-query", q.to_owned())).await;
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        let state = AppState::new(Arc::new(Store::in_memory()), Config::default());
        println!("| request | time | peak RSS growth | answer |");
        println!("|---|---|---|---|");
        ties(&state).await;
        lists(&state).await;
        sparql(&state).await;
    });
}
