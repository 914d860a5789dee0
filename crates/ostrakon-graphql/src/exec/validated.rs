//! Documents already validated against this schema, so that a client sending the same
//! document with other variables is not validated again.
//!
//! async-graphql validates every request in full (`check_rules`: some twenty rules over
//! the document); for a point read that is more work than the read itself (14 % of the
//! server's time under a point-read load, against 4 % for the engine). Only one of those
//! rules looks at the variables' values (`ArgumentsOfCorrectType`), so a document that
//! passed once, with any variables, passes again as long as its new variables are valid
//! for the types the operation declares for them (another rule,
//! `VariableInAllowedPosition`, already held each variable's type to every place it is
//! used). [`Validated`] keeps the documents that passed, keyed by their text and
//! operation name, and skips validation when the new variables surely conform. Whenever
//! it is not sure (a null, a variable that is not set, a type it does not know),
//! validation runs in full as before, so every error reads exactly as it did. The
//! `Executor` asks the same question ([`Validated::passes`]) to run such a
//! request on its schema without extensions.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use async_graphql::extensions::{
    Extension, ExtensionContext, ExtensionFactory, NextPrepareRequest, NextValidation,
};
use async_graphql::parser::types::{BaseType, ExecutableDocument, Type};
use async_graphql::registry::{MetaType, MetaTypeName, Registry};
use async_graphql::{Request, SchemaEnv, ServerError, ServerResult, ValidationResult, Value, Variables};

use crate::exec::budget::{parsed_document, selected_operation};

/// Longest document kept.
pub(crate) const KEPT_DOCUMENT_BYTES: usize = 16 * 1024;
/// Most documents kept; past it the set starts over.
const KEPT_DOCUMENTS: usize = 512;

/// A document's text and the operation a request selects in it.
type Key = (String, Option<String>);

/// The results of the documents that passed, by text, then by operation name: looked up
/// by the request's own text, with no copy of it.
type PassedSet = HashMap<String, Vec<(Option<String>, ValidationResult)>, foldhash::fast::RandomState>;

/// The extension: one per schema (validity depends on the schema), one instance per request.
#[derive(Clone, Default)]
pub(crate) struct Validated {
    kept: Arc<Kept>,
}

/// What the extension keeps across requests.
#[derive(Default)]
struct Kept {
    passed: Mutex<PassedSet>,
    /// The schema's registry and data, from the first validation that passed (an
    /// extension's context is the only place async-graphql shows them).
    schema: OnceLock<SchemaEnv>,
}

impl Validated {
    fn passed(&self) -> std::sync::MutexGuard<'_, PassedSet> {
        self.kept.passed.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The schema's environment, once a document has passed validation.
    pub(crate) fn schema(&self) -> Option<&SchemaEnv> {
        self.kept.schema.get()
    }

    /// The result of validating `query`'s operation `name` before, if it passed and
    /// `variables` surely conform to what it declares: it would pass again.
    fn earlier(
        &self,
        registry: &Registry,
        query: &str,
        name: Option<&str>,
        document: &ExecutableDocument,
        variables: &Variables,
    ) -> Option<ValidationResult> {
        let earlier = self.passed().get(query).and_then(|operations| {
            operations.iter().find(|(n, _)| n.as_deref() == name).map(|(_, result)| *result)
        })?;
        variables_conform(registry, document, name, variables).then_some(earlier)
    }

    /// What validating a request of `query` (parsed as `document`) would surely give
    /// with these variables: it passed before and they conform.
    pub(crate) fn passes(
        &self,
        query: &str,
        name: Option<&str>,
        document: &ExecutableDocument,
        variables: &Variables,
    ) -> Option<ValidationResult> {
        if query.len() > KEPT_DOCUMENT_BYTES {
            return None;
        }
        self.earlier(&self.schema()?.registry, query, name, document, variables)
    }
}

/// Put in the data of a request that [`Validated::passes`]: what its validation gives.
pub(crate) struct Passed(pub(crate) ValidationResult);

/// The one extension of the `Executor`'s bare schema: a request validated
/// before is not validated again (async-graphql offers no other way to skip it; even its
/// fast mode walks the whole document).
pub(crate) struct Trusted;

impl ExtensionFactory for Trusted {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(Trusted)
    }
}

#[async_trait::async_trait]
impl Extension for Trusted {
    async fn validation(
        &self,
        ctx: &ExtensionContext<'_>,
        next: NextValidation<'_>,
    ) -> Result<ValidationResult, Vec<ServerError>> {
        match ctx.data_opt::<Passed>() {
            Some(Passed(result)) => Ok(*result),
            None => next.run(ctx).await,
        }
    }
}

impl ExtensionFactory for Validated {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(ValidatedRequest { validated: self.clone(), request: Mutex::new(None) })
    }
}

/// What the request's preparation learnt, for its validation.
enum Seen {
    /// Validated before, and the variables conform: this is the earlier result.
    Passed(ValidationResult),
    /// To validate in full; kept under this key if it passes.
    Validate(Key),
    /// To validate in full and not keep (too long).
    ValidateOnly,
}

struct ValidatedRequest {
    validated: Validated,
    request: Mutex<Option<Seen>>,
}

#[async_trait::async_trait]
impl Extension for ValidatedRequest {
    async fn prepare_request(
        &self,
        ctx: &ExtensionContext<'_>,
        request: Request,
        next: NextPrepareRequest<'_>,
    ) -> ServerResult<Request> {
        let seen = if request.query.len() > KEPT_DOCUMENT_BYTES {
            Seen::ValidateOnly
        } else {
            // The tree the request holds is a copy of the kept one.
            let earlier = parsed_document(&request.query).ok().and_then(|document| {
                let name = request.operation_name.as_deref();
                let registry = &ctx.schema_env.registry;
                self.validated.earlier(registry, &request.query, name, &document, &request.variables)
            });
            match earlier {
                Some(result) => Seen::Passed(result),
                None => Seen::Validate((request.query.clone(), request.operation_name.clone())),
            }
        };
        *self.request.lock().unwrap_or_else(PoisonError::into_inner) = Some(seen);
        next.run(ctx, request).await
    }

    async fn validation(
        &self,
        ctx: &ExtensionContext<'_>,
        next: NextValidation<'_>,
    ) -> Result<ValidationResult, Vec<ServerError>> {
        let seen = self.request.lock().unwrap_or_else(PoisonError::into_inner).take();
        match seen {
            Some(Seen::Passed(result)) => Ok(result),
            Some(Seen::Validate(key)) => {
                let result = next.run(ctx).await?;
                self.validated.kept.schema.get_or_init(|| ctx.schema_env.clone());
                let mut passed = self.validated.passed();
                if passed.len() >= KEPT_DOCUMENTS {
                    passed.clear();
                }
                let (query, name) = key;
                let operations = passed.entry(query).or_default();
                operations.retain(|(n, _)| *n != name);
                operations.push((name, result));
                Ok(result)
            }
            Some(Seen::ValidateOnly) | None => next.run(ctx).await,
        }
    }
}

/// Whether every variable the selected operation declares is surely valid for its type:
/// set (or defaulted) and not null, and of that type all the way down. `false` means
/// "not sure", never "invalid".
fn variables_conform(
    registry: &Registry,
    document: &ExecutableDocument,
    name: Option<&str>,
    variables: &Variables,
) -> bool {
    let Some(operation) = selected_operation(document, name) else {
        return false;
    };
    operation.variable_definitions.iter().all(|definition| {
        let definition = &definition.node;
        let value = variables.get(&definition.name.node).or_else(|| definition.default_value());
        value.is_some_and(|value| {
            !matches!(value, Value::Null) && conforms(registry, &definition.var_type.node, value)
        })
    })
}

/// A value against a type of the document.
fn conforms(registry: &Registry, ty: &Type, value: &Value) -> bool {
    match (&ty.base, value) {
        (_, Value::Null) => ty.nullable,
        (BaseType::List(item), Value::List(items)) => items.iter().all(|v| conforms(registry, item, v)),
        // A single value where a list is expected is coerced to a list of one.
        (BaseType::List(item), single) => conforms(registry, item, single),
        (BaseType::Named(name), value) => conforms_named(registry, name, value),
    }
}

/// A value against a type named in the registry's own notation (`[Int!]!`).
fn conforms_meta(registry: &Registry, ty: &str, value: &Value) -> bool {
    match (MetaTypeName::create(ty), value) {
        (MetaTypeName::NonNull(_), Value::Null) => false,
        (MetaTypeName::NonNull(inner), value) => conforms_meta(registry, inner, value),
        (_, Value::Null) => true,
        (MetaTypeName::List(item), Value::List(items)) => {
            items.iter().all(|v| conforms_meta(registry, item, v))
        }
        (MetaTypeName::List(item), single) => conforms_meta(registry, item, single),
        (MetaTypeName::Named(name), value) => conforms_named(registry, name, value),
    }
}

/// A non-null value against a named type.
fn conforms_named(registry: &Registry, name: &str, value: &Value) -> bool {
    match registry.types.get(name) {
        Some(MetaType::Scalar { is_valid, .. }) => is_valid.as_ref().is_none_or(|valid| valid(value)),
        Some(MetaType::Enum { enum_values, .. }) => match value {
            Value::Enum(v) => enum_values.contains_key(v.as_str()),
            Value::String(v) => enum_values.contains_key(v.as_str()),
            _ => false,
        },
        Some(MetaType::InputObject { input_fields, oneof, .. }) => {
            let Value::Object(fields) = value else {
                return false;
            };
            // A one-of input sets exactly one of its fields, and not to null.
            if *oneof && (fields.len() != 1 || fields.values().any(|v| matches!(v, Value::Null))) {
                return false;
            }
            fields.keys().all(|key| input_fields.contains_key(key.as_str()))
                && input_fields.values().all(|field| match fields.get(field.name.as_str()) {
                    Some(v) => conforms_meta(registry, &field.ty, v),
                    None => field.default_value.is_some() || !MetaTypeName::create(&field.ty).is_non_null(),
                })
        }
        _ => false,
    }
}
