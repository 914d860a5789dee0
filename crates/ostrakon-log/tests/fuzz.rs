//! Property tests of recovery: `Log::open` and `Log::inspect` of random bytes and of damaged
//! valid logs never panic, agree with each other, and return only a gapless prefix of what was
//! written (the invariants are listed in `support/mod.rs`). `examples/fuzz_recovery.rs` runs
//! the same checks for many more cases.

// Helpers here are test code too (clippy.toml only exempts #[test] fns): failing loudly is the point.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use ostrakon_testkit::log_frames as support;

use proptest::prelude::*;
use support::{Mutation, Original, V2_HEADER_LEN, build, check};

const CASES: u32 = 300;

fn payloads() -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(prop::collection::vec(any::<u8>(), 0..48), 0..7)
}

fn original() -> impl Strategy<Value = Original> {
    (payloads(), any::<bool>(), -1_000i64..1_000).prop_map(|(p, v1, t0)| build(&p, v1, t0))
}

/// Mutations with offsets anywhere in a file of up to ~400 bytes (taken modulo its length).
fn mutation() -> impl Strategy<Value = Mutation> {
    let at = 0usize..400;
    prop_oneof![
        (at.clone(), any::<u8>()).prop_map(|(at, mask)| Mutation::Flip { at, mask }),
        at.clone().prop_map(|len| Mutation::Truncate { len }),
        at.clone().prop_map(|from| Mutation::ZeroTail { from }),
        (at.clone(), prop::collection::vec(any::<u8>(), 1..40))
            .prop_map(|(from, fill)| Mutation::GarbageTail { from, fill }),
        (at.clone(), 1usize..80).prop_map(|(from, len)| Mutation::ZeroRange { from, len }),
        (at.clone(), 0usize..40, prop::collection::vec(any::<u8>(), 0..40))
            .prop_map(|(at, remove, insert)| Mutation::Splice { at, remove, insert }),
        (at.clone(), 1usize..80, at).prop_map(|(from, len, to)| Mutation::CopyWithin { from, len, to }),
    ]
}

/// Random bytes, sometimes behind a valid header so that the frame parser sees them.
fn random_file() -> impl Strategy<Value = Vec<u8>> {
    let v2 = build(&[], false, 0).bytes;
    (0..3u8, prop::collection::vec(any::<u8>(), 0..300)).prop_map(move |(prefix, rest)| {
        let mut bytes = match prefix {
            0 => Vec::new(),
            1 => v2.clone(),
            _ => {
                let mut v1 = b"MNEMOLOG".to_vec();
                v1.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
                v1
            }
        };
        bytes.extend_from_slice(&rest);
        bytes
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn recovery_of_random_bytes_is_safe(bytes in random_file()) {
        check(&bytes, None).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn recovery_of_damaged_logs_keeps_a_prefix(original in original(), mutations in prop::collection::vec(mutation(), 1..3)) {
        // One mutation is checked on its own (with its tail-damage claim); several together
        // only for the prefix property.
        let (bytes, tail_from) = mutations[0].apply(&original.bytes);
        check(&bytes, Some((&original, tail_from))).map_err(TestCaseError::fail)?;
        let mut bytes = original.bytes.clone();
        for m in &mutations {
            bytes = m.apply(&bytes).0;
        }
        check(&bytes, Some((&original, None))).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn clean_logs_recover_whole(original in original()) {
        prop_assert_eq!(check(&original.bytes, Some((&original, Some(original.bytes.len())))), Ok("ok-clean"));
        prop_assert!(original.bytes.len() >= original.header_len.min(V2_HEADER_LEN));
    }
}
