//! The documents say what the code is: every file path they quote exists, the format
//! versions they state are the code's, the crates they list are the workspace's, and the
//! MCP tool count they give is the server's.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The project's Markdown files (not those of installed packages or build output).
fn markdown(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(name.as_str(), "target" | "node_modules" | "dist" | ".git" | "vendor") {
                markdown(&path, out);
            }
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// The code spans of a Markdown text that name a file or folder of the project.
fn quoted_paths(text: &str) -> Vec<String> {
    const TOP: [&str; 11] = [
        "tests/",
        "crates/",
        "src/",
        "benches/",
        "queries/",
        "schema/",
        "python/",
        "clients/",
        "examples/",
        "docs/",
        "deploy/",
    ];
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| TOP.iter().any(|top| span.starts_with(top)))
        .filter(|span| !span.contains(|c: char| c.is_whitespace() || "*{}<>|…$".contains(c)))
        .map(|span| span.trim_end_matches([',', '.', ':', ')']).to_owned())
        .collect()
}

#[test]
fn every_path_the_documents_quote_exists() {
    let mut files = Vec::new();
    markdown(&root(), &mut files);
    let mut missing = Vec::new();
    let mut seen = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for path in quoted_paths(&text) {
            seen += 1;
            // From the project's root, or from the document's own folder.
            let here = file.parent().unwrap().join(&path);
            if !root().join(&path).exists() && !here.exists() {
                missing.push(format!("{}: `{path}`", file.strip_prefix(root()).unwrap().display()));
            }
        }
    }
    assert!(seen > 50, "the documents' paths were not found ({seen})");
    assert!(missing.is_empty(), "quoted paths that do not exist:\n{}", missing.join("\n"));
}

#[test]
fn the_versions_crates_and_counts_the_documents_give_are_the_codes() {
    // The checkpoint header's version.
    let checkpoint = std::fs::read_to_string(root().join("crates/ostrakon-index/CHECKPOINT.md")).unwrap();
    let row = checkpoint.lines().find(|l| l.contains("| version ")).expect("a version row");
    let version = ostrakon_index::checkpoint::CHECKPOINT_VERSION;
    assert!(
        row.contains(&format!("`u32`, `{version}`")),
        "CHECKPOINT.md says {row}, the code writes {version}"
    );
    // The log's file format.
    let log = std::fs::read_to_string(root().join("crates/ostrakon-log/FORMAT.md")).unwrap();
    let version = ostrakon_log::FORMAT_VERSION;
    assert!(log.contains(&format!("version {version}")), "FORMAT.md does not describe version {version}");
    // Every crate of the workspace is in the crates' table, and nothing else is.
    let table = std::fs::read_to_string(root().join("crates/README.md")).unwrap();
    let listed: BTreeSet<String> = table
        .lines()
        .filter_map(|l| l.strip_prefix("| `ostrakon-"))
        .filter_map(|l| l.split('`').next())
        .map(|name| format!("ostrakon-{name}"))
        .collect();
    let crates: BTreeSet<String> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(listed, crates, "crates/README.md lists other crates than crates/ holds");
    // The MCP tool count, in words, wherever the documents give it.
    let tools: usize = std::fs::read_dir(root().join("crates/ostrakon-mcp/src"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .map(|code| code.lines().filter(|l| l.trim_start().starts_with("#[tool(")).count())
        .sum();
    let words = [
        "", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
        "twelve", "thirteen", "fourteen", "fifteen",
    ];
    let said = words.get(tools).copied().unwrap_or("many");
    for doc in ["README.md", "crates/README.md"] {
        let text = std::fs::read_to_string(root().join(doc)).unwrap().replace('\n', " ");
        for (n, word) in words.iter().enumerate().skip(2) {
            for claim in [format!("{word} tools"), format!("with {word} tools")] {
                if text.contains(&claim) {
                    assert_eq!(n, tools, "{doc} says \"{claim}\"; the server has {tools} (\"{said} tools\")");
                }
            }
        }
        assert!(text.contains(&format!("{said} tools")), "{doc} does not say how many tools ({said})");
    }
}

/// The kinds of event: the variants of `Event`.
fn event_kinds() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("crates/ostrakon-core/src/event.rs")).unwrap();
    let start = text.find("pub enum Event {").expect("the Event enum");
    let body = &text[start..start + text[start..].find("\n}").unwrap()];
    body.lines()
        .skip(1)
        .filter(|l| l.starts_with("    ") && !l.starts_with("     "))
        .map(str::trim)
        .filter(|l| l.chars().next().is_some_and(char::is_uppercase))
        .map(|l| l.chars().take_while(|c| c.is_alphanumeric()).collect::<String>())
        .collect()
}

#[test]
fn every_place_an_event_kind_must_be_handled_is_listed_and_handles_them_all() {
    let kinds = event_kinds();
    assert!(kinds.len() > 20 && kinds.contains(&"FactAsserted".to_owned()), "{kinds:?}");
    let guide = std::fs::read_to_string(root().join("CONTRIBUTING.md")).unwrap();
    let section = guide.split("Must handle it").nth(1).unwrap().split("Decide for it").next().unwrap();
    let listed: BTreeSet<String> = quoted_paths(section).into_iter().collect();
    assert_eq!(listed.len(), 4, "{listed:?}");
    let names_every_kind = |path: &Path| {
        let text = std::fs::read_to_string(path).unwrap();
        let text = text.split("#[cfg(test)]").next().unwrap_or_default();
        kinds.iter().all(|kind| {
            text.match_indices(kind.as_str()).any(|(at, _)| {
                let after = text[at + kind.len()..].chars().next();
                !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
        })
    };
    for path in &listed {
        assert!(names_every_kind(&root().join(path)), "{path} does not handle every kind of event");
    }
    // No other source handles them all without being listed.
    let mut sources = Vec::new();
    for dir in ["src", "crates"] {
        let mut stack = vec![root().join(dir)];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).unwrap() {
                let p = entry.unwrap().path();
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                if p.is_dir() && !matches!(name.as_str(), "tests" | "benches" | "target" | "examples") {
                    stack.push(p);
                } else if name.ends_with(".rs") {
                    sources.push(p);
                }
            }
        }
    }
    for path in sources {
        let relative = path.strip_prefix(root()).unwrap().display().to_string();
        if names_every_kind(&path) {
            assert!(
                listed.contains(&relative),
                "{relative} handles every kind of event but CONTRIBUTING.md does not list it"
            );
        }
    }
}
