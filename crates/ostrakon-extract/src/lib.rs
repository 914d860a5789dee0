//! Optional extraction through a language model, off by default: for each recorded
//! episode, an OpenAI-compatible endpoint is asked (with a JSON schema) for the facts it
//! states; they are written with the episode as provenance, a confidence below a
//! client's, and the mark that the episode was read by this model and prompt version
//! (`Event::Extracted`), which makes the reading happen once per (episode, model, prompt
//! version) and names the source of every fact it wrote (`Fact.source`).
//!
//! - [`prompt`]: what is asked, and the answer's schema;
//! - [`answer`]: reading an answer within bounds, and the changes that write it;
//! - [`client`]: one bounded call, its failures sorted into retryable or not;
//! - [`worker`]: the background reader, its retries and daily budget;
//! - [`status`]: its counters, for `/metrics` and `/healthz`.
#![deny(missing_docs)]

pub mod answer;
pub mod client;
pub mod prompt;
pub mod settings;
pub mod status;
pub mod worker;

pub use settings::ExtractionSettings;
pub use status::{Status, StatusSnapshot};
pub use worker::{Extractor, Outcome, Pass};
