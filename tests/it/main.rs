//! The workspace's integration tests, in one binary so that the dependencies are linked
//! once rather than once per file. Each module is one area; `cargo test --test it
//! <module>::` runs one of them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

mod analytics;
mod architecture;
mod backup;
mod browser;
mod checkpoint;
mod cli;
mod cluster;
mod concurrency;
mod container;
mod docs;
mod durability;
mod e2e;
mod embedding;
mod erase;
mod extraction;
mod formats;
mod fuzz;
mod golden;
mod hardening;
mod history;
mod intentions;
mod mcp;
mod memory;
mod outdated;
mod persisted;
mod plan;
mod rdf;
mod readme;
mod recall;
mod recovery;
mod sdl;
mod search;
mod server;
mod sparql_fuzz;
mod sparql_limits;
mod statements;
mod subscription;
mod tiers;
mod topics;
mod yago;
