//! Frames outside a file: the same checksummed frame the file log writes, encoded and
//! verified on its own, for a backend that stores records elsewhere (a replicated
//! stream keeps each message as one or more frames back to back).

use crate::format::{FRAME_HEADER_LEN, FRAME_VERSION, parse_frame_header, seal_frame, unsealed_frame};
use crate::record::Record;

/// The frame of one batch: header (length, version, seq, system time, payload CRC, header
/// CRC) and payload, byte for byte as the file log writes it (see `FORMAT.md`).
pub fn encode_frame(seq: u64, system_time: i64, payload: &[u8]) -> Vec<u8> {
    let mut frame = unsealed_frame(payload);
    seal_frame(&mut frame, seq, system_time);
    frame
}

/// The records in `bytes`: whole frames back to back, each header and payload checksum
/// verified. Any damage — a short or torn frame, a checksum that does not match, an
/// unknown version — is an error naming the byte offset and what failed; nothing is
/// guessed.
pub fn decode_frames(bytes: &[u8]) -> Result<Vec<Record>, (usize, String)> {
    let mut records = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let Some(head) = bytes.get(at..at + FRAME_HEADER_LEN) else {
            return Err((at, format!("{} bytes left, shorter than a frame header", bytes.len() - at)));
        };
        let mut header = [0u8; FRAME_HEADER_LEN];
        header.copy_from_slice(head);
        let Some(h) = parse_frame_header(&header) else {
            return Err((at, "frame header checksum mismatch".into()));
        };
        if h.version != FRAME_VERSION || h.reserved != [0, 0, 0] {
            return Err((at, format!("unknown frame version {}", h.version)));
        }
        let start = at + FRAME_HEADER_LEN;
        let end = start.saturating_add(h.len as usize);
        let Some(payload) = bytes.get(start..end) else {
            return Err((at, format!("frame of {} bytes runs past the end", h.len)));
        };
        if crc32fast::hash(payload) != h.payload_crc {
            return Err((at, "payload checksum mismatch".into()));
        }
        records.push(Record { seq: h.seq, system_time: h.system_time, payload: payload.to_vec() });
        at = end;
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_any_flipped_byte_is_refused() {
        let mut bytes = encode_frame(7, 1_000, b"first");
        bytes.extend(encode_frame(8, 1_001, b"second batch"));
        let records = decode_frames(&bytes).unwrap_or_default();
        assert_eq!(records.len(), 2);
        assert_eq!(
            (records[1].seq, records[1].system_time, &records[1].payload[..]),
            (8, 1_001, &b"second batch"[..])
        );
        for i in 0..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[i] ^= 0x40;
            assert!(decode_frames(&damaged).is_err(), "a flipped byte at {i} was not noticed");
        }
        assert!(decode_frames(&bytes[..bytes.len() - 1]).is_err());
    }
}
