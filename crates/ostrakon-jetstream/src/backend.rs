//! The cluster as a [`LogBackend`]: a connection to NATS, the shard streams and the
//! checkpoint store, and how a namespace's log is opened over them.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_nats::jetstream::consumer::{DeliverPolicy, push};
use async_nats::jetstream::stream;
use futures_util::{StreamExt, TryStreamExt};
use ostrakon_log::{
    Clock, FORMAT_VERSION, LogBackend, LogError, Record, RecordLog, Recovery, Truncation, validate_name,
};

use crate::config::ClusterConfig;
use crate::handle::StreamLog;
use crate::layout::{self, INIT_PATIENCE};
use crate::link::{Link, connect_link};
use crate::objects::{CHECKPOINT_BUCKET, Objects};
use crate::reading::unavailable;
use crate::rewrite;
use crate::subjects::{namespace_of, shard_of, subject_of};

type Watcher = Arc<dyn Fn(&str) + Send + Sync>;

/// Namespaces' logs on NATS JetStream (see the crate's documentation).
pub struct JetStreamBackend {
    link: Arc<Link>,
    streams: Vec<stream::Stream>,
    /// The stream of the checkpoint bucket.
    checkpoints: stream::Stream,
    watchers: Arc<Mutex<Vec<Watcher>>>,
    /// Whether the cluster takes writes, as last asked.
    probe: crate::probe::Probe,
    /// Compacts streams' Raft logs after erasures.
    compactor: crate::wal::Compactor,
}

impl JetStreamBackend {
    /// Creates the shard streams and the checkpoint store, or checks that they are there
    /// as configured; safe to run again. On a cluster laid out already it never weakens
    /// it unless `force` (see `layout.rs`). Returns the connected backend and what changed.
    pub fn init(config: &ClusterConfig, force: bool) -> Result<(Self, Vec<String>), LogError> {
        let link = connect_link(config)?;
        // A cluster that just started elects its metadata leader first: ask again.
        let started = std::time::Instant::now();
        let done = loop {
            let (context, config) = (link.context.clone(), config.clone());
            match link.bridge.run(async move { layout::init(&context, &config, force).await })? {
                Err(LogError::Unavailable { reason }) if started.elapsed() < INIT_PATIENCE => {
                    tracing::debug!(reason, "the cluster does not answer yet; asking again");
                    std::thread::sleep(Duration::from_millis(250));
                }
                done => break done?,
            }
        };
        Ok((Self::open_with(link)?, done))
    }

    /// Connects to an initialised cluster (`ostrakon cluster init`): its streams must be
    /// there; their number is read from them, and must be what the configuration expects
    /// if it says (`config.expect_shards`).
    pub fn connect(config: &ClusterConfig) -> Result<Self, LogError> {
        Self::open_with(connect_link(config)?)
    }

    fn open_with(mut link: Link) -> Result<Self, LogError> {
        // A node may start while the cluster elects its leaders: retry for a while.
        let started = std::time::Instant::now();
        let (streams, checkpoints) = loop {
            let (context, config) = (link.context.clone(), link.config.clone());
            match link.bridge.run(async move { layout::read(&context, &config).await })? {
                Ok(found) => break found,
                Err(LogError::Unavailable { reason }) if started.elapsed() < INIT_PATIENCE => {
                    tracing::debug!(reason, "the cluster does not answer yet; retrying");
                    std::thread::sleep(Duration::from_millis(250));
                }
                Err(e) => return Err(e),
            }
        };
        link.config.shards = u32::try_from(streams.len()).unwrap_or(u32::MAX);
        let link = Arc::new(link);
        let compactor = crate::wal::Compactor::start(&link);
        let backend = JetStreamBackend {
            link,
            streams,
            checkpoints,
            watchers: Arc::default(),
            probe: crate::probe::Probe::default(),
            compactor,
        };
        backend.listen()?;
        Ok(backend)
    }

    /// Hears every append on the cluster and tells the watchers which namespace moved:
    /// one ordered push consumer per shard stream, headers only, from now on — so a hint
    /// comes once the message is stored, never for one JetStream refused. A hint is only a
    /// hint (a consumer that is recreated may skip some): a watcher reads the stream to
    /// learn what is there, and sweeps now and then.
    fn listen(&self) -> Result<(), LogError> {
        for (shard, stream) in self.streams.iter().enumerate() {
            let (client, stream) = (self.link.client.clone(), stream.clone());
            let config = push::OrderedConfig {
                deliver_subject: client.new_inbox(),
                filter_subject: format!("mnemo.log.{shard}.>"),
                headers_only: true,
                deliver_policy: DeliverPolicy::New,
                ..Default::default()
            };
            // A server that was just restarted may take a while to answer for the stream
            // while it catches up: try again for as long as a node waits for the layout.
            let started = std::time::Instant::now();
            let mut messages = loop {
                let (stream, config) = (stream.clone(), config.clone());
                let created = self.link.bridge.run(async move {
                    let consumer = stream
                        .create_consumer(config)
                        .await
                        .map_err(|e| unavailable("following appends", e))?;
                    consumer.messages().await.map_err(|e| unavailable("following appends", e))
                })?;
                match created {
                    Ok(messages) => break messages,
                    Err(LogError::Unavailable { reason }) if started.elapsed() < INIT_PATIENCE => {
                        tracing::debug!(reason, "following a shard's appends; retrying");
                        std::thread::sleep(Duration::from_millis(250));
                    }
                    Err(e) => return Err(e),
                }
            };
            let (watchers, link) = (Arc::clone(&self.watchers), Arc::clone(&self.link));
            self.link.bridge.handle().spawn(async move {
                while let Some(message) = messages.next().await {
                    let Ok(message) = message else { continue };
                    if let Some(name) = namespace_of(message.subject.as_str()) {
                        let last = message.headers.as_ref().and_then(|h| h.get(crate::handle::LAST_BATCH));
                        if let Some(last) = last.and_then(|v| v.as_str().parse::<u64>().ok()) {
                            link.tails.heard(&name, last);
                        }
                        let watchers = watchers.lock().unwrap_or_else(PoisonError::into_inner).clone();
                        for watcher in watchers {
                            watcher(&name);
                        }
                    }
                }
            });
        }
        Ok(())
    }

    /// Whether the connection to NATS is up.
    pub fn connected(&self) -> bool {
        self.link.client.connection_state() == async_nats::connection::State::Connected
    }

    /// The server that leads the stream holding namespace `name` now, if it has one.
    pub fn leader_of(&self, name: &str) -> Result<Option<String>, LogError> {
        let mut stream = self.stream_of(name).clone();
        self.link.bridge.run(async move {
            let info = stream.info().await.map_err(|e| unavailable("stream info", e))?;
            Ok(info.cluster.as_ref().and_then(|c| c.leader.clone()))
        })?
    }

    /// Hands every stream that the NATS server named `server` leads to its most
    /// caught-up replica, and waits until none is led by it (before that server is
    /// restarted: see `handover.rs`). Returns what moved, one line each.
    pub fn hand_over(&self, server: &str) -> Result<Vec<String>, LogError> {
        let (link, streams, server) = (Arc::clone(&self.link), self.probed(), server.to_owned());
        self.link.bridge.run(async move {
            crate::handover::hand_over(&link, streams, &server, Duration::from_secs(30)).await
        })?
    }

    /// The settings it was opened with.
    pub fn config(&self) -> &ClusterConfig {
        &self.link.config
    }

    fn stream_of(&self, name: &str) -> &stream::Stream {
        let shard = shard_of(name, self.link.config.shards) as usize;
        &self.streams[shard.min(self.streams.len().saturating_sub(1))]
    }
}

impl JetStreamBackend {
    /// Has the Raft logs of the stream holding `name` compacted soon (after an erasure).
    fn compact_soon(&self, name: &str) {
        let filler = format!("mnemo.log.{}.~.fill", shard_of(name, self.link.config.shards));
        self.compactor.ask(self.stream_of(name), filler);
    }

    /// The streams health asks about: the shards, then the checkpoint store.
    fn probed(&self) -> Vec<stream::Stream> {
        self.streams.iter().chain([&self.checkpoints]).cloned().collect()
    }
}

/// The object holding a namespace's shared search vectors, beside its checkpoint (a
/// namespace's name has no '/').
fn vectors_object(name: &str) -> String {
    format!("{name}/vectors")
}

/// Objects in the checkpoint store: checkpoints and the search vectors beside them.
impl JetStreamBackend {
    fn load_object(&self, name: String) -> Result<Option<Vec<u8>>, LogError> {
        let (link, stream) = (Arc::clone(&self.link), self.checkpoints.clone());
        self.link.bridge.run(async move {
            Objects { link: &link, stream: &stream, bucket: CHECKPOINT_BUCKET }.get(&name).await
        })?
    }

    fn save_object(
        &self,
        namespace: &str,
        kind: &'static str,
        name: String,
        blob: &[u8],
    ) -> Result<(), LogError> {
        let (link, stream, namespace, blob) =
            (Arc::clone(&self.link), self.checkpoints.clone(), namespace.to_owned(), blob.to_vec());
        self.link.bridge.run(async move {
            Objects { link: &link, stream: &stream, bucket: CHECKPOINT_BUCKET }
                .put(&namespace, kind, &name, &blob)
                .await
        })?
    }
}

impl LogBackend for JetStreamBackend {
    fn list(&self) -> Result<Vec<String>, LogError> {
        let streams = self.streams.clone();
        let mut names = self.link.bridge.run(async move {
            let mut names = Vec::new();
            for (shard, stream) in streams.iter().enumerate() {
                let mut subjects = stream
                    .info_with_subjects(format!("mnemo.log.{shard}.>"))
                    .await
                    .map_err(|e| unavailable("listing namespaces", e))?;
                while let Some((subject, _count)) =
                    subjects.try_next().await.map_err(|e| unavailable("listing namespaces", e))?
                {
                    names.extend(namespace_of(&subject));
                }
            }
            Ok::<_, LogError>(names)
        })??;
        names.sort();
        names.dedup();
        Ok(names)
    }

    fn check(&self, name: &str) -> Result<Option<Truncation>, LogError> {
        validate_name(name)?;
        Err(LogError::Io(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "a stream is checked by reading it",
        )))
    }

    fn open(&self, name: &str, clock: Clock) -> Result<(Box<dyn RecordLog>, Recovery), LogError> {
        self.open_from(name, clock, 0)
    }

    fn open_from(
        &self,
        name: &str,
        clock: Clock,
        after: u64,
    ) -> Result<(Box<dyn RecordLog>, Recovery), LogError> {
        validate_name(name)?;
        let subject = subject_of(name, self.link.config.shards);
        let log = StreamLog::new(Arc::clone(&self.link), self.stream_of(name).clone(), name, subject, clock);
        // Batch `after` too: the checkpoint up to it is checked against its time.
        let records = log.read_records(after.saturating_sub(1))?;
        let recovery = Recovery {
            records,
            truncation: None,
            format_version: FORMAT_VERSION,
            name: Some(name.into()),
            new_header: false,
        };
        Ok((Box::new(log), recovery))
    }

    fn shared(&self) -> bool {
        true
    }

    fn keeps_checkpoints(&self) -> bool {
        true
    }

    fn load_checkpoint(&self, name: &str) -> Result<Option<Vec<u8>>, LogError> {
        validate_name(name)?;
        self.load_object(name.to_owned())
    }

    fn save_checkpoint(&self, name: &str, blob: &[u8]) -> Result<(), LogError> {
        validate_name(name)?;
        self.save_object(name, "checkpoint", name.to_owned(), blob)
    }

    fn keeps_vectors(&self) -> bool {
        true
    }

    fn load_vectors(&self, name: &str) -> Result<Option<Vec<u8>>, LogError> {
        validate_name(name)?;
        self.load_object(vectors_object(name))
    }

    fn save_vectors(&self, name: &str, blob: &[u8]) -> Result<(), LogError> {
        validate_name(name)?;
        self.save_object(name, "vectors", vectors_object(name), blob)
    }

    fn rewrite(&self, name: &str, records: &[Record]) -> Result<(), LogError> {
        validate_name(name)?;
        let subject = subject_of(name, self.link.config.shards);
        let (link, stream, records) =
            (Arc::clone(&self.link), self.stream_of(name).clone(), records.to_vec());
        let replaced = self
            .link
            .bridge
            .run(async move { rewrite::rewrite(&link, &stream, &subject, &records).await })??;
        if replaced > 0 {
            // What was deleted is still in the replicas' Raft logs: make them compact.
            self.compact_soon(name);
        }
        tracing::info!(namespace = name, replaced, "stream messages replaced and securely deleted");
        Ok(())
    }

    fn remove(&self, name: &str) -> Result<(), LogError> {
        validate_name(name)?;
        let subject = subject_of(name, self.link.config.shards);
        let stream = self.stream_of(name).clone();
        let erased = self.link.bridge.run(async move {
            let mut erased = rewrite::erase_subject(&stream, &subject).await?;
            erased += rewrite::erase_subject(&stream, &rewrite::redo_subject(&subject)).await?;
            Ok::<usize, LogError>(erased)
        })??;
        if erased > 0 {
            self.compact_soon(name);
        }
        self.remove_checkpoint(name)
    }

    /// Securely deletes every version of the checkpoint and of the vectors beside it
    /// (the current ones, and any a crash or a race left behind), then the objects: an
    /// erasure's content must not stay in the store's blocks, as a plain delete (a
    /// purge) leaves it.
    fn remove_checkpoint(&self, name: &str) -> Result<(), LogError> {
        validate_name(name)?;
        let (link, stream, namespace) = (Arc::clone(&self.link), self.checkpoints.clone(), name.to_owned());
        let erased = self.link.bridge.run(async move {
            let objects = Objects { link: &link, stream: &stream, bucket: CHECKPOINT_BUCKET };
            objects.erase_namespace(&namespace, &[namespace.clone(), vectors_object(&namespace)]).await
        })??;
        if erased > 0 {
            // The chunks' appends are still in the replicas' Raft logs: compact them.
            self.compactor.ask(&self.checkpoints, format!("$O.{CHECKPOINT_BUCKET}.C.~.fill"));
        }
        tracing::debug!(namespace = name, erased, "checkpoint chunks securely deleted");
        Ok(())
    }

    fn watch(&self, news: Arc<dyn Fn(&str) + Send + Sync>) {
        self.watchers.lock().unwrap_or_else(PoisonError::into_inner).push(news);
    }

    /// Connected, and every shard stream and the checkpoint store answer with a leader
    /// (asked at most once a second).
    fn health(&self) -> Result<(), String> {
        self.probe.check(&self.link, &self.probed()).map(|_| ())
    }

    fn behind(&self, name: &str, applied: u64) -> Option<ostrakon_log::Behind> {
        self.link.tails.behind(name, applied)
    }

    fn stream_bytes(&self) -> Vec<(String, u64)> {
        self.probe.check(&self.link, &self.probed()).unwrap_or_default()
    }

    fn write_budget(&self) -> Duration {
        self.link.config.write_timeout
    }
}
