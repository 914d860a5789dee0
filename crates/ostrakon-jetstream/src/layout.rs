//! The cluster's layout: the shard streams and the checkpoint bucket, made by `ostrakon
//! cluster init` and read back by every node that connects.
//!
//! A layout is never weakened by accident: `init` on a live cluster refuses to lower a
//! stream's replicas, or to change the shard count, unless forced — and the shard count
//! never changes while a namespace has a log (each namespace's subject is a function of
//! it: its records would be looked for in another stream). A node whose configuration
//! disagrees with the cluster (a shard count, fewer replicas than it was told to expect)
//! refuses to start, naming both values.

use std::time::Duration;

use async_nats::jetstream::{self, object_store, stream};
use futures_util::TryStreamExt;
use ostrakon_log::LogError;

use crate::config::{ClusterConfig, MAX_SHARDS};
use crate::objects::{CHECKPOINT_BUCKET, stream_of_bucket};
use crate::reading::unavailable;
use crate::subjects::stream_name;

/// How long `init` and a node starting wait for a cluster that just started to elect its
/// leaders.
pub(crate) const INIT_PATIENCE: Duration = Duration::from_secs(90);

fn describe(shard: u32, shards: u32) -> String {
    // Written into each stream since the project was called Mnemo: a format identifier,
    // kept so that a cluster laid out before the rename is still recognised.
    format!("Mnemo log, shard {shard} of {shards}")
}

/// The (shard, shard count) a stream's description names, if it is an Ostrakon log shard.
fn described(description: Option<&str>) -> Option<(u32, u32)> {
    let (of, total) = description?.strip_prefix("Mnemo log, shard ")?.split_once(" of ")?;
    Some((of.parse().ok()?, total.parse().ok()?))
}

/// Whether getting a stream failed because there is none.
fn not_found(e: &jetstream::context::GetStreamError) -> bool {
    matches!(e.kind(), jetstream::context::GetStreamErrorKind::JetStream(j)
        if j.error_code() == jetstream::ErrorCode::STREAM_NOT_FOUND)
}

fn refused(reason: String) -> LogError {
    LogError::Layout { reason }
}

/// What a shard stream of `shards` is configured as.
fn shard_config(shard: u32, shards: u32, config: &ClusterConfig) -> stream::Config {
    stream::Config {
        name: stream_name(shard),
        description: Some(describe(shard, shards)),
        subjects: vec![format!("mnemo.log.{shard}.>")],
        storage: stream::StorageType::File,
        num_replicas: config.replicas,
        max_message_size: i32::try_from(config.max_message).unwrap_or(i32::MAX),
        // Reads ask the leader (see `reading.rs`): no replica answers gets.
        allow_direct: false,
        duplicate_window: Duration::from_secs(120),
        ..Default::default()
    }
}

/// Creates the shard streams and the checkpoint bucket, or checks them. On a cluster laid
/// out already: raising replicas is done; lowering them, or changing the shard count (only
/// possible while no namespace has a log), is refused unless `force`, with what would
/// change. Returns what it did, one line each.
pub(crate) async fn init(
    context: &jetstream::Context,
    config: &ClusterConfig,
    force: bool,
) -> Result<Vec<String>, LogError> {
    let shards = config.shards;
    let mut done = Vec::new();
    let existing = existing_streams(context).await?;
    if let Some(&(first, _)) = existing.first()
        && first.1 != shards
    {
        let held = namespaces_in(context, &existing).await?;
        if held > 0 {
            return Err(refused(format!(
                "the cluster has {} shard streams and {held} namespaces with a log; asked for {shards}: the \
                 shard count cannot change while a namespace has a log (each one's records would be looked \
                 for in another stream)",
                first.1
            )));
        }
        if !force {
            return Err(refused(format!(
                "the cluster has {} shard streams; asked for {shards}: pass --force to lay it out again \
                 (it holds no namespace)",
                first.1
            )));
        }
        for (shard, _) in existing.iter().enumerate() {
            let name = stream_name(u32::try_from(shard).unwrap_or(u32::MAX));
            context.delete_stream(&name).await.map_err(|e| unavailable("removing a stream", e))?;
        }
        done.push(format!("removed {} empty shard streams laid out for {} shards", existing.len(), first.1));
    } else {
        let weaker: Vec<String> = existing
            .iter()
            .enumerate()
            .filter(|(_, (_, replicas))| *replicas > config.replicas)
            .map(|(shard, (_, replicas))| format!("{} from R{replicas}", stream_name(shard as u32)))
            .collect();
        let bucket = bucket_replicas(context).await?;
        let weaker_bucket = bucket.filter(|r| *r > config.replicas);
        if (!weaker.is_empty() || weaker_bucket.is_some()) && !force {
            let mut what = weaker;
            what.extend(weaker_bucket.map(|r| format!("{} from R{r}", stream_of_bucket(CHECKPOINT_BUCKET))));
            return Err(refused(format!(
                "this would lower the replicas of {} to R{}: {}; pass --force to weaken the cluster",
                if what.len() == 1 { "a stream".to_owned() } else { format!("{} streams", what.len()) },
                config.replicas,
                what.join(", ")
            )));
        }
    }
    for shard in 0..shards {
        let wanted = shard_config(shard, shards, config);
        // A cluster that just started elects its metadata leader first: retry.
        let started = std::time::Instant::now();
        loop {
            match context.create_or_update_stream(wanted.clone()).await {
                Ok(_) => break,
                Err(e) if started.elapsed() < INIT_PATIENCE => {
                    tracing::debug!(error = %e, "creating a stream; retrying");
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
                Err(e) => return Err(unavailable("creating a stream", e)),
            }
        }
    }
    match bucket_replicas(context).await? {
        None => {
            let bucket = object_store::Config {
                bucket: CHECKPOINT_BUCKET.into(),
                description: Some(
                    "Ostrakon checkpoints and search vectors (derived: deleting them changes no answer)"
                        .into(),
                ),
                storage: stream::StorageType::File,
                num_replicas: config.replicas,
                ..Default::default()
            };
            context
                .create_object_store(bucket)
                .await
                .map_err(|e| unavailable("creating the checkpoint store", e))?;
        }
        Some(replicas) if replicas != config.replicas => {
            let mut bucket = context
                .get_stream(stream_of_bucket(CHECKPOINT_BUCKET))
                .await
                .map_err(|e| unavailable("the checkpoint store", e))?;
            let mut wanted =
                bucket.info().await.map_err(|e| unavailable("the checkpoint store", e))?.config.clone();
            wanted.num_replicas = config.replicas;
            context
                .update_stream(wanted)
                .await
                .map_err(|e| unavailable("updating the checkpoint store", e))?;
            done.push(format!("checkpoint store from R{replicas} to R{}", config.replicas));
        }
        Some(_) => {}
    }
    let changed: Vec<String> = existing
        .iter()
        .enumerate()
        .filter(|(_, (_, r))| *r != config.replicas)
        .map(|(shard, (_, r))| format!("{} from R{r} to R{}", stream_name(shard as u32), config.replicas))
        .collect();
    done.extend(changed);
    Ok(done)
}

/// The shard streams there are now, in order: each one's (shard, shard count) and
/// replicas. Empty when the cluster was never laid out.
async fn existing_streams(context: &jetstream::Context) -> Result<Vec<((u32, u32), usize)>, LogError> {
    let mut found = Vec::new();
    let mut shards = 1;
    let mut shard = 0;
    while shard < shards {
        let mut stream = match context.get_stream(stream_name(shard)).await {
            Ok(stream) => stream,
            Err(e) if shard == 0 && not_found(&e) => return Ok(found),
            Err(e) => return Err(unavailable("reading the layout", e)),
        };
        let info = stream.info().await.map_err(|e| unavailable("reading the layout", e))?;
        let Some((of, total)) = described(info.config.description.as_deref()).filter(|(of, _)| *of == shard)
        else {
            return Err(refused(format!(
                "stream {} is not an Ostrakon log shard ({:?})",
                stream_name(shard),
                info.config.description
            )));
        };
        shards = total;
        found.push(((of, total), info.config.num_replicas));
        shard += 1;
    }
    Ok(found)
}

/// The checkpoint bucket's replicas, if it exists.
async fn bucket_replicas(context: &jetstream::Context) -> Result<Option<usize>, LogError> {
    match context.get_stream(stream_of_bucket(CHECKPOINT_BUCKET)).await {
        Ok(mut stream) => {
            let info = stream.info().await.map_err(|e| unavailable("the checkpoint store", e))?;
            Ok(Some(info.config.num_replicas))
        }
        Err(e) if not_found(&e) => Ok(None),
        Err(e) => Err(unavailable("the checkpoint store", e)),
    }
}

/// How many namespaces have a log in `streams`.
async fn namespaces_in(
    context: &jetstream::Context,
    streams: &[((u32, u32), usize)],
) -> Result<usize, LogError> {
    let mut held = 0;
    for ((shard, _), _) in streams {
        let stream = context
            .get_stream(stream_name(*shard))
            .await
            .map_err(|e| unavailable("reading the layout", e))?;
        let mut subjects = stream
            .info_with_subjects(format!("mnemo.log.{shard}.*"))
            .await
            .map_err(|e| unavailable("listing namespaces", e))?;
        while subjects.try_next().await.map_err(|e| unavailable("listing namespaces", e))?.is_some() {
            held += 1;
        }
    }
    Ok(held)
}

/// The shard streams and the checkpoint bucket's stream of a laid-out cluster, checked
/// against what this node's configuration expects (`config.expect_shards`,
/// `config.expect_replicas`): a disagreement is refused, naming both values.
pub(crate) async fn read(
    context: &jetstream::Context,
    config: &ClusterConfig,
) -> Result<(Vec<stream::Stream>, stream::Stream), LogError> {
    let mut streams = Vec::new();
    let mut shards = 1;
    let mut shard = 0;
    while shard < shards {
        let mut stream = context.get_stream(stream_name(shard)).await.map_err(|e| {
            unavailable(&format!("stream {} (run `ostrakon cluster init`)", stream_name(shard)), e)
        })?;
        let info = stream.info().await.map_err(|e| unavailable("stream info", e))?;
        match described(info.config.description.as_deref()) {
            Some((of, total)) if of == shard && (shard == 0 || total == shards) => shards = total,
            _ => {
                return Err(refused(format!(
                    "stream {} is not an Ostrakon log shard ({:?})",
                    stream_name(shard),
                    info.config.description
                )));
            }
        }
        if shards == 0 || shards > MAX_SHARDS {
            return Err(refused(format!("{shards} shards")));
        }
        if shard == 0
            && let Some(expected) = config.expect_shards
            && expected != shards
        {
            return Err(refused(format!(
                "this node is configured for {expected} shard streams; the cluster has {shards} \
                 (set shards = {shards}, or leave it out to take the cluster's)"
            )));
        }
        if let Some(expected) = config.expect_replicas
            && info.config.num_replicas < expected
        {
            return Err(refused(format!(
                "this node is configured for R{expected}; stream {} is R{} (raise it with `ostrakon cluster \
                 init --replicas {expected}`, or configure replicas = {})",
                stream_name(shard),
                info.config.num_replicas,
                info.config.num_replicas
            )));
        }
        streams.push(stream);
        shard += 1;
    }
    let checkpoints = context
        .get_stream(stream_of_bucket(CHECKPOINT_BUCKET))
        .await
        .map_err(|e| unavailable("the checkpoint store (run `ostrakon cluster init`)", e))?;
    Ok((streams, checkpoints))
}
