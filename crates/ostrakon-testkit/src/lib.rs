//! What Ostrakon's tests, benchmarks and fuzz examples share, one part per feature:
//! local `nats-server` clusters (`nats`), the engine's fixture (`engine`), building and
//! damaging logs (`log`), and the GraphQL and SPARQL fuzzers (`fuzz`); and, always, the
//! person every erasure test erases (`erasure`). A dev-dependency only: nothing here is
//! part of the product.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // failing the test is its job

#[cfg(feature = "engine")]
pub mod engine;
pub mod erasure;
#[cfg(feature = "fuzz")]
pub mod graphql_fuzz;
#[cfg(feature = "log")]
pub mod log_frames;
#[cfg(feature = "nats")]
pub mod nats;
#[cfg(feature = "fuzz")]
pub mod sparql_fuzz;
