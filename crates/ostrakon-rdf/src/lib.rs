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

mod error;
mod project;
mod shape;
mod sparql;

use std::io::Write;

use ostrakon_core::Namespace;
use ostrakon_engine::{ReadAt, Store};
use oxigraph::io::{RdfFormat, RdfSerializer};
use oxigraph::model::GraphName;

pub use error::RdfError;
pub use project::{Iris, Projected, VOCAB, View, Window, date_time, literal, statements, triple};
pub use shape::{MAX_DEPTH, MAX_NESTING, MAX_NODES, MAX_OPERATORS, MAX_QUERY_BYTES};
pub use sparql::{
    DEFAULT_MAX_ANSWER_BYTES, DEFAULT_MAX_QUERY_MEMORY, DEFAULT_MAX_STATEMENTS, DEFAULT_MAX_VIEW_MEMORY,
    Dataset, Form, Format, MAX_JOIN_RESULTS, Sparql, SparqlLimits, Written,
};

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
