//! Append, reopen, time assignment, limits and poisoning, through the public API on MemStorage.

// Helpers here are test code too (clippy.toml only exempts #[test] fns): failing loudly is the point.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use ostrakon_log::{Clock, Committed, Log, LogError, MAX_PAYLOAD_LEN, MemStorage, Storage};

fn fixed_clock(t: i64) -> Clock {
    Arc::new(move || t)
}

fn open(storage: &MemStorage, clock: Clock) -> (Log, ostrakon_log::Recovery) {
    Log::open(storage.open("log").unwrap(), "log", clock).unwrap()
}

#[test]
fn roundtrip_and_reopen_continue_seq_and_time() {
    let storage = MemStorage::new();
    let (log, recovery) = open(&storage, fixed_clock(1_000));
    assert!(recovery.records.is_empty());
    assert_eq!(recovery.truncated_bytes(), 0);
    assert_eq!(log.last(), None);
    let header_size = log.size_bytes();
    assert_eq!(header_size, 16 + "log".len() as u64 + 4); // version-2 header: fixed part, name, CRC

    let payloads: Vec<Vec<u8>> = vec![b"one".to_vec(), Vec::new(), vec![0xAB; 5000]];
    let mut committed = Vec::new();
    for p in &payloads {
        committed.push(log.append(p).unwrap());
    }
    assert_eq!(
        committed,
        vec![
            Committed { seq: 1, system_time: 1_000 },
            Committed { seq: 2, system_time: 1_001 },
            Committed { seq: 3, system_time: 1_002 },
        ]
    );
    assert_eq!(log.last(), Some(committed[2]));
    let expected_size = header_size + payloads.iter().map(|p| 32 + p.len() as u64).sum::<u64>();
    assert_eq!(log.size_bytes(), expected_size);
    assert_eq!(storage.bytes("log").unwrap().len() as u64, expected_size);
    drop(log);

    // Reopen with a clock far behind: seq and time continue from the log, not the clock.
    let (log, recovery) = open(&storage, fixed_clock(5));
    assert_eq!(recovery.truncated_bytes(), 0);
    let got: Vec<_> = recovery.records.iter().map(|r| (r.seq, r.system_time, r.payload.clone())).collect();
    let want: Vec<_> =
        committed.iter().zip(&payloads).map(|(c, p)| (c.seq, c.system_time, p.clone())).collect();
    assert_eq!(got, want);
    assert_eq!(log.last(), Some(committed[2]));
    assert_eq!(log.size_bytes(), expected_size);
    assert_eq!(log.append(b"four").unwrap(), Committed { seq: 4, system_time: 1_003 });
}

#[test]
fn time_follows_clock_but_strictly_increases() {
    let now = Arc::new(AtomicI64::new(100));
    let clock: Clock = {
        let now = Arc::clone(&now);
        Arc::new(move || now.load(Ordering::SeqCst))
    };
    let (log, _) = open(&MemStorage::new(), clock);
    let mut times = Vec::new();
    for t in [100, 100, 500, 499, 50, 10_000, 10_000, -7] {
        now.store(t, Ordering::SeqCst);
        times.push(log.append(b"x").unwrap().system_time);
    }
    assert_eq!(times, vec![100, 101, 500, 501, 502, 10_000, 10_001, 10_002]);
}

#[test]
fn system_clock_is_plausible_and_times_increase() {
    let (log, _) = open(&MemStorage::new(), ostrakon_log::system_clock());
    let a = log.append(b"a").unwrap();
    let b = log.append(b"b").unwrap();
    assert!(a.system_time > 1_600_000_000_000_000, "{a:?}"); // after 2020
    assert!(b.system_time > a.system_time);
}

#[test]
fn clock_at_max_overflows_cleanly() {
    let (log, _) = open(&MemStorage::new(), fixed_clock(i64::MAX));
    assert_eq!(log.append(b"a").unwrap().system_time, i64::MAX);
    assert!(matches!(log.append(b"b"), Err(LogError::Overflow)));
}

#[test]
fn payload_limit() {
    let (log, _) = open(&MemStorage::new(), fixed_clock(0));
    let too_big = vec![0u8; MAX_PAYLOAD_LEN + 1];
    match log.append(&too_big) {
        Err(LogError::TooLarge { len, max }) => {
            assert_eq!((len, max), (MAX_PAYLOAD_LEN + 1, MAX_PAYLOAD_LEN));
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
    // A rejected payload does not consume a seq, nor poison the log.
    assert_eq!(log.append(b"ok").unwrap().seq, 1);
}

#[test]
fn io_failure_poisons_until_reopen() {
    let storage = MemStorage::new();
    let (log, _) = open(&storage, fixed_clock(0));
    let first = log.append(b"durable").unwrap();

    // One more append succeeds, then the sync fails.
    storage.fail_after(Some(1));
    assert!(matches!(log.append(b"lost"), Err(LogError::Io(_))));
    assert!(log.is_poisoned());
    storage.fail_after(None); // I/O works again, but the log stays poisoned
    assert!(matches!(log.append(b"after"), Err(LogError::Poisoned)));
    assert_eq!(log.last(), Some(first));
    drop(log);

    // Power loss before the failed frame was synced: reopening drops it...
    let crashed = storage.crash(|_| 0);
    let (log, recovery) = open(&crashed, fixed_clock(0));
    assert_eq!(recovery.records.len(), 1);
    assert_eq!(log.append(b"next").unwrap().seq, 2);

    // ...while without a crash, the unsynced frame reached the file whole and is kept.
    let (log, recovery) = open(&storage, fixed_clock(0));
    assert_eq!(recovery.records.len(), 2);
    assert_eq!(recovery.records[1].payload, b"lost");
    assert_eq!(log.append(b"next").unwrap().seq, 3);
}

#[test]
fn failed_write_is_torn_and_recovered() {
    let storage = MemStorage::new();
    let (log, _) = open(&storage, fixed_clock(0));
    log.append(b"kept").unwrap();
    // The append itself fails, after writing half of the frame.
    storage.fail_after(Some(0));
    assert!(matches!(log.append(&[9u8; 100]), Err(LogError::Io(_))));
    assert!(matches!(log.append(b"x"), Err(LogError::Poisoned)));
    drop(log);
    storage.fail_after(None);
    let (log, recovery) = open(&storage, fixed_clock(0));
    assert_eq!(recovery.records.len(), 1);
    assert_eq!(recovery.truncated_bytes(), 66); // half of a 132-byte frame
    assert_eq!(log.append(b"y").unwrap().seq, 2);
}

#[test]
fn concurrent_appends_get_distinct_gapless_seqs() {
    let storage = MemStorage::new();
    let (log, _) = open(&storage, fixed_clock(0));
    let log = Arc::new(log);
    let threads: Vec<_> = (0..4u8)
        .map(|t| {
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                (0..50u8).map(|i| (log.append(&[t, i]).unwrap(), vec![t, i])).collect::<Vec<_>>()
            })
        })
        .collect();
    let mut acked: Vec<_> = threads.into_iter().flat_map(|h| h.join().unwrap()).collect();
    acked.sort_by_key(|(c, _)| c.seq);
    assert_eq!(acked.iter().map(|(c, _)| c.seq).collect::<Vec<_>>(), (1..=200).collect::<Vec<_>>());
    assert!(acked.windows(2).all(|w| w[0].0.system_time < w[1].0.system_time));
    assert_eq!(log.last().map(|c| c.seq), Some(200));

    let (_, recovery) = open(&storage, fixed_clock(0));
    assert_eq!(recovery.records.len(), 200);
    for (r, (c, p)) in recovery.records.iter().zip(&acked) {
        assert_eq!((r.seq, r.system_time, &r.payload), (c.seq, c.system_time, p));
    }
}

#[test]
fn log_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Log>();
    assert_send_sync::<MemStorage>();
    assert_send_sync::<ostrakon_log::FileStorage>();
}
