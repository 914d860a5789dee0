//! The tools of tiers of context: pin a memory as core (always in `context`), put one in
//! a task's active scope, take it out, and list what is where. One GraphQL operation each.

use rmcp::model::CallToolResult;
use rmcp::schemars::{self, JsonSchema};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, tool, tool_router};
use serde::{Deserialize, Serialize};

use crate::McpServer;
use crate::args::Parameters;

/// Arguments of `place_memory` and `release_memory`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlaceArgs {
    /// The fact's id, when the memory is a fact.
    #[serde(default)]
    pub fact: Option<String>,
    /// The entity's id, when it is an entity (the user, a person, a project).
    #[serde(default)]
    pub entity: Option<String>,
    /// The episode's id, when it is an episode (a message, a rule as it was said).
    #[serde(default)]
    pub episode: Option<String>,
    /// CORE (always in context) or ACTIVE (in context while its scope is).
    pub tier: String,
    /// The task or project, for ACTIVE (e.g. "trip-to-japan").
    #[serde(default)]
    pub scope: Option<String>,
    /// Why, kept with the placement.
    #[serde(default)]
    pub reason: Option<String>,
}

/// Arguments of `tiers`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TiersArgs {
    /// As the memory knew it then (default: now).
    #[serde(default)]
    pub known_at: Option<String>,
}

/// What a placed record shows.
macro_rules! placed_fields {
    () => {
        "placedSeq reason by fact { id predicate subject { id name } object { string integer float boolean \
         time entity { id name } } status } entity { id name kind } episode { id externalId text occurredAt }"
    };
}

/// What a tiers answer shows.
macro_rules! tiers_fields {
    () => {
        concat!(
            "core(first: 50) { ",
            placed_fields!(),
            " } scopes(first: 10) { name lastPlacedSeq records(first: 20) { ",
            placed_fields!(),
            " } } proposals(first: 20) { tier scope release reason seq record { ",
            placed_fields!(),
            " } } basis { seq }"
        )
    };
}

const PLACE: &str = concat!(
    "mutation($namespace: String!, $fact: ID, $entity: ID, $episode: ID, $tier: TierKind!, $scope: String, \
     $reason: String) { result: placeMemory(namespace: $namespace, fact: $fact, entity: $entity, \
     episode: $episode, tier: $tier, scope: $scope, reason: $reason) { ",
    tiers_fields!(),
    " } }"
);

const RELEASE: &str = concat!(
    "mutation($namespace: String!, $fact: ID, $entity: ID, $episode: ID, $tier: TierKind!, $scope: String, \
     $reason: String) { result: releaseMemory(namespace: $namespace, fact: $fact, entity: $entity, \
     episode: $episode, tier: $tier, scope: $scope, reason: $reason) { ",
    tiers_fields!(),
    " } }"
);

const TIERS: &str = concat!(
    "query($namespace: String!, $knownAt: DateTime) { result: tiers(namespace: $namespace, knownAt: $knownAt) { ",
    tiers_fields!(),
    " } }"
);

#[tool_router(router = tier_router, vis = "pub(crate)")]
impl McpServer {
    /// Place a memory in a tier.
    #[tool(
        description = "Pin a memory so that `context` always loads it. Use tier CORE for what must never be \
                       forgotten or crowded out: who the user is, the rules and preferences they gave you, \
                       health and safety facts (\"allergic to peanuts\") — things true across every task. Use \
                       tier ACTIVE with a scope (a task or project, e.g. \"trip-to-japan\") for what matters \
                       only while that task goes on; release it when the task ends. Name the memory by its \
                       fact, entity or episode id. Pinning never changes what is true, only what is loaded."
    )]
    async fn place_memory(
        &self,
        Parameters(args): Parameters<PlaceArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.call(&context, PLACE, crate::tools::variables(&args)).await
    }

    /// Release a memory from a tier.
    #[tool(
        description = "Take a memory out of CORE or out of an ACTIVE scope (give the scope), when it no longer \
                       applies to every conversation or the task is done. It stays in memory and can still be \
                       found by search."
    )]
    async fn release_memory(
        &self,
        Parameters(args): Parameters<PlaceArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.call(&context, RELEASE, crate::tools::variables(&args)).await
    }

    /// List the tiers.
    #[tool(description = "What is pinned: the CORE memories, each ACTIVE scope with its memories, and the \
                       promotions or releases upkeep proposes for review (a fact confirmed in several \
                       conversations, a scope untouched for long).")]
    async fn tiers(
        &self,
        Parameters(args): Parameters<TiersArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.call(&context, TIERS, crate::tools::variables(&args)).await
    }
}
