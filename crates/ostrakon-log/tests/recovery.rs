//! Recovery on open: torn tails are cut, mid-file damage is a typed error, headers are checked.

// Helpers here are test code too (clippy.toml only exempts #[test] fns): failing loudly is the point.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use ostrakon_log::{Clock, FORMAT_VERSION, Log, LogError, MemStorage, Recovery, Storage, Truncation};

const NAME: &str = "log";
/// A version-2 file header: fixed part (16), the name, CRC (4).
const FILE_HEADER: usize = 16 + NAME.len() + 4;

fn clock(t: i64) -> Clock {
    Arc::new(move || t)
}

fn try_open(storage: &MemStorage) -> Result<(Log, Recovery), LogError> {
    Log::open(storage.open(NAME).unwrap(), NAME, clock(0))
}

/// A log holding `payloads` (times start at `t0`); returns its bytes and each frame's offset.
fn build(payloads: &[&[u8]], t0: i64) -> (Vec<u8>, Vec<usize>) {
    let storage = MemStorage::new();
    let (log, _) = Log::open(storage.open(NAME).unwrap(), NAME, clock(t0)).unwrap();
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

/// The same log as a version-1 file (16-byte header, no name): frames do not depend on the
/// header, so this is exactly what an older build wrote.
fn to_v1(v2: &[u8]) -> Vec<u8> {
    let mut bytes = b"MNEMOLOG".to_vec();
    bytes.extend_from_slice(&1u32.to_le_bytes());
    bytes.extend_from_slice(&[0; 4]);
    bytes.extend_from_slice(&v2[FILE_HEADER..]);
    bytes
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
        assert_eq!(recovery.truncated_bytes(), (cut - last) as u64, "cut at {cut}");
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
        assert_eq!(recovery.truncated_bytes(), (full.len() - last) as u64);
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
    assert_eq!(recovery.truncated_bytes(), 100);
    assert_eq!(storage.bytes(NAME).unwrap().len(), len);
}

#[test]
fn empty_file_gets_a_header() {
    let storage = with_bytes(Vec::new());
    let (log, recovery) = try_open(&storage).unwrap();
    assert!(recovery.records.is_empty());
    assert_eq!(recovery.truncated_bytes(), 0);
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
        assert_eq!(recovery.truncated_bytes(), cut as u64);
        assert_eq!(storage.bytes(NAME).unwrap(), full);
        assert_eq!(log.append(b"x").unwrap().seq, 1);
    }
    // A file of zeros (its length reached disk, its bytes did not) holds nothing either.
    let storage = with_bytes(vec![0u8; 40]);
    let (_, recovery) = try_open(&storage).unwrap();
    assert_eq!(recovery.truncated_bytes(), 40);
    assert_eq!(storage.bytes(NAME).unwrap(), full);
}

#[test]
fn bad_magic_and_unsupported_version() {
    let (full, _) = build(&PAYLOADS, 0);

    for bytes in [b"NOTALOG!".repeat(4), b"MNX".to_vec(), b"{\"json\": true}\n".to_vec()] {
        assert!(matches!(try_open(&with_bytes(bytes.clone())), Err(LogError::BadMagic)), "{bytes:?}");
    }

    let mut bytes = full.clone();
    bytes[8..12].copy_from_slice(&3u32.to_le_bytes());
    match try_open(&with_bytes(bytes)) {
        Err(LogError::UnsupportedVersion { found, supported }) => {
            assert_eq!((found, supported), (3, FORMAT_VERSION));
        }
        other => panic!("expected UnsupportedVersion, got {:?}", other.map(|r| r.1)),
    }

    // Non-zero reserved bytes: in a version-1 header a field error at its offset; in a
    // version-2 header (covered by its CRC) a damaged header, corrupt since frames follow.
    let mut bytes = to_v1(&full);
    bytes[13] = 1;
    assert!(matches!(try_open(&with_bytes(bytes)), Err(LogError::Corrupt { offset: 12, .. })));
    let mut bytes = full.clone();
    bytes[15] = 1;
    assert!(matches!(try_open(&with_bytes(bytes)), Err(LogError::Corrupt { offset: 0, .. })));
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

/// A log of `acked` batches appended one by one (each its own group), then `group` batches
/// submitted together and made durable by one wait (one group write: one append, one sync),
/// then `after` appended one by one. Returns the bytes and every frame's offset, in order.
fn build_with_group(acked: &[&[u8]], group: &[&[u8]], after: &[&[u8]]) -> (Vec<u8>, Vec<usize>) {
    let storage = MemStorage::new();
    let (log, _) = Log::open(storage.open(NAME).unwrap(), NAME, clock(0)).unwrap();
    for p in acked {
        log.append(p).unwrap();
    }
    let before = storage.bytes(NAME).unwrap().len();
    let tickets: Vec<_> = group.iter().map(|p| log.submit(p).unwrap()).collect();
    // Nothing is written until a wait leads the group.
    assert_eq!(storage.bytes(NAME).unwrap().len(), before);
    let mut tickets = tickets.into_iter();
    let first = tickets.next().unwrap();
    log.wait(first).unwrap();
    // The first wait wrote and synced the whole group; the others find their batch durable.
    assert_eq!(log.last().map(|c| c.seq), Some((acked.len() + group.len()) as u64));
    for t in tickets {
        log.wait(t).unwrap();
    }
    for p in after {
        log.append(p).unwrap();
    }
    let bytes = storage.bytes(NAME).unwrap();
    let mut offsets = vec![FILE_HEADER];
    for p in acked.iter().chain(group).chain(after) {
        offsets.push(offsets[offsets.len() - 1] + 32 + p.len());
    }
    assert_eq!(offsets.pop(), Some(bytes.len()));
    (bytes, offsets)
}

// Payloads without zero bytes, so zero-filling one always damages it.
const ACKED: [&[u8]; 2] = [b"acknowledged one", b"acknowledged two, longer"];
const GROUP: [&[u8]; 4] = [b"group a", b"group b is the longest of them all", b"group c", b"group d!"];

/// Damage from `start` to the end of the file: zeros, or every byte garbled (xor, so each one
/// differs from what was written).
fn damage_to_end(bytes: &[u8], start: usize, zeros: bool) -> Vec<u8> {
    let mut b = bytes.to_vec();
    for x in &mut b[start..] {
        *x = if zeros { 0 } else { *x ^ 0x5a };
    }
    b
}

#[test]
fn group_write_damaged_from_inside_any_frame_is_a_torn_tail() {
    let (full, offsets) = build_with_group(&ACKED, &GROUP, &[]);
    let payloads: Vec<&[u8]> = ACKED.iter().chain(&GROUP).copied().collect();
    for k in ACKED.len()..payloads.len() {
        let frame = offsets[k];
        let frame_end = offsets.get(k + 1).copied().unwrap_or(full.len());
        for start in frame..frame_end {
            for zeros in [true, false] {
                let what = format!("frame {k}, damage from {start}, zeros {zeros}");
                let storage = with_bytes(damage_to_end(&full, start, zeros));
                let (log, recovery) = try_open(&storage).unwrap_or_else(|e| panic!("{what}: {e}"));
                // Every frame before the damaged one is whole and kept; the damaged one and
                // everything after it (the rest of the unacknowledged group) is the tail.
                let got: Vec<&[u8]> = recovery.records.iter().map(|r| r.payload.as_slice()).collect();
                assert_eq!(got, payloads[..k], "{what}");
                let header_readable = start >= frame + 32;
                assert_eq!(
                    recovery.truncation,
                    Some(Truncation {
                        offset: frame as u64,
                        bytes: (full.len() - frame) as u64,
                        batches: u64::from(header_readable),
                        file_len_before: full.len() as u64,
                    }),
                    "{what}"
                );
                assert_eq!(storage.bytes(NAME).unwrap(), full[..frame], "{what}");
                assert_eq!(log.append(b"next").unwrap().seq, k as u64 + 1, "{what}");
            }
        }
    }
}

#[test]
fn damage_before_an_acknowledged_frame_is_still_corrupt() {
    // The group is followed by an acknowledged batch: damage inside the group is no tail.
    let (full, offsets) = build_with_group(&ACKED, &GROUP, &[b"acknowledged after the group"]);
    let last = offsets[offsets.len() - 1];
    for (k, &frame) in offsets.iter().enumerate().skip(ACKED.len()).take(GROUP.len()) {
        for start in [frame + 3, frame + 31, frame + 32, frame + 35] {
            for zeros in [true, false] {
                // Damaged from `start` up to the acknowledged frame, which stays intact.
                let mut bytes = damage_to_end(&full, start, zeros);
                bytes[last..].copy_from_slice(&full[last..]);
                match try_open(&with_bytes(bytes)) {
                    Err(LogError::Corrupt { offset, .. }) => {
                        assert_eq!(offset, frame as u64, "frame {k} from {start}")
                    }
                    Err(e) => panic!("frame {k} from {start}: expected Corrupt, got {e}"),
                    Ok((_, r)) => panic!("frame {k} from {start}: expected Corrupt, got {r:?}"),
                }
            }
        }
    }
    // Within one group write, a damaged payload followed by an intact later frame (a reordered
    // write) is not explained as a tail either.
    let (full, offsets) = build_with_group(&ACKED, &GROUP, &[]);
    let mut bytes = full.clone();
    bytes[offsets[3] + 40] ^= 0x01;
    assert!(
        matches!(try_open(&with_bytes(bytes)), Err(LogError::Corrupt { offset, .. }) if offset == offsets[3] as u64)
    );
}

#[test]
fn truncation_reports_a_cut_mid_frame() {
    let (full, offsets) = build(&PAYLOADS, 0);
    let last = offsets[2];
    // Cut inside the last frame's payload: its header is readable, one batch lost.
    let cut = last + 35;
    let (_, recovery) = try_open(&with_bytes(full[..cut].to_vec())).unwrap();
    assert_eq!(
        recovery.truncation,
        Some(Truncation { offset: last as u64, bytes: 35, batches: 1, file_len_before: cut as u64 })
    );
    assert_eq!(recovery.truncated_bytes(), 35);
    // Cut inside its header: fewer than 32 bytes, nothing recognisable.
    let cut = last + 10;
    let (_, recovery) = try_open(&with_bytes(full[..cut].to_vec())).unwrap();
    assert_eq!(
        recovery.truncation,
        Some(Truncation { offset: last as u64, bytes: 10, batches: 0, file_len_before: cut as u64 })
    );
    // A clean log: nothing cut.
    let (_, recovery) = try_open(&with_bytes(full)).unwrap();
    assert_eq!(recovery.truncation, None);
    assert_eq!(recovery.truncated_bytes(), 0);
}

#[test]
fn truncation_reports_a_zero_tail_and_a_torn_header() {
    let (full, offsets) = build(&PAYLOADS, 0);
    let mut bytes = full.clone();
    bytes.extend_from_slice(&[0u8; 100]);
    let (_, recovery) = try_open(&with_bytes(bytes)).unwrap();
    assert_eq!(
        recovery.truncation,
        Some(Truncation {
            offset: full.len() as u64,
            bytes: 100,
            batches: 0,
            file_len_before: full.len() as u64 + 100
        })
    );

    // The last frame's header garbled: its length is not trusted, so no batch is counted.
    let mut bytes = full.clone();
    bytes[offsets[2] + 9] ^= 0xff;
    let (_, recovery) = try_open(&with_bytes(bytes)).unwrap();
    assert_eq!(recovery.records.len(), 2);
    assert_eq!(
        recovery.truncation,
        Some(Truncation {
            offset: offsets[2] as u64,
            bytes: (full.len() - offsets[2]) as u64,
            batches: 0,
            file_len_before: full.len() as u64
        })
    );

    // A torn file header: the whole file is cut and a new header written.
    let (_, recovery) = try_open(&with_bytes(full[..10].to_vec())).unwrap();
    assert!(recovery.new_header);
    assert_eq!(
        recovery.truncation,
        Some(Truncation { offset: 0, bytes: 10, batches: 0, file_len_before: 10 })
    );
}

#[test]
fn new_files_store_their_name_in_a_version_2_header() {
    let storage = MemStorage::new();
    let (_, recovery) = try_open(&storage).unwrap();
    assert_eq!(
        (recovery.format_version, recovery.name.as_deref(), recovery.new_header),
        (2, Some(NAME), true)
    );
    let bytes = storage.bytes(NAME).unwrap();
    assert_eq!(bytes.len(), FILE_HEADER);
    assert_eq!(&bytes[..8], b"MNEMOLOG");
    assert_eq!(bytes[8..12], 2u32.to_le_bytes());
    assert_eq!(bytes[12..14], (NAME.len() as u16).to_le_bytes());
    assert_eq!(bytes[14..16], [0, 0]);
    assert_eq!(&bytes[16..16 + NAME.len()], NAME.as_bytes());
    assert_eq!(bytes[16 + NAME.len()..], crc32fast::hash(&bytes[..16 + NAME.len()]).to_le_bytes());
    // Reopened: found, not new.
    let (_, recovery) = try_open(&storage).unwrap();
    assert_eq!(
        (recovery.format_version, recovery.name.as_deref(), recovery.new_header),
        (2, Some(NAME), false)
    );
}

#[test]
fn a_file_of_another_log_is_refused_and_left_alone() {
    let (full, _) = build(&PAYLOADS, 0);
    let storage = MemStorage::new();
    storage.set_bytes("other", full.clone());
    match Log::open(storage.open("other").unwrap(), "other", clock(0)) {
        Err(LogError::WrongName { expected, found }) => {
            assert_eq!((expected.as_str(), found.as_str()), ("other", NAME))
        }
        other => panic!("expected WrongName, got {:?}", other.map(|r| r.1)),
    }
    assert_eq!(storage.bytes("other").unwrap(), full);
    // The name is checked before anything is cut: a torn tail is left in place too.
    let torn = full[..full.len() - 3].to_vec();
    storage.set_bytes("other", torn.clone());
    assert!(matches!(
        Log::open(storage.open("other").unwrap(), "other", clock(0)),
        Err(LogError::WrongName { .. })
    ));
    assert_eq!(storage.bytes("other").unwrap(), torn);
    // Invalid names are refused before the file is looked at.
    assert!(matches!(
        Log::open(storage.open("other").unwrap(), "", clock(0)),
        Err(LogError::InvalidName { .. })
    ));
}

#[test]
fn version_1_files_open_append_and_recover_as_before() {
    let (full, offsets) = build(&PAYLOADS, 0);
    let v1 = to_v1(&full);
    let storage = with_bytes(v1.clone());
    let (log, recovery) = try_open(&storage).unwrap();
    assert_eq!((recovery.format_version, recovery.name.clone(), recovery.new_header), (1, None, false));
    assert_eq!(recovery.records.len(), 3);
    assert_eq!(log.size_bytes(), v1.len() as u64);
    assert_eq!(log.append(b"fourth").unwrap().seq, 4);
    drop(log);
    // Still a version-1 file: the header is not rewritten, frames follow it.
    let bytes = storage.bytes(NAME).unwrap();
    assert_eq!(bytes[..v1.len()], v1);
    let (_, recovery) = try_open(&storage).unwrap();
    assert_eq!(recovery.records.len(), 4);
    assert_eq!(recovery.format_version, 1);

    // Torn tails of a version-1 file are cut at the same frame boundaries (shifted by the
    // shorter header).
    let shift = FILE_HEADER - 16;
    let last = offsets[2] - shift;
    for cut in last..v1.len() {
        let storage = with_bytes(v1[..cut].to_vec());
        let (_, recovery) = try_open(&storage).unwrap();
        assert_eq!(recovery.records.len(), 2, "cut at {cut}");
        assert_eq!(storage.bytes(NAME).unwrap(), v1[..last]);
    }
    // A bare version-1 header is an empty log, kept as version 1.
    let storage = with_bytes(v1[..16].to_vec());
    let (log, recovery) = try_open(&storage).unwrap();
    assert_eq!((recovery.format_version, recovery.records.len(), recovery.new_header), (1, 0, false));
    assert_eq!(log.append(b"x").unwrap().seq, 1);
    // A torn version-1 header holds nothing and is rewritten as a version-2 header.
    for cut in 9..16 {
        let storage = with_bytes(v1[..cut].to_vec());
        let (_, recovery) = try_open(&storage).unwrap();
        assert!(recovery.new_header, "cut at {cut}");
        assert_eq!(storage.bytes(NAME).unwrap(), full[..FILE_HEADER]);
    }
}

#[test]
fn damaged_version_2_header_is_torn_without_frames_and_corrupt_with_them() {
    let (empty, _) = build(&[], 0);
    let (full, _) = build(&PAYLOADS, 0);
    for at in 12..FILE_HEADER {
        // No frame after it: a first write torn by a crash; the file holds nothing.
        let mut bytes = empty.clone();
        bytes[at] ^= 0x20;
        let storage = with_bytes(bytes);
        let (_, recovery) = try_open(&storage).unwrap();
        assert!(recovery.new_header, "flip at {at}");
        assert_eq!(storage.bytes(NAME).unwrap(), empty, "flip at {at}");
        // Zero-filled from inside the header on (the file length reached disk, data did not).
        let mut bytes = empty.clone();
        bytes.extend_from_slice(&[0u8; 50]);
        bytes[at..].fill(0);
        let storage = with_bytes(bytes);
        let (_, recovery) = try_open(&storage).unwrap();
        assert!(recovery.new_header, "zeros from {at}");
        assert_eq!(storage.bytes(NAME).unwrap(), empty, "zeros from {at}");
        // Frames after it: the header was synced before them, so this is corruption.
        let mut bytes = full.clone();
        bytes[at] ^= 0x20;
        assert!(
            matches!(try_open(&with_bytes(bytes)), Err(LogError::Corrupt { offset: 0, .. })),
            "flip at {at} before frames"
        );
    }
    // The magic and then zeros: the rest of the first write never reached the disk.
    let mut bytes = b"MNEMOLOG".to_vec();
    bytes.extend_from_slice(&[0u8; 30]);
    let storage = with_bytes(bytes);
    assert!(try_open(&storage).unwrap().1.new_header);
    assert_eq!(storage.bytes(NAME).unwrap(), empty);
}
