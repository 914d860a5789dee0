//! Checkpoints: the folded state of a namespace at one batch, as bytes, so that opening it
//! loads that state and replays only the log after it. A checkpoint is derived: it can be
//! deleted at any time, and one that is missing, damaged, of another format or of another
//! log is ignored (the state is rebuilt by replay). The layout is in `CHECKPOINT.md`
//! beside this crate.
//!
//! The payload is the [`NamespaceIndex`] as postcard writes it, so its layout follows the
//! index's structures: any change to them must raise [`CHECKPOINT_VERSION`] (the test
//! `a_checkpoint_of_the_stored_format_still_loads` fails until it is raised and its
//! fixture written anew).

use ostrakon_core::{Seq, Timestamp};

use crate::state::NamespaceIndex;

/// The first bytes of a checkpoint file.
pub const CHECKPOINT_MAGIC: &[u8; 8] = b"MNEMOCKP";
/// The format of checkpoints written now; a file of any other is ignored.
pub const CHECKPOINT_VERSION: u32 = 8;
/// Bytes before the payload.
pub const CHECKPOINT_HEADER_LEN: usize = 52;

/// What a checkpoint says of itself, read from its header alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckpointHeader {
    /// Its format.
    pub version: u32,
    /// The last batch folded in.
    pub seq: Seq,
    /// That batch's system time: a log whose batch `seq` has another is another log.
    pub system_time: Timestamp,
    /// The first batch's system time (`Timestamp::MIN` when `seq` is 0), likewise.
    pub first_time: Timestamp,
    /// Length of the payload.
    pub payload_len: u64,
}

/// Why a checkpoint cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CheckpointError {
    /// Shorter than its header or its payload, or not a checkpoint.
    #[error("not a checkpoint, or cut short: {0}")]
    Malformed(String),
    /// Another format.
    #[error("checkpoint format {found}, this build reads {CHECKPOINT_VERSION}")]
    Version {
        /// The format found.
        found: u32,
    },
    /// A checksum does not match.
    #[error("checkpoint damaged: the {0} checksum does not match")]
    Checksum(&'static str),
    /// The payload does not decode as the state.
    #[error("checkpoint payload does not decode: {0}")]
    Payload(String),
}

/// The checkpoint of `index` (at its last batch).
pub fn encode(index: &NamespaceIndex) -> Vec<u8> {
    // A `NamespaceIndex` holds only plain data, which postcard always encodes. Its size is
    // counted first, so that the payload is written once, after its header, into a buffer
    // of the right size (growing one by doubling copied and faulted in the payload
    // several times over: a third of a large checkpoint's time).
    let size = postcard::experimental::serialized_size(index).unwrap_or_default();
    let mut out = Vec::with_capacity(CHECKPOINT_HEADER_LEN + size);
    out.resize(CHECKPOINT_HEADER_LEN, 0);
    let mut out = postcard::to_extend(index, out).unwrap_or_default();
    let payload_len = out.len().saturating_sub(CHECKPOINT_HEADER_LEN);
    let payload_crc = crc32fast::hash(out.get(CHECKPOINT_HEADER_LEN..).unwrap_or_default());
    let seq = index.last_seq();
    let mut head = Vec::with_capacity(CHECKPOINT_HEADER_LEN);
    head.extend_from_slice(CHECKPOINT_MAGIC);
    head.extend_from_slice(&CHECKPOINT_VERSION.to_le_bytes());
    head.extend_from_slice(&seq.0.to_le_bytes());
    head.extend_from_slice(&index.system_time(seq).unwrap_or(Timestamp::MIN).as_micros().to_le_bytes());
    head.extend_from_slice(&index.system_time(Seq(1)).unwrap_or(Timestamp::MIN).as_micros().to_le_bytes());
    head.extend_from_slice(&(payload_len as u64).to_le_bytes());
    head.extend_from_slice(&payload_crc.to_le_bytes());
    let header_crc = crc32fast::hash(&head);
    head.extend_from_slice(&header_crc.to_le_bytes());
    debug_assert_eq!(head.len(), CHECKPOINT_HEADER_LEN);
    if out.len() < CHECKPOINT_HEADER_LEN {
        // Unreachable (postcard encodes plain data); an empty payload still gets a header.
        out = vec![0; CHECKPOINT_HEADER_LEN];
    }
    out[..CHECKPOINT_HEADER_LEN].copy_from_slice(&head);
    out
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(b)
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(b)
}

/// The header of a checkpoint, checked (magic, format, header checksum).
pub fn header(bytes: &[u8]) -> Result<CheckpointHeader, CheckpointError> {
    if bytes.len() < CHECKPOINT_HEADER_LEN {
        return Err(CheckpointError::Malformed(format!("{} bytes, shorter than a header", bytes.len())));
    }
    if &bytes[..8] != CHECKPOINT_MAGIC {
        return Err(CheckpointError::Malformed("no MNEMOCKP magic".into()));
    }
    if crc32fast::hash(&bytes[..CHECKPOINT_HEADER_LEN - 4]) != u32_at(bytes, CHECKPOINT_HEADER_LEN - 4) {
        return Err(CheckpointError::Checksum("header"));
    }
    let version = u32_at(bytes, 8);
    if version != CHECKPOINT_VERSION {
        return Err(CheckpointError::Version { found: version });
    }
    Ok(CheckpointHeader {
        version,
        seq: Seq(u64_at(bytes, 12)),
        system_time: Timestamp::from_micros(u64_at(bytes, 20) as i64),
        first_time: Timestamp::from_micros(u64_at(bytes, 28) as i64),
        payload_len: u64_at(bytes, 36),
    })
}

/// The state a checkpoint holds, checked whole.
pub fn decode(bytes: &[u8]) -> Result<(CheckpointHeader, NamespaceIndex), CheckpointError> {
    let head = header(bytes)?;
    let payload = &bytes[CHECKPOINT_HEADER_LEN..];
    if payload.len() as u64 != head.payload_len {
        return Err(CheckpointError::Malformed(format!(
            "payload of {} bytes, the header says {}",
            payload.len(),
            head.payload_len
        )));
    }
    if crc32fast::hash(payload) != u32_at(bytes, 44) {
        return Err(CheckpointError::Checksum("payload"));
    }
    let mut index: NamespaceIndex =
        postcard::from_bytes(payload).map_err(|e| CheckpointError::Payload(e.to_string()))?;
    index.rebuild_slot_starts();
    if index.last_seq() != head.seq {
        return Err(CheckpointError::Payload(format!(
            "the state ends at batch {}, the header says {}",
            index.last_seq().0,
            head.seq.0
        )));
    }
    Ok((head, index))
}
