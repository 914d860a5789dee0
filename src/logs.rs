//! The process's log: lines on stderr, as text or JSON, filtered by `OSTRAKON_LOG` (or
//! `RUST_LOG`), with every secret left out — the configured tokens and API key wherever
//! they appear, and anything shaped like a credential (a URL's user and password, a
//! bearer token, an `api_key=` value), whatever code wrote the line.

use std::io::{IsTerminal, Write};
use std::sync::{PoisonError, RwLock};

use clap::ValueEnum;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// The secrets the configuration holds, left out of every line from when they are known.
static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Adds secrets to leave out of the log.
pub(crate) fn keep_secret(secrets: impl IntoIterator<Item = String>) {
    SECRETS.write().unwrap_or_else(PoisonError::into_inner).extend(secrets);
}

pub(crate) fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_env("OSTRAKON_LOG")
        .or_else(|_| EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| EnvFilter::new("info"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(Redacting)
        .with_ansi(std::io::stderr().is_terminal());
    // A second command in one process (the Python package runs several) keeps the
    // first one's log.
    let _ = match format {
        LogFormat::Text => logs.try_init(),
        LogFormat::Json => logs.json().try_init(),
    };
}

/// Makes the writer of one event's line.
struct Redacting;

impl<'a> MakeWriter<'a> for Redacting {
    type Writer = Line;

    fn make_writer(&'a self) -> Line {
        Line(Vec::new())
    }
}

/// One event's line, gathered and written to stderr redacted when dropped.
struct Line(Vec<u8>);

impl Write for Line {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        let text = String::from_utf8_lossy(&self.0);
        let secrets = SECRETS.read().unwrap_or_else(PoisonError::into_inner);
        let known: Vec<&str> = secrets.iter().map(String::as_str).collect();
        let line = ostrakon_core::redact(&text, &known);
        // A log line that cannot be written has nowhere else to go.
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }
}
