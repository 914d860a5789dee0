//! Measures durable append throughput and reopen (recovery) time of a `FileStorage` log.
//!
//! Run: `cargo run -p ostrakon-log --release --example append_rate` (numbers go in FORMAT.md).
//! Records are ~100-byte payload slices; a batch of N records is one N×100-byte append, as the
//! engine would serialize an event batch. Every append is fsynced (fdatasync) before it returns.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: fail loudly

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ostrakon_log::{FileStorage, Log, LogError, LogFile, Storage, system_clock};

const RECORD_BYTES: usize = 100;
const RUN_FOR: Duration = Duration::from_secs(2);

/// A storage wrapper that counts syncs (to show group sizes) and can skip them (to build a big
/// log quickly for the reopen measurement).
struct Instrumented {
    inner: FileStorage,
    syncs: Arc<AtomicU64>,
    skip_sync: bool,
}

struct InstrumentedFile {
    inner: Box<dyn LogFile>,
    syncs: Arc<AtomicU64>,
    skip_sync: bool,
}

impl Storage for Instrumented {
    fn open(&self, name: &str) -> Result<Box<dyn LogFile>, LogError> {
        Ok(Box::new(InstrumentedFile {
            inner: self.inner.open(name)?,
            syncs: Arc::clone(&self.syncs),
            skip_sync: self.skip_sync,
        }))
    }
    fn list(&self) -> Result<Vec<String>, LogError> {
        self.inner.list()
    }
}

impl LogFile for InstrumentedFile {
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.inner.read_at(offset, buf)
    }
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.inner.append(bytes)
    }
    fn sync(&mut self) -> io::Result<()> {
        self.syncs.fetch_add(1, Ordering::Relaxed);
        if self.skip_sync { Ok(()) } else { self.inner.sync() }
    }
    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.inner.truncate(len)
    }
}

fn storage(dir: &std::path::Path, skip_sync: bool) -> (Instrumented, Arc<AtomicU64>) {
    let syncs = Arc::new(AtomicU64::new(0));
    let s = Instrumented { inner: FileStorage::new(dir).unwrap(), syncs: Arc::clone(&syncs), skip_sync };
    (s, syncs)
}

fn payload(records: usize) -> Vec<u8> {
    (0..records * RECORD_BYTES).map(|i| (i % 251) as u8).collect()
}

/// Appends `records`-record batches from `threads` threads for RUN_FOR; prints the rates.
fn append_rate(dir: &std::path::Path, name: &str, records: usize, threads: usize) {
    let (storage, syncs) = storage(dir, false);
    let (log, _) = Log::open(storage.open(name).unwrap(), name, system_clock()).unwrap();
    let log = Arc::new(log);
    let syncs_before = syncs.load(Ordering::Relaxed);
    let start = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                let p = payload(records);
                let mut n = 0u64;
                while start.elapsed() < RUN_FOR {
                    log.append(&p).unwrap();
                    n += 1;
                }
                n
            })
        })
        .collect();
    let batches: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    let secs = start.elapsed().as_secs_f64();
    let groups = syncs.load(Ordering::Relaxed) - syncs_before;
    println!(
        "{threads} thread(s) x {records:>6} rec/batch: {:>9.0} batches/s {:>10.0} rec/s {:>7.1} MB/s  ({batches} batches in {groups} fsyncs, {:.1} batches/fsync)",
        batches as f64 / secs,
        (batches * records as u64) as f64 / secs,
        (batches * (records * RECORD_BYTES) as u64) as f64 / secs / 1e6,
        batches as f64 / groups.max(1) as f64,
    );
}

/// Writes `total` records as `total / per_batch` frames (syncs skipped while building), then
/// times reopening the log, which reads and checks every frame.
fn reopen_scan(dir: &std::path::Path, name: &str, total: usize, per_batch: usize) {
    {
        let (storage, _) = storage(dir, true);
        let (log, _) = Log::open(storage.open(name).unwrap(), name, system_clock()).unwrap();
        let p = payload(per_batch);
        for _ in 0..total / per_batch {
            log.append(&p).unwrap();
        }
    }
    let storage = FileStorage::new(dir).unwrap();
    // An untimed first open syncs the file (recovery always does); then best of 3, warm cache.
    drop(Log::open(storage.open(name).unwrap(), name, system_clock()).unwrap());
    let mut best = f64::MAX;
    let mut frames = 0;
    let mut size = 0;
    for _ in 0..3 {
        let start = Instant::now();
        let (log, recovery) = Log::open(storage.open(name).unwrap(), name, system_clock()).unwrap();
        best = best.min(start.elapsed().as_secs_f64());
        frames = recovery.records.len();
        size = log.size_bytes();
    }
    println!(
        "reopen+scan {total} records as {frames} frames of {per_batch} rec ({:.0} MB): {best:.3} s",
        size as f64 / 1e6
    );
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    println!("log dir: {}", dir.path().display());
    // Optional argument `append` or `scan` runs only that half.
    let only = std::env::args().nth(1);
    if only.as_deref() != Some("scan") {
        append_rate(dir.path(), "single1", 1, 1);
        append_rate(dir.path(), "single100", 100, 1);
        append_rate(dir.path(), "single10k", 10_000, 1);
        append_rate(dir.path(), "four1", 1, 4);
        append_rate(dir.path(), "sixteen1", 1, 16);
    }
    if only.as_deref() != Some("append") {
        reopen_scan(dir.path(), "scan1", 1_000_000, 1);
        reopen_scan(dir.path(), "scan10k", 1_000_000, 10_000);
    }
}
