//! Golden tests: every operation in `queries/` runs against a fresh store loaded from
//! `queries/fixture.jsonl`, and its response must equal the JSON beside it.
//! `UPDATE_EXPECT=1` rewrites the expectations instead.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ostrakon_engine::core::{TimeZone, Timestamp};
use ostrakon_engine::{Store, log::MemStorage};
use ostrakon_graphql::{Access, Limits, ops};

fn queries_dir() -> PathBuf {
    crate::common::project_root().join("queries")
}

/// A store whose clock reads 2030-01-01T00:00:00Z forever (system times then advance by
/// 1 µs per batch), loaded with the fixture.
async fn fixture() -> (Arc<Store>, ostrakon_graphql::OstrakonSchema) {
    let now = Timestamp::parse("clock", "2030-01-01T00:00:00Z", &TimeZone::Utc).unwrap();
    let store = Arc::new(Store::with_storage(Arc::new(MemStorage::new()), Arc::new(move || now)).unwrap());
    let schema = ostrakon_graphql::schema(Arc::clone(&store), Limits::default());
    let fixture = std::fs::read_to_string(queries_dir().join("fixture.jsonl")).unwrap();
    for (n, line) in fixture.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        if let Err(e) = ops::apply_line(&schema, &store, line).await {
            panic!("fixture.jsonl:{}: {e}", n + 1);
        }
    }
    (store, schema)
}

/// The response to the file's one operation (named or not); a file of several named operations (a
/// mutation, then a query that reads what it wrote) runs them in the order written, and
/// its response is an object of their responses by name. `NAME.variables.json`, when
/// there is one, gives the variables.
async fn run(path: &Path) -> String {
    let (_store, schema) = fixture().await;
    let query = std::fs::read_to_string(path).unwrap();
    let variables = match std::fs::read_to_string(path.with_extension("variables.json")) {
        Ok(text) => async_graphql::Variables::from_json(serde_json::from_str(&text).unwrap()),
        Err(_) => async_graphql::Variables::default(),
    };
    let document = async_graphql::parser::parse_query(&query).unwrap();
    let one = match &document.operations {
        async_graphql::parser::types::DocumentOperations::Single(_) => true,
        async_graphql::parser::types::DocumentOperations::Multiple(operations) => operations.len() == 1,
    };
    let mut text = match document.operations {
        _ if one => {
            let request = async_graphql::Request::new(query).variables(variables).data(Access::Local);
            let response = schema.execute(request).await;
            serde_json::to_string_pretty(&response).unwrap()
        }
        async_graphql::parser::types::DocumentOperations::Single(_) => unreachable!("one operation"),
        async_graphql::parser::types::DocumentOperations::Multiple(operations) => {
            let mut named: Vec<_> = operations.iter().map(|(name, op)| (op.pos, name.to_string())).collect();
            named.sort();
            // Written by hand so that each response keeps its fields in the order served.
            let mut parts = Vec::new();
            for (_, name) in named {
                let request = async_graphql::Request::new(query.clone())
                    .operation_name(&name)
                    .variables(variables.clone())
                    .data(Access::Local);
                let response = serde_json::to_string_pretty(&schema.execute(request).await).unwrap();
                parts.push(format!(
                    "  {}: {}",
                    serde_json::to_string(&name).unwrap(),
                    response.replace('\n', "\n  ")
                ));
            }
            format!("{{\n{}\n}}", parts.join(",\n"))
        }
    };
    text.push('\n');
    text
}

#[tokio::test]
async fn every_query_answers_as_written() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(queries_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "graphql"))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "expected the example operations in queries/");
    let bless = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failures = Vec::new();
    for file in &files {
        let actual = run(file).await;
        let expected_path = file.with_extension("json");
        if bless {
            std::fs::write(&expected_path, &actual).unwrap();
            continue;
        }
        match std::fs::read_to_string(&expected_path) {
            Ok(expected) if expected == actual => {}
            Ok(expected) => failures.push(format!(
                "{}: response differs\n--- expected\n{expected}\n--- actual\n{actual}",
                file.display()
            )),
            Err(_) => failures.push(format!("{}: no expectation; run with UPDATE_EXPECT=1", file.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every operation in `queries/` has a name, and no two share one: the names are what a
/// generated client's methods are called.
#[test]
fn every_operation_is_named_once() {
    let mut seen = std::collections::BTreeMap::new();
    for entry in std::fs::read_dir(queries_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "graphql") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let document = async_graphql::parser::parse_query(&text).unwrap();
        // An anonymous operation parses as `Single`, named ones as `Multiple`.
        let names: Vec<String> = match document.operations {
            async_graphql::parser::types::DocumentOperations::Single(_) => vec![String::new()],
            async_graphql::parser::types::DocumentOperations::Multiple(ops) => {
                ops.keys().map(ToString::to_string).collect()
            }
        };
        for name in names {
            assert!(!name.is_empty(), "{}: an operation without a name", path.display());
            if let Some(other) = seen.insert(name.clone(), path.clone()) {
                panic!("{name} names an operation of {} and of {}", other.display(), path.display());
            }
        }
    }
    assert!(seen.len() >= 50, "{seen:?}");
}
