//! The `ostrakon` command line as a library: serve the GraphQL API over a data directory,
//! import and export JSONL, export RDF 1.2, run one GraphQL operation, inspect a data
//! directory ([`run_cli`]); and [`Embedded`], the store in this process for the Python
//! package.

use std::fs::File;
use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ostrakon_engine::{Store, StoreOptions};

mod backup;
mod cluster;
mod embedded;
mod erase;
mod eval;
mod export;
mod extract;
mod logs;
mod open;
mod shutdown;

pub use embedded::Embedded;

use export::{ExportFormat, RdfPoint, Reification, export};
use open::{all_cores, open_store};

/// mimalloc rather than the system allocator: the index is millions of small
/// allocations, and with glibc's malloc opening a namespace from its checkpoint took
/// 1.16 s for 505 k facts, a point read spent a tenth of its time in malloc and free.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use logs::LogFormat;
use ostrakon_graphql::{Access, Limits};
use ostrakon_server::{AppState, Config};

/// Where `serve` listens unless told otherwise: loopback only.
const DEFAULT_LISTEN: &str = "127.0.0.1:7070";

/// Ostrakon: a bitemporal memory for AI agents, served over GraphQL.
#[derive(Parser)]
#[command(
    name = "ostrakon",
    version,
    about = "Ostrakon: a bitemporal memory for AI agents, served over GraphQL"
)]
struct Cli {
    /// Log format on stderr (level from OSTRAKON_LOG or RUST_LOG, default info).
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the GraphQL API (POST /graphql), GraphiQL (GET /graphql), subscriptions
    /// (WebSocket /graphql/ws), /healthz and /metrics.
    Serve {
        #[command(flatten)]
        data: DataDir,
        /// Address to listen on; without tokens configured only a loopback address is
        /// accepted.
        #[arg(long, value_name = "ADDR", default_value = DEFAULT_LISTEN)]
        listen: String,
        /// TOML file with access tokens and limits.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Serve the Model Context Protocol over stdin and stdout (what desktop agent clients
    /// spawn): the memory's tools, acting in one namespace. The data directory is this
    /// process's while it runs; to share one with `serve`, connect the client to its `/mcp`.
    Mcp {
        #[command(flatten)]
        data: DataDir,
        /// The namespace every tool acts in.
        #[arg(long, value_name = "NS", default_value = ostrakon_server::DEFAULT_MCP_NAMESPACE)]
        namespace: String,
    },
    /// Apply a JSONL file of operations, one per line (`-` reads stdin); each line is one
    /// atomic batch. Exits 1 if any line was rejected.
    Import {
        /// The JSONL file.
        file: PathBuf,
        #[command(flatten)]
        data: DataDir,
        /// Then build every namespace's search indexes and embeddings (with the built-in
        /// embedder, cached on disk), showing their progress, so that serving or `eval`
        /// starts with them.
        #[arg(long)]
        wait: bool,
    },
    /// Write every namespace's log (or one) as JSONL `replay` lines that re-import into an
    /// identical store, or its memory as RDF 1.2 (`--format nquads|turtle`) at a read
    /// point: the facts in force then, or with `--history` every fact known then with its
    /// validity, status, confidence, provenance and supersession on its triple term.
    Export {
        #[command(flatten)]
        data: DataDir,
        /// Only this namespace.
        #[arg(long, value_name = "NS")]
        namespace: Option<String>,
        /// Output file; `-` (the default) is stdout.
        #[arg(long, value_name = "FILE", default_value = "-")]
        out: PathBuf,
        /// What to write.
        #[arg(long, value_enum, default_value_t = ExportFormat::Jsonl)]
        format: ExportFormat,
        /// RDF: every fact known at the read point with its annotations, not only those in force.
        #[arg(long)]
        history: bool,
        /// RDF with `--history`: how a fact's annotations name its triple — `standard`
        /// (the default: RDF 1.1 `rdf:Statement` reification, which every RDF tool reads,
        /// rdflib included) or `triple-term` (RDF 1.2 `rdf:reifies <<( s p o )>>`, as the
        /// SPARQL history view has it).
        #[arg(long, value_enum)]
        reification: Option<Reification>,
        /// RDF: the valid time (default: now), as in GraphQL's `validAt`.
        #[arg(long, value_name = "TIME")]
        valid_at: Option<String>,
        /// RDF: the system time (default: everything committed), as in GraphQL's `knownAt`.
        #[arg(long, value_name = "TIME", conflicts_with = "known_at_seq")]
        known_at: Option<String>,
        /// RDF: as known after this batch, as in GraphQL's `knownAtSeq`.
        #[arg(long, value_name = "SEQ")]
        known_at_seq: Option<u64>,
    },
    /// Run one GraphQL operation against a data directory and print the JSON response
    /// (`-` reads the operation from stdin). Exits 1 if the response has errors.
    Query {
        /// The operation.
        query: String,
        #[command(flatten)]
        data: DataDir,
        /// Variables, as a JSON object.
        #[arg(long, value_name = "JSON")]
        variables: Option<String>,
    },
    /// Measure retrieval: search episodes for each question of a JSONL file
    /// (`{"namespace", "question", "gold": [external ids], "at"?, "tags"?}`) and print
    /// recall@1/5/10, hit@1/5/10 and MRR, overall and per tag.
    Eval {
        /// The JSONL file of questions.
        file: PathBuf,
        #[command(flatten)]
        data: DataDir,
        /// Namespace of lines that name none.
        #[arg(long)]
        namespace: Option<String>,
        /// Print each question's first gold rank.
        #[arg(long)]
        verbose: bool,
        /// The deepest cut-off: recall and hit at 1, 5 (when not past K) and K, and the
        /// share of questions with all their evidence in the top K.
        #[arg(long, value_name = "K", default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=200))]
        k: u16,
        /// Only the questions with this tag.
        #[arg(long, value_name = "TAG")]
        filter: Option<String>,
        /// The decay clock of every question, instead of each line's `at`.
        #[arg(long, value_name = "TIME")]
        at: Option<String>,
        /// Write each question's ranked external ids to FILE (JSONL), with the rank of each
        /// evidence episode found in the answer and in each list that found it.
        #[arg(long, value_name = "FILE")]
        dump: Option<PathBuf>,
        /// Leave these search lists out, comma-separated (text, text-in-context, vector,
        /// vector-in-context, graph, time, vector-in-time, neighbour), and `speaker`
        /// and `when` for the speaker and time boosts.
        #[arg(long, value_name = "LISTS")]
        without: Option<String>,
        /// How much more an episode that states a time weighs when the question asks
        /// when (the default is the search's own; 0 is `--without when`).
        #[arg(long, value_name = "X", value_parser = boost)]
        time_boost: Option<f64>,
        /// Also build each question's context block within this many tokens and report
        /// the share of questions with an evidence episode in it.
        #[arg(long, value_name = "TOKENS")]
        context: Option<usize>,
    },
    /// Write a checkpoint of every namespace (its state folded from the log), so that the
    /// next open loads it and replays only what follows. Checkpoints are derived: deleting
    /// them changes no answer, only how long opening takes.
    Checkpoint {
        #[command(flatten)]
        data: DataDir,
    },
    /// Copy a data directory — a server may be writing to it — into a new directory:
    /// each namespace at one batch (its log's whole records as they stand), with its
    /// checkpoint, saved vectors and the embedding caches; nothing is stopped or locked.
    Backup {
        /// The new directory to write the backup to.
        to: PathBuf,
        #[command(flatten)]
        data: DataDir,
    },
    /// Restore a backup into a data directory that holds no logs, then open it once to
    /// check every namespace.
    Restore {
        /// The backup directory.
        from: PathBuf,
        #[command(flatten)]
        data: DataDir,
    },
    /// Lay out a NATS JetStream cluster for Ostrakon's logs (shard streams, checkpoint
    /// store), or check that it is laid out; safe to run again.
    Cluster {
        #[command(subcommand)]
        action: cluster::ClusterAction,
    },
    /// Erase records from a stopped store's past, or drop a namespace (`ostrakon erase --help`).
    Erase {
        #[command(flatten)]
        data: DataDir,
        #[command(flatten)]
        what: erase::EraseArgs,
    },
    /// Read a namespace's episodes that the `[extraction]` section's model has not read,
    /// now, writing the facts it finds (`--dry-run`: print them, write nothing). Exits 1
    /// if an episode was given up.
    Extract {
        #[command(flatten)]
        data: DataDir,
        #[command(flatten)]
        args: extract::ExtractArgs,
    },
    /// Read every namespace's log and print what it holds (batches, episodes, entities,
    /// facts, log size), the torn tail recovery would cut and any damage. Changes nothing
    /// unless `--repair`. Exits 1 if a namespace is damaged.
    Inspect {
        #[command(flatten)]
        data: DataDir,
        /// Open the store as the server does, cutting torn tails (unacknowledged writes a
        /// crash interrupted), and report what was cut. Damage elsewhere is never cut.
        #[arg(long)]
        repair: bool,
    },
}

/// The default data directory under the user's data directory `base`: `ostrakon`, or the
/// `mnemo` one the project's earlier name left there while `ostrakon` does not exist;
/// `./ostrakon-data` without a user data directory.
fn default_data_dir(base: Option<PathBuf>) -> PathBuf {
    let Some(base) = base else {
        return PathBuf::from("ostrakon-data");
    };
    let (dir, earlier) = (base.join("ostrakon"), base.join("mnemo"));
    if !dir.exists() && earlier.is_dir() { earlier } else { dir }
}

#[derive(clap::Args)]
struct DataDir {
    /// Data directory [default: the user's data directory + /ostrakon, e.g.
    /// ~/.local/share/ostrakon (or ~/.local/share/mnemo, written under the project's earlier
    /// name, while the first does not exist); ./ostrakon-data where there is none]. With
    /// `--cluster` it keeps only this node's caches.
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,
    /// Keep the logs on this NATS JetStream cluster (comma-separated URLs) instead of the
    /// data directory (see `ostrakon cluster init`).
    #[arg(long, value_name = "URLS")]
    cluster: Option<String>,
}

impl DataDir {
    fn path(&self) -> PathBuf {
        match &self.data {
            Some(dir) => dir.clone(),
            None => default_data_dir(dirs::data_dir()),
        }
    }

    /// The directory, which must exist: reading commands should not create a store
    /// somewhere because of a typo.
    fn existing(&self) -> anyhow::Result<PathBuf> {
        let dir = self.path();
        if !dir.is_dir() && !cluster::selected() {
            bail!("no data directory at {}", dir.display());
        }
        Ok(dir)
    }
}

/// Runs the command line `args` (the program's name first) as the `ostrakon` binary does,
/// and returns its exit code: 0, 1 for a failure, 2 for arguments that cannot be read.
/// The binary and the Python package's `ostrakon` command both call it.
pub fn run_cli<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version are "errors" that print to stdout and exit 0.
            let _ = e.print();
            return u8::try_from(e.exit_code()).unwrap_or(2);
        }
    };
    logs::init(cli.log_format);
    match run(cli.command) {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(e) => {
            eprintln!("ostrakon: {e:#}");
            1
        }
    }
}

/// Runs a command; `Ok(false)` is a run that completed but must exit non-zero.
fn run(command: Command) -> anyhow::Result<bool> {
    let flag = match &command {
        Command::Serve { data, .. }
        | Command::Mcp { data, .. }
        | Command::Import { data, .. }
        | Command::Export { data, .. }
        | Command::Query { data, .. }
        | Command::Eval { data, .. }
        | Command::Checkpoint { data }
        | Command::Backup { data, .. }
        | Command::Restore { data, .. }
        | Command::Erase { data, .. }
        | Command::Extract { data, .. }
        | Command::Inspect { data, .. } => data.cluster.as_deref(),
        Command::Cluster { .. } => None,
    };
    if let Some(urls) = flag {
        cluster::select(&cluster::settings_from_flag(urls));
    }
    match command {
        Command::Cluster { action } => cluster::run(action).map(|()| true),
        Command::Serve { data, listen, config } => {
            serve(&data.path(), &listen, config.as_deref()).map(|()| true)
        }
        Command::Mcp { data, namespace } => mcp(&data.path(), namespace).map(|()| true),
        Command::Import { file, data, wait } => {
            let ok = import(&file, &data.path(), !wait)?;
            if wait {
                index_all(&data.path())?;
            }
            Ok(ok)
        }
        Command::Export {
            data,
            namespace,
            out,
            format,
            history,
            reification,
            valid_at,
            known_at,
            known_at_seq,
        } => {
            let point = RdfPoint { history, reification, valid_at, known_at, known_at_seq };
            export(&data.existing()?, namespace.as_deref(), &out, format, &point).map(|()| true)
        }
        // A query may write (a mutation): like `import`, it makes the directory.
        Command::Query { query, data, variables } => run_query(&data.path(), &query, variables.as_deref()),
        Command::Inspect { data, repair } => inspect(&data.existing()?, repair),
        Command::Checkpoint { data } => checkpoint(&data.existing()?).map(|()| true),
        Command::Backup { to, data } => backup::backup(&data.existing()?, &to).map(|()| true),
        Command::Restore { from, data } => backup::restore(&from, &data.path()).map(|()| true),
        Command::Erase { data, what } => erase::run(&data.existing()?, &what).map(|()| true),
        Command::Extract { data, args } => {
            let store = open_store(&data.existing()?, ostrakon_engine::admin::Residency::default(), 1)?;
            extract::run(store, &args)
        }
        Command::Eval {
            file,
            data,
            namespace,
            verbose,
            k,
            filter,
            at,
            dump,
            without,
            time_boost,
            context,
        } => {
            let mut without = eval::components(without.as_deref().unwrap_or(""))?;
            without.time_boost = time_boost;
            let dir = data.existing()?;
            let store = open_store(&dir, ostrakon_engine::admin::Residency::default(), all_cores())?;
            let options =
                eval::Options { namespace, verbose, k: usize::from(k), filter, at, dump, without, context };
            eval::eval(&store, &file, &options)
        }
    }
}

fn serve(data: &Path, listen: &str, config: Option<&Path>) -> anyhow::Result<()> {
    let config = match config {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    };
    logs::keep_secret(config.secrets());
    // `--cluster` was chosen already; else the config's `[cluster]`, if any.
    if let Some(settings) = &config.cluster {
        cluster::select(settings);
    }
    let addrs: Vec<SocketAddr> =
        listen.to_socket_addrs().with_context(|| format!("cannot resolve --listen {listen:?}"))?.collect();
    let Some(addr) = addrs.first().copied() else {
        bail!("--listen {listen:?} resolves to no address");
    };
    // Without tokens every request has full access, so only this machine may connect.
    if !config.requires_tokens() && !addrs.iter().all(|a| a.ip().is_loopback()) {
        bail!(
            "refusing to listen on {listen} without access tokens: anyone who can reach it could read \
             and write everything; listen on a loopback address (default {DEFAULT_LISTEN}) or give \
             --config with [[tokens]]"
        );
    }
    let store = Arc::new(open_store(data, config.residency, 1)?);
    // On a cluster: apply other nodes' writes as they come.
    store.follow_others();
    let tokens = config.tokens.len();
    let state = AppState::new(Arc::clone(&store), config);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let served = runtime.block_on(async {
        let listener =
            tokio::net::TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr}"))?;
        let local = listener.local_addr()?;
        // Tests and scripts read this line to find the port when listening on port 0.
        let logs = if cluster::selected() { "logs on the cluster, caches" } else { "data" };
        println!(
            "ostrakon: serving http://{local}/graphql (GraphiQL in a browser), {logs} in {}",
            data.display()
        );
        std::io::stdout().flush()?;
        tracing::info!(address = %local, data = %data.display(), tokens, "serving");
        ostrakon_server::serve(listener, state, shutdown::shutdown_signal()).await?;
        Ok(())
    });
    // The server answered every request it had (a graceful shutdown returns once they
    // are done): what is left on the blocking pool is upkeep, derived and safe to cut
    // short. Said now, not after the pool is shut down: upkeep over thousands of
    // namespaces kept it busy past the watchdog, which then took the stop for one
    // with requests still running (exit 1).
    shutdown::REQUESTS_DONE.store(true, std::sync::atomic::Ordering::SeqCst);
    store.stop_upkeep();
    runtime.shutdown_timeout(shutdown::UPKEEP_GRACE);
    // The next start loads these instead of replaying the logs.
    let written = store.checkpoint_all();
    tracing::info!(checkpoints = written, "stopped");
    served
}

/// Serves MCP over stdio until the client closes it; the store's upkeep (due
/// intentions, segments, idle consolidation) runs meanwhile, as under `serve`.
fn mcp(data: &Path, namespace: String) -> anyhow::Result<()> {
    let store = Arc::new(open_store(data, ostrakon_engine::admin::Residency::default(), 1)?);
    // The server's execution (permits, deadline, response limit) with its default settings.
    let runner = AppState::new(Arc::clone(&store), Config::default()).mcp_runner();
    let scope = ostrakon_mcp::Scope { namespace, access: Access::Local };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async {
        let upkeep = tokio::spawn(ostrakon_server::maintain_periodically(
            Arc::clone(&store),
            ostrakon_server::MAINTAIN_EVERY,
        ));
        tracing::info!(data = %data.display(), "serving MCP on stdio");
        let served = ostrakon_mcp::McpServer::local(runner, scope).serve_stdio().await;
        upkeep.abort();
        served
    })?;
    runtime.shutdown_timeout(shutdown::SHUTDOWN_GRACE);
    store.checkpoint_all();
    Ok(())
}

/// Opens a data directory to search and waits until every namespace's indexes hold its
/// log, then checkpoints (which saves the vectors of namespaces indexed on disk).
fn index_all(data: &Path) -> anyhow::Result<()> {
    let start = std::time::Instant::now();
    let store = open_store(data, ostrakon_engine::admin::Residency::default(), all_cores())?;
    let namespaces = store.namespaces();
    for ns in &namespaces {
        eval::wait_for_index(&store, ns)?;
    }
    store.checkpoint_all();
    println!("indexed {} namespaces in {:.1} s", namespaces.len(), start.elapsed().as_secs_f64());
    Ok(())
}

/// Imports a JSONL file; `leak` skips freeing the store at the end (the process is about
/// to exit).
fn import(file: &Path, data: &Path, leak: bool) -> anyhow::Result<bool> {
    // Progress is measured in bytes read; stdin has no known total.
    let (reader, total): (Box<dyn BufRead + Send>, Option<u64>) = if file == Path::new("-") {
        (Box::new(BufReader::new(std::io::stdin())), None)
    } else {
        let f = File::open(file).with_context(|| format!("cannot open {}", file.display()))?;
        let total = f.metadata().map(|m| m.len()).ok();
        (Box::new(BufReader::new(f)), total)
    };
    // An import searches nothing: its search indexes are built when the data is next
    // opened to serve, not batch by batch while it loads.
    let options = StoreOptions { defer_search: true, ..StoreOptions::default() };
    let store = Arc::new(cluster::open(data, options)?);
    let target = if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let progress = ProgressBar::with_draw_target(total, target);
    if let Ok(style) = ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {elapsed} {msg}") {
        progress.set_style(style);
    }

    let shown = progress.clone();
    let imported = ostrakon_graphql::import::import(&store, reader, &move |bytes, accepted, rejected| {
        shown.set_position(bytes);
        shown.set_message(format!("{accepted} accepted, {rejected} rejected"));
    })
    .with_context(|| format!("importing {}", file.display()))?;
    let (accepted, rejected) = (imported.accepted, imported.rejected);
    progress.finish_and_clear();
    // Every accepted batch is durable already. Freeing an index of millions of facts
    // record by record takes seconds; the process is about to end, and its memory goes
    // back to the system whole (the data directory's lock with it).
    // A checkpoint now, so that serving this data does not begin by replaying it all.
    let written = store.checkpoint_all();
    tracing::debug!(written, "checkpoints written");
    if let Ok(store) = Arc::try_unwrap(store) {
        if leak {
            std::mem::forget(store);
        } else {
            drop(store);
        }
    }

    println!("accepted {accepted}, rejected {}", rejected.len());
    for (line, rejection) in &rejected {
        println!("line {line}: {}: {}", rejection.code, rejection.message);
    }
    Ok(rejected.is_empty())
}

fn run_query(data: &Path, query: &str, variables: Option<&str>) -> anyhow::Result<bool> {
    let query = if query == "-" { std::io::read_to_string(std::io::stdin())? } else { query.to_owned() };
    let variables = match variables {
        Some(text) => {
            let value: serde_json::Value = serde_json::from_str(text).context("--variables is not JSON")?;
            if !value.is_object() {
                bail!("--variables must be a JSON object");
            }
            async_graphql::Variables::from_json(value)
        }
        None => async_graphql::Variables::default(),
    };
    let store = Arc::new(open_store(data, ostrakon_engine::admin::Residency::default(), 1)?);
    let schema = ostrakon_graphql::schema(store, Limits::default());
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let request = async_graphql::Request::new(query).variables(variables).data(Access::Local);
    let response = runtime.block_on(schema.execute(request));
    println!("{}", serde_json::to_string_pretty(&response)?);
    Ok(response.errors.is_empty())
}

fn checkpoint(data: &Path) -> anyhow::Result<()> {
    let options = StoreOptions { defer_search: true, ..StoreOptions::default() };
    let store = cluster::open(data, options)?;
    for ns in store.namespaces() {
        match store.checkpoint_after_open(&ns)? {
            Some(done) => {
                println!("{}: checkpoint at batch {} ({} bytes)", ns.as_str(), done.seq.0, done.bytes)
            }
            None => println!("{}: its checkpoint is current", ns.as_str()),
        }
    }
    Ok(())
}

fn inspect(data: &Path, repair: bool) -> anyhow::Result<bool> {
    if cluster::selected() {
        bail!(
            "inspect reads a data directory's files; a cluster's logs are checked by reading them (every node verifies each record's checksum)"
        );
    }
    if repair {
        // Opening recovers every log: torn tails are cut (and logged), damage is refused.
        let store = Store::open(data).with_context(|| format!("opening {}", data.display()))?;
        store.open_all();
        for (ns, cut) in store.truncations() {
            println!(
                "{}: cut {} bytes at offset {} ({} unacknowledged batches)",
                ns.as_str(),
                cut.bytes,
                cut.offset,
                cut.batches
            );
        }
        drop(store);
    }
    let reports = ostrakon_engine::admin::inspect_dir(data)?;
    println!(
        "{:<24} {:>9} {:>9} {:>9} {:>10} {:>12} {:>22} {:>12} {:>16}",
        "namespace",
        "batches",
        "episodes",
        "entities",
        "facts",
        "log bytes",
        "checkpoint (batch, age)",
        "state bytes",
        "search (text, vec)"
    );
    let mut healthy = true;
    for r in &reports {
        let checkpoint = r.checkpoint.as_ref().map_or_else(
            || "none".to_owned(),
            |c| {
                format!("{}, {}", c.seq.0, c.age_seconds.map_or_else(|| "?".to_owned(), |a| format!("{a} s")))
            },
        );
        let batch = |b: Option<u64>| b.map_or_else(|| "-".to_owned(), |b| b.to_string());
        let search = format!("{}, {}", batch(r.text_index_batch), batch(r.vectors_batch));
        let state = batch(r.state_bytes);
        match r.counts {
            Some(c) => println!(
                "{:<24} {:>9} {:>9} {:>9} {:>10} {:>12} {:>22} {:>12} {:>16}",
                r.namespace,
                c.batches,
                c.episodes,
                c.entities,
                c.facts,
                r.log_bytes,
                checkpoint,
                state,
                search
            ),
            None => println!(
                "{:<24} {:>9} {:>9} {:>9} {:>10} {:>12} {:>22} {:>12} {:>16}",
                r.namespace, "-", "-", "-", "-", r.log_bytes, checkpoint, state, search
            ),
        }
        if let Some(cut) = r.truncation {
            println!(
                "  torn tail: {} bytes from offset {} ({} unacknowledged batches); the next open cuts it \
                 (or `ostrakon inspect --repair`)",
                cut.bytes, cut.offset, cut.batches
            );
        }
        if let Some(damage) = &r.damage {
            healthy = false;
            println!("  DAMAGED: {damage}; this namespace is refused until its log is restored");
        }
    }
    Ok(healthy)
}

/// A boost: a number from 0 to 1.
fn boost(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!("{text:?} is not a number from 0 to 1")),
    }
}
