//! What JetStream's answer to an append means, by its error code (nats-server's
//! `errors.json`): the expectation was stale (nothing stored: catch up and prepare
//! again), or the outcome is not known yet (send the same message again, under the same
//! message id, so that it is stored once).
//!
//! - 10071 wrong last sequence: another writer's record is the subject's last — stale.
//! - 10164 wrong last sequence (no number): another writer's message for the subject is
//!   proposed and not yet applied; ours was not stored — stale (what it becomes is read
//!   when catching up).
//! - 10158 duplicate message id in process: our own earlier attempt is still being stored
//!   — ask again.
//! - 10063 sequence mismatch, 10077 store failed, no responders (a stream between
//!   leaders), no answer in time, a connection lost: nothing known — ask again, until the
//!   write's budget is spent.

use async_nats::jetstream::context::{PublishError, PublishErrorKind};
use async_nats::jetstream::{self, ErrorCode};

/// How an append attempt ended, when it did not store the message.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Answer {
    /// Another writer appended first: nothing stored.
    Stale,
    /// Not known yet: send the same message again.
    Again,
}

/// The JetStream error code behind a failed publish, if it carries one.
pub(crate) fn code(e: &PublishError) -> Option<ErrorCode> {
    std::error::Error::source(e)
        .and_then(|s| s.downcast_ref::<jetstream::Error>())
        .map(jetstream::Error::error_code)
}

/// What a failed publish means.
pub(crate) fn classify(e: &PublishError) -> Answer {
    match e.kind() {
        PublishErrorKind::WrongLastSequence => Answer::Stale,
        PublishErrorKind::Other if code(e) == Some(ErrorCode::STREAM_WRONG_LAST_SEQUENCE_CONSTANT) => {
            Answer::Stale
        }
        _ => Answer::Again,
    }
}
