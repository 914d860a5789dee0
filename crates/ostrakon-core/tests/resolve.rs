//! Slot resolution against a reference that applies the rules as written: every
//! candidate compared with every candidate above it, its effective validity computed by
//! subtracting each competitor's interval in turn. The resolver must give the same
//! verdicts on random slots, small and large (ten thousand candidates on one slot), and
//! so must the resolution of what holds at T alone (`resolve_current`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use ostrakon_core::{
    Candidate, Cardinality, FactId, Interval, Literal, Polarity, Seq, Status, Timestamp, Value, Verdict,
    resolve_current, resolve_slot, subtract_all,
};
use proptest::prelude::*;

/// A verdict as plain data: (status, beaten by, contradicts, effective).
type Plain = (Status, Option<FactId>, Vec<FactId>, Vec<Interval>);

fn plain(v: &Verdict) -> Plain {
    (v.status, v.beaten_by, v.contradicts.to_vec(), v.effective.clone())
}

/// The rules as written, quadratic on purpose.
fn reference(card: Cardinality, candidates: &[Candidate<'_>], t: Timestamp) -> Vec<Plain> {
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by(|&a, &b| candidates[b].rank_cmp(&candidates[a]));
    let mut verdicts: Vec<Option<Plain>> = vec![None; candidates.len()];
    for (pos, &i) in order.iter().enumerate() {
        let f = &candidates[i];
        let above = order[..pos].iter().map(|&j| &candidates[j]).filter(|g| g.competes_with(f, card));
        let mut beaten_by: Option<&Candidate<'_>> = None;
        let mut outranking = Vec::new();
        for g in above {
            if beaten_by.is_none() && g.valid.contains(t) {
                beaten_by = Some(g);
            }
            outranking.push(g.valid);
        }
        let effective = subtract_all(vec![f.valid], &outranking);
        let mut contradicts: Vec<FactId> = if f.polarity == Polarity::Asserted {
            candidates
                .iter()
                .filter(|g| {
                    g.id != f.id
                        && g.polarity == Polarity::Asserted
                        && g.valid.from() == f.valid.from()
                        && g.competes_with(f, card)
                })
                .map(|g| g.id)
                .collect()
        } else {
            Vec::new()
        };
        contradicts.sort();
        let (status, beaten_by) = if t < f.valid.from() {
            (Status::NotYetValid, None)
        } else if !f.valid.contains(t) {
            (Status::Ended, None)
        } else {
            match beaten_by {
                None => (Status::Current, None),
                Some(g) => {
                    let status = if g.polarity != f.polarity {
                        Status::Negated
                    } else if g.valid.from() == f.valid.from() {
                        Status::Contradicted
                    } else {
                        Status::Superseded
                    };
                    (status, Some(g.id))
                }
            }
        };
        verdicts[i] = Some((status, beaten_by, contradicts, effective));
    }
    verdicts.into_iter().flatten().collect()
}

/// A candidate as generated: value, negated, start, length (none: open), seq, confidence.
type Spec = (u8, bool, u16, Option<u16>, u16, u8);

fn build(specs: &[Spec], values: &[Value]) -> Vec<(FactId, Value, Polarity, Interval, Seq, f64)> {
    specs
        .iter()
        .enumerate()
        .map(|(i, &(v, negated, from, len, seq, conf))| {
            let from = Timestamp::from_micros(i64::from(from));
            let to = len.map(|l| Timestamp::from_micros(from.as_micros() + 1 + i64::from(l)));
            (
                FactId(i as u64 + 1),
                values[usize::from(v) % values.len()].clone(),
                if negated { Polarity::Negated } else { Polarity::Asserted },
                Interval::new("valid", from, to).unwrap(),
                Seq(u64::from(seq)),
                [1.0, 0.8, 0.5][usize::from(conf % 3)],
            )
        })
        .collect()
}

fn check(card: Cardinality, specs: &[Spec], distinct_values: usize, probes: &[u16]) {
    let values: Vec<Value> =
        (0..distinct_values as i64).map(|v| Value::Literal(Literal::Integer(v))).collect();
    let built = build(specs, &values);
    let candidates: Vec<Candidate<'_>> = built
        .iter()
        .map(|(id, value, polarity, valid, seq, confidence)| Candidate {
            id: *id,
            value,
            polarity: *polarity,
            valid: *valid,
            seq: *seq,
            confidence: *confidence,
        })
        .collect();
    for &p in probes {
        let t = Timestamp::from_micros(i64::from(p));
        let verdicts = resolve_slot(card, &candidates, t);
        assert_eq!(
            verdicts.iter().map(plain).collect::<Vec<_>>(),
            reference(card, &candidates, t),
            "{card:?} at {p}"
        );
        // What holds at T alone: the same verdicts for the candidates in force, none for the rest.
        let current: Vec<Option<Verdict>> =
            verdicts.into_iter().map(|v| (v.status == Status::Current).then_some(v)).collect();
        assert_eq!(resolve_current(card, &candidates, t), current, "current only, {card:?} at {p}");
    }
}

fn spec(max_from: u16) -> impl Strategy<Value = Spec> {
    (
        any::<u8>(),
        proptest::bool::weighted(0.2),
        0..max_from,
        proptest::option::weighted(0.7, 0..40u16),
        0..30u16,
        any::<u8>(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn resolution_agrees_with_the_rules_as_written(
        one in any::<bool>(),
        distinct in 1..5usize,
        specs in proptest::collection::vec(spec(60), 0..40),
        probes in proptest::collection::vec(0..120u16, 1..6),
    ) {
        let card = if one { Cardinality::One } else { Cardinality::Many };
        check(card, &specs, distinct, &probes);
    }
}

/// Ten thousand candidates on one slot: successive values, corrections, denials and
/// repeats, on both cardinalities.
#[test]
fn ten_thousand_candidates_on_one_slot_agree_with_the_rules_as_written() {
    let mut seed = 11u64;
    let mut next = |m: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % m
    };
    let specs: Vec<Spec> = (0..10_000u16)
        .map(|i| {
            let negated = next(10) == 0;
            let len = if next(3) == 0 { Some(next(500) as u16) } else { None };
            (
                next(40) as u8,
                negated,
                i.wrapping_mul(3) % 20_000 + next(5) as u16,
                len,
                next(100) as u16,
                next(3) as u8,
            )
        })
        .collect();
    for card in [Cardinality::One, Cardinality::Many] {
        check(card, &specs, 40, &[7_000, 19_999]);
    }
}
