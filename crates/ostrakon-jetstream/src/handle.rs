//! One namespace's log on its shard stream: appends in groups expecting the stream
//! sequence of the last record this node knows ([`GroupCommit`], shared with every log
//! other writers append to), reads that follow what other nodes append.
//!
//! A group is one message: its batches' frames back to back, published with
//! `Nats-Expected-Last-Subject-Sequence` set to the stream sequence of the last record
//! known. On the ack every batch of the group is durable (JetStream acks after its quorum
//! stored it; the servers run with `sync_interval: always`, so stored means fsynced). When
//! JetStream refuses it — another node appended first — the group and everything queued
//! after it is refused, and the writer catches up and prepares again.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_nats::HeaderMap;
use async_nats::jetstream::message::PublishMessage;
use async_nats::jetstream::stream::Stream;
use ostrakon_log::{
    After, Clock, Committed, GroupCommit, Known, LogError, Publish, Record, RecordLog, Refusal, Ticket,
};

use crate::answers::{Answer, classify, code};
use crate::link::Link;
use crate::reading::{self, Message};
use crate::rewrite;

/// The header naming the last batch a message holds: what a node hearing of the append
/// (headers only) learns of how far the log is, without reading it.
/// Written into the streams since the project was called Mnemo: a format identifier, kept
/// so that a cluster laid out before the rename still opens.
pub(crate) const LAST_BATCH: &str = "Mnemo-Last-Batch";

/// Reads of a log that finds it broken before it is called damaged (over about 3 s).
const DAMAGE_TRIES: u32 = 6;

/// The pause before an append is sent again after an answer that says nothing (none in
/// time, no responders while a stream elects its leader, a connection lost).
const RETRY_PAUSE: Duration = Duration::from_millis(50);

/// Whether `records` are batches `after + 1`, `after + 2`, … with none missing.
fn follows_on(records: &[Record], after: u64) -> bool {
    records.iter().enumerate().all(|(i, r)| r.seq == after + 1 + i as u64)
}

/// A namespace's log on a shard stream.
pub(crate) struct StreamLog {
    link: Arc<Link>,
    stream: Stream,
    name: String,
    subject: String,
    clock: Clock,
    group: GroupCommit,
}

impl StreamLog {
    /// The log of `name` on `stream`; it knows nothing of the log until it reads it.
    pub(crate) fn new(link: Arc<Link>, stream: Stream, name: &str, subject: String, clock: Clock) -> Self {
        let group = GroupCommit::new(name, link.config.max_message);
        link.tails.track(name);
        StreamLog { link, stream, name: name.to_owned(), subject, clock, group }
    }

    /// Records after batch `after` up to the end of the log, checked to follow on from
    /// each other and from what was known.
    pub(crate) fn read_records(&self, after: u64) -> Result<Vec<Record>, LogError> {
        // A read that finds a batch missing is made again before the log is called
        // damaged: a server that just took a stream's leadership over, or a rewrite in
        // progress, may answer a read with a message missing for a moment; damage stays.
        let mut tries = 0;
        loop {
            tries += 1;
            match self.read_once(after) {
                Err(LogError::Damaged { after: at, reason }) if tries < DAMAGE_TRIES => {
                    tracing::warn!(log = %self.name, at, reason, tries, "a read found the log broken; reading again");
                    std::thread::sleep(Duration::from_millis(50 << tries.min(5)));
                }
                other => return other,
            }
        }
    }

    fn read_once(&self, after: u64) -> Result<Vec<Record>, LogError> {
        let known = self.group.known();
        let (stream, subject) = (self.stream.clone(), self.subject.clone());
        let messages = self.link.bridge.run(async move {
            // Only a drop removes a namespace's last message (it deletes from the end).
            let Some(last) = reading::last_on(&stream, &subject).await? else {
                return if known.position > 0 { Err(LogError::Dropped) } else { Ok(Vec::new()) };
            };
            if last.stream_seq < known.position {
                return Err(LogError::Dropped);
            }
            if last.stream_seq == known.position && after >= known.seq {
                return Ok(Vec::new());
            }
            let continuing = after >= known.seq && known.position > 0;
            let from = if continuing {
                known.position + 1
            } else {
                reading::locate(&stream, &subject, after, last.stream_seq).await?
            };
            let messages = reading::read_range(&stream, &subject, from, last.stream_seq).await?;
            let first = messages.first().and_then(|m| m.records.first()).map(|r| r.seq);
            if continuing && first.is_some_and(|f| f <= known.seq) {
                // Dropped and begun again since this node last read it.
                return Err(LogError::Dropped);
            }
            Ok(messages)
        })??;
        let mut records: Vec<Record> = Vec::new();
        for message in &messages {
            self.learn(message);
            records.extend(message.records.iter().filter(|r| r.seq > after).cloned());
        }
        if !follows_on(&records, after) {
            // Batches of messages an erasure replaced (`rewrite.rs`): from their replacements.
            let upto = records.last().map_or(0, |r| r.seq);
            let (stream, redo) = (self.stream.clone(), rewrite::redo_subject(&self.subject));
            let replaced =
                self.link.bridge.run(async move { rewrite::replacements(&stream, &redo).await })??;
            for raw in replaced.latest.values() {
                let message = raw.decode()?;
                records.extend(message.records.into_iter().filter(|r| r.seq > after && r.seq <= upto));
            }
            records.sort_by_key(|r| r.seq);
            records.dedup_by_key(|r| r.seq);
        }
        if let Some(pair) = records.windows(2).find(|w| w[1].seq != w[0].seq + 1) {
            return Err(LogError::Damaged {
                after: pair[0].seq,
                reason: format!("batch {} follows batch {} in {}", pair[1].seq, pair[0].seq, self.name),
            });
        }
        if let Some(first) = records.first()
            && first.seq != after + 1
        {
            return Err(LogError::Damaged {
                after,
                reason: format!(
                    "the log of {} continues at batch {} after batch {after}",
                    self.name, first.seq
                ),
            });
        }
        Ok(records)
    }

    /// Takes in a message read from the stream.
    fn learn(&self, message: &Message) {
        if let Some(last) = message.records.last() {
            let bytes = message.records.iter().map(Record::frame_len).sum();
            let known = Known { seq: last.seq, time: last.system_time, position: message.stream_seq };
            self.group.learn(known, bytes);
        }
    }
}

impl Drop for StreamLog {
    fn drop(&mut self) {
        self.link.tails.untrack(&self.name);
    }
}

impl Publish for StreamLog {
    /// Publishes one group, retrying an unanswered publish (same message id: it lands
    /// once) until the deadline; the stream sequence it got.
    fn publish(
        &self,
        frames: Vec<u8>,
        after: Known,
        (first, last): (Committed, Committed),
        deadline: Instant,
    ) -> Result<u64, Refusal> {
        let link = Arc::clone(&self.link);
        let (subject, stream) = (self.subject.clone(), self.stream.clone());
        // Unique to this node's attempt at this batch: a retry of the same publish lands
        // once, and another node's batch with the same seq and time (two nodes can stamp
        // the same microsecond) is never taken for it.
        let id = format!("{}:{}:{}:{}", self.link.node, self.subject, first.seq, first.system_time);
        let expected_stream = after.position;
        let outcome = self.link.bridge.run(async move {
            let payload = bytes::Bytes::from(frames);
            let mut attempts = 0;
            loop {
                attempts += 1;
                let mut headers = HeaderMap::new();
                headers.insert("Nats-Expected-Last-Subject-Sequence", expected_stream.to_string().as_str());
                headers.insert("Nats-Msg-Id", id.as_str());
                headers.insert(LAST_BATCH, last.seq.to_string().as_str());
                let publish = PublishMessage::build().payload(payload.clone()).headers(headers);
                let acked = match link.context.send_publish(subject.clone(), publish).await {
                    Ok(ack) => ack.await,
                    Err(e) => Err(e),
                };
                match acked {
                    Ok(ack) => return Ok(ack.sequence),
                    Err(e) if classify(&e) == Answer::Stale => {
                        // An earlier attempt that got no answer may have landed: then the
                        // message after the expected one is this very message.
                        if attempts > 1
                            && let Some(landed) =
                                reading::landed(&stream, &subject, expected_stream, &id).await
                        {
                            return Ok(landed);
                        }
                        let found = match reading::last_on(&stream, &subject).await {
                            Ok(Some(m)) => m.records.last().map_or(0, |r| r.seq),
                            _ => 0,
                        };
                        return Err(Refusal::Conflict { found });
                    }
                    Err(e) => {
                        tracing::debug!(subject, error = %e, code = ?code(&e), "publish not answered; asking again");
                        if Instant::now() + RETRY_PAUSE >= deadline {
                            return Err(Refusal::Unavailable(format!("no answer from JetStream: {e}")));
                        }
                    }
                }
                tokio::time::sleep(RETRY_PAUSE).await;
            }
        });
        outcome.unwrap_or_else(|e| Err(Refusal::Unavailable(e.to_string())))
    }
}

impl RecordLog for StreamLog {
    fn submit(&self, payload: &[u8], after: After) -> Result<Ticket, LogError> {
        self.group.submit(payload, after, &self.clock)
    }

    fn wait(&self, ticket: Ticket) -> Result<Committed, LogError> {
        self.group.wait(ticket, self)
    }

    fn read_after(&self, after: u64) -> Result<Vec<Record>, LogError> {
        self.read_records(after)
    }

    fn follow(&self, after: u64, timeout: Duration) -> Result<Vec<Record>, LogError> {
        let deadline = Instant::now() + timeout;
        loop {
            let records = self.read_records(after)?;
            if !records.is_empty() || Instant::now() >= deadline {
                return Ok(records);
            }
            std::thread::sleep(Duration::from_millis(5).min(deadline - Instant::now()));
        }
    }

    fn last_seq(&self) -> u64 {
        self.group.last_seq()
    }

    fn size_bytes(&self) -> u64 {
        self.group.size()
    }

    fn own_pending(&self) -> u64 {
        self.group.own_pending()
    }

    fn refusals(&self) -> u64 {
        self.group.refusals()
    }
}
