//! A generator of random GraphQL requests from Ostrakon's own schema (its exported SDL):
//! random root fields with random arguments — hostile strings, times, numbers, ids and
//! enum names, as literals or as variables — and random selections; and the check every
//! answer must pass: no panic, every error carries a code, a refused mutation stores
//! nothing. Shared by `tests/it/fuzz.rs` (a few hundred cases in the suite) and the
//! by-hand `benches/fuzz_graphql.rs` (100,000 and more).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use async_graphql::parser::parse_schema;
use async_graphql::parser::types::{BaseType, Type, TypeKind, TypeSystemDefinition};
use ostrakon_engine::Store;
use ostrakon_engine::core::Namespace;
use ostrakon_graphql::{Access, Limits, OstrakonSchema, ops};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

/// What the generator knows of one type.
#[derive(Clone, Debug)]
enum Shape {
    Object(Vec<Field>),
    Input(Vec<Arg>),
    Enum(Vec<String>),
    Scalar,
}

#[derive(Clone, Debug)]
struct Field {
    name: String,
    args: Vec<Arg>,
    ty: Type,
}

#[derive(Clone, Debug)]
struct Arg {
    name: String,
    ty: Type,
}

/// The schema as the generator sees it.
pub struct Grammar {
    types: HashMap<String, Shape>,
}

impl Grammar {
    pub fn new() -> Self {
        let doc = parse_schema(ostrakon_graphql::sdl()).expect("the SDL parses");
        let mut types = HashMap::new();
        for def in doc.definitions {
            let TypeSystemDefinition::Type(t) = def else { continue };
            let arg = |v: &async_graphql::Positioned<async_graphql::parser::types::InputValueDefinition>| {
                Arg { name: v.node.name.node.to_string(), ty: v.node.ty.node.clone() }
            };
            let fields =
                |fields: &[async_graphql::Positioned<async_graphql::parser::types::FieldDefinition>]| {
                    fields
                        .iter()
                        .map(|f| Field {
                            name: f.node.name.node.to_string(),
                            args: f.node.arguments.iter().map(arg).collect(),
                            ty: f.node.ty.node.clone(),
                        })
                        .collect()
                };
            let shape = match &t.node.kind {
                TypeKind::Object(o) => Shape::Object(fields(&o.fields)),
                TypeKind::Interface(o) => Shape::Object(fields(&o.fields)),
                TypeKind::InputObject(i) => Shape::Input(i.fields.iter().map(arg).collect()),
                TypeKind::Enum(e) => {
                    Shape::Enum(e.values.iter().map(|v| v.node.value.node.to_string()).collect())
                }
                _ => Shape::Scalar,
            };
            types.insert(t.node.name.node.to_string(), shape);
        }
        Grammar { types }
    }

    /// One random request: (document, variables, is it a mutation).
    pub fn request(&self, rng: &mut StdRng) -> (String, Value, bool) {
        let mutation = rng.random_bool(0.4);
        let root = if mutation { "Mutation" } else { "Query" };
        let Some(Shape::Object(fields)) = self.types.get(root) else { panic!("no {root}") };
        let mut vars = Vars::default();
        let mut body = String::new();
        // One root field per mutation, so a refusal can be traced to it.
        let n = if mutation { 1 } else { rng.random_range(1..=3) };
        for i in 0..n {
            let field = &fields[rng.random_range(0..fields.len())];
            let _ = write!(body, "f{i}: {}", field.name);
            body.push_str(&self.arguments(rng, &field.args, &mut vars, 0));
            body.push_str(&self.selection(rng, &field.ty, 0));
            body.push(' ');
        }
        let decls =
            if vars.decls.is_empty() { String::new() } else { format!("({})", vars.decls.join(", ")) };
        let op = if mutation { "mutation" } else { "query" };
        (format!("{op} Q{decls} {{ {body}}}"), Value::Object(vars.values), mutation)
    }

    fn arguments(&self, rng: &mut StdRng, args: &[Arg], vars: &mut Vars, depth: usize) -> String {
        let mut out = Vec::new();
        for a in args {
            let required = !a.ty.nullable;
            if !required && rng.random_bool(0.5) {
                continue;
            }
            // Mostly the namespace that holds data, so that requests get past the first check.
            if a.name == "namespace" && rng.random_bool(0.9) {
                out.push("namespace: \"fz\"".to_owned());
                continue;
            }
            if depth == 0 && rng.random_bool(0.3) {
                // As a variable, with a JSON value.
                let name = format!("v{}", vars.decls.len());
                vars.decls.push(format!("${name}: {}", a.ty));
                vars.values.insert(name.clone(), self.json_value(rng, &a.ty, 0));
                out.push(format!("{}: ${name}", a.name));
            } else {
                out.push(format!("{}: {}", a.name, self.literal(rng, &a.ty, depth)));
            }
        }
        if out.is_empty() { String::new() } else { format!("({})", out.join(", ")) }
    }

    fn selection(&self, rng: &mut StdRng, ty: &Type, depth: usize) -> String {
        let name = named(ty);
        let Some(Shape::Object(fields)) = self.types.get(name) else { return String::new() };
        let mut picked = Vec::new();
        for _ in 0..rng.random_range(1..=4) {
            let f = &fields[rng.random_range(0..fields.len())];
            let is_object = matches!(self.types.get(named(&f.ty)), Some(Shape::Object(_)));
            if is_object && depth >= 3 {
                continue;
            }
            let mut s = f.name.clone();
            s.push_str(&self.arguments(rng, &f.args, &mut Vars::default(), 1));
            s.push_str(&self.selection(rng, &f.ty, depth + 1));
            picked.push(s);
        }
        if picked.is_empty() {
            picked.push("__typename".to_owned());
        }
        format!(" {{ {} }}", picked.join(" "))
    }

    /// A GraphQL literal for a type: mostly well-typed, sometimes hostile.
    fn literal(&self, rng: &mut StdRng, ty: &Type, depth: usize) -> String {
        if ty.nullable && rng.random_bool(0.05) {
            return "null".into();
        }
        match &ty.base {
            BaseType::List(inner) => {
                let n = if depth > 2 { 0 } else { rng.random_range(0..3) };
                let items: Vec<String> = (0..n).map(|_| self.literal(rng, inner, depth + 1)).collect();
                format!("[{}]", items.join(", "))
            }
            BaseType::Named(name) => match self.types.get(name.as_str()) {
                Some(Shape::Enum(values)) => {
                    if rng.random_bool(0.9) {
                        values[rng.random_range(0..values.len())].clone()
                    } else {
                        "NOT_A_VALUE".into()
                    }
                }
                Some(Shape::Input(fields)) => {
                    if depth > 3 {
                        return "{}".into();
                    }
                    let mut parts = Vec::new();
                    for f in fields {
                        if !f.ty.nullable || rng.random_bool(0.4) {
                            parts.push(format!("{}: {}", f.name, self.literal(rng, &f.ty, depth + 1)));
                        }
                    }
                    format!("{{{}}}", parts.join(", "))
                }
                _ => scalar_literal(rng, name.as_str()),
            },
        }
    }

    fn json_value(&self, rng: &mut StdRng, ty: &Type, depth: usize) -> Value {
        if ty.nullable && rng.random_bool(0.05) {
            return Value::Null;
        }
        match &ty.base {
            BaseType::List(inner) => {
                let n = if depth > 2 { 0 } else { rng.random_range(0..3) };
                Value::Array((0..n).map(|_| self.json_value(rng, inner, depth + 1)).collect())
            }
            BaseType::Named(name) => match self.types.get(name.as_str()) {
                Some(Shape::Enum(values)) => json!(values[rng.random_range(0..values.len())]),
                Some(Shape::Input(fields)) => {
                    let mut map = serde_json::Map::new();
                    if depth <= 3 {
                        for f in fields {
                            if !f.ty.nullable || rng.random_bool(0.4) {
                                map.insert(f.name.clone(), self.json_value(rng, &f.ty, depth + 1));
                            }
                        }
                    }
                    Value::Object(map)
                }
                _ => scalar_json(rng, name.as_str()),
            },
        }
    }
}

impl Default for Grammar {
    fn default() -> Self {
        Grammar::new()
    }
}

#[derive(Default)]
struct Vars {
    decls: Vec<String>,
    values: serde_json::Map<String, Value>,
}

fn named(ty: &Type) -> &str {
    match &ty.base {
        BaseType::Named(n) => n.as_str(),
        BaseType::List(inner) => named(inner),
    }
}

/// Strings a hostile client sends: empty, blank, control characters, huge, quotes,
/// unicode edge cases, names that exist, namespaces that do not.
const HOSTILE_STRINGS: &[&str] = &[
    "",
    " ",
    "fz",
    "fz",
    "Alice",
    "Paris",
    "livesIn",
    "\u{0}",
    "\t\n",
    "a\"b",
    "\\",
    "🧠",
    "e\u{301}",
    "\u{feff}",
    "../../etc/passwd",
    "*",
    "-1",
    "0",
    "NaN",
    "Europe/Paris",
    "Not/A_Zone",
    "UTC",
];

/// Times a hostile client sends: valid ones of every form, and broken ones.
const HOSTILE_TIMES: &[&str] = &[
    "2024-05-01",
    "2024-05-01T10:00:00Z",
    "2024-05-01T10:00:00+02:00",
    "2024-05-01T10:00:00",
    "2014",
    "2014-05",
    "19##",
    "-0044-03-15",
    "999",
    "0000-00-00",
    "2024-02-30",
    "2024-13-01",
    "2024-05-01T25:61:61Z",
    "9999999-01-01",
    "-271821-04-20",
    "+275760-09-13",
    "1e10",
    "",
    "now",
    "2024-05-01T10:00:00.1234567891Z",
    "294247-01-10T04:00:54.775807Z",
];

fn hostile_string(rng: &mut StdRng) -> String {
    match rng.random_range(0..10) {
        0 => "x".repeat(rng.random_range(500..3000)),
        1 => (0..rng.random_range(1..20))
            .map(|_| char::from_u32(rng.random_range(0..0x11_0000)).unwrap_or('?'))
            .collect(),
        _ => HOSTILE_STRINGS[rng.random_range(0..HOSTILE_STRINGS.len())].to_owned(),
    }
}

fn hostile_int(rng: &mut StdRng) -> i64 {
    match rng.random_range(0..8) {
        0 => i64::from(i32::MIN),
        1 => i64::from(i32::MAX),
        2 => -1,
        3 => 0,
        _ => rng.random_range(-5..2000),
    }
}

fn hostile_float(rng: &mut StdRng) -> f64 {
    match rng.random_range(0..6) {
        0 => 1e308,
        1 => -1e308,
        2 => 5e-324,
        3 => -0.0,
        _ => rng.random_range(-2.0..2.0),
    }
}

fn hostile_id(rng: &mut StdRng) -> String {
    match rng.random_range(0..6) {
        0 => "18446744073709551616".into(),
        1 => "-1".into(),
        2 => "abc".into(),
        _ => rng.random_range(0..30).to_string(),
    }
}

fn scalar_literal(rng: &mut StdRng, name: &str) -> String {
    match name {
        "Int" => hostile_int(rng).to_string(),
        "Float" => format!("{:?}", hostile_float(rng)),
        "Boolean" => rng.random_bool(0.5).to_string(),
        "ID" => serde_json::to_string(&hostile_id(rng)).unwrap(),
        "DateTime" => serde_json::to_string(HOSTILE_TIMES[rng.random_range(0..HOSTILE_TIMES.len())]).unwrap(),
        _ => serde_json::to_string(&hostile_string(rng)).unwrap(),
    }
}

fn scalar_json(rng: &mut StdRng, name: &str) -> Value {
    match name {
        "Int" => json!(hostile_int(rng)),
        "Float" => json!(hostile_float(rng)),
        "Boolean" => json!(rng.random_bool(0.5)),
        "ID" => json!(hostile_id(rng)),
        "DateTime" => json!(HOSTILE_TIMES[rng.random_range(0..HOSTILE_TIMES.len())]),
        _ => json!(hostile_string(rng)),
    }
}

/// A store with a little of everything in namespace `fz`, and its schema.
pub async fn target() -> (Arc<Store>, OstrakonSchema) {
    let store = Arc::new(Store::in_memory());
    let schema = ostrakon_graphql::schema(Arc::clone(&store), Limits::default());
    let lines = [
        json!({"namespace": "fz", "op": "definePredicate", "name": "livesIn", "cardinality": "ONE", "valueType": "ENTITY"}),
        json!({"namespace": "fz", "op": "recordEpisode", "episode": {"text": "Alice moved to Paris", "occurredAt": "2020-01-01", "thread": "t"},
               "facts": [{"subject": {"name": "Alice"}, "predicate": "livesIn", "object": {"entity": {"name": "Paris"}}, "validFrom": "2020"}]}),
        json!({"namespace": "fz", "op": "recordEpisode", "episode": {"text": "then to London", "occurredAt": "2021-01-01", "thread": "t"},
               "facts": [{"subject": {"name": "Alice"}, "predicate": "livesIn", "object": {"entity": {"name": "London"}}, "validFrom": "2021"}]}),
        json!({"namespace": "fz", "op": "addIntention", "payload": "ask about Paris", "trigger": {"entities": [{"name": "Paris"}]}}),
    ];
    for line in lines {
        ops::apply_line(&schema, &store, &line.to_string()).await.unwrap();
    }
    (store, schema)
}

/// Batches in every namespace.
fn batches(store: &Store) -> u64 {
    store.namespaces().iter().map(|ns: &Namespace| store.counts(ns).unwrap().batches).sum()
}

/// Runs case `seed` and checks its answer; `Err` says what broke.
pub async fn run_case(
    grammar: &Grammar,
    store: &Store,
    schema: &OstrakonSchema,
    seed: u64,
) -> Result<Outcome, String> {
    let mut rng = StdRng::seed_from_u64(seed);
    let (query, variables, mutation) = grammar.request(&mut rng);
    let before = batches(store);
    let request = async_graphql::Request::new(query.clone())
        .variables(async_graphql::Variables::from_json(variables.clone()))
        .data(Access::Local);
    let started = std::time::Instant::now();
    let response = schema.execute(request).await;
    if started.elapsed() > std::time::Duration::from_secs(1) {
        eprintln!("SLOW {:?} seed {seed}: {query}", started.elapsed());
    }
    let context = || format!("seed {seed}\n{query}\nvariables {variables}");
    for error in &response.errors {
        let code = error.extensions.as_ref().and_then(|e| e.get("code"));
        if code.is_none() {
            return Err(format!("an error without a code: {}\n{}", error.message, context()));
        }
    }
    // A mutation refused as a whole (an error at its own root field, or before any field
    // ran) stores nothing.
    let refused = mutation && response.errors.iter().any(|e| e.path.len() <= 1);
    if refused && batches(store) != before {
        return Err(format!("a refused mutation stored something: {:?}\n{}", response.errors, context()));
    }
    Ok(if response.errors.is_empty() {
        Outcome::Ok
    } else if response.errors.iter().all(|e| e.locations.is_empty() && e.path.is_empty())
        || response.data == async_graphql::Value::Null
    {
        Outcome::Refused
    } else {
        Outcome::PartlyRefused
    })
}

/// How a case ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Outcome {
    /// Answered without errors.
    Ok,
    /// Refused before or at its root.
    Refused,
    /// Answered with some fields in error.
    PartlyRefused,
}
