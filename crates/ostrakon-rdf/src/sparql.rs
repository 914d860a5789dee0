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
//! The projections held at once — kept, or in use by a running query — are counted in
//! bytes (an estimate per statement: the store's indexes and the statement's text, twice)
//! and held to `max_view_memory`: a new one first makes room by dropping kept ones, then
//! waits for running queries to let theirs go, and one that alone would not fit is
//! refused with [`RdfError::ViewTooBig`] while it is being read, before it is built.
//!
//! Queries are read-only (the endpoint has no update), `SERVICE` cannot reach anything (no
//! HTTP client is linked), and evaluation stops when the interrupt in force on the
//! calling thread fires: a deadline, a client gone, the server stopping.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hash, Hasher};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ostrakon_core::Namespace;
use ostrakon_engine::{Answer, Interrupt, ReadAt, Store};
use oxigraph::io::{RdfFormat, RdfSerializer};
use oxigraph::model::{GraphName, Quad, TermRef};
use oxigraph::sparql::results::{QueryResultsFormat, QueryResultsSerializer};
use oxigraph::sparql::{CancellationToken, QueryEvaluationError, QueryResults, SparqlEvaluator};

use crate::project::{Iris, View, statements};
use crate::{error::RdfError, shape};

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

/// Bytes the projections held at once may take by default: one of
/// [`DEFAULT_MAX_STATEMENTS`] short statements, with room.
pub const DEFAULT_MAX_VIEW_MEMORY: u64 = 640 * 1024 * 1024;

/// Longest answer by default: the server's default response limit.
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;

/// What a SPARQL service allows each query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SparqlLimits {
    /// Statements a projection may hold.
    pub max_statements: usize,
    /// Bytes a query may keep while it runs.
    pub max_memory: u64,
    /// Bytes the projections held at once may take (estimated).
    pub max_view_memory: u64,
    /// Longest answer, written.
    pub max_answer_bytes: usize,
}

impl Default for SparqlLimits {
    fn default() -> Self {
        SparqlLimits {
            max_statements: DEFAULT_MAX_STATEMENTS,
            max_memory: DEFAULT_MAX_QUERY_MEMORY,
            max_view_memory: DEFAULT_MAX_VIEW_MEMORY,
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

/// What a statement costs in a projection besides its text: oxigraph's in-memory indexes
/// (about 450 bytes a statement of short terms, measured with oxigraph 0.5 on 90,000 and
/// 300,000 statements). The statements read to build it cost as much again while it is
/// built (a million of the history view's took 490 MB), counted as their size, their
/// text and an allocation per term; the text counts once more in the store.
const STATEMENT_BYTES: u64 = 450;

/// What an allocation costs besides its bytes (the allocator's header and rounding).
const ALLOCATION_BYTES: u64 = 32;

/// How long a new projection waits for running queries to let theirs go.
const ROOM_WAIT: Duration = Duration::from_secs(10);

/// The estimated bytes of one projection, counted in the service's total while anything
/// holds it (the kept list or a running query).
struct Held {
    bytes: u64,
    live: Arc<AtomicU64>,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.live.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// A projection a query runs on, counted while it is held.
struct Projection {
    graph: oxigraph::store::Store,
    _held: Arc<Held>,
}

/// Bytes of a statement's text (its terms', nested triple terms' included), each term
/// counted as an allocation.
fn text_bytes(quad: &Quad) -> u64 {
    fn term(t: TermRef<'_>) -> u64 {
        let text = match t {
            TermRef::NamedNode(n) => n.as_str().len(),
            TermRef::BlankNode(b) => b.as_str().len(),
            TermRef::Literal(l) => l.value().len() + l.language().map_or(0, str::len),
            TermRef::Triple(t) => {
                let inner = term(t.subject.as_ref().into()) + term(t.predicate.as_ref().into());
                return ALLOCATION_BYTES + inner + term(t.object.as_ref());
            }
        };
        ALLOCATION_BYTES + text as u64
    }
    let q = quad.as_ref();
    term(q.subject.into()) + term(q.predicate.into()) + term(q.object)
}

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
    seq: ostrakon_core::Seq,
    window: crate::project::Window,
    key: (u64, u64, usize),
    graph: oxigraph::store::Store,
    held: Arc<Held>,
}

/// What a query runs over: `view` of namespace `ns` in `store`, read at `at`.
#[derive(Clone, Copy)]
pub struct Dataset<'a> {
    /// The store.
    pub store: &'a Store,
    /// The namespace.
    pub ns: &'a Namespace,
    /// The read point.
    pub at: ReadAt,
    /// The facts in force, or their history.
    pub view: View,
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
    /// Estimated bytes of the projections held now (see [`Held`]).
    live: Arc<AtomicU64>,
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
            live: Arc::new(AtomicU64::new(0)),
        }
    }

    /// How many projections were built (each query that found none kept).
    pub fn projections_built(&self) -> u64 {
        self.built.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Estimated bytes of the projections held now, kept or in use: at most the limits'
    /// `max_view_memory` once no query is running.
    pub fn view_bytes(&self) -> u64 {
        self.live.load(Ordering::Relaxed)
    }

    /// What each query is allowed.
    pub fn limits(&self) -> SparqlLimits {
        self.limits
    }

    /// Runs `query` on `view` of `ns` at `at` and writes its answer in the format `choose`
    /// picks for its form, in at most the limits' `max_answer_bytes`. The prefixes `e:`, `p:`, `prop:`, `f:`,
    /// `ep:` (this namespace's entities, predicates, properties, facts and episodes),
    /// `mn:`, `rdf:`, `rdfs:` and `xsd:` are declared.
    pub fn query(
        &self,
        dataset: Dataset<'_>,
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
                .name("ostrakon-sparql".into())
                .stack_size(shape::stack_size(query))
                .spawn_scoped(scope, || {
                    let _finished = finished;
                    let work = || self.parse_and_run(dataset, query, &token, choose);
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
    fn parse_and_run(
        &self,
        dataset: Dataset<'_>,
        query: &str,
        token: &CancellationToken,
        choose: impl FnOnce(Form) -> Result<Format, RdfError>,
    ) -> Result<Answer<Written>, RdfError> {
        let iris = Iris::new(dataset.ns);
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
        let (basis, projection, statements) = self.projection(dataset)?;
        // Entered on this thread, which pulls every result: evaluation runs here.
        let budget = spareval::MemoryBudget::enter(self.limits.max_memory);
        let written =
            run(prepared.on_store(&projection.graph).execute(), &iris, choose, self.limits.max_answer_bytes);
        if budget.is_exhausted() {
            return Err(RdfError::TooMuchMemory { max: self.limits.max_memory });
        }
        Ok(Answer { basis, value: Written { statements, ..written? } })
    }

    /// The store holding `view` of `ns` at `at`: a kept one of the same S whose window
    /// holds T, or one built from the same statements, or a new one (once there is room).
    fn projection(
        &self,
        Dataset { store, ns, at, view }: Dataset<'_>,
    ) -> Result<(ostrakon_engine::Basis, Projection, usize), RdfError> {
        let pinned = store.basis(ns, at)?;
        let same_point = |k: &Kept| {
            k.ns == *ns && k.view == view && k.seq == pinned.known_at && k.window.contains(pinned.valid_at)
        };
        let kept = |k: &Kept| Projection { graph: k.graph.clone(), _held: k.held.clone() };
        if let Some(k) = self.lock().iter().find(|k| same_point(k)) {
            return Ok((pinned, kept(k), k.key.2));
        }
        // One projection is read and built at a time, so that concurrent queries of one
        // point build it once and the statements read to build it are counted once.
        let _building = self.building.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(k) = self.lock().iter().find(|k| same_point(k)) {
            return Ok((pinned, kept(k), k.key.2));
        }
        let max = self.limits.max_view_memory;
        let (mut quads, mut bytes) = (Vec::new(), 0u64);
        let projected = statements(
            store,
            ns,
            pinned.point(),
            view,
            GraphName::DefaultGraph,
            self.limits.max_statements,
            &mut |q| {
                bytes += STATEMENT_BYTES + size_of::<Quad>() as u64 + 2 * text_bytes(&q);
                if bytes > max {
                    return Err(RdfError::ViewTooBig { max });
                }
                quads.push(q);
                Ok(())
            },
        )?;
        let (basis, count) = (projected.basis, projected.statements);
        let key = self.key(&quads);
        let remember = |kept: &mut Vec<Kept>, graph: &oxigraph::store::Store, held: &Arc<Held>| {
            if kept.len() >= KEPT {
                kept.remove(0);
            }
            let (seq, window) = (basis.known_at, projected.window);
            kept.push(Kept {
                ns: ns.clone(),
                view,
                seq,
                window,
                key,
                graph: graph.clone(),
                held: held.clone(),
            });
        };
        let found = {
            let mut kept_now = self.lock();
            let found = kept_now.iter().position(|k| k.ns == *ns && k.view == view && k.key == key);
            found.map(|found| {
                let projection = kept(&kept_now[found]);
                // Known now for this point too.
                remember(&mut kept_now, &projection.graph, &projection._held);
                projection
            })
        };
        if let Some(projection) = found {
            return Ok((basis, projection, count));
        }
        let held = self.make_room(bytes)?;
        let graph = oxigraph::store::Store::new().map_err(|e| RdfError::Internal(e.to_string()))?;
        for chunk in quads.chunks(CHUNK) {
            if let Some(reason) = Interrupt::current().as_ref().and_then(Interrupt::reason) {
                return Err(RdfError::Interrupted { reason });
            }
            graph.extend(chunk.iter().cloned()).map_err(|e| RdfError::Internal(e.to_string()))?;
        }
        self.built.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tracing::debug!(namespace = %ns, view = view.as_str(), statements = count, bytes, "SPARQL projection built");
        remember(&mut self.lock(), &graph, &held);
        Ok((basis, Projection { graph, _held: held }, count))
    }

    /// Counts `bytes` of a new projection once the projections held leave room for them:
    /// kept ones are dropped first, oldest first, then running queries are waited for
    /// (until the request's interrupt, at most [`ROOM_WAIT`]).
    fn make_room(&self, bytes: u64) -> Result<Arc<Held>, RdfError> {
        let max = self.limits.max_view_memory;
        let since = std::time::Instant::now();
        loop {
            let live = self.live.load(Ordering::Relaxed);
            if live.saturating_add(bytes) <= max {
                self.live.fetch_add(bytes, Ordering::Relaxed);
                return Ok(Arc::new(Held { bytes, live: self.live.clone() }));
            }
            let dropped = {
                let mut kept = self.lock();
                (!kept.is_empty()).then(|| kept.remove(0))
            };
            if dropped.is_some() {
                continue;
            }
            if let Some(reason) = Interrupt::current().as_ref().and_then(Interrupt::reason) {
                return Err(RdfError::Interrupted { reason });
            }
            if since.elapsed() > ROOM_WAIT {
                return Err(RdfError::ViewTooBig { max });
            }
            std::thread::sleep(WATCH_EVERY);
        }
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

    use ostrakon_core::{Interval, Literal, Timestamp};
    use ostrakon_engine::{Change, EntityRef, NewEntity, NewFact, ObjectRef};

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
        let year = |y: &str| Timestamp::parse("t", y, &ostrakon_core::TimeZone::Utc).unwrap();
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
                .query(
                    Dataset { store: &store, ns: &ns, at: ReadAt::valid(year(t)), view },
                    "SELECT * WHERE { ?s ?p ?o }",
                    |_| Ok(Format::Csv),
                )
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
                .query(
                    Dataset { store: &store, ns: &ns, at: ReadAt::valid(year("2012")), view: View::History },
                    "ASK {}",
                    |_| Ok(Format::Json),
                )
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
    fn the_views_held_at_once_stay_within_their_budget() {
        let store = Store::in_memory();
        let ns = Namespace::new("ns", "t").unwrap();
        let mut seqs = Vec::new();
        for batch in 0..6i64 {
            let mut changes =
                vec![Change::DeclareEntity(NewEntity { name: format!("A{batch}"), ..NewEntity::default() })];
            // Batches of different sizes and kinds of values.
            for i in 0..(200 + 100 * batch) {
                let object = match i % 3 {
                    0 => ObjectRef::Literal(Literal::Integer(i)),
                    1 => ObjectRef::Literal(Literal::String(format!("text {i} of batch {batch}"))),
                    _ => ObjectRef::Entity(EntityRef::Name("A0".into())),
                };
                changes.push(Change::AssertFact(NewFact::new(
                    EntityRef::New(0),
                    format!("p{i}"),
                    object,
                    Interval::open(Timestamp::EPOCH),
                )));
            }
            seqs.push(store.append(&ns, changes).unwrap().seq);
        }
        let count = |sparql: &Sparql, seq: ostrakon_core::Seq| {
            let at = ReadAt::bitemporal(Timestamp::EPOCH, seq);
            let query = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }";
            sparql
                .query(Dataset { store: &store, ns: &ns, at, view: View::History }, query, |_| {
                    Ok(Format::Csv)
                })
                .map(|a| a.value.statements)
        };
        // What the largest view weighs.
        let unbounded = Sparql::default();
        let largest = count(&unbounded, seqs[5]).unwrap();
        let heaviest = unbounded.view_bytes();
        assert!(heaviest > 0);
        // Room for one of the largest, not two: each new read point drops the kept ones
        // it needs room for, and answers as without a budget.
        let max = heaviest * 3 / 2;
        let sparql = Sparql::new(SparqlLimits { max_view_memory: max, ..SparqlLimits::default() });
        for round in 0..2 {
            for &seq in seqs.iter().chain(seqs.iter().rev()) {
                assert_eq!(count(&sparql, seq).unwrap(), count(&Sparql::default(), seq).unwrap(), "{round}");
                assert!(sparql.view_bytes() <= max, "{} > {max}", sparql.view_bytes());
            }
        }
        assert_eq!(count(&sparql, seqs[5]).unwrap(), largest);
        // A view that alone needs more is refused while it is read, and the service
        // answers smaller ones on.
        let small = Sparql::new(SparqlLimits { max_view_memory: heaviest / 2, ..SparqlLimits::default() });
        assert!(matches!(count(&small, seqs[5]), Err(RdfError::ViewTooBig { .. })));
        assert_eq!(small.view_bytes(), 0);
        count(&small, seqs[0]).unwrap();
        assert!(small.view_bytes() <= heaviest / 2);
    }

    #[test]
    fn a_query_stops_when_its_interrupt_fires() {
        let (store, ns) = store(30);
        let sparql = Sparql::default();
        let run = |query: &str, deadline: Duration| {
            let interrupt = Interrupt::new(Some(Instant::now() + deadline));
            let start = Instant::now();
            let result = interrupt.run(|| {
                sparql.query(
                    Dataset { store: &store, ns: &ns, at: ReadAt::latest(), view: View::InForce },
                    query,
                    |_| Ok(Format::Json),
                )
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
