//! Where the `ostrakon` command keeps logs: a data directory (the default), or a NATS
//! JetStream cluster given by `--cluster` or the config's `[cluster]`; `ostrakon cluster
//! init`, which lays the cluster out, and `ostrakon cluster handover`, run before a NATS
//! server is restarted.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use anyhow::Context;
use clap::Subcommand;
use ostrakon_engine::{Store, StoreOptions, log::LogBackend, log::system_clock};
use ostrakon_jetstream::{ClusterConfig, JetStreamBackend};
use ostrakon_server::ClusterSettings;

/// The cluster this process works on, once chosen (at most once, at start).
static CLUSTER: OnceLock<ClusterConfig> = OnceLock::new();

/// The cluster settings as the backend takes them.
pub(crate) fn config_of(settings: &ClusterSettings) -> ClusterConfig {
    let defaults = ClusterConfig::default();
    ClusterConfig {
        urls: settings.nats.clone(),
        credentials: settings.credentials.clone(),
        shards: settings.shards.unwrap_or(defaults.shards),
        replicas: settings.replicas.unwrap_or(defaults.replicas),
        expect_shards: settings.shards,
        expect_replicas: settings.replicas,
        ..defaults
    }
}

/// Comma-separated NATS URLs, as `--cluster` takes them.
pub(crate) fn settings_from_flag(urls: &str) -> ClusterSettings {
    ClusterSettings::with_servers(
        urls.split(',').map(|u| u.trim().to_owned()).filter(|u| !u.is_empty()).collect(),
    )
}

/// Works on this cluster from now on.
pub(crate) fn select(settings: &ClusterSettings) {
    let _ = CLUSTER.set(config_of(settings));
}

/// Whether a cluster was chosen.
pub(crate) fn selected() -> bool {
    CLUSTER.get().is_some()
}

/// The store: over the chosen cluster (the data directory keeps only this node's caches),
/// else over the data directory.
pub(crate) fn open(data: &Path, options: StoreOptions) -> anyhow::Result<Store> {
    let Some(config) = CLUSTER.get() else {
        return Store::open_with(data, options).with_context(|| format!("opening {}", data.display()));
    };
    let backend = JetStreamBackend::connect(config)
        .with_context(|| format!("connecting to the cluster at {}", config.urls.join(",")))?;
    let backend: Arc<dyn LogBackend> = Arc::new(backend);
    Ok(Store::with_backend(backend, system_clock(), options)?)
}

/// `ostrakon cluster init`: creates the shard streams and the checkpoint store (or checks
/// them; never weakening them unless `force`), and says what it made or changed.
fn init(settings: &ClusterSettings, force: bool) -> anyhow::Result<()> {
    let config = config_of(settings);
    let (backend, changed) = JetStreamBackend::init(&config, force)
        .with_context(|| format!("initialising the cluster at {}", config.urls.join(",")))?;
    for change in changed {
        println!("ostrakon: changed: {change}");
    }
    println!(
        "ostrakon: cluster ready: {} shard streams MNEMO_LOG_0..{} (R{}), checkpoints in {}; {} namespaces",
        backend.config().shards,
        backend.config().shards.saturating_sub(1),
        config.replicas,
        ostrakon_jetstream::CHECKPOINT_BUCKET,
        backend.list()?.len()
    );
    Ok(())
}

#[derive(Subcommand)]
pub(crate) enum ClusterAction {
    /// Create the shard streams and the checkpoint store (idempotent).
    Init {
        /// NATS server URLs, comma-separated.
        #[arg(long, value_name = "URLS")]
        cluster: String,
        /// Shard streams (fixed once made; 10,000 namespaces share them).
        #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1024))]
        shards: u32,
        /// Copies of each stream: 3 survives the loss of one server.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=5))]
        replicas: u64,
        /// Allow what weakens a live cluster: fewer replicas, or another shard count on a
        /// cluster that holds no namespace yet.
        #[arg(long)]
        force: bool,
    },
    /// Before a NATS server is restarted: hand every stream it leads to the replica that
    /// is most caught up, and wait until it leads none (then put it in lame duck mode).
    Handover {
        /// NATS server URLs, comma-separated.
        #[arg(long, value_name = "URLS")]
        cluster: String,
        /// The server to hand over from, by its `server_name`.
        #[arg(long, value_name = "NAME")]
        server: String,
    },
}

/// Runs a `ostrakon cluster` command.
pub(crate) fn run(action: ClusterAction) -> anyhow::Result<()> {
    match action {
        ClusterAction::Init { cluster: urls, shards, replicas, force } => {
            let settings = ClusterSettings {
                shards: Some(shards),
                replicas: Some(usize::try_from(replicas).unwrap_or(3)),
                ..settings_from_flag(&urls)
            };
            init(&settings, force)
        }
        ClusterAction::Handover { cluster: urls, server } => {
            let config = config_of(&settings_from_flag(&urls));
            let backend = JetStreamBackend::connect(&config)
                .with_context(|| format!("connecting to the cluster at {urls}"))?;
            let moved =
                backend.hand_over(&server).with_context(|| format!("handing {server}'s streams over"))?;
            for line in &moved {
                println!("ostrakon: {line}");
            }
            println!("ostrakon: {server} leads none of Ostrakon's streams ({} handed over)", moved.len());
            Ok(())
        }
    }
}
