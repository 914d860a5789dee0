//! Tiers of context: CORE in every block whatever the message and however old, ACTIVE
//! scopes loaded when named (or current), ARCHIVE found by search only; placements as
//! bitemporal events; caps; a correction of a core fact staying core; upkeep's
//! promotions (a fact stated in three threads) and releases (an idle scope) under the
//! propose and apply policies; and the GraphQL surface.

use std::sync::Arc;

use ostrakon_engine::core::{Event, Literal, PlacedBy, RecordRef, Seq, Tier, TierPolicy};
use ostrakon_engine::{
    Change, NewEpisode, ReadAt, SearchQuery, change::EpisodeRef, change::TierSettingsPatch,
};
use serde_json::json;

use crate::common::{Fixture, gql, gql_error, iv, prop, t};

fn place(
    fx: &Fixture,
    record: RecordRef,
    tier: Tier,
) -> Result<ostrakon_engine::Receipt, ostrakon_engine::WriteError> {
    fx.store.append(
        &fx.ns,
        vec![Change::Place { record, tier, reason: Some("test".into()), by: PlacedBy::Client }],
    )
}

/// Why a write was refused, as its root error's debug form.
fn refusal(r: Result<ostrakon_engine::Receipt, ostrakon_engine::WriteError>) -> String {
    match r {
        Ok(receipt) => panic!("not refused: {receipt:?}"),
        Err(e) => format!("{:?}", e.root()),
    }
}

fn block(fx: &Fixture, message: &str, scopes: Option<&[String]>, at: &str) -> ostrakon_engine::ContextBlock {
    let read = ReadAt { at: Some(t(at)), valid_at: Some(t(at)), ..ReadAt::default() };
    fx.store
        .at(&fx.ns, read)
        .and_then(|r| r.context_in(message, 300, &SearchQuery::default(), scopes))
        .unwrap()
        .value
}

/// Alice's story: an allergy, a hobby, and chat about the weather.
fn story(fx: &Fixture) -> (RecordRef, RecordRef) {
    let alice = fx.entity("Alice");
    story_of(fx, alice)
}

fn story_of(fx: &Fixture, alice: ostrakon_engine::core::EntityId) -> (RecordRef, RecordRef) {
    let (allergy, _) =
        fx.assert(prop(alice, "allergicTo", Literal::String("peanuts".into()), iv("2020", None)));
    let (hobby, _) = fx.assert(prop(alice, "plays", Literal::String("the cello".into()), iv("2021", None)));
    for day in 1..=9 {
        let episode = NewEpisode {
            text: format!("Day {day}: the weather was grey and the bus was late again"),
            occurred_at: t(&format!("2030-01-0{day}")),
            thread: Some("chat".into()),
            ..NewEpisode::default()
        };
        fx.append(vec![Change::RecordEpisode(episode)]);
    }
    (RecordRef::Fact(allergy), RecordRef::Fact(hobby))
}

#[test]
fn a_core_fact_is_in_every_block_a_year_later_and_archive_only_when_relevant() {
    let fx = Fixture::new();
    let (allergy, hobby) = story(&fx);
    let before = block(&fx, "What's the weather like?", None, "2031-01-10");
    assert!(!before.text.contains("peanuts"), "{}", before.text);
    place(&fx, allergy, Tier::Core).unwrap();
    for when in ["2030-01-10", "2031-01-10"] {
        let b = block(&fx, "What's the weather like?", None, when);
        assert!(b.text.starts_with("Core memory:\n- Alice allergic to \"peanuts\""), "{}", b.text);
        assert_eq!(b.tiers[0].tier, Some(Tier::Core));
        assert_eq!(b.tiers[0].records, [allergy]);
        // ARCHIVE: the weather, not the unrelated hobby.
        let archive = b.tiers.last().unwrap();
        assert_eq!(archive.tier, None);
        assert!(!archive.records.contains(&hobby), "{}", b.text);
        assert!(b.text.contains("weather was grey"), "{}", b.text);
    }
    let asked = block(&fx, "Which instrument does Alice play, the cello?", None, "2030-01-10");
    assert!(asked.text.contains("cello"), "{}", asked.text);
    assert_eq!(asked.text.matches("peanuts").count(), 1, "CORE is not repeated by ARCHIVE: {}", asked.text);
}

#[test]
fn an_active_scope_is_loaded_when_named_or_current_and_not_otherwise() {
    let fx = Fixture::new();
    let alice = fx.entity("Alice");
    story_of(&fx, alice);
    let (flight, _) =
        fx.assert(prop(alice, "fliesTo", Literal::String("Osaka".into()), iv("2030-01-05", None)));
    let (tiles, _) =
        fx.assert(prop(alice, "ordered", Literal::String("blue tiles".into()), iv("2030-01-01", None)));
    let japan = Tier::active("scope", "trip-to-japan").unwrap();
    place(&fx, RecordRef::Fact(flight), japan.clone()).unwrap();
    place(&fx, RecordRef::Fact(tiles), Tier::active("scope", "kitchen").unwrap()).unwrap();
    let named = block(&fx, "Anything new?", Some(&["trip-to-japan".to_owned()]), "2030-01-10");
    assert!(named.text.contains("Active (trip-to-japan):\n- Alice flies to \"Osaka\""), "{}", named.text);
    assert!(!named.text.contains("blue tiles"), "{}", named.text);
    assert_eq!(named.tiers[0].tier, Some(japan));
    let none = block(&fx, "Anything new?", Some(&[]), "2030-01-10");
    assert!(!none.text.contains("Osaka") && !none.text.contains("blue tiles"), "{}", none.text);
    let current = block(&fx, "Anything new?", None, "2030-01-10");
    assert!(current.text.contains("Osaka") && current.text.contains("blue tiles"), "{}", current.text);
}

#[test]
fn placements_are_events_read_as_of_any_system_time_and_corrections_of_core_stay_core() {
    let fx = Fixture::new();
    let alice = fx.entity("Alice");
    let (allergy, hobby) = story_of(&fx, alice);
    let placed = place(&fx, allergy, Tier::Core).unwrap().seq;
    let released = fx
        .store
        .append(
            &fx.ns,
            vec![Change::Release { record: allergy, tier: Tier::Core, reason: None, by: PlacedBy::Client }],
        )
        .unwrap()
        .seq;
    let core_at = |s: Seq| {
        fx.store
            .at(&fx.ns, at_seq(s))
            .unwrap()
            .tier_members(&Tier::Core)
            .unwrap()
            .into_iter()
            .map(|(r, _)| r)
            .collect::<Vec<_>>()
    };
    assert_eq!(core_at(Seq(placed.0 - 1)), []);
    assert_eq!(core_at(placed), [allergy]);
    assert_eq!(core_at(released), []);
    let history = fx.store.at(&fx.ns, at_seq(released)).unwrap().placement_history(allergy).unwrap();
    assert_eq!(history.iter().map(|(_, p)| p.placed).collect::<Vec<_>>(), [true, false]);
    // Releasing what is not placed, or placing twice, is refused.
    let again = fx.store.append(
        &fx.ns,
        vec![Change::Release { record: hobby, tier: Tier::Core, reason: None, by: PlacedBy::Client }],
    );
    assert!(refusal(again).starts_with("Invalid("));
    place(&fx, hobby, Tier::Core).unwrap();
    assert!(place(&fx, hobby, Tier::Core).is_err());
    // A correction of the core fact is core too, placed by the store with its reason.
    let RecordRef::Fact(old) = hobby else { unreachable!() };
    let mut fix = prop(alice, "plays", Literal::String("the viola".into()), iv("2021", None));
    fix.supersedes = Some(old);
    let (new, seq) = fx.assert(fix);
    let core = fx.store.at(&fx.ns, at_seq(seq)).unwrap().tier_members(&Tier::Core).unwrap();
    let (_, placement) =
        core.iter().find(|(r, _)| *r == RecordRef::Fact(new)).expect("the correction is core");
    assert_eq!(placement.by, PlacedBy::Store);
    assert!(block(&fx, "weather?", None, "2030-01-10").text.contains("viola"));
    assert!(!block(&fx, "weather?", None, "2030-01-10").text.contains("cello"), "in force only");
}

#[test]
fn a_tier_past_its_caps_is_refused_with_limit_exceeded() {
    let fx = Fixture::new();
    let (allergy, hobby) = story(&fx);
    let patch = TierSettingsPatch { core_max_items: Some(1), ..TierSettingsPatch::default() };
    fx.append(vec![Change::ConfigureTiers(patch)]);
    place(&fx, allergy, Tier::Core).unwrap();
    let over = refusal(place(&fx, hobby, Tier::Core));
    assert!(over.starts_with("LimitExceeded") && over.contains("value: 2, max: 1"), "{over}");
    let patch = TierSettingsPatch {
        core_max_items: Some(10),
        core_max_tokens: Some(12),
        ..TierSettingsPatch::default()
    };
    fx.append(vec![Change::ConfigureTiers(patch)]);
    let over = refusal(place(&fx, hobby, Tier::Core));
    assert!(over.starts_with("LimitExceeded") && over.contains("max: 12"), "{over}");
    let bad =
        TierSettingsPatch { core_share: Some(0.8), active_share: Some(0.5), ..TierSettingsPatch::default() };
    assert!(fx.store.append(&fx.ns, vec![Change::ConfigureTiers(bad)]).is_err());
}

#[test]
fn upkeep_proposes_then_applies_promotions_of_facts_stated_in_three_threads_and_releases_idle_scopes() {
    let fx = Fixture::new();
    let alice = fx.entity("Alice");
    // The same fact stated from episodes of three threads, and another from one.
    for (n, thread) in ["monday", "tuesday", "friday"].iter().enumerate() {
        let episode = NewEpisode {
            text: format!("I'm vegetarian, remember ({thread})"),
            occurred_at: t(&format!("2030-01-0{}", n + 1)),
            thread: Some((*thread).to_owned()),
            ..NewEpisode::default()
        };
        let mut diet = prop(alice, "diet", Literal::String("vegetarian".into()), iv("2020", None));
        diet.provenance = vec![EpisodeRef::New(0)];
        let mut once = prop(alice, "mood", Literal::String("tired".into()), iv("2030-01-01", None));
        once.provenance = vec![EpisodeRef::New(0)];
        let mut changes = vec![Change::RecordEpisode(episode), Change::AssertFact(diet)];
        if n == 0 {
            changes.push(Change::AssertFact(once));
        }
        fx.append(changes);
    }
    let diet = fx
        .store
        .at(&fx.ns, ReadAt::latest())
        .and_then(|r| {
            r.facts(
                &ostrakon_engine::core::FactFilter {
                    subject: Some(alice),
                    predicate: Some("diet".into()),
                    ..Default::default()
                },
                ostrakon_engine::core::Scope::InForce,
            )
        })
        .unwrap()
        .value[0]
        .fact
        .id;
    let diet = RecordRef::Fact(diet);
    // Off by default: nothing.
    assert_eq!(fx.store.maintain_tiers(&fx.ns, t("2030-01-05")).unwrap(), Default::default());
    let propose = TierSettingsPatch { policy: Some(TierPolicy::Propose), ..TierSettingsPatch::default() };
    fx.append(vec![Change::ConfigureTiers(propose)]);
    let done = fx.store.maintain_tiers(&fx.ns, t("2030-01-05")).unwrap();
    assert_eq!(done.promoted, [diet]);
    let open = fx.store.at(&fx.ns, ostrakon_engine::ReadAt::latest()).unwrap().open_proposals().unwrap();
    assert_eq!(
        (open.len(), open[0].record, open[0].reason.as_str()),
        (1, diet, "stated in 3 different threads")
    );
    assert!(
        fx.store
            .at(&fx.ns, ostrakon_engine::ReadAt::latest())
            .unwrap()
            .tier_members(&Tier::Core)
            .unwrap()
            .is_empty(),
        "only proposed"
    );
    // Proposed once, not at every tick.
    fx.append(vec![Change::ConfigureTiers(TierSettingsPatch::default())]);
    assert!(fx.store.maintain_tiers(&fx.ns, t("2030-01-05")).unwrap().promoted.is_empty());
    let apply = TierSettingsPatch {
        policy: Some(TierPolicy::Apply),
        release_idle_after_micros: Some(Some(7 * ostrakon_engine::core::DAY_MICROS)),
        ..TierSettingsPatch::default()
    };
    fx.append(vec![Change::ConfigureTiers(apply)]);
    // An open proposal stands for the fact: apply places nothing more until it is answered.
    fx.store
        .append(
            &fx.ns,
            vec![Change::Place {
                record: diet,
                tier: Tier::Core,
                reason: Some("accepted".into()),
                by: PlacedBy::Client,
            }],
        )
        .unwrap();
    assert!(
        fx.store.at(&fx.ns, ostrakon_engine::ReadAt::latest()).unwrap().open_proposals().unwrap().is_empty(),
        "answered by the placement"
    );
    // An ACTIVE scope placed long ago is released under apply, with its reason in the log.
    let episode = RecordRef::Episode(ostrakon_engine::core::EpisodeId(1));
    place(&fx, episode, Tier::active("scope", "diet-plan").unwrap()).unwrap();
    fx.clock.set("2030-03-01");
    let done = fx.store.maintain_tiers(&fx.ns, t("2030-03-01")).unwrap();
    assert_eq!(done.released.len(), 1, "{done:?}");
    assert!(fx.store.at(&fx.ns, ostrakon_engine::ReadAt::latest()).unwrap().scopes().unwrap().is_empty());
    let events: Vec<Event> = fx.store.export(&fx.ns).unwrap().into_iter().flat_map(|b| b.events).collect();
    assert!(events.iter().any(|e| matches!(e, Event::PlacementProposed { record, .. } if *record == diet)));
    assert!(events.iter().any(
        |e| matches!(e, Event::Released { by: PlacedBy::Store, reason: Some(r), .. } if r.contains("7 days"))
    ));
}

#[tokio::test]
async fn the_graphql_surface_places_lists_configures_and_reports_tiers_in_context() {
    let store = Arc::new(ostrakon_engine::Store::in_memory());
    let schema = ostrakon_graphql::schema(Arc::clone(&store), ostrakon_graphql::Limits::default());
    let written = gql(
        &schema,
        r#"mutation { assertFacts(namespace: "t", facts: [
            { subject: { name: "Sam" }, predicate: "allergicTo", object: { string: "shellfish" }, validFrom: "2020" },
            { subject: { name: "Sam" }, predicate: "plans", object: { string: "a hike on Saturday" }, validFrom: "2025" }
        ]) { facts { id } } }"#,
    )
    .await;
    let ids: Vec<String> = written["assertFacts"]["facts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_owned())
        .collect();
    let configured = gql(
        &schema,
        r#"mutation { configureNamespace(namespace: "t", tiers: { policy: PROPOSE, coreShare: 0.5, releaseIdleAfterDays: 0 }) { name } }"#,
    )
    .await;
    assert_eq!(configured["configureNamespace"]["name"], "t");
    let place = format!(
        r#"mutation {{ placeMemory(namespace: "t", fact: "{}", tier: CORE, reason: "health") {{ core {{ fact {{ id }} reason by }} settings {{ policy coreShare releaseIdleAfterDays }} }} }}"#,
        ids[0]
    );
    let placed = gql(&schema, &place).await;
    assert_eq!(
        placed["placeMemory"],
        json!({ "core": [{ "fact": { "id": ids[0] }, "reason": "health", "by": "CLIENT" }],
                "settings": { "policy": "PROPOSE", "coreShare": 0.5, "releaseIdleAfterDays": null } })
    );
    let scoped = format!(
        r#"mutation {{ placeMemory(namespace: "t", fact: "{}", tier: ACTIVE, scope: "weekend") {{ scopes {{ name records {{ fact {{ id }} }} }} }} }}"#,
        ids[1]
    );
    assert_eq!(gql(&schema, &scoped).await["placeMemory"]["scopes"][0]["name"], "weekend");
    let ctx = gql(
        &schema,
        r#"{ context(namespace: "t", message: "hello", scopes: ["weekend"]) { text tiers { tier scope leftOut records { fact { predicate } } } } }"#,
    )
    .await;
    let tiers = &ctx["context"]["tiers"];
    assert_eq!(tiers[0]["tier"], "CORE");
    assert_eq!(
        tiers[1],
        json!({ "tier": "ACTIVE", "scope": "weekend", "leftOut": 0, "records": [{ "fact": { "predicate": "plans" } }] })
    );
    assert_eq!(tiers[2]["tier"], "ARCHIVE");
    let wrong = [
        r#"mutation { placeMemory(namespace: "t", fact: "1", tier: ACTIVE) { basis { seq } } }"#,
        r#"mutation { placeMemory(namespace: "t", fact: "1", episode: "1", tier: CORE) { basis { seq } } }"#,
        r#"mutation { placeMemory(namespace: "t", fact: "999", tier: CORE) { basis { seq } } }"#,
        r#"mutation { configureNamespace(namespace: "t", tiers: { coreShare: 2 }) { name } }"#,
    ];
    let codes: Vec<String> =
        futures_util::future::join_all(wrong.iter().map(|q| gql_error(&schema, q))).await;
    assert_eq!(codes, ["INVALID_VALUE", "INVALID_VALUE", "UNKNOWN_FACT", "INVALID_VALUE"]);
    let at_first = gql(&schema, r#"{ tiers(namespace: "t", knownAtSeq: 2) { core { reason } } }"#).await;
    assert_eq!(at_first["tiers"]["core"], json!([]), "before the placement");
    // A fact's tiers as known at each point: the timeline page shows them.
    let fact_tiers = |seq: u64| {
        format!(
            r#"{{ facts(namespace: "t", predicate: "allergicTo", knownAtSeq: {seq}) {{ nodes {{ tiers }} }} }}"#
        )
    };
    assert_eq!(gql(&schema, &fact_tiers(2)).await["facts"]["nodes"], json!([{ "tiers": [] }]));
    assert_eq!(gql(&schema, &fact_tiers(3)).await["facts"]["nodes"], json!([{ "tiers": ["CORE"] }]));
}

#[test]
fn a_fact_recalled_on_three_days_is_proposed_for_core() {
    let fx = Fixture::new();
    let (allergy, hobby) = story(&fx);
    let propose = TierSettingsPatch { policy: Some(TierPolicy::Propose), ..TierSettingsPatch::default() };
    fx.append(vec![Change::ConfigureTiers(propose)]);
    for (record, days) in [(allergy, ["2030-02-01", "2030-02-03", "2030-02-09"]), (hobby, ["2030-02-01"; 3])]
    {
        for day in days {
            fx.append(vec![Change::Recall { records: vec![record], at: t(day) }]);
        }
    }
    let done = fx.store.maintain_tiers(&fx.ns, t("2030-02-10")).unwrap();
    assert_eq!(done.promoted, [allergy], "three recalls on one day are one day");
    let open = fx.store.at(&fx.ns, ostrakon_engine::ReadAt::latest()).unwrap().open_proposals().unwrap();
    assert_eq!(open[0].reason, "recalled on 3 different days");
}

/// A read at the end of batch `s`.
fn at_seq(s: Seq) -> ostrakon_engine::ReadAt {
    ostrakon_engine::ReadAt {
        known_at: ostrakon_engine::KnownAt::Seq(s),
        ..ostrakon_engine::ReadAt::latest()
    }
}
