//! Ostrakon's durable, append-only log of opaque byte batches, behind a storage trait (files or memory).
//!
//! One log is one file. Each [`Log::append`] writes one batch as one checksummed frame, fsyncs it
//! before returning, and assigns it a sequence number (1, 2, 3, … in commit order) and a strictly
//! increasing system time in microseconds since the Unix epoch. Concurrent appends are group
//! committed: one thread writes and syncs everything queued so far while the others wait.
//!
//! [`Log::open`] recovers a log after a crash: a torn tail (the unacknowledged last write, cut
//! short, zero-filled or garbled) is truncated away, while damage in the middle of the file is
//! reported as [`LogError::Corrupt`] and never skipped silently. [`Log::inspect`] classifies a
//! file the same way without changing it. Each file's header stores its log's name, so a renamed
//! or swapped file fails with [`LogError::WrongName`].
//!
//! The byte layout and the commit and recovery protocols are specified in `FORMAT.md` next to this
//! crate's `Cargo.toml`.
//!
//! ```
//! use ostrakon_log::{Log, MemStorage, Storage, system_clock};
//!
//! let storage = MemStorage::new();
//! let (log, recovery) = Log::open(storage.open("events")?, "events", system_clock())?;
//! assert!(recovery.records.is_empty());
//! let committed = log.append(b"batch one")?;
//! assert_eq!(committed.seq, 1);
//! # Ok::<(), ostrakon_log::LogError>(())
//! ```
#![deny(missing_docs)]

mod atomic;
mod compact;
mod error;
mod file;
mod format;
mod frames;
mod group;
mod log;
mod mem;
mod record;
mod recovery;
mod seam;
mod shared;
mod storage;

pub use atomic::replace_file;
pub use compact::write_log;
pub use error::LogError;
pub use file::{FileStorage, lock_exclusive};
pub use format::{FORMAT_VERSION, MAX_PAYLOAD_LEN};
pub use frames::{decode_frames, encode_frame};
pub use group::{After, GroupCommit, Known, Publish, Refusal};
pub use log::{Clock, Log, Ticket, system_clock};
pub use mem::MemStorage;
pub use record::{Committed, Record, Recovery, Truncation};
pub use seam::{Behind, DEFAULT_WRITE_BUDGET, LogBackend, RecordLog, StorageBackend};
pub use shared::SharedBackend;
pub use storage::{LogFile, MAX_NAME_LEN, Storage, validate_name};
