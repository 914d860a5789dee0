//! What the log hands back: a batch read from it ([`Record`]), a durable batch's identity
//! ([`Committed`]), and what recovery found in the file ([`Recovery`], [`Truncation`]).

/// One batch read back from the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Sequence number: 1 for the first batch, +1 for each next one.
    pub seq: u64,
    /// System time assigned at commit, microseconds since the Unix epoch; strictly increasing.
    pub system_time: i64,
    /// The batch's bytes, exactly as appended.
    pub payload: Vec<u8>,
}

impl Record {
    /// The bytes it takes in the log file: its frame header and payload.
    pub fn frame_len(&self) -> u64 {
        (crate::format::FRAME_HEADER_LEN + self.payload.len()) as u64
    }
}

/// Identity of a durable batch, returned by `Log::append`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Committed {
    /// Sequence number assigned to the batch.
    pub seq: u64,
    /// System time assigned to the batch, microseconds since the Unix epoch.
    pub system_time: i64,
}

/// What `Log::open` found in the file (or, from `Log::inspect`, what it would find).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovery {
    /// Every batch in the log, in order; seqs are exactly `1..=records.len()`.
    pub records: Vec<Record>,
    /// What was cut off the end of the file (by `Log::inspect`: what `Log::open` would cut):
    /// a torn tail (an unacknowledged write interrupted by a crash) or a torn file header.
    /// `None` after a clean shutdown.
    pub truncation: Option<Truncation>,
    /// Format version of the file's header: the version found, or [`FORMAT_VERSION`] when the
    /// file had no valid header yet (see `new_header`).
    ///
    /// [`FORMAT_VERSION`]: crate::format::FORMAT_VERSION
    pub format_version: u32,
    /// The log name stored in the file header: `None` for a version-1 file (which stores none),
    /// and for `Log::inspect` of a file without a valid header. `Log::open` checked that it
    /// is the name it was given.
    pub name: Option<String>,
    /// Whether the file had no valid header (empty, or a header torn while first written and
    /// followed by no frame), so `Log::open` wrote a new one (and `Log::inspect` found
    /// none).
    pub new_header: bool,
}

impl Recovery {
    /// Bytes cut off the end of the file (0 when nothing was).
    pub fn truncated_bytes(&self) -> u64 {
        self.truncation.as_ref().map_or(0, |t| t.bytes)
    }
}

/// A cut made by recovery (or, from `Log::inspect`, one it would make): everything from
/// `offset` to the old end of the file, which a crash left torn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Truncation {
    /// Where the file was cut: the end of the last whole frame, or 0 for a torn file header.
    pub offset: u64,
    /// How many bytes were cut: `file_len_before - offset`.
    pub bytes: u64,
    /// Frames in the cut region whose header was readable (passed its checksum), counted from
    /// `offset` while each one's length leads to the next: the unacknowledged batches lost,
    /// at least those still recognisable. Batches whose headers were destroyed too are not
    /// counted.
    pub batches: u64,
    /// Length of the file before the cut.
    pub file_len_before: u64,
}
