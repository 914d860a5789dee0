//! The write path's conflict path, through the record-level log seam: two stores over one
//! shared log (as two nodes over one replicated stream). A writer that has not seen the
//! log's last batch is refused by the log, catches up, prepares its batch again and is
//! appended after the other's — never both at one seq, never silently ordered.

use std::sync::Arc;

use mnemo_engine::core::{Entity, Namespace, Seq, Timestamp};
use mnemo_engine::{
    Change, EngineError, EntityFilter, LogBackend, NewEntity, NewEpisode, ReadAt, SharedBackend, Store,
    StoreOptions, system_clock,
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
    let page = store.entities(&ns(), &EntityFilter::default(), ReadAt::latest(), None, 100).unwrap().value;
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
    let EngineError::InChange { change: 0, error } = &refused else { panic!("{refused:?}") };
    assert!(matches!(**error, EngineError::DuplicateExternalId { .. }), "{refused:?}");
    assert_eq!(backend.records("team").len(), 2);
    // And `a` writes on after it.
    assert_eq!(a.append(&ns(), vec![episode("m-2")]).unwrap().seq, Seq(3));
}

#[test]
fn a_writer_always_beaten_gets_a_typed_conflict_and_writes_nothing() {
    let backend = SharedBackend::new();
    let a = store(&backend);
    a.append(&ns(), vec![entity("Ada")]).unwrap();
    // Another writer appends a valid batch before every one of `a`'s tries.
    let foreign = {
        let other = SharedBackend::new();
        store(&other).append(&ns(), vec![entity("Zed")]).unwrap();
        other.records("team").remove(0).payload
    };
    backend.interfere("team", 1_000, foreign);
    let refused = a.append(&ns(), vec![entity("Cy")]).unwrap_err();
    match refused {
        EngineError::Conflict { namespace, expected, found } => {
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
    use mnemo_engine::{MemStorage, RecordLog, StorageBackend};
    let backend = StorageBackend::new(Arc::new(MemStorage::new()), None);
    let clock = mnemo_engine::core::Timestamp::from_micros(1);
    let (log, recovery): (Box<dyn RecordLog>, _) =
        backend.open("events", Arc::new(move || clock.as_micros())).unwrap();
    assert!(recovery.records.is_empty() && log.exclusive());
    let first = log.submit(b"one", 0).unwrap();
    log.wait(first).unwrap();
    let stale = log.submit(b"two", 0).unwrap_err();
    assert!(matches!(stale, mnemo_engine::LogError::Conflict { expected: 0, found: 1 }), "{stale:?}");
    let second = log.submit(b"two", 1).unwrap();
    assert_eq!(log.wait(second).unwrap().seq, 2);
    assert_eq!(log.read_after(1).unwrap().iter().map(|r| r.payload.clone()).collect::<Vec<_>>(), [b"two"]);
}
