//! Online backup: `ostrakon backup` copies a data directory a server is writing to, each
//! namespace at one batch, and `ostrakon restore` makes a store that answers exactly as the
//! original did at those batches; a backup killed part-way leaves nothing under its name.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use ostrakon_engine::core::{EntityFilter, FactFilter, Namespace, Scope, Seq};
use ostrakon_engine::{KnownAt, ReadAt, Store};
use serde_json::json;

use crate::common::serve::{graphql, start_with};

fn ostrakon(args: &[&str], data: &Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ostrakon"))
        .args(args)
        .arg("--data")
        .arg(data)
        .env("OSTRAKON_EMBEDDER", "off")
        .env("OSTRAKON_LOG", "warn")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

/// The batch each namespace was copied at, from `ostrakon backup`'s lines `ns: batch N`.
fn copied_at(output: &str) -> Vec<(String, u64)> {
    output
        .lines()
        .filter_map(|l| l.split_once(": batch "))
        .filter_map(|(ns, n)| Some((ns.to_owned(), n.trim().parse().ok()?)))
        .collect()
}

/// Everything a read at `at` says of a namespace: entities, and facts with their status.
fn answers(store: &Store, ns: &Namespace, at: ReadAt) -> Vec<String> {
    let mut out = Vec::new();
    for (_, e) in
        store.at(ns, at).and_then(|r| r.entities(&EntityFilter::default(), None, 10_000)).unwrap().value.items
    {
        out.push(format!("entity {} {} {:?}", e.id, e.name, e.aliases));
    }
    for f in store.at(ns, at).and_then(|r| r.facts(&FactFilter::default(), Scope::All)).unwrap().value {
        out.push(format!(
            "fact {} {} {} {:?} {:?}",
            f.fact.id, f.fact.subject, f.fact.predicate, f.fact.object, f.status
        ));
    }
    out.sort();
    out
}

/// Writers of different shapes on three namespaces until `stop`: single episodes with
/// new entities, batches of several facts, restatements of one slot.
fn writers(
    addr: std::net::SocketAddr,
    stop: Arc<AtomicBool>,
    done: Arc<AtomicUsize>,
) -> Vec<std::thread::JoinHandle<()>> {
    (0..3)
        .map(|w| {
            let (stop, done) = (Arc::clone(&stop), Arc::clone(&done));
            std::thread::spawn(move || {
                let ns = ["ana", "ben", "cy"][w];
                let mut i = 0u64;
                while !stop.load(Ordering::SeqCst) {
                    i += 1;
                    let write = match (w as u64 + i) % 3 {
                        0 => format!(
                            r#"mutation {{ recordEpisode(namespace: "{ns}", episode: {{ text: "note {i} of {ns}" }}, entities: [{{ name: "P{i}" }}]) {{ seq }} }}"#
                        ),
                        1 => {
                            let facts: Vec<String> = (0..1 + i % 4)
                                .map(|k| format!(r#"{{ subject: {{ name: "S{k}" }}, predicate: "p{k}", object: {{ string: "v{i}" }}, validFrom: "20{:02}" }}"#, 10 + (i + k) % 15))
                                .collect();
                            format!(r#"mutation {{ assertFacts(namespace: "{ns}", facts: [{}]) {{ seq }} }}"#, facts.join(", "))
                        }
                        _ => format!(
                            r#"mutation {{ assertFacts(namespace: "{ns}", facts: [{{ subject: {{ name: "Home" }}, predicate: "at", object: {{ entity: {{ name: "City{}" }} }}, validFrom: "2020" }}]) {{ seq }} }}"#,
                            i % 5
                        ),
                    };
                    let answer = graphql(addr, &write, json!({})).unwrap();
                    assert!(answer["errors"].is_null(), "{answer}");
                    done.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect()
}

#[test]
fn a_backup_taken_while_writes_run_restores_to_a_store_that_answers_as_the_original_did() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = start_with(&data, &[("OSTRAKON_EMBEDDER", "off".as_ref())]);
    let (stop, done) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
    let handles = writers(server.addr, Arc::clone(&stop), Arc::clone(&done));
    while done.load(Ordering::SeqCst) < 60 {
        std::thread::sleep(Duration::from_millis(20));
    }
    // A backup killed part-way leaves nothing under its name; the next one succeeds.
    let killed = dir.path().join("killed");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ostrakon"))
        .args(["backup", killed.to_str().unwrap(), "--data"])
        .arg(&data)
        .env("OSTRAKON_LOG", "warn")
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(3));
    let _ = child.kill();
    let _ = child.wait();
    let finished = killed.join("logs").is_dir();
    assert!(finished || !killed.exists(), "a killed backup left a directory under its name");
    // Two backups while the writers go on.
    let mut backups = Vec::new();
    for k in 0..2 {
        let to = dir.path().join(format!("backup-{k}"));
        let (ok, out) = ostrakon(&["backup", to.to_str().unwrap()], &data);
        assert!(ok, "{out}");
        let at = copied_at(&out);
        assert_eq!(at.len(), 3, "{out}");
        backups.push((to, at));
        std::thread::sleep(Duration::from_millis(150));
    }
    let (ok, out) = ostrakon(&["backup", dir.path().join("killed").to_str().unwrap()], &data);
    assert!(ok || out.contains("already exists"), "{out}");
    stop.store(true, Ordering::SeqCst);
    for h in handles {
        h.join().unwrap();
    }
    drop(server);
    assert!(
        backups[1].1.iter().zip(&backups[0].1).any(|(b, a)| b.1 > a.1),
        "writes went on between: {backups:?}"
    );
    let original = Store::open(&data).unwrap();
    for (k, (backup, at)) in backups.iter().enumerate() {
        let restored_dir = dir.path().join(format!("restored-{k}"));
        let (ok, out) = ostrakon(&["restore", backup.to_str().unwrap()], &restored_dir);
        assert!(ok, "{out}");
        let restored = Store::open(&restored_dir).unwrap();
        for (name, seq) in at {
            let ns = Namespace::new("ns", name).unwrap();
            assert_eq!(restored.counts(&ns).unwrap().batches, *seq, "{name}");
            let then = ReadAt { valid_at: None, known_at: KnownAt::Seq(Seq(*seq)), at: None };
            let now = ReadAt { valid_at: None, known_at: KnownAt::Latest, at: None };
            let (a, b) = (answers(&original, &ns, then), answers(&restored, &ns, now));
            assert!(!a.is_empty());
            assert_eq!(a, b, "{name} at batch {seq}");
        }
        // A restore never writes over a data directory that holds logs.
        let (ok, out) = ostrakon(&["restore", backup.to_str().unwrap()], &restored_dir);
        assert!(!ok && out.contains("already holds logs"), "{out}");
    }
}
