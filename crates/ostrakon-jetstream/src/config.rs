//! How a node reaches the cluster: servers, credentials, shard count and replicas.

use std::path::PathBuf;
use std::time::Duration;

/// The `[cluster]` settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterConfig {
    /// NATS server URLs (`nats://127.0.0.1:4222`); any one of them is enough to join.
    pub urls: Vec<String>,
    /// A NATS credentials file (`.creds`), if the servers require one.
    pub credentials: Option<PathBuf>,
    /// How many shard streams hold the logs: used when the cluster is initialised, and
    /// read back from the streams by every node that connects.
    pub shards: u32,
    /// Replicas of each stream and of the checkpoint store (3 survives one server's loss).
    pub replicas: usize,
    /// How long one write may take in all, retries included (a batch another node's
    /// refused is prepared again, an unanswered publish is sent again), before it answers
    /// `WRITE_CONFLICT` or `UNAVAILABLE`: past a stream leader's loss, which nats-server's
    /// followers wait 4–9 s (randomised) to notice before they elect another.
    pub write_timeout: Duration,
    /// Largest message the servers accept (their `max_payload`); larger batches are refused.
    pub max_message: usize,
    /// The shard count this node's configuration names, if it does: connecting to a
    /// cluster laid out with another is refused, naming both.
    pub expect_shards: Option<u32>,
    /// The replicas this node's configuration names, if it does: connecting to a cluster
    /// whose streams have fewer is refused, naming both.
    pub expect_replicas: Option<usize>,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            urls: vec!["nats://127.0.0.1:4222".into()],
            credentials: None,
            shards: 16,
            replicas: 3,
            write_timeout: Duration::from_secs(12),
            max_message: 8 << 20,
            expect_shards: None,
            expect_replicas: None,
        }
    }
}

/// Largest number of shard streams (each is a Raft group on every server).
pub(crate) const MAX_SHARDS: u32 = 1024;
