//! What the server runs its operations with ([`Runner`], the transport's) and where a
//! connection's tools act ([`Scope`]).

use futures_util::future::BoxFuture;
use ostrakon_graphql::Access;

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
