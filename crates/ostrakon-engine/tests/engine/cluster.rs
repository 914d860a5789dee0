//! Stores as nodes of a cluster: two or three `Store`s over one NATS JetStream server
//! (a real `nats-server`), each with its own connection — writes on any node in one
//! order, reads on any node that see another's write when they name its batch,
//! followers that apply other nodes' batches as they come, and a fresh node that starts
//! from the shared checkpoint and agrees with a full replay.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ostrakon_engine::core::{Namespace, Seq};
use ostrakon_engine::{
    Change, KnownAt, NewEntity, ReadAt, Store, StoreOptions, log::LogBackend, log::system_clock,
    views::EntityFilter,
};
use ostrakon_jetstream::{ClusterConfig, JetStreamBackend};
use ostrakon_testkit::nats::NatsServers;

pub(crate) struct Cluster {
    _dir: tempfile::TempDir,
    _servers: NatsServers,
    config: ClusterConfig,
}

impl Cluster {
    /// `None` (the test skips, saying why) where nats-server cannot be had.
    pub(crate) fn start() -> Option<Cluster> {
        let dir = tempfile::tempdir().unwrap();
        let servers = ostrakon_testkit::nats::start_for_tests(1, dir.path())?;
        let config =
            ClusterConfig { urls: servers.urls(), shards: 4, replicas: 1, ..ClusterConfig::default() };
        JetStreamBackend::init(&config, false).unwrap();
        Some(Cluster { _dir: dir, _servers: servers, config })
    }

    /// A connection of its own.
    pub(crate) fn backend(&self) -> Arc<dyn LogBackend> {
        Arc::new(JetStreamBackend::connect(&self.config).unwrap())
    }

    /// A node: its own connection and store.
    fn node(&self) -> Arc<Store> {
        let backend = self.backend();
        let store = Arc::new(Store::with_backend(backend, system_clock(), StoreOptions::default()).unwrap());
        store.follow_others();
        store
    }
}

fn ns(name: &str) -> Namespace {
    Namespace::new("namespace", name).unwrap()
}

fn entity(name: &str) -> Change {
    Change::DeclareEntity(NewEntity { name: name.into(), ..NewEntity::default() })
}

fn names(store: &Store, ns: &Namespace, at: ReadAt) -> Vec<String> {
    let page =
        store.at(ns, at).and_then(|r| r.entities(&EntityFilter::default(), None, 1_000)).unwrap().value;
    page.items.into_iter().map(|(_, e)| e.name).collect()
}

/// What a node answers about a namespace: its last batch, every entity (with its id and
/// the batch that made it), and the counts — equal on nodes that applied the same batches.
fn answers(store: &Store, ns: &Namespace) -> (Seq, Vec<(Seq, ostrakon_engine::core::Entity)>, String) {
    let page = store
        .at(ns, ReadAt::latest())
        .and_then(|r| r.entities(&EntityFilter::default(), None, 1_000))
        .unwrap();
    (page.basis.known_at, page.value.items, format!("{:?}", store.counts(ns).unwrap()))
}

fn at_seq(seq: Seq) -> ReadAt {
    ReadAt { known_at: KnownAt::Seq(seq), ..ReadAt::latest() }
}

#[test]
fn a_read_naming_a_write_s_batch_sees_it_on_another_node() {
    let Some(cluster) = Cluster::start() else { return };
    let (a, b) = (cluster.node(), cluster.node());
    let team = ns("team");
    // `b` started before the namespace existed; it learns of it from the read.
    let receipt = a.append(&team, vec![entity("Ada")]).unwrap();
    assert_eq!(names(&b, &team, at_seq(receipt.seq)), ["Ada"]);
    for i in 0..20 {
        let receipt = a.append(&team, vec![entity(&format!("e{i}"))]).unwrap();
        // Read-your-writes: the basis of a write on A, read on B at once.
        let seen = names(&b, &team, at_seq(receipt.seq));
        assert_eq!(seen.len(), i + 2, "batch {} not seen on the other node", receipt.seq);
    }
}

#[test]
fn a_follower_applies_other_nodes_batches_and_hands_them_to_its_listeners() {
    let Some(cluster) = Cluster::start() else { return };
    let (a, b) = (cluster.node(), cluster.node());
    let team = ns("followed");
    a.append(&team, vec![entity("Ada")]).unwrap();
    assert_eq!(names(&b, &team, at_seq(Seq(1))), ["Ada"]);
    let heard = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&heard);
    b.on_commit(Arc::new(move |batch| sink.lock().unwrap().push(batch.seq)));
    let mut lags = Vec::new();
    for i in 0..10 {
        let seq = a.append(&team, vec![entity(&format!("e{i}"))]).unwrap().seq;
        let written = Instant::now();
        // No read names the batch: the follower applies it on its own.
        while !heard.lock().unwrap().contains(&seq) {
            assert!(written.elapsed() < Duration::from_secs(5), "batch {seq} never reached the other node");
            std::thread::sleep(Duration::from_millis(1));
        }
        lags.push(written.elapsed());
    }
    assert_eq!(*heard.lock().unwrap(), (2..=11).map(Seq).collect::<Vec<_>>());
    assert_eq!(names(&b, &team, ReadAt::latest()).len(), 11);
    lags.sort();
    eprintln!("replication lag: median {:?}, max {:?}", lags[lags.len() / 2], lags[lags.len() - 1]);
}

#[test]
fn writers_on_every_node_get_one_order_and_every_node_the_same_state() {
    let Some(cluster) = Cluster::start() else { return };
    let nodes = [cluster.node(), cluster.node(), cluster.node()];
    let team = ns("contended");
    nodes[0].append(&team, vec![entity("root")]).unwrap();
    let acked = Arc::new(Mutex::new(Vec::new()));
    let conflicts = Arc::new(AtomicUsize::new(0));
    std::thread::scope(|scope| {
        for (n, node) in nodes.iter().enumerate() {
            for w in 0..2 {
                let (node, team, acked, conflicts) = (Arc::clone(node), team.clone(), &acked, &conflicts);
                scope.spawn(move || {
                    for i in 0..25 {
                        let name = format!("n{n}-w{w}-{i}");
                        match node.append(&team, vec![entity(&name)]) {
                            Ok(receipt) => acked.lock().unwrap().push((receipt.seq, name)),
                            Err(ostrakon_engine::WriteError::Conflict { .. }) => {
                                conflicts.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(e) => panic!("{e}"),
                        }
                    }
                });
            }
        }
    });
    let mut acked = acked.lock().unwrap().clone();
    acked.sort();
    let seqs: Vec<u64> = acked.iter().map(|(s, _)| s.0).collect();
    let mut unique = seqs.clone();
    unique.dedup();
    assert_eq!(seqs, unique, "two acknowledged batches share a seq");
    let last = Seq(1 + acked.len() as u64);
    // Every node, caught up, holds exactly the acknowledged batches, in the same state.
    let digests: Vec<_> = nodes
        .iter()
        .map(|node| {
            assert_eq!(node.catch_up(&team).unwrap(), last);
            answers(node, &team)
        })
        .collect();
    assert!(digests.iter().all(|d| *d == digests[0]), "the nodes answer differently");
    let mut expected: Vec<String> = acked.iter().map(|(_, n)| n.clone()).collect();
    expected.push("root".into());
    expected.sort();
    let mut held = names(&nodes[2], &team, ReadAt::latest());
    held.sort();
    assert_eq!(held, expected);
    eprintln!(
        "{} batches acknowledged, {} refused after every retry",
        acked.len(),
        conflicts.load(Ordering::Relaxed)
    );
}

#[test]
fn a_fresh_node_starts_from_the_shared_checkpoint_and_agrees_with_a_full_replay() {
    let Some(cluster) = Cluster::start() else { return };
    let a = cluster.node();
    let team = ns("checkpointed");
    for i in 0..40 {
        a.append(&team, vec![entity(&format!("e{i}"))]).unwrap();
    }
    let written = a.checkpoint(&team).unwrap().expect("a checkpoint");
    assert_eq!(written.seq, Seq(40));
    for i in 40..45 {
        a.append(&team, vec![entity(&format!("e{i}"))]).unwrap();
    }
    let fresh = cluster.node();
    let digest = answers(&fresh, &team);
    assert_eq!(fresh.checkpoint_seq(&team), Some(Seq(40)), "the fresh node did not load the checkpoint");
    // A node that ignores checkpoints replays the whole log.
    let replaying = Store::with_backend(
        Arc::new(crate::common::NoCheckpoints(JetStreamBackend::connect(&cluster.config).unwrap())),
        system_clock(),
        StoreOptions::default(),
    )
    .unwrap();
    assert_eq!(answers(&replaying, &team), digest);
    assert_eq!(digest.0, Seq(45));
    assert_eq!(digest.1.len(), 45);
    assert_eq!(answers(&a, &team), digest);
}

#[test]
fn a_due_intention_fires_once_across_nodes() {
    let Some(cluster) = Cluster::start() else { return };
    let nodes = [cluster.node(), cluster.node(), cluster.node()];
    let team = ns("intending");
    let due = ostrakon_engine::core::Timestamp::from_micros(1_700_000_000_000_000);
    let added = nodes[0]
        .append(
            &team,
            vec![Change::AddIntention(ostrakon_engine::change::NewIntention {
                payload: "call the dentist".into(),
                trigger: ostrakon_engine::change::NewTrigger::At(due),
                expires_at: None,
                priority: 0,
                repeat: false,
            })],
        )
        .unwrap();
    // Every node sees it due, and every node tries to fire it at once.
    std::thread::scope(|scope| {
        for node in &nodes {
            let team = team.clone();
            scope.spawn(move || {
                assert!(node.catch_up(&team).unwrap() >= added.seq);
                node.fire_due(&team, node.now()).unwrap();
            });
        }
    });
    for node in &nodes {
        node.catch_up(&team).unwrap();
        let views = node.at(&team, ReadAt::latest()).and_then(|r| r.intentions(true)).unwrap().value;
        assert_eq!(views.len(), 1);
        assert_eq!(views[0].fired.len(), 1, "fired {} times", views[0].fired.len());
    }
}

#[test]
fn an_erasure_on_one_node_is_forgotten_by_every_node_and_by_the_stream() {
    use crate::common::grep;
    use crate::erase::{ALIAS, NAME, SECRET, answers as story, ns as people, person, write_story};
    let Some(cluster) = Cluster::start() else { return };
    let (a, b) = (cluster.node(), cluster.node());
    let points = write_story(&a, true);
    a.checkpoint(&people()).unwrap().expect("a checkpoint in the object store");
    // `b` has the namespace open, its state holding the person.
    assert!(story(&b, *points.last().unwrap()).join("\n").contains(NAME));
    let heard = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&heard);
    a.on_commit(Arc::new(move |batch| sink.lock().unwrap().push(batch.seq)));
    assert!(!grep(cluster._dir.path(), SECRET).is_empty(), "the test looks in the wrong place");
    let id = person(&b);
    let erased = b
        .erase(
            &people(),
            ostrakon_engine::EraseRequest {
                target: ostrakon_engine::EraseTarget::Entity(id),
                reason: Some("request of the data subject".into()),
                by: Some("test".into()),
            },
        )
        .unwrap();
    assert_eq!(erased.records.len(), 6);
    assert_eq!(erased.batches_rewritten, 3);
    // `a`, which wrote the story, forgets it too: at every read point, before the erasure too.
    let _ = story(&a, erased.seq);
    let fresh = cluster.node();
    for node in [&a, &b, &fresh] {
        for s in points.iter().copied().chain([erased.seq]) {
            let said = story(node, s).join("\n");
            for needle in [NAME, ALIAS, SECRET] {
                assert!(!said.contains(needle), "at {s}: {said}");
            }
        }
        assert_eq!(node.erasures(&people()).unwrap().len(), 1);
    }
    // Every node answers alike, and as the story written without the person does.
    let reference = Store::in_memory();
    let reference_points = write_story(&reference, false);
    let ours: Vec<Seq> = points.iter().copied().filter(|s| *s != points[1]).collect();
    for (s, r) in ours.iter().zip(&reference_points) {
        let expected = story(&reference, *r);
        for node in [&a, &b, &fresh] {
            assert_eq!(story(node, *s), expected, "at {s}");
        }
    }
    // `a`'s subscribers heard the erasure's batch (from the namespace opened again).
    assert!(heard.lock().unwrap().contains(&erased.seq), "{:?}", heard.lock().unwrap());
    // Writes go on, on any node.
    let next = a.append(&people(), vec![entity("Carol")]).unwrap();
    assert_eq!(names(&b, &people(), at_seq(next.seq)).iter().filter(|n| *n == "Carol").count(), 1);
    // Nothing of it is left in the servers' files: the log's messages were replaced and
    // securely deleted, and so were the checkpoint's chunks.
    drop((a, b, fresh));
    for needle in [NAME, ALIAS, SECRET] {
        assert_eq!(grep(cluster._dir.path(), needle), Vec::<std::path::PathBuf>::new(), "{needle}");
    }
}

#[test]
fn a_namespace_dropped_on_one_node_is_closed_on_every_node_and_gone_from_the_stream() {
    let Some(cluster) = Cluster::start() else { return };
    let (a, b) = (cluster.node(), cluster.node());
    let gone = ns("leaving-tenant");
    let mut last = Seq(0);
    for i in 0..30 {
        last = a.append(&gone, vec![entity(&format!("Quorvexian-{i}"))]).unwrap().seq;
    }
    a.checkpoint(&gone).unwrap().expect("a checkpoint");
    assert_eq!(names(&b, &gone, at_seq(last)).len(), 30, "open on b");
    assert!(
        !crate::common::grep(cluster._dir.path(), "Quorvexian-7").is_empty(),
        "the test looks in the wrong place"
    );
    assert!(a.drop_namespace(&gone).unwrap());
    // b finds out when it next reads the log: a read pinned before the drop is told so.
    let started = Instant::now();
    loop {
        match b.at(&gone, at_seq(last)).and_then(|r| r.entities(&EntityFilter::default(), None, 10)) {
            Err(ostrakon_engine::ReadError::Storage(ostrakon_engine::StorageError::NamespaceDropped {
                ..
            })) => break,
            Ok(_) => {
                assert!(started.elapsed() < Duration::from_secs(10), "b still answers the dropped namespace")
            }
            Err(e) => panic!("{e}"),
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(names(&b, &gone, ReadAt::latest()).is_empty());
    // The name is free: a write on b begins it again, at batch 1, and a sees that.
    let first = b.append(&gone, vec![entity("Newcomer")]).unwrap();
    assert_eq!(first.seq, Seq(1));
    assert_eq!(names(&a, &gone, at_seq(Seq(1))), ["Newcomer"]);
    drop((a, b));
    let left = crate::common::grep(cluster._dir.path(), "Quorvexian-7");
    assert_eq!(left, Vec::<std::path::PathBuf>::new(), "a dropped namespace's bytes stay");
}
