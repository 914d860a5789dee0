//! The executor: requests run as the schema runs them, on a bare copy of it when the
//! extensions surely have nothing to do.

use std::sync::Arc;

use ostrakon_engine::Store;

use crate::error;
use crate::exec::access::Access;
use crate::exec::budget::parsed_document;
use crate::exec::build::{OstrakonSchema, OstrakonSchemaBuilder, bare, checked};
use crate::exec::limits::Limits;
use crate::exec::{budget, plan, validated};

/// Runs requests as the [`schema`](crate::exec::build::schema) does, faster where it can say in advance that the
/// extensions have nothing to do.
///
/// async-graphql runs every field of a schema with extensions through their chain (a
/// boxed call per extension and a registry lookup per field) even when, as here, none of
/// them looks at fields. So the executor holds two schemas of the same types and data:
/// the checked one, with the extensions, and a bare one with a single extension that only
/// skips validation (async-graphql has no other way to skip it, and its fast mode still
/// walks the whole document). A request whose document passed validation before, whose
/// variables surely conform to its declared types (the test the validation skip uses),
/// and whose cost is within the limits runs on the bare schema and gets its error codes
/// added as the extension adds them; any other runs on the checked schema, so that every
/// refusal reads as it does there. On a point read over HTTP (callgrind, instructions in
/// the request's handler) this took 91 k instructions to 83 k.
#[derive(Clone)]
pub struct Executor {
    checked: OstrakonSchema,
    bare: OstrakonSchema,
    budget: budget::Budget,
    validated: validated::Validated,
    bare_runs: Arc<std::sync::atomic::AtomicU64>,
    plans: Arc<plan::Plans>,
    planned_runs: Arc<std::sync::atomic::AtomicU64>,
    store: Arc<Store>,
    limits: Limits,
}

impl Executor {
    /// Both schemas over `store`; `host` adds the host's data to each (the extensions it
    /// adds run on both).
    pub fn new(
        store: Arc<Store>,
        limits: Limits,
        host: impl Fn(OstrakonSchemaBuilder) -> OstrakonSchemaBuilder,
    ) -> Self {
        let events = crate::exec::events::feed(&store);
        let (budget, validated) = (budget::Budget::new(limits), validated::Validated::default());
        let checked =
            checked(bare(Arc::clone(&store), limits, events.clone()), budget.clone(), validated.clone());
        let bare = bare(Arc::clone(&store), limits, events).extension(validated::Trusted);
        Executor {
            checked: host(checked).finish(),
            bare: host(bare).finish(),
            budget,
            validated,
            bare_runs: Arc::default(),
            plans: Arc::default(),
            planned_runs: Arc::default(),
            store,
            limits,
        }
    }

    /// How many requests a compiled plan answered (`plan.rs`).
    pub fn planned_runs(&self) -> u64 {
        self.planned_runs.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The answer of a compiled plan, if one covers the request and is sure of it.
    fn planned(
        &self,
        request: &async_graphql::Request,
        document: &async_graphql::parser::types::ExecutableDocument,
    ) -> Option<async_graphql::Response> {
        let plan = self.plans.get(&request.query, request.operation_name.as_deref(), document)?;
        let access =
            request.data.get(&std::any::TypeId::of::<Access>()).and_then(|a| a.downcast_ref::<Access>());
        let response = plan.run(&self.store, &self.limits, access, &request.variables)?;
        self.planned_runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Some(response)
    }

    /// The schema with its extensions: the one subscriptions and the SDL come from.
    pub fn schema(&self) -> &OstrakonSchema {
        &self.checked
    }

    /// How many requests ran on the bare schema.
    pub fn bare_runs(&self) -> u64 {
        self.bare_runs.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Runs `request` (which carries its caller's [`Access`]).
    pub async fn execute(&self, request: async_graphql::Request) -> async_graphql::Response {
        match self.runs_bare(&request) {
            Some((document, passed)) => {
                if let Some(response) = self.planned(&request, &document) {
                    return response;
                }
                self.bare_runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let mut request = request.data(validated::Passed(passed));
                request.set_parsed_query(Arc::unwrap_or_clone(document));
                error::with_codes(self.bare.execute(request).await)
            }
            None => self.checked.execute(request).await,
        }
    }

    /// The request's document and what its validation gives, when the checked schema's
    /// extensions surely have nothing to do for it.
    fn runs_bare(
        &self,
        request: &async_graphql::Request,
    ) -> Option<(Arc<async_graphql::parser::types::ExecutableDocument>, async_graphql::ValidationResult)>
    {
        let registry = &self.validated.schema()?.registry;
        let document = parsed_document(&request.query).ok()?;
        let (query, name, variables) =
            (&request.query, request.operation_name.as_deref(), &request.variables);
        let passed = self.validated.passes(query, name, &document, variables)?;
        self.budget.allows(registry, query, &document, variables).then_some((document, passed))
    }
}
