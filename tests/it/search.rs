//! Search, context and remember through the engine, without the built-in embedder: full
//! text, client vectors and the graph; visibility at (T, S); filters; budgets.

use crate::common;

use common::{Fixture, t};
use ostrakon_engine::core::{Cardinality, EmbeddingMode, RecordKind, RecordRef, Seq, Status};
use ostrakon_engine::{
    Change, EntityRef, KnownAt, NewEntity, NewEpisode, NewFact, ObjectRef, ReadAt, ReadError, SearchQuery,
    WriteError, change::EpisodeRef, search::Component, views::estimate_tokens,
};

fn episode(text: &str, at: &str, thread: &str) -> Change {
    Change::RecordEpisode(NewEpisode {
        text: text.into(),
        occurred_at: t(at),
        thread: Some(thread.into()),
        ..NewEpisode::default()
    })
}

fn text(q: &str) -> SearchQuery {
    SearchQuery { text: Some(q.into()), ..SearchQuery::default() }
}

fn episodes_found(fx: &Fixture, q: &SearchQuery, at: ReadAt) -> Vec<String> {
    let found = fx.store.at(&fx.ns, at).and_then(|r| r.search(q)).unwrap();
    found
        .value
        .hits
        .iter()
        .filter_map(|h| match h.record {
            RecordRef::Episode(id) => {
                fx.store.inspect(&fx.ns, |i| i.episode(id).map(|e| e.text.clone())).unwrap()
            }
            _ => None,
        })
        .collect()
}

fn chat(fx: &Fixture) {
    fx.append(vec![
        episode("I baked a plum cake with cinnamon for my sister.", "2029-12-01", "a"),
        episode("The football match ended two to one.", "2029-12-02", "a"),
        episode("yes, that one!", "2029-12-02T00:01:00Z", "a"),
        episode("We watched a documentary about whales.", "2029-12-03", "b"),
    ]);
}

#[test]
fn full_text_finds_and_explains() {
    let fx = Fixture::new();
    chat(&fx);
    let found =
        fx.store.at(&fx.ns, ReadAt::latest()).and_then(|r| r.search(&text("plum cake recipe"))).unwrap();
    let top = &found.value.hits[0];
    let RecordRef::Episode(id) = top.record else { panic!("{top:?}") };
    assert!(fx.store.inspect(&fx.ns, |i| i.episode(id).unwrap().text.contains("plum cake")).unwrap());
    let e = &top.explanation;
    let text_rank = e.components.iter().find(|c| c.component == Component::Text).unwrap();
    assert_eq!(text_rank.rank, 1);
    assert!(e.fused > 0.0 && e.weight > 0.0 && e.weight <= 1.0);
    assert!((e.relevance - e.fused * e.weight).abs() < 1e-12);
    assert_eq!(found.value.indexed_seq, Seq(1));
    assert!(found.value.warnings.is_empty(), "{:?}", found.value.warnings);
}

#[test]
fn a_turn_is_found_through_the_turn_before_it() {
    let fx = Fixture::new();
    chat(&fx);
    // "yes, that one!" says nothing about football by itself; with its predecessor it does.
    let found = fx.store.at(&fx.ns, ReadAt::latest()).and_then(|r| r.search(&text("football"))).unwrap();
    let reply = found
        .value
        .hits
        .iter()
        .find(|h| {
            matches!(h.record, RecordRef::Episode(id)
                if fx.store.inspect(&fx.ns, |i| i.episode(id).unwrap().text == "yes, that one!").unwrap())
        })
        .expect("the reply is found in context");
    assert!(reply.explanation.components.iter().any(|c| c.component == Component::TextInContext));
    assert!(!reply.explanation.components.iter().any(|c| c.component == Component::Text));
}

/// The rank of the episode whose text starts with `start`, and its explanation's lists.
fn rank_of(fx: &Fixture, q: &SearchQuery, start: &str) -> Option<(usize, Vec<Component>)> {
    let found = fx.store.at(&fx.ns, ReadAt::latest()).and_then(|r| r.search(q)).unwrap();
    found.value.hits.iter().enumerate().find_map(|(i, h)| match h.record {
        RecordRef::Episode(id)
            if fx.store.inspect(&fx.ns, |x| x.episode(id).unwrap().text.starts_with(start)).unwrap() =>
        {
            Some((i + 1, h.explanation.components.iter().map(|c| c.component).collect()))
        }
        _ => None,
    })
}

#[test]
fn a_turn_is_found_through_the_reply_it_got() {
    let fx = Fixture::new();
    fx.append(vec![
        episode("Jon: I spent three days in Lisbon with my cousin.", "2029-12-01", "s1"),
        episode(
            "Gina: Wow, the tiles and the custard tarts there are amazing!",
            "2029-12-01T00:01:00Z",
            "s1",
        ),
        episode("Jon: We also tried the tram up the hill.", "2029-12-01T00:02:00Z", "s1"),
    ]);
    // Only the reply speaks of custard tarts; the turn it answers is found through it,
    // alone or in its context with both neighbours.
    let (rank, lists) =
        rank_of(&fx, &text("custard tarts"), "Jon: I spent").expect("found through its reply");
    assert!(lists.contains(&Component::TextInContext), "{lists:?}");
    assert!(rank <= 3);
    // Written again when the reply came, the turn's context holds its predecessor too.
    let (_, lists) = rank_of(&fx, &text("tram hill"), "Gina: Wow").expect("found through the next turn");
    assert!(lists.contains(&Component::TextInContext), "{lists:?}");
}

#[test]
fn the_turns_around_the_best_hits_are_a_list_of_their_own() {
    let fx = Fixture::new();
    fx.append(vec![
        episode("Jon: Guess what happened at work.", "2029-12-01", "s1"),
        episode("Gina: Tell me!", "2029-12-01T00:01:00Z", "s1"),
        episode("Jon: You know how hard I worked this year.", "2029-12-01T00:02:00Z", "s1"),
        episode("Jon: I finally got the promotion to studio manager.", "2029-12-01T00:03:00Z", "s1"),
        episode("Gina: So proud of you.", "2029-12-01T00:04:00Z", "s1"),
        episode("Gina: Unrelated, the weather is cold.", "2029-12-05", "s2"),
    ]);
    // "Tell me!" shares nothing with the question, nor do its neighbours' own words; it
    // is found as the turn before a best hit (the one found through its next turn).
    let q = text("promotion studio manager");
    let (_, lists) = rank_of(&fx, &q, "Gina: Tell me").expect("a neighbour of the best hit");
    assert_eq!(lists, vec![Component::Neighbour]);
    let q = SearchQuery { without: vec![Component::Neighbour], ..q };
    assert!(rank_of(&fx, &q, "Gina: Tell me").is_none());
    assert!(rank_of(&fx, &text("promotion studio manager"), "Gina: Unrelated").is_none());
}

#[test]
fn a_whole_exchange_brings_no_neighbours() {
    let fx = Fixture::new();
    let said = |user: &str, assistant: &str, at: &str| {
        episode(&format!("User: {user}\nAssistant: {assistant}"), at, "day1")
    };
    fx.append(vec![
        said("My cat is called Miso.", "A lovely name!", "2029-12-01T10:00:00Z"),
        said("The weather is cold today.", "Wrap up warm.", "2029-12-01T10:05:00Z"),
        said("I am reading a novel.", "Which one?", "2029-12-01T10:10:00Z"),
    ]);
    // Each exchange holds its own reply; the one after the best hit is another talk, and
    // is not a candidate through it.
    let q = text("What is my cat called?");
    assert_eq!(rank_of(&fx, &q, "User: My cat").map(|(rank, _)| rank), Some(1));
    for other in ["User: The weather", "User: I am reading"] {
        assert!(
            rank_of(&fx, &q, other).is_none_or(|(_, lists)| !lists.contains(&Component::Neighbour)),
            "{other}"
        );
    }
    // The same talk as single turns: the turn after the best hit is its neighbour.
    let turns = Fixture::new();
    turns.append(vec![
        episode("User: My cat is called Miso.", "2029-12-01T10:00:00Z", "day1"),
        episode("Assistant: A lovely name!", "2029-12-01T10:01:00Z", "day1"),
    ]);
    let (_, lists) = rank_of(&turns, &q, "Assistant: A lovely").expect("the reply");
    assert!(lists.contains(&Component::Neighbour), "{lists:?}");
}

#[test]
fn a_query_naming_a_day_ranks_the_episodes_of_that_day() {
    let fx = Fixture::new();
    fx.append(vec![
        episode(
            "Caroline: I went to a support group yesterday, it was powerful.",
            "2023-05-08T13:56:00Z",
            "s1",
        ),
        episode("Caroline: The support group meets every month.", "2023-06-20T10:00:00Z", "s2"),
        episode("Caroline: Another support group session is planned.", "2023-07-02T10:00:00Z", "s3"),
        episode("Melanie: Painting is my way to relax.", "2023-05-07T10:00:00Z", "s0"),
    ]);
    // "yesterday" in a turn of 8 May is 7 May 2023.
    let q = text("What did Caroline do on 7 May 2023 with the support group?");
    let (rank, lists) = rank_of(&fx, &q, "Caroline: I went").unwrap();
    assert_eq!(rank, 1);
    assert!(lists.contains(&Component::Time), "{lists:?}");
    // Nothing else speaks of, or happened on, that day except Melanie's painting, which the
    // words do not match.
    let (_, lists) = rank_of(&fx, &q, "Caroline: The support").unwrap();
    assert!(!lists.contains(&Component::Time), "{lists:?}");
    // A month named in the query, relative to the decay clock: "last June" from 2023-10.
    let q = text("the support group last June");
    let at = ReadAt { at: Some(t("2023-10-01")), ..ReadAt::latest() };
    let found = fx.store.at(&fx.ns, at).and_then(|r| r.search(&q)).unwrap();
    let top = &found.value.hits[0];
    assert!(top.explanation.components.iter().any(|c| c.component == Component::Time));
    let RecordRef::Episode(id) = top.record else { panic!() };
    assert!(fx.store.inspect(&fx.ns, |x| x.episode(id).unwrap().text.contains("every month")).unwrap());
    // Left out, the list is gone.
    let q = SearchQuery { without: vec![Component::Time], ..text("What did Caroline do on 7 May 2023?") };
    assert!(!rank_of(&fx, &q, "Caroline: I went").is_some_and(|(_, l)| l.contains(&Component::Time)));
}

#[test]
fn days_told_in_korean_and_spanish_meet_a_question_naming_the_date() {
    let fx = Fixture::new();
    fx.append(vec![
        // Told on 14 May, of 12 May.
        episode("서연: 이틀 전에 호수에 갔어요.", "2024-05-14T10:00:00Z", "s1"),
        episode("Diego: Fuimos al lago hace dos días.", "2024-05-14T11:00:00Z", "s2"),
        // The same kind of outing, told the day it happened, another day.
        episode("서연: 오늘 호수에 갔어요.", "2024-05-20T10:00:00Z", "s3"),
        episode("Diego: Hoy fuimos al lago.", "2024-05-20T11:00:00Z", "s4"),
    ]);
    for (question, told) in [
        ("2024년 5월 12일에 호수에 갔어요?", "서연: 이틀"),
        ("¿Fuimos al lago el 12 de mayo de 2024?", "Diego: Fuimos"),
    ] {
        let (rank, lists) = rank_of(&fx, &text(question), told).unwrap();
        assert!(lists.contains(&Component::Time), "{question}: {lists:?}");
        assert_eq!(rank, 1, "{question}");
    }
}

#[test]
fn a_query_naming_a_speaker_weighs_their_turns_more() {
    let fx = Fixture::new();
    fx.append(vec![
        episode(
            "Melanie: Adoption agencies? My friend looked into adoption agencies too.",
            "2023-05-08T10:00:00Z",
            "s1",
        ),
        episode("Caroline: I have been researching adoption agencies.", "2023-05-08T10:01:00Z", "s1"),
        episode("Melanie: That sounds like a big step!", "2023-05-08T10:02:00Z", "s1"),
    ]);
    let speaker = |q: &SearchQuery, start: &str| {
        let found = fx.store.at(&fx.ns, ReadAt::latest()).and_then(|r| r.search(q)).unwrap();
        let at = found.value.hits.iter().position(|h| {
            matches!(h.record, RecordRef::Episode(id) if fx.store.inspect(&fx.ns, |x| x.episode(id).unwrap().text.starts_with(start)).unwrap())
        });
        let at = at.expect("found");
        (at + 1, found.value.hits[at].explanation.speaker, found.value.hits[at].score)
    };
    let q = text("What did Caroline find about adoption agencies?");
    let (rank, boost, _) = speaker(&q, "Caroline: I have");
    assert_eq!((rank, boost), (1, 1.0 + ostrakon_engine::search::DEFAULT_SPEAKER_BOOST));
    assert_eq!(speaker(&q, "Melanie: Adoption").1, 1.0);
    // A boost is a tie-breaker: two turns alike but for who said them (their roles, in
    // threads of their own) tie without it, the first recorded first; with it, the
    // speaker the query names comes first.
    let tie = Fixture::new();
    let said = |who: &str, thread: &str| {
        Change::RecordEpisode(NewEpisode {
            text: "I have been researching adoption agencies.".into(),
            occurred_at: t("2023-05-08T10:00:00Z"),
            thread: Some(thread.into()),
            role: Some(who.into()),
            ..NewEpisode::default()
        })
    };
    tie.append(vec![said("Melanie", "a"), said("Caroline", "b")]);
    let first = |q: &SearchQuery| {
        // Read when they were said, so that neither has faded and only the ranks count.
        let at = ReadAt { at: Some(t("2023-05-08T10:00:00Z")), ..ReadAt::latest() };
        let found = tie.store.at(&tie.ns, at).and_then(|r| r.search(q)).unwrap();
        let RecordRef::Episode(id) = found.value.hits[0].record else { panic!("{found:?}") };
        tie.store.inspect(&tie.ns, |x| x.episode(id).unwrap().role.clone().unwrap()).unwrap()
    };
    let q = text("What did Caroline research about adoption agencies?");
    assert_eq!(first(&q), "Caroline");
    assert_eq!(first(&SearchQuery { speaker_boost: 0.0, ..q.clone() }), "Melanie");
    assert_eq!(first(&text("What did Melanie research about adoption agencies?")), "Melanie");
    // A name no one speaks under boosts nothing.
    assert_eq!(speaker(&text("What did Bob find about adoption agencies?"), "Caroline").1, 1.0);
}

#[test]
fn a_question_that_asks_when_weighs_the_turns_that_state_a_time_more() {
    // Two turns alike but for one saying when, in threads of their own so that neither is
    // the other's context: they tie without the boost, the first recorded first.
    let fx = Fixture::new();
    fx.append(vec![
        episode("Jon: I went to the pottery class with Gina.", "2023-05-08T10:00:00Z", "a"),
        episode("Jon: I went to the pottery class yesterday.", "2023-05-08T10:00:00Z", "b"),
    ]);
    let ranked = |q: &SearchQuery| {
        // Read when they were said, so that neither has faded and only the ranks count.
        let at = ReadAt { at: Some(t("2023-05-08T10:00:00Z")), ..ReadAt::latest() };
        let found = fx.store.at(&fx.ns, at).and_then(|r| r.search(q)).unwrap();
        found
            .value
            .hits
            .iter()
            .map(|h| {
                let RecordRef::Episode(id) = h.record else { panic!("{found:?}") };
                let text = fx.store.inspect(&fx.ns, |x| x.episode(id).unwrap().text.clone()).unwrap();
                (text, h.explanation.time)
            })
            .collect::<Vec<_>>()
    };
    let q = text("When did Jon go to the pottery class?");
    let boosted = ranked(&q);
    assert_eq!(
        boosted[0],
        (
            "Jon: I went to the pottery class yesterday.".into(),
            1.0 + ostrakon_engine::search::DEFAULT_TIME_BOOST
        )
    );
    assert_eq!(boosted[1], ("Jon: I went to the pottery class with Gina.".into(), 1.0));
    let plain = ranked(&SearchQuery { time_boost: 0.0, ..q });
    assert_eq!(plain[0], ("Jon: I went to the pottery class with Gina.".into(), 1.0), "{plain:?}");
    // A question that does not ask when boosts nothing, nor does "when" opening a clause.
    for q in ["Who did Jon go to the pottery class with?", "When Jon went to the pottery class, who came?"] {
        assert!(ranked(&text(q)).iter().all(|(_, time)| *time == 1.0), "{q}");
    }
}

#[test]
fn reads_see_only_what_was_known_and_filters_apply() {
    let fx = Fixture::new();
    chat(&fx);
    fx.append(vec![episode("Another plum cake, this time with almonds.", "2029-12-05", "b")]);
    let at_first = ReadAt { known_at: KnownAt::Seq(Seq(1)), ..ReadAt::latest() };
    let early = episodes_found(&fx, &text("plum cake"), at_first);
    assert!(early.iter().all(|e| !e.contains("almonds")), "{early:?}");
    let all = episodes_found(&fx, &text("plum cake"), ReadAt::latest());
    assert!(all.iter().any(|e| e.contains("almonds")));
    let in_b =
        episodes_found(&fx, &SearchQuery { thread: Some("b".into()), ..text("plum cake") }, ReadAt::latest());
    // The whales turn is found too, through the plum cake turn that followed it.
    assert_eq!(in_b[0], "Another plum cake, this time with almonds.");
    assert!(in_b[1..].iter().all(|e| e.contains("whales")), "{in_b:?}");
    let window = SearchQuery { occurred_from: Some(t("2029-12-04")), ..text("plum cake") };
    assert_eq!(episodes_found(&fx, &window, ReadAt::latest()).len(), 1);
    let none = SearchQuery { occurred_to: Some(t("2029-12-01")), ..text("plum cake") };
    assert!(episodes_found(&fx, &none, ReadAt::latest()).is_empty());
}

#[test]
fn facts_follow_time_and_the_graph_expands_named_entities() {
    let fx = Fixture::new();
    fx.define("livesIn", Cardinality::One);
    let alice = fx.entity("Alice");
    let fact = |city: &str, from: &str| {
        Change::AssertFact(NewFact::new(
            EntityRef::Id(alice),
            "livesIn",
            ObjectRef::Entity(EntityRef::Name(city.into())),
            common::iv(from, None),
        ))
    };
    fx.append(vec![fact("Paris", "2010-01-01")]);
    fx.append(vec![fact("Berlin", "2015-01-01")]);
    let facts = |q: SearchQuery, at: ReadAt| -> Vec<(String, Option<Status>)> {
        let found = fx.store.at(&fx.ns, at).and_then(|r| r.search(&q)).unwrap();
        found
            .value
            .hits
            .iter()
            .filter_map(|h| match h.record {
                RecordRef::Fact(id) => {
                    let f = fx.store.inspect(&fx.ns, |i| i.fact(id)).unwrap().unwrap();
                    let city = fx
                        .store
                        .inspect(&fx.ns, |i| match f.object {
                            ostrakon_engine::core::Value::Entity(e) => i.entity(e).unwrap().name.clone(),
                            _ => unreachable!(),
                        })
                        .unwrap();
                    Some((city, h.explanation.status))
                }
                _ => None,
            })
            .collect()
    };
    let q = SearchQuery { kinds: vec![RecordKind::Fact], ..text("Where does Alice live?") };
    assert_eq!(facts(q.clone(), ReadAt::latest()), vec![("Berlin".into(), Some(Status::Current))]);
    assert_eq!(
        facts(q.clone(), ReadAt::valid(t("2012-06-01"))),
        vec![("Paris".into(), Some(Status::Current))]
    );
    let all = facts(SearchQuery { include_not_in_force: true, ..q.clone() }, ReadAt::latest());
    assert!(all.contains(&("Paris".into(), Some(Status::Superseded))), "{all:?}");
    let found = fx
        .store
        .at(&fx.ns, ReadAt::latest())
        .and_then(|r| r.search(&text("Where does Alice live?")))
        .unwrap();
    assert_eq!(found.value.matched_entities, vec![alice]);
    assert!(found.value.hits.iter().any(|h| h.record == RecordRef::Entity(alice)
        && h.explanation.components.iter().any(|c| c.component == Component::Graph)));
    // An entity filter alone is a query.
    let only = SearchQuery { entity: Some(alice), kinds: vec![RecordKind::Fact], ..SearchQuery::default() };
    assert_eq!(facts(only, ReadAt::latest()).len(), 1);
}

/// A turn, with a fact extracted from it that says plainly what the turn only hints at.
fn turn_with_fact(fx: &Fixture, turn: &str, fact: &str, day: &str) -> ostrakon_engine::core::FactId {
    let mut stated = NewFact::new(
        EntityRef::Name("Ann".into()),
        "noted",
        ObjectRef::Literal(ostrakon_engine::core::Literal::String(fact.into())),
        common::iv(day, None),
    );
    stated.provenance = vec![EpisodeRef::New(0)];
    let receipt = fx.append(vec![episode(turn, day, "chat"), Change::AssertFact(stated)]);
    receipt.fact(1).unwrap()
}

/// The graph rank of the turn whose text is `turn` among `q`'s hits, with its place.
fn graph_rank(fx: &Fixture, q: &SearchQuery, turn: &str) -> Option<(usize, usize)> {
    let found = fx.store.at(&fx.ns, ReadAt::latest()).and_then(|r| r.search(q)).unwrap();
    found.value.hits.iter().enumerate().find_map(|(place, h)| {
        let RecordRef::Episode(id) = h.record else { return None };
        let text = fx.store.inspect(&fx.ns, |i| i.episode(id).map(|e| e.text.clone())).unwrap()?;
        let graph = h.explanation.components.iter().find(|c| c.component == Component::Graph)?;
        (text == turn).then_some((place + 1, graph.rank))
    })
}

#[test]
fn a_fact_the_question_finds_brings_the_turn_it_was_extracted_from() {
    let fx = Fixture::new();
    let keys = "Ann: guess who finally got the keys today!";
    let house = turn_with_fact(&fx, keys, "Ann bought a house in Lisbon", "2029-01-02");
    // Fifty later turns, each with its own fact: newest first, the house would be last.
    for i in 0..50 {
        let day = format!("2029-03-{:02}T{:02}:00:00Z", 1 + i / 20, i % 20);
        turn_with_fact(&fx, &format!("Ann: chat number {i}"), &format!("Ann enjoyed evening {i}"), &day);
    }
    let only_turns = |q: &str| SearchQuery { kinds: vec![RecordKind::Episode], limit: 60, ..text(q) };
    // The question names Ann (the graph's seed) and words of the fact, none of the turn's
    // but her name: newest first, the turn would be the graph's last.
    let (place, rank) = graph_rank(&fx, &only_turns("In which city did Ann buy a house?"), keys)
        .expect("the turn is found through its fact");
    assert_eq!(rank, 1, "the graph's first episode");
    assert!(place <= 10, "ranked {place} of 51");
    // A question that names nobody (or the wrong person) finds it through the fact too.
    assert!(graph_rank(&fx, &only_turns("Who bought a house in Lisbon?"), keys).is_some());
    // Only facts in force lead to their turns (unless asked otherwise).
    fx.append(vec![Change::RetractFact { fact: house, reason: None }]);
    assert_eq!(graph_rank(&fx, &only_turns("Who bought a house in Lisbon?"), keys), None);
    let all = SearchQuery { include_not_in_force: true, ..only_turns("Who bought a house in Lisbon?") };
    assert!(graph_rank(&fx, &all, keys).is_some());
}

#[test]
fn client_vectors_rank_by_similarity_and_bad_vectors_store_nothing() {
    let fx = Fixture::new();
    fx.append(vec![Change::ConfigureEmbedding(EmbeddingMode::Client { dim: 3 })]);
    let ep = |text: &str, v: [f32; 3]| {
        vec![
            Change::RecordEpisode(NewEpisode {
                text: text.into(),
                occurred_at: t("2029-06-01"),
                ..NewEpisode::default()
            }),
            Change::Embed { episode: EpisodeRef::New(0), vector: v.to_vec() },
        ]
    };
    fx.append(ep("north", [1.0, 0.0, 0.0]));
    fx.append(ep("east", [0.0, 1.0, 0.0]));
    fx.append(ep("north-east", [0.7, 0.7, 0.0]));
    let q =
        SearchQuery { vector: Some(vec![0.9, 0.3, 0.0]), diversity_lambda: 1.0, ..SearchQuery::default() };
    assert_eq!(episodes_found(&fx, &q, ReadAt::latest()), vec!["north", "north-east", "east"]);
    let before = fx.store.counts(&fx.ns).unwrap();
    for bad in [vec![1.0, 0.0], vec![f32::NAN, 0.0, 0.0], vec![0.0, 0.0, 0.0]] {
        let mut changes = ep("bad", [0.0; 3]);
        changes[1] = Change::Embed { episode: EpisodeRef::New(0), vector: bad };
        let err = fx.store.append(&fx.ns, changes).unwrap_err();
        assert!(matches!(err.root(), WriteError::Invalid(_)), "{err}");
        assert!(err.to_string().contains("embedding"), "{err}");
    }
    assert_eq!(fx.store.counts(&fx.ns).unwrap(), before, "rejected batches store nothing");
    let wrong = SearchQuery { vector: Some(vec![1.0]), ..SearchQuery::default() };
    assert!(matches!(
        fx.store.at(&fx.ns, ReadAt::latest()).and_then(|r| r.search(&wrong)),
        Err(ReadError::Invalid(_))
    ));
    // The vectors survive a restart (rebuilt from the log).
    let reopened = fx.reopen();
    let found = reopened.at(&fx.ns, ReadAt::latest()).and_then(|r| r.search(&q)).unwrap();
    assert!(found.value.hits[0].explanation.components.iter().any(|c| c.component == Component::Vector));
}

#[test]
fn vectors_need_client_mode_and_off_mode_refuses_query_vectors() {
    let fx = Fixture::new();
    let changes = vec![
        Change::RecordEpisode(NewEpisode {
            text: "x".into(),
            occurred_at: t("2029-06-01"),
            ..NewEpisode::default()
        }),
        Change::Embed { episode: EpisodeRef::New(0), vector: vec![1.0, 0.0] },
    ];
    let err = fx.store.append(&fx.ns, changes).unwrap_err();
    assert!(err.to_string().contains("configure it for client vectors"), "{err}");
    fx.append(vec![Change::ConfigureEmbedding(EmbeddingMode::Off)]);
    fx.append(vec![episode("hello there", "2029-06-01", "a")]);
    let q = SearchQuery { vector: Some(vec![1.0, 0.0]), ..text("hello") };
    assert!(matches!(
        fx.store.at(&fx.ns, ReadAt::latest()).and_then(|r| r.search(&q)),
        Err(ReadError::Invalid(_))
    ));
    assert_eq!(episodes_found(&fx, &text("hello"), ReadAt::latest()), vec!["hello there"]);
    assert!(
        fx.store.append(&fx.ns, vec![Change::ConfigureEmbedding(EmbeddingMode::Client { dim: 0 })]).is_err()
    );
}

#[test]
fn bad_queries_are_refused_with_their_field() {
    let fx = Fixture::new();
    chat(&fx);
    let cases = [
        (SearchQuery::default(), "text"),
        (SearchQuery { limit: 0, ..text("x") }, "limit"),
        (SearchQuery { limit: 10_000, ..text("x") }, "limit"),
        (SearchQuery { retention_floor: 1.5, ..text("x") }, "retentionFloor"),
        (SearchQuery { diversity_lambda: -0.1, ..text("x") }, "diversity"),
        (
            SearchQuery {
                occurred_from: Some(t("2030-01-01")),
                occurred_to: Some(t("2020-01-01")),
                ..text("x")
            },
            "occurredFrom",
        ),
    ];
    for (q, field) in cases {
        let err = fx.store.at(&fx.ns, ReadAt::latest()).and_then(|r| r.search(&q)).unwrap_err();
        assert!(err.to_string().contains(field), "{field}: {err}");
    }
    // A namespace that does not exist has nothing, and says so by an empty answer.
    let other = ostrakon_engine::core::Namespace::new("ns", "nobody").unwrap();
    assert!(
        fx.store
            .at(&other, ReadAt::latest())
            .and_then(|r| r.search(&text("plum")))
            .unwrap()
            .value
            .hits
            .is_empty()
    );
    // Query syntax is not interpreted.
    assert!(
        fx.store.at(&fx.ns, ReadAt::latest()).and_then(|r| r.search(&text("plum AND (cake OR \"x"))).is_ok()
    );
}

#[test]
fn context_fits_the_budget_and_is_deterministic() {
    let fx = Fixture::new();
    fx.define("livesIn", Cardinality::One);
    let alice = fx.entity("Alice");
    fx.append(vec![
        episode("Alice told me she moved to Paris for a new job at a bakery.", "2029-11-01", "a"),
        Change::AssertFact(NewFact {
            provenance: vec![EpisodeRef::New(0)],
            ..NewFact::new(
                EntityRef::Id(alice),
                "livesIn",
                ObjectRef::Entity(EntityRef::Name("Paris".into())),
                common::iv("2029-10-01", None),
            )
        }),
    ]);
    fx.append(vec![Change::DeclareEntity(NewEntity {
        id: Some(alice),
        name: "Alice".into(),
        kind: Some("person".into()),
        ..NewEntity::default()
    })]);
    let q = SearchQuery::default();
    let ctx = fx
        .store
        .at(&fx.ns, ReadAt::latest())
        .and_then(|r| r.context("Where does Alice live now?", 200, &q))
        .unwrap()
        .value;
    assert!(ctx.text.contains("Alice lives in Paris (since 2029-10-01)"), "{}", ctx.text);
    assert!(ctx.text.contains("[2029-11-01] Alice told me"), "{}", ctx.text);
    assert!(ctx.text.contains("- Alice (person)"), "{}", ctx.text);
    assert!(ctx.tokens <= 200 && ctx.tokens == estimate_tokens(&ctx.text));
    assert!(!ctx.truncated);
    let again = fx
        .store
        .at(&fx.ns, ReadAt::latest())
        .and_then(|r| r.context("Where does Alice live now?", 200, &q))
        .unwrap()
        .value;
    assert_eq!(ctx.text, again.text);
    let small = fx
        .store
        .at(&fx.ns, ReadAt::latest())
        .and_then(|r| r.context("Where does Alice live now?", 15, &q))
        .unwrap()
        .value;
    assert!(small.tokens <= 15 && small.truncated, "{small:?}");
    assert!(fx.store.at(&fx.ns, ReadAt::latest()).and_then(|r| r.context("x", 0, &q)).is_err());
}

#[test]
fn remember_reinforces_what_it_found() {
    let fx = Fixture::new();
    chat(&fx);
    let q = SearchQuery { kinds: vec![RecordKind::Episode], limit: 1, ..text("whales documentary") };
    let (found, receipt) = fx.store.remember(&fx.ns, &q, ReadAt::latest()).unwrap();
    let receipt = receipt.expect("something was recalled");
    let hit = found.value.hits[0].record;
    let trace = fx.store.at(&fx.ns, ReadAt::latest()).and_then(|r| r.trace(hit)).unwrap().value.unwrap();
    assert_eq!(trace.recall_count, 1);
    assert_eq!(receipt.seq, Seq(2));
    let (_, none) = fx.store.remember(&fx.ns, &text("zeppelin"), ReadAt::latest()).unwrap();
    assert!(none.is_none(), "nothing found, nothing written");
}

#[test]
fn a_korean_question_names_its_entity_through_the_particle() {
    // "서연은 어디에 살아요?": the mention keeps its particle (은), and is still 서연.
    let fx = Fixture::new();
    fx.define("livesIn", Cardinality::One);
    let seoyeon = fx.entity("서연");
    fx.append(vec![
        episode("서연이가 지난달에 부산으로 이사했어요.", "2029-11-01", "a"),
        Change::AssertFact(NewFact {
            provenance: vec![EpisodeRef::New(0)],
            ..NewFact::new(
                EntityRef::Id(seoyeon),
                "livesIn",
                ObjectRef::Entity(EntityRef::Name("부산".into())),
                common::iv("2029-10-01", None),
            )
        }),
    ]);
    let context = |question: &str| {
        let q = SearchQuery::default();
        fx.store.at(&fx.ns, ReadAt::latest()).and_then(|r| r.context(question, 300, &q)).unwrap().value
    };
    for question in ["서연은 어디에 살아요?", "서연이는 어디 살아?", "서연의 집은 어디예요?"]
    {
        let block = context(question);
        assert!(block.entities.iter().any(|e| e.name == "서연"), "{question}: {}", block.text);
        assert!(block.text.contains("서연 lives in 부산"), "{question}: {}", block.text);
    }
}

#[test]
fn an_as_of_block_marks_what_happened_after_its_day() {
    let fx = Fixture::new();
    let written = fx.append(vec![
        episode("Alice lives in Lyon, near the river.", "2029-03-01", "a"),
        episode("Alice moved from Lyon to Paris last week.", "2029-09-01", "a"),
    ]);
    // The later one is in CORE memory too, which a block shows whatever it is asked.
    let Some(ostrakon_engine::RecordId::Episode(later)) = written.ids[1] else { panic!("{written:?}") };
    fx.append(vec![Change::Place {
        record: RecordRef::Episode(later),
        tier: ostrakon_engine::core::Tier::Core,
        reason: None,
        by: ostrakon_engine::core::PlacedBy::Client,
    }]);
    let q = SearchQuery::default();
    let block = |at: ReadAt| {
        fx.store
            .at(&fx.ns, at)
            .and_then(|r| r.context("Where does Alice live, Lyon?", 300, &q))
            .unwrap()
            .value
    };
    // Now (the clock is 2030): both, unmarked.
    let now = block(ReadAt::latest());
    assert_eq!(now.episodes.len(), 2, "{}", now.text);
    assert!(now.text.contains("Core memory:") && !now.text.contains("later than"), "{}", now.text);
    // As of June 2029: the move is still shown (a later text may be the only source of
    // what held then) but says it came after the block's day, wherever it stands.
    let then = block(ReadAt::valid(t("2029-06-01")));
    assert_eq!(then.episodes.len(), 2, "{}", then.text);
    assert!(
        then.text.contains("- [2029-09-01, later than 2029-06-01] Alice moved from Lyon to Paris"),
        "{}",
        then.text
    );
    assert!(then.text.contains("- [2029-03-01] Alice lives in Lyon"), "{}", then.text);
    assert_eq!(then.text.matches("later than").count(), 1, "{}", then.text);
}

#[test]
fn the_segment_list_brings_the_rest_of_a_stretch_of_talk() {
    let fx = Fixture::new();
    fx.append(vec![
        episode("I bought a red kayak on Saturday.", "2029-12-01T10:00:00Z", "a"),
        episode("The lake was calm at dawn.", "2029-12-01T10:01:00Z", "a"),
        episode("We packed sandwiches and tea.", "2029-12-01T10:02:00Z", "a"),
        episode("A heron stood in the reeds.", "2029-12-01T10:03:00Z", "a"),
        episode("My cousin sells bicycles.", "2029-12-01T10:04:00Z", "b"),
    ]);
    let q = SearchQuery { kinds: vec![RecordKind::Episode], ..text("kayak") };
    let in_segment_list =
        |start: &str| rank_of(&fx, &q, start).is_some_and(|(_, lists)| lists.contains(&Component::Segment));
    // No segment has closed yet: no list.
    assert!(!in_segment_list("I bought") && !in_segment_list("A heron"));
    fx.store.segment(&fx.ns, true).unwrap();
    // The heron is three turns from the kayak, past its neighbours, and shares no word with
    // the question: the kayak's segment brings it, and the seed leads its segment; the
    // other thread's turn stays out.
    assert!(in_segment_list("A heron"));
    assert!(in_segment_list("I bought"));
    assert!(!in_segment_list("My cousin"));
    let without = SearchQuery { without: vec![Component::Segment], ..q.clone() };
    assert!(rank_of(&fx, &without, "A heron").is_none());
}
