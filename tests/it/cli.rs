//! The `ostrakon` binary: `inspect` replays a data directory and reports what it holds;
//! `import` applies JSONL operations and reports each rejected line; `export` writes logs
//! that re-import into an identical store; `query` runs one operation; `serve` refuses
//! to expose an unprotected store.

use std::path::Path;
use std::process::{Command, Output};

use ostrakon_engine::core::{Interval, Literal, Namespace, Timestamp};
use ostrakon_engine::{Change, EntityRef, NewEntity, NewFact, ObjectRef, Store};

#[test]
fn inspect_reports_every_namespace_and_rejects_bad_arguments() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path()).unwrap();
        let ns = Namespace::new("ns", "alice").unwrap();
        store
            .append(
                &ns,
                vec![
                    Change::DeclareEntity(NewEntity { name: "Alice".into(), ..NewEntity::default() }),
                    Change::AssertFact(NewFact::new(
                        EntityRef::New(0),
                        "age",
                        ObjectRef::Literal(Literal::Integer(30)),
                        Interval::open(Timestamp::EPOCH),
                    )),
                ],
            )
            .unwrap();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_ostrakon"))
        .args(["inspect", "--data"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let row: Vec<&str> = text.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(&row[..5], ["alice", "1", "0", "1", "1"]);

    let out = Command::new(env!("CARGO_BIN_EXE_ostrakon")).args(["inspect", "--bogus"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--bogus"));
    let missing = dir.path().join("nope");
    let out = Command::new(env!("CARGO_BIN_EXE_ostrakon"))
        .args(["inspect", "--data"])
        .arg(&missing)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no data directory"));
}

fn ostrakon(args: &[&str], data: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ostrakon")).args(args).arg("--data").arg(data).output().unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

const LINES: &str = r#"{"namespace":"alice","op":"definePredicate","name":"livesIn","cardinality":"ONE","valueType":"ENTITY"}
{"namespace":"alice","op":"configureNamespace","timeZone":"Europe/Paris"}
{"namespace":"alice","op":"recordEpisode","episode":{"text":"I moved to Paris","occurredAt":"2010-03-08","externalId":"m1"},"entities":[{"name":"Alice","kind":"person"}],"facts":[{"subject":{"name":"Alice"},"predicate":"livesIn","object":{"entity":{"name":"Paris"}}}]}

{"namespace":"alice","op":"assertFacts","facts":[{"subject":{"name":"Alice"},"predicate":"livesIn","object":{"entity":{"name":"London"}},"validFrom":"someday"}]}
{"namespace":"alice","op":"assertFacts","facts":[{"subject":{"name":"Alice"},"predicate":"livesIn","object":{"entity":{"name":"London"}},"validFrom":"2015"}]}
{"namespace":"alice","op":"endFact","fact":"2","validTo":"2020-01-01"}
{"namespace":"bob","op":"assertFacts","facts":[{"subject":{"name":"Bob"},"predicate":"age","object":{"integer":40},"validFrom":"2020","validTo":"2010"}]}
{"namespace":"bob","op":"assertFacts","facts":[{"subject":{"name":"Bob"},"predicate":"age","object":{"integer":40}}]}
{"namespace":"bob","op":"retractFact","fact":"1","reason":"wrong"}
{"namespace":"bob","op":"launch","what":"rockets"}
{"namespace":"bob","op":"retractFact","fact":"1","colour":"red"}
not json
"#;

#[test]
fn import_reports_accepted_and_rejected_lines() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ops.jsonl");
    std::fs::write(&file, LINES).unwrap();
    let data = dir.path().join("data");
    let out = ostrakon(&["import", file.to_str().unwrap()], &data);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "a rejected line fails the run: {text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "accepted 7, rejected 5", "{text}");
    let expect = [
        ("line 5: INVALID_TIME: ", "facts[0].validFrom"),
        ("line 8: INVALID_INTERVAL: ", "facts[0]"),
        ("line 11: BAD_REQUEST: ", "launch"),
        ("line 12: BAD_REQUEST: ", "colour"),
        ("line 13: BAD_REQUEST: ", "JSON"),
    ];
    assert_eq!(lines.len(), 1 + expect.len(), "{text}");
    for (line, (prefix, detail)) in lines[1..].iter().zip(expect) {
        assert!(
            line.starts_with(prefix) && line.contains(detail),
            "{line:?} should start with {prefix:?} and name {detail:?}"
        );
    }
    // The accepted lines are in the store; the rejected ones left nothing.
    let out = ostrakon(&["inspect"], &data);
    let text = stdout(&out);
    let row = |ns: &str| -> Vec<String> {
        text.lines().find(|l| l.starts_with(ns)).unwrap().split_whitespace().map(str::to_owned).collect()
    };
    assert_eq!(&row("alice")[1..5], ["5", "1", "3", "2"], "{text}");
    assert_eq!(&row("bob")[1..5], ["2", "0", "1", "1"], "{text}");

    // A fully accepted import exits 0.
    let good = dir.path().join("good.jsonl");
    std::fs::write(&good, LINES.lines().take(3).collect::<Vec<_>>().join("\n")).unwrap();
    let out = ostrakon(&["import", good.to_str().unwrap()], &dir.path().join("fresh"));
    assert!(out.status.success(), "{}", stdout(&out));
    assert_eq!(stdout(&out), "accepted 3, rejected 0\n");
}

/// Export lines without their system time, which a re-import assigns anew.
pub(crate) fn without_times(export: &str) -> Vec<serde_json::Value> {
    export
        .lines()
        .map(|line| {
            let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(value["op"], "replay");
            assert!(value.as_object_mut().unwrap().remove("systemTime").unwrap().is_string());
            value
        })
        .collect()
}

#[test]
fn export_reimports_into_an_identical_store() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = crate::common::project_root().join("queries/fixture.jsonl");
    let first = dir.path().join("first");
    let out = ostrakon(&["import", fixture.to_str().unwrap()], &first);
    assert!(out.status.success(), "{}", stdout(&out));

    let exported = dir.path().join("export.jsonl");
    let out = ostrakon(&["export", "--out", exported.to_str().unwrap()], &first);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let export = std::fs::read_to_string(&exported).unwrap();
    assert!(export.lines().count() >= 10);

    let second = dir.path().join("second");
    let out = ostrakon(&["import", exported.to_str().unwrap()], &second);
    assert!(out.status.success(), "{}", stdout(&out));
    assert_eq!(
        stdout(&out).lines().next().unwrap(),
        format!("accepted {}, rejected 0", export.lines().count())
    );
    let again = ostrakon(&["export"], &second);
    assert!(again.status.success());
    assert_eq!(without_times(&stdout(&again)), without_times(&export));

    // One namespace only; replaying into a store that already has it is refused.
    let out = ostrakon(&["export", "--namespace", "other"], &first);
    let other = stdout(&out);
    assert!(
        other.lines().count() >= 1 && other.lines().all(|l| l.contains(r#""namespace":"other""#)),
        "{other}"
    );
    let out = ostrakon(&["export", "--namespace", "nobody"], &first);
    assert!(!out.status.success());
    let out = ostrakon(&["import", exported.to_str().unwrap()], &second);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).starts_with("accepted 0,"), "{}", stdout(&out));
}

#[test]
fn query_runs_one_operation_against_a_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ops.jsonl");
    std::fs::write(&file, LINES.lines().take(3).collect::<Vec<_>>().join("\n")).unwrap();
    let data = dir.path().join("data");
    assert!(ostrakon(&["import", file.to_str().unwrap()], &data).status.success());

    let out = ostrakon(
        &[
            "query",
            "query($n: String!) { facts(namespace: \"alice\", subject: {name: $n}, validAt: \"2012\") { edges { node { predicate object { entity { name } } } } } }",
            "--variables",
            r#"{"n": "alice"}"#,
        ],
        &data,
    );
    assert!(out.status.success(), "{}{}", stdout(&out), String::from_utf8_lossy(&out.stderr));
    let body: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(body["data"]["facts"]["edges"][0]["node"]["object"]["entity"]["name"], "Paris", "{body}");

    let out = ostrakon(
        &["query", "{ snapshot(namespace: \"alice\", validAt: \"soon\") { edges { cursor } } }"],
        &data,
    );
    assert_eq!(out.status.code(), Some(1));
    let body: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(body["errors"][0]["extensions"]["code"], "INVALID_TIME", "{body}");

    // A query may write: like `import`, it makes a new data directory.
    let fresh = dir.path().join("fresh");
    let out = ostrakon(&["query", "{ __typename }"], &fresh);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(fresh.is_dir());
    let out = ostrakon(&["query", "{ __typename }", "--variables", "[1]"], &data);
    assert!(String::from_utf8_lossy(&out.stderr).contains("JSON object"));
}

#[test]
fn serve_refuses_an_unprotected_public_address_and_a_bad_config() {
    let dir = tempfile::tempdir().unwrap();
    let out = ostrakon(&["serve", "--listen", "0.0.0.0:0"], dir.path());
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("refusing to listen on 0.0.0.0:0 without access tokens")
    );

    let config = dir.path().join("ostrakon.toml");
    std::fs::write(&config, "[[tokens]]\nname = \"a\"\ntoken = \"short\"\nnamespaces = { a = \"read\" }\n")
        .unwrap();
    let out = ostrakon(&["serve", "--listen", "0.0.0.0:0", "--config", config.to_str().unwrap()], dir.path());
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ostrakon.toml") && stderr.contains("tokens[0].token"), "{stderr}");
}

#[test]
fn import_wait_indexes_and_eval_reports_each_question() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let episodes = dir.path().join("episodes.jsonl");
    let turns = [
        ("D1:1", "Caroline: I went to a support group yesterday."),
        ("D1:2", "Melanie: That sounds powerful! How was it?"),
        ("D1:3", "Caroline: Everyone was kind. I want to study counseling."),
        ("D1:4", "Melanie: I painted a sunrise by the lake last weekend."),
    ];
    let lines: Vec<String> = turns
        .iter()
        .map(|(id, text)| {
            serde_json::json!({"namespace": "chat", "op": "recordEpisode", "episode": {
                "text": text, "occurredAt": "2023-05-08T13:56:00Z", "thread": "session 1", "externalId": id}})
            .to_string()
        })
        .collect();
    std::fs::write(&episodes, lines.join("\n")).unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_ostrakon"))
            .args(args)
            .arg("--data")
            .arg(&data)
            .env("OSTRAKON_EMBEDDER", "off")
            .output()
            .unwrap()
    };
    let out = run(&["import", episodes.to_str().unwrap(), "--wait"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = stdout(&out);
    assert!(text.starts_with("accepted 4, rejected 0\nindexed 1 namespaces in "), "{text}");
    let questions = dir.path().join("q.jsonl");
    std::fs::write(
        &questions,
        [
            r#"{"namespace":"chat","question":"When did Caroline go to the support group?","gold":["D1:1"],"tags":["temporal"]}"#,
            r#"{"namespace":"chat","question":"What did Melanie paint on 6 May 2023?","gold":["D1:4"],"tags":["temporal"]}"#,
            r#"{"namespace":"chat","question":"What does Caroline want to study?","gold":["D1:3","D9:9"],"tags":["single-hop"]}"#,
            r#"{"namespace":"nowhere","question":"Anything?","gold":["D1:1"],"tags":["temporal"]}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let dump = dir.path().join("ranked.jsonl");
    let out = run(&["eval", questions.to_str().unwrap(), "--k", "3", "--dump", dump.to_str().unwrap()]);
    let (text, err) = (stdout(&out), String::from_utf8_lossy(&out.stderr).into_owned());
    // The lines that cannot be evaluated are reported; the others are scored.
    assert_eq!(out.status.code(), Some(1), "{text}{err}");
    assert!(
        err.contains("no namespace \"nowhere\"") && err.contains("no episode with external id \"D9:9\""),
        "{err}"
    );
    let head: Vec<&str> = text.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(head, ["n", "R@1", "R@3", "hit@1", "hit@3", "all@3", "MRR"], "{text}");
    let all: Vec<&str> = text.lines().find(|l| l.starts_with("all ")).unwrap().split_whitespace().collect();
    assert_eq!(all[1], "3", "{text}");
    let dumped: Vec<serde_json::Value> =
        std::fs::read_to_string(&dump).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(dumped.len(), 3);
    assert!(dumped.iter().all(|d| d["ranked"].as_array().unwrap().len() <= 3));
    // The day the question names is the day "last weekend" spoke of: found first.
    assert_eq!(dumped[1]["ranked"][0], "D1:4", "{dumped:?}");
    // Each evidence episode found, with its rank in the answer and in the lists that found it.
    let evidence = &dumped[1]["evidence"][0];
    assert_eq!(
        (&evidence["id"], &evidence["rank"]),
        (&serde_json::json!("D1:4"), &serde_json::json!(1)),
        "{dumped:?}"
    );
    assert!(evidence["lists"]["Time"].as_u64().is_some_and(|r| r >= 1), "{dumped:?}");
    // Only one tag, and without a list.
    let out =
        run(&["eval", questions.to_str().unwrap(), "--filter", "single-hop", "--without", "time,speaker"]);
    let text = stdout(&out);
    assert!(
        text.lines().any(|l| l.starts_with("all ") && l.split_whitespace().nth(1) == Some("1")),
        "{text}"
    );
    let out = run(&["eval", questions.to_str().unwrap(), "--without", "bogus"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no search component \"bogus\""));
    // An embedder that is not one of those built in is refused, saying which are.
    let out = Command::new(env!("CARGO_BIN_EXE_ostrakon"))
        .args(["eval", questions.to_str().unwrap(), "--data"])
        .arg(&data)
        .env("OSTRAKON_EMBEDDER", "bert-large")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("OSTRAKON_EMBEDDER=\"bert-large\": expected e5 (the default), minilm or off"),
        "{err}"
    );
    // Another time boost is taken; one past 1 is refused before anything runs.
    let out = run(&["eval", questions.to_str().unwrap(), "--time-boost", "0.4", "--filter", "single-hop"]);
    assert!(stdout(&out).lines().any(|l| l.starts_with("all ")), "{}", stdout(&out));
    let out = run(&["eval", questions.to_str().unwrap(), "--time-boost", "1.5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"1.5\" is not a number from 0 to 1"));
}

/// Lines for [`pipelined_import_matches_one_line_at_a_time`]: runs of `assertFacts` by
/// name (which queue behind each other), names first given in one line and used in the
/// next, slots written by several lines in a row, lines that must wait for the ones
/// before (a `supersedes`, an entity cited by id, other ops) and rejected lines among
/// them.
fn pipeline_lines() -> Vec<String> {
    let mut seed = 0x9e37_79b9_u64;
    let mut next = |n: u64| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    let mut lines = vec![
        r#"{"namespace":"p","op":"definePredicate","name":"livesIn","cardinality":"ONE","valueType":"ENTITY"}"#
            .to_owned(),
        r#"{"namespace":"p","op":"definePredicate","name":"knows","cardinality":"MANY","valueType":"ENTITY"}"#
            .to_owned(),
    ];
    for i in 0..80 {
        let ns = if next(4) == 0 { "q" } else { "p" };
        let who = format!("Person {}", next(12));
        let line = match next(10) {
            0 => format!(
                r#"{{"namespace":"{ns}","op":"assertFacts","facts":[{{"subject":{{"name":"{who}"}},"predicate":"livesIn","object":{{"entity":{{"name":"City {}"}}}},"validFrom":"20{:02}","supersedes":"{}"}}]}}"#,
                next(5),
                10 + next(10),
                1 + next(20)
            ),
            1 => format!(
                r#"{{"namespace":"{ns}","op":"assertFacts","facts":[{{"subject":{{"id":"{}"}},"predicate":"age","object":{{"integer":{}}},"validFrom":"2011"}}]}}"#,
                1 + next(15),
                next(90)
            ),
            2 => format!(
                r#"{{"namespace":"{ns}","op":"assertFacts","facts":[{{"subject":{{"name":"{who}"}},"predicate":"age","object":{{"integer":{}}},"validFrom":"20{:02}","validTo":"20{:02}"}}]}}"#,
                next(90),
                10 + next(10),
                10 + next(10)
            ),
            3 => format!(
                r#"{{"namespace":"{ns}","op":"retractFact","fact":"{}","reason":"line {i}"}}"#,
                1 + next(30)
            ),
            4 => format!(
                r#"{{"namespace":"{ns}","op":"assertFacts","facts":[{{"subject":{{"name":"{who}"}},"predicate":"age","object":{{"text":"old"}},"validFrom":"2012"}}]}}"#
            ),
            _ => {
                let facts: Vec<String> = (0..1 + next(4))
                    .map(|_| {
                        let (predicate, object) = if next(2) == 0 {
                            ("livesIn", format!("City {}", next(5)))
                        } else {
                            ("knows", format!("Person {}", next(12)))
                        };
                        format!(
                            r#"{{"subject":{{"name":"{who}"}},"predicate":"{predicate}","object":{{"entity":{{"name":"{object}"}}}},"validFrom":"20{:02}-0{}-01"}}"#,
                            10 + next(10),
                            1 + next(9)
                        )
                    })
                    .collect();
                format!(r#"{{"namespace":"{ns}","op":"assertFacts","facts":[{}]}}"#, facts.join(","))
            }
        };
        lines.push(line);
    }
    lines
}

#[test]
fn pipelined_import_matches_one_line_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let lines = pipeline_lines();
    let file = dir.path().join("all.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    let whole = dir.path().join("whole");
    let out = ostrakon(&["import", file.to_str().unwrap()], &whole);
    let report = stdout(&out);

    // The same lines, each imported by its own run: nothing is in flight behind another.
    let single = dir.path().join("single");
    let (mut accepted, mut rejected) = (0, Vec::new());
    for (n, line) in lines.iter().enumerate() {
        let one = dir.path().join("one.jsonl");
        std::fs::write(&one, line).unwrap();
        let text = stdout(&ostrakon(&["import", one.to_str().unwrap()], &single));
        let mut rows = text.lines();
        match rows.next().unwrap() {
            "accepted 1, rejected 0" => accepted += 1,
            "accepted 0, rejected 1" => {
                rejected.push(rows.next().unwrap().replacen("line 1:", &format!("line {}:", n + 1), 1))
            }
            other => panic!("{other}"),
        }
    }
    assert!(accepted > 40 && rejected.len() > 5, "the lines should mix: {accepted} accepted, {rejected:?}");
    let mut expect = format!("accepted {accepted}, rejected {}\n", rejected.len());
    for line in &rejected {
        expect.push_str(line);
        expect.push('\n');
    }
    assert_eq!(report, expect);
    let export = |data: &Path| without_times(&stdout(&ostrakon(&["export"], data)));
    let (whole, single) = (export(&whole), export(&single));
    assert_eq!(whole.len(), single.len());
    for (a, b) in whole.iter().zip(&single) {
        assert_eq!(a, b);
    }
}

#[test]
fn an_export_at_a_batch_number_across_namespaces_is_refused_before_it_writes() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    for ns in ["a", "b"] {
        let write = format!(
            r#"mutation {{ recordEpisode(namespace: "{ns}", episode: {{ text: "Ada wrote" }}, entities: [{{ name: "Ada" }}]) {{ seq }} }}"#
        );
        let out = Command::new(env!("CARGO_BIN_EXE_ostrakon"))
            .args(["query", &write])
            .arg("--data")
            .arg(&data)
            .env("OSTRAKON_EMBEDDER", "off")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let file = dir.path().join("out.nq");
    let out = ostrakon(
        &["export", "--format", "nquads", "--known-at-seq", "1", "--out", file.to_str().unwrap()],
        &data,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--namespace") && err.contains("2 namespaces"), "{err}");
    assert!(!file.exists(), "a file was written");
    // With --namespace it exports that namespace at that batch.
    let out = ostrakon(
        &[
            "export",
            "--format",
            "nquads",
            "--known-at-seq",
            "1",
            "--namespace",
            "b",
            "--out",
            file.to_str().unwrap(),
        ],
        &data,
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::read_to_string(&file).unwrap().contains("urn:ostrakon:b:graph"));
}
