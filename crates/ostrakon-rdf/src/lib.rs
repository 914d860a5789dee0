//! Ostrakon's memory as RDF 1.2, with oxigraph: a namespace projected at one read point —
//! the state in force ([`View::InForce`]) or the whole history with each fact's
//! annotations on its triple term ([`View::History`]) — queried with SPARQL 1.1
//! ([`Sparql`]) or written out as N-Quads or Turtle ([`export`]).
//!
//! The projection is derived like every index: read through the `Store`'s typed pages at
//! one pinned point, never written back, and the same for the same read point.
//!
//! # The graph
//!
//! Everything of namespace `ns` is under `urn:ostrakon:{ns}:`:
//!
//! - entity 42 is `e:42` (`urn:ostrakon:{ns}:entity:42`), with `rdf:type mn:Entity`, its name
//!   as `rdfs:label`, `mn:alias`, `mn:kind` and its properties as `prop:{name}`;
//! - a fact `subject —predicate→ object` is the triple `e:{subject} p:{predicate} object`,
//!   the object an entity or a typed literal (`xsd:string`, `xsd:integer`, `xsd:double`,
//!   `xsd:boolean`, `xsd:dateTime` in UTC); predicate names are percent-encoded outside
//!   `[A-Za-z0-9._~-]`;
//! - in the history view each visible fact `f:{id}` reifies its triple
//!   (`f:7 rdf:reifies <<( e:1 p:lives_in e:2 )>>`) and carries `mn:status` (its status at
//!   T: `CURRENT`, `SUPERSEDED`, `RETRACTED`…), `mn:validFrom`/`mn:validTo` (its asserted
//!   validity with any end), `mn:confidence`, `mn:assertedAt`/`mn:assertedSeq`,
//!   `mn:episode` (its provenance), `mn:corrects` (the fact it supersedes),
//!   `mn:beatenBy`, `mn:contradicts`, `mn:retractedSeq`, `mn:negated true` for a
//!   denial, and `mn:inForce [ mn:from …; mn:to … ]` for each stretch of valid time it is
//!   in force over as known at S. Only facts in force at T are asserted as triples. The
//!   episodes known at S are described too: `ep:{id} a mn:Episode` with `mn:text`,
//!   `mn:occurredAt`, `mn:thread`, `mn:role`, `mn:source` and `mn:externalId`.
#![deny(missing_docs)]

mod project;
mod shape;
mod sparql;

use std::io::Write;

use ostrakon_core::Namespace;
use ostrakon_engine::{EngineError, ReadAt, Store};
use oxigraph::io::{RdfFormat, RdfSerializer};
use oxigraph::model::GraphName;

pub use project::{Iris, Projected, VOCAB, View, Window, date_time, literal, statements, triple};
pub use shape::{MAX_DEPTH, MAX_NESTING, MAX_NODES, MAX_OPERATORS, MAX_QUERY_BYTES};
pub use sparql::{
    DEFAULT_MAX_ANSWER_BYTES, DEFAULT_MAX_QUERY_MEMORY, DEFAULT_MAX_STATEMENTS, DEFAULT_MAX_VIEW_MEMORY,
    Form, Format, MAX_JOIN_RESULTS, Sparql, SparqlLimits, Written,
};

/// Why a projection, query or export failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RdfError {
    /// The read itself failed (a bad read point, a namespace that cannot be read…).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The query is not SPARQL 1.1 (or uses an update form).
    #[error("the query is not valid SPARQL: {0}")]
    Syntax(String),
    /// The query failed while it ran.
    #[error("the query failed: {0}")]
    Evaluation(String),
    /// The query is longer, nests deeper or has more parts than a query may.
    #[error("limit exceeded in `query`: {value} {what} (at most {max})")]
    QueryTooComplex {
        /// What was counted.
        what: String,
        /// How many the query has.
        value: usize,
        /// The limit.
        max: usize,
    },
    /// The view holds more statements than a projection may.
    #[error(
        "limit exceeded: this view holds more than {max} statements, the most a SPARQL projection may hold; \
         ask at an earlier knownAt, use the in-force view, or the GraphQL analytics"
    )]
    TooLarge {
        /// The limit.
        max: usize,
    },
    /// The view's projection needs more memory than SPARQL's projections may hold at
    /// once, or the ones running queries hold left it no room in time.
    #[error(
        "limit exceeded: this view needs more than the {max} bytes SPARQL's projections may hold at once (with \
         those of the queries running now); ask at an earlier knownAt, use the in-force view, or the GraphQL \
         analytics"
    )]
    ViewTooBig {
        /// The limit.
        max: u64,
    },
    /// The query's joins produced more results than a query may.
    #[error(
        "limit exceeded: the query's joins produced more than {max} results; add patterns that share variables \
         or narrow them"
    )]
    TooExpensive {
        /// The limit.
        max: u64,
    },
    /// The query kept more memory than a query may (strings, path closures, solutions
    /// held to sort, deduplicate or group).
    #[error(
        "limit exceeded: the query kept more than {max} bytes while it ran (strings it built, property path \
         closures, solutions held to sort, deduplicate or group); narrow its patterns or paths, or drop ORDER BY"
    )]
    TooMuchMemory {
        /// The limit.
        max: u64,
    },
    /// The answer is longer than allowed.
    #[error(
        "limit exceeded in `response`: the answer is longer than {max} bytes; ask for fewer solutions (LIMIT)"
    )]
    AnswerTooLong {
        /// The limit.
        max: usize,
    },
    /// The request's deadline passed, or it was cancelled.
    #[error("limit exceeded: the query stopped ({reason})")]
    Interrupted {
        /// Why.
        reason: &'static str,
    },
    /// The evaluator was cancelled (turned into [`RdfError::Interrupted`] before it leaves
    /// the crate).
    #[error("the query was cancelled")]
    Cancelled,
    /// None of the formats the client accepts can carry this answer.
    #[error("none of the accepted media types ({accept}) can carry this answer; offered: {offered}")]
    NotAcceptable {
        /// The `Accept` header, shortened.
        accept: String,
        /// What could be written.
        offered: String,
    },
    /// Writing failed.
    #[error("cannot write: {0}")]
    Io(#[from] std::io::Error),
    /// Something that should not fail did.
    #[error("internal error: {0}")]
    Internal(String),
}

/// How [`export`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// N-Quads 1.2, each namespace in its graph `urn:ostrakon:{ns}:graph`.
    NQuads,
    /// Turtle 1.2, with the namespace's prefixes.
    Turtle,
}

/// Writes `view` of `ns` at `at` to `out`, streaming; returns what was written.
pub fn export(
    store: &Store,
    ns: &Namespace,
    at: ReadAt,
    view: View,
    format: ExportFormat,
    out: impl Write,
) -> Result<Projected, RdfError> {
    let iris = Iris::new(ns);
    let (mut serializer, graph) = match format {
        ExportFormat::NQuads => {
            (RdfSerializer::from_format(RdfFormat::NQuads), GraphName::from(iris.graph()))
        }
        ExportFormat::Turtle => (RdfSerializer::from_format(RdfFormat::Turtle), GraphName::DefaultGraph),
    };
    if format == ExportFormat::Turtle {
        for (name, iri) in iris.prefixes() {
            serializer = serializer.with_prefix(name, iri).map_err(|e| RdfError::Internal(e.to_string()))?;
        }
    }
    let mut writer = serializer.for_writer(out);
    let done =
        statements(store, ns, at, view, graph, usize::MAX, &mut |quad| Ok(writer.serialize_quad(&quad)?))?;
    writer.finish()?.flush()?;
    Ok(done)
}
