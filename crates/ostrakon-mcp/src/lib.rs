//! Ostrakon as a Model Context Protocol server, with the protocol's official Rust SDK
//! (`rmcp`): tools an agent's model calls to record what it observed, recall what is
//! relevant, assert and correct facts, and ask what was true at a time as known at
//! another.
//!
//! Each tool is one fixed GraphQL operation over the same schema as `/graphql`, run by a
//! [`Runner`] the transport provides (the server's runs it with its permits, deadlines and
//! response limit): the tools have no logic of their own, so validation, access, limits,
//! read points and error codes are exactly GraphQL's. A tool's answer is the operation's
//! data, as JSON (structured content, and the same as text); a failed operation is a tool
//! error whose structured content carries the GraphQL errors with their `code`s.
//!
//! The namespace is the connection's, never the model's: over stdio the one the command
//! was given ([`McpServer::local`]); over HTTP the one the transport put in the request's
//! [`Scope`] (see [`http_service`]).
#![deny(missing_docs)]

mod args;
mod compact;
mod shape;
mod tier_tools;
mod tools;

use std::sync::Arc;

use futures_util::future::BoxFuture;
use ostrakon_graphql::Access;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{RoleServer, ServerHandler, ServiceExt as _, tool_handler};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

pub use args::Parameters;
pub use tools::{
    AddIntentionArgs, Cardinality, ContextArgs, DefinePredicateArgs, DueIntentionsArgs, EndFactArgs,
    EntityArgs, EntityInputArg, EntityRef, FactArg, FactsAsOfArgs, HistoryArgs, Kind, Polarity, RecallArgs,
    RememberArgs, TriggerArg, ValueArg, ValueType,
};

/// Runs a GraphQL request against the schema: the transport's way of executing, with its
/// limits. The request already carries the caller's [`Access`].
pub trait Runner: Send + Sync + 'static {
    /// The response to `request`; a failure of the transport's own (a deadline, no permit)
    /// is an error response with its code, as `/graphql` would answer.
    fn run(&self, request: async_graphql::Request) -> BoxFuture<'static, async_graphql::Response>;
}

/// Where a connection's tools act: one namespace, with the caller's rights.
#[derive(Clone, Debug)]
pub struct Scope {
    /// The namespace every tool reads and writes.
    pub namespace: String,
    /// The caller's rights, as GraphQL checks them.
    pub access: Access,
}

/// The MCP server: the tool list over a [`Runner`].
#[derive(Clone)]
pub struct McpServer {
    runner: Arc<dyn Runner>,
    /// The connection's scope when it is fixed (stdio); over HTTP it comes with each request.
    scope: Option<Scope>,
    tool_router: ToolRouter<McpServer>,
}

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
    fn per_request(runner: Arc<dyn Runner>) -> McpServer {
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
    async fn call(
        &self,
        context: &RequestContext<RoleServer>,
        document: &'static str,
        variables: Value,
    ) -> CallToolResult {
        self.call_shaped(context, document, variables, |_| {}).await
    }

    /// [`McpServer::call`], with `shape` applied to a successful answer.
    async fn call_shaped(
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
    async fn declare_all(
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

/// The tool result of a GraphQL response, `shape`d when it succeeded.
fn answer(response: async_graphql::Response, shape: fn(&mut Value)) -> CallToolResult {
    let data = response.data.into_json().unwrap_or(Value::Null);
    if !response.errors.is_empty() {
        let errors: Vec<Value> = response
            .errors
            .iter()
            .map(|e| {
                let code = e
                    .extensions
                    .as_ref()
                    .and_then(|x| x.get("code"))
                    .and_then(|c| c.clone().into_json().ok())
                    .unwrap_or(Value::Null);
                json!({ "code": code, "message": e.message, "path": e.path })
            })
            .collect();
        let first = &errors[0];
        let mut body = json!({ "code": first["code"], "message": first["message"], "errors": errors });
        // A mutation that wrote and then failed on a field still reports what it wrote.
        if let Some(result) = data.get("result").filter(|r| !r.is_null()) {
            body["result"] = result.clone();
        }
        return CallToolResult::structured_error(body);
    }
    let mut result = match data {
        Value::Object(mut map) => map.remove("result").unwrap_or(Value::Null),
        other => other,
    };
    shape(&mut result);
    // Structured content must be an object; a list (or null) is wrapped.
    let result = if result.is_object() { result } else { json!({ "result": result }) };
    CallToolResult::structured(result)
}

/// A tool error with one code, for failures before any GraphQL runs.
pub(crate) fn tool_error(code: &str, message: &str) -> CallToolResult {
    CallToolResult::structured_error(json!({
        "code": code,
        "message": message,
        "errors": [{ "code": code, "message": message }],
    }))
}

/// Drops null members of objects, recursively: an argument left out is a variable left
/// out, so GraphQL applies its default (a null would override it, or be refused).
fn prune_nulls(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(prune_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(prune_nulls),
        _ => {}
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
/// [`Scope`] in the request's extensions; a request without one gets a tool error
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
