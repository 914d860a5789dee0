//! The `[cluster]` section of the configuration: where a node finds the NATS JetStream
//! cluster that keeps the logs (see the README's "Run as a cluster").
//!
//! ```toml
//! [cluster]
//! nats = ["nats://10.0.0.1:4222", "nats://10.0.0.2:4222", "nats://10.0.0.3:4222"]
//! credentials = "/etc/mnemo/node.creds"  # optional
//! shards = 16      # shard streams; fixed by `mnemo cluster init`, the same on every node
//! replicas = 3     # copies of each stream (3 survives the loss of one server)
//! ```

use std::path::PathBuf;

use serde::Deserialize;

/// Most shard streams.
pub const MAX_SHARDS: u32 = 1024;

/// Where the cluster is and how its streams are laid out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterSettings {
    /// NATS server URLs; any one is enough to join.
    pub nats: Vec<String>,
    /// A NATS credentials file, if the servers require one.
    pub credentials: Option<PathBuf>,
    /// Shard streams.
    pub shards: u32,
    /// Replicas of each stream.
    pub replicas: usize,
}

impl ClusterSettings {
    /// The settings for these servers, with the defaults for the rest.
    pub fn with_servers(nats: Vec<String>) -> Self {
        ClusterSettings { nats, credentials: None, shards: 16, replicas: 3 }
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
}

impl RawCluster {
    /// Checks the section: `Err((field, reason))` names what is wrong.
    pub(crate) fn check(self) -> Result<ClusterSettings, (String, String)> {
        let defaults = ClusterSettings::with_servers(Vec::new());
        if self.nats.is_empty() {
            return Err(("cluster.nats".into(), "give at least one server URL (nats://host:4222)".into()));
        }
        for (i, url) in self.nats.iter().enumerate() {
            let scheme_ok = ["nats://", "tls://", "ws://", "wss://"].iter().any(|p| url.starts_with(p));
            if !scheme_ok || url.contains(char::is_whitespace) {
                return Err((format!("cluster.nats[{i}]"), "must be a URL like nats://host:4222".into()));
            }
        }
        let shards = self.shards.unwrap_or(defaults.shards);
        if shards == 0 || shards > MAX_SHARDS {
            return Err(("cluster.shards".into(), format!("must be from 1 to {MAX_SHARDS}")));
        }
        let replicas = self.replicas.unwrap_or(defaults.replicas);
        if !(1..=5).contains(&replicas) {
            return Err(("cluster.replicas".into(), "must be from 1 to 5 (JetStream's limit)".into()));
        }
        Ok(ClusterSettings { nats: self.nats, credentials: self.credentials, shards, replicas })
    }
}
