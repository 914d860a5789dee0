//! Erasure end to end, through the server and the command line: a person's name in
//! episodes, facts (as subject and object), aliases and an intention, on disk in the log,
//! a checkpoint and the embedding cache; erased over GraphQL; then no file of the data
//! directory, no read at any recorded read point, no search and neither export holds any
//! of it, while the rest answers as before. And who may erase and drop.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::serve::{graphql, graphql_as, start, start_with_args};

use ostrakon_testkit::erasure::{NAME, NEEDLES, SECRET, leftovers as grep, walk as files};

const STORY: &str = r#"
mutation {
  a: recordEpisode(namespace: "people", episode: {text: "Bob Marlowe moved to Paris in spring.", occurredAt: "2024-03-01", thread: "t1"},
    entities: [{name: "Bob Marlowe"}, {name: "Paris"}],
    facts: [{subject: {name: "Bob Marlowe"}, predicate: "livesIn", object: {entity: {name: "Paris"}}}]) { seq }
  b: recordEpisode(namespace: "people", episode: {text: "Zyxwarbleton Quennimore told Bob Marlowe the orchid code orchid-plover-5512.", occurredAt: "2024-03-02", thread: "t1"},
    entities: [{name: "Zyxwarbleton Quennimore", aliases: ["Quennibald Xorvath"]}],
    facts: [{subject: {name: "Zyxwarbleton Quennimore"}, predicate: "code", object: {string: "orchid-plover-5512"}},
            {subject: {name: "Bob Marlowe"}, predicate: "knows", object: {entity: {name: "Zyxwarbleton Quennimore"}}}]) { seq }
  c: addIntention(namespace: "people", payload: "ask Quennibald Xorvath about the orchids", trigger: {entities: [{name: "Zyxwarbleton Quennimore"}]}) { id }
  d: recordEpisode(namespace: "people", episode: {text: "Bob Marlowe likes the Seine.", occurredAt: "2024-04-01", thread: "t1"}) { seq }
}"#;

/// What the namespace says at batch `seq`, everything but erasure markers.
const READ: &str = r#"
query($s: Int!) {
  entities(namespace: "people", knownAtSeq: $s, validAt: "2025-01-01", first: 20) { edges { node { name aliases } } }
  facts(namespace: "people", subject: {name: "Bob Marlowe"}, knownAtSeq: $s, validAt: "2025-01-01", first: 20) { edges { node { predicate object { entity { name } string } } } }
  episodes(namespace: "people", knownAtSeq: $s, first: 20) { edges { node { text } } }
}"#;

#[track_caller]
fn ok(body: Value) -> Value {
    assert!(body["errors"].is_null(), "{body}");
    body["data"].clone()
}

fn stop(server: crate::common::serve::Server) {
    let mut server = server;
    let pid = server.child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    assert!(server.child.wait().unwrap().success());
}

fn ostrakon(args: &[&str], data: &Path) -> (bool, String) {
    let out =
        Command::new(env!("CARGO_BIN_EXE_ostrakon")).args(args).arg("--data").arg(data).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

fn cache_bytes(data: &Path) -> u64 {
    files(&data.join("embeddings")).iter().map(|f| std::fs::metadata(f).map_or(0, |m| m.len())).sum()
}

#[test]
fn an_erased_person_leaves_no_byte_on_disk_and_no_trace_in_any_read_or_export() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = start(&data);
    let written = ok(graphql(server.addr, STORY, json!({})).unwrap());
    let last = written["d"]["seq"].as_u64().unwrap();
    let points: Vec<u64> = (1..=last).collect();
    // Embedded (the cache fills), searchable: a search at the last batch waits for its vectors.
    let search = r#"{ search(namespace: "people", text: "orchid code", limit: 10) { hits { episode { text } fact { predicate } } } }"#;
    let embedded = search.replace("limit: 10)", &format!("limit: 10, knownAtSeq: {last})"));
    let found = ok(graphql(server.addr, &embedded, json!({})).unwrap());
    assert!(found.to_string().contains(SECRET), "{found}");
    let before: Vec<Value> =
        points.iter().map(|s| ok(graphql(server.addr, READ, json!({ "s": s })).unwrap())).collect();
    stop(server);
    assert!(!grep(&data).is_empty(), "the story is on disk (log, checkpoint)");
    let cached = cache_bytes(&data);

    let server = start(&data);
    let id = ok(graphql(
        server.addr,
        r#"{ entity(namespace: "people", name: "Quennibald Xorvath") { id } }"#,
        json!({}),
    )
    .unwrap())["entity"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // An unknown id erases nothing.
    let unknown = graphql(
        server.addr,
        r#"mutation { eraseEntity(namespace: "people", id: "999") { seq } }"#,
        json!({}),
    )
    .unwrap();
    assert_eq!(unknown["errors"][0]["extensions"]["code"], "UNKNOWN_ENTITY", "{unknown}");
    let erase = r#"mutation($id: ID!) { eraseEntity(namespace: "people", id: $id, reason: "request of the data subject") {
        seq records { kind id contentHash } batchesRewritten } }"#;
    let erased = ok(graphql(server.addr, erase, json!({ "id": id })).unwrap())["eraseEntity"].clone();
    let kinds: Vec<&str> =
        erased["records"].as_array().unwrap().iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["ENTITY", "FACT", "FACT", "EPISODE", "INTENTION"], "{erased}");
    // Every read point: the person is gone, the rest is as it was.
    for (s, was) in points.iter().zip(&before) {
        let now = ok(graphql(server.addr, READ, json!({ "s": s })).unwrap());
        let text = now.to_string();
        assert!(NEEDLES.iter().all(|n| !text.contains(n)), "at {s}: {text}");
        let mut expected = was.clone();
        strip_person(&mut expected);
        assert_eq!(now, expected, "at {s}");
    }
    let found = ok(graphql(server.addr, search, json!({})).unwrap()).to_string();
    assert!(NEEDLES.iter().all(|n| !found.contains(n)), "{found}");
    let marker = graphql(
        server.addr,
        r#"query($id: ID!) { entity(namespace: "people", id: $id) { name } }"#,
        json!({ "id": id }),
    )
    .unwrap();
    assert_eq!(marker["errors"][0]["extensions"]["code"], "ERASED", "{marker}");
    let audit = ok(graphql(
        server.addr,
        r#"{ erasures(namespace: "people") { seq reason by records { kind } } }"#,
        json!({}),
    )
    .unwrap());
    assert_eq!(audit["erasures"][0]["reason"], "request of the data subject", "{audit}");
    assert_eq!(audit["erasures"][0]["by"], "local");
    stop(server);

    let on_disk = grep(&data);
    assert!(on_disk.is_empty(), "erased strings on disk: {on_disk:?}");
    assert!(cache_bytes(&data) < cached, "the embedding cache dropped the erased texts' vectors");
    for format in ["jsonl", "nquads"] {
        let (success, out) = ostrakon(&["export", "--format", format], &data);
        assert!(success, "{out}");
        assert!(out.contains("Bob Marlowe") && NEEDLES.iter().all(|n| !out.contains(n)), "{format}: {out}");
    }
    // The export, tombstones and all, imports into an identical store.
    let exported = dir.path().join("export.jsonl");
    let (success, out) = ostrakon(&["export", "--out", exported.to_str().unwrap()], &data);
    assert!(success, "{out}");
    let copy = dir.path().join("copy");
    let out = Command::new(env!("CARGO_BIN_EXE_ostrakon"))
        .args(["import", exported.to_str().unwrap(), "--data"])
        .arg(&copy)
        .env("OSTRAKON_EMBEDDER", "off")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let events = |data: &Path| -> Vec<Value> {
        let (success, out) = ostrakon(&["export"], data);
        assert!(success, "{out}");
        out.lines()
            .filter(|l| l.starts_with('{'))
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["events"].clone())
            .collect()
    };
    assert_eq!(events(&copy), events(&data));
}

/// `was` as it would read without the person: their entity, the facts naming them and
/// the episode that mentions them left out.
fn strip_person(was: &mut Value) {
    let keep = |edge: &Value| NEEDLES.iter().all(|n| !edge.to_string().contains(n));
    for list in ["entities", "facts", "episodes"] {
        if let Some(edges) = was[list]["edges"].as_array_mut() {
            edges.retain(keep);
        }
    }
}

#[test]
fn only_an_erase_token_erases_and_only_an_admin_token_drops() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("ostrakon.toml");
    let tokens = [("writer", "read-write"), ("eraser", "erase"), ("admin", "admin")];
    let text: String = tokens
        .iter()
        .map(|(name, mode)| format!("[[tokens]]\nname = \"{name}\"\ntoken = \"{name}-secret-0123456789\"\nnamespaces = {{ people = \"{mode}\" }}\n"))
        .collect();
    std::fs::write(&config, text).unwrap();
    let data = dir.path().join("data");
    let server = start_with_args(
        &data,
        &[("OSTRAKON_EMBEDDER", "off".as_ref())],
        &["--config".as_ref(), config.as_os_str()],
    );
    let token = |name: &str| format!("{name}-secret-0123456789");
    let write = r#"mutation { recordEpisode(namespace: "people", episode: {text: "Zyxwarbleton Quennimore was here"}, entities: [{name: "Zyxwarbleton Quennimore"}]) { entities { id } } }"#;
    let id = ok(graphql_as(server.addr, Some(&token("writer")), write, json!({})).unwrap())["recordEpisode"]
        ["entities"][0]["id"]
        .clone();
    let erase = r#"mutation($id: ID!) { eraseEntity(namespace: "people", id: $id) { seq } }"#;
    let refused = graphql_as(server.addr, Some(&token("writer")), erase, json!({ "id": id })).unwrap();
    assert_eq!(refused["errors"][0]["extensions"]["code"], "FORBIDDEN", "{refused}");
    ok(graphql_as(server.addr, Some(&token("eraser")), erase, json!({ "id": id })).unwrap());
    let drop = r#"mutation($c: String!) { dropNamespace(name: "people", confirm: $c) }"#;
    let refused = graphql_as(server.addr, Some(&token("eraser")), drop, json!({ "c": "people" })).unwrap();
    assert_eq!(refused["errors"][0]["extensions"]["code"], "FORBIDDEN", "{refused}");
    let mismatch = graphql_as(server.addr, Some(&token("admin")), drop, json!({ "c": "peple" })).unwrap();
    assert_eq!(mismatch["errors"][0]["extensions"]["code"], "CONFIRMATION_MISMATCH", "{mismatch}");
    assert_eq!(
        ok(graphql_as(server.addr, Some(&token("admin")), drop, json!({ "c": "people" })).unwrap())["dropNamespace"],
        true
    );
    // The name is free again: empty, and writable.
    let counted = ok(graphql_as(
        server.addr,
        Some(&token("admin")),
        r#"{ episodes(namespace: "people") { edges { node { text } } } }"#,
        json!({}),
    )
    .unwrap());
    assert_eq!(counted["episodes"]["edges"], json!([]), "{counted}");
    ok(graphql_as(server.addr, Some(&token("writer")), write, json!({})).unwrap());
    stop(server);
    // The command line, on the stopped store.
    let (success, out) = ostrakon(&["erase", "--namespace", "people", "--drop"], &data);
    assert!(!success && out.contains("--confirm"), "{out}");
    let (success, out) =
        ostrakon(&["erase", "--namespace", "people", "--entity", "1", "--reason", "gone"], &data);
    assert!(success, "{out}");
    assert!(out.contains("erased"), "{out}");
    assert!(grep(&data).is_empty(), "{:?}", grep(&data));
}

/// A store of `n` batches, one episode each, a tenth of them naming the person.
fn big_store(data: &Path, n: usize) {
    let mut lines = String::new();
    for i in 0..n {
        let (text, who) = if i % 10 == 3 {
            (format!("{NAME} noted entry {i}: {SECRET}"), NAME)
        } else {
            (format!("Bob Marlowe noted entry {i} about the Seine"), "Bob Marlowe")
        };
        let line = json!({"namespace": "people", "op": "recordEpisode",
            "episode": {"text": text, "occurredAt": format!("2024-01-01T00:{:02}:{:02}Z", (i / 60) % 60, i % 60)},
            "entities": [{"name": who}],
            "facts": [{"subject": {"name": who}, "predicate": "noted", "object": {"integer": i}}]});
        lines.push_str(&line.to_string());
        lines.push('\n');
    }
    let file = data.with_extension("jsonl");
    std::fs::write(&file, lines).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ostrakon"))
        .args(["import", file.to_str().unwrap(), "--data"])
        .arg(data)
        .env("OSTRAKON_EMBEDDER", "off")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else if entry.file_name() != "LOCK" {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn query(data: &Path, q: &str) -> Value {
    query_logged(data, q).0
}

/// The answer, and what the command logged.
fn query_logged(data: &Path, q: &str) -> (Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ostrakon"))
        .args(["query", q, "--data"])
        .arg(data)
        .env("OSTRAKON_EMBEDDER", "off")
        .output()
        .unwrap();
    let logged = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{logged}");
    (serde_json::from_slice::<Value>(&out.stdout).unwrap()["data"].clone(), logged)
}

/// `ostrakon erase` killed with SIGKILL at random moments (`OSTRAKON_ERASE_KILL_RUNS`, default 3):
/// every time the store opens, and then either the erasure never happened (it was not
/// acknowledged) and everything is there, or it is complete — no byte of the person on
/// disk — and everything else is there.
#[test]
fn an_erasure_killed_at_any_moment_is_all_or_nothing_and_loses_nothing_else() {
    let runs: usize =
        std::env::var("OSTRAKON_ERASE_KILL_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let dir = tempfile::tempdir().unwrap();
    let template = dir.path().join("template");
    big_store(&template, 10_000);
    let id = query(&template, &format!("{{ entity(namespace: \"people\", name: \"{NAME}\") {{ id }} }}"))["entity"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let counts = "{ namespace(name: \"people\") { counts { batches episodes entities facts } } }";
    let before = query(&template, counts)["namespace"]["counts"].clone();
    // How long an erasure takes here, uninterrupted: the kills fall within it.
    let timed = dir.path().join("timed");
    copy_dir(&template, &timed);
    let started = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_ostrakon"))
        .args(["erase", "--namespace", "people", "--entity", &id, "--data"])
        .arg(&timed)
        .env("OSTRAKON_EMBEDDER", "off")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let whole = started.elapsed();
    let after = query(&timed, counts)["namespace"]["counts"].clone();
    assert_eq!(after["episodes"].as_u64().unwrap(), before["episodes"].as_u64().unwrap() * 9 / 10);
    let (mut complete, mut never, mut finished, mut resumed) = (0, 0, 0, 0);
    for run in 0..runs {
        let data = dir.path().join(format!("run{run}"));
        copy_dir(&template, &data);
        let mut child = Command::new(env!("CARGO_BIN_EXE_ostrakon"))
            .args(["erase", "--namespace", "people", "--entity", &id, "--data"])
            .arg(&data)
            .env("OSTRAKON_EMBEDDER", "off")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Spread over the erasure: opening, the erasing batch, compaction, reopening (the
        // last part of the process's time is closing, after the erasure is complete).
        let at = whole.mul_f64(0.6 * (run as f64 + 0.5) / runs as f64);
        std::thread::sleep(at);
        if child.try_wait().unwrap().is_some() {
            finished += 1;
        }
        let _ = child.kill();
        let _ = child.wait();
        let (now, logged) = query_logged(&data, counts);
        let now = now["namespace"]["counts"].clone();
        if logged.contains("was not compacted") {
            resumed += 1;
        }
        let erasures =
            query(&data, "{ erasures(namespace: \"people\") { seq } }")["erasures"].as_array().unwrap().len();
        if erasures == 0 {
            never += 1;
            assert_eq!(now, before, "run {run}: nothing was erased, nothing may be missing");
        } else {
            complete += 1;
            assert_eq!(now, after, "run {run}: the erasure is complete and nothing else is missing");
            assert!(grep(&data).is_empty(), "run {run}: {:?}", grep(&data));
        }
    }
    eprintln!(
        "{runs} kills during {whole:?} erasures: {complete} complete after open ({finished} of them had exited \
         before the kill, {resumed} compacted when the store opened), {never} never happened"
    );
}

#[test]
fn the_erasure_key_is_read_from_outside_the_data_directory_only() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let run = |key: &Path| {
        let out = Command::new(env!("CARGO_BIN_EXE_ostrakon"))
            .args(["query", r#"mutation { recordEpisode(namespace: "k", episode: { text: "Ada wrote" }, entities: [{ name: "Ada" }]) { seq } }"#])
            .arg("--data")
            .arg(&data)
            .env("OSTRAKON_EMBEDDER", "off")
            .env("OSTRAKON_ERASURE_KEY_FILE", key)
            .output()
            .unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let inside = data.join("erasure.key");
    std::fs::write(&inside, [7u8; 32]).unwrap();
    let (ok, stderr) = run(&inside);
    assert!(!ok && stderr.contains("inside the data directory"), "{stderr}");
    let short = dir.path().join("short.key");
    std::fs::write(&short, [7u8; 8]).unwrap();
    let (ok, stderr) = run(&short);
    assert!(!ok && stderr.contains("at least 32"), "{stderr}");
    let outside = dir.path().join("erasure.key");
    std::fs::write(&outside, [7u8; 32]).unwrap();
    let (ok, stderr) = run(&outside);
    assert!(ok, "{stderr}");
}
