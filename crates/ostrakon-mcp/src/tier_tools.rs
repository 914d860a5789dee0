//! The tools of tiers of context: pin a memory as core (always in `context`) or in a
//! task's active scope, or take it out (`pin_memory`), and list what is where (`tiers`).

use rmcp::model::CallToolResult;
use rmcp::schemars::{self, JsonSchema};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, tool, tool_router};
use serde::{Deserialize, Serialize};

use crate::args::Parameters;
use crate::server::McpServer;

/// Arguments of `pin_memory`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct PlaceArgs {
    /// The fact's id, when the memory is a fact.
    #[serde(default)]
    pub fact: Option<String>,
    /// The entity's id, when it is an entity.
    #[serde(default)]
    pub entity: Option<String>,
    /// The episode's id, when it is an episode.
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
    /// True to take it out of the tier (or the scope) instead.
    #[serde(default, skip_serializing)]
    pub release: Option<bool>,
}

/// Arguments of `tiers`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct TiersArgs {
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
    /// Place a memory in a tier, or take it out.
    #[tool(
        description = "Pin a memory (by its fact, entity or episode id) so that `context` always loads it: \
                       tier CORE for what holds across every task (who the user is, their rules, health and \
                       safety facts), tier ACTIVE with a scope (a task, e.g. \"trip-to-japan\") for what matters \
                       while it goes on. With release, take it out. Pinning never changes what is true."
    )]
    async fn pin_memory(
        &self,
        Parameters(args): Parameters<PlaceArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let document = if args.release.unwrap_or(false) { RELEASE } else { PLACE };
        self.call(&context, document, crate::tools::variables(&args)).await
    }

    /// List the tiers.
    #[tool(description = "What is pinned: CORE, each ACTIVE scope, and the promotions or releases \
                       upkeep proposes for review.")]
    async fn tiers(
        &self,
        Parameters(args): Parameters<TiersArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.call(&context, TIERS, crate::tools::variables(&args)).await
    }
}
