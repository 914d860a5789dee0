//! The HTTP server through its router (`app(state)` and `oneshot`, no socket): tokens and
//! namespace isolation for every operation, limits, error codes, health, metrics,
//! GraphiQL and the configuration file.

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use futures_util::StreamExt as _;
use http_body_util::BodyExt as _;
use ostrakon_engine::Store;
use ostrakon_engine::core::Namespace;
use ostrakon_graphql::{Access, Limits, ops};
use ostrakon_server::{AppState, Config, ConfigError, app};
use serde_json::{Value, json};
use tower::ServiceExt as _;

const ALICE_RW: &str = "alice-read-write-0001";
const ALICE_R: &str = "alice-read-only-00001";
const EVERYTHING_R: &str = "every-namespace-read-1";

const TOKENS: &str = r#"
[[tokens]]
name = "alice-rw"
token = "alice-read-write-0001"
namespaces = { alice = "read-write" }

[[tokens]]
name = "alice-r"
token = "alice-read-only-00001"
namespaces = { alice = "read" }

[[tokens]]
name = "reader"
token = "every-namespace-read-1"
namespaces = { "*" = "read" }
"#;

/// Two namespaces with the same small story: Alice lives in Paris (fact 1, from episode 1,
/// in a thread long quiet, whose segment is due to close).
async fn seeded() -> Arc<Store> {
    let store = Arc::new(Store::in_memory());
    let schema = ostrakon_graphql::schema(Arc::clone(&store), Limits::default());
    for ns in ["alice", "bob"] {
        let line = json!({
            "namespace": ns, "op": "recordEpisode",
            "episode": { "text": "I live in Paris", "occurredAt": "2020-01-01", "thread": "t" },
            "facts": [{ "subject": { "name": "Alice" }, "predicate": "livesIn",
                        "object": { "entity": { "name": "Paris" } } }]
        });
        ops::apply_line(&schema, &store, &line.to_string()).await.unwrap();
    }
    store
}

async fn server_state(config: &str) -> AppState {
    AppState::new(seeded().await, Config::parse(config, "test.toml").unwrap())
}

fn graphql_request(token: Option<&str>, body: impl Into<Body>) -> Request<Body> {
    let mut request = Request::post("/graphql").header(header::CONTENT_TYPE, "application/json");
    if let Some(token) = token {
        request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    request.body(body.into()).unwrap()
}

async fn send(state: &AppState, request: Request<Body>) -> (StatusCode, Vec<u8>) {
    let response = app(state.clone()).oneshot(request).await.unwrap();
    let status = response.status();
    (status, response.into_body().collect().await.unwrap().to_bytes().to_vec())
}

async fn post(state: &AppState, token: Option<&str>, query: &str) -> (StatusCode, Value) {
    let body = json!({ "query": query }).to_string();
    let (status, bytes) = send(state, graphql_request(token, body)).await;
    (status, serde_json::from_slice(&bytes).unwrap())
}

/// The codes of a response's errors.
fn codes(response: &Value) -> Vec<String> {
    response["errors"]
        .as_array()
        .map(|errors| {
            errors.iter().map(|e| e["extensions"]["code"].as_str().unwrap_or("").to_owned()).collect()
        })
        .unwrap_or_default()
}

/// Every query, mutation and subscription of the API, each naming namespace `NS`.
const OPERATIONS: &[(&str, &str)] = &[
    ("namespace", r#"{ namespace(name: "NS") { name } }"#),
    ("namespaces", r#"{ namespaces }"#),
    ("entity", r#"{ entity(namespace: "NS", name: "Alice") { id } }"#),
    ("entities", r#"{ entities(namespace: "NS") { edges { cursor } } }"#),
    ("facts", r#"{ facts(namespace: "NS", predicate: "livesIn") { edges { cursor } } }"#),
    (
        "history",
        r#"{ history(namespace: "NS", subject: {name: "Alice"}, predicate: "livesIn") { edges { cursor } } }"#,
    ),
    ("snapshot", r#"{ snapshot(namespace: "NS") { edges { cursor } } }"#),
    ("neighbors", r#"{ neighbors(namespace: "NS", entity: {name: "Alice"}) { nodes { distance } } }"#),
    ("episodes", r#"{ episodes(namespace: "NS") { edges { cursor } } }"#),
    ("recordEpisode", r#"mutation { recordEpisode(namespace: "NS", episode: {text: "hi"}) { seq } }"#),
    (
        "assertFacts",
        r#"mutation { assertFacts(namespace: "NS", facts: [{subject: {name: "Alice"}, predicate: "age", object: {integer: 30}}]) { seq } }"#,
    ),
    ("endFact", r#"mutation { endFact(namespace: "NS", fact: "1", validTo: "2030-01-01") { seq } }"#),
    ("retractFact", r#"mutation { retractFact(namespace: "NS", fact: "1", reason: "test") { seq } }"#),
    (
        "definePredicate",
        r#"mutation { definePredicate(namespace: "NS", name: "age", cardinality: ONE) { seq } }"#,
    ),
    (
        "configureNamespace",
        r#"mutation { configureNamespace(namespace: "NS", timeZone: "Europe/Paris") { name } }"#,
    ),
    ("events", r#"subscription { events(namespace: "NS") { seq } }"#),
    ("recall", r#"mutation { recall(namespace: "NS", entities: ["1"]) { seq } }"#),
    ("consolidate", r#"mutation { consolidate(namespace: "NS") { seq } }"#),
    ("recallable", r#"{ recallable(namespace: "NS") { items { kind } } }"#),
    ("forecast", r#"{ forecast(namespace: "NS", from: "2030", to: "2031") { items { kind } } }"#),
    ("search", r#"{ search(namespace: "NS", text: "Alice") { indexedSeq } }"#),
    ("context", r#"{ context(namespace: "NS", message: "Alice") { tokens } }"#),
    ("remember", r#"mutation { remember(namespace: "NS", text: "Alice") { seq } }"#),
    ("thread", r#"{ thread(namespace: "NS", thread: "t") { edges { cursor } } }"#),
    ("topics", r#"{ topics(namespace: "NS") { id } }"#),
    ("topic", r#"{ topic(namespace: "NS", id: "1") { id } }"#),
    ("closeSegments", r#"mutation { closeSegments(namespace: "NS") { seq } }"#),
    ("intentions", r#"{ intentions(namespace: "NS") { id } }"#),
    ("dueIntentions", r#"{ dueIntentions(namespace: "NS", message: "Alice") { reason } }"#),
    (
        "addIntention",
        r#"mutation { addIntention(namespace: "NS", payload: "p", trigger: { at: "2031" }) { id } }"#,
    ),
    ("cancelIntention", r#"mutation { cancelIntention(namespace: "NS", id: "1") { id } }"#),
    ("fireDueIntentions", r#"mutation { fireDueIntentions(namespace: "NS") { seq } }"#),
    ("timeline", r#"{ timeline(namespace: "NS", entity: {name: "Alice"}) { lanes { predicate } } }"#),
    (
        "durations",
        r#"{ durations(namespace: "NS", entity: {name: "Alice"}, predicate: "age") { values { seconds } } }"#,
    ),
    (
        "inForceSeries",
        r#"{ inForceSeries(namespace: "NS", predicate: "age", from: "2020", to: "2030", step: "P1Y") { points } }"#,
    ),
    ("changes", r#"{ changes(namespace: "NS", from: "2020", to: "2030", step: "P1Y") { counts } }"#),
    (
        "overlaps",
        r#"{ overlaps(namespace: "NS", a: {predicate: "age"}, b: {predicate: "age"}, relation: INTERSECTS) { truncated } }"#,
    ),
    ("aggregate", r#"{ aggregate(namespace: "NS") { groups { count } } }"#),
    ("sparql", r#"{ sparql(namespace: "NS", query: "ASK { ?s ?p ?o }") { form results } }"#),
    ("erasures", r#"{ erasures(namespace: "NS") { seq } }"#),
    ("eraseEntity", r#"mutation { eraseEntity(namespace: "NS", id: "1") { seq } }"#),
    ("eraseEpisodes", r#"mutation { eraseEpisodes(namespace: "NS", ids: ["1"]) { seq } }"#),
    ("eraseFacts", r#"mutation { eraseFacts(namespace: "NS", ids: ["1"]) { seq } }"#),
    ("tiers", r#"{ tiers(namespace: "NS") { core { placedSeq } } }"#),
    ("placeMemory", r#"mutation { placeMemory(namespace: "NS", fact: "1", tier: CORE) { basis { seq } } }"#),
    (
        "releaseMemory",
        r#"mutation { releaseMemory(namespace: "NS", fact: "1", tier: CORE) { basis { seq } } }"#,
    ),
    ("dropNamespace", r#"mutation { dropNamespace(name: "NS", confirm: "NS") }"#),
];

/// Operations that need more than a read-write grant: `erase` (or `admin` to drop).
const ERASING: &[&str] = &["eraseEntity", "eraseEpisodes", "eraseFacts", "dropNamespace"];

fn is_mutation(op: &str) -> bool {
    OPERATIONS.iter().any(|(name, q)| *name == op && q.starts_with("mutation"))
}

/// Runs an operation as `access`: queries and mutations over HTTP, the subscription
/// through the schema the server runs (HTTP cannot carry it), first response only.
async fn run_as(state: &AppState, token: &str, access: &Access, op: &str, ns: &str) -> Value {
    let (_, query) = OPERATIONS.iter().find(|(name, _)| *name == op).unwrap();
    let query = query.replace("NS", ns);
    if query.starts_with("subscription") {
        let request = async_graphql::Request::new(query).data(access.clone());
        let mut stream = state.schema().execute_stream(request);
        let first =
            tokio::time::timeout(std::time::Duration::from_millis(200), stream.next()).await.ok().flatten();
        return match first {
            Some(response) => serde_json::to_value(response).unwrap(),
            None => json!({ "data": "streaming" }),
        };
    }
    let (status, body) = post(state, Some(token), &query).await;
    assert_eq!(status, StatusCode::OK, "{op}: {body}");
    body
}

fn access_of(state: &AppState, token: &str) -> Access {
    state.config().access_for(token).unwrap()
}

#[tokio::test]
async fn the_operation_table_covers_the_whole_api() {
    let state = server_state("").await;
    let (_, body) = post(
        &state,
        None,
        "{ __schema { queryType { fields { name } } mutationType { fields { name } } subscriptionType { fields { name } } } }",
    )
    .await;
    let mut api = BTreeSet::new();
    for root in ["queryType", "mutationType", "subscriptionType"] {
        for field in body["data"]["__schema"][root]["fields"].as_array().unwrap() {
            api.insert(field["name"].as_str().unwrap().to_owned());
        }
    }
    let table: BTreeSet<String> = OPERATIONS.iter().map(|(name, _)| (*name).to_owned()).collect();
    assert_eq!(api, table, "every operation of the API must be in OPERATIONS");
}

#[tokio::test]
async fn a_token_never_reaches_another_namespace() {
    let state = server_state(TOKENS).await;
    for token in [ALICE_RW, ALICE_R] {
        let access = access_of(&state, token);
        for (op, _) in OPERATIONS {
            let response = run_as(&state, token, &access, op, "bob").await;
            if *op == "namespaces" {
                // It names no namespace: it lists the token's own, and never bob.
                assert_eq!(response["data"]["namespaces"], json!(["alice"]), "{response}");
                continue;
            }
            assert_eq!(codes(&response), ["FORBIDDEN"], "{op} on bob with {token}: {response}");
            assert!(
                response["data"].is_null()
                    || response["data"].as_object().is_none_or(|d| d.values().all(Value::is_null))
            );
        }
    }
    // Nothing was written to bob by all those attempts.
    assert_eq!(state.store().counts(&Namespace::new("ns", "bob").unwrap()).unwrap().batches, 1);
}

#[tokio::test]
async fn a_read_token_reads_but_cannot_write() {
    let state = server_state(TOKENS).await;
    let alice = Namespace::new("ns", "alice").unwrap();
    let batches = state.store().counts(&alice).unwrap().batches;
    for token in [ALICE_R, EVERYTHING_R] {
        let access = access_of(&state, token);
        for (op, _) in OPERATIONS {
            let response = run_as(&state, token, &access, op, "alice").await;
            if is_mutation(op) {
                assert_eq!(codes(&response), ["FORBIDDEN"], "{op} with {token}: {response}");
            } else {
                assert!(codes(&response).is_empty(), "{op} with {token}: {response}");
            }
            // Reads never write, not even derived state such as a segment that is due.
            assert_eq!(state.store().counts(&alice).unwrap().batches, batches, "{op} with {token} wrote");
        }
    }
    // The `*` grant reads every namespace.
    let (_, body) =
        post(&state, Some(EVERYTHING_R), r#"{ namespace(name: "bob") { counts { facts } } }"#).await;
    assert_eq!(body["data"]["namespace"]["counts"]["facts"], 1);
}

#[tokio::test]
async fn a_read_write_token_uses_its_own_namespace() {
    let state = server_state(TOKENS).await;
    let access = access_of(&state, ALICE_RW);
    for (op, _) in OPERATIONS {
        let response = run_as(&state, ALICE_RW, &access, op, "alice").await;
        if ERASING.contains(op) {
            assert_eq!(codes(&response), ["FORBIDDEN"], "{op} needs more than read-write: {response}");
        } else {
            assert!(!codes(&response).contains(&"FORBIDDEN".to_owned()), "{op}: {response}");
        }
    }
    assert!(state.store().counts(&Namespace::new("ns", "alice").unwrap()).unwrap().batches > 1);
}

#[tokio::test]
async fn requests_without_a_valid_token_are_refused_before_graphql() {
    let state = server_state(TOKENS).await;
    let query = r#"{ namespace(name: "alice") { name } }"#;
    for token in [None, Some("not-a-known-token-at-all"), Some("")] {
        let body = json!({ "query": query }).to_string();
        let response = app(state.clone()).oneshot(graphql_request(token, body)).await.unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{token:?}");
        assert_eq!(response.headers()[header::WWW_AUTHENTICATE], "Bearer");
        let body: Value =
            serde_json::from_slice(&response.into_body().collect().await.unwrap().to_bytes()).unwrap();
        assert_eq!(codes(&body), ["FORBIDDEN"]);
    }
    // Not a bearer credential.
    let request = Request::post("/graphql")
        .header(header::AUTHORIZATION, format!("Basic {ALICE_RW}"))
        .body(Body::from(json!({ "query": query }).to_string()))
        .unwrap();
    assert_eq!(send(&state, request).await.0, StatusCode::UNAUTHORIZED);
    // A WebSocket upgrade with a bad token is refused before upgrading.
    let request = Request::get("/graphql/ws")
        .header(header::AUTHORIZATION, "Bearer nope-nope-nope-nope")
        .header(header::UPGRADE, "websocket")
        .header(header::CONNECTION, "upgrade")
        .header(header::SEC_WEBSOCKET_PROTOCOL, "graphql-transport-ws")
        .header(header::SEC_WEBSOCKET_VERSION, "13")
        .header(header::SEC_WEBSOCKET_KEY, "dGhlIHNhbXBsZSBub25jZQ==")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&state, request).await.0, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn without_tokens_every_request_is_the_local_user() {
    let state = server_state("").await;
    for (op, _) in OPERATIONS {
        let response = run_as(&state, "ignored", &Access::Local, op, "bob").await;
        assert!(!codes(&response).contains(&"FORBIDDEN".to_owned()), "{op}: {response}");
    }
    // Even with a header that names no token: there are none to check.
    let (status, _) = post(&state, Some("whatever"), r#"{ namespace(name: "bob") { name } }"#).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn limits_are_limit_exceeded() {
    let state = server_state("[limits]\nmax_body_bytes = 4096\n").await;
    // Body too large.
    let big =
        json!({ "query": format!("{{ namespace(name: \"alice\") {{ name }} }} #{}", "x".repeat(8000)) });
    let (status, bytes) = send(&state, graphql_request(None, big.to_string())).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(codes(&body), ["LIMIT_EXCEEDED"]);

    // Too deep.
    let mut deep = "name".to_owned();
    for _ in 0..20 {
        deep = format!("ofType {{ {deep} }}");
    }
    let (_, body) =
        post(&state, None, &format!("{{ __schema {{ types {{ fields {{ type {{ {deep} }} }} }} }} }}")).await;
    assert_eq!(codes(&body), ["LIMIT_EXCEEDED"], "{body}");

    // Page too large, neighbours too far.
    let (_, body) =
        post(&state, None, r#"{ snapshot(namespace: "alice", first: 100000) { edges { cursor } } }"#).await;
    assert_eq!(codes(&body), ["LIMIT_EXCEEDED"], "{body}");
    assert!(body["errors"][0]["message"].as_str().unwrap().contains("first"));
    let (_, body) = post(
        &state,
        None,
        r#"{ neighbors(namespace: "alice", entity: {name: "Alice"}, depth: 99) { nodes { distance } } }"#,
    )
    .await;
    assert_eq!(codes(&body), ["LIMIT_EXCEEDED"], "{body}");
    assert!(body["errors"][0]["message"].as_str().unwrap().contains("depth"));

    // Too complex, with a configured limit.
    let state = server_state("[limits]\nmax_complexity = 5\n").await;
    let (_, body) = post(
        &state,
        None,
        r#"{ snapshot(namespace: "alice") { edges { node { id predicate confidence status reason } } } }"#,
    )
    .await;
    assert_eq!(codes(&body), ["LIMIT_EXCEEDED"], "{body}");
}

#[tokio::test]
async fn errors_name_the_field_and_store_nothing() {
    let state = server_state("").await;
    let alice = Namespace::new("ns", "alice").unwrap();
    let before = state.store().counts(&alice).unwrap();

    let (status, body) = post(
        &state,
        None,
        r#"mutation { assertFacts(namespace: "alice", facts: [
            {subject: {name: "Newbie"}, predicate: "age", object: {integer: 1}},
            {subject: {name: "Alice"}, predicate: "age", object: {integer: 2}, validFrom: "the day after"}
        ]) { seq } }"#,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(codes(&body), ["INVALID_TIME"], "{body}");
    let message = body["errors"][0]["message"].as_str().unwrap();
    assert!(message.contains("facts[1].validFrom") && message.contains("the day after"), "{message}");

    let (_, body) = post(
        &state,
        None,
        r#"mutation { assertFacts(namespace: "alice", facts: [
            {subject: {name: "Newbie"}, predicate: "age", object: {integer: 1}},
            {subject: {name: "Alice"}, predicate: "age", object: {integer: 2}, validFrom: "2020", validTo: "2010"}
        ]) { seq } }"#,
    )
    .await;
    assert_eq!(codes(&body), ["INVALID_INTERVAL"], "{body}");
    assert!(body["errors"][0]["message"].as_str().unwrap().contains("facts[1]"), "{body}");

    let (_, body) = post(
        &state,
        None,
        r#"mutation { assertFacts(namespace: "alice", facts: [
            {subject: {name: "Newbie"}, predicate: "age", object: {integer: 1}},
            {subject: {id: "999"}, predicate: "age", object: {integer: 2}}
        ]) { seq } }"#,
    )
    .await;
    assert_eq!(codes(&body), ["UNKNOWN_ENTITY"], "{body}");
    assert!(body["errors"][0]["message"].as_str().unwrap().contains("999"), "{body}");

    let (_, body) = post(
        &state,
        None,
        r#"{ facts(namespace: "alice", subject: {name: "Nobody"}) { edges { cursor } } }"#,
    )
    .await;
    assert_eq!(codes(&body), ["UNKNOWN_ENTITY"], "{body}");

    // None of the refused batches left anything: not even the entity their first fact named.
    assert_eq!(state.store().counts(&alice).unwrap(), before);
    let (_, body) =
        post(&state, None, r#"{ entities(namespace: "alice", name: "Newbie") { edges { cursor } } }"#).await;
    assert_eq!(body["data"]["entities"]["edges"], json!([]));

    // A body that is not a GraphQL request, and a query that is not valid GraphQL.
    let (status, bytes) = send(&state, graphql_request(None, "{not json")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(codes(&serde_json::from_slice(&bytes).unwrap()), ["BAD_REQUEST"]);
    let (status, body) = post(&state, None, "{ nope }").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(codes(&body), ["BAD_REQUEST"]);
}

/// GraphiQL and the timeline page, and every file they name, come from this server, and
/// their policy forbids loading anything from elsewhere (the browser test loads them).
#[tokio::test]
async fn served_pages_load_nothing_from_elsewhere() {
    let state = &server_state(TOKENS).await;
    let get = |path: &str| {
        let request = Request::get(path).header(header::ACCEPT, "text/html").body(Body::empty()).unwrap();
        let state = state.clone();
        async move {
            let response = app(state).oneshot(request).await.unwrap();
            let status = response.status();
            let headers = response.headers().clone();
            let body = response.into_body().collect().await.unwrap().to_bytes().to_vec();
            (status, headers, String::from_utf8_lossy(&body).into_owned())
        }
    };
    for page in ["/graphql", "/ui/"] {
        let (status, headers, html) = get(page).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        let policy = headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
        assert!(policy.starts_with("default-src 'self'") && !policy.contains("http"), "{page}: {policy}");
        assert!(
            !html.contains("//unpkg") && !html.contains("//cdn") && !html.contains("https://"),
            "{page}: {html}"
        );
        // Every script and style it names is served, with its media type.
        for attribute in ["src=\"", "href=\""] {
            for piece in html.split(attribute).skip(1) {
                let path = &piece[..piece.find('"').unwrap()];
                if !path.starts_with('/') || path == "/graphql" {
                    continue;
                }
                let (status, headers, body) = get(path).await;
                assert_eq!(status, StatusCode::OK, "{page} names {path}");
                let media = headers[header::CONTENT_TYPE].to_str().unwrap();
                let wanted = match path.rsplit('.').next() {
                    Some("css") => "text/css",
                    Some("svg") => "image/svg+xml",
                    _ => "text/javascript",
                };
                assert!(media.starts_with(wanted), "{path}: {media}");
                let least = if wanted == "image/svg+xml" { 100 } else { 1000 };
                assert!(body.len() > least, "{path} is {} bytes", body.len());
            }
        }
    }
    assert_eq!(get("/assets/graphiql/nothing.js").await.0, StatusCode::NOT_FOUND);
    assert_eq!(get("/ui/../Cargo.toml").await.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn health_graphiql_and_metrics() {
    let state = server_state(TOKENS).await;
    let (status, body) = send(&state, Request::get("/healthz").body(Body::empty()).unwrap()).await;
    assert_eq!((status, body.as_slice()), (StatusCode::OK, b"ok\n".as_slice()));
    // With ?indexing, how far search is over the open namespaces, summed: operational
    // detail, for a token granted "*" only (on a state of its own: the metrics below
    // count this state's requests).
    let searched = server_state(TOKENS).await;
    for ns in ["alice", "bob"] {
        let search = format!("{{ search(namespace: \"{ns}\", text: \"Paris\") {{ hits {{ score }} }} }}");
        let (_, body) = post(&searched, Some("every-namespace-read-1"), &search).await;
        assert!(body["errors"].is_null(), "{body}");
    }
    let (status, _) = send(&searched, Request::get("/healthz?indexing").body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let asked = Request::get("/healthz?indexing")
        .header("authorization", "Bearer every-namespace-read-1")
        .body(Body::empty())
        .unwrap();
    let (status, body) = send(&searched, asked).await;
    assert_eq!(status, StatusCode::OK);
    let health: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(health["status"], "ok", "{health}");
    let indexing = &health["indexing"];
    assert!(indexing["openNamespaces"].as_u64().unwrap() >= 1, "{health}");
    // The searches above waited for their namespaces' indexes.
    assert_eq!(indexing["lagBatches"], 0, "{health}");
    assert_eq!(indexing["namespacesBehind"], 0, "{health}");
    assert_eq!(indexing["textsToEmbed"], 0, "{health}");
    assert!(!String::from_utf8_lossy(&body).contains("alice"), "no namespace is named: {health}");

    // Without a query a GET is for a browser: GraphiQL, when it accepts HTML.
    let bare =
        app(state.clone()).oneshot(Request::get("/graphql").body(Body::empty()).unwrap()).await.unwrap();
    assert_eq!(bare.status(), StatusCode::BAD_REQUEST);
    let browser =
        Request::get("/graphql").header(header::ACCEPT, "text/html,application/xhtml+xml,*/*;q=0.8");
    let response = app(state.clone()).oneshot(browser.body(Body::empty()).unwrap()).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers()[header::CONTENT_TYPE].to_str().unwrap().starts_with("text/html"));
    let html = String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
    assert!(html.contains("graphiql") && html.contains("/graphql/ws"), "{html}");

    post(
        &state,
        Some(ALICE_RW),
        r#"mutation { recordEpisode(namespace: "alice", episode: {text: "hello"}) { seq } }"#,
    )
    .await;
    post(&state, Some(ALICE_RW), r#"{ snapshot(namespace: "alice", first: 100000) { edges { cursor } } }"#)
        .await;
    post(&state, None, "{ __typename }").await;

    // The metrics name every namespace: only a token granted `*` reads them.
    let metrics = |token: Option<&str>| {
        let mut request = Request::get("/metrics");
        if let Some(token) = token {
            request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
        request.body(Body::empty()).unwrap()
    };
    assert_eq!(send(&state, metrics(None)).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(send(&state, metrics(Some(ALICE_RW))).await.0, StatusCode::FORBIDDEN);
    let (status, body) = send(&state, metrics(Some(EVERYTHING_R))).await;
    assert_eq!(status, StatusCode::OK);
    let text = String::from_utf8(body).unwrap();
    for expected in [
        r#"ostrakon_http_requests_total{route="/graphql",method="POST",status="200"} 2"#,
        r#"ostrakon_http_requests_total{route="/graphql",method="POST",status="401"} 1"#,
        r#"ostrakon_http_requests_total{route="/healthz",method="GET",status="200"} 1"#,
        r#"ostrakon_http_requests_total{route="/metrics",method="GET",status="403"} 1"#,
        r#"ostrakon_http_requests_total{route="/graphql",method="GET",status="400"} 1"#,
        r#"ostrakon_http_request_duration_seconds_count{route="/graphql"} 5"#,
        r#"ostrakon_graphql_requests_total{operation="mutation",outcome="ok"} 1"#,
        r#"ostrakon_graphql_requests_total{operation="query",outcome="error"} 1"#,
        r#"ostrakon_graphql_errors_total{code="LIMIT_EXCEEDED"} 1"#,
        "ostrakon_batches_committed_total 1\n",
        "ostrakon_events_committed_total 1\n",
        "ostrakon_websocket_connections 0\n",
        r#"ostrakon_log_batches{namespace="alice"} 2"#,
        r#"ostrakon_log_batches{namespace="bob"} 1"#,
        // A store in memory has no checkpoints.
        r#"ostrakon_checkpoint_batch{namespace="alice"} 0"#,
        // Nor saved vectors.
        r#"ostrakon_search_vectors_saved_batch{namespace="alice"} 0"#,
        "# TYPE ostrakon_log_bytes gauge",
        "# TYPE ostrakon_search_indexed_batch gauge",
        "# TYPE ostrakon_search_lag_batches gauge",
        "# TYPE ostrakon_search_texts_to_embed gauge",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }
    let log_bytes = text.lines().find(|l| l.starts_with("ostrakon_log_bytes{namespace=\"alice\"}")).unwrap();
    assert!(log_bytes.split(' ').nth(1).unwrap().parse::<u64>().unwrap() > 0, "{log_bytes}");
    let state = text.lines().find(|l| l.starts_with("ostrakon_state_bytes{namespace=\"alice\"}")).unwrap();
    assert!(state.split(' ').nth(1).unwrap().parse::<u64>().unwrap() > 0, "{state}");
}

#[test]
fn config_errors_name_the_file_and_the_field_or_line() {
    let err = |text: &str| Config::parse(text, "ostrakon.toml").unwrap_err().to_string();
    let e =
        err("[[tokens]]\nname = \"a\"\ntoken = \"0123456789abcdef\"\nnamespaces = { alice = \"write\" }\n");
    assert!(e.contains("ostrakon.toml") && e.contains("line 4"), "{e}");
    let e = err("[[tokens]]\nname = \"a\"\ntoken = \"short\"\nnamespaces = { alice = \"read\" }\n");
    assert!(e.contains("ostrakon.toml") && e.contains("tokens[0].token") && e.contains("16"), "{e}");
    let e =
        err("[[tokens]]\nname = \"a\"\ntoken = \"0123456789abcdef\"\nnamespaces = { \"b@d\" = \"read\" }\n");
    assert!(e.contains("tokens[0].namespaces.\"b@d\""), "{e}");
    let e = err("[[tokens]]\nname = \"a\"\ntoken = \"0123456789abcdef\"\nnamespaces = {}\n");
    assert!(e.contains("tokens[0].namespaces"), "{e}");
    let twice = "[[tokens]]\nname = \"a\"\ntoken = \"0123456789abcdef\"\nnamespaces = { a = \"read\" }\n";
    let e = err(&format!("{twice}{}", twice.replace("name = \"a\"", "name = \"b\"")));
    assert!(e.contains("tokens[1].token") && e.contains("same secret"), "{e}");
    let e = err("[limits]\nmax_pages = 3\n");
    assert!(e.contains("max_pages") && e.contains("line 2"), "{e}");
    let e = err("[limits]\nmax_page = 0\n");
    assert!(e.contains("limits.max_page"), "{e}");
    let e = err("[limits]\nmax_neighbor_depth = 1000\n");
    assert!(e.contains("limits.max_neighbor_depth"), "{e}");
    let e = err("[namespaces]\nmemory_budget_bytes = 0\n");
    assert!(e.contains("namespaces.memory_budget_bytes"), "{e}");
    let e = err("[namespaces]\nidle_close_seconds = 0\n");
    assert!(e.contains("namespaces.idle_close_seconds"), "{e}");
    let e = err("[namespaces]\nmax_opened = 3\n");
    assert!(e.contains("max_opened"), "{e}");
    let sized =
        Config::parse("[namespaces]\nidle_close_seconds = 60\nmemory_budget_bytes = 1073741824\n", "n.toml")
            .unwrap();
    assert_eq!(
        sized.residency,
        ostrakon_engine::admin::Residency {
            idle_after_micros: 60_000_000,
            max_open: 1024,
            max_state_bytes: Some(1 << 30)
        }
    );

    let missing = Config::load("/nonexistent/ostrakon.toml").unwrap_err();
    assert!(matches!(missing, ConfigError::Read { .. }));
    assert!(missing.to_string().contains("/nonexistent/ostrakon.toml"));

    let config = Config::parse(TOKENS, "t.toml").unwrap();
    assert!(config.requires_tokens());
    assert_eq!(config.limits, Limits::default());
    assert_eq!(config.max_body_bytes, ostrakon_server::DEFAULT_MAX_BODY_BYTES);
    assert!(!Config::parse("", "empty.toml").unwrap().requires_tokens());
}

#[tokio::test]
async fn idle_namespaces_that_ask_for_it_are_consolidated() {
    use std::sync::atomic::{AtomicI64, Ordering};
    use std::time::Duration;

    use ostrakon_engine::core::{TimeZone, Timestamp};

    let t0 = Timestamp::parse("t", "2030-01-01T00:00:00Z", &TimeZone::Utc).unwrap().as_micros();
    let clock = Arc::new(AtomicI64::new(t0));
    let reading = Arc::clone(&clock);
    let store = Arc::new(
        Store::with_storage(
            Arc::new(ostrakon_engine::log::MemStorage::new()),
            Arc::new(move || Timestamp::from_micros(reading.load(Ordering::SeqCst))),
        )
        .unwrap(),
    );
    let schema = ostrakon_graphql::schema(Arc::clone(&store), Limits::default());
    // Two entities that are one person; "asks" consolidates every hour, "quiet" never.
    for ns in ["asks", "quiet"] {
        for line in [
            r#"{"namespace":"NS","op":"recordEpisode","episode":{"text":"a"},"entities":[{"name":"Ann Lee","kind":"person"}]}"#,
            r#"{"namespace":"NS","op":"recordEpisode","episode":{"text":"b"},"entities":[{"name":"Annie","aliases":["Ann Lee"],"kind":"person"}]}"#,
        ] {
            ops::apply_line(&schema, &store, &line.replace("NS", ns)).await.unwrap();
        }
    }
    ops::apply_line(
        &schema,
        &store,
        r#"{"namespace":"asks","op":"configureNamespace","consolidateEverySeconds":3600}"#,
    )
    .await
    .unwrap();
    let batches = |ns: &str| store.counts(&Namespace::new("ns", ns).unwrap()).unwrap().batches;
    let sleeper =
        tokio::spawn(ostrakon_server::maintain_periodically(Arc::clone(&store), Duration::from_millis(20)));
    // Not idle yet: the last commit was just now by the store's clock.
    tokio::time::sleep(Duration::from_millis(120)).await;
    assert_eq!((batches("asks"), batches("quiet")), (3, 2));
    // Two minutes later by the store's clock: "asks" is idle and due, "quiet" never asked.
    clock.store(t0 + 120_000_000, Ordering::SeqCst);
    let mut merged = false;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        if batches("asks") == 4 {
            merged = true;
            break;
        }
    }
    sleeper.abort();
    assert!(merged, "the idle namespace was not consolidated");
    assert_eq!(batches("quiet"), 2);
    let asks = Namespace::new("ns", "asks").unwrap();
    assert_eq!(
        store.inspect(&asks, |i| i.entities_named("annie")).unwrap(),
        store.inspect(&asks, |i| i.entities_named("ann lee")).unwrap()
    );
}

/// `assertFacts` lines of an import skip GraphQL: they must be accepted, refused and
/// stored exactly as the mutation does it.
#[tokio::test]
async fn an_imported_assert_facts_line_does_what_the_mutation_does() {
    let lines = [
        json!({"namespace": "n", "op": "definePredicate", "name": "age", "cardinality": "ONE", "valueType": "INTEGER"}),
        json!({"namespace": "n", "op": "assertFacts", "facts": [
            {"subject": {"name": "Ann"}, "predicate": "age", "object": {"integer": 30}, "validFrom": "2020-01-01"},
            {"subject": {"name": "Ann"}, "predicate": "knows", "object": {"entity": {"name": "Bob"}},
             "validFrom": "2020-02-01", "validTo": "2021-01-01", "confidence": 0.5, "polarity": "NEGATED"}]}),
        json!({"namespace": "n", "op": "assertFacts", "facts": [
            {"subject": {"name": "Ann"}, "predicate": "age", "object": {"integer": 31}, "validFrom": "2021-01-01",
             "supersedes": "1"}]}),
        // Refused: a bad time, an unknown entity id, a wrong value type, an unknown
        // correction, nothing to assert, an unknown field, a bad polarity.
        json!({"namespace": "n", "op": "assertFacts", "facts": [
            {"subject": {"name": "Ann"}, "predicate": "age", "object": {"integer": 1}, "validFrom": "yesterday"}]}),
        json!({"namespace": "n", "op": "assertFacts", "facts": [
            {"subject": {"id": "999"}, "predicate": "age", "object": {"integer": 1}}]}),
        json!({"namespace": "n", "op": "assertFacts", "facts": [
            {"subject": {"name": "Ann"}, "predicate": "age", "object": {"string": "old"}}]}),
        json!({"namespace": "n", "op": "assertFacts", "facts": [
            {"subject": {"name": "Ann"}, "predicate": "age", "object": {"integer": 2}, "supersedes": "77"}]}),
        json!({"namespace": "n", "op": "assertFacts", "facts": []}),
        json!({"namespace": "n", "op": "assertFacts", "facts": [], "extra": 1}),
    ];
    let direct = Arc::new(Store::in_memory());
    let schema = ostrakon_graphql::schema(Arc::clone(&direct), Limits::default());
    let via_graphql = Arc::new(Store::in_memory());
    let graphql_schema = ostrakon_graphql::schema(Arc::clone(&via_graphql), Limits::default());
    let document = "mutation($namespace: String!, $facts: [FactInput!]!) \
                    { assertFacts(namespace: $namespace, facts: $facts) { seq facts { id } } }";
    for (i, line) in lines.iter().enumerate() {
        let got = ops::apply_line(&schema, &direct, &line.to_string()).await;
        if line["op"] != "assertFacts" {
            got.unwrap();
            ops::apply_line(&graphql_schema, &via_graphql, &line.to_string()).await.unwrap();
            continue;
        }
        if line.get("extra").is_some() {
            let e = got.unwrap_err();
            assert_eq!(
                (e.code.as_str(), e.message.as_str()),
                ("BAD_REQUEST", "unknown field `extra` for op assertFacts")
            );
            continue;
        }
        let variables = json!({"namespace": "n", "facts": line["facts"]});
        let request = async_graphql::Request::new(document)
            .variables(async_graphql::Variables::from_json(variables))
            .data(Access::Local);
        let response = graphql_schema.execute(request).await;
        match (got, response.errors.first()) {
            (Ok(value), None) => assert_eq!(value, response.data.into_json().unwrap(), "line {i}"),
            (Err(rejection), Some(error)) => {
                let code = error.extensions.as_ref().and_then(|e| e.get("code")).map(|c| c.to_string());
                assert_eq!(Some(format!("\"{}\"", rejection.code)), code, "line {i}: {rejection}");
                assert_eq!(rejection.message, error.message, "line {i}");
            }
            (got, error) => panic!("line {i}: direct {got:?}, mutation {error:?}"),
        }
    }
    let ns = Namespace::new("ns", "n").unwrap();
    let events =
        |store: &Store| -> Vec<_> { store.export(&ns).unwrap().into_iter().map(|b| b.events).collect() };
    assert_eq!(events(&direct), events(&via_graphql));
    assert_eq!(direct.counts(&ns).unwrap().facts, 3);
}

/// The full introspection query GraphQL clients send (gql's, with input value
/// deprecation: what graphql-codegen and Apollo ask too) answers under the default
/// limits, whole: it is not a request whose cost a limit must stop.
#[tokio::test]
async fn a_client_s_full_introspection_answers_under_the_default_limits() {
    let state = server_state("").await;
    let query =
        std::fs::read_to_string(crate::common::project_root().join("tests/data/introspection.graphql"))
            .unwrap();
    let (status, answer) = post(&state, None, &query).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert!(answer.get("errors").is_none(), "{}", answer["errors"]);
    let types = answer["data"]["__schema"]["types"].as_array().unwrap();
    assert!(types.iter().any(|t| t["name"] == "Fact"), "the schema's own types are there");
    let deprecated_inputs =
        types.iter().flat_map(|t| t["inputFields"].as_array().cloned().unwrap_or_default());
    assert!(
        deprecated_inputs.clone().all(|f| f.get("isDeprecated").is_some()),
        "input value deprecation asked"
    );
}

/// `/livez` says the process answers; `/readyz` (and `/healthz`) says whether the node can
/// serve: 503, naming the namespace, once one open namespace has stayed behind its log
/// longer than `[cluster] max_lag_seconds`, and 200 again once it caught up; 503 as soon as
/// the server is told to stop.
#[tokio::test]
async fn readiness_follows_the_lag_and_the_stop_and_liveness_only_the_process() {
    use ostrakon_engine::{
        Change, NewEntity, StoreOptions, log::LogBackend, log::SharedBackend, log::system_clock,
    };
    let backend = SharedBackend::new();
    let node = |backend: &SharedBackend| {
        let shared: Arc<dyn LogBackend> = Arc::new(backend.clone());
        Arc::new(Store::with_backend(shared, system_clock(), StoreOptions::default()).unwrap())
    };
    let (writer, reader) = (node(&backend), node(&backend));
    let ns = ostrakon_engine::core::Namespace::new("namespace", "team").unwrap();
    let entity = |name: &str| Change::DeclareEntity(NewEntity { name: name.into(), ..NewEntity::default() });
    writer.append(&ns, vec![entity("Ada")]).unwrap();
    reader.catch_up(&ns).unwrap();
    let config = "[cluster]\nnats = [\"nats://127.0.0.1:4222\"]\nmax_lag_seconds = 0.2\n";
    let state = AppState::new(Arc::clone(&reader), Config::parse(config, "test.toml").unwrap());
    let probe = |path: &'static str| {
        let state = state.clone();
        async move {
            let (status, body) = send(&state, Request::get(path).body(Body::empty()).unwrap()).await;
            (status, String::from_utf8(body).unwrap())
        }
    };
    assert_eq!(probe("/readyz").await, (StatusCode::OK, "ok\n".to_owned()));
    // Another node writes; this one follows nothing (no follower runs here).
    writer.append(&ns, vec![entity("Bob")]).unwrap();
    writer.append(&ns, vec![entity("Cy")]).unwrap();
    assert_eq!(probe("/readyz").await.0, StatusCode::OK, "behind for less than the bound");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    for path in ["/readyz", "/healthz"] {
        let (status, body) = probe(path).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert!(body.contains("namespace team is 2 batches behind"), "{body}");
    }
    assert_eq!(probe("/livez").await.0, StatusCode::OK);
    let metrics = send(&state, Request::get("/metrics").body(Body::empty()).unwrap()).await.1;
    let metrics = String::from_utf8(metrics).unwrap();
    assert!(metrics.contains("ostrakon_log_lag_batches{namespace=\"team\"} 2"), "{metrics}");
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("ostrakon_log_lag_seconds{namespace=\"team\"} 0.")
                && !l.ends_with(" 0.000")),
        "{metrics}"
    );
    reader.catch_up(&ns).unwrap();
    assert_eq!(probe("/readyz").await.0, StatusCode::OK);
    // Told to stop: not ready from that moment, alive still.
    state.begin_stopping();
    let (status, body) = probe("/readyz").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(body.contains("stopping"), "{body}");
    assert_eq!(probe("/livez").await.0, StatusCode::OK);
}
