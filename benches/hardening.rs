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
use mnemo_engine::Store;
use mnemo_server::{AppState, Config, app};
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

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        let state = AppState::new(Arc::new(Store::in_memory()), Config::default());
        println!("| request | time | peak RSS growth | answer |");
        println!("|---|---|---|---|");
        ties(&state).await;
    });
}
