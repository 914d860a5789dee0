//! The tools: their arguments (with descriptions written for a model to read, which become
//! their JSON schemas) and the one GraphQL operation each runs. Arguments are named as
//! the GraphQL variables they become, so most pass through unchanged (serialized in
//! camelCase); only `remember` (the episode's fields nest; without text it states facts
//! alone), `recall` (the filter nests) and `end_fact` (ending or retracting) shape their
//! own.

use rmcp::model::CallToolResult;
use rmcp::schemars::{self, JsonSchema};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, tool, tool_router};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::args::Parameters;
use crate::server::McpServer;

/// The fields of a fact every tool returns.
macro_rules! fact_fields {
    () => {
        "id predicate subject { id name } object { type string integer float boolean time entity { id name } } \
         polarity status reason valid { from to } effective { from to } supersededBy { id } confidence \
         corroborations assertedSeq assertedAt retractedSeq provenance { id externalId text occurredAt }"
    };
}

/// A fact among search hits: its episodes are hits of their own.
macro_rules! fact_brief {
    () => {
        "id predicate subject { id name } object { type string integer float boolean time entity { id name } } \
         polarity status valid { from to } confidence"
    };
}

/// The point a read was made at.
macro_rules! basis_fields {
    () => {
        "basis { seq systemTime validAt }"
    };
}

/// An entity, by its id or its name (one of the two).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EntityRef {
    /// Its id, as earlier calls returned it (e.g. "3").
    #[serde(default)]
    pub id: Option<String>,
    /// Its name or an alias (case ignored), e.g. "Alice".
    #[serde(default)]
    pub name: Option<String>,
}

/// A fact's value: exactly one of these.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValueArg {
    /// An entity, e.g. {"name": "Paris"}.
    #[serde(default)]
    pub entity: Option<EntityRef>,
    /// Text.
    #[serde(default)]
    pub string: Option<String>,
    /// A whole number.
    #[serde(default)]
    pub integer: Option<i64>,
    /// A decimal number.
    #[serde(default)]
    pub float: Option<f64>,
    /// True or false.
    #[serde(default)]
    pub boolean: Option<bool>,
    /// An instant (RFC 3339, a date, or a partial date like "2015-06").
    #[serde(default)]
    pub time: Option<String>,
}

/// Stated or denied.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Polarity {
    /// It holds.
    Asserted,
    /// It does not hold (from validFrom on).
    Negated,
}

/// A fact: subject, predicate, value, and when it holds in the world.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FactArg {
    /// What it is about (a new name creates the entity).
    pub subject: EntityRef,
    /// The relation, a short camelCase verb phrase, e.g. "livesIn", "worksAt", "likes".
    pub predicate: String,
    /// Its value: an entity or a literal.
    pub object: ValueArg,
    /// When it starts to hold in the world (not when you learned it); when absent, the
    /// episode's time, else now.
    #[serde(default)]
    pub valid_from: Option<String>,
    /// When it stops holding (excluded); open-ended when absent.
    #[serde(default)]
    pub valid_to: Option<String>,
    /// How sure the source is, in (0, 1]; 1 when absent.
    #[serde(default)]
    pub confidence: Option<f64>,
    /// NEGATED for "Alice no longer likes tea" (default ASSERTED).
    #[serde(default)]
    pub polarity: Option<Polarity>,
    /// The id of a fact this one corrects (withdrawn as of now).
    #[serde(default)]
    pub supersedes: Option<String>,
    /// Ids of the episodes this fact comes from.
    #[serde(default)]
    pub provenance: Option<Vec<String>>,
    /// External ids of the episodes this fact comes from.
    #[serde(default)]
    pub provenance_external_ids: Option<Vec<String>>,
    /// How much it matters, in [0, 1]: kept longer (salience, not truth).
    #[serde(default)]
    pub importance: Option<f64>,
    /// True when the user is correcting you: remembered the longest.
    #[serde(default)]
    pub correction: Option<bool>,
    /// For a new predicate: ONE (one value at a time: livesIn, worksAt) or MANY (values
    /// coexist; the default).
    #[serde(default, skip_serializing)]
    pub cardinality: Option<Cardinality>,
}

/// Values of a predicate at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Cardinality {
    /// One at a time: a new value supersedes the old.
    One,
    /// Values coexist.
    Many,
}

/// The type of its values.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ValueType {
    /// Any (default).
    Any,
    /// An entity.
    Entity,
    /// Text.
    String,
    /// Integer.
    Integer,
    /// Decimal.
    Float,
    /// Boolean.
    Boolean,
    /// Instant.
    Time,
}

/// Arguments of `define_predicate`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DefinePredicateArgs {
    /// The predicate, e.g. "livesIn".
    pub name: String,
    /// ONE or MANY.
    pub cardinality: Cardinality,
    /// The type its values must have (ANY when absent).
    #[serde(default)]
    pub value_type: Option<ValueType>,
    /// What it means, for whoever reads the memory later.
    #[serde(default)]
    pub description: Option<String>,
}

/// An entity to record with an episode.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EntityInputArg {
    /// Its canonical name, e.g. "Alice".
    pub name: String,
    /// Other names it goes by.
    #[serde(default)]
    pub aliases: Option<Vec<String>>,
    /// Its kind, e.g. "person", "city".
    #[serde(default)]
    pub kind: Option<String>,
}

/// Arguments of `remember`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RememberArgs {
    /// What was said or observed, verbatim (e.g. "Alice: I moved to London in June").
    /// Leave it out to state facts alone.
    #[serde(default)]
    pub text: Option<String>,
    /// When it happened; now when absent.
    #[serde(default)]
    pub occurred_at: Option<String>,
    /// The conversation or session it belongs to.
    #[serde(default)]
    pub thread: Option<String>,
    /// Where it came from (a channel, a document).
    #[serde(default)]
    pub source: Option<String>,
    /// Who spoke: "user", "assistant", or a name.
    #[serde(default)]
    pub role: Option<String>,
    /// Your own id for it, unique in this memory.
    #[serde(default)]
    pub external_id: Option<String>,
    /// How much it matters, in [0, 1] (salience).
    #[serde(default)]
    pub importance: Option<f64>,
    /// Entities it is about.
    #[serde(default)]
    pub entities: Option<Vec<EntityInputArg>>,
    /// Facts you extracted from it; they cite it as their source.
    #[serde(default)]
    pub facts: Option<Vec<FactArg>>,
}

/// A kind of record.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Kind {
    /// Facts.
    Fact,
    /// Entities.
    Entity,
    /// Episodes.
    Episode,
}

/// Arguments of `recall`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecallArgs {
    /// What to look for, in words (a question or keywords).
    pub query: String,
    /// At most this many results (default 10).
    #[serde(default)]
    pub limit: Option<i32>,
    /// Only these kinds (all when absent).
    #[serde(default)]
    pub kinds: Option<Vec<Kind>>,
    /// Only episodes that occurred at or after this time (and facts valid then).
    #[serde(default)]
    pub occurred_from: Option<String>,
    /// Only episodes that occurred before this time (and facts valid then).
    #[serde(default)]
    pub occurred_to: Option<String>,
    /// Facts as in force at this valid time (default now).
    #[serde(default)]
    pub valid_at: Option<String>,
    /// As known at this system time (default: all known).
    #[serde(default)]
    pub known_at: Option<String>,
    /// False only looks, without strengthening (a read-only connection must).
    #[serde(default)]
    pub reinforce: Option<bool>,
}

/// Arguments of `context`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContextArgs {
    /// The message you are about to answer.
    pub message: String,
    /// At most this many tokens (default 1000; a token is about four bytes).
    #[serde(default)]
    pub budget: Option<i32>,
    /// Facts as in force at this valid time (default now).
    #[serde(default)]
    pub valid_at: Option<String>,
    /// As known at this system time (default: all known).
    #[serde(default)]
    pub known_at: Option<String>,
}

/// Arguments of `end_fact`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EndFactArgs {
    /// The fact's id; to retract one source's claim only, its statement's id (`s…`).
    pub fact: String,
    /// When it stopped holding in the world (not with `retract`).
    #[serde(default)]
    pub valid_to: Option<String>,
    /// True when it was never true (a mistake): it is withdrawn instead of ended.
    #[serde(default)]
    pub retract: Option<bool>,
    /// Why (with `retract`), kept with the retraction.
    #[serde(default)]
    pub reason: Option<String>,
}

/// Arguments of `facts_as_of`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FactsAsOfArgs {
    /// Only facts about this entity.
    #[serde(default)]
    pub subject: Option<EntityRef>,
    /// Only facts with this predicate.
    #[serde(default)]
    pub predicate: Option<String>,
    /// Only facts with this value.
    #[serde(default)]
    pub object: Option<ValueArg>,
    /// The valid time: what was true in the world then (default now).
    #[serde(default)]
    pub valid_at: Option<String>,
    /// The system time: as the memory knew it then (default: everything known).
    #[serde(default)]
    pub known_at: Option<String>,
    /// As known after this batch number (instead of knownAt).
    #[serde(default)]
    pub known_at_seq: Option<i64>,
    /// Also facts not in force at validAt (superseded, ended, retracted…), with why.
    #[serde(default)]
    pub include_all: Option<bool>,
    /// At most this many facts (default 20).
    #[serde(default)]
    pub first: Option<i32>,
    /// The `endCursor` of the previous page.
    #[serde(default)]
    pub after: Option<String>,
}

/// Arguments of `history`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HistoryArgs {
    /// The entity.
    pub subject: EntityRef,
    /// The predicate whose versions to list.
    pub predicate: String,
    /// Statuses are given at this valid time (default now).
    #[serde(default)]
    pub valid_at: Option<String>,
    /// As known at this system time (default: all known).
    #[serde(default)]
    pub known_at: Option<String>,
    /// As known after this batch number (instead of knownAt).
    #[serde(default)]
    pub known_at_seq: Option<i64>,
    /// At most this many versions (default 20).
    #[serde(default)]
    pub first: Option<i32>,
    /// The `endCursor` of the previous page.
    #[serde(default)]
    pub after: Option<String>,
}

/// Arguments of `entity`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EntityArgs {
    /// Its id (give this or name).
    #[serde(default)]
    pub id: Option<String>,
    /// Its name or an alias (give this or id).
    #[serde(default)]
    pub name: Option<String>,
    /// Its facts as in force at this valid time (default now).
    #[serde(default)]
    pub valid_at: Option<String>,
    /// As known at this system time (default: all known).
    #[serde(default)]
    pub known_at: Option<String>,
}

/// When an intention is due: give at least one.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TriggerArg {
    /// Due when this time comes.
    #[serde(default)]
    pub at: Option<String>,
    /// Due when a message or episode mentions one of these entities.
    #[serde(default)]
    pub entities: Option<Vec<EntityRef>>,
    /// Due when a message is close in meaning to this text.
    #[serde(default)]
    pub cue: Option<String>,
    /// For a cue: the similarity in (0, 1] at or above which it is due (default 0.6).
    #[serde(default)]
    pub threshold: Option<f64>,
}

/// Arguments of `add_intention`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AddIntentionArgs {
    /// What to do or say when it is due, e.g. "Ask how the move went".
    pub payload: String,
    /// When it is due.
    pub trigger: TriggerArg,
    /// After this it is never due.
    #[serde(default)]
    pub expires_at: Option<String>,
    /// Higher first (default 0).
    #[serde(default)]
    pub priority: Option<i32>,
    /// Whether it stays after it fired (default false).
    #[serde(default)]
    pub repeat: Option<bool>,
}

/// Arguments of `due_intentions`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DueIntentionsArgs {
    /// The message being answered: intentions triggered by what it mentions or means.
    #[serde(default)]
    pub message: Option<String>,
    /// The clock for time triggers (default now).
    #[serde(default)]
    pub at: Option<String>,
}

const REMEMBER: &str = concat!(
    "mutation($namespace: String!, $episode: EpisodeInput!, $entities: [EntityInput!]! = [], \
     $facts: [FactInput!]! = []) { result: recordEpisode(namespace: $namespace, episode: $episode, \
     entities: $entities, facts: $facts) { seq systemTime episode { id externalId occurredAt thread } \
     entities { id name } createdEntities { id name } facts { ",
    fact_fields!(),
    " } } }"
);

/// The fields of a search result.
macro_rules! hit_fields {
    () => {
        concat!(
            basis_fields!(),
            " warnings hits { kind score explain { components { component rank score } fused retention relevance \
             status dormant } fact { ",
            fact_brief!(),
            " } entity { id name kind } episode { id externalId text occurredAt thread role outdated { status since note } } }"
        )
    };
}

const RECALL: &str = concat!(
    "mutation($namespace: String!, $query: String!, $limit: Int = 10, $filter: SearchFilter, $validAt: DateTime, \
     $knownAt: DateTime) { result: remember(namespace: $namespace, text: $query, limit: $limit, \
     filter: $filter, validAt: $validAt, knownAt: $knownAt) { seq result { ",
    hit_fields!(),
    " } } }"
);

const LOOK: &str = concat!(
    "query($namespace: String!, $query: String!, $limit: Int = 10, $filter: SearchFilter, $validAt: DateTime, \
     $knownAt: DateTime) { result: search(namespace: $namespace, text: $query, limit: $limit, \
     filter: $filter, validAt: $validAt, knownAt: $knownAt) { ",
    hit_fields!(),
    " } }"
);

const CONTEXT: &str = concat!(
    "query($namespace: String!, $message: String!, $budget: Int, $validAt: DateTime, $knownAt: DateTime) { \
     result: context(namespace: $namespace, message: $message, budget: $budget, validAt: $validAt, \
     knownAt: $knownAt) { text tokens truncated ",
    basis_fields!(),
    " } }"
);

const ASSERT_FACTS: &str = concat!(
    "mutation($namespace: String!, $facts: [FactInput!]!) { result: assertFacts(namespace: $namespace, \
     facts: $facts) { seq systemTime createdEntities { id name } statements { id fact { id } } facts { ",
    fact_fields!(),
    " } } }"
);

const DEFINE_PREDICATE: &str = "mutation($namespace: String!, $name: String!, $cardinality: Cardinality!, \
     $valueType: ValueType! = ANY, $description: String) { result: definePredicate(namespace: $namespace, \
     name: $name, cardinality: $cardinality, valueType: $valueType, description: $description) { seq systemTime \
     predicate { name cardinality valueType description } } }";

const END_FACT: &str = concat!(
    "mutation($namespace: String!, $fact: ID!, $validTo: DateTime!) { result: endFact(namespace: $namespace, \
     fact: $fact, validTo: $validTo) { seq systemTime facts { ",
    fact_fields!(),
    " } } }"
);

const RETRACT_FACT: &str = concat!(
    "mutation($namespace: String!, $fact: ID!, $reason: String) { result: retractFact(namespace: $namespace, \
     fact: $fact, reason: $reason) { seq systemTime facts { ",
    fact_fields!(),
    " } } }"
);

const FACTS_AS_OF: &str = concat!(
    "query($namespace: String!, $subject: EntityRefInput, $predicate: String, $object: ValueInput, \
     $includeAll: Boolean! = false, $validAt: DateTime, $knownAt: DateTime, $knownAtSeq: Int, $first: Int = 20, \
     $after: String) { result: facts(namespace: $namespace, subject: $subject, predicate: $predicate, \
     object: $object, includeAll: $includeAll, validAt: $validAt, knownAt: $knownAt, knownAtSeq: $knownAtSeq, \
     first: $first, after: $after) { ",
    basis_fields!(),
    " pageInfo { hasNextPage endCursor } nodes { ",
    fact_fields!(),
    " } } }"
);

const HISTORY: &str = concat!(
    "query($namespace: String!, $subject: EntityRefInput!, $predicate: String!, $validAt: DateTime, \
     $knownAt: DateTime, $knownAtSeq: Int, $first: Int = 20, $after: String) { result: history(namespace: $namespace, \
     subject: $subject, predicate: $predicate, validAt: $validAt, knownAt: $knownAt, knownAtSeq: $knownAtSeq, \
     first: $first, after: $after) { ",
    basis_fields!(),
    " pageInfo { hasNextPage endCursor } nodes { ",
    fact_fields!(),
    " } } }"
);

const ENTITY: &str = concat!(
    "query($namespace: String!, $id: ID, $name: String, $validAt: DateTime, $knownAt: DateTime) { \
     result: entity(namespace: $namespace, id: $id, name: $name, validAt: $validAt, knownAt: $knownAt) { \
     id name aliases kind ",
    basis_fields!(),
    " retention halfLife recallCount lastRecalledAt facts { ",
    fact_fields!(),
    " } incoming { id predicate subject { id name } status } related(first: 5) { entity { id name } weight } } }"
);

const ADD_INTENTION: &str = "mutation($namespace: String!, $payload: String!, $trigger: TriggerInput!, \
     $expiresAt: DateTime, $priority: Int! = 0, $repeat: Boolean! = false) { result: addIntention(\
     namespace: $namespace, payload: $payload, trigger: $trigger, expiresAt: $expiresAt, priority: $priority, \
     repeat: $repeat) { id payload trigger at entities { id name } cue threshold expiresAt priority repeat \
     status addedSeq } }";

const DUE_INTENTIONS: &str = "query($namespace: String!, $message: String, $at: DateTime) { \
     result: dueIntentions(namespace: $namespace, message: $message, at: $at) { reason similarity \
     entity { id name } intention { id payload trigger at cue priority repeat expiresAt } } }";

/// Arguments as GraphQL variables.
pub(crate) fn variables(args: &impl Serialize) -> serde_json::Value {
    serde_json::to_value(args).unwrap_or(serde_json::Value::Null)
}

#[tool_router(vis = "pub(crate)")]
impl McpServer {
    /// Record an episode, or state facts.
    #[tool(description = "Record what was said or observed (an episode: a message, an event) with when it \
                       happened, and the entities and facts you extracted from it. Without text, state facts \
                       alone. A fact holds in the world from validFrom to validTo; a newer value of a ONE \
                       predicate supersedes the older; to correct a fact, give its id in supersedes.")]
    async fn remember(
        &self,
        Parameters(args): Parameters<RememberArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let facts = args.facts.unwrap_or_default();
        if let Err(refused) = self.declare_all(&context, &facts).await {
            return refused;
        }
        let Some(text) = args.text else {
            if facts.is_empty() {
                return crate::reply::tool_error(
                    ostrakon_graphql::code::BAD_REQUEST,
                    "remember: give `text` (an episode), `facts`, or both",
                );
            }
            let facts: Vec<serde_json::Value> = facts.iter().map(variables).collect();
            return self.call(&context, ASSERT_FACTS, json!({ "facts": facts })).await;
        };
        let episode = json!({
            "text": text,
            "occurredAt": args.occurred_at,
            "thread": args.thread,
            "source": args.source,
            "role": args.role,
            "externalId": args.external_id,
            "importance": args.importance,
        });
        let vars = json!({ "episode": episode, "entities": args.entities, "facts": facts });
        self.call(&context, REMEMBER, vars).await
    }

    /// Search the memory.
    #[tool(
        description = "Find what the memory holds about a query: facts in force, entities and episodes, ranked \
                       by relevance and retention, each with how it was found; optionally in a time window, or \
                       at a valid time as known at a system time. An episode whose statement no longer holds \
                       lists it under `outdated`, with what replaced it: do not read its words as current. What \
                       is found is strengthened."
    )]
    async fn recall(
        &self,
        Parameters(args): Parameters<RecallArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let filter = json!({ "kinds": args.kinds, "occurredFrom": args.occurred_from, "occurredTo": args.occurred_to });
        let vars = json!({
            "query": args.query,
            "limit": args.limit,
            "filter": filter,
            "validAt": args.valid_at,
            "knownAt": args.known_at,
        });
        if args.reinforce.unwrap_or(true) {
            self.call_shaped(&context, RECALL, vars, crate::shape::recalled).await
        } else {
            self.call(&context, LOOK, vars).await
        }
    }

    /// The prompt block for a message.
    #[tool(
        description = "The block of memory to put in your prompt before answering a message, within a token \
                       budget: facts in force with their validity, relevant episodes with their dates, entities."
    )]
    async fn context(
        &self,
        Parameters(args): Parameters<ContextArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.call(&context, CONTEXT, variables(&args)).await
    }

    /// Declare a predicate.
    #[tool(
        description = "Declare a predicate before you state facts with it: ONE for what a subject has one \
                       of at a time (where someone lives, their employer, age): a new value supersedes the old, \
                       so \"where did she live in 2015?\" has one answer; MANY (the default) for what coexists \
                       (likes, knows, visited)."
    )]
    async fn define_predicate(
        &self,
        Parameters(args): Parameters<DefinePredicateArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.call(&context, DEFINE_PREDICATE, variables(&args)).await
    }

    /// End or retract a fact.
    #[tool(
        description = "Say that a fact stopped holding in the world at validTo (\"Alice left ACME in March\"); \
                       or, with retract, withdraw a fact that was never true (a mistake). Reads as known before \
                       stay unchanged."
    )]
    async fn end_fact(
        &self,
        Parameters(args): Parameters<EndFactArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        match (args.retract.unwrap_or(false), args.valid_to) {
            (true, None) => {
                self.call(&context, RETRACT_FACT, json!({ "fact": args.fact, "reason": args.reason })).await
            }
            (false, Some(valid_to)) if args.reason.is_none() => {
                self.call(&context, END_FACT, json!({ "fact": args.fact, "validTo": valid_to })).await
            }
            (true, Some(_)) => crate::reply::tool_error(
                ostrakon_graphql::code::BAD_REQUEST,
                "end_fact: give `validTo` (it stopped holding) or `retract` (it was never true), not both",
            ),
            (false, None) => crate::reply::tool_error(
                ostrakon_graphql::code::BAD_REQUEST,
                "end_fact: give `validTo` (when it stopped holding), or `retract: true` if it was never true",
            ),
            (false, Some(_)) => crate::reply::tool_error(
                ostrakon_graphql::code::BAD_REQUEST,
                "end_fact: `reason` goes with `retract`; an end of validity is only its time",
            ),
        }
    }

    /// The facts at a read point.
    #[tool(description = "What was true at validAt (world time) as the memory knew it at knownAt (system \
                       time): the facts about a subject, a predicate or a value, with status, reason and \
                       effective intervals; includeAll adds those not in force. A `note` flags a MANY predicate \
                       holding several values at once.")]
    async fn facts_as_of(
        &self,
        Parameters(args): Parameters<FactsAsOfArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.call_shaped(&context, FACTS_AS_OF, variables(&args), crate::shape::note_coexisting).await
    }

    /// A slot's versions.
    #[tool(
        description = "Every version of one subject's predicate (\"where has Alice lived\"), oldest first, \
                       each with its status, the reason, what superseded it, and where it is in force."
    )]
    async fn history(
        &self,
        Parameters(args): Parameters<HistoryArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.call(&context, HISTORY, variables(&args)).await
    }

    /// One entity.
    #[tool(
        description = "One entity by id or name: its names, kind, facts about it and pointing at it at validAt, \
                       related entities, how well it is remembered; null when there is none."
    )]
    async fn entity(
        &self,
        Parameters(args): Parameters<EntityArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.call(&context, ENTITY, variables(&args)).await
    }

    /// Add an intention.
    #[tool(description = "Remember to do something later: a payload due at a time, when a message mentions \
                       some entities, or when one is close in meaning to a cue. See due_intentions.")]
    async fn add_intention(
        &self,
        Parameters(args): Parameters<AddIntentionArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.call(&context, ADD_INTENTION, variables(&args)).await
    }

    /// The intentions due.
    #[tool(description = "The intentions due now (or at `at`) and those the message triggers, highest \
                       priority first, each with why.")]
    async fn due_intentions(
        &self,
        Parameters(args): Parameters<DueIntentionsArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.call(&context, DUE_INTENTIONS, variables(&args)).await
    }
}
