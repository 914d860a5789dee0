//! Counters kept by the server and their Prometheus text exposition (format 0.0.4),
//! written by hand: a handful of series do not need a metrics library.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use ostrakon_engine::Store;
use ostrakon_engine::core::Namespace;

/// Upper bounds (seconds) of the latency histogram's buckets.
const BUCKETS: [f64; 12] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0];

#[derive(Default)]
struct Histogram {
    /// Observations per bucket (not cumulative; summed when rendered).
    counts: [u64; BUCKETS.len()],
    /// Observations above the last bound.
    over: u64,
    sum: f64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        match BUCKETS.iter().position(|b| seconds <= *b) {
            Some(i) => self.counts[i] += 1,
            None => self.over += 1,
        }
        self.sum += seconds;
    }

    fn count(&self) -> u64 {
        self.counts.iter().sum::<u64>() + self.over
    }
}

/// What the server counts; rendered by [`Metrics::render`].
#[derive(Default)]
pub struct Metrics {
    /// (route, method, status) → requests.
    requests: Mutex<BTreeMap<(String, String, u16), u64>>,
    /// route → latency.
    latency: Mutex<BTreeMap<String, Histogram>>,
    /// (operation type, outcome) → GraphQL requests.
    operations: Mutex<BTreeMap<(&'static str, &'static str), u64>>,
    /// error code → GraphQL errors returned.
    errors: Mutex<BTreeMap<String, u64>>,
    events: AtomicU64,
    batches: AtomicU64,
    websockets: AtomicI64,
    running: AtomicI64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Counters stay usable after a panic elsewhere: a half-counted request is harmless.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Metrics {
    /// Counts one HTTP request.
    pub(crate) fn request(&self, route: &str, method: &str, status: u16, elapsed: Duration) {
        *lock(&self.requests).entry((route.to_owned(), method.to_owned(), status)).or_default() += 1;
        lock(&self.latency).entry(route.to_owned()).or_default().observe(elapsed.as_secs_f64());
    }

    /// Counts one executed GraphQL request and the codes of its errors.
    pub(crate) fn operation(&self, operation: &'static str, response: &async_graphql::Response) {
        let outcome = if response.errors.is_empty() { "ok" } else { "error" };
        *lock(&self.operations).entry((operation, outcome)).or_default() += 1;
        let mut errors = lock(&self.errors);
        for error in &response.errors {
            let code = error
                .extensions
                .as_ref()
                .and_then(|e| e.get("code"))
                .and_then(|c| match c {
                    async_graphql::Value::String(s) => Some(s.clone()),
                    _ => None,
                })
                .unwrap_or_else(|| "UNKNOWN".to_owned());
            *errors.entry(code).or_default() += 1;
        }
    }

    /// Counts one committed batch.
    pub(crate) fn committed(&self, events: usize) {
        self.batches.fetch_add(1, Ordering::Relaxed);
        self.events.fetch_add(events as u64, Ordering::Relaxed);
    }

    /// Counts a GraphQL request answered with one error `code` before it finished (its
    /// deadline passed).
    pub(crate) fn operation_failed(&self, operation: &'static str, code: &str) {
        *lock(&self.operations).entry((operation, "error")).or_default() += 1;
        *lock(&self.errors).entry(code.to_owned()).or_default() += 1;
    }

    /// A GraphQL request's work started (+1) or ended (-1) on the blocking pool.
    pub(crate) fn running(&self, delta: i64) {
        self.running.fetch_add(delta, Ordering::Relaxed);
    }

    /// A WebSocket connection opened (+1) or closed (-1).
    pub(crate) fn websocket(&self, delta: i64) {
        self.websockets.fetch_add(delta, Ordering::Relaxed);
    }

    /// The exposition, with per-namespace gauges read from the store now.
    pub fn render(&self, store: &Store) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail; the results are ignored for that reason.
        let w = &mut out;

        header(
            w,
            "ostrakon_http_requests_total",
            "counter",
            "HTTP requests answered, by route, method and status.",
        );
        for ((route, method, status), n) in lock(&self.requests).iter() {
            let _ = writeln!(
                w,
                "ostrakon_http_requests_total{{route=\"{}\",method=\"{}\",status=\"{status}\"}} {n}",
                escape(route),
                escape(method)
            );
        }

        header(
            w,
            "ostrakon_http_request_duration_seconds",
            "histogram",
            "Time from receiving a request to its response head, by route.",
        );
        for (route, h) in lock(&self.latency).iter() {
            let route = escape(route);
            let mut cumulative = 0;
            for (bound, count) in BUCKETS.iter().zip(h.counts) {
                cumulative += count;
                let _ = writeln!(
                    w,
                    "ostrakon_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"{bound}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                w,
                "ostrakon_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {}",
                h.count()
            );
            let _ = writeln!(w, "ostrakon_http_request_duration_seconds_sum{{route=\"{route}\"}} {}", h.sum);
            let _ = writeln!(
                w,
                "ostrakon_http_request_duration_seconds_count{{route=\"{route}\"}} {}",
                h.count()
            );
        }

        header(
            w,
            "ostrakon_graphql_requests_total",
            "counter",
            "GraphQL requests executed over HTTP, by operation type and outcome (error = at least one error).",
        );
        for ((operation, outcome), n) in lock(&self.operations).iter() {
            let _ = writeln!(
                w,
                "ostrakon_graphql_requests_total{{operation=\"{operation}\",outcome=\"{outcome}\"}} {n}"
            );
        }

        header(
            w,
            "ostrakon_graphql_errors_total",
            "counter",
            "GraphQL errors returned over HTTP, by extensions.code.",
        );
        for (code, n) in lock(&self.errors).iter() {
            let _ = writeln!(w, "ostrakon_graphql_errors_total{{code=\"{}\"}} {n}", escape(code));
        }

        header(
            w,
            "ostrakon_batches_committed_total",
            "counter",
            "Batches committed since the server started.",
        );
        let _ = writeln!(w, "ostrakon_batches_committed_total {}", self.batches.load(Ordering::Relaxed));
        header(w, "ostrakon_events_committed_total", "counter", "Events committed since the server started.");
        let _ = writeln!(w, "ostrakon_events_committed_total {}", self.events.load(Ordering::Relaxed));

        header(w, "ostrakon_websocket_connections", "gauge", "Open subscription WebSocket connections.");
        let _ = writeln!(w, "ostrakon_websocket_connections {}", self.websockets.load(Ordering::Relaxed));
        header(
            w,
            "ostrakon_graphql_requests_running",
            "gauge",
            "GraphQL requests whose work is running, including any whose client left or whose deadline passed and that have not reached their next check yet.",
        );
        let _ = writeln!(w, "ostrakon_graphql_requests_running {}", self.running.load(Ordering::Relaxed));

        let namespaces = store.namespaces();
        let gauge = |w: &mut String, name: &str, help: &str, value: &dyn Fn(&Namespace) -> Option<u64>| {
            header(w, name, "gauge", help);
            for ns in &namespaces {
                if let Some(v) = value(ns) {
                    let _ = writeln!(w, "{name}{{namespace=\"{}\"}} {v}", escape(ns.as_str()));
                }
            }
        };
        gauge(w, "ostrakon_log_bytes", "Size of each namespace's log in bytes.", &|ns| {
            store.log_size(ns).ok()
        });
        gauge(w, "ostrakon_log_batches", "Batches in each namespace's log.", &|ns| {
            store.counts(ns).ok().map(|c| c.batches)
        });
        gauge(
            w,
            "ostrakon_checkpoint_batch",
            "The last batch of the checkpoint each open namespace was loaded from or wrote (0: none).",
            &|ns| store.checkpoint_seq(ns).map(|s| s.0),
        );
        let lags = store.lag();
        header(
            w,
            "ostrakon_log_applied_batch",
            "gauge",
            "The last batch each open namespace has applied on this node.",
        );
        for lag in &lags {
            let ns = escape(lag.namespace.as_str());
            let _ = writeln!(w, "ostrakon_log_applied_batch{{namespace=\"{ns}\"}} {}", lag.applied.0);
        }
        header(
            w,
            "ostrakon_log_lag_batches",
            "gauge",
            "Batches of each open namespace's log stored (in a cluster: heard appended to its stream, by any node) and not applied on this node yet.",
        );
        for lag in &lags {
            let ns = escape(lag.namespace.as_str());
            let _ = writeln!(w, "ostrakon_log_lag_batches{{namespace=\"{ns}\"}} {}", lag.batches());
        }
        header(
            w,
            "ostrakon_log_lag_seconds",
            "gauge",
            "How long the oldest batch of each open namespace's log stored and not applied on this node has waited (0: none).",
        );
        for lag in &lags {
            let ns = escape(lag.namespace.as_str());
            let _ = writeln!(
                w,
                "ostrakon_log_lag_seconds{{namespace=\"{ns}\"}} {:.3}",
                lag.behind_for.as_secs_f64()
            );
        }
        let streams = store.stream_bytes();
        if !streams.is_empty() {
            header(
                w,
                "ostrakon_log_stream_bytes",
                "gauge",
                "Bytes each stream of the cluster holds (as JetStream counts them).",
            );
            for (stream, bytes) in &streams {
                let _ = writeln!(w, "ostrakon_log_stream_bytes{{stream=\"{}\"}} {bytes}", escape(stream));
            }
        }
        header(
            w,
            "ostrakon_log_reachable",
            "gauge",
            "1 when the log's storage (a cluster's JetStream) can be reached.",
        );
        let _ = writeln!(w, "ostrakon_log_reachable {}", u8::from(store.log_health().is_ok()));
        gauge(
            w,
            "ostrakon_search_indexed_batch",
            "The batch up to which each open namespace is searchable.",
            &|ns| store.search_batches(ns).map(|(indexed, _)| indexed.0),
        );
        gauge(
            w,
            "ostrakon_search_lag_batches",
            "Batches each open namespace holds that its search indexes do not yet (searches wait for them).",
            &|ns| store.search_progress(ns).map(|p| p.latest.0.saturating_sub(p.indexed.0)),
        );
        gauge(
            w,
            "ostrakon_search_texts_to_embed",
            "Texts the indexer has still to embed in its current run over each open namespace.",
            &|ns| store.search_progress(ns).map(|p| p.to_embed.saturating_sub(p.embedded)),
        );
        gauge(
            w,
            "ostrakon_search_vectors_saved_batch",
            "The last batch of the search vectors each open namespace saved on disk or loaded from it (0: none).",
            &|ns| store.search_batches(ns).map(|(_, saved)| saved.0),
        );
        gauge(
            w,
            "ostrakon_state_bytes",
            "About how many bytes of memory each open namespace's state holds, estimated from its structures (search indexes not included).",
            &|ns| store.state_bytes(ns),
        );
        header(
            w,
            "ostrakon_log_truncated_bytes",
            "gauge",
            "Bytes recovery cut off each namespace's log when the store opened (a torn tail: damage with no whole frame after it, taken for a write a crash interrupted).",
        );
        let truncations = store.truncations();
        for (ns, cut) in &truncations {
            let _ = writeln!(
                w,
                "ostrakon_log_truncated_bytes{{namespace=\"{}\"}} {}",
                escape(ns.as_str()),
                cut.bytes
            );
        }
        header(
            w,
            "ostrakon_log_truncated_batches",
            "gauge",
            "Frames with a readable header in the torn tail cut off each namespace's log when the store opened.",
        );
        for (ns, cut) in &truncations {
            let _ = writeln!(
                w,
                "ostrakon_log_truncated_batches{{namespace=\"{}\"}} {}",
                escape(ns.as_str()),
                cut.batches
            );
        }
        header(
            w,
            "ostrakon_namespace_damaged",
            "gauge",
            "1 for each namespace refused because its log cannot be opened (see the server log for why).",
        );
        for (ns, _) in store.damaged() {
            let _ = writeln!(w, "ostrakon_namespace_damaged{{namespace=\"{}\"}} 1", escape(ns.as_str()));
        }
        out
    }
}

fn header(w: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(w, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// Escapes a label value (backslash, double quote, newline), as the format requires.
fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}
