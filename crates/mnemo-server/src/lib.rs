//! Mnemo's HTTP server: GraphQL over POST `/graphql`, GraphiQL on GET `/graphql`,
//! subscriptions over WebSocket (graphql-transport-ws) on `/graphql/ws` (and on
//! `/graphql` itself for an upgrade request), `/healthz` and `/metrics`. It checks
//! tokens, enforces the body limit and counts requests; everything else is the GraphQL
//! schema's. This is the only crate that knows axum: [`app`] builds the router over an
//! [`AppState`], [`serve`] runs it on a listener until a shutdown signal.
//!
//! Access: with no tokens configured every request is the local user ([`Access::Local`]).
//! With tokens, a request without a valid `Authorization: Bearer <token>` is answered
//! HTTP 401 with code `FORBIDDEN` before any GraphQL runs; a valid token reaches the
//! schema as [`Access::Token`], and naming a namespace outside its grants is a GraphQL
//! error with code `FORBIDDEN` (HTTP 200, like every GraphQL error). `/metrics` names
//! every namespace, so with tokens it needs one granted `*`; `/healthz` and the GraphiQL
//! page are open.
#![deny(missing_docs)]

mod config;
mod error;
mod metrics;

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use async_graphql::Data;
use async_graphql::http::{ALL_WEBSOCKET_PROTOCOLS, GraphiQLSource};
use async_graphql_axum::{GraphQLProtocol, GraphQLWebSocket};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{
    DefaultBodyLimit, FromRequest, FromRequestParts, MatchedPath, Request, State, WebSocketUpgrade,
};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use mnemo_engine::Store;
use mnemo_graphql::{Access, MnemoSchema};

pub use config::{Config, ConfigError, DEFAULT_MAX_BODY_BYTES, MIN_TOKEN_LEN, Token};
pub use error::ApiError;
pub use metrics::Metrics;

/// What every handler shares: the store, the schema over it, the configuration and the
/// metrics. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<Store>,
    schema: MnemoSchema,
    config: Config,
    metrics: Arc<Metrics>,
    graphiql: String,
}

impl AppState {
    /// The state for a store and a configuration; builds the schema with the
    /// configuration's limits and starts counting the store's commits.
    pub fn new(store: Arc<Store>, config: Config) -> AppState {
        let metrics = Arc::new(Metrics::default());
        // The listener holds the metrics only: holding the state would make the store own
        // itself through its own listener, and never be dropped (nor its directory unlocked).
        let counter = Arc::clone(&metrics);
        store.on_commit(Arc::new(move |batch| counter.committed(batch.events.len())));
        let schema = mnemo_graphql::schema(Arc::clone(&store), config.limits);
        let graphiql = GraphiQLSource::build()
            .title("Mnemo")
            .endpoint("/graphql")
            .subscription_endpoint("/graphql/ws")
            .finish();
        AppState { inner: Arc::new(Inner { store, schema, config, metrics, graphiql }) }
    }

    /// The store.
    pub fn store(&self) -> &Arc<Store> {
        &self.inner.store
    }

    /// The GraphQL schema requests run against.
    pub fn schema(&self) -> &MnemoSchema {
        &self.inner.schema
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    /// The access an `Authorization` header gives.
    fn authenticate(&self, headers: &HeaderMap) -> Result<Access, ApiError> {
        if !self.inner.config.requires_tokens() {
            return Ok(Access::Local);
        }
        let value = headers
            .get(header::AUTHORIZATION)
            .ok_or(ApiError::Unauthorized("no Authorization header"))?
            .to_str()
            .map_err(|_| ApiError::Unauthorized("Authorization header is not text"))?;
        self.bearer(value)
    }

    /// The access of an `Authorization` value (`Bearer <token>`).
    fn bearer(&self, value: &str) -> Result<Access, ApiError> {
        let (scheme, secret) =
            value.trim().split_once(' ').ok_or(ApiError::Unauthorized("not a Bearer credential"))?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(ApiError::Unauthorized("not a Bearer credential"));
        }
        self.inner.config.access_for(secret.trim()).ok_or(ApiError::Unauthorized("unknown token"))
    }
}

/// The router: every route of the server over `state`.
pub fn app(state: AppState) -> Router {
    let max_body = state.inner.config.max_body_bytes;
    Router::new()
        .route("/graphql", get(graphql_get).post(graphql_post))
        .route("/graphql/ws", get(graphql_ws))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route_layer(middleware::from_fn_with_state(state.clone(), track))
        .layer(DefaultBodyLimit::max(max_body))
        .with_state(state)
}

/// Serves [`app`] on `listener` until `shutdown` completes, then stops accepting
/// connections and lets the requests in flight finish. Writes are durable when they are
/// acknowledged, so nothing acknowledged is lost however the process then ends.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let sleeper = tokio::spawn(consolidate_when_idle(state.inner.store.clone(), IDLE_CHECK, IDLE_AFTER));
    let served = axum::serve(listener, app(state)).with_graceful_shutdown(shutdown).await;
    sleeper.abort();
    served
}

/// How often the idle consolidation looks for work.
const IDLE_CHECK: std::time::Duration = std::time::Duration::from_secs(30);
/// A namespace with no commit for this long is idle.
const IDLE_AFTER: std::time::Duration = std::time::Duration::from_secs(60);

/// Fires due intentions, and consolidates, every `check`, each namespace that asks for it (`consolidateEverySeconds`)
/// once it has had no commit for `idle_after` (by the store's clock) and its period has
/// passed since the last run. Runs until dropped; `serve` runs it.
pub async fn consolidate_when_idle(
    store: Arc<Store>,
    check: std::time::Duration,
    idle_after: std::time::Duration,
) {
    let idle_micros = i64::try_from(idle_after.as_micros()).unwrap_or(i64::MAX);
    let mut last_run: std::collections::HashMap<mnemo_engine::core::Namespace, i64> = Default::default();
    let mut ticks = tokio::time::interval(check);
    loop {
        ticks.tick().await;
        let store = Arc::clone(&store);
        let previous = last_run.clone();
        let ran = tokio::task::spawn_blocking(move || {
            let now = store.now();
            let mut ran = Vec::new();
            for ns in store.namespaces() {
                // Intentions whose time the clock has passed, or whose cue an embedded
                // episode met, fire now (pushed on `events` like any batch).
                match store.fire_due(&ns, now) {
                    Ok(f) if !f.fired.is_empty() => {
                        tracing::info!(namespace = %ns, fired = f.fired.len(), "intentions fired")
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!(namespace = %ns, error = %e, "firing intentions failed"),
                }
                let (every, last_commit) = store
                    .inspect(&ns, |i| (i.config().consolidate_every_seconds, i.system_time(i.last_seq())));
                let Some(every) = every else { continue };
                let due = previous.get(&ns).is_none_or(|t| now.as_micros() - t >= every as i64 * 1_000_000);
                let idle = last_commit.is_none_or(|t| now.as_micros() - t.as_micros() >= idle_micros);
                if due && idle {
                    let since = previous.get(&ns).map_or(now.as_micros() - every as i64 * 1_000_000, |t| *t);
                    let since = mnemo_engine::core::Timestamp::from_micros(since);
                    match store.consolidate(&ns, now, since) {
                        Ok(report) => tracing::info!(
                            namespace = %ns,
                            merged = report.merged.len(),
                            corroborated = report.corroborated.len(),
                            turned_dormant = report.dormant.len(),
                            "consolidated while idle"
                        ),
                        Err(e) => tracing::warn!(namespace = %ns, error = %e, "idle consolidation failed"),
                    }
                    ran.push((ns, now.as_micros()));
                }
            }
            ran
        })
        .await
        .unwrap_or_default();
        last_run.extend(ran);
    }
}

/// Counts and logs every routed request.
async fn track(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let start = Instant::now();
    let route = request.extensions().get::<MatchedPath>().map_or("", MatchedPath::as_str).to_owned();
    let method = request.method().clone();
    let response = next.run(request).await;
    let elapsed = start.elapsed();
    let status = response.status();
    state.inner.metrics.request(&route, method.as_str(), status.as_u16(), elapsed);
    tracing::debug!(
        method = %method,
        route = %route,
        status = status.as_u16(),
        micros = elapsed.as_micros() as u64,
        "request"
    );
    response
}

async fn healthz() -> &'static str {
    "ok\n"
}

/// The metrics name every namespace, so with tokens configured only a token granted
/// `*` may read them.
async fn metrics(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    match state.authenticate(&headers)? {
        Access::Token { grants, .. } if !grants.contains_key("*") => {
            return Err(ApiError::Forbidden("reading /metrics needs a token granted \"*\""));
        }
        _ => {}
    }
    let body = state.inner.metrics.render(&state.inner.store);
    Ok(([(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], body).into_response())
}

async fn graphql_post(State(state): State<AppState>, request: Request) -> Result<Response, ApiError> {
    // Tokens first: an unauthenticated client should not get to have a body buffered.
    let access = state.authenticate(request.headers())?;
    let body = Bytes::from_request(request, &state).await.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::BodyTooLarge { limit: state.inner.config.max_body_bytes }
        } else {
            ApiError::BadRequest(rejection.body_text())
        }
    })?;
    let mut request: async_graphql::Request = serde_json::from_slice(&body)
        .map_err(|e| ApiError::BadRequest(format!("the body is not a GraphQL request: {e}")))?;
    let operation = operation_type(&mut request);
    let request = request.data(access);
    let schema = state.inner.schema.clone();
    let runtime = tokio::runtime::Handle::current();
    // Resolvers call the store synchronously and a write waits for its fdatasync: run them
    // on the blocking pool so the async workers keep serving other connections, and so
    // concurrent writes wait together and share one group commit.
    let response = tokio::task::spawn_blocking(move || runtime.block_on(schema.execute(request)))
        .await
        .map_err(|e| ApiError::Internal(format!("GraphQL execution did not complete: {e}")))?;
    state.inner.metrics.operation(operation, &response);
    Ok(axum::Json(response).into_response())
}

/// The type of the operation a request will run, for the metrics; parsing here is not
/// wasted, as the request keeps the parsed document for execution.
fn operation_type(request: &mut async_graphql::Request) -> &'static str {
    use async_graphql::parser::types::{DocumentOperations, OperationType};
    let name = request.operation_name.clone();
    let Ok(document) = request.parsed_query() else {
        return "invalid";
    };
    let operation = match (&document.operations, name.as_deref()) {
        (DocumentOperations::Single(op), _) => Some(&op.node),
        (DocumentOperations::Multiple(ops), Some(name)) => ops.get(name).map(|op| &op.node),
        (DocumentOperations::Multiple(ops), None) if ops.len() == 1 => ops.values().next().map(|op| &op.node),
        (DocumentOperations::Multiple(_), None) => None,
    };
    match operation.map(|op| op.ty) {
        Some(OperationType::Query) => "query",
        Some(OperationType::Mutation) => "mutation",
        Some(OperationType::Subscription) => "subscription",
        None => "invalid",
    }
}

/// GraphiQL, or a subscription when the request asks for a WebSocket upgrade (clients
/// that use one URL for everything).
async fn graphql_get(State(state): State<AppState>, request: Request) -> Result<Response, ApiError> {
    let upgrade = request
        .headers()
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    if upgrade {
        return subscribe(state, request).await;
    }
    Ok(Html(state.inner.graphiql.clone()).into_response())
}

async fn graphql_ws(State(state): State<AppState>, request: Request) -> Result<Response, ApiError> {
    subscribe(state, request).await
}

/// Upgrades to a GraphQL WebSocket. With tokens configured the token comes from the
/// upgrade request's `Authorization` header (which must then be valid) or, as browsers
/// cannot set that header, from the `connection_init` payload: `{"Authorization":
/// "Bearer <token>"}` or `{"token": "<token>"}`; without either the connection is closed
/// after `connection_init`.
async fn subscribe(state: AppState, request: Request) -> Result<Response, ApiError> {
    let (mut parts, _body) = request.into_parts();
    let from_header = match parts.headers.get(header::AUTHORIZATION) {
        Some(_) => Some(state.authenticate(&parts.headers)?),
        None if !state.inner.config.requires_tokens() => Some(Access::Local),
        None => None,
    };
    let protocol = GraphQLProtocol::from_request_parts(&mut parts, &state).await.map_err(|_| {
        ApiError::BadRequest("Sec-WebSocket-Protocol must name graphql-transport-ws (or graphql-ws)".into())
    })?;
    let upgrade = WebSocketUpgrade::from_request_parts(&mut parts, &state)
        .await
        .map_err(|rejection| ApiError::BadRequest(rejection.body_text()))?;
    let mut data = Data::default();
    let authenticated = from_header.is_some();
    if let Some(access) = from_header {
        data.insert(access);
    }
    let schema = state.inner.schema.clone();
    let metrics = Arc::clone(&state.inner.metrics);
    Ok(upgrade
        .protocols(ALL_WEBSOCKET_PROTOCOLS)
        .on_upgrade(move |socket| async move {
            metrics.websocket(1);
            GraphQLWebSocket::new(socket, schema, protocol)
                .with_data(data)
                .on_connection_init(move |payload| async move {
                    let mut data = Data::default();
                    if !authenticated {
                        let access = init_access(&state, &payload).map_err(|e| {
                            tracing::info!(error = %e, "subscription refused: no valid token");
                            async_graphql::Error::new("missing or unknown bearer token")
                        })?;
                        data.insert(access);
                    }
                    Ok(data)
                })
                .serve()
                .await;
            metrics.websocket(-1);
        })
        .into_response())
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn operation_types_are_read_from_the_document() {
        let mut q = async_graphql::Request::new("{ a }");
        assert_eq!(operation_type(&mut q), "query");
        let mut m = async_graphql::Request::new("mutation A { a } query B { b }").operation_name("A");
        assert_eq!(operation_type(&mut m), "mutation");
        let mut bad = async_graphql::Request::new("{");
        assert_eq!(operation_type(&mut bad), "invalid");
    }
}
