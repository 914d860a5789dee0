//! The write path's conflict path, through the record-level log seam: two stores over one
//! shared log (as two nodes over one replicated stream). A writer that has not seen the
//! log's last batch is refused by the log, catches up, prepares its batch again and is
//! appended after the other's — never both at one seq, never silently ordered.

use std::sync::Arc;

use ostrakon_engine::core::{Entity, Namespace, Seq, Timestamp};
use ostrakon_engine::{
    Change, NewEntity, NewEpisode, ReadAt, Store, StoreOptions, WriteError, log::LogBackend,
    log::SharedBackend, log::system_clock, views::EntityFilter,
};

fn store(backend: &SharedBackend) -> Store {
    let backend: Arc<dyn LogBackend> = Arc::new(backend.clone());
    Store::with_backend(backend, system_clock(), StoreOptions::default()).unwrap()
}

fn ns() -> Namespace {
    Namespace::new("namespace", "team").unwrap()
}

fn entity(name: &str) -> Change {
    Change::DeclareEntity(NewEntity { name: name.into(), ..NewEntity::default() })
}

fn episode(external_id: &str) -> Change {
    Change::RecordEpisode(NewEpisode {
        text: format!("episode {external_id}"),
        occurred_at: Timestamp::from_micros(1_700_000_000_000_000),
        external_id: Some(external_id.into()),
        ..NewEpisode::default()
    })
}

fn entities(store: &Store) -> Vec<Entity> {
    let page = store
        .at(&ns(), ReadAt::latest())
        .and_then(|r| r.entities(&EntityFilter::default(), None, 100))
        .unwrap()
        .value;
    page.items.into_iter().map(|(_, e)| e).collect()
}

#[test]
fn a_stale_writer_is_refused_then_appended_after_catching_up() {
    let backend = SharedBackend::new();
    let (a, b) = (store(&backend), store(&backend));
    assert_eq!(a.append(&ns(), vec![entity("Ada")]).unwrap().seq, Seq(1));
    // `b` opens the namespace now, at batch 1, and appends batch 2.
    assert_eq!(b.append(&ns(), vec![entity("Bob")]).unwrap().seq, Seq(2));
    // `a` last saw batch 1: the log refuses its batch, `a` applies Bob's and tries again.
    let receipt = a.append(&ns(), vec![entity("Cy")]).unwrap();
    assert_eq!(receipt.seq, Seq(3));
    let records = backend.records("team");
    assert_eq!(records.iter().map(|r| r.seq).collect::<Vec<_>>(), vec![1, 2, 3]);
    // Cy was numbered after Bob, whom `a` had not seen when it first prepared the batch.
    let seen_by_a = entities(&a);
    let names: Vec<&str> = seen_by_a.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["Ada", "Bob", "Cy"]);
    let ids: Vec<u64> = seen_by_a.iter().map(|e| e.id.0).collect();
    assert_eq!(ids, [1, 2, 3]);
    // The other writer reads what it did not write by following the log.
    assert_eq!(entities(&b).len(), 2);
    assert_eq!(b.catch_up(&ns()).unwrap(), Seq(3));
    assert_eq!(entities(&b), seen_by_a);
    // Each batch is in the log once, and a third store opening it sees the same.
    assert_eq!(entities(&store(&backend)), seen_by_a);
}

#[test]
fn a_batch_the_other_writer_made_invalid_is_refused_and_writes_nothing() {
    let backend = SharedBackend::new();
    let (a, b) = (store(&backend), store(&backend));
    a.append(&ns(), vec![entity("Ada")]).unwrap();
    b.append(&ns(), vec![episode("m-1")]).unwrap();
    // `a` has not seen m-1: prepared again after catching up, its batch breaks the rule.
    let refused = a.append(&ns(), vec![episode("m-1")]).unwrap_err();
    let WriteError::InChange { change: 0, error } = &refused else { panic!("{refused:?}") };
    assert!(matches!(**error, WriteError::DuplicateExternalId { .. }), "{refused:?}");
    assert_eq!(backend.records("team").len(), 2);
    // And `a` writes on after it.
    assert_eq!(a.append(&ns(), vec![episode("m-2")]).unwrap().seq, Seq(3));
}

#[test]
fn a_writer_always_beaten_gets_a_typed_conflict_once_its_budget_is_spent_and_writes_nothing() {
    let budget = std::time::Duration::from_millis(300);
    let backend = SharedBackend::with_write_budget(budget);
    let a = store(&backend);
    a.append(&ns(), vec![entity("Ada")]).unwrap();
    // Another writer appends a valid batch (one that creates no record) before every one
    // of `a`'s tries.
    let foreign = {
        let other = SharedBackend::new();
        let define = ostrakon_engine::core::PredicateDef::undeclared("likes");
        store(&other).append(&ns(), vec![Change::DefinePredicate(define)]).unwrap();
        other.records("team").remove(0).payload
    };
    backend.interfere("team", 1_000_000, foreign);
    let started = std::time::Instant::now();
    let refused = a.append(&ns(), vec![entity("Cy")]).unwrap_err();
    // Retried until the budget is spent, and not much longer.
    assert!(started.elapsed() >= budget && started.elapsed() < budget * 10, "{:?}", started.elapsed());
    match refused {
        WriteError::Conflict { namespace, expected, found } => {
            assert_eq!(namespace, "team");
            assert!(found > expected, "{expected} {found}");
        }
        other => panic!("{other:?}"),
    }
    let records = backend.records("team");
    assert!(records.len() > 2, "the interfering writer appended");
    assert!(entities(&a).iter().all(|e| e.name != "Cy"), "a refused batch was written");
}

#[test]
fn the_file_log_is_its_only_writer_and_refuses_a_stale_expectation() {
    use ostrakon_engine::{log::MemStorage, log::RecordLog, log::StorageBackend};
    let backend = StorageBackend::new(Arc::new(MemStorage::new()), None);
    let clock = ostrakon_engine::core::Timestamp::from_micros(1);
    let (log, recovery): (Box<dyn RecordLog>, _) =
        backend.open("events", Arc::new(move || clock.as_micros())).unwrap();
    assert!(recovery.records.is_empty() && log.exclusive());
    let first = log.submit(b"one", ostrakon_log::After::only_writer(0)).unwrap();
    log.wait(first).unwrap();
    let stale = log.submit(b"two", ostrakon_log::After::only_writer(0)).unwrap_err();
    assert!(matches!(stale, ostrakon_engine::log::LogError::Conflict { expected: 0, found: 1 }), "{stale:?}");
    let second = log.submit(b"two", ostrakon_log::After::only_writer(1)).unwrap();
    assert_eq!(log.wait(second).unwrap().seq, 2);
    assert_eq!(log.read_after(1).unwrap().iter().map(|r| r.payload.clone()).collect::<Vec<_>>(), [b"two"]);
}

/// What a writer asked one batch for, to check against what the log holds.
struct Asked {
    /// The batch's changes' expected records, by change: an entity's name, a fact's
    /// object value, an episode's text.
    records: Vec<Expect>,
}

enum Expect {
    Entity(String),
    Fact { subject: String, value: String },
    Episode(String),
}

/// One batch of a writer: a different mix each time — new entities, facts on entities
/// every writer shares (or on its own), the same fact again (a restatement), episodes.
fn shaped(draw: &mut crate::common::Draw, who: &str, i: u64) -> (Vec<Change>, Asked) {
    use ostrakon_engine::core::{Interval, Literal};
    use ostrakon_engine::{NewFact, ObjectRef};
    let mut changes = Vec::new();
    let mut records = Vec::new();
    for e in 0..draw.below(4) {
        let name = format!("{who}-{i}-e{e}");
        changes.push(entity(&name));
        records.push(Expect::Entity(name));
    }
    for f in 0..draw.below(4) {
        let subject = match draw.below(3) {
            0 => format!("shared-{}", draw.below(5)),
            1 => format!("{who}-own"),
            _ => changes
                .iter()
                .find_map(|c| match c {
                    Change::DeclareEntity(e) => Some(e.name.clone()),
                    _ => None,
                })
                .unwrap_or_else(|| "shared-0".into()),
        };
        let value = format!("{who}-{i}-f{f}");
        let fact = NewFact::new(
            ostrakon_engine::EntityRef::Name(subject.clone()),
            "said",
            ObjectRef::Literal(Literal::String(value.clone())),
            Interval::open(Timestamp::from_micros(1_600_000_000_000_000)),
        );
        let twice = draw.below(4) == 0;
        changes.push(Change::AssertFact(fact.clone()));
        records.push(Expect::Fact { subject: subject.clone(), value: value.clone() });
        if twice {
            changes.push(Change::AssertFact(fact));
            records.push(Expect::Fact { subject, value });
        }
    }
    for _ in 0..draw.below(3) {
        let text = format!("{who} said {i}.{}", records.len());
        changes.push(Change::RecordEpisode(NewEpisode {
            text: text.clone(),
            occurred_at: Timestamp::from_micros(1_700_000_000_000_000),
            ..NewEpisode::default()
        }));
        records.push(Expect::Episode(text));
    }
    if changes.is_empty() {
        let name = format!("{who}-{i}-only");
        changes.push(entity(&name));
        records.push(Expect::Entity(name));
    }
    (changes, Asked { records })
}

/// Several stores writing one namespace at once, each with writers that differ (new
/// entities, facts on shared entities, restatements, episodes, in numbers that differ
/// from batch to batch), over a log that takes a while to store each group, so that
/// groups form, race and are refused. Every acknowledged batch is in the log at its seq;
/// every id a receipt gave names what its writer asked for on every store (no fact
/// lost, no entity renamed, no episode another's); ids are never given twice; and every
/// store, a fresh one and a full replay agree.
#[test]
fn writers_that_differ_on_several_stores_never_share_an_id_or_lose_a_write() {
    use ostrakon_engine::RecordId;
    let backend = SharedBackend::with_latency(std::time::Duration::from_micros(300));
    let stores: Vec<Store> = (0..3).map(|_| store(&backend)).collect();
    let team = ns();
    stores[0].append(&team, vec![entity("shared-0"), entity("shared-1"), entity("shared-2")]).unwrap();
    let acked = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for (n, node) in stores.iter().enumerate() {
            for w in 0..3 {
                let (team, acked) = (team.clone(), &acked);
                scope.spawn(move || {
                    let who = format!("n{n}w{w}");
                    let mut draw = crate::common::Draw(0x9E37_79B9_7F4A_7C15 ^ ((n * 7 + w) as u64 + 1));
                    for i in 0..100 {
                        let (changes, asked) = shaped(&mut draw, &who, i);
                        let receipt =
                            node.append(&team, changes).unwrap_or_else(|e| panic!("{who} batch {i}: {e}"));
                        acked.lock().unwrap().push((receipt, asked));
                    }
                });
            }
        }
    });
    let acked = acked.into_inner().unwrap();
    let last = Seq(1 + acked.len() as u64);
    let fresh = store(&backend);
    let mut everyone: Vec<&Store> = stores.iter().collect();
    everyone.push(&fresh);
    let mut ids_given = std::collections::HashSet::new();
    for node in &everyone {
        assert_eq!(node.catch_up(&team).unwrap(), last, "a store did not reach the log's end");
    }
    for (receipt, asked) in &acked {
        for (id, expect) in receipt.ids.iter().zip(&asked.records) {
            let id = id.unwrap_or_else(|| panic!("batch {}: a change without an id", receipt.seq));
            for node in &everyone {
                match (id, expect) {
                    (RecordId::Entity(e), Expect::Entity(name)) => {
                        let held = node
                            .at(&team, ReadAt::latest())
                            .unwrap()
                            .entity_version(e)
                            .unwrap()
                            .map(|e| e.name);
                        assert_eq!(
                            held.as_deref(),
                            Some(name.as_str()),
                            "entity {e} of batch {}",
                            receipt.seq
                        );
                    }
                    (RecordId::Fact(f), Expect::Fact { subject, value }) => {
                        let view = node.at(&team, ReadAt::latest()).and_then(|r| r.fact(f)).unwrap().value;
                        let view =
                            view.unwrap_or_else(|| panic!("fact {f} of batch {} is lost", receipt.seq));
                        let held = node
                            .at(&team, ReadAt::latest())
                            .unwrap()
                            .entity_version(view.fact.subject)
                            .unwrap()
                            .map(|e| e.name);
                        assert_eq!(held.as_deref(), Some(subject.as_str()), "fact {f}'s subject");
                        assert_eq!(
                            view.fact.object,
                            ostrakon_engine::core::Value::Literal(ostrakon_engine::core::Literal::String(
                                value.clone()
                            )),
                            "fact {f} of batch {}",
                            receipt.seq
                        );
                    }
                    (RecordId::Episode(e), Expect::Episode(text)) => {
                        let held = node
                            .at(&team, ReadAt::latest())
                            .unwrap()
                            .episode_at(e)
                            .unwrap()
                            .map(|(e, _)| e.text);
                        assert_eq!(
                            held.as_deref(),
                            Some(text.as_str()),
                            "episode {e} of batch {}",
                            receipt.seq
                        );
                    }
                    (id, _) => panic!("batch {}: {id:?} is not what was asked", receipt.seq),
                }
            }
            assert!(ids_given.insert(format!("{id:?}")), "{id:?} given to two records");
        }
    }
    let reference = answers_of(&fresh, &team);
    for node in &stores {
        assert_eq!(answers_of(node, &team), reference, "a store answers differently");
    }
    // A store that replays the whole log with no checkpoint agrees too.
    stores[0].checkpoint(&team).unwrap();
    let replayed = Store::with_backend(
        Arc::new(crate::common::NoCheckpoints(backend.clone())),
        system_clock(),
        StoreOptions::default(),
    )
    .unwrap();
    assert_eq!(answers_of(&replayed, &team), reference);
    eprintln!("{} batches acknowledged from 9 writers on 3 stores", acked.len());
}

/// Everything a store holds of a namespace, as one comparable value.
fn answers_of(store: &Store, ns: &Namespace) -> String {
    let entities = store
        .at(ns, ReadAt::latest())
        .and_then(|r| r.entities(&EntityFilter::default(), None, 10_000))
        .unwrap()
        .value;
    let facts = store.at(ns, ReadAt::latest()).and_then(|r| r.all_facts(None, 10_000)).unwrap().value;
    let filter = ostrakon_engine::views::EpisodeFilter::default();
    let episodes =
        store.at(ns, ReadAt::latest()).and_then(|r| r.episodes(&filter, None, 10_000)).unwrap().value;
    format!("{entities:?}\n{facts:?}\n{episodes:?}\n{:?}", store.counts(ns).unwrap())
}

/// Lag is measured from what the log holds, not from what a store happened to read: a
/// store that applies nothing of another's writes is behind by every batch stored since,
/// for as long as the oldest waited; once it catches up it is behind by none.
#[test]
fn a_store_is_behind_by_what_the_log_holds_and_it_has_not_applied() {
    let backend = SharedBackend::new();
    let (a, b) = (store(&backend), store(&backend));
    a.append(&ns(), vec![entity("Ada")]).unwrap();
    assert_eq!(b.catch_up(&ns()).unwrap(), Seq(1));
    let caught_up = b.lag();
    assert_eq!(caught_up.len(), 1);
    assert_eq!((caught_up[0].applied, caught_up[0].last, caught_up[0].batches()), (Seq(1), Seq(1), 0));
    assert_eq!(caught_up[0].behind_for, std::time::Duration::ZERO);
    // `b` follows nothing (no follower runs): it falls behind as `a` writes.
    for name in ["Bob", "Cy", "Di"] {
        a.append(&ns(), vec![entity(name)]).unwrap();
    }
    std::thread::sleep(std::time::Duration::from_millis(30));
    let behind = b.lag();
    assert_eq!((behind[0].applied, behind[0].last, behind[0].batches()), (Seq(1), Seq(4), 3));
    assert!(behind[0].behind_for >= std::time::Duration::from_millis(30), "{:?}", behind[0].behind_for);
    // The writer itself is never behind its own writes.
    assert_eq!(a.lag()[0].batches(), 0);
    assert_eq!(b.catch_up(&ns()).unwrap(), Seq(4));
    assert_eq!(b.lag()[0].batches(), 0);
}

/// A write that names what another store wrote, on a store that has not applied it yet,
/// is validated again once that store caught up: it contradicts nothing, so it goes
/// through instead of being refused as naming an unknown record.
#[test]
fn a_write_naming_another_store_s_record_is_checked_after_catching_up() {
    let backend = SharedBackend::new();
    let (a, b) = (store(&backend), store(&backend));
    a.append(&ns(), vec![entity("Ada")]).unwrap();
    assert_eq!(b.catch_up(&ns()).unwrap(), Seq(1));
    // `a` records an episode `b` has not seen; `b` is asked to erase nothing but to state a
    // fact from it, and to retract a fact `a` wrote.
    let written = a.append(&ns(), vec![episode("m-1")]).unwrap();
    let Some(ostrakon_engine::RecordId::Episode(said)) = written.ids[0] else { panic!("{written:?}") };
    let fact = ostrakon_engine::NewFact {
        provenance: vec![ostrakon_engine::change::EpisodeRef::Id(said)],
        ..ostrakon_engine::NewFact::new(
            ostrakon_engine::EntityRef::Name("Ada".into()),
            "said",
            ostrakon_engine::ObjectRef::Literal(ostrakon_engine::core::Literal::String("hello".into())),
            ostrakon_engine::core::Interval::open(Timestamp::from_micros(1_700_000_000_000_000)),
        )
    };
    let stated = a.append(&ns(), vec![Change::AssertFact(fact.clone())]).unwrap();
    let receipt = b.append(&ns(), vec![Change::AssertFact(fact)]).unwrap();
    assert_eq!(receipt.seq, Seq(4));
    let retracted =
        b.append(&ns(), vec![Change::RetractFact { fact: stated.fact(0).unwrap(), reason: None }]).unwrap();
    assert_eq!(retracted.seq, Seq(5));
    // What is really unknown is still refused, and nothing is written.
    let unknown =
        b.append(&ns(), vec![Change::RetractFact { fact: ostrakon_engine::core::FactId(999), reason: None }]);
    assert!(unknown.is_err());
    assert_eq!(backend.records("team").len(), 5);
    // An erasure of an episode `b` has not seen yet goes through too.
    let later = a.append(&ns(), vec![episode("m-2")]).unwrap();
    let Some(ostrakon_engine::RecordId::Episode(later)) = later.ids[0] else { panic!("{later:?}") };
    let request = ostrakon_engine::EraseRequest {
        target: ostrakon_engine::EraseTarget::Episodes(vec![later]),
        reason: None,
        by: None,
    };
    assert_eq!(b.erase(&ns(), request).unwrap().seq, Seq(7));
}
