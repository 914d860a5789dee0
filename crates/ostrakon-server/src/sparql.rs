//! The SPARQL 1.1 Protocol endpoint, `/sparql`: read-only queries over one namespace's
//! RDF projection at one read point.
//!
//! - `GET /sparql?query=…`, `POST` with an `application/x-www-form-urlencoded` body
//!   (`query=…`), or `POST` with an `application/sparql-query` body (the query itself, the
//!   other parameters in the URL).
//! - Parameters: `namespace` (required; or in the path, `/sparql/{namespace}`), `view`
//!   (`in-force`, the default, or `history`, whose `reification` is `triple-term`, RDF
//!   1.2, or `standard`, RDF 1.1), and the read point `validAt`, `knownAt` or
//!   `knownAtSeq`, as in GraphQL.
//! - The answer's format follows `Accept`, or `format`/`output`/`results` when given (`json`, `xml`,
//!   `csv`, `tsv`, `turtle`, `ntriples` or a media type, as Fuseki takes them): SPARQL
//!   results as JSON (the default), XML, CSV or TSV; `CONSTRUCT` and `DESCRIBE` as Turtle
//!   (the default) or N-Triples. The point it
//!   was read at comes back in `Ostrakon-Known-At-Seq` and `Ostrakon-Valid-At`.
//! - The same tokens (read access to the namespace), deadline, running-request permits
//!   and response size limit as GraphQL. Updates, `default-graph-uri` and
//!   `named-graph-uri` are refused (the dataset is the view), as are unknown parameters.
//! - Errors are a status and the GraphQL error shape with `extensions.code`: 400
//!   `INVALID_QUERY` or `INVALID_*` for the request, 403 `FORBIDDEN`, 406
//!   `NOT_ACCEPTABLE`, 415 `BAD_REQUEST` for a body of another type, 400
//!   `LIMIT_EXCEEDED` for a query longer, deeper or larger than a query may be (see
//!   `ostrakon_rdf`'s limits), 503 `LIMIT_EXCEEDED` when a limit stopped it while it ran
//!   (deadline, join results, memory).

use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::{FromRequest, Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use ostrakon_core::{Namespace, Seq};
use ostrakon_engine::{KnownAt, ReadAt};
use ostrakon_graphql::{Access, Mode, code, rdf_code};
use ostrakon_rdf::{Dataset, Format, RdfError, View};

use crate::execute::{CancelOnDrop, Running};
use crate::{error::ApiError, state::AppState};

/// What a SPARQL request asks.
#[derive(Default)]
struct Params {
    query: Option<String>,
    namespace: Option<String>,
    view: Option<String>,
    valid_at: Option<String>,
    known_at: Option<String>,
    known_at_seq: Option<String>,
    /// The answer's format as a name (`json`, `xml`, `csv`, `tsv`, `turtle`, `ntriples`)
    /// or a media type, in the order asked: `format` as Virtuoso takes it, `output` as
    /// Fuseki, `results` as others. SPARQLWrapper sends all three, and for TSV each twice
    /// (`tsv`, then `text/tab-separated-values`): they may repeat if they agree.
    formats: Vec<String>,
    /// How the history view names a fact's triple: `triple-term` (RDF 1.2, the default)
    /// or `standard` (RDF 1.1 reification).
    reification: Option<String>,
}

/// What `format`/`output` asks, as an `Accept` header would: a results type first, a
/// graph type after it for a `CONSTRUCT` or `DESCRIBE`.
fn accept_of(format: &str) -> Result<String, ApiError> {
    let accept = match format.trim().to_ascii_lowercase().as_str() {
        "json" => "application/sparql-results+json, application/json, text/turtle;q=0.1",
        "xml" => "application/sparql-results+xml, text/turtle;q=0.1",
        "csv" => "text/csv",
        "tsv" => "text/tab-separated-values",
        "turtle" | "ttl" | "n3" => "text/turtle",
        "nt" | "ntriples" | "n-triples" => "application/n-triples",
        media if media.contains('/') => return Ok(media.to_owned()),
        other => {
            return Err(bad(format!(
                "unknown format {:?}; expected json, xml, csv, tsv, turtle, ntriples or a media type",
                other.chars().take(100).collect::<String>()
            )));
        }
    };
    Ok(accept.to_owned())
}

fn bad(message: impl Into<String>) -> ApiError {
    ApiError::Coded { status: StatusCode::BAD_REQUEST, code: code::BAD_REQUEST, message: message.into() }
}

impl Params {
    /// Adds the parameters of a URL query or form body; each may be given once.
    fn add(&mut self, encoded: &str) -> Result<(), ApiError> {
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(encoded)
            .map_err(|e| bad(format!("the parameters are not URL-encoded: {e}")))?;
        for (key, value) in pairs {
            let slot = match key.as_str() {
                "query" => &mut self.query,
                "namespace" => &mut self.namespace,
                "view" => &mut self.view,
                "validAt" => &mut self.valid_at,
                "knownAt" => &mut self.known_at,
                "knownAtSeq" => &mut self.known_at_seq,
                "format" | "output" | "results" => {
                    if self.formats.len() >= 16 {
                        return Err(bad("too many `format`, `output` and `results` parameters"));
                    }
                    self.formats.push(value);
                    continue;
                }
                "reification" => &mut self.reification,
                "update" => return Err(bad("this endpoint is read-only: SPARQL Update is not served")),
                "default-graph-uri" | "named-graph-uri" => {
                    return Err(bad(format!(
                        "`{key}` is not supported: the dataset is the namespace's view (`view=in-force` or `view=history`)"
                    )));
                }
                other => {
                    return Err(bad(format!(
                        "unknown parameter `{}`; expected query, namespace, view, reification, validAt, knownAt, \
                         knownAtSeq, format, output or results",
                        other.chars().take(100).collect::<String>()
                    )));
                }
            };
            if slot.replace(value).is_some() {
                return Err(bad(format!("`{key}` is given more than once")));
            }
        }
        Ok(())
    }
}

/// `GET /sparql`.
pub(crate) async fn sparql_get(
    State(state): State<AppState>,
    request: Request,
) -> Result<Response, ApiError> {
    get(state, None, request).await
}

/// `GET /sparql/{namespace}`: the namespace in the path, so that a client that adds its
/// own parameters to the endpoint's URL (SPARQLWrapper) keeps it.
pub(crate) async fn sparql_get_in(
    State(state): State<AppState>,
    Path(namespace): Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    get(state, Some(namespace), request).await
}

/// `POST /sparql`.
pub(crate) async fn sparql_post(
    State(state): State<AppState>,
    request: Request,
) -> Result<Response, ApiError> {
    post(state, None, request).await
}

/// `POST /sparql/{namespace}`.
pub(crate) async fn sparql_post_in(
    State(state): State<AppState>,
    Path(namespace): Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    post(state, Some(namespace), request).await
}

/// The parameters of the request's URL, with the namespace of its path.
fn url_params(path_namespace: Option<String>, request: &Request) -> Result<Params, ApiError> {
    let mut params = Params::default();
    params.add(request.uri().query().unwrap_or_default())?;
    if let Some(ns) = path_namespace
        && params.namespace.replace(ns).is_some()
    {
        return Err(bad("`namespace` is given more than once (in the path and as a parameter)"));
    }
    Ok(params)
}

async fn get(
    state: AppState,
    path_namespace: Option<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let access = state.authenticate(request.headers())?;
    let params = url_params(path_namespace, &request)?;
    run(state, access, params, request.headers()).await
}

async fn post(
    state: AppState,
    path_namespace: Option<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let access = state.authenticate(request.headers())?;
    let headers = request.headers().clone();
    let mut params = url_params(path_namespace, &request)?;
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase());
    let body = Bytes::from_request(request, &state).await.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::BodyTooLarge { limit: state.inner.config.max_body_bytes }
        } else {
            bad(rejection.body_text())
        }
    })?;
    let text = || String::from_utf8(body.to_vec()).map_err(|_| bad("the body is not UTF-8"));
    match content_type.as_deref() {
        Some("application/sparql-query") => {
            if params.query.replace(text()?).is_some() {
                return Err(bad("the query is both in the URL and the body"));
            }
        }
        Some("application/x-www-form-urlencoded") => params.add(&text()?)?,
        Some("application/sparql-update") => {
            return Err(bad("this endpoint is read-only: SPARQL Update is not served"));
        }
        other => {
            return Err(ApiError::Coded {
                status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
                code: code::BAD_REQUEST,
                message: format!(
                    "a SPARQL POST must be application/sparql-query or application/x-www-form-urlencoded (got {})",
                    other.map_or_else(|| "none".to_owned(), |c| format!("{c:?}"))
                ),
            });
        }
    }
    run(state, access, params, &headers).await
}

/// The status of an RDF error.
fn refusal(error: RdfError) -> ApiError {
    let code = rdf_code(&error);
    let status = match code {
        // A query too long, deep or large is refused whenever it is sent: not a 503.
        _ if matches!(error, RdfError::QueryTooComplex { .. }) => StatusCode::BAD_REQUEST,
        code::NOT_ACCEPTABLE => StatusCode::NOT_ACCEPTABLE,
        code::LIMIT_EXCEEDED | code::NAMESPACE_DAMAGED => StatusCode::SERVICE_UNAVAILABLE,
        code::NAMESPACE_DROPPED => StatusCode::GONE,
        code::INTERNAL => return ApiError::Internal(error.to_string()),
        _ => StatusCode::BAD_REQUEST,
    };
    ApiError::Coded { status, code, message: error.to_string() }
}

fn limit(message: String) -> ApiError {
    ApiError::Coded { status: StatusCode::SERVICE_UNAVAILABLE, code: code::LIMIT_EXCEEDED, message }
}

async fn run(
    state: AppState,
    access: Access,
    params: Params,
    headers: &HeaderMap,
) -> Result<Response, ApiError> {
    let query = params.query.ok_or_else(|| bad("a SPARQL request needs a `query`"))?;
    // With an allow-list, SPARQL is held to it as GraphQL is: only the listed documents
    // (the manifest may list SPARQL queries, each under its SHA-256) run.
    if let Err((code, message)) = state.inner.persisted.allows(&query) {
        return Err(ApiError::Coded { status: StatusCode::FORBIDDEN, code, message });
    }
    let name = params.namespace.ok_or_else(|| bad("a SPARQL request needs a `namespace`"))?;
    let ns = Namespace::new("namespace", &name).map_err(|e| refusal(RdfError::Engine(e.into())))?;
    if !access.allows(ns.as_str(), Mode::Read) {
        return Err(ApiError::Coded {
            status: StatusCode::FORBIDDEN,
            code: code::FORBIDDEN,
            message: format!("this token may not read namespace {name:?}"),
        });
    }
    let view = match (params.view.as_deref(), params.reification.as_deref()) {
        (None | Some("in-force"), None) => View::InForce,
        (None | Some("in-force"), Some(_)) => {
            return Err(bad("`reification` is for view=history: the facts in force are plain triples"));
        }
        (Some("history"), None | Some("triple-term")) => View::History,
        (Some("history"), Some("standard")) => View::HistoryStandard,
        (Some("history"), Some(other)) => {
            return Err(bad(format!(
                "unknown reification {:?}; expected triple-term or standard",
                other.chars().take(100).collect::<String>()
            )));
        }
        (Some(other), _) => {
            return Err(bad(format!(
                "unknown view {:?}; expected in-force or history",
                other.chars().take(100).collect::<String>()
            )));
        }
    };
    let store = Arc::clone(&state.inner.store);
    let time = |field: &str, value: &Option<String>| {
        value.as_deref().map(|v| store.parse_time(&ns, field, v)).transpose().map_err(|e| refusal(e.into()))
    };
    let valid_at = time("validAt", &params.valid_at)?;
    let known_at = match (time("knownAt", &params.known_at)?, params.known_at_seq.as_deref()) {
        (Some(_), Some(_)) => return Err(bad("give knownAt or knownAtSeq, not both")),
        (Some(t), None) => KnownAt::Time(t),
        (None, Some(s)) => KnownAt::Seq(Seq(s
            .trim()
            .parse()
            .map_err(|_| bad(format!("knownAtSeq must be a batch number, got {s:?}")))?)),
        (None, None) => KnownAt::Latest,
    };
    let at = ReadAt { valid_at, known_at, at: None };
    let accept = match params.formats.first() {
        Some(first) => {
            // A name and its media type (`tsv`, `text/tab-separated-values`) agree.
            let primary =
                |f: &str| accept_of(f).map(|a| a.split(',').next().unwrap_or_default().trim().to_owned());
            let wanted = primary(first)?;
            for other in &params.formats[1..] {
                if !primary(other)?.eq_ignore_ascii_case(&wanted) {
                    return Err(bad("`format`, `output` and `results` ask for different formats"));
                }
            }
            Some(accept_of(first)?)
        }
        None => headers.get(header::ACCEPT).map(|v| v.to_str().unwrap_or("\u{fffd}").to_owned()),
    };

    let timeout = state.inner.config.request_timeout;
    let interrupt = state.inner.stopping.child(Some(Instant::now() + timeout));
    let _cancel_when_dropped = CancelOnDrop(interrupt.clone());
    // Work that was stopped keeps its permit until it reaches its next check.
    let permit = state.permit().await?.map_err(limit)?;
    let running = Running::start(Arc::clone(&state.inner.metrics));
    let sparql = Arc::clone(&state.inner.sparql);
    let work = tokio::task::spawn_blocking(move || {
        let _running = (running, permit);
        interrupt.run(|| {
            sparql.query(Dataset { store: &store, ns: &ns, at, view }, &query, |form| {
                Format::negotiate(accept.as_deref(), form)
            })
        })
    });
    let answer = match tokio::time::timeout(timeout, work).await {
        Ok(joined) => {
            joined.map_err(|e| ApiError::Internal(format!("the SPARQL query did not complete: {e}")))?
        }
        Err(_) => {
            return Err(limit(format!(
                "limit exceeded: the request ran longer than {} s",
                timeout.as_secs_f64()
            )));
        }
    }
    .map_err(refusal)?;
    let mut response = (
        [(header::CONTENT_TYPE, HeaderValue::from_static(answer.value.format.media_type()))],
        answer.value.body,
    )
        .into_response();
    let basis = response.headers_mut();
    if let Ok(seq) = HeaderValue::from_str(&answer.basis.known_at.0.to_string()) {
        basis.insert("ostrakon-known-at-seq", seq);
    }
    if let Ok(t) = HeaderValue::from_str(&answer.basis.valid_at.to_string()) {
        basis.insert("ostrakon-valid-at", t);
    }
    Ok(response)
}
