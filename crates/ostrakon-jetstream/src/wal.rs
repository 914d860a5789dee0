//! Making a stream's Raft log forget what was securely deleted from the stream.
//!
//! A secure delete overwrites a message in each server's stream files at once, but every
//! replica's Raft log (`jetstream/$SYS/_js_/<group>/msgs/`) still holds the append that
//! carried it until that replica compacts the log. A replica compacts on its own timer
//! (two minutes plus up to a minute of jitter: measured here, the copies were gone from
//! the three servers 131 to 180 s after the delete) or once more than 8 MiB were appended
//! to the group since its last snapshot (nats-server's `compactSizeMin`). Nothing a client
//! can ask triggers a snapshot, and a leader stepdown compacts the new leader's log only.
//! So after an erasure the stream is given more than that of filler — random bytes: the
//! servers compress what they append, and 512 KiB of zeros takes 81 bytes in the Raft
//! log — and the filler is then purged. Measured on three servers: 7.5 MiB of filler left
//! the copies, 8.0 MiB removed them from every replica within a second.
//!
//! Erasures coming close together share one filler: a stream is compacted once, a moment
//! ([`SETTLE`]) after the last erasure asked for it. A node that stops before it
//! compacts leaves the copies to the servers' own timers (three minutes at most, as
//! measured).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::stream::Stream;
use ostrakon_log::LogError;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use crate::link::Link;
use crate::reading::unavailable;

/// Tries at compacting one stream.
const ATTEMPTS: u32 = 5;

/// How long after the last request a stream is compacted (requests meanwhile share it).
pub(crate) const SETTLE: Duration = Duration::from_secs(1);

/// Compacts streams' Raft logs in the background, each once for requests that come
/// together.
pub(crate) struct Compactor {
    asks: UnboundedSender<(Stream, String)>,
}

impl Compactor {
    /// Starts the compactor on the link's runtime.
    pub(crate) fn start(link: &Arc<Link>) -> Self {
        let (asks, asked) = unbounded_channel();
        link.bridge.handle().spawn(run(Arc::clone(link), asked));
        Compactor { asks }
    }

    /// Asks for `stream` to be compacted, with filler on `subject`.
    pub(crate) fn ask(&self, stream: &Stream, subject: String) {
        let _ = self.asks.send((stream.clone(), subject));
    }
}

async fn run(link: Arc<Link>, mut asked: UnboundedReceiver<(Stream, String)>) {
    while let Some(first) = asked.recv().await {
        let mut due = BTreeMap::new();
        due.insert(first.1.clone(), first.0);
        // Until requests stop coming for a moment.
        while let Ok(Some((stream, subject))) = tokio::time::timeout(SETTLE, asked.recv()).await {
            due.insert(subject, stream);
        }
        for (subject, stream) in due {
            // A stream between leaders does not take the filler for a moment: a few tries.
            for attempt in 1..=ATTEMPTS {
                match compact(&link, &stream, &subject).await {
                    Ok(()) => {
                        tracing::info!(subject, "Raft log compacted past an erasure");
                        break;
                    }
                    Err(e) if attempt < ATTEMPTS => {
                        tracing::debug!(subject, error = %e, "compacting a stream's Raft log; trying again");
                        tokio::time::sleep(SETTLE).await;
                    }
                    Err(e) => {
                        tracing::warn!(subject, error = %e, "could not compact a stream's Raft log; its servers will in at most three minutes")
                    }
                }
            }
        }
    }
}

/// Filler appended: past nats-server's 8 MiB, with a margin.
const FILLER_BYTES: usize = 10 << 20;

/// One filler message (well under any server's `max_payload`).
const FILLER_MESSAGE: usize = 512 << 10;

/// Bytes no compressor shrinks (xorshift: the filler needs no better randomness).
fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.truncate(len);
    out
}

/// Appends filler to `stream` on `subject` (a subject of the stream nothing else reads)
/// until every replica's Raft log has compacted past what came before, then purges it.
pub(crate) async fn compact(link: &Link, stream: &Stream, subject: &str) -> Result<(), LogError> {
    let seed = ostrakon_log::system_clock()().unsigned_abs();
    let mut acks = Vec::new();
    for i in 0..FILLER_BYTES.div_ceil(FILLER_MESSAGE) {
        let payload = noise(FILLER_MESSAGE, seed.wrapping_add(i as u64));
        let ack = link
            .context
            .publish(subject.to_owned(), payload.into())
            .await
            .map_err(|e| unavailable("compacting the stream's Raft log", e))?;
        acks.push(ack);
    }
    for ack in acks {
        ack.await.map_err(|e| unavailable("compacting the stream's Raft log", e))?;
    }
    let stream = stream.clone();
    stream.purge().filter(subject).await.map_err(|e| unavailable("purging filler", e))?;
    Ok(())
}
