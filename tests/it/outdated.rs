//! What an episode stated that no longer holds, through the GraphQL API: the episode
//! carries the mark (with what replaced it, and since when) in search hits and in the
//! context block; read at the present, the episode behind the new value ranks above the
//! old one; read as of a day when the old value held, there is no mark.

use ostrakon_graphql::OstrakonSchema;
use serde_json::{Value, json};

use crate::common::gql_with as gql;

fn api() -> OstrakonSchema {
    crate::common::schema_in_2030().1
}

const RECORD: &str = "mutation($ns: String!, $text: String!, $at: DateTime!, $facts: [FactInput!]!) {
    recordEpisode(namespace: $ns, episode: { text: $text, occurredAt: $at, thread: \"chat\" }, facts: $facts) {
      facts { id } } }";

async fn say(schema: &OstrakonSchema, ns: &str, text: &str, at: &str, facts: Value) -> Vec<String> {
    let data = gql(schema, RECORD, json!({ "ns": ns, "text": text, "at": at, "facts": facts })).await;
    data["recordEpisode"]["facts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_owned())
        .collect()
}

fn lives(city: &str, from: &str) -> Value {
    json!({ "subject": { "name": "Maya" }, "predicate": "livesIn", "object": { "string": city }, "validFrom": from })
}

const ASK: &str = "query($ns: String!, $q: String!, $validAt: DateTime) {
    search(namespace: $ns, text: $q, limit: 5, validAt: $validAt, filter: { kinds: [EPISODE] }) {
      hits { explain { newer } episode { text outdated { status since note replacedBy { object { string } } } } } }
    context(namespace: $ns, message: $q, budget: 400, validAt: $validAt) {
      text search { hits { explain { newer } episode { text } } } } }";

/// Maya lived in Lyon, then moved to Porto; a third episode about her day sits between.
async fn moved(schema: &OstrakonSchema) {
    gql(
        schema,
        r#"mutation { definePredicate(namespace: "m", name: "livesIn", cardinality: ONE) { seq } }"#,
        json!({}),
    )
    .await;
    say(
        schema,
        "m",
        "Maya: I live in Lyon now, in a flat by the river.",
        "2029-01-10T18:00:00Z",
        json!([lives("Lyon", "2029-01-10T18:00:00Z")]),
    )
    .await;
    say(schema, "m", "Maya: The market by the river was lovely today.", "2029-03-01T18:00:00Z", json!([]))
        .await;
    say(
        schema,
        "m",
        "Maya: Big news, I moved to Porto last week.",
        "2029-06-02T18:00:00Z",
        json!([lives("Porto", "2029-06-02T18:00:00Z")]),
    )
    .await;
}

fn texts(answer: &Value) -> Vec<&str> {
    answer["search"]["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["episode"]["text"].as_str().unwrap())
        .collect()
}

fn hit<'a>(answer: &'a Value, starts: &str) -> &'a Value {
    answer["search"]["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["episode"]["text"].as_str().unwrap().starts_with(starts))
        .unwrap()
}

#[tokio::test]
async fn an_episode_whose_statement_was_replaced_says_so_and_ranks_below_the_new_one() {
    let schema = api();
    moved(&schema).await;
    // The question's words are Lyon's: by them alone the old episode ranks first.
    let now =
        gql(&schema, ASK, json!({ "ns": "m", "q": "Does Maya live in a flat in Lyon by the river?" })).await;
    let order = texts(&now);
    let (lyon, porto) = (
        order.iter().position(|t| t.contains("Lyon")).unwrap(),
        order.iter().position(|t| t.contains("Porto")).unwrap(),
    );
    assert!(porto < lyon, "the new value comes first: {order:?}");
    let old = hit(&now, "Maya: I live in Lyon");
    let mark = &old["episode"]["outdated"][0];
    assert_eq!(mark["status"], "SUPERSEDED");
    assert_eq!(mark["since"], "2029-06-02T18:00:00.000000Z");
    assert_eq!(mark["replacedBy"][0]["object"]["string"], "Porto");
    assert!(hit(&now, "Maya: Big news")["episode"]["outdated"].as_array().unwrap().is_empty());
    // In the block's search (every kind, the fact in force first) the Porto episode
    // ranked below Lyon by its words, and was lifted: the explanation says so.
    let lifted = now["context"]["search"]["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["episode"]["text"].as_str().is_some_and(|t| t.contains("Porto")))
        .unwrap();
    assert!(lifted["explain"]["newer"].as_f64().unwrap() > 1.0, "{now}");
    let block = now["context"]["text"].as_str().unwrap();
    let line = block.lines().find(|l| l.contains("I live in Lyon")).unwrap();
    assert!(
        line.ends_with(
            r#"[no longer holds: Maya lives in "Lyon" (superseded on 2029-06-02 by: Maya lives in "Porto")]"#
        ),
        "{block}"
    );
    assert!(block.find("moved to Porto").unwrap() < block.find("I live in Lyon").unwrap(), "{block}");

    // As of April 2029 Lyon held: no mark, no lift, and the move is later than the day.
    let then = gql(
        &schema,
        ASK,
        json!({ "ns": "m", "q": "Where does Maya live? Lyon?", "validAt": "2029-04-01T00:00:00Z" }),
    )
    .await;
    assert!(
        hit(&then, "Maya: I live in Lyon")["episode"]["outdated"].as_array().unwrap().is_empty(),
        "{then}"
    );
    assert!(
        then["search"]["hits"].as_array().unwrap().iter().all(|h| h["explain"]["newer"] == 1.0),
        "{then}"
    );
    let block = then["context"]["text"].as_str().unwrap();
    assert!(!block.contains("no longer holds"), "{block}");
    assert!(block.contains("later than 2029-04-01] Maya: Big news"), "{block}");
}

#[tokio::test]
async fn corrections_denials_and_ends_are_marked_each_in_its_words() {
    let schema = api();
    let birthday = |day: &str| json!({ "subject": { "name": "Ben" }, "predicate": "birthday", "object": { "string": day }, "validFrom": "2029-01-01" });
    gql(
        &schema,
        r#"mutation { definePredicate(namespace: "c", name: "birthday", cardinality: ONE) { seq } }"#,
        json!({}),
    )
    .await;
    let wrong = say(
        &schema,
        "c",
        "Ben: My birthday is March 3.",
        "2029-03-01T20:00:00Z",
        json!([birthday("March 3")]),
    )
    .await;
    let mut right = birthday("March 13");
    right["supersedes"] = json!(wrong[0]);
    say(&schema, "c", "Ben: Sorry, I mistyped: it is March 13.", "2029-03-02T20:00:00Z", json!([right]))
        .await;

    let likes = |polarity: &str, from: &str| json!({ "subject": { "name": "Omar" }, "predicate": "likes", "object": { "string": "coffee" }, "validFrom": from, "polarity": polarity });
    say(
        &schema,
        "c",
        "Omar: I love coffee.",
        "2029-02-01T08:00:00Z",
        json!([likes("ASSERTED", "2029-02-01")]),
    )
    .await;
    say(
        &schema,
        "c",
        "Omar: I can't stand coffee any more.",
        "2029-08-01T08:00:00Z",
        json!([likes("NEGATED", "2029-08-01")]),
    )
    .await;

    let member = json!({ "subject": { "name": "Nora" }, "predicate": "memberOf", "object": { "string": "chess club" }, "validFrom": "2029-01-14" });
    let joined =
        say(&schema, "c", "Nora: I joined the chess club.", "2029-01-14T19:00:00Z", json!([member])).await;
    gql(
        &schema,
        &format!(
            r#"mutation {{ endFact(namespace: "c", fact: "{}", validTo: "2029-05-01") {{ seq }} }}"#,
            joined[0]
        ),
        json!({}),
    )
    .await;

    let answer =
        gql(&schema, ASK, json!({ "ns": "c", "q": "Ben's birthday, Omar and coffee, Nora's chess club" }))
            .await;
    let mut marks: Vec<(String, String)> = answer["search"]["hits"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|h| h["episode"]["outdated"].as_array().unwrap().clone())
        .map(|m| (m["status"].as_str().unwrap().to_owned(), m["note"].as_str().unwrap().to_owned()))
        .collect();
    marks.sort();
    let expected = [
        ("ENDED", r#"no longer holds: Nora member of "chess club" (ended on 2029-05-01)"#),
        (
            "NEGATED",
            r#"no longer holds: Omar likes "coffee" (denied on 2029-08-01 by: Omar not likes "coffee")"#,
        ),
        ("RETRACTED", r#"no longer holds: Ben birthday "March 3" (corrected by: Ben birthday "March 13")"#),
    ];
    assert_eq!(marks, expected.map(|(s, n)| (s.to_owned(), n.to_owned())), "{answer}");
    // The newer statements carry no mark.
    for h in answer["search"]["hits"].as_array().unwrap() {
        let text = h["episode"]["text"].as_str().unwrap();
        if text.contains("March 13") || text.contains("can't stand") {
            assert!(h["episode"]["outdated"].as_array().unwrap().is_empty(), "{text}");
        }
    }
}
