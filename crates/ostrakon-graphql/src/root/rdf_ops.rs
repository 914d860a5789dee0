//! The memory as RDF: SPARQL 1.1 over a namespace's projection at one pinned read point,
//! for clients that speak only GraphQL (the server also answers `/sparql`).

use async_graphql::{Context, Enum, Object, Result, SimpleObject};

use crate::error::code;
use crate::error::coded;
use crate::error::rdf_error;
use crate::exec::access::Mode;
use crate::exec::context::Start;
use crate::exec::context::read_at;
use crate::exec::context::start;
use crate::types::paging::Basis;
use crate::types::scalars::DateTime;
use async_graphql::Json;
use ostrakon_rdf::Dataset;
use ostrakon_rdf::Form;
use ostrakon_rdf::Format;
use ostrakon_rdf::RdfError;
use ostrakon_rdf::Sparql;
use ostrakon_rdf::View;
use std::sync::Arc;
/// Queries over the RDF projection.
#[derive(Default)]
pub(super) struct RdfQuery;

/// Which statements a SPARQL query sees.
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug, Default)]
pub enum RdfView {
    /// The facts in force at (validAt, knownAt) as plain triples, with the entities.
    #[default]
    InForce,
    /// The in-force triples, and every fact known at knownAt as a reifier of its triple
    /// term with its validity, status at validAt, confidence, provenance and supersession.
    History,
}

/// How the history view names a fact's triple.
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug, Default)]
pub enum Reification {
    /// RDF 1.2: `f:7 rdf:reifies <<( s p o )>>`.
    #[default]
    TripleTerm,
    /// RDF 1.1 standard reification, for tools that read no RDF 1.2: `f:7 a
    /// rdf:Statement; rdf:subject s; rdf:predicate p; rdf:object o`.
    Standard,
}

/// What kind of answer a SPARQL query gave.
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
pub enum SparqlForm {
    /// `SELECT`: `results` holds SPARQL 1.1 Query Results JSON.
    Solutions,
    /// `ASK`: `results` holds `{"head": {}, "boolean": …}`.
    Boolean,
    /// `CONSTRUCT` or `DESCRIBE`: `graph` holds N-Triples 1.2.
    Graph,
}

/// A SPARQL query's answer.
#[derive(SimpleObject)]
pub(super) struct SparqlAnswer {
    /// What kind of answer it is.
    pub form: SparqlForm,
    /// SPARQL 1.1 Query Results JSON, for `SELECT` and `ASK`.
    pub results: Option<Json<serde_json::Value>>,
    /// The triples as N-Triples 1.2, for `CONSTRUCT` and `DESCRIBE`.
    pub graph: Option<String>,
    /// Statements the query ran over.
    pub statements: u64,
    /// The point the query was pinned at.
    pub basis: Basis,
}

#[Object]
impl RdfQuery {
    /// Runs a SPARQL 1.1 query (read-only) over the namespace at one read point. The
    /// prefixes `e:` (entities), `p:` (predicates), `prop:` (entity properties), `f:`
    /// (facts), `ep:` (episodes), `mn:` (Ostrakon's vocabulary), `rdf:`, `rdfs:` and `xsd:`
    /// are declared. A view holding more statements than the server's SPARQL limit is
    /// refused with `LIMIT_EXCEEDED`; a malformed query is `INVALID_QUERY`.
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn sparql(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        query: String,
        #[graphql(default)] view: RdfView,
        #[graphql(default)] reification: Reification,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
    ) -> Result<SparqlAnswer> {
        let Start { ns, store } = start(ctx, &namespace, Mode::Read)?;
        let at = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, None)?;
        let sparql = ctx
            .data::<Arc<Sparql>>()
            .map_err(|_| coded(code::INTERNAL, "no SPARQL service in the schema"))?;
        let view = match (view, reification) {
            (RdfView::InForce, Reification::TripleTerm) => View::InForce,
            (RdfView::InForce, Reification::Standard) => {
                return Err(coded(
                    code::INVALID_VALUE,
                    "`reification` is for the HISTORY view: the facts in force are plain triples",
                ));
            }
            (RdfView::History, Reification::TripleTerm) => View::History,
            (RdfView::History, Reification::Standard) => View::HistoryStandard,
        };
        let choose = |form: Form| Ok(if form == Form::Graph { Format::NTriples } else { Format::Json });
        let answer = sparql.query(Dataset { store, ns: &ns, at, view }, &query, choose).map_err(rdf_error)?;
        let written = answer.value;
        let (results, graph) = match written.form {
            Form::Graph => (
                None,
                Some(
                    String::from_utf8(written.body)
                        .map_err(|e| rdf_error(RdfError::Internal(e.to_string())))?,
                ),
            ),
            Form::Solutions | Form::Boolean => {
                let json = serde_json::from_slice(&written.body)
                    .map_err(|e| rdf_error(RdfError::Internal(e.to_string())))?;
                (Some(Json(json)), None)
            }
        };
        Ok(SparqlAnswer {
            form: match written.form {
                Form::Solutions => SparqlForm::Solutions,
                Form::Boolean => SparqlForm::Boolean,
                Form::Graph => SparqlForm::Graph,
            },
            results,
            graph,
            statements: written.statements as u64,
            basis: (&answer.basis).into(),
        })
    }
}
