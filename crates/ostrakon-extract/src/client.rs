//! One call to an OpenAI-compatible `chat/completions` endpoint, bounded in time and in
//! the size of what it reads, with its failures sorted into those worth another try
//! (timeouts, connection errors, 429, 5xx, an unreadable answer) and those that are not.

use std::time::Duration;

use ostrakon_core::Episode;

use crate::answer::{Completion, MAX_ANSWER_BYTES, read_completion};
use crate::prompt::request_body;
use crate::settings::ExtractionSettings;

/// Why a call gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// No answer within the timeout.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The endpoint could not be reached, or the connection broke.
    #[error("the endpoint could not be reached: {0}")]
    Transport(String),
    /// The endpoint answered with an HTTP error.
    #[error("the endpoint answered HTTP {status}: {body}")]
    Status {
        /// The status.
        status: u16,
        /// The start of its body.
        body: String,
    },
    /// The answer was larger than [`MAX_ANSWER_BYTES`].
    #[error("the answer is larger than {MAX_ANSWER_BYTES} bytes")]
    TooLarge,
    /// The answer could not be read.
    #[error(transparent)]
    Malformed(#[from] crate::answer::Malformed),
}

impl CallError {
    /// Whether another try may succeed.
    pub fn retryable(&self) -> bool {
        match self {
            CallError::Timeout(_) | CallError::Transport(_) | CallError::Malformed(_) => true,
            CallError::Status { status, .. } => *status == 408 || *status == 429 || *status >= 500,
            CallError::TooLarge => false,
        }
    }
}

/// A client of one endpoint and model.
#[derive(Clone, Debug)]
pub struct Client {
    http: reqwest::Client,
    url: String,
    key: Option<String>,
    model: String,
    timeout: Duration,
}

impl Client {
    /// A client for `settings` (TLS through rustls with ring).
    pub fn new(settings: &ExtractionSettings) -> Result<Client, String> {
        // reqwest is built without a crypto provider of its own: ring, which the cluster's
        // client links already (aws-lc-rs, rustls' post-quantum default, would add a C
        // build to every build). Installing it twice is harmless (the first one stays).
        #[allow(deprecated)]
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(settings.timeout)
            .connect_timeout(settings.timeout)
            .build()
            .map_err(|e| format!("cannot build the extraction client: {e}"))?;
        Ok(Client {
            http,
            url: format!("{}/chat/completions", settings.url.trim_end_matches('/')),
            key: settings.api_key.clone(),
            model: settings.model.clone(),
            timeout: settings.timeout,
        })
    }

    /// Asks for the facts of `episode`.
    pub async fn complete(&self, episode: &Episode) -> Result<Completion, CallError> {
        let mut request = self.http.post(&self.url).header("content-type", "application/json");
        if let Some(key) = &self.key {
            request = request.bearer_auth(key);
        }
        let body = request_body(&self.model, episode).to_string();
        let call = async {
            let mut response = request.body(body).send().await.map_err(|e| self.transport(e))?;
            let status = response.status().as_u16();
            let mut bytes = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(|e| self.transport(e))? {
                if bytes.len() + chunk.len() > MAX_ANSWER_BYTES {
                    return Err(CallError::TooLarge);
                }
                bytes.extend_from_slice(&chunk);
            }
            if !(200..300).contains(&status) {
                let text = String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).into_owned();
                return Err(CallError::Status { status, body: text });
            }
            Ok(read_completion(&bytes)?)
        };
        // The client's own timeout covers each step; this one covers the whole call.
        tokio::time::timeout(self.timeout, call).await.map_err(|_| CallError::Timeout(self.timeout))?
    }

    fn transport(&self, e: reqwest::Error) -> CallError {
        if e.is_timeout() { CallError::Timeout(self.timeout) } else { CallError::Transport(e.to_string()) }
    }
}
