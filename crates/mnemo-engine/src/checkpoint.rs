//! Checkpoint files: a namespace's folded state at one batch, so that opening it replays
//! only the log after that batch. They are derived and never needed: one that is missing,
//! damaged, of another format or of another log is ignored with a warning, and the state
//! is rebuilt from the log; deleting them changes no answer. Each is written whole to a
//! temporary file, synced, then renamed over the previous one, so a crash leaves the old
//! checkpoint or the new one, never a torn file under the real name.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use mnemo_core::{Namespace, Seq, Timestamp};
use mnemo_index::NamespaceIndex;
use mnemo_index::checkpoint::{self, CheckpointError};
use mnemo_log::Record;

/// Write a checkpoint once this many batches were applied since the last one.
pub const CHECKPOINT_EVERY_BATCHES: u64 = 2_000;
/// … or once the log grew by this many bytes since the last one.
pub const CHECKPOINT_EVERY_BYTES: u64 = 64 << 20;

/// Where a store keeps its checkpoints: `<data dir>/checkpoints/<namespace>.ckpt`.
#[derive(Debug)]
pub(crate) struct Checkpoints {
    dir: PathBuf,
}

/// What writing a checkpoint did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checkpointed {
    /// The last batch it holds.
    pub seq: Seq,
    /// Its size in bytes.
    pub bytes: u64,
}

impl Checkpoints {
    pub(crate) fn new(dir: PathBuf) -> Self {
        Checkpoints { dir }
    }

    /// The data directory these checkpoints are in.
    pub(crate) fn data_dir(&self) -> Option<&Path> {
        self.dir.parent()
    }

    pub(crate) fn path(&self, ns: &Namespace) -> PathBuf {
        self.dir.join(format!("{}.ckpt", ns.as_str()))
    }

    /// The state of the newest usable checkpoint of `ns` for a log holding `records`,
    /// or `None` (and a warning saying why) when there is none to use.
    pub(crate) fn load(&self, ns: &Namespace, records: &[Record]) -> Option<NamespaceIndex> {
        let path = self.path(ns);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => {
                tracing::warn!(namespace = %ns, path = %path.display(), error = %e, "checkpoint unreadable; replaying the whole log");
                return None;
            }
        };
        match usable(&bytes, records) {
            Ok(index) => Some(index),
            Err(why) => {
                tracing::warn!(namespace = %ns, path = %path.display(), reason = %why, "checkpoint ignored; replaying the whole log");
                None
            }
        }
    }

    /// Writes the checkpoint of `index`, replacing the previous one.
    pub(crate) fn write(&self, ns: &Namespace, index: &NamespaceIndex) -> std::io::Result<Checkpointed> {
        std::fs::create_dir_all(&self.dir)?;
        let bytes = checkpoint::encode(index);
        replace_file(&self.path(ns), |file| file.write_all(&bytes))?;
        Ok(Checkpointed { seq: index.last_seq(), bytes: bytes.len() as u64 })
    }

    /// The header of the checkpoint of `ns`, if it has a readable one.
    pub(crate) fn header(&self, ns: &Namespace) -> Option<(checkpoint::CheckpointHeader, u64)> {
        use std::io::Read as _;
        let mut file = std::fs::File::open(self.path(ns)).ok()?;
        let len = file.metadata().ok()?.len();
        let mut head = vec![0u8; checkpoint::CHECKPOINT_HEADER_LEN];
        file.read_exact(&mut head).ok()?;
        checkpoint::header(&head).ok().map(|h| (h, len))
    }
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
    let logged = records.len() as u64;
    if head.seq.0 > logged {
        return Err(Unusable::Ahead { held: head.seq.0, logged });
    }
    let time_of = |seq: u64| {
        usize::try_from(seq)
            .ok()
            .and_then(|s| s.checked_sub(1))
            .and_then(|i| records.get(i))
            .map_or(Timestamp::MIN, |r| Timestamp::from_micros(r.system_time))
    };
    if head.seq.0 > 0 && (time_of(head.seq.0) != head.system_time || time_of(1) != head.first_time) {
        return Err(Unusable::OtherLog { seq: head.seq.0 });
    }
    let (_, index) = checkpoint::decode(bytes)?;
    Ok(index)
}

/// Replaces the file at `path` with what `write` writes, atomically: into a temporary
/// file beside it (`<path>.tmp`), synced, then renamed over it, the directory synced. A
/// crash leaves the old file or the new one, never a torn one under the real name.
pub(crate) fn replace_file(
    path: &Path,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    {
        let mut file = std::fs::File::create(&tmp)?;
        write(&mut file)?;
        file.sync_data()?;
    }
    std::fs::rename(&tmp, path)?;
    match path.parent() {
        Some(dir) => sync_dir(dir),
        None => Ok(()),
    }
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> std::io::Result<()> {
    Ok(())
}
