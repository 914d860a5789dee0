//! Model-based property test: random event sequences go through the store, and every
//! read at a random (T, S) must agree with a deliberately naive reference resolver that
//! scans every accepted event and applies the resolution rules as written.

use crate::common;

use std::collections::{BTreeMap, BTreeSet, HashSet};

use common::{Fixture, t};
use mnemo_engine::core::{Cardinality, EntityId, FactId, Interval, Polarity, Seq, Status, Timestamp, Value};
use mnemo_engine::{Change, EntityRef, FactFilter, NewFact, ObjectRef, ReadAt, Scope};
use proptest::prelude::*;

const PREDICATES: [(&str, Cardinality); 2] = [("one", Cardinality::One), ("many", Cardinality::Many)];

fn year(y: u8) -> Timestamp {
    t(&format!("{}", 2000 + u32::from(y)))
}

#[derive(Clone, Debug)]
enum Op {
    Assert {
        subject: u8,
        pred: u8,
        object: u8,
        from: u8,
        len: Option<u8>,
        negated: bool,
        confidence: u8,
        supersedes: Option<u16>,
    },
    End {
        fact: u16,
        to: u8,
    },
    Retract {
        fact: u16,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..2u8, 0..2u8, 0..3u8, 0..20u8, proptest::option::of(1..12u8), proptest::bool::weighted(0.2), 0..3u8, proptest::option::weighted(0.15, any::<u16>()))
            .prop_map(|(subject, pred, object, from, len, negated, confidence, supersedes)| Op::Assert {
                subject, pred, object, from, len, negated, confidence, supersedes
            }),
        1 => (any::<u16>(), 0..30u8).prop_map(|(fact, to)| Op::End { fact, to }),
        1 => any::<u16>().prop_map(|fact| Op::Retract { fact }),
    ]
}

/// What the reference keeps of an accepted assertion.
#[derive(Clone, Debug)]
struct Stated {
    id: FactId,
    seq: Seq,
    subject: EntityId,
    pred: usize,
    object: Value,
    valid: Interval,
    confidence: f64,
    polarity: Polarity,
    supersedes: Option<FactId>,
}

/// Every accepted event, in log order.
#[derive(Default)]
struct Reference {
    asserted: Vec<Stated>,
    ends: Vec<(Seq, FactId, Timestamp)>,
    retractions: Vec<(Seq, FactId)>,
}

impl Reference {
    /// Status of every visible fact of `(subject, pred)` at (T, S), by scanning everything.
    fn statuses(&self, subject: EntityId, pred: usize, t: Timestamp, s: Seq) -> BTreeMap<FactId, Status> {
        let card = PREDICATES[pred].1;
        let visible: Vec<&Stated> =
            self.asserted.iter().filter(|a| a.seq <= s && a.subject == subject && a.pred == pred).collect();
        let retracted = |a: &Stated| {
            self.retractions.iter().any(|(rs, f)| *rs <= s && *f == a.id)
                || self.asserted.iter().any(|b| b.seq <= s && b.supersedes == Some(a.id))
        };
        let end = |a: &Stated| {
            // The latest visible end wins; `ends` is in log order.
            self.ends
                .iter()
                .rev()
                .find(|(es, f, _)| *es <= s && *f == a.id)
                .map_or(a.valid.to(), |(_, _, to)| Some(*to))
        };
        let holds = |a: &Stated| t >= a.valid.from() && end(a).is_none_or(|e| t < e);
        let rank = |a: &Stated| (a.valid.from(), a.seq, a.confidence.to_bits(), a.id);
        let competes = |g: &Stated, f: &Stated| match (g.polarity, f.polarity) {
            (Polarity::Asserted, Polarity::Asserted) => card == Cardinality::One && g.object != f.object,
            (Polarity::Negated, Polarity::Negated) => false,
            _ => g.object == f.object,
        };
        let candidates: Vec<&Stated> = visible.iter().copied().filter(|a| !retracted(a)).collect();
        let mut out = BTreeMap::new();
        for f in &visible {
            let status = if retracted(f) {
                Status::Retracted
            } else if t < f.valid.from() {
                Status::NotYetValid
            } else if !holds(f) {
                Status::Ended
            } else {
                let beater = candidates
                    .iter()
                    .filter(|g| g.id != f.id && competes(g, f) && holds(g) && rank(g) > rank(f))
                    .max_by_key(|g| rank(g));
                match beater {
                    None => Status::Current,
                    Some(g) if g.polarity != f.polarity => Status::Negated,
                    Some(g) if g.valid.from() == f.valid.from() => Status::Contradicted,
                    Some(_) => Status::Superseded,
                }
            };
            out.insert(f.id, status);
        }
        out
    }
}

fn run(batches: Vec<Vec<Op>>, probes: Vec<(u8, u16, u8, u8)>) -> Result<(), TestCaseError> {
    let fx = Fixture::new();
    for (name, card) in PREDICATES {
        fx.define(name, card);
    }
    let subjects = [fx.entity("s0"), fx.entity("s1")];
    let objects = [fx.entity("o0"), fx.entity("o1"), fx.entity("o2")];
    let mut reference = Reference::default();
    let mut keys = HashSet::new();
    let mut first_seq = None;
    for batch in batches {
        let mut changes = Vec::new();
        let mut pending = Vec::new();
        for op in batch {
            let pick = |i: u16| {
                (!reference.asserted.is_empty())
                    .then(|| reference.asserted[i as usize % reference.asserted.len()].id)
            };
            match op {
                Op::Assert { subject, pred, object, from, len, negated, confidence, supersedes } => {
                    // Identical statements are corroboration (tested on their own); keep them out.
                    if !keys.insert((subject, pred, object, from, negated)) {
                        continue;
                    }
                    let valid = Interval::new("valid", year(from), len.map(|l| year(from + l))).unwrap();
                    let polarity = if negated { Polarity::Negated } else { Polarity::Asserted };
                    let conf = [1.0, 0.8, 0.5][confidence as usize];
                    let supersedes = supersedes.and_then(pick);
                    changes.push(Change::AssertFact(NewFact {
                        confidence: Some(conf),
                        polarity,
                        supersedes,
                        ..NewFact::new(
                            EntityRef::Id(subjects[subject as usize]),
                            PREDICATES[pred as usize].0,
                            ObjectRef::Entity(EntityRef::Id(objects[object as usize])),
                            valid,
                        )
                    }));
                    pending.push(Some((subject, pred, object, valid, conf, polarity, supersedes)));
                }
                Op::End { fact, to } => {
                    if let Some(f) = pick(fact) {
                        changes.push(Change::EndFact { fact: f, valid_to: year(to) });
                        pending.push(None);
                    }
                }
                Op::Retract { fact } => {
                    if let Some(f) = pick(fact) {
                        changes.push(Change::RetractFact { fact: f, reason: None });
                        pending.push(None);
                    }
                }
            }
        }
        if changes.is_empty() {
            continue;
        }
        // A refused batch (an end before a start, a second retraction…) stores nothing.
        let Ok(receipt) = fx.store.append(&fx.ns, changes.clone()) else {
            continue;
        };
        first_seq.get_or_insert(receipt.seq);
        for (n, (change, p)) in changes.iter().zip(pending).enumerate() {
            match (change, p) {
                (
                    Change::AssertFact(_),
                    Some((subject, pred, object, valid, confidence, polarity, supersedes)),
                ) => {
                    reference.asserted.push(Stated {
                        id: receipt.fact(n).unwrap(),
                        seq: receipt.seq,
                        subject: subjects[subject as usize],
                        pred: pred as usize,
                        object: Value::Entity(objects[object as usize]),
                        valid,
                        confidence,
                        polarity,
                        supersedes,
                    });
                }
                (Change::EndFact { fact, valid_to }, _) => {
                    reference.ends.push((receipt.seq, *fact, *valid_to))
                }
                (Change::RetractFact { fact, .. }, _) => reference.retractions.push((receipt.seq, *fact)),
                _ => {}
            }
        }
    }
    let Some(first) = first_seq else { return Ok(()) };
    let last = fx.store.counts(&fx.ns).batches;
    for (subject, s, ty, pred) in probes {
        let s = Seq(first.0 - 1 + u64::from(s) % (last - first.0 + 2));
        // Probe year starts (boundaries) and mid-years.
        let t = Timestamp::from_micros(year(ty / 2).as_micros() + i64::from(ty % 2) * 182 * 86_400_000_000);
        let (subject, pred) = (subjects[subject as usize % 2], pred as usize % 2);
        let expected = reference.statuses(subject, pred, t, s);
        let history =
            fx.store.history(&fx.ns, subject, PREDICATES[pred].0, ReadAt::bitemporal(t, s)).unwrap().value;
        let actual: BTreeMap<FactId, Status> = history.iter().map(|f| (f.fact.id, f.status)).collect();
        prop_assert_eq!(&actual, &expected, "statuses at T={} S={}", t, s);
        let filter =
            FactFilter { subject: Some(subject), predicate: Some(PREDICATES[pred].0.into()), object: None };
        let in_force: BTreeSet<FactId> = fx
            .store
            .facts(&fx.ns, &filter, ReadAt::bitemporal(t, s), Scope::InForce)
            .unwrap()
            .value
            .iter()
            .map(|f| f.fact.id)
            .collect();
        let expected_in_force: BTreeSet<FactId> = expected
            .iter()
            .filter(|(id, st)| {
                **st == Status::Current
                    && reference.asserted.iter().any(|a| a.id == **id && a.polarity == Polarity::Asserted)
            })
            .map(|(id, _)| *id)
            .collect();
        prop_assert_eq!(in_force, expected_in_force);
        // Effective validity agrees with the reference at every probe time.
        for f in &history {
            for y in 0..34u8 {
                let probe = year(y);
                let inside = f.effective.iter().any(|i| i.contains(probe));
                let current =
                    reference.statuses(subject, pred, probe, s).get(&f.fact.id) == Some(&Status::Current);
                prop_assert_eq!(inside, current, "effective validity of {} at {}", f.fact.id, probe);
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn store_agrees_with_naive_reference(
        batches in proptest::collection::vec(proptest::collection::vec(op(), 1..4), 1..30),
        probes in proptest::collection::vec((any::<u8>(), any::<u16>(), 0..68u8, any::<u8>()), 20),
    ) {
        run(batches, probes)?;
    }
}
