//! Checkpoints are derived: a checkpoint at any batch plus the log after it folds to the
//! state a full replay gives, and a checkpoint that is missing, damaged, of another format
//! or of another log is ignored — every answer stays the same.

use crate::common;
use crate::durability::{everything, random_history};

use common::{Fixture, t};
use ostrakon_engine::core::{
    EntityId, EpisodeId, MentionSource, Namespace, RecordRef, SegmentEnd, Seq, Timestamp,
};
use ostrakon_engine::{
    Change, EntityRef, NewEpisode, Store, change::EpisodeRef, change::NewIntention, change::NewTrigger,
};
use ostrakon_index::NamespaceIndex;
use ostrakon_index::checkpoint::{self, CHECKPOINT_HEADER_LEN, CHECKPOINT_VERSION};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A history with every kind of event the state folds: the random facts of the
/// durability tests (ends, retractions, corrections, restatements), then episodes in
/// threads with mentions, recalls, merges, intentions (added, cancelled, fired) and
/// closed segments.
fn rich_history(store: &Store, ns: &Namespace, seed: u64) {
    random_history(store, ns, seed);
    let mut rng = StdRng::seed_from_u64(seed ^ 0x5eed);
    let entity =
        |i: usize| store.inspect(ns, |x| x.entities_named(&format!("e{i}")).first().copied()).unwrap();
    let entities: Vec<EntityId> = (0..40).filter_map(entity).collect();
    let mut episodes: Vec<(EpisodeId, String)> = Vec::new();
    for round in 0..40 {
        let mut changes = Vec::new();
        let thread = format!("thread {}", rng.random_range(0..3));
        changes.push(Change::RecordEpisode(NewEpisode {
            text: format!("round {round}: e{} met e{}", rng.random_range(0..40), rng.random_range(0..40)),
            occurred_at: Timestamp::from_micros(t("2030-01-01").as_micros() + round * 60_000_000),
            thread: Some(thread.clone()),
            external_id: Some(format!("turn-{round}")),
            ..NewEpisode::default()
        }));
        changes.push(Change::Mention {
            episode: EpisodeRef::New(0),
            entities: vec![EntityRef::Id(entities[rng.random_range(0..entities.len())])],
            source: MentionSource::Client,
        });
        match rng.random_range(0..5) {
            0 => changes.push(Change::MergeEntities {
                from: entities[rng.random_range(0..entities.len())],
                into: entities[rng.random_range(0..entities.len())],
            }),
            1 => changes.push(Change::AddIntention(NewIntention {
                payload: format!("remind {round}"),
                trigger: NewTrigger::At(t("2030-06-01")),
                expires_at: None,
                priority: round as i32,
                repeat: rng.random_bool(0.5),
            })),
            2 => changes.push(Change::Recall {
                records: vec![RecordRef::Entity(entities[rng.random_range(0..entities.len())])],
                at: t("2030-02-01"),
            }),
            3 => changes.push(Change::MarkExtracted {
                episode: EpisodeRef::New(0),
                source: "model@extract-1".into(),
            }),
            4 => changes.push(Change::Place {
                record: RecordRef::Entity(entities[round as usize % entities.len()]),
                tier: ostrakon_engine::core::Tier::Active(format!("scope {round}")),
                reason: Some("the task at hand".into()),
                by: ostrakon_engine::core::PlacedBy::Client,
            }),
            _ => {}
        }
        let Ok(receipt) = store.append(ns, changes) else { continue };
        if let Some(id) = receipt.episode(0) {
            episodes.push((id, thread));
        }
        // Now and then close a thread's open episodes as a segment.
        if round % 7 == 6 {
            let thread = episodes.last().map(|(_, th)| th.clone()).unwrap_or_default();
            let open: Vec<EpisodeId> =
                episodes.iter().filter(|(_, th)| *th == thread).map(|(id, _)| *id).collect();
            let close = Change::CloseSegment {
                thread: thread.clone(),
                episodes: open,
                end: SegmentEnd::Gap { micros: 3_600_000_000 },
                centroid: None,
            };
            let _ = store.append(ns, vec![close]);
            episodes.retain(|(_, th)| *th != thread);
        }
    }
    // Fire and cancel some of the intentions (upkeep fires the ones due by then).
    store.maintain(t("2030-07-01"));
}

/// The state folded from the first `k` batches.
fn fold(batches: &[ostrakon_engine::log::CommittedBatch], k: usize) -> NamespaceIndex {
    let mut index = NamespaceIndex::new();
    for b in &batches[..k] {
        index.apply(b.seq, b.system_time, &b.events).unwrap();
    }
    index
}

#[test]
fn a_checkpoint_at_any_batch_plus_the_tail_folds_to_the_full_replay() {
    let fx = Fixture::new();
    rich_history(&fx.store, &fx.ns, 21);
    let batches = fx.store.export(&fx.ns).unwrap();
    let full = fold(&batches, batches.len());
    assert_eq!(fx.store.inspect(&fx.ns, Clone::clone).unwrap(), full, "the live state is the replayed state");
    assert!(full.counts().facts > 300 && full.counts().episodes >= 30, "{:?}", full.counts());
    let mut rng = StdRng::seed_from_u64(7);
    let mut points: Vec<usize> = (0..12).map(|_| rng.random_range(0..=batches.len())).collect();
    points.extend([0, 1, batches.len()]);
    for k in points {
        let at_k = fold(&batches, k);
        let bytes = checkpoint::encode(&at_k);
        let (head, mut loaded) = checkpoint::decode(&bytes).unwrap();
        assert_eq!(head.seq, Seq(k as u64));
        assert_eq!(loaded, at_k, "a checkpoint at batch {k} loads as the state it was taken of");
        for b in &batches[k..] {
            loaded.apply(b.seq, b.system_time, &b.events).unwrap();
        }
        assert_eq!(loaded, full, "checkpoint at batch {k} + the tail");
    }
}

#[test]
fn a_damaged_checkpoint_is_refused_by_its_checksums() {
    let fx = Fixture::new();
    rich_history(&fx.store, &fx.ns, 3);
    let bytes = checkpoint::encode(&fx.store.inspect(&fx.ns, Clone::clone).unwrap());
    let mut rng = StdRng::seed_from_u64(1);
    for _ in 0..50 {
        let mut bad = bytes.clone();
        let at = rng.random_range(0..bad.len());
        bad[at] ^= 1 << rng.random_range(0..8);
        assert!(checkpoint::decode(&bad).is_err(), "a flipped bit at {at} must be caught");
    }
    for cut in [0, 10, CHECKPOINT_HEADER_LEN, bytes.len() - 1] {
        assert!(checkpoint::decode(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    // Another format, with a header that is otherwise whole.
    let mut other = bytes.clone();
    other[8..12].copy_from_slice(&(CHECKPOINT_VERSION + 1).to_le_bytes());
    let crc = crc32fast::hash(&other[..CHECKPOINT_HEADER_LEN - 4]);
    other[CHECKPOINT_HEADER_LEN - 4..CHECKPOINT_HEADER_LEN].copy_from_slice(&crc.to_le_bytes());
    let err = checkpoint::decode(&other).unwrap_err();
    assert!(err.to_string().contains("format"), "{err}");
}

/// The state of a fixed history, and its checkpoint as this format stores it.
const FORMAT_FIXTURE: &str = "tests/data/checkpoint-v8.ckpt";

#[test]
fn a_checkpoint_of_the_stored_format_still_loads() {
    // The fixture was written by this format from this history (with the fixture's fixed
    // clock). If the state's structures change, it no longer loads to the same state:
    // raise CHECKPOINT_VERSION (old files are then ignored and rebuilt) and write the
    // fixture anew with UPDATE_EXPECT=1.
    let fx = Fixture::new();
    rich_history(&fx.store, &fx.ns, 5);
    let state = fx.store.inspect(&fx.ns, Clone::clone).unwrap();
    let path = crate::common::project_root().join(FORMAT_FIXTURE);
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&path, checkpoint::encode(&state)).unwrap();
    }
    let stored = std::fs::read(&path).unwrap();
    let (head, loaded) = checkpoint::decode(&stored).expect("the stored checkpoint must load");
    assert_eq!(head.version, CHECKPOINT_VERSION);
    assert_eq!(loaded, state);
}

fn ckpt_path(dir: &std::path::Path, ns: &Namespace) -> std::path::PathBuf {
    dir.join("checkpoints").join(format!("{}.ckpt", ns.as_str()))
}

#[test]
fn opening_loads_the_checkpoint_and_replays_the_rest_and_ignores_a_bad_one() {
    let dir = tempfile::tempdir().unwrap();
    let ns = Namespace::new("ns", "ckpt").unwrap();
    let (before, early, batches) = {
        let store = Store::open(dir.path()).unwrap();
        random_history(&store, &ns, 4);
        let written = store.checkpoint(&ns).unwrap().expect("a checkpoint is written");
        assert_eq!(store.checkpoint(&ns).unwrap(), None, "nothing new to checkpoint");
        let early = (written.seq, std::fs::read(ckpt_path(dir.path(), &ns)).unwrap());
        rich_history(&store, &ns, 8);
        (everything(&store, &ns, 2), early, store.counts(&ns).unwrap().batches)
        // Dropped: a clean close checkpoints the whole log.
    };
    let reopen = |expect_from: Seq| {
        let store = Store::open(dir.path()).unwrap();
        let after = everything(&store, &ns, 2);
        assert_eq!(store.checkpoint_seq(&ns), Some(expect_from));
        assert_eq!(before.len(), after.len());
        for (key, value) in &before {
            assert_eq!(Some(value), after.get(key), "{key} (opened from checkpoint {expect_from:?})");
        }
        std::mem::drop(store);
    };
    // The checkpoint of the clean close: nothing to replay.
    let report = ostrakon_engine::admin::inspect_dir(dir.path()).unwrap();
    assert_eq!(report[0].checkpoint.as_ref().map(|c| c.seq), Some(Seq(batches)));
    reopen(Seq(batches));
    // An older checkpoint: it and the log after it.
    let path = ckpt_path(dir.path(), &ns);
    let put = |bytes: &[u8]| std::fs::write(&path, bytes).unwrap();
    put(&early.1);
    reopen(early.0);
    // Damaged, of another format, or missing: the whole log is replayed.
    let mut damaged = early.1.clone();
    let at = damaged.len() / 2;
    damaged[at] ^= 0x40;
    for bad in [damaged, early.1[..CHECKPOINT_HEADER_LEN + 3].to_vec(), b"MNEMOCKP but not".to_vec()] {
        put(&bad);
        reopen(Seq(0)); // and its clean close writes a good one again
    }
    std::fs::remove_file(&path).unwrap();
    reopen(Seq(0));
    // A checkpoint of another log (another store's namespace of the same name): ignored.
    let other = tempfile::tempdir().unwrap();
    {
        let store = Store::open(other.path()).unwrap();
        random_history(&store, &ns, 4);
    }
    put(&std::fs::read(ckpt_path(other.path(), &ns)).unwrap());
    reopen(Seq(0));
    // Deleting every derived file changes no answer.
    std::fs::remove_dir_all(dir.path().join("checkpoints")).unwrap();
    reopen(Seq(0));
}

/// Runs the binary on a data directory and returns its stdout; panics if it failed.
fn run(args: &[&str], data: &std::path::Path) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ostrakon"))
        .args(args)
        .arg("--data")
        .arg(data)
        .env("OSTRAKON_EMBEDDER", "off")
        .env("OSTRAKON_LOG", "error")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Everything the namespace holds at the latest point, as the binary prints it.
const READ: &str = r#"{ namespace(name: "crash") { counts { batches facts entities } }
  snapshot(namespace: "crash", first: 1000) { edges { node { id subject { name } object { integer } status } } } }"#;

#[test]
fn a_kill_while_checkpointing_never_keeps_a_store_from_opening_or_changes_an_answer() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut rng = StdRng::seed_from_u64(9);
    for round in 0..8 {
        // An import appends its lines, then checkpoints (about a tenth of its run): a
        // kill at a random moment lands before, inside or after the checkpoint's write.
        let lines: String = (0..30)
            .map(|line| {
                let facts: Vec<String> = (0..400)
                    .map(|i| {
                        format!(
                            r#"{{"subject":{{"name":"e{}"}},"predicate":"p{}","object":{{"integer":{}}},"validFrom":"20{:02}"}}"#,
                            (line * 400 + i) % 3000,
                            i % 3,
                            round * 100_000 + line * 400 + i,
                            (line + round) % 30,
                        )
                    })
                    .collect();
                format!("{{\"namespace\":\"crash\",\"op\":\"assertFacts\",\"facts\":[{}]}}\n", facts.join(","))
            })
            .collect();
        let file = dir.path().join(format!("round-{round}.jsonl"));
        std::fs::write(&file, lines).unwrap();
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ostrakon"))
            .arg("import")
            .arg(&file)
            .arg("--data")
            .arg(&data)
            .env("OSTRAKON_EMBEDDER", "off")
            .env("OSTRAKON_LOG", "error")
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(rng.random_range(50..1500)));
        let _ = child.kill();
        child.wait().unwrap();
        // Whatever the kill left in checkpoints/, the store opens and answers as a full
        // replay of its log does.
        same_as_replay(&data, round);
    }
    // `ostrakon checkpoint` killed at random moments of its run, the later ones (where it
    // writes) more often: the real file is the old checkpoint or the new one, whole.
    let ckpt = data.join("checkpoints/crash.ckpt");
    let timed = std::time::Instant::now();
    std::fs::remove_file(&ckpt).unwrap();
    run(&["checkpoint"], &data);
    let whole = timed.elapsed().as_millis() as u64;
    let mut torn = 0;
    for round in 10..20 {
        if round % 2 == 0 {
            std::fs::remove_file(&ckpt).unwrap();
        }
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ostrakon"))
            .arg("checkpoint")
            .arg("--data")
            .arg(&data)
            .env("OSTRAKON_LOG", "error")
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(rng.random_range(whole / 3..=whole)));
        let _ = child.kill();
        child.wait().unwrap();
        torn += usize::from(data.join("checkpoints/crash.ckpt.tmp").exists());
        same_as_replay(&data, round);
    }
    eprintln!("{torn} of 10 kills left a partly written checkpoint behind");
}

/// The store at `data` opens and answers as a full replay of its log (in a copy holding
/// the log alone) does.
fn same_as_replay(data: &std::path::Path, round: usize) {
    let with = run(&["query", READ], data);
    let replayed = data.with_file_name(format!("replayed-{round}"));
    std::fs::create_dir_all(replayed.join("logs")).unwrap();
    std::fs::copy(data.join("logs/crash.log"), replayed.join("logs/crash.log")).unwrap();
    let without = run(&["query", READ], &replayed);
    assert_eq!(with, without, "round {round}: opened with the checkpoint a kill left");
    assert!(with.contains("\"facts\""), "{with}");
}

/// Search answers for a few cues, as text.
fn searches(store: &Store, ns: &Namespace) -> Vec<String> {
    ["e3 met e7", "round 12", "e1", "met", "thread"]
        .iter()
        .map(|cue| {
            let query = ostrakon_engine::SearchQuery { text: Some((*cue).into()), ..Default::default() };
            let at =
                ostrakon_engine::ReadAt { at: Some(t("2031-01-01")), ..ostrakon_engine::ReadAt::latest() };
            format!("{:?}", store.at(ns, at).and_then(|r| r.search(&query)).unwrap().value.hits)
        })
        .collect()
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A store whose every namespace keeps its search indexes on disk, however small.
fn open(path: &std::path::Path) -> Store {
    let options = ostrakon_engine::StoreOptions { search_on_disk_from_bytes: Some(0), ..Default::default() };
    Store::open_with(path, options).unwrap()
}

#[test]
fn the_search_index_on_disk_answers_after_a_restart_as_a_rebuild_does() {
    let dir = tempfile::tempdir().unwrap();
    let ns = Namespace::new("ns", "search").unwrap();
    let search_dir = dir.path().join("search").join("search");
    let early = dir.path().join("early-search");
    let before = {
        let store = open(dir.path());
        rich_history(&store, &ns, 12);
        let early_answers = searches(&store, &ns);
        assert!(early_answers.iter().any(|a| a.len() > 10), "{early_answers:?}");
        copy_dir(&search_dir, &early);
        rich_history(&store, &ns, 13);
        searches(&store, &ns)
    };
    let meta = std::fs::read_to_string(search_dir.join("text").join("meta.json")).unwrap();
    assert!(meta.contains("ostrakon-text-4"), "the commits carry their stamp: {meta}");
    let check = |what: &str| {
        let store = open(dir.path());
        assert_eq!(searches(&store, &ns), before, "{what}");
    };
    check("the index as the clean close left it");
    // Behind the log: the batches after its stamp are indexed on open.
    std::fs::remove_dir_all(&search_dir).unwrap();
    copy_dir(&early, &search_dir);
    check("an index that holds the first half of the log");
    // Missing, or of another log: built anew.
    std::fs::remove_dir_all(&search_dir).unwrap();
    check("no index");
    let other = tempfile::tempdir().unwrap();
    {
        let store = open(other.path());
        rich_history(&store, &ns, 12);
        searches(&store, &ns);
    }
    std::fs::remove_dir_all(&search_dir).unwrap();
    copy_dir(&other.path().join("search").join("search"), &search_dir);
    check("an index of another log");
    // Of an earlier format (the first indexed a string fact's escaped form; its stamp
    // says `mnemo-text-1`): not trusted, built anew from the log in this one.
    let meta_path = search_dir.join("text").join("meta.json");
    let current = std::fs::read_to_string(&meta_path).unwrap();
    std::fs::write(&meta_path, current.replace("ostrakon-text-4", "mnemo-text-1")).unwrap();
    check("an index of the earlier format");
    let rebuilt = std::fs::read_to_string(&meta_path).unwrap();
    assert!(rebuilt.contains("ostrakon-text-4") && !rebuilt.contains("mnemo-text-1"), "{rebuilt}");
    // Damaged files: removed and built anew.
    for entry in std::fs::read_dir(search_dir.join("text")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            std::fs::write(&path, b"{ not json").unwrap();
        }
    }
    check("a damaged index");
    // By default a small namespace indexes in RAM: no directory for it.
    let small = tempfile::tempdir().unwrap();
    {
        let store = Store::open(small.path()).unwrap();
        rich_history(&store, &ns, 1);
        assert!(!searches(&store, &ns).is_empty());
    }
    assert!(!small.path().join("search").exists());
}

/// A namespace of client vectors: `n` episodes in batches of five, from `from` on.
fn vector_history(store: &Store, ns: &Namespace, from: usize, n: usize) {
    let mut rng = StdRng::seed_from_u64(from as u64);
    if from == 0 {
        store
            .append(
                ns,
                vec![Change::ConfigureEmbedding(ostrakon_engine::core::EmbeddingMode::Client { dim: 4 })],
            )
            .unwrap();
    }
    for start in (from..from + n).step_by(5) {
        let mut changes = Vec::new();
        for i in start..(start + 5).min(from + n) {
            changes.push(Change::RecordEpisode(NewEpisode {
                text: format!("note {i} about the {} garden", ["north", "south", "east"][i % 3]),
                occurred_at: t("2029-06-01"),
                thread: Some(format!("thread-{}", i % 4)),
                ..NewEpisode::default()
            }));
            let v: Vec<f32> = (0..4).map(|_| rng.random_range(-1.0f32..1.0)).collect();
            changes.push(Change::Embed { episode: EpisodeRef::New(changes.len() - 1), vector: v });
        }
        store.append(ns, changes).unwrap();
    }
}

fn vector_searches(store: &Store, ns: &Namespace) -> Vec<String> {
    let mut rng = StdRng::seed_from_u64(99);
    (0..12)
        .map(|i| {
            let vector: Vec<f32> = (0..4).map(|_| rng.random_range(-1.0f32..1.0)).collect();
            let text = (i % 2 == 0).then(|| "garden north".to_owned());
            let query = ostrakon_engine::SearchQuery {
                text,
                vector: Some(vector),
                wait_for_index: true,
                ..Default::default()
            };
            let hits = store
                .at(ns, ostrakon_engine::ReadAt::latest())
                .and_then(|r| r.search(&query))
                .unwrap()
                .value
                .hits;
            format!("{:?}", hits.iter().map(|h| (h.record, (h.score * 1e4).round())).collect::<Vec<_>>())
        })
        .collect()
}

#[test]
fn saved_search_vectors_are_loaded_on_restart_and_answer_as_embedding_anew_does() {
    let dir = tempfile::tempdir().unwrap();
    let ns = Namespace::new("ns", "vectors").unwrap();
    let search_dir = dir.path().join("search").join("vectors");
    let vectors = search_dir.join("vectors");
    let early = dir.path().join("early-search");
    let first = {
        let store = open(dir.path());
        vector_history(&store, &ns, 0, 40);
        vector_searches(&store, &ns)
    };
    assert!(vectors.exists(), "a clean close saves the vectors");
    let report = ostrakon_engine::admin::inspect_dir(dir.path()).unwrap();
    let r = report.iter().find(|r| r.namespace == "vectors").unwrap();
    let last = r.counts.unwrap().batches;
    assert_eq!((r.text_index_batch, r.vectors_batch), (Some(last), Some(last)), "{r:?}");
    assert!(r.state_bytes.is_some_and(|b| b > 1000), "{r:?}");
    copy_dir(&search_dir, &early);
    let before = {
        let store = open(dir.path());
        assert_eq!(vector_searches(&store, &ns), first);
        let last = store.counts(&ns).unwrap().batches;
        assert_eq!(store.search_batches(&ns), Some((Seq(last), Seq(last))), "loaded, not embedded again");
        vector_history(&store, &ns, 40, 30);
        vector_searches(&store, &ns)
    };
    // What embedding every text anew gives: the reference for every case below.
    std::fs::remove_dir_all(&search_dir).unwrap();
    let rebuilt = {
        let store = open(dir.path());
        let answers = vector_searches(&store, &ns);
        assert_eq!(store.search_batches(&ns).map(|b| b.1), Some(Seq(0)), "nothing saved to load");
        answers
    };
    assert_eq!(rebuilt, before);
    let check = |what: &str, loaded: bool| {
        let store = open(dir.path());
        assert_eq!(vector_searches(&store, &ns), rebuilt, "{what}");
        let saved = store.search_batches(&ns).unwrap().1;
        assert_eq!(saved > Seq(0), loaded, "{what}: vectors loaded from batch {saved:?}");
    };
    check("the vectors the clean close saved", true);
    // Text and vectors of the first part of the log: the rest is indexed and embedded.
    std::fs::remove_dir_all(&search_dir).unwrap();
    copy_dir(&early, &search_dir);
    check("indexes of the first part of the log", true);
    // Vectors older than the text indexes (a crash between saves): embedded anew.
    std::fs::copy(early.join("vectors"), &vectors).unwrap();
    check("vectors behind the text index", false);
    // Damaged or cut short: ignored, embedded anew.
    let mut bytes = std::fs::read(&vectors).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 1;
    std::fs::write(&vectors, &bytes).unwrap();
    check("a damaged vector file", false);
    let bytes = std::fs::read(&vectors).unwrap();
    std::fs::write(&vectors, &bytes[..bytes.len() / 3]).unwrap();
    check("a cut-short vector file", false);
}
