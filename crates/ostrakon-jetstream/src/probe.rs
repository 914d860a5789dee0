//! Whether the cluster can take writes now, asked of JetStream itself (not only of the
//! connection): every shard stream and the checkpoint store answer their info within a
//! short bound and have a leader. A stream whose Raft group lost its quorum has none
//! (its followers say so once they notice, after an election timeout; until then they do
//! not answer, and the bound says so). The answer is kept for a second, so that probes
//! cost the cluster a handful of requests a second at most; it also gives each stream's
//! bytes for `/metrics`.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_nats::jetstream::stream::Stream;

use crate::link::Link;

/// How long an answer is kept.
const FRESH_FOR: Duration = Duration::from_secs(1);

/// How long one stream may take to answer its info.
const ANSWER_WITHIN: Duration = Duration::from_millis(1_500);

/// Each stream's name and bytes when all can take writes; else why not.
type Answer = Result<Vec<(String, u64)>, String>;

/// The last answer, and when it was asked.
#[derive(Default)]
pub(crate) struct Probe {
    last: Mutex<Option<(Instant, Answer)>>,
}

impl Probe {
    /// Each stream's bytes when all can take writes; else why not.
    pub(crate) fn check(&self, link: &Link, streams: &[Stream]) -> Answer {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((at, answer)) = last.as_ref()
            && at.elapsed() < FRESH_FOR
        {
            return answer.clone();
        }
        let answer = if link.client.connection_state() == async_nats::connection::State::Connected {
            let streams = streams.to_vec();
            link.bridge.run(ask(streams)).unwrap_or_else(|e| Err(e.to_string()))
        } else {
            Err("not connected to NATS".into())
        };
        *last = Some((Instant::now(), answer.clone()));
        answer
    }
}

async fn ask(streams: Vec<Stream>) -> Answer {
    let mut bytes = Vec::with_capacity(streams.len());
    for mut stream in streams {
        let name = stream.cached_info().config.name.clone();
        let info = match tokio::time::timeout(ANSWER_WITHIN, stream.info()).await {
            Ok(Ok(info)) => info.clone(),
            Ok(Err(e)) => {
                return Err(format!(
                    "stream {name} does not answer ({e}): JetStream lost its quorum, or its leader"
                ));
            }
            Err(_) => {
                return Err(format!(
                    "stream {name} gave no answer within {} ms (JetStream lost its quorum, or its leader)",
                    ANSWER_WITHIN.as_millis()
                ));
            }
        };
        if let Some(cluster) = &info.cluster
            && info.config.num_replicas > 1
            && cluster.leader.is_none()
        {
            return Err(format!("stream {name} has no leader: its servers lost their quorum"));
        }
        bytes.push((name, info.state.bytes));
    }
    Ok(bytes)
}
