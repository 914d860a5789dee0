//! The MCP server's state: its runner, its scope when fixed, and its tools.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;

use crate::runner::{Runner, Scope};

/// The MCP server: the tool list over a [`Runner`].
#[derive(Clone)]
pub struct McpServer {
    pub(crate) runner: Arc<dyn Runner>,
    /// The connection's scope when it is fixed (stdio); over HTTP it comes with each request.
    pub(crate) scope: Option<Scope>,
    pub(crate) tool_router: ToolRouter<McpServer>,
}
