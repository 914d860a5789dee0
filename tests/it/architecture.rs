//! The architecture, checked on the sources.
//!
//! The engine's API boundary: the protocol crates (GraphQL, the server and the RDF
//! projection) reach the store only through its typed methods — no index type, no closure
//! over the index — none of them links the embedding model, and only `ostrakon-rdf` knows
//! oxigraph.
//!
//! The code's rooms: no file of a crate imports a file that imports it back (through any
//! chain), no file holds more than 800 lines of non-test code, and no function more than
//! 150 lines, outside the exceptions listed here with their reason. An import is any path
//! to another module of the same crate: `use crate::a::…`, `crate::a::f(…)` inline,
//! `super::…` (relative to the file's module), `self::x::…` or a bare `x::…` naming a
//! child module. A name the crate root re-exports (`crate::Store`) counts as an import of
//! the module it comes from; the crate root itself, which only declares and re-exports, is
//! not a room. Test modules (from `#[cfg(test)]` on) are not read.

use std::collections::{BTreeMap, BTreeSet};
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
    let forbidden = ["ostrakon_index", "NamespaceIndex", ".inspect(", "read_search(", "with_index("];
    let mut found = Vec::new();
    for krate in ["ostrakon-graphql", "ostrakon-server", "ostrakon-rdf", "ostrakon-mcp", "ostrakon-extract"] {
        let dir = root().join("crates").join(krate);
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        for dep in ["ostrakon-index", "ostrakon-embed", "features = [\"inspect\"]"] {
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
    for krate in [
        "ostrakon-engine",
        "ostrakon-graphql",
        "ostrakon-server",
        "ostrakon-rdf",
        "ostrakon-mcp",
        "ostrakon-extract",
    ] {
        let deps = closure(krate);
        assert!(deps.contains(krate), "{krate}: {deps:?}");
        for heavy in ["candle-core", "tokenizers", "ostrakon-embed"] {
            assert!(!deps.contains(heavy), "{krate} depends on {heavy}");
        }
    }
    // The check sees what it is looking for: the binary does link the model.
    assert!(closure("ostrakon").contains("candle-core"));
}

#[test]
fn only_the_rdf_crate_knows_oxigraph() {
    let mut found = Vec::new();
    let mut sources = vec![root().join("src")];
    for entry in std::fs::read_dir(root().join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.is_dir() || dir.ends_with("ostrakon-rdf") {
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
    assert!(found.is_empty(), "oxigraph outside ostrakon-rdf:\n{}", found.join("\n"));
}

/// Most lines of non-test code a file may hold.
const MAX_FILE_LINES: usize = 800;
/// Most lines a function may span.
const MAX_FN_LINES: usize = 150;

/// Circles allowed, by crate and files, with the reason. A circle found must lie within one.
/// (None: GraphQL's output types that answer each other's fields share their records
/// from a leaf, `records`, instead of importing each other.)
const ALLOWED_CIRCLES: &[(&str, &[&str], &str)] = &[];

/// Files allowed past [`MAX_FILE_LINES`], with the reason.
const LONG_FILES: &[(&str, &str)] = &[];
/// Functions allowed past [`MAX_FN_LINES`] (`file::name`), with the reason.
const LONG_FUNCTIONS: &[(&str, &str)] = &[
    ("src/eval.rs::eval", "the evaluation report, one section after another"),
    ("crates/ostrakon-server/src/config.rs::parse", "one match arm per configuration key"),
    ("crates/ostrakon-server/src/metrics.rs::render", "one block per metric family"),
];

/// Every Rust source of a crate's `src`, with its module path (`a::b`; the root is "").
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            let join = |n: &str| if prefix.is_empty() { n.to_owned() } else { format!("{prefix}::{n}") };
            if path.is_dir() {
                walk(&path, &join(&name), out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let module = match name.as_str() {
                    "lib" | "main" if prefix.is_empty() => String::new(),
                    "mod" => prefix.to_owned(),
                    _ => join(&name),
                };
                out.insert(module, path);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(src, "", &mut out);
    out
}

/// A file's text before its test module.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    match text.find("#[cfg(test)]") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

/// The module paths a file refers to (`crate::…` and `super::…`), as written, with the
/// names after them: `a::b::{c, d}` gives `a::b::c` and `a::b::d`.
fn references(module: &str, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let parent = |m: &str| m.rsplit_once("::").map_or(String::new(), |(p, _)| p.to_owned());
    // Comments and strings could name paths that are not imports; only code lines count.
    let lines: Vec<&str> = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .filter(|l| !l.trim_start().starts_with('*'))
        .collect();
    let text = lines.join("\n");
    let bytes = text.as_bytes();
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(at) = text[from..].find(start) {
            let at = from + at;
            from = at + start.len();
            // A path starts here only after a non-identifier character.
            if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
                continue;
            }
            let mut base = if start == "crate::" { String::new() } else { parent(module) };
            let mut rest = &text[at + start.len()..];
            // super::super::…
            while let Some(r) = rest.strip_prefix("super::") {
                base = parent(&base);
                rest = r;
            }
            let path: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':' || *c == '{' || *c == '*')
                .collect();
            let path = path.trim_end_matches(':').trim_end_matches('{').trim_end_matches("::");
            let full = |p: &str| {
                if base.is_empty() {
                    p.to_owned()
                } else if p.is_empty() {
                    base.clone()
                } else {
                    format!("{base}::{p}")
                }
            };
            if let Some(open) = rest
                .find('{')
                .filter(|&o| rest[..o].chars().all(|c| c.is_alphanumeric() || c == '_' || c == ':'))
            {
                // A group: each name in it, one level deep.
                let close = rest[open..].find('}').map_or(rest.len(), |c| open + c);
                let head = rest[..open].trim_end_matches("::");
                for item in rest[open + 1..close].split(',') {
                    let item =
                        item.split_whitespace().next().unwrap_or("").trim_matches(|c| c == '{' || c == '}');
                    if !item.is_empty() && item != "self" {
                        out.push(full(&format!("{head}::{item}")));
                    } else if item == "self" {
                        out.push(full(head));
                    }
                }
            } else {
                out.push(full(path.trim_end_matches("::*")));
            }
        }
    }
    // `self::x::…` and a bare `x::…` where `x` is a child module of this file (paths are
    // relative to the current module since the 2018 edition).
    for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')) {
        let word = word.strip_prefix("self::").unwrap_or(word);
        if let Some((head, _)) = word.split_once("::")
            && !head.is_empty()
            && word.as_bytes().first().is_some_and(|b| b.is_ascii_lowercase())
            && !matches!(head, "crate" | "super" | "self" | "std" | "core" | "alloc")
        {
            out.push(if module.is_empty() { format!("@{head}") } else { format!("@{module}::{head}") });
        }
    }
    out
}

/// The crate root's re-exports: a name → the module it comes from.
fn reexports(root_text: &str, known: &BTreeMap<String, PathBuf>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let text: String =
        root_text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
    for stmt in text.split(';') {
        let stmt = stmt.trim();
        let Some(rest) = stmt.strip_prefix("pub use ").or_else(|| stmt.strip_prefix("pub(crate) use "))
        else {
            continue;
        };
        let rest = rest.trim_start_matches("crate::").trim_start_matches("self::");
        let (head, names) = match rest.split_once('{') {
            Some((head, names)) => (head.trim_end_matches("::").trim(), names.trim_end_matches('}')),
            None => match rest.rsplit_once("::") {
                Some((head, name)) => (head, name),
                None => continue,
            },
        };
        if !known.contains_key(head) {
            continue;
        }
        for name in names.split(',') {
            let name = name.split_whitespace().last().unwrap_or("").trim();
            if !name.is_empty() {
                out.insert(name.to_owned(), head.to_owned());
            }
        }
    }
    out
}

/// The module a referred path lands in: the longest known module prefix, or the module a
/// root re-export comes from.
fn resolve(
    path: &str,
    known: &BTreeMap<String, PathBuf>,
    exported: &BTreeMap<String, String>,
) -> Option<String> {
    if let Some(child) = path.strip_prefix('@') {
        return known.contains_key(child).then(|| child.to_owned());
    }
    let parts: Vec<&str> = path.split("::").filter(|p| !p.is_empty() && *p != "*").collect();
    for n in (1..=parts.len()).rev() {
        let candidate = parts[..n].join("::");
        if known.contains_key(&candidate) {
            return Some(candidate);
        }
    }
    parts.first().and_then(|first| exported.get(*first).cloned())
}

/// The import graph of one crate's files (the root left out).
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    graph_of(src, code)
}

/// [`graph`] with the paths doc links name as edges too: a leaf whose docs link to the
/// file that uses it is a circle to a reader following the links.
fn graph_with_doc_links(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    graph_of(src, |path| {
        let text = code(path);
        let docs: Vec<&str> = text
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("///").or_else(|| l.trim_start().strip_prefix("//!")))
            .collect();
        format!("{text}\n{}", docs.join("\n"))
    })
}

fn graph_of(src: &Path, text: impl Fn(&Path) -> String) -> BTreeMap<String, BTreeSet<String>> {
    let known = modules(src);
    let root_text = known.get("").map(|p| std::fs::read_to_string(p).unwrap()).unwrap_or_default();
    let exported = reexports(&root_text, &known);
    let mut out = BTreeMap::new();
    for (module, path) in known.iter().filter(|(m, _)| !m.is_empty()) {
        let mut to = BTreeSet::new();
        for reference in references(module, &text(path)) {
            if let Some(target) = resolve(&reference, &known, &exported)
                && !target.is_empty()
                && target != *module
            {
                to.insert(target);
            }
        }
        out.insert(module.clone(), to);
    }
    out
}

/// Groups of modules that import each other (strongly connected, more than one).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(m) = todo.pop() {
            for next in graph.get(&m).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> = graph.keys().map(|m| (m, reach(m))).collect();
    let mut groups: Vec<Vec<String>> = Vec::new();
    let mut placed = BTreeSet::new();
    for m in graph.keys() {
        if placed.contains(m) {
            continue;
        }
        let group: Vec<String> = graph
            .keys()
            .filter(|o| *o == m || (reached[m].contains(*o) && reached[*o].contains(m)))
            .cloned()
            .collect();
        if group.len() > 1 {
            placed.extend(group.iter().cloned());
            groups.push(group);
        }
    }
    groups
}

fn crates() -> Vec<(String, PathBuf)> {
    let mut out = vec![("ostrakon".to_owned(), root().join("src"))];
    for entry in std::fs::read_dir(root().join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        if dir.join("src").is_dir() {
            out.push((dir.file_name().unwrap().to_string_lossy().into_owned(), dir.join("src")));
        }
    }
    out.sort();
    out
}

#[test]
fn no_file_imports_a_file_that_imports_it_back() {
    let mut found = Vec::new();
    for (name, src) in crates() {
        let g = graph(&src);
        for group in cycles(&g) {
            let allowed = ALLOWED_CIRCLES
                .iter()
                .any(|(krate, files, _)| *krate == name && group.iter().all(|m| files.contains(&m.as_str())));
            if allowed {
                continue;
            }
            found.push(format!("{name}: {}", group.join(" ↔ ")));
            // The edges inside the circle, so that it can be cut where it is thinnest.
            for from in &group {
                let inside: Vec<&str> =
                    g[from].iter().filter(|t| group.contains(t)).map(String::as_str).collect();
                found.push(format!("    {from} → {}", inside.join(", ")));
            }
        }
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

/// The names a file defines at its top level (functions, constants, types, traits,
/// macros), not those it re-exports.
fn defined(text: &str) -> BTreeSet<String> {
    const KINDS: [&str; 8] = ["fn ", "const ", "static ", "struct ", "enum ", "trait ", "type ", "union "];
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.starts_with(char::is_whitespace) {
            continue;
        }
        let mut rest = line;
        for prefix in ["pub(crate) ", "pub(super) ", "pub ", "async ", "unsafe "] {
            rest = rest.strip_prefix(prefix).unwrap_or(rest);
        }
        let name = |after: &str| -> String {
            after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
        };
        if let Some(kind) = KINDS.iter().find(|k| rest.starts_with(**k)) {
            out.insert(name(&rest[kind.len()..]));
        } else if let Some(after) = rest.strip_prefix("macro_rules! ") {
            out.insert(name(after));
        }
    }
    out.remove("");
    out
}

/// Upward imports of one crate: a file naming a name it takes from a file above it in the
/// module tree (the crate root, or an enclosing `mod.rs`) — defined or only re-exported
/// there — or importing all of one (`use super::*`). `lib.rs` and `mod.rs` should only declare and re-export; what the
/// children share lives in a leaf of its own. As (file, the file above, the name).
fn upward_imports(src: &Path) -> Vec<(String, String, String)> {
    let known = modules(src);
    let definitions: BTreeMap<&String, BTreeSet<String>> =
        known.iter().map(|(m, p)| (m, defined(&code(p)))).collect();
    let mut found = BTreeSet::new();
    for (module, path) in known.iter().filter(|(m, _)| !m.is_empty()) {
        for reference in references(module, &code(path)) {
            if reference.starts_with('@') {
                continue;
            }
            let parts: Vec<&str> = reference.split("::").filter(|p| !p.is_empty() && *p != "*").collect();
            let Some(n) = (0..=parts.len()).rev().find(|&n| known.contains_key(&parts[..n].join("::")))
            else {
                continue;
            };
            let above = parts[..n].join("::");
            let is_above = above.is_empty() || module.starts_with(&format!("{above}::"));
            if !is_above {
                continue;
            }
            let shown = if above.is_empty() { "<root>".to_owned() } else { above.clone() };
            match parts.get(n) {
                None if !above.is_empty() => {
                    found.insert((module.clone(), shown, "*".to_owned()));
                }
                // Defined there, or only re-exported there: either way the file reaches up
                // for it instead of naming the module that defines it.
                Some(name) => {
                    let how = if definitions[&above].contains(*name) { "" } else { " (re-exported)" };
                    found.insert((module.clone(), shown, format!("{name}{how}")));
                }
                None => {}
            }
        }
    }
    found.into_iter().collect()
}

#[test]
fn no_file_imports_from_a_file_above_it() {
    let mut found = Vec::new();
    for (name, src) in crates() {
        for (module, above, what) in upward_imports(&src) {
            found.push(format!("{name}: {module} imports `{what}` from {above}"));
        }
    }
    assert!(
        found.is_empty(),
        "upward imports (move what is shared into a leaf module):\n{}",
        found.join("\n")
    );
}

#[test]
fn files_and_functions_stay_small() {
    let mut found = Vec::new();
    // Exceptions still needed: one that no longer is must be dropped from the list.
    let mut needed = BTreeSet::new();
    for (_, src) in crates() {
        for path in modules(&src).values() {
            let relative = path.strip_prefix(root()).unwrap().display().to_string();
            let text = code(path);
            let lines = text.lines().count();
            if lines > MAX_FILE_LINES {
                if LONG_FILES.iter().any(|(f, _)| *f == relative) {
                    needed.insert(relative.clone());
                } else {
                    found.push(format!(
                        "{relative}: {lines} lines of non-test code (at most {MAX_FILE_LINES})"
                    ));
                }
            }
            for (function, length) in functions(&text) {
                let key = format!("{relative}::{function}");
                if length > MAX_FN_LINES {
                    if LONG_FUNCTIONS.iter().any(|(f, _)| *f == key) {
                        needed.insert(key);
                    } else {
                        found.push(format!("{key}: {length} lines (at most {MAX_FN_LINES})"));
                    }
                }
            }
        }
    }
    for (listed, _) in LONG_FILES.iter().chain(LONG_FUNCTIONS) {
        if !needed.contains(*listed) {
            found.push(format!("{listed}: listed as an exception, but within the limit now"));
        }
    }
    assert!(found.is_empty(), "too large:\n{}", found.join("\n"));
}

/// Each function of a file's code with the lines it spans, from its `fn` to its closing
/// brace (braces in strings and chars are rare enough in this code to count as code).
fn functions(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let Some(at) = trimmed.find("fn ") else { continue };
        let before = &trimmed[..at];
        let is_decl = before.is_empty()
            || before.split_whitespace().all(|w| {
                matches!(w, "pub" | "pub(crate)" | "pub(super)" | "async" | "const" | "unsafe" | "extern")
            });
        if !is_decl || trimmed.starts_with("//") {
            continue;
        }
        let name: String =
            trimmed[at + 3..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if name.is_empty() {
            continue;
        }
        // From the first `{` on this or a later line to its match.
        let mut depth = 0i64;
        let mut opened = false;
        let mut end = i;
        'scan: for (j, l) in lines.iter().enumerate().skip(i) {
            for c in l.split("//").next().unwrap_or("").chars() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    ';' if !opened => break 'scan,
                    _ => {}
                }
                if opened && depth == 0 {
                    end = j;
                    break 'scan;
                }
            }
        }
        if opened {
            out.push((name, end - i + 1));
        }
    }
    out
}

#[test]
fn the_checks_see_what_they_check() {
    // A circle through a re-export and a `super::*`, and a long function, are found.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir(src.join("root")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod root;\npub use a::Thing;\n").unwrap();
    std::fs::write(src.join("a.rs"), "use crate::root::page;\npub struct Thing;\n").unwrap();
    std::fs::write(src.join("root/mod.rs"), "mod graph;\npub fn page() {}\n").unwrap();
    std::fs::write(src.join("root/graph.rs"), "use super::*;\nfn f() -> crate::Thing { crate::Thing }\n")
        .unwrap();
    let g = graph(src);
    assert_eq!(g["root::graph"], BTreeSet::from(["a".to_owned(), "root".to_owned()]));
    assert_eq!(g["a"], BTreeSet::from(["root".to_owned()]));
    assert!(cycles(&g).is_empty());
    std::fs::write(
        src.join("root/mod.rs"),
        "mod graph;\nuse graph::x;\nuse crate::a::Thing;\npub fn page() {}\n",
    )
    .unwrap();
    // `use graph::x` names the child module: mod.rs and graph.rs now import each other too.
    assert_eq!(cycles(&graph(src)), vec![vec!["a".to_owned(), "root".to_owned(), "root::graph".to_owned()]]);
    // `root::graph` takes `Thing` through the root, which only re-exports it, and imports
    // all of `root/mod.rs`.
    assert_eq!(
        upward_imports(src),
        vec![
            ("root::graph".to_owned(), "<root>".to_owned(), "Thing (re-exported)".to_owned()),
            ("root::graph".to_owned(), "root".to_owned(), "*".to_owned()),
        ]
    );
    std::fs::write(src.join("root/graph.rs"), "fn f() { super::page(); crate::a::Thing; }\n").unwrap();
    assert_eq!(upward_imports(src), vec![("root::graph".to_owned(), "root".to_owned(), "page".to_owned())]);
    std::fs::write(src.join("lib.rs"), "mod a;\nmod root;\npub const MAX: u32 = 1;\n").unwrap();
    std::fs::write(src.join("a.rs"), "fn f() -> u32 { crate::MAX }\n").unwrap();
    assert!(upward_imports(src).contains(&("a".to_owned(), "<root>".to_owned(), "MAX".to_owned())));
    let long = format!("fn long() {{\n{}}}\nfn short() {{}}\n", "    let x = 1;\n".repeat(200));
    assert_eq!(functions(&long), vec![("long".to_owned(), 202), ("short".to_owned(), 1)]);
}

/// The most names the engine's crate root may offer: the entry points (a store, a reader,
/// what a write and a read take and give) and a module per concept for the rest.
const MAX_ENGINE_NAMES: usize = 40;

/// The fewest examples (doctests) the engine's documentation holds.
const MIN_ENGINE_EXAMPLES: usize = 20;

/// The names a crate root offers: each item its `pub use` lines re-export, each module
/// it declares `pub`.
fn root_names(lib: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut depth = 0usize;
    let mut statement = String::new();
    for line in lib.lines().map(|l| l.split("//").next().unwrap_or("")) {
        // Only the root's own statements: not those inside an inline module.
        if depth == 0 {
            statement.push_str(line);
            statement.push(' ');
        }
        depth += line.matches('{').count();
        depth -= line.matches('}').count();
        if depth == 0 && (line.trim_end().ends_with(';') || line.trim_end().ends_with('}')) {
            let s = std::mem::take(&mut statement);
            let s = s.trim();
            if let Some(rest) = s.strip_prefix("pub use ") {
                let rest = rest.trim_end_matches(';');
                match rest.split_once('{') {
                    Some((_, group)) => names.extend(
                        group
                            .trim_end_matches('}')
                            .split(',')
                            .map(|n| n.split_whitespace().last().unwrap_or("").to_owned())
                            .filter(|n| !n.is_empty()),
                    ),
                    None => names.push(
                        rest.split_whitespace().last().unwrap().rsplit("::").next().unwrap().to_owned(),
                    ),
                }
            } else if let Some(rest) = s.strip_prefix("pub mod ") {
                names.push(rest.split(|c: char| !c.is_alphanumeric() && c != '_').next().unwrap().to_owned());
            }
        }
    }
    names
}

#[test]
fn the_engine_offers_few_names_each_documented() {
    let lib = std::fs::read_to_string(root().join("crates/ostrakon-engine/src/lib.rs")).unwrap();
    let names = root_names(&lib);
    assert!(names.contains(&"Store".to_owned()) && names.contains(&"views".to_owned()), "{names:?}");
    assert!(
        names.len() <= MAX_ENGINE_NAMES,
        "the engine's root offers {} names (at most {MAX_ENGINE_NAMES}): {names:?}",
        names.len()
    );
    // Every module it declares public says what it holds (re-exported items carry their
    // own docs, which `missing_docs` checks).
    let mut undocumented = Vec::new();
    let lines: Vec<&str> = lib.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = line.strip_prefix("pub mod ") else { continue };
        let documented = match name.strip_suffix(';') {
            // A module in a file of its own opens with its `//!` comment.
            Some(file) => [format!("{file}.rs"), format!("{file}/mod.rs")].iter().any(|f| {
                std::fs::read_to_string(root().join("crates/ostrakon-engine/src").join(f))
                    .is_ok_and(|text| text.starts_with("//!"))
            }),
            None => i > 0 && lines[i - 1].starts_with("///"),
        };
        if !documented {
            undocumented.push(line.to_string());
        }
    }
    assert!(undocumented.is_empty(), "public modules without a doc comment: {undocumented:?}");
    // Its entry points show how they are used, in examples the doctests run.
    let mut examples = 0;
    for path in modules(&root().join("crates/ostrakon-engine/src")).values() {
        let text = std::fs::read_to_string(path).unwrap();
        examples += text.lines().filter(|l| l.trim() == "/// ```").count() / 2;
    }
    assert!(examples >= MIN_ENGINE_EXAMPLES, "{examples} examples in the engine's docs");
    let fixture =
        "pub use a::{B, C as D};\npub mod e;\npub mod f {\n    pub use g::H;\n}\nmod i;\npub use j::K;\n";
    assert_eq!(root_names(fixture), ["B", "D", "e", "f", "K"]);
}

#[test]
fn long_parameter_lists_are_structs_except_for_graphql_resolvers() {
    // A function with many parameters takes a struct of them (a query, a pass, a
    // dataset); only a GraphQL resolver, whose parameters are its field's arguments,
    // may have more, and says so.
    let mut found = Vec::new();
    for (_, src) in crates() {
        for path in modules(&src).values() {
            let text = std::fs::read_to_string(path).unwrap();
            let relative = path.strip_prefix(root()).unwrap().display().to_string();
            for (i, line) in text.lines().enumerate() {
                if !line.contains("clippy::too_many_arguments") {
                    continue;
                }
                let resolver = relative.starts_with("crates/ostrakon-graphql/") && line.contains("reason = ");
                if !resolver {
                    found.push(format!("{relative}:{}: {}", i + 1, line.trim()));
                }
            }
        }
    }
    assert!(found.is_empty(), "too many parameters allowed:\n{}", found.join("\n"));
}

#[test]
fn no_doc_link_makes_a_circle() {
    let mut found = Vec::new();
    for (name, src) in crates() {
        for group in cycles(&graph_with_doc_links(&src)) {
            found.push(format!("{name}: {}", group.join(" ↔ ")));
        }
    }
    assert!(found.is_empty(), "files whose imports and doc links go in a circle:\n{}", found.join("\n"));
    // A doc link is seen: a leaf linking to the file that imports it is a circle.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lib.rs"), "mod a;\nmod b;\n").unwrap();
    std::fs::write(dir.path().join("a.rs"), "use crate::b::B;\npub struct A(B);\n").unwrap();
    std::fs::write(dir.path().join("b.rs"), "/// Used by [`A`](crate::a::A).\npub struct B;\n").unwrap();
    assert!(cycles(&graph(dir.path())).is_empty());
    assert_eq!(cycles(&graph_with_doc_links(dir.path())).len(), 1);
}

/// The error type of each public function of the engine that returns a `Result`, as
/// `(function, file, type)`.
fn engine_error_types() -> Vec<(String, String, String)> {
    let src = root().join("crates/ostrakon-engine/src");
    let mut found = Vec::new();
    for path in modules(&src).values() {
        let text = std::fs::read_to_string(path).unwrap();
        let file = path.strip_prefix(&src).unwrap().display().to_string();
        for (at, _) in text.match_indices("pub fn ") {
            let rest = &text[at + "pub fn ".len()..];
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            let end = rest.find(['{', ';']).unwrap_or(rest.len());
            let Some(result) = rest[..end].split("-> Result<").nth(1) else { continue };
            let result = result.trim_end().trim_end_matches('>');
            let error = result.rsplit(',').next().unwrap().trim();
            let error = error.rsplit("::").next().unwrap().to_owned();
            found.push((name, file.clone(), error));
        }
    }
    found
}

#[test]
fn each_operation_has_its_error_type_and_every_error_a_code() {
    const TYPES: [&str; 4] = ["OpenError", "ReadError", "WriteError", "StorageError"];
    let found = engine_error_types();
    assert!(found.len() > 60, "the signatures are read: {found:?}");
    let of = |name: &str| -> BTreeSet<&str> {
        found.iter().filter(|(n, ..)| n == name).map(|(.., e)| e.as_str()).collect()
    };
    // Only the engine's four types; a health probe's `Err` is its reason, for a report.
    let others: Vec<_> =
        found.iter().filter(|(n, _, e)| !TYPES.contains(&e.as_str()) && n != "log_health").collect();
    assert!(others.is_empty(), "public functions returning another error type: {others:?}");
    // Each operation says only what it can meet.
    for open in ["open", "open_with", "with_storage", "with_backend", "restore"] {
        assert_eq!(of(open), BTreeSet::from(["OpenError"]), "{open}");
    }
    for write in ["append", "submit", "finish", "replay", "erase", "apply_retention", "consolidate"] {
        assert_eq!(of(write), BTreeSet::from(["WriteError"]), "{write}");
    }
    let reads: Vec<_> = found.iter().filter(|(_, file, _)| file == "read/reader.rs").collect();
    assert!(reads.len() >= 20, "{reads:?}");
    assert!(reads.iter().all(|(.., e)| e == "ReadError"), "a reader's reads fail with ReadError: {reads:?}");
    // No engine error type is open-ended inside the workspace...
    let errors = root().join("crates/ostrakon-engine/src/error");
    for file in std::fs::read_dir(&errors).unwrap() {
        let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
        assert!(!text.contains("non_exhaustive"), "an engine error is #[non_exhaustive]");
    }
    // ...and GraphQL gives each its codes in one place, naming every variant.
    let graphql = std::fs::read_to_string(root().join("crates/ostrakon-graphql/src/error.rs")).unwrap();
    for ty in TYPES.iter().chain(&["CoreError"]) {
        let head = format!("impl EngineFailure for {ty} {{");
        let start = graphql.find(&head).unwrap_or_else(|| panic!("no codes for {ty}"));
        let body = &graphql[start..];
        let body = &body[..body.find("\n}\n").unwrap()];
        assert!(!body.contains("_ =>"), "the codes of {ty} end in a catch-all:\n{body}");
    }
    // The reading of signatures: a multi-line one, a path, a function with no `Result`.
    let sample = "pub fn a(\n    x: u8,\n) -> Result<Answer<Vec<u8>>, crate::error::read::ReadError> {\n}\npub fn b() -> u8 {\n";
    let rest = &sample["pub fn ".len()..];
    let result = rest[..rest.find('{').unwrap()].split("-> Result<").nth(1).unwrap();
    let error = result.trim_end().trim_end_matches('>').rsplit(',').next().unwrap().trim();
    assert_eq!(error.rsplit("::").next(), Some("ReadError"));
}

#[test]
fn every_read_at_a_point_is_a_method_of_the_reader() {
    // A public function taking a read point either pins one (`at`, `pin`, `basis`) or
    // writes after a read it records (`remember`); every read at a point is the
    // reader's, which carries namespace and point.
    let src = root().join("crates/ostrakon-engine/src");
    let mut positional = BTreeSet::new();
    for path in modules(&src).values() {
        let text = std::fs::read_to_string(path).unwrap();
        for (at, _) in text.match_indices("pub fn ") {
            let rest = &text[at + "pub fn ".len()..];
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            let params = &rest[..rest.find("->").or(rest.find('{')).unwrap_or(rest.len())];
            if params.contains("ReadAt") {
                positional.insert(name);
            }
        }
    }
    assert_eq!(positional, BTreeSet::from(["at", "basis", "pin", "remember"].map(String::from)));
}
