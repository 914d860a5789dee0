//! Extraction through a language model, against a local stub of an OpenAI-compatible
//! endpoint answering recorded completions (`common::stub_model`): what an answer gives
//! is written once per (episode, model, prompt version) with the episode as provenance
//! and a confidence below a client's; retries, refusals, malformed answers, timeouts and
//! the daily budget; writes never wait for the model; the server's queue in `/healthz`
//! and `/metrics`; `ostrakon extract --dry-run`; and the record of it in the log (erasure,
//! checkpoints, a second extractor).

use std::sync::Arc;
use std::time::{Duration, Instant};

use ostrakon_engine::core::{EpisodeId, Namespace, Timestamp};
use ostrakon_engine::{Change, NewEpisode, Store, WriteError, change::EpisodeRef};
use ostrakon_extract::{ExtractionSettings, Extractor};
use ostrakon_graphql::Limits;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::common::gql;
use crate::common::stub_model::{KEY, StubModel};

const MODEL: &str = "stub-model";
const SOURCE: &str = "stub-model@extract-1";

fn settings(stub: &StubModel) -> ExtractionSettings {
    let mut s = ExtractionSettings::new(stub.url(), MODEL);
    s.api_key = Some(KEY.into());
    s.timeout = Duration::from_secs(1);
    s.max_attempts = 3;
    s.backoff = Duration::from_millis(10);
    s
}

fn ns() -> Namespace {
    Namespace::new("namespace", "ana").unwrap()
}

/// Records an episode Ana said on 2024-06-10; its id.
fn record(store: &Store, text: &str, external_id: &str) -> EpisodeId {
    let episode = NewEpisode {
        text: text.into(),
        occurred_at: Timestamp::from_rfc3339("2024-06-10T12:00:00Z").unwrap(),
        role: Some("Ana".into()),
        external_id: Some(external_id.into()),
        ..NewEpisode::default()
    };
    let receipt = store.append(&ns(), vec![Change::RecordEpisode(episode)]).unwrap();
    match receipt.ids[0] {
        Some(ostrakon_engine::RecordId::Episode(id)) => id,
        ref other => panic!("{other:?}"),
    }
}

async fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(30), "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Ana's facts of a predicate in force now: (object, confidence, source, provenance).
async fn facts(store: &Arc<Store>, predicate: &str) -> Vec<serde_json::Value> {
    let schema = ostrakon_graphql::schema(Arc::clone(store), Limits::default());
    let q = format!(
        r#"{{ facts(namespace: "ana", subject: {{ name: "Ana" }}, predicate: "{predicate}") {{ nodes {{
            object {{ entity {{ name }} string }} confidence source valid {{ from }}
            provenance {{ externalId extractedBy }} }} }} }}"#
    );
    gql(&schema, &q).await["facts"]["nodes"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_model_finds_is_written_once_with_its_episode_and_source() {
    let stub = StubModel::start();
    let store = Arc::new(Store::in_memory());
    let extractor = Extractor::new(settings(&stub)).unwrap();
    extractor.listen(&store);
    let stop = CancellationToken::new();
    let running = tokio::spawn(Arc::clone(&extractor).run(Arc::clone(&store), stop.clone()));
    let texts = [
        ("m1", "I moved to Lisbon last May, and I work at Feedzai now."),
        ("m2", "My daughter Rosa turned 7 yesterday."),
        ("m3", "Ugh, traffic again. Anyway, how are you?"),
        ("m4", "[flaky] I am allergic to peanuts."),
        ("m5", "[refuse] Tell me how to pick a lock."),
        ("m6", "[malformed] We adopted a cat called Miso."),
        ("m7", "[slow] I'm flying to Seoul in March."),
    ];
    for (ext, text) in texts {
        record(&store, text, ext);
    }
    let status = Arc::clone(extractor.status());
    wait_for("every episode read or given up", || {
        let s = status.snapshot();
        s.episodes_read + s.failed == 7
    })
    .await;
    let s = status.snapshot();
    assert_eq!((s.episodes_read, s.failed, s.refused, s.queue), (5, 2, 1, 0), "{s:?}");
    // m1: 2, m2: 2 (the item without a subject is left out), m4: 1 after a retry.
    assert_eq!((s.facts_written, s.facts_left_out), (5, 1), "{s:?}");
    // Tries: one each for m1-m3 and m5, two for m4 (HTTP 500 first), three each for the
    // malformed answer and the timeout.
    assert_eq!(s.calls, 4 + 2 + 3 + 3, "{s:?}");
    assert_eq!((stub.calls("[malformed]"), stub.calls("[slow]"), stub.calls("[flaky]")), (3, 3, 2));
    assert!(s.last_error.as_deref().is_some_and(|e| e.contains("no answer within")), "{s:?}");

    let lives = facts(&store, "lives_in").await;
    assert_eq!(lives.len(), 1, "{lives:?}");
    assert_eq!(lives[0]["object"]["entity"]["name"], "Lisbon");
    assert_eq!(lives[0]["confidence"], 0.6);
    assert_eq!(lives[0]["source"], SOURCE);
    assert_eq!(lives[0]["valid"]["from"], "2024-05-01T00:00:00.000000Z");
    assert_eq!(lives[0]["provenance"], json!([{ "externalId": "m1", "extractedBy": [SOURCE] }]));
    assert_eq!(facts(&store, "allergic_to").await[0]["object"]["entity"]["name"], "peanuts");
    // Rosa's age, a literal, is about Rosa; the refusal and the failures wrote no fact.
    assert_eq!(facts(&store, "has_child").await[0]["object"]["entity"]["name"], "Rosa");
    let schema = ostrakon_graphql::schema(Arc::clone(&store), Limits::default());
    let read =
        gql(&schema, r#"{ episodes(namespace: "ana", first: 10) { nodes { externalId extractedBy } } }"#)
            .await;
    let by: Vec<(String, usize)> = read["episodes"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["externalId"].as_str().unwrap().to_owned(), e["extractedBy"].as_array().unwrap().len()))
        .collect();
    let expected: Vec<(String, usize)> =
        [("m1", 1), ("m2", 1), ("m3", 1), ("m4", 1), ("m5", 1), ("m6", 0), ("m7", 0)]
            .iter()
            .map(|(e, n)| ((*e).to_owned(), *n))
            .collect();
    assert_eq!(by, expected);
    // The prompt asked with the schema, the model and the episode's time and speaker.
    let body = &stub.bodies()[0];
    assert_eq!(body["model"], MODEL);
    assert_eq!(body["response_format"]["json_schema"]["strict"], true);
    let message = body["messages"][1]["content"].as_str().unwrap();
    assert!(message.contains("2024-06-10") && message.contains("Speaker: Ana"), "{message}");

    // Another extractor of the same model and prompt (a restart, a second node) asks
    // again only for what was given up, and never writes twice.
    stop.cancel();
    running.await.unwrap();
    let again = Extractor::new(settings(&stub)).unwrap();
    let mut cursor = EpisodeId(0);
    let mut outcomes = Vec::new();
    let stop = CancellationToken::new();
    again
        .read_namespace(&store, &ns(), &mut cursor, ostrakon_extract::Pass::all(&stop), &mut |e, o| {
            outcomes.push((e.external_id.clone().unwrap(), format!("{o:?}")));
        })
        .await;
    let asked: Vec<&str> = outcomes.iter().map(|(e, _)| e.as_str()).collect();
    assert_eq!(asked, ["m6", "m7"], "{outcomes:?}");
    assert_eq!(facts(&store, "lives_in").await.len(), 1);
    // The store refuses a second mark of one (episode, source).
    let dup = store.append(
        &ns(),
        vec![Change::MarkExtracted { episode: EpisodeRef::External("m1".into()), source: SOURCE.into() }],
    );
    let refused = dup.err().map(|e| matches!(e.root(), WriteError::AlreadyExtracted { .. }));
    assert_eq!(refused, Some(true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_never_waits_for_the_model() {
    let stub = StubModel::start();
    let store = Arc::new(Store::in_memory());
    let mut patient = settings(&stub);
    patient.timeout = Duration::from_secs(60);
    let extractor = Extractor::new(patient).unwrap();
    extractor.listen(&store);
    let stop = CancellationToken::new();
    let running = tokio::spawn(Arc::clone(&extractor).run(Arc::clone(&store), stop.clone()));
    record(&store, "[hold] I started learning Korean this week.", "h1");
    let status = Arc::clone(extractor.status());
    wait_for("the call to start", || status.snapshot().in_flight == 1).await;
    // While the model holds its answer, writes go through and are read.
    let written = tokio::task::spawn_blocking({
        let store = Arc::clone(&store);
        move || record(&store, "Ugh, traffic again. Anyway, how are you?", "h2")
    })
    .await
    .unwrap();
    assert_eq!(status.snapshot().in_flight, 1, "the held call is still under way");
    assert_eq!(status.snapshot().queue, 2);
    assert!(
        store.at(&ns(), ostrakon_engine::ReadAt::latest()).unwrap().episode_at(written).unwrap().is_some()
    );
    stub.release();
    wait_for("both read", || status.snapshot().episodes_read == 2).await;
    assert_eq!(facts(&store, "learns").await[0]["object"]["entity"]["name"], "Korean");
    stop.cancel();
    running.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daily_budget_stops_the_calls_and_the_rest_waits_in_the_queue() {
    let stub = StubModel::start();
    let store = Arc::new(Store::in_memory());
    let mut budget = settings(&stub);
    budget.daily_budget = 2;
    let extractor = Extractor::new(budget).unwrap();
    extractor.listen(&store);
    let stop = CancellationToken::new();
    let running = tokio::spawn(Arc::clone(&extractor).run(Arc::clone(&store), stop.clone()));
    for i in 0..4 {
        record(&store, &format!("Nothing much happened on day {i}."), &format!("d{i}"));
    }
    let status = Arc::clone(extractor.status());
    wait_for("two read", || status.snapshot().episodes_read == 2).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let s = status.snapshot();
    assert_eq!((s.calls, s.calls_today, s.daily_budget, s.episodes_read, s.queue), (2, 2, 2, 2, 2), "{s:?}");
    stop.cancel();
    running.await.unwrap();
}

#[test]
fn an_erased_episode_takes_its_extraction_mark_and_a_checkpoint_keeps_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let mark = |store: &Store, ext: &str| {
        store
            .append(
                &ns(),
                vec![Change::MarkExtracted {
                    episode: EpisodeRef::External(ext.into()),
                    source: SOURCE.into(),
                }],
            )
            .unwrap()
    };
    {
        let store = Store::open(dir.path()).unwrap();
        let kept = record(&store, "I moved to Lisbon last May, and I work at Feedzai now.", "k");
        let gone = record(&store, "My daughter Rosa turned 7 yesterday.", "g");
        mark(&store, "k");
        mark(&store, "g");
        assert_eq!(store.unextracted_count(&ns(), SOURCE, EpisodeId(0)).unwrap().0, 0);
        assert_eq!(store.unextracted_count(&ns(), "other@extract-1", EpisodeId(0)).unwrap().0, 2);
        store.checkpoint(&ns()).unwrap();
        let request = ostrakon_engine::EraseRequest {
            target: ostrakon_engine::EraseTarget::Episodes(vec![gone]),
            reason: Some("asked".into()),
            by: None,
        };
        store.erase(&ns(), request).unwrap();
        assert_eq!(
            store.at(&ns(), ostrakon_engine::ReadAt::latest()).unwrap().extracted_by(kept).unwrap(),
            [SOURCE]
        );
        assert!(
            store
                .at(&ns(), ostrakon_engine::ReadAt::latest())
                .unwrap()
                .extracted_by(gone)
                .unwrap()
                .is_empty()
        );
    }
    let store = Store::open(dir.path()).unwrap();
    let people = ns();
    let latest = store.at(&people, ostrakon_engine::ReadAt::latest()).unwrap();
    assert_eq!(latest.extracted_by(EpisodeId(1)).unwrap(), [SOURCE]);
    assert!(latest.extracted_by(EpisodeId(2)).unwrap().is_empty());
    let (page, _) = store.unextracted(&ns(), "other@extract-1", EpisodeId(0), 10).unwrap();
    assert_eq!(page.iter().map(|e| e.id).collect::<Vec<_>>(), [EpisodeId(1)]);
}

fn ostrakon(args: &[&str], data: &std::path::Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_ostrakon"))
        .args(args)
        .arg("--data")
        .arg(data)
        .env("OSTRAKON_EMBEDDER", "off")
        .env("OSTRAKON_LOG", "warn")
        .env("STUB_KEY", KEY)
        .output()
        .unwrap()
}

#[test]
fn the_cli_previews_and_the_server_reads_with_its_queue_in_health_and_metrics() {
    use crate::common::serve::{graphql, http, start_with_args};
    let stub = StubModel::start();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let config = dir.path().join("ostrakon.toml");
    let section = format!(
        "[extraction]\nurl = \"{}\"\nmodel = \"{MODEL}\"\napi_key_env = \"STUB_KEY\"\ntimeout_seconds = 2\nbackoff_ms = 10\n",
        stub.url()
    );
    std::fs::write(&config, &section).unwrap();
    let lines: Vec<String> = [("m1", "I moved to Lisbon last May, and I work at Feedzai now."), ("m3", "Ugh, traffic again. Anyway, how are you?")]
        .iter()
        .map(|(ext, text)| {
            json!({ "namespace": "ana", "op": "recordEpisode",
                    "episode": { "text": text, "occurredAt": "2024-06-10T12:00:00Z", "role": "Ana", "externalId": ext } })
            .to_string()
        })
        .collect();
    let file = dir.path().join("episodes.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    assert!(ostrakon(&["import", file.to_str().unwrap()], &data).status.success());

    // A dry run prints what each episode would give and writes nothing.
    let cfg = config.to_str().unwrap();
    let out = ostrakon(&["extract", "ana", "--config", cfg, "--dry-run"], &data);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let previews: Vec<serde_json::Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(previews.len(), 2, "{previews:?}");
    assert_eq!(previews[0]["externalId"], "m1");
    assert_eq!(previews[0]["facts"][0]["predicate"], "lives_in");
    assert_eq!(previews[0]["facts"][0]["object"], json!({ "entity": "Lisbon" }));
    assert_eq!(previews[0]["facts"][0]["confidence"], 0.6);
    assert_eq!(previews[1]["facts"], json!([]));
    let episodes = r#"{ episodes(namespace: "ana") { nodes { externalId extractedBy } } }"#;
    let read = ostrakon(&["query", episodes], &data);
    let read: serde_json::Value = serde_json::from_slice(&read.stdout).unwrap();
    assert_eq!(read["data"]["episodes"]["nodes"][0]["extractedBy"], json!([]), "{read}");
    assert_eq!(stub.calls("I moved"), 1);

    // The server reads the namespace's backlog from its first write after the start.
    let key = std::ffi::OsString::from(KEY);
    let server = start_with_args(&data, &[("STUB_KEY", &key)], &["--config".as_ref(), config.as_os_str()]);
    let write = r#"mutation { recordEpisode(namespace: "ana", episode: { text: "My daughter Rosa turned 7 yesterday.",
        occurredAt: "2024-06-11T09:00:00Z", role: "Ana", externalId: "m2" }) { seq } }"#;
    let written = graphql(server.addr, write, json!({})).unwrap();
    assert!(written["errors"].is_null(), "{written}");
    let start = Instant::now();
    let health = loop {
        let (status, body) = http(server.addr, "GET", "/healthz?extraction", "").unwrap();
        assert_eq!(status, 200, "{body}");
        let health: serde_json::Value = serde_json::from_str(&body).unwrap();
        if health["extraction"]["episodesRead"] == 3 {
            break health;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "{health}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(health["extraction"]["source"], SOURCE);
    assert_eq!(health["extraction"]["queue"], 0);
    assert_eq!(health["extraction"]["factsWritten"], 4, "{health}");
    let (_, metrics) = http(server.addr, "GET", "/metrics", "").unwrap();
    assert!(metrics.contains("ostrakon_extraction_facts_total 4"), "{metrics}");
    assert!(metrics.contains("ostrakon_extraction_queue 0"), "{metrics}");
    let q = r#"{ facts(namespace: "ana", subject: { name: "Ana" }, predicate: "works_at") { nodes { source object { entity { name } } } } }"#;
    let found = graphql(server.addr, q, json!({})).unwrap();
    assert_eq!(
        found["data"]["facts"]["nodes"],
        json!([{ "source": SOURCE, "object": { "entity": { "name": "Feedzai" } } }])
    );
    // Without a configured extractor the section is null; with plain /healthz, `ok`.
    assert_eq!(http(server.addr, "GET", "/healthz", "").unwrap().1, "ok\n");
}

#[test]
fn a_bad_extraction_section_stops_the_start_naming_its_field() {
    let field = |text: &str| match ostrakon_server::Config::parse(text, "x.toml") {
        Err(ostrakon_server::ConfigError::Invalid { field, .. }) => field,
        other => panic!("{other:?}"),
    };
    let base = "[extraction]\nurl = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\n";
    assert_eq!(
        field(&format!("{base}api_key_env = \"OSTRAKON_TEST_NO_SUCH_VARIABLE\"\n")),
        "extraction.api_key_env"
    );
    assert_eq!(field("[extraction]\nurl = \"ftp://x\"\nmodel = \"m\"\n"), "extraction.url");
    assert_eq!(field(&format!("{base}confidence = 0\n")), "extraction.confidence");
    assert_eq!(field(&format!("{base}daily_budget = 0\n")), "extraction.daily_budget");
    assert_eq!(field(&format!("{base}namespaces = [\"no spaces allowed\"]\n")), "extraction.namespaces[0]");
    assert!(matches!(
        ostrakon_server::Config::parse(&format!("{base}temperature = 1\n"), "x.toml"),
        Err(ostrakon_server::ConfigError::Parse { .. })
    ));
    let ok = ostrakon_server::Config::parse(base, "x.toml").unwrap();
    assert_eq!(ok.extraction.map(|e| e.source()), Some("m@extract-1".to_owned()));
}

#[test]
fn the_extractors_status_needs_an_operators_token_and_never_shows_the_key() {
    use crate::common::serve::{graphql_as, http_with, start_logged};
    let stub = StubModel::start();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("ostrakon.toml");
    // A wrong key, which the model endpoint shows back in its refusal.
    let wrong = "sk-proj-WrongKey0123456789abcdefXYZ";
    let admin = "admin-secret-0123456789abcdef";
    let agent = "agent-secret-0123456789abcdef";
    let section = format!(
        "[[tokens]]\nname = \"admin\"\ntoken = \"{admin}\"\nnamespaces = {{ \"*\" = \"read-write\" }}\n\n\
         [[tokens]]\nname = \"agent\"\ntoken = \"{agent}\"\nnamespaces = {{ ana = \"read-write\" }}\n\n\
         [extraction]\nurl = \"{}\"\nmodel = \"{MODEL}\"\napi_key_env = \"STUB_KEY\"\ntimeout_seconds = 2\nbackoff_ms = 10\nmax_attempts = 1\n",
        stub.url()
    );
    std::fs::write(&config, &section).unwrap();
    let env = [("STUB_KEY", wrong.as_ref()), ("OSTRAKON_EMBEDDER", "off".as_ref())];
    let (server, log) =
        start_logged(&dir.path().join("data"), &env, &["--config".as_ref(), config.as_os_str()]);
    let bearer = |token: &str| format!("Authorization: Bearer {token}\r\n");
    let write = r#"mutation { recordEpisode(namespace: "ana", episode: { text: "I moved to Lisbon last May, and I work at Feedzai now.",
        occurredAt: "2024-06-10T12:00:00Z", role: "Ana", externalId: "m1" }) { seq } }"#;
    let written = graphql_as(server.addr, Some(agent), write, json!({})).unwrap();
    assert!(written["errors"].is_null(), "{written}");
    // The probe answers anyone; its details only a token granted "*".
    assert_eq!(http_with(server.addr, "GET", "/readyz", "", "").unwrap(), (200, "ok\n".into()));
    for details in ["/readyz?extraction", "/healthz?indexing", "/metrics"] {
        assert_eq!(http_with(server.addr, "GET", details, "", "").unwrap().0, 401, "{details}");
        assert_eq!(http_with(server.addr, "GET", details, &bearer(agent), "").unwrap().0, 403, "{details}");
    }
    let start = Instant::now();
    let health = loop {
        let (status, body) = http_with(server.addr, "GET", "/readyz?extraction", &bearer(admin), "").unwrap();
        assert_eq!(status, 200, "{body}");
        let health: serde_json::Value = serde_json::from_str(&body).unwrap();
        if !health["extraction"]["lastError"].is_null() {
            break health;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "{health}");
        std::thread::sleep(Duration::from_millis(50));
    };
    let error = health["extraction"]["lastError"].as_str().unwrap();
    assert!(error.contains("401") && error.contains("Incorrect API key provided"), "{error}");
    assert!(!error.contains("WrongKey"), "{error}");
    let (_, metrics) = http_with(server.addr, "GET", "/metrics", &bearer(admin), "").unwrap();
    drop(server);
    let log = log.lock().unwrap().clone();
    assert!(log.contains("extraction failed"), "{log}");
    for secret in ["WrongKey", admin, agent] {
        assert!(!log.contains(secret), "the log shows {secret}: {log}");
        assert!(!metrics.contains(secret), "{metrics}");
    }
}
