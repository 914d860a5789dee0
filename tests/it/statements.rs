//! Statements you can name: every assertion is a statement with its own id (`s…`, never
//! read as a fact's), returned by the write that made it, listed on `Fact.statements`,
//! and withdrawn alone by `retractFact` — the first statement included — while the fact
//! stands on its others. Ending a statement is refused (its validity is its fact's), and
//! nothing is written.

use std::sync::Arc;

use ostrakon_engine::Store;
use ostrakon_graphql::{Limits, OstrakonSchema};
use serde_json::Value;

use crate::common::{gql, gql_error};

fn schema() -> OstrakonSchema {
    ostrakon_graphql::schema(Arc::new(Store::in_memory()), Limits::default())
}

const LIKES: &str =
    r#"{ subject: { name: "Ann" }, predicate: "likes", object: { string: "tea" }, validFrom: "2020" }"#;

async fn assert_likes(schema: &OstrakonSchema, confidence: f64) -> Value {
    let q = format!(
        r#"mutation {{ assertFacts(namespace: "s", facts: [{}]) {{
            seq facts {{ id corroborations }} statements {{ id seq confidence fact {{ id }} live }} }} }}"#,
        LIKES.replace("validFrom", &format!("confidence: {confidence}, validFrom"))
    );
    gql(schema, &q).await["assertFacts"].clone()
}

async fn statements(schema: &OstrakonSchema, fact: &str, seq: Option<u64>) -> Value {
    let at = seq.map(|s| format!(", knownAtSeq: {s}")).unwrap_or_default();
    let q = format!(
        r#"{{ history(namespace: "s", subject: {{ name: "Ann" }}, predicate: "likes"{at}) {{ nodes {{
            id status corroborations confidence statements {{ id seq confidence live withdrawnSeq withdrawnBecause }} }} }} }}"#
    );
    let data = gql(schema, &q).await;
    let nodes = data["history"]["nodes"].as_array().unwrap().clone();
    nodes.into_iter().find(|n| n["id"] == fact).unwrap_or(Value::Null)
}

#[tokio::test]
async fn statement_ids_round_trip_from_write_to_listing_to_a_withdrawal_of_the_first_alone() {
    let schema = schema();
    // The first assertion: a fact, and its first statement, named apart.
    let first = assert_likes(&schema, 0.6).await;
    let fact = first["facts"][0]["id"].as_str().unwrap().to_owned();
    let s1 = first["statements"][0]["id"].as_str().unwrap().to_owned();
    assert_eq!(s1, format!("s{fact}"));
    assert_eq!(first["statements"][0]["fact"]["id"], fact.as_str());
    // The same again: the same fact, a second statement with an id of its own.
    let second = assert_likes(&schema, 0.5).await;
    assert_eq!(second["facts"][0]["id"], fact.as_str());
    assert_eq!(second["facts"][0]["corroborations"], 2);
    let s2 = second["statements"][0]["id"].as_str().unwrap().to_owned();
    assert_ne!(s2, s1);
    assert!(s2.starts_with('s'));
    let both_seq = second["seq"].as_u64().unwrap();
    let listed = statements(&schema, &fact, None).await;
    let ids: Vec<&str> =
        listed["statements"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [s1.as_str(), s2.as_str()]);
    assert_eq!(listed["statements"][0]["confidence"], 0.6);

    // Withdrawing the first statement alone: the fact stands on the second.
    let q = format!(
        r#"mutation {{ retractFact(namespace: "s", fact: "{s1}", reason: "misheard") {{ seq facts {{ id status corroborations }} }} }}"#
    );
    let withdrawn = gql(&schema, &q).await["retractFact"].clone();
    assert_eq!(withdrawn["facts"][0]["status"], "CURRENT");
    assert_eq!(withdrawn["facts"][0]["corroborations"], 1);
    let after = statements(&schema, &fact, None).await;
    assert_eq!(after["status"], "CURRENT");
    assert_eq!(after["statements"][0]["live"], false);
    assert_eq!(after["statements"][0]["withdrawnSeq"], withdrawn["seq"]);
    assert_eq!(after["statements"][0]["withdrawnBecause"], "misheard");
    assert_eq!(after["statements"][1]["live"], true);
    assert_eq!(after["confidence"], 0.5, "only the live statement counts");
    // As known before, both statements stood.
    let before = statements(&schema, &fact, Some(both_seq)).await;
    assert_eq!(before["corroborations"], 2);
    assert!(before["statements"].as_array().unwrap().iter().all(|s| s["live"] == true));

    // Twice is refused, and so is a statement nobody made.
    let again = format!(r#"mutation {{ retractFact(namespace: "s", fact: "{s1}") {{ seq }} }}"#);
    assert_eq!(gql_error(&schema, &again).await, "ALREADY_RETRACTED");
    assert_eq!(
        gql_error(&schema, r#"mutation { retractFact(namespace: "s", fact: "s999") { seq } }"#).await,
        "UNKNOWN_FACT"
    );
    assert_eq!(
        gql_error(&schema, r#"mutation { retractFact(namespace: "s", fact: "sx") { seq } }"#).await,
        "INVALID_VALUE"
    );

    // Ending a statement is refused, by either of its names, and writes nothing.
    let batches = |data: &Value| data["namespace"]["counts"]["batches"].as_u64().unwrap();
    let count = r#"{ namespace(name: "s") { counts { batches } } }"#;
    let n = batches(&gql(&schema, count).await);
    let restated_number = s2.trim_start_matches('s');
    for id in [s2.as_str(), restated_number] {
        let end =
            format!(r#"mutation {{ endFact(namespace: "s", fact: "{id}", validTo: "2030") {{ seq }} }}"#);
        assert_eq!(gql_error(&schema, &end).await, "NOT_A_FACT", "{id}");
    }
    assert_eq!(batches(&gql(&schema, count).await), n);

    // Withdrawing the last statement: nothing supports the fact any more.
    let last =
        format!(r#"mutation {{ retractFact(namespace: "s", fact: "{s2}") {{ facts {{ status }} }} }}"#);
    assert_eq!(gql(&schema, &last).await["retractFact"]["facts"][0]["status"], "RETRACTED");
    // The fact's own id still retracts the whole fact (here: already gone).
    let whole = format!(r#"mutation {{ retractFact(namespace: "s", fact: "{fact}") {{ seq }} }}"#);
    assert_eq!(gql_error(&schema, &whole).await, "ALREADY_RETRACTED");
}

#[tokio::test]
async fn retracting_a_fact_by_its_id_takes_every_statement_with_it() {
    let schema = schema();
    let fact = assert_likes(&schema, 0.9).await["facts"][0]["id"].as_str().unwrap().to_owned();
    assert_likes(&schema, 0.8).await;
    let q = format!(r#"mutation {{ retractFact(namespace: "s", fact: "{fact}") {{ facts {{ status }} }} }}"#);
    assert_eq!(gql(&schema, &q).await["retractFact"]["facts"][0]["status"], "RETRACTED");
    let listed = statements(&schema, &fact, None).await;
    assert!(listed["statements"].as_array().unwrap().iter().all(|s| s["live"] == false), "{listed}");
}
