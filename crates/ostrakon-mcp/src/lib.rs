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
mod handler;
mod reply;
mod runner;
mod server;
mod shape;
mod tier_tools;
mod tools;
mod transport;

pub use args::Parameters;
pub use runner::{Runner, Scope};
pub use server::McpServer;
pub use tools::{
    AddIntentionArgs, Cardinality, ContextArgs, DefinePredicateArgs, DueIntentionsArgs, EndFactArgs,
    EntityArgs, EntityInputArg, EntityRef, FactArg, FactsAsOfArgs, HistoryArgs, Kind, Polarity, RecallArgs,
    RememberArgs, TriggerArg, ValueArg, ValueType,
};
pub use transport::{HttpLimits, error_response, http_service};
