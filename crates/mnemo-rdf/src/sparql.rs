//! SPARQL 1.1 queries over a projection, with the projections kept while they serve.
//!
//! A query runs on an in-memory oxigraph store holding one [`View`] of one namespace at
//! one read point. Building that store costs about 3 µs and 450 bytes per statement
//! (measured with oxigraph 0.5 on 300,000 statements), far more than reading the
//! statements from the `Store`, so the stores of the last three read points are kept. A
//! query at the same S whose T lies in a kept store's window (no validity or stretch in
//! force starts or ends between the two) reuses it without reading anything; otherwise it
//! reads its statements at its pinned point, hashes them, and reuses a store built from
//! the same statements. An answer is computed from exactly the statements of its read
//! point, whether the store was reused or not, so the cache can be dropped at any time
//! without changing any answer. A namespace whose view holds more than `max_statements`
//! is refused with [`RdfError::TooLarge`]; the GraphQL analytics answer such questions
//! without copying the graph.
//!
//! Queries are read-only (the endpoint has no update), `SERVICE` cannot reach anything (no
//! HTTP client is linked), and evaluation stops when the interrupt in force on the
//! calling thread fires: a deadline, a client gone, the server stopping.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hash, Hasher};
use std::io::Write;
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use mnemo_core::Namespace;
use mnemo_engine::{Answer, Interrupt, ReadAt, Store};
use oxigraph::io::{RdfFormat, RdfSerializer};
use oxigraph::model::{GraphName, Quad};
use oxigraph::sparql::results::{QueryResultsFormat, QueryResultsSerializer};
use oxigraph::sparql::{CancellationToken, QueryEvaluationError, QueryResults, SparqlEvaluator};

use crate::project::{Iris, View, statements};
use crate::{RdfError, shape};

/// Statements a projection may hold by default: about 450 MB of oxigraph store.
pub const DEFAULT_MAX_STATEMENTS: usize = 1_000_000;

/// Tuples a query's joins may produce in all: past it the query stops with
/// [`RdfError::TooExpensive`]. Joins multiply tuples in memory (about 100 bytes each), so
/// this bounds both the time and the memory a query takes beyond its projection.
pub const MAX_JOIN_RESULTS: u64 = 10_000_000;

/// Bytes a query may keep while it runs by default (strings it builds, property path
/// closures, solutions held to sort, deduplicate or group, hash join build sides): past
/// it the query stops with [`RdfError::TooMuchMemory`].
pub const DEFAULT_MAX_QUERY_MEMORY: u64 = 256 * 1024 * 1024;

/// Longest answer by default: the server's default response limit.
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;

/// What a SPARQL service allows each query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SparqlLimits {
    /// Statements a projection may hold.
    pub max_statements: usize,
    /// Bytes a query may keep while it runs.
    pub max_memory: u64,
    /// Longest answer, written.
    pub max_answer_bytes: usize,
}

impl Default for SparqlLimits {
    fn default() -> Self {
        SparqlLimits {
            max_statements: DEFAULT_MAX_STATEMENTS,
            max_memory: DEFAULT_MAX_QUERY_MEMORY,
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
        }
    }
}

/// Read points kept at once (several may share one store).
const KEPT: usize = 3;

/// How often a running query looks at the request's interrupt.
const WATCH_EVERY: Duration = Duration::from_millis(5);

/// Statements added to a store between two checks of the interrupt.
const CHUNK: usize = 20_000;

/// What a query's answer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// Solutions of a `SELECT`.
    Solutions,
    /// The answer of an `ASK`.
    Boolean,
    /// The triples of a `CONSTRUCT` or `DESCRIBE`.
    Graph,
}

/// How an answer is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// SPARQL 1.1 Query Results JSON.
    Json,
    /// SPARQL Query Results XML.
    Xml,
    /// SPARQL 1.1 Query Results CSV.
    Csv,
    /// SPARQL 1.1 Query Results TSV.
    Tsv,
    /// Turtle 1.2 (graphs).
    Turtle,
    /// N-Triples 1.2 (graphs).
    NTriples,
}

impl Format {
    /// Its media type.
    pub fn media_type(self) -> &'static str {
        match self {
            Format::Json => "application/sparql-results+json",
            Format::Xml => "application/sparql-results+xml",
            Format::Csv => "text/csv; charset=utf-8",
            Format::Tsv => "text/tab-separated-values; charset=utf-8",
            Format::Turtle => "text/turtle",
            Format::NTriples => "application/n-triples",
        }
    }

    /// The formats an answer of `form` can be written in, the default first.
    pub fn for_form(form: Form) -> &'static [Format] {
        match form {
            Form::Solutions => &[Format::Json, Format::Xml, Format::Csv, Format::Tsv],
            Form::Boolean => &[Format::Json, Format::Xml],
            Form::Graph => &[Format::Turtle, Format::NTriples],
        }
    }

    fn bare_media_type(self) -> &'static str {
        self.media_type().split(';').next().unwrap_or_default()
    }

    /// The format an `Accept` header prefers among those of `form` (the default when
    /// there is no header, or it accepts anything), or [`RdfError::NotAcceptable`].
    pub fn negotiate(accept: Option<&str>, form: Form) -> Result<Format, RdfError> {
        let offered = Format::for_form(form);
        let Some(accept) = accept.filter(|a| !a.trim().is_empty()) else {
            return Ok(offered[0]);
        };
        let mut best: Option<(f32, usize, Format)> = None;
        for range in accept.split(',') {
            let mut parts = range.split(';');
            let media = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            if q <= 0.0 {
                continue;
            }
            for (rank, &format) in offered.iter().enumerate() {
                let full = format.bare_media_type();
                let matches = media == full
                    || media == "*/*"
                    || media.strip_suffix("/*").is_some_and(|kind| full.split('/').next() == Some(kind))
                    // Results JSON is JSON: a client asking for application/json gets it.
                    || (media == "application/json" && format == Format::Json)
                    || (media == "application/xml" && format == Format::Xml);
                // Higher q wins; on a tie, the format offered first.
                if matches && best.is_none_or(|(bq, br, _)| q > bq || (q == bq && rank < br)) {
                    best = Some((q, rank, format));
                }
            }
        }
        best.map(|(_, _, f)| f).ok_or_else(|| RdfError::NotAcceptable {
            accept: accept.chars().take(200).collect(),
            offered: offered.iter().map(|f| f.bare_media_type()).collect::<Vec<_>>().join(", "),
        })
    }
}

/// A query's answer, written out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// What kind of answer it is.
    pub form: Form,
    /// How it is written.
    pub format: Format,
    /// The bytes.
    pub body: Vec<u8>,
    /// Statements in the projection it ran on.
    pub statements: usize,
}

/// One kept projection, found again by its read point (the same S, T in its window) or
/// by its content.
struct Kept {
    ns: Namespace,
    view: View,
    seq: mnemo_core::Seq,
    window: crate::Window,
    key: (u64, u64, usize),
    graph: oxigraph::store::Store,
}

/// The SPARQL service: runs queries and keeps the projections they ran on.
pub struct Sparql {
    limits: SparqlLimits,
    kept: Mutex<Vec<Kept>>,
    /// Held while a store is built, so that concurrent queries of one point build it once
    /// and never hold more than one store under construction.
    building: Mutex<()>,
    hashers: (RandomState, RandomState),
    /// Stores built so far.
    built: std::sync::atomic::AtomicU64,
}

impl Default for Sparql {
    fn default() -> Self {
        Sparql::new(SparqlLimits::default())
    }
}

impl std::fmt::Debug for Sparql {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sparql").field("limits", &self.limits).finish_non_exhaustive()
    }
}

/// Writes into a buffer of at most `max` bytes.
struct Capped {
    buf: Vec<u8>,
    max: usize,
}

impl Write for Capped {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if self.buf.len() + data.len() > self.max {
            return Err(std::io::Error::other(TooLong(self.max)));
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A write past the cap of a [`Capped`] buffer, with the cap.
#[derive(Debug)]
struct TooLong(usize);

impl std::fmt::Display for TooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the answer is too long")
    }
}

impl std::error::Error for TooLong {}

impl Sparql {
    /// A service holding every query to `limits`.
    pub fn new(limits: SparqlLimits) -> Self {
        Sparql {
            limits,
            kept: Mutex::new(Vec::new()),
            building: Mutex::new(()),
            hashers: (RandomState::new(), RandomState::new()),
            built: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// How many projections were built (each query that found none kept).
    pub fn projections_built(&self) -> u64 {
        self.built.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// What each query is allowed.
    pub fn limits(&self) -> SparqlLimits {
        self.limits
    }

    /// Runs `query` on `view` of `ns` at `at` and writes its answer in the format `choose`
    /// picks for its form, in at most the limits' `max_answer_bytes`. The prefixes `e:`, `p:`, `prop:`, `f:`,
    /// `ep:` (this namespace's entities, predicates, properties, facts and episodes),
    /// `mn:`, `rdf:`, `rdfs:` and `xsd:` are declared.
    #[allow(clippy::too_many_arguments)]
    pub fn query(
        &self,
        store: &Store,
        ns: &Namespace,
        at: ReadAt,
        view: View,
        query: &str,
        choose: impl FnOnce(Form) -> Result<Format, RdfError> + Send,
    ) -> Result<Answer<Written>, RdfError> {
        // Bounded before anything is parsed or projected: a malformed or oversized query
        // costs nothing.
        shape::check_text(query)?;
        let token = CancellationToken::with_budget(MAX_JOIN_RESULTS);
        let interrupt = Interrupt::current();
        // Parsed and run on a thread of its own whose stack fits the query's brackets
        // (see `shape`), while this one turns the request's deadline or cancellation into
        // a cancel of the token, which the evaluator checks.
        let written = std::thread::scope(|scope| {
            let (finished, watch) = std::sync::mpsc::channel::<()>();
            let worker = std::thread::Builder::new()
                .name("mnemo-sparql".into())
                .stack_size(shape::stack_size(query))
                .spawn_scoped(scope, || {
                    let _finished = finished;
                    let work = || self.parse_and_run(store, ns, at, view, query, &token, choose);
                    match &interrupt {
                        Some(interrupt) => interrupt.run(work),
                        None => work(),
                    }
                })
                .map_err(|e| RdfError::Internal(format!("cannot start the query's thread: {e}")))?;
            if let Some(interrupt) = &interrupt {
                while let Err(RecvTimeoutError::Timeout) = watch.recv_timeout(WATCH_EVERY) {
                    if interrupt.reason().is_some() {
                        token.cancel();
                        break;
                    }
                }
            }
            worker.join().map_err(|_| RdfError::Internal("the query's thread failed".into()))?
        });
        written.map_err(|e| match e {
            RdfError::Cancelled if token.is_exhausted() => RdfError::TooExpensive { max: MAX_JOIN_RESULTS },
            RdfError::Cancelled => RdfError::Interrupted {
                reason: interrupt.as_ref().and_then(Interrupt::reason).unwrap_or("cancelled"),
            },
            other => other,
        })
    }

    /// Parses `query`, measures it, and runs it on its projection.
    #[allow(clippy::too_many_arguments)]
    fn parse_and_run(
        &self,
        store: &Store,
        ns: &Namespace,
        at: ReadAt,
        view: View,
        query: &str,
        token: &CancellationToken,
        choose: impl FnOnce(Form) -> Result<Format, RdfError>,
    ) -> Result<Answer<Written>, RdfError> {
        let iris = Iris::new(ns);
        let mut parser = spargebra::SparqlParser::new();
        for (name, iri) in iris.prefixes() {
            parser = parser.with_prefix(name, iri).map_err(|e| RdfError::Internal(e.to_string()))?;
        }
        // Parsed and measured before anything is projected.
        let parsed = parser.parse_query(query).map_err(|e| RdfError::Syntax(e.to_string()))?;
        let measure = shape::Measure::of(&parsed)?;
        let mut evaluator = SparqlEvaluator::new().with_cancellation_token(token.clone());
        if !measure.optimizable() {
            evaluator = evaluator.without_optimizations();
        }
        let prepared = evaluator.for_query(parsed);
        let (basis, graph, statements) = self.projection(store, ns, at, view)?;
        // Entered on this thread, which pulls every result: evaluation runs here.
        let budget = spareval::MemoryBudget::enter(self.limits.max_memory);
        let written = run(prepared.on_store(&graph).execute(), &iris, choose, self.limits.max_answer_bytes);
        if budget.is_exhausted() {
            return Err(RdfError::TooMuchMemory { max: self.limits.max_memory });
        }
        Ok(Answer { basis, value: Written { statements, ..written? } })
    }

    /// The store holding `view` of `ns` at `at`: a kept one of the same S whose window
    /// holds T, or one built from the same statements, or a new one.
    fn projection(
        &self,
        store: &Store,
        ns: &Namespace,
        at: ReadAt,
        view: View,
    ) -> Result<(mnemo_engine::Basis, oxigraph::store::Store, usize), RdfError> {
        let pinned = store.basis(ns, at)?;
        let same_point = |k: &Kept| {
            k.ns == *ns && k.view == view && k.seq == pinned.known_at && k.window.contains(pinned.valid_at)
        };
        if let Some(k) = self.lock().iter().find(|k| same_point(k)) {
            return Ok((pinned, k.graph.clone(), k.key.2));
        }
        let mut quads = Vec::new();
        let projected = statements(
            store,
            ns,
            pinned.point(),
            view,
            GraphName::DefaultGraph,
            self.limits.max_statements,
            &mut |q| {
                quads.push(q);
                Ok(())
            },
        )?;
        let (basis, count) = (projected.basis, projected.statements);
        let key = self.key(&quads);
        let remember = |kept: &mut Vec<Kept>, graph: &oxigraph::store::Store| {
            if kept.len() >= KEPT {
                kept.remove(0);
            }
            let (seq, window) = (basis.known_at, projected.window);
            kept.push(Kept { ns: ns.clone(), view, seq, window, key, graph: graph.clone() });
        };
        let find = |kept: &mut Vec<Kept>| {
            let found = kept.iter().position(|k| k.ns == *ns && k.view == view && k.key == key)?;
            let graph = kept[found].graph.clone();
            // Known now for this point too.
            remember(kept, &graph);
            Some(graph)
        };
        if let Some(graph) = find(&mut self.lock()) {
            return Ok((basis, graph, count));
        }
        let _building = self.building.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(graph) = find(&mut self.lock()) {
            return Ok((basis, graph, count));
        }
        let graph = oxigraph::store::Store::new().map_err(|e| RdfError::Internal(e.to_string()))?;
        for chunk in quads.chunks(CHUNK) {
            if let Some(reason) = Interrupt::current().as_ref().and_then(Interrupt::reason) {
                return Err(RdfError::Interrupted { reason });
            }
            graph.extend(chunk.iter().cloned()).map_err(|e| RdfError::Internal(e.to_string()))?;
        }
        self.built.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tracing::debug!(namespace = %ns, view = view.as_str(), statements = count, "SPARQL projection built");
        remember(&mut self.lock(), &graph);
        Ok((basis, graph, count))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Kept>> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The statements' content key: two 64-bit hashes under keys drawn at random for this
    /// process, and the count.
    fn key(&self, quads: &[Quad]) -> (u64, u64, usize) {
        let (mut a, mut b) = (self.hashers.0.build_hasher(), self.hashers.1.build_hasher());
        quads.hash(&mut a);
        quads.hash(&mut b);
        (a.finish(), b.finish(), quads.len())
    }
}

fn evaluation(e: QueryEvaluationError) -> RdfError {
    match e {
        QueryEvaluationError::Cancelled => RdfError::Cancelled,
        other => RdfError::Evaluation(other.to_string()),
    }
}

fn io(e: std::io::Error) -> RdfError {
    match e.get_ref().and_then(|inner| inner.downcast_ref::<TooLong>()) {
        Some(TooLong(max)) => RdfError::AnswerTooLong { max: *max },
        None => RdfError::Internal(e.to_string()),
    }
}

/// Writes the results out.
fn run(
    results: Result<QueryResults<'_>, QueryEvaluationError>,
    iris: &Iris,
    choose: impl FnOnce(Form) -> Result<Format, RdfError>,
    max_bytes: usize,
) -> Result<Written, RdfError> {
    let results = results.map_err(evaluation)?;
    let mut out = Capped { buf: Vec::new(), max: max_bytes };
    let results_format = |f: Format| match f {
        Format::Xml => QueryResultsFormat::Xml,
        Format::Csv => QueryResultsFormat::Csv,
        Format::Tsv => QueryResultsFormat::Tsv,
        _ => QueryResultsFormat::Json,
    };
    let (form, format) = match results {
        QueryResults::Boolean(value) => {
            let format = choose(Form::Boolean)?;
            QueryResultsSerializer::from_format(results_format(format))
                .serialize_boolean_to_writer(&mut out, value)
                .map_err(io)?;
            (Form::Boolean, format)
        }
        QueryResults::Solutions(solutions) => {
            let format = choose(Form::Solutions)?;
            let mut writer = QueryResultsSerializer::from_format(results_format(format))
                .serialize_solutions_to_writer(&mut out, solutions.variables().to_vec())
                .map_err(io)?;
            for solution in solutions {
                writer.serialize(&solution.map_err(evaluation)?).map_err(io)?;
            }
            writer.finish().map_err(io)?;
            (Form::Solutions, format)
        }
        QueryResults::Graph(triples) => {
            let format = choose(Form::Graph)?;
            let mut serializer = RdfSerializer::from_format(match format {
                Format::NTriples => RdfFormat::NTriples,
                _ => RdfFormat::Turtle,
            });
            if format == Format::Turtle {
                for (name, iri) in iris.prefixes() {
                    serializer =
                        serializer.with_prefix(name, iri).map_err(|e| RdfError::Internal(e.to_string()))?;
                }
            }
            let mut writer = serializer.for_writer(&mut out);
            for triple in triples {
                writer.serialize_triple(&triple.map_err(evaluation)?).map_err(io)?;
            }
            writer.finish().map_err(io)?;
            (Form::Graph, format)
        }
    };
    Ok(Written { form, format, body: out.buf, statements: 0 })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Instant;

    use mnemo_core::{Interval, Literal, Timestamp};
    use mnemo_engine::{Change, EntityRef, NewEntity, NewFact, ObjectRef};

    use super::*;

    fn store(facts: usize) -> (Store, Namespace) {
        let store = Store::in_memory();
        let ns = Namespace::new("ns", "t").unwrap();
        let mut changes = vec![Change::DeclareEntity(NewEntity { name: "A".into(), ..NewEntity::default() })];
        for i in 0..facts {
            changes.push(Change::AssertFact(NewFact::new(
                EntityRef::New(0),
                format!("p{i}"),
                ObjectRef::Literal(Literal::Integer(i as i64)),
                Interval::open(Timestamp::EPOCH),
            )));
        }
        store.append(&ns, changes).unwrap();
        (store, ns)
    }

    #[test]
    fn projections_are_reused_within_their_window_and_for_the_same_content() {
        let store = Store::in_memory();
        let ns = Namespace::new("ns", "t").unwrap();
        let year = |y: &str| Timestamp::parse("t", y, &mnemo_core::TimeZone::Utc).unwrap();
        let fact = |from: &str, to: Option<&str>| {
            Change::AssertFact(NewFact::new(
                EntityRef::New(0),
                "p",
                ObjectRef::Literal(Literal::Integer(1)),
                Interval::new("v", year(from), to.map(year)).unwrap(),
            ))
        };
        let declare = Change::DeclareEntity(NewEntity { name: "A".into(), ..NewEntity::default() });
        store.append(&ns, vec![declare, fact("2010", Some("2020"))]).unwrap();
        let sparql = Sparql::default();
        let count = |t: &str, view: View| {
            let answer = sparql
                .query(&store, &ns, ReadAt::valid(year(t)), view, "SELECT * WHERE { ?s ?p ?o }", |_| {
                    Ok(Format::Csv)
                })
                .unwrap();
            String::from_utf8(answer.value.body).unwrap().lines().count() - 1
        };
        assert_eq!((count("2012", View::InForce), sparql.projections_built()), (3, 1));
        // Inside [2010, 2020): the same store, nothing read.
        assert_eq!((count("2019", View::InForce), sparql.projections_built()), (3, 1));
        // Past the end: another view.
        assert_eq!((count("2021", View::InForce), sparql.projections_built()), (2, 2));
        // Before the start: the same statements as after the end, found by content.
        assert_eq!((count("2005", View::InForce), sparql.projections_built()), (2, 2));
        // The history view is another projection.
        assert_eq!(
            sparql
                .query(&store, &ns, ReadAt::valid(year("2012")), View::History, "ASK {}", |_| Ok(
                    Format::Json
                ),)
                .unwrap()
                .value
                .form,
            Form::Boolean
        );
        assert_eq!(sparql.projections_built(), 3);
        // A write moves S: the statements are read again, and differ.
        store
            .append(&ns, vec![Change::DeclareEntity(NewEntity { name: "B".into(), ..NewEntity::default() })])
            .unwrap();
        assert_eq!((count("2012", View::InForce), sparql.projections_built()), (5, 4));
    }

    #[test]
    fn a_query_stops_when_its_interrupt_fires() {
        let (store, ns) = store(30);
        let sparql = Sparql::default();
        let run = |query: &str, deadline: Duration| {
            let interrupt = Interrupt::new(Some(Instant::now() + deadline));
            let start = Instant::now();
            let result = interrupt.run(|| {
                sparql.query(&store, &ns, ReadAt::latest(), View::InForce, query, |_| Ok(Format::Json))
            });
            (result, start.elapsed())
        };
        // 32 statements to the power 6: a billion join results, stopped by the deadline
        // (checked inside the joins) long before the budget.
        let endless = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o . ?q ?r ?t }";
        let (result, took) = run(endless, Duration::from_millis(300));
        assert!(matches!(result, Err(RdfError::Interrupted { .. })), "{result:?}");
        assert!(took < Duration::from_secs(2), "{took:?}");
        // With all the time in the world, the budget of join results stops it.
        let (result, took) = run(endless, Duration::from_secs(3600));
        assert!(
            matches!(result, Err(RdfError::TooExpensive { max: MAX_JOIN_RESULTS })),
            "{result:?} after {took:?}"
        );
        // A query within both answers.
        let (result, _) =
            run("SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f }", Duration::from_secs(60));
        let body = String::from_utf8(result.unwrap().value.body).unwrap();
        assert!(body.contains("\"1024\""), "{body}");
    }
}
