//! Model-based property test: random event sequences go through the store, and every
//! read at a random (T, S) must agree with a deliberately naive reference resolver that
//! scans every accepted event and applies the resolution rules as written. Statements
//! are first-class: the generator restates earlier statements (after denials too), and
//! ends, retracts and corrects any statement, restatements included.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use common::{Fixture, t};
use ostrakon_engine::core::OverlapQuery;
use ostrakon_engine::core::{
    Cardinality, EntityId, FactId, Interval, Polarity, Seq, Status, Timestamp, Value, combine_confidence,
};
use ostrakon_engine::views::{ChangesQuery, SeriesQuery};
use ostrakon_engine::{Change, EntityRef, NewFact, ObjectRef, ReadAt, views::FactFilter, views::Scope};
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
    /// The same statement as an earlier one, from another source (another confidence):
    /// a restatement while its fact is live, a new fact otherwise.
    Restate {
        statement: u16,
        confidence: u8,
    },
    End {
        statement: u16,
        to: u8,
    },
    Retract {
        statement: u16,
    },
    /// Erase the fact a statement belongs to, with all its statements (its own step,
    /// before the batch it falls in).
    Erase {
        statement: u16,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..2u8, 0..2u8, 0..3u8, 0..20u8, proptest::option::of(1..12u8), proptest::bool::weighted(0.2), 0..3u8, proptest::option::weighted(0.15, any::<u16>()))
            .prop_map(|(subject, pred, object, from, len, negated, confidence, supersedes)| Op::Assert {
                subject, pred, object, from, len, negated, confidence, supersedes
            }),
        2 => (any::<u16>(), 0..3u8).prop_map(|(statement, confidence)| Op::Restate { statement, confidence }),
        1 => (any::<u16>(), 0..30u8).prop_map(|(statement, to)| Op::End { statement, to }),
        1 => any::<u16>().prop_map(|statement| Op::Retract { statement }),
        1 => any::<u16>().prop_map(|statement| Op::Erase { statement }),
    ]
}

const CONFIDENCES: [f64; 3] = [1.0, 0.8, 0.5];

/// What an accepted assertion says.
#[derive(Clone, Debug, PartialEq)]
struct Said {
    subject: EntityId,
    pred: usize,
    object: Value,
    valid: Interval,
    polarity: Polarity,
}

/// One statement, as the reference keeps it.
#[derive(Clone, Debug)]
struct Statement {
    id: FactId,
    seq: Seq,
    confidence: f64,
    said: Said,
    withdrawn: Option<Seq>,
}

/// A fact: the statements that said the same thing while it was live.
#[derive(Clone, Debug)]
struct RefFact {
    statements: Vec<Statement>,
    ends: Vec<(Seq, Timestamp)>,
    retracted: Option<Seq>,
}

impl RefFact {
    fn id(&self) -> FactId {
        self.statements[0].id
    }
    fn said(&self) -> &Said {
        &self.statements[0].said
    }
    fn first_seq(&self) -> Seq {
        self.statements[0].seq
    }
    fn live(&self, s: Seq) -> Vec<&Statement> {
        if self.retracted.is_some_and(|r| r <= s) {
            return Vec::new();
        }
        self.statements.iter().filter(|st| st.seq <= s && st.withdrawn.is_none_or(|w| w > s)).collect()
    }
    fn end(&self, s: Seq) -> Option<Timestamp> {
        self.ends.iter().rev().find(|(es, _)| *es <= s).map_or(self.said().valid.to(), |(_, to)| Some(*to))
    }
}

/// Every accepted event folded in log order, as naively as the rules allow.
#[derive(Default)]
struct Reference {
    facts: Vec<RefFact>,
    /// Every statement's content, by id, for `Restate` and for picking targets.
    statements: Vec<(FactId, Said)>,
    /// Every accepted event, in log order: what an erasure folds again without the
    /// erased records.
    log: Vec<(Seq, RefEvent)>,
}

/// An accepted event, as the reference folds it.
#[derive(Clone, Debug)]
enum RefEvent {
    Assert { id: FactId, confidence: f64, said: Said, supersedes: Option<FactId> },
    End { id: FactId, to: Timestamp },
    Retract { id: FactId },
}

impl Reference {
    /// (fact index, statement index) of a statement id.
    fn locate(&self, id: FactId) -> Option<(usize, usize)> {
        self.facts
            .iter()
            .enumerate()
            .find_map(|(f, fact)| fact.statements.iter().position(|st| st.id == id).map(|i| (f, i)))
    }

    fn withdraw(&mut self, id: FactId, seq: Seq) {
        if let Some((f, i)) = self.locate(id)
            && self.facts[f].retracted.is_none()
            && self.facts[f].statements[i].withdrawn.is_none()
        {
            self.facts[f].statements[i].withdrawn = Some(seq);
        }
    }

    fn assert(&mut self, id: FactId, seq: Seq, confidence: f64, said: Said, supersedes: Option<FactId>) {
        self.statements.push((id, said.clone()));
        let corrected = supersedes.and_then(|x| self.locate(x)).map(|(f, _)| f);
        if let Some(x) = supersedes {
            self.withdraw(x, seq);
        }
        let statement = Statement { id, seq, confidence, said: said.clone(), withdrawn: None };
        let same = (0..self.facts.len()).find(|&f| {
            let fact = &self.facts[f];
            let first = fact.said();
            Some(f) != corrected
                && !fact.live(seq).is_empty()
                && (first.subject, first.pred, &first.object, first.polarity, first.valid.from())
                    == (said.subject, said.pred, &said.object, said.polarity, said.valid.from())
                && fact.end(seq) == said.valid.to()
        });
        match same {
            Some(f) => self.facts[f].statements.push(statement),
            None => {
                self.facts.push(RefFact { statements: vec![statement], ends: Vec::new(), retracted: None })
            }
        }
    }

    fn end(&mut self, id: FactId, seq: Seq, to: Timestamp) {
        let Some((f, i)) = self.locate(id) else { return };
        if i > 0 {
            self.withdraw(id, seq);
        } else if to > self.facts[f].said().valid.from() {
            self.facts[f].ends.push((seq, to));
        }
    }

    fn retract(&mut self, id: FactId, seq: Seq) {
        let Some((f, i)) = self.locate(id) else { return };
        if i > 0 {
            self.withdraw(id, seq);
        } else if self.facts[f].retracted.is_none() {
            self.facts[f].retracted = Some(seq);
        }
    }

    /// An erasure of the fact holding statement `id`: the fact and every statement of it
    /// are gone, at every read point, as if never written.
    /// Folds an accepted event in, and keeps it.
    fn apply(&mut self, seq: Seq, event: RefEvent) {
        match &event {
            RefEvent::Assert { id, confidence, said, supersedes } => {
                self.assert(*id, seq, *confidence, said.clone(), *supersedes)
            }
            RefEvent::End { id, to } => self.end(*id, seq, *to),
            RefEvent::Retract { id } => self.retract(*id, seq),
        }
        self.log.push((seq, event));
    }

    /// An erasure of the fact holding statement `id`: the log without every statement of
    /// it (and the ends and retractions of them), folded again from nothing — as if they
    /// had never been written.
    fn erase(&mut self, id: FactId) {
        let Some((f, _)) = self.locate(id) else { return };
        let gone: Vec<FactId> = self.facts[f].statements.iter().map(|st| st.id).collect();
        let log = std::mem::take(&mut self.log);
        *self = Reference::default();
        for (seq, event) in log {
            let target = match &event {
                RefEvent::Assert { id, .. } | RefEvent::End { id, .. } | RefEvent::Retract { id } => *id,
            };
            if !gone.contains(&target) {
                self.apply(seq, event);
            }
        }
    }

    /// Status of every visible fact of `(subject, pred)` at (T, S), by scanning everything.
    fn statuses(&self, subject: EntityId, pred: usize, t: Timestamp, s: Seq) -> BTreeMap<FactId, Status> {
        let card = PREDICATES[pred].1;
        let visible: Vec<&RefFact> = self
            .facts
            .iter()
            .filter(|f| f.first_seq() <= s && f.said().subject == subject && f.said().pred == pred)
            .collect();
        let holds = |f: &RefFact| t >= f.said().valid.from() && f.end(s).is_none_or(|e| t < e);
        // A fact ranks by its latest live statement, with its live statements' confidence.
        let rank = |f: &RefFact| {
            let live = f.live(s);
            let seq = live.iter().map(|st| st.seq).max().unwrap();
            let confidence = match live.as_slice() {
                [one] => one.confidence,
                many => combine_confidence(many.iter().map(|st| st.confidence)),
            };
            (f.said().valid.from(), seq, confidence.to_bits(), f.id())
        };
        let competes = |g: &Said, f: &Said| match (g.polarity, f.polarity) {
            (Polarity::Asserted, Polarity::Asserted) => card == Cardinality::One && g.object != f.object,
            (Polarity::Negated, Polarity::Negated) => false,
            _ => g.object == f.object,
        };
        let candidates: Vec<&RefFact> = visible.iter().copied().filter(|f| !f.live(s).is_empty()).collect();
        let mut out = BTreeMap::new();
        for f in &visible {
            let status = if f.live(s).is_empty() {
                Status::Retracted
            } else if t < f.said().valid.from() {
                Status::NotYetValid
            } else if !holds(f) {
                Status::Ended
            } else {
                let beater = candidates
                    .iter()
                    .filter(|g| {
                        g.id() != f.id() && competes(g.said(), f.said()) && holds(g) && rank(g) > rank(f)
                    })
                    .max_by_key(|g| rank(g));
                match beater {
                    None => Status::Current,
                    Some(g) if g.said().polarity != f.said().polarity => Status::Negated,
                    Some(g) if g.said().valid.from() == f.said().valid.from() => Status::Contradicted,
                    Some(_) => Status::Superseded,
                }
            };
            out.insert(f.id(), status);
        }
        out
    }

    fn polarity_of(&self, id: FactId) -> Option<Polarity> {
        self.facts.iter().find(|f| f.id() == id).map(|f| f.said().polarity)
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
    let mut first_seq = None;
    for batch in batches {
        let mut changes = Vec::new();
        // What each change says, for the reference once the batch is accepted.
        let mut pending: Vec<Option<(f64, Said)>> = Vec::new();
        for op in batch {
            let pick = |i: u16| {
                (!reference.statements.is_empty())
                    .then(|| reference.statements[i as usize % reference.statements.len()].clone())
            };
            let (said, confidence, supersedes) = match op {
                Op::Assert { subject, pred, object, from, len, negated, confidence, supersedes } => {
                    let said = Said {
                        subject: subjects[subject as usize],
                        pred: pred as usize,
                        object: Value::Entity(objects[object as usize]),
                        valid: Interval::new("valid", year(from), len.map(|l| year(from + l))).unwrap(),
                        polarity: if negated { Polarity::Negated } else { Polarity::Asserted },
                    };
                    // A correction names a statement of its own slot (another is refused).
                    let same_slot: Vec<FactId> = reference
                        .statements
                        .iter()
                        .filter(|(_, s)| s.subject == said.subject && s.pred == said.pred)
                        .map(|(id, _)| *id)
                        .collect();
                    let corrects = supersedes.and_then(|i| {
                        (!same_slot.is_empty()).then(|| same_slot[i as usize % same_slot.len()])
                    });
                    (said, CONFIDENCES[confidence as usize], corrects)
                }
                Op::Restate { statement, confidence } => {
                    let Some((_, said)) = pick(statement) else { continue };
                    (said, CONFIDENCES[confidence as usize], None)
                }
                Op::End { statement, to } => {
                    if let Some((id, _)) = pick(statement) {
                        changes.push(Change::EndFact { fact: id, valid_to: year(to) });
                        pending.push(None);
                    }
                    continue;
                }
                Op::Retract { statement } => {
                    if let Some((id, _)) = pick(statement) {
                        changes.push(Change::RetractFact { fact: id, reason: None });
                        pending.push(None);
                    }
                    continue;
                }
                Op::Erase { statement } => {
                    if let Some((id, _)) = pick(statement) {
                        let target = ostrakon_engine::EraseTarget::Facts(vec![id]);
                        let request = ostrakon_engine::EraseRequest { target, reason: None, by: None };
                        fx.store.erase(&fx.ns, request).unwrap();
                        reference.erase(id);
                    }
                    continue;
                }
            };
            let object = match &said.object {
                Value::Entity(e) => ObjectRef::Entity(EntityRef::Id(*e)),
                Value::Literal(_) => unreachable!(),
            };
            changes.push(Change::AssertFact(NewFact {
                confidence: Some(confidence),
                polarity: said.polarity,
                supersedes,
                ..NewFact::new(EntityRef::Id(said.subject), PREDICATES[said.pred].0, object, said.valid)
            }));
            pending.push(Some((confidence, said)));
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
            let event = match (change, p) {
                (Change::AssertFact(f), Some((confidence, said))) => RefEvent::Assert {
                    id: receipt.fact(n).unwrap(),
                    confidence,
                    said,
                    supersedes: f.supersedes,
                },
                (Change::EndFact { fact, valid_to }, _) => RefEvent::End { id: *fact, to: *valid_to },
                (Change::RetractFact { fact, .. }, _) => RefEvent::Retract { id: *fact },
                _ => continue,
            };
            reference.apply(receipt.seq, event);
        }
    }
    let Some(first) = first_seq else { return Ok(()) };
    let last = fx.store.counts(&fx.ns).unwrap().batches;
    if let Some((_, s, _, _)) = probes.first() {
        check_analytics(&fx, &reference, &subjects, Seq(first.0 - 1 + u64::from(*s) % (last - first.0 + 2)))?;
    }
    check_analytics(&fx, &reference, &subjects, Seq(last))?;
    for (subject, s, ty, pred) in probes {
        let s = Seq(first.0 - 1 + u64::from(s) % (last - first.0 + 2));
        // Probe year starts (boundaries) and mid-years.
        let t = Timestamp::from_micros(year(ty / 2).as_micros() + i64::from(ty % 2) * 182 * 86_400_000_000);
        let (subject, pred) = (subjects[subject as usize % 2], pred as usize % 2);
        let expected = reference.statuses(subject, pred, t, s);
        let history = fx
            .store
            .at(&fx.ns, ReadAt::bitemporal(t, s))
            .and_then(|r| r.history(subject, PREDICATES[pred].0))
            .unwrap()
            .value;
        let actual: BTreeMap<FactId, Status> = history.iter().map(|f| (f.fact.id, f.status)).collect();
        prop_assert_eq!(&actual, &expected, "statuses at T={} S={}", t, s);
        let filter =
            FactFilter { subject: Some(subject), predicate: Some(PREDICATES[pred].0.into()), object: None };
        let in_force: BTreeSet<FactId> = fx
            .store
            .at(&fx.ns, ReadAt::bitemporal(t, s))
            .and_then(|r| r.facts(&filter, Scope::InForce))
            .unwrap()
            .value
            .iter()
            .map(|f| f.fact.id)
            .collect();
        let expected_in_force: BTreeSet<FactId> = expected
            .iter()
            .filter(|(id, st)| {
                **st == Status::Current && reference.polarity_of(**id) == Some(Polarity::Asserted)
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

/// The analytics at knownAt `s` against the reference scanned at every year: series,
/// timelines, durations, changes, overlaps in every relation, and aggregates.
fn check_analytics(
    fx: &Fixture,
    reference: &Reference,
    subjects: &[EntityId; 2],
    s: Seq,
) -> Result<(), TestCaseError> {
    use ostrakon_engine::core::{Allen, GroupBy, Side, Step};
    const YEARS: u8 = 34;
    let at = ReadAt::bitemporal(year(0), s);
    // Facts in force (positive, current) at year y in slot (subject, pred).
    let in_force = |subject: EntityId, pred: usize, y: u8| -> Vec<(FactId, Value)> {
        reference
            .statuses(subject, pred, year(y), s)
            .into_iter()
            .filter(|(id, st)| {
                *st == Status::Current && reference.polarity_of(*id) == Some(Polarity::Asserted)
            })
            .map(|(id, _)| (id, reference.facts.iter().find(|f| f.id() == id).unwrap().said().object.clone()))
            .collect()
    };
    let values_at = |subject: EntityId, pred: usize, y: u8| -> BTreeSet<Value> {
        in_force(subject, pred, y).into_iter().map(|(_, v)| v).collect()
    };
    let year_step = Step::parse("step", "P1Y").unwrap();
    for (pred, (name, _)) in PREDICATES.iter().enumerate() {
        // Series: subjects in force at each year, in all and per value.
        let query = SeriesQuery {
            predicate: name,
            value: None,
            from: year(0),
            to: year(YEARS),
            step: year_step,
            by_value: false,
        };
        let series = fx.store.at(&fx.ns, at).and_then(|r| r.in_force_series(&query)).unwrap();
        prop_assert_eq!(series.value.points.len(), usize::from(YEARS));
        let want: Vec<u64> = (0..YEARS)
            .map(|y| subjects.iter().filter(|e| !values_at(**e, pred, y).is_empty()).count() as u64)
            .collect();
        prop_assert_eq!(&series.value.groups[0].counts, &want, "series of {}", name);
        let grouped = fx
            .store
            .at(&fx.ns, at)
            .and_then(|r| r.in_force_series(&SeriesQuery { by_value: true, ..query }))
            .unwrap();
        let got: BTreeMap<Value, Vec<u64>> =
            grouped.value.groups.into_iter().map(|g| (g.value.unwrap(), g.counts)).collect();
        let mut want: BTreeMap<Value, Vec<u64>> = BTreeMap::new();
        for y in 0..YEARS {
            for e in subjects {
                for v in values_at(*e, pred, y) {
                    want.entry(v).or_insert_with(|| vec![0; usize::from(YEARS)])[usize::from(y)] += 1;
                }
            }
        }
        prop_assert_eq!(got, want, "series of {} by value", name);
        // Changes: years where a slot's values differ from the year before.
        let query =
            ChangesQuery { predicate: Some(name), from: year(0), to: year(YEARS), step: year_step, top: 10 };
        let changes = fx.store.at(&fx.ns, at).and_then(|r| r.changes(&query)).unwrap().value;
        let mut want = vec![0u64; usize::from(YEARS)];
        let mut per_subject: BTreeMap<EntityId, u64> = BTreeMap::new();
        for e in subjects {
            let mut before = BTreeSet::new();
            for y in 0..YEARS {
                let now = values_at(*e, pred, y);
                if now != before {
                    want[usize::from(y)] += 1;
                    *per_subject.entry(*e).or_default() += 1;
                }
                before = now;
            }
        }
        prop_assert_eq!(&changes.counts.counts, &want, "changes of {}", name);
        let mut top: Vec<(EntityId, u64)> = per_subject.into_iter().collect();
        top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        prop_assert_eq!(&changes.counts.top, &top);
        for e in subjects {
            // Timeline: the values held at each year are those in force, with their facts.
            let lanes = fx
                .store
                .at(&fx.ns, at)
                .and_then(|r| r.timeline(*e, Some(&[name.to_string()])))
                .unwrap()
                .value;
            prop_assert_eq!(lanes.len(), 1);
            for y in 0..YEARS {
                let held: Vec<_> = lanes[0].held.iter().filter(|h| h.valid.contains(year(y))).collect();
                let got: BTreeSet<Value> = held.iter().map(|h| h.value.clone()).collect();
                prop_assert_eq!(&got, &values_at(*e, pred, y), "timeline of {} at year {}", name, y);
                for (id, v) in in_force(*e, pred, y) {
                    prop_assert!(
                        held.iter().any(|h| h.value == v && h.facts.contains(&id)),
                        "fact {} behind",
                        id
                    );
                }
            }
            // Durations over the whole grid: a year for every year a value is in force.
            let durations = fx
                .store
                .at(&fx.ns, at)
                .and_then(|r| r.durations(*e, name, Some(year(0)), Some(year(YEARS))))
                .unwrap()
                .value;
            let got: BTreeMap<Value, (i64, bool)> =
                durations.into_iter().map(|d| (d.value, (d.micros, d.at_end))).collect();
            let mut want: BTreeMap<Value, (i64, bool)> = BTreeMap::new();
            for y in 0..YEARS {
                for v in values_at(*e, pred, y) {
                    let entry = want.entry(v).or_default();
                    entry.0 += year(y + 1).as_micros() - year(y).as_micros();
                    entry.1 = y == YEARS - 1;
                }
            }
            prop_assert_eq!(got, want, "durations of {}", name);
        }
    }
    // Overlaps between the two predicates' stretches, every relation, against every pair
    // of the stretches read off the yearly grid (every bound is a year start, and nothing
    // changes after year 31, so a run that reaches the last year is open-ended).
    let stretches = |pred: usize| -> Vec<(FactId, Interval)> {
        let mut out = Vec::new();
        for e in subjects {
            let mut runs: BTreeMap<FactId, Vec<u8>> = BTreeMap::new();
            for y in 0..YEARS {
                for (id, _) in in_force(*e, pred, y) {
                    runs.entry(id).or_default().push(y);
                }
            }
            for (id, years) in runs {
                let mut start = years[0];
                for (k, y) in years.iter().enumerate() {
                    let last = k + 1 == years.len() || years[k + 1] != y + 1;
                    if last {
                        let to = (*y != YEARS - 1).then(|| year(y + 1));
                        out.push((id, Interval::new("i", year(start), to).unwrap()));
                        if k + 1 < years.len() {
                            start = years[k + 1];
                        }
                    }
                }
            }
        }
        out
    };
    let (left, right) = (stretches(0), stretches(1));
    let side = |pred: usize| Side { subject: None, predicate: PREDICATES[pred].0.into(), value: None };
    for relation in [
        Allen::Before,
        Allen::After,
        Allen::Meets,
        Allen::MetBy,
        Allen::Overlaps,
        Allen::OverlappedBy,
        Allen::Starts,
        Allen::StartedBy,
        Allen::During,
        Allen::Contains,
        Allen::Finishes,
        Allen::FinishedBy,
        Allen::Equals,
        Allen::Intersects,
    ] {
        let query = OverlapQuery { a: side(0), b: side(1), relation, same_value: false, limit: 1000 };
        let answer = fx.store.at(&fx.ns, at).and_then(|r| r.overlaps(&query)).unwrap().value;
        prop_assert!(!answer.truncated);
        let got: BTreeSet<(FactId, String, FactId, String)> = answer
            .pairs
            .iter()
            .map(|(a, b)| (a.fact, a.valid.to_string(), b.fact, b.valid.to_string()))
            .collect();
        let want: BTreeSet<(FactId, String, FactId, String)> = left
            .iter()
            .flat_map(|a| right.iter().map(move |b| (a, b)))
            .filter(|(a, b)| relation.holds(&a.1, &b.1))
            .map(|(a, b)| (a.0, a.1.to_string(), b.0, b.1.to_string()))
            .collect();
        prop_assert_eq!(got, want, "overlaps {:?}", relation);
    }
    // Aggregates at a few years: facts in force per value, over every slot.
    for y in [0u8, 7, 15, 25] {
        let at = ReadAt::bitemporal(year(y), s);
        let groups = fx.store.at(&fx.ns, at).and_then(|r| r.aggregate(None, GroupBy::Value)).unwrap().value;
        let got: BTreeMap<Value, u64> = groups.into_iter().map(|g| (g.value.unwrap(), g.count)).collect();
        let mut want: BTreeMap<Value, u64> = BTreeMap::new();
        for e in subjects {
            for pred in 0..PREDICATES.len() {
                for (_, v) in in_force(*e, pred, y) {
                    *want.entry(v).or_default() += 1;
                }
            }
        }
        prop_assert_eq!(&got, &want, "aggregate at year {}", y);
        // Counted in all (from the stretches kept for S), in all and per predicate.
        let total =
            fx.store.at(&fx.ns, at).and_then(|r| r.aggregate(None, GroupBy::Nothing)).unwrap().value[0].count;
        prop_assert_eq!(total, want.values().sum::<u64>(), "count at year {}", y);
        for (pred, (name, _)) in PREDICATES.iter().enumerate() {
            let got = fx
                .store
                .at(&fx.ns, at)
                .and_then(|r| r.aggregate(Some(name), GroupBy::Nothing))
                .unwrap()
                .value[0]
                .count;
            let want = subjects.iter().map(|e| in_force(*e, pred, y).len() as u64).sum::<u64>();
            prop_assert_eq!(got, want, "count of {} at year {}", name, y);
        }
    }
    Ok(())
}
