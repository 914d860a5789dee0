//! Compiled plans for the point reads agents repeat most: `facts` of one subject (and a
//! predicate), and `history` of one slot, at a read point, with the fact fields that are
//! plain values.
//!
//! A document that has passed validation once (see `validated.rs`) and whose variables
//! conform is, when its shape is one a plan covers, compiled into a [`Plan`]: the root
//! field's arguments (literals or variables), and the response keys and fields of its
//! selection. Running the plan calls [`Store`] as the resolver does and builds the answer's
//! values directly — no future per field, no registry lookups, no argument coercion —
//! then hands back the same `Response` the executor would have built. Whatever the plan
//! is unsure of falls back to the executor: a shape it does not cover is never compiled,
//! and at run time any argument of an unexpected form, any error (a forbidden namespace,
//! an unknown subject, an unreadable time), returns `None`, so the executor answers with
//! its own errors. Reads never write, so running the read again there changes nothing.
//! Tests compare the two paths byte for byte.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use async_graphql::indexmap::IndexMap;
use async_graphql::parser::types::{ExecutableDocument, Field, OperationDefinition, Selection, SelectionSet};
use async_graphql::{Name, Positioned, ScalarType as _, Value};
use ostrakon_core::{Literal, Namespace};
use ostrakon_engine::{Store, views::FactFilter, views::FactView, views::Scope};

use crate::exec::access::{Access, Mode};
use crate::exec::budget::selected_operation;
use crate::exec::context::read_at;
use crate::exec::limits::Limits;
use crate::types::enums::{FactStatus, Polarity, ValueType};
use crate::types::input::{EntityRefInput, existing_entity};
use crate::types::paging::default_page_size;
use crate::types::scalars::DateTime;

/// Longest document a plan is kept for.
const PLANNED_DOCUMENT_BYTES: usize = 16 * 1024;
/// Most documents whose plan (or whose having none) is kept; past it the set starts over.
const PLANNED_DOCUMENTS: usize = 512;

/// The plans of the documents seen, by text, then by operation name (`None`: no plan
/// covers it): looked up by the request's own text, with no copy of it.
type PlanSet = HashMap<String, Vec<(Option<String>, Option<Arc<Plan>>)>, foldhash::fast::RandomState>;

/// The plans of the documents seen.
#[derive(Default)]
pub(crate) struct Plans {
    kept: Mutex<PlanSet>,
}

impl Plans {
    /// The plan of `query`'s operation `name`, compiled on first sight.
    pub(crate) fn get(
        &self,
        query: &str,
        name: Option<&str>,
        document: &ExecutableDocument,
    ) -> Option<Arc<Plan>> {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let known = kept.get(query).and_then(|ops| ops.iter().find(|(n, _)| n.as_deref() == name));
        if let Some((_, found)) = known {
            return found.clone();
        }
        let plan = compile(document, name).map(Arc::new);
        if query.len() <= PLANNED_DOCUMENT_BYTES {
            if kept.len() >= PLANNED_DOCUMENTS {
                kept.clear();
            }
            kept.entry(query.to_owned()).or_default().push((name.map(str::to_owned), plan.clone()));
        }
        plan
    }
}

/// Where an argument's value comes from.
#[derive(Debug)]
enum Source {
    Literal(Value),
    Variable(Name),
    /// An input object some of whose fields are variables.
    Object(Vec<(Name, Source)>),
}

/// Where a value written in a document comes from; `None` for forms the plan leaves to
/// the executor (a list holding variables).
fn source(value: &async_graphql_value::Value) -> Option<Source> {
    use async_graphql_value::Value as Written;
    if let Some(literal) = value.clone().into_const() {
        return Some(Source::Literal(literal));
    }
    match value {
        Written::Variable(name) => Some(Source::Variable(name.clone())),
        Written::Object(fields) => Some(Source::Object(
            fields.iter().map(|(k, v)| Some((k.clone(), source(v)?))).collect::<Option<_>>()?,
        )),
        _ => None,
    }
}

/// The value `source` gives with `variables`; `None` when a variable was not sent.
fn resolve(source: &Source, variables: &async_graphql::Variables) -> Option<Value> {
    match source {
        Source::Literal(v) => Some(v.clone()),
        Source::Variable(v) => variables.get(v).cloned(),
        Source::Object(fields) => Some(Value::Object(
            fields.iter().map(|(k, s)| Some((k.clone(), resolve(s, variables)?))).collect::<Option<_>>()?,
        )),
    }
}

/// A fact field a plan answers.
#[derive(Debug, Clone, Copy)]
enum FactLeaf {
    Id,
    Predicate,
    Polarity,
    Status,
    Reason,
    ContradictionCount,
    Confidence,
    Corroborations,
    AssertedSeq,
    AssertedAt,
    RetractedSeq,
    Importance,
    Correction,
}

/// A field of a fact's `object` a plan answers.
#[derive(Debug, Clone, Copy)]
enum ValueLeaf {
    Type,
    String,
    Integer,
    Float,
    Boolean,
    Time,
}

#[derive(Debug)]
enum NodeField {
    Leaf(FactLeaf),
    Object(Vec<(Name, ValueLeaf)>),
}

/// A compiled `facts` point read.
#[derive(Debug)]
pub(crate) struct Plan {
    /// The root field's response key.
    key: Name,
    /// `history` of one slot rather than `facts`.
    history: bool,
    args: HashMap<String, Source>,
    /// The response keys of `nodes` (each with the same fields, as aliases may ask twice).
    nodes: Vec<(Name, Vec<(Name, NodeField)>)>,
}

fn key_of(field: &Positioned<Field>) -> Name {
    field.node.alias.as_ref().map_or_else(|| field.node.name.node.clone(), |a| a.node.clone())
}

/// The fields of a selection set, if it is only plain fields without directives.
fn plain_fields(set: &SelectionSet) -> Option<Vec<&Positioned<Field>>> {
    set.items
        .iter()
        .map(|item| match &item.node {
            Selection::Field(f) if f.node.directives.is_empty() => Some(f),
            _ => None,
        })
        .collect()
}

/// What argument and selection-less leaf a field is.
fn leaf(field: &Field) -> Option<FactLeaf> {
    if !field.arguments.is_empty() || !field.selection_set.node.items.is_empty() {
        return None;
    }
    Some(match field.name.node.as_str() {
        "id" => FactLeaf::Id,
        "predicate" => FactLeaf::Predicate,
        "polarity" => FactLeaf::Polarity,
        "status" => FactLeaf::Status,
        "reason" => FactLeaf::Reason,
        "contradictionCount" => FactLeaf::ContradictionCount,
        "confidence" => FactLeaf::Confidence,
        "corroborations" => FactLeaf::Corroborations,
        "assertedSeq" => FactLeaf::AssertedSeq,
        "assertedAt" => FactLeaf::AssertedAt,
        "retractedSeq" => FactLeaf::RetractedSeq,
        "importance" => FactLeaf::Importance,
        "correction" => FactLeaf::Correction,
        _ => return None,
    })
}

fn value_leaf(field: &Field) -> Option<ValueLeaf> {
    if !field.arguments.is_empty() || !field.selection_set.node.items.is_empty() {
        return None;
    }
    Some(match field.name.node.as_str() {
        "type" => ValueLeaf::Type,
        "string" => ValueLeaf::String,
        "integer" => ValueLeaf::Integer,
        "float" => ValueLeaf::Float,
        "boolean" => ValueLeaf::Boolean,
        "time" => ValueLeaf::Time,
        _ => return None,
    })
}

/// The arguments a plan takes, as the root field's resolver reads them.
const ARGUMENTS: [&str; 8] =
    ["namespace", "subject", "predicate", "includeAll", "validAt", "knownAt", "knownAtSeq", "at"];

/// The plan of a document's operation `name`, if a plan covers its shape.
fn compile(document: &ExecutableDocument, name: Option<&str>) -> Option<Plan> {
    if !document.fragments.is_empty() {
        return None;
    }
    let operation: &OperationDefinition = selected_operation(document, name)?;
    if operation.ty != async_graphql::parser::types::OperationType::Query || !operation.directives.is_empty()
    {
        return None;
    }
    let [root] = plain_fields(&operation.selection_set.node)?[..] else { return None };
    let history = match root.node.name.node.as_str() {
        "facts" => false,
        "history" => true,
        _ => return None,
    };
    let mut args = HashMap::new();
    for (arg, value) in &root.node.arguments {
        if !ARGUMENTS.contains(&arg.node.as_str()) {
            return None;
        }
        args.insert(arg.node.to_string(), source(&value.node)?);
    }
    // The plan looks a subject up; the other forms go to the executor.
    if !args.contains_key("subject") {
        return None;
    }
    let mut nodes = Vec::new();
    for connection_field in plain_fields(&root.node.selection_set.node)? {
        if connection_field.node.name.node != "nodes" || !connection_field.node.arguments.is_empty() {
            return None;
        }
        let mut fields = Vec::new();
        for f in plain_fields(&connection_field.node.selection_set.node)? {
            let field = if f.node.name.node == "object" {
                if !f.node.arguments.is_empty() {
                    return None;
                }
                let inner = plain_fields(&f.node.selection_set.node)?
                    .into_iter()
                    .map(|v| Some((key_of(v), value_leaf(&v.node)?)))
                    .collect::<Option<Vec<_>>>()?;
                NodeField::Object(inner)
            } else {
                NodeField::Leaf(leaf(&f.node)?)
            };
            fields.push((key_of(f), field));
        }
        nodes.push((key_of(connection_field), fields));
    }
    Some(Plan { key: key_of(root), history, args, nodes })
}

impl Plan {
    /// The value of argument `name`: `Ok(None)` when it is absent or null, `Err` when the
    /// plan is unsure (a variable that was not sent, a value the type refuses).
    fn arg<T: async_graphql::InputType>(
        &self,
        name: &str,
        variables: &async_graphql::Variables,
    ) -> Result<Option<T>, ()> {
        let Some(source) = self.args.get(name) else { return Ok(None) };
        match resolve(source, variables).ok_or(())? {
            Value::Null => Ok(None),
            value => T::parse(Some(value)).map(Some).map_err(|_| ()),
        }
    }

    /// Answers the read as the executor would, or `None` to let it: the resolver's own
    /// steps (`read_at`, `existing_entity`), the arguments coerced by their own types.
    pub(crate) fn run(
        &self,
        store: &Store,
        limits: &Limits,
        access: Option<&Access>,
        variables: &async_graphql::Variables,
    ) -> Option<async_graphql::Response> {
        let namespace: String = self.arg("namespace", variables).ok()??;
        let ns = Namespace::new("namespace", &namespace).ok()?;
        if !access.is_some_and(|a| a.allows(ns.as_str(), Mode::Read)) {
            return None;
        }
        let predicate: Option<String> = self.arg("predicate", variables).ok()?;
        // A predicate the namespace does not know is refused by the executor, with why.
        if let Some(p) = &predicate
            && crate::exec::predicates::known(store, &ns, "predicate", p).is_err()
        {
            return None;
        }
        let include_all = self.arg::<bool>("includeAll", variables).ok()?.unwrap_or(false);
        let time = |name| self.arg::<DateTime>(name, variables);
        let (valid_at, known_at, at) = (time("validAt").ok()?, time("knownAt").ok()?, time("at").ok()?);
        let known_at_seq: Option<u64> = self.arg("knownAtSeq", variables).ok()?;
        let at = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, at.as_ref()).ok()?;
        let known = store.basis(&ns, at).ok()?;
        let subject: EntityRefInput = self.arg("subject", variables).ok()??;
        let subject = existing_entity(store, &ns, known, "subject", &subject).ok()?;
        let reader = store.reader(&ns, known);
        let views = if self.history {
            reader.history(subject, &predicate?).ok()?.value
        } else {
            let filter = FactFilter { subject: Some(subject), predicate, object: None };
            let scope = if include_all { Scope::All } else { Scope::InForce };
            reader.facts(&filter, scope).ok()?.value
        };
        let views = &views[..views.len().min(default_page_size(limits))];
        let mut connection = IndexMap::new();
        for (key, fields) in &self.nodes {
            let list = views.iter().map(|view| Value::Object(node(view, fields))).collect();
            connection.insert(key.clone(), Value::List(list));
        }
        let mut data = IndexMap::new();
        data.insert(self.key.clone(), Value::Object(connection));
        Some(async_graphql::Response::new(Value::Object(data)))
    }
}

/// One fact's answer to the selection.
fn node(view: &FactView, fields: &[(Name, NodeField)]) -> IndexMap<Name, Value> {
    let mut out = IndexMap::with_capacity(fields.len());
    for (key, field) in fields {
        let value = match field {
            NodeField::Leaf(leaf) => fact_leaf(view, *leaf),
            NodeField::Object(inner) => Value::Object(
                inner.iter().map(|(k, leaf)| (k.clone(), value_leaf_of(&view.fact.object, *leaf))).collect(),
            ),
        };
        out.insert(key.clone(), value);
    }
    out
}

fn optional<T: async_graphql::ScalarType>(v: Option<T>) -> Value {
    v.map_or(Value::Null, |v| v.to_value())
}

fn fact_leaf(view: &FactView, leaf: FactLeaf) -> Value {
    use async_graphql::resolver_utils::enum_value;
    let fact = &view.fact;
    match leaf {
        FactLeaf::Id => async_graphql::ID(fact.id.0.to_string()).to_value(),
        FactLeaf::Predicate => Value::String(fact.predicate.clone()),
        FactLeaf::Polarity => enum_value(Polarity::from(fact.polarity)),
        FactLeaf::Status => enum_value(FactStatus::from(view.status)),
        FactLeaf::Reason => Value::String(view.reason.clone()),
        FactLeaf::ContradictionCount => (view.contradicts.len() as u64).to_value(),
        FactLeaf::Confidence => view.confidence.to_value(),
        FactLeaf::Corroborations => view.corroborations.to_value(),
        FactLeaf::AssertedSeq => view.asserted_seq.0.to_value(),
        FactLeaf::AssertedAt => DateTime::from(view.asserted_at).to_value(),
        FactLeaf::RetractedSeq => optional(view.retraction.as_ref().map(|r| r.seq.0)),
        FactLeaf::Importance => optional(fact.importance),
        FactLeaf::Correction => fact.correction.to_value(),
    }
}

fn value_leaf_of(value: &ostrakon_core::Value, leaf: ValueLeaf) -> Value {
    use ostrakon_core::Value as V;
    match (leaf, value) {
        (ValueLeaf::Type, v) => async_graphql::resolver_utils::enum_value(ValueType::from(v.value_type())),
        (ValueLeaf::String, V::Literal(Literal::String(s))) => Value::String(s.clone()),
        (ValueLeaf::Integer, V::Literal(Literal::Integer(i))) => i.to_value(),
        (ValueLeaf::Float, V::Literal(Literal::Float(f))) => f.to_value(),
        (ValueLeaf::Boolean, V::Literal(Literal::Boolean(b))) => b.to_value(),
        (ValueLeaf::Time, V::Literal(Literal::Time(t))) => DateTime::from(*t).to_value(),
        _ => Value::Null,
    }
}
