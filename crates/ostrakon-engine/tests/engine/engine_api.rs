//! Engine services the API stands on: entities named in writes, listings with cursors,
//! commit notifications, and export/replay to an identical store.

use crate::common;

use std::sync::{Arc, Mutex};

use common::{Fixture, iv, t};
use ostrakon_engine::core::{EntityId, Event, Literal, Namespace, Seq};
use ostrakon_engine::{
    Change, EntityRef, NewEntity, NewEpisode, NewFact, ObjectRef, ReadAt, Store, WriteError,
    change::EpisodeRef, views::EntityFilter, views::EpisodeFilter,
};

fn named(subject: &str, predicate: &str, object: &str, from: &str) -> Change {
    Change::AssertFact(NewFact::new(
        EntityRef::Name(subject.into()),
        predicate,
        ObjectRef::Entity(EntityRef::Name(object.into())),
        iv(from, None),
    ))
}

#[test]
fn entities_named_in_writes_are_found_by_name_or_alias_and_created_once() {
    let fx = Fixture::new();
    let paris = fx
        .append(vec![Change::DeclareEntity(NewEntity {
            name: "Paris".into(),
            aliases: vec!["City of Light".into()],
            ..NewEntity::default()
        })])
        .entity(0)
        .unwrap();
    let r = fx.append(vec![
        named("Alice", "livesIn", "city of  LIGHT", "2020"),
        named("alice", "knows", "Bob", "2020"),
        named("Bob", "livesIn", "Paris", "2020"),
    ]);
    // Alice and Bob were created, once each, in the order they were named.
    assert_eq!(r.created.len(), 2);
    let (alice, bob) = (r.created[0], r.created[1]);
    let names: Vec<String> = r
        .created
        .iter()
        .map(|id| fx.store.inspect(&fx.ns, |i| i.entity(*id).unwrap().name.clone()).unwrap())
        .collect();
    assert_eq!(names, ["Alice", "Bob"]);
    assert_eq!(fx.values(alice, "livesIn", ReadAt::valid(t("2021"))), ["Paris"]);
    assert_eq!(fx.values(alice, "knows", ReadAt::valid(t("2021"))), ["Bob"]);
    assert_eq!(fx.values(bob, "livesIn", ReadAt::valid(t("2021"))), ["Paris"]);
    // Names and aliases declared earlier in the same batch are found too.
    let r = fx.append(vec![
        Change::DeclareEntity(NewEntity {
            name: "Carl".into(),
            aliases: vec!["Carlo".into()],
            ..NewEntity::default()
        }),
        named("carlo", "likes", "Paris", "2020"),
    ]);
    assert!(r.created.is_empty(), "{r:?}");
    assert_eq!(fx.values(r.entity(0).unwrap(), "likes", ReadAt::valid(t("2021"))), ["Paris"]);
    let again = fx.append(vec![named("ALICE", "likes", "Paris", "2020")]);
    assert!(again.created.is_empty());
    assert_eq!(fx.store.inspect(&fx.ns, |i| i.entities_named("paris")).unwrap(), vec![paris]);
    // An empty name is refused with its field.
    let e = fx.store.append(&fx.ns, vec![named(" ", "x", "Paris", "2020")]).unwrap_err();
    assert!(matches!(&e, WriteError::InChange { change: 0, .. }), "{e}");
    assert_eq!(e.field(), Some("subject"), "{e}");
}

#[test]
fn concurrent_writers_naming_the_same_new_entity_create_it_once() {
    let fx = Fixture::new();
    std::thread::scope(|s| {
        for w in 0..4 {
            let fx = &fx;
            s.spawn(move || {
                for i in 0..10 {
                    fx.append(vec![named("Zed", "saw", &format!("thing {w}-{i}"), "2020")]);
                }
            });
        }
    });
    assert_eq!(fx.store.inspect(&fx.ns, |i| i.entities_named("zed")).unwrap().len(), 1);
    assert_eq!(fx.store.counts(&fx.ns).unwrap().entities, 41);
}

#[test]
fn listings_page_with_cursors_at_a_pinned_system_time() {
    let fx = Fixture::new();
    let mut changes = Vec::new();
    for i in 0..7 {
        changes.push(Change::RecordEpisode(NewEpisode {
            text: format!("turn {i}"),
            occurred_at: t(&format!("2024-01-0{}", 7 - i)),
            thread: Some(if i % 2 == 0 { "even" } else { "odd" }.into()),
            ..NewEpisode::default()
        }));
    }
    let s1 = fx.append(changes).seq;
    fx.append(vec![Change::RecordEpisode(NewEpisode {
        text: "late".into(),
        occurred_at: t("2024-01-02T12:00:00Z"),
        ..NewEpisode::default()
    })]);
    let texts = |filter: &EpisodeFilter, at: ReadAt, limit: usize| {
        let mut all = Vec::new();
        let mut after = None;
        loop {
            let ostrakon_engine::views::Page { items: page, more } =
                fx.store.at(&fx.ns, at).and_then(|r| r.episodes(filter, after, limit)).unwrap().value;
            after = page.last().map(|(_, e)| (e.occurred_at, e.id));
            all.extend(page.into_iter().map(|(_, e)| e.text));
            if !more {
                return all;
            }
        }
    };
    let everything = EpisodeFilter::default();
    assert_eq!(
        texts(&everything, ReadAt::latest(), 3),
        ["turn 6", "turn 5", "late", "turn 4", "turn 3", "turn 2", "turn 1", "turn 0"]
    );
    assert_eq!(texts(&everything, ReadAt::bitemporal(t("2030"), s1), 2).len(), 7);
    let odd = EpisodeFilter { thread: Some("odd".into()), ..EpisodeFilter::default() };
    assert_eq!(texts(&odd, ReadAt::latest(), 1), ["turn 5", "turn 3", "turn 1"]);
    let window =
        EpisodeFilter { from: Some(t("2024-01-03")), to: Some(t("2024-01-05")), ..EpisodeFilter::default() };
    assert_eq!(texts(&window, ReadAt::latest(), 10), ["turn 4", "turn 3"]);

    for name in ["b", "a", "c"] {
        fx.entity(name);
    }
    let ostrakon_engine::views::Page { items: page, more } = fx
        .store
        .at(&fx.ns, ReadAt::latest())
        .and_then(|r| r.entities(&EntityFilter::default(), None, 2))
        .unwrap()
        .value;
    assert!(more);
    let ids: Vec<EntityId> = page.iter().map(|(_, e)| e.id).collect();
    let ostrakon_engine::views::Page { items: rest, more } = fx
        .store
        .at(&fx.ns, ReadAt::latest())
        .and_then(|r| r.entities(&EntityFilter::default(), ids.last().copied(), 2))
        .unwrap()
        .value;
    assert!(!more);
    assert_eq!(rest.len(), 1);
    let by_name = EntityFilter { name: Some("A".into()), kind: None };
    let found = fx
        .store
        .at(&fx.ns, ReadAt::latest())
        .and_then(|r| r.entities(&by_name, None, 10))
        .unwrap()
        .value
        .items;
    assert_eq!(found.iter().map(|(_, e)| e.name.as_str()).collect::<Vec<_>>(), ["a"]);
}

#[test]
fn listeners_see_every_batch_once_in_log_order() {
    let fx = Fixture::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    fx.store.on_commit(Arc::new(move |b| {
        sink.lock().unwrap().push((b.namespace.to_string(), b.seq, b.events.len()))
    }));
    std::thread::scope(|s| {
        for w in 0..3 {
            let fx = &fx;
            s.spawn(move || {
                for i in 0..20 {
                    fx.append(vec![named(&format!("w{w}"), "n", &format!("o{i}"), "2020")]);
                }
            });
        }
    });
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 60);
    let seqs: Vec<u64> = seen.iter().map(|(_, s, _)| s.0).collect();
    assert_eq!(seqs, (1..=60).collect::<Vec<_>>());
}

#[test]
fn an_export_replays_into_an_identical_store() {
    let fx = Fixture::new();
    let r = fx.append(vec![
        Change::RecordEpisode(NewEpisode {
            text: "I moved to Oslo".into(),
            occurred_at: t("2021"),
            ..Default::default()
        }),
        Change::AssertFact(NewFact {
            provenance: vec![EpisodeRef::New(0)],
            ..NewFact::new(
                EntityRef::Name("Ann".into()),
                "livesIn",
                ObjectRef::Entity(EntityRef::Name("Oslo".into())),
                iv("2021", None),
            )
        }),
    ]);
    let fact = r.fact(1).unwrap();
    fx.append(vec![Change::EndFact { fact, valid_to: t("2023") }]);
    fx.append(vec![named("Ann", "livesIn", "Bergen", "2023")]);
    fx.append(vec![Change::AssertFact(NewFact::new(
        EntityRef::Name("Ann".into()),
        "age",
        ObjectRef::Literal(Literal::Integer(40)),
        iv("2024", None),
    ))]);
    let exported = fx.store.export(&fx.ns).unwrap();
    assert_eq!(exported.len(), 4);

    let copy = Store::in_memory();
    for batch in &exported {
        let receipt = copy.replay(&fx.ns, batch.seq, &batch.events).unwrap();
        assert_eq!(receipt.seq, batch.seq);
    }
    let again: Vec<Vec<Event>> = copy.export(&fx.ns).unwrap().into_iter().map(|b| b.events).collect();
    assert_eq!(again, exported.iter().map(|b| b.events.clone()).collect::<Vec<_>>());
    let ann = fx.store.inspect(&fx.ns, |i| i.entities_named("Ann")[0]).unwrap();
    for year in ["2022", "2023", "2025"] {
        let at = ReadAt::valid(t(year));
        // Everything but the system times (the store gives them at commit) is identical.
        let facts = |store: &Store| {
            let mut facts = store.at(&fx.ns, at).and_then(|r| r.entity(ann)).unwrap().value.unwrap().facts;
            facts.iter_mut().for_each(|f| f.asserted_at = ostrakon_engine::core::Timestamp::EPOCH);
            facts
        };
        assert_eq!(facts(&fx.store), facts(&copy), "{year}");
        assert!(!facts(&copy).is_empty());
    }
    // Replaying a batch out of place is refused, whatever it holds.
    for batch in &exported {
        let e = copy.replay(&fx.ns, batch.seq, &batch.events).unwrap_err();
        assert!(matches!(e.root(), WriteError::ReplayMismatch { .. }), "{e}");
    }
    let other = Namespace::new("ns", "fresh").unwrap();
    let e = copy.replay(&other, exported[1].seq, &exported[1].events).unwrap_err();
    assert!(matches!(e.root(), WriteError::UnknownFact { .. } | WriteError::ReplayMismatch { .. }), "{e}");
    assert!(copy.namespaces().iter().all(|n| n != &other));
    assert_eq!(copy.counts(&fx.ns).unwrap().batches, Seq(4).0);
}

#[test]
fn lookups_by_name_are_exact_at_every_read_point() {
    let fx = Fixture::new();
    let declare = |id: Option<EntityId>, name: &str, aliases: &[&str]| {
        fx.append(vec![Change::DeclareEntity(NewEntity {
            id,
            name: name.into(),
            aliases: aliases.iter().map(|a| (*a).to_owned()).collect(),
            ..NewEntity::default()
        })])
    };
    let r1 = declare(None, "Robert", &[]);
    let robert = r1.entity(0).unwrap();
    let s2 = declare(Some(robert), "Robert", &["Bob"]).seq;
    let s3 = declare(Some(robert), "Rob", &["Bob"]).seq;
    let named = |name: &str, s: Seq| {
        let at = ReadAt { known_at: ostrakon_engine::KnownAt::Seq(s), ..ReadAt::latest() };
        fx.store.at(&fx.ns, at).unwrap().entity_named(name).unwrap()
    };
    // A name given later is not seen before it; a name dropped later is seen before.
    assert_eq!(named("bob", r1.seq), None);
    assert_eq!(named("BOB", s2), Some(robert));
    assert_eq!(named("robert", s2), Some(robert));
    assert_eq!(named("robert", s3), None);
    assert_eq!(named("rob", s3), Some(robert));
    assert_eq!(named("rob", s2), None);
    // After a merge, the absorbed entity's names find the one it reads as, from then on.
    let ann = declare(None, "Ann", &[]).entity(0).unwrap();
    let r = declare(None, "Annie", &[]);
    let annie = r.entity(0).unwrap();
    let merged = fx.append(vec![Change::MergeEntities { from: annie, into: ann }]).seq;
    assert_eq!(named("annie", r.seq), Some(annie));
    assert_eq!(named("annie", merged), Some(ann));
    assert_eq!(named("nobody", merged), None);
}
