//! The engine's own tests, in one binary: the bitemporal model, the store's API, the
//! model-based test against an independent resolver, memory dynamics, and the conflict
//! path through the log seam. They use the engine alone (no protocol crate).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use ostrakon_testkit::engine as common;

mod bitemporal;
mod cluster;
mod conflict;
mod engine_api;
mod erase;
mod lane;
mod model;
mod progress;
mod shared_vectors;
mod sweeps;
