//! What every handler shares: the store, the schema, the configuration, the metrics, and
//! how a request is authenticated.

use std::sync::Arc;

use crate::config::Config;
use crate::error::ApiError;
use crate::metrics::Metrics;
use axum::http::{HeaderMap, header};
use ostrakon_engine::{Interrupt, Store};
use ostrakon_graphql::{Access, OstrakonSchema};

/// What every handler shares: the store, the schema over it, the configuration and the
/// metrics. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) store: Arc<Store>,
    pub(crate) graphql: ostrakon_graphql::Executor,
    pub(crate) config: Config,
    pub(crate) metrics: Arc<Metrics>,
    /// One permit per GraphQL request working (`max_running_requests`).
    pub(crate) permits: Arc<tokio::sync::Semaphore>,
    /// Fires when the server stops: every request's interrupt is its child.
    pub(crate) stopping: Interrupt,
    /// Set once the server was told to stop: it takes no new connection, `/readyz` says
    /// so, and the requests in flight finish for a moment before they are stopped.
    pub(crate) draining: std::sync::atomic::AtomicBool,
    /// SPARQL queries and the projections they run on, shared with the schema's `sparql`.
    pub(crate) sparql: Arc<ostrakon_rdf::Sparql>,
    /// Cancelled when the server stops: ends the MCP sessions.
    pub(crate) stop: tokio_util::sync::CancellationToken,
    /// Documents known by their hash, and the allow-list.
    pub(crate) persisted: Arc<crate::persisted::Persisted>,
    /// The extractor, when `[extraction]` configures one (`serve` runs it).
    pub(crate) extractor: Option<Arc<ostrakon_extract::Extractor>>,
}

impl AppState {
    /// The state for a store and a configuration; builds the schema with the
    /// configuration's limits and starts counting the store's commits.
    pub fn new(store: Arc<Store>, config: Config) -> AppState {
        let metrics = Arc::new(Metrics::default());
        // The listener holds the metrics only: holding the state would make the store own
        // itself through its own listener, and never be dropped (nor its directory unlocked).
        let counter = Arc::clone(&metrics);
        store.on_commit(Arc::new(move |batch| counter.committed(batch.events.len())));
        // One answer limit for `/sparql` and GraphQL's `sparql`: the response limit.
        let sparql = Arc::new(ostrakon_rdf::Sparql::new(ostrakon_rdf::SparqlLimits {
            max_statements: config.sparql_max_statements,
            max_memory: config.sparql_max_memory_bytes,
            max_view_memory: config.sparql_max_view_bytes,
            max_answer_bytes: config.max_response_bytes,
        }));
        let graphql = ostrakon_graphql::Executor::new(Arc::clone(&store), config.limits, |schema| {
            schema.data(Arc::clone(&sparql))
        });
        let stopping = Interrupt::new(None);
        let permits = Arc::new(tokio::sync::Semaphore::new(config.max_running_requests));
        let persisted = Arc::new(crate::persisted::Persisted::new(&config.persisted));
        let extractor =
            config.extraction.clone().and_then(|settings| match ostrakon_extract::Extractor::new(settings) {
                Ok(extractor) => {
                    extractor.listen(&store);
                    Some(extractor)
                }
                Err(why) => {
                    tracing::error!(error = %why, "extraction is off");
                    None
                }
            });
        AppState {
            inner: Arc::new(Inner {
                store,
                graphql,
                config,
                metrics,
                permits,
                stopping,
                draining: std::sync::atomic::AtomicBool::new(false),
                sparql,
                stop: tokio_util::sync::CancellationToken::new(),
                persisted,
                extractor,
            }),
        }
    }

    /// Marks the server as stopping: `/readyz` answers 503 from now on. `serve` calls it
    /// when its shutdown signal fires, before it stops taking connections.
    pub fn begin_stopping(&self) {
        self.inner.draining.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Stops the work of every request in flight (at the engine's next check); they answer
    /// `LIMIT_EXCEEDED`. `serve` calls it once requests in flight had a moment to finish.
    pub fn stop_requests(&self) {
        self.begin_stopping();
        self.inner.stopping.cancel();
        self.inner.stop.cancel();
    }

    /// A permit to work, waited for within the request's deadline; the message of
    /// `LIMIT_EXCEEDED` when none came in time.
    pub(crate) async fn permit(&self) -> Result<Result<tokio::sync::OwnedSemaphorePermit, String>, ApiError> {
        let timeout = self.inner.config.request_timeout;
        match tokio::time::timeout(timeout, Arc::clone(&self.inner.permits).acquire_owned()).await {
            Ok(Ok(permit)) => Ok(Ok(permit)),
            Ok(Err(_)) => Err(ApiError::Internal("the request permits are closed".into())),
            Err(_) => Ok(Err(format!(
                "limit exceeded: {} requests were working for the whole {} s this one could wait",
                self.inner.config.max_running_requests,
                timeout.as_secs_f64()
            ))),
        }
    }

    /// The store.
    pub fn store(&self) -> &Arc<Store> {
        &self.inner.store
    }

    /// The GraphQL schema requests run against (through an [`ostrakon_graphql::Executor`]).
    pub fn schema(&self) -> &OstrakonSchema {
        self.inner.graphql.schema()
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The extractor, if one is configured.
    pub fn extractor(&self) -> Option<&Arc<ostrakon_extract::Extractor>> {
        self.inner.extractor.as_ref()
    }

    /// The metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    /// The access an `Authorization` header gives.
    pub(crate) fn authenticate(&self, headers: &HeaderMap) -> Result<Access, ApiError> {
        if !self.inner.config.requires_tokens() {
            return Ok(Access::Local);
        }
        let value = headers
            .get(header::AUTHORIZATION)
            .ok_or(ApiError::Unauthorized("no Authorization header"))?
            .to_str()
            .map_err(|_| ApiError::Unauthorized("Authorization header is not text"))?;
        self.bearer(value)
    }

    /// That the request may see operational detail that names every namespace (the
    /// metrics, the extractor's status, the indexes' progress): with tokens configured, it
    /// carries one granted `*`. `what` says what it asked for.
    pub(crate) fn operator(&self, headers: &HeaderMap, what: &'static str) -> Result<(), ApiError> {
        match self.authenticate(headers)? {
            Access::Token { grants, .. } if !grants.contains_key("*") => Err(ApiError::Forbidden(what)),
            _ => Ok(()),
        }
    }

    /// The access of an `Authorization` value (`Bearer <token>`).
    pub(crate) fn bearer(&self, value: &str) -> Result<Access, ApiError> {
        let (scheme, secret) =
            value.trim().split_once(' ').ok_or(ApiError::Unauthorized("not a Bearer credential"))?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(ApiError::Unauthorized("not a Bearer credential"));
        }
        self.inner.config.access_for(secret.trim()).ok_or(ApiError::Unauthorized("unknown token"))
    }
}
