//! `ostrakon erase`: an operator erases records from a stopped store, or drops a namespace.
//! The content leaves the log, checkpoints, indexes and caches; a tombstone and an audit
//! record stay. A running server erases through its `eraseEntity`, `eraseEpisodes` and
//! `eraseFacts` mutations, with a token that has the `erase` right.

use anyhow::bail;
use ostrakon_core::{EntityId, EpisodeId, FactId, Namespace};
use ostrakon_engine::{EraseRequest, EraseTarget};

/// What to erase, and why.
#[derive(clap::Args)]
pub(crate) struct EraseArgs {
    /// The namespace.
    #[arg(long)]
    namespace: String,
    /// Erase this entity: its names and aliases, every fact whose subject or object it
    /// is, every episode that mentions it, every intention triggered by mentions of it.
    #[arg(long, value_name = "ID", conflicts_with_all = ["episode", "fact", "drop"])]
    entity: Option<u64>,
    /// Erase these episodes (repeat the flag for more).
    #[arg(long, value_name = "ID", conflicts_with_all = ["fact", "drop"])]
    episode: Vec<u64>,
    /// Erase these facts, each with every statement of it (repeat the flag for more).
    #[arg(long, value_name = "ID", conflicts_with = "drop")]
    fact: Vec<u64>,
    /// Drop the whole namespace (log, checkpoint, indexes, vectors); give its name again
    /// with `--confirm`.
    #[arg(long)]
    drop: bool,
    /// The namespace's name again, to drop it.
    #[arg(long, value_name = "NAME")]
    confirm: Option<String>,
    /// Why, kept in the log's audit record (never the content).
    #[arg(long)]
    reason: Option<String>,
}

impl EraseArgs {
    fn target(&self) -> anyhow::Result<EraseTarget> {
        Ok(match (self.entity, self.episode.is_empty(), self.fact.is_empty()) {
            (Some(id), true, true) => EraseTarget::Entity(EntityId(id)),
            (None, false, true) => {
                EraseTarget::Episodes(self.episode.iter().copied().map(EpisodeId).collect())
            }
            (None, true, false) => EraseTarget::Facts(self.fact.iter().copied().map(FactId).collect()),
            _ => bail!("give what to erase: --entity ID, --episode ID… or --fact ID… (one kind), or --drop"),
        })
    }
}

/// Runs the command on the store in `data`; prints what it did. The store builds no
/// search index meanwhile (they are derived, and rebuilt when the server next opens the
/// namespace); its embedder is there only for its cache to forget erased texts.
pub(crate) fn run(data: &std::path::Path, args: &EraseArgs) -> anyhow::Result<()> {
    let mut options = ostrakon_engine::StoreOptions { defer_search: true, ..Default::default() };
    options.embedder = crate::open::embedder_source(data, 1)?;
    options.erasure_key = crate::open::erasure_key(data)?;
    let store = crate::cluster::open(data, options)?;
    let store = &store;
    let ns = Namespace::new("namespace", &args.namespace)?;
    if args.drop {
        if args.confirm.as_deref() != Some(args.namespace.as_str()) {
            bail!("to drop namespace {:?}, give --confirm {:?}", args.namespace, args.namespace);
        }
        match store.drop_namespace(&ns)? {
            true => println!("{}: dropped", ns.as_str()),
            false => println!("{}: no such namespace", ns.as_str()),
        }
        return Ok(());
    }
    let request = EraseRequest {
        target: args.target()?,
        reason: args.reason.clone(),
        by: Some("ostrakon erase".into()),
    };
    let erased = store.erase(&ns, request)?;
    println!(
        "{}: erased {} records in batch {} ({} batches rewritten, {} cached vectors dropped)",
        ns.as_str(),
        erased.records.len(),
        erased.seq.0,
        erased.batches_rewritten,
        erased.cache_entries_dropped
    );
    // The whole list is in the log's audit record (`erasures` in GraphQL).
    const LISTED: usize = 100;
    for (record, hash) in erased.records.iter().take(LISTED) {
        println!("  {record} sha256:{hash}");
    }
    if erased.records.len() > LISTED {
        println!("  … and {} more (the `erasures` query lists them all)", erased.records.len() - LISTED);
    }
    Ok(())
}
