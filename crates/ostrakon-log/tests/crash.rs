//! Randomized crash consistency: concurrent appends with injected I/O failures, then a simulated
//! power loss that keeps a random prefix of unsynced bytes, over several generations of reopen.
//!
//! Checked after every reopen: records are exactly seqs 1..=n with increasing times; every
//! acknowledged batch is there with its seq, time and payload; every record is a whole batch
//! that some thread submitted, at most once, and each thread's batches appear in its order;
//! what an earlier reopen recovered is still there.

// Helpers here are test code too (clippy.toml only exempts #[test] fns): failing loudly is the point.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Arc;

use ostrakon_log::{Clock, Committed, Log, LogError, MemStorage, Record, Storage};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const RUNS: u64 = 300;
const BASE_SEED: u64 = 0x6d6e_656d_6f5f_6c6f;

#[test]
fn acknowledged_batches_survive_crashes() {
    for run in 0..RUNS {
        let seed = BASE_SEED.wrapping_add(run);
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| one_run(seed))) {
            eprintln!("crash consistency failed: run {run}, seed {seed:#x}");
            resume_unwind(panic);
        }
    }
}

/// Who submitted a payload: (generation, thread, index within the thread).
type Origin = (u8, u8, u16);

fn payload(origin: Origin, rng: &mut StdRng) -> Vec<u8> {
    let (g, t, i) = origin;
    let mut p = vec![g, t];
    p.extend_from_slice(&i.to_le_bytes());
    let extra = match rng.random_range(0..10) {
        0 => 0,
        1 => rng.random_range(0..5_000),
        _ => rng.random_range(0..200),
    };
    p.extend((0..extra).map(|_| rng.random::<u8>()));
    p
}

fn origin(p: &[u8]) -> Origin {
    (p[0], p[1], u16::from_le_bytes([p[2], p[3]]))
}

fn one_run(seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    // The clock often stalls or runs backwards, so the log's own time floor matters.
    let clock: Clock = {
        let base = rng.random_range(0..1_000_000i64);
        Arc::new(move || base)
    };
    let mut storage = MemStorage::new();
    let mut acked: Vec<(Committed, Vec<u8>)> = Vec::new();
    let mut submitted: HashMap<Vec<u8>, Origin> = HashMap::new();
    let mut recovered_before: Vec<Record> = Vec::new();

    let generations = rng.random_range(1..=3u8);
    for generation in 0..generations {
        let (log, recovery) = Log::open(storage.open("log").unwrap(), "log", clock.clone()).unwrap();
        check(&recovery.records, &acked, &submitted, &recovered_before);
        recovered_before = recovery.records;

        storage.fail_after(Some(rng.random_range(0..60)));
        let log = Arc::new(log);
        let threads = rng.random_range(1..=4u8);
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let log = Arc::clone(&log);
                let mut trng = StdRng::seed_from_u64(rng.random());
                let batches = trng.random_range(1..=15u16);
                std::thread::spawn(move || {
                    (0..batches)
                        .map(|i| {
                            let p = payload((generation, t, i), &mut trng);
                            let result = log.append(&p);
                            (p, result)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            let mut failed = false;
            for (p, result) in h.join().unwrap() {
                submitted.insert(p.clone(), origin(&p));
                match result {
                    Ok(c) => {
                        assert!(!failed, "an append succeeded after a failure");
                        acked.push((c, p));
                    }
                    Err(LogError::Io(_) | LogError::Poisoned) => failed = true,
                    Err(e) => panic!("unexpected error {e}"),
                }
            }
        }
        drop(log);

        let mode = rng.random_range(0..4);
        let mut keep_rng = StdRng::seed_from_u64(rng.random());
        storage = storage.crash(|len| match mode {
            0 => 0,
            1 => len,
            _ => keep_rng.random_range(0..=len),
        });
    }
    let (log, recovery) = Log::open(storage.open("log").unwrap(), "log", clock).unwrap();
    check(&recovery.records, &acked, &submitted, &recovered_before);
    // The log continues after whatever survived.
    let next = log.append(b"after").unwrap();
    assert_eq!(next.seq, recovery.records.len() as u64 + 1);
}

fn check(
    records: &[Record],
    acked: &[(Committed, Vec<u8>)],
    submitted: &HashMap<Vec<u8>, Origin>,
    recovered_before: &[Record],
) {
    for (i, r) in records.iter().enumerate() {
        assert_eq!(r.seq, i as u64 + 1, "seqs are not gapless from 1");
    }
    assert!(records.windows(2).all(|w| w[0].system_time < w[1].system_time), "times do not increase");
    for (c, p) in acked {
        let Some(r) = records.get(c.seq as usize - 1) else {
            panic!("acknowledged seq {} lost ({} records)", c.seq, records.len());
        };
        assert_eq!((r.system_time, &r.payload), (c.system_time, p), "seq {}", c.seq);
    }
    assert!(records.starts_with(recovered_before), "records recovered by an earlier open were lost");
    let mut last_index: HashMap<(u8, u8), u16> = HashMap::new();
    for r in records {
        let Some(&(g, t, i)) = submitted.get(&r.payload) else {
            panic!("seq {} holds a payload nobody submitted whole", r.seq);
        };
        if let Some(prev) = last_index.insert((g, t), i) {
            assert!(prev < i, "thread {t} of generation {g}: batch order broken");
        }
    }
}
