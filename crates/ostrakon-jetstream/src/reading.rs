//! Reading a namespace's records back from its shard stream: the message after a stream
//! sequence (a get answered by the stream's leader), a long run of them (an ordered
//! consumer), and where batch `n` starts (a binary search over such gets).
//!
//! Gets go to the leader, never to "direct get" replicas: a replica that was restarted
//! answers from what it has while it catches up, so a node opening a log there would
//! miss acknowledged batches and a follower would wait for its sweep.
//!
//! Every message is decoded and checked here: its frames' checksums, and that its first
//! batch follows the last one read. A message that fails is damage, never skipped.

use async_nats::HeaderMap;
use async_nats::jetstream::consumer::{DeliverPolicy, pull};
use async_nats::jetstream::message::StreamMessage;
use async_nats::jetstream::stream::{RawMessageErrorKind, Stream};
use futures_util::StreamExt;
use ostrakon_log::{LogError, Record, decode_frames};

/// Gets before a read switches to an ordered consumer.
const SINGLE_READS: usize = 32;

/// How long a consumer may go quiet before the read goes on with single gets.
const QUIET_LIMIT: std::time::Duration = std::time::Duration::from_secs(1);

/// How long a read asks again a stream that does not answer.
pub(crate) const READ_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

/// One message of a namespace: its stream sequence and its records.
pub(crate) struct Message {
    pub(crate) stream_seq: u64,
    pub(crate) records: Vec<Record>,
}

pub(crate) fn unavailable(what: &str, e: impl std::fmt::Display) -> LogError {
    LogError::Unavailable { reason: format!("{what}: {e}") }
}

fn decode(stream_seq: u64, payload: &[u8]) -> Result<Message, LogError> {
    match decode_frames(payload) {
        Ok(records) if !records.is_empty() => Ok(Message { stream_seq, records }),
        Ok(_) => {
            Err(LogError::Damaged { after: 0, reason: format!("stream message {stream_seq} holds no frame") })
        }
        Err((at, why)) => Err(LogError::Damaged {
            after: 0,
            reason: format!("stream message {stream_seq}, byte {at}: {why}"),
        }),
    }
}

/// Which message a get asks for.
#[derive(Clone, Copy)]
pub(crate) enum Get {
    /// The first on the subject at or after this stream sequence.
    From(u64),
    /// The last on the subject.
    Last,
}

/// Asks the stream's leader for one message of `subject`: `None` when there is none. A
/// stream between leaders (a server restarting, in lame duck mode, killed) answers nothing
/// or "temporarily unavailable" for a moment: asked again until [`READ_PATIENCE`] passed.
pub(crate) async fn get(
    stream: &Stream,
    subject: &str,
    which: Get,
) -> Result<Option<StreamMessage>, LogError> {
    let started = std::time::Instant::now();
    loop {
        let answer = match which {
            Get::From(seq) => stream.get_first_raw_message_by_subject(subject, seq.max(1)).await,
            Get::Last => stream.get_last_raw_message_by_subject(subject).await,
        };
        match answer {
            Ok(m) => return Ok(Some(m)),
            Err(e) if matches!(e.kind(), RawMessageErrorKind::NoMessageFound) => return Ok(None),
            Err(e) if started.elapsed() < READ_PATIENCE => {
                tracing::debug!(subject, error = %e, "reading the stream: no answer yet; asking again");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            Err(e) => return Err(unavailable("reading the log", e)),
        }
    }
}

/// The first message on `subject` at or after stream sequence `from`; `None` when there
/// is none.
pub(crate) async fn next_at(stream: &Stream, subject: &str, from: u64) -> Result<Option<Message>, LogError> {
    get(stream, subject, Get::From(from)).await?.map(|m| decode(m.sequence, &m.payload)).transpose()
}

/// The stream sequence of the message right after `after` on `subject`, if it is the
/// one published with message id `id` (a publish whose answer was lost, found landed).
pub(crate) async fn landed(stream: &Stream, subject: &str, after: u64, id: &str) -> Option<u64> {
    let m = stream.get_first_raw_message_by_subject(subject, after + 1).await.ok()?;
    let same = m.headers.get("Nats-Msg-Id").is_some_and(|v| v.as_str() == id);
    same.then_some(m.sequence)
}

/// The last message on `subject`, if any.
pub(crate) async fn last_on(stream: &Stream, subject: &str) -> Result<Option<Message>, LogError> {
    get(stream, subject, Get::Last).await?.map(|m| decode(m.sequence, &m.payload)).transpose()
}

/// Every message on `subject` from stream sequence `from` up to and including `until`.
pub(crate) async fn read_range(
    stream: &Stream,
    subject: &str,
    from: u64,
    until: u64,
) -> Result<Vec<Message>, LogError> {
    let raw = read_raw(stream, subject, from, until).await?;
    raw.into_iter().map(|r| decode(r.stream_seq, &r.payload)).collect()
}

/// A message as stored, with the one header Ostrakon reads back: which message a
/// replacement replaces (see `rewrite.rs`).
pub(crate) struct Raw {
    pub(crate) stream_seq: u64,
    pub(crate) replaces: Option<u64>,
    pub(crate) payload: bytes::Bytes,
}

impl Raw {
    fn of(stream_seq: u64, headers: Option<&HeaderMap>, payload: bytes::Bytes) -> Raw {
        let replaces = headers.and_then(|h| h.get(REPLACES)).and_then(|v| v.as_str().parse().ok());
        Raw { stream_seq, replaces, payload }
    }

    /// Its records, checked.
    pub(crate) fn decode(&self) -> Result<Message, LogError> {
        decode(self.stream_seq, &self.payload)
    }
}

/// The header naming the stream sequence of the message a replacement replaces.
/// Written into the streams since the project was called Mnemo: a format identifier, kept
/// so that a cluster laid out before the rename still opens.
pub(crate) const REPLACES: &str = "Mnemo-Replaces";

/// [`read_range`], undecoded. A stream between leaders (a server restarting, in lame duck
/// mode, killed) answers nothing or "temporarily unavailable" for a moment: a read asks
/// again, from where it got to, until [`READ_PATIENCE`] has passed.
pub(crate) async fn read_raw(
    stream: &Stream,
    subject: &str,
    from: u64,
    until: u64,
) -> Result<Vec<Raw>, LogError> {
    let started = std::time::Instant::now();
    let mut out: Vec<Raw> = Vec::new();
    let mut at = from;
    let mut singles = 0;
    while at <= until {
        // A follower's catch-up is a message or two: single gets (asked of the leader).
        if singles < SINGLE_READS {
            match get(stream, subject, Get::From(at)).await? {
                Some(m) if m.sequence <= until => {
                    at = m.sequence + 1;
                    singles += 1;
                    out.push(Raw::of(m.sequence, Some(&m.headers), m.payload));
                }
                _ => return Ok(out),
            }
            continue;
        }
        // A long run (a namespace opened from the start): an ordered consumer streams it,
        // until it reaches `until` or goes quiet (its server went away): then single gets
        // again from where it got to, and another consumer.
        match stream_run(stream, subject, (at, until), &mut out).await {
            Ok(next) => at = next,
            Err(e) if started.elapsed() < READ_PATIENCE => {
                tracing::debug!(subject, error = %e, "reading the log: a consumer failed; reading on");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            Err(e) => return Err(e),
        }
        singles = 0;
    }
    Ok(out)
}

/// Streams messages `from..=until` of `subject` into `out` with an ordered consumer, until
/// it reaches `until` or goes quiet for [`QUIET_LIMIT`]; where it got to.
async fn stream_run(
    stream: &Stream,
    subject: &str,
    (from, until): (u64, u64),
    out: &mut Vec<Raw>,
) -> Result<u64, LogError> {
    let config = pull::OrderedConfig {
        filter_subject: subject.to_owned(),
        deliver_policy: DeliverPolicy::ByStartSequence { start_sequence: from },
        ..Default::default()
    };
    let consumer = stream.create_consumer(config).await.map_err(|e| unavailable("reading the log", e))?;
    let mut messages = consumer.messages().await.map_err(|e| unavailable("reading the log", e))?;
    let mut at = from;
    // The consumer may live on a replica that is still catching up: it is read until it
    // reaches `until` (what the leader holds), never to "nothing pending".
    loop {
        let message = match tokio::time::timeout(QUIET_LIMIT, messages.next()).await {
            Ok(Some(message)) => message.map_err(|e| unavailable("reading the log", e))?,
            Ok(None) | Err(_) => return Ok(at),
        };
        let info = message.info().map_err(|e| unavailable("reading the log", e))?;
        let stream_seq = info.stream_sequence;
        if stream_seq > until {
            return Ok(until + 1);
        }
        // An ordered consumer that is recreated (its server went away) may start over
        // from earlier: what was read already is skipped, never read twice.
        if stream_seq < at || out.last().is_some_and(|m| stream_seq <= m.stream_seq) {
            continue;
        }
        let message = message.message;
        out.push(Raw::of(stream_seq, message.headers.as_ref(), message.payload));
        at = stream_seq + 1;
        if stream_seq >= until {
            return Ok(at);
        }
    }
}

/// The stream sequence of the message holding batch `after + 1` (the first message when
/// `after` is 0), searching up to stream sequence `last`: a binary search over single
/// gets, a few dozen round trips however long the stream.
pub(crate) async fn locate(stream: &Stream, subject: &str, after: u64, last: u64) -> Result<u64, LogError> {
    let (mut lo, mut hi) = (1u64, last.max(1));
    if after == 0 {
        return Ok(1);
    }
    // The smallest s whose next message ends at or past batch after + 1.
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let ends = match next_at(stream, subject, mid).await? {
            Some(m) => m.records.last().map_or(0, |r| r.seq),
            None => u64::MAX,
        };
        if ends > after { hi = mid } else { lo = mid + 1 }
    }
    Ok(lo)
}
