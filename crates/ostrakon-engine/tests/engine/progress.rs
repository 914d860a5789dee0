//! The event progression graph: threads in order, mentions (from the client and from
//! names found in the text, recorded so that a replay gives the same graph), facts
//! sourced from episodes, and an entity's mentions in time order, all as known at S.

use crate::common;

use common::{Fixture, iv, t};
use ostrakon_engine::core::{EntityId, EpisodeId, MentionSource, Seq};
use ostrakon_engine::{
    Change, EntityRef, NewEntity, NewEpisode, NewFact, ObjectRef, Store, WriteError, change::EpisodeRef,
    log::MemStorage,
};

fn episode(text: &str, at: &str, thread: &str) -> Change {
    Change::RecordEpisode(NewEpisode {
        text: text.into(),
        occurred_at: t(at),
        thread: Some(thread.into()),
        ..NewEpisode::default()
    })
}

fn declare(name: &str, aliases: &[&str]) -> Change {
    Change::DeclareEntity(NewEntity {
        name: name.into(),
        aliases: aliases.iter().map(|a| (*a).into()).collect(),
        ..NewEntity::default()
    })
}

fn mentions(fx: &Fixture, e: EpisodeId, s: Seq) -> Vec<(String, MentionSource)> {
    fx.store
        .inspect(&fx.ns, |i| {
            i.mentions_of(e, s)
                .into_iter()
                .map(|(id, src)| (i.entity(id).unwrap().name.clone(), src))
                .collect()
        })
        .unwrap()
}

fn mentioning(store: &Store, fx: &Fixture, entity: EntityId, s: Seq) -> Vec<EpisodeId> {
    store
        .inspect(&fx.ns, |i| {
            i.mentioning(entity, s, None, 100).items.into_iter().map(|(_, e)| e.id).collect()
        })
        .unwrap()
}

const LATEST: Seq = Seq(u64::MAX);

#[test]
fn known_names_in_the_text_are_recorded_as_mentions_once_and_never_retroactively() {
    let fx = Fixture::new();
    let r = fx.append(vec![declare("Alice", &["Ali"]), declare("Paris", &[])]);
    let (alice, paris) = (r.entity(0).unwrap(), r.entity(1).unwrap());
    let r = fx.append(vec![
        episode("ALI says Paris, paris and Parisian cafés", "2024-01-01", "a"),
        Change::Mention {
            episode: EpisodeRef::New(0),
            entities: vec![EntityRef::Name("Bob".into()), EntityRef::Id(alice)],
            source: MentionSource::Client,
        },
    ]);
    let first = r.episode(0).unwrap();
    let bob = r.created[0];
    // The client's mentions first (Bob created by name), then the names found in the
    // text that the client did not give; "Parisian" is not "Paris".
    assert_eq!(
        mentions(&fx, first, LATEST),
        [
            ("Bob".to_owned(), MentionSource::Client),
            ("Alice".to_owned(), MentionSource::Client),
            ("Paris".to_owned(), MentionSource::NameMatch)
        ]
    );
    // An entity declared later is not found in episodes recorded before it.
    fx.append(vec![declare("Cafés", &[])]);
    let r = fx.append(vec![episode("Cafés again, no names here", "2024-01-02", "a")]);
    let second = r.episode(0).unwrap();
    assert_eq!(mentions(&fx, first, LATEST).len(), 3);
    assert_eq!(mentions(&fx, second, LATEST), [("Cafés".to_owned(), MentionSource::NameMatch)]);
    // Names declared in the same batch are found too.
    let r = fx.append(vec![declare("Zoë", &[]), episode("zoë and Bob", "2024-01-03", "b")]);
    let third = r.episode(1).unwrap();
    let names: Vec<String> = mentions(&fx, third, LATEST).into_iter().map(|m| m.0).collect();
    assert_eq!(names, ["Bob", "Zoë"]);
    // Mentions are read as known at S.
    assert!(mentions(&fx, first, r.seq).len() == 3 && mentions(&fx, third, Seq(r.seq.0 - 1)).is_empty());
    assert_eq!(mentioning(&fx.store, &fx, paris, LATEST), [first]);
    assert_eq!(mentioning(&fx.store, &fx, bob, LATEST), [first, third]);

    // The graph comes back identical from the log, and from an export replayed elsewhere,
    // although matching now would find more (Cafés in the first episode).
    let reopened = fx.reopen();
    let copy = Store::with_storage(std::sync::Arc::new(MemStorage::new()), std::sync::Arc::new(|| t("2031")))
        .unwrap();
    for batch in fx.store.export(&fx.ns).unwrap() {
        copy.replay(&fx.ns, batch.seq, &batch.events).unwrap();
    }
    for store in [&reopened, &copy] {
        for e in [first, second, third] {
            let got = store.inspect(&fx.ns, |i| i.mentions_of(e, LATEST)).unwrap();
            let want = fx.store.inspect(&fx.ns, |i| i.mentions_of(e, LATEST)).unwrap();
            assert_eq!(got, want);
        }
        assert_eq!(mentioning(store, &fx, bob, LATEST), [first, third]);
    }
}

#[test]
fn threads_are_ordered_by_occurrence_as_known_at_s() {
    let fx = Fixture::new();
    let r = fx.append(vec![episode("one", "2024-01-01", "t"), episode("three", "2024-01-03", "t")]);
    let (one, three) = (r.episode(0).unwrap(), r.episode(1).unwrap());
    let before = r.seq;
    // Recorded later, occurred in between.
    let two = fx.append(vec![episode("two", "2024-01-02", "t"), episode("elsewhere", "2024-01-02", "u")]);
    let (two, elsewhere) = (two.episode(0).unwrap(), two.episode(1).unwrap());
    let next = |e, s| fx.store.inspect(&fx.ns, |i| i.thread_neighbour(e, s, true).map(|x| x.id)).unwrap();
    let prev = |e, s| fx.store.inspect(&fx.ns, |i| i.thread_neighbour(e, s, false).map(|x| x.id)).unwrap();
    assert_eq!(next(one, LATEST), Some(two));
    assert_eq!(next(two, LATEST), Some(three));
    assert_eq!(prev(three, LATEST), Some(two));
    assert_eq!(prev(one, LATEST), None);
    assert_eq!(next(three, LATEST), None);
    assert_eq!(next(elsewhere, LATEST), None, "threads do not mix");
    // Before "two" was recorded, one and three were neighbours; "two" did not exist.
    assert_eq!(next(one, before), Some(three));
    assert_eq!(prev(three, before), Some(one));
    assert_eq!(next(two, before), None);
    // Same time: ties by id.
    let r = fx.append(vec![episode("tie a", "2024-01-05", "v"), episode("tie b", "2024-01-05", "v")]);
    assert_eq!(next(r.episode(0).unwrap(), LATEST), r.episode(1));
    // No thread, no neighbours.
    let r = fx.append(vec![Change::RecordEpisode(NewEpisode {
        text: "alone".into(),
        occurred_at: t("2024-01-01"),
        ..NewEpisode::default()
    })]);
    assert_eq!(next(r.episode(0).unwrap(), LATEST), None);
}

#[test]
fn episodes_list_the_facts_they_sourced_and_merges_gather_mentions() {
    let fx = Fixture::new();
    let r = fx.append(vec![
        episode("Al lives in Rome", "2024-01-01", "t"),
        Change::AssertFact(NewFact {
            provenance: vec![EpisodeRef::New(0)],
            ..NewFact::new(
                EntityRef::Name("Al".into()),
                "livesIn",
                ObjectRef::Entity(EntityRef::Name("Rome".into())),
                iv("2024", None),
            )
        }),
    ]);
    let (e1, fact) = (r.episode(0).unwrap(), r.fact(1).unwrap());
    // The same statement again from a second episode corroborates the fact.
    let r = fx.append(vec![
        episode("Albert said it again: Rome", "2024-02-01", "t"),
        Change::AssertFact(NewFact {
            provenance: vec![EpisodeRef::New(0)],
            ..NewFact::new(
                EntityRef::Name("Al".into()),
                "livesIn",
                ObjectRef::Entity(EntityRef::Name("Rome".into())),
                iv("2024", None),
            )
        }),
        declare("Albert", &[]),
    ]);
    let e2 = r.episode(0).unwrap();
    let sourced = |e| fx.store.inspect(&fx.ns, |i| i.sourced_facts(e, LATEST)).unwrap();
    assert_eq!(sourced(e1), [fact]);
    assert_eq!(sourced(e2), [fact], "a corroboration lists the fact it restated");
    assert_eq!(fx.store.inspect(&fx.ns, |i| i.sourced_facts(e2, Seq(r.seq.0 - 1))).unwrap(), Vec::new());

    // Al (in the first episode's text, created by the fact in the same batch) and Albert
    // (second) are one: after the merge, Al's mentions include Albert's.
    let al = fx.store.inspect(&fx.ns, |i| i.entities_named("Al")[0]).unwrap();
    let albert = fx.store.inspect(&fx.ns, |i| i.entities_named("Albert")[0]).unwrap();
    assert_eq!(mentioning(&fx.store, &fx, al, LATEST), [e1]);
    let merged = fx.append(vec![Change::MergeEntities { from: albert, into: al }]).seq;
    assert_eq!(mentioning(&fx.store, &fx, al, LATEST), [e1, e2]);
    assert_eq!(mentioning(&fx.store, &fx, albert, LATEST), [e1, e2], "read through the merge");
    assert_eq!(mentioning(&fx.store, &fx, al, Seq(merged.0 - 1)), [e1]);
}

#[test]
fn bad_mentions_are_refused_with_typed_errors_and_store_nothing() {
    let fx = Fixture::new();
    let r = fx.append(vec![episode("hello", "2024-01-01", "t")]);
    let e = r.episode(0).unwrap();
    let seq = r.seq;
    // The error of the one change refused, past its position in the batch.
    let bad = |changes: Vec<Change>| match fx.store.append(&fx.ns, changes).unwrap_err() {
        WriteError::InChange { change: 0, error } => *error,
        other => panic!("not about the change: {other}"),
    };
    assert!(matches!(
        bad(vec![Change::Mention {
            episode: EpisodeRef::Id(e),
            entities: vec![],
            source: MentionSource::Client
        }]),
        WriteError::Invalid(_)
    ));
    assert!(matches!(
        bad(vec![Change::Mention {
            episode: EpisodeRef::Id(EpisodeId(99)),
            entities: vec![EntityRef::Name("X".into())],
            source: MentionSource::Client
        }]),
        WriteError::UnknownEpisode { .. }
    ));
    assert!(matches!(
        bad(vec![Change::Mention {
            episode: EpisodeRef::Id(e),
            entities: vec![EntityRef::Id(EntityId(42))],
            source: MentionSource::Client
        }]),
        WriteError::UnknownEntity { .. }
    ));
    assert!(matches!(
        bad(vec![Change::Mention {
            episode: EpisodeRef::Id(e),
            entities: (0..1001).map(|i| EntityRef::Name(format!("e{i}"))).collect(),
            source: MentionSource::Client
        }]),
        WriteError::LimitExceeded { .. }
    ));
    assert_eq!(fx.store.inspect(&fx.ns, |i| i.last_seq()).unwrap(), seq, "nothing stored");
}
