//! The SPARQL fuzz cases of `tests/it/sparql_fuzz.rs`, as many as asked, run by hand:
//! `cargo bench --bench fuzz_sparql -- 100000 [first-seed]`. Prints the cases run, how
//! they ended, the time taken and the process's peak memory; exits non-zero at the first
//! broken case, printing it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use ostrakon_testkit::sparql_fuzz;

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let cases = args.first().copied().unwrap_or(100_000);
    let first = args.get(1).copied().unwrap_or(1_000_000);
    let (store, ns) = sparql_fuzz::target();
    let sparql = sparql_fuzz::service();
    let start = std::time::Instant::now();
    let mut outcomes = std::collections::BTreeMap::new();
    for seed in first..first + cases {
        if (seed - first) % 10_000 == 0 && seed != first {
            eprintln!(
                "{} cases, {:.0} s, peak {} MB",
                seed - first,
                start.elapsed().as_secs_f64(),
                sparql_fuzz::peak_rss() >> 20
            );
        }
        match sparql_fuzz::run_case(&sparql, &store, &ns, seed) {
            Ok(outcome) => *outcomes.entry(outcome).or_insert(0u64) += 1,
            Err(broken) => {
                eprintln!("BROKEN: {broken}");
                std::process::exit(1);
            }
        }
    }
    println!(
        "fuzz_sparql: {cases} cases from seed {first} in {:.1} s: {outcomes:?}; peak RSS {} MB",
        start.elapsed().as_secs_f64(),
        sparql_fuzz::peak_rss() >> 20
    );
}
