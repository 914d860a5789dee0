//! Planned maintenance without a gap: before a NATS server is restarted, every stream it
//! leads (the shard streams and the checkpoint store) is handed to the replica that is
//! most caught up.
//!
//! A server put in lame duck mode hands its leaderships on by itself, but to whichever
//! peer it meets first that answered lately, however far behind: a peer still catching up
//! drops the hand-over, the old leader no longer campaigns, and the stream has no leader
//! until an election timeout (4–9 s) — measured here, a stall of about 10 s in one restart
//! of three under load. Asked first with a preferred peer that is current and not lagging,
//! the hand-over lands, and the lame duck then has nothing left to hand on.

use std::time::{Duration, Instant};

use async_nats::jetstream::stream::Stream;
use ostrakon_log::LogError;

use crate::link::Link;
use crate::reading::unavailable;

/// Hands every stream of `streams` that `server` leads to its most caught-up replica, and
/// waits (up to `within`) until none is led by it. Returns what moved, one line each.
pub(crate) async fn hand_over(
    link: &Link,
    streams: Vec<Stream>,
    server: &str,
    within: Duration,
) -> Result<Vec<String>, LogError> {
    let started = Instant::now();
    let mut moved = Vec::new();
    for mut stream in streams {
        let name = stream.cached_info().config.name.clone();
        let mut asked = None;
        loop {
            let info = stream.info().await.map_err(|e| unavailable("asking a stream's leader", e))?.clone();
            let Some(cluster) = info.cluster else { break };
            if cluster.leader.as_deref() != Some(server) {
                if let (Some(to), Some(leader)) = (asked, cluster.leader) {
                    moved.push(format!("{name}: from {server} to {leader} (asked for {to})"));
                }
                break;
            }
            if started.elapsed() > within {
                return Err(unavailable(
                    "handing leadership over",
                    format!("{name} is still led by {server} after {} s", within.as_secs()),
                ));
            }
            // The replica that is current and the least behind.
            let preferred = cluster
                .replicas
                .iter()
                .filter(|r| r.current && !r.offline)
                .min_by_key(|r| r.lag.unwrap_or(u64::MAX))
                .map(|r| r.name.clone());
            if let Some(preferred) = preferred {
                let subject = format!("$JS.API.STREAM.LEADER.STEPDOWN.{name}");
                let body = serde_json::json!({ "placement": { "preferred": preferred } }).to_string();
                if let Err(e) = link.client.request(subject, body.into()).await {
                    tracing::debug!(stream = name, error = %e, "a leader stepdown was not answered; asking again");
                }
                asked = Some(preferred);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    Ok(moved)
}
