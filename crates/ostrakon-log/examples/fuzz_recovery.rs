//! Fuzzes recovery by hand: `Log::open` and `Log::inspect` of random files and of valid logs
//! damaged at random, checked against the invariants in `ostrakon-testkit`'s `log_frames.rs` (the property
//! test `tests/fuzz.rs` runs the same checks for a few hundred cases).
//!
//! Run: `cargo run -p ostrakon-log --release --example fuzz_recovery [CASES] [SEED]`
//! (defaults: 100000 cases, seed 1). Prints the cases run, the outcomes by input kind and the
//! elapsed time; exits with status 1 and the failing case's seed on the first broken invariant
//! or panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test harness: fail loudly

use ostrakon_testkit::log_frames as support;

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use support::{Mutation, build, check};

fn random_bytes(rng: &mut StdRng, max: usize) -> Vec<u8> {
    let n = rng.random_range(0..=max);
    (0..n).map(|_| rng.random()).collect()
}

fn random_mutation(rng: &mut StdRng, len: usize) -> Mutation {
    // Offsets somewhat past the end too: they are taken modulo the length.
    let at = |rng: &mut StdRng| rng.random_range(0..len + 8);
    match rng.random_range(0..7) {
        0 => Mutation::Flip { at: at(rng), mask: rng.random_range(1..=255) },
        1 => Mutation::Truncate { len: at(rng) },
        2 => Mutation::ZeroTail { from: at(rng) },
        3 => {
            let fill = (0..rng.random_range(1..64)).map(|_| rng.random()).collect();
            Mutation::GarbageTail { from: at(rng), fill }
        }
        4 => Mutation::ZeroRange { from: at(rng), len: rng.random_range(1..128) },
        5 => {
            let insert = random_bytes(rng, 64);
            Mutation::Splice { at: at(rng), remove: rng.random_range(0..64), insert }
        }
        _ => Mutation::CopyWithin { from: at(rng), len: rng.random_range(1..128), to: at(rng) },
    }
}

/// Runs one case; returns (input kind, outcome).
fn one_case(seed: u64) -> Result<(&'static str, &'static str), String> {
    let mut rng = StdRng::seed_from_u64(seed);
    if rng.random_range(0..8) == 0 {
        // Random bytes, sometimes behind a valid header.
        let mut bytes = match rng.random_range(0..3) {
            0 => Vec::new(),
            1 => build(&[], false, 0).bytes,
            _ => b"MNEMOLOG\x01\0\0\0\0\0\0\0".to_vec(),
        };
        bytes.extend(random_bytes(&mut rng, 400));
        return check(&bytes, None).map(|o| ("random-bytes", o));
    }
    let payloads: Vec<Vec<u8>> = (0..rng.random_range(0..10)).map(|_| random_bytes(&mut rng, 100)).collect();
    let original = build(&payloads, rng.random_bool(0.25), rng.random_range(-1_000_000..1_000_000));
    let mutations = rng.random_range(1..=3);
    if mutations == 1 {
        let m = random_mutation(&mut rng, original.bytes.len());
        let (bytes, tail_from) = m.apply(&original.bytes);
        check(&bytes, Some((&original, tail_from))).map(|o| (m.kind(), o))
    } else {
        let mut bytes = original.bytes.clone();
        for _ in 0..mutations {
            bytes = random_mutation(&mut rng, bytes.len()).apply(&bytes).0;
        }
        check(&bytes, Some((&original, None))).map(|o| ("several", o))
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let cases: u64 = args.next().map_or(100_000, |a| a.parse().expect("CASES must be a number"));
    let base_seed: u64 = args.next().map_or(1, |a| a.parse().expect("SEED must be a number"));
    // A panic is reported as a failure below; keep the default hook's message short.
    std::panic::set_hook(Box::new(|info| eprintln!("panic: {info}")));

    let start = Instant::now();
    let mut table: BTreeMap<&'static str, BTreeMap<&'static str, u64>> = BTreeMap::new();
    for case in 0..cases {
        let seed = base_seed.wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(case);
        let result =
            catch_unwind(AssertUnwindSafe(|| one_case(seed))).unwrap_or_else(|_| Err("panicked".to_owned()));
        match result {
            Ok((kind, outcome)) => *table.entry(kind).or_default().entry(outcome).or_default() += 1,
            Err(why) => {
                eprintln!("case {case} (seed {seed}) broke an invariant: {why}");
                std::process::exit(1);
            }
        }
    }
    let elapsed = start.elapsed();

    println!("cases run: {cases} (base seed {base_seed}), all invariants held");
    let outcomes: Vec<&str> = {
        let mut all: Vec<&str> = table.values().flat_map(|m| m.keys().copied()).collect();
        all.sort_unstable();
        all.dedup();
        all
    };
    print!("{:<14}", "input");
    for o in &outcomes {
        print!(" {o:>19}");
    }
    println!();
    let mut totals = BTreeMap::new();
    for (kind, counts) in &table {
        print!("{kind:<14}");
        for o in &outcomes {
            let n = counts.get(o).copied().unwrap_or(0);
            *totals.entry(*o).or_insert(0u64) += n;
            print!(" {n:>19}");
        }
        println!();
    }
    print!("{:<14}", "total");
    for o in &outcomes {
        print!(" {:>19}", totals[o]);
    }
    println!();
    println!(
        "elapsed: {:.2} s ({:.1} µs per case)",
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1e6 / cases.max(1) as f64
    );
}
