//! How far each open namespace is behind its log: on a log other nodes append to, the
//! appends this node heard of (its backend hears every one as it is stored) and has not
//! applied yet, and since when. What `/metrics` reports and readiness is judged by.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ostrakon_core::{Namespace, Seq};

use crate::store::Store;
use crate::sync::read;

/// One open namespace's place against its log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lag {
    /// The namespace.
    pub namespace: Namespace,
    /// The last batch applied here.
    pub applied: Seq,
    /// The last batch its log holds as far as this node heard (at least `applied`).
    pub last: Seq,
    /// How long the oldest batch heard of and not applied has waited; zero when none.
    pub behind_for: Duration,
}

impl Lag {
    /// Batches heard of and not applied.
    pub fn batches(&self) -> u64 {
        self.last.0 - self.applied.0
    }
}

impl Store {
    /// Per open namespace, sorted: how far it is behind its log (never behind on a log
    /// with one writer).
    pub fn lag(&self) -> Vec<Lag> {
        let shards: Vec<_> = read(&self.shards).iter().map(|(ns, s)| (ns.clone(), Arc::clone(s))).collect();
        let now = Instant::now();
        let mut out: Vec<Lag> = shards
            .into_iter()
            .map(|(namespace, shard)| {
                let applied = read(&shard.index).last_seq();
                let behind = self.backend.behind(namespace.as_str(), applied.0);
                let last = Seq(behind.map_or(applied.0, |b| b.last.max(applied.0)));
                let behind_for = behind.map_or(Duration::ZERO, |b| now.saturating_duration_since(b.since));
                Lag { namespace, applied, last, behind_for }
            })
            .collect();
        out.sort_by(|a, b| a.namespace.cmp(&b.namespace));
        out
    }

    /// Each stream of the log's storage with the bytes it holds, as last measured (a
    /// cluster's shard streams and checkpoint store; none for a data directory).
    pub fn stream_bytes(&self) -> Vec<(String, u64)> {
        self.backend.stream_bytes()
    }
}
