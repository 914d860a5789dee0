//! The floor under any point read over HTTP on this machine: an axum server that parses
//! the request and its JSON body and writes a fixed small JSON answer, with no GraphQL
//! and no store. The peer benchmark (`run.py`) runs it with the same wrk script as
//! Ostrakon's point reads, so the table shows how much of a read's cost is HTTP itself.
//!
//! `cargo run --release --example http_floor -- 127.0.0.1:PORT`

use axum::body::Bytes;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::post;

async fn answer(body: Bytes) -> axum::response::Response {
    let Ok(request) = serde_json::from_slice::<serde_json::Value>(&body) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let seq = request["variables"]["s"].as_i64().unwrap_or(0);
    let out = serde_json::json!({ "data": { "facts": { "nodes": [{ "object": { "integer": seq } }] } } });
    ([(header::CONTENT_TYPE, "application/json")], out.to_string()).into_response()
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let listen = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:8090".to_owned());
    let listener = tokio::net::TcpListener::bind(&listen).await?;
    axum::serve(listener, axum::Router::new().route("/graphql", post(answer))).await
}
