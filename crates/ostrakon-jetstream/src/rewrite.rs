//! Compaction on a stream (an erasure's rewrite, [`ostrakon_log::LogBackend::rewrite`]) and
//! the secure removal of stored bytes.
//!
//! JetStream cannot store a message again under its sequence, so a message whose batches
//! changed is *replaced*: its new frames (same seqs and system times, new checksums) are
//! published on the namespace's replacement subject (`<subject>.redo`, which no log
//! reader or watcher takes for a namespace) with the header `Mnemo-Replaces` naming the
//! stream sequence of the message they stand for; then the old message is deleted with
//! JetStream's *secure* delete (`STREAM.MSG.DELETE` without `no_erase`: each server
//! overwrites the message's bytes in its store). A reader that finds batches missing on
//! the log subject takes them from the latest replacement of their message
//! (`handle.rs`).
//!
//! Crash-safe and idempotent: a replacement is acknowledged before the message it
//! replaces is deleted, so a crash leaves the old message (the erasure is still pending:
//! the next node to open the namespace compacts again) or its replacement, never
//! neither. Run again, or by two nodes at once, it converges: a replacement that is
//! already right is kept, an old message that has one is deleted, and older
//! replacements of the same message are deleted.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use async_nats::HeaderMap;
use async_nats::jetstream::ErrorCode;
use async_nats::jetstream::message::PublishMessage;
use async_nats::jetstream::stream::{DeleteMessageErrorKind, Stream};
use ostrakon_log::{LogError, Record, encode_frame};

use crate::link::Link;
use crate::reading::{self, REPLACES, Raw, unavailable};

/// The subject that holds replacements of the messages on `subject`.
pub(crate) fn redo_subject(subject: &str) -> String {
    format!("{subject}.redo")
}

/// The replacements of a namespace's messages: the latest one of each replaced message
/// (by the stream sequence it replaces), and the older ones, which nothing reads.
#[derive(Default)]
pub(crate) struct Replacements {
    pub(crate) latest: BTreeMap<u64, Raw>,
    stale: Vec<u64>,
}

/// Every replacement on `redo`.
pub(crate) async fn replacements(stream: &Stream, redo: &str) -> Result<Replacements, LogError> {
    let mut out = Replacements::default();
    let last = match stream.get_last_raw_message_by_subject(redo).await {
        Ok(m) => m.sequence,
        Err(e) if matches!(e.kind(), async_nats::jetstream::stream::RawMessageErrorKind::NoMessageFound) => {
            return Ok(out);
        }
        Err(e) => return Err(unavailable("reading replaced messages", e)),
    };
    for raw in reading::read_raw(stream, redo, 1, last).await? {
        let Some(replaces) = raw.replaces else {
            out.stale.push(raw.stream_seq);
            continue;
        };
        // Read in stream order: a later replacement of the same message wins.
        if let Some(older) = out.latest.insert(replaces, raw) {
            out.stale.push(older.stream_seq);
        }
    }
    Ok(out)
}

/// Securely deletes message `seq` of `stream`; one that is gone already is fine.
pub(crate) async fn erase_message(stream: &Stream, seq: u64) -> Result<(), LogError> {
    let mut tries = 0;
    loop {
        tries += 1;
        match stream.delete_message(seq).await {
            Ok(_) => return Ok(()),
            Err(e) => match e.kind() {
                // Deleted already (another node compacting the same namespace): 10057 is
                // "delete failed", which says "no message found" then.
                DeleteMessageErrorKind::JetStream(j)
                    if [ErrorCode::NO_MESSAGE_FOUND, ErrorCode::SEQUENCE_NOT_FOUND]
                        .contains(&j.error_code())
                        || (j.error_code() == ErrorCode::STREAM_MESSAGE_DELETE_FAILED
                            && j.to_string().contains("no message found")) =>
                {
                    return Ok(());
                }
                _ if tries < 20 => {
                    tracing::debug!(seq, error = %e, "deleting a message; retrying");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                _ => return Err(unavailable("erasing a message", e)),
            },
        }
    }
}

/// Publishes `frames` as the replacement of message `replaces`, retrying an unanswered
/// publish (with a message id, so that it lands once) until the write timeout. The id is
/// this node's and this rewrite's (`run`): a replacement equal to one published and
/// deleted earlier must not be taken by JetStream for a duplicate of it.
async fn publish_replacement(
    link: &Link,
    redo: &str,
    (replaces, run): (u64, &str),
    frames: Vec<u8>,
) -> Result<(), LogError> {
    let id = format!("{redo}:{replaces}:{run}");
    let payload = bytes::Bytes::from(frames);
    let started = Instant::now();
    loop {
        let mut headers = HeaderMap::new();
        headers.insert(REPLACES, replaces.to_string().as_str());
        headers.insert("Nats-Msg-Id", id.as_str());
        let publish = PublishMessage::build().payload(payload.clone()).headers(headers);
        let acked = match link.context.send_publish(redo.to_owned(), publish).await {
            Ok(ack) => ack.await,
            Err(e) => Err(e),
        };
        match acked {
            Ok(_) => return Ok(()),
            Err(e) if started.elapsed() < link.config.write_timeout => {
                tracing::debug!(redo, error = %e, "publishing a replacement; retrying");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => return Err(unavailable("publishing a replacement", e)),
        }
    }
}

/// Rewrites the namespace on `subject` so that it holds `records` (its whole log as
/// compaction made it, numbered from 1): every message whose batches differ is replaced
/// and securely deleted. Batches appended after `records` was read are left as they
/// are. Returns how many messages were replaced.
pub(crate) async fn rewrite(
    link: &Link,
    stream: &Stream,
    subject: &str,
    records: &[Record],
) -> Result<usize, LogError> {
    let Some(last) = reading::last_on(stream, subject).await? else { return Ok(0) };
    let given = records.last().map_or(0, |r| r.seq);
    let run = format!("{}-{}", link.node, ostrakon_log::system_clock()());
    let originals: BTreeMap<u64, Raw> = reading::read_raw(stream, subject, 1, last.stream_seq)
        .await?
        .into_iter()
        .map(|raw| (raw.stream_seq, raw))
        .collect();
    let redo = redo_subject(subject);
    let replaced = replacements(stream, &redo).await?;
    // A rewrite made since `records` was read, for a later erasure (its batch is after
    // them), would be undone by this one: refused, so that the caller reads again.
    // Batches merely appended since are left as they are, and a replacement already read
    // (published before the last batch read, or with nothing appended since) is no sign.
    let found = last.records.last().map_or(0, |r| r.seq);
    if found > given {
        let read_end = originals
            .iter()
            .find(|(_, raw)| raw.decode().is_ok_and(|m| m.records.iter().any(|r| r.seq == given)))
            .map(|(seq, _)| *seq);
        let newer = |s: u64| read_end.is_none_or(|end| s > end);
        if replaced.latest.values().map(|r| r.stream_seq).chain(replaced.stale.iter().copied()).any(newer) {
            return Err(LogError::Conflict { expected: given, found });
        }
    }
    let positions: BTreeSet<u64> = originals.keys().chain(replaced.latest.keys()).copied().collect();
    let mut changed = 0;
    for position in positions {
        let original = originals.get(&position);
        let newest = replaced.latest.get(&position);
        let Some(current) = newest.or(original) else { continue };
        let now = current.decode()?.records;
        let wanted = |r: &Record| {
            let target = records.get(usize::try_from(r.seq.checked_sub(1)?).ok()?)?;
            (target.seq == r.seq && target.system_time == r.system_time).then_some(target)
        };
        // A message past what the rewrite was given came after it: left as it is.
        let Some(target) = now.iter().map(wanted).collect::<Option<Vec<&Record>>>() else { continue };
        if target.iter().zip(&now).all(|(t, n)| t.payload == n.payload) {
            if newest.is_some() && original.is_some() {
                // Replaced before a crash that came before the old message was deleted.
                erase_message(stream, position).await?;
            }
            continue;
        }
        if position == last.stream_seq {
            // The last message holds the batch the rewrite was read at: an erasure is
            // never in the message of what it erases, so this is not a rewrite to make.
            return Err(LogError::Damaged {
                after: given,
                reason: format!("a rewrite would replace the last message of {subject}"),
            });
        }
        let frames: Vec<u8> =
            target.iter().flat_map(|r| encode_frame(r.seq, r.system_time, &r.payload)).collect();
        publish_replacement(link, &redo, (position, &run), frames).await?;
        if let Some(older) = newest {
            erase_message(stream, older.stream_seq).await?;
        }
        if original.is_some() {
            erase_message(stream, position).await?;
        }
        changed += 1;
    }
    for seq in replaced.stale {
        erase_message(stream, seq).await?;
    }
    Ok(changed)
}

/// Every message on `subject` securely deleted, the last first: a node that reads the
/// namespace meanwhile finds a shorter log (or none), never one with its start missing.
/// Used to drop a namespace (its log, then its replacements) and a checkpoint's chunks.
pub(crate) async fn erase_subject(stream: &Stream, subject: &str) -> Result<usize, LogError> {
    let mut erased = 0;
    loop {
        match stream.get_last_raw_message_by_subject(subject).await {
            Ok(m) => {
                erase_message(stream, m.sequence).await?;
                erased += 1;
            }
            Err(e)
                if matches!(e.kind(), async_nats::jetstream::stream::RawMessageErrorKind::NoMessageFound) =>
            {
                return Ok(erased);
            }
            Err(e) => return Err(unavailable("erasing messages", e)),
        }
    }
}
