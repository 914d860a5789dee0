//! A local stand-in for an OpenAI-compatible endpoint: `POST /v1/chat/completions`
//! answers each episode with its recorded completion (`tests/data/extraction/`), and
//! misbehaves as the episode's text asks: `[flaky]` answers HTTP 500 the first time,
//! `[slow]` answers after 3 s, `[hold]` waits until [`StubModel::release`]. Every call is
//! counted by episode text, and refused (401) without the expected key.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::Notify;

/// The key the stub expects as `Authorization: Bearer …`.
pub(crate) const KEY: &str = "stub-key-0123456789";

#[derive(Clone)]
struct Shared {
    recorded: Arc<HashMap<String, Value>>,
    calls: Arc<Mutex<HashMap<String, usize>>>,
    bodies: Arc<Mutex<Vec<Value>>>,
    release: Arc<Notify>,
}

/// The running stub.
pub(crate) struct StubModel {
    /// Its address.
    pub addr: SocketAddr,
    shared: Shared,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl StubModel {
    /// Starts the stub on a loopback port, on its own thread and runtime.
    pub(crate) fn start() -> StubModel {
        let path = super::project_root().join("tests/data/extraction/completions.jsonl");
        let recorded: HashMap<String, Value> = std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|line| {
                let v: Value = serde_json::from_str(line).unwrap();
                (v["episode"].as_str().unwrap().to_owned(), v["completion"].clone())
            })
            .collect();
        let shared = Shared {
            recorded: Arc::new(recorded),
            calls: Arc::default(),
            bodies: Arc::default(),
            release: Arc::new(Notify::new()),
        };
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let state = shared.clone();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                addr_tx.send(listener.local_addr().unwrap()).unwrap();
                let app = axum::Router::new()
                    .route("/v1/chat/completions", axum::routing::post(complete))
                    .with_state(state);
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = stopped.await;
                    })
                    .await;
            });
        });
        let addr = addr_rx.recv_timeout(Duration::from_secs(10)).unwrap();
        StubModel { addr, shared, stop: Some(stop) }
    }

    /// The base URL to configure.
    pub(crate) fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Calls made for the episode whose text starts with `text`.
    pub(crate) fn calls(&self, text: &str) -> usize {
        self.shared.calls.lock().unwrap().iter().filter(|(k, _)| k.starts_with(text)).map(|(_, n)| n).sum()
    }

    /// Every call's request body, in order.
    pub(crate) fn bodies(&self) -> Vec<Value> {
        self.shared.bodies.lock().unwrap().clone()
    }

    /// Lets a `[hold]` call answer.
    pub(crate) fn release(&self) {
        self.shared.release.notify_waiters();
        self.shared.release.notify_one();
    }
}

impl Drop for StubModel {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn complete(State(shared): State<Shared>, headers: HeaderMap, Json(body): Json<Value>) -> Response {
    let given = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or_default();
    if given != format!("Bearer {KEY}") {
        // As a hosted model's API does: the wrong key is shown back.
        let key = given.trim_start_matches("Bearer ");
        let message =
            format!("Incorrect API key provided: {key}. You can find your API key in your account.");
        return (StatusCode::UNAUTHORIZED, Json(json!({ "error": { "message": message } }))).into_response();
    }
    shared.bodies.lock().unwrap().push(body.clone());
    let message = body["messages"][1]["content"].as_str().unwrap_or("").to_owned();
    // The episode's text follows the message's head (time, speaker) and a blank line.
    let text = message.split_once("\n\n").map_or(message.as_str(), |(_, t)| t).to_owned();
    let n = {
        let mut calls = shared.calls.lock().unwrap();
        let n = calls.entry(text.clone()).or_default();
        *n += 1;
        *n
    };
    if text.starts_with("[flaky]") && n == 1 {
        return (StatusCode::INTERNAL_SERVER_ERROR, "try again").into_response();
    }
    if text.starts_with("[slow]") {
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
    if text.starts_with("[hold]") {
        shared.release.notified().await;
    }
    let answer = shared.recorded.get(&text).cloned().unwrap_or_else(|| {
        serde_json::json!({ "choices": [{ "message": { "content": "{\"facts\": []}" }, "finish_reason": "stop" }] })
    });
    Json(answer).into_response()
}
