//! The server at work: building it (the tools, their schemas compacted), serving stdio,
//! running each tool's operation in the connection's scope, and the protocol's handler.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt as _, tool_handler};
use serde_json::{Value, json};

use crate::reply::{answer, prune_nulls, tool_error};
use crate::runner::{Runner, Scope};
use crate::server::McpServer;
use crate::{compact, tools};

/// What the server tells a client about itself at `initialize`.
const INSTRUCTIONS: &str = "Ostrakon is a bitemporal memory. Record what you observe with `remember` (an \
episode: a message or an event, optionally with the entities and facts you extracted from it). Find what \
is relevant with `recall`, or get a ready prompt block with `context`. Facts have a valid time (when they \
hold in the world: validFrom/validTo) and a system time (when the memory learned them: knownAt). \
`facts_as_of` answers what was true at validAt as known at knownAt; `history` shows every version of one \
subject's predicate with why each is in force or not. Correct with `end_fact` (it stopped holding, or \
with `retract` it was never true), or a new fact in `remember` with `supersedes`. Times are RFC 3339 \
(2024-05-01T10:00:00Z), a date (2024-05-01) or a partial date (2024-05, 2024).";

impl McpServer {
    /// A server whose every tool acts in `scope` (stdio: one client, one namespace).
    pub fn local(runner: Arc<dyn Runner>, scope: Scope) -> McpServer {
        McpServer { runner, scope: Some(scope), tool_router: Self::router() }
    }

    /// A server that takes each request's [`Scope`] from the HTTP request (the
    /// [`http_service`]'s).
    pub(crate) fn per_request(runner: Arc<dyn Runner>) -> McpServer {
        McpServer { runner, scope: None, tool_router: Self::router() }
    }

    /// Every tool, with its input schema compacted (see [`compact`]).
    fn router() -> ToolRouter<McpServer> {
        let mut router = Self::tool_router() + Self::tier_router();
        for route in router.map.values_mut() {
            let mut schema = Value::Object((*route.attr.input_schema).clone());
            compact::compact(&mut schema);
            if let Value::Object(mut schema) = schema {
                // The draft is MCP's default (2020-12): saying so in every tool costs tokens.
                schema.remove("$schema");
                route.attr.input_schema = Arc::new(schema);
            }
        }
        router
    }

    /// Serves one client over stdin and stdout until it disconnects.
    pub async fn serve_stdio(self) -> std::io::Result<()> {
        let running = self.serve(rmcp::transport::stdio()).await.map_err(std::io::Error::other)?;
        running.waiting().await.map_err(std::io::Error::other)?;
        Ok(())
    }

    /// The scope of a call: the fixed one, or the one the HTTP transport attached.
    fn scope(&self, context: &RequestContext<RoleServer>) -> Option<Scope> {
        if let Some(scope) = &self.scope {
            return Some(scope.clone());
        }
        context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Scope>())
            .cloned()
    }

    /// Runs `document` with `variables` (plus the scope's namespace) and turns the answer
    /// into the tool's result: the data under the operation's one root field `result`, or
    /// a tool error with the GraphQL errors.
    pub(crate) async fn call(
        &self,
        context: &RequestContext<RoleServer>,
        document: &'static str,
        variables: Value,
    ) -> CallToolResult {
        self.call_shaped(context, document, variables, |_| {}).await
    }

    /// [`McpServer::call`], with `shape` applied to a successful answer.
    pub(crate) async fn call_shaped(
        &self,
        context: &RequestContext<RoleServer>,
        document: &'static str,
        variables: Value,
        shape: fn(&mut Value),
    ) -> CallToolResult {
        match self.run(context, document, variables).await {
            Ok(response) => answer(response, shape),
            Err(refused) => refused,
        }
    }

    /// Runs `document` in the connection's scope.
    async fn run(
        &self,
        context: &RequestContext<RoleServer>,
        document: &'static str,
        mut variables: Value,
    ) -> Result<async_graphql::Response, CallToolResult> {
        let Some(scope) = self.scope(context) else {
            return Err(tool_error(
                ostrakon_graphql::code::FORBIDDEN,
                "this connection has no namespace (the server sets one per connection)",
            ));
        };
        prune_nulls(&mut variables);
        if let Value::Object(map) = &mut variables {
            map.insert("namespace".into(), Value::String(scope.namespace));
        }
        let request = async_graphql::Request::new(document)
            .variables(async_graphql::Variables::from_json(variables))
            .data(scope.access);
        Ok(self.runner.run(request).await)
    }

    /// Declares the predicates of `facts` that give a `cardinality` (see
    /// [`McpServer::declare_if_new`]).
    pub(crate) async fn declare_all(
        &self,
        context: &RequestContext<RoleServer>,
        facts: &[tools::FactArg],
    ) -> Result<(), CallToolResult> {
        for fact in facts {
            if let Some(cardinality) = fact.cardinality {
                self.declare_if_new(context, &fact.predicate, cardinality).await?;
            }
        }
        Ok(())
    }

    /// Declares `predicate` with `cardinality` unless it is declared already; a
    /// declaration with the other cardinality is refused (the model said one thing, the
    /// memory holds another: changing it is `define_predicate`'s, on purpose).
    async fn declare_if_new(
        &self,
        context: &RequestContext<RoleServer>,
        predicate: &str,
        cardinality: tools::Cardinality,
    ) -> Result<(), CallToolResult> {
        const PREDICATES: &str = "query($namespace: String!) { result: namespace(name: $namespace) { \
             predicates { name cardinality valueType description } } }";
        const DEFINE: &str = "mutation($namespace: String!, $name: String!, $cardinality: Cardinality!) { \
             result: definePredicate(namespace: $namespace, name: $name, cardinality: $cardinality) { seq } }";
        let wanted = serde_json::to_value(cardinality).unwrap_or(Value::Null);
        let known = self.run(context, PREDICATES, json!({})).await?.data.into_json().unwrap_or(Value::Null);
        // A predicate used but never declared is listed as MANY of ANY value with no
        // description: that is no declaration to keep.
        let declared = known
            .pointer("/result/predicates")
            .and_then(Value::as_array)
            .and_then(|list| list.iter().find(|p| p["name"] == predicate))
            .filter(|p| {
                !(p["cardinality"] == "MANY" && p["valueType"] == "ANY" && p["description"].is_null())
            })
            .map(|p| p["cardinality"].clone());
        match declared {
            Some(c) if c == wanted => Ok(()),
            Some(c) => Err(tool_error(
                ostrakon_graphql::code::INVALID_VALUE,
                &format!(
                    "`{predicate}` is declared {} already, not {}: call define_predicate to change it",
                    c.as_str().unwrap_or("?"),
                    wanted.as_str().unwrap_or("?")
                ),
            )),
            None => {
                let defined =
                    self.run(context, DEFINE, json!({ "name": predicate, "cardinality": wanted })).await?;
                if defined.errors.is_empty() { Ok(()) } else { Err(answer(defined, |_| {})) }
            }
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for McpServer {
    /// Calls a tool. Arguments that do not fit its schema are a tool result with
    /// `isError: true` and code `BAD_REQUEST` (the argument, what it must be, what the tool
    /// takes), not a JSON-RPC protocol error: an agent reads a tool's result, and can
    /// correct itself, while a protocol error never reaches the model.
    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
        let call = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        match self.tool_router.call(call).await {
            Err(e) if e.code == rmcp::model::ErrorCode::INVALID_PARAMS => {
                let mut body = json!({
                    "code": ostrakon_graphql::code::BAD_REQUEST,
                    "message": e.message,
                    "errors": [{ "code": ostrakon_graphql::code::BAD_REQUEST, "message": e.message }],
                });
                if let Some(detail) = e.data {
                    body["detail"] = detail;
                }
                Ok(rmcp::model::CallToolResponse::Complete(CallToolResult::structured_error(body)))
            }
            other => other,
        }
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("ostrakon", env!("CARGO_PKG_VERSION"))
                    .with_title("Ostrakon")
                    .with_description("A bitemporal memory for AI agents"),
            )
            .with_instructions(INSTRUCTIONS)
    }
}
