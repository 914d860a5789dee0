//! Ostrakon's HTTP server: GraphQL over POST `/graphql`, GraphiQL on GET `/graphql`,
//! subscriptions over WebSocket (graphql-transport-ws) on `/graphql/ws` (and on
//! `/graphql` itself for an upgrade request), SPARQL 1.1 on `/sparql` (see the `sparql`
//! module), `/livez`, `/readyz` (and `/healthz`, its alias) and `/metrics`. It checks
//! tokens, enforces the body limit and counts requests; everything else is the GraphQL
//! schema's. This is the only crate that knows axum: [`app`] builds the router over an
//! [`AppState`], [`serve`] runs it on a listener until a shutdown signal.
//!
//! Access: with no tokens configured every request is the local user ([`Access::Local`](ostrakon_graphql::Access::Local)).
//! With tokens, a request without a valid `Authorization: Bearer <token>` is answered
//! HTTP 401 with code `FORBIDDEN` before any GraphQL runs; a valid token reaches the
//! schema as [`Access::Token`](ostrakon_graphql::Access::Token), and naming a namespace outside its grants is a GraphQL
//! error with code `FORBIDDEN` (HTTP 200, like every GraphQL error). `/metrics` names
//! every namespace, so with tokens it needs one granted `*`, as do the probes' details
//! (`/readyz?indexing`, `/readyz?extraction`); the probes themselves and the GraphiQL page
//! are open.
//!
//! Browsers: any page a user opens can send requests to a server on their machine. So a
//! GraphQL POST must say `Content-Type: application/json` (which a page can only send to
//! another origin after a CORS preflight, which this server grants only to the origins of
//! `allowed_origins`: see the `cors` module); a request
//! whose `Origin` is neither the server's own nor in `allowed_origins` is refused, as is
//! one without an `Origin` that its browser marks `Sec-Fetch-Site: cross-site` (a GET of
//! `/sparql` from another site's image or link); and
//! without tokens (loopback mode) a `Host` that is not a loopback name or address is
//! refused, which defeats DNS rebinding. Refusals are HTTP 403 `FORBIDDEN` and run
//! nothing.
//!
//! Cost: every GraphQL request runs under a deadline (`request_timeout_seconds`); past it,
//! or when the client goes away, or when the server stops, its work stops at the engine's
//! next check and the client gets `LIMIT_EXCEEDED`. A query's response larger than
//! `max_response_bytes` is replaced by `LIMIT_EXCEEDED`; a mutation's answer always comes
//! back, since its writes are made. Over a WebSocket only subscriptions are served.
#![deny(missing_docs)]

mod assets;
mod cluster;
mod config;
mod cors;
mod error;
mod execute;
mod extraction;
mod guard;
mod health;
mod mcp;
mod metrics;
mod persisted;
mod sparql;
mod state;
mod ws;

pub use cluster::{ClusterSettings, DEFAULT_MAX_LAG};
pub use config::{
    Config, ConfigError, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_MAX_RUNNING_REQUESTS,
    DEFAULT_REQUEST_TIMEOUT, MAX_REQUEST_TIMEOUT_SECONDS, MIN_TOKEN_LEN, Token,
};
pub use error::ApiError;
pub use mcp::DEFAULT_NAMESPACE as DEFAULT_MCP_NAMESPACE;
pub use metrics::Metrics;
pub use persisted::{CACHED_BYTES, DEFAULT_CACHED_DOCUMENTS, PersistedSettings, read_allow_list};
pub use state::AppState;

use crate::execute::graphql_get;
use crate::execute::graphql_post;
use crate::ws::graphql_ws;
use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::{HeaderMap, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use ostrakon_engine::Store;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

/// The router: every route of the server over `state`.
pub fn app(state: AppState) -> Router {
    let max_body = state.inner.config.max_body_bytes;
    let state_origins = state.inner.config.allowed_origins.clone();
    let cors = cors::layer(&state_origins);
    let router = Router::new()
        .route("/graphql", get(graphql_get).post(graphql_post))
        .route("/graphql/ws", get(graphql_ws))
        .route("/sparql", get(sparql::sparql_get).post(sparql::sparql_post))
        .route("/sparql/{namespace}", get(sparql::sparql_get_in).post(sparql::sparql_post_in))
        .route("/livez", get(health::livez))
        .route("/readyz", get(health::readyz))
        .route("/healthz", get(health::readyz))
        .route("/metrics", get(metrics))
        .route("/mcp", mcp::service(&state))
        .route("/ui", get(|| async { axum::response::Redirect::permanent("/ui/") }))
        .route("/ui/", get(assets::ui_index))
        .route("/ui/{file}", get(assets::ui_file))
        .route("/favicon.ico", get(assets::favicon))
        .route("/assets/graphiql/{file}", get(assets::graphiql_file))
        .route_layer(middleware::from_fn_with_state(state.clone(), guard::guard))
        .route_layer(middleware::from_fn_with_state(state.clone(), track))
        .layer(DefaultBodyLimit::max(max_body))
        .with_state(state);
    // Outermost: a browser's preflight is answered before routing (whose OPTIONS is 405).
    let allowed = state_origins;
    match cors {
        Some(cors) => router.layer(cors).layer(middleware::from_fn(move |request, next| {
            cors::refuse_other_preflights(allowed.clone(), request, next)
        })),
        None => router,
    }
}

/// Serves [`app`] on `listener` until `shutdown` completes, then stops accepting
/// connections, lets the requests in flight finish for [`FINISH_WITHIN`], stops the work
/// of those still running (they answer `LIMIT_EXCEEDED` at the engine's next check) and
/// returns once they have answered. Writes are durable
/// when they are acknowledged, so nothing acknowledged is lost however the process then
/// ends.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let sleeper = tokio::spawn(maintain_periodically(state.inner.store.clone(), MAINTAIN_EVERY));
    let extractor = state.inner.extractor.clone().map(|extractor| {
        tokio::spawn(extractor.run(state.inner.store.clone(), state.inner.stop.child_token()))
    });
    let stopping = state.clone();
    let shutdown = async move {
        shutdown.await;
        // Planned maintenance: no new connection from now on (the listener closes, so a
        // client goes to another node), while the requests in flight finish; those still
        // working after a moment are stopped.
        stopping.begin_stopping();
        tokio::spawn(async move {
            tokio::time::sleep(FINISH_WITHIN).await;
            stopping.stop_requests();
        });
    };
    let served = axum::serve(listener, app(state)).with_graceful_shutdown(shutdown).await;
    sleeper.abort();
    if let Some(extractor) = extractor {
        extractor.abort();
    }
    served
}

/// How long requests in flight get to finish on their own once the server is told to stop,
/// before their work is stopped (they then answer `LIMIT_EXCEEDED`).
pub const FINISH_WITHIN: std::time::Duration = std::time::Duration::from_secs(3);

/// How often background upkeep runs ([`maintain_periodically`] under [`serve`]).
pub const MAINTAIN_EVERY: std::time::Duration = std::time::Duration::from_secs(30);

/// Runs the store's background upkeep ([`Store::maintain`]: due intentions, segments of
/// threads that moved on, idle consolidation) every `check`, off the async threads, and
/// logs what it recorded. Runs until dropped; `serve` runs it.
pub async fn maintain_periodically(store: Arc<Store>, check: std::time::Duration) {
    let mut ticks = tokio::time::interval(check);
    loop {
        ticks.tick().await;
        let store = Arc::clone(&store);
        let Ok(report) = tokio::task::spawn_blocking(move || store.maintain(store.now())).await else {
            continue;
        };
        for (ns, n) in &report.fired {
            tracing::info!(namespace = %ns, fired = n, "intentions fired");
        }
        for (ns, n) in &report.segments_closed {
            tracing::info!(namespace = %ns, closed = n, "segments closed");
        }
        for (ns, done) in &report.consolidated {
            tracing::info!(
                namespace = %ns,
                merged = done.merged.len(),
                corroborated = done.corroborated.len(),
                turned_dormant = done.dormant.len(),
                "consolidated while idle"
            );
        }
        for (ns, why) in &report.failed {
            tracing::warn!(namespace = %ns, error = %why, "background upkeep failed");
        }
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

/// The metrics name every namespace, so with tokens configured only a token granted
/// `*` may read them.
async fn metrics(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    state.operator(&headers, "reading /metrics needs a token granted \"*\"")?;
    // Off the async threads: on a cluster, rendering asks JetStream for its streams' sizes.
    let (metrics, store) = (Arc::clone(&state.inner.metrics), Arc::clone(&state.inner.store));
    let mut body = tokio::task::spawn_blocking(move || metrics.render(&store))
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    if let Some(extractor) = &state.inner.extractor {
        extraction::render_metrics(&mut body, &extractor.status().snapshot());
    }
    Ok(([(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], body).into_response())
}
