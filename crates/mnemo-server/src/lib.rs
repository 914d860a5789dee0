//! Mnemo's HTTP server: GraphQL over POST `/graphql`, GraphiQL on GET `/graphql`,
//! subscriptions over WebSocket (graphql-transport-ws) on `/graphql/ws` (and on
//! `/graphql` itself for an upgrade request), SPARQL 1.1 on `/sparql` (see the `sparql`
//! module), `/healthz` and `/metrics`. It checks
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
//!
//! Browsers: any page a user opens can send requests to a server on their machine. So a
//! GraphQL POST must say `Content-Type: application/json` (which a page can only send to
//! another origin after a CORS preflight, which this server never grants); a request
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
mod config;
mod error;
mod mcp;
mod metrics;
mod sparql;

use std::future::Future;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use async_graphql::Data;
use async_graphql::http::{ALL_WEBSOCKET_PROTOCOLS, WebSocketProtocols, WsMessage};
use axum::Router;
use axum::body::Bytes;
use axum::extract::ws::{CloseFrame, Message};
use axum::extract::{
    DefaultBodyLimit, FromRequest, FromRequestParts, MatchedPath, Request, State, WebSocketUpgrade,
};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures_util::{SinkExt as _, StreamExt as _, future::ready};
use mnemo_engine::{Interrupt, Store};
use mnemo_graphql::{Access, MnemoSchema, code};

pub use config::{
    Config, ConfigError, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_MAX_RUNNING_REQUESTS,
    DEFAULT_REQUEST_TIMEOUT, MAX_REQUEST_TIMEOUT_SECONDS, MIN_TOKEN_LEN, Token,
};
pub use error::ApiError;
pub use mcp::DEFAULT_NAMESPACE as DEFAULT_MCP_NAMESPACE;
pub use metrics::Metrics;

/// What every handler shares: the store, the schema over it, the configuration and the
/// metrics. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<Store>,
    graphql: mnemo_graphql::Executor,
    config: Config,
    metrics: Arc<Metrics>,
    /// One permit per GraphQL request working (`max_running_requests`).
    permits: Arc<tokio::sync::Semaphore>,
    /// Fires when the server stops: every request's interrupt is its child.
    stopping: Interrupt,
    /// SPARQL queries and the projections they run on, shared with the schema's `sparql`.
    sparql: Arc<mnemo_rdf::Sparql>,
    /// Cancelled when the server stops: ends the MCP sessions.
    stop: tokio_util::sync::CancellationToken,
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
        // One answer limit for `/sparql` and GraphQL's `sparql`: the response limit.
        let sparql = Arc::new(mnemo_rdf::Sparql::new(mnemo_rdf::SparqlLimits {
            max_statements: config.sparql_max_statements,
            max_memory: config.sparql_max_memory_bytes,
            max_answer_bytes: config.max_response_bytes,
        }));
        let graphql = mnemo_graphql::Executor::new(Arc::clone(&store), config.limits, |schema| {
            schema.data(Arc::clone(&sparql))
        });
        let stopping = Interrupt::new(None);
        let permits = Arc::new(tokio::sync::Semaphore::new(config.max_running_requests));
        AppState {
            inner: Arc::new(Inner {
                store,
                graphql,
                config,
                metrics,
                permits,
                stopping,
                sparql,
                stop: tokio_util::sync::CancellationToken::new(),
            }),
        }
    }

    /// Stops the work of every request in flight (at the engine's next check); they answer
    /// `LIMIT_EXCEEDED`. [`serve`] calls it when its shutdown signal fires.
    pub fn stop_requests(&self) {
        self.inner.stopping.cancel();
        self.inner.stop.cancel();
    }

    /// Refuses what a browser page of another site could send: a `Host` that is not a
    /// loopback name when serving without tokens (DNS rebinding), and an `Origin` that is
    /// neither this server's nor allowed.
    fn check_browser(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let host = headers.get(header::HOST).map(|h| h.to_str().unwrap_or("\u{fffd}"));
        if !self.inner.config.requires_tokens()
            && let Some(host) = host
            && !is_loopback_host(host)
        {
            return Err(ApiError::Refused(format!(
                "Host {host:?} is not a loopback name or address; without tokens this server only answers \
                 requests addressed to this machine"
            )));
        }
        let Some(origin) = headers.get(header::ORIGIN) else {
            // Browsers always send an Origin on cross-site POSTs and WebSocket upgrades; a
            // cross-site GET without one (an image or a link of another site's page, which
            // would run a SPARQL query) still says where it came from.
            if headers.get("sec-fetch-site").is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"cross-site"))
            {
                return Err(ApiError::Refused(
                    "a request from another site's page (Sec-Fetch-Site: cross-site) without an allowed Origin".into(),
                ));
            }
            return Ok(());
        };
        let origin = origin.to_str().unwrap_or("\u{fffd}");
        let allowed = match config::normalize_origin(origin) {
            // `null` (sandboxed frames, local files) or something no browser sends.
            None => false,
            Some(normal) => {
                let same = host.is_some_and(|h| {
                    normal
                        .split_once("://")
                        .is_some_and(|(_, authority)| authority.eq_ignore_ascii_case(h.trim()))
                });
                same || self.inner.config.allowed_origins.contains(&normal)
            }
        };
        if allowed {
            Ok(())
        } else {
            Err(ApiError::Refused(format!(
                "Origin {origin:?} may not call this server; add it to `allowed_origins` in the config"
            )))
        }
    }

    /// A permit to work, waited for within the request's deadline; the message of
    /// `LIMIT_EXCEEDED` when none came in time.
    async fn permit(&self) -> Result<Result<tokio::sync::OwnedSemaphorePermit, String>, ApiError> {
        let timeout = self.inner.config.request_timeout;
        match tokio::time::timeout(timeout, Arc::clone(&self.inner.permits).acquire_owned()).await {
            Ok(Ok(permit)) => Ok(Ok(permit)),
            Ok(Err(_)) => Err(ApiError::Internal("the request permits are closed".into())),
            Err(_) => Ok(Err(format!(
                "limit exceeded: {} requests were working for the whole {} s this one could wait",
                self.inner.config.max_running_requests,
                timeout.as_secs_f64()
            ))),
        }
    }

    /// The store.
    pub fn store(&self) -> &Arc<Store> {
        &self.inner.store
    }

    /// The GraphQL schema requests run against (through an [`mnemo_graphql::Executor`]).
    pub fn schema(&self) -> &MnemoSchema {
        self.inner.graphql.schema()
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
        .route("/sparql", get(sparql::sparql_get).post(sparql::sparql_post))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/mcp", mcp::service(&state))
        .route("/ui", get(|| async { axum::response::Redirect::permanent("/ui/") }))
        .route("/ui/", get(assets::ui_index))
        .route("/ui/{file}", get(assets::ui_file))
        .route("/assets/graphiql/{file}", get(assets::graphiql_file))
        .route_layer(middleware::from_fn_with_state(state.clone(), guard))
        .route_layer(middleware::from_fn_with_state(state.clone(), track))
        .layer(DefaultBodyLimit::max(max_body))
        .with_state(state)
}

/// Serves [`app`] on `listener` until `shutdown` completes, then stops accepting
/// connections, stops the work of the requests in flight (they answer `LIMIT_EXCEEDED`
/// at the engine's next check) and returns once they have answered. Writes are durable
/// when they are acknowledged, so nothing acknowledged is lost however the process then
/// ends.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let sleeper = tokio::spawn(maintain_periodically(state.inner.store.clone(), MAINTAIN_EVERY));
    let stopping = state.clone();
    let shutdown = async move {
        shutdown.await;
        stopping.stop_requests();
    };
    let served = axum::serve(listener, app(state)).with_graceful_shutdown(shutdown).await;
    sleeper.abort();
    served
}

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

/// Refuses cross-site and rebinding requests before anything else runs.
async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Result<Response, ApiError> {
    state.check_browser(request.headers())?;
    Ok(next.run(request).await)
}

/// Whether a `Host` header names this machine: `localhost` (or a name under it), or a
/// loopback address, with any port.
fn is_loopback_host(host: &str) -> bool {
    let host = host.trim();
    let name = if let Some(rest) = host.strip_prefix('[') {
        // [v6]:port
        match rest.split_once(']') {
            Some((addr, _)) => addr,
            None => return false,
        }
    } else {
        host.rsplit_once(':')
            .map_or(host, |(name, port)| if port.chars().all(|c| c.is_ascii_digit()) { name } else { host })
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// How much longer than its deadline a mutation's answer is waited for: its writes are
/// never interrupted, and its receipts must reach the client.
const MUTATION_GRACE: std::time::Duration = std::time::Duration::from_secs(60);

/// Cancels a request's work when dropped: when the client goes away, axum drops the
/// handler, and the work on the blocking pool stops at its next check.
struct CancelOnDrop(Interrupt);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// Counts a request's work as running until it ends, however it ends.
struct Running(Arc<Metrics>);

impl Running {
    fn start(metrics: Arc<Metrics>) -> Self {
        metrics.running(1);
        Running(metrics)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.running(-1);
    }
}

/// A GraphQL-shaped error answer with HTTP 200, as resolvers' errors are.
fn graphql_error(code: &str, message: String) -> Response {
    let body = serde_json::json!({ "data": null, "errors": [{ "message": message, "extensions": { "code": code } }] });
    axum::Json(body).into_response()
}

/// `ok` for probes. With `?indexing`, a JSON answer that adds how far the open
/// namespaces' search indexes are, summed over them: none is named, as `/healthz` needs
/// no token (`/metrics` has them one by one).
async fn healthz(State(state): State<AppState>, uri: axum::http::Uri) -> Response {
    if !uri.query().is_some_and(|q| q.split('&').any(|p| p == "indexing" || p.starts_with("indexing="))) {
        return "ok\n".into_response();
    }
    let store = &state.inner.store;
    let (mut open, mut behind, mut lag, mut to_embed, mut embedded) = (0u64, 0u64, 0u64, 0u64, 0u64);
    for ns in store.namespaces() {
        let Some(progress) = store.search_progress(&ns) else { continue };
        let batches = progress.latest.0.saturating_sub(progress.indexed.0);
        open += 1;
        behind += u64::from(batches > 0);
        lag = lag.saturating_add(batches);
        to_embed = to_embed.saturating_add(progress.to_embed.saturating_sub(progress.embedded));
        embedded = embedded.saturating_add(progress.embedded);
    }
    axum::Json(serde_json::json!({
        "status": "ok",
        "indexing": {
            "openNamespaces": open,
            "namespacesBehind": behind,
            "lagBatches": lag,
            "textsToEmbed": to_embed,
            "textsEmbedded": embedded,
        }
    }))
    .into_response()
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
    // A page of another site can send text/plain or form bodies without asking; it can
    // send JSON only after a CORS preflight, which this server never grants.
    let content_type = request.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
    let is_json = content_type
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !is_json {
        return Err(ApiError::Refused(format!(
            "a GraphQL POST must have Content-Type: application/json (got {})",
            content_type.map_or_else(|| "none".to_owned(), |c| format!("{c:?}"))
        )));
    }
    let body = Bytes::from_request(request, &state).await.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::BodyTooLarge { limit: state.inner.config.max_body_bytes }
        } else {
            ApiError::BadRequest(rejection.body_text())
        }
    })?;
    let request: async_graphql::Request = serde_json::from_slice(&body)
        .map_err(|e| ApiError::BadRequest(format!("the body is not a GraphQL request: {e}")))?;
    let (operation, executed) = state.execute(request.data(access)).await?;
    let response = match executed {
        Ok(response) => response,
        Err((code, message)) => return Ok(graphql_error(code, message)),
    };
    let body = serde_json::to_vec(&response)
        .map_err(|e| ApiError::Internal(format!("cannot serialize the response: {e}")))?;
    if let Err(message) = state.check_response_size(operation, body.len()) {
        return Ok(graphql_error(code::LIMIT_EXCEEDED, message));
    }
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

impl AppState {
    /// Runs a GraphQL request (which carries its caller's [`Access`]) as every transport
    /// does: under the request deadline, with a permit, stopped when the server stops or
    /// the caller goes away (this future is dropped), counted in the metrics. Returns the
    /// operation's type and its response, or the code and message of a request that could
    /// not run (`LIMIT_EXCEEDED`: no permit in time, or past its deadline).
    async fn execute(
        &self,
        request: async_graphql::Request,
    ) -> Result<(&'static str, Result<async_graphql::Response, (&'static str, String)>), ApiError> {
        let state = self;
        let (operation, point) = operation_type(&request);
        let graphql = state.inner.graphql.clone();
        let runtime = tokio::runtime::Handle::current();
        let timeout = state.inner.config.request_timeout;
        let interrupt = state.inner.stopping.child(Some(Instant::now() + timeout));
        let _cancel_when_dropped = CancelOnDrop(interrupt.clone());
        // Work that was stopped keeps its permit until it reaches its next check, so stopped
        // requests cannot pile up on the cores; a request waits its turn within its deadline.
        let permit = match state.permit().await? {
            Ok(permit) => permit,
            Err(busy) => {
                state.inner.metrics.operation_failed(operation, code::LIMIT_EXCEEDED);
                return Ok((operation, Err((code::LIMIT_EXCEEDED, busy))));
            }
        };
        let running = Running::start(Arc::clone(&state.inner.metrics));
        let execute = InScope { interrupt, work: Box::pin(async move { graphql.execute(request).await }) };
        // A point read (one entity or slot, a small document) runs here: it costs less than
        // handing it to another thread and back (measured: 4.5 k/s against 3.7 k/s at 1 client,
        // 14.2 k/s against 12.4 k/s at 8, on 2 cores). Everything else — writes that wait for
        // their fdatasync, searches, listings — runs on the blocking pool so the async workers
        // keep serving other connections, and concurrent writes share one group commit.
        // (Running every query on the worker through `block_in_place` was measured slower:
        // 6.7 k/s against 9.7 k/s at 8 clients.)
        let executed =
            if point {
                let _running = (running, permit);
                tokio::time::timeout(timeout, execute).await.ok()
            } else {
                let work = tokio::task::spawn_blocking(move || {
                    let _running = (running, permit);
                    runtime.block_on(execute)
                });
                // A mutation may have written before its deadline: its answer (the receipts) is
                // always returned, after its reads stop at the deadline; only queries are cut off.
                let hard_limit = if operation == "mutation" { MUTATION_GRACE + timeout } else { timeout };
                match tokio::time::timeout(hard_limit, work).await {
                    Ok(joined) => Some(joined.map_err(|e| {
                        ApiError::Internal(format!("GraphQL execution did not complete: {e}"))
                    })?),
                    Err(_) => None,
                }
            };
        let Some(response) = executed else {
            // The work stops at its next check (the interrupt fired with the deadline); the
            // client is not kept waiting for it.
            tracing::warn!(
                seconds = timeout.as_secs_f64(),
                "request timed out; its work stops at its next check"
            );
            state.inner.metrics.operation_failed(operation, code::LIMIT_EXCEEDED);
            return Ok((
                operation,
                Err((
                    code::LIMIT_EXCEEDED,
                    format!("limit exceeded: the request ran longer than {} s", timeout.as_secs_f64()),
                )),
            ));
        };
        state.inner.metrics.operation(operation, &response);
        Ok((operation, Ok(response)))
    }

    /// A query's answer larger than `max_response_bytes` is refused (the message says
    /// so); a mutation's always comes back, since its writes are made.
    fn check_response_size(&self, operation: &str, bytes: usize) -> Result<(), String> {
        let max = self.inner.config.max_response_bytes;
        if bytes > max && operation != "mutation" {
            return Err(format!(
                "limit exceeded in `response`: {bytes} bytes (at most {max}); ask for smaller pages or fewer fields"
            ));
        }
        Ok(())
    }
}

/// A future polled with an interrupt in force: the engine's checks inside consult it,
/// whichever thread polls it.
struct InScope<F> {
    interrupt: Interrupt,
    work: std::pin::Pin<Box<F>>,
}

impl<F: Future> Future for InScope<F> {
    type Output = F::Output;
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<F::Output> {
        let this = &mut *self;
        let work = &mut this.work;
        this.interrupt.run(|| work.as_mut().poll(cx))
    }
}

/// The type of the operation a request will run, for the metrics, and whether it is a
/// point read ([`mnemo_graphql::is_point_read`]). The document is looked at where the
/// parse cache keeps it; the request takes its own copy from there when it runs.
fn operation_type(request: &async_graphql::Request) -> (&'static str, bool) {
    use async_graphql::parser::types::OperationType;
    let Ok(document) = mnemo_graphql::parsed_document(&request.query) else {
        return ("invalid", false);
    };
    let name = request.operation_name.as_deref();
    let kind = match mnemo_graphql::selected_operation(&document, name).map(|op| op.ty) {
        Some(OperationType::Query) => "query",
        Some(OperationType::Mutation) => "mutation",
        Some(OperationType::Subscription) => "subscription",
        None => "invalid",
    };
    (kind, mnemo_graphql::is_point_read(&document, name))
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
    Ok(assets::graphiql_page())
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
    data.insert(mnemo_graphql::SubscriptionsOnly);
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn operation_types_are_read_from_the_document() {
        let q = async_graphql::Request::new("{ a }");
        assert_eq!(operation_type(&q).0, "query");
        let m = async_graphql::Request::new("mutation A { a } query B { b }").operation_name("A");
        assert_eq!(operation_type(&m).0, "mutation");
        let bad = async_graphql::Request::new("{");
        assert_eq!(operation_type(&bad).0, "invalid");
    }
}
