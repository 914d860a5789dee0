//! Why a projection, a SPARQL query or an export failed: one error type for the crate,
//! each limit its own variant so that the protocol crates can give it its code.

use ostrakon_engine::ReadError;

/// Why a projection, query or export failed.
#[derive(Debug, thiserror::Error)]
pub enum RdfError {
    /// The read itself failed (a bad read point, a namespace that cannot be read…).
    #[error(transparent)]
    Engine(#[from] ReadError),
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
