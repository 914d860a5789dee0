//! The connection every namespace's log shares: the runtime, the NATS client and its
//! JetStream context, and the settings.

use std::time::Duration;

use async_nats::jetstream;
use mnemo_log::LogError;

use crate::bridge::Bridge;
use crate::config::{ClusterConfig, MAX_SHARDS};
use crate::reading::unavailable;

/// What every namespace's log shares: the runtime, the connection and the settings.
pub(crate) struct Link {
    pub(crate) bridge: Bridge,
    pub(crate) client: async_nats::Client,
    pub(crate) context: jetstream::Context,
    pub(crate) config: ClusterConfig,
    /// This connection's unique name (a NUID), in every message id it publishes.
    pub(crate) node: String,
}

pub(crate) fn connect_link(config: &ClusterConfig) -> Result<Link, LogError> {
    if config.shards == 0 || config.shards > MAX_SHARDS {
        return Err(unavailable("cluster settings", format!("shards must be 1..={MAX_SHARDS}")));
    }
    let bridge = Bridge::new()?;
    let (urls, creds) = (config.urls.clone(), config.credentials.clone());
    let client = bridge.run(async move {
        let mut options = async_nats::ConnectOptions::new()
            .name("mnemo")
            .connection_timeout(Duration::from_secs(5))
            .max_reconnects(None)
            // Back to another server soon after one is lost: a write is waiting.
            .reconnect_delay_callback(|attempts| Duration::from_millis((attempts as u64 * 100).min(1_000)));
        if let Some(path) = creds {
            options =
                options.credentials_file(path).await.map_err(|e| unavailable("the credentials file", e))?;
        }
        let client = options.connect(urls).await.map_err(|e| unavailable("connecting to NATS", e))?;
        // Made on the runtime: the context starts a task of its own.
        let mut context = jetstream::new(client.clone());
        // An acknowledgement takes milliseconds; one that does not come within a second
        // went to a server that is gone: publish again (the message id lands it once).
        context.set_timeout(Duration::from_secs(1));
        Ok::<_, LogError>((client, context))
    })??;
    let (client, context) = client;
    let mut config = config.clone();
    // No group larger than the servers take (their `max_payload`, 1 MiB unless raised).
    let server_max = client.server_info().max_payload;
    if server_max > 0 {
        config.max_message = config.max_message.min(server_max);
    }
    let node = client.new_inbox().trim_start_matches("_INBOX.").to_owned();
    Ok(Link { bridge, client, context, config, node })
}
