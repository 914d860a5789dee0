//! The memory as RDF 1.2 and SPARQL: on a hand-made history (a correction known later,
//! an end, a retraction, a negation, a contradiction, literals of every type, a predicate
//! name that needs encoding), SPARQL answers equal the GraphQL answers at every read
//! point, in the in-force view and the history view; the `/sparql` endpoint follows the
//! SPARQL 1.1 Protocol (methods, content types, negotiation) with typed errors, tokens
//! and limits; `ostrakon export --format nquads|turtle` writes RDF 1.2 that parses back to
//! the same statements.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt as _;
use ostrakon_engine::core::{Namespace, TimeZone, Timestamp};
use ostrakon_engine::{ReadAt, Store, log::MemStorage};
use ostrakon_graphql::{Access, Limits, OstrakonSchema};
use ostrakon_server::{AppState, Config, app};
use serde_json::{Value, json};

use crate::common::{gql, gql_error};
use tower::ServiceExt as _;

const BASE: &str = "urn:ostrakon:r:";

/// Asserts facts; returns the batch and the facts' ids.
async fn assert_facts(schema: &OstrakonSchema, facts: &[&str]) -> (u64, Vec<String>) {
    let q = format!(
        r#"mutation {{ assertFacts(namespace: "r", facts: [{}]) {{ seq facts {{ id }} }} }}"#,
        facts.join(", ")
    );
    let data = gql(schema, &q).await;
    let ids =
        data["assertFacts"]["facts"].as_array().unwrap().iter().map(|f| f["id"].as_str().unwrap().to_owned());
    (data["assertFacts"]["seq"].as_u64().unwrap(), ids.collect())
}

fn lives(subject: &str, city: &str, from: &str, extra: &str) -> String {
    format!(
        r#"{{ subject: {{ name: "{subject}" }}, predicate: "livesIn", object: {{ entity: {{ name: "{city}" }} }}, validFrom: "{from}" {extra} }}"#
    )
}

/// The story; returns the schema and the last batch.
async fn story() -> (Arc<Store>, OstrakonSchema, u64) {
    let now = Timestamp::parse("clock", "2030-01-01T00:00:00Z", &TimeZone::Utc).unwrap();
    let store = Arc::new(Store::with_storage(Arc::new(MemStorage::new()), Arc::new(move || now)).unwrap());
    let schema = ostrakon_graphql::schema(Arc::clone(&store), Limits::default());
    gql(
        &schema,
        r#"mutation { definePredicate(namespace: "r", name: "livesIn", cardinality: ONE) { seq } }"#,
    )
    .await;
    let alice = |predicate: &str, object: &str, from: &str| {
        format!(
            r#"{{ subject: {{ name: "Alice" }}, predicate: "{predicate}", object: {{ {object} }}, validFrom: "{from}" }}"#
        )
    };
    let (_, literals) = assert_facts(
        &schema,
        &[
            &lives("Alice", "Paris", "2010", ""),
            &lives("Bob", "Paris", "2012", ""),
            &lives("Dan", "Berlin", "2011", ""),
            &alice("favourite number", "integer: 7", "2011"),
            &alice("height", "float: 1.68", "2015"),
            &alice("vegan", "boolean: true", "2018"),
            &alice("born", r#"time: "1990-05-01T10:00:00Z""#, "1990"),
            &alice("nickname", r#"string: "Al \"the\" ace""#, "2000"),
        ],
    )
    .await;
    gql(
        &schema,
        r#"mutation { recordEpisode(namespace: "r", episode: { text: "Eve moved to Paris", occurredAt: "2011-02-01" },
             entities: [{ name: "Paris", kind: "city", aliases: ["Lutetia"] }],
             facts: [{ subject: { name: "Eve" }, predicate: "livesIn", object: { entity: { name: "Paris" } }, validFrom: "2011" }]) { seq } }"#,
    )
    .await;
    let (_, london) = assert_facts(&schema, &[&lives("Alice", "London", "2015", "")]).await;
    assert_facts(&schema, &[&lives("Alice", "London", "2014", &format!(r#", supersedes: "{}""#, london[0]))])
        .await;
    assert_facts(
        &schema,
        &[
            &lives("Bob", "Paris", "2016", r#", validTo: "2017", polarity: NEGATED"#),
            &lives("Carol", "Rome", "2013", ", confidence: 0.9"),
            &lives("Carol", "Oslo", "2013", ", confidence: 0.6"),
        ],
    )
    .await;
    gql(
        &schema,
        &format!(
            r#"mutation {{ endFact(namespace: "r", fact: "{}", validTo: "2019") {{ seq }} }}"#,
            literals[3]
        ),
    )
    .await;
    let last = gql(
        &schema,
        &format!(
            r#"mutation {{ retractFact(namespace: "r", fact: "{}", reason: "never") {{ seq }} }}"#,
            literals[2]
        ),
    )
    .await["retractFact"]["seq"]
        .as_u64()
        .unwrap();
    (store, schema, last)
}

/// An instant as microseconds, however it is written.
fn micros(text: &str) -> i64 {
    Timestamp::parse("t", text, &TimeZone::Utc).unwrap().as_micros()
}

/// A GraphQL value as text: `e:{id}`, `s:…`, `i:…`, `f:…`, `b:…`, `t:{micros}`.
fn graphql_value(v: &Value) -> String {
    if let Some(id) = v["entity"]["id"].as_str() {
        return format!("e:{id}");
    }
    if let Some(t) = v["time"].as_str() {
        return format!("t:{}", micros(t));
    }
    for (kind, field) in [("s", "string"), ("i", "integer"), ("b", "boolean")] {
        if !v[field].is_null() {
            return format!(
                "{kind}:{}",
                v[field].as_str().map_or_else(|| v[field].to_string(), str::to_owned)
            );
        }
    }
    format!("f:{}", v["float"].as_f64().unwrap())
}

fn decode(encoded: &str) -> String {
    let bytes = encoded.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            out.push(u8::from_str_radix(&encoded[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// A SPARQL JSON term as the same text.
fn sparql_value(term: &Value) -> String {
    let value = term["value"].as_str().unwrap();
    if term["type"] == "uri" {
        return format!("e:{}", value.strip_prefix(&format!("{BASE}entity:")).unwrap());
    }
    let xsd = |t: &str| format!("http://www.w3.org/2001/XMLSchema#{t}");
    let datatype = term["datatype"].as_str().map_or_else(|| xsd("string"), str::to_owned);
    if datatype == xsd("string") {
        format!("s:{value}")
    } else if datatype == xsd("integer") {
        format!("i:{value}")
    } else if datatype == xsd("double") {
        format!("f:{}", value.parse::<f64>().unwrap())
    } else if datatype == xsd("boolean") {
        format!("b:{value}")
    } else if datatype == xsd("dateTime") {
        format!("t:{}", micros(value))
    } else {
        panic!("unexpected datatype {datatype}")
    }
}

fn predicate_name(term: &Value) -> String {
    decode(term["value"].as_str().unwrap().strip_prefix(&format!("{BASE}predicate:")).unwrap())
}

fn local(term: &Value, kind: &str) -> String {
    term["value"].as_str().unwrap().strip_prefix(&format!("{BASE}{kind}:")).unwrap().to_owned()
}

/// The bindings of a SELECT run through GraphQL's `sparql`.
async fn select(schema: &OstrakonSchema, query: &str, view: &str, point: &str) -> Vec<Value> {
    let q = format!(
        "query($q: String!) {{ sparql(namespace: \"r\", query: $q, view: {view} {point}) {{ form results basis {{ seq }} }} }}"
    );
    let request = async_graphql::Request::new(q)
        .variables(async_graphql::Variables::from_json(json!({ "q": query })))
        .data(Access::Local);
    let response = serde_json::to_value(schema.execute(request).await).unwrap();
    assert!(response["errors"].is_null(), "{query}\n{response}");
    assert_eq!(response["data"]["sparql"]["form"], "SOLUTIONS");
    response["data"]["sparql"]["results"]["results"]["bindings"].as_array().unwrap().clone()
}

const PREDICATES: [&str; 6] = ["livesIn", "favourite number", "height", "vegan", "born", "nickname"];
const VALID_TIMES: [&str; 9] =
    ["1995", "2010-06", "2013-06", "2014-06", "2015-06", "2016-06", "2017-06", "2019-06", "2025"];

#[tokio::test]
async fn sparql_answers_equal_graphql_at_every_read_point_in_both_views() {
    let (_store, schema, last) = story().await;
    for seq in 1..=last {
        for valid_at in VALID_TIMES {
            let point = format!(r#", validAt: "{valid_at}", knownAtSeq: {seq}"#);
            // In force: the snapshot, as triples.
            let q = format!(
                "{{ snapshot(namespace: \"r\", first: 1000 {point}) {{ edges {{ node {{ subject {{ id }} predicate \
                 object {{ entity {{ id }} string integer float boolean time }} }} }} }} }}"
            );
            let graphql: BTreeSet<(String, String, String)> = gql(&schema, &q).await["snapshot"]["edges"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| {
                    let n = &e["node"];
                    (
                        n["subject"]["id"].as_str().unwrap().to_owned(),
                        n["predicate"].as_str().unwrap().to_owned(),
                        graphql_value(&n["object"]),
                    )
                })
                .collect();
            let triples = "SELECT ?s ?p ?o WHERE { ?s ?p ?o FILTER(STRSTARTS(STR(?p), STR(p:))) }";
            for view in ["IN_FORCE", "HISTORY"] {
                let sparql: BTreeSet<(String, String, String)> = select(&schema, triples, view, &point)
                    .await
                    .iter()
                    .map(|b| (local(&b["s"], "entity"), predicate_name(&b["p"]), sparql_value(&b["o"])))
                    .collect();
                assert_eq!(sparql, graphql, "{view} at {point}");
            }

            // History: every fact known at S with its status at T, confidence and stretches.
            let mut graphql = BTreeSet::new();
            let mut stretches = BTreeSet::new();
            for predicate in PREDICATES {
                let q = format!(
                    "{{ facts(namespace: \"r\", predicate: \"{predicate}\", includeAll: true, first: 1000 {point}) {{ nodes {{ \
                     id subject {{ id }} object {{ entity {{ id }} string integer float boolean time }} status confidence \
                     polarity effective {{ from to }} }} }} }}"
                );
                for n in gql(&schema, &q).await["facts"]["nodes"].as_array().unwrap() {
                    let id = n["id"].as_str().unwrap().to_owned();
                    graphql.insert((
                        id.clone(),
                        n["subject"]["id"].as_str().unwrap().to_owned(),
                        predicate.to_owned(),
                        graphql_value(&n["object"]),
                        n["status"].as_str().unwrap().to_owned(),
                        n["confidence"].as_f64().unwrap().to_string(),
                        n["polarity"] == "NEGATED",
                    ));
                    for e in n["effective"].as_array().unwrap() {
                        stretches.insert((
                            id.clone(),
                            micros(e["from"].as_str().unwrap()),
                            e["to"].as_str().map(micros),
                        ));
                    }
                }
            }
            let q = "SELECT ?f ?s ?p ?o ?status ?c ?neg WHERE { ?f rdf:reifies <<( ?s ?p ?o )>> ; mn:status ?status ; \
                     mn:confidence ?c OPTIONAL { ?f mn:negated ?neg } }";
            let sparql: BTreeSet<_> = select(&schema, q, "HISTORY", &point)
                .await
                .iter()
                .map(|b| {
                    (
                        local(&b["f"], "fact"),
                        local(&b["s"], "entity"),
                        predicate_name(&b["p"]),
                        sparql_value(&b["o"]),
                        b["status"]["value"].as_str().unwrap().to_owned(),
                        b["c"]["value"].as_str().unwrap().parse::<f64>().unwrap().to_string(),
                        b["neg"]["value"] == "true",
                    )
                })
                .collect();
            assert_eq!(sparql, graphql, "history at {point}");
            let q =
                "SELECT ?f ?from ?to WHERE { ?f mn:inForce ?b . ?b mn:from ?from OPTIONAL { ?b mn:to ?to } }";
            let sparql: BTreeSet<_> = select(&schema, q, "HISTORY", &point)
                .await
                .iter()
                .map(|b| {
                    (
                        local(&b["f"], "fact"),
                        micros(b["from"]["value"].as_str().unwrap()),
                        b["to"]["value"].as_str().map(micros),
                    )
                })
                .collect();
            assert_eq!(sparql, stretches, "stretches at {point}");
        }
    }
}

#[tokio::test]
async fn the_history_view_answers_temporal_questions_in_sparql() {
    let (_store, schema, last) = story().await;
    let point = r#", validAt: "2016-06""#;
    // Where did Alice live, and from when, as known now: the correction moved London to 2014.
    let q = r#"SELECT ?city ?from WHERE { ?f rdf:reifies <<( ?alice p:livesIn ?c )>> ; mn:status ?st ; mn:inForce ?b .
               ?alice rdfs:label "Alice" . ?c rdfs:label ?city . ?b mn:from ?from } ORDER BY ?from"#;
    let rows: Vec<(String, String)> = select(&schema, q, "HISTORY", point)
        .await
        .iter()
        .map(|b| {
            (
                b["city"]["value"].as_str().unwrap().to_owned(),
                b["from"]["value"].as_str().unwrap()[..4].to_owned(),
            )
        })
        .collect();
    assert_eq!(rows, [("Paris".to_owned(), "2010".to_owned()), ("London".to_owned(), "2014".to_owned())]);
    // The correction is linked to what it corrects, and the contradiction to its rival.
    let q = "SELECT ?new ?old WHERE { ?new mn:corrects ?old }";
    assert_eq!(select(&schema, q, "HISTORY", point).await.len(), 1);
    let q = r#"SELECT ?loser WHERE { ?loser mn:status "CONTRADICTED" ; mn:beatenBy ?winner . ?winner rdf:reifies <<( ?s ?p ?o )>> . ?o rdfs:label "Rome" }"#;
    assert_eq!(select(&schema, q, "HISTORY", point).await.len(), 1);
    // Provenance: the episode Eve's fact came from.
    let q = r#"SELECT ?ep WHERE { ?f mn:episode ?ep ; rdf:reifies <<( ?eve p:livesIn ?c )>> . ?eve rdfs:label "Eve" }"#;
    assert_eq!(select(&schema, q, "HISTORY", point).await.len(), 1);
    // The history view describes the episode itself; the in-force view does not.
    let q = r#"SELECT ?text ?at WHERE { ?f mn:episode ?ep . ?ep a mn:Episode ; mn:text ?text ; mn:occurredAt ?at }"#;
    let rows = select(&schema, q, "HISTORY", point).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["text"]["value"], "Eve moved to Paris");
    assert!(rows[0]["at"]["value"].as_str().unwrap().starts_with("2011-02-01T"), "{rows:?}");
    assert!(select(&schema, "SELECT ?ep WHERE { ?ep a mn:Episode }", "IN_FORCE", point).await.is_empty());
    // Entities carry their names, kinds and aliases in both views.
    let q = r#"SELECT ?kind ?alias WHERE { ?c rdfs:label "Paris" ; mn:kind ?kind ; mn:alias ?alias ; a mn:Entity }"#;
    let rows = select(&schema, q, "IN_FORCE", point).await;
    assert_eq!(
        (rows[0]["kind"]["value"].as_str(), rows[0]["alias"]["value"].as_str()),
        (Some("city"), Some("Lutetia"))
    );
    // The in-force view has no reifiers.
    assert!(select(&schema, "SELECT ?f WHERE { ?f mn:status ?s }", "IN_FORCE", point).await.is_empty());
    // ASK and CONSTRUCT through GraphQL.
    let ask = gql(
        &schema,
        r#"{ sparql(namespace: "r", query: "ASK { ?s p:vegan true }", validAt: "2019") { form results graph } }"#,
    )
    .await;
    assert_eq!(ask["sparql"]["form"], "BOOLEAN");
    assert_eq!(ask["sparql"]["results"]["boolean"], true);
    let construct = gql(
        &schema,
        r#"{ sparql(namespace: "r", query: "CONSTRUCT { ?s <urn:x:home> ?o } WHERE { ?s p:livesIn ?o }", validAt: "2016-06") { form results graph statements basis { seq } } }"#,
    )
    .await;
    assert_eq!(construct["sparql"]["form"], "GRAPH");
    assert!(construct["sparql"]["results"].is_null());
    assert_eq!(construct["sparql"]["graph"].as_str().unwrap().lines().count(), 3, "{construct}");
    assert_eq!(construct["sparql"]["basis"]["seq"], last);
    // Typed errors.
    let bad = |query: &str| format!(r#"{{ sparql(namespace: "r", query: "{query}") {{ form }} }}"#);
    assert_eq!(gql_error(&schema, &bad("SELECT WHERE {")).await, "INVALID_QUERY");
    assert_eq!(gql_error(&schema, &bad("INSERT DATA { <urn:a> <urn:b> <urn:c> }")).await, "INVALID_QUERY");
    assert_eq!(
        gql_error(&schema, &bad("SELECT * WHERE { SERVICE <http://example.org/> { ?s ?p ?o } }")).await,
        "INVALID_QUERY"
    );
    assert_eq!(
        gql_error(&schema, r#"{ sparql(namespace: "r", query: "ASK {}", knownAtSeq: 999) { form } }"#).await,
        "NOT_YET_KNOWN"
    );
    assert_eq!(
        gql_error(&schema, r#"{ sparql(namespace: "r", query: "ASK {}", validAt: "soon") { form } }"#).await,
        "INVALID_TIME"
    );
}

async fn send(
    state: &AppState,
    request: Request<Body>,
) -> (StatusCode, String, Vec<(String, String)>, String) {
    let response = app(state.clone()).oneshot(request).await.unwrap();
    let status = response.status();
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let headers = response
        .headers()
        .iter()
        .filter(|(k, _)| k.as_str().starts_with("ostrakon-"))
        .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap().to_owned()))
        .collect();
    let body = String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
    (status, content_type, headers, body)
}

fn get(params: &str, accept: Option<&str>) -> Request<Body> {
    let mut request = Request::get(format!("/sparql?{params}")).header(header::HOST, "localhost");
    if let Some(accept) = accept {
        request = request.header(header::ACCEPT, accept);
    }
    request.body(Body::empty()).unwrap()
}

fn encoded(pairs: &[(&str, &str)]) -> String {
    serde_urlencoded::to_string(pairs).unwrap()
}

fn code(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap_or_else(|_| panic!("{body}"));
    v["errors"][0]["extensions"]["code"].as_str().unwrap().to_owned()
}

const WHO_LIVES_WHERE: &str =
    "SELECT ?who ?city WHERE { ?p p:livesIn ?c . ?p rdfs:label ?who . ?c rdfs:label ?city } ORDER BY ?who";

#[tokio::test]
async fn the_sparql_endpoint_follows_the_protocol() {
    let (store, _schema, last) = story().await;
    let state = AppState::new(store, Config::default());
    let params = encoded(&[("query", WHO_LIVES_WHERE), ("namespace", "r"), ("validAt", "2016-06")]);

    // GET, results as JSON by default, with the read point in the headers.
    let (status, content_type, headers, body) = send(&state, get(&params, None)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(content_type, "application/sparql-results+json");
    assert!(headers.contains(&("ostrakon-known-at-seq".into(), last.to_string())), "{headers:?}");
    assert!(
        headers.iter().any(|(k, v)| k == "ostrakon-valid-at" && v.starts_with("2016-06-01")),
        "{headers:?}"
    );
    let json: Value = serde_json::from_str(&body).unwrap();
    let rows: Vec<(&str, &str)> = json["results"]["bindings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["who"]["value"].as_str().unwrap(), b["city"]["value"].as_str().unwrap()))
        .collect();
    assert_eq!(
        rows,
        [("Alice", "London"), ("Carol", "Rome"), ("Eve", "Paris")],
        "Bob's Paris is denied in 2016, Dan's retracted"
    );

    // The same answer in every results format the client asks for.
    for (accept, media, marker) in [
        ("application/sparql-results+xml", "application/sparql-results+xml", "<literal>London</literal>"),
        ("text/csv", "text/csv; charset=utf-8", "who,city\r\nAlice,London\r\nCarol,Rome\r\nEve,Paris"),
        (
            "text/tab-separated-values",
            "text/tab-separated-values; charset=utf-8",
            "?who\t?city\n\"Alice\"\t\"London\"",
        ),
        (
            "text/html;q=0.9, text/csv;q=0.5, application/sparql-results+xml;q=0.1",
            "text/csv; charset=utf-8",
            "Alice,London",
        ),
        ("application/json", "application/sparql-results+json", "\"London\""),
    ] {
        let (status, content_type, _, body) = send(&state, get(&params, Some(accept))).await;
        assert_eq!((status, content_type.as_str()), (StatusCode::OK, media), "{accept}: {body}");
        assert!(body.contains(marker), "{accept}: {body}");
    }
    // POST with the query as the body, and as a form.
    let post = |content_type: &str, uri: String, body: String| {
        Request::post(uri)
            .header(header::HOST, "localhost")
            .header(header::CONTENT_TYPE, content_type)
            .body(Body::from(body))
            .unwrap()
    };
    let direct = post(
        "application/sparql-query",
        format!("/sparql?{}", encoded(&[("namespace", "r"), ("validAt", "2016-06")])),
        WHO_LIVES_WHERE.into(),
    );
    let (status, _, _, direct) = send(&state, direct).await;
    assert_eq!(status, StatusCode::OK);
    let form = post("application/x-www-form-urlencoded", "/sparql".into(), params.clone());
    let (status, _, _, form) = send(&state, form).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(direct, body_of(&state, &params).await);
    assert_eq!(form, direct);

    // The history view with RDF 1.1 reification: statements, not triple terms; the
    // namespace in the path; a format by name.
    let statements = encoded(&[
        (
            "query",
            "SELECT (COUNT(?f) AS ?n) WHERE { ?f a rdf:Statement ; rdf:predicate p:livesIn ; mn:status ?s }",
        ),
        ("view", "history"),
        ("reification", "standard"),
        ("format", "csv"),
    ]);
    let in_path = Request::get(format!("/sparql/r?{statements}")).header(header::HOST, "localhost");
    let (status, content_type, _, body) = send(&state, in_path.body(Body::empty()).unwrap()).await;
    assert_eq!((status, content_type.as_str()), (StatusCode::OK, "text/csv; charset=utf-8"), "{body}");
    assert!(body.lines().nth(1).is_some_and(|n| n.trim().parse::<u32>().is_ok_and(|n| n >= 2)), "{body}");
    let wrong = encoded(&[("query", "ASK {}"), ("namespace", "r"), ("reification", "standard")]);
    let (status, _, _, body) = send(&state, get(&wrong, None)).await;
    assert_eq!((status, code(&body).as_str()), (StatusCode::BAD_REQUEST, "BAD_REQUEST"), "{body}");

    // ASK, and CONSTRUCT as Turtle (default) or N-Triples.
    let ask = encoded(&[("query", "ASK { ?s p:livesIn ?o }"), ("namespace", "r")]);
    let (status, _, _, body) = send(&state, get(&ask, Some("application/sparql-results+json"))).await;
    assert_eq!((status, body.contains("\"boolean\":true")), (StatusCode::OK, true), "{body}");
    let construct = encoded(&[
        ("query", "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }"),
        ("namespace", "r"),
        ("view", "history"),
    ]);
    let (status, content_type, _, turtle) = send(&state, get(&construct, None)).await;
    assert_eq!((status, content_type.as_str()), (StatusCode::OK, "text/turtle"));
    assert!(turtle.contains("@prefix p: <urn:ostrakon:r:predicate:>") && turtle.contains("<<("), "{turtle}");
    let (_, content_type, _, ntriples) = send(&state, get(&construct, Some("application/n-triples"))).await;
    assert_eq!(content_type, "application/n-triples");
    let parse =
        |format: oxigraph::io::RdfFormat, text: &str| -> std::collections::HashSet<oxigraph::model::Triple> {
            oxigraph::io::RdfParser::from_format(format)
                .for_slice(text.as_bytes())
                .map(|q| q.unwrap().into())
                .collect()
        };
    let from_turtle = parse(oxigraph::io::RdfFormat::Turtle, &turtle);
    assert!(from_turtle.len() > 50);
    assert_eq!(from_turtle, parse(oxigraph::io::RdfFormat::NTriples, &ntriples));

    // Errors, each typed and with its status.
    for (request, expected_status, expected_code) in [
        (
            get(&encoded(&[("query", "SELECT WHERE {"), ("namespace", "r")]), None),
            StatusCode::BAD_REQUEST,
            "INVALID_QUERY",
        ),
        (get(&encoded(&[("query", "ASK {}")]), None), StatusCode::BAD_REQUEST, "BAD_REQUEST"),
        (get(&encoded(&[("namespace", "r")]), None), StatusCode::BAD_REQUEST, "BAD_REQUEST"),
        (
            get(&encoded(&[("query", "ASK {}"), ("namespace", "r"), ("update", "x")]), None),
            StatusCode::BAD_REQUEST,
            "BAD_REQUEST",
        ),
        (
            get(&encoded(&[("query", "ASK {}"), ("namespace", "r"), ("limit", "3")]), None),
            StatusCode::BAD_REQUEST,
            "BAD_REQUEST",
        ),
        (
            get(&encoded(&[("query", "ASK {}"), ("namespace", "r"), ("namespace", "s")]), None),
            StatusCode::BAD_REQUEST,
            "BAD_REQUEST",
        ),
        (
            get(&encoded(&[("query", "ASK {}"), ("namespace", "r"), ("default-graph-uri", "urn:g")]), None),
            StatusCode::BAD_REQUEST,
            "BAD_REQUEST",
        ),
        (
            get(&encoded(&[("query", "ASK {}"), ("namespace", "r"), ("view", "all")]), None),
            StatusCode::BAD_REQUEST,
            "BAD_REQUEST",
        ),
        (
            get(&encoded(&[("query", "ASK {}"), ("namespace", "../x")]), None),
            StatusCode::BAD_REQUEST,
            "INVALID_VALUE",
        ),
        (
            get(&encoded(&[("query", "ASK {}"), ("namespace", "r"), ("validAt", "soon")]), None),
            StatusCode::BAD_REQUEST,
            "INVALID_TIME",
        ),
        (
            get(&encoded(&[("query", "ASK {}"), ("namespace", "r"), ("knownAtSeq", "999")]), None),
            StatusCode::BAD_REQUEST,
            "NOT_YET_KNOWN",
        ),
        (
            get(&encoded(&[("query", "ASK {}"), ("namespace", "r"), ("knownAtSeq", "-1")]), None),
            StatusCode::BAD_REQUEST,
            "BAD_REQUEST",
        ),
        (get(&params, Some("image/png")), StatusCode::NOT_ACCEPTABLE, "NOT_ACCEPTABLE"),
        (
            get(&construct, Some("application/sparql-results+json")),
            StatusCode::NOT_ACCEPTABLE,
            "NOT_ACCEPTABLE",
        ),
        (
            post("application/sparql-update", "/sparql?namespace=r".into(), "CLEAR ALL".into()),
            StatusCode::BAD_REQUEST,
            "BAD_REQUEST",
        ),
        (
            post("text/plain", "/sparql?namespace=r".into(), "ASK {}".into()),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "BAD_REQUEST",
        ),
    ] {
        let uri = request.uri().to_string();
        let (status, _, _, body) = send(&state, request).await;
        assert_eq!((status, code(&body).as_str()), (expected_status, expected_code), "{uri}: {body}");
    }
    // Another site's page cannot make the browser run a query (a GET has no Origin, but
    // its browser says where it came from).
    let mut cross = get(&params, None);
    cross.headers_mut().insert("sec-fetch-site", "cross-site".parse().unwrap());
    let (status, _, _, body) = send(&state, cross).await;
    assert_eq!((status, code(&body).as_str()), (StatusCode::FORBIDDEN, "FORBIDDEN"), "{body}");
    let mut typed = get(&params, None);
    typed.headers_mut().insert("sec-fetch-site", "none".parse().unwrap());
    assert_eq!(send(&state, typed).await.0, StatusCode::OK);
    // Nothing was written by any of it.
    assert_eq!(
        state.store().basis(&Namespace::new("n", "r").unwrap(), ReadAt::latest()).unwrap().known_at.0,
        last
    );
}

async fn body_of(state: &AppState, params: &str) -> String {
    send(state, get(params, None)).await.3
}

#[tokio::test]
async fn the_sparql_endpoint_holds_to_tokens_and_limits() {
    let (store, _schema, _) = story().await;
    let config = r#"
[limits]
sparql_max_statements = 40
max_response_bytes = 2000
request_timeout_seconds = 1
max_running_requests = 1

[[tokens]]
name = "r-reader"
token = "r-reader-token-00001"
namespaces = { r = "read" }

[[tokens]]
name = "other"
token = "other-reader-token-1"
namespaces = { other = "read-write" }
"#;
    let state = AppState::new(store, Config::parse(config, "t.toml").unwrap());
    let with_token = |params: &str, token: Option<&str>| {
        let mut request = Request::get(format!("/sparql?{params}"));
        if let Some(token) = token {
            request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
        request.body(Body::empty()).unwrap()
    };
    let ask = encoded(&[("query", "ASK { ?s ?p ?o }"), ("namespace", "r")]);
    let (status, _, _, body) = send(&state, with_token(&ask, None)).await;
    assert_eq!((status, code(&body).as_str()), (StatusCode::UNAUTHORIZED, "FORBIDDEN"));
    let (status, _, _, body) = send(&state, with_token(&ask, Some("other-reader-token-1"))).await;
    assert_eq!((status, code(&body).as_str()), (StatusCode::FORBIDDEN, "FORBIDDEN"), "{body}");
    let (status, _, _, body) = send(&state, with_token(&ask, Some("r-reader-token-00001"))).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // The history view holds more than 40 statements: refused before it is built.
    let history = encoded(&[("query", "ASK { ?s ?p ?o }"), ("namespace", "r"), ("view", "history")]);
    let (status, _, _, body) = send(&state, with_token(&history, Some("r-reader-token-00001"))).await;
    assert_eq!((status, code(&body).as_str()), (StatusCode::SERVICE_UNAVAILABLE, "LIMIT_EXCEEDED"), "{body}");
    assert!(body.contains("40 statements"), "{body}");
    // An answer over 2,000 bytes is refused, not cut.
    let all = encoded(&[("query", "SELECT * WHERE { ?s ?p ?o }"), ("namespace", "r")]);
    let (status, _, _, body) = send(&state, with_token(&all, Some("r-reader-token-00001"))).await;
    assert_eq!((status, code(&body).as_str()), (StatusCode::SERVICE_UNAVAILABLE, "LIMIT_EXCEEDED"), "{body}");
    assert!(body.contains("2000 bytes"), "{body}");

    // A query that would run for hours stops at the deadline, and its work stops with it:
    // with one permit, the next request is served.
    let endless =
        "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o . ?q ?r ?t }";
    let start = Instant::now();
    let (status, _, _, body) = send(
        &state,
        with_token(&encoded(&[("query", endless), ("namespace", "r")]), Some("r-reader-token-00001")),
    )
    .await;
    assert_eq!((status, code(&body).as_str()), (StatusCode::SERVICE_UNAVAILABLE, "LIMIT_EXCEEDED"), "{body}");
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
    let (status, _, _, body) = send(&state, with_token(&ask, Some("r-reader-token-00001"))).await;
    assert_eq!(status, StatusCode::OK, "the stopped query kept its permit: {body}");
}

#[test]
fn export_writes_rdf_that_parses_back_to_the_same_statements() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Arc::new(Store::open(dir.path()).unwrap());
        let schema = ostrakon_graphql::schema(Arc::clone(&store), Limits::default());
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(async {
            gql(
                &schema,
                r#"mutation { definePredicate(namespace: "r", name: "livesIn", cardinality: ONE) { seq } }"#,
            )
            .await;
            let (_, ids) = assert_facts(
                &schema,
                &[&lives("Alice", "Paris", "2010", ""), &lives("Bob", "Rome", "2012", "")],
            )
            .await;
            assert_facts(&schema, &[&lives("Alice", "London", "2015", "")]).await;
            gql(
                &schema,
                &format!(r#"mutation {{ retractFact(namespace: "r", fact: "{}") {{ seq }} }}"#, ids[1]),
            )
            .await;
        });
    }
    let ostrakon = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ostrakon"))
            .arg("export")
            .args(args)
            .arg("--data")
            .arg(dir.path())
            .output()
            .unwrap();
        (out.status.success(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
    };
    let ns = Namespace::new("n", "r").unwrap();
    let cases = [
        (vec!["--format", "nquads"], ostrakon_rdf::View::InForce, ReadAt::latest()),
        // The history's default is RDF 1.1 reification, which every RDF reader takes.
        (vec!["--format", "nquads", "--history"], ostrakon_rdf::View::HistoryStandard, ReadAt::latest()),
        (
            vec!["--format", "nquads", "--history", "--reification", "triple-term"],
            ostrakon_rdf::View::History,
            ReadAt::latest(),
        ),
        (
            vec![
                "--format",
                "turtle",
                "--history",
                "--reification",
                "triple-term",
                "--valid-at",
                "2013",
                "--known-at-seq",
                "2",
            ],
            ostrakon_rdf::View::History,
            ReadAt::bitemporal(
                Timestamp::parse("t", "2013", &TimeZone::Utc).unwrap(),
                ostrakon_engine::core::Seq(2),
            ),
        ),
        (
            vec!["--format", "turtle", "--valid-at", "2011"],
            ostrakon_rdf::View::InForce,
            ReadAt::valid(Timestamp::parse("t", "2011", &TimeZone::Utc).unwrap()),
        ),
    ];
    // The exports run first: the data directory is locked while a store has it open.
    let exported: Vec<_> = cases.iter().map(|(args, _, _)| ostrakon(args)).collect();
    let (ok, _, err) = ostrakon(&["--history"]);
    assert!(!ok && err.contains("RDF exports"), "{err}");
    let (ok, _, err) = ostrakon(&["--format", "nquads", "--reification", "standard"]);
    assert!(!ok && err.contains("--history"), "{err}");
    let (ok, _, err) = ostrakon(&["--format", "nquads", "--valid-at", "whenever"]);
    assert!(!ok && err.contains("--valid-at"), "{err}");
    // A failure leaves no file under the output's name, whole or partial.
    let out = dir.path().join("out.nq");
    let (ok, _, err) =
        ostrakon(&["--format", "nquads", "--known-at-seq", "99", "--out", out.to_str().unwrap()]);
    assert!(!ok && err.contains("99"), "{err}");
    assert!(!out.exists() && !dir.path().join("out.nq.partial").exists());
    let store = Store::open(dir.path()).unwrap();
    for ((args, view, at), (ok, text, err)) in cases.into_iter().zip(exported) {
        assert!(ok, "{args:?}: {err}");
        let format = if args[1] == "nquads" {
            oxigraph::io::RdfFormat::NQuads
        } else {
            oxigraph::io::RdfFormat::Turtle
        };
        let parsed: std::collections::HashSet<oxigraph::model::Triple> =
            oxigraph::io::RdfParser::from_format(format)
                .for_slice(text.as_bytes())
                .map(|q| q.unwrap_or_else(|e| panic!("{args:?}: {e}\n{text}")).into())
                .collect();
        let mut expected = std::collections::HashSet::new();
        ostrakon_rdf::statements(
            &store,
            &ns,
            at,
            view,
            oxigraph::model::GraphName::DefaultGraph,
            usize::MAX,
            &mut |q| {
                expected.insert(oxigraph::model::Triple::from(q));
                Ok(())
            },
        )
        .unwrap();
        assert!(!expected.is_empty());
        assert_eq!(parsed, expected, "{args:?}");
    }
}

/// SPARQLWrapper with its defaults (and with JSON, and POST) against `/sparql/{namespace}`,
/// and rdflib reading an N-Quads export: real clients, as their users run them.
#[test]
fn sparqlwrapper_and_rdflib_read_what_ostrakon_serves_and_exports() {
    let Some(python) = crate::common::python::with(&["SPARQLWrapper", "rdflib"]) else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let ostrakon = |args: &[&std::ffi::OsStr]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ostrakon"))
            .args(args)
            .env("OSTRAKON_EMBEDDER", "off")
            .env("OSTRAKON_LOG", "warn")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    let write = r#"mutation { assertFacts(namespace: "clients", facts: [
        {subject: {name: "Alice"}, predicate: "livesIn", object: {entity: {name: "Paris"}}, validFrom: "2010"},
        {subject: {name: "Bob"}, predicate: "livesIn", object: {entity: {name: "London"}}, validFrom: "2012"}]) { seq } }"#;
    ostrakon(&["query".as_ref(), write.as_ref(), "--data".as_ref(), data.as_os_str()]);
    let correct = r#"mutation { assertFacts(namespace: "clients", facts: [
        {subject: {name: "Alice"}, predicate: "livesIn", object: {entity: {name: "Paris"}}, validFrom: "2008"},
        {subject: {name: "Bob"}, predicate: "livesIn", object: {entity: {name: "Oslo"}}, validFrom: "2012", validTo: "2012-03"}]) { seq } }"#;
    ostrakon(&["query".as_ref(), correct.as_ref(), "--data".as_ref(), data.as_os_str()]);
    let export_as = |name: &str, extra: &[&str]| {
        let path = dir.path().join(name);
        let mut args: Vec<&std::ffi::OsStr> = vec![
            "export".as_ref(),
            "--format".as_ref(),
            "nquads".as_ref(),
            "--namespace".as_ref(),
            "clients".as_ref(),
        ];
        args.extend(extra.iter().map(|a| std::ffi::OsStr::new(*a)));
        args.extend(["--out".as_ref(), path.as_os_str(), "--data".as_ref(), data.as_os_str()]);
        ostrakon(&args);
        path
    };
    let export = export_as("clients.nq", &[]);
    // The history as exported by default: what rdflib reads (tests/clients).
    let standard = export_as("history-standard.nq", &["--history"]);
    let triple_terms = export_as("history.nq", &["--history", "--reification", "triple-term"]);
    // What the RDF 1.2 form says of each fact: its triple and status, by its reifier.
    let text = std::fs::read_to_string(&triple_terms).unwrap();
    let quads: Vec<oxigraph::model::Quad> =
        oxigraph::io::RdfParser::from_format(oxigraph::io::RdfFormat::NQuads)
            .for_slice(text.as_bytes())
            .map(Result::unwrap)
            .collect();
    let status_of = |r: &oxigraph::model::NamedOrBlankNode| {
        quads
            .iter()
            .find(|q| q.subject == *r && q.predicate.as_str() == "urn:ostrakon:vocab:status")
            .map(|q| match &q.object {
                oxigraph::model::Term::Literal(l) => l.value().to_owned(),
                other => other.to_string(),
            })
            .unwrap()
    };
    let mut facts: Vec<Vec<String>> = quads
        .iter()
        .filter(|q| q.predicate.as_str() == "http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies")
        .map(|q| {
            let oxigraph::model::Term::Triple(t) = &q.object else { panic!("{q}") };
            let iri = |s: String| s.trim_start_matches('<').trim_end_matches('>').to_owned();
            vec![
                iri(q.subject.to_string()),
                iri(t.subject.to_string()),
                t.predicate.as_str().to_owned(),
                iri(t.object.to_string()),
                status_of(&q.subject),
            ]
        })
        .collect();
    facts.sort();
    assert!(facts.len() >= 4 && facts.iter().any(|f| f[4] != "CURRENT"), "{facts:?}");
    let server = crate::common::serve::start_with(&data, &[("OSTRAKON_EMBEDDER", "off".as_ref())]);
    let base = format!("http://{}", server.addr);
    let said = crate::common::python::run(
        &python,
        "sparql_clients.py",
        &[base.as_ref(), "clients".as_ref(), export.as_os_str(), standard.as_os_str()],
    );
    let (said, ok) = said.trim().rsplit_once('\n').unwrap_or(("", said.trim()));
    assert_eq!(ok, "ok");
    // rdflib, reading the RDF 1.1 form, finds the same facts with the same statuses.
    let read: Vec<Vec<String>> = serde_json::from_str(said).unwrap();
    assert_eq!(read, facts);
}
