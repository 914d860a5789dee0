//! Segmentation and the topic network: a thread that goes cooking → football → cooking is
//! cut where it switches, the closed segments make two topics, the repeated cooking
//! association is reinforced, the open segment stays out, and a replay gives the same.

use crate::common;

use common::{Fixture, t};
use ostrakon_engine::core::{EmbeddingMode, EntityId, EpisodeId, SegmentEnd, Seq};
use ostrakon_engine::{
    Change, KnownAt, NewEntity, NewEpisode, ReadAt, change::EpisodeRef, views::TopicNetwork,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const DIM: usize = 16;
const COOKING: [&str; 4] = ["Pasta", "Basil", "Oven", "Tomato"];
const FOOTBALL: [&str; 4] = ["Arsenal", "Referee", "Striker", "Penalty"];

fn centre(rng: &mut StdRng) -> Vec<f32> {
    (0..DIM).map(|_| rng.random_range(-1.0f32..1.0)).collect()
}

fn near(rng: &mut StdRng, c: &[f32]) -> Vec<f32> {
    c.iter().map(|x| x + rng.random_range(-0.25f32..0.25)).collect()
}

struct Setup {
    fx: Fixture,
    episodes: Vec<EpisodeId>,
}

/// Three stretches of eight episodes each, a minute apart, ending just before the clock
/// (2030-01-01), so the last stretch is still open.
fn setup() -> Setup {
    let fx = Fixture::new();
    fx.append(vec![Change::ConfigureEmbedding(EmbeddingMode::Client { dim: DIM as u32 })]);
    let declare: Vec<Change> = COOKING
        .iter()
        .chain(&FOOTBALL)
        .chain(&["Saffron"])
        .map(|n| Change::DeclareEntity(NewEntity { name: (*n).into(), ..NewEntity::default() }))
        .collect();
    fx.append(declare);
    let mut rng = StdRng::seed_from_u64(7);
    let (cooking, football) = (centre(&mut rng), centre(&mut rng));
    let mut episodes = Vec::new();
    for i in 0..24usize {
        let (names, c) = if (8..16).contains(&i) { (&FOOTBALL, &football) } else { (&COOKING, &cooking) };
        let mut text = format!("{} and {} again", names[i % 4], names[(i + 1) % 4]);
        if i == 20 {
            text.push_str(" with Saffron");
        }
        let r = fx.append(vec![
            Change::RecordEpisode(NewEpisode {
                text,
                occurred_at: t(&format!("2029-12-31T23:{:02}:00Z", 30 + i)),
                thread: Some("chat".into()),
                ..NewEpisode::default()
            }),
            Change::Embed { episode: EpisodeRef::New(0), vector: near(&mut rng, c) },
        ]);
        episodes.push(r.episode(0).unwrap());
    }
    Setup { fx, episodes }
}

fn names(fx: &Fixture, ids: impl IntoIterator<Item = EntityId>) -> Vec<String> {
    let mut v: Vec<String> = ids
        .into_iter()
        .map(|e| fx.store.inspect(&fx.ns, |i| i.entity(e).unwrap().name.clone()).unwrap())
        .collect();
    v.sort();
    v
}

/// The topic network once the segments due have closed (reads close none themselves).
fn network(fx: &Fixture) -> TopicNetwork {
    fx.store.segment(&fx.ns, false).unwrap();
    fx.store
        .at(&fx.ns, ReadAt { known_at: KnownAt::Latest, ..ReadAt::default() })
        .and_then(|r| r.topic_network())
        .unwrap()
        .value
}

fn sorted(v: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = v.iter().map(|s| (*s).to_owned()).collect();
    v.sort();
    v
}

#[test]
fn switches_close_segments_and_closed_segments_make_topics() {
    let Setup { fx, episodes } = setup();
    let report = fx.store.segment(&fx.ns, false).unwrap();
    // Two switches, each found within one episode of where it happened.
    assert_eq!(report.closed.len(), 2, "{:?}", report.closed);
    let first_end = report.closed[0].1.len();
    let second_end = first_end + report.closed[1].1.len();
    assert!(first_end.abs_diff(8) <= 1 && second_end.abs_diff(16) <= 1, "ends at {first_end}, {second_end}");
    assert!(report.closed.iter().all(|c| matches!(c.2, SegmentEnd::Shift { .. })));
    assert_eq!(report.closed[0].1[0], episodes[0]);
    // Running it again closes nothing more: the last stretch is still going on.
    assert!(fx.store.segment(&fx.ns, false).unwrap().seq.is_none());

    // Two topics, cooking and football; Saffron, only in the open segment, is in neither.
    let net = network(&fx);
    assert_eq!(net.topics.len(), 2);
    let mut members: Vec<Vec<String>> =
        net.topics.iter().map(|t| names(&fx, t.members.iter().map(|m| m.0))).collect();
    members.sort();
    assert_eq!(members, [sorted(&FOOTBALL), sorted(&COOKING)]);
    let saffron = fx.store.inspect(&fx.ns, |i| i.entities_named("Saffron")[0]).unwrap();
    assert!(!net.topic_of.contains_key(&saffron));
    assert!(net.edges.iter().all(|a| a.pair.0 != saffron && a.pair.1 != saffron));
    let pasta = fx.store.inspect(&fx.ns, |i| i.entities_named("Pasta")[0]).unwrap();
    let basil = fx.store.inspect(&fx.ns, |i| i.entities_named("Basil")[0]).unwrap();
    let pair = (pasta.min(basil), pasta.max(basil));
    let before = net.edges.iter().find(|a| a.pair == pair).unwrap().clone();
    assert_eq!(before.segments, 1);
    assert!(net.topics.iter().all(|t| !t.label.is_empty() && !t.episodes.is_empty()));

    // Forcing the last segment closed brings Saffron in and reinforces cooking.
    let report = fx.store.segment(&fx.ns, true).unwrap();
    assert_eq!(report.closed.len(), 1);
    assert_eq!(report.closed[0].2, SegmentEnd::Forced);
    let net = network(&fx);
    let after = net.edges.iter().find(|a| a.pair == pair).unwrap();
    assert_eq!(after.segments, 2);
    assert!(after.last > before.last && after.weight > before.weight);
    assert!(net.topic_of.contains_key(&saffron));
    assert_eq!(net.topics.len(), 2);
    // Read as known before the close, the network is what it was.
    let old = fx
        .store
        .at(&fx.ns, ReadAt { known_at: KnownAt::Seq(Seq(report.seq.unwrap().0 - 1)), ..ReadAt::default() })
        .and_then(|r| r.topic_network())
        .unwrap()
        .value;
    assert_eq!(old.edges.iter().find(|a| a.pair == pair).unwrap().segments, 1);

    // The log replays to the same segments and network.
    let reopened = fx.reopen();
    let seg = |s: &ostrakon_engine::Store| {
        s.inspect(&fx.ns, |i| i.segments(Seq(u64::MAX)).map(|(_, s)| s.clone()).collect::<Vec<_>>()).unwrap()
    };
    assert_eq!(seg(&reopened), seg(&fx.store));
    let again = reopened.at(&fx.ns, ReadAt::default()).and_then(|r| r.topic_network()).unwrap().value;
    assert_eq!(again.edges, net.edges);
    assert_eq!(again.topics, net.topics);
}

#[test]
fn a_single_stray_episode_does_not_split_a_topic_and_idle_threads_close() {
    let fx = Fixture::new();
    fx.append(vec![Change::ConfigureEmbedding(EmbeddingMode::Client { dim: DIM as u32 })]);
    let mut rng = StdRng::seed_from_u64(3);
    let (a, b) = (centre(&mut rng), centre(&mut rng));
    for i in 0..10usize {
        let c = if i == 5 { &b } else { &a };
        fx.append(vec![
            Change::RecordEpisode(NewEpisode {
                text: format!("message {i}"),
                occurred_at: t(&format!("2029-06-01T10:{:02}:00Z", i)),
                thread: Some("t".into()),
                ..NewEpisode::default()
            }),
            Change::Embed { episode: EpisodeRef::New(0), vector: near(&mut rng, c) },
        ]);
    }
    // Months before the clock: the thread is idle, so its one segment closes whole.
    let report = fx.store.segment(&fx.ns, false).unwrap();
    assert_eq!(report.closed.len(), 1, "{:?}", report.closed);
    assert_eq!(report.closed[0].1.len(), 10);
    assert_eq!(report.closed[0].2, SegmentEnd::Idle);
}

#[test]
fn topic_first_search_ranks_topics_and_stays_inside_the_best() {
    let Setup { fx, episodes } = setup();
    fx.store.segment(&fx.ns, true).unwrap();
    let football: Vec<EpisodeId> = episodes[8..16].to_vec();
    let query = |topics: usize, rank: bool, records: bool| ostrakon_engine::SearchQuery {
        text: Some("Pasta and Basil again".into()),
        vector: None,
        limit: 50,
        topics,
        rank_topics: rank,
        records,
        ..ostrakon_engine::SearchQuery::default()
    };
    let at = ReadAt { known_at: KnownAt::Latest, ..ReadAt::default() };
    // Topics only: the cooking topic first (the query names two of its members), no records.
    let r = fx.store.at(&fx.ns, at).and_then(|r| r.search(&query(0, true, false))).unwrap().value;
    assert!(r.hits.is_empty());
    assert!(!r.topics.is_empty());
    let first = names(&fx, r.topics[0].topic.members.iter().map(|m| m.0));
    assert!(first.contains(&"Pasta".to_owned()) && first.contains(&"Basil".to_owned()), "{first:?}");
    // Plain search reaches football episodes ("again" is in every text) ...
    let plain = fx.store.at(&fx.ns, at).and_then(|r| r.search(&query(0, false, true))).unwrap().value;
    let is_football = |h: &ostrakon_engine::search::SearchHit| matches!(h.record, ostrakon_engine::core::RecordRef::Episode(e) if football.contains(&e));
    assert!(plain.hits.iter().any(is_football));
    // ... topic-first, narrowed to the best topic, does not.
    let narrowed = fx.store.at(&fx.ns, at).and_then(|r| r.search(&query(1, false, true))).unwrap().value;
    assert!(!narrowed.hits.is_empty());
    assert!(!narrowed.hits.iter().any(is_football), "{:?}", narrowed.hits);
    assert_eq!(narrowed.topics.len(), 1);
    // Too many topics is refused.
    assert!(fx.store.at(&fx.ns, at).and_then(|r| r.search(&query(1000, false, true))).is_err());
}
