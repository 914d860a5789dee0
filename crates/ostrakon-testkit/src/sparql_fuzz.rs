//! A generator of random SPARQL queries over Ostrakon's projection: every query form, graph
//! patterns (optional, union, minus, filters, binds, values, sub-selects, exists), property
//! paths and expressions nested to a random depth (past the limits at times), string
//! functions that grow their input, then, for some, random edits of the text (spans cut
//! or repeated, brackets and quotes dropped in). The check every case must pass: no
//! panic or internal error, an answer or a typed refusal. Shared by
//! `tests/it/sparql_fuzz.rs` (a few hundred cases in the suite, in a process of their own
//! whose peak memory is checked) and the by-hand `benches/fuzz_sparql.rs`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use ostrakon_engine::core::{Interval, Literal, Namespace, Timestamp};
use ostrakon_engine::{Change, EntityRef, Interrupt, NewEntity, NewFact, ObjectRef, ReadAt, Store};
use ostrakon_rdf::{Dataset, Format, RdfError, Sparql, SparqlLimits, View};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// How deep the generator nests, at most: past every limit of `ostrakon_rdf`.
const DEEPEST: usize = 200;

/// A store with namespace `fz`: a chain of entities, a few literals, a correction.
pub fn target() -> (Store, Namespace) {
    let store = Store::in_memory();
    let ns = Namespace::new("ns", "fz").unwrap();
    let mut changes = Vec::new();
    for i in 0..40 {
        changes.push(Change::DeclareEntity(NewEntity { name: format!("E{i}"), ..NewEntity::default() }));
    }
    let open = Interval::open(Timestamp::EPOCH);
    for i in 0..39 {
        let next = ObjectRef::Entity(EntityRef::New(i + 1));
        changes.push(Change::AssertFact(NewFact::new(EntityRef::New(i), "next", next, open)));
        let label = ObjectRef::Literal(Literal::String(format!("label {i} ((\"{{")));
        changes.push(Change::AssertFact(NewFact::new(EntityRef::New(i), "says", label, open)));
        let n = ObjectRef::Literal(Literal::Integer(i as i64));
        changes.push(Change::AssertFact(NewFact::new(EntityRef::New(i % 7), "n", n, open)));
    }
    store.append(&ns, changes).unwrap();
    (store, ns)
}

/// How a case ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Outcome {
    /// Answered.
    Ok,
    /// Not SPARQL, or failed as it ran (`INVALID_QUERY`).
    Invalid,
    /// Refused by a limit (shape, joins, memory, deadline, answer size).
    Limited,
}

/// The service the cases run on: a small memory budget, so the cases that would keep
/// much meet it.
pub fn service() -> Sparql {
    Sparql::new(SparqlLimits {
        max_memory: 32 * 1024 * 1024,
        max_answer_bytes: 1 << 20,
        ..SparqlLimits::default()
    })
}

/// Runs case `seed`; `Err` says what broke.
pub fn run_case(sparql: &Sparql, store: &Store, ns: &Namespace, seed: u64) -> Result<Outcome, String> {
    let (query, view) = case(seed);
    let interrupt = Interrupt::new(Some(Instant::now() + Duration::from_secs(2)));
    let started = Instant::now();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        interrupt.run(|| {
            sparql.query(Dataset { store, ns, at: ReadAt::latest(), view }, &query, |_| Ok(Format::Json))
        })
    }));
    let shown = || format!("seed {seed}: {}", query.chars().take(2000).collect::<String>());
    if started.elapsed() > Duration::from_secs(10) {
        return Err(format!("ran {:?}, far past its deadline; {}", started.elapsed(), shown()));
    }
    match result {
        Err(_) => Err(format!("panicked; {}", shown())),
        Ok(Ok(_)) => Ok(Outcome::Ok),
        Ok(Err(RdfError::Syntax(_) | RdfError::Evaluation(_))) => Ok(Outcome::Invalid),
        Ok(Err(
            RdfError::QueryTooComplex { .. }
            | RdfError::TooExpensive { .. }
            | RdfError::TooMuchMemory { .. }
            | RdfError::AnswerTooLong { .. }
            | RdfError::Interrupted { .. },
        )) => Ok(Outcome::Limited),
        Ok(Err(other)) => Err(format!("an untyped failure: {other}; {}", shown())),
    }
}

/// Case `seed`: its query and the view it reads.
pub fn case(seed: u64) -> (String, View) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut query = Gen { rng: &mut rng, depth_limit: 0, left: 0 }.query();
    if rng.random_bool(0.35) {
        query = mutate(&mut rng, &query);
    }
    let view = if rng.random_bool(0.3) { View::History } else { View::InForce };
    (query, view)
}

/// Random edits of a query's text: spans cut, repeated or moved, brackets, quotes and
/// comment marks dropped in.
fn mutate(rng: &mut StdRng, query: &str) -> String {
    let mut chars: Vec<char> = query.chars().collect();
    for _ in 0..rng.random_range(1..=4) {
        let len = chars.len().max(1);
        let at = rng.random_range(0..len);
        match rng.random_range(0..5) {
            0 => {
                let end = (at + rng.random_range(1..20)).min(chars.len());
                chars.drain(at.min(chars.len())..end);
            }
            1 => {
                let end = (at + rng.random_range(1..30)).min(chars.len());
                let span: Vec<char> = chars[at.min(chars.len())..end].to_vec();
                for _ in 0..rng.random_range(1..50) {
                    chars.splice(at.min(chars.len())..at.min(chars.len()), span.iter().copied());
                }
            }
            2 => {
                let noise = [
                    "(", ")", "{", "}", "[", "]", "\"", "'", "<", ">", "<<", ">>", "#", "\\", "\n", "*", "|",
                    "^^",
                ];
                let piece = noise[rng.random_range(0..noise.len())];
                let times = if rng.random_bool(0.2) { rng.random_range(1..2000) } else { 1 };
                let text: Vec<char> = piece.repeat(times).chars().collect();
                chars.splice(at.min(chars.len())..at.min(chars.len()), text);
            }
            3 => {
                if let Some(c) = chars.get_mut(at) {
                    *c = char::from_u32(rng.random_range(0..0x3000)).unwrap_or('?');
                }
            }
            _ => {
                let cut = rng.random_range(0..len);
                chars.truncate(cut);
            }
        }
    }
    chars.into_iter().collect()
}

struct Gen<'a> {
    rng: &'a mut StdRng,
    /// How deep this query may nest (drawn per query: mostly shallow, at times past
    /// every limit).
    depth_limit: usize,
    /// Parts it may still have: past it, nothing nests further (so a deep query is a
    /// chain, not a tree of exponential size).
    left: usize,
}

const VARS: &[&str] = &["?a", "?b", "?c", "?d", "?e", "?s", "?o"];
const IRIS: &[&str] = &[
    "e:1",
    "e:2",
    "e:7",
    "p:next",
    "p:says",
    "p:n",
    "rdf:type",
    "mn:Entity",
    "mn:status",
    "<urn:x:(y)>",
    "rdfs:label",
];
const PREDICATES: &[&str] =
    &["p:next", "p:says", "p:n", "rdf:type", "rdfs:label", "mn:status", "rdf:reifies"];
const LITERALS: &[&str] = &[
    "1",
    "2.5",
    "-7",
    "true",
    "\"x\"",
    "\"((\"",
    "'''a\nb'''",
    "\"ab\"@en",
    "\"2020-01-01T00:00:00Z\"^^xsd:dateTime",
];
const FUNCTIONS: &[(&str, usize)] = &[
    ("CONCAT", 3),
    ("STR", 1),
    ("UCASE", 1),
    ("LCASE", 1),
    ("ENCODE_FOR_URI", 1),
    ("STRLEN", 1),
    ("SUBSTR", 2),
    ("REPLACE", 3),
    ("REGEX", 2),
    ("CONTAINS", 2),
    ("COALESCE", 2),
    ("IF", 3),
    ("ABS", 1),
    ("ROUND", 1),
    ("DATATYPE", 1),
    ("ISIRI", 1),
    ("BOUND", 1),
    ("SHA256", 1),
    ("STRBEFORE", 2),
];

impl Gen<'_> {
    fn pick<'b>(&mut self, from: &[&'b str]) -> &'b str {
        from[self.rng.random_range(0..from.len())]
    }

    fn query(&mut self) -> String {
        if self.rng.random_bool(0.15) {
            return self.long_shape();
        }
        self.depth_limit = match self.rng.random_range(0..10) {
            0 => self.rng.random_range(30..DEEPEST),
            1..=3 => self.rng.random_range(4..12),
            _ => self.rng.random_range(1..5),
        };
        self.left = 600;
        let pattern = self.group(0);
        let modifiers = self.modifiers();
        match self.rng.random_range(0..10) {
            0 => format!("ASK {pattern}"),
            1 => format!("CONSTRUCT {{ ?a p:next ?b . ?b ?c ?a }} WHERE {pattern}{modifiers}"),
            2 => format!("DESCRIBE ?a WHERE {pattern}"),
            3 => {
                let e = self.expression(0);
                format!(
                    "SELECT ?a (COUNT(*) AS ?n) (SAMPLE({e}) AS ?x) (GROUP_CONCAT(?b) AS ?g) WHERE {pattern} GROUP BY ?a{modifiers}"
                )
            }
            _ => {
                let distinct = if self.rng.random_bool(0.2) { "DISTINCT " } else { "" };
                format!("SELECT {distinct}* WHERE {pattern}{modifiers}")
            }
        }
    }

    /// A query long or deep in one way, from a few to tens of thousands of parts (what
    /// the generator's bounded nesting never reaches; a 6,000-step sequence once
    /// overflowed the stack): sequences, alternatives, inverses and repeats of paths,
    /// nested groups and expressions, chains of operators, huge literals.
    fn long_shape(&mut self) -> String {
        // Spread over orders of magnitude: 2 to 40,000.
        let n = 2usize << self.rng.random_range(0..15usize).min(14);
        let n = n.min(40_000);
        let p = |g: &mut Self| g.pick(PREDICATES).to_owned();
        match self.rng.random_range(0..10) {
            0 => {
                let steps: Vec<String> = (0..n).map(|_| p(self)).collect();
                format!("SELECT * WHERE {{ ?a {} ?b }}", steps.join("/"))
            }
            1 => {
                let steps: Vec<String> = (0..n).map(|_| p(self)).collect();
                format!("SELECT * WHERE {{ ?a {} ?b }}", steps.join("|"))
            }
            2 => format!("SELECT * WHERE {{ ?a {}{} ?b }}", "^".repeat(n), p(self)),
            3 => {
                let step = format!("({})*", p(self));
                format!("ASK {{ ?a {} ?b }}", vec![step; n].join("/"))
            }
            4 => format!("SELECT * WHERE {}?a ?b ?c{}", "{ ".repeat(n), " }".repeat(n)),
            5 => format!("SELECT * WHERE {{ ?a ?b ?c FILTER({}1{}) }}", "(".repeat(n), ")".repeat(n)),
            6 => {
                let op = self.pick(&["+", "*", "-", "&&", "||", "=", "<"]);
                format!("SELECT * WHERE {{ ?a ?b ?c FILTER({}) }}", vec!["?c"; n].join(&format!(" {op} ")))
            }
            7 => format!("SELECT * WHERE {{ ?a ?b ?c FILTER({}?c) }}", "!".repeat(n)),
            8 => {
                let text = "x".repeat(n * 25);
                format!("SELECT * WHERE {{ ?a ?b \"{text}\" }}")
            }
            _ => format!("SELECT * WHERE {{ ?a ?b ?c {} }}", "OPTIONAL { ?a ?b ?c } ".repeat(n.min(5_000))),
        }
    }

    fn modifiers(&mut self) -> String {
        let mut out = String::new();
        if self.rng.random_bool(0.3) {
            let e = self.expression(0);
            out.push_str(&format!(" ORDER BY DESC({e}) ?a"));
        }
        if self.rng.random_bool(0.4) {
            out.push_str(&format!(" LIMIT {}", self.rng.random_range(0..100)));
        }
        out
    }

    /// Whether a part at `depth` may nest further (and takes one of what is left).
    fn nests(&mut self, depth: usize) -> bool {
        if depth >= self.depth_limit || self.left == 0 {
            return false;
        }
        self.left -= 1;
        true
    }

    fn group(&mut self, depth: usize) -> String {
        let parts = if self.left > 0 { self.rng.random_range(1..4) } else { 1 };
        let mut out = String::from("{ ");
        for _ in 0..parts {
            out.push_str(&self.element(depth + 1));
            out.push(' ');
        }
        out.push('}');
        out
    }

    fn element(&mut self, depth: usize) -> String {
        let deeper = self.nests(depth);
        match self.rng.random_range(0..if deeper { 14 } else { 4 }) {
            0 | 1 => self.triple(depth),
            2 => {
                let (s, o) = (self.pick(VARS), self.pick(VARS));
                let path = self.path(depth);
                format!("{s} {path} {o} .")
            }
            3 => {
                let e = self.expression(depth);
                let v = self.pick(&["?x", "?y", "?z"]);
                format!("BIND({e} AS {v})")
            }
            4 => format!("OPTIONAL {}", self.group(depth)),
            5 => format!("{} UNION {}", self.group(depth), self.group(depth)),
            6 => format!("MINUS {}", self.group(depth)),
            7 => format!("FILTER({})", self.expression(depth)),
            8 => self.group(depth),
            9 => {
                let inner = self.group(depth);
                format!("{{ SELECT * WHERE {inner} LIMIT {} }}", self.rng.random_range(1..50))
            }
            10 => format!("FILTER NOT EXISTS {}", self.group(depth)),
            11 => {
                let rows: Vec<String> = (0..self.rng.random_range(0..6))
                    .map(|_| self.pick(&["e:1", "e:2", "UNDEF", "1"]).to_owned())
                    .collect();
                format!("VALUES ?a {{ {} }}", rows.join(" "))
            }
            12 => {
                let s = self.pick(VARS);
                format!("{s} p:next [ p:next {} ] .", self.pick(VARS))
            }
            _ => {
                let (a, b, c) = (self.pick(VARS), self.pick(VARS), self.pick(VARS));
                format!("?r rdf:reifies <<( {a} {b} {c} )>> .")
            }
        }
    }

    fn triple(&mut self, _depth: usize) -> String {
        let s = if self.rng.random_bool(0.8) { self.pick(VARS) } else { self.pick(IRIS) };
        let p = if self.rng.random_bool(0.6) { self.pick(PREDICATES) } else { self.pick(VARS) };
        let o = match self.rng.random_range(0..4) {
            0 => self.pick(IRIS),
            1 => self.pick(LITERALS),
            _ => self.pick(VARS),
        };
        format!("{s} {p} {o} .")
    }

    fn path(&mut self, depth: usize) -> String {
        if self.rng.random_bool(0.3) || !self.nests(depth) {
            return self.pick(PREDICATES).to_owned();
        }
        let d = depth + 1;
        match self.rng.random_range(0..8) {
            0 => format!("^{}", self.path(d)),
            1 => format!("{}/{}", self.path(d), self.path(d)),
            2 => format!("({}|{})", self.path(d), self.path(d)),
            3 => format!("({})*", self.path(d)),
            4 => format!("({})+", self.path(d)),
            5 => format!("({})?", self.path(d)),
            6 => format!("!({}|^{})", self.pick(PREDICATES), self.pick(PREDICATES)),
            _ => format!("({})", self.path(d)),
        }
    }

    fn expression(&mut self, depth: usize) -> String {
        if self.rng.random_bool(0.35) || !self.nests(depth) {
            return if self.rng.random_bool(0.5) {
                self.pick(VARS).to_owned()
            } else {
                self.pick(LITERALS).to_owned()
            };
        }
        let d = depth + 1;
        match self.rng.random_range(0..6) {
            0 => {
                let op = self.pick(&["+", "-", "*", "/", "=", "!=", "<", ">=", "&&", "||"]);
                format!("({} {op} {})", self.expression(d), self.expression(d))
            }
            1 => format!("!{}", self.expression(d)),
            2 => format!("{} IN ({}, {})", self.expression(d), self.expression(d), self.expression(d)),
            3 => format!("EXISTS {}", self.group(d)),
            _ => {
                let (name, arity) = FUNCTIONS[self.rng.random_range(0..FUNCTIONS.len())];
                let args: Vec<String> = (0..arity).map(|_| self.expression(d)).collect();
                if name == "BOUND" {
                    format!("BOUND({})", self.pick(VARS))
                } else {
                    format!("{name}({})", args.join(", "))
                }
            }
        }
    }
}

/// A process's peak resident memory (`VmHWM`), in bytes.
pub fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap_or("VmHWM: 0 kB");
    line.split_whitespace().nth(1).and_then(|n| n.parse::<u64>().ok()).unwrap_or(0) * 1024
}
