//! Recovery on open: torn tails are cut, mid-file damage is a typed error, headers are checked.

// Helpers here are test code too (clippy.toml only exempts #[test] fns): failing loudly is the point.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use mnemo_log::{Clock, FORMAT_VERSION, Log, LogError, MemStorage, Recovery, Storage};

const NAME: &str = "log";
const FILE_HEADER: usize = 16;

fn clock(t: i64) -> Clock {
    Arc::new(move || t)
}

fn try_open(storage: &MemStorage) -> Result<(Log, Recovery), LogError> {
    Log::open(storage.open(NAME).unwrap(), clock(0))
}

/// A log holding `payloads` (times start at `t0`); returns its bytes and each frame's offset.
fn build(payloads: &[&[u8]], t0: i64) -> (Vec<u8>, Vec<usize>) {
    let storage = MemStorage::new();
    let (log, _) = Log::open(storage.open(NAME).unwrap(), clock(t0)).unwrap();
    let mut offsets = Vec::new();
    for p in payloads {
        offsets.push(log.size_bytes() as usize);
        log.append(p).unwrap();
    }
    (storage.bytes(NAME).unwrap(), offsets)
}

fn with_bytes(bytes: Vec<u8>) -> MemStorage {
    let storage = MemStorage::new();
    storage.set_bytes(NAME, bytes);
    storage
}

const PAYLOADS: [&[u8]; 3] = [b"first batch", b"second batch, a bit longer", b"third!"];

#[test]
fn torn_tail_at_every_offset_of_last_frame() {
    let (full, offsets) = build(&PAYLOADS, 0);
    let last = offsets[2];
    for cut in last..full.len() {
        let storage = with_bytes(full[..cut].to_vec());
        let (log, recovery) = try_open(&storage).unwrap();
        assert_eq!(recovery.records.len(), 2, "cut at {cut}");
        assert_eq!(recovery.records[1].payload, PAYLOADS[1]);
        assert_eq!(recovery.truncated_bytes, (cut - last) as u64, "cut at {cut}");
        assert_eq!(storage.bytes(NAME).unwrap(), full[..last], "cut at {cut}");
        assert_eq!(log.size_bytes(), last as u64);
        // Appends continue right after the last whole frame.
        assert_eq!(log.append(b"again").unwrap().seq, 3);
        drop(log);
        assert_eq!(try_open(&storage).unwrap().1.records.len(), 3);
    }
}

#[test]
fn damaged_last_frame_is_a_torn_tail() {
    let (full, offsets) = build(&PAYLOADS, 0);
    let last = offsets[2];
    for at in last..full.len() {
        let mut bytes = full.clone();
        bytes[at] ^= 0x40;
        let storage = with_bytes(bytes);
        let (_, recovery) = try_open(&storage).unwrap();
        assert_eq!(recovery.records.len(), 2, "flip at {at}");
        assert_eq!(recovery.truncated_bytes, (full.len() - last) as u64);
    }
}

#[test]
fn damage_in_a_middle_frame_is_corrupt_with_its_offset() {
    let (full, offsets) = build(&PAYLOADS, 0);
    for frame in 0..2 {
        for at in offsets[frame]..offsets[frame + 1] {
            let mut bytes = full.clone();
            bytes[at] ^= 0x01;
            match try_open(&with_bytes(bytes)) {
                Err(LogError::Corrupt { offset, reason }) => {
                    assert_eq!(offset, offsets[frame] as u64, "flip at {at}: {reason}");
                }
                Err(e) => panic!("flip at {at}: expected Corrupt, got {e}"),
                Ok((_, r)) => panic!("flip at {at}: expected Corrupt, got {r:?}"),
            }
        }
    }
}

#[test]
fn garbage_length_in_middle_frame_is_not_mistaken_for_a_tail() {
    // A high bit set in the length field makes the frame seem to run past the end of the
    // file; the header checksum exposes it, and the later frame makes it corruption.
    let (full, offsets) = build(&PAYLOADS, 0);
    let mut bytes = full.clone();
    bytes[offsets[1] + 3] ^= 0x80;
    assert!(matches!(
        try_open(&with_bytes(bytes)),
        Err(LogError::Corrupt { offset, .. }) if offset == offsets[1] as u64
    ));
}

#[test]
fn valid_frames_out_of_order_are_corrupt() {
    let (a, a_offsets) = build(&PAYLOADS, 1_000);
    let (b, b_offsets) = build(&PAYLOADS, 0);

    // seq 1 again where 3 is expected.
    let mut bytes = a.clone();
    bytes.extend_from_slice(&b[b_offsets[0]..b_offsets[1]]);
    match try_open(&with_bytes(bytes)) {
        Err(LogError::Corrupt { offset, reason }) => {
            assert_eq!(offset, a.len() as u64);
            assert!(reason.contains("sequence"), "{reason}");
        }
        other => panic!("expected Corrupt, got {:?}", other.map(|r| r.1)),
    }

    // seq 3 with a time (2) below the previous frame's (1001).
    let mut bytes = a[..a_offsets[2]].to_vec();
    bytes.extend_from_slice(&b[b_offsets[2]..]);
    match try_open(&with_bytes(bytes)) {
        Err(LogError::Corrupt { offset, reason }) => {
            assert_eq!(offset, a_offsets[2] as u64);
            assert!(reason.contains("time"), "{reason}");
        }
        other => panic!("expected Corrupt, got {:?}", other.map(|r| r.1)),
    }
}

#[test]
fn zero_filled_tail_is_torn() {
    let (mut bytes, _) = build(&PAYLOADS, 0);
    let len = bytes.len();
    bytes.extend_from_slice(&[0u8; 100]);
    let storage = with_bytes(bytes);
    let (_, recovery) = try_open(&storage).unwrap();
    assert_eq!(recovery.records.len(), 3);
    assert_eq!(recovery.truncated_bytes, 100);
    assert_eq!(storage.bytes(NAME).unwrap().len(), len);
}

#[test]
fn empty_file_gets_a_header() {
    let storage = with_bytes(Vec::new());
    let (log, recovery) = try_open(&storage).unwrap();
    assert!(recovery.records.is_empty());
    assert_eq!(recovery.truncated_bytes, 0);
    let bytes = storage.bytes(NAME).unwrap();
    assert_eq!(&bytes[..8], b"MNEMOLOG");
    assert_eq!(&bytes[8..12], &FORMAT_VERSION.to_le_bytes());
    assert_eq!(bytes.len(), FILE_HEADER);
    assert_eq!(log.size_bytes(), FILE_HEADER as u64);
}

#[test]
fn torn_file_header_is_rewritten() {
    let (full, _) = build(&[], 0);
    for cut in 1..FILE_HEADER {
        let storage = with_bytes(full[..cut].to_vec());
        let (log, recovery) = try_open(&storage).unwrap();
        assert_eq!(recovery.truncated_bytes, cut as u64);
        assert_eq!(storage.bytes(NAME).unwrap(), full);
        assert_eq!(log.append(b"x").unwrap().seq, 1);
    }
    // A file of zeros (its length reached disk, its bytes did not) holds nothing either.
    let storage = with_bytes(vec![0u8; 40]);
    let (_, recovery) = try_open(&storage).unwrap();
    assert_eq!(recovery.truncated_bytes, 40);
    assert_eq!(storage.bytes(NAME).unwrap(), full);
}

#[test]
fn bad_magic_and_unsupported_version() {
    let (full, _) = build(&PAYLOADS, 0);

    for bytes in [b"NOTALOG!".repeat(4), b"MNX".to_vec(), b"{\"json\": true}\n".to_vec()] {
        assert!(matches!(try_open(&with_bytes(bytes.clone())), Err(LogError::BadMagic)), "{bytes:?}");
    }

    let mut bytes = full.clone();
    bytes[8..12].copy_from_slice(&2u32.to_le_bytes());
    match try_open(&with_bytes(bytes)) {
        Err(LogError::UnsupportedVersion { found, supported }) => {
            assert_eq!((found, supported), (2, FORMAT_VERSION));
        }
        other => panic!("expected UnsupportedVersion, got {:?}", other.map(|r| r.1)),
    }

    let mut bytes = full.clone();
    bytes[13] = 1;
    assert!(matches!(try_open(&with_bytes(bytes)), Err(LogError::Corrupt { offset: 12, .. })));
}

#[test]
fn payloads_that_look_like_frames_do_not_confuse_recovery() {
    // Batches whose payloads are themselves whole logs.
    let (inner, _) = build(&PAYLOADS, 0);
    let (full, offsets) = build(&[&inner, &inner, &inner], 0);
    let (_, recovery) = try_open(&with_bytes(full.clone())).unwrap();
    assert_eq!(recovery.records.len(), 3);
    assert!(recovery.records.iter().all(|r| r.payload == inner));
    for cut in (offsets[2]..full.len()).step_by(7) {
        let (_, recovery) = try_open(&with_bytes(full[..cut].to_vec())).unwrap();
        assert_eq!(recovery.records.len(), 2, "cut at {cut}");
    }
}
