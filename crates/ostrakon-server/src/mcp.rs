//! The Model Context Protocol on `/mcp` (streamable HTTP, [`ostrakon_mcp::http_service`]):
//! each request is authenticated like a GraphQL one and given its [`Scope`] — the
//! namespace named by `?namespace=` or the `Ostrakon-Namespace` header, else the token's one
//! namespace, else (without tokens) `default` — before the MCP service sees it. A token
//! that may not read the namespace is refused with HTTP 403 before anything runs; what it
//! may not write is refused by GraphQL, as a tool error `FORBIDDEN`. Tool calls run
//! through [`AppState::execute`]: the same permits, deadline and response limit as
//! `/graphql`.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use futures_util::future::BoxFuture;
use ostrakon_graphql::{Access, Mode, code};
use ostrakon_mcp::{Runner, Scope, error_response};

use crate::{error::ApiError, state::AppState};

/// The namespace of a connection that names none and has no token to choose by.
pub const DEFAULT_NAMESPACE: &str = "default";

/// Runs the tools' GraphQL through the server's [`AppState::execute`].
struct ServerRunner(AppState);

impl Runner for ServerRunner {
    fn run(&self, request: async_graphql::Request) -> BoxFuture<'static, async_graphql::Response> {
        let state = self.0.clone();
        Box::pin(async move {
            match state.execute(request).await {
                Ok((operation, Ok(response))) => {
                    let mut counted = ByteCount(0);
                    let bytes = serde_json::to_writer(&mut counted, &response).map_or(0, |()| counted.0);
                    match state.check_response_size(operation, bytes) {
                        Ok(()) => response,
                        Err(message) => error_response(code::LIMIT_EXCEEDED, message),
                    }
                }
                Ok((_, Err((code, message)))) => error_response(code, message),
                Err(error) => error_response(error.code(), error.to_string()),
            }
        })
    }
}

/// A writer that only counts what is written: a response's size without a copy of it
/// (rmcp serializes the answer itself).
struct ByteCount(usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl AppState {
    /// The MCP tools' [`Runner`] over this state: each call runs through
    /// `AppState::execute` and the response limit, as on `/mcp` (`ostrakon mcp` serves it
    /// over stdio).
    pub fn mcp_runner(&self) -> Arc<dyn Runner> {
        Arc::new(ServerRunner(self.clone()))
    }
}

/// The MCP service with its scope check in front, to mount at `/mcp`.
pub(crate) fn service(state: &AppState) -> axum::routing::MethodRouter<AppState> {
    let runner = state.mcp_runner();
    let limits = ostrakon_mcp::HttpLimits {
        max_body_bytes: state.inner.config.max_body_bytes,
        stop: state.inner.stop.clone(),
    };
    let mcp = ostrakon_mcp::http_service(runner, limits);
    axum::routing::any_service(mcp).layer(axum::middleware::from_fn_with_state(state.clone(), scope))
}

/// Authenticates the request and attaches its [`Scope`].
async fn scope(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let access = state.authenticate(request.headers())?;
    let asked = request
        .uri()
        .query()
        .and_then(|q| {
            serde_urlencoded::from_str::<Vec<(String, String)>>(q)
                .ok()?
                .into_iter()
                .find_map(|(k, v)| (k == "namespace").then_some(v))
        })
        .or_else(|| {
            request.headers().get("ostrakon-namespace").and_then(|v| v.to_str().ok()).map(str::to_owned)
        });
    let namespace = match (asked, &access) {
        (Some(ns), _) => ns,
        (None, Access::Token { grants, .. }) => {
            let mut named = grants.keys().filter(|k| *k != "*");
            match (named.next(), named.next(), grants.contains_key("*")) {
                (Some(only), None, false) => only.clone(),
                _ => {
                    return Err(ApiError::BadRequest(
                        "this token may use several namespaces: name one, /mcp?namespace=NAME or a \
                         Ostrakon-Namespace header"
                            .into(),
                    ));
                }
            }
        }
        (None, _) => DEFAULT_NAMESPACE.to_owned(),
    };
    if !access.allows(&namespace, Mode::Read) {
        return Err(ApiError::Forbidden("this token may not use that namespace"));
    }
    request.extensions_mut().insert(Scope { namespace, access });
    let closing = request.method() == axum::http::Method::DELETE;
    let mut response = next.run(request).await;
    // The transport answers a session's close with 202 Accepted; the MCP clients (the
    // Python SDK's among them) expect 200 or 204 and log a failed close otherwise. The
    // session is closed by then: say so.
    if closing && response.status() == axum::http::StatusCode::ACCEPTED {
        *response.status_mut() = axum::http::StatusCode::NO_CONTENT;
        *response.body_mut() = axum::body::Body::empty();
    }
    Ok(response)
}
