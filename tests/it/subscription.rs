//! The `events` subscription receives what concurrent mutations commit, filtered to its
//! namespace: through the schema the server runs, and over the server's WebSocket
//! (graphql-transport-ws, on a loopback port) with tokens checked at `connection_init`.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use futures_util::{FutureExt as _, SinkExt as _, StreamExt as _};
use ostrakon_engine::Store;
use ostrakon_graphql::Access;
use ostrakon_server::{AppState, Config, app};
use serde_json::{Value, json};
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tower::ServiceExt as _;

const WRITER: &str = "writer-of-everything-1";
const ALICE: &str = "alice-reader-token-001";

const TOKENS: &str = r#"
[[tokens]]
name = "writer"
token = "writer-of-everything-1"
namespaces = { "*" = "read-write" }

[[tokens]]
name = "alice"
token = "alice-reader-token-001"
namespaces = { alice = "read" }
"#;

const WAIT: Duration = Duration::from_millis(300);

const WRITE: &str = r#"mutation($ns: String!, $text: String!) {
        recordEpisode(namespace: $ns, episode: {text: $text},
                      facts: [{subject: {name: $text}, predicate: "said", object: {string: $text}}]) { seq } }"#;

/// Records an episode with one fact through the router; returns the batch's seq.
async fn write(state: &AppState, token: Option<&str>, namespace: &str, text: &str) -> u64 {
    let body = json!({ "query": WRITE, "variables": { "ns": namespace, "text": text } }).to_string();
    let mut request = Request::post("/graphql").header(header::CONTENT_TYPE, "application/json");
    if let Some(token) = token {
        request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    let response = app(state.clone()).oneshot(request.body(Body::from(body)).unwrap()).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let bytes = http_body_util::BodyExt::collect(response.into_body()).await.unwrap().to_bytes();
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    body["data"]["recordEpisode"]["seq"].as_u64().unwrap_or_else(|| panic!("{body}"))
}

/// Where notices come from: the schema's stream, or a socket subscribed as `id`.
enum Feed<'a> {
    Schema(futures_util::stream::BoxStream<'static, async_graphql::Response>),
    Socket(&'a mut Socket, &'a str),
}

impl Feed<'_> {
    /// The next notice; `None` after a short silence.
    async fn next(&mut self) -> Option<Value> {
        match self {
            Feed::Schema(stream) => {
                let response = timeout(WAIT, stream.next()).await.ok().flatten()?;
                assert!(response.errors.is_empty(), "{:?}", response.errors);
                Some(response.data.into_json().unwrap()["events"].clone())
            }
            Feed::Socket(socket, id) => {
                let message = receive(socket).await?;
                assert_eq!(
                    (message["type"].as_str(), message["id"].as_str()),
                    (Some("next"), Some(*id)),
                    "{message}"
                );
                assert!(message["payload"]["errors"].is_null(), "{message}");
                Some(message["payload"]["data"]["events"].clone())
            }
        }
    }
}

/// Writes to `alice` until the feed hears one (a subscription starts listening when the
/// server first polls it, which a client cannot observe), drains the warm-up, then
/// commits to bob and to alice concurrently with the listening feed, and returns the
/// notices of alice's batch; every notice on the way must be alice's.
async fn receive_concurrent_commit(state: &AppState, token: Option<&str>, feed: &mut Feed<'_>) -> Vec<Value> {
    let mut warmed = false;
    for round in 0..20 {
        write(state, token, "alice", &format!("warm-up {round}")).await;
        if feed.next().await.is_some() {
            while feed.next().await.is_some() {}
            warmed = true;
            break;
        }
    }
    assert!(warmed, "the subscription never received a warm-up write");
    let writer = {
        let (state, token) = (state.clone(), token.map(str::to_owned));
        tokio::spawn(async move {
            write(&state, token.as_deref(), "bob", "not for alice").await;
            write(&state, token.as_deref(), "alice", "for alice").await
        })
    };
    let mut notices = Vec::new();
    while let Some(notice) = feed.next().await {
        assert_eq!(notice["namespace"], "alice", "a notice from another namespace: {notice}");
        notices.push(notice);
        if notices.len() == 3 {
            break;
        }
    }
    let seq = writer.await.unwrap();
    assert!(notices.iter().all(|n| n["seq"] == seq), "{notices:?}");
    assert_eq!(
        notices[2]["data"]["FactAsserted"]["object"]["Literal"]["String"], "for alice",
        "{}",
        notices[2]
    );
    assert!(notices[0]["episode"].is_string() && notices[2]["fact"].is_string(), "{notices:?}");
    notices
}

fn kinds(notices: &[Value]) -> Vec<&str> {
    notices.iter().map(|n| n["kind"].as_str().unwrap()).collect()
}

const SUBSCRIBE: &str = r#"subscription($ns: String!) { events(namespace: $ns) { namespace seq kind entity fact episode data } }"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_schema_stream_receives_concurrent_commits_of_its_namespace_only() {
    let state = AppState::new(Arc::new(Store::in_memory()), Config::default());
    let request = async_graphql::Request::new(SUBSCRIBE)
        .variables(async_graphql::Variables::from_json(json!({ "ns": "alice" })))
        .data(Access::Local);
    let mut stream = state.schema().execute_stream(request);
    assert!(stream.next().now_or_never().is_none(), "nothing committed yet");
    let notices = receive_concurrent_commit(&state, None, &mut Feed::Schema(stream)).await;
    assert_eq!(kinds(&notices), ["EpisodeRecorded", "EntityDeclared", "FactAsserted"]);
}

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A server on a loopback port, over its own state.
async fn listen(state: &AppState) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(ostrakon_server::serve(listener, state.clone(), std::future::pending()));
    addr
}

async fn connect(addr: std::net::SocketAddr, path: &str, authorization: Option<&str>) -> Socket {
    let mut request = format!("ws://{addr}{path}").into_client_request().unwrap();
    request.headers_mut().insert(header::SEC_WEBSOCKET_PROTOCOL, "graphql-transport-ws".parse().unwrap());
    if let Some(value) = authorization {
        request.headers_mut().insert(header::AUTHORIZATION, value.parse().unwrap());
    }
    let (socket, response) =
        timeout(WAIT * 10, tokio_tungstenite::connect_async(request)).await.unwrap().unwrap();
    assert_eq!(response.headers()[header::SEC_WEBSOCKET_PROTOCOL], "graphql-transport-ws");
    socket
}

async fn send(socket: &mut Socket, message: Value) {
    socket.send(Message::text(message.to_string())).await.unwrap();
}

/// The next protocol message; `{"type": "close"}` when the server closed, `None` on
/// silence.
async fn receive(socket: &mut Socket) -> Option<Value> {
    loop {
        match timeout(WAIT, socket.next()).await.ok()? {
            Some(Ok(Message::Text(text))) => return Some(serde_json::from_str(text.as_str()).unwrap()),
            Some(Ok(Message::Close(frame))) => {
                return Some(json!({ "type": "close", "reason": frame.map(|f| f.reason.to_string()) }));
            }
            Some(Ok(_)) => continue,
            None | Some(Err(_)) => return Some(json!({ "type": "close" })),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_websocket_checks_the_token_and_streams_its_namespace_only() {
    let state = AppState::new(Arc::new(Store::in_memory()), Config::parse(TOKENS, "t.toml").unwrap());
    let addr = listen(&state).await;

    // A token in the connection_init payload, as browsers must send it.
    let mut socket = connect(addr, "/graphql/ws", None).await;
    send(
        &mut socket,
        json!({ "type": "connection_init", "payload": { "Authorization": format!("Bearer {ALICE}") } }),
    )
    .await;
    assert_eq!(receive(&mut socket).await.unwrap()["type"], "connection_ack");
    // Another namespace is FORBIDDEN.
    send(
        &mut socket,
        json!({ "id": "bob", "type": "subscribe", "payload": { "query": SUBSCRIBE, "variables": { "ns": "bob" } } }),
    )
    .await;
    let refused = receive(&mut socket).await.unwrap();
    // A resolver's error is a `next` with errors, then `complete`.
    assert_eq!((refused["type"].as_str(), refused["id"].as_str()), (Some("next"), Some("bob")), "{refused}");
    assert_eq!(refused["payload"]["errors"][0]["extensions"]["code"], "FORBIDDEN", "{refused}");
    assert!(refused["payload"]["data"].is_null(), "{refused}");
    assert_eq!(receive(&mut socket).await.unwrap(), json!({ "id": "bob", "type": "complete" }));

    send(
        &mut socket,
        json!({ "id": "a", "type": "subscribe", "payload": { "query": SUBSCRIBE, "variables": { "ns": "alice" } } }),
    )
    .await;
    let notices = receive_concurrent_commit(&state, Some(WRITER), &mut Feed::Socket(&mut socket, "a")).await;
    assert_eq!(kinds(&notices), ["EpisodeRecorded", "EntityDeclared", "FactAsserted"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_without_a_valid_token_gets_nothing() {
    let state = AppState::new(Arc::new(Store::in_memory()), Config::parse(TOKENS, "t.toml").unwrap());
    let addr = listen(&state).await;

    for payload in
        [json!({}), json!({ "token": "not-a-token-of-ours" }), json!({ "Authorization": "Bearer nope" })]
    {
        let mut socket = connect(addr, "/graphql/ws", None).await;
        send(&mut socket, json!({ "type": "connection_init", "payload": payload })).await;
        let answer = receive(&mut socket).await.unwrap();
        assert_eq!(answer["type"], "close", "{payload}: {answer}");
    }

    // A valid Authorization header on the upgrade suffices, on /graphql itself too.
    let mut socket = connect(addr, "/graphql", Some(&format!("Bearer {ALICE}"))).await;
    send(&mut socket, json!({ "type": "connection_init" })).await;
    assert_eq!(receive(&mut socket).await.unwrap()["type"], "connection_ack");
    send(
        &mut socket,
        json!({ "id": "1", "type": "subscribe", "payload": { "query": SUBSCRIBE, "variables": { "ns": "alice" } } }),
    )
    .await;
    let notices = receive_concurrent_commit(&state, Some(WRITER), &mut Feed::Socket(&mut socket, "1")).await;
    assert_eq!(notices.len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_an_allow_list_a_websocket_runs_only_its_subscriptions() {
    use sha2::Digest as _;
    let hash = |d: &str| -> String {
        sha2::Sha256::digest(d.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
    };
    let persisted = ostrakon_server::PersistedSettings {
        allow_list: Some([SUBSCRIBE, WRITE].into_iter().map(|d| (hash(d), d.to_owned())).collect()),
        ..ostrakon_server::PersistedSettings::default()
    };
    let state = AppState::new(Arc::new(Store::in_memory()), Config { persisted, ..Config::default() });
    let addr = listen(&state).await;
    let mut socket = connect(addr, "/graphql/ws", None).await;
    send(&mut socket, json!({ "type": "connection_init" })).await;
    assert_eq!(receive(&mut socket).await.unwrap()["type"], "connection_ack");
    let other = format!("{SUBSCRIBE} ");
    send(
        &mut socket,
        json!({ "id": "x", "type": "subscribe", "payload": { "query": other, "variables": { "ns": "a" } } }),
    )
    .await;
    let refused = receive(&mut socket).await.unwrap();
    assert_eq!(refused["payload"]["errors"][0]["extensions"]["code"], "OPERATION_NOT_ALLOWED", "{refused}");
    assert_eq!(receive(&mut socket).await.unwrap(), json!({ "id": "x", "type": "complete" }));
    send(
        &mut socket,
        json!({ "id": "a", "type": "subscribe", "payload": { "query": SUBSCRIBE, "variables": { "ns": "alice" } } }),
    )
    .await;
    let notices = receive_concurrent_commit(&state, None, &mut Feed::Socket(&mut socket, "a")).await;
    assert_eq!(kinds(&notices), ["EpisodeRecorded", "EntityDeclared", "FactAsserted"]);
}
