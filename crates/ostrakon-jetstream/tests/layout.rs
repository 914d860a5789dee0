//! The cluster's layout against real `nats-server`s: `init` never weakens a live cluster
//! unless forced, a node whose configuration disagrees with the cluster refuses to
//! start naming both values, and health says when JetStream has lost its quorum.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use ostrakon_jetstream::{ClusterConfig, JetStreamBackend};
use ostrakon_log::{After, LogBackend, LogError, system_clock};
use ostrakon_testkit::nats::NatsServers;

fn config(servers: &NatsServers, shards: u32, replicas: usize) -> ClusterConfig {
    ClusterConfig { urls: servers.urls(), shards, replicas, ..ClusterConfig::default() }
}

/// Each shard stream's replicas, and the checkpoint store's, as JetStream has them.
fn replicas(servers: &NatsServers) -> Vec<usize> {
    let url = servers.urls()[0].clone();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async move {
        let js = async_nats::jetstream::new(async_nats::connect(url).await.unwrap());
        let mut out = Vec::new();
        for name in
            (0..).map(|i| format!("MNEMO_LOG_{i}")).take(32).chain(["OBJ_mnemo-checkpoints".to_owned()])
        {
            if let Ok(mut stream) = js.get_stream(&name).await {
                out.push(stream.info().await.unwrap().config.num_replicas);
            }
        }
        out
    })
}

fn layout_error(result: Result<impl Sized, LogError>) -> String {
    match result {
        Err(LogError::Layout { reason }) => reason,
        Err(e) => panic!("expected a layout error, got {e}"),
        Ok(_) => panic!("expected a layout error, it went through"),
    }
}

#[test]
fn init_never_weakens_a_live_cluster_and_a_disagreeing_node_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let Some(servers) = ostrakon_testkit::nats::start_for_tests(3, dir.path()) else { return };
    let (node, changed) = JetStreamBackend::init(&config(&servers, 4, 3), false).unwrap();
    assert!(changed.is_empty(), "{changed:?}");
    assert_eq!(replicas(&servers), vec![3; 5]);
    // Run again as it was: nothing changes.
    assert!(JetStreamBackend::init(&config(&servers, 4, 3), false).unwrap().1.is_empty());
    // Fewer replicas: refused, saying what would change, and nothing did.
    let why = layout_error(JetStreamBackend::init(&config(&servers, 4, 1), false));
    assert!(
        why.contains("lower the replicas") && why.contains("from R3") && why.contains("--force"),
        "{why}"
    );
    assert_eq!(replicas(&servers), vec![3; 5]);
    // Another shard count on an empty cluster: refused unless forced.
    let why = layout_error(JetStreamBackend::init(&config(&servers, 8, 3), false));
    assert!(why.contains("4 shard streams") && why.contains("8") && why.contains("--force"), "{why}");
    // Once a namespace has a log, never, forced or not.
    let (log, _) = node.open("held", system_clock()).unwrap();
    let after = After { seq: 0, refusals: 0, deadline: Instant::now() + Duration::from_secs(12) };
    log.wait(log.submit(b"batch 1", after).unwrap()).unwrap();
    let why = layout_error(JetStreamBackend::init(&config(&servers, 8, 3), true));
    assert!(why.contains("1 namespaces with a log") && why.contains("cannot change"), "{why}");
    assert_eq!(replicas(&servers).len(), 5, "the shard streams are as they were");
    // A node configured for another shard count, or more replicas, refuses to start.
    let why = layout_error(JetStreamBackend::connect(&ClusterConfig {
        expect_shards: Some(16),
        ..config(&servers, 4, 3)
    }));
    assert!(why.contains("16 shard streams") && why.contains("the cluster has 4"), "{why}");
    // Forced: the replicas go down, and a node expecting R3 now refuses to start.
    let (_, changed) = JetStreamBackend::init(&config(&servers, 4, 1), true).unwrap();
    assert_eq!(changed.len(), 5, "{changed:?}");
    assert_eq!(replicas(&servers), vec![1; 5]);
    let why = layout_error(JetStreamBackend::connect(&ClusterConfig {
        expect_replicas: Some(3),
        ..config(&servers, 4, 1)
    }));
    assert!(why.contains("configured for R3") && why.contains("is R1"), "{why}");
    // Raising them back needs no force.
    assert_eq!(JetStreamBackend::init(&config(&servers, 4, 3), false).unwrap().1.len(), 5);
    assert_eq!(replicas(&servers), vec![3; 5]);
    assert_eq!(node.list().unwrap(), vec!["held".to_owned()]);
}

#[test]
fn health_says_when_jetstream_has_lost_its_quorum_and_when_it_is_back() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut servers) = ostrakon_testkit::nats::start_for_tests(3, dir.path()) else { return };
    let (node, _) = JetStreamBackend::init(&config(&servers, 2, 3), false).unwrap();
    let healthy_within = |node: &JetStreamBackend, want: bool, within: Duration| {
        let started = Instant::now();
        loop {
            let health = node.health();
            if health.is_ok() == want {
                return (started.elapsed(), health);
            }
            assert!(started.elapsed() < within, "health stayed {health:?}");
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    let _ = healthy_within(&node, true, Duration::from_secs(30));
    assert!(node.stream_bytes().iter().any(|(name, _)| name == "MNEMO_LOG_0"), "{:?}", node.stream_bytes());
    // Two of three servers gone: no stream has a quorum; the node still connects to one.
    servers.kill(1);
    servers.kill(2);
    let (took, why) = healthy_within(&node, false, Duration::from_secs(40));
    let why = why.unwrap_err();
    assert!(why.contains("leader") || why.contains("not connected"), "{why}");
    eprintln!("quorum loss seen by health after {} ms: {why}", took.as_millis());
    servers.restart(1).unwrap();
    servers.restart(2).unwrap();
    let (took, _) = healthy_within(&node, true, Duration::from_secs(60));
    eprintln!("health back {} ms after the servers restarted", took.as_millis());
}
