//! Read-only inspection: `Log::inspect` on files from `Storage::open_read_only` reports what
//! `Log::open` would recover and cut, and changes nothing.

// Helpers here are test code too (clippy.toml only exempts #[test] fns): failing loudly is the point.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{ErrorKind, Write};
use std::sync::Arc;

use ostrakon_log::{Clock, FileStorage, Log, LogError, LogFile, MemStorage, Storage, Truncation};

fn clock() -> Clock {
    Arc::new(|| 0)
}

/// Writes a log `name` of three batches; returns its length minus 5 (a cut inside the last
/// frame).
fn torn_log(storage: &dyn Storage, name: &str) -> u64 {
    let (log, _) = Log::open(storage.open(name).unwrap(), name, clock()).unwrap();
    for p in [&b"one"[..], b"two", b"three, the torn one"] {
        log.append(p).unwrap();
    }
    let len = log.size_bytes();
    drop(log);
    len - 5
}

fn assert_refuses_changes(file: &mut dyn LogFile) {
    for result in [file.append(b"x"), file.sync(), file.truncate(0)] {
        assert_eq!(result.unwrap_err().kind(), ErrorKind::PermissionDenied);
    }
}

#[test]
fn inspect_changes_nothing_and_names_the_cut_that_open_makes() {
    let storage = MemStorage::new();
    let torn_len = torn_log(&storage, "log");
    let mut bytes = storage.bytes("log").unwrap();
    bytes.truncate(torn_len as usize);
    storage.set_bytes("log", bytes.clone());

    let mut file = storage.open_read_only("log").unwrap();
    let inspected = Log::inspect(file.as_ref()).unwrap();
    assert_refuses_changes(file.as_mut());
    drop(file);
    assert_eq!(storage.bytes("log").unwrap(), bytes, "inspect changed the file");
    assert_eq!(inspected.records.len(), 2);
    assert_eq!(
        (inspected.format_version, inspected.name.as_deref(), inspected.new_header),
        (2, Some("log"), false)
    );
    let cut = inspected.truncation.unwrap();
    assert_eq!(cut.file_len_before, torn_len);
    assert_eq!(cut.batches, 1);
    assert_eq!(cut.offset + cut.bytes, torn_len);

    // Open then makes exactly that cut and recovers exactly those records.
    let (_, opened) = Log::open(storage.open("log").unwrap(), "log", clock()).unwrap();
    assert_eq!(opened, inspected);
    assert_eq!(storage.bytes("log").unwrap().len() as u64, cut.offset);
}

#[test]
fn inspect_of_a_headerless_file_writes_no_header() {
    let storage = MemStorage::new();
    for bytes in [Vec::new(), b"MNEMO".to_vec(), vec![0u8; 40]] {
        storage.set_bytes("log", bytes.clone());
        let recovery = Log::inspect(storage.open_read_only("log").unwrap().as_ref()).unwrap();
        assert!(recovery.new_header);
        assert_eq!(recovery.name, None);
        let expected = (!bytes.is_empty()).then_some(Truncation {
            offset: 0,
            bytes: bytes.len() as u64,
            batches: 0,
            file_len_before: bytes.len() as u64,
        });
        assert_eq!(recovery.truncation, expected);
        assert_eq!(storage.bytes("log").unwrap(), bytes);
    }
}

#[test]
fn read_only_open_creates_nothing() {
    let storage = MemStorage::new();
    assert!(
        matches!(storage.open_read_only("absent"), Err(LogError::Io(e)) if e.kind() == ErrorKind::NotFound)
    );
    assert!(storage.list().unwrap().is_empty());
    assert!(matches!(storage.open_read_only("../x"), Err(LogError::InvalidName { .. })));

    let dir = tempfile::tempdir().unwrap();
    let storage = FileStorage::new(dir.path()).unwrap();
    assert!(
        matches!(storage.open_read_only("absent"), Err(LogError::Io(e)) if e.kind() == ErrorKind::NotFound)
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn inspect_of_a_real_torn_file_changes_nothing_and_needs_no_lock() {
    let dir = tempfile::tempdir().unwrap();
    let storage = FileStorage::new(dir.path()).unwrap();
    let (log, _) = Log::open(storage.open("t").unwrap(), "t", clock()).unwrap();
    log.append(b"whole").unwrap();
    let size = log.size_bytes();
    drop(log);
    let path = storage.path_of("t").unwrap();
    let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    file.write_all(&[7u8; 20]).unwrap();
    drop(file);
    let before = std::fs::read(&path).unwrap();
    let modified = std::fs::metadata(&path).unwrap().modified().unwrap();

    let mut ro = storage.open_read_only("t").unwrap();
    let inspected = Log::inspect(ro.as_ref()).unwrap();
    assert_refuses_changes(ro.as_mut());
    assert_eq!(
        inspected.truncation,
        Some(Truncation { offset: size, bytes: 20, batches: 0, file_len_before: size + 20 })
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), modified);

    // No lock is taken: a writer can open the file while it is inspected, and inspection works
    // while the writer holds its lock.
    let (log, opened) = Log::open(storage.open("t").unwrap(), "t", clock()).unwrap();
    assert_eq!(opened.truncation, inspected.truncation);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), size);
    log.append(b"more").unwrap();
    let live = Log::inspect(storage.open_read_only("t").unwrap().as_ref()).unwrap();
    assert_eq!(live.records.len(), 2);
    assert_eq!(live.truncation, None);
    drop(ro);
}

#[test]
fn renamed_file_is_detected_and_inspect_tells_whose_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let storage = FileStorage::new(dir.path()).unwrap();
    let (log, _) = Log::open(storage.open("alice").unwrap(), "alice", clock()).unwrap();
    log.append(b"alice's batch").unwrap();
    drop(log);
    std::fs::rename(storage.path_of("alice").unwrap(), storage.path_of("bob").unwrap()).unwrap();
    let before = std::fs::read(storage.path_of("bob").unwrap()).unwrap();
    match Log::open(storage.open("bob").unwrap(), "bob", clock()) {
        Err(LogError::WrongName { expected, found }) => {
            assert_eq!((expected.as_str(), found.as_str()), ("bob", "alice"))
        }
        other => panic!("expected WrongName, got {:?}", other.map(|r| r.1)),
    }
    assert_eq!(std::fs::read(storage.path_of("bob").unwrap()).unwrap(), before);
    let recovery = Log::inspect(storage.open_read_only("bob").unwrap().as_ref()).unwrap();
    assert_eq!(recovery.name.as_deref(), Some("alice"));
    assert_eq!(recovery.records.len(), 1);
}
