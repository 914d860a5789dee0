//! Memory dynamics through the GraphQL API: traces, recalls, profiles, salience,
//! inheritance, dormancy and forecasts — and that none of it changes what is true.

use std::sync::Arc;

use ostrakon_engine::Store;
use ostrakon_engine::core::{TimeZone, Timestamp};
use ostrakon_graphql::{Access, OstrakonSchema, ops};
use proptest::prelude::*;
use serde_json::{Value, json};

const DAY0: &str = "2023-04-27T00:00:00Z";

fn day(n: f64) -> String {
    let t = Timestamp::parse("t", DAY0, &TimeZone::Utc).unwrap();
    Timestamp::from_micros(t.as_micros() + (n * 86_400e6) as i64).to_string()
}

fn api() -> (Arc<Store>, OstrakonSchema) {
    crate::common::schema_in_2030()
}

async fn gql(schema: &OstrakonSchema, query: &str, variables: Value) -> Value {
    crate::common::gql_with(schema, query, variables).await
}

/// The namespace's episodes fade by MemoryBank, unit one day, S₀ = 1, Δ = +1, θ = 0.1.
const SEEDS_PROFILE: &str = r#"mutation { configureNamespace(namespace: "m", decay: { episode: {
    model: MEMORY_BANK, unitSeconds: 86400, initialStrength: 1, increment: 1, threshold: 0.1 } }) { name } }"#;

async fn record(schema: &OstrakonSchema, text: &str, born: f64) -> String {
    let data = gql(
        schema,
        "mutation($t: String!, $at: DateTime!) { recordEpisode(namespace: \"m\", episode: { text: $t, occurredAt: $at }) { episode { id } } }",
        json!({ "t": text, "at": day(born) }),
    )
    .await;
    data["recordEpisode"]["episode"]["id"].as_str().unwrap().to_owned()
}

async fn recall(schema: &OstrakonSchema, kind: &str, id: &str, at: f64) {
    let q = format!(
        "mutation($id: ID!, $at: DateTime!) {{ recall(namespace: \"m\", {kind}: [$id], at: $at) {{ seq }} }}"
    );
    gql(schema, &q, json!({ "id": id, "at": day(at) })).await;
}

async fn episode_traces(schema: &OstrakonSchema, at: f64) -> Vec<(f64, f64, bool, u64)> {
    let data = gql(
        schema,
        "query($at: DateTime!) { episodes(namespace: \"m\", at: $at) { nodes { text strength retention dormant recallCount } } }",
        json!({ "at": day(at) }),
    )
    .await;
    data["episodes"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["strength"].as_f64().unwrap(),
                (n["retention"].as_f64().unwrap() * 1000.0).round() / 1000.0,
                n["dormant"].as_bool().unwrap(),
                n["recallCount"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn the_ten_day_scenario_reads_as_memorybank_says() {
    let (_, schema) = api();
    gql(&schema, SEEDS_PROFILE, json!({})).await;
    let births = [0.0, 0.0, 1.0, 2.0, 3.0];
    let recalls: [&[f64]; 5] = [&[1.0, 3.0, 5.0, 8.0], &[], &[2.0, 4.0], &[3.0], &[4.0, 6.0, 7.0, 8.0, 9.0]];
    let mut ids = Vec::new();
    for (i, born) in births.iter().enumerate() {
        ids.push(record(&schema, &format!("memory {i}"), *born).await);
    }
    for (id, days) in ids.iter().zip(recalls) {
        for d in days {
            recall(&schema, "episodes", id, *d).await;
        }
    }
    // Episodes list by time of occurrence; the two day-0 ones by id.
    let day10 = episode_traces(&schema, 10.0).await;
    assert_eq!(
        day10,
        [
            (5.0, 0.670, false, 4),
            (1.0, 0.000, true, 0),
            (3.0, 0.135, false, 2),
            (2.0, 0.030, true, 1),
            (6.0, 0.846, false, 5),
        ]
    );
    // The never-recalled one was still active on day 2 and dormant on day 3.
    assert_eq!(episode_traces(&schema, 2.0).await[1], (1.0, 0.135, false, 0));
    assert_eq!(episode_traces(&schema, 3.0).await[1], (1.0, 0.050, true, 0));
    // A forecast says when: born + ln(1/θ) days = 2.303 days.
    let data = gql(
        &schema,
        r#"{ forecast(namespace: "m", from: "2023-04-27", to: "2023-05-07", kinds: [EPISODE]) { items { dormantAt episode { text } } } }"#,
        json!({}),
    )
    .await;
    let items = data["forecast"]["items"].as_array().unwrap();
    assert_eq!(items[0]["episode"]["text"], "memory 1");
    // The first microsecond below θ: 2.302585 days = 198,943.352035 s after birth.
    let dormant_at = Timestamp::parse("t", items[0]["dormantAt"].as_str().unwrap(), &TimeZone::Utc).unwrap();
    let born = Timestamp::parse("t", DAY0, &TimeZone::Utc).unwrap();
    assert_eq!(dormant_at.as_micros() - born.as_micros(), (10f64.ln() * 86_400e6).ceil() as i64);
    // The recallable feed leaves dormant records out and ranks the rest by retention.
    let data = gql(
        &schema,
        r#"{ recallable(namespace: "m", kinds: [EPISODE], at: "2023-05-07") { basis { at } items { retention episode { text } } } }"#,
        json!({}),
    )
    .await;
    let texts: Vec<&str> = data["recallable"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["episode"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["memory 4", "memory 0", "memory 2"]);
    assert_eq!(data["recallable"]["basis"]["at"], "2023-05-07T00:00:00.000000Z");
}

#[tokio::test]
async fn closed_forms_half_life_and_dormancy_horizon() {
    let (_, schema) = api();
    gql(&schema, SEEDS_PROFILE, json!({})).await;
    let id = record(&schema, "one", 0.0).await;
    let data = gql(
        &schema,
        "query($at: DateTime!) { episodes(namespace: \"m\", at: $at) { nodes { halfLife } } }",
        json!({ "at": day(0.0) }),
    )
    .await;
    // Half-life = S · unit · ln 2, in seconds.
    let half_life = data["episodes"]["nodes"][0]["halfLife"].as_f64().unwrap();
    assert!((half_life - 86_400.0 * std::f64::consts::LN_2).abs() < 1e-6, "{half_life}");
    // With θ = 0.1 an S = 1 memory turns dormant after ln 10 = 2.303 units.
    let horizon = 10f64.ln();
    assert!(!episode_traces(&schema, horizon - 0.001).await[0].2);
    assert!(episode_traces(&schema, horizon + 0.001).await[0].2);
    let _ = id;
    // Keeping R ≥ 0.1 for 7 days needs S ≥ 7 / ln 10 = 3.0401.
    for (s0, dormant) in [(3.0401, false), (3.0400, true)] {
        let (_, schema) = api();
        let profile = format!(
            "mutation {{ configureNamespace(namespace: \"m\", decay: {{ episode: {{ initialStrength: {s0}, threshold: 0.1 }} }}) {{ name }} }}"
        );
        gql(&schema, &profile, json!({})).await;
        record(&schema, "x", 0.0).await;
        assert_eq!(episode_traces(&schema, 7.0).await[0].2, dormant, "S0 = {s0}");
    }
}

#[tokio::test]
async fn actr_activation_matches_the_hand_computed_sum() {
    let (_, schema) = api();
    gql(
        &schema,
        r#"mutation { configureNamespace(namespace: "m", decay: { episode: {
            model: ACT_R, unitSeconds: 86400, actrDecay: 0.5, actrThreshold: 0, actrNoise: 0.4, threshold: 0.1 } }) { name } }"#,
        json!({}),
    )
    .await;
    let id = record(&schema, "a", 0.0).await;
    recall(&schema, "episodes", &id, 1.0).await;
    recall(&schema, "episodes", &id, 3.0).await;
    // At day 4: B = ln(4^-0.5 + 3^-0.5 + 1^-0.5) = ln(0.5 + 0.577350 + 1) = ln(2.077350) = 0.731093;
    // R = 1 / (1 + exp(-(B - 0) / 0.4)) = 1 / (1 + exp(-1.827733)) = 0.861491.
    let b = (4f64.powf(-0.5) + 3f64.powf(-0.5) + 1.0).ln();
    assert!((b - 0.731093).abs() < 1e-6, "{b}");
    let expected = 1.0 / (1.0 + (-(b / 0.4)).exp());
    assert!((expected - 0.861491).abs() < 1e-6, "{expected}");
    let data = gql(
        &schema,
        "query($at: DateTime!) { episodes(namespace: \"m\", at: $at) { nodes { retention strength } } }",
        json!({ "at": day(4.0) }),
    )
    .await;
    let node = &data["episodes"]["nodes"][0];
    assert!((node["retention"].as_f64().unwrap() - expected).abs() < 1e-12, "{node}");
    assert_eq!(node["strength"].as_f64().unwrap(), 3.0, "presentations: birth and two recalls");
}

#[tokio::test]
async fn diminishing_increments_override_and_salience() {
    let (_, schema) = api();
    gql(
        &schema,
        r#"mutation {
            configureNamespace(namespace: "m", decay: { fact: { initialStrength: 1 }, episode: { initialStrength: 2, diminishing: true } }) { name }
            definePredicate(namespace: "m", name: "likes", cardinality: MANY, decay: { initialStrength: 10 }) { seq }
        }"#,
        json!({}),
    )
    .await;
    // Diminishing: S = 2 → 2 + 1/ln(2 + e) → … after two recalls.
    let id = record(&schema, "d", 0.0).await;
    recall(&schema, "episodes", &id, 1.0).await;
    recall(&schema, "episodes", &id, 2.0).await;
    let s1 = 2.0 + 1.0 / (2.0 + std::f64::consts::E).ln();
    let s2 = s1 + 1.0 / (s1 + std::f64::consts::E).ln();
    let strength = episode_traces(&schema, 3.0).await[0].0;
    assert!((strength - s2).abs() < 1e-12, "{strength} vs {s2}");
    // The predicate's own profile beats the namespace's; importance and correction raise S₀.
    let data = gql(
        &schema,
        r#"mutation { assertFacts(namespace: "m", facts: [
            { subject: { name: "Ann" }, predicate: "likes", object: { string: "tea" }, validFrom: "2023-04-27" }
            { subject: { name: "Ann" }, predicate: "knows", object: { string: "Bo" }, validFrom: "2023-04-27" }
            { subject: { name: "Ann" }, predicate: "knows", object: { string: "Cy" }, validFrom: "2023-04-27", importance: 0.5 }
            { subject: { name: "Ann" }, predicate: "knows", object: { string: "Di" }, validFrom: "2023-04-27", correction: true }
        ]) { facts { strength importance correction } } }"#,
        json!({}),
    )
    .await;
    let strengths: Vec<f64> = data["assertFacts"]["facts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["strength"].as_f64().unwrap())
        .collect();
    assert_eq!(strengths, [10.0, 1.0, 3.0, 5.0]);
    // A profile that makes no curve is refused, naming the field.
    let response = schema
        .execute(
            async_graphql::Request::new(
                r#"mutation { configureNamespace(namespace: "m", decay: { fact: { initialStrength: -1 } }) { name } }"#,
            )
            .data(Access::Local),
        )
        .await;
    assert!(response.errors[0].message.contains("decay.fact.initialStrength"), "{:?}", response.errors);
}

#[tokio::test]
async fn a_correction_and_the_next_value_inherit_what_they_replace() {
    let (_, schema) = api();
    gql(
        &schema,
        r#"mutation {
            configureNamespace(namespace: "m", decay: { fact: { initialStrength: 1 } }) { name }
            definePredicate(namespace: "m", name: "worksAt", cardinality: ONE) { seq }
        }"#,
        json!({}),
    )
    .await;
    let fact = |data: &Value| data["assertFacts"]["facts"][0]["id"].as_str().unwrap().to_owned();
    let first = fact(
        &gql(&schema, r#"mutation { assertFacts(namespace: "m", facts: [{ subject: { name: "Ann" }, predicate: "worksAt", object: { string: "Acme" }, validFrom: "2023-04-27" }]) { facts { id } } }"#, json!({})).await,
    );
    recall(&schema, "facts", &first, 1.0).await;
    recall(&schema, "facts", &first, 2.0).await;
    // The next employer, and a correction of it: both carry the recalls of "where Ann works".
    let next = fact(
        &gql(&schema, r#"mutation { assertFacts(namespace: "m", facts: [{ subject: { name: "Ann" }, predicate: "worksAt", object: { string: "Globex" }, validFrom: "2023-04-30" }]) { facts { id } } }"#, json!({})).await,
    );
    let corrected = fact(
        &gql(&schema, &format!(r#"mutation {{ assertFacts(namespace: "m", facts: [{{ subject: {{ name: "Ann" }}, predicate: "worksAt", object: {{ string: "Initech" }}, validFrom: "2023-04-30", supersedes: "{next}" }}]) {{ facts {{ id }} }} }}"#), json!({})).await,
    );
    let data = gql(
        &schema,
        "query($at: DateTime!) { history(namespace: \"m\", subject: { name: \"Ann\" }, predicate: \"worksAt\", at: $at) { nodes { id recallCount strength status } } }",
        json!({ "at": day(5.0) }),
    )
    .await;
    let by_id = |id: &str| {
        data["history"]["nodes"].as_array().unwrap().iter().find(|n| n["id"] == id).unwrap().clone()
    };
    assert_eq!(
        (by_id(&first)["recallCount"].as_u64(), by_id(&first)["strength"].as_f64()),
        (Some(2), Some(3.0))
    );
    assert_eq!(
        (by_id(&next)["recallCount"].as_u64(), by_id(&next)["strength"].as_f64()),
        (Some(2), Some(3.0))
    );
    assert_eq!(by_id(&corrected)["recallCount"].as_u64(), Some(2));
    assert_eq!(by_id(&corrected)["status"], "CURRENT");
}

/// Everything a read says is true, as text, without any trace field.
async fn truth(schema: &OstrakonSchema) -> String {
    let mut out = String::new();
    for valid_at in ["2001", "2005", "2010", "2015", "2030"] {
        let data = gql(
            schema,
            "query($v: DateTime!) { snapshot(namespace: \"p\", validAt: $v, first: 1000) { nodes { id status effective { from to } } }
               facts(namespace: \"p\", predicate: \"livesIn\", includeAll: true, validAt: $v) { nodes { id status reason valid { from to } } }
               history(namespace: \"p\", subject: { name: \"s0\" }, predicate: \"worksAt\", validAt: $v) { nodes { id status reason supersededBy { id } } } }",
            json!({ "v": valid_at }),
        )
        .await;
        out.push_str(&data.to_string());
    }
    out
}

fn fact_line(subject: u8, predicate: &str, object: u8, from: u8, to: Option<u8>) -> String {
    let to =
        to.map(|t| format!(r#","validTo":"{}""#, 2000 + u32::from(from) + u32::from(t))).unwrap_or_default();
    format!(
        r#"{{"namespace":"p","op":"assertFacts","facts":[{{"subject":{{"name":"s{subject}"}},"predicate":"{predicate}","object":{{"entity":{{"name":"o{object}"}}}},"validFrom":"{}"{to}}}]}}"#,
        2000 + u32::from(from)
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Adding any recalls or changing any profile never changes an as-of, history or
    /// snapshot answer.
    #[test]
    fn decay_never_changes_truth(
        facts in proptest::collection::vec((0..3u8, 0..2u8, 0..3u8, 0..25u8, proptest::option::of(1..10u8)), 1..25),
        recalls in proptest::collection::vec((1..30u16, 0..3000u16), 0..20),
        profile in (0.5..50.0f64, 0.0..0.9f64, proptest::bool::ANY),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(async {
            let (store, schema) = api();
            for line in [
                r#"{"namespace":"p","op":"definePredicate","name":"livesIn","cardinality":"ONE"}"#.to_owned(),
                r#"{"namespace":"p","op":"definePredicate","name":"worksAt","cardinality":"ONE"}"#.to_owned(),
            ] {
                ops::apply_line(&schema, &store, &line).await.unwrap();
            }
            ops::apply_line(&schema, &store, &fact_line(0, "worksAt", 0, 0, None)).await.unwrap();
            for (s, p, o, from, len) in &facts {
                let predicate = ["livesIn", "worksAt"][*p as usize];
                ops::apply_line(&schema, &store, &fact_line(*s, predicate, *o, *from, *len)).await.unwrap();
            }
            let before = truth(&schema).await;
            let fact_count = facts.len() as u16;
            for (fact, minutes) in &recalls {
                let line = format!(
                    r#"{{"namespace":"p","op":"recall","facts":["{}"],"entities":["1"],"at":"2023-01-01T00:{:02}:00Z"}}"#,
                    1 + fact % fact_count,
                    minutes % 60
                );
                ops::apply_line(&schema, &store, &line).await.unwrap();
            }
            let (s0, threshold, actr) = profile;
            let model = if actr { "ACT_R" } else { "MEMORY_BANK" };
            ops::apply_line(&schema, &store, &format!(
                r#"{{"namespace":"p","op":"configureNamespace","decay":{{"default":{{"model":"{model}","initialStrength":{s0},"threshold":{threshold}}}}}}}"#
            )).await.unwrap();
            ops::apply_line(&schema, &store, &format!(
                r#"{{"namespace":"p","op":"definePredicate","name":"livesIn","cardinality":"ONE","decay":{{"initialStrength":{s0}}}}}"#
            )).await.unwrap();
            let after = truth(&schema).await;
            assert_eq!(before, after);
        });
    }
}

#[tokio::test]
async fn consolidation_merges_duplicates_once_and_reads_follow_the_merge() {
    let (_, schema) = api();
    // "Annie" is extracted with the alias "Ann Lee", who already exists: two entities, one
    // person. "Paris Hilton" has the alias "Paris" but is a person, the city is not.
    gql(
        &schema,
        r#"mutation {
            a: recordEpisode(namespace: "m", episode: { text: "Ann Lee lives in Oslo", occurredAt: "2023-04-27" },
                entities: [{ name: "Ann Lee", kind: "person" }],
                facts: [{ subject: { name: "Ann Lee" }, predicate: "livesIn", object: { string: "Oslo" }, validFrom: "2020" }]) { seq }
            b: recordEpisode(namespace: "m", episode: { text: "Annie, in Oslo, works at Acme", occurredAt: "2023-04-28" },
                entities: [{ name: "Annie", aliases: ["Ann Lee"], kind: "person" }],
                facts: [
                    { subject: { name: "Annie" }, predicate: "livesIn", object: { string: "Oslo" }, validFrom: "2020" }
                    { subject: { name: "Annie" }, predicate: "worksAt", object: { string: "Acme" }, validFrom: "2021" }
                ]) { seq }
            c: recordEpisode(namespace: "m", episode: { text: "Paris Hilton visited Paris", occurredAt: "2023-04-29" },
                entities: [{ name: "Paris", kind: "city" }, { name: "Paris Hilton", aliases: ["Paris"], kind: "person" }]) { seq }
        }"#,
        json!({}),
    )
    .await;
    let before = gql(&schema, r#"{ namespace(name: "m") { counts { batches entities } } }"#, json!({})).await;
    assert_eq!(before["namespace"]["counts"], json!({ "batches": 3, "entities": 4 }));
    let consolidate = r#"mutation { consolidate(namespace: "m", at: "2023-05-01") {
        seq merged { from { id name } into { id name aliases } }
        corroborated { fact { id predicate corroborations provenance { text } } statements } } }"#;
    let first = gql(&schema, consolidate, json!({})).await;
    assert_eq!(
        first["consolidate"],
        json!({
            "seq": 4,
            "merged": [{ "from": { "id": "2", "name": "Annie" }, "into": { "id": "1", "name": "Ann Lee", "aliases": ["Annie"] } }],
            "corroborated": [{
                "fact": { "id": "1", "predicate": "livesIn", "corroborations": 2,
                          "provenance": [{ "text": "Ann Lee lives in Oslo" }, { "text": "Annie, in Oslo, works at Acme" }] },
                "statements": 2
            }]
        })
    );
    // Running it again finds nothing and writes nothing.
    let second = gql(&schema, consolidate, json!({})).await;
    assert_eq!(second["consolidate"], json!({ "seq": null, "merged": [], "corroborated": [] }));
    let after = gql(&schema, r#"{ namespace(name: "m") { counts { batches } } }"#, json!({})).await;
    assert_eq!(after["namespace"]["counts"]["batches"], 4);
    // Reads by either old id reach the merged entity; its facts are both entities' facts.
    for id in ["1", "2"] {
        let data = gql(
            &schema,
            "query($id: ID!) { entity(namespace: \"m\", id: $id, validAt: \"2022\") { id name facts { id predicate object { string } corroborations } } }",
            json!({ "id": id }),
        )
        .await;
        assert_eq!(
            data["entity"],
            json!({ "id": "1", "name": "Ann Lee", "facts": [
                { "id": "1", "predicate": "livesIn", "object": { "string": "Oslo" }, "corroborations": 2 },
                { "id": "3", "predicate": "worksAt", "object": { "string": "Acme" }, "corroborations": 1 }
            ] }),
            "by id {id}"
        );
    }
    // Both histories survive: as known before the merge, Annie stood apart.
    let then = gql(
        &schema,
        r#"{ entity(namespace: "m", id: "2", validAt: "2022", knownAtSeq: 3) { name facts { id corroborations } } }"#,
        json!({}),
    )
    .await;
    assert_eq!(
        then["entity"],
        json!({ "name": "Annie", "facts": [{ "id": "2", "corroborations": 1 }, { "id": "3", "corroborations": 1 }] })
    );
    // Names follow the merge too; the city and the heiress stay apart.
    let named = gql(&schema, r#"{ a: entities(namespace: "m", name: "annie") { nodes { id } } p: entities(namespace: "m", name: "paris") { nodes { id kind } } }"#, json!({})).await;
    assert_eq!(named["a"]["nodes"], json!([{ "id": "1" }]));
    assert_eq!(named["p"]["nodes"], json!([{ "id": "3", "kind": "city" }, { "id": "4", "kind": "person" }]));
}
