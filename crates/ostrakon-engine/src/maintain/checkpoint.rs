//! Checkpoint files: a namespace's folded state at one batch, so that opening it replays
//! only the log after that batch. They are derived and never needed: one that is missing,
//! damaged, of another format or of another log is ignored with a warning, and the state
//! is rebuilt from the log; deleting them changes no answer. They are kept by the log
//! backend, whole or not at all (the file backend writes a temporary file, syncs it and
//! renames it over the previous one).

use std::path::Path;

use ostrakon_core::{Namespace, Seq, Timestamp};
use ostrakon_index::NamespaceIndex;
use ostrakon_index::checkpoint::{self, CheckpointError};
use ostrakon_log::{LogBackend, LogError, Record};

/// Write a checkpoint once this many batches were applied since the last one.
pub const CHECKPOINT_EVERY_BATCHES: u64 = 2_000;
/// … or once the log grew by this many bytes since the last one.
pub const CHECKPOINT_EVERY_BYTES: u64 = 64 << 20;

/// What writing a checkpoint did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checkpointed {
    /// The last batch it holds.
    pub seq: Seq,
    /// Its size in bytes.
    pub bytes: u64,
}

/// The newest checkpoint blob of `ns` and the batch it holds up to, or `None` (and a
/// warning saying why) when there is none to read.
pub(crate) fn read_blob(backend: &dyn LogBackend, ns: &Namespace) -> Option<(Vec<u8>, u64)> {
    let bytes = match backend.load_checkpoint(ns.as_str()) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return None,
        Err(e) => {
            tracing::warn!(namespace = %ns, error = %e, "checkpoint unreadable; replaying the whole log");
            return None;
        }
    };
    match checkpoint::header(&bytes) {
        Ok(head) => Some((bytes, head.seq.0)),
        Err(why) => {
            tracing::warn!(namespace = %ns, reason = %why, "checkpoint ignored; replaying the whole log");
            None
        }
    }
}

/// The state a checkpoint's `bytes` hold, if they can stand for the first batches of the
/// log whose records (from some batch on, in order) are `records`; `None` (and a warning
/// saying why) when not.
pub(crate) fn load(ns: &Namespace, bytes: &[u8], records: &[Record]) -> Option<NamespaceIndex> {
    match usable(bytes, records) {
        Ok(index) => Some(index),
        Err(why) => {
            tracing::warn!(namespace = %ns, reason = %why, "checkpoint ignored; replaying the whole log");
            None
        }
    }
}

/// Saves the checkpoint of `index`, replacing the previous one (only called for a
/// backend that keeps checkpoints).
pub(crate) fn write(
    backend: &dyn LogBackend,
    ns: &Namespace,
    index: &NamespaceIndex,
) -> Result<Checkpointed, LogError> {
    let bytes = checkpoint::encode(index);
    backend.save_checkpoint(ns.as_str(), &bytes)?;
    Ok(Checkpointed { seq: index.last_seq(), bytes: bytes.len() as u64 })
}

/// The header of the checkpoint file at `path`, and its length, if it has a readable one
/// (for `inspect`, which reads a data directory's files).
pub(crate) fn file_header(path: &Path) -> Option<(checkpoint::CheckpointHeader, u64)> {
    use std::io::Read as _;
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let mut head = vec![0u8; checkpoint::CHECKPOINT_HEADER_LEN];
    file.read_exact(&mut head).ok()?;
    checkpoint::header(&head).ok().map(|h| (h, len))
}

/// Why a checkpoint's bytes cannot stand for the first batches of `records`.
#[derive(Debug, thiserror::Error)]
enum Unusable {
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    #[error("it holds {held} batches, the log only {logged}")]
    Ahead { held: u64, logged: u64 },
    #[error("it was taken of another log: batch {seq}'s system time differs")]
    OtherLog { seq: u64 },
}

fn usable(bytes: &[u8], records: &[Record]) -> Result<NamespaceIndex, Unusable> {
    let head = checkpoint::header(bytes)?;
    let logged = records.last().map_or(0, |r| r.seq);
    let first = records.first().map_or(1, |r| r.seq);
    if head.seq.0 > logged {
        return Err(Unusable::Ahead { held: head.seq.0, logged });
    }
    // Records are consecutive from `first`; batch 1 is there unless the backend read from
    // the checkpoint's batch on (then that batch's time is the check).
    let time_of = |seq: u64| {
        seq.checked_sub(first)
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| records.get(i))
            .map_or(Timestamp::MIN, |r| Timestamp::from_micros(r.system_time))
    };
    let first_differs = first == 1 && time_of(1) != head.first_time;
    if head.seq.0 > 0 && (time_of(head.seq.0) != head.system_time || first_differs) {
        return Err(Unusable::OtherLog { seq: head.seq.0 });
    }
    let (_, index) = checkpoint::decode(bytes)?;
    Ok(index)
}
