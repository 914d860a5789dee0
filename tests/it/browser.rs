//! The served pages in a real browser: headless Chromium (Debian's `chromium`; `apt-get
//! install chromium`) with every host but this server unreachable, loading GraphiQL on
//! `/graphql` and running a query, and the timeline page on `/ui/` showing the README's
//! Alice example, whose lanes change when the system-time slider moves before a
//! correction. Every request the pages make is recorded and must go to the server.
//! Screenshots are written to `target/test-artifacts/` (or `$OSTRAKON_TEST_ARTIFACTS`).
//!
//! Without Chromium the test says so and passes, unless `OSTRAKON_BROWSER_TEST=required`
//! (as `.ci/run` sets, having installed it).
//!
//! The browser is driven over the Chrome DevTools Protocol with the WebSocket client the
//! tests already use: the test needs five commands (navigate, evaluate, screenshot, and
//! enabling the page and network events), which do not justify a CDP crate's hundred
//! dependencies.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use futures_util::{SinkExt as _, StreamExt as _};
use ostrakon_engine::Store;
use ostrakon_server::{AppState, Config, app};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

/// The browser, found on the path or named by `OSTRAKON_CHROMIUM`.
fn chromium() -> Option<PathBuf> {
    if let Ok(path) = std::env::var("OSTRAKON_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser", "google-chrome"].map(|name| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

fn artifacts() -> PathBuf {
    let dir = std::env::var_os("OSTRAKON_TEST_ARTIFACTS")
        .map_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts"), PathBuf::from);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A headless browser process, killed when dropped.
struct Browser {
    child: Child,
    _profile: tempfile::TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the browser with every request that is not to a loopback address sent to a
/// proxy that does not exist (so it fails), and returns it with its DevTools port.
fn launch(binary: &Path) -> (Browser, u16) {
    let profile = tempfile::tempdir().unwrap();
    let child = Command::new(binary)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--proxy-server=http://127.0.0.1:9",
            "--window-size=1280,900",
            "--remote-debugging-port=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("about:blank")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let browser = Browser { child, _profile: profile };
    let port_file = browser._profile.path().join("DevToolsActivePort");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(port) =
            std::fs::read_to_string(&port_file).ok().and_then(|t| t.lines().next()?.parse().ok())
        {
            return (browser, port);
        }
        assert!(Instant::now() < deadline, "the browser did not open its DevTools port");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// One page's DevTools session.
struct Page {
    socket: tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
    next: u64,
    /// Every URL the page requested.
    requests: Vec<String>,
    /// Console errors and uncaught exceptions.
    errors: Vec<String>,
}

impl Page {
    async fn open(port: u16) -> Page {
        // The first page target, from the DevTools HTTP endpoint.
        let deadline = Instant::now() + Duration::from_secs(20);
        let url = loop {
            let list = tokio::task::spawn_blocking(move || http_get(port, "/json/list")).await.unwrap();
            let target = list.ok().and_then(|body| {
                let targets: Value = serde_json::from_str(&body).ok()?;
                targets.as_array()?.iter().find(|t| t["type"] == "page")?["webSocketDebuggerUrl"]
                    .as_str()
                    .map(str::to_owned)
            });
            if let Some(url) = target {
                break url;
            }
            assert!(Instant::now() < deadline, "the browser has no page");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let (socket, _) = tokio_tungstenite::connect_async(url.as_str()).await.unwrap();
        let mut page = Page { socket, next: 0, requests: Vec::new(), errors: Vec::new() };
        page.command("Page.enable", json!({})).await;
        page.command("Network.enable", json!({})).await;
        page.command("Runtime.enable", json!({})).await;
        page
    }

    /// Sends a command and waits for its answer, recording the events that come first.
    async fn command(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let message = json!({ "id": id, "method": method, "params": params }).to_string();
        self.socket.send(Message::text(message)).await.unwrap();
        loop {
            let message = tokio::time::timeout(Duration::from_secs(30), self.socket.next())
                .await
                .unwrap_or_else(|_| panic!("no answer to {method}"))
                .unwrap_or_else(|| panic!("the browser closed during {method}"))
                .unwrap();
            let Message::Text(text) = message else { continue };
            let value: Value = serde_json::from_str(&text).unwrap();
            if value["id"] == id {
                assert!(value.get("error").is_none(), "{method}: {value}");
                return value["result"].clone();
            }
            self.event(&value);
        }
    }

    fn event(&mut self, value: &Value) {
        match value["method"].as_str() {
            Some("Network.requestWillBeSent") => {
                if let Some(url) = value["params"]["request"]["url"].as_str() {
                    self.requests.push(url.to_owned());
                }
            }
            Some("Runtime.exceptionThrown") => {
                self.errors.push(value["params"]["exceptionDetails"].to_string())
            }
            Some("Runtime.consoleAPICalled") if value["params"]["type"] == "error" => {
                self.errors.push(value["params"]["args"].to_string());
            }
            _ => {}
        }
    }

    /// The value of a JavaScript expression (promises awaited).
    async fn eval(&mut self, expression: &str) -> Value {
        let result = self
            .command(
                "Runtime.evaluate",
                json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
            )
            .await;
        assert!(result.get("exceptionDetails").is_none(), "{expression}: {result}");
        result["result"]["value"].clone()
    }

    /// Waits until `condition` (an expression) is true.
    async fn wait_for(&mut self, condition: &str, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if self.eval(&format!("Boolean({condition})")).await == Value::Bool(true) {
                return;
            }
            if Instant::now() > deadline {
                let body = self.eval("document.body ? document.body.innerText.slice(0, 2000) : ''").await;
                panic!("timed out waiting for {what}; the page says: {body}; errors: {:?}", self.errors);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn goto(&mut self, url: &str) {
        self.command("Page.navigate", json!({ "url": url })).await;
        self.wait_for("document.readyState === 'complete'", url).await;
    }

    async fn screenshot(&mut self, name: &str) {
        let shot = self.command("Page.captureScreenshot", json!({ "format": "png" })).await;
        let png = base64::engine::general_purpose::STANDARD.decode(shot["data"].as_str().unwrap()).unwrap();
        std::fs::write(artifacts().join(name), png).unwrap();
    }
}

/// A GET on the DevTools endpoint (which keeps the connection open: the body is read by
/// its length).
fn http_get(port: u16, path: &str) -> std::io::Result<String> {
    use std::io::{BufRead as _, Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n")?;
    let mut reader = std::io::BufReader::new(stream);
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// The README's example, then a correction in a later batch (batch 3): the move to London
/// was in September 2015, not June.
const STORY: [&str; 4] = [
    r#"mutation { definePredicate(namespace: "alice", name: "livesIn", cardinality: ONE, valueType: ENTITY) { seq } }"#,
    r#"mutation { recordEpisode(namespace: "alice",
        episode: { text: "I lived in Paris from 2010 and moved to London in June 2015.", occurredAt: "2024-05-01T10:00:00Z" }
        facts: [
          { subject: { name: "Alice" }, predicate: "livesIn", object: { entity: { name: "Paris" } }, validFrom: "2010" }
          { subject: { name: "Alice" }, predicate: "livesIn", object: { entity: { name: "London" } }, validFrom: "2015-06" }
        ]) { seq } }"#,
    r#"mutation { recordEpisode(namespace: "alice",
        episode: { text: "Correction: I moved to London in September 2015, not June.", occurredAt: "2024-05-02T09:00:00Z" }
        facts: [{ subject: { name: "Alice" }, predicate: "livesIn", object: { entity: { name: "London" } },
                  validFrom: "2015-09", supersedes: "2", correction: true }]) { seq } }"#,
    // Bob liked chess from 2015 and stopped in 2021: negated now, current then.
    r#"mutation { assertFacts(namespace: "bob", facts: [
          { subject: { name: "Bob" }, predicate: "likes", object: { entity: { name: "chess" } }, validFrom: "2015" }
          { subject: { name: "Bob" }, predicate: "likes", object: { entity: { name: "chess" } }, validFrom: "2021",
            polarity: NEGATED }]) { seq } }"#,
];

async fn server() -> SocketAddr {
    let store = Arc::new(Store::in_memory());
    let schema = ostrakon_graphql::schema(Arc::clone(&store), ostrakon_graphql::Limits::default());
    for operation in STORY {
        let done = schema
            .execute(async_graphql::Request::new(operation).data(ostrakon_graphql::Access::Local))
            .await;
        assert!(done.errors.is_empty(), "{:?}", done.errors);
    }
    let state = AppState::new(store, Config::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app(state)).await });
    addr
}

/// The `data-value`s of the facts listed as in force at the cursor.
const IN_FORCE: &str = "[...document.querySelectorAll('#in-force li')].map(li => li.dataset.value).join(',')";

/// The facts drawn in force in the livesIn lane, as `id:value:status`, sorted.
const LANE: &str = "[...document.querySelectorAll('[data-lane=\"livesIn\"] [data-fact]')]\
    .map(b => b.dataset.fact + ':' + b.dataset.value + ':' + b.dataset.status).sort().join(',')";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graphiql_and_the_timeline_work_with_only_the_server_reachable() {
    let Some(binary) = chromium() else {
        assert_ne!(
            std::env::var("OSTRAKON_BROWSER_TEST").as_deref(),
            Ok("required"),
            "OSTRAKON_BROWSER_TEST=required but no chromium on the PATH"
        );
        eprintln!(
            "browser test skipped: no chromium on the PATH (apt-get install chromium, or set OSTRAKON_CHROMIUM)"
        );
        return;
    };
    let addr = server().await;
    let origin = format!("http://{addr}");
    let (_browser, port) = launch(&binary);
    let mut page = Page::open(port).await;

    // GraphiQL renders from the server's own files and runs a query.
    page.goto(&format!("{origin}/graphql")).await;
    page.wait_for("document.querySelector('.graphiql-container .CodeMirror')", "GraphiQL's editor").await;
    let query = r#"{ facts(namespace: "alice", subject: { name: "Alice" }, predicate: "livesIn", validAt: "2012") { nodes { object { entity { name } } } } }"#;
    page.eval(&format!(
        "document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.setValue({})",
        serde_json::to_string(query).unwrap()
    ))
    .await;
    page.eval("document.querySelector('.graphiql-execute-button').click()").await;
    page.wait_for(
        "document.querySelector('.graphiql-response .CodeMirror')?.CodeMirror.getValue().includes('Paris')",
        "GraphiQL's answer",
    )
    .await;
    let answer =
        page.eval("document.querySelector('.graphiql-response .CodeMirror').CodeMirror.getValue()").await;
    let answer: Value = serde_json::from_str(answer.as_str().unwrap()).unwrap();
    assert_eq!(answer["data"]["facts"]["nodes"], json!([{ "object": { "entity": { "name": "Paris" } } }]));
    page.screenshot("graphiql.png").await;

    // The timeline at July 2015, as known now: Paris (the correction moved London to
    // September).
    page.goto(&format!("{origin}/ui/?ns=alice&entity=Alice&valid=2015-07")).await;
    let ready = "document.body.dataset.state === 'ready'";
    page.wait_for(
        &format!("{ready} && document.querySelector('[data-lane=\"livesIn\"] [data-fact]')"),
        "the lanes",
    )
    .await;
    assert_eq!(page.eval("document.querySelector('#known').value").await, "3");
    assert_eq!(page.eval(IN_FORCE).await, "Paris");
    let now = page.eval(LANE).await;
    let now = now.as_str().unwrap().to_owned();
    assert!(now.contains(":Paris:CURRENT") && now.contains(":London:NOT_YET_VALID"), "{now}");
    assert!(!now.contains("2:London"), "the corrected London fact is not in force as known now: {now}");
    let retracted = page.eval("document.querySelector('[data-declared=\"2\"]')?.dataset.status").await;
    assert_eq!(retracted, "RETRACTED");
    let points = page.eval("document.querySelector('svg#retention polyline')?.getAttribute('points').trim().split(/\\s+/).length").await;
    assert!(points.as_u64().is_some_and(|n| n >= 10), "retention curve: {points}");
    page.screenshot("timeline-known-now.png").await;

    // A click on the Paris bar shows its provenance and reason.
    page.eval("document.querySelector('[data-lane=\"livesIn\"] [data-value=\"Paris\"]').dispatchEvent(new MouseEvent('click', { bubbles: true }))").await;
    page.wait_for("document.querySelector('#details [data-episode]')", "the fact's details").await;
    let details = page.eval("document.querySelector('#details').innerText").await;
    let details = details.as_str().unwrap();
    assert!(details.contains("I lived in Paris from 2010"), "{details}");
    assert!(details.contains("context tier") && details.contains("ARCHIVE"), "{details}");
    let reason = page.eval("document.querySelector('#details .reason')?.textContent.trim()").await;
    assert!(reason.as_str().is_some_and(|r| !r.is_empty()), "no reason shown: {details}");

    // As known before the correction (batch 2), London from June: the lanes change.
    page.eval("const k = document.querySelector('#known'); k.value = '2'; k.dispatchEvent(new Event('input', { bubbles: true })); k.dispatchEvent(new Event('change', { bubbles: true }))").await;
    page.wait_for(
        &format!("{ready} && document.querySelector('[data-lane=\"livesIn\"] [data-fact=\"2\"]')"),
        "the lanes at batch 2",
    )
    .await;
    assert_eq!(page.eval(IN_FORCE).await, "London");
    let before = page.eval(LANE).await;
    let before = before.as_str().unwrap().to_owned();
    assert!(before.contains("2:London:CURRENT"), "{before}");
    assert_ne!(before, now, "moving the slider before the correction changed nothing");
    assert!(
        page.eval("document.querySelector('#known-label').textContent").await.as_str().unwrap().contains('2')
    );
    page.screenshot("timeline-before-correction.png").await;

    // Bob's chess, negated since 2021: the stretch it was in force (2015–2021) is drawn
    // in the colour of a current fact, not of its status now.
    page.goto(&format!("{origin}/ui/?ns=bob&entity=Bob")).await;
    let liked = "[data-lane=\"likes\"] [data-fact][data-polarity=\"ASSERTED\"]";
    page.wait_for(&format!("{ready} && document.querySelector('{liked}')"), "Bob's lanes").await;
    assert_eq!(page.eval(&format!("document.querySelector('{liked}').dataset.status")).await, "NEGATED");
    let fill = |selector: &str| format!("getComputedStyle(document.querySelector('{selector}')).fill");
    let past = page.eval(&fill(&format!("{liked} rect"))).await;
    let current = page.eval("getComputedStyle(document.querySelector('#legend .s-CURRENT')).fill").await;
    let negated = page.eval("getComputedStyle(document.querySelector('#legend .s-NEGATED')).fill").await;
    assert_eq!(past, current, "a past stretch takes the colour of what it was then");
    assert_ne!(past, negated);
    page.screenshot("timeline-past-stretch.png").await;
    assert!(http_get(addr.port(), "/favicon.ico").is_ok_and(|r| r.contains("<svg")), "no favicon");

    // Nothing was requested from anywhere but the server.
    let elsewhere: Vec<&String> = page
        .requests
        .iter()
        .filter(|url| !url.starts_with(&origin) && !url.starts_with("data:") && !url.starts_with("about:"))
        .collect();
    assert!(elsewhere.is_empty(), "the pages asked other hosts for {elsewhere:?}");
    assert!(
        page.requests.iter().any(|u| u.ends_with("/assets/graphiql/graphiql.min.js")),
        "{:?}",
        page.requests
    );
    assert!(page.errors.is_empty(), "the pages logged errors: {:?}", page.errors);
}

/// A page of its own origin (a plain server on another port), for cross-origin calls.
async fn other_origin() -> SocketAddr {
    let page = axum::Router::new().route(
        "/",
        axum::routing::get(|| async {
            axum::response::Html("<!doctype html><title>another site</title><p>hi</p>")
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, page).await });
    addr
}

/// A `fetch` of the API from the page: the answer's status and body, or the browser's
/// error (a CORS refusal is a `TypeError`, with no detail a page may read).
fn cross_origin_fetch(api: SocketAddr, token: &str) -> String {
    let body =
        serde_json::to_string(&json!({ "query": "{ entities(namespace: \"alice\") { nodes { name } } }" }))
            .unwrap();
    format!(
        "fetch('http://{api}/graphql', {{ method: 'POST', headers: {{ 'Content-Type': 'application/json', \
         'Authorization': 'Bearer {token}' }}, body: {body:?} }})\
         .then(r => r.text().then(t => r.status + ' ' + t), e => 'refused: ' + e.name)"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_of_an_allowed_origin_calls_the_api_and_one_of_another_origin_cannot() {
    let Some(binary) = chromium() else {
        assert_ne!(
            std::env::var("OSTRAKON_BROWSER_TEST").as_deref(),
            Ok("required"),
            "no chromium on the PATH"
        );
        eprintln!("browser test skipped: no chromium on the PATH");
        return;
    };
    let (allowed, other) = (other_origin().await, other_origin().await);
    let token = "browser-token-0123456789abcdef";
    let config_text = format!(
        "allowed_origins = [\"http://{allowed}\"]\n[[tokens]]\nname = \"page\"\ntoken = \"{token}\"\nnamespaces = {{ alice = \"read-write\" }}\n"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ostrakon.toml"), config_text).unwrap();
    let config = Config::load(dir.path().join("ostrakon.toml")).unwrap();
    let store = Arc::new(Store::in_memory());
    let schema = ostrakon_graphql::schema(Arc::clone(&store), ostrakon_graphql::Limits::default());
    let seed = r#"mutation { recordEpisode(namespace: "alice", episode: { text: "Alice wrote" }, entities: [{ name: "Alice" }]) { seq } }"#;
    let done = schema.execute(async_graphql::Request::new(seed).data(ostrakon_graphql::Access::Local)).await;
    assert!(done.errors.is_empty(), "{:?}", done.errors);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let api = listener.local_addr().unwrap();
    let state = AppState::new(store, config);
    tokio::spawn(async move { axum::serve(listener, app(state)).await });
    let (_browser, port) = launch(&binary);
    let mut page = Page::open(port).await;

    // From the allowed origin: the preflight is granted, the answer readable.
    page.goto(&format!("http://{allowed}/")).await;
    let answer = page.eval(&cross_origin_fetch(api, token)).await;
    let answer = answer.as_str().unwrap();
    assert!(answer.starts_with("200 ") && answer.contains("\"Alice\""), "{answer}");
    // From any other origin the browser refuses it: no CORS header is granted.
    page.goto(&format!("http://{other}/")).await;
    let answer = page.eval(&cross_origin_fetch(api, token)).await;
    assert_eq!(answer, "refused: TypeError");

    // The preflight as the browser sent it, seen from outside: the origin, methods and
    // headers for the allowed page; nothing for another.
    let granted = tokio::task::spawn_blocking(move || raw_head(api, allowed)).await.unwrap();
    assert!(granted.contains(&format!("access-control-allow-origin: http://{allowed}")), "{granted}");
    assert!(granted.contains("access-control-allow-methods: get,post"), "{granted}");
    assert!(granted.contains("authorization"), "{granted}");
    let refused = tokio::task::spawn_blocking(move || raw_head(api, other)).await.unwrap();
    assert!(refused.starts_with("http/1.1 403"), "{refused}");
    assert!(!refused.contains("access-control-"), "{refused}");
}

/// The head of a preflight's answer from `origin`, lower-cased.
fn raw_head(api: SocketAddr, origin: SocketAddr) -> String {
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(api).unwrap();
    write!(
        stream,
        "OPTIONS /graphql HTTP/1.1\r\nHost: {api}\r\nOrigin: http://{origin}\r\nAccess-Control-Request-Method: POST\r\n\
         Access-Control-Request-Headers: content-type, authorization\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    raw.split("\r\n\r\n").next().unwrap_or_default().to_ascii_lowercase()
}
