//! The GraphQL fuzz cases of `tests/it/fuzz.rs`, as many as asked, run by hand:
//! `cargo bench --bench fuzz_graphql -- 100000 [first-seed]`. Prints the cases run, how
//! they ended, and the time taken; exits non-zero at the first broken case, printing it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use ostrakon_testkit::graphql_fuzz as fuzz;

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let cases = args.first().copied().unwrap_or(100_000);
    let first = args.get(1).copied().unwrap_or(1_000_000);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let grammar = fuzz::Grammar::new();
    let start = std::time::Instant::now();
    let mut outcomes = std::collections::BTreeMap::new();
    runtime.block_on(async {
        // A fresh store every 10,000 cases keeps the state small and varied.
        let mut target = fuzz::target().await;
        for seed in first..first + cases {
            if (seed - first) % 10_000 == 0 && seed != first {
                target = fuzz::target().await;
                eprintln!("{} cases, {:.0} s", seed - first, start.elapsed().as_secs_f64());
            }
            match fuzz::run_case(&grammar, &target.0, &target.1, seed).await {
                Ok(outcome) => *outcomes.entry(outcome).or_insert(0u64) += 1,
                Err(broken) => {
                    eprintln!("BROKEN: {broken}");
                    std::process::exit(1);
                }
            }
        }
    });
    println!(
        "fuzz_graphql: {cases} cases from seed {first} in {:.1} s: {outcomes:?}",
        start.elapsed().as_secs_f64()
    );
}
