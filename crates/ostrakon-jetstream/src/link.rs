//! The connection every namespace's log shares: the runtime, the NATS client and its
//! JetStream context, and the settings.

use std::time::Duration;

use async_nats::jetstream;
use ostrakon_log::LogError;

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
    /// What this node heard appended to the namespaces open here.
    pub(crate) tails: crate::tails::Tails,
}

/// How long an append waits for JetStream's acknowledgement before it is sent again.
const ACK_WITHIN: Duration = Duration::from_millis(500);

/// How long a request to JetStream's API waits for its answer before it is asked again.
const REQUEST_WITHIN: Duration = Duration::from_millis(750);

pub(crate) fn connect_link(config: &ClusterConfig) -> Result<Link, LogError> {
    if config.shards == 0 || config.shards > MAX_SHARDS {
        return Err(unavailable("cluster settings", format!("shards must be 1..={MAX_SHARDS}")));
    }
    let bridge = Bridge::new()?;
    let (urls, creds) = (config.urls.clone(), config.credentials.clone());
    // A server entering lame duck mode (a planned restart) hands its leaderships on, then
    // closes its clients one by one over a minute or more: leave it at once for another.
    let (lame_duck, mut lame_ducks) = tokio::sync::mpsc::unbounded_channel::<()>();
    let client = bridge.run(async move {
        let mut options = async_nats::ConnectOptions::new()
            .name("ostrakon")
            .connection_timeout(Duration::from_secs(5))
            // JetStream's API (reads, stream info) answers in milliseconds; an answer lost
            // as a server goes away or a stream changes leader is asked again by the
            // caller, instead of waited for the client's default ten seconds.
            .request_timeout(Some(REQUEST_WITHIN))
            .max_reconnects(None)
            .event_callback(move |event| {
                let lame_duck = lame_duck.clone();
                async move {
                    if matches!(event, async_nats::Event::LameDuckMode) {
                        let _ = lame_duck.send(());
                    }
                }
            })
            // Back to another server soon after one is lost: a write is waiting.
            .reconnect_delay_callback(|attempts| Duration::from_millis((attempts as u64 * 100).min(1_000)));
        if let Some(path) = creds {
            options =
                options.credentials_file(path).await.map_err(|e| unavailable("the credentials file", e))?;
        }
        let client = options.connect(urls).await.map_err(|e| unavailable("connecting to NATS", e))?;
        // Made on the runtime: the context starts a task of its own.
        let mut context = jetstream::new(client.clone());
        // An acknowledgement takes milliseconds; one that does not come within half a
        // second went to a server that is gone, or to a stream leader that handed its
        // leadership on and dropped its proposals: publish again (the message id lands it
        // once).
        context.set_timeout(ACK_WITHIN);
        let leaving = client.clone();
        tokio::spawn(async move {
            while lame_ducks.recv().await.is_some() {
                tracing::info!("the NATS server is entering lame duck mode: reconnecting to another");
                if let Err(e) = leaving.force_reconnect().await {
                    tracing::warn!(error = %e, "could not reconnect away from a server in lame duck mode");
                }
            }
        });
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
    Ok(Link { bridge, client, context, config, node, tails: crate::tails::Tails::default() })
}
