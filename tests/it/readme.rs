//! The README's examples, run as written: every GraphQL block of `README.md` followed by
//! a JSON block is sent, in order, to one `ostrakon serve` on a fresh data directory, and
//! must get that answer — so the README cannot drift from what the server says. A
//! `ostrakon import FILE` the prose names before an example (in backticks) is run on the
//! same directory first (the server stopped for it).
//!
//! The answer is compared as JSON, exactly, but where the README says it elides: a
//! string with `[…]` matches any text in its place, and a number matches to the
//! precision it is written with (`0.2077` is 0.20765 to 0.20775).

use std::path::Path;

use serde_json::Value;

use crate::common::serve::{self, Server};

/// One example: what the prose asks to run first, the request and its answer.
struct Example {
    line: usize,
    imports: Vec<String>,
    request: String,
    answer: String,
}

/// The examples of a Markdown text, in order.
fn examples(text: &str) -> Vec<Example> {
    let mut out = Vec::new();
    let mut prose = String::new();
    let mut lines = text.lines().enumerate().peekable();
    let mut pending: Option<(usize, String)> = None;
    while let Some((n, line)) = lines.next() {
        let Some(lang) = line.strip_prefix("```") else {
            if !line.trim().is_empty() {
                pending = None;
                prose.push_str(line);
                prose.push('\n');
            }
            continue;
        };
        let mut body = String::new();
        for (_, inner) in lines.by_ref() {
            if inner.starts_with("```") {
                break;
            }
            body.push_str(inner);
            body.push('\n');
        }
        match (lang.trim(), pending.take()) {
            ("graphql", _) => pending = Some((n + 1, body)),
            ("json", Some((line, request))) => {
                let imports = imports_in(&prose);
                prose.clear();
                out.push(Example { line, imports, request, answer: body });
            }
            _ => {}
        }
    }
    out
}

/// The files of the `ostrakon import FILE …` commands quoted in `prose` (a command that
/// names no file first, `ostrakon import --cluster …`, is a mention, not a step).
fn imports_in(prose: &str) -> Vec<String> {
    prose
        .split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|code| code.strip_prefix("ostrakon import "))
        .filter_map(|args| {
            args.split_whitespace().next().filter(|file| !file.starts_with('-')).map(str::to_owned)
        })
        .collect()
}

/// Whether `actual` is what `expected` says, with the README's elisions; the path of the
/// first difference otherwise.
fn matches(expected: &Value, actual: &Value, path: &str) -> Result<(), String> {
    let differ = || Err(format!("at {path}: the README says {expected}, the server {actual}"));
    match (expected, actual) {
        (Value::String(e), Value::String(a)) if e.contains("[…]") => {
            let mut rest = a.as_str();
            let pieces: Vec<&str> = e.split("[…]").collect();
            for (i, piece) in pieces.iter().enumerate() {
                let found = match i {
                    0 => rest.starts_with(piece).then_some(0),
                    _ if i == pieces.len() - 1 => rest.ends_with(piece).then(|| rest.len() - piece.len()),
                    _ => rest.find(piece),
                };
                let Some(at) = found else { return differ() };
                rest = &rest[at + piece.len()..];
            }
            Ok(())
        }
        (Value::Number(e), Value::Number(a)) => {
            let written = e.to_string();
            let decimals = written.split_once('.').map_or(0, |(_, d)| d.len());
            let (e, a) = (e.as_f64().unwrap_or(f64::NAN), a.as_f64().unwrap_or(f64::NAN));
            let within = 0.5 * 10f64.powi(-(decimals as i32)) + 1e-12;
            if decimals == 0 && e != a || (e - a).abs() > within { differ() } else { Ok(()) }
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                return differ();
            }
            e.iter().zip(a).enumerate().try_for_each(|(i, (e, a))| matches(e, a, &format!("{path}[{i}]")))
        }
        (Value::Object(e), Value::Object(a)) => {
            if e.keys().ne(a.keys()) {
                return differ();
            }
            e.iter().try_for_each(|(k, v)| matches(v, &a[k], &format!("{path}.{k}")))
        }
        _ if expected == actual => Ok(()),
        _ => differ(),
    }
}

fn import(file: &str, data: &Path) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ostrakon"))
        .args(["import", file, "--data"])
        .arg(data)
        .current_dir(crate::common::project_root())
        .env("OSTRAKON_LOG", "warn")
        .output()
        .unwrap();
    assert!(out.status.success(), "ostrakon import {file}: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn every_example_of_the_readme_answers_as_written() {
    let root = crate::common::project_root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let examples = examples(&readme);
    assert!(examples.len() >= 3, "the README's examples were not found");
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut server: Option<Server> = None;
    for example in &examples {
        if !example.imports.is_empty() {
            server = None;
            for file in &example.imports {
                import(file, &data);
            }
        }
        let running = server.get_or_insert_with(|| serve::start(&data));
        let answer = serve::graphql(running.addr, &example.request, Value::Null).unwrap();
        let expected: Value = serde_json::from_str(&example.answer)
            .unwrap_or_else(|e| panic!("README.md line {}: the answer is not JSON: {e}", example.line));
        if let Err(difference) = matches(&expected, &answer, "") {
            panic!(
                "README.md line {}: the example answers otherwise ({difference}).\nThe server answered:\n{}",
                example.line,
                serde_json::to_string(&answer).unwrap()
            );
        }
    }
}

/// The import format's example imports as written: every line accepted, in order, on a
/// fresh data directory.
#[test]
fn the_import_example_imports_as_written() {
    let readme = std::fs::read_to_string(crate::common::project_root().join("README.md")).unwrap();
    let block = readme
        .split("```\n")
        .find(|b| b.starts_with("{\"namespace\"") && b.lines().all(|l| l.starts_with("{\"namespace\"")))
        .expect("the README's import example");
    assert!(block.lines().count() >= 10, "{block}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("example.jsonl");
    std::fs::write(&file, block).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ostrakon"))
        .args(["import"])
        .arg(&file)
        .arg("--data")
        .arg(dir.path().join("data"))
        .env("OSTRAKON_LOG", "warn")
        .env("OSTRAKON_EMBEDDER", "off")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains(&format!("accepted {}, rejected 0", block.lines().count())), "{stdout}");
}
