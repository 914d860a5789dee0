//! What a request may cost, decided from its document before it is validated or run.
//!
//! async-graphql's own checks walk fragment spreads inline (its recursion-depth check
//! while parsing, then validation), so a document whose fragments each spread the previous
//! one k times costs k^depth before anything runs, and its complexity counts a list like a
//! single object. [`Budget`] runs as an extension when the request is prepared, before any
//! of that, and refuses with `LIMIT_EXCEEDED`:
//!
//! - more than `max_depth` levels of nested fields once fragments are expanded;
//! - more than `max_fields` fields once fragments are expanded (each fragment's cost is
//!   computed once and reused, so this check is linear in the document's size);
//! - more than `max_aliases` aliased fields (each alias is a separate resolution);
//! - more than `max_mutations` mutation fields (each is a separate batch);
//! - fragments spreading fragments more than [`MAX_SPREAD_DEPTH`] deep (the walk follows
//!   each spread, so a chain is as deep as it is long);
//! - a complexity over `max_complexity`, where a field costs 1 plus its children's cost
//!   multiplied by the number of items it may return: its `first` or `limit` argument (or
//!   that argument's default page) for a listing; for a list with no page argument of its
//!   own, the bound [`LIST_BOUNDS`] gives it (its root field's page or input, or a cap the
//!   field enforces); 1 otherwise. Items of a connection (`edges`, `nodes`) are already
//!   counted by the connection's page. A page given by a variable the request does not set
//!   counts as the operation's default for it, or the largest page when it has none. A few
//!   fields that compute a whole derived structure per call (an entity's topic and
//!   associations: the topic network) cost [`NETWORK_COST`] each.
//!
//! Over a WebSocket ([`SubscriptionsOnly`] in the connection's data) only subscriptions
//! are served: queries and mutations go over HTTP, where they get a deadline and a
//! response cap.
//!
//! All arithmetic saturates, so no document can overflow the count.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use foldhash::fast::RandomState;

use async_graphql::extensions::{Extension, ExtensionContext, ExtensionFactory, NextPrepareRequest};
use async_graphql::parser::types::{
    DocumentOperations, ExecutableDocument, OperationType, Selection, SelectionSet,
};
use async_graphql::registry::{MetaType, Registry};
use async_graphql::{Positioned, Request, ServerError, ServerResult, Value, Variables};

use crate::error::code;
use crate::exec::limits::Limits;

/// How many items a list field with no page argument of its own may return.
#[derive(Clone, Copy, Debug)]
enum Bound {
    /// An argument of the root field it was reached through: a number (the root's page,
    /// `default` when absent), or the length of a list (the input a mutation was given),
    /// times `times`, divided by `per` (rounded up).
    Root { arg: &'static str, default: u64, times: u64, per: u64 },
    /// The sum of the lengths of every list argument of the root field (plus one): what a
    /// mutation writes or names is what it was given.
    Input { times: u64 },
    /// A cap the field or the engine enforces.
    Fixed(u64),
    /// Values computed with their parent (intervals, properties, ranks, stretches): no
    /// work per item, and no field below them reads anything; the response limit bounds
    /// how many.
    Data,
}

const fn root(arg: &'static str, default: u64) -> Bound {
    Bound::Root { arg, default, times: 1, per: 1 }
}

/// The bound of every list field of the schema that has no page argument of its own and
/// whose items are objects (`budget::tests` fails on one missing). Fields that list
/// what the data holds without a page of their own (an entity's facts, a fact's
/// provenance…) take a `first` of their own instead.
const LIST_BOUNDS: &[(&str, &str, Bound)] = &[
    // Results of a root field, as many as its page.
    ("SearchResult", "hits", root("limit", ostrakon_engine::limits::MAX_SEARCH_LIMIT as u64)),
    ("SearchResult", "matchedEntities", Bound::Fixed(ostrakon_engine::limits::MAX_QUERY_ENTITIES as u64)),
    ("SearchResult", "topics", Bound::Fixed(ostrakon_engine::limits::MAX_TOPICS as u64)),
    ("Overlaps", "pairs", root("limit", 100)),
    ("Changes", "top", root("top", 10)),
    ("Aggregate", "groups", root("first", 100)),
    ("Series", "groups", root("first", 100)),
    ("Durations", "values", root("first", 100)),
    ("Timeline", "lanes", root("first", 100)),
    ("Lane", "held", root("first", 100)),
    ("Neighborhood", "nodes", root("first", 100)),
    ("Neighborhood", "edges", root("first", 100)),
    ("RecordList", "items", root("first", 50)),
    // A context block holds what fits its token budget, a line (at least four tokens) an
    // item.
    ("Context", "intentions", Bound::Root { arg: "budget", default: 1000, times: 1, per: 4 }),
    ("Context", "facts", Bound::Root { arg: "budget", default: 1000, times: 1, per: 4 }),
    ("Context", "episodes", Bound::Root { arg: "budget", default: 1000, times: 1, per: 4 }),
    ("Context", "entities", Bound::Root { arg: "budget", default: 1000, times: 1, per: 4 }),
    ("Context", "tiers", Bound::Root { arg: "budget", default: 1000, times: 1, per: 4 }),
    ("ContextTier", "records", Bound::Root { arg: "budget", default: 1000, times: 1, per: 4 }),
    // What a mutation wrote, named or recalled: what it was given (an assertion may
    // create its subject and its object).
    ("WritePayload", "facts", Bound::Input { times: 1 }),
    ("WritePayload", "createdEntities", Bound::Input { times: 2 }),
    ("RecordEpisodePayload", "facts", Bound::Input { times: 1 }),
    ("RecordEpisodePayload", "statements", Bound::Input { times: 1 }),
    ("WritePayload", "statements", Bound::Input { times: 1 }),
    ("RecordEpisodePayload", "createdEntities", Bound::Input { times: 2 }),
    ("RecordEpisodePayload", "entities", Bound::Fixed(ostrakon_engine::limits::MAX_MENTIONS as u64)),
    ("RecallPayload", "records", Bound::Input { times: 1 }),
    // Reports of upkeep, capped where they are listed.
    ("FiringPayload", "fired", Bound::Fixed(crate::objects::payloads::MAX_REPORTED as u64)),
    ("SegmentsPayload", "closed", Bound::Fixed(crate::objects::payloads::MAX_REPORTED as u64)),
    ("ConsolidationPayload", "merged", Bound::Fixed(crate::objects::payloads::MAX_REPORTED as u64)),
    ("ConsolidationPayload", "corroborated", Bound::Fixed(crate::objects::payloads::MAX_REPORTED as u64)),
    ("ConsolidationPayload", "dormant", Bound::Fixed(crate::objects::payloads::MAX_REPORTED as u64)),
    ("ClosedSegment", "episodes", Bound::Fixed(crate::objects::payloads::MAX_REPORTED_EPISODES as u64)),
    // Small by construction.
    ("Topic", "episodes", Bound::Fixed(3)),
    ("Episode", "outdated", Bound::Fixed(ostrakon_engine::limits::MAX_OUTDATED as u64)),
    ("OutdatedStatement", "replacedBy", Bound::Fixed(ostrakon_engine::limits::MAX_REPLACEMENTS as u64)),
    ("Intention", "entities", Bound::Fixed(ostrakon_engine::limits::MAX_MENTIONS as u64)),
    ("Entity", "properties", Bound::Data),
    ("Fact", "effective", Bound::Data),
    ("Explanation", "components", Bound::Data),
    ("Namespace", "predicates", Bound::Data),
    ("ErasePayload", "records", Bound::Data),
    ("Erasure", "records", Bound::Data),
    // Introspection: the schema's own lists, estimated as before until introspection has a
    // budget of its own.
    ("__Schema", "types", Bound::Fixed(10)),
    ("__Schema", "directives", Bound::Fixed(10)),
    ("__Type", "fields", Bound::Fixed(10)),
    ("__Type", "inputFields", Bound::Fixed(10)),
    ("__Type", "enumValues", Bound::Fixed(10)),
    ("__Type", "interfaces", Bound::Fixed(10)),
    ("__Type", "possibleTypes", Bound::Fixed(10)),
    ("__Field", "args", Bound::Fixed(10)),
    ("__Directive", "args", Bound::Fixed(10)),
];

/// Deepest chain of fragments spreading fragments: each spread is a level of the walk,
/// and a document of 2 MiB can chain 40,000 fragments, far past any thread's stack.
pub(crate) const MAX_SPREAD_DEPTH: u64 = 64;

/// Items assumed for a listing whose page argument is absent and has no default.
const DEFAULT_PAGE: u64 = 50;

/// The cost of one call of a field that builds the namespace's topic network (a few
/// milliseconds: as much as thousands of fields).
pub const NETWORK_COST: u64 = 5_000;

/// Fields whose one call costs far more than a field: (type, field, cost).
/// The analytics that read every slot of a predicate cost as much as the network.
const EXPENSIVE: &[(&str, &str, u64)] = &[
    ("Entity", "topic", NETWORK_COST),
    ("Entity", "related", NETWORK_COST),
    ("Query", "inForceSeries", NETWORK_COST),
    ("Query", "changes", NETWORK_COST),
    ("Query", "overlaps", NETWORK_COST),
    ("Query", "aggregate", NETWORK_COST),
    ("Query", "sparql", NETWORK_COST),
];

/// Put in a WebSocket connection's data: only subscriptions are served there.
#[derive(Clone, Copy, Debug, Default)]
pub struct SubscriptionsOnly;

/// Put in a connection's data: which documents may run there (a server's allow-list);
/// `Err` is the code and message of the refusal.
#[derive(Clone)]
pub struct DocumentCheck(pub Arc<DocumentCheckFn>);

/// See [`DocumentCheck`]: `Err` carries the refusal's code and message.
pub type DocumentCheckFn = dyn Fn(&str) -> Result<(), (&'static str, String)> + Send + Sync;

/// The extension that holds every request to its [`Limits`] before validation.
#[derive(Clone)]
pub(crate) struct Budget {
    limits: Limits,
    /// The cost of each document whose cost no variable decides (its pages are literals
    /// or defaults), by its text: measured once, as documents come back with other
    /// variables over and over (the walk was a tenth of a point read's instructions).
    costs: Arc<Mutex<HashMap<String, Cost, RandomState>>>,
}

impl Budget {
    pub(crate) fn new(limits: Limits) -> Budget {
        Budget { limits, costs: Arc::default() }
    }

    /// Whether `document` (the text `query`) is within the limits with these variables.
    pub(crate) fn allows(
        &self,
        registry: &Registry,
        query: &str,
        document: &ExecutableDocument,
        variables: &Variables,
    ) -> bool {
        within(self.cost(registry, query, document, variables), &self.limits).is_ok()
    }

    /// `document`'s cost, from the kept costs when it was measured before and no
    /// variable decides it.
    fn cost(
        &self,
        registry: &Registry,
        query: &str,
        document: &ExecutableDocument,
        variables: &Variables,
    ) -> Cost {
        let costs = || self.costs.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(cost) = costs().get(query) {
            return *cost;
        }
        let (cost, fixed) = measure(registry, document, variables, self.limits.max_page as u64);
        if fixed && query.len() <= CACHED_DOCUMENT_BYTES {
            let mut costs = costs();
            if costs.len() >= CACHED_DOCUMENTS {
                costs.clear();
            }
            costs.insert(query.to_owned(), cost);
        }
        cost
    }
}

/// Longest document kept parsed.
const CACHED_DOCUMENT_BYTES: usize = 16 * 1024;
/// Most documents kept parsed; past it the cache starts over.
const CACHED_DOCUMENTS: usize = 512;

/// Parsed documents by their text. Clients send the same few documents with other
/// variables over and over, and parsing one (pest) costs more than the point read it
/// asks for. Parse errors are not kept.
static DOCUMENTS: std::sync::LazyLock<Mutex<HashMap<String, Arc<ExecutableDocument>, RandomState>>> =
    std::sync::LazyLock::new(Default::default);

/// `query` parsed, shared with the cache when it was parsed before: for looking at a
/// document without copying it (the server reads an operation's type this way before
/// running it).
pub fn parsed_document(query: &str) -> Result<Arc<ExecutableDocument>, async_graphql::parser::Error> {
    let cache = || DOCUMENTS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(document) = cache().get(query) {
        return Ok(Arc::clone(document));
    }
    let document = Arc::new(async_graphql::parser::parse_query(query)?);
    if query.len() <= CACHED_DOCUMENT_BYTES {
        let mut cache = cache();
        if cache.len() >= CACHED_DOCUMENTS {
            cache.clear();
        }
        cache.insert(query.to_owned(), Arc::clone(&document));
    }
    Ok(document)
}

/// `query` parsed, from the cache when it was parsed before: a copy of the cached tree
/// (cheap beside parsing), which a request takes to run.
pub fn parse_document(query: &str) -> Result<ExecutableDocument, async_graphql::parser::Error> {
    parsed_document(query).map(Arc::unwrap_or_clone)
}

impl ExtensionFactory for Budget {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(self.clone())
    }
}

#[async_trait::async_trait]
impl Extension for Budget {
    async fn prepare_request(
        &self,
        ctx: &ExtensionContext<'_>,
        mut request: Request,
        next: NextPrepareRequest<'_>,
    ) -> ServerResult<Request> {
        // Parsed here (once: the request takes a copy of the kept tree), so that nothing
        // walks the document's fragments before it is measured; a parse error is
        // classified by its kind.
        let document = match parsed_document(&request.query) {
            Ok(document) => document,
            Err(error) => {
                let kind = match error {
                    async_graphql::parser::Error::RecursionLimitExceeded => code::LIMIT_EXCEEDED,
                    _ => code::BAD_REQUEST,
                };
                let mut refused = ServerError::from(error);
                refused.extensions.get_or_insert_with(Default::default).set("code", kind);
                return Err(refused);
            }
        };
        if ctx.data_opt::<SubscriptionsOnly>().is_some() && !only_subscriptions(&document) {
            return Err(refusal(
                code::BAD_REQUEST,
                "over a WebSocket only subscriptions are served; send queries and mutations as HTTP POST"
                    .into(),
            ));
        }
        if let Some(DocumentCheck(check)) = ctx.data_opt::<DocumentCheck>() {
            check(&request.query).map_err(|(code, message)| refusal(code, message))?;
        }
        let cost = self.cost(&ctx.schema_env.registry, &request.query, &document, &request.variables);
        within(cost, &self.limits)?;
        request.set_parsed_query(Arc::unwrap_or_clone(document));
        next.run(ctx, request).await
    }
}

fn only_subscriptions(document: &ExecutableDocument) -> bool {
    match &document.operations {
        DocumentOperations::Single(op) => op.node.ty == OperationType::Subscription,
        DocumentOperations::Multiple(ops) => ops.values().all(|op| op.node.ty == OperationType::Subscription),
    }
}

fn refusal(code: &str, message: String) -> ServerError {
    let mut error = ServerError::new(message, None);
    error.extensions.get_or_insert_with(Default::default).set("code", code);
    error
}

/// What a document costs once its fragments are expanded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Cost {
    /// Fields, counted once per place they end up after fragment expansion.
    pub fields: u64,
    /// Fields that carry an alias.
    pub aliases: u64,
    /// Root fields of mutation operations.
    pub mutations: u64,
    /// Complexity: lists multiplied by their page size.
    pub complexity: u64,
    /// Deepest nesting of fields, fragments expanded.
    pub depth: u64,
    /// Deepest chain of fragment spreads (past [`MAX_SPREAD_DEPTH`] the walk stops and
    /// this is the maximum).
    pub spreads: u64,
}

impl Cost {
    fn add(self, other: Cost) -> Cost {
        Cost {
            fields: self.fields.saturating_add(other.fields),
            aliases: self.aliases.saturating_add(other.aliases),
            mutations: self.mutations.saturating_add(other.mutations),
            complexity: self.complexity.saturating_add(other.complexity),
            depth: self.depth.max(other.depth),
            spreads: self.spreads.max(other.spreads),
        }
    }
}

/// Refuses a cost over any limit; the error names the limit.
fn within(cost: Cost, limits: &Limits) -> ServerResult<()> {
    let over = [
        ("levels of nesting", cost.depth, limits.max_depth as u64),
        ("fields after fragment expansion", cost.fields, limits.max_fields as u64),
        ("aliased fields", cost.aliases, limits.max_aliases as u64),
        ("mutations", cost.mutations, limits.max_mutations as u64),
        ("complexity", cost.complexity, limits.max_complexity as u64),
        ("levels of fragments spreading fragments", cost.spreads, MAX_SPREAD_DEPTH),
    ];
    match over.iter().find(|(_, value, max)| value > max) {
        Some((what, value, max)) => {
            let shown = if *value == u64::MAX { "more than 2^64".to_owned() } else { value.to_string() };
            Err(refusal(
                code::LIMIT_EXCEEDED,
                format!("limit exceeded in `query`: {shown} {what} (at most {max})"),
            ))
        }
        None => Ok(()),
    }
}

/// The cost of every operation of a document, and whether it is the same whatever the
/// variables (no page is given by a variable).
pub(crate) fn measure(
    registry: &Registry,
    document: &ExecutableDocument,
    variables: &Variables,
    max_page: u64,
) -> (Cost, bool) {
    let mut walker = Walker {
        registry,
        document,
        variables,
        defaults: HashMap::new(),
        max_page,
        fragments: HashMap::new(),
        roots: HashMap::new(),
        read_variables: Cell::new(false),
        spreading: 0,
        root_types: [
            Some(registry.query_type.as_str()),
            registry.mutation_type.as_deref(),
            registry.subscription_type.as_deref(),
        ],
        root: None,
    };
    let operations: Vec<_> = match &document.operations {
        DocumentOperations::Single(op) => vec![op],
        DocumentOperations::Multiple(ops) => ops.values().collect(),
    };
    let mut total = Cost::default();
    for op in operations {
        let root = match op.node.ty {
            OperationType::Query => Some(registry.query_type.as_str()),
            OperationType::Mutation => registry.mutation_type.as_deref(),
            OperationType::Subscription => registry.subscription_type.as_deref(),
        };
        // The operation's variable defaults stand in for variables the request leaves out,
        // as they do when it runs; fragments are measured again under them.
        walker.defaults = op
            .node
            .variable_definitions
            .iter()
            .filter_map(|d| Some((d.node.name.node.clone(), d.node.default_value.as_ref()?.node.clone())))
            .collect();
        if !walker.defaults.is_empty() {
            walker.fragments.clear();
            walker.roots.clear();
        }
        let mut cost = walker.selection_set(&op.node.selection_set, root);
        if op.node.ty == OperationType::Mutation {
            cost.mutations = walker.root_fields(&op.node.selection_set.node);
        }
        total = total.add(cost);
    }
    (total, !walker.read_variables.get())
}

struct Walker<'a> {
    registry: &'a Registry,
    document: &'a ExecutableDocument,
    variables: &'a Variables,
    /// The current operation's variable defaults.
    defaults: HashMap<async_graphql::Name, Value>,
    max_page: u64,
    /// Each fragment's cost on its type condition under a root field (by its address:
    /// bounds read the root's arguments); `None` while it is being measured (a cycle,
    /// which validation reports, then counts nothing).
    fragments: HashMap<(&'a str, usize), Option<Cost>>,
    /// Each fragment's count of fields at its top level, likewise.
    roots: HashMap<&'a str, Option<u64>>,
    /// Whether a page was read from a variable.
    read_variables: Cell<bool>,
    /// Fragments being measured, one inside the other: the walk's own depth.
    spreading: u64,
    /// The names of the operation types (a field of one is a root field).
    root_types: [Option<&'a str>; 3],
    /// The root field the walk is under.
    root: Option<&'a async_graphql::parser::types::Field>,
}

impl<'a> Walker<'a> {
    fn selection_set(&mut self, set: &'a Positioned<SelectionSet>, parent: Option<&str>) -> Cost {
        let mut total = Cost::default();
        for item in &set.node.items {
            let cost = match &item.node {
                Selection::Field(field) => {
                    let f = &field.node;
                    let meta = parent
                        .and_then(|p| self.registry.types.get(p))
                        .and_then(|t| t.field_by_name(f.name.node.as_str()));
                    let child = meta.map(|m| async_graphql::registry::MetaTypeName::concrete_typename(&m.ty));
                    let outer = self.root;
                    if parent.is_some() && self.root_types.contains(&parent) {
                        self.root = Some(f);
                    }
                    let children = self.selection_set(&f.selection_set, child);
                    self.root = outer;
                    let items = match (parent, meta) {
                        (Some(p), Some(m)) => self.items(p, m, f),
                        _ => 1,
                    };
                    let own = parent
                        .and_then(|p| {
                            EXPENSIVE.iter().find(|(t, name, _)| *t == p && *name == f.name.node.as_str())
                        })
                        .map_or(1, |(_, _, cost)| *cost);
                    Cost {
                        fields: children.fields.saturating_add(1),
                        aliases: children.aliases.saturating_add(u64::from(f.alias.is_some())),
                        mutations: 0,
                        complexity: children.complexity.saturating_mul(items).saturating_add(own),
                        depth: children.depth.saturating_add(1),
                        spreads: children.spreads,
                    }
                }
                Selection::FragmentSpread(spread) => self.fragment(spread.node.fragment_name.node.as_str()),
                Selection::InlineFragment(inline) => {
                    let on = inline.node.type_condition.as_ref().map(|c| c.node.on.node.as_str()).or(parent);
                    let on = on.map(str::to_owned);
                    self.selection_set(&inline.node.selection_set, on.as_deref())
                }
            };
            total = total.add(cost);
        }
        total
    }

    fn fragment(&mut self, name: &'a str) -> Cost {
        let key = (name, self.root.map_or(0, |r| std::ptr::from_ref(r) as usize));
        match self.fragments.get(&key) {
            Some(Some(cost)) => return *cost,
            Some(None) => return Cost::default(),
            None => {}
        }
        let Some(def) = self.document.fragments.get(name) else {
            return Cost::default(); // unknown: validation refuses it
        };
        if self.spreading >= MAX_SPREAD_DEPTH {
            // Refused by its spreads; the walk goes no deeper.
            return Cost { spreads: MAX_SPREAD_DEPTH + 1, ..Cost::default() };
        }
        self.fragments.insert(key, None);
        let on = def.node.type_condition.node.on.node.as_str();
        self.spreading += 1;
        let mut cost = self.selection_set(&def.node.selection_set, Some(on));
        self.spreading -= 1;
        cost.spreads = cost.spreads.saturating_add(1);
        self.fragments.insert(key, Some(cost));
        cost
    }

    /// How many items a field of `parent` may return.
    fn items(
        &self,
        parent: &str,
        meta: &async_graphql::registry::MetaField,
        field: &async_graphql::parser::types::Field,
    ) -> u64 {
        let returns = async_graphql::registry::MetaTypeName::concrete_typename(&meta.ty);
        let listing = meta.ty.contains('[') || returns.ends_with("Connection");
        // A page argument of a field that returns one object (`aggregate(first:)`) bounds
        // a list inside it, not the field.
        for page in ["first", "limit"].into_iter().filter(|_| listing) {
            let Some(arg) = meta.args.get(page) else { continue };
            let Some(given) = field.get_argument(page) else {
                // Absent: the resolver's default page.
                let default = arg.default_value.as_deref().and_then(|d| d.parse::<u64>().ok());
                return default.unwrap_or(DEFAULT_PAGE).clamp(1, self.max_page);
            };
            // A variable the request does not set takes the operation's default; one with
            // neither counts as the largest page; a page over the limit is refused by its resolver,
            // naming the argument, and counts as the largest page here.
            let n = given
                .node
                .clone()
                .into_const_with(|name| {
                    self.read_variables.set(true);
                    self.variables.get(&name).or_else(|| self.defaults.get(&name)).cloned().ok_or(())
                })
                .ok()
                .and_then(|v| match v {
                    Value::Number(n) => n.as_i64(),
                    _ => None,
                })
                .map_or(self.max_page, |n| n.max(1) as u64);
            return n.min(self.max_page);
        }
        let is_list = meta.ty.contains('[');
        let in_connection = self.registry.types.get(parent).is_some_and(|t| match t {
            MetaType::Object { name, .. } => name.ends_with("Connection") || name.ends_with("Edge"),
            _ => false,
        });
        if !is_list || in_connection || field.selection_set.node.items.is_empty() {
            // One item, a connection's page (counted by the connection), or values with
            // nothing below them (the response limit bounds how many).
            return 1;
        }
        let bound = LIST_BOUNDS.iter().find(|(t, f, _)| *t == parent && *f == meta.name).map(|(_, _, b)| *b);
        match bound {
            Some(Bound::Fixed(n)) => n.max(1),
            Some(Bound::Data) => 1,
            Some(Bound::Root { arg, default, times, per }) => {
                let n = self.root_argument(arg).unwrap_or(default);
                n.saturating_mul(times).div_ceil(per.max(1)).max(1)
            }
            Some(Bound::Input { times }) => self.root_input().saturating_mul(times).max(1),
            // A list this table forgot (its test fails): the largest page.
            None => self.max_page,
        }
    }

    /// An argument of the root field as a count: a number, or the length of a list.
    /// `None` when absent; a variable the request does not set counts as the operation's
    /// default for it, or as the largest page.
    fn root_argument(&self, arg: &str) -> Option<u64> {
        let given = self.root?.get_argument(arg)?;
        let value = given
            .node
            .clone()
            .into_const_with(|name| {
                self.read_variables.set(true);
                self.variables.get(&name).or_else(|| self.defaults.get(&name)).cloned().ok_or(())
            })
            .ok();
        Some(match value {
            Some(Value::Number(n)) => n.as_u64().unwrap_or(0),
            Some(Value::List(items)) => items.len() as u64,
            _ => self.max_page,
        })
    }

    /// One more than the total length of the root field's list arguments (literal, or
    /// given by variables): what a mutation was given.
    fn root_input(&self) -> u64 {
        let Some(root) = self.root else { return self.max_page };
        root.arguments.iter().fold(1u64, |n, (_, given)| {
            let value = given.node.clone().into_const_with(|name| {
                self.read_variables.set(true);
                self.variables.get(&name).or_else(|| self.defaults.get(&name)).cloned().ok_or(())
            });
            match value {
                Ok(Value::List(items)) => n.saturating_add(items.len() as u64),
                Ok(_) => n,
                // A variable left unset and without a default: as large as a page may be.
                Err(()) => n.saturating_add(self.max_page),
            }
        })
    }

    /// Fields at the top level of a selection set, through fragments (each fragment
    /// counted once and reused; a cycle counts nothing).
    fn root_fields(&mut self, set: &'a SelectionSet) -> u64 {
        let mut n = 0u64;
        for item in &set.items {
            let more = match &item.node {
                Selection::Field(_) => 1,
                Selection::FragmentSpread(s) => {
                    let name = s.node.fragment_name.node.as_str();
                    match self.roots.get(name) {
                        Some(known) => known.unwrap_or(0),
                        None => match self.document.fragments.get(name) {
                            None => 0,
                            // As deep as the cost's walk, which refuses the document.
                            Some(_) if self.spreading >= MAX_SPREAD_DEPTH => 0,
                            Some(def) => {
                                self.roots.insert(name, None);
                                self.spreading += 1;
                                let count = self.root_fields(&def.node.selection_set.node);
                                self.spreading -= 1;
                                self.roots.insert(name, Some(count));
                                count
                            }
                        },
                    }
                }
                Selection::InlineFragment(i) => self.root_fields(&i.node.selection_set.node),
            };
            n = n.saturating_add(more);
        }
        n
    }
}

/// Root fields of a point read: each resolves one entity or one slot.
const POINT_ROOTS: &[&str] = &["__typename", "entity", "facts", "history"];

/// Fields whose answer grows with the data beyond one entity or slot (a list of every
/// fact pointing at an entity, every mention, the topic network).
const WIDE_FIELDS: &[&str] = &["incoming", "mentions", "related", "topic", "history", "neighbors"];

/// Most fields, and deepest nesting, of a point read.
const POINT_FIELDS: usize = 32;
const POINT_DEPTH: usize = 5;

/// Whether the operation `name` of `document` is a point read: a query whose root fields
/// are each one entity (`entity`), one slot (`history`) or the facts of one subject
/// (`facts` with a `subject`), in a small document (at most `POINT_FIELDS` fields,
/// `POINT_DEPTH` levels, no fragments, none of `WIDE_FIELDS` below the root). Its
/// cost is bounded by the size of one entity, so a server may run it where it received
/// it instead of handing it to another thread.
pub fn is_point_read(document: &ExecutableDocument, name: Option<&str>) -> bool {
    if !document.fragments.is_empty() {
        return false;
    }
    let Some(op) = selected_operation(document, name) else { return false };
    if op.ty != OperationType::Query {
        return false;
    }
    let roots_are_points = op.selection_set.node.items.iter().all(|item| match &item.node {
        Selection::Field(field) => {
            let f = &field.node;
            let root = f.name.node.as_str();
            POINT_ROOTS.contains(&root) && (root != "facts" || f.get_argument("subject").is_some())
        }
        _ => false,
    });
    if !roots_are_points {
        return false;
    }
    let mut fields = 0;
    small(&op.selection_set.node, 1, &mut fields)
}

/// The operation a request named `name` runs: the only one, or the one of that name.
pub fn selected_operation<'a>(
    document: &'a ExecutableDocument,
    name: Option<&str>,
) -> Option<&'a async_graphql::parser::types::OperationDefinition> {
    match (&document.operations, name) {
        (DocumentOperations::Single(op), _) => Some(&op.node),
        (DocumentOperations::Multiple(ops), Some(name)) => ops.get(name).map(|op| &op.node),
        (DocumentOperations::Multiple(ops), None) if ops.len() == 1 => ops.values().next().map(|op| &op.node),
        (DocumentOperations::Multiple(_), None) => None,
    }
}

/// Whether a selection set below the root stays within the point-read bounds.
fn small(set: &SelectionSet, depth: usize, fields: &mut usize) -> bool {
    if depth > POINT_DEPTH {
        return false;
    }
    set.items.iter().all(|item| match &item.node {
        Selection::Field(field) => {
            *fields += 1;
            let name = field.node.name.node.as_str();
            *fields <= POINT_FIELDS
                && (depth == 1 || !WIDE_FIELDS.contains(&name))
                && small(&field.node.selection_set.node, depth + 1, fields)
        }
        _ => false,
    })
}

#[cfg(test)]
mod point_tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn point(query: &str) -> bool {
        is_point_read(&async_graphql::parser::parse_query(query).unwrap(), None)
    }

    #[test]
    fn a_document_is_parsed_once_and_shared() {
        let query = "query SharedOnce($e: ID!) { entity(namespace: \"n\", id: $e) { name } }";
        let first = parsed_document(query).unwrap();
        let again = parsed_document(query).unwrap();
        assert!(Arc::ptr_eq(&first, &again), "the second look reads the cached tree");
        // A request's own copy equals the shared tree, and leaves the cache as it was.
        let copy = parse_document(query).unwrap();
        assert_eq!(format!("{copy:?}"), format!("{:?}", *first));
        assert!(Arc::ptr_eq(&first, &parsed_document(query).unwrap()));
        // Long documents are not kept: each look parses anew.
        let long = format!("{{ {} }}", "__typename ".repeat(CACHED_DOCUMENT_BYTES / 10));
        assert!(!Arc::ptr_eq(&parsed_document(&long).unwrap(), &parsed_document(&long).unwrap()));
        assert!(parsed_document("{").is_err());
    }

    #[test]
    fn only_small_reads_of_one_entity_or_slot_are_point_reads() {
        assert!(point(
            r#"query($e:ID!){ facts(namespace:"n", subject:{id:$e}, predicate:"p") { nodes { object { integer } } } }"#
        ));
        assert!(point(r#"{ entity(namespace:"n", name:"a") { name facts { predicate object { text } } } }"#));
        assert!(point(
            r#"{ history(namespace:"n", subject:{name:"a"}, predicate:"p") { nodes { status } } }"#
        ));
        assert!(point("{ __typename }"));
        // No subject: every subject of a predicate.
        assert!(!point(r#"{ facts(namespace:"n", predicate:"p") { nodes { id } } }"#));
        assert!(!point(r#"{ search(namespace:"n", text:"x") { hits { score } } }"#));
        assert!(!point(r#"mutation { recordEpisode(namespace:"n", episode:{text:"x"}) { seq } }"#));
        // Wide below the root, fragments, or too deep.
        assert!(!point(r#"{ entity(namespace:"n", name:"a") { incoming { id } } }"#));
        assert!(!point(r#"{ entity(namespace:"n", name:"a") { topic { label } } }"#));
        assert!(!point(r#"{ entity(namespace:"n", name:"a") { ...F } } fragment F on Entity { name }"#));
        assert!(!point(
            r#"{ entity(namespace:"n", name:"a") { facts { subject { facts { subject { facts { id } } } } } } }"#
        ));
        // Of several operations, the one named.
        let doc = async_graphql::parser::parse_query(
            r#"query A { entity(namespace:"n", name:"a") { name } } query B { search(namespace:"n", text:"x") { hits { score } } }"#,
        )
        .unwrap();
        assert!(is_point_read(&doc, Some("A")));
        assert!(!is_point_read(&doc, Some("B")));
        assert!(!is_point_read(&doc, None));
    }
}

#[cfg(test)]
mod bound_tests {
    #![allow(clippy::unwrap_used)]

    use async_graphql::parser::parse_schema;
    use async_graphql::parser::types::{BaseType, TypeKind, TypeSystemDefinition};

    use super::*;

    /// Every list of objects in the schema has a page of its own or a declared bound, and
    /// every declared bound names a list that exists.
    #[test]
    fn every_list_is_paged_or_bounded() {
        let doc = parse_schema(crate::sdl()).unwrap();
        let objects: Vec<_> = doc
            .definitions
            .iter()
            .filter_map(|d| match d {
                TypeSystemDefinition::Type(t) => match &t.node.kind {
                    TypeKind::Object(o) => Some((t.node.name.node.to_string(), o)),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        let is_object = |name: &str| objects.iter().any(|(n, _)| n == name);
        let mut lists = Vec::new();
        let mut unbounded = Vec::new();
        for (name, object) in &objects {
            if name.ends_with("Connection") || name.ends_with("Edge") {
                continue;
            }
            for field in &object.fields {
                let f = &field.node;
                let BaseType::List(item) = &f.ty.node.base else { continue };
                let BaseType::Named(item) = &item.base else { continue };
                if !is_object(item.as_str()) {
                    continue;
                }
                let field_name = f.name.node.to_string();
                let paged =
                    f.arguments.iter().any(|a| matches!(a.node.name.node.as_str(), "first" | "limit"));
                let bounded = LIST_BOUNDS.iter().any(|(t, n, _)| t == name && *n == field_name);
                if !paged && !bounded {
                    unbounded.push(format!("{name}.{field_name}"));
                }
                lists.push(format!("{name}.{field_name}"));
            }
        }
        assert!(unbounded.is_empty(), "lists with neither a page nor a bound: {unbounded:?}");
        // (Introspection's types are not in the SDL.)
        for (t, f, _) in LIST_BOUNDS.iter().filter(|(t, _, _)| !t.starts_with("__")) {
            assert!(
                lists.contains(&format!("{t}.{f}")),
                "a bound for {t}.{f}, which is not a list of objects"
            );
        }
    }
}
