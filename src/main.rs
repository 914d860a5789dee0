//! The `mnemo` command: inspect a data directory.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use mnemo_engine::Store;

const USAGE: &str = "usage: mnemo inspect [--data DIR]

  inspect   replay every namespace's log in DIR (default ./mnemo-data) and print
            what it holds: batches, episodes, entities, facts and log size";

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mnemo: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Vec<String>) -> anyhow::Result<()> {
    let mut args = args.into_iter();
    let command = args.next();
    let mut data = PathBuf::from("mnemo-data");
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--data" => data = args.next().context("--data needs a directory")?.into(),
            other => bail!("unknown argument {other:?}\n\n{USAGE}"),
        }
    }
    match command.as_deref() {
        Some("inspect") => inspect(&data),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => bail!("unknown command {other:?}\n\n{USAGE}"),
        None => bail!("no command given\n\n{USAGE}"),
    }
}

fn inspect(data: &std::path::Path) -> anyhow::Result<()> {
    if !data.exists() {
        bail!("no data directory at {}", data.display());
    }
    let store = Store::open(data).with_context(|| format!("opening {}", data.display()))?;
    println!(
        "{:<24} {:>9} {:>9} {:>9} {:>10} {:>12}",
        "namespace", "batches", "episodes", "entities", "facts", "log bytes"
    );
    for ns in store.namespaces() {
        let c = store.counts(&ns);
        println!(
            "{:<24} {:>9} {:>9} {:>9} {:>10} {:>12}",
            ns.as_str(),
            c.batches,
            c.episodes,
            c.entities,
            c.facts,
            store.log_size(&ns)
        );
    }
    Ok(())
}
