//! Subscriptions over a WebSocket (graphql-transport-ws): the upgrade, the connection's
//! access from its init payload, and the close codes.

use crate::state::AppState;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::ApiError;
use async_graphql::Data;
use async_graphql::http::{ALL_WEBSOCKET_PROTOCOLS, WebSocketProtocols, WsMessage};
use axum::extract::ws::{CloseFrame, Message};
use axum::extract::{FromRequestParts, Request, State, WebSocketUpgrade};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use futures_util::{SinkExt as _, StreamExt as _, future::ready};
use ostrakon_graphql::Access;

pub(crate) async fn graphql_ws(
    State(state): State<AppState>,
    request: Request,
) -> Result<Response, ApiError> {
    subscribe(state, request).await
}

/// Upgrades to a GraphQL WebSocket. With tokens configured the token comes from the
/// upgrade request's `Authorization` header (which must then be valid) or, as browsers
/// cannot set that header, from the `connection_init` payload: `{"Authorization":
/// "Bearer <token>"}` or `{"token": "<token>"}`; without either the connection is closed
/// after `connection_init`.
pub(crate) async fn subscribe(state: AppState, request: Request) -> Result<Response, ApiError> {
    let (mut parts, _body) = request.into_parts();
    let from_header = match parts.headers.get(header::AUTHORIZATION) {
        Some(_) => Some(state.authenticate(&parts.headers)?),
        None if !state.inner.config.requires_tokens() => Some(Access::Local),
        None => None,
    };
    let protocol = parts
        .headers
        .get(header::SEC_WEBSOCKET_PROTOCOL)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(',').find_map(|p| p.trim().parse::<WebSocketProtocols>().ok()))
        .ok_or_else(|| {
            ApiError::BadRequest(
                "Sec-WebSocket-Protocol must name graphql-transport-ws (or graphql-ws)".into(),
            )
        })?;
    let upgrade = WebSocketUpgrade::from_request_parts(&mut parts, &state)
        .await
        .map_err(|rejection| ApiError::BadRequest(rejection.body_text()))?;
    let mut data = Data::default();
    // Queries and mutations go over HTTP, where they get a deadline and a response cap.
    data.insert(ostrakon_graphql::SubscriptionsOnly);
    if state.inner.persisted.has_allow_list() {
        let persisted = Arc::clone(&state.inner.persisted);
        data.insert(ostrakon_graphql::DocumentCheck(Arc::new(move |query| persisted.allows(query))));
    }
    let authenticated = from_header.is_some();
    if let Some(access) = from_header {
        data.insert(access);
    }
    let schema = state.inner.graphql.schema().clone();
    let metrics = Arc::clone(&state.inner.metrics);
    Ok(upgrade
        .protocols(ALL_WEBSOCKET_PROTOCOLS)
        .on_upgrade(move |socket| async move {
            metrics.websocket(1);
            let refused = Arc::new(AtomicBool::new(false));
            let refused_init = Arc::clone(&refused);
            let (mut sink, stream) = socket.split();
            let input = stream.take_while(|m| ready(m.is_ok())).filter_map(|m| {
                ready(match m {
                    Ok(m @ (Message::Text(_) | Message::Binary(_))) => Some(m.into_data()),
                    _ => None,
                })
            });
            let messages = async_graphql::http::WebSocket::new(schema, input, protocol)
                .connection_data(data)
                .on_connection_init(move |payload| async move {
                    let mut data = Data::default();
                    if !authenticated {
                        let access = init_access(&state, &payload).map_err(|e| {
                            tracing::info!(error = %e, "subscription refused: no valid token");
                            refused_init.store(true, Ordering::Relaxed);
                            async_graphql::Error::new("missing or unknown bearer token")
                        })?;
                        data.insert(access);
                    }
                    Ok(data)
                })
                .map(|message| match message {
                    WsMessage::Text(text) => Message::Text(text.into()),
                    WsMessage::Close(code, reason) => Message::Close(Some(CloseFrame {
                        code: close_code(code, refused.load(Ordering::Relaxed)),
                        reason: close_reason(reason).into(),
                    })),
                });
            futures_util::pin_mut!(messages);
            while let Some(message) = messages.next().await {
                if sink.send(message).await.is_err() {
                    break;
                }
            }
            metrics.websocket(-1);
        })
        .into_response())
}

/// The close code graphql-transport-ws asks for, from the one the protocol machinery
/// chose: a refused `connection_init` is 4403 Forbidden, a subscribe before the
/// acknowledgement 4401 Unauthorized, a message that is not the protocol's 4400.
fn close_code(code: u16, init_refused: bool) -> u16 {
    match code {
        1002 if init_refused => 4403,
        1002 => 4400,
        1011 => 4401,
        other => other,
    }
}

/// A close reason cut to what a close frame holds (123 bytes, at a character boundary):
/// a longer one (a parser's message) makes the client drop the frame as invalid.
fn close_reason(mut reason: String) -> String {
    const MAX: usize = 123;
    if reason.len() > MAX {
        let mut end = MAX;
        while !reason.is_char_boundary(end) {
            end -= 1;
        }
        reason.truncate(end);
    }
    reason
}

/// The access a `connection_init` payload gives.
fn init_access(state: &AppState, payload: &serde_json::Value) -> Result<Access, ApiError> {
    let text = |key: &str| payload.get(key).and_then(serde_json::Value::as_str);
    if let Some(value) = text("Authorization").or_else(|| text("authorization")) {
        return state.bearer(value);
    }
    match text("token") {
        Some(secret) => state.inner.config.access_for(secret).ok_or(ApiError::Unauthorized("unknown token")),
        None => Err(ApiError::Unauthorized("no token in connection_init")),
    }
}
