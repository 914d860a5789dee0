//! FileStorage: name validation, listing, locking, durability across reopen, and a writer
//! process killed mid-stream (the test binary re-runs itself as the child).

// Helpers here are test code too (clippy.toml only exempts #[test] fns): failing loudly is the point.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use ostrakon_log::{FileStorage, Log, LogError, Storage, system_clock, validate_name};
use rand::Rng;

#[test]
fn names_are_validated() {
    let dir = tempfile::tempdir().unwrap();
    let storage = FileStorage::new(dir.path()).unwrap();
    let long_ok = "x".repeat(128);
    let long_bad = "x".repeat(129);
    for good in ["a", "A-b_c.d", "events.2024-01", long_ok.as_str()] {
        validate_name(good).unwrap();
        storage.open(good).unwrap();
    }
    for bad in ["", ".hidden", ".", "..", "a/b", "../up", "a b", "é", "a\0", long_bad.as_str()] {
        assert!(matches!(storage.open(bad), Err(LogError::InvalidName { .. })), "{bad:?} accepted");
    }
}

#[test]
fn list_shows_logs_sorted_and_ignores_other_files() {
    // A directory named like a log is listed (it is damage to report when opened, not an
    // absent namespace); files not named like logs are ignored.
    let dir = tempfile::tempdir().unwrap();
    let storage = FileStorage::new(dir.path().join("nested/logs")).unwrap();
    assert!(storage.list().unwrap().is_empty());
    for name in ["b", "a", "c.d"] {
        storage.open(name).unwrap();
    }
    std::fs::write(storage.dir().join("notes.txt"), b"x").unwrap();
    std::fs::write(storage.dir().join(".hidden.log"), b"x").unwrap();
    std::fs::create_dir(storage.dir().join("dir.log")).unwrap();
    assert_eq!(storage.list().unwrap(), vec!["a", "b", "c.d", "dir"]);
    let refused = storage.open("dir").err().expect("a directory in a log's place opened");
    assert!(refused.to_string().contains("not a regular file"), "{refused}");
    assert_eq!(storage.path_of("a").unwrap(), dir.path().join("nested/logs/a.log"));
}

#[test]
fn durable_across_reopen_and_locked_while_open() {
    let dir = tempfile::tempdir().unwrap();
    let storage = FileStorage::new(dir.path()).unwrap();
    let (log, recovery) = Log::open(storage.open("events").unwrap(), "events", system_clock()).unwrap();
    assert!(recovery.records.is_empty());
    let mut acked = Vec::new();
    for i in 0..50u32 {
        let payload = i.to_le_bytes().repeat(i as usize);
        acked.push((log.append(&payload).unwrap(), payload));
    }
    assert!(matches!(
        storage.open("events"),
        Err(LogError::Locked { name }) if name == "events"
    ));
    let size = log.size_bytes();
    drop(log);
    assert_eq!(std::fs::metadata(storage.path_of("events").unwrap()).unwrap().len(), size);

    let storage = FileStorage::new(dir.path()).unwrap();
    let (log, recovery) = Log::open(storage.open("events").unwrap(), "events", system_clock()).unwrap();
    assert_eq!(recovery.truncated_bytes(), 0);
    assert_eq!(recovery.records.len(), 50);
    for (r, (c, p)) in recovery.records.iter().zip(&acked) {
        assert_eq!((r.seq, r.system_time, &r.payload), (c.seq, c.system_time, p));
    }
    assert_eq!(log.append(b"more").unwrap().seq, 51);
}

#[test]
fn torn_tail_in_a_real_file_is_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let storage = FileStorage::new(dir.path()).unwrap();
    let (log, _) = Log::open(storage.open("t").unwrap(), "t", system_clock()).unwrap();
    log.append(b"whole").unwrap();
    let size = log.size_bytes();
    drop(log);
    let path = storage.path_of("t").unwrap();
    let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    file.write_all(&[7u8; 20]).unwrap();
    drop(file);
    let (_, recovery) = Log::open(storage.open("t").unwrap(), "t", system_clock()).unwrap();
    assert_eq!((recovery.records.len(), recovery.truncated_bytes()), (1, 20));
    assert_eq!(std::fs::metadata(&path).unwrap().len(), size);
}

/// Set in the child process: the directory it appends to.
const CHILD_ENV: &str = "OSTRAKON_LOG_TEST_CHILD_DIR";
const CHILD_TEST: &str = "killed_writer_loses_no_acknowledged_batch";

/// Child: two threads append until killed, printing `ACK <seq> <payload>` once each is durable.
/// They stop by themselves after a while so that a failed parent never leaves them running.
fn run_child(dir: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let storage = FileStorage::new(dir).unwrap();
    let (log, _) = Log::open(storage.open("log").unwrap(), "log", system_clock()).unwrap();
    let log = Arc::new(log);
    let writers: Vec<_> = (0..2)
        .map(|t| {
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                for i in 0u64.. {
                    if std::time::Instant::now() > deadline {
                        break;
                    }
                    let payload = format!("pid{}-t{t}-{i}", std::process::id());
                    let c = log.append(payload.as_bytes()).unwrap();
                    println!("ACK {} {payload}", c.seq);
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
}

#[test]
fn killed_writer_loses_no_acknowledged_batch() {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        run_child(&dir);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut rng = rand::rng();
    let mut acked: Vec<(u64, String)> = Vec::new();
    for round in 0..3 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", CHILD_TEST, "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let mut parts = line.splitn(3, ' ');
                if let (Some("ACK"), Some(seq), Some(payload)) = (parts.next(), parts.next(), parts.next())
                    && let Ok(seq) = seq.parse::<u64>()
                {
                    let _ = tx.send((seq, payload.to_owned()));
                }
            }
        });
        // Kill at a random moment after the child is up and appending.
        let Ok(first) = rx.recv_timeout(Duration::from_secs(15)) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("round {round}: the child acknowledged nothing");
        };
        std::thread::sleep(Duration::from_millis(rng.random_range(20..200)));
        child.kill().unwrap();
        child.wait().unwrap();
        reader.join().unwrap();
        let round_acks: Vec<_> = std::iter::once(first).chain(rx.try_iter()).collect();
        assert!(!round_acks.is_empty());
        acked.extend(round_acks);

        let storage = FileStorage::new(dir.path()).unwrap();
        let (_, recovery) = Log::open(storage.open("log").unwrap(), "log", system_clock()).unwrap();
        for (seq, payload) in &acked {
            let record = recovery.records.get(*seq as usize - 1);
            assert_eq!(
                record.map(|r| r.payload.as_slice()),
                Some(payload.as_bytes()),
                "round {round}: acknowledged seq {seq} missing or different"
            );
        }
        eprintln!(
            "round {round}: {} acknowledged, {} recovered, {} torn bytes",
            acked.len(),
            recovery.records.len(),
            recovery.truncated_bytes()
        );
    }
}
