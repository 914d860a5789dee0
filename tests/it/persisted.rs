//! Persisted queries over HTTP, as Apollo clients send them: by hash, registered on a
//! miss, checked against their hash; and an operator's allow-list that lets only its
//! documents run (whole or by hash), over HTTP and WebSocket, while MCP's own tools go on.

use serde_json::{Value, json};
use sha2::Digest as _;

use crate::common::serve::{http, start_with_args};

const READ: &str =
    "query($ns: String!) { entities(namespace: $ns, first: 5) { nodes { name } basis { seq } } }";
const WRITE: &str = "mutation { recordEpisode(namespace: \"p\", episode: {text: \"Ada wrote\"}, entities: [{name: \"Ada\"}]) { seq } }";

fn sha(text: &str) -> String {
    sha2::Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

fn post(addr: std::net::SocketAddr, body: Value) -> Value {
    let (status, answer) = http(addr, "POST", "/graphql", &body.to_string()).unwrap();
    assert_eq!(status, 200, "{answer}");
    serde_json::from_str(&answer).unwrap()
}

fn by_hash(hash: &str, version: u64) -> Value {
    json!({ "persistedQuery": { "version": version, "sha256Hash": hash } })
}

fn code(answer: &Value) -> &str {
    answer["errors"][0]["extensions"]["code"].as_str().unwrap_or_default()
}

#[test]
fn a_document_sent_by_hash_runs_once_registered_and_only_with_its_own_hash() {
    let dir = tempfile::tempdir().unwrap();
    let off = [("OSTRAKON_EMBEDDER", "off".as_ref())];
    let server = start_with_args(&dir.path().join("data"), &off, &[]);
    assert!(post(server.addr, json!({ "query": WRITE }))["errors"].is_null());
    let vars = json!({ "ns": "p" });
    let hash = sha(READ);
    // Unknown: Apollo clients look for this message, then send the document with its hash.
    let miss = post(server.addr, json!({ "variables": vars, "extensions": by_hash(&hash, 1) }));
    assert_eq!(code(&miss), "PERSISTED_QUERY_NOT_FOUND", "{miss}");
    assert_eq!(miss["errors"][0]["message"], "PersistedQueryNotFound");
    let whole =
        post(server.addr, json!({ "query": READ, "variables": vars, "extensions": by_hash(&hash, 1) }));
    assert_eq!(whole["data"]["entities"]["nodes"][0]["name"], "Ada", "{whole}");
    let again = post(server.addr, json!({ "variables": vars, "extensions": by_hash(&hash, 1) }));
    assert_eq!(again, whole);
    // Uppercase hex names the same document.
    let upper =
        post(server.addr, json!({ "variables": vars, "extensions": by_hash(&hash.to_uppercase(), 1) }));
    assert_eq!(upper, whole);
    // A hash that is not the document's registers nothing.
    let other = "query { __typename }";
    let wrong = post(server.addr, json!({ "query": other, "extensions": by_hash(&hash, 1) }));
    assert_eq!(code(&wrong), "PERSISTED_QUERY_HASH_MISMATCH", "{wrong}");
    let still = post(server.addr, json!({ "variables": vars, "extensions": by_hash(&hash, 1) }));
    assert_eq!(still, whole);
    let never = post(server.addr, json!({ "extensions": by_hash(&sha(other), 1) }));
    assert_eq!(code(&never), "PERSISTED_QUERY_NOT_FOUND", "{never}");
    // Other versions and malformed hashes are refused, typed.
    let v2 = post(server.addr, json!({ "variables": vars, "extensions": by_hash(&hash, 2) }));
    assert_eq!(code(&v2), "PERSISTED_QUERY_NOT_SUPPORTED", "{v2}");
    for bad in [json!({ "persistedQuery": "x" }), by_hash("abc", 1), by_hash(&"g".repeat(64), 1)] {
        let answer = post(server.addr, json!({ "query": READ, "variables": vars, "extensions": bad }));
        assert_eq!(code(&answer), "BAD_REQUEST", "{answer}");
    }
    // Without a persisted query, documents run as ever.
    assert!(post(server.addr, json!({ "query": "{ __typename }" }))["errors"].is_null());
}

/// Every byte but letters and digits percent-encoded: a query string's value.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}

fn get(addr: std::net::SocketAddr, params: &[(&str, String)]) -> (u16, Value) {
    let query: Vec<String> = params.iter().map(|(k, v)| format!("{k}={}", encode(v))).collect();
    let (status, answer) = http(addr, "GET", &format!("/graphql?{}", query.join("&")), "").unwrap();
    (status, serde_json::from_str(&answer).unwrap_or_else(|_| panic!("{status}: {answer}")))
}

/// Apollo clients send persisted queries over GET (`?extensions=…&variables=…`): they run,
/// as plain `?query=` ones do; a GET never writes.
#[test]
fn queries_run_over_get_whole_or_by_hash_and_mutations_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let off = [("OSTRAKON_EMBEDDER", "off".as_ref())];
    let server = start_with_args(&dir.path().join("data"), &off, &[]);
    assert!(post(server.addr, json!({ "query": WRITE }))["errors"].is_null());
    let vars = json!({ "ns": "p" }).to_string();
    let (status, whole) = get(server.addr, &[("query", READ.into()), ("variables", vars.clone())]);
    assert_eq!(status, 200, "{whole}");
    assert_eq!(whole["data"]["entities"]["nodes"][0]["name"], "Ada", "{whole}");
    // By hash: unknown, then sent with its document, then by hash alone.
    let hash = by_hash(&sha(READ), 1).to_string();
    let (_, miss) = get(server.addr, &[("extensions", hash.clone()), ("variables", vars.clone())]);
    assert_eq!(code(&miss), "PERSISTED_QUERY_NOT_FOUND", "{miss}");
    let with_doc = [("query", READ.to_owned()), ("extensions", hash.clone()), ("variables", vars.clone())];
    assert_eq!(get(server.addr, &with_doc).1, whole);
    let (status, by_hash_only) = get(server.addr, &[("extensions", hash), ("variables", vars.clone())]);
    assert_eq!((status, &by_hash_only), (200, &whole));
    // A mutation over GET is refused and writes nothing.
    let (status, refused) = get(server.addr, &[("query", WRITE.into())]);
    assert_eq!(status, 405, "{refused}");
    assert_eq!(code(&refused), "BAD_REQUEST", "{refused}");
    let after = get(server.addr, &[("query", READ.into()), ("variables", vars)]).1;
    assert_eq!(after["data"]["entities"]["nodes"].as_array().unwrap().len(), 1, "{after}");
    // Broken parameters are typed errors.
    let (status, bad) = get(server.addr, &[("query", READ.into()), ("variables", "{".into())]);
    assert_eq!((status, code(&bad)), (400, "BAD_REQUEST"), "{bad}");
}

/// A SPARQL query an allow-list may hold too.
const SPARQL: &str = "SELECT ?name WHERE { ?e <http://www.w3.org/2000/01/rdf-schema#label> ?name }";

#[test]
fn with_an_allow_list_only_its_documents_run() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = json!({
        "format": "apollo-persisted-query-manifest",
        "version": 1,
        "operations": [
            { "id": sha(READ), "name": "Read", "type": "query", "body": READ },
            { "id": sha(WRITE), "name": "Write", "type": "mutation", "body": WRITE },
            { "id": sha(SPARQL), "name": "Names", "type": "query", "body": SPARQL },
        ],
    });
    std::fs::write(dir.path().join("operations.json"), manifest.to_string()).unwrap();
    let config = dir.path().join("ostrakon.toml");
    std::fs::write(&config, "[persisted_queries]\nallow_list = \"operations.json\"\n").unwrap();
    let off = [("OSTRAKON_EMBEDDER", "off".as_ref())];
    let server = start_with_args(&dir.path().join("data"), &off, &["--config".as_ref(), config.as_os_str()]);
    let vars = json!({ "ns": "p" });
    assert!(post(server.addr, json!({ "query": WRITE }))["errors"].is_null());
    let whole = post(server.addr, json!({ "query": READ, "variables": vars }));
    assert_eq!(whole["data"]["entities"]["nodes"][0]["name"], "Ada", "{whole}");
    // Listed documents run by hash without ever being sent.
    let hashed = post(server.addr, json!({ "variables": vars, "extensions": by_hash(&sha(READ), 1) }));
    assert_eq!(hashed, whole);
    // Anything else is refused, whole, by hash, or sent with its hash to register it.
    let other = "{ __typename }";
    for body in [
        json!({ "query": other }),
        json!({ "extensions": by_hash(&sha(other), 1) }),
        json!({ "query": other, "extensions": by_hash(&sha(other), 1) }),
        json!({ "query": format!("{READ} "), "variables": vars }),
    ] {
        let answer = post(server.addr, body);
        assert_eq!(code(&answer), "OPERATION_NOT_ALLOWED", "{answer}");
        assert!(answer["data"].is_null());
    }
    // SPARQL is held to the same list: its listed query runs, any other is refused.
    let sparql = |query: &str| {
        let encoded = serde_urlencoded::to_string([("query", query)]).unwrap();
        let path = format!("/sparql?namespace=p&{encoded}");
        crate::common::serve::http_with(
            server.addr,
            "GET",
            &path,
            "Accept: application/sparql-results+json\r\n",
            "",
        )
        .unwrap()
    };
    let (status, body) = sparql(SPARQL);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Ada"), "{body}");
    for other in ["SELECT * WHERE { ?s ?p ?o }", &format!("{SPARQL} ")] {
        let (status, body) = sparql(other);
        assert_eq!(status, 403, "{body}");
        assert!(body.contains("OPERATION_NOT_ALLOWED"), "{body}");
    }
    // MCP's own tools are the server's documents, not the client's.
    crate::mcp::install_tls_provider();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        use rmcp::ServiceExt as _;
        let url = format!("http://{}/mcp?namespace=p", server.addr);
        let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url);
        let client = rmcp::model::ClientConfig::default().serve(transport).await.unwrap();
        let (failed, body) =
            crate::mcp::call(&client, "facts_as_of", json!({ "predicate": "livesIn" })).await;
        assert!(!failed, "{body}");
        client.cancel().await.unwrap();
    });
}

#[test]
fn an_allow_list_that_is_not_a_manifest_of_its_documents_stops_the_server_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = json!({
        "format": "apollo-persisted-query-manifest",
        "version": 1,
        "operations": [{ "id": sha("{ a }"), "name": "A", "type": "query", "body": "{ b }" }],
    });
    std::fs::write(dir.path().join("operations.json"), manifest.to_string()).unwrap();
    let config = dir.path().join("ostrakon.toml");
    std::fs::write(&config, "[persisted_queries]\nallow_list = \"operations.json\"\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ostrakon"))
        .args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(&config)
        .arg("--data")
        .arg(dir.path().join("data"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("persisted_queries.allow_list") && stderr.contains("operations[0].id"),
        "{stderr}"
    );
}
