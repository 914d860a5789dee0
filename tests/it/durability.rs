//! Durability at the store level: crashes at random points lose no acknowledged batch
//! and leave nothing half-applied; indexes rebuilt from the log answer exactly like
//! the live store.

use crate::common;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use common::{Fixture, t};
use ostrakon_engine::core::{
    Cardinality, EntityId, FactId, Interval, Literal, Namespace, Polarity, Seq, Timestamp,
};
use ostrakon_engine::{
    Change, EntityRef, NewEntity, NewFact, ObjectRef, ReadAt, Store, log::MemStorage, log::system_clock,
    views::FactFilter, views::Scope,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A batch that declares entity `token` and `facts` facts about it, all or nothing.
fn tagged_batch(token: &str, facts: usize) -> Vec<Change> {
    let mut changes = vec![Change::DeclareEntity(NewEntity { name: token.into(), ..NewEntity::default() })];
    for i in 0..facts {
        changes.push(Change::AssertFact(NewFact::new(
            EntityRef::New(0),
            "item",
            ObjectRef::Literal(Literal::Integer(i as i64)),
            Interval::open(t("2020")),
        )));
    }
    changes
}

fn facts_of(store: &Store, ns: &Namespace, token: &str) -> Option<usize> {
    let id = store.inspect(ns, |i| i.entities_named(token)).unwrap().first().copied()?;
    let filter = FactFilter { subject: Some(id), ..FactFilter::default() };
    Some(
        store
            .at(ns, ReadAt::valid(t("2021")))
            .and_then(|r| r.facts(&filter, Scope::All))
            .unwrap()
            .value
            .len(),
    )
}

#[test]
fn crashes_at_random_points_keep_every_acknowledged_batch_whole() {
    let ns = Namespace::new("ns", "crash").unwrap();
    for run in 0..200u64 {
        let seed = 0xC0FFEE + run;
        let mut rng = StdRng::seed_from_u64(seed);
        let storage = MemStorage::new();
        let store = Arc::new(Store::with_storage(Arc::new(storage.clone()), system_clock()).unwrap());
        // Some history first, then a fault after a random number of I/O calls.
        store.append(&ns, tagged_batch("before", 3)).unwrap();
        storage.fail_after(Some(rng.random_range(0..40)));
        let acknowledged = Arc::new(Mutex::new(Vec::new()));
        let written: HashMap<String, usize> =
            (0..3).flat_map(|w| (0..15).map(move |b| (format!("w{w}b{b}"), (w * 7 + b) % 5 + 1))).collect();
        std::thread::scope(|scope| {
            for w in 0..3 {
                let (store, acknowledged, written, ns) = (&store, &acknowledged, &written, &ns);
                scope.spawn(move || {
                    for b in 0..15 {
                        let token = format!("w{w}b{b}");
                        match store.append(ns, tagged_batch(&token, written[&token])) {
                            Ok(receipt) => acknowledged.lock().unwrap().push((token, receipt.seq)),
                            Err(_) => break,
                        }
                    }
                });
            }
        });
        let acknowledged = acknowledged.lock().unwrap().clone();
        let crashed = storage.crash(|unsynced| rng.random_range(0..=unsynced));
        let reopened = Store::with_storage(Arc::new(crashed), system_clock())
            .unwrap_or_else(|e| panic!("seed {seed}: reopen failed: {e}"));
        assert_eq!(facts_of(&reopened, &ns, "before"), Some(3), "seed {seed}");
        for (token, seq) in &acknowledged {
            assert_eq!(
                facts_of(&reopened, &ns, token),
                Some(written[token]),
                "seed {seed}: acknowledged {token} lost"
            );
            assert!(reopened.counts(&ns).unwrap().batches >= seq.0, "seed {seed}");
        }
        // Unacknowledged batches may have survived, but only whole.
        for (token, n) in &written {
            if let Some(found) = facts_of(&reopened, &ns, token) {
                assert_eq!(found, *n, "seed {seed}: {token} half-applied");
            }
        }
        // The recovered log continues: a new batch gets the next sequence number.
        let batches = reopened.counts(&ns).unwrap().batches;
        let r = reopened.append(&ns, tagged_batch("after", 1)).unwrap();
        assert_eq!(r.seq, Seq(batches + 1), "seed {seed}");
    }
}

/// Builds a namespace with every kind of event: declarations, supersession, negations,
/// corrections, ends, retractions and re-assertions, over a few predicates.
pub(crate) fn random_history(store: &Store, ns: &Namespace, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let define = |name: &str, cardinality| {
        Change::DefinePredicate(ostrakon_engine::core::PredicateDef {
            name: name.into(),
            cardinality,
            value_type: ostrakon_engine::core::ValueType::Any,
            description: None,
            decay: None,
        })
    };
    store.append(ns, vec![define("livesIn", Cardinality::One), define("worksAt", Cardinality::One)]).unwrap();
    let entities: Vec<EntityId> = {
        let changes = (0..40)
            .map(|i| Change::DeclareEntity(NewEntity { name: format!("e{i}"), ..NewEntity::default() }))
            .collect();
        let r = store.append(ns, changes).unwrap();
        (0..40).map(|i| r.entity(i).unwrap()).collect()
    };
    let mut facts: Vec<FactId> = Vec::new();
    for _ in 0..300 {
        let mut changes = Vec::new();
        for _ in 0..rng.random_range(1..5) {
            let pick = |rng: &mut StdRng| entities[rng.random_range(0..entities.len())];
            let from = rng.random_range(0..30);
            let to = rng.random_bool(0.4).then(|| from + rng.random_range(1..10));
            let valid =
                Interval::new("v", t(&format!("{}", 2000 + from)), to.map(|y| t(&format!("{}", 2000 + y))))
                    .unwrap();
            let change = match rng.random_range(0..10) {
                0 if !facts.is_empty() => Change::EndFact {
                    fact: facts[rng.random_range(0..facts.len())],
                    valid_to: t(&format!("{}", 2000 + rng.random_range(0..40))),
                },
                1 if !facts.is_empty() => {
                    Change::RetractFact { fact: facts[rng.random_range(0..facts.len())], reason: None }
                }
                _ => {
                    let predicate = ["livesIn", "worksAt", "knows"][rng.random_range(0..3)];
                    let mut f = NewFact::new(
                        EntityRef::Id(pick(&mut rng)),
                        predicate,
                        ObjectRef::Entity(EntityRef::Id(pick(&mut rng))),
                        valid,
                    );
                    f.polarity = if rng.random_bool(0.15) { Polarity::Negated } else { Polarity::Asserted };
                    f.confidence = Some([1.0, 0.7, 0.4][rng.random_range(0..3)]);
                    if rng.random_bool(0.05) && !facts.is_empty() {
                        f.supersedes = Some(facts[rng.random_range(0..facts.len())]);
                    }
                    Change::AssertFact(f)
                }
            };
            changes.push(change);
        }
        if let Ok(r) = store.append(ns, changes) {
            facts.extend((0..r.ids.len()).filter_map(|i| r.fact(i)));
        }
        // Re-assert a random earlier fact verbatim now and then (corroboration).
        if rng.random_bool(0.1) && !facts.is_empty() {
            let id = facts[rng.random_range(0..facts.len())];
            let fact = store.inspect(ns, |i| i.fact(id)).unwrap().unwrap();
            let again = NewFact {
                confidence: Some(0.5),
                polarity: fact.polarity,
                ..NewFact::new(
                    EntityRef::Id(fact.subject),
                    fact.predicate.clone(),
                    ObjectRef::Entity(EntityRef::Id(fact.object.as_entity().unwrap())),
                    fact.valid,
                )
            };
            let _ = store.append(ns, vec![Change::AssertFact(again)]);
        }
    }
}

/// Every read form at many (T, S), as text, for comparison.
pub(crate) fn everything(store: &Store, ns: &Namespace, seed: u64) -> BTreeMap<String, String> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = BTreeMap::new();
    let last = store.counts(ns).unwrap().batches;
    let entities: Vec<EntityId> = (0..40)
        .filter_map(|i| store.inspect(ns, |x| x.entities_named(&format!("e{i}")).first().copied()).unwrap())
        .collect();
    for probe in 0..60 {
        let at = ReadAt::bitemporal(
            Timestamp::from_micros(
                t(&format!("{}", 2000 + rng.random_range(0..40))).as_micros() + rng.random_range(0..1000),
            ),
            Seq(rng.random_range(0..=last)),
        );
        let mut page = store.at(ns, at).and_then(|r| r.snapshot(None, 50)).unwrap().value;
        let mut pages = vec![format!("{:?}", page.facts)];
        while let Some(next) = page.next {
            page = store.at(ns, at).and_then(|r| r.snapshot(Some(next), 50)).unwrap().value;
            pages.push(format!("{:?}", page.facts));
        }
        out.insert(format!("{probe} snapshot"), pages.join("\n"));
        for &e in &entities {
            let all = FactFilter { subject: Some(e), ..FactFilter::default() };
            out.insert(
                format!("{probe} {e} facts"),
                format!("{:?}", store.at(ns, at).and_then(|r| r.facts(&all, Scope::All)).unwrap().value),
            );
            out.insert(
                format!("{probe} {e} entity"),
                format!("{:?}", store.at(ns, at).and_then(|r| r.entity(e)).unwrap().value),
            );
            for p in ["livesIn", "worksAt", "knows"] {
                out.insert(
                    format!("{probe} {e} {p}"),
                    format!("{:?}", store.at(ns, at).and_then(|r| r.history(e, p)).unwrap().value),
                );
            }
        }
        let e = entities[rng.random_range(0..entities.len())];
        out.insert(
            format!("{probe} neighbors"),
            format!("{:?}", store.at(ns, at).and_then(|r| r.neighbors(e, 3)).unwrap().value),
        );
    }
    out
}

#[test]
fn indexes_rebuilt_from_the_log_answer_exactly_like_the_live_store() {
    let dir = tempfile::tempdir().unwrap();
    let ns = Namespace::new("ns", "rebuild").unwrap();
    let live = Store::open(dir.path()).unwrap();
    random_history(&live, &ns, 7);
    let counts = live.counts(&ns).unwrap();
    assert!(counts.facts > 500, "{counts:?}");
    let before = everything(&live, &ns, 99);
    drop(live);
    let rebuilt = Store::open(dir.path()).unwrap();
    assert_eq!(rebuilt.counts(&ns).unwrap(), counts);
    let after = everything(&rebuilt, &ns, 99);
    assert_eq!(before.len(), after.len());
    for (key, value) in &before {
        assert_eq!(Some(value), after.get(key), "{key}");
    }
    // The same holds for a store over memory, replayed from the same bytes.
    let fx = Fixture::new();
    random_history(&fx.store, &fx.ns, 8);
    let live = everything(&fx.store, &fx.ns, 5);
    assert_eq!(live, everything(&fx.reopen(), &fx.ns, 5));
}

#[test]
fn a_data_dir_is_opened_by_one_store_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let ns = Namespace::new("ns", "locked").unwrap();
    let store = Store::open(dir.path()).unwrap();
    let err = Store::open(dir.path()).err().expect("a second opener must be refused");
    assert!(matches!(err, ostrakon_engine::OpenError::Locked { .. }), "{err}");
    store.append(&ns, tagged_batch("x", 1)).unwrap();
    drop(store);
    let reopened = Store::open(dir.path()).unwrap();
    assert_eq!(facts_of(&reopened, &ns, "x"), Some(1));
}

#[test]
fn a_namespace_closed_for_idleness_answers_exactly_as_before_reopening() {
    let fx = Fixture::new();
    random_history(&fx.store, &fx.ns, 11);
    for i in 0..20 {
        fx.append(vec![Change::RecordEpisode(ostrakon_engine::NewEpisode {
            text: format!("episode {i} about e{}", i % 7),
            thread: Some(format!("thread {}", i % 3)),
            ..ostrakon_engine::NewEpisode::default()
        })]);
    }
    let search = |store: &Store| {
        let query =
            ostrakon_engine::SearchQuery { text: Some("episode about e3".into()), ..Default::default() };
        let at = ReadAt { at: Some(t("2030-06-01")), ..ReadAt::latest() };
        format!("{:?}", store.at(&fx.ns, at).and_then(|r| r.search(&query)).unwrap().value)
    };
    // In use, it stays open (upkeep closes the quiet threads' segments here).
    let report = fx.store.maintain(fx.store.now());
    assert_eq!((report.closed, fx.store.open_namespaces()), (0, 1), "{report:?}");
    let before = (everything(&fx.store, &fx.ns, 4), search(&fx.store));
    fx.clock.advance_seconds(3600);
    let report = fx.store.maintain(fx.store.now());
    assert_eq!((report.closed, fx.store.open_namespaces()), (1, 0), "{report:?}");
    assert_eq!(fx.store.namespaces(), std::slice::from_ref(&fx.ns), "a closed namespace is still listed");
    // Every read form reopens it and answers as before, byte for byte.
    let after = (everything(&fx.store, &fx.ns, 4), search(&fx.store));
    assert_eq!(fx.store.open_namespaces(), 1);
    assert_eq!(before.0.len(), after.0.len());
    for (key, value) in &before.0 {
        assert_eq!(Some(value), after.0.get(key), "{key}");
    }
    assert_eq!(before.1, after.1);
    // Writes go on where they stopped.
    let counts = fx.store.counts(&fx.ns).unwrap();
    let r = fx.append(vec![Change::DeclareEntity(NewEntity { name: "late".into(), ..NewEntity::default() })]);
    assert_eq!(r.seq.0, counts.batches + 1);
}

#[test]
fn a_store_opens_no_namespace_until_it_is_used_and_keeps_at_most_its_limit_open() {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<Namespace> =
        (0..30).map(|i| Namespace::new("ns", &format!("user-{i:02}")).unwrap()).collect();
    {
        let store = Store::open(dir.path()).unwrap();
        for (i, ns) in names.iter().enumerate() {
            let changes =
                vec![Change::DeclareEntity(NewEntity { name: format!("n{i}"), ..NewEntity::default() })];
            store.append(ns, changes).unwrap();
        }
        assert_eq!(store.open_namespaces(), 30);
    }
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(store.open_namespaces(), 0);
    assert_eq!(store.namespaces(), names);
    for ns in &names[..5] {
        assert_eq!(store.counts(ns).unwrap().entities, 1);
    }
    assert_eq!(store.open_namespaces(), 5);
    let now = store.now();
    // Upkeep sees each open namespace, then the least recently used past the limit close.
    store.maintain(now);
    assert_eq!(store.close_idle(now, i64::MAX, 2), 3);
    assert_eq!(store.open_namespaces(), 2);
    assert_eq!(store.counts(&names[0]).unwrap().entities, 1, "reopened on use");
    assert_eq!(store.open_namespaces(), 3);
}

/// Runs upkeep until `want` namespaces are open (for a few seconds at most).
fn settle(store: &Store, want: usize) {
    for _ in 0..200 {
        store.maintain(store.now());
        if store.open_namespaces() == want {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    panic!("{} namespaces open, not {want}", store.open_namespaces());
}

#[test]
fn a_memory_budget_closes_the_least_recently_used_namespaces_until_the_rest_fit() {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<Namespace> = (0..4).map(|i| Namespace::new("ns", &format!("big-{i}")).unwrap()).collect();
    let fill = |store: &Store| {
        for (i, ns) in names.iter().enumerate() {
            random_history(store, ns, i as u64);
        }
    };
    let measured = {
        let store = Store::open(dir.path()).unwrap();
        fill(&store);
        names.iter().map(|ns| store.state_bytes(ns).unwrap()).collect::<Vec<u64>>()
    };
    assert!(measured.iter().all(|b| *b > 10_000), "{measured:?}");
    // Room for two and a half of them.
    let budget = measured.iter().sum::<u64>() * 5 / 8;
    let options = ostrakon_engine::StoreOptions {
        residency: ostrakon_engine::admin::Residency {
            idle_after_micros: i64::MAX,
            max_open: 1024,
            max_state_bytes: Some(budget),
        },
        ..ostrakon_engine::StoreOptions::default()
    };
    let store = Store::open_with(dir.path(), options).unwrap();
    let before: Vec<_> = names.iter().map(|ns| everything(&store, ns, 3)).collect();
    assert_eq!(store.open_namespaces(), 4);
    // A namespace closes only once its search index caught up: upkeep tries again.
    settle(&store, 2);
    let open: u64 = names.iter().filter_map(|ns| store.state_bytes(ns)).sum();
    assert!(open <= budget, "{open} > {budget}");
    assert!(store.state_bytes(&names[3]).is_some() && store.state_bytes(&names[0]).is_none());
    // Closed ones answer as before when asked again.
    for (ns, was) in names.iter().zip(&before) {
        assert_eq!(&everything(&store, ns, 3), was, "{ns}");
    }
    drop(store);
    // A budget smaller than any one namespace still leaves the one used last open.
    let tiny = ostrakon_engine::StoreOptions {
        residency: ostrakon_engine::admin::Residency {
            idle_after_micros: i64::MAX,
            max_open: 1024,
            max_state_bytes: Some(1),
        },
        ..ostrakon_engine::StoreOptions::default()
    };
    let store = Store::open_with(dir.path(), tiny).unwrap();
    for ns in &names {
        assert!(store.counts(ns).unwrap().facts > 0);
    }
    settle(&store, 1);
    assert!(store.state_bytes(&names[3]).is_some());
}

#[test]
fn the_open_namespace_cap_holds_at_every_open_not_only_at_upkeep() {
    // With search deferred (an import) and with the indexer running (a server).
    for defer_search in [true, false] {
        burst_within_the_cap(defer_search);
    }
}

fn burst_within_the_cap(defer_search: bool) {
    let dir = tempfile::tempdir().unwrap();
    let residency =
        ostrakon_engine::admin::Residency { max_open: 4, ..ostrakon_engine::admin::Residency::default() };
    let options = ostrakon_engine::StoreOptions { residency, defer_search, ..Default::default() };
    let store = Store::open_with(dir.path(), options).unwrap();
    let names: Vec<Namespace> =
        (0..40).map(|i| Namespace::new("ns", &format!("burst-{i:02}")).unwrap()).collect();
    // A burst of first writes with no upkeep in between: never more than the cap open.
    for (i, ns) in names.iter().enumerate() {
        let kinds = i % 3 + 1;
        let changes = (0..kinds)
            .map(|k| Change::DeclareEntity(NewEntity { name: format!("n{i}-{k}"), ..NewEntity::default() }))
            .collect();
        store.append(ns, changes).unwrap();
        assert!(store.open_namespaces() <= 4, "{} open after {}", store.open_namespaces(), i + 1);
    }
    // Reads reopen the closed ones, each answering what was written, within the cap.
    for (i, ns) in names.iter().enumerate() {
        assert_eq!(store.counts(ns).unwrap().entities, (i % 3 + 1) as u64, "{ns}");
        assert!(store.open_namespaces() <= 4);
    }
}

#[test]
fn a_deleted_log_with_a_checkpoint_of_its_batches_is_refused_as_damaged_not_served_empty() {
    let dir = tempfile::tempdir().unwrap();
    let ns = Namespace::new("ns", "kept").unwrap();
    {
        let store = Store::open(dir.path()).unwrap();
        for i in 0..200 {
            let changes = (0..=i % 3)
                .map(|k| {
                    Change::DeclareEntity(NewEntity { name: format!("n{i}-{k}"), ..NewEntity::default() })
                })
                .collect();
            store.append(&ns, changes).unwrap();
        }
        store.checkpoint(&ns).unwrap().expect("a checkpoint");
    }
    std::fs::remove_file(dir.path().join("logs").join("kept.log")).unwrap();
    let store = Store::open(dir.path()).unwrap();
    let refused = store.pin(&ns, ostrakon_engine::ReadAt::latest());
    use ostrakon_engine::{ReadError, StorageError, WriteError};
    assert!(matches!(refused, Err(ReadError::Storage(StorageError::Damaged { .. }))), "{refused:?}");
    let damaged = store.damaged();
    assert_eq!(damaged.len(), 1, "{damaged:?}");
    assert!(
        damaged[0].1.contains("holds batches up to 200") && damaged[0].1.contains("ends at batch 0"),
        "{damaged:?}"
    );
    // A write is refused too: it would start a new history under the old name.
    let write = store
        .append(&ns, vec![Change::DeclareEntity(NewEntity { name: "x".into(), ..NewEntity::default() })]);
    assert!(matches!(write, Err(WriteError::Storage(StorageError::Damaged { .. }))), "{write:?}");
    // Every read of the namespace's latest state says so too, none answers as if empty.
    let damaged = |what: &str, r: Result<(), StorageError>| {
        assert!(matches!(r, Err(StorageError::Damaged { .. })), "{what}: {r:?}");
    };
    let source = "model@prompt-1";
    let none = ostrakon_engine::core::EpisodeId(0);
    damaged("counts", store.counts(&ns).map(drop));
    damaged("settings", store.settings(&ns).map(drop));
    damaged("time_zone", store.time_zone(&ns).map(drop));
    damaged("log_size", store.log_size(&ns).map(drop));
    damaged("predicate", store.predicate(&ns, "p").map(drop));
    damaged("predicate_names", store.predicate_names(&ns).map(drop));
    damaged("predicate_embedded", store.predicate_embedded(&ns, "p").map(drop));
    damaged("episode_by_external_id", store.episode_by_external_id(&ns, "e").map(drop));
    damaged("batch_time", store.batch_time(&ns, ostrakon_engine::core::Seq(1)).map(drop));
    damaged("extraction_of_batch", store.extraction_of_batch(&ns, ostrakon_engine::core::Seq(1)).map(drop));
    damaged("unextracted", store.unextracted(&ns, source, none, 10).map(drop));
    damaged("unextracted_count", store.unextracted_count(&ns, source, none).map(drop));
    let reader = store.at(&ns, ostrakon_engine::ReadAt::latest());
    assert!(
        matches!(reader, Err(ReadError::Storage(StorageError::Damaged { .. }))),
        "reader: {:?}",
        reader.err()
    );
}

#[test]
fn upkeep_stops_when_told_so_that_a_server_with_thousands_of_namespaces_stops_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    for i in 0..50 {
        let ns = Namespace::new("ns", &format!("u{i}")).unwrap();
        let changes =
            vec![Change::DeclareEntity(NewEntity { name: format!("n{i}"), ..NewEntity::default() })];
        store.append(&ns, changes).unwrap();
    }
    let later = ostrakon_engine::core::Timestamp::from_micros(store.now().as_micros() + 3_600_000_000);
    // Stopped: a run does nothing (the stopping server writes the checkpoints itself).
    store.stop_upkeep();
    let report = store.maintain(later);
    assert_eq!((report.checkpointed, report.closed), (0, 0), "{report:?}");
    assert_eq!(store.open_namespaces(), 50);
    drop(store);
    // Not stopped, the same run closes the idle namespaces (those whose indexes caught up).
    let store = Store::open(dir.path()).unwrap();
    for i in 0..50 {
        store.counts(&Namespace::new("ns", &format!("u{i}")).unwrap()).unwrap();
    }
    let later = ostrakon_engine::core::Timestamp::from_micros(store.now().as_micros() + 3_600_000_000);
    assert!(store.maintain(later).closed > 25);
}
