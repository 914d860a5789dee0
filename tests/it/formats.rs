//! Files written by earlier versions open with this one: a data directory written when
//! the project was called Mnemo (`tests/fixtures/data-before-rename`: logs, checkpoints,
//! the embedding cache) answers as it did, from its checkpoints, and the default data
//! directory of that name is used while the new one does not exist.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/data-before-rename");

/// What the fixture answered when it was written.
const QUESTION: &str = r#"{
  in2012: facts(namespace: "ana", subject: { name: "Ana" }, predicate: "livesIn", validAt: "2012") { nodes { object { entity { name } } } }
  in2016: facts(namespace: "ana", subject: { name: "Ana" }, predicate: "livesIn", validAt: "2016") { nodes { object { entity { name } } } }
  search(namespace: "ana", text: "telescope in Chile", limit: 1) { hits { episode { text } } }
  bo: search(namespace: "bo", text: "balcony garden", limit: 1) { hits { episode { text } } }
}"#;

fn answer() -> Value {
    let hit = |text: &str| json!({ "hits": [{ "episode": { "text": text } }] });
    json!({
        "in2012": { "nodes": [{ "object": { "entity": { "name": "Porto" } } }] },
        "in2016": { "nodes": [{ "object": { "entity": { "name": "Lisbon" } } }] },
        "search": hit("Ana says the telescope time in Chile was the best month of her year."),
        "bo": hit("Bo planted tomatoes and basil on the balcony."),
    })
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// Runs `ostrakon query` (on `data`, or the default directory) and returns its data and
/// its log.
fn query(data: Option<&Path>, env: &[(&str, &Path)]) -> (Value, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ostrakon"));
    command.args(["query", "-"]).env("OSTRAKON_EMBEDDER", "off").env("OSTRAKON_LOG", "info");
    if let Some(data) = data {
        command.arg("--data").arg(data);
    }
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), QUESTION.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    let body: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (body, log)
}

#[test]
fn a_data_directory_written_before_the_rename_opens_from_its_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    copy(Path::new(FIXTURE), &data);
    let (body, log) = query(Some(&data), &[]);
    assert_eq!(body["data"], answer(), "{body}\n{log}");
    // Both namespaces were loaded from their checkpoints, with nothing to replay.
    for ns in ["ana", "bo"] {
        let opened = log
            .lines()
            .find(|l| l.contains("namespace opened") && l.contains(&format!("namespace={ns} ")))
            .unwrap_or_else(|| panic!("{ns} not opened:\n{log}"));
        assert!(opened.contains("replayed=0") && !opened.contains("checkpoint=0 "), "{opened}");
    }
    let inspect =
        Command::new(env!("CARGO_BIN_EXE_ostrakon")).args(["inspect", "--data"]).arg(&data).output().unwrap();
    assert!(inspect.status.success(), "{}", String::from_utf8_lossy(&inspect.stderr));
}

#[test]
fn the_default_data_directory_of_the_earlier_name_is_used_while_the_new_one_is_absent() {
    let dir = tempfile::tempdir().unwrap();
    let xdg = dir.path().join("share");
    copy(Path::new(FIXTURE), &xdg.join("mnemo"));
    let (body, log) = query(None, &[("XDG_DATA_HOME", &xdg)]);
    assert_eq!(body["data"], answer(), "{body}\n{log}");
    // Once the new one exists, it is the one used (and it holds nothing yet).
    std::fs::create_dir_all(xdg.join("ostrakon")).unwrap();
    let (body, log) = query(None, &[("XDG_DATA_HOME", &xdg)]);
    assert_eq!(body["errors"][0]["extensions"]["code"], "UNKNOWN_ENTITY", "{body}\n{log}");
    assert_eq!(body["data"]["bo"]["hits"], json!([]), "{body}\n{log}");
}

/// The stores of `tests/data/formats/`, one per format still read, each written once by
/// the build of its version and never rewritten (see its README).
const FORMATS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/formats");

/// `ostrakon export ARGS` of a copy of fixture `name`: the output, and the log lines.
fn export_of(name: &str, args: &[&str]) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    copy(&Path::new(FORMATS).join(name), &data);
    let out = Command::new(env!("CARGO_BIN_EXE_ostrakon"))
        .arg("export")
        .args(args)
        .arg("--data")
        .arg(&data)
        .env("OSTRAKON_EMBEDDER", "off")
        .env("OSTRAKON_LOG", "info")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{name}: {stderr}");
    (String::from_utf8(out.stdout).unwrap(), stderr)
}

#[test]
fn every_format_still_read_opens_and_answers_as_when_it_was_written() {
    // The current formats have their fixture: a change of format must add one (written
    // by the new build) beside the old, which must still open.
    let current = format!(
        "log{}-checkpoint{}",
        ostrakon_log::FORMAT_VERSION,
        ostrakon_index::checkpoint::CHECKPOINT_VERSION
    );
    assert!(Path::new(FORMATS).join(&current).is_dir(), "no fixture of the current formats ({current})");
    let log = std::fs::read_to_string(Path::new(FORMATS).join("expected.jsonl")).unwrap();
    let history = std::fs::read_to_string(Path::new(FORMATS).join("expected-history.nq")).unwrap();
    // Log format 2 with checkpoint format 8: opened from the checkpoints, nothing replayed.
    // Log format 1 alone: every batch replayed from the log.
    for (name, from_checkpoints) in [(current.as_str(), true), ("log1", false)] {
        let (exported, _) = export_of(name, &[]);
        assert_eq!(exported, log, "{name}: the log reads otherwise");
        let (rdf, opened) = export_of(name, &["--format", "nquads", "--history", "--valid-at", "2030-01-01"]);
        assert_eq!(rdf, history, "{name}: the folded state reads otherwise");
        let demo = opened
            .lines()
            .find(|l| l.contains("namespace opened") && l.contains("namespace=demo"))
            .unwrap_or_else(|| panic!("{name}: no open of demo logged: {opened}"));
        let opened_from_checkpoint = !demo.contains("checkpoint=0 ") && demo.contains("replayed=0 ");
        assert_eq!(opened_from_checkpoint, from_checkpoints, "{name}: {demo}");
    }
}
