//! The engine's API boundary, checked on the sources: the protocol crates (GraphQL, the
//! server and the RDF projection) reach the store only through its typed methods — no
//! index type, no closure over the index — none of them links the embedding model, and
//! only `mnemo-rdf` knows oxigraph.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    crate::common::project_root()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn protocol_crates_use_only_the_typed_store_api() {
    // What would hand a protocol crate the index: the crate itself, its types, and the
    // store's look-inside entry point.
    let forbidden = ["mnemo_index", "NamespaceIndex", ".inspect(", "read_search(", "with_index("];
    let mut found = Vec::new();
    for krate in ["mnemo-graphql", "mnemo-server", "mnemo-rdf", "mnemo-mcp"] {
        let dir = root().join("crates").join(krate);
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        for dep in ["mnemo-index", "mnemo-embed", "features = [\"inspect\"]"] {
            if manifest.contains(dep) {
                found.push(format!("{krate}/Cargo.toml depends on {dep}"));
            }
        }
        let mut files = Vec::new();
        rust_files(&dir.join("src"), &mut files);
        assert!(!files.is_empty());
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for (n, line) in text.lines().enumerate() {
                for word in forbidden {
                    if line.contains(word) {
                        found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                    }
                }
            }
        }
    }
    assert!(found.is_empty(), "the protocol crates reach past the store's API:\n{}", found.join("\n"));
}

#[test]
fn only_the_binary_links_the_embedding_model() {
    // A package's normal (not dev or build) dependencies, transitively, as cargo resolves
    // them for this machine (no network: the lock file and the build's sources suffice).
    let closure = |package: &str| {
        let output = std::process::Command::new(env!("CARGO"))
            .args(["tree", "--offline", "-e", "normal", "--prefix", "none", "-p", package, "--manifest-path"])
            .arg(root().join("Cargo.toml"))
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
            .collect::<std::collections::BTreeSet<_>>()
    };
    for krate in ["mnemo-engine", "mnemo-graphql", "mnemo-server", "mnemo-rdf", "mnemo-mcp"] {
        let deps = closure(krate);
        assert!(deps.contains(krate), "{krate}: {deps:?}");
        for heavy in ["candle-core", "tokenizers", "mnemo-embed"] {
            assert!(!deps.contains(heavy), "{krate} depends on {heavy}");
        }
    }
    // The check sees what it is looking for: the binary does link the model.
    assert!(closure("mnemo").contains("candle-core"));
}

#[test]
fn only_the_rdf_crate_knows_oxigraph() {
    let mut found = Vec::new();
    let mut sources = vec![root().join("src")];
    for entry in std::fs::read_dir(root().join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.is_dir() || dir.ends_with("mnemo-rdf") {
            continue;
        }
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        if manifest.lines().any(|l| l.trim_start().starts_with("oxigraph")) {
            found.push(format!("{}/Cargo.toml depends on oxigraph", dir.display()));
        }
        sources.push(dir.join("src"));
    }
    let mut seen = 0;
    for dir in sources {
        let mut files = Vec::new();
        rust_files(&dir, &mut files);
        for file in files {
            seen += 1;
            let text = std::fs::read_to_string(&file).unwrap();
            for (n, line) in text.lines().enumerate() {
                if line.contains("oxigraph::") || line.contains("use oxigraph") {
                    found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(seen > 50, "the check must see the sources ({seen} files)");
    assert!(found.is_empty(), "oxigraph outside mnemo-rdf:\n{}", found.join("\n"));
}
