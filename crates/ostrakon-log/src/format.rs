//! The on-disk byte layout (see `FORMAT.md`): file header, frame header, and their encoding.
//!
//! All integers are little-endian. Checksums are CRC-32 (IEEE, as computed by `crc32fast`).

/// The file's first eight bytes.
pub(crate) const MAGIC: [u8; 8] = *b"MNEMOLOG";

/// Newest file format version; this build writes it into every new file, and reads it and every
/// older version (1: no log name in the header).
pub const FORMAT_VERSION: u32 = 2;

/// Length of a version-1 file header: magic (8) + version (4) + reserved, zero (4).
pub(crate) const V1_HEADER_LEN: usize = 16;

/// Fixed part of a version-2 file header, before the name: magic (8) + version (4) + name
/// length (2) + reserved, zero (2). The name and a CRC over everything before the CRC follow.
pub(crate) const V2_FIXED_LEN: usize = 16;

/// Length of the CRC that ends a version-2 file header.
const HEADER_CRC_LEN: usize = 4;

/// Longest possible version-2 file header: the fixed part, the longest name, the CRC.
pub(crate) const MAX_FILE_HEADER_LEN: usize = V2_FIXED_LEN + crate::storage::MAX_NAME_LEN + HEADER_CRC_LEN;

/// Version byte stored in every frame header.
pub(crate) const FRAME_VERSION: u8 = 1;

/// Frame header: payload length (4), frame version (1), reserved (3), seq (8), system time (8),
/// payload CRC (4), header CRC over the preceding 28 bytes (4).
pub(crate) const FRAME_HEADER_LEN: usize = 32;

/// Byte range of the header covered by the header CRC.
const HEADER_CRC_COVERS: usize = 28;

/// Largest accepted payload (one batch), in bytes: 256 MiB. Larger batches are rejected with
/// [`LogError::TooLarge`](crate::error::LogError::TooLarge); recovery treats a larger length field as
/// corruption.
pub const MAX_PAYLOAD_LEN: usize = 256 << 20;

/// The version-2 file header of log `name`. The caller validated the name
/// ([`validate_name`](crate::storage::validate_name)), so its length fits the `u16` field.
pub(crate) fn file_header(name: &str) -> Vec<u8> {
    let mut h = Vec::with_capacity(V2_FIXED_LEN + name.len() + HEADER_CRC_LEN);
    h.extend_from_slice(&MAGIC);
    h.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    h.extend_from_slice(&u16::try_from(name.len()).unwrap_or(u16::MAX).to_le_bytes());
    h.extend_from_slice(&[0, 0]);
    h.extend_from_slice(name.as_bytes());
    let crc = crc32fast::hash(&h);
    h.extend_from_slice(&crc.to_le_bytes());
    h
}

/// Parses a version-2 file header from the first bytes of a file (up to
/// [`MAX_FILE_HEADER_LEN`] of them, fewer when the file is shorter); the caller checked the magic
/// and the version. Returns the header's length and the name it stores, or `None` when the bytes
/// are not a whole valid header: too short, a name length above [`MAX_NAME_LEN`](crate::storage::MAX_NAME_LEN),
/// non-zero reserved bytes, or a CRC mismatch.
pub(crate) fn parse_v2_header(bytes: &[u8]) -> Option<(usize, String)> {
    let fixed = bytes.get(..V2_FIXED_LEN)?;
    let name_len = usize::from(u16::from_le_bytes([fixed[12], fixed[13]]));
    if name_len > crate::storage::MAX_NAME_LEN || fixed[14..16] != [0, 0] {
        return None;
    }
    let crc_at = V2_FIXED_LEN + name_len;
    let covered = bytes.get(..crc_at)?;
    let stored = bytes.get(crc_at..crc_at + HEADER_CRC_LEN)?;
    if crc32fast::hash(covered).to_le_bytes() != stored {
        return None;
    }
    // Writers store only names that passed validate_name (ASCII); lossy decoding just keeps a
    // foreign name printable.
    let name = String::from_utf8_lossy(&covered[V2_FIXED_LEN..]).into_owned();
    Some((crc_at + HEADER_CRC_LEN, name))
}

/// A frame header that passed its header checksum.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FrameHeader {
    pub(crate) len: u32,
    pub(crate) version: u8,
    pub(crate) reserved: [u8; 3],
    pub(crate) seq: u64,
    pub(crate) system_time: i64,
    pub(crate) payload_crc: u32,
}

/// Builds a frame for `payload` whose seq, time and header CRC are still blank (filled by
/// [`seal_frame`] once the log assigns them). The payload CRC, the expensive part, is computed
/// here so callers can do it outside the log's lock.
///
/// The caller guarantees `payload.len() <= MAX_PAYLOAD_LEN`, so the length fits in a `u32`.
pub(crate) fn unsealed_frame(payload: &[u8]) -> Vec<u8> {
    let mut frame = Vec::with_capacity(FRAME_HEADER_LEN + payload.len());
    let len = u32::try_from(payload.len()).unwrap_or(u32::MAX);
    frame.extend_from_slice(&len.to_le_bytes());
    frame.extend_from_slice(&[FRAME_VERSION, 0, 0, 0]);
    frame.extend_from_slice(&[0u8; 16]); // seq, system time: filled by seal_frame
    frame.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    frame.extend_from_slice(&[0u8; 4]); // header CRC: filled by seal_frame
    frame.extend_from_slice(payload);
    frame
}

/// Writes seq and system time into a frame from [`unsealed_frame`] and seals its header CRC.
pub(crate) fn seal_frame(frame: &mut [u8], seq: u64, system_time: i64) {
    if frame.len() < FRAME_HEADER_LEN {
        return; // unreachable: unsealed_frame always writes a whole header
    }
    frame[8..16].copy_from_slice(&seq.to_le_bytes());
    frame[16..24].copy_from_slice(&system_time.to_le_bytes());
    let crc = crc32fast::hash(&frame[..HEADER_CRC_COVERS]);
    frame[HEADER_CRC_COVERS..FRAME_HEADER_LEN].copy_from_slice(&crc.to_le_bytes());
}

/// Parses a frame header; `None` when its header CRC does not match (a torn or damaged header,
/// whose length field cannot be trusted).
pub(crate) fn parse_frame_header(h: &[u8; FRAME_HEADER_LEN]) -> Option<FrameHeader> {
    let stored = u32::from_le_bytes([h[28], h[29], h[30], h[31]]);
    if crc32fast::hash(&h[..HEADER_CRC_COVERS]) != stored {
        return None;
    }
    let u64_at = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&h[i..i + 8]);
        b
    };
    Some(FrameHeader {
        len: u32::from_le_bytes([h[0], h[1], h[2], h[3]]),
        version: h[4],
        reserved: [h[5], h[6], h[7]],
        seq: u64::from_le_bytes(u64_at(8)),
        system_time: i64::from_le_bytes(u64_at(16)),
        payload_crc: u32::from_le_bytes([h[24], h[25], h[26], h[27]]),
    })
}

/// Whether `window` (at least a header long) starts with something a writer could have produced:
/// a known frame version and zero reserved bytes (a cheap filter), and a matching header CRC.
pub(crate) fn looks_like_frame_header(window: &[u8]) -> bool {
    match window.get(..FRAME_HEADER_LEN) {
        Some(h) if h[4..8] == [FRAME_VERSION, 0, 0, 0] => {
            let mut header = [0u8; FRAME_HEADER_LEN];
            header.copy_from_slice(h);
            parse_frame_header(&header).is_some()
        }
        _ => false,
    }
}
