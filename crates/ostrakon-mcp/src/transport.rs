//! The streamable-HTTP transport, as a tower service the server mounts at `/mcp`, and
//! the error response a transport answers with before any tool runs.

use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::runner::Runner;
use crate::server::McpServer;

/// The limits of the HTTP transport.
#[derive(Clone, Debug)]
pub struct HttpLimits {
    /// The largest request body accepted.
    pub max_body_bytes: usize,
    /// Cancelled when the server stops: every session ends.
    pub stop: CancellationToken,
}

/// The streamable-HTTP transport as a tower service, to mount at `/mcp`. The mounting
/// server authenticates each request, checks its `Host` and `Origin`, and puts its
/// [`Scope`](crate::runner::Scope) in the request's extensions; a request without one gets a tool error
/// `FORBIDDEN` on every call. The service's own Host check is off (the server's rules
/// apply, which allow other hosts when tokens are required).
pub fn http_service(
    runner: Arc<dyn Runner>,
    limits: HttpLimits,
) -> StreamableHttpService<McpServer, LocalSessionManager> {
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_max_request_body_bytes(limits.max_body_bytes)
        .with_cancellation_token(limits.stop)
        .with_json_response(true);
    StreamableHttpService::new(
        move || Ok(McpServer::per_request(Arc::clone(&runner))),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}

/// A GraphQL response carrying one error with `code`.
pub fn error_response(code: &str, message: String) -> async_graphql::Response {
    let mut error = async_graphql::ServerError::new(message, None);
    let mut extensions = async_graphql::ErrorExtensionValues::default();
    extensions.set("code", code);
    error.extensions = Some(extensions);
    async_graphql::Response::from_errors(vec![error])
}
