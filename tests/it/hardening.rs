//! The server against a hostile browser page and a hostile client: cross-site and DNS
//! rebinding requests are refused and store nothing; fragment bombs, alias floods, list
//! fan-out and mutation floods are refused before they run; inputs nested or chained past
//! any stack (fragment chains, selections, lists, JSON variables) are refused, not crashed; requests stop at their
//! deadline; oversize inputs are `LIMIT_EXCEEDED` naming the field; WebSocket close codes
//! follow graphql-transport-ws.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use futures_util::{SinkExt as _, StreamExt as _};
use http_body_util::BodyExt as _;
use ostrakon_engine::core::Namespace;
use ostrakon_engine::{Store, StoreOptions};
use ostrakon_graphql::{Limits, ops};
use ostrakon_server::{AppState, Config, app};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tower::ServiceExt as _;

async fn seeded() -> Arc<Store> {
    let store = Arc::new(Store::in_memory());
    let schema = ostrakon_graphql::schema(Arc::clone(&store), Limits::default());
    for n in 0..10 {
        let line = json!({
            "namespace": "alice", "op": "assertFacts",
            "facts": [{ "subject": { "name": format!("E{n}") }, "predicate": "knows",
                        "object": { "entity": { "name": format!("E{}", (n + 1) % 10) } } }]
        });
        ops::apply_line(&schema, &store, &line.to_string()).await.unwrap();
    }
    store
}

fn alice() -> Namespace {
    Namespace::new("ns", "alice").unwrap()
}

async fn state(config: &str) -> AppState {
    AppState::new(seeded().await, Config::parse(config, "test.toml").unwrap())
}

async fn send(state: &AppState, request: Request<Body>) -> (StatusCode, Value) {
    let response = app(state.clone()).oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

fn post() -> axum::http::request::Builder {
    Request::post("/graphql").header(header::CONTENT_TYPE, "application/json")
}

async fn graphql(state: &AppState, query: &str) -> Value {
    let body = json!({ "query": query }).to_string();
    let (status, body) = send(state, post().body(Body::from(body)).unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

fn codes(response: &Value) -> Vec<String> {
    response["errors"]
        .as_array()
        .map(|e| e.iter().map(|e| e["extensions"]["code"].as_str().unwrap_or("").to_owned()).collect())
        .unwrap_or_default()
}

const WRITE: &str =
    r#"mutation { recordEpisode(namespace: "alice", episode: {text: "written by a web page"}) { seq } }"#;

#[tokio::test]
async fn cross_site_and_rebinding_requests_are_refused_and_store_nothing() {
    let state = state("").await;
    let before = state.store().counts(&alice()).unwrap();
    let body = json!({ "query": WRITE }).to_string();
    let refused = [
        // A form-like POST from another site: no preflight for text/plain.
        Request::post("/graphql")
            .header(header::CONTENT_TYPE, "text/plain")
            .header(header::ORIGIN, "http://evil.example")
            .body(Body::from(body.clone()))
            .unwrap(),
        // No content type at all.
        Request::post("/graphql").body(Body::from(body.clone())).unwrap(),
        // DNS rebinding: the page's own origin, addressed to a name that now points here.
        Request::post("/graphql")
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::HOST, "evil.example:7070")
            .header(header::ORIGIN, "http://evil.example:7070")
            .body(Body::from(body.clone()))
            .unwrap(),
        // JSON from another site (only possible after a preflight, which is never granted,
        // but refused all the same).
        Request::post("/graphql")
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::HOST, "127.0.0.1:7070")
            .header(header::ORIGIN, "http://evil.example")
            .body(Body::from(body.clone()))
            .unwrap(),
        // Reading is refused the same way under a rebound name.
        Request::get("/metrics").header(header::HOST, "evil.example").body(Body::empty()).unwrap(),
    ];
    for request in refused {
        let shown = format!("{} {:?}", request.method(), request.headers());
        let (status, body) = send(&state, request).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{shown}: {body}");
        assert_eq!(codes(&body), ["FORBIDDEN"], "{shown}: {body}");
    }
    assert_eq!(state.store().counts(&alice()).unwrap(), before, "a refused request stored something");

    // The server's own pages, loopback names and plain clients are served.
    for (host, origin) in [
        (Some("127.0.0.1:7070"), Some("http://127.0.0.1:7070")),
        (Some("localhost:7070"), Some("http://localhost:7070")),
        (Some("[::1]:7070"), None),
        (None, None),
    ] {
        let mut request = post();
        if let Some(host) = host {
            request = request.header(header::HOST, host);
        }
        if let Some(origin) = origin {
            request = request.header(header::ORIGIN, origin);
        }
        let (status, body) = send(&state, request.body(Body::from(body.clone())).unwrap()).await;
        assert_eq!(status, StatusCode::OK, "{host:?} {origin:?}: {body}");
        assert!(body["errors"].is_null(), "{body}");
    }
    assert_eq!(state.store().counts(&alice()).unwrap().episodes, before.episodes + 4);

    // An allowed origin may call it; the allow-list is normalised.
    let state = self::state("allowed_origins = [\"HTTPS://Console.Example\"]\n").await;
    let request = post()
        .header(header::HOST, "127.0.0.1:7070")
        .header(header::ORIGIN, "https://console.example")
        .body(Body::from(body))
        .unwrap();
    let (status, body) = send(&state, request).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(Config::parse("allowed_origins = [\"not an origin\"]\n", "t.toml").is_err());
}

#[tokio::test]
async fn a_websocket_upgrade_from_another_site_is_refused() {
    let state = state("").await;
    let request = Request::get("/graphql/ws")
        .header(header::HOST, "127.0.0.1:7070")
        .header(header::ORIGIN, "http://evil.example")
        .header(header::CONNECTION, "upgrade")
        .header(header::UPGRADE, "websocket")
        .header(header::SEC_WEBSOCKET_VERSION, "13")
        .header(header::SEC_WEBSOCKET_KEY, "dGhlIHNhbXBsZSBub25jZQ==")
        .header(header::SEC_WEBSOCKET_PROTOCOL, "graphql-transport-ws")
        .body(Body::empty())
        .unwrap();
    let (status, body) = send(&state, request).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
}

/// `depth` fragments, each spreading the previous one `k` times: k^depth fields once
/// expanded.
fn fragment_bomb(depth: usize, k: usize) -> String {
    let mut doc = String::from("fragment F0 on Entity { id name }\n");
    for i in 1..=depth {
        let spreads = format!("...F{} ", i - 1).repeat(k);
        doc.push_str(&format!("fragment F{i} on Entity {{ {spreads}}}\n"));
    }
    doc.push_str(&format!("{{ entity(namespace: \"alice\", name: \"E1\") {{ ...F{depth} }} }}"));
    doc
}

#[tokio::test]
async fn a_fragment_bomb_is_refused_before_it_runs() {
    let state = state("").await;
    // Expanded, these are 2^26 and 3^31 fields (minutes to ages of work, before anything
    // runs); refused, each is a walk over its 1–2 KB of text.
    for (depth, k) in [(25, 2), (30, 3)] {
        let query = fragment_bomb(depth, k);
        assert!(query.len() < 2048, "a small document: {} bytes", query.len());
        let start = Instant::now();
        let body = graphql(&state, &query).await;
        let elapsed = start.elapsed();
        assert_eq!(codes(&body), ["LIMIT_EXCEEDED"], "{body}");
        assert!(body["errors"][0]["message"].as_str().unwrap().contains("fields"), "{body}");
        assert!(elapsed < Duration::from_secs(2), "refused only after {elapsed:?}");
    }
    // As mutation root fields too.
    let mut doc = String::from("fragment M0 on Mutation { recall(namespace: \"alice\") { seq } }\n");
    for i in 1..=30 {
        doc.push_str(&format!("fragment M{i} on Mutation {{ ...M{p} ...M{p} ...M{p} }}\n", p = i - 1));
    }
    doc.push_str("mutation { ...M30 }");
    let start = Instant::now();
    assert_eq!(codes(&graphql(&state, &doc).await), ["LIMIT_EXCEEDED"]);
    assert!(start.elapsed() < Duration::from_secs(2), "refused only after {:?}", start.elapsed());

    // A small fan-out stays within the limits and runs.
    let body = graphql(&state, &fragment_bomb(4, 2)).await;
    assert!(body["errors"].is_null(), "{body}");
    assert_eq!(body["data"]["entity"]["name"], "E1");
}

#[tokio::test]
async fn lists_count_by_their_page_and_floods_are_refused() {
    let state = state("").await;
    // Thousands of aliases of a large page.
    let aliases: String = (0..6000)
        .map(|i| format!("a{i}: snapshot(namespace: \"alice\", first: 1000) {{ edges {{ cursor }} }} "))
        .collect();
    let body = graphql(&state, &format!("{{ {aliases} }}")).await;
    assert_eq!(codes(&body), ["LIMIT_EXCEEDED"], "{}", &body.to_string()[..300.min(body.to_string().len())]);

    // One large page is fine; a hundred of them are not.
    let one = r#"{ snapshot(namespace: "alice", first: 1000) { edges { node { id predicate status } } } }"#;
    assert!(graphql(&state, one).await["errors"].is_null());
    let hundred: String = (0..100)
        .map(|i| format!("a{i}: snapshot(namespace: \"alice\", first: 1000) {{ edges {{ node {{ id predicate status }} }} }} "))
        .collect();
    let body = graphql(&state, &format!("{{ {hundred} }}")).await;
    assert_eq!(codes(&body), ["LIMIT_EXCEEDED"]);
    assert!(body["errors"][0]["message"].as_str().unwrap().contains("complexity"), "{body}");

    // Unpaged lists nest multiplicatively: incoming { subject { incoming { … } } } six deep.
    let mut nested = "id".to_owned();
    for _ in 0..6 {
        nested = format!("incoming {{ subject {{ {nested} }} }}");
    }
    let body = graphql(
        &state,
        &format!("{{ entities(namespace: \"alice\", first: 10) {{ edges {{ node {{ {nested} }} }} }} }}"),
    )
    .await;
    assert_eq!(codes(&body), ["LIMIT_EXCEEDED"], "{body}");
    // Two levels are fine.
    let body = graphql(
        &state,
        r#"{ entities(namespace: "alice", first: 10) { edges { node { incoming { subject { incoming { id } } } } } } }"#,
    )
    .await;
    assert!(body["errors"].is_null(), "{body}");

    // A page given by a variable the request leaves to the operation's default counts as
    // that default, as it runs; one with no default counts as the largest page.
    let nested = |n: &str| {
        format!(
            "query($n: Int{n}) {{ entities(namespace: \"alice\", first: $n) {{ edges {{ node {{
            mentions(first: $n) {{ edges {{ node {{ facts {{ id }} }} }} }} }} }} }} }}"
        )
    };
    assert_eq!(codes(&graphql(&state, &nested(" = 1000")).await), ["LIMIT_EXCEEDED"]);
    assert_eq!(codes(&graphql(&state, &nested("")).await), ["LIMIT_EXCEEDED"]);
    let body = graphql(&state, &nested(" = 5")).await;
    assert!(body["errors"].is_null(), "{body}");
    // A field that builds the topic network costs that much per call.
    let body = graphql(
        &state,
        r#"{ entities(namespace: "alice", first: 1000) { edges { node { topic { id } } } } }"#,
    )
    .await;
    assert_eq!(codes(&body), ["LIMIT_EXCEEDED"], "{body}");
    assert!(
        graphql(&state, r#"{ entity(namespace: "alice", name: "E1") { topic { id } } }"#).await["errors"]
            .is_null()
    );
    // Introspection nests like any list.
    let mut deep = "name".to_owned();
    for _ in 0..5 {
        deep = format!("fields {{ type {{ ofType {{ {deep} }} }} }}");
    }
    let body = graphql(&state, &format!("{{ __schema {{ types {{ {deep} }} }} }}")).await;
    assert_eq!(codes(&body), ["LIMIT_EXCEEDED"], "{body}");

    // Many mutations in one request: each would be a batch.
    let before = state.store().counts(&alice()).unwrap();
    let many: String = (0..1000)
        .map(|i| format!("m{i}: recordEpisode(namespace: \"alice\", episode: {{text: \"x\"}}) {{ seq }} "))
        .collect();
    let body = graphql(&state, &format!("mutation {{ {many} }}")).await;
    assert_eq!(codes(&body), ["LIMIT_EXCEEDED"], "{body}");
    assert_eq!(state.store().counts(&alice()).unwrap(), before);

    // The limits are configurable.
    let state = self::state("[limits]\nmax_aliases = 1\n").await;
    let body =
        graphql(&state, r#"{ a: namespace(name: "alice") { name } b: namespace(name: "alice") { name } }"#)
            .await;
    assert_eq!(codes(&body), ["LIMIT_EXCEEDED"]);
    assert!(body["errors"][0]["message"].as_str().unwrap().contains("aliased"), "{body}");
}

#[tokio::test]
async fn a_response_over_its_size_limit_is_replaced_by_an_error() {
    let state = state("[limits]\nmax_response_bytes = 500\n").await;
    let body = graphql(
        &state,
        r#"{ snapshot(namespace: "alice", first: 1000) { edges { node { id predicate status reason } } } }"#,
    )
    .await;
    assert_eq!(codes(&body), ["LIMIT_EXCEEDED"], "{body}");
    assert!(body["errors"][0]["message"].as_str().unwrap().contains("response"), "{body}");
}

/// An embedder that takes `delay` to load: the indexer is busy that long, and a search
/// waits for it.
fn slow_embedder_store(delay: Duration) -> Arc<Store> {
    let options = StoreOptions {
        embedder: Some(Arc::new(move |_| {
            std::thread::sleep(delay);
            Err("no model here".to_owned())
        })),
        ..StoreOptions::default()
    };
    Arc::new(
        Store::with_storage_and_options(
            Arc::new(ostrakon_engine::log::MemStorage::new()),
            ostrakon_engine::log::system_clock(),
            options,
        )
        .unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_stops_at_its_deadline() {
    let store = slow_embedder_store(Duration::from_secs(20));
    let state = AppState::new(
        Arc::clone(&store),
        Config::parse("[limits]\nrequest_timeout_seconds = 1\n", "t.toml").unwrap(),
    );
    let body = graphql(
        &state,
        r#"mutation { recordEpisode(namespace: "alice", episode: {text: "hello there"}) { seq } }"#,
    )
    .await;
    assert!(body["errors"].is_null(), "{body}");
    // The search waits for the indexer (which is loading its model for 20 s): without a
    // deadline it would wait two minutes.
    let start = Instant::now();
    let body = graphql(&state, r#"{ search(namespace: "alice", text: "hello") { hits { score } } }"#).await;
    let elapsed = start.elapsed();
    assert_eq!(codes(&body), ["LIMIT_EXCEEDED"], "{body}");
    assert!(elapsed < Duration::from_secs(10), "answered after {elapsed:?}");

    // In the engine itself: the work stops at the deadline, not only the answer.
    let interrupt = ostrakon_engine::Interrupt::new(Some(Instant::now() + Duration::from_millis(300)));
    let start = Instant::now();
    let query = ostrakon_engine::SearchQuery { text: Some("hello".into()), ..Default::default() };
    let result = interrupt
        .run(|| store.at(&alice(), ostrakon_engine::ReadAt::default()).and_then(|r| r.search(&query)));
    assert!(matches!(result, Err(ostrakon_engine::ReadError::Interrupted { .. })), "{result:?}");
    assert!(start.elapsed() < Duration::from_secs(10), "stopped after {:?}", start.elapsed());
    // A cancelled one (the client went away) stops too.
    let interrupt = ostrakon_engine::Interrupt::new(None);
    interrupt.cancel();
    let result = interrupt
        .run(|| store.at(&alice(), ostrakon_engine::ReadAt::default()).and_then(|r| r.search(&query)));
    assert!(matches!(result, Err(ostrakon_engine::ReadError::Interrupted { .. })), "{result:?}");
}

/// The `ostrakon_graphql_requests_running` gauge.
async fn running(state: &AppState) -> i64 {
    let response =
        app(state.clone()).oneshot(Request::get("/metrics").body(Body::empty()).unwrap()).await.unwrap();
    let text = String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
    let line = text.lines().find(|l| l.starts_with("ostrakon_graphql_requests_running ")).unwrap();
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_stops_when_the_client_goes_away() {
    let store = slow_embedder_store(Duration::from_secs(30));
    let state = AppState::new(store, Config::default());
    let body = graphql(
        &state,
        r#"mutation { recordEpisode(namespace: "alice", episode: {text: "hello"}) { seq } }"#,
    )
    .await;
    assert!(body["errors"].is_null(), "{body}");
    // A search that would wait for the indexer (30 s for its model, then the deadline);
    // once its work runs, the client gives up and its connection's future is dropped.
    let search =
        json!({ "query": r#"{ search(namespace: "alice", text: "hello") { hits { score } } }"# }).to_string();
    let request = post().body(Body::from(search)).unwrap();
    let client = tokio::spawn(app(state.clone()).oneshot(request));
    // On a loaded machine the blocking pool may start the work late: wait until it runs.
    let start = Instant::now();
    while running(&state).await < 1 {
        assert!(!client.is_finished(), "the search should still be waiting");
        assert!(start.elapsed() < Duration::from_secs(20), "the work never started");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!client.is_finished(), "the search should still be waiting");
    client.abort();
    let _ = client.await;
    let start = Instant::now();
    while running(&state).await > 0 {
        assert!(start.elapsed() < Duration::from_secs(5), "the work went on after the client left");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_beyond_the_running_limit_wait_their_turn() {
    let store = slow_embedder_store(Duration::from_secs(30));
    let config = "[limits]\nmax_running_requests = 1\nrequest_timeout_seconds = 1\n";
    let state = AppState::new(store, Config::parse(config, "t.toml").unwrap());
    let body = graphql(
        &state,
        r#"mutation { recordEpisode(namespace: "alice", episode: {text: "hello"}) { seq } }"#,
    )
    .await;
    assert!(body["errors"].is_null(), "{body}");
    // A search holds the one permit until its deadline stops it.
    let slow = state.clone();
    let search = tokio::spawn(async move {
        graphql(&slow, r#"{ search(namespace: "alice", text: "hello") { hits { score } } }"#).await
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(running(&state).await, 1);
    // A cheap query waits for it instead of running beside it.
    let start = Instant::now();
    let _ = graphql(&state, r#"{ namespace(name: "alice") { name } }"#).await;
    assert!(
        start.elapsed() >= Duration::from_millis(500),
        "it ran beside the search after {:?}",
        start.elapsed()
    );
    assert_eq!(codes(&search.await.unwrap()), ["LIMIT_EXCEEDED"]);
}

#[tokio::test]
async fn oversize_inputs_are_limit_exceeded_naming_the_field_and_store_nothing() {
    let state = state("").await;
    let before = state.store().counts(&alice()).unwrap();
    let aliases: Vec<String> =
        (0..(ostrakon_engine::limits::MAX_ALIASES + 1)).map(|i| format!("alias {i}")).collect();
    let long_name = "n".repeat(ostrakon_engine::core::MAX_NAME_LEN + 1);
    let long_literal = "s".repeat(ostrakon_engine::core::MAX_LITERAL_BYTES + 1);
    let long_reason = "r".repeat(ostrakon_engine::limits::MAX_REASON_BYTES + 1);
    let cases = [
        (
            "aliases",
            json!({ "query": "mutation($a: [String!]!) { recordEpisode(namespace: \"alice\", episode: {text: \"x\"}, entities: [{name: \"Zed\", aliases: $a}]) { seq } }", "variables": { "a": aliases } }),
        ),
        (
            "thread",
            json!({ "query": "mutation($t: String!) { recordEpisode(namespace: \"alice\", episode: {text: \"x\", thread: $t}) { seq } }", "variables": { "t": long_name } }),
        ),
        (
            "object",
            json!({ "query": "mutation($s: String!) { assertFacts(namespace: \"alice\", facts: [{subject: {name: \"E1\"}, predicate: \"note\", object: {string: $s}}]) { seq } }", "variables": { "s": long_literal } }),
        ),
        (
            "reason",
            json!({ "query": "mutation($r: String!) { retractFact(namespace: \"alice\", fact: \"1\", reason: $r) { seq } }", "variables": { "r": long_reason } }),
        ),
        (
            "description",
            json!({ "query": "mutation($d: String!) { definePredicate(namespace: \"alice\", name: \"p\", cardinality: ONE, description: $d) { seq } }", "variables": { "d": long_reason } }),
        ),
    ];
    for (field, request) in cases {
        let (status, body) = send(&state, post().body(Body::from(request.to_string())).unwrap()).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(codes(&body), ["LIMIT_EXCEEDED"], "{field}: {body}");
        let message = body["errors"][0]["message"].as_str().unwrap();
        assert!(message.contains(field), "{field}: {message}");
        assert!(message.len() < 500, "the refusal does not echo the input: {} bytes", message.len());
    }
    assert_eq!(state.store().counts(&alice()).unwrap(), before);
}

#[tokio::test]
async fn small_ones_agree() {
    let state = state("").await;
    // An inverted window is INVALID_INTERVAL everywhere.
    let body =
        graphql(&state, r#"{ episodes(namespace: "alice", from: "2024", to: "2023") { edges { cursor } } }"#)
            .await;
    assert_eq!(codes(&body), ["INVALID_INTERVAL"], "{body}");
    // The idle-consolidation period is bounded, so the server's clock arithmetic cannot overflow.
    let body = graphql(
        &state,
        r#"mutation { configureNamespace(namespace: "alice", consolidateEverySeconds: 400000000) { name } }"#,
    )
    .await;
    assert_eq!(codes(&body), ["INVALID_VALUE"], "{body}");
    assert!(body["errors"][0]["message"].as_str().unwrap().contains("ten years"), "{body}");
    let body = graphql(
        &state,
        r#"mutation { configureNamespace(namespace: "alice", consolidateEverySeconds: 300000000) { name } }"#,
    )
    .await;
    assert!(body["errors"].is_null(), "{body}");
    // The import op takes the embedding field, like the mutation.
    let store = Arc::new(Store::in_memory());
    let schema = ostrakon_graphql::schema(Arc::clone(&store), Limits::default());
    let line = json!({ "namespace": "c", "op": "configureNamespace", "embedding": { "mode": "CLIENT", "dimensions": 4 } });
    ops::apply_line(&schema, &store, &line.to_string()).await.unwrap();
}

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn connect(addr: std::net::SocketAddr) -> Socket {
    let mut request = format!("ws://{addr}/graphql/ws").into_client_request().unwrap();
    request.headers_mut().insert(header::SEC_WEBSOCKET_PROTOCOL, "graphql-transport-ws".parse().unwrap());
    tokio::time::timeout(Duration::from_secs(10), tokio_tungstenite::connect_async(request))
        .await
        .unwrap()
        .unwrap()
        .0
}

/// The close code the server ends the socket with.
async fn close_code(socket: &mut Socket) -> Option<u16> {
    loop {
        match tokio::time::timeout(Duration::from_secs(10), socket.next()).await.ok()? {
            Some(Ok(Message::Close(frame))) => return frame.map(|f| u16::from(f.code)),
            Some(Ok(_)) => continue,
            other => {
                eprintln!("socket ended: {other:?}");
                return None;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_close_codes_follow_graphql_transport_ws() {
    let tokens = "[[tokens]]\nname = \"a\"\ntoken = \"alice-read-write-0001\"\nnamespaces = { alice = \"read-write\" }\n";
    let state = AppState::new(Arc::new(Store::in_memory()), Config::parse(tokens, "t.toml").unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(ostrakon_server::serve(listener, state, std::future::pending()));

    let mut socket = connect(addr).await;
    socket
        .send(Message::text(
            json!({ "type": "connection_init", "payload": { "token": "wrong" } }).to_string(),
        ))
        .await
        .unwrap();
    assert_eq!(close_code(&mut socket).await, Some(4403));

    let mut socket = connect(addr).await;
    let subscribe = json!({ "id": "1", "type": "subscribe", "payload": { "query": "subscription { events(namespace: \"alice\") { seq } }" } });
    socket.send(Message::text(subscribe.to_string())).await.unwrap();
    assert_eq!(close_code(&mut socket).await, Some(4401));

    let mut socket = connect(addr).await;
    socket.send(Message::text("{\"type\": \"no such message\"}")).await.unwrap();
    assert_eq!(close_code(&mut socket).await, Some(4400));

    // Queries and mutations belong on HTTP (with its deadline and response cap).
    let mut socket = connect(addr).await;
    let init = json!({ "type": "connection_init", "payload": { "token": "alice-read-write-0001" } });
    socket.send(Message::text(init.to_string())).await.unwrap();
    let ack = tokio::time::timeout(Duration::from_secs(10), socket.next()).await.unwrap().unwrap().unwrap();
    assert!(ack.to_text().unwrap().contains("connection_ack"), "{ack:?}");
    let query = json!({ "id": "q", "type": "subscribe", "payload": { "query": "{ namespace(name: \"alice\") { name } }" } });
    socket.send(Message::text(query.to_string())).await.unwrap();
    let answer =
        tokio::time::timeout(Duration::from_secs(10), socket.next()).await.unwrap().unwrap().unwrap();
    let answer: Value = serde_json::from_str(answer.to_text().unwrap()).unwrap();
    let errors = if answer["type"] == "error" { &answer["payload"] } else { &answer["payload"]["errors"] };
    assert_eq!(errors[0]["extensions"]["code"], "BAD_REQUEST", "{answer}");
    assert!(errors[0]["message"].as_str().unwrap().contains("POST"), "{answer}");
}

/// The introspection query GraphiQL sends when it opens (graphql-js
/// `getIntrospectionQuery`, with descriptions): it must stay within the default limits.
const INTROSPECTION: &str = r#"
query IntrospectionQuery {
  __schema {
    queryType { name } mutationType { name } subscriptionType { name }
    types { ...FullType }
    directives { name description locations args { ...InputValue } }
  }
}
fragment FullType on __Type {
  kind name description
  fields(includeDeprecated: true) { name description args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason }
  inputFields { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
fragment TypeRef on __Type {
  kind name
  ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } }
}
"#;

#[tokio::test]
async fn graphiql_introspection_fits_the_default_limits() {
    let state = state("").await;
    let body = graphql(&state, INTROSPECTION).await;
    assert!(body["errors"].is_null(), "{body}");
    assert!(body["data"]["__schema"]["types"].as_array().unwrap().len() > 20);
}

/// A document validated once is not validated again when it comes back with other
/// variables that surely conform to its declared types; with any that might not, it is
/// validated in full. Either way every answer and error reads exactly as from a schema
/// that never saw the document.
#[tokio::test]
async fn a_document_seen_before_answers_as_if_validated_anew() {
    let store = seeded().await;
    let query = "query($s: EntityRefInput, $p: String!, $t: DateTime, $n: Int, $f: SearchFilter) {
        facts(namespace: \"alice\", subject: $s, predicate: $p, validAt: $t, first: $n) { nodes { id object { entity { name } } } }
        search(namespace: \"alice\", text: \"E1\", filter: $f, limit: 3) { hits { kind } } }";
    let good = json!({ "s": { "name": "E1" }, "p": "knows", "t": "2030-01-01T00:00:00Z", "n": 5, "f": { "kinds": ["FACT"] } });
    let with = |key: &str, value: Value| {
        let mut v = good.clone();
        v[key] = value;
        v
    };
    let without = |key: &str| {
        let mut v = good.clone();
        v.as_object_mut().unwrap().remove(key);
        v
    };
    let cases = [
        good.clone(),
        with("s", json!({ "id": "1" })),
        with("s", json!({ "id": "1", "name": "E1" })),
        with("s", json!({ "name": "Nobody" })),
        with("s", json!({ "name": null })),
        with("s", json!({ "nick": "E1" })),
        with("s", json!({})),
        with("s", json!("E1")),
        with("s", Value::Null),
        without("s"),
        with("p", json!(3)),
        with("p", Value::Null),
        without("p"),
        with("t", json!("not a time")),
        with("t", json!(17)),
        with("n", json!("five")),
        with("n", json!(1u64 << 40)),
        with("n", json!(2.5)),
        with("f", json!({ "kinds": ["NOPE"] })),
        with("f", json!({ "kinds": "ENTITY" })),
        with("f", json!({ "kinds": [null] })),
        with("f", json!({ "kinds": ["FACT"], "diversity": "high" })),
        with("f", json!({ "topic": 1 })),
        with("zzz", json!(1)),
    ];
    let warm = ostrakon_graphql::schema(Arc::clone(&store), Limits::default());
    // The executor runs a document seen before on its schema without extensions.
    let executor = ostrakon_graphql::Executor::new(Arc::clone(&store), Limits::default(), |schema| schema);
    let request = |variables: Value| {
        async_graphql::Request::new(query)
            .variables(async_graphql::Variables::from_json(variables))
            .data(ostrakon_graphql::Access::Local)
    };
    let run = |schema: ostrakon_graphql::OstrakonSchema, variables: Value| async move {
        serde_json::to_value(schema.execute(request(variables)).await).unwrap()
    };
    let executed = |variables: Value| async {
        serde_json::to_value(executor.execute(request(variables)).await).unwrap()
    };
    let first = run(warm.clone(), good.clone()).await;
    assert!(first["errors"].is_null(), "{first}");
    assert_eq!(first["data"]["facts"]["nodes"][0]["object"]["entity"]["name"], "E2", "{first}");
    assert_eq!(executed(good.clone()).await, first);
    assert_eq!(executor.bare_runs(), 0, "a document not validated yet runs with the extensions");
    let mut refused = 0;
    for variables in cases {
        // Seen with good variables just before, so only these variables can differ.
        run(warm.clone(), good.clone()).await;
        let again = run(warm.clone(), variables.clone()).await;
        let fresh = ostrakon_graphql::schema(Arc::clone(&store), Limits::default());
        let anew = run(fresh, variables.clone()).await;
        assert_eq!(again, anew, "variables {variables}");
        assert_eq!(executed(good.clone()).await, first);
        assert_eq!(executed(variables.clone()).await, anew, "executed, variables {variables}");
        refused += usize::from(!again["errors"].is_null());
    }
    assert!(refused >= 15, "most of the cases are errors: {refused}");
    assert!(executor.bare_runs() >= 24, "the good variables ran bare: {}", executor.bare_runs());
}

#[tokio::test]
async fn inputs_nested_or_chained_past_any_stack_are_refused_not_crashed() {
    let state = state("").await;
    // 40,000 fragments, each spreading the next: shallow each, a chain across the document.
    let mut chain = String::new();
    for i in 0..40_000 {
        chain.push_str(&format!("fragment F{i} on Entity {{ ...F{} }}\n", i + 1));
    }
    chain.push_str(
        "fragment F40000 on Entity { id }\n{ entity(namespace: \"alice\", name: \"E1\") { ...F0 } }",
    );
    let body = graphql(&state, &chain).await;
    assert_eq!(
        codes(&body),
        ["LIMIT_EXCEEDED"],
        "{}",
        body.to_string().chars().take(500).collect::<String>()
    );
    // Selections, lists and objects nested far past the parser's limit.
    let deep_selection = format!(
        "{{ entity(namespace: \"alice\", name: \"E1\") {}id{} }}",
        "{ facts { subject ".repeat(5000),
        " } }".repeat(5000)
    );
    let deep_list = format!(
        "{{ entity(namespace: \"alice\", name: {}\"E1\"{}) {{ id }} }}",
        "[".repeat(20_000),
        "]".repeat(20_000)
    );
    let deep_object =
        format!("{{ entity(namespace: \"alice\", name: \"E1\") {{ id }} }} # {}", "{".repeat(10));
    for query in [deep_selection, deep_list, deep_object] {
        let body = graphql_any(&state, &json!({ "query": query }).to_string()).await;
        assert!(!codes(&body).is_empty() || body["data"].is_object(), "{body}");
    }
    // Variables nested 100,000 deep (JSON): refused while the body is read.
    let deep_variables = format!(
        "{{\"query\": \"query($v: String) {{ __typename }}\", \"variables\": {{\"v\": {}1{}}}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let body = graphql_any(&state, &deep_variables).await;
    assert!(!codes(&body).is_empty(), "{body}");
    // And the server answers on.
    let body = graphql(&state, "{ entity(namespace: \"alice\", name: \"E1\") { name } }").await;
    assert_eq!(body["data"]["entity"]["name"], "E1");
}

async fn graphql_any(state: &AppState, body: &str) -> Value {
    let (_, body) = send(state, post().body(Body::from(body.to_owned())).unwrap()).await;
    body
}

/// Everything a client may ask about a fact, lists included.
const RICH_FACT: &str =
    "id predicate polarity object { entity { id name } string integer float boolean time }
    valid { from to } effective { from to } status reason supersededBy { id object { string } }
    contradicts { id } contradictionCount confidence corroborations assertedSeq assertedAt retractedSeq
    correction importance subject { id name } provenance { id text occurredAt source role thread }";

#[tokio::test]
async fn lists_cost_their_real_bound_so_a_slot_read_fits_and_a_walk_over_a_clique_does_not() {
    let state = state("").await;
    // One slot three ways, every field of each fact: well within the default budget.
    let slot = format!(
        r#"{{ now: facts(namespace: "alice", subject: {{name: "E1"}}, predicate: "knows") {{ nodes {{ {RICH_FACT} }} }}
             history(namespace: "alice", subject: {{name: "E1"}}, predicate: "knows") {{ nodes {{ {RICH_FACT} }} }}
             all: facts(namespace: "alice", subject: {{name: "E1"}}, predicate: "knows", includeAll: true) {{ nodes {{ {RICH_FACT} }} }} }}"#
    );
    let body = graphql(&state, &slot).await;
    assert!(body["errors"].is_null(), "{body}");
    assert_eq!(body["data"]["history"]["nodes"][0]["object"]["entity"]["name"], "E2");
    // Four hops over `incoming`, each up to 100 facts: 10^8 subjects at worst (over a
    // clique of 30 it ran to the deadline and held 425 MB): refused before it runs.
    let mut walk = "id".to_owned();
    for _ in 0..4 {
        walk = format!("incoming {{ subject {{ {walk} }} }}");
    }
    let body =
        graphql(&state, &format!(r#"{{ entity(namespace: "alice", name: "E1") {{ {walk} }} }}"#)).await;
    assert_eq!(codes(&body), ["LIMIT_EXCEEDED"], "{body}");
    assert!(body["errors"][0]["message"].as_str().unwrap().contains("complexity"), "{body}");
    // Asked for in small pages, the same walk is fine.
    let mut small = "id".to_owned();
    for _ in 0..4 {
        small = format!("incoming(first: 5) {{ subject {{ {small} }} }}");
    }
    let body =
        graphql(&state, &format!(r#"{{ entity(namespace: "alice", name: "E1") {{ {small} }} }}"#)).await;
    assert!(body["errors"].is_null(), "{body}");
    // A list below an object answers at most its page.
    let body = graphql(
        &state,
        r#"{ entity(namespace: "alice", name: "E1") { facts(first: 1) { id } incoming(first: 1) { id } } }"#,
    )
    .await;
    assert_eq!(body["data"]["entity"]["facts"].as_array().unwrap().len(), 1, "{body}");
    // What a mutation wrote costs as much as it was given: a write of two facts may ask
    // for a lot about each; one of a thousand may not.
    let fact = |i: usize| {
        format!(r#"{{ subject: {{ name: "W{i}" }}, predicate: "p", object: {{ integer: {i} }} }}"#)
    };
    let write = |n: usize| {
        let facts: Vec<String> = (0..n).map(fact).collect();
        format!(
            r#"mutation {{ assertFacts(namespace: "alice", facts: [{}]) {{ facts {{ subject {{ incoming {{ subject {{ facts {{ id }} }} }} }} }} }} }}"#,
            facts.join(", ")
        )
    };
    assert!(graphql(&state, &write(2)).await["errors"].is_null());
    let before = state.store().counts(&alice()).unwrap();
    assert_eq!(codes(&graphql(&state, &write(1000)).await), ["LIMIT_EXCEEDED"]);
    assert_eq!(state.store().counts(&alice()).unwrap(), before, "refused before it wrote");
}

/// A request as the holder of `access`; the whole response.
async fn as_holder(
    schema: &ostrakon_graphql::OstrakonSchema,
    access: ostrakon_graphql::Access,
    query: &str,
) -> Value {
    serde_json::to_value(schema.execute(async_graphql::Request::new(query).data(access)).await).unwrap()
}

#[tokio::test]
async fn errors_speak_the_users_words_a_misspelled_predicate_is_named_and_namespaces_are_listed() {
    let store = Arc::new(Store::in_memory());
    let schema = ostrakon_graphql::schema(Arc::clone(&store), Limits::default());
    let local = ostrakon_graphql::Access::Local;
    for (ns, who) in [("alice", "Alice"), ("bob", "Bob"), ("carol", "Carol")] {
        let write = format!(
            r#"mutation {{ definePredicate(namespace: "{ns}", name: "livesIn", cardinality: ONE, valueType: ENTITY) {{ seq }}
               assertFacts(namespace: "{ns}", facts: [{{ subject: {{ name: "{who}" }}, predicate: "livesIn", object: {{ entity: {{ name: "Paris" }} }}, validFrom: "2020" }}]) {{ seq }} }}"#
        );
        let done = as_holder(&schema, local.clone(), &write).await;
        assert!(done["errors"].is_null(), "{done}");
    }
    // No Rust debug text in any message (it showed `Entity(EntityId(5))`).
    let debug = |message: &str| {
        ["Id(", "Entity(", "Fact(", "Episode(", "Some(", "{ dim", "Client {"]
            .iter()
            .any(|d| message.contains(d))
    };
    let refusals = [
        (r#"mutation { eraseEntity(namespace: "alice", id: "99") { seq } }"#, "UNKNOWN_ENTITY"),
        (r#"mutation { eraseFacts(namespace: "alice", ids: ["77", "78"]) { seq } }"#, "UNKNOWN_FACT"),
        (
            r#"mutation { assertFacts(namespace: "alice", facts: [{ subject: { name: "Alice" }, predicate: "livesIn", object: { string: "Paris" }, validFrom: "2021" }]) { seq } }"#,
            "WRONG_VALUE_TYPE",
        ),
        (r#"{ facts(namespace: "alice", predicate: "livesin") { nodes { id } } }"#, "UNKNOWN_PREDICATE"),
        (
            r#"{ history(namespace: "alice", subject: { name: "Alice" }, predicate: "lives_in") { nodes { id } } }"#,
            "UNKNOWN_PREDICATE",
        ),
    ];
    for (query, code) in refusals {
        let answer = as_holder(&schema, local.clone(), query).await;
        let error = &answer["errors"][0];
        assert_eq!(error["extensions"]["code"], code, "{query}: {answer}");
        let message = error["message"].as_str().unwrap();
        assert!(!debug(message), "{query}: {message}");
        if code == "UNKNOWN_PREDICATE" {
            assert!(message.contains("did you mean livesIn?"), "{message}");
        }
        if code == "WRONG_VALUE_TYPE" {
            assert!(message.contains("takes ENTITY, got STRING"), "{message}");
        }
    }
    // A predicate the namespace knows answers, even where it has no fact.
    let known = as_holder(
        &schema,
        local.clone(),
        r#"{ facts(namespace: "bob", predicate: "livesIn") { nodes { id } } }"#,
    )
    .await;
    assert!(known["errors"].is_null(), "{known}");
    // The namespaces a token may read, and no other.
    let token = ostrakon_graphql::Access::Token {
        name: "agent".into(),
        grants: [
            ("alice".to_owned(), ostrakon_graphql::Mode::Read),
            ("carol".to_owned(), ostrakon_graphql::Mode::ReadWrite),
        ]
        .into(),
    };
    let listed = as_holder(&schema, token, "{ namespaces }").await;
    assert_eq!(listed["data"]["namespaces"], json!(["alice", "carol"]), "{listed}");
    let all = as_holder(&schema, local, r#"{ namespaces(first: 2, after: "alice") }"#).await;
    assert_eq!(all["data"]["namespaces"], json!(["bob", "carol"]), "{all}");
}
