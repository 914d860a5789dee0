//! One namespace's log on its shard stream: appends in groups with an expected last
//! subject sequence, reads that follow what other nodes append.
//!
//! Group commit, as the file log does it: `submit` seals the batch's frame (its seq
//! follows the last one queued; its system time is above every one handed out) and
//! queues it; the first `wait`er with nothing in flight publishes everything queued as
//! one message, expecting the stream sequence of the last record this node knows. On the
//! ack every batch of the group is durable (JetStream acks after its quorum stored it;
//! the servers run with `sync_interval: always`, so stored means fsynced). When
//! JetStream refuses the group — another node appended first — every batch queued in it
//! or after it is refused with [`LogError::Conflict`], and the writer catches up (which
//! moves what this node knows) and prepares again.
//!
//! A ticket is the batch's (seq, system time); since a refused seq is handed out again,
//! the system time (unique, strictly increasing per handle) is what tells outcomes apart.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use async_nats::HeaderMap;
use async_nats::jetstream::context::PublishErrorKind;
use async_nats::jetstream::message::PublishMessage;
use async_nats::jetstream::stream::Stream;
use mnemo_log::{Clock, Committed, LogError, Record, RecordLog, Ticket, encode_frame};

use crate::link::Link;
use crate::reading::{self, Message};
use crate::rewrite;

/// Refused groups remembered for their waiters.
const FAILURES_KEPT: usize = 256;

/// Where the log stands as far as this node knows: its last durable record.
#[derive(Clone, Copy, Debug, Default)]
struct Known {
    seq: u64,
    time: i64,
    stream_seq: u64,
}

#[derive(Default)]
struct State {
    known: Known,
    /// Frame bytes of every record known (the log's size as this node counts it).
    size: u64,
    /// Sealed frames waiting for a publish, in seq order.
    queue: VecDeque<(Committed, Vec<u8>)>,
    /// The last batch of the group being published.
    in_flight: Option<Committed>,
    /// The last system time handed out.
    last_time: i64,
    /// Every batch with a system time up to this one has its outcome.
    done_time: i64,
    /// The last batch another writer was found to have appended, before this node has
    /// read it: a submit expecting less is refused at once.
    seen_elsewhere: u64,
    /// Groups refused: (first time, last time, why).
    failed: VecDeque<(i64, i64, Failure)>,
}

#[derive(Clone, Debug)]
enum Failure {
    Conflict { expected: u64, found: u64 },
    Unavailable(String),
}

impl Failure {
    fn error(&self) -> LogError {
        match self {
            Failure::Conflict { expected, found } => {
                LogError::Conflict { expected: *expected, found: *found }
            }
            Failure::Unavailable(reason) => LogError::Unavailable { reason: reason.clone() },
        }
    }
}

impl State {
    /// The last batch queued or in flight, else the last known.
    fn last_seq(&self) -> u64 {
        self.queue.back().map(|(c, _)| c.seq).or(self.in_flight.map(|c| c.seq)).unwrap_or(self.known.seq)
    }

    /// Refuses the group `first..=last` and everything queued after it (prepared on top of
    /// it); the caller wakes their waiters.
    fn refuse(&mut self, first: Committed, last: Committed, failure: Failure) {
        if let Failure::Conflict { found, .. } = failure {
            self.seen_elsewhere = self.seen_elsewhere.max(found);
        }
        let until = self.queue.back().map_or(last.system_time, |(c, _)| c.system_time);
        self.queue.clear();
        self.failed.push_back((first.system_time, until, failure));
        if self.failed.len() > FAILURES_KEPT {
            self.failed.pop_front();
        }
        self.done_time = until;
    }

    /// Takes in what a read found, when it is past what was known.
    fn learn(&mut self, message: &Message) {
        if message.stream_seq <= self.known.stream_seq {
            return;
        }
        if let Some(last) = message.records.last() {
            self.known = Known { seq: last.seq, time: last.system_time, stream_seq: message.stream_seq };
            self.last_time = self.last_time.max(last.system_time);
            self.size += message.records.iter().map(Record::frame_len).sum::<u64>();
        }
    }
}

/// Whether `records` are batches `after + 1`, `after + 2`, … with none missing.
fn follows_on(records: &[Record], after: u64) -> bool {
    records.iter().enumerate().all(|(i, r)| r.seq == after + 1 + i as u64)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A namespace's log on a shard stream.
pub(crate) struct StreamLog {
    link: Arc<Link>,
    stream: Stream,
    name: String,
    subject: String,
    clock: Clock,
    state: Mutex<State>,
    done: Condvar,
}

impl StreamLog {
    /// The log of `name` on `stream`; it knows nothing of the log until it reads it.
    pub(crate) fn new(link: Arc<Link>, stream: Stream, name: &str, subject: String, clock: Clock) -> Self {
        StreamLog {
            link,
            stream,
            name: name.to_owned(),
            subject,
            clock,
            state: Mutex::new(State::default()),
            done: Condvar::new(),
        }
    }

    /// Records after batch `after` up to the end of the log, checked to follow on from
    /// each other and from what was known.
    pub(crate) fn read_records(&self, after: u64) -> Result<Vec<Record>, LogError> {
        let known = lock(&self.state).known;
        let (stream, subject) = (self.stream.clone(), self.subject.clone());
        let messages = self.link.bridge.run(async move {
            // Only a drop removes a namespace's last message (it deletes from the end).
            let Some(last) = reading::last_on(&stream, &subject).await? else {
                return if known.stream_seq > 0 { Err(LogError::Dropped) } else { Ok(Vec::new()) };
            };
            if last.stream_seq < known.stream_seq {
                return Err(LogError::Dropped);
            }
            if last.stream_seq == known.stream_seq && after >= known.seq {
                return Ok(Vec::new());
            }
            let continuing = after >= known.seq && known.stream_seq > 0;
            let from = if continuing {
                known.stream_seq + 1
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
        {
            let mut state = lock(&self.state);
            for message in &messages {
                state.learn(message);
                records.extend(message.records.iter().filter(|r| r.seq > after).cloned());
            }
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

    /// Publishes one group, retrying an unanswered publish (same message id: it lands
    /// once) until the write timeout; the stream sequence it got.
    fn publish(&self, frames: Vec<u8>, expected_stream: u64, first: Committed) -> Result<u64, Failure> {
        let link = Arc::clone(&self.link);
        let (subject, stream) = (self.subject.clone(), self.stream.clone());
        // Unique to this node's attempt at this batch: a retry of the same publish lands
        // once, and another node's batch with the same seq and time (two nodes can stamp
        // the same microsecond) is never taken for it.
        let id = format!("{}:{}:{}:{}", self.link.node, self.subject, first.seq, first.system_time);
        let timeout = link.config.write_timeout;
        let outcome = self.link.bridge.run(async move {
            let payload = bytes::Bytes::from(frames);
            let started = Instant::now();
            let mut last_error = String::new();
            let mut attempts = 0;
            while started.elapsed() < timeout {
                attempts += 1;
                let mut headers = HeaderMap::new();
                headers.insert("Nats-Expected-Last-Subject-Sequence", expected_stream.to_string().as_str());
                headers.insert("Nats-Msg-Id", id.as_str());
                let publish = PublishMessage::build().payload(payload.clone()).headers(headers);
                let acked = match link.context.send_publish(subject.clone(), publish).await {
                    Ok(ack) => ack.await,
                    Err(e) => Err(e),
                };
                match acked {
                    Ok(ack) => return Ok(ack.sequence),
                    Err(e) if e.kind() == PublishErrorKind::WrongLastSequence => {
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
                        return Err((found, String::new()));
                    }
                    Err(e) => {
                        last_error = e.to_string();
                        tracing::debug!(subject, error = %e, "publish unanswered; retrying");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                }
            }
            Err((u64::MAX, last_error))
        });
        match outcome {
            Ok(Ok(stream_seq)) => Ok(stream_seq),
            Ok(Err((u64::MAX, why))) => Err(Failure::Unavailable(format!("no answer from JetStream: {why}"))),
            Ok(Err((found, _))) => Err(Failure::Conflict { expected: first.seq - 1, found }),
            Err(e) => Err(Failure::Unavailable(e.to_string())),
        }
    }

    /// Publishes what is queued, as the group's leader (the caller set `in_flight`).
    fn lead<'a>(&'a self, mut state: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        let max = self.link.config.max_message;
        let mut frames = Vec::new();
        let mut group: Vec<Committed> = Vec::new();
        while let Some((c, frame)) = state.queue.front() {
            if !frames.is_empty() && frames.len() + frame.len() > max {
                break;
            }
            frames.extend_from_slice(frame);
            group.push(*c);
            state.queue.pop_front();
        }
        let (Some(&first), Some(&last)) = (group.first(), group.last()) else {
            return state;
        };
        if state.known.seq + 1 != first.seq {
            // While the group waited, a read (a follower, a catch-up) learned of another
            // node's batch with its seq: the group was prepared on a state the log has left,
            // and expecting the newly learned message would land it as a second batch of
            // that seq. It is refused like a publish JetStream refused.
            let found = state.known.seq;
            state.refuse(first, last, Failure::Conflict { expected: first.seq - 1, found });
            self.done.notify_all();
            return state;
        }
        state.in_flight = Some(last);
        let expected_stream = state.known.stream_seq;
        let bytes = frames.len() as u64;
        drop(state);
        let outcome = self.publish(frames, expected_stream, first);
        let mut state = lock(&self.state);
        state.in_flight = None;
        match outcome {
            Ok(stream_seq) => {
                if stream_seq > state.known.stream_seq {
                    state.known = Known { seq: last.seq, time: last.system_time, stream_seq };
                    state.size += bytes;
                }
                state.done_time = last.system_time;
            }
            Err(failure) => state.refuse(first, last, failure),
        }
        self.done.notify_all();
        state
    }
}

impl RecordLog for StreamLog {
    fn submit(&self, payload: &[u8], expected: u64) -> Result<Ticket, LogError> {
        let max = self.link.config.max_message.saturating_sub(64);
        if payload.len() > max {
            return Err(LogError::TooLarge { len: payload.len(), max });
        }
        let mut state = lock(&self.state);
        let found = state.last_seq();
        if expected < state.seen_elsewhere {
            return Err(LogError::Conflict { expected, found: state.seen_elsewhere });
        }
        if expected != found {
            return Err(LogError::Conflict { expected, found });
        }
        let time =
            (self.clock)().max(state.last_time.saturating_add(1)).max(state.known.time.saturating_add(1));
        state.last_time = time;
        let committed = Committed { seq: found + 1, system_time: time };
        let frame = encode_frame(committed.seq, time, payload);
        state.queue.push_back((committed, frame));
        Ok(Ticket::new(committed))
    }

    fn wait(&self, ticket: Ticket) -> Result<Committed, LogError> {
        let committed = ticket.committed();
        let mut state = lock(&self.state);
        loop {
            if committed.system_time <= state.done_time {
                let failed =
                    state.failed.iter().find(|(from, to, _)| (*from..=*to).contains(&committed.system_time));
                return match failed {
                    Some((_, _, failure)) => Err(failure.error()),
                    None => Ok(committed),
                };
            }
            if state.in_flight.is_none() && !state.queue.is_empty() {
                state = self.lead(state);
            } else {
                state = self.done.wait(state).unwrap_or_else(PoisonError::into_inner);
            }
        }
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
        lock(&self.state).last_seq()
    }

    fn size_bytes(&self) -> u64 {
        lock(&self.state).size
    }

    fn own_pending(&self) -> u64 {
        let state = lock(&self.state);
        state.queue.back().map(|(c, _)| c.seq).or(state.in_flight.map(|c| c.seq)).unwrap_or(0)
    }
}
