//! The probes, as Kubernetes reads them: `/livez` says the process answers; `/readyz`
//! (and `/healthz`, its alias) says it can serve — its log's storage takes writes (on a
//! cluster: connected, every shard stream with a leader) and no open namespace has been
//! behind its log longer than the bound (`[cluster] max_lag_seconds`, 2 s by default) —
//! and answers 503 with the reason otherwise, and while the server stops.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use ostrakon_engine::Store;

use crate::cluster::DEFAULT_MAX_LAG;
use crate::state::AppState;

/// The process is alive and its runtime answers.
pub(crate) async fn livez() -> &'static str {
    "ok\n"
}

/// Why the node cannot serve now, if it cannot.
fn unready(store: &Store, max_lag: Duration) -> Option<String> {
    if let Err(why) = store.log_health() {
        return Some(format!("the log cannot be written: {why}"));
    }
    let worst = store.lag().into_iter().max_by_key(|lag| lag.behind_for)?;
    (worst.behind_for > max_lag).then(|| {
        format!(
            "namespace {} is {} batches behind its log, for {:.1} s (bound {:.1} s)",
            worst.namespace,
            worst.batches(),
            worst.behind_for.as_secs_f64(),
            max_lag.as_secs_f64()
        )
    })
}

/// `ok` when the node can serve, else 503 with why. With `?indexing`, a JSON answer that
/// adds how far the open namespaces' search indexes are, summed over them (`/metrics` has
/// them one by one). With `?extraction`, the extractor's queue and counters (`null` when
/// none is configured), its last error with no secret in it. The details are operational:
/// with tokens configured they need one granted `*`, as `/metrics` does (401/403 else);
/// the probe itself needs none.
pub(crate) async fn readyz(
    State(state): State<AppState>,
    uri: axum::http::Uri,
    headers: HeaderMap,
) -> Response {
    if state.inner.draining.load(std::sync::atomic::Ordering::SeqCst) {
        return (StatusCode::SERVICE_UNAVAILABLE, "unavailable: the server is stopping\n").into_response();
    }
    let max_lag = state.inner.config.cluster.as_ref().map_or(DEFAULT_MAX_LAG, |c| c.max_lag);
    // Off the async threads: on a cluster, the log's health is asked of JetStream.
    let store = Arc::clone(&state.inner.store);
    let why = tokio::task::spawn_blocking(move || unready(&store, max_lag))
        .await
        .unwrap_or_else(|e| Some(format!("the health check failed: {e}")));
    if let Some(why) = why {
        return (StatusCode::SERVICE_UNAVAILABLE, format!("unavailable: {why}\n")).into_response();
    }
    let asks = |name: &str| {
        uri.query().is_some_and(|q| {
            q.split('&').any(|p| p == name || p.strip_prefix(name).is_some_and(|r| r.starts_with('=')))
        })
    };
    let (indexing, extraction) = (asks("indexing"), asks("extraction"));
    if !indexing && !extraction {
        return "ok\n".into_response();
    }
    if let Err(refused) = state.operator(&headers, "the probe's details need a token granted \"*\"") {
        return refused.into_response();
    }
    let mut answer = serde_json::json!({ "status": "ok" });
    if extraction {
        answer["extraction"] =
            serde_json::to_value(state.inner.extractor.as_ref().map(|e| e.status().snapshot()))
                .unwrap_or_default();
    }
    if indexing {
        answer["indexing"] = indexing_progress(&state.inner.store);
    }
    axum::Json(answer).into_response()
}

/// How far the open namespaces' search indexes are, summed over them.
fn indexing_progress(store: &Store) -> serde_json::Value {
    let (mut open, mut behind, mut lag, mut to_embed, mut embedded) = (0u64, 0u64, 0u64, 0u64, 0u64);
    for ns in store.namespaces() {
        let Some(progress) = store.search_progress(&ns) else { continue };
        let batches = progress.latest.0.saturating_sub(progress.indexed.0);
        open += 1;
        behind += u64::from(batches > 0);
        lag = lag.saturating_add(batches);
        to_embed = to_embed.saturating_add(progress.to_embed.saturating_sub(progress.embedded));
        embedded = embedded.saturating_add(progress.embedded);
    }
    serde_json::json!({
        "openNamespaces": open,
        "namespacesBehind": behind,
        "lagBatches": lag,
        "textsToEmbed": to_embed,
        "textsEmbedded": embedded,
    })
}
