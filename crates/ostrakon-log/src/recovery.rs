//! Recovery on open: validates the file header, reads every frame, and cuts off a torn tail.
//!
//! The rule (see `FORMAT.md`): damage that a crash during an unacknowledged write can produce,
//! which is always at the end of the file, is a torn tail and is truncated away; anything else is
//! [`LogError::Corrupt`]. A torn tail is one of:
//! - fewer bytes than a frame header left at the end;
//! - a valid header whose frame extends past the end of the file;
//! - a valid header whose payload fails its checksum, with no valid-looking frame header starting
//!   anywhere after that frame (a group write zero-filled or garbled from inside this frame on);
//! - a header failing its checksum with no valid-looking frame header anywhere after it (a
//!   garbled or zero-filled last write; if a real frame followed, truncating would drop it).
//!
//! Classification ([`scan`]) only reads; [`recover`] then applies what it found. So
//! `Log::inspect` reports exactly what `Log::open`
//! would do.

use std::io;

use crate::format::{
    FORMAT_VERSION, FRAME_HEADER_LEN, FRAME_VERSION, MAGIC, MAX_FILE_HEADER_LEN, MAX_PAYLOAD_LEN,
    V1_HEADER_LEN, file_header, looks_like_frame_header, parse_frame_header, parse_v2_header,
};
use crate::{error::LogError, record::Record, record::Recovery, record::Truncation, storage::LogFile};

/// How many bytes recovery reads from the file at a time.
const CHUNK: usize = 4 << 20;

/// What a scan found, and the file length once its findings are applied.
pub(crate) struct Scan {
    /// What the file holds and what recovery cuts (or would cut).
    pub(crate) recovery: Recovery,
    /// File length after recovery: header plus whole frames. After a scan with no expected name
    /// of a file without a valid header, 0 (no header would be written).
    pub(crate) size: u64,
}

/// Recovers log `name` in `file` in place (truncating a torn tail, writing a missing header) and
/// syncs it, so that everything returned is durable even if a previous process died before
/// syncing it. The caller validated `name`.
pub(crate) fn recover(file: &mut dyn LogFile, name: &str) -> Result<Scan, LogError> {
    let found = scan(&*file, Some(name))?;
    if found.recovery.new_header {
        // The file holds no frames (see `read_header`), so replacing it loses nothing.
        if found.recovery.truncation.is_some() {
            file.truncate(0)?;
        }
        file.append(&file_header(name))?;
    } else if let Some(cut) = &found.recovery.truncation {
        file.truncate(cut.offset)?;
    }
    // Sync unconditionally: the bytes read may be in the OS cache only, written by a process
    // that died before syncing; what recovery reports must be durable. A new header is thus
    // durable before any frame is written after it.
    file.sync()?;
    Ok(found)
}

/// Reads and classifies `file` without changing it. With `expected` set, a header naming
/// another log is [`LogError::WrongName`], and a file without a valid header is reported with
/// the header of `expected` that [`recover`] writes.
pub(crate) fn scan(file: &dyn LogFile, expected: Option<&str>) -> Result<Scan, LogError> {
    let file_len = file.len()?;
    let mut reader = Reader::new(file_len);

    let (format_version, header_len, name) = match read_header(&mut reader, file, file_len)? {
        Header::Valid { version, len, name } => (version, len, name),
        Header::Missing => {
            let truncation = (file_len > 0).then_some(Truncation {
                offset: 0,
                bytes: file_len,
                batches: 0,
                file_len_before: file_len,
            });
            let recovery = Recovery {
                records: Vec::new(),
                truncation,
                format_version: FORMAT_VERSION,
                name: expected.map(str::to_owned),
                new_header: true,
            };
            let size = expected.map_or(0, |n| file_header(n).len() as u64);
            return Ok(Scan { recovery, size });
        }
    };
    if let (Some(expected), Some(found)) = (expected, &name)
        && expected != found
    {
        return Err(LogError::WrongName { expected: expected.to_owned(), found: found.clone() });
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
        raw.copy_from_slice(reader.get(file, pos, FRAME_HEADER_LEN)?);
        let Some(h) = parse_frame_header(&raw) else {
            if reader.frame_header_after(file, pos + 1)? {
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
                supported: u32::from(FRAME_VERSION),
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
        let payload = reader.get(file, pos + FRAME_HEADER_LEN as u64, len)?;
        if crc32fast::hash(payload) == h.payload_crc {
            records.push(Record { seq: h.seq, system_time: h.system_time, payload: payload.to_vec() });
            prev_time = Some(h.system_time);
            pos = end;
            continue;
        }
        // The payload is damaged. One group write holds several frames, so a crash that
        // zero-fills or garbles it from inside this frame on damages every frame after it
        // too: that is a torn tail exactly when no valid-looking frame header starts after
        // this frame. The search starts at the frame's end, not inside its payload: the header
        // passed its checksum, so its length is trusted, the next frame can only start at
        // `end`, and the payload's own bytes (which may hold anything, a log file included)
        // are no evidence. Any acknowledged frame after the damage would be found, so this
        // never truncates one (I5).
        if reader.frame_header_after(file, end)? {
            return corrupt(pos, "payload checksum mismatch before later frames");
        }
        torn = true;
        break;
    }

    let truncation = if torn {
        Some(Truncation {
            offset: pos,
            bytes: file_len - pos,
            batches: reader.readable_frames(file, pos)?,
            file_len_before: file_len,
        })
    } else {
        None
    };
    let recovery = Recovery { records, truncation, format_version, name, new_header: false };
    Ok(Scan { recovery, size: pos })
}

fn corrupt<T>(offset: u64, reason: impl Into<String>) -> Result<T, LogError> {
    Err(LogError::Corrupt { offset, reason: reason.into() })
}

/// The file header as found.
enum Header {
    /// A header that passed every check: its format version, its length, and the log name it
    /// stores (version 2 on).
    Valid { version: u32, len: u64, name: Option<String> },
    /// No header: an empty file, or one whose first write (the header) was torn by a crash. Such
    /// a file holds no frames, since the header is synced before any frame is written.
    Missing,
}

/// Reads and checks the file header (see the header table in `FORMAT.md`).
fn read_header(reader: &mut Reader, file: &dyn LogFile, file_len: u64) -> Result<Header, LogError> {
    if file_len == 0 {
        return Ok(Header::Missing);
    }
    let n = usize::try_from(file_len).map_or(MAX_FILE_HEADER_LEN, |l| l.min(MAX_FILE_HEADER_LEN));
    let head = reader.get(file, 0, n)?.to_vec();
    let magic_len = head.len().min(MAGIC.len());
    if head[..magic_len] != MAGIC[..magic_len] {
        // A file whose first write's length reached the disk but whose data did not reads as
        // zeros. Anything else is not an Ostrakon log (or its magic is damaged): never overwrite it.
        if reader.all_zero_from(file, 0)? {
            return Ok(Header::Missing);
        }
        return Err(LogError::BadMagic);
    }
    let Some(version_bytes) = head.get(8..12) else {
        // Torn within the magic or the version: what follows the magic must be the start of a
        // version this build writes or wrote (1 or 2, little-endian), or zeros.
        let tail = &head[magic_len..];
        let prefix_of = |v: [u8; 4]| tail.iter().zip(v).all(|(&a, b)| a == b);
        if prefix_of([1, 0, 0, 0]) || prefix_of([2, 0, 0, 0]) || prefix_of([0; 4]) {
            return Ok(Header::Missing);
        }
        return corrupt(8, "torn file header with an unknown version");
    };
    let version =
        u32::from_le_bytes([version_bytes[0], version_bytes[1], version_bytes[2], version_bytes[3]]);
    match version {
        1 => {
            let reserved = &head[12..head.len().min(V1_HEADER_LEN)];
            if reserved.iter().any(|&b| b != 0) {
                return corrupt(12, "reserved file header bytes are not zero");
            }
            if head.len() < V1_HEADER_LEN {
                // A version-1 header torn while first written (by an older build).
                return Ok(Header::Missing);
            }
            Ok(Header::Valid { version: 1, len: V1_HEADER_LEN as u64, name: None })
        }
        2 => match parse_v2_header(&head) {
            Some((len, name)) => Ok(Header::Valid { version: 2, len: len as u64, name: Some(name) }),
            // Cut short or failing its checks. The header is written with one append and
            // synced before any frame, so if no frame follows, this is that first write torn
            // by a crash (the file holds nothing); a header damaged in a file with frames is
            // corruption.
            None if reader.frame_header_after(file, 1)? => {
                corrupt(0, "file header damaged (checksum or fields) before frames")
            }
            None => Ok(Header::Missing),
        },
        // The magic reached the disk and the rest of the first write was zero-filled.
        0 if reader.all_zero_from(file, 8)? => Ok(Header::Missing),
        found => Err(LogError::UnsupportedVersion { found, supported: FORMAT_VERSION }),
    }
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

    /// How many frames with a readable header (valid checksum) follow each other from `from`:
    /// each one's length leads to the next, and the count stops at the first header that is
    /// cut short or fails its checksum.
    fn readable_frames(&mut self, file: &dyn LogFile, from: u64) -> io::Result<u64> {
        let mut count = 0;
        let mut pos = from;
        while pos + FRAME_HEADER_LEN as u64 <= self.file_len {
            let mut raw = [0u8; FRAME_HEADER_LEN];
            raw.copy_from_slice(self.get(file, pos, FRAME_HEADER_LEN)?);
            let Some(h) = parse_frame_header(&raw) else { break };
            count += 1;
            pos += (FRAME_HEADER_LEN as u64) + u64::from(h.len);
        }
        Ok(count)
    }
}
