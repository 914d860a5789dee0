//! Analytics over entity histories through GraphQL, on a hand-made history with its
//! answers written out: supersession, a correction known later, a negation and a
//! contradiction inside the window, and two predicates whose intervals relate. (Their
//! agreement with the naive resolver at every step is in `model.rs`.)

use std::sync::Arc;

use ostrakon_engine::Store;
use ostrakon_engine::core::{TimeZone, Timestamp};
use ostrakon_engine::log::MemStorage;
use ostrakon_graphql::{Access, Limits, OstrakonSchema};
use serde_json::{Value, json};

use crate::common::{gql, gql_error};

fn fact(subject: &str, predicate: &str, object: &str, from: &str, extra: &str) -> String {
    format!(
        r#"{{ subject: {{ name: "{subject}" }}, predicate: "{predicate}", object: {{ entity: {{ name: "{object}" }} }}, validFrom: "{from}" {extra} }}"#
    )
}

async fn assert_facts(schema: &OstrakonSchema, facts: &[String]) -> (u64, Vec<String>) {
    let q = format!(
        r#"mutation {{ assertFacts(namespace: "a", facts: [{}]) {{ seq facts {{ id }} }} }}"#,
        facts.join(", ")
    );
    let data = gql(schema, &q).await;
    let ids = data["assertFacts"]["facts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_owned())
        .collect();
    (data["assertFacts"]["seq"].as_u64().unwrap(), ids)
}

/// The history, and the batch after which the correction and the negation were not yet known.
async fn history() -> (OstrakonSchema, u64) {
    let now = Timestamp::parse("clock", "2030-01-01T00:00:00Z", &TimeZone::Utc).unwrap();
    let store = Arc::new(Store::with_storage(Arc::new(MemStorage::new()), Arc::new(move || now)).unwrap());
    let schema = ostrakon_graphql::schema(store, Limits::default());
    gql(
        &schema,
        r#"mutation { definePredicate(namespace: "a", name: "livesIn", cardinality: ONE) { seq } }"#,
    )
    .await;
    assert_facts(
        &schema,
        &[fact("Alice", "livesIn", "Paris", "2010", ""), fact("Bob", "livesIn", "Paris", "2012", "")],
    )
    .await;
    let (before, london) = assert_facts(&schema, &[fact("Alice", "livesIn", "London", "2015", "")]).await;
    // Known later: Alice moved a year earlier than first said.
    assert_facts(
        &schema,
        &[fact("Alice", "livesIn", "London", "2014", &format!(r#", supersedes: "{}""#, london[0]))],
    )
    .await;
    // Bob was not in Paris during 2016; Carol's city is contradicted (Rome ranks above).
    assert_facts(
        &schema,
        &[
            fact("Bob", "livesIn", "Paris", "2016", r#", validTo: "2017", polarity: NEGATED"#),
            fact("Carol", "livesIn", "Rome", "2013", ", confidence: 0.9"),
            fact("Carol", "livesIn", "Oslo", "2013", ", confidence: 0.6"),
        ],
    )
    .await;
    assert_facts(
        &schema,
        &[
            fact("Alice", "worksAt", "ACME", "2011", r#", validTo: "2016""#),
            fact("Dan", "worksAt", "ACME", "2016", r#", validTo: "2020""#),
            fact("Eve", "worksAt", "ACME", "2019", ""),
            fact("Bob", "manages", "ACME", "2015", r#", validTo: "2018""#),
        ],
    )
    .await;
    (schema, before)
}

fn stretches(lane: &Value) -> Vec<(String, String, Value)> {
    lane["held"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let from = h["valid"]["from"].as_str().unwrap()[..4].to_owned();
            let to = h["valid"]["to"].as_str().map_or(Value::Null, |t| json!(t[..4]));
            (h["value"]["entity"]["name"].as_str().unwrap().to_owned(), from, to)
        })
        .collect()
}

#[tokio::test]
async fn timelines_follow_supersession_corrections_and_negations() {
    let (schema, before) = history().await;
    let q = |extra: &str, who: &str| {
        format!(
            r#"{{ timeline(namespace: "a", entity: {{ name: "{who}" }}, predicates: ["livesIn"] {extra}) {{
                entity {{ name }} lanes {{ predicate held {{ value {{ entity {{ name }} }} valid {{ from to }} factIds facts {{ status }} }} }} }} }}"#
        )
    };
    let now = gql(&schema, &q("", "Alice")).await;
    assert_eq!(now["timeline"]["entity"]["name"], "Alice");
    let lane = &now["timeline"]["lanes"][0];
    assert_eq!(lane["predicate"], "livesIn");
    assert_eq!(
        stretches(lane),
        [("Paris".into(), "2010".into(), json!("2014")), ("London".into(), "2014".into(), Value::Null)]
    );
    let then = gql(&schema, &q(&format!(", knownAtSeq: {before}"), "Alice")).await;
    assert_eq!(
        stretches(&then["timeline"]["lanes"][0]),
        [("Paris".into(), "2010".into(), json!("2015")), ("London".into(), "2015".into(), Value::Null)]
    );
    let bob = gql(&schema, &q("", "Bob")).await;
    assert_eq!(
        stretches(&bob["timeline"]["lanes"][0]),
        [("Paris".into(), "2012".into(), json!("2016")), ("Paris".into(), "2017".into(), Value::Null)]
    );
    let carol = gql(&schema, &q("", "Carol")).await;
    assert_eq!(stretches(&carol["timeline"]["lanes"][0]), [("Rome".into(), "2013".into(), Value::Null)]);
    // Every lane of an entity when none is named, by predicate.
    let all =
        gql(&schema, r#"{ timeline(namespace: "a", entity: { name: "Alice" }) { lanes { predicate } } }"#)
            .await;
    assert_eq!(all["timeline"]["lanes"], json!([{ "predicate": "livesIn" }, { "predicate": "worksAt" }]));
}

#[tokio::test]
async fn durations_series_changes_overlaps_and_aggregates() {
    let (schema, before) = history().await;
    let d = gql(
        &schema,
        r#"{ durations(namespace: "a", entity: { name: "Alice" }, predicate: "livesIn", from: "2010", to: "2020") {
            from to values { value { entity { name } } seconds stretches atEnd } } }"#,
    )
    .await;
    let day = 86_400.0;
    assert_eq!(
        d["durations"]["values"],
        json!([
            { "value": { "entity": { "name": "London" } }, "seconds": 2191.0 * day, "stretches": 1, "atEnd": true },
            { "value": { "entity": { "name": "Paris" } }, "seconds": 1461.0 * day, "stretches": 1, "atEnd": false },
        ])
    );
    let series = |extra: String| {
        format!(
            r#"{{ inForceSeries(namespace: "a", predicate: "livesIn", from: "2010", to: "2019", step: "P1Y" {extra}) {{
                points groups {{ value {{ entity {{ name }} }} counts }} }} }}"#
        )
    };
    let paris = gql(&schema, &series(r#", value: { entity: { name: "Paris" } }"#.into())).await;
    assert_eq!(paris["inForceSeries"]["points"].as_array().unwrap().len(), 9);
    assert_eq!(paris["inForceSeries"]["groups"][0]["counts"], json!([1, 1, 2, 2, 1, 1, 0, 1, 1]));
    let earlier =
        gql(&schema, &series(format!(r#", value: {{ entity: {{ name: "Paris" }} }}, knownAtSeq: {before}"#)))
            .await;
    assert_eq!(earlier["inForceSeries"]["groups"][0]["counts"], json!([1, 1, 2, 2, 2, 1, 1, 1, 1]));
    let cities = gql(&schema, &series(", groupBy: VALUE".into())).await;
    let by_city: std::collections::BTreeMap<String, Value> = cities["inForceSeries"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["value"]["entity"]["name"].as_str().unwrap().to_owned(), g["counts"].clone()))
        .collect();
    assert_eq!(
        by_city,
        [
            ("London".to_owned(), json!([0, 0, 0, 0, 1, 1, 1, 1, 1])),
            ("Paris".to_owned(), json!([1, 1, 2, 2, 1, 1, 0, 1, 1])),
            ("Rome".to_owned(), json!([0, 0, 0, 1, 1, 1, 1, 1, 1])),
        ]
        .into_iter()
        .collect()
    );
    let changes = gql(
        &schema,
        r#"{ changes(namespace: "a", predicate: "livesIn", from: "2010", to: "2019", step: "P1Y", top: 2) {
            counts top { entity { name } changes } } }"#,
    )
    .await;
    assert_eq!(changes["changes"]["counts"], json!([1, 0, 1, 1, 1, 0, 1, 1, 0]));
    assert_eq!(
        changes["changes"]["top"],
        json!([{ "entity": { "name": "Bob" }, "changes": 3 }, { "entity": { "name": "Alice" }, "changes": 2 }])
    );
    let overlaps = |relation: &str| {
        format!(
            r#"{{ overlaps(namespace: "a", a: {{ predicate: "worksAt", value: {{ entity: {{ name: "ACME" }} }} }},
                b: {{ entity: {{ name: "Bob" }}, predicate: "manages", value: {{ entity: {{ name: "ACME" }} }} }}, relation: {relation}) {{
                truncated pairs {{ a {{ subject {{ name }} fact {{ predicate }} }} b {{ subject {{ name }} valid {{ from to }} }} }} }} }}"#
        )
    };
    let names = |data: &Value| -> Vec<String> {
        data["overlaps"]["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["a"]["subject"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let while_bob = gql(&schema, &overlaps("INTERSECTS")).await;
    assert_eq!(names(&while_bob), ["Alice", "Dan"]);
    assert_eq!(while_bob["overlaps"]["truncated"], false);
    assert_eq!(while_bob["overlaps"]["pairs"][0]["a"]["fact"]["predicate"], "worksAt");
    assert_eq!(while_bob["overlaps"]["pairs"][0]["b"]["subject"]["name"], "Bob");
    assert_eq!(names(&gql(&schema, &overlaps("OVERLAPS")).await), ["Alice"]);
    assert_eq!(names(&gql(&schema, &overlaps("OVERLAPPED_BY")).await), ["Dan"]);
    assert_eq!(names(&gql(&schema, &overlaps("AFTER")).await), ["Eve"]);
    assert!(names(&gql(&schema, &overlaps("DURING")).await).is_empty());
    let by_city = gql(
        &schema,
        r#"{ aggregate(namespace: "a", predicate: "livesIn", groupBy: VALUE, validAt: "2015-06-01") { groups { value { entity { name } } count } } }"#,
    )
    .await;
    let mut cities: Vec<(String, u64)> = by_city["aggregate"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["value"]["entity"]["name"].as_str().unwrap().to_owned(), g["count"].as_u64().unwrap()))
        .collect();
    cities.sort();
    assert_eq!(cities, [("London".into(), 1), ("Paris".into(), 1), ("Rome".into(), 1)]);
    // In 2016 Bob's denial holds (no positive fact of his counts): London, Rome, Dan's job.
    let all =
        gql(&schema, r#"{ aggregate(namespace: "a", validAt: "2016-06-01") { groups { count } } }"#).await;
    assert_eq!(all["aggregate"]["groups"], json!([{ "count": 4 }]));
    let by_predicate = gql(&schema, r#"{ aggregate(namespace: "a", groupBy: PREDICATE, validAt: "2016-06-01") { groups { predicate count } } }"#).await;
    assert_eq!(
        by_predicate["aggregate"]["groups"],
        json!([{ "predicate": "livesIn", "count": 2 }, { "predicate": "manages", "count": 1 }, { "predicate": "worksAt", "count": 1 }])
    );
}

#[tokio::test]
async fn bad_analytics_inputs_are_refused_with_their_codes() {
    let (schema, _) = history().await;
    let series = |step: &str, from: &str, to: &str| {
        format!(
            r#"{{ inForceSeries(namespace: "a", predicate: "livesIn", from: "{from}", to: "{to}", step: "{step}") {{ points }} }}"#
        )
    };
    for step in ["1Y", "P", "P0D", "PT", "P1H", "P1.5M"] {
        assert_eq!(gql_error(&schema, &series(step, "2010", "2020")).await, "INVALID_TIME", "{step}");
    }
    assert_eq!(gql_error(&schema, &series("P1Y", "2020", "2010")).await, "INVALID_INTERVAL");
    // 262,992 hourly steps (10,958 days): over the 10,000-step limit, refused before any work.
    let request = async_graphql::Request::new(series("PT1H", "2000", "2030")).data(Access::Local);
    let response = serde_json::to_value(schema.execute(request).await).unwrap();
    assert_eq!(response["errors"][0]["extensions"]["code"], "LIMIT_EXCEEDED");
    assert!(
        response["errors"][0]["message"].as_str().unwrap().contains("262992 steps (at most 10000)"),
        "{response}"
    );
    let unknown = r#"{ timeline(namespace: "a", entity: { name: "Nobody" }) { lanes { predicate } } }"#;
    assert_eq!(gql_error(&schema, unknown).await, "UNKNOWN_ENTITY");
    let window = r#"{ durations(namespace: "a", entity: { name: "Alice" }, predicate: "livesIn", from: "2020", to: "2010") { to } }"#;
    assert_eq!(gql_error(&schema, window).await, "INVALID_INTERVAL");
    let limit = r#"{ overlaps(namespace: "a", a: { predicate: "worksAt" }, b: { predicate: "manages" }, relation: BEFORE, limit: 0) { truncated } }"#;
    assert_eq!(gql_error(&schema, limit).await, "LIMIT_EXCEEDED");
    let top = r#"{ changes(namespace: "a", from: "2010", to: "2020", step: "P1Y", top: 5000) { counts } }"#;
    assert_eq!(gql_error(&schema, top).await, "LIMIT_EXCEEDED");
}
