//! How the extractor is set up: the endpoint and model, its key, and its bounds (time per
//! call, tries, calls per day). The server's configuration file fills it from its
//! `[extraction]` section; without one there is no extractor.

use std::time::Duration;

use crate::prompt::PROMPT_VERSION;

/// Default confidence of an extracted fact: below a client's (1 unless it says).
pub const DEFAULT_CONFIDENCE: f64 = 0.6;
/// Default calls a day (UTC), retries included.
pub const DEFAULT_DAILY_BUDGET: u64 = 1000;
/// Default time a call may take.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// Default tries of one episode before it is given up until the next start.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 4;
/// Default wait before the first retry; it doubles with each one, up to [`MAX_BACKOFF`].
pub const DEFAULT_BACKOFF: Duration = Duration::from_secs(2);
/// The longest wait between two tries.
pub const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// The extractor's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct ExtractionSettings {
    /// The endpoint's base URL (`https://api.openai.com/v1`, `http://127.0.0.1:8080/v1`):
    /// `/chat/completions` is added.
    pub url: String,
    /// The model asked.
    pub model: String,
    /// The bearer key, read from the environment variable the configuration names.
    pub api_key: Option<String>,
    /// Confidence given to what it finds, in (0, 1].
    pub confidence: f64,
    /// Calls a day (UTC), retries included; past it the queue waits for the next day.
    pub daily_budget: u64,
    /// Time one call may take.
    pub timeout: Duration,
    /// Tries of one episode before it is given up until the next start.
    pub max_attempts: u32,
    /// Wait before the first retry (doubling, at most [`MAX_BACKOFF`]).
    pub backoff: Duration,
    /// The namespaces read (empty: every namespace written to).
    pub namespaces: Vec<String>,
}

impl ExtractionSettings {
    /// Settings with the defaults for `url` and `model`.
    pub fn new(url: impl Into<String>, model: impl Into<String>) -> Self {
        ExtractionSettings {
            url: url.into(),
            model: model.into(),
            api_key: None,
            confidence: DEFAULT_CONFIDENCE,
            daily_budget: DEFAULT_DAILY_BUDGET,
            timeout: DEFAULT_TIMEOUT,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            backoff: DEFAULT_BACKOFF,
            namespaces: Vec::new(),
        }
    }

    /// The source its extractions are recorded under: the model and the prompt's version.
    pub fn source(&self) -> String {
        format!("{}@{PROMPT_VERSION}", self.model)
    }

    /// Whether it reads namespace `ns`.
    pub fn covers(&self, ns: &str) -> bool {
        self.namespaces.is_empty() || self.namespaces.iter().any(|n| n == ns)
    }

    /// The wait before try `attempt` (the second try is attempt 1).
    pub fn backoff_before(&self, attempt: u32) -> Duration {
        let factor = 1u32.checked_shl(attempt.saturating_sub(1)).unwrap_or(u32::MAX);
        self.backoff.saturating_mul(factor).min(MAX_BACKOFF)
    }
}
