//! Prospective memory: intentions fire exactly once at the right episode or time, never
//! after expiry or cancellation, replay to the same firings, and the `events`
//! subscription delivers the firing.

use crate::common;

use std::sync::Arc;

use common::{Fixture, t};
use futures_util::StreamExt as _;
use ostrakon_engine::core::{EmbeddingMode, EpisodeId, IntentionId, Seq};
use ostrakon_engine::{
    Change, EntityRef, KnownAt, NewEntity, NewEpisode, ReadAt, Store, WriteError, change::EpisodeRef,
    change::NewIntention, change::NewTrigger, views::DueBecause,
};
use ostrakon_graphql::Access;
use serde_json::json;

const LATEST: Seq = Seq(u64::MAX);

fn episode(text: &str, at: &str) -> Change {
    Change::RecordEpisode(NewEpisode {
        text: text.into(),
        occurred_at: t(at),
        thread: Some("t".into()),
        ..NewEpisode::default()
    })
}

fn intention(payload: &str, trigger: NewTrigger) -> NewIntention {
    NewIntention { payload: payload.into(), trigger, expires_at: None, priority: 0, repeat: false }
}

fn add(fx: &Fixture, i: NewIntention) -> IntentionId {
    fx.append(vec![Change::AddIntention(i)]).intention(0).unwrap()
}

/// (intention, triggering episode) of every firing, in log order.
fn firings(store: &Store, fx: &Fixture) -> Vec<(IntentionId, Option<EpisodeId>)> {
    let mut all: Vec<(Seq, IntentionId, Option<EpisodeId>)> = store
        .inspect(&fx.ns, |i| {
            i.intentions(LATEST)
                .into_iter()
                .flat_map(|v| v.fired.into_iter().map(move |(s, e, _)| (s, v.intention.id, e)))
                .collect()
        })
        .unwrap();
    all.sort();
    all.into_iter().map(|(_, i, e)| (i, e)).collect()
}

#[test]
fn mention_and_time_triggers_fire_once_at_the_right_episode() {
    let fx = Fixture::new();
    fx.append(vec![Change::DeclareEntity(NewEntity { name: "Bob".into(), ..NewEntity::default() })]);
    let ask_bob = add(
        &fx,
        intention("ask Bob about the keys", NewTrigger::Mentions(vec![EntityRef::Name("bob".into())])),
    );
    let mut every = intention("note Bob's mood", NewTrigger::Mentions(vec![EntityRef::Name("Bob".into())]));
    every.repeat = true;
    let every = add(&fx, every);
    let mut short =
        intention("expired before Bob shows up", NewTrigger::Mentions(vec![EntityRef::Name("Bob".into())]));
    short.expires_at = Some(t("2024-01-02"));
    add(&fx, short);
    let noon = add(&fx, intention("lunch", NewTrigger::At(t("2024-01-05T12:00:00Z"))));
    let cancelled = add(&fx, intention("never", NewTrigger::Mentions(vec![EntityRef::Name("Bob".into())])));
    fx.append(vec![Change::CancelIntention { id: cancelled, reason: Some("done already".into()) }]);

    let e1 = fx.append(vec![episode("Nothing about anyone", "2024-01-03")]).episode(0).unwrap();
    let e2 = fx.append(vec![episode("Then BOB called", "2024-01-04")]).episode(0).unwrap();
    let e3 = fx.append(vec![episode("Bob again, at lunch", "2024-01-05T12:30:00Z")]).episode(0).unwrap();
    let _ = e1;
    // ask_bob once at e2; every at e2 and e3; noon at e3 (first episode at or after noon);
    // the expired and the cancelled ones never.
    assert_eq!(
        firings(&fx.store, &fx),
        [(ask_bob, Some(e2)), (every, Some(e2)), (every, Some(e3)), (noon, Some(e3))]
    );
    // The clock passing changes nothing more: what fired does not fire again.
    assert!(fx.store.fire_due(&fx.ns, t("2030-01-01")).unwrap().fired.is_empty());

    // The log replays to the same firings, and an export replays elsewhere identically.
    assert_eq!(firings(&fx.reopen(), &fx), firings(&fx.store, &fx));
    let copy = Store::with_storage(Arc::new(ostrakon_engine::log::MemStorage::new()), Arc::new(|| t("2031")))
        .unwrap();
    for batch in fx.store.export(&fx.ns).unwrap() {
        copy.replay(&fx.ns, batch.seq, &batch.events).unwrap();
    }
    assert_eq!(firings(&copy, &fx), firings(&fx.store, &fx));
}

#[test]
fn time_triggers_fire_when_the_clock_passes_and_never_after_expiry() {
    let fx = Fixture::new();
    let soon = add(&fx, intention("call the plumber", NewTrigger::At(t("2024-03-01T09:00:00Z"))));
    let mut late = intention("too late", NewTrigger::At(t("2024-03-02")));
    late.expires_at = Some(t("2024-03-01T12:00:00Z"));
    let late = add(&fx, late);
    assert!(fx.store.fire_due(&fx.ns, t("2024-03-01T08:59:59Z")).unwrap().fired.is_empty());
    let f = fx.store.fire_due(&fx.ns, t("2024-03-01T10:00:00Z")).unwrap();
    assert_eq!(f.fired, [(soon, None, t("2024-03-01T09:00:00Z"))]);
    // Past its expiry, `late` is never due, even once its time has come.
    assert!(fx.store.fire_due(&fx.ns, t("2024-03-03")).unwrap().fired.is_empty());
    assert_eq!(firings(&fx.store, &fx), [(soon, None)]);
    let view = fx.store.inspect(&fx.ns, |i| i.intention(late, LATEST)).unwrap().unwrap();
    assert!(view.fired.is_empty() && !view.pending_at(t("2024-03-03")));
}

#[test]
fn cue_triggers_fire_once_embedded_and_due_intentions_answer_for_a_message() {
    let fx = Fixture::new();
    fx.append(vec![Change::ConfigureEmbedding(EmbeddingMode::Client { dim: 3 })]);
    fx.append(vec![Change::DeclareEntity(NewEntity { name: "Carol".into(), ..NewEntity::default() })]);
    let cue = add(
        &fx,
        intention(
            "suggest the recipe",
            NewTrigger::Cue { text: "cooking".into(), vector: vec![1.0, 0.0, 0.0], threshold: 0.9 },
        ),
    );
    let carol =
        add(&fx, intention("thank Carol", NewTrigger::Mentions(vec![EntityRef::Name("Carol".into())])));
    let far = fx
        .append(vec![
            episode("football", "2024-01-01"),
            Change::Embed { episode: EpisodeRef::New(0), vector: vec![0.0, 1.0, 0.0] },
        ])
        .episode(0)
        .unwrap();
    let _ = far;
    assert!(fx.store.fire_due(&fx.ns, t("2024-01-01")).unwrap().fired.is_empty(), "not close enough");
    let near = fx
        .append(vec![
            episode("pasta tonight", "2024-01-02"),
            Change::Embed { episode: EpisodeRef::New(0), vector: vec![0.95, 0.1, 0.0] },
        ])
        .episode(0)
        .unwrap();
    let again = fx
        .append(vec![
            episode("more pasta", "2024-01-03"),
            Change::Embed { episode: EpisodeRef::New(0), vector: vec![1.0, 0.05, 0.0] },
        ])
        .episode(0)
        .unwrap();
    let _ = again;
    let f = fx.store.fire_due(&fx.ns, t("2024-01-04")).unwrap();
    assert_eq!(
        f.fired.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>(),
        [(cue, Some(near))],
        "once, at the first"
    );
    assert!(fx.store.fire_due(&fx.ns, t("2024-01-05")).unwrap().fired.is_empty());

    // A message naming Carol makes her intention due; reading records nothing.
    let at = ReadAt { known_at: KnownAt::Latest, ..ReadAt::default() };
    let due = fx.store.at(&fx.ns, at).and_then(|r| r.due_intentions(Some("carol says hi"))).unwrap().value;
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].intention.intention.id, carol);
    assert!(matches!(due[0].because, DueBecause::Mentioned(_)));
    assert!(fx.store.at(&fx.ns, at).and_then(|r| r.due_intentions(Some("nobody"))).unwrap().value.is_empty());
    assert_eq!(firings(&fx.store, &fx).len(), 1);
}

#[test]
fn bad_intentions_are_refused_with_typed_errors() {
    let fx = Fixture::new();
    let seq = fx.store.inspect(&fx.ns, |i| i.last_seq()).unwrap();
    // The error of the one change refused, past its position in the batch.
    let bad = |c: Change| match fx.store.append(&fx.ns, vec![c]).unwrap_err() {
        WriteError::InChange { change: 0, error } => *error,
        other => panic!("not about the change: {other}"),
    };
    assert!(matches!(
        bad(Change::AddIntention(intention(" ", NewTrigger::At(t("2024"))))),
        WriteError::Invalid(_)
    ));
    assert!(matches!(
        bad(Change::AddIntention(intention("x", NewTrigger::Mentions(vec![])))),
        WriteError::Invalid(_)
    ));
    assert!(matches!(
        bad(Change::AddIntention(intention(
            "x",
            NewTrigger::Cue { text: "c".into(), vector: vec![0.0, 0.0], threshold: 0.5 }
        ))),
        WriteError::Invalid(_)
    ));
    assert!(matches!(
        bad(Change::AddIntention(intention(
            "x",
            NewTrigger::Cue { text: "c".into(), vector: vec![1.0], threshold: 0.0 }
        ))),
        WriteError::Invalid(_)
    ));
    assert!(matches!(
        bad(Change::CancelIntention { id: IntentionId(9), reason: None }),
        WriteError::UnknownIntention { .. }
    ));
    assert_eq!(fx.store.inspect(&fx.ns, |i| i.last_seq()).unwrap(), seq, "nothing stored");
    let id = add(&fx, intention("x", NewTrigger::At(t("2024"))));
    fx.append(vec![Change::CancelIntention { id, reason: None }]);
    assert!(matches!(bad(Change::CancelIntention { id, reason: None }), WriteError::Invalid(_)));
    // A one-off intention fires once, whoever records it.
    let once = add(&fx, intention("y", NewTrigger::At(t("2024"))));
    fx.append(vec![Change::FireIntention { id: once, episode: None, at: t("2024") }]);
    assert!(matches!(
        bad(Change::FireIntention { id: once, episode: None, at: t("2024") }),
        WriteError::Invalid(_)
    ));
    assert!(fx.store.fire_due(&fx.ns, t("2025")).unwrap().fired.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_events_subscription_delivers_the_firing() {
    let store = Arc::new(Store::in_memory());
    let schema = ostrakon_graphql::schema(Arc::clone(&store), ostrakon_graphql::Limits::default());
    let run = |q: &str| {
        let schema = schema.clone();
        let q = q.to_owned();
        async move {
            let r = schema.execute(async_graphql::Request::new(q).data(Access::Local)).await;
            assert!(r.errors.is_empty(), "{:?}", r.errors);
            r.data.into_json().unwrap()
        }
    };
    let added = run(r#"mutation { addIntention(namespace: "a", payload: "ask Dana about the trip",
        trigger: { entities: [{ name: "Dana" }] }) { id status } }"#)
    .await;
    assert_eq!(added["addIntention"]["status"], json!("PENDING"));
    let id = added["addIntention"]["id"].clone();
    let request =
        async_graphql::Request::new(r#"subscription { events(namespace: "a") { kind intention episode } }"#)
            .data(Access::Local);
    let mut stream = schema.execute_stream(request);
    // Polled once, the subscription is listening.
    assert!(futures_util::FutureExt::now_or_never(stream.next()).is_none());
    run(r#"mutation { recordEpisode(namespace: "a", episode: { text: "Dana is back from Rome" }) { seq } }"#)
        .await;
    let mut kinds = Vec::new();
    while let Ok(Some(r)) = tokio::time::timeout(std::time::Duration::from_millis(500), stream.next()).await {
        let notice = r.data.into_json().unwrap()["events"].clone();
        if notice["kind"] == json!("IntentionFired") {
            assert_eq!(notice["intention"], id);
            assert!(!notice["episode"].is_null());
        }
        kinds.push(notice["kind"].as_str().unwrap().to_owned());
    }
    assert_eq!(kinds, ["EpisodeRecorded", "Mentioned", "IntentionFired"]);
    let after = run(
        r#"{ intentions(namespace: "a", includeInactive: true) { status firings { episode { text } } } }"#,
    )
    .await;
    assert_eq!(after["intentions"][0]["status"], json!("FIRED"));
    assert_eq!(after["intentions"][0]["firings"][0]["episode"]["text"], json!("Dana is back from Rome"));
}
