//! The crate's error type, [`LogError`].

/// Everything that can go wrong opening, recovering or appending to a log.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LogError {
    /// An I/O operation on the log's storage failed. When this comes from an append, that batch
    /// (and every batch committed in the same group) is not acknowledged and the log is poisoned.
    #[error("log I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// An earlier append failed with an I/O error, so the on-disk state is unknown; every later
    /// append fails with this error. Reopening the log recovers it.
    #[error("log is poisoned by an earlier I/O failure; reopen it to recover")]
    Poisoned,
    /// The payload is larger than `MAX_PAYLOAD_LEN`.
    #[error("payload of {len} bytes exceeds the limit of {max} bytes")]
    TooLarge {
        /// Size of the rejected payload in bytes.
        len: usize,
        /// The limit in bytes.
        max: usize,
    },
    /// A log name is empty, too long, starts with a dot or uses characters outside
    /// `[A-Za-z0-9_.-]`.
    #[error("invalid log name {name:?}: {reason}")]
    InvalidName {
        /// The rejected name.
        name: String,
        /// Which rule it breaks.
        reason: &'static str,
    },
    /// The file does not start with the log's magic bytes: it is not an Ostrakon log.
    #[error("not an Ostrakon log file (bad magic bytes)")]
    BadMagic,
    /// The file header or a frame declares a format version this build cannot read.
    #[error("unsupported log format version {found} (this build reads versions up to {supported})")]
    UnsupportedVersion {
        /// The version found in the file.
        found: u32,
        /// The newest version this build reads (of the file format, or of frames); it reads
        /// every older one too.
        supported: u32,
    },
    /// The file header stores the name of another log than the one being opened: the file was
    /// renamed or swapped with another log's file. Nothing was changed.
    #[error("log file belongs to log {found:?}, not {expected:?} (renamed or swapped?)")]
    WrongName {
        /// The name the log was opened under.
        expected: String,
        /// The name stored in the file header.
        found: String,
    },
    /// The log is damaged somewhere other than its tail (or in a way a crash cannot produce);
    /// recovery refuses to guess rather than drop acknowledged batches silently.
    #[error("log corrupt at byte offset {offset}: {reason}")]
    Corrupt {
        /// Byte offset of the damaged frame (or header field) in the file.
        offset: u64,
        /// What check failed.
        reason: String,
    },
    /// The log file is already open with an exclusive lock, by this or another process.
    #[error("log {name:?} is already open (locked by another handle or process)")]
    Locked {
        /// Name of the log.
        name: String,
    },
    /// The next sequence number or system time would overflow its 64-bit field (the clock
    /// reached `i64::MAX`).
    #[error("sequence number or system time would overflow")]
    Overflow,
    /// Another writer appended to the log first: the batch was to follow `expected`, and
    /// the log's last batch is `found`. Nothing was written; catch up and prepare again.
    #[error("another writer appended first: expected the log to end at batch {expected}, it ends at {found}")]
    Conflict {
        /// The last batch the writer had seen.
        expected: u64,
        /// The log's last batch.
        found: u64,
    },
    /// The service that keeps the log cannot be reached (or did not answer in time). The
    /// batch was not acknowledged: it was not stored, or — when the service went away
    /// after receiving it — it may be found in the log later, whole.
    #[error("the log's service is unavailable: {reason}")]
    Unavailable {
        /// What failed.
        reason: String,
    },
    /// The log was removed (its namespace dropped, by another writer of a shared log)
    /// after this handle read it: what the handle knew is gone; the log may since have
    /// begun again from batch 1.
    #[error("the log was removed: its namespace was dropped")]
    Dropped,
    /// The log's storage is laid out otherwise than this process was configured for, or
    /// a change of its layout was refused as weakening it: nothing was changed.
    #[error("the log's layout: {reason}")]
    Layout {
        /// What disagrees, naming both values.
        reason: String,
    },
    /// A record read back from the log failed its checksum or does not follow the one
    /// before it: the namespace's log is damaged; nothing after it is used.
    #[error("log record damaged at batch {after}+: {reason}")]
    Damaged {
        /// The last whole batch before the damage.
        after: u64,
        /// What check failed.
        reason: String,
    },
}
