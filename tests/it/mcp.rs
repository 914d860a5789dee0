//! The Model Context Protocol server, driven by the SDK's own client: over stdio against
//! the real `ostrakon mcp` binary (initialize, list the tools, call every one), and over
//! streamable HTTP against the server's router on a loopback port, with tokens (one outside
//! its namespace, one read-only).

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use ostrakon_engine::Store;
use ostrakon_server::{AppState, Config, app};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{ConfigureCommandExt as _, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ServiceExt as _, model::ClientConfig};
use serde_json::{Value, json};

type Client = RunningService<RoleClient, ClientConfig>;

const TOOLS: [&str; 12] = [
    "add_intention",
    "context",
    "define_predicate",
    "due_intentions",
    "end_fact",
    "entity",
    "facts_as_of",
    "history",
    "pin_memory",
    "recall",
    "remember",
    "tiers",
];

/// The tool list's cost in a model's context: at most this many characters of
/// `tools/list` JSON (about 4,000 tokens).
const TOOL_LIST_MAX_CHARS: usize = 16_000;

/// `remember`'s arguments stating one fact alone.
fn facts(fact: Value) -> Value {
    json!({ "facts": [fact] })
}

/// The TLS provider the HTTP client needs (reqwest is built without one of its own, as
/// the extractor installs ring), installed once for the process.
pub(crate) fn install_tls_provider() {
    #[allow(deprecated)]
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Calls a tool; its result, with whether it is an error.
pub(crate) async fn call(client: &Client, tool: &'static str, args: Value) -> (bool, Value) {
    let Value::Object(args) = args else { panic!("arguments must be an object") };
    let result: CallToolResult =
        client.call_tool(CallToolRequestParams::new(tool).with_arguments(args)).await.unwrap_or_else(|e| {
            panic!("{tool}: {e}");
        });
    let body = result.structured_content.clone().unwrap_or_else(|| {
        let text =
            result.content.first().and_then(|c| c.as_text()).map(|t| t.text.clone()).unwrap_or_default();
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    });
    (result.is_error == Some(true), body)
}

/// Calls a tool that must succeed.
async fn ok(client: &Client, tool: &'static str, args: Value) -> Value {
    let (failed, body) = call(client, tool, args).await;
    assert!(!failed, "{tool} failed: {body}");
    body
}

/// Calls a tool that must fail with `code`; the error.
async fn fails(client: &Client, tool: &'static str, args: Value, code: &str) -> Value {
    let (failed, body) = call(client, tool, args).await;
    assert!(failed, "{tool} should have failed with {code}: {body}");
    assert_eq!(body["code"], code, "{tool}: {body}");
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
    body
}

/// The names of the values of a list of facts.
fn values(facts: &Value) -> Vec<String> {
    facts
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {facts}"))
        .iter()
        .map(|f| f["object"]["entity"]["name"].as_str().unwrap_or("?").to_owned())
        .collect()
}

/// The tool list: every tool, each with a description and an object schema whose
/// properties are described.
async fn check_tools(client: &Client) {
    let tools = client.list_all_tools().await.unwrap();
    let names: BTreeSet<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, TOOLS.into_iter().collect(), "tool list");
    for tool in &tools {
        assert!(tool.description.as_ref().is_some_and(|d| d.len() > 40), "{} has no description", tool.name);
        let schema = Value::Object((*tool.input_schema).clone());
        assert_eq!(schema["type"], "object", "{}: {schema}", tool.name);
        assert!(schema.get("properties").is_some_and(Value::is_object), "{}: {schema}", tool.name);
    }
    let listed = serde_json::to_string(&tools).unwrap().chars().count();
    assert!(listed <= TOOL_LIST_MAX_CHARS, "the tool list costs {listed} characters");
    let remember = tools.iter().find(|t| t.name == "remember").unwrap();
    let schema = Value::Object((*remember.input_schema).clone());
    assert!(schema.get("required").is_none(), "text or facts, either may be left out: {schema}");
    assert!(schema.get("$schema").is_none(), "{schema}");
    assert!(
        schema["properties"]["occurredAt"]["description"].as_str().is_some_and(|d| d.contains("happened"))
    );
}

/// The README's story through every tool, with the answers checked.
async fn exercise(client: &Client) {
    check_tools(client).await;

    let recorded = ok(
        client,
        "remember",
        json!({
            "text": "I lived in Paris from 2010 and moved to London in June 2015.",
            "occurredAt": "2024-05-01T10:00:00Z",
            "thread": "chat-1",
            "role": "user",
            "facts": [
                { "subject": { "name": "Alice" }, "predicate": "livesIn", "object": { "entity": { "name": "Paris" } }, "validFrom": "2010" },
                { "subject": { "name": "Alice" }, "predicate": "livesIn", "object": { "entity": { "name": "London" } }, "validFrom": "2015-06" }
            ]
        }),
    )
    .await;
    let statuses: Vec<&str> =
        recorded["facts"].as_array().unwrap().iter().map(|f| f["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["SUPERSEDED", "CURRENT"], "{recorded}");
    let london = recorded["facts"][1]["id"].as_str().unwrap().to_owned();
    let before_correction = recorded["seq"].as_i64().unwrap();
    assert_eq!(recorded["facts"][1]["provenance"][0]["id"], recorded["episode"]["id"], "{recorded}");

    let in2012 = ok(
        client,
        "facts_as_of",
        json!({ "subject": { "name": "Alice" }, "predicate": "livesIn", "validAt": "2012" }),
    )
    .await;
    assert_eq!(values(&in2012["nodes"]), ["Paris"], "{in2012}");

    // The move was in September, not June: a correction of the London fact.
    let corrected = ok(
        client,
        "remember",
        facts(json!({
            "subject": { "name": "Alice" }, "predicate": "livesIn", "object": { "entity": { "name": "London" } },
            "validFrom": "2015-09", "supersedes": london, "correction": true
        })),
    )
    .await;
    assert_eq!(corrected["facts"][0]["status"], "CURRENT", "{corrected}");
    let july = json!({ "subject": { "name": "Alice" }, "predicate": "livesIn", "validAt": "2015-07" });
    let now = ok(client, "facts_as_of", july.clone()).await;
    assert_eq!(values(&now["nodes"]), ["Paris"], "{now}");
    let mut then = july;
    then["knownAtSeq"] = json!(before_correction);
    let then = ok(client, "facts_as_of", then).await;
    assert_eq!(values(&then["nodes"]), ["London"], "as known before the correction: {then}");

    let history =
        ok(client, "history", json!({ "subject": { "name": "Alice" }, "predicate": "livesIn" })).await;
    let versions: Vec<(String, String)> = history["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["object"]["entity"]["name"].as_str().unwrap().to_owned(),
                f["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(versions.contains(&("London".into(), "RETRACTED".into())), "{history}");
    assert!(versions.contains(&("London".into(), "CURRENT".into())), "{history}");
    assert!(versions.contains(&("Paris".into(), "SUPERSEDED".into())), "{history}");

    let alice = ok(client, "entity", json!({ "name": "alice" })).await;
    assert_eq!(alice["name"], "Alice", "{alice}");
    assert_eq!(values(&alice["facts"]), ["London"], "{alice}");
    let nobody = ok(client, "entity", json!({ "name": "Nobody" })).await;
    assert_eq!(nobody["result"], Value::Null, "{nobody}");

    // A job that ended, and one that was never true.
    let job = ok(
        client,
        "remember",
        facts(json!({ "subject": { "name": "Alice" }, "predicate": "worksAt", "object": { "entity": { "name": "ACME" } }, "validFrom": "2016" })),
    )
    .await;
    let job = job["facts"][0]["id"].as_str().unwrap().to_owned();
    let ended = ok(client, "end_fact", json!({ "fact": job, "validTo": "2020-03" })).await;
    assert_eq!(ended["facts"][0]["valid"]["to"], "2020-03-01T00:00:00.000000Z", "{ended}");
    let pet = ok(
        client,
        "remember",
        facts(json!({ "subject": { "name": "Alice" }, "predicate": "owns", "object": { "string": "a parrot" } })),
    )
    .await;
    let pet = pet["facts"][0]["id"].as_str().unwrap().to_owned();
    let retracted =
        ok(client, "end_fact", json!({ "fact": pet, "retract": true, "reason": "misheard" })).await;
    assert_eq!(retracted["facts"][0]["status"], "RETRACTED", "{retracted}");
    fails(client, "end_fact", json!({ "fact": pet, "retract": true }), "ALREADY_RETRACTED").await;
    // Ending and retracting at once, or neither, is a mistake the tool names.
    let both =
        fails(client, "end_fact", json!({ "fact": pet, "retract": true, "validTo": "2020" }), "BAD_REQUEST")
            .await;
    assert!(both["message"].as_str().unwrap().contains("not both"), "{both}");
    fails(client, "end_fact", json!({ "fact": pet }), "BAD_REQUEST").await;
    fails(client, "remember", json!({ "thread": "t" }), "BAD_REQUEST").await;
    fails(
        client,
        "facts_as_of",
        json!({ "predicate": "livesIn", "validAt": "the day after tomorrow" }),
        "INVALID_TIME",
    )
    .await;
    fails(client, "end_fact", json!({ "fact": "999999", "validTo": "2020" }), "UNKNOWN_FACT").await;
    let both = fails(
        client,
        "history",
        json!({ "subject": { "id": "1", "name": "Alice" }, "predicate": "livesIn" }),
        "BAD_REQUEST",
    )
    .await;
    assert!(both["errors"].is_array(), "{both}");

    let found = ok(client, "recall", json!({ "query": "Where did Alice live, Paris or London?" })).await;
    // Flat, as `search` answers: no `result` wrapper.
    assert!(found.get("result").is_none(), "{found}");
    let hits = found["hits"].as_array().unwrap_or_else(|| panic!("{found}"));
    assert!(!hits.is_empty(), "{found}");
    assert!(found["seq"].as_i64().is_some(), "a recall is recorded: {found}");
    assert!(hits[0]["explain"]["components"].is_array(), "{found}");
    let looked =
        ok(client, "recall", json!({ "query": "Paris", "reinforce": false, "kinds": ["EPISODE"] })).await;
    let kinds: BTreeSet<&str> =
        looked["hits"].as_array().unwrap().iter().map(|h| h["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["EPISODE"].into_iter().collect(), "{looked}");

    let block = ok(client, "context", json!({ "message": "Where does Alice live?", "budget": 200 })).await;
    let text = block["text"].as_str().unwrap();
    assert!(text.contains("London") && text.contains("Paris"), "{block}");

    let intention = ok(
        client,
        "add_intention",
        json!({ "payload": "Ask how the new flat is", "trigger": { "entities": [{ "name": "Alice" }] } }),
    )
    .await;
    assert_eq!(intention["status"], "PENDING", "{intention}");
    let due = ok(client, "due_intentions", json!({ "message": "Alice called this morning" })).await;
    let due = due["result"].as_array().unwrap_or_else(|| panic!("{due}"));
    assert_eq!(due.len(), 1, "{due:?}");
    assert_eq!(due[0]["reason"], "MENTION");
    assert_eq!(due[0]["intention"]["payload"], "Ask how the new flat is");
    let quiet = ok(client, "due_intentions", json!({ "message": "The weather is fine" })).await;
    assert_eq!(quiet["result"], json!([]), "{quiet}");

    // An allergy pinned as core is in every context block, whatever the message.
    let allergy = json!({ "subject": { "name": "Alice" }, "predicate": "allergicTo",
                          "object": { "entity": { "name": "peanuts" } }, "validFrom": "2020" });
    let allergy = ok(client, "remember", facts(allergy)).await;
    let allergy = allergy["facts"][0]["id"].as_str().unwrap_or_else(|| panic!("{allergy}")).to_owned();
    let block = ok(client, "context", json!({ "message": "The weather is fine", "budget": 200 })).await;
    assert!(!block["text"].as_str().unwrap().contains("peanuts"), "{block}");
    let placed =
        ok(client, "pin_memory", json!({ "fact": allergy, "tier": "CORE", "reason": "health" })).await;
    assert_eq!(placed["core"][0]["fact"]["id"], allergy.as_str(), "{placed}");
    let block = ok(client, "context", json!({ "message": "The weather is fine", "budget": 200 })).await;
    assert!(block["text"].as_str().unwrap().contains("Core memory:\n- Alice allergic to peanuts"), "{block}");
    assert_eq!(ok(client, "tiers", json!({})).await["core"][0]["reason"], "health");
    let released =
        ok(client, "pin_memory", json!({ "fact": allergy, "tier": "CORE", "release": true })).await;
    assert_eq!(released["core"], json!([]), "{released}");
    fails(client, "pin_memory", json!({ "fact": allergy, "tier": "CORE", "release": true }), "INVALID_VALUE")
        .await;
}

/// The Lyon/Berlin story through the tools alone: an undeclared predicate holds both
/// cities at once (and `facts_as_of` says so); declared ONE with its first fact, one city
/// a year; a correction of another slot is refused; wrong arguments name tool and argument.
async fn one_city_a_year(client: &Client) {
    let lives = |city: &str, from: &str, cardinality: Option<&str>| {
        let mut args = json!({ "subject": { "name": "Marie" }, "predicate": "residesIn",
                               "object": { "entity": { "name": city } }, "validFrom": from });
        if let Some(c) = cardinality {
            args["cardinality"] = json!(c);
        }
        args
    };
    // Undeclared: MANY, both cities in 2015, and a note that says why.
    ok(
        client,
        "remember",
        facts(json!({ "subject": { "name": "Marie" }, "predicate": "stayedIn",
        "object": { "entity": { "name": "Lyon" } }, "validFrom": "2008" })),
    )
    .await;
    ok(
        client,
        "remember",
        facts(json!({ "subject": { "name": "Marie" }, "predicate": "stayedIn",
        "object": { "entity": { "name": "Berlin" } }, "validFrom": "2014" })),
    )
    .await;
    let both = ok(
        client,
        "facts_as_of",
        json!({ "subject": { "name": "Marie" }, "predicate": "stayedIn",
        "validAt": "2015-06-01" }),
    )
    .await;
    assert_eq!(values(&both["nodes"]).len(), 2, "{both}");
    let note = both["note"].as_str().unwrap_or_else(|| panic!("no note: {both}"));
    assert!(note.contains("stayedIn is MANY") && note.contains("define_predicate"), "{note}");
    let block = ok(
        client,
        "context",
        json!({ "message": "Where has Marie stayed? Lyon or Berlin?", "validAt": "2015-06-01" }),
    )
    .await;
    let text = block["text"].as_str().unwrap_or_default();
    assert!(text.contains("one of 2 values at once"), "the prompt block says both hold: {text}");
    // Declared ONE with the first fact: one city a year.
    let lyon = ok(client, "remember", facts(lives("Lyon", "2008", Some("ONE")))).await;
    ok(client, "remember", facts(lives("Berlin", "2014", Some("ONE")))).await;
    for (year, city) in [("2010-06-01", "Lyon"), ("2015-06-01", "Berlin")] {
        let at = ok(
            client,
            "facts_as_of",
            json!({ "subject": { "name": "Marie" }, "predicate": "residesIn",
            "validAt": year }),
        )
        .await;
        assert_eq!(values(&at["nodes"]), [city], "{year}: {at}");
        assert!(at.get("note").is_none(), "{at}");
    }
    // Declared otherwise already: refused, nothing written.
    fails(client, "remember", facts(lives("Paris", "2020", Some("MANY"))), "INVALID_VALUE").await;
    // A correction names a statement of the same subject and predicate.
    let works = ok(
        client,
        "remember",
        facts(json!({ "subject": { "name": "Marie" }, "predicate": "worksAt",
        "object": { "entity": { "name": "Zenbrook" } }, "validFrom": "2014" })),
    )
    .await;
    let works_id = works["facts"][0]["id"].as_str().unwrap().to_owned();
    let mut wrong = lives("Munich", "2014", None);
    wrong["supersedes"] = json!(works_id);
    let refused = fails(client, "remember", facts(wrong), "SUPERSEDES_OTHER_SLOT").await;
    assert!(refused["message"].as_str().unwrap().contains("worksAt"), "{refused}");
    // One of the same slot is a correction: Lyon was Hamburg all along.
    let mut right = lives("Hamburg", "2008", None);
    right["supersedes"] = lyon["facts"][0]["id"].clone();
    ok(client, "remember", facts(right)).await;
    let corrected = ok(
        client,
        "facts_as_of",
        json!({ "subject": { "name": "Marie" }, "predicate": "residesIn",
        "validAt": "2010-06-01" }),
    )
    .await;
    assert_eq!(values(&corrected["nodes"]), ["Hamburg"], "{corrected}");
    let after =
        ok(client, "facts_as_of", json!({ "subject": { "name": "Marie" }, "predicate": "worksAt" })).await;
    assert_eq!(values(&after["nodes"]), ["Zenbrook"], "the refused correction withdrew nothing: {after}");
    // Arguments that do not fit: a tool result with isError (which the agent reads, and
    // can correct itself by), naming the tool, the argument, what it must be and what the
    // tool takes — not a protocol error, which never reaches the model.
    for (tool, args, says) in [
        ("end_fact", json!({ "validTo": "2020" }), "end_fact: missing argument `fact`"),
        (
            "remember",
            facts(json!({ "subject": { "name": "M" }, "predicate": "p", "object": { "entity": "Paris" } })),
            "remember: argument `facts[0].object.entity`",
        ),
        ("remember", json!({ "txt": "hello" }), "unknown field `txt`"),
    ] {
        let error = fails(client, tool, args, "BAD_REQUEST").await;
        let text = error["message"].as_str().unwrap();
        assert!(text.contains(says), "{tool}: {text}");
        assert!(text.contains(&format!("{tool} takes")), "{tool}: {text}");
        assert!(error["detail"]["arguments"].as_array().is_some_and(|a| !a.is_empty()), "{error}");
    }
    // What an argument must be is said when its schema says it.
    let error = fails(client, "end_fact", json!({ "fact": ["1"] }), "BAD_REQUEST").await;
    assert!(error["message"].as_str().unwrap().contains("`fact` must be a string"), "{error}");
}

/// Declares `livesIn` one-valued in `namespace` (through the CLI, before any client).
fn define_lives_in(data: &Path, namespace: &str) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ostrakon"))
        .arg("query")
        .arg(format!(
            "mutation {{ definePredicate(namespace: \"{namespace}\", name: \"livesIn\", cardinality: ONE, valueType: ENTITY) {{ seq }} }}"
        ))
        .arg("--data")
        .arg(data)
        .env("OSTRAKON_EMBEDDER", "off")
        .env("OSTRAKON_LOG", "warn")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_client_can_use_every_tool_against_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path()).unwrap();
    define_lives_in(dir.path(), "alice");
    let data = dir.path().to_owned();
    let transport = TokioChildProcess::new(
        tokio::process::Command::new(env!("CARGO_BIN_EXE_ostrakon")).configure(|cmd| {
            cmd.args(["mcp", "--namespace", "alice", "--data"])
                .arg(&data)
                .env("OSTRAKON_EMBEDDER", "off")
                .env("OSTRAKON_LOG", "warn");
        }),
    )
    .unwrap();
    let client = ClientConfig::default().serve(transport).await.unwrap();
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().map(|s| s.name.as_str()), Some("ostrakon"));
    assert!(info.instructions.as_ref().is_some_and(|i| i.contains("knownAt")));
    exercise(&client).await;
    one_city_a_year(&client).await;
    client.cancel().await.unwrap();

    // What the tools wrote is in the namespace the command named, and survives the process.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ostrakon"))
        .args(["query", "{ facts(namespace: \"alice\", predicate: \"livesIn\") { nodes { object { entity { name } } } } }"])
        .arg("--data")
        .arg(&data)
        .env("OSTRAKON_EMBEDDER", "off")
        .output()
        .unwrap();
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(values(&answer["data"]["facts"]["nodes"]), ["London"], "{answer}");
}

const TOKENS: &str = r#"
[[tokens]]
name = "alice-rw"
token = "alice-read-write-0001"
namespaces = { alice = "read-write" }

[[tokens]]
name = "alice-r"
token = "alice-read-only-00001"
namespaces = { alice = "read" }

[[tokens]]
name = "two"
token = "alice-and-bob-rw-0001"
namespaces = { alice = "read-write", bob = "read-write" }
"#;

/// The server's router on a loopback port; its address.
async fn http_server() -> (std::net::SocketAddr, AppState) {
    let store = Arc::new(Store::in_memory());
    let setup = ostrakon_graphql::schema(Arc::clone(&store), ostrakon_graphql::Limits::default());
    let defined = setup
        .execute(
            async_graphql::Request::new(
                "mutation { definePredicate(namespace: \"alice\", name: \"livesIn\", cardinality: ONE, valueType: ENTITY) { seq } }",
            )
            .data(ostrakon_graphql::Access::Local),
        )
        .await;
    assert!(defined.errors.is_empty(), "{:?}", defined.errors);
    let state = AppState::new(store, Config::parse(TOKENS, "mcp.toml").unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let router = app(state.clone());
    tokio::spawn(async move { axum::serve(listener, router).await });
    (addr, state)
}

async fn http_client(addr: std::net::SocketAddr, path: &str, token: &str) -> Result<Client, String> {
    install_tls_provider();
    let config =
        StreamableHttpClientTransportConfig::with_uri(format!("http://{addr}{path}")).auth_header(token);
    let transport = StreamableHttpClientTransport::from_config(config);
    ClientConfig::default().serve(transport).await.map_err(|e| e.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_client_can_use_every_tool_within_its_tokens_namespace() {
    let (addr, state) = http_server().await;

    // The token's one namespace is the connection's.
    let client = http_client(addr, "/mcp", "alice-read-write-0001").await.unwrap();
    exercise(&client).await;
    client.cancel().await.unwrap();
    let written = state
        .schema()
        .execute(
            async_graphql::Request::new(
                "{ facts(namespace: \"alice\", predicate: \"livesIn\", includeAll: true) { nodes { id } } }",
            )
            .data(ostrakon_graphql::Access::Local),
        )
        .await;
    let written = written.data.into_json().unwrap();
    assert!(written["facts"]["nodes"].as_array().unwrap().len() == 3, "the tools wrote to alice: {written}");

    // Without a token, or naming a namespace outside the token's, nothing runs.
    assert!(http_client(addr, "/mcp", "not-a-token-at-all-00").await.is_err());
    let outside = http_client(addr, "/mcp?namespace=bob", "alice-read-write-0001").await;
    assert!(outside.is_err(), "a token for alice reached bob");
    // A page of another site may not call it, whatever its token.
    let mut foreign = std::collections::HashMap::new();
    foreign.insert(http::header::ORIGIN, http::HeaderValue::from_static("http://evil.example"));
    let config = StreamableHttpClientTransportConfig::with_uri(format!("http://{addr}/mcp"))
        .auth_header("alice-read-write-0001")
        .custom_headers(foreign);
    install_tls_provider();
    let refused = ClientConfig::default().serve(StreamableHttpClientTransport::from_config(config)).await;
    assert!(refused.is_err(), "a foreign Origin reached the tools");
    // A token for two namespaces must name one.
    assert!(http_client(addr, "/mcp", "alice-and-bob-rw-0001").await.is_err());
    let bob = http_client(addr, "/mcp?namespace=bob", "alice-and-bob-rw-0001").await.unwrap();
    // Bob's namespace holds none of alice's entities.
    fails(&bob, "facts_as_of", json!({ "subject": { "name": "Alice" } }), "UNKNOWN_ENTITY").await;
    bob.cancel().await.unwrap();

    // A read-only token reads, and its writes are refused as GraphQL refuses them.
    let reader = http_client(addr, "/mcp", "alice-read-only-00001").await.unwrap();
    let read =
        ok(&reader, "facts_as_of", json!({ "subject": { "name": "Alice" }, "predicate": "livesIn" })).await;
    assert_eq!(values(&read["nodes"]), ["London"], "{read}");
    fails(&reader, "remember", json!({ "text": "I am a reader" }), "FORBIDDEN").await;
    fails(&reader, "recall", json!({ "query": "London" }), "FORBIDDEN").await;
    let looked = ok(&reader, "recall", json!({ "query": "London", "reinforce": false })).await;
    assert!(looked["hits"].is_array(), "{looked}");
    reader.cancel().await.unwrap();
}

/// The official MCP Python SDK through the same story, over stdio against `ostrakon mcp`
/// and over streamable HTTP against `/mcp` of `ostrakon serve` (whose session close it
/// must not report as failed).
#[test]
fn the_python_sdk_tells_the_story_over_stdio_and_http() {
    let Some(python) = crate::common::python::with(&["mcp"]) else { return };
    let dir = tempfile::tempdir().unwrap();
    let stdio_data = dir.path().join("stdio");
    std::fs::create_dir_all(&stdio_data).unwrap();
    let said = crate::common::python::run(
        &python,
        "mcp_story.py",
        &["stdio".as_ref(), env!("CARGO_BIN_EXE_ostrakon").as_ref(), stdio_data.as_os_str()],
    );
    assert_eq!(said.trim(), "ok");
    let server = crate::common::serve::start_with(
        &dir.path().join("served"),
        &[("OSTRAKON_EMBEDDER", "off".as_ref())],
    );
    let url = format!("http://{}/mcp?namespace=py-http", server.addr);
    let said = crate::common::python::run(&python, "mcp_story.py", &["http".as_ref(), url.as_ref()]);
    assert_eq!(said.trim(), "ok");
}
