//! Histories, the Jepsen way (`common/history.rs`): clients on every node of a cluster (or
//! on one node over its data directory) record every operation — writes of different
//! shapes, withdrawals, erasures, reads of shared registers — while nothing, faults, or
//! planned restarts happen; then every node must hold the same records, and the checker
//! must find nothing lost, duplicated, renamed, half-written, out of order or stale.
//! One round of faults here; `OSTRAKON_FAULT_ROUNDS=50` by hand (`benches/cluster/README.md`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::cluster::{self, Cluster};
use crate::common::history::{self, History, Mix, Verdict};

/// Slots the clients write and read.
const SLOTS: usize = 8;

/// Clients that do everything, erasures included.
const ALL: Mix = Mix { erasures: true };

fn fault_rounds() -> usize {
    std::env::var("OSTRAKON_FAULT_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(1)
}

/// The last batch of `ns` on the node at `addr`, if it answers.
fn last_batch(addr: std::net::SocketAddr, ns: &str) -> Option<u64> {
    let answer = cluster::post(
        addr,
        "query($ns: String!) { episodes(namespace: $ns, first: 1) { basis { seq } } }",
        json!({ "ns": ns }),
    )
    .ok()?;
    answer.pointer("/data/episodes/basis/seq").and_then(serde_json::Value::as_u64)
}

/// Runs `clients` clients on `nodes` over `ns` while `during` runs, then waits until every
/// node holds the same batches, checks that they hold the same records, and checks the
/// history against them.
fn record(
    nodes: &[Arc<Mutex<std::net::SocketAddr>>],
    (ns, mix): (&str, Mix),
    clients: usize,
    during: impl FnOnce() -> Vec<String>,
) -> (Verdict, Vec<String>) {
    let history = Arc::new(History::default());
    let stop = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..clients)
        .map(|c| {
            let (nodes, ns, stop, history) =
                (nodes.to_vec(), ns.to_owned(), Arc::clone(&stop), Arc::clone(&history));
            std::thread::spawn(move || history::client(c, nodes, ns, (SLOTS, mix), stop, history))
        })
        .collect();
    let done = during();
    stop.store(true, Ordering::Relaxed);
    for thread in threads {
        thread.join().unwrap();
    }
    // Every node catches up (its follower sweeps every couple of seconds).
    let settled = Instant::now();
    let last = loop {
        let seqs: Vec<Option<u64>> = nodes.iter().map(|a| last_batch(*a.lock().unwrap(), ns)).collect();
        if seqs.iter().all(|s| s.is_some() && *s == seqs[0]) {
            break seqs[0].unwrap_or(0);
        }
        assert!(
            settled.elapsed() < Duration::from_secs(30),
            "{ns}: nodes stay at different batches {seqs:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let first = history::held(*nodes[0].lock().unwrap(), ns, last, SLOTS);
    for (i, node) in nodes.iter().enumerate().skip(1) {
        let other = history::held(*node.lock().unwrap(), ns, last, SLOTS);
        assert!(other == first, "{ns}: node {i} holds other records than node 0 at batch {last}");
    }
    (history::check(&history, &first), done)
}

fn assert_kept(verdict: &Verdict) {
    let violations = verdict.violations();
    assert!(violations.is_empty(), "{}\n{}", verdict.summary(), violations.join("\n"));
    assert!(verdict.acknowledged_writes > 50, "too few writes got through: {}", verdict.summary());
    assert!(verdict.reads > 20, "too few reads: {}", verdict.summary());
}

/// The case that lost acknowledged writes and renamed entities with no fault at all:
/// three nodes writing one namespace at once, in batches of different shapes.
#[test]
fn several_nodes_writing_one_namespace_lose_nothing_rename_nothing_and_conflict_never() {
    let Some(run) = Cluster::start(3, 3) else { return };
    history::prepare(run.addr(0), "shared", SLOTS);
    let (verdict, _) = record(&run.addrs, ("shared", ALL), 6, || {
        std::thread::sleep(Duration::from_secs(10));
        Vec::new()
    });
    eprintln!("three nodes, one namespace: {}", verdict.summary());
    assert_kept(&verdict);
    // Writes that contradict nothing never reach a client as conflicts, and nothing was
    // left unknown with no fault.
    assert_eq!((verdict.conflicts, verdict.unknown), (0, 0), "{}", verdict.summary());
}

/// Faults while clients on every node write and read one namespace: the stream leader
/// killed, a node killed in the middle of writes, a node stopped past the timeouts, a
/// node's connection to NATS cut and then slowed, a NATS server restarted the planned way.
#[test]
fn faults_lose_nothing_duplicate_nothing_and_every_node_agrees() {
    let Some(mut run) = Cluster::start_proxied(3, 3, &[2]) else { return };
    let started = Instant::now();
    for round in 0..fault_rounds() {
        let ns = format!("faulty-{round}");
        history::prepare(run.addr(0), &ns, SLOTS);
        let nodes = run.addrs.clone();
        let (verdict, faults) = record(&nodes, (&ns, ALL), 6, || fault_round(&mut run, &ns, round));
        eprintln!("round {}: {}; {}", round + 1, faults.join(", "), verdict.summary());
        assert!(faults.len() >= 5, "{faults:?}");
        assert_kept(&verdict);
    }
    eprintln!("{} rounds in {} s", fault_rounds(), started.elapsed().as_secs());
    // A fresh node starts from the checkpoints the others wrote and agrees with them.
    let checkpoint = std::process::Command::new(env!("CARGO_BIN_EXE_ostrakon"))
        .args(["checkpoint", "--cluster", &run.urls, "--data"])
        .arg(run.dir.path().join("checkpointer"))
        .env("OSTRAKON_LOG", "warn")
        .output()
        .unwrap();
    assert!(checkpoint.status.success(), "{}", String::from_utf8_lossy(&checkpoint.stderr));
    run.kill_node(1);
    run.start_node(1);
    for round in 0..fault_rounds() {
        let ns = format!("faulty-{round}");
        let last = last_batch(run.addr(0), &ns).unwrap();
        assert!(
            history::held(run.addr(1), &ns, last, SLOTS) == history::held(run.addr(0), &ns, last, SLOTS),
            "{ns}: the fresh node holds other records"
        );
    }
    let metrics = crate::common::serve::http(run.addr(1), "GET", "/metrics", "").unwrap().1;
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("ostrakon_checkpoint_batch{namespace=\"faulty-0\"}") && !l.ends_with(" 0")),
        "the fresh node did not load faulty-0's checkpoint:\n{metrics}"
    );
}

/// One round of faults; what was done, one line each.
fn fault_round(run: &mut Cluster, ns: &str, round: usize) -> Vec<String> {
    let pause = Duration::from_millis(800);
    let mut done = Vec::new();
    std::thread::sleep(pause);
    if let Some(leader) = run.leader(ns) {
        run.nats.kill(leader);
        done.push(format!("killed the stream leader n{leader}"));
        std::thread::sleep(pause);
        run.nats.restart(leader).unwrap();
    }
    std::thread::sleep(pause);
    let victim = round % 2;
    run.kill_node(victim);
    done.push(format!("killed node {victim}"));
    std::thread::sleep(pause / 2);
    run.start_node(victim);
    std::thread::sleep(pause);
    let stalled = (round + 1) % 2;
    run.signal_node(stalled, "STOP");
    done.push(format!("stopped node {stalled}"));
    std::thread::sleep(pause * 3);
    run.signal_node(stalled, "CONT");
    std::thread::sleep(pause);
    for proxy in &run.proxies[2] {
        proxy.cut();
    }
    done.push("cut node 2 from NATS".into());
    std::thread::sleep(pause * 2);
    for proxy in &run.proxies[2] {
        proxy.heal();
        proxy.delay(Duration::from_millis(150));
    }
    done.push("slowed node 2's NATS connections by 150 ms".into());
    std::thread::sleep(pause * 2);
    for proxy in &run.proxies[2] {
        proxy.heal();
    }
    let server = round % run.nats.len();
    let (moved, exited) = run.planned_restart(server);
    done.push(format!(
        "planned restart of n{server} ({} streams handed over, exited after {} ms)",
        moved.len(),
        exited.as_millis()
    ));
    std::thread::sleep(pause);
    done
}

/// Planned maintenance: every NATS server restarted the planned way (its streams handed to
/// caught-up replicas, then lame duck mode), then every node taken out of rotation (as a
/// load balancer does when its /readyz says 503), stopped (SIGTERM) and started, one at a
/// time, while clients that retry nothing write and read: not one of them sees an error,
/// and acknowledged writes never pause for a second. (No erasure meanwhile: every node
/// closes the namespace to writes while it compacts it, about a second each time, which
/// the fault rounds cover.)
#[test]
fn a_rolling_restart_of_every_server_and_node_surfaces_no_error() {
    let Some(mut run) = Cluster::start(3, 3) else { return };
    history::prepare(run.addr(0), "rolling", SLOTS);
    let nodes = run.addrs.clone();
    let (verdict, done) = record(&nodes, ("rolling", Mix { erasures: false }), 6, || {
        let began = Instant::now();
        let at = || began.elapsed().as_millis();
        let mut done = Vec::new();
        std::thread::sleep(Duration::from_secs(1));
        for server in 0..run.nats.len() {
            let from = at();
            let (moved, exited) = run.planned_restart(server);
            done.push(format!(
                "n{server} handed {} streams over and went lame duck at {from} ms, exited after {} ms",
                moved.len(),
                exited.as_millis()
            ));
            std::thread::sleep(Duration::from_secs(2));
        }
        for node in 0..3 {
            let from = at();
            // As a load balancer does once the node's /readyz answers 503 (from the moment
            // it is told to stop): no new request goes to it, and those in flight finish.
            *run.addrs[node].lock().unwrap() = std::net::SocketAddr::from(([127, 0, 0, 1], 1));
            std::thread::sleep(Duration::from_millis(300));
            let stopped = run.stop_node(node);
            run.start_node(node);
            done.push(format!(
                "node {node} stopped at {from} ms in {} ms, back at {} ms",
                stopped.as_millis(),
                at()
            ));
            std::thread::sleep(Duration::from_secs(1));
        }
        done
    });
    eprintln!("rolling restart: {}; {}", done.join(", "), verdict.summary());
    assert_kept(&verdict);
    assert_eq!(
        (verdict.refused, verdict.unknown),
        (0, 0),
        "errors reached clients: {}\n{}",
        verdict.summary(),
        verdict.slow.join("\n")
    );
    eprintln!("slowest operations:\n{}", verdict.slow.join("\n"));
}

/// The same history on one node over its data directory, killed (-9) and restarted in
/// the middle of it.
#[test]
fn the_file_log_keeps_its_history_through_a_kill() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let off = std::ffi::OsStr::new("off");
    let server = crate::common::serve::start_with(&data, &[("OSTRAKON_EMBEDDER", off)]);
    let node = Arc::new(Mutex::new(server.addr));
    history::prepare(server.addr, "alone", SLOTS);
    let mut server = Some(server);
    let (verdict, _) = record(&[Arc::clone(&node)], ("alone", ALL), 4, || {
        std::thread::sleep(Duration::from_secs(3));
        if let Some(mut killed) = server.take() {
            let _ = killed.child.kill();
            let _ = killed.child.wait();
        }
        let restarted = crate::common::serve::start_with(&data, &[("OSTRAKON_EMBEDDER", off)]);
        *node.lock().unwrap() = restarted.addr;
        server = Some(restarted);
        std::thread::sleep(Duration::from_secs(3));
        vec!["killed the node".into()]
    });
    eprintln!("one node over its data directory: {}", verdict.summary());
    assert_kept(&verdict);
    assert_eq!(verdict.conflicts, 0);
}
