//! SPARQL against a hostile client: a query nested a thousand deep (groups, parentheses,
//! blank nodes, collections, sub-selects) or long chains of operators are refused with a
//! typed error and the server answers on; queries that would hold gigabytes (a string
//! doubled forty times, property path closures, solutions held to sort, deduplicate or
//! group) are refused within their memory budget, measured on a real server's peak RSS;
//! wide queries the optimizer would spend minutes on run unoptimized, within the
//! deadline.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt as _;
use ostrakon_engine::Store;
use ostrakon_graphql::{Limits, ops};
use ostrakon_server::{AppState, Config, app};
use serde_json::{Value, json};
use tower::ServiceExt as _;

use crate::common::serve::{http, start_with_args};

/// A chain of `n` entities, each `next` to the following one, in namespace `g`.
fn chain_lines(n: usize) -> Vec<String> {
    (0..n - 1)
        .collect::<Vec<_>>()
        .chunks(500)
        .map(|chunk| {
            let facts: Vec<Value> = chunk
                .iter()
                .map(|i| {
                    json!({ "subject": { "name": format!("E{i}") }, "predicate": "next",
                            "object": { "entity": { "name": format!("E{}", i + 1) } } })
                })
                .collect();
            json!({ "namespace": "g", "op": "assertFacts", "facts": facts }).to_string()
        })
        .collect()
}

async fn state(n: usize) -> AppState {
    let store = Arc::new(Store::in_memory());
    let schema = ostrakon_graphql::schema(Arc::clone(&store), Limits::default());
    for line in chain_lines(n) {
        ops::apply_line(&schema, &store, &line).await.unwrap();
    }
    AppState::new(store, Config::default())
}

async fn sparql(state: &AppState, query: &str) -> (StatusCode, Value) {
    let request = Request::post("/sparql?namespace=g")
        .header(header::CONTENT_TYPE, "application/sparql-query")
        .body(Body::from(query.to_owned()))
        .unwrap();
    let response = app(state.clone()).oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

async fn graphql_sparql(state: &AppState, query: &str) -> Value {
    let body = json!({
        "query": "query($q: String!) { sparql(namespace: \"g\", query: $q) { results } }",
        "variables": { "q": query }
    });
    let request = Request::post("/graphql")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let response = app(state.clone()).oneshot(request).await.unwrap();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    serde_json::from_slice(&bytes).unwrap()
}

fn error_code(body: &Value) -> &str {
    body["errors"][0]["extensions"]["code"].as_str().unwrap_or("")
}

/// Nested `n` deep in each way a query can nest.
fn nested(n: usize) -> Vec<(&'static str, String)> {
    vec![
        ("groups", format!("SELECT * WHERE {}?s ?p ?o{}", "{ ".repeat(n), " }".repeat(n))),
        ("parentheses", format!("SELECT * WHERE {{ ?s ?p ?o FILTER({}1{}) }}", "(".repeat(n), ")".repeat(n))),
        ("calls", format!("SELECT * WHERE {{ ?s ?p ?o FILTER({}?o{}) }}", "STR(".repeat(n), ")".repeat(n))),
        (
            "blank nodes",
            format!("SELECT * WHERE {{ ?s p:next {}?o{} }}", "[ p:next ".repeat(n), " ]".repeat(n)),
        ),
        ("collections", format!("SELECT * WHERE {{ ?s p:next {}?o{} }}", "( ".repeat(n), " )".repeat(n))),
        (
            "sub-selects",
            format!("SELECT * WHERE {}?s ?p ?o{}", "{ SELECT * WHERE { ".repeat(n), " } }".repeat(n)),
        ),
        ("exists", format!("ASK {{ ?s ?p ?o {}?s ?p ?o{} }}", "FILTER EXISTS { ".repeat(n), " }".repeat(n))),
        ("paths", format!("SELECT * WHERE {{ ?s {}p:next{} ?o }}", "(".repeat(n), ")*".repeat(n))),
        (
            "triple terms",
            format!("SELECT * WHERE {{ ?s ?p {}?o{} }}", "<<( ?a ?b ".repeat(n), " )>>".repeat(n)),
        ),
        ("sums", format!("SELECT * WHERE {{ ?s ?p ?o FILTER({} > 0) }}", vec!["1"; n].join(" + "))),
        ("conjunctions", format!("SELECT * WHERE {{ ?s ?p ?o FILTER({}) }}", vec!["true"; n].join(" && "))),
        ("optionals", format!("SELECT * WHERE {{ ?s ?p ?o {} }}", "OPTIONAL { ?s ?p ?o } ".repeat(n))),
        ("unions", format!("SELECT * WHERE {{ {} }}", vec!["{ ?s ?p ?o }"; n].join(" UNION "))),
        (
            "binds",
            format!(
                "SELECT * WHERE {{ ?s ?p ?o {} }}",
                (0..n).map(|i| format!("BIND(1 AS ?v{i}) ")).collect::<String>()
            ),
        ),
    ]
}

#[tokio::test]
async fn nested_queries_are_refused_and_the_server_answers_on() {
    let state = state(20).await;
    for (shape, query) in nested(1000) {
        let (status, body) = sparql(&state, &query).await;
        assert_eq!(
            (status, error_code(&body)),
            (StatusCode::BAD_REQUEST, "LIMIT_EXCEEDED"),
            "{shape}: {body}"
        );
        let message = body["errors"][0]["message"].as_str().unwrap();
        assert!(message.contains("(at most"), "{shape}: {message}");
        let over_graphql = graphql_sparql(&state, &query).await;
        assert_eq!(error_code(&over_graphql), "LIMIT_EXCEEDED", "{shape}: {over_graphql}");
    }
    // The same shapes, a few levels deep, are ordinary queries.
    for (shape, query) in nested(3) {
        let (status, body) = sparql(&state, &query).await;
        assert_eq!(status, StatusCode::OK, "{shape}: {body}");
    }
    let (status, body) = sparql(&state, "SELECT (COUNT(*) AS ?n) WHERE { ?a p:next ?b }").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["results"]["bindings"][0]["n"]["value"], "19");
}

#[tokio::test]
async fn wide_queries_run_unoptimized_instead_of_stalling_the_optimizer() {
    let state = state(20).await;
    // 400 triple patterns: the optimizer's join ordering took minutes on this (and looks
    // at no deadline); run as written, the joins meet their budget at once.
    let wide = format!(
        "SELECT * WHERE {{ {} }}",
        (0..400).map(|i| format!("?s{i} ?p{i} ?o{i} . ")).collect::<String>()
    );
    let start = Instant::now();
    let (status, body) = sparql(&state, &wide).await;
    assert_eq!(error_code(&body), "LIMIT_EXCEEDED", "{status} {body}");
    assert!(start.elapsed() < Duration::from_secs(20), "{:?}", start.elapsed());
    // Many patterns that share variables still answer.
    let path: Vec<String> = (0..60).map(|i| format!("?v{i} p:next ?v{} .", i + 1)).collect();
    let long_path = format!("SELECT (COUNT(*) AS ?n) WHERE {{ {} }}", path.join(" "));
    let (status, body) = sparql(&state, &long_path).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["results"]["bindings"][0]["n"]["value"], "0");
}

/// The queries that held gigabytes before each had its budget.
fn memory_bombs() -> Vec<(&'static str, String)> {
    let doubling: String = (0..40).map(|i| format!("BIND(CONCAT(?s{i}, ?s{i}) AS ?s{}) ", i + 1)).collect();
    let twenty: String = (0..20).map(|i| format!("BIND(CONCAT(?s{i}, ?s{i}) AS ?s{}) ", i + 1)).collect();
    vec![
        ("doubled string", format!("SELECT (STRLEN(?s40) AS ?n) WHERE {{ BIND(\"aaaaaaaaaaaaaaaa\" AS ?s0) {doubling} }}")),
        (
            "replace",
            format!("SELECT (STRLEN(?r) AS ?n) WHERE {{ BIND(\"aaaaaaaaaaaaaaaa\" AS ?s0) {twenty} BIND(REPLACE(?s20, \"\", ?s20) AS ?r) }}"),
        ),
        ("path closure", "SELECT (COUNT(*) AS ?n) WHERE { ?a p:next* ?b }".into()),
        ("alternative closure", "SELECT (COUNT(*) AS ?n) WHERE { ?a (p:next|!p:next)* ?b }".into()),
        ("closures in sequence", "SELECT (COUNT(*) AS ?n) WHERE { ?a p:next+/p:next+ ?b }".into()),
        ("cross product held by MINUS", "ASK { ?x ?y ?z MINUS { OPTIONAL { ?a ?b ?c } ?d ?e ?f } }".into()),
        ("sorted cross product", "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f } ORDER BY ?a LIMIT 1".into()),
        ("distinct cross product", "SELECT (COUNT(*) AS ?n) WHERE { SELECT DISTINCT * WHERE { ?a ?b ?c . ?d ?e ?f } }".into()),
        (
            "grouped cross product",
            "SELECT (COUNT(*) AS ?n) WHERE { SELECT ?a ?d (COUNT(*) AS ?k) WHERE { ?a ?b ?c . ?d ?e ?f } GROUP BY ?a ?d }"
                .into(),
        ),
    ]
}

/// A process's resident memory (`VmRSS`) or its peak since the last reset (`VmHWM`), in
/// bytes.
fn rss(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

/// Starts measuring a process's peak anew from its present resident memory.
fn reset_peak(pid: u32) {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").unwrap();
}

#[test]
fn memory_bombs_are_refused_within_their_budget_on_a_real_server() {
    const BUDGET: u64 = 64 * 1024 * 1024;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("ostrakon.toml");
    std::fs::write(
        &config,
        format!("[limits]\nsparql_max_memory_bytes = {BUDGET}\nrequest_timeout_seconds = 120\n"),
    )
    .unwrap();
    let data = dir.path().join("data");
    // No embedder: loading the model and embedding the writes in the background would
    // grow the server's memory while a bomb's peak is measured.
    let off = [("OSTRAKON_EMBEDDER", "off".as_ref())];
    let server = start_with_args(&data, &off, &["--config".as_ref(), config.as_os_str()]);
    for line in chain_lines(1500) {
        let value: Value = serde_json::from_str(&line).unwrap();
        let query =
            "mutation($facts: [FactInput!]!) { assertFacts(namespace: \"g\", facts: $facts) { seq } }";
        let body = json!({ "query": query, "variables": { "facts": value["facts"] } }).to_string();
        let (status, answer) = http(server.addr, "POST", "/graphql", &body).unwrap();
        assert_eq!(status, 200, "{answer}");
        assert!(!answer.contains("\"errors\""), "{answer}");
    }
    let pid = server.child.id();
    for (bomb, query) in memory_bombs() {
        reset_peak(pid);
        let before = rss(pid, "VmRSS:");
        let path = format!("/sparql?namespace=g&query={}", urlencode(&query));
        let (status, body) = http(server.addr, "GET", &path, "").unwrap();
        let body: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        assert_eq!((status, error_code(&body)), (503, "LIMIT_EXCEEDED"), "{bomb}: {body}");
        let grew = rss(pid, "VmHWM:").saturating_sub(before);
        // The budget counts an estimate of what a query keeps; hash tables, vectors that
        // double and allocator slack keep up to about as much again. Unbounded, each of
        // these held 2.8–5.8 GB.
        assert!(
            grew < 3 * BUDGET,
            "{bomb}: peak RSS {} MB above the {} MB before it",
            grew >> 20,
            before >> 20
        );
    }
    // And the server answers on.
    let path =
        format!("/sparql?namespace=g&query={}", urlencode("SELECT (COUNT(*) AS ?n) WHERE { ?a p:next ?b }"));
    let (status, body) = http(server.addr, "GET", &path, "").unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"1499\""), "{body}");
}

fn urlencode(text: &str) -> String {
    serde_urlencoded::to_string([("q", text)]).unwrap().trim_start_matches("q=").to_owned()
}

/// Long chains without a bracket, in each way a query can chain them (N1): refused with a
/// typed error before they can overflow the parser's, the checks' or the evaluator's
/// stack, and the server answers on.
#[tokio::test]
async fn long_chains_without_brackets_are_refused_and_the_server_answers_on() {
    let state = state(20).await;
    let n = 6_000;
    let chains = [
        ("sequence path", format!("SELECT * WHERE {{ ?s {} ?o }}", vec!["p:next"; n].join("/"))),
        ("alternative path", format!("SELECT * WHERE {{ ?s {} ?o }}", vec!["p:next"; n].join("|"))),
        ("inverse path", format!("SELECT * WHERE {{ ?s {}p:next ?o }}", "^".repeat(n))),
        ("negations", format!("SELECT * WHERE {{ ?s ?p ?o FILTER({}true) }}", "!".repeat(n))),
        ("unary minus", format!("SELECT * WHERE {{ ?s ?p ?o FILTER({}1 > 0) }}", "-".repeat(n))),
        ("products", format!("SELECT * WHERE {{ ?s ?p ?o FILTER({} > 0) }}", vec!["2"; n].join(" * "))),
        ("sums", format!("SELECT * WHERE {{ ?s ?p ?o FILTER({} > 0) }}", vec!["1"; n].join(" + "))),
        ("disjunctions", format!("SELECT * WHERE {{ ?s ?p ?o FILTER({}) }}", vec!["true"; n].join(" || "))),
        ("comparisons", format!("SELECT * WHERE {{ ?s ?p ?o FILTER({}) }}", vec!["1"; n].join(" = "))),
    ];
    for (shape, query) in chains {
        assert!(query.len() < ostrakon_rdf::MAX_QUERY_BYTES, "{shape}: {} bytes", query.len());
        let (status, body) = sparql(&state, &query).await;
        assert_eq!(
            (status, error_code(&body)),
            (StatusCode::BAD_REQUEST, "LIMIT_EXCEEDED"),
            "{shape}: {body}"
        );
    }
    // Just under the bound, each runs to a typed answer (or a typed refusal by the algebra's
    // own bounds): nothing overflows.
    let under = ostrakon_rdf::MAX_OPERATORS - 10;
    let near = [
        format!("SELECT * WHERE {{ ?s {} ?o }}", vec!["p:next"; under].join("/")),
        format!("SELECT * WHERE {{ ?s {}p:next ?o }}", "^".repeat(under)),
        format!("SELECT * WHERE {{ ?s ?p ?o FILTER({} > 0) }}", vec!["1"; under].join(" + ")),
    ];
    for query in near {
        let (status, body) = sparql(&state, &query).await;
        let typed = ["LIMIT_EXCEEDED", "INVALID_QUERY"].contains(&error_code(&body));
        assert!(status == StatusCode::OK || typed, "{status} {body}");
    }
    let (status, body) = sparql(&state, "SELECT (COUNT(*) AS ?n) WHERE { ?a p:next/p:next ?b }").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["results"]["bindings"][0]["n"]["value"], "18");
}

/// ORDER BY over values of mixed kinds (numbers, strings, language strings, dates,
/// booleans, other datatypes): SPARQL compares only some pairs, and a comparison that
/// mixed its rules was no total order — the sort panicked and the query's thread with it
/// (found by the fuzzer, `?e ((mn:status)*)* ?o ORDER BY DESC(?o)`). Any order is an
/// answer; a panic is not.
#[tokio::test]
async fn order_by_over_values_of_mixed_kinds_answers() {
    let state = state(3).await;
    let mut values = Vec::new();
    for i in 0..400u32 {
        values.push(match i % 8 {
            0 => format!("{}", (i * 7919) % 1000),
            1 => format!("\"{}\"", (i * 104_729) % 1000),
            2 => format!("{}.5", (i * 31) % 100),
            3 => format!("\"{}\"@en", (i * 17) % 50),
            4 => format!("\"20{:02}-01-01\"^^<http://www.w3.org/2001/XMLSchema#date>", i % 30),
            5 => (if i % 16 == 5 { "true" } else { "false" }).to_owned(),
            6 => format!("\"{}\"^^<http://example.org/t>", (i * 13) % 77),
            _ => format!("\"{}e0\"^^<http://www.w3.org/2001/XMLSchema#double>", (i * 3) % 90),
        });
    }
    for direction in ["?o", "DESC(?o)"] {
        let query =
            format!("SELECT ?o WHERE {{ VALUES ?o {{ {} }} }} ORDER BY {direction}", values.join(" "));
        let (status, body) = sparql(&state, &query).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["results"]["bindings"].as_array().map(Vec::len), Some(400), "{body}");
    }
}

/// A mistake at the bottom of expressions nested as deep as allowed, in each form whose
/// alternatives share their start (`!x` or `x`, `REGEX` with two or three arguments, a
/// function or a custom aggregate, …): the parser once tried every combination of them,
/// 2 to the depth, and ran for minutes outside any deadline. Each is a syntax error.
#[tokio::test]
async fn deeply_nested_mistakes_are_syntax_errors() {
    let state = state(3).await;
    let forms = [
        ("negated calls", "!CONTAINS(?o, "),
        ("regex", "REGEX(?o, "),
        ("substr", "SUBSTR(?o, "),
        ("replace", "REPLACE(?o, \"a\", "),
        ("functions", "<http://example.org/f>(?o, "),
        ("in lists", "?o IN (1, "),
        ("exists", "EXISTS { ?s ?p ?o FILTER("),
    ];
    for (form, opening) in forms {
        let depth = 60 / opening.matches(['(', '{']).count();
        let closing: String = opening
            .chars()
            .rev()
            .filter_map(|c| match c {
                '(' => Some(')'),
                '{' => Some('}'),
                _ => None,
            })
            .collect();
        let query = format!(
            "SELECT * WHERE {{ ?s ?p ?o FILTER({}1 + {}) }}",
            opening.repeat(depth),
            closing.repeat(depth)
        );
        let (status, body) = sparql(&state, &query).await;
        assert_eq!((status, error_code(&body)), (StatusCode::BAD_REQUEST, "INVALID_QUERY"), "{form}: {body}");
    }
}
