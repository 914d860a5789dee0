//! Criterion benchmarks of the store: durable ingest at several batch sizes, and reads
//! (as-of entity, facts by subject, slot history, snapshot pages, neighbourhoods) over a
//! store of 1,000,000 facts, plus the time to reopen (replay) that store from its log.
//!
//! Run with `cargo bench --bench store`. `OSTRAKON_BENCH_SUBJECTS` overrides the number of
//! subjects of the read store (10 facts each; 100,000 by default, 1,000 under `cargo test`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::cell::OnceCell;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use ostrakon_engine::core::{
    Cardinality, EntityId, FactId, Interval, Literal, Namespace, PredicateDef, Seq, TimeZone, Timestamp,
    ValueType,
};
use ostrakon_engine::{
    Change, EntityRef, NewEntity, NewFact, ObjectRef, ReadAt, Store, views::FactFilter, views::Scope,
    views::SnapshotCursor,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tempfile::TempDir;

/// A Julian year in microseconds.
const YEAR: i64 = 31_557_600_000_000;
/// Facts (or changes) per `append` when building the big store.
const BUILD_BATCH: usize = 10_000;
/// Facts per subject in the big store.
const FACTS_PER_SUBJECT: usize = 10;
/// Entities declared in the ingest store (1,000 under `cargo test`).
const INGEST_ENTITIES: usize = 100_000;
/// The ingest store is rebuilt (outside the measurement) once it holds this many facts.
const INGEST_RESET_AT: usize = 1_000_000;
/// Pre-drawn random queries, cycled through by the read benchmarks.
const QUERIES: usize = 4096;

fn ts(s: &str) -> Timestamp {
    Timestamp::parse("t", s, &TimeZone::Utc).unwrap()
}

/// Whether criterion is measuring (`cargo bench`) rather than smoke-testing (`cargo test`).
fn bench_mode() -> bool {
    let args: Vec<String> = std::env::args().collect();
    args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test")
}

fn namespace() -> Namespace {
    Namespace::new("ns", "bench").unwrap()
}

/// The predicates: two cardinality-one (supersession), two cardinality-many.
fn predicates() -> Vec<Change> {
    [
        ("worksAt", Cardinality::One, ValueType::Entity),
        ("title", Cardinality::One, ValueType::String),
        ("knows", Cardinality::Many, ValueType::Entity),
        ("tag", Cardinality::Many, ValueType::Integer),
    ]
    .into_iter()
    .map(|(name, cardinality, value_type)| {
        Change::DefinePredicate(PredicateDef {
            name: name.into(),
            cardinality,
            value_type,
            description: None,
            decay: None,
        })
    })
    .collect()
}

/// Declares the predicates and `n` entities, in batches; returns the entity ids.
fn declare(store: &Store, ns: &Namespace, n: usize) -> Vec<EntityId> {
    store.append(ns, predicates()).unwrap();
    let mut ids = Vec::with_capacity(n);
    for start in (0..n).step_by(BUILD_BATCH) {
        let changes: Vec<Change> = (start..n.min(start + BUILD_BATCH))
            .map(|i| {
                Change::DeclareEntity(NewEntity {
                    name: format!("e{i}"),
                    kind: Some("person".into()),
                    ..NewEntity::default()
                })
            })
            .collect();
        let len = changes.len();
        let receipt = store.append(ns, changes).unwrap();
        ids.extend((0..len).map(|k| receipt.entity(k).unwrap()));
    }
    ids
}

/// One planned fact: predicate, object, valid interval (micros).
#[derive(Clone, Copy)]
struct Spec {
    predicate: &'static str,
    object: Object,
    from: i64,
    to: Option<i64>,
}

#[derive(Clone, Copy)]
enum Object {
    /// An entity, by index among the subjects.
    Entity(usize),
    Title(u16),
    Tag(i64),
}

impl Spec {
    fn to_fact(self, subject: EntityId, ids: &[EntityId]) -> NewFact {
        let object = match self.object {
            Object::Entity(i) => ObjectRef::Entity(EntityRef::Id(ids[i])),
            Object::Title(k) => ObjectRef::Literal(Literal::String(format!("title-{k}"))),
            Object::Tag(n) => ObjectRef::Literal(Literal::Integer(n)),
        };
        let valid =
            Interval::new("valid", Timestamp::from_micros(self.from), self.to.map(Timestamp::from_micros))
                .unwrap();
        NewFact::new(EntityRef::Id(subject), self.predicate, object, valid)
    }
}

/// Closed with probability `p` (lasting 1 to `max_years`), else open.
fn maybe_closed(rng: &mut StdRng, from: i64, p: f64, max_years: i64) -> Option<i64> {
    rng.random_bool(p).then(|| from + rng.random_range(YEAR / 2..max_years * YEAR))
}

/// A subject's ten facts over 1975–2025, in the order (round) they are written:
/// `worksAt` (one, entity) ×3 successive values, `title` (one, string) ×2,
/// `knows` (many, entity) ×3, `tag` (many, integer) ×2.
fn plan(rng: &mut StdRng, base: i64, subjects: usize) -> [Spec; FACTS_PER_SUBJECT] {
    let other = |rng: &mut StdRng| Object::Entity(rng.random_range(0..subjects));
    let w1 = base + rng.random_range(0..25 * YEAR);
    let w2 = w1 + rng.random_range(YEAR..8 * YEAR);
    let w3 = w2 + rng.random_range(YEAR..8 * YEAR);
    let t1 = base + rng.random_range(0..30 * YEAR);
    let t2 = t1 + rng.random_range(YEAR..10 * YEAR);
    let many = |rng: &mut StdRng, predicate: &'static str, object: Object| {
        let from = base + rng.random_range(0..45 * YEAR);
        Spec { predicate, object, from, to: maybe_closed(rng, from, 0.5, 10) }
    };
    let knows = |rng: &mut StdRng| {
        let object = other(rng);
        many(rng, "knows", object)
    };
    let tag = |rng: &mut StdRng| {
        let object = Object::Tag(rng.random_range(0..1000));
        many(rng, "tag", object)
    };
    let (k1, g1, k2, g2, k3) = (knows(rng), tag(rng), knows(rng), tag(rng), knows(rng));
    let works = |rng: &mut StdRng, from, to| Spec { predicate: "worksAt", object: other(rng), from, to };
    let title = |rng: &mut StdRng, from, to| Spec {
        predicate: "title",
        object: Object::Title(rng.random_range(0..50)),
        from,
        to,
    };
    let w3_to = maybe_closed(rng, w3, 0.3, 5);
    let t2_to = maybe_closed(rng, t2, 0.5, 8);
    [
        works(rng, w1, None),
        title(rng, t1, None),
        k1,
        g1,
        works(rng, w2, None),
        k2,
        title(rng, t2, t2_to),
        g2,
        works(rng, w3, w3_to),
        k3,
    ]
}

/// Round whose facts are ended (every 20th subject) and retracted (the next one).
const ENDED_ROUND: usize = 9;
const RETRACTED_ROUND: usize = 4;

/// The big store's contents and the sequence numbers reads are pinned at.
struct Built {
    subjects: Vec<EntityId>,
    /// The first batch holding facts, and the last batch.
    first_fact_seq: Seq,
    last_seq: Seq,
    facts: u64,
}

/// Writes `subjects` × 10 facts in rounds (round r writes each subject's r-th fact, so a
/// slot's later values are also later in system time), then ends and retracts some.
fn build(store: &Store, ns: &Namespace, subjects: usize) -> Built {
    let ids = declare(store, ns, subjects);
    let mut rng = StdRng::seed_from_u64(0x5EED);
    let base = ts("1975-01-01").as_micros();
    let plans: Vec<[Spec; FACTS_PER_SUBJECT]> =
        (0..subjects).map(|_| plan(&mut rng, base, subjects)).collect();
    // Round r holds every subject's r-th fact.
    let rounds: Vec<Vec<Spec>> =
        (0..FACTS_PER_SUBJECT).map(|r| plans.iter().map(|p| p[r]).collect()).collect();
    drop(plans);
    let mut ended: Vec<(FactId, i64)> = Vec::new();
    let mut retracted: Vec<FactId> = Vec::new();
    let mut first_fact_seq = None;
    for (round, specs) in rounds.iter().enumerate() {
        for start in (0..subjects).step_by(BUILD_BATCH) {
            let range = start..subjects.min(start + BUILD_BATCH);
            let changes: Vec<Change> =
                range.clone().map(|i| Change::AssertFact(specs[i].to_fact(ids[i], &ids))).collect();
            let receipt = store.append(ns, changes).unwrap();
            first_fact_seq.get_or_insert(receipt.seq);
            for (k, i) in range.enumerate() {
                let id = receipt.fact(k).unwrap();
                match (round, i % 20) {
                    (ENDED_ROUND, 0) => ended.push((id, specs[i].from + YEAR / 2)),
                    (RETRACTED_ROUND, 1) => retracted.push(id),
                    _ => {}
                }
            }
        }
    }
    let mut fixes: Vec<Change> = ended
        .into_iter()
        .map(|(fact, to)| Change::EndFact { fact, valid_to: Timestamp::from_micros(to) })
        .collect();
    fixes
        .extend(retracted.into_iter().map(|fact| Change::RetractFact { fact, reason: Some("bench".into()) }));
    let mut last_seq = store.counts(ns).unwrap().batches;
    while !fixes.is_empty() {
        let rest = fixes.split_off(fixes.len().min(BUILD_BATCH));
        last_seq = store.append(ns, std::mem::replace(&mut fixes, rest)).unwrap().seq.0;
    }
    Built {
        subjects: ids,
        first_fact_seq: first_fact_seq.unwrap_or(Seq(1)),
        last_seq: Seq(last_seq),
        facts: store.counts(ns).unwrap().facts,
    }
}

/// Opens a store and times it.
fn open_timed(dir: &Path) -> (Store, Duration) {
    let start = Instant::now();
    let store = Store::open(dir).unwrap();
    (store, start.elapsed())
}

/// A file-backed store with the predicates and entities declared, for ingest.
struct IngestStore {
    // Dropped in field order: the store before its directory.
    store: Store,
    entities: Vec<EntityId>,
    facts: usize,
    _dir: TempDir,
}

impl IngestStore {
    fn new(ns: &Namespace) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let n = if bench_mode() { INGEST_ENTITIES } else { 1_000 };
        let entities = declare(&store, ns, n);
        IngestStore { store, entities, facts: 0, _dir: dir }
    }
}

/// `n` random facts over the ingest store's entities, shaped like the read store's.
fn ingest_batch(rng: &mut StdRng, entities: &[EntityId], n: usize) -> Vec<Change> {
    let base = ts("1975-01-01").as_micros();
    (0..n)
        .map(|_| {
            let subject = entities[rng.random_range(0..entities.len())];
            let specs = plan(rng, base, entities.len());
            let spec = specs[rng.random_range(0..FACTS_PER_SUBJECT)];
            Change::AssertFact(spec.to_fact(subject, entities))
        })
        .collect()
}

fn ingest(c: &mut Criterion) {
    let ns = namespace();
    let mut group = c.benchmark_group("ingest");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .sampling_mode(SamplingMode::Flat);
    for batch in [1usize, 100, 10_000] {
        group.throughput(Throughput::Elements(batch as u64));
        let mut rng = StdRng::seed_from_u64(batch as u64);
        let mut target: Option<IngestStore> = None;
        group.bench_with_input(BenchmarkId::new("durable_batch", batch), &batch, |b, &n| {
            b.iter_custom(|iters| {
                let mut spent = Duration::ZERO;
                for _ in 0..iters {
                    if target.as_ref().is_none_or(|t| t.facts + n > INGEST_RESET_AT) {
                        target = None;
                        target = Some(IngestStore::new(&ns));
                    }
                    let t = target.as_mut().unwrap();
                    let changes = ingest_batch(&mut rng, &t.entities, n);
                    let start = Instant::now();
                    black_box(t.store.append(&ns, changes).unwrap());
                    spent += start.elapsed();
                    t.facts += n;
                }
                spent
            });
        });
    }
    group.finish();
}

/// The reopened big store, with the directory holding its log.
struct ReadStore {
    store: Store,
    built: Built,
    _dir: TempDir,
}

/// Builds the big store on disk, reports how long that took, then reopens it (replay
/// and index rebuild) and reports that too.
fn read_store(ns: &Namespace) -> ReadStore {
    let subjects = std::env::var("OSTRAKON_BENCH_SUBJECTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if bench_mode() { 100_000 } else { 1_000 });
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let start = Instant::now();
    let built = build(&store, ns, subjects);
    let took = start.elapsed();
    let counts = store.counts(ns).unwrap();
    let log_mb = store.log_size(ns).unwrap() as f64 / 1e6;
    eprintln!(
        "build: {} facts ({} subjects, {} batches, log {log_mb:.1} MB) in {:.2} s ({:.0} facts/s)",
        built.facts,
        subjects,
        counts.batches,
        took.as_secs_f64(),
        built.facts as f64 / took.as_secs_f64()
    );
    drop(store);
    let (store, took) = open_timed(dir.path());
    assert_eq!(store.counts(ns).unwrap(), counts, "the reopened store differs");
    eprintln!(
        "reopen: replayed {} batches / {} facts in {:.2} s",
        counts.batches,
        counts.facts,
        took.as_secs_f64()
    );
    ReadStore { store, built, _dir: dir }
}

/// A read's subject, valid time T and system time S.
type Query = (EntityId, Timestamp, Seq);

/// Random queries, pre-drawn so that the measurement excludes the RNG.
fn queries(built: &Built) -> Vec<Query> {
    let mut rng = StdRng::seed_from_u64(7);
    let (from, to) = (ts("1975-01-01").as_micros(), ts("2025-01-01").as_micros());
    (0..QUERIES)
        .map(|_| {
            (
                built.subjects[rng.random_range(0..built.subjects.len())],
                Timestamp::from_micros(rng.random_range(from..to)),
                Seq(rng.random_range(built.first_fact_seq.0..=built.last_seq.0)),
            )
        })
        .collect()
}

/// Prints the average size of each read's answer, to put its timing in context.
fn describe(store: &Store, ns: &Namespace, q: &[Query]) {
    let n = q.len().min(200);
    let (mut entity, mut facts, mut history, mut nodes, mut edges) = (0, 0, 0, 0, 0);
    for &(subject, t, s) in &q[..n] {
        let e = store.at(ns, ReadAt::bitemporal(t, s)).and_then(|r| r.entity(subject)).unwrap().value;
        entity += e.map_or(0, |e| e.facts.len());
        let filter = FactFilter { subject: Some(subject), ..FactFilter::default() };
        facts += store
            .at(ns, ReadAt::valid(t))
            .and_then(|r| r.facts(&filter, Scope::InForce))
            .unwrap()
            .value
            .len();
        history +=
            store.at(ns, ReadAt::valid(t)).and_then(|r| r.history(subject, "worksAt")).unwrap().value.len();
        let hood = store.at(ns, ReadAt::valid(t)).and_then(|r| r.neighbors(subject, 2)).unwrap().value;
        nodes += hood.nodes.len();
        edges += hood.edges.len();
    }
    let avg = |x: usize| x as f64 / n as f64;
    eprintln!(
        "answers (mean of {n}): entity_as_of {:.1} facts, facts_by_subject {:.1}, slot_history {:.1} \
         versions, neighbors_depth2 {:.1} nodes / {:.1} edges",
        avg(entity),
        avg(facts),
        avg(history),
        avg(nodes),
        avg(edges)
    );
}

fn reads(c: &mut Criterion) {
    let ns = namespace();
    // Built on first use, so that `cargo bench -- ingest` does not pay for it.
    let data: OnceCell<(ReadStore, Vec<Query>)> = OnceCell::new();
    let get = || {
        data.get_or_init(|| {
            let rs = read_store(&ns);
            let q = queries(&rs.built);
            describe(&rs.store, &ns, &q);
            (rs, q)
        })
    };
    let mut group = c.benchmark_group("read_1m");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));

    group.bench_function("entity_as_of", |b| {
        let (rs, q) = get();
        let mut i = 0;
        b.iter(|| {
            let (subject, t, s) = q[i % QUERIES];
            i += 1;
            black_box(rs.store.at(&ns, ReadAt::bitemporal(t, s)).and_then(|r| r.entity(subject)).unwrap())
        });
    });

    group.bench_function("facts_by_subject", |b| {
        let (rs, q) = get();
        let mut i = 0;
        b.iter(|| {
            let (subject, t, _) = q[i % QUERIES];
            i += 1;
            let filter = FactFilter { subject: Some(subject), ..FactFilter::default() };
            black_box(
                rs.store.at(&ns, ReadAt::valid(t)).and_then(|r| r.facts(&filter, Scope::InForce)).unwrap(),
            )
        });
    });

    group.bench_function("slot_history", |b| {
        let (rs, q) = get();
        let mut i = 0;
        b.iter(|| {
            let (subject, t, _) = q[i % QUERIES];
            i += 1;
            black_box(rs.store.at(&ns, ReadAt::valid(t)).and_then(|r| r.history(subject, "worksAt")).unwrap())
        });
    });

    group.bench_function("neighbors_depth2", |b| {
        let (rs, q) = get();
        let mut i = 0;
        b.iter(|| {
            let (subject, t, _) = q[i % QUERIES];
            i += 1;
            black_box(rs.store.at(&ns, ReadAt::valid(t)).and_then(|r| r.neighbors(subject, 2)).unwrap())
        });
    });

    let at = ReadAt::valid(ts("2010-01-01"));
    group.throughput(Throughput::Elements(1000));
    group.bench_function("snapshot_page/first", |b| {
        let (rs, _) = get();
        b.iter(|| black_box(rs.store.at(&ns, at).and_then(|r| r.snapshot(None, 1000)).unwrap()));
    });
    group.bench_function("snapshot_page/second", |b| {
        let (rs, _) = get();
        let next = rs.store.at(&ns, at).and_then(|r| r.snapshot(None, 1000)).unwrap().value.next;
        b.iter(|| black_box(rs.store.at(&ns, at).and_then(|r| r.snapshot(next, 1000)).unwrap()));
    });
    group.bench_function("snapshot_page/middle", |b| {
        let (rs, _) = get();
        let mid = rs.built.subjects[rs.built.subjects.len() / 2];
        let after = SnapshotCursor::decode(&format!("{}.0.0", mid.0));
        assert!(after.is_some());
        b.iter(|| black_box(rs.store.at(&ns, at).and_then(|r| r.snapshot(after, 1000)).unwrap()));
    });
    group.finish();
}

criterion_group!(benches, ingest, reads);
criterion_main!(benches);
