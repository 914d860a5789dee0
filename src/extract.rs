//! `ostrakon extract`: reads a namespace's episodes that the configured extractor has not
//! read, now, as the server's extractor would; with `--dry-run` it prints what it would
//! write and writes nothing.

use std::io::Write;
use std::sync::Arc;

use anyhow::{Context, anyhow};
use ostrakon_engine::Store;
use ostrakon_engine::core::{EpisodeId, Namespace};
use ostrakon_extract::{Extractor, Outcome};

/// What to read and how.
#[derive(clap::Args)]
pub(crate) struct ExtractArgs {
    /// The namespace whose episodes are read.
    pub namespace: String,
    /// The TOML file whose `[extraction]` section names the endpoint and model.
    #[arg(long, value_name = "FILE")]
    pub config: std::path::PathBuf,
    /// Print the facts each episode would give (one JSON line per episode) and write
    /// nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Read at most this many episodes [default: 10 with --dry-run, all otherwise].
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

/// Runs the command on an open store; false when an episode was given up.
pub(crate) fn run(store: Store, args: &ExtractArgs) -> anyhow::Result<bool> {
    let config = ostrakon_server::Config::load(&args.config)?;
    let settings =
        config.extraction.ok_or_else(|| anyhow!("{} has no [extraction] section", args.config.display()))?;
    let ns = Namespace::new("namespace", &args.namespace)?;
    let extractor = Extractor::new(settings).map_err(|e| anyhow!(e))?;
    let store = Arc::new(store);
    let limit = args.limit.unwrap_or(if args.dry_run { 10 } else { usize::MAX });
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().context("runtime")?;
    let stop = tokio_util::sync::CancellationToken::new();
    let mut gave_up = 0usize;
    let mut cursor = EpisodeId(0);
    runtime.block_on(extractor.read_namespace(
        &store,
        &ns,
        &mut cursor,
        ostrakon_extract::Pass { limit, preview: args.dry_run, stop: &stop },
        &mut |episode, outcome| {
            let mut line =
                serde_json::json!({ "episode": episode.id.to_string(), "externalId": episode.external_id });
            match outcome {
                Outcome::Preview(changes) => {
                    let facts: Vec<_> =
                        changes.iter().filter_map(ostrakon_extract::answer::describe).collect();
                    line["facts"] = serde_json::Value::Array(facts);
                }
                Outcome::Written { facts, left_out } => {
                    line["written"] = (*facts).into();
                    line["leftOut"] = (*left_out).into();
                }
                Outcome::Refused(why) => line["refused"] = why.as_str().into(),
                Outcome::AlreadyRead => line["alreadyRead"] = true.into(),
                Outcome::GaveUp(why) => {
                    gave_up += 1;
                    line["gaveUp"] = why.as_str().into();
                }
                Outcome::Stopped => {}
            }
            let _ = writeln!(std::io::stdout(), "{line}");
        },
    ));
    let status = extractor.status().snapshot();
    eprintln!(
        "{} calls; {} episodes read, {} facts written, {} refused, {} given up",
        status.calls, status.episodes_read, status.facts_written, status.refused, status.failed
    );
    Ok(gave_up == 0)
}
