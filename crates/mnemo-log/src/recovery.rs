//! Recovery on open: validates the file header, reads every frame, and cuts off a torn tail.
//!
//! The rule (see `FORMAT.md`): damage that a crash during an unacknowledged write can produce,
//! which is always at the end of the file, is a torn tail and is truncated away; anything else is
//! [`LogError::Corrupt`]. A torn tail is one of:
//! - fewer bytes than a frame header left at the end;
//! - a valid header whose frame extends past the end of the file;
//! - a valid header whose payload fails its checksum while the frame ends exactly at the end;
//! - a header failing its checksum with no valid-looking frame header anywhere after it (a
//!   garbled or zero-filled last write; if a real frame followed, truncating would drop it).

use std::io;

use crate::format::{
    FILE_HEADER_LEN, FORMAT_VERSION, FRAME_HEADER_LEN, FRAME_VERSION, MAGIC, MAX_PAYLOAD_LEN, file_header,
    looks_like_frame_header, parse_frame_header,
};
use crate::{LogError, LogFile, Record};

/// How many bytes recovery reads from the file at a time.
const CHUNK: usize = 4 << 20;

/// What recovery found and left behind.
pub(crate) struct Recovered {
    /// Every whole frame, in order; seqs are exactly `1..=records.len()`.
    pub(crate) records: Vec<Record>,
    /// Bytes cut off the end of the file (a torn tail or a torn file header).
    pub(crate) truncated_bytes: u64,
    /// File length after recovery: header plus whole frames.
    pub(crate) size: u64,
}

/// Recovers `file` in place (truncating a torn tail, writing a missing header) and syncs it, so
/// that everything returned is durable even if a previous process died before syncing it.
pub(crate) fn recover(file: &mut dyn LogFile) -> Result<Recovered, LogError> {
    let file_len = file.len()?;
    let header_len = FILE_HEADER_LEN as u64;
    let mut reader = Reader::new(file_len);

    if file_len < header_len {
        // Empty, or a file header torn while it was first written: the file holds no frames,
        // so rewriting the header loses nothing.
        let mut prefix = vec![0u8; usize::try_from(file_len).unwrap_or(FILE_HEADER_LEN)];
        file.read_at(0, &mut prefix)?;
        let magic_prefix = prefix.iter().zip(MAGIC.iter()).all(|(a, b)| a == b);
        if !magic_prefix && !prefix.iter().all(|&b| b == 0) {
            return Err(LogError::BadMagic);
        }
        write_fresh_header(file, file_len)?;
        return Ok(Recovered { records: Vec::new(), truncated_bytes: file_len, size: header_len });
    }

    let mut header = [0u8; FILE_HEADER_LEN];
    header.copy_from_slice(reader.get(&*file, 0, FILE_HEADER_LEN)?);
    if header[..8] != MAGIC {
        // A file whose header write was lost but whose length was extended reads as zeros.
        if reader.all_zero_from(&*file, 0)? {
            write_fresh_header(file, file_len)?;
            return Ok(Recovered { records: Vec::new(), truncated_bytes: file_len, size: header_len });
        }
        return Err(LogError::BadMagic);
    }
    let version = u32::from_le_bytes([header[8], header[9], header[10], header[11]]);
    if version != FORMAT_VERSION {
        return Err(LogError::UnsupportedVersion { found: version, supported: FORMAT_VERSION });
    }
    if header[12..16] != [0, 0, 0, 0] {
        return corrupt(12, "reserved file header bytes are not zero");
    }

    let mut records = Vec::new();
    let mut pos = header_len;
    let mut prev_time: Option<i64> = None;
    // `torn` is set when the loop stops at a torn tail instead of at the exact end of the file.
    let mut torn = false;
    while pos < file_len {
        let remaining = file_len - pos;
        if remaining < FRAME_HEADER_LEN as u64 {
            torn = true;
            break;
        }
        let mut raw = [0u8; FRAME_HEADER_LEN];
        raw.copy_from_slice(reader.get(&*file, pos, FRAME_HEADER_LEN)?);
        let Some(h) = parse_frame_header(&raw) else {
            if reader.frame_header_after(&*file, pos + 1)? {
                return corrupt(pos, "frame header checksum mismatch before later frames");
            }
            torn = true;
            break;
        };
        // The header checksum matched, so these fields are what a writer wrote: any
        // inconsistency is a bug or tampering, never a crash artifact, wherever it is.
        if h.version != FRAME_VERSION {
            return Err(LogError::UnsupportedVersion {
                found: u32::from(h.version),
                supported: FORMAT_VERSION,
            });
        }
        if h.reserved != [0, 0, 0] {
            return corrupt(pos, "reserved frame header bytes are not zero");
        }
        let len = h.len as usize;
        if len > MAX_PAYLOAD_LEN {
            return corrupt(pos, format!("payload length {len} exceeds the limit"));
        }
        let expected_seq = records.len() as u64 + 1;
        if h.seq != expected_seq {
            return corrupt(pos, format!("sequence number {} where {expected_seq} was expected", h.seq));
        }
        if let Some(prev) = prev_time
            && h.system_time <= prev
        {
            return corrupt(
                pos,
                format!("system time {} does not increase (previous {prev})", h.system_time),
            );
        }
        let end = pos + (FRAME_HEADER_LEN + len) as u64;
        if end > file_len {
            torn = true;
            break;
        }
        let payload = reader.get(&*file, pos + FRAME_HEADER_LEN as u64, len)?;
        if crc32fast::hash(payload) != h.payload_crc {
            if end == file_len {
                torn = true;
                break;
            }
            return corrupt(pos, "payload checksum mismatch before later frames");
        }
        records.push(Record { seq: h.seq, system_time: h.system_time, payload: payload.to_vec() });
        prev_time = Some(h.system_time);
        pos = end;
    }

    let truncated_bytes = if torn { file_len - pos } else { 0 };
    if torn {
        file.truncate(pos)?;
    }
    // Sync unconditionally: the bytes read may be in the OS cache only, written by a process
    // that died before syncing; what recovery reports must be durable.
    file.sync()?;
    Ok(Recovered { records, truncated_bytes, size: pos })
}

fn corrupt<T>(offset: u64, reason: impl Into<String>) -> Result<T, LogError> {
    Err(LogError::Corrupt { offset, reason: reason.into() })
}

/// Replaces a file that holds no frames (`old_len` bytes of torn header or zeros) with a fresh
/// header, synced.
fn write_fresh_header(file: &mut dyn LogFile, old_len: u64) -> Result<(), LogError> {
    if old_len > 0 {
        file.truncate(0)?;
    }
    file.append(&file_header())?;
    file.sync()?;
    Ok(())
}

/// Reads a file through one window of up to [`CHUNK`] bytes (or one frame, if larger), so that
/// recovery issues few large reads.
struct Reader {
    file_len: u64,
    buf: Vec<u8>,
    buf_start: u64,
}

impl Reader {
    fn new(file_len: u64) -> Self {
        Reader { file_len, buf: Vec::new(), buf_start: 0 }
    }

    /// Bytes `pos..pos + n`; the caller checked that they lie within the file.
    fn get(&mut self, file: &dyn LogFile, pos: u64, n: usize) -> io::Result<&[u8]> {
        let end = pos + n as u64;
        let buf_end = self.buf_start + self.buf.len() as u64;
        if pos < self.buf_start || end > buf_end {
            let left = usize::try_from(self.file_len.saturating_sub(pos)).unwrap_or(usize::MAX);
            let want = n.max(CHUNK).min(left).max(n);
            self.buf.resize(want, 0);
            file.read_at(pos, &mut self.buf)?;
            self.buf_start = pos;
        }
        let from = usize::try_from(pos - self.buf_start).unwrap_or(0);
        Ok(&self.buf[from..from + n])
    }

    /// Whether any offset at or after `from` holds a frame header with a valid checksum.
    fn frame_header_after(&mut self, file: &dyn LogFile, from: u64) -> io::Result<bool> {
        let mut start = from;
        while start + FRAME_HEADER_LEN as u64 <= self.file_len {
            let n = usize::try_from(self.file_len - start).unwrap_or(usize::MAX).min(CHUNK);
            let window = self.get(file, start, n)?;
            if (0..=n - FRAME_HEADER_LEN).any(|i| looks_like_frame_header(&window[i..])) {
                return Ok(true);
            }
            // Windows overlap by a header length minus one so no header start is missed.
            start += (n - FRAME_HEADER_LEN + 1) as u64;
        }
        Ok(false)
    }

    /// Whether every byte from `from` to the end of the file is zero.
    fn all_zero_from(&mut self, file: &dyn LogFile, from: u64) -> io::Result<bool> {
        let mut start = from;
        while start < self.file_len {
            let n = usize::try_from(self.file_len - start).unwrap_or(usize::MAX).min(CHUNK);
            if self.get(file, start, n)?.iter().any(|&b| b != 0) {
                return Ok(false);
            }
            start += n as u64;
        }
        Ok(true)
    }
}
