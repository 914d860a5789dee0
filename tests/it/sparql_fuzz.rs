//! Random and mutated SPARQL queries, nested to random depths, a few hundred per run:
//! none panics, fails untyped or runs past its deadline, and the process that runs them
//! keeps its peak memory bounded. `cargo bench --bench fuzz_sparql` runs the same cases
//! by the hundred thousand.
//!
//! The cases run in a process of their own (this test binary, started again on the one
//! test below), so that its peak memory is theirs alone and a crash is seen as one.

use std::process::Command;

use crate::common::sparql_fuzz;

/// Cases per run in the suite; the bench runs as many as asked.
const CASES: u64 = 1000;

/// Cases that long runs of the bench found broken, run again every time: 1,098,103
/// nests `!CONTAINS(…` 45 deep over a mistake, which the parser backtracked over
/// exponentially, outside the query's deadline; 1,105,708 held a cross product on the
/// right of a `MINUS` (1.3 GB) outside the memory budget.
const FOUND: [u64; 2] = [1_098_103, 1_105_708];

/// Set in the process that runs the cases.
const CHILD: &str = "OSTRAKON_SPARQL_FUZZ_CHILD";

/// The peak memory the cases may take, the store and the test binary included.
const MAX_PEAK_BYTES: u64 = 768 * 1024 * 1024;

#[test]
fn random_sparql_never_crashes_fails_untyped_or_holds_unbounded_memory() {
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "sparql_fuzz::the_cases", "--nocapture", "--test-threads", "1"])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the cases' process failed ({}):\n{stderr}", output.status);
    let line = stderr.lines().find(|l| l.starts_with("sparql fuzz:")).unwrap_or_else(|| panic!("{stderr}"));
    let field = |name: &str| -> u64 {
        line.split_whitespace().skip_while(|w| *w != name).nth(1).and_then(|n| n.parse().ok()).unwrap()
    };
    assert!(field("peak_bytes") < MAX_PEAK_BYTES, "{line}");
    // The generator reaches every side: answers, invalid queries and limits.
    for outcome in ["ok", "invalid", "limited"] {
        assert!(field(outcome) > CASES / 30, "{line}");
    }
}

/// Runs the cases when started by the test above (and nothing otherwise).
#[test]
fn the_cases() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let (store, ns) = sparql_fuzz::target();
    let sparql = sparql_fuzz::service();
    let mut counts = std::collections::BTreeMap::new();
    for seed in (0..CASES).chain(FOUND) {
        match sparql_fuzz::run_case(&sparql, &store, &ns, seed) {
            Ok(outcome) => *counts.entry(outcome).or_insert(0u64) += 1,
            Err(broken) => panic!("{broken}"),
        }
    }
    let count = |o| counts.get(&o).copied().unwrap_or(0);
    eprintln!(
        "sparql fuzz: ok {} invalid {} limited {} peak_bytes {}",
        count(sparql_fuzz::Outcome::Ok),
        count(sparql_fuzz::Outcome::Invalid),
        count(sparql_fuzz::Outcome::Limited),
        sparql_fuzz::peak_rss()
    );
}
