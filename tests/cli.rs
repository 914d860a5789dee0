//! The `mnemo` binary: `inspect` replays a data directory and reports what it holds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

use mnemo_engine::core::{Interval, Literal, Namespace, Timestamp};
use mnemo_engine::{Change, EntityRef, NewEntity, NewFact, ObjectRef, Store};

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
    let out = Command::new(env!("CARGO_BIN_EXE_mnemo"))
        .args(["inspect", "--data"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let row: Vec<&str> = text.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(&row[..5], ["alice", "1", "0", "1", "1"]);

    let out = Command::new(env!("CARGO_BIN_EXE_mnemo")).args(["inspect", "--bogus"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown argument \"--bogus\""));
    let missing = dir.path().join("nope");
    let out =
        Command::new(env!("CARGO_BIN_EXE_mnemo")).args(["inspect", "--data"]).arg(&missing).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no data directory"));
}
