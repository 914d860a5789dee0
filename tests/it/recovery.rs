//! Recovery as the store and the operator see it: a zero-filled tail spanning several
//! frames recovers to the batches before it, and says what it cut (in the store, in
//! `/metrics`, in `ostrakon inspect`); `ostrakon inspect` changes nothing unless `--repair`;
//! a damaged namespace is refused, naming the damage, while every other one serves.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, header};
use http_body_util::BodyExt as _;
use ostrakon_engine::core::Namespace;
use ostrakon_engine::{Change, NewEpisode, OpenError, ReadError, StorageError, Store, WriteError};
use ostrakon_server::{AppState, Config, app};
use serde_json::{Value, json};
use tower::ServiceExt as _;

fn ns(name: &str) -> Namespace {
    Namespace::new("ns", name).unwrap()
}

fn episode(text: &str) -> Vec<Change> {
    vec![Change::RecordEpisode(NewEpisode { text: text.into(), ..NewEpisode::default() })]
}

/// A data directory with `batches` one-episode batches in each namespace.
fn data_dir(namespaces: &[&str], batches: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    for name in namespaces {
        for i in 0..batches {
            store.append(&ns(name), episode(&format!("{name} episode {i}"))).unwrap();
        }
    }
    dir
}

fn log_file(dir: &Path, name: &str) -> PathBuf {
    dir.join("logs").join(format!("{name}.log"))
}

/// Zero-fills a log from `from_end` bytes before its end to the end: what power loss
/// leaves of an unsynced group write whose length reached the disk but not its data.
fn zero_tail(path: &Path, from_end: u64) {
    let mut bytes = std::fs::read(path).unwrap();
    let start = bytes.len() - from_end as usize;
    bytes[start..].fill(0);
    std::fs::write(path, bytes).unwrap();
}

/// Every file of a directory with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// Copies a data directory's logs (nothing else is needed to open it).
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.join("logs")).unwrap();
    for entry in std::fs::read_dir(from.join("logs")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, to.join("logs").join(path.file_name().unwrap())).unwrap();
    }
}

fn ostrakon(args: &[&str], data: &Path) -> (bool, String) {
    let out =
        Command::new(env!("CARGO_BIN_EXE_ostrakon")).args(args).arg("--data").arg(data).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn a_zero_filled_tail_spanning_frames_recovers_and_inspect_changes_nothing_until_repair() {
    let dir = data_dir(&["alice"], 6);
    let log = log_file(dir.path(), "alice");
    // The last two frames are ~60 bytes each: zero from the middle of the second-to-last
    // one to the end, as if both had been one group write cut by power loss.
    let frame = (std::fs::metadata(&log).unwrap().len() - (20 + "alice".len() as u64)) / 6;
    zero_tail(&log, frame + frame / 2);

    // Opening it (here by `ostrakon query`) logs at WARN what was cut.
    let probe = dir.path().join("probe");
    copy_dir(dir.path(), &probe);
    let out = Command::new(env!("CARGO_BIN_EXE_ostrakon"))
        .args(["query", "{ namespace(name: \"alice\") { name } }", "--data"])
        .arg(&probe)
        .env("OSTRAKON_EMBEDDER", "off")
        .env("OSTRAKON_LOG", "warn")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("WARN") && log.contains("torn tail") && log.contains("namespace=alice"), "{log}");
    let cut = std::fs::metadata(log_file(dir.path(), "alice")).unwrap().len()
        - std::fs::metadata(log_file(&probe, "alice")).unwrap().len();
    assert!(log.contains(&format!("bytes={cut}")), "{log}");

    // Inspect reads it, says what the next open will cut, and leaves every byte alone —
    // no LOCK file, no truncation.
    let before = snapshot(dir.path());
    let (ok, text) = ostrakon(&["inspect"], dir.path());
    assert!(ok, "{text}");
    assert!(text.contains("torn tail"), "{text}");
    let row: Vec<&str> = text.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(row[..2], ["alice", "4"], "{text}");
    assert_eq!(snapshot(dir.path()), before, "inspect changed the data directory");

    // --repair cuts it (the store opening does the same) and reports what it cut.
    let (ok, text) = ostrakon(&["inspect", "--repair"], dir.path());
    assert!(ok, "{text}");
    assert!(text.contains("alice: cut"), "{text}");
    let (_, text) = ostrakon(&["inspect"], dir.path());
    assert!(!text.contains("torn tail"), "{text}");

    let store = Store::open(dir.path()).unwrap();
    assert_eq!(store.counts(&ns("alice")).unwrap().batches, 4);
    assert!(store.truncations().is_empty(), "already cut by --repair");
}

#[tokio::test]
async fn a_cut_is_reported_by_the_store_and_in_metrics() {
    let dir = data_dir(&["alice"], 3);
    let log = log_file(dir.path(), "alice");
    let len = std::fs::metadata(&log).unwrap().len();
    // Half a frame of an interrupted write after the last whole one.
    let mut bytes = std::fs::read(&log).unwrap();
    let last = bytes[bytes.len() - 40..].to_vec();
    bytes.extend_from_slice(&last);
    std::fs::write(&log, &bytes).unwrap();

    let store = Arc::new(Store::open(dir.path()).unwrap());
    let cuts = store.truncations();
    assert_eq!(cuts.len(), 1);
    assert_eq!((cuts[0].1.offset, cuts[0].1.bytes), (len, 40));
    assert_eq!(store.counts(&ns("alice")).unwrap().batches, 3);

    let state = AppState::new(store, Config::default());
    let response = app(state).oneshot(Request::get("/metrics").body(Body::empty()).unwrap()).await.unwrap();
    let text = String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
    assert!(text.contains("ostrakon_log_truncated_bytes{namespace=\"alice\"} 40"), "{text}");
}

#[tokio::test]
async fn a_damaged_namespace_is_refused_while_the_others_serve() {
    let dir = data_dir(&["alice", "bob", "carol"], 3);
    // Bob's log: a flipped byte inside its first frame, with whole frames after it —
    // corruption, not a torn tail. Carol's file is a copy of Alice's under another name.
    let bob = log_file(dir.path(), "bob");
    let mut bytes = std::fs::read(&bob).unwrap();
    let header = 20 + "bob".len();
    bytes[header + 40] ^= 0xff;
    std::fs::write(&bob, bytes).unwrap();
    std::fs::copy(log_file(dir.path(), "alice"), log_file(dir.path(), "carol")).unwrap();
    let before = snapshot(dir.path());

    let store = Arc::new(Store::open(dir.path()).unwrap());
    let damaged: Vec<String> = store.damaged().iter().map(|(ns, _)| ns.to_string()).collect();
    assert_eq!(damaged, ["bob", "carol"]);
    assert_eq!(store.counts(&ns("alice")).unwrap().batches, 3);
    store.append(&ns("alice"), episode("still writable")).unwrap();
    let write = store.append(&ns("bob"), episode("lost?"));
    assert!(
        matches!(&write, Err(WriteError::Storage(StorageError::Damaged { namespace, .. })) if namespace == "bob"),
        "{write:?}"
    );
    let read = store
        .at(&ns("carol"), Default::default())
        .and_then(|r| r.facts(&Default::default(), ostrakon_engine::views::Scope::All));
    match read {
        Err(ReadError::Storage(StorageError::Damaged { namespace, reason })) => {
            assert_eq!(namespace, "carol");
            assert!(reason.contains("alice"), "the reason names the file's own log: {reason}");
        }
        other => panic!("{other:?}"),
    }

    // Over GraphQL: a typed error naming the namespace and the damage.
    let state = AppState::new(Arc::clone(&store), Config::default());
    let query = json!({ "query": r#"{ a: episodes(namespace: "alice") { edges { cursor } } b: episodes(namespace: "bob") { edges { cursor } } }"# });
    let request = Request::post("/graphql")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(query.to_string()))
        .unwrap();
    let response = app(state.clone()).oneshot(request).await.unwrap();
    let body: Value =
        serde_json::from_slice(&response.into_body().collect().await.unwrap().to_bytes()).unwrap();
    assert_eq!(body["data"]["a"]["edges"].as_array().unwrap().len(), 4, "{body}");
    assert_eq!(body["errors"][0]["extensions"]["code"], "NAMESPACE_DAMAGED", "{body}");
    assert!(body["errors"][0]["message"].as_str().unwrap().contains("bob"), "{body}");
    drop(state);
    drop(store);

    // The damaged files were left exactly as they were, and inspect names the damage.
    let after = snapshot(dir.path());
    assert_eq!(after[&bob], before[&bob]);
    assert_eq!(after[&log_file(dir.path(), "carol")], before[&log_file(dir.path(), "carol")]);
    let (ok, text) = ostrakon(&["inspect"], dir.path());
    assert!(!ok, "inspect exits 1 when a namespace is damaged");
    assert!(text.contains("DAMAGED"), "{text}");
}

#[test]
fn the_data_directory_stays_locked_when_its_lock_file_is_deleted() {
    let dir = data_dir(&["alice"], 1);
    let store = Store::open(dir.path()).unwrap();
    std::fs::remove_file(dir.path().join("LOCK")).unwrap();
    // The lock is held on the directory: a second store is refused, not let in to write
    // beside the first.
    match Store::open(dir.path()) {
        Err(OpenError::Locked { .. }) => {}
        other => panic!("a second store opened: {:?}", other.map(|_| ())),
    }
    store.append(&ns("alice"), episode("the first store writes on")).unwrap();
    drop(store);
    let reopened = Store::open(dir.path()).unwrap();
    assert_eq!(reopened.counts(&ns("alice")).unwrap().batches, 2);
}

#[test]
fn a_directory_where_a_log_belongs_is_damage_not_an_empty_namespace() {
    let dir = data_dir(&["alice", "bob"], 2);
    let bob = log_file(dir.path(), "bob");
    std::fs::remove_file(&bob).unwrap();
    std::fs::create_dir(&bob).unwrap();
    let store = Store::open(dir.path()).unwrap();
    let damaged: Vec<(String, String)> =
        store.damaged().iter().map(|(ns, why)| (ns.to_string(), why.clone())).collect();
    assert_eq!(damaged.len(), 1, "{damaged:?}");
    assert_eq!(damaged[0].0, "bob");
    assert!(damaged[0].1.contains("not a regular file"), "{damaged:?}");
    assert!(matches!(
        store.append(&ns("bob"), episode("x")),
        Err(WriteError::Storage(StorageError::Damaged { .. }))
    ));
    assert_eq!(store.counts(&ns("alice")).unwrap().batches, 2);
}
