//! The cluster as a [`LogBackend`]: a connection to NATS, the shard streams and the
//! checkpoint store, and how a namespace's log is opened over them.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_nats::jetstream::consumer::{DeliverPolicy, push};
use async_nats::jetstream::{object_store, stream};
use futures_util::{StreamExt, TryStreamExt};
use mnemo_log::{
    Clock, FORMAT_VERSION, LogBackend, LogError, Record, RecordLog, Recovery, Truncation, validate_name,
};
use tokio::io::AsyncReadExt;

use crate::config::{ClusterConfig, MAX_SHARDS};
use crate::handle::StreamLog;
use crate::link::{Link, connect_link};
use crate::reading::unavailable;
use crate::rewrite;
use crate::subjects::{namespace_of, shard_of, stream_name, subject_of};

/// The object store bucket that keeps checkpoints, and the search vectors beside them.
pub const CHECKPOINT_BUCKET: &str = "mnemo-checkpoints";

/// How long `init` waits for a cluster that just started to elect its leaders.
const INIT_PATIENCE: Duration = Duration::from_secs(90);

type Watcher = Arc<dyn Fn(&str) + Send + Sync>;

/// Namespaces' logs on NATS JetStream (see the crate's documentation).
pub struct JetStreamBackend {
    link: Arc<Link>,
    streams: Vec<stream::Stream>,
    checkpoints: object_store::ObjectStore,
    watchers: Arc<Mutex<Vec<Watcher>>>,
}

fn describe(shard: u32, shards: u32) -> String {
    format!("Mnemo log, shard {shard} of {shards}")
}

impl JetStreamBackend {
    /// Creates the shard streams and the checkpoint store, or checks that they are there
    /// as configured; safe to run again. Returns the connected backend.
    pub fn init(config: &ClusterConfig) -> Result<Self, LogError> {
        let link = connect_link(config)?;
        let (context, shards, replicas, max) =
            (link.context.clone(), config.shards, config.replicas, config.max_message);
        link.bridge.run(async move {
            if let Ok(mut first) = context.get_stream(stream_name(0)).await
                && let Ok(info) = first.info().await
                && info.config.description.as_deref() != Some(describe(0, shards).as_str())
            {
                return Err(unavailable(
                    "cluster init",
                    format!(
                        "the cluster exists with another layout ({:?}); its shard count cannot change",
                        info.config.description
                    ),
                ));
            }
            for shard in 0..shards {
                let stream = stream::Config {
                    name: stream_name(shard),
                    description: Some(describe(shard, shards)),
                    subjects: vec![format!("mnemo.log.{shard}.>")],
                    storage: stream::StorageType::File,
                    num_replicas: replicas,
                    max_message_size: i32::try_from(max).unwrap_or(i32::MAX),
                    // Reads ask the leader (see `reading.rs`): no replica answers gets.
                    allow_direct: false,
                    duplicate_window: Duration::from_secs(120),
                    ..Default::default()
                };
                // A cluster that just started elects its metadata leader first: retry.
                let started = std::time::Instant::now();
                loop {
                    match context.create_or_update_stream(stream.clone()).await {
                        Ok(_) => break,
                        Err(e) if started.elapsed() < INIT_PATIENCE => {
                            tracing::debug!(error = %e, "creating a stream; retrying");
                            tokio::time::sleep(Duration::from_millis(250)).await;
                        }
                        Err(e) => return Err(unavailable("creating a stream", e)),
                    }
                }
            }
            if context.get_object_store(CHECKPOINT_BUCKET).await.is_err() {
                let bucket = object_store::Config {
                    bucket: CHECKPOINT_BUCKET.into(),
                    description: Some(
                        "Mnemo checkpoints and search vectors (derived: deleting them changes no answer)"
                            .into(),
                    ),
                    storage: stream::StorageType::File,
                    num_replicas: replicas,
                    ..Default::default()
                };
                context
                    .create_object_store(bucket)
                    .await
                    .map_err(|e| unavailable("creating the checkpoint store", e))?;
            }
            Ok::<(), LogError>(())
        })??;
        Self::open_with(link)
    }

    /// Connects to an initialised cluster (`mnemo cluster init`): its streams must be
    /// there; their number is read from them (`config.shards` is only used by `init`).
    pub fn connect(config: &ClusterConfig) -> Result<Self, LogError> {
        Self::open_with(connect_link(config)?)
    }

    fn open_with(mut link: Link) -> Result<Self, LogError> {
        // A node may start while the cluster elects its leaders: retry for a while.
        let started = std::time::Instant::now();
        let (streams, checkpoints) = loop {
            match Self::layout(&link) {
                Ok(found) => break found,
                Err(LogError::Unavailable { reason }) if started.elapsed() < INIT_PATIENCE => {
                    tracing::debug!(reason, "the cluster does not answer yet; retrying");
                    std::thread::sleep(Duration::from_millis(250));
                }
                Err(e) => return Err(e),
            }
        };
        link.config.shards = u32::try_from(streams.len()).unwrap_or(u32::MAX);
        let backend =
            JetStreamBackend { link: Arc::new(link), streams, checkpoints, watchers: Arc::default() };
        backend.listen()?;
        Ok(backend)
    }

    /// The shard streams and the checkpoint store. The shard count is the cluster's,
    /// fixed by `init`: read from the first stream's description.
    fn layout(link: &Link) -> Result<(Vec<stream::Stream>, object_store::ObjectStore), LogError> {
        let context = link.context.clone();
        link.bridge.run(async move {
            let mut streams = Vec::new();
            let mut shards = 1;
            let mut shard = 0;
            while shard < shards {
                let mut stream = context.get_stream(stream_name(shard)).await.map_err(|e| {
                    unavailable(&format!("stream {} (run `mnemo cluster init`)", stream_name(shard)), e)
                })?;
                let info = stream.info().await.map_err(|e| unavailable("stream info", e))?;
                let described = info.config.description.as_deref().and_then(|d| {
                    let (of, total) = d.strip_prefix("Mnemo log, shard ")?.split_once(" of ")?;
                    Some((of.parse::<u32>().ok()?, total.parse::<u32>().ok()?))
                });
                match described {
                    Some((of, total)) if of == shard && (shard == 0 || total == shards) => shards = total,
                    _ => {
                        return Err(unavailable(
                            "cluster layout",
                            format!(
                                "stream {} is not a Mnemo log shard ({:?})",
                                stream_name(shard),
                                info.config.description
                            ),
                        ));
                    }
                }
                if shards == 0 || shards > MAX_SHARDS {
                    return Err(unavailable("cluster layout", format!("{shards} shards")));
                }
                streams.push(stream);
                shard += 1;
            }
            let checkpoints = context
                .get_object_store(CHECKPOINT_BUCKET)
                .await
                .map_err(|e| unavailable("the checkpoint store (run `mnemo cluster init`)", e))?;
            Ok::<_, LogError>((streams, checkpoints))
        })?
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
            let watchers = Arc::clone(&self.watchers);
            self.link.bridge.handle().spawn(async move {
                while let Some(message) = messages.next().await {
                    let Ok(message) = message else { continue };
                    if let Some(name) = namespace_of(message.subject.as_str()) {
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

    /// The settings it was opened with.
    pub fn config(&self) -> &ClusterConfig {
        &self.link.config
    }

    fn stream_of(&self, name: &str) -> &stream::Stream {
        let shard = shard_of(name, self.link.config.shards) as usize;
        &self.streams[shard.min(self.streams.len().saturating_sub(1))]
    }
}

/// The object holding a namespace's shared search vectors, beside its checkpoint (a
/// namespace's name has no '/').
fn vectors_object(name: &str) -> String {
    format!("{name}/vectors")
}

/// Objects in the checkpoint store: checkpoints and the search vectors beside them.
impl JetStreamBackend {
    fn load_object(&self, name: String, doing: &'static str) -> Result<Option<Vec<u8>>, LogError> {
        let store = self.checkpoints.clone();
        self.link.bridge.run(async move {
            let mut object = match store.get(&name).await {
                Ok(object) => object,
                Err(e) if e.kind() == object_store::GetErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(unavailable(doing, e)),
            };
            let mut bytes = Vec::new();
            object.read_to_end(&mut bytes).await.map_err(|e| unavailable(doing, e))?;
            Ok(Some(bytes))
        })?
    }

    fn save_object(&self, name: String, blob: &[u8], doing: &'static str) -> Result<(), LogError> {
        let (store, blob) = (self.checkpoints.clone(), blob.to_vec());
        self.link.bridge.run(async move {
            let mut reader = std::io::Cursor::new(blob);
            store.put(name.as_str(), &mut reader).await.map(|_| ()).map_err(|e| unavailable(doing, e))
        })?
    }

    /// Securely deletes an object's chunks, then the object.
    fn erase_object(&self, name: String) -> Result<(), LogError> {
        let (store, context) = (self.checkpoints.clone(), self.link.context.clone());
        self.link.bridge.run(async move {
            let info = match store.info(&name).await {
                Ok(info) => info,
                Err(e) if e.kind() == object_store::InfoErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(unavailable("finding a checkpoint", e)),
            };
            let stream = context
                .get_stream(format!("OBJ_{CHECKPOINT_BUCKET}"))
                .await
                .map_err(|e| unavailable("the checkpoint store", e))?;
            let chunks = format!("$O.{CHECKPOINT_BUCKET}.C.{}", info.nuid);
            rewrite::erase_subject(&stream, &chunks).await?;
            match store.delete(&name).await {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == object_store::DeleteErrorKind::NotFound => Ok(()),
                Err(e) => Err(unavailable("removing a checkpoint", e)),
            }
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
        self.load_object(name.to_owned(), "loading a checkpoint")
    }

    fn save_checkpoint(&self, name: &str, blob: &[u8]) -> Result<(), LogError> {
        validate_name(name)?;
        self.save_object(name.to_owned(), blob, "saving a checkpoint")
    }

    fn keeps_vectors(&self) -> bool {
        true
    }

    fn load_vectors(&self, name: &str) -> Result<Option<Vec<u8>>, LogError> {
        validate_name(name)?;
        self.load_object(vectors_object(name), "loading search vectors")
    }

    fn save_vectors(&self, name: &str, blob: &[u8]) -> Result<(), LogError> {
        validate_name(name)?;
        self.save_object(vectors_object(name), blob, "saving search vectors")
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
        tracing::info!(namespace = name, replaced, "stream messages replaced and securely deleted");
        Ok(())
    }

    fn remove(&self, name: &str) -> Result<(), LogError> {
        validate_name(name)?;
        let subject = subject_of(name, self.link.config.shards);
        let stream = self.stream_of(name).clone();
        self.link.bridge.run(async move {
            let mut erased = rewrite::erase_subject(&stream, &subject).await?;
            erased += rewrite::erase_subject(&stream, &rewrite::redo_subject(&subject)).await?;
            Ok::<usize, LogError>(erased)
        })??;
        self.remove_checkpoint(name)
    }

    /// Securely deletes the chunks of the checkpoint and of the vectors beside it, then
    /// the objects: an erasure's content must not stay in the store's blocks, as a plain
    /// delete (a purge) may leave it.
    fn remove_checkpoint(&self, name: &str) -> Result<(), LogError> {
        validate_name(name)?;
        for object in [name.to_owned(), vectors_object(name)] {
            self.erase_object(object)?;
        }
        Ok(())
    }

    fn watch(&self, news: Arc<dyn Fn(&str) + Send + Sync>) {
        self.watchers.lock().unwrap_or_else(PoisonError::into_inner).push(news);
    }

    fn health(&self) -> Result<(), String> {
        if self.connected() { Ok(()) } else { Err("not connected to NATS".into()) }
    }

    fn write_budget(&self) -> Duration {
        self.link.config.write_timeout
    }
}
