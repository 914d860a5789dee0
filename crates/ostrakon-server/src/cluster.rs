//! The `[cluster]` section of the configuration: where a node finds the NATS JetStream
//! cluster that keeps the logs (see the README's "Run as a cluster").
//!
//! ```toml
//! [cluster]
//! nats = ["nats://10.0.0.1:4222", "nats://10.0.0.2:4222", "nats://10.0.0.3:4222"]
//! credentials = "/etc/ostrakon/node.creds"  # optional
//! shards = 16      # optional: the cluster's shard count, fixed by `ostrakon cluster init`;
//!                  # a node that names another refuses to start
//! replicas = 3     # optional: copies of each stream (3 survives the loss of one server);
//!                  # a node refuses to start on a cluster with fewer
//! max_lag_seconds = 2  # /readyz answers 503 while an open namespace stays behind longer
//! ```

use std::path::PathBuf;

use serde::Deserialize;

/// How long an open namespace may stay behind its log before `/readyz` says the node
/// cannot serve, unless `max_lag_seconds` says otherwise.
pub const DEFAULT_MAX_LAG: std::time::Duration = std::time::Duration::from_secs(2);

/// Most shard streams.
pub(crate) const MAX_SHARDS: u32 = 1024;

/// Where the cluster is and how its streams are laid out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterSettings {
    /// NATS server URLs; any one is enough to join.
    pub nats: Vec<String>,
    /// A NATS credentials file, if the servers require one.
    pub credentials: Option<PathBuf>,
    /// Shard streams, if the configuration names them (else the cluster's are taken).
    pub shards: Option<u32>,
    /// Replicas of each stream, if the configuration names them.
    pub replicas: Option<usize>,
    /// How long an open namespace may stay behind its log before `/readyz` says the node
    /// cannot serve.
    pub max_lag: std::time::Duration,
}

impl ClusterSettings {
    /// The settings for these servers, with the defaults for the rest.
    pub fn with_servers(nats: Vec<String>) -> Self {
        ClusterSettings { nats, credentials: None, shards: None, replicas: None, max_lag: DEFAULT_MAX_LAG }
    }
}

/// The section as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCluster {
    nats: Vec<String>,
    credentials: Option<PathBuf>,
    shards: Option<u32>,
    replicas: Option<usize>,
    max_lag_seconds: Option<f64>,
}

impl RawCluster {
    /// Checks the section: `Err((field, reason))` names what is wrong.
    pub(crate) fn check(self) -> Result<ClusterSettings, (String, String)> {
        if self.nats.is_empty() {
            return Err(("cluster.nats".into(), "give at least one server URL (nats://host:4222)".into()));
        }
        for (i, url) in self.nats.iter().enumerate() {
            let scheme_ok = ["nats://", "tls://", "ws://", "wss://"].iter().any(|p| url.starts_with(p));
            if !scheme_ok || url.contains(char::is_whitespace) {
                return Err((format!("cluster.nats[{i}]"), "must be a URL like nats://host:4222".into()));
            }
        }
        if let Some(shards) = self.shards
            && (shards == 0 || shards > MAX_SHARDS)
        {
            return Err(("cluster.shards".into(), format!("must be from 1 to {MAX_SHARDS}")));
        }
        if let Some(replicas) = self.replicas
            && !(1..=5).contains(&replicas)
        {
            return Err(("cluster.replicas".into(), "must be from 1 to 5 (JetStream's limit)".into()));
        }
        let max_lag = match self.max_lag_seconds {
            None => DEFAULT_MAX_LAG,
            Some(s) if s.is_finite() && (0.05..=3_600.0).contains(&s) => {
                std::time::Duration::from_secs_f64(s)
            }
            Some(_) => return Err(("cluster.max_lag_seconds".into(), "must be from 0.05 to 3600".into())),
        };
        Ok(ClusterSettings {
            nats: self.nats,
            credentials: self.credentials,
            shards: self.shards,
            replicas: self.replicas,
            max_lag,
        })
    }
}
