//! Erasure: the content goes from the log, the checkpoint, the search indexes and every
//! read at every read point; what was not erased answers as it did; a crash between the
//! erasure and its compaction is finished on open; an unknown id erases nothing.

use ostrakon_engine::core::{
    EntityFilter, EpisodeFilter, ErasedRef, FactFilter, Literal, Namespace, Scope, Seq,
};
use ostrakon_engine::{
    Change, EntityRef, EraseRequest, EraseTarget, NewEntity, NewEpisode, NewFact, ObjectRef, ReadAt,
    SearchQuery, Store, WriteError, change::NewIntention, change::NewTrigger,
};

use crate::common::{grep, iv, t, walk};

use ostrakon_testkit::erasure::NEEDLES;
pub(crate) use ostrakon_testkit::erasure::{ALIAS, NAME, SECRET};

/// What the person said (the story's one line of theirs).
const SAID: &str = "Zyxwarbleton Quennimore said the orchid code is 5512-plover";

pub(crate) fn ns() -> Namespace {
    Namespace::new("ns", "people").unwrap()
}

/// The story, with or without the person: returns the read points after each batch.
pub(crate) fn write_story(store: &Store, with_person: bool) -> Vec<Seq> {
    let ns = ns();
    let mut points = Vec::new();
    let mut push = |r: ostrakon_engine::Receipt| points.push(r.seq);
    let declare = |name: &str, aliases: Vec<String>| {
        Change::DeclareEntity(NewEntity { name: name.into(), aliases, ..NewEntity::default() })
    };
    let r = store.append(&ns, vec![declare("Bob Marlowe", vec![]), declare("Paris", vec![])]).unwrap();
    let (bob, paris) = (r.entity(0).unwrap(), r.entity(1).unwrap());
    push(r);
    let episode = |text: &str, at: &str| {
        Change::RecordEpisode(NewEpisode {
            text: text.into(),
            occurred_at: t(at),
            thread: Some("t1".into()),
            ..NewEpisode::default()
        })
    };
    let mut person = None;
    if with_person {
        let r = store.append(&ns, vec![declare(NAME, vec![ALIAS.into()])]).unwrap();
        person = r.entity(0);
        push(r);
    }
    let mut batch = vec![episode("Bob Marlowe moved to Paris in spring.", "2024-03-01")];
    if with_person {
        batch.push(episode(SAID, "2024-03-02"));
    }
    push(store.append(&ns, batch).unwrap());
    let lives = |s, o, from: &str| {
        NewFact::new(EntityRef::Id(s), "livesIn", ObjectRef::Entity(EntityRef::Id(o)), iv(from, None))
    };
    let mut batch = vec![Change::AssertFact(lives(bob, paris, "2024-03-01"))];
    if let Some(p) = person {
        batch.push(Change::AssertFact(lives(p, paris, "2020-01-01")));
        batch.push(Change::AssertFact(NewFact::new(
            EntityRef::Id(bob),
            "knows",
            ObjectRef::Entity(EntityRef::Id(p)),
            iv("2019-01-01", None),
        )));
        batch.push(Change::AssertFact(NewFact::new(
            EntityRef::Id(p),
            "code",
            ObjectRef::Literal(Literal::String(SECRET.into())),
            iv("2021-01-01", None),
        )));
        batch.push(Change::AddIntention(NewIntention {
            payload: format!("ask {NAME} about the orchids"),
            trigger: NewTrigger::Mentions(vec![EntityRef::Id(p)]),
            expires_at: None,
            priority: 0,
            repeat: false,
        }));
    }
    push(store.append(&ns, batch).unwrap());
    push(store.append(&ns, vec![episode("Bob Marlowe likes the Seine.", "2024-04-01")]).unwrap());
    points
}

/// What a read at `s` says about everything but the person, by names and texts.
pub(crate) fn answers(store: &Store, s: Seq) -> Vec<String> {
    let ns = ns();
    let at = ReadAt::bitemporal(t("2025-01-01"), s);
    let mut out = Vec::new();
    let entities =
        store.at(&ns, at).and_then(|r| r.entities(&EntityFilter::default(), None, 100)).unwrap().value;
    let name_of = |id| entities.items.iter().find(|(_, e)| e.id == id).map(|(_, e)| e.name.clone());
    for (_, e) in &entities.items {
        out.push(format!("entity {} {:?}", e.name, e.aliases));
    }
    for f in store.at(&ns, at).and_then(|r| r.facts(&FactFilter::default(), Scope::InForce)).unwrap().value {
        let object = match &f.fact.object {
            ostrakon_engine::core::Value::Entity(id) => name_of(*id).unwrap_or_else(|| "?".into()),
            ostrakon_engine::core::Value::Literal(l) => l.to_string(),
        };
        out.push(format!("fact {:?} {} {object}", name_of(f.fact.subject), f.fact.predicate));
    }
    let episodes =
        store.at(&ns, at).and_then(|r| r.episodes(&EpisodeFilter::default(), None, 100)).unwrap().value;
    for (_, e) in episodes.items {
        out.push(format!("episode {} {}", e.occurred_at, e.text));
    }
    out.sort();
    out
}

/// An embedder that keeps every text it embedded, as a cache does, and forgets on demand.
#[derive(Default)]
struct Remembering(std::sync::Mutex<std::collections::BTreeSet<String>>);

impl ostrakon_engine::search::Embedder for Remembering {
    fn model_id(&self) -> &str {
        "remembering"
    }
    fn dim(&self) -> usize {
        4
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ostrakon_engine::search::EmbedError> {
        Ok(keep_and_embed(&self.0, texts))
    }
    fn forget(&self, texts: &[&str]) -> Result<usize, ostrakon_engine::search::EmbedError> {
        let mut kept = self.0.lock().unwrap();
        Ok(texts.iter().filter(|t| kept.remove(**t)).count())
    }
}

/// Toy vectors of `texts` (by their length), each text kept in `kept` as a cache keeps it.
fn keep_and_embed(
    kept: &std::sync::Mutex<std::collections::BTreeSet<String>>,
    texts: &[&str],
) -> Vec<Vec<f32>> {
    let mut kept = kept.lock().unwrap();
    texts
        .iter()
        .map(|t| {
            kept.insert((*t).to_owned());
            let n = t.len() as f32;
            let v = [1.0, n % 7.0, n % 3.0, 0.5];
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.iter().map(|x| x / norm).collect()
        })
        .collect()
}

fn open(dir: &std::path::Path, embedder: &std::sync::Arc<Remembering>) -> Store {
    let embedder = std::sync::Arc::clone(embedder);
    let source: ostrakon_engine::search::EmbedderSource = std::sync::Arc::new(move |_| {
        Ok(std::sync::Arc::clone(&embedder) as std::sync::Arc<dyn ostrakon_engine::search::Embedder>)
    });
    let options = ostrakon_engine::StoreOptions {
        embedder: Some(source),
        search_on_disk_from_bytes: Some(0),
        erasure_key: Some(KEY.into()),
        ..ostrakon_engine::StoreOptions::default()
    };
    Store::open_with(dir, options).unwrap()
}

/// The erasure key of the stores [`open`] opens (kept by the operator outside the data).
const KEY: &[u8] = b"an erasure key of at least thirty-two bytes";

pub(crate) fn person(store: &Store) -> ostrakon_engine::core::EntityId {
    store
        .at(&ns(), ostrakon_engine::ReadAt::latest())
        .unwrap()
        .entity_named(NAME)
        .unwrap()
        .expect("the person")
}

#[test]
fn an_erased_person_is_gone_from_every_file_and_read_and_the_rest_answers_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let embedder = std::sync::Arc::new(Remembering::default());
    let points = {
        let store = open(dir.path(), &embedder);
        let points = write_story(&store, true);
        store.checkpoint(&ns()).unwrap();
        points
    };
    // Opened again: the checkpoint and the search files are on disk.
    let store = open(dir.path(), &embedder);
    let query = SearchQuery { text: Some("orchid".into()), wait_for_index: true, ..SearchQuery::default() };
    assert!(!store.at(&ns(), ReadAt::latest()).and_then(|r| r.search(&query)).unwrap().value.hits.is_empty());
    assert!(dir.path().join("search").join("people").is_dir(), "text indexes on disk");
    assert!(!grep(dir.path(), SECRET).is_empty(), "the story is on disk before the erasure");
    assert!(embedder.0.lock().unwrap().iter().any(|t| t.contains(NAME)), "the texts were embedded");
    let id = person(&store);
    let batches = store.counts(&ns()).unwrap().batches;
    // An unknown id erases nothing.
    let unknown = EraseRequest {
        target: EraseTarget::Entity(ostrakon_engine::core::EntityId(9999)),
        reason: None,
        by: None,
    };
    assert!(matches!(store.erase(&ns(), unknown), Err(WriteError::UnknownEntity { .. })));
    assert_eq!(store.counts(&ns()).unwrap().batches, batches);
    let erased = store
        .erase(
            &ns(),
            EraseRequest {
                target: EraseTarget::Entity(id),
                reason: Some("request of the data subject".into()),
                by: Some("test".into()),
            },
        )
        .unwrap();
    assert!(erased.records.iter().any(|(r, _)| *r == ErasedRef::Entity(id)));
    // The entity, 3 facts, 1 episode, 1 intention.
    assert_eq!(erased.records.len(), 6, "{:?}", erased.records);
    // Keyed digests: 64 hex digits, none of them the plain SHA-256 of anything.
    assert!(
        erased
            .records
            .iter()
            .all(|(_, hash)| hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
    );
    assert_eq!(erased.batches_rewritten, 3);
    // Reads, now and at every earlier read point: nothing of the person.
    for s in points.iter().copied().chain([erased.seq]) {
        let said = answers(&store, s).join("\n");
        for needle in NEEDLES {
            assert!(!said.contains(needle), "at {s}: {said}");
        }
    }
    let mark = store.erased(&ns(), ErasedRef::Entity(id)).unwrap().expect("a marker");
    assert_eq!((mark.seq, mark.erased_in), (Some(points[1]), erased.seq));
    let audit = store.erasures(&ns()).unwrap();
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].erasure.reason.as_deref(), Some("request of the data subject"));
    let query = SearchQuery {
        text: Some("Zyxwarbleton orchid".into()),
        wait_for_index: true,
        ..SearchQuery::default()
    };
    let hits = store.at(&ns(), ReadAt::latest()).and_then(|r| r.search(&query)).unwrap().value.hits;
    assert!(hits.iter().all(|h| !format!("{h:?}").contains("Zyxwarbleton")), "{hits:?}");
    assert!(erased.cache_entries_dropped > 0);
    let kept = embedder.0.lock().unwrap().clone();
    assert!(kept.iter().all(|t| !t.contains(NAME) && !t.contains(SECRET) && !t.contains(ALIAS)), "{kept:?}");
    assert!(kept.iter().any(|t| t.contains("Seine")), "the other texts stay");
    // A write goes on after the erasure, and may not name the erased entity.
    store
        .append(
            &ns(),
            vec![Change::DeclareEntity(NewEntity { name: "Carol".into(), ..NewEntity::default() })],
        )
        .unwrap();
    let about = NewFact::new(
        EntityRef::Id(id),
        "livesIn",
        ObjectRef::Literal(Literal::String("x".into())),
        iv("2020-01-01", None),
    );
    assert!(store.append(&ns(), vec![Change::AssertFact(about)]).is_err());
    drop(store);
    // Closed (a checkpoint written again): no file holds any of it.
    assert!(dir.path().join("search").join("people").is_dir(), "text indexes rebuilt");
    for needle in NEEDLES {
        assert_eq!(grep(dir.path(), needle), Vec::<std::path::PathBuf>::new(), "{needle}");
    }
    // The rest answers exactly as the same story written without the person, at the
    // same read points (the reference has one batch fewer: the person's declaration).
    let store = open(dir.path(), &embedder);
    let reference_dir = tempfile::tempdir().unwrap();
    let reference = Store::open(reference_dir.path()).unwrap();
    let reference_points = write_story(&reference, false);
    let ours: Vec<Seq> = points.iter().copied().filter(|s| *s != points[1]).collect();
    assert_eq!(ours.len(), reference_points.len());
    for (s, r) in ours.iter().zip(&reference_points) {
        assert_eq!(answers(&store, *s), answers(&reference, *r), "at {s}");
    }
}

#[test]
fn an_erasure_a_crash_cut_short_is_finished_when_the_store_opens() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("logs").join("people.log");
    let before = {
        let store = Store::open(dir.path()).unwrap();
        write_story(&store, true);
        std::fs::read(&log).unwrap()
    };
    let after = {
        let store = Store::open(dir.path()).unwrap();
        let id = person(&store);
        store.erase(&ns(), EraseRequest { target: EraseTarget::Entity(id), reason: None, by: None }).unwrap();
        drop(store);
        std::fs::read(&log).unwrap()
    };
    // The crash: the erasure's batch reached the log, its compaction did not. The last
    // batch of the compacted log is the erasure; put it after the old log's batches.
    let header_len = 16 + "people".len() + 4;
    let records = ostrakon_log::decode_frames(&after[header_len..]).unwrap();
    let last = records.last().unwrap();
    let mut crashed = before.clone();
    crashed.extend_from_slice(&ostrakon_log::encode_frame(last.seq, last.system_time, &last.payload));
    std::fs::write(&log, &crashed).unwrap();
    for file in walk(dir.path()) {
        if file.extension().is_some_and(|e| e == "ckpt") {
            std::fs::remove_file(file).unwrap();
        }
    }
    assert!(!grep(dir.path(), SECRET).is_empty());
    let store = Store::open(dir.path()).unwrap();
    let said = answers(&store, Seq(6)).join("\n");
    assert!(!said.contains(SECRET) && !said.contains(NAME), "{said}");
    assert!(grep(dir.path(), SECRET).is_empty(), "compacted on open");
    assert_eq!(store.erasures(&ns()).unwrap().len(), 1);
}

#[test]
fn retention_erases_old_episodes_and_keeps_the_facts_stated_from_them() {
    let fx = crate::common::Fixture::new();
    let ninety_days = 90 * ostrakon_engine::core::DAY_MICROS;
    let policy = ostrakon_engine::core::RetentionPolicy { episodes_after_micros: Some(ninety_days) };
    fx.append(vec![Change::ConfigureRetention(policy)]);
    let said = |text: &str| {
        Change::RecordEpisode(NewEpisode {
            text: text.into(),
            occurred_at: t("2030-01-01"),
            ..NewEpisode::default()
        })
    };
    let old = fx.append(vec![said("the old secret: orchid-plover-5512")]).episode(0).unwrap();
    let bob = fx.entity("Bob");
    let fact = NewFact {
        provenance: vec![ostrakon_engine::change::EpisodeRef::Id(old)],
        ..NewFact::new(
            EntityRef::Id(bob),
            "likes",
            ObjectRef::Literal(Literal::String("tea".into())),
            iv("2030-01-01", None),
        )
    };
    fx.append(vec![Change::AssertFact(fact)]);
    fx.clock.advance_seconds(60 * 86_400);
    let recent = fx.append(vec![said("a recent remark")]).episode(0).unwrap();
    // 91 days after the first: only the first is past the period.
    fx.clock.advance_seconds(31 * 86_400);
    let report = fx.store.maintain(fx.store.now());
    assert_eq!(report.retained, vec![(fx.ns.clone(), 1)], "{report:?}");
    let texts: Vec<String> = fx
        .store
        .at(&fx.ns, ReadAt::latest())
        .and_then(|r| r.episodes(&EpisodeFilter::default(), None, 10))
        .unwrap()
        .value
        .items
        .into_iter()
        .map(|(_, e)| e.text)
        .collect();
    assert_eq!(texts, ["a recent remark"]);
    assert_eq!(fx.values(bob, "likes", ReadAt::latest()), ["tea"], "the fact stays");
    let mark = fx.store.erased(&fx.ns, ErasedRef::Episode(old)).unwrap().expect("a marker");
    let audit = fx.store.erasures(&fx.ns).unwrap();
    assert_eq!(audit[0].erasure.by.as_deref(), Some("retention"));
    assert_eq!(audit[0].erasure.reason.as_deref(), Some("retention: episodes are kept P90D"));
    assert!(mark.seq.is_some());
    // Within the hour nothing runs again; the recent episode falls due 90 days after it
    // was recorded.
    fx.clock.advance_seconds(60);
    assert!(fx.store.maintain(fx.store.now()).retained.is_empty());
    fx.clock.advance_seconds(58 * 86_400);
    assert!(fx.store.maintain(fx.store.now()).retained.is_empty());
    fx.clock.advance_seconds(2 * 86_400);
    assert_eq!(fx.store.maintain(fx.store.now()).retained, vec![(fx.ns.clone(), 1)]);
    assert!(fx.store.erased(&fx.ns, ErasedRef::Episode(recent)).unwrap().is_some());
}

#[test]
fn an_export_with_erasures_replays_into_an_identical_log() {
    let fx = crate::common::Fixture::new();
    let said = |text: &str| {
        Change::RecordEpisode(NewEpisode {
            text: text.into(),
            occurred_at: t("2030-01-01"),
            ..NewEpisode::default()
        })
    };
    let first = fx.append(vec![said("one"), said("two")]);
    let (one, two) = (first.episode(0).unwrap(), first.episode(1).unwrap());
    let bob = fx.entity("Bob");
    let stated = |value: &str, from: ostrakon_engine::core::EpisodeId| {
        Change::AssertFact(NewFact {
            provenance: vec![ostrakon_engine::change::EpisodeRef::Id(from)],
            ..NewFact::new(
                EntityRef::Id(bob),
                "says",
                ObjectRef::Literal(Literal::String(value.into())),
                iv("2030-01-01", None),
            )
        })
    };
    let facts = fx.append(vec![stated("a", one), stated("b", two)]);
    let wrong = facts.fact(1).unwrap();
    let correction = Change::AssertFact(NewFact {
        supersedes: Some(wrong),
        ..NewFact::new(
            EntityRef::Id(bob),
            "says",
            ObjectRef::Literal(Literal::String("c".into())),
            iv("2030-01-01", None),
        )
    });
    fx.append(vec![correction]);
    let erase = |target| fx.store.erase(&fx.ns, EraseRequest { target, reason: None, by: None }).unwrap();
    erase(EraseTarget::Episodes(vec![one]));
    erase(EraseTarget::Facts(vec![wrong]));
    fx.append(vec![said("three")]);
    let exported = fx.store.export(&fx.ns).unwrap();
    assert!(
        exported
            .iter()
            .any(|b| b.events.iter().any(|e| matches!(e, ostrakon_engine::core::Event::Tombstone { .. })))
    );
    let copy = Store::in_memory();
    for batch in &exported {
        copy.replay(&fx.ns, batch.seq, &batch.events).unwrap_or_else(|e| panic!("batch {}: {e}", batch.seq));
    }
    let events =
        |store: &Store| store.export(&fx.ns).unwrap().into_iter().map(|b| b.events).collect::<Vec<_>>();
    assert_eq!(events(&copy), events(&fx.store));
    // A client's batch may not restore a tombstone.
    let tombstone = exported
        .iter()
        .flat_map(|b| b.events.clone())
        .find(|e| matches!(e, ostrakon_engine::core::Event::Tombstone { .. }))
        .unwrap();
    assert!(fx.store.append(&fx.ns, vec![Change::Restore(tombstone)]).is_err());
}

#[test]
fn a_read_pinned_before_a_drop_is_told_the_namespace_was_dropped() {
    let store = Store::in_memory();
    let ns = ns();
    let pinned = store
        .append(&ns, vec![Change::DeclareEntity(NewEntity { name: "Ada".into(), ..NewEntity::default() })])
        .unwrap()
        .seq;
    let at = ReadAt::bitemporal(t("2025-01-01"), pinned);
    assert_eq!(
        store
            .at(&ns, at)
            .and_then(|r| r.entities(&EntityFilter::default(), None, 10))
            .unwrap()
            .value
            .items
            .len(),
        1
    );
    assert!(store.drop_namespace(&ns).unwrap());
    assert!(matches!(
        store.at(&ns, at).and_then(|r| r.entities(&EntityFilter::default(), None, 10)),
        Err(ostrakon_engine::ReadError::Storage(ostrakon_engine::StorageError::NamespaceDropped { .. }))
    ));
    assert!(!store.drop_namespace(&ns).unwrap(), "nothing left to drop");
    // Used again, the name is a new namespace: a read at a batch it has not reached is
    // one not yet known, as anywhere.
    store
        .append(&ns, vec![Change::DeclareEntity(NewEntity { name: "Bea".into(), ..NewEntity::default() })])
        .unwrap();
    let later = ReadAt::bitemporal(t("2025-01-01"), Seq(5));
    assert!(matches!(
        store.at(&ns, later).and_then(|r| r.entities(&EntityFilter::default(), None, 10)),
        Err(ostrakon_engine::ReadError::NotYetKnown { .. })
    ));
}

/// An embedder that keeps every text it embedded, as a cache does, and takes its time
/// (a few milliseconds a text) while `slow` is set: an embedder far behind the log.
#[derive(Default)]
struct Behind {
    kept: std::sync::Mutex<std::collections::BTreeSet<String>>,
    embedded: std::sync::atomic::AtomicUsize,
    slow: std::sync::atomic::AtomicBool,
}

impl ostrakon_engine::search::Embedder for Behind {
    fn model_id(&self) -> &str {
        "behind"
    }
    fn dim(&self) -> usize {
        4
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ostrakon_engine::search::EmbedError> {
        use std::sync::atomic::Ordering::SeqCst;
        if self.slow.load(SeqCst) {
            std::thread::sleep(std::time::Duration::from_millis(4 * texts.len() as u64));
        }
        self.embedded.fetch_add(texts.len(), SeqCst);
        Ok(keep_and_embed(&self.kept, texts))
    }
    fn forget(&self, texts: &[&str]) -> Result<usize, ostrakon_engine::search::EmbedError> {
        let mut kept = self.kept.lock().unwrap();
        Ok(texts.iter().filter(|t| kept.remove(**t)).count())
    }
}

#[test]
fn an_erasure_drops_the_embedders_queued_work_and_no_erased_text_reaches_its_cache() {
    use std::sync::atomic::Ordering::SeqCst;
    let dir = tempfile::tempdir().unwrap();
    let embedder = std::sync::Arc::new(Behind::default());
    let source: ostrakon_engine::search::EmbedderSource = {
        let embedder = std::sync::Arc::clone(&embedder);
        std::sync::Arc::new(move |_| {
            Ok(std::sync::Arc::clone(&embedder) as std::sync::Arc<dyn ostrakon_engine::search::Embedder>)
        })
    };
    let options = ostrakon_engine::StoreOptions {
        embedder: Some(source),
        search_on_disk_from_bytes: Some(0),
        ..ostrakon_engine::StoreOptions::default()
    };
    let store = Store::open_with(dir.path(), options).unwrap();
    let ns = ns();
    let r = store
        .append(&ns, vec![Change::DeclareEntity(NewEntity { name: NAME.into(), ..NewEntity::default() })])
        .unwrap();
    let id = r.entity(0).unwrap();
    embedder.slow.store(true, SeqCst);
    // Two thousand texts (each episode alone and in its context) queued for the embedder,
    // several seconds of work at its pace, the person's own words last.
    let episode = |i: usize, text: String| {
        Change::RecordEpisode(NewEpisode {
            text,
            occurred_at: t("2024-03-01"),
            thread: Some(format!("t{}", i % 7)),
            ..NewEpisode::default()
        })
    };
    for round in 0..20 {
        let batch = (0..50)
            .map(|i| episode(i, format!("Bob Marlowe walked {round}-{i} times to the river.")))
            .collect();
        store.append(&ns, batch).unwrap();
    }
    let mut said = vec![episode(0, SAID.into())];
    said.push(Change::AssertFact(NewFact::new(
        EntityRef::Id(id),
        "code",
        ObjectRef::Literal(Literal::String(SECRET.into())),
        iv("2021-01-01", None),
    )));
    store.append(&ns, said).unwrap();
    let request = EraseRequest { target: EraseTarget::Entity(id), reason: None, by: None };
    let _ = store.erase(&ns, request).unwrap();
    // The queued work was dropped, not done first: the embedder had not embedded the
    // backlog when the erasure returned.
    let done = embedder.embedded.load(SeqCst);
    assert!(done < 1_000, "the erasure waited for {done} texts to be embedded");
    embedder.slow.store(false, SeqCst);
    // The namespace opened again indexes what is left, and nothing erased.
    let query = SearchQuery { text: Some("river".into()), wait_for_index: true, ..SearchQuery::default() };
    assert!(!store.at(&ns, ReadAt::latest()).and_then(|r| r.search(&query)).unwrap().value.hits.is_empty());
    let indexing = store.indexing(&ns).unwrap().expect("open");
    assert_eq!((indexing.indexed, indexing.to_embed), (indexing.latest, 0), "{indexing:?}");
    // Given the old shard's lane a moment to do anything it still would.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let kept = embedder.kept.lock().unwrap().clone();
    assert!(kept.iter().any(|t| t.contains("river")), "the rest is embedded");
    assert!(kept.iter().all(|t| !t.contains(NAME) && !t.contains(SECRET)), "an erased text was embedded");
    drop(store);
    for needle in [NAME, SECRET, "Zyxwarbleton"] {
        assert_eq!(grep(dir.path(), needle), Vec::<std::path::PathBuf>::new(), "{needle}");
    }
}

#[test]
fn dropping_a_namespace_closed_since_a_restart_forgets_its_texts_without_waiting_for_an_index() {
    let dir = tempfile::tempdir().unwrap();
    let embedder = std::sync::Arc::new(Behind::default());
    let open = || {
        let embedder = std::sync::Arc::clone(&embedder);
        let source: ostrakon_engine::search::EmbedderSource = std::sync::Arc::new(move |_| {
            Ok(std::sync::Arc::clone(&embedder) as std::sync::Arc<dyn ostrakon_engine::search::Embedder>)
        });
        let options = ostrakon_engine::StoreOptions {
            embedder: Some(source),
            search_on_disk_from_bytes: Some(0),
            ..ostrakon_engine::StoreOptions::default()
        };
        Store::open_with(dir.path(), options).unwrap()
    };
    {
        let store = open();
        write_story(&store, true);
        let query =
            SearchQuery { text: Some("orchid".into()), wait_for_index: true, ..SearchQuery::default() };
        store.at(&ns(), ReadAt::latest()).and_then(|r| r.search(&query)).unwrap();
    }
    assert!(embedder.kept.lock().unwrap().iter().any(|t| t.contains(NAME)));
    // After a restart the namespace is not open: the drop opens it only to learn its
    // texts, and no index of it is built (nor waited for: it waited a minute).
    let store = open();
    let started = std::time::Instant::now();
    assert!(store.drop_namespace(&ns()).unwrap());
    let took = started.elapsed();
    assert!(took < std::time::Duration::from_secs(30), "the drop hung for {took:?}");
    let kept = embedder.kept.lock().unwrap().clone();
    assert!(kept.iter().all(|t| !t.contains(NAME) && !t.contains("Seine")), "{kept:?}");
    drop(store);
    for needle in [NAME, SECRET, "Seine"] {
        assert_eq!(grep(dir.path(), needle), Vec::<std::path::PathBuf>::new(), "{needle}");
    }
}

/// Runs of 64 lowercase hex digits in `bytes`: digests.
fn digests(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|b| !(b.is_ascii_digit() || (b'a'..=b'f').contains(b)))
        .filter(|run| run.len() == 64)
        .map(|run| String::from_utf8_lossy(run).into_owned())
        .collect()
}

#[test]
fn an_erasure_keeps_no_digest_anyone_could_check_a_guessed_name_against() {
    use sha2::Digest as _;
    // Without a key: no digest at all, in the answer or in the log.
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    write_story(&store, true);
    let request = EraseRequest { target: EraseTarget::Entity(person(&store)), reason: None, by: None };
    let erased = store.erase(&ns(), request).unwrap();
    assert!(erased.records.iter().all(|(_, hash)| hash.is_empty()), "{:?}", erased.records);
    drop(store);
    let log = std::fs::read(dir.path().join("logs").join("people.log")).unwrap();
    assert_eq!(digests(&log), Vec::<String>::new());
    // With a key: digests, which differ with the key (destroying it makes them meaningless)
    // and none of which is a plain SHA-256 of the erased name.
    let mut seen = Vec::new();
    for key in [
        &b"the first erasure key, thirty-two bytes or more"[..],
        b"the second erasure key, also thirty-two or more",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let options = ostrakon_engine::StoreOptions { erasure_key: Some(key.into()), ..Default::default() };
        let store = Store::open_with(dir.path(), options).unwrap();
        write_story(&store, true);
        let request = EraseRequest { target: EraseTarget::Entity(person(&store)), reason: None, by: None };
        let erased = store.erase(&ns(), request).unwrap();
        let hashes: Vec<String> = erased.records.iter().map(|(_, h)| h.clone()).collect();
        assert!(hashes.iter().all(|h| h.len() == 64), "{hashes:?}");
        seen.push(hashes);
        drop(store);
        let log = std::fs::read(dir.path().join("logs").join("people.log")).unwrap();
        let plain: String =
            sha2::Sha256::digest(NAME.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
        assert!(!digests(&log).is_empty());
        assert!(!digests(&log).contains(&plain));
    }
    assert!(seen[0].iter().zip(&seen[1]).all(|(a, b)| a != b), "{seen:?}");
}

#[test]
fn a_retention_shorter_than_a_day_is_recorded_as_it_was_given() {
    let fx = crate::common::Fixture::new();
    let policy = ostrakon_engine::core::RetentionPolicy { episodes_after_micros: Some(10_000_000) };
    fx.append(vec![Change::ConfigureRetention(policy)]);
    let said = Change::RecordEpisode(NewEpisode {
        text: "a passing remark".into(),
        occurred_at: t("2030-01-01"),
        ..NewEpisode::default()
    });
    fx.append(vec![said]);
    fx.clock.advance_seconds(11);
    assert_eq!(fx.store.maintain(fx.store.now()).retained, vec![(fx.ns.clone(), 1)]);
    let audit = fx.store.erasures(&fx.ns).unwrap();
    // It said "kept 0 days".
    assert_eq!(audit[0].erasure.reason.as_deref(), Some("retention: episodes are kept PT10S"));
}
