//! Running a GraphQL request: its access and deadline, cancellation when the client goes
//! away, the response limit, and the GET and POST handlers.

use crate::state::AppState;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use crate::error::ApiError;
use crate::metrics::Metrics;
use crate::ws::subscribe;
use axum::body::Bytes;
use axum::extract::{FromRequest, Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use ostrakon_engine::Interrupt;
use ostrakon_graphql::code;

/// How much longer than its deadline a mutation's answer is waited for: its writes are
/// never interrupted, and its receipts must reach the client.
const MUTATION_GRACE: std::time::Duration = std::time::Duration::from_secs(60);

/// Cancels a request's work when dropped: when the client goes away, axum drops the
/// handler, and the work on the blocking pool stops at its next check.
pub(crate) struct CancelOnDrop(pub(crate) Interrupt);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// Counts a request's work as running until it ends, however it ends.
pub(crate) struct Running(Arc<Metrics>);

impl Running {
    pub(crate) fn start(metrics: Arc<Metrics>) -> Self {
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

pub(crate) async fn graphql_post(
    State(state): State<AppState>,
    request: Request,
) -> Result<Response, ApiError> {
    // Tokens first: an unauthenticated client should not get to have a body buffered.
    let access = state.authenticate(request.headers())?;
    // A page of another site can send text/plain or form bodies without asking; it can
    // send JSON only after a CORS preflight, granted only to `allowed_origins`.
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
    respond(&state, request, access, Method::Post).await
}

/// How a request came: a GET only reads.
#[derive(PartialEq)]
enum Method {
    Get,
    Post,
}

/// Runs a request that has been read and authenticated (a persisted query's hash
/// resolved first) and writes its response.
async fn respond(
    state: &AppState,
    mut request: async_graphql::Request,
    access: ostrakon_graphql::Access,
    method: Method,
) -> Result<Response, ApiError> {
    if let Err((code, message)) = state.inner.persisted.resolve(&mut request) {
        return Ok(graphql_error(code, message));
    }
    if method == Method::Get && matches!(operation_type(&request).0, "mutation" | "subscription") {
        return Err(ApiError::Coded {
            status: StatusCode::METHOD_NOT_ALLOWED,
            code: code::BAD_REQUEST,
            message: "a GET only reads: POST a mutation, and subscribe over /graphql/ws".into(),
        });
    }
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
    if unavailable(&response) {
        // The log's service cannot be reached: the same answer, as 503 so that HTTP
        // clients and proxies retry it as they retry an unavailable service.
        let headers = [(header::CONTENT_TYPE, "application/json"), (header::RETRY_AFTER, "1")];
        return Ok((StatusCode::SERVICE_UNAVAILABLE, headers, body).into_response());
    }
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

/// Whether an error of the response says the log is unavailable (`UNAVAILABLE`).
fn unavailable(response: &async_graphql::Response) -> bool {
    response.errors.iter().any(|e| {
        e.extensions
            .as_ref()
            .and_then(|x| x.get("code"))
            .is_some_and(|c| *c == async_graphql::Value::String(code::UNAVAILABLE.into()))
    })
}

impl AppState {
    /// Runs a GraphQL request (which carries its caller's [`Access`]) as every transport
    /// does: under the request deadline, with a permit, stopped when the server stops or
    /// the caller goes away (this future is dropped), counted in the metrics. Returns the
    /// operation's type and its response, or the code and message of a request that could
    /// not run (`LIMIT_EXCEEDED`: no permit in time, or past its deadline).
    pub(crate) async fn execute(
        &self,
        request: async_graphql::Request,
    ) -> Result<(&'static str, Result<async_graphql::Response, (&'static str, String)>), ApiError> {
        let state = self;
        let (operation, point) = operation_type(&request);
        // On a cluster even a point read may wait (for a batch another node wrote) and
        // reach the network: never on an async worker then.
        let point = point && !state.inner.store.shares_log();
        let graphql = state.inner.graphql.clone();
        let runtime = tokio::runtime::Handle::current();
        let timeout = state.inner.config.request_timeout;
        // A mutation is not stopped with the server: its writes are made whole and its
        // answer (the receipts) must reach the client, so only its deadline bounds it.
        let deadline = Some(Instant::now() + timeout);
        let interrupt = if operation == "mutation" {
            Interrupt::new(deadline)
        } else {
            state.inner.stopping.child(deadline)
        };
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
    pub(crate) fn check_response_size(&self, operation: &str, bytes: usize) -> Result<(), String> {
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
    pub(crate) interrupt: Interrupt,
    pub(crate) work: std::pin::Pin<Box<F>>,
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
/// point read ([`ostrakon_graphql::is_point_read`]). The document is looked at where the
/// parse cache keeps it; the request takes its own copy from there when it runs.
pub(crate) fn operation_type(request: &async_graphql::Request) -> (&'static str, bool) {
    use async_graphql::parser::types::OperationType;
    let Ok(document) = ostrakon_graphql::parsed_document(&request.query) else {
        return ("invalid", false);
    };
    let name = request.operation_name.as_deref();
    let kind = match ostrakon_graphql::selected_operation(&document, name).map(|op| op.ty) {
        Some(OperationType::Query) => "query",
        Some(OperationType::Mutation) => "mutation",
        Some(OperationType::Subscription) => "subscription",
        None => "invalid",
    };
    (kind, ostrakon_graphql::is_point_read(&document, name))
}

/// The parameters of a GraphQL GET (GraphQL over HTTP): `variables` and `extensions` are
/// JSON text.
#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct GetParams {
    query: Option<String>,
    operation_name: Option<String>,
    variables: Option<String>,
    extensions: Option<String>,
}

/// A subscription when the request asks for a WebSocket upgrade (clients that use one URL
/// for everything); a query when the URL carries one (`?query=`, or a persisted query's
/// hash in `?extensions=`, as Apollo clients send them); else GraphiQL for a browser.
/// A GET never writes: a mutation must be POSTed.
pub(crate) async fn graphql_get(
    State(state): State<AppState>,
    request: Request,
) -> Result<Response, ApiError> {
    let upgrade = request
        .headers()
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    if upgrade {
        return subscribe(state, request).await;
    }
    let params: GetParams = match request.uri().query() {
        Some(text) => serde_urlencoded::from_str(text)
            .map_err(|e| ApiError::BadRequest(format!("the query string is not a GraphQL request: {e}")))?,
        None => GetParams::default(),
    };
    if params.query.is_none() && params.extensions.is_none() {
        let html = request
            .headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("text/html"));
        if html {
            return Ok(crate::assets::graphiql_page());
        }
        return Err(ApiError::BadRequest(
            "a GraphQL GET needs `query` (or a persisted query's `extensions`) in its query string".into(),
        ));
    }
    let access = state.authenticate(request.headers())?;
    let json = |name: &str, text: Option<String>| -> Result<Option<serde_json::Value>, ApiError> {
        text.map(|t| {
            serde_json::from_str(&t).map_err(|e| ApiError::BadRequest(format!("`{name}` is not JSON: {e}")))
        })
        .transpose()
    };
    let mut body = serde_json::Map::new();
    body.insert("query".into(), params.query.unwrap_or_default().into());
    if let Some(name) = params.operation_name {
        body.insert("operationName".into(), name.into());
    }
    if let Some(variables) = json("variables", params.variables)? {
        body.insert("variables".into(), variables);
    }
    if let Some(extensions) = json("extensions", params.extensions)? {
        body.insert("extensions".into(), extensions);
    }
    let request: async_graphql::Request = serde_json::from_value(serde_json::Value::Object(body))
        .map_err(|e| ApiError::BadRequest(format!("not a GraphQL request: {e}")))?;
    respond(&state, request, access, Method::Get).await
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
