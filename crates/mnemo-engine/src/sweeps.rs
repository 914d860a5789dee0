//! Counts in force at one S read from kept sweeps: the stretches in force of a predicate
//! (or of all) at that S, sorted by their ends, kept per open namespace.

use std::sync::{Arc, Mutex, PoisonError};

use mnemo_core::{Endpoints, Seq};

/// Sweeps kept per namespace.
const SWEEPS: usize = 4;

/// The stretches in force of a predicate (or of all) at one S, sorted by their ends,
/// kept for the last few (S, predicate) asked: what is in force over valid time does not
/// depend on T, so every count at that S reads the same sweep. Derived from the index
/// like any read, and dropped with it; a dropped sweep is built again, equal.
#[derive(Debug, Default)]
pub(crate) struct Sweeps {
    kept: Mutex<Vec<Sweep>>,
}

/// One kept sweep: its S, its predicate (`None`: every predicate) and its stretches.
type Sweep = (Seq, Option<String>, Arc<Endpoints>);

impl Sweeps {
    /// The sweep of `predicate` at `seq`, kept or made by `build`.
    pub(crate) fn get(
        &self,
        seq: Seq,
        predicate: Option<&str>,
        build: impl FnOnce() -> Endpoints,
    ) -> Arc<Endpoints> {
        let lock = || self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, _, found)) = lock().iter().find(|(s, p, _)| *s == seq && p.as_deref() == predicate) {
            return Arc::clone(found);
        }
        let made = Arc::new(build());
        let mut kept = lock();
        if kept.len() >= SWEEPS {
            kept.remove(0);
        }
        kept.push((seq, predicate.map(str::to_owned), Arc::clone(&made)));
        made
    }

    /// Bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner).iter().map(|(_, _, e)| e.heap_bytes()).sum()
    }
}
