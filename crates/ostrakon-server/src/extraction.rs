//! The `[extraction]` section of the configuration: optional extraction of facts from
//! episodes by an OpenAI-compatible model (see the `ostrakon-extract` crate), and how its
//! queue shows in `/healthz?extraction` and `/metrics`.
//!
//! ```toml
//! [extraction]
//! url = "https://api.openai.com/v1"   # any OpenAI-compatible endpoint
//! model = "gpt-4o-mini"
//! api_key_env = "OPENAI_API_KEY"      # the variable the key is read from (optional)
//! confidence = 0.6          # of what it finds, below a client's 1
//! daily_budget = 1000       # calls a day (UTC), retries included
//! timeout_seconds = 60      # per call
//! max_attempts = 4          # tries of one episode, the wait doubling from backoff_ms
//! backoff_ms = 2000
//! namespaces = []           # the namespaces read (empty: every one written to)
//! ```

use std::time::Duration;

use ostrakon_extract::ExtractionSettings;
use serde::Deserialize;

/// The section as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawExtraction {
    url: String,
    model: String,
    api_key_env: Option<String>,
    confidence: Option<f64>,
    daily_budget: Option<u64>,
    timeout_seconds: Option<u64>,
    max_attempts: Option<u32>,
    backoff_ms: Option<u64>,
    #[serde(default)]
    namespaces: Vec<String>,
}

impl RawExtraction {
    /// Checks the section and reads the key from the environment: `Err((field, reason))`
    /// names what is wrong.
    pub(crate) fn check(self) -> Result<ExtractionSettings, (String, String)> {
        let field = |name: &str| format!("extraction.{name}");
        let url = self.url.trim().to_owned();
        let scheme_ok = url.starts_with("http://") || url.starts_with("https://");
        if !scheme_ok || url.contains(char::is_whitespace) {
            return Err((
                field("url"),
                "must be an http:// or https:// URL (the base, before /chat/completions)".into(),
            ));
        }
        if self.model.trim().is_empty() || self.model.len() > 200 {
            return Err((field("model"), "must be a model's name".into()));
        }
        let mut settings = ExtractionSettings::new(url, self.model.trim());
        if let Some(var) = self.api_key_env {
            let key = std::env::var(&var)
                .map_err(|_| (field("api_key_env"), format!("the environment variable {var} is not set")))?;
            settings.api_key = Some(key);
        }
        if let Some(c) = self.confidence {
            if !(c > 0.0 && c <= 1.0) {
                return Err((field("confidence"), "must be in (0, 1]".into()));
            }
            settings.confidence = c;
        }
        let bounded = |name: &str, v: Option<u64>, lo: u64, hi: u64| match v {
            Some(v) if !(lo..=hi).contains(&v) => Err((field(name), format!("must be from {lo} to {hi}"))),
            other => Ok(other),
        };
        if let Some(b) = bounded("daily_budget", self.daily_budget, 1, 10_000_000)? {
            settings.daily_budget = b;
        }
        if let Some(t) = bounded("timeout_seconds", self.timeout_seconds, 1, 600)? {
            settings.timeout = Duration::from_secs(t);
        }
        if let Some(n) = bounded("max_attempts", self.max_attempts.map(u64::from), 1, 20)? {
            settings.max_attempts = n as u32;
        }
        if let Some(ms) = bounded("backoff_ms", self.backoff_ms, 1, 3_600_000)? {
            settings.backoff = Duration::from_millis(ms);
        }
        for (i, ns) in self.namespaces.iter().enumerate() {
            ostrakon_engine::core::Namespace::new("namespace", ns)
                .map_err(|e| (format!("extraction.namespaces[{i}]"), e.to_string()))?;
        }
        settings.namespaces = self.namespaces;
        Ok(settings)
    }
}

/// The extractor's counters as Prometheus text.
pub(crate) fn render_metrics(out: &mut String, status: &ostrakon_extract::StatusSnapshot) {
    use std::fmt::Write;
    let rows: [(&str, &str, &str, u64); 9] = [
        ("ostrakon_extraction_queue", "gauge", "Episodes waiting to be read by the extractor.", status.queue),
        (
            "ostrakon_extraction_calls_total",
            "counter",
            "Calls to the extraction endpoint, retries included.",
            status.calls,
        ),
        ("ostrakon_extraction_retries_total", "counter", "Calls that were retries.", status.retries),
        (
            "ostrakon_extraction_episodes_read_total",
            "counter",
            "Episodes read (their extraction recorded).",
            status.episodes_read,
        ),
        ("ostrakon_extraction_facts_total", "counter", "Facts the extractor wrote.", status.facts_written),
        (
            "ostrakon_extraction_refused_total",
            "counter",
            "Episodes the model declined to read.",
            status.refused,
        ),
        (
            "ostrakon_extraction_failed_total",
            "counter",
            "Episodes given up after their tries.",
            status.failed,
        ),
        ("ostrakon_extraction_calls_today", "gauge", "Calls made today (UTC).", status.calls_today),
        ("ostrakon_extraction_daily_budget", "gauge", "Calls allowed a day.", status.daily_budget),
    ];
    for (name, kind, help, value) in rows {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}");
    }
}
