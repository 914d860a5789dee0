//! Property-based fuzzing of the API surface, a few hundred cases per run: random GraphQL
//! requests built from the schema with hostile arguments never panic, always carry an
//! error code, and a refused mutation stores nothing; time parsing never panics on any
//! text. `cargo bench --bench fuzz_graphql` runs the same GraphQL cases by the hundred
//! thousand.

use crate::common::fuzz;

use ostrakon_engine::core::{TimeZone, Timestamp};
use proptest::prelude::*;

/// Cases per run in the suite; the bench runs as many as asked.
const CASES: u64 = 400;

#[tokio::test]
async fn random_requests_never_panic_always_carry_a_code_and_refusals_store_nothing() {
    let grammar = fuzz::Grammar::new();
    let (store, schema) = fuzz::target().await;
    let mut outcomes = std::collections::BTreeMap::new();
    for seed in 0..CASES {
        match fuzz::run_case(&grammar, &store, &schema, seed).await {
            Ok(outcome) => *outcomes.entry(outcome).or_insert(0u64) += 1,
            Err(broken) => panic!("{broken}"),
        }
    }
    // The generator reaches both sides: requests that run and requests refused.
    assert!(outcomes.get(&fuzz::Outcome::Ok).copied().unwrap_or(0) > CASES / 20, "{outcomes:?}");
    assert!(outcomes.get(&fuzz::Outcome::Refused).copied().unwrap_or(0) > CASES / 20, "{outcomes:?}");
}

fn time_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[-+]?[0-9#]{0,7}(-[0-9]{0,3}(-[0-9]{0,3})?)?",
        "[-+]?[0-9]{1,7}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{0,12})?)?(Z|[+-][0-9]{2}:?[0-9]{2})?",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Any text is a time or a typed error, in any zone; a time read back is the same time.
    #[test]
    fn time_parsing_never_panics(text in time_text(), zone in prop_oneof![Just("UTC".to_owned()), Just("Europe/Paris".to_owned()), Just("Pacific/Kiritimati".to_owned()), "\\PC{0,12}"]) {
        let zone = TimeZone::parse("timeZone", &zone).unwrap_or(TimeZone::Utc);
        if let Ok(t) = Timestamp::parse("t", &text, &zone) {
            let again = Timestamp::parse("t", &t.to_string(), &TimeZone::Utc).unwrap();
            prop_assert_eq!(again, t);
        }
    }
}
