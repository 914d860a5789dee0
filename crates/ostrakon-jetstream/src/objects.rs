//! Checkpoints and saved search vectors in the object store bucket, written so that every
//! copy can be found and securely deleted.
//!
//! The bytes are stored in JetStream's object store format (chunks on
//! `$O.<bucket>.C.<nuid>`, the object's description on `$O.<bucket>.M.<name>`, rolled
//! up), so `nats object get` reads them — but not through the client's `put`, which
//! replaces an object by *purging* the old chunks: a purge only marks them deleted, and
//! their bytes stay in the servers' block files until a compaction happens to rewrite
//! them, so a checkpoint replaced before an erasure kept the erased text on disk. Here:
//!
//! - A version's chunks go on a subject of its namespace, `$O.<bucket>.C.<namespace>.<version>`,
//!   so that every version of a namespace's objects — the current one, one replaced, one a
//!   crash or a race between two nodes left behind — is found by one subject filter.
//! - Replacing an object writes the new chunks, then the description, then securely
//!   deletes each chunk of the version it replaced (`STREAM.MSG.DELETE` without
//!   `no_erase`: every server overwrites the message's bytes).
//! - An erasure or a drop securely deletes every chunk under the namespace's filter, then
//!   marks the objects deleted.
//! - Reading takes the chunks with bounded gets (the client's reader waits forever for
//!   chunks that were deleted meanwhile), and checks their size and digest: an object whose
//!   chunks are gone or short is unreadable, never taken for a whole one. Checkpoints are
//!   derived, so unreadable only costs a replay.

use std::collections::HashMap;

use async_nats::HeaderMap;
use async_nats::jetstream::object_store::ObjectInfo;
use async_nats::jetstream::stream::Stream;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE;
use futures_util::TryStreamExt;
use ostrakon_log::LogError;
use sha2::{Digest, Sha256};

use crate::link::Link;
use crate::reading::{self, Get, unavailable};
use crate::rewrite::erase_subject;

/// The object store bucket that keeps checkpoints, and the search vectors beside them.
pub const CHECKPOINT_BUCKET: &str = "mnemo-checkpoints";

/// Bytes per chunk (the object store's own default).
const CHUNK: usize = 128 * 1024;

/// The stream behind a bucket.
pub(crate) fn stream_of_bucket(bucket: &str) -> String {
    format!("OBJ_{bucket}")
}

fn meta_subject(bucket: &str, name: &str) -> String {
    format!("$O.{bucket}.M.{}", URL_SAFE.encode(name))
}

fn chunk_subject(bucket: &str, nuid: &str) -> String {
    format!("$O.{bucket}.C.{nuid}")
}

/// The subject token of a namespace (its dots would split it into tokens).
fn token(namespace: &str) -> String {
    namespace.replace('.', "=")
}

/// Objects of one bucket.
pub(crate) struct Objects<'a> {
    pub(crate) link: &'a Link,
    pub(crate) stream: &'a Stream,
    pub(crate) bucket: &'a str,
}

impl Objects<'_> {
    /// The description of object `name`, if it has one (deleted or not).
    async fn info(&self, name: &str) -> Result<Option<ObjectInfo>, LogError> {
        let Some(m) = reading::get(self.stream, &meta_subject(self.bucket, name), Get::Last).await? else {
            return Ok(None);
        };
        serde_json::from_slice(&m.payload)
            .map(Some)
            .map_err(|e| unavailable("reading an object's description", e))
    }

    /// Object `name`'s bytes; `None` when there is none (or it was deleted). An error
    /// when its chunks cannot be read whole (gone, short, or not what its digest says).
    pub(crate) async fn get(&self, name: &str) -> Result<Option<Vec<u8>>, LogError> {
        let Some(info) = self.info(name).await? else { return Ok(None) };
        if info.deleted {
            return Ok(None);
        }
        let subject = chunk_subject(self.bucket, &info.nuid);
        let mut bytes = Vec::with_capacity(info.size);
        if info.chunks > 0 {
            let Some(last) = reading::get(self.stream, &subject, Get::Last).await? else {
                return Err(unavailable("reading an object", format!("{name}: its chunks are gone")));
            };
            let last = last.sequence;
            for raw in reading::read_raw(self.stream, &subject, 1, last).await? {
                bytes.extend_from_slice(&raw.payload);
            }
        }
        let digest = format!("SHA-256={}", URL_SAFE.encode(Sha256::digest(&bytes)));
        if bytes.len() != info.size || info.digest.as_deref().is_some_and(|d| d != digest) {
            return Err(unavailable(
                "reading an object",
                format!("{name}: {} bytes read of {}, or not what its digest says", bytes.len(), info.size),
            ));
        }
        Ok(Some(bytes))
    }

    /// Stores `blob` as object `name` of `namespace` (a new version, `kind` telling which
    /// object of the namespace it is), then securely deletes the version it replaced.
    pub(crate) async fn put(
        &self,
        namespace: &str,
        kind: &str,
        name: &str,
        blob: &[u8],
    ) -> Result<(), LogError> {
        let before = self.info(name).await?;
        let version =
            format!("{}.{kind}-{}-{}", token(namespace), self.link.node, ostrakon_log::system_clock()());
        let subject = chunk_subject(self.bucket, &version);
        let context = &self.link.context;
        let mut acks = Vec::new();
        for chunk in blob.chunks(CHUNK) {
            let ack = context
                .publish(subject.clone(), bytes::Bytes::copy_from_slice(chunk))
                .await
                .map_err(|e| unavailable("storing an object", e))?;
            acks.push(ack);
        }
        for ack in acks {
            ack.await.map_err(|e| unavailable("storing an object", e))?;
        }
        let info = ObjectInfo {
            name: name.to_owned(),
            description: None,
            metadata: HashMap::new(),
            headers: None,
            options: None,
            bucket: self.bucket.to_owned(),
            nuid: version.clone(),
            size: blob.len(),
            chunks: blob.len().div_ceil(CHUNK),
            modified: None,
            digest: Some(format!("SHA-256={}", URL_SAFE.encode(Sha256::digest(blob)))),
            deleted: false,
        };
        self.describe(name, &info).await?;
        if let Some(old) = before.filter(|old| old.nuid != version && !old.nuid.is_empty()) {
            erase_subject(self.stream, &chunk_subject(self.bucket, &old.nuid)).await?;
        }
        Ok(())
    }

    /// Publishes `info` as object `name`'s description, in place of the ones before it.
    async fn describe(&self, name: &str, info: &ObjectInfo) -> Result<(), LogError> {
        let mut headers = HeaderMap::new();
        headers.insert("Nats-Rollup", "sub");
        let body = serde_json::to_vec(info).map_err(|e| unavailable("describing an object", e))?;
        self.link
            .context
            .publish_with_headers(meta_subject(self.bucket, name), headers, body.into())
            .await
            .map_err(|e| unavailable("describing an object", e))?
            .await
            .map_err(|e| unavailable("describing an object", e))?;
        Ok(())
    }

    /// Securely deletes every version of every object of `namespace` (named `names`),
    /// then marks those objects deleted. Returns how many chunks were deleted.
    pub(crate) async fn erase_namespace(&self, namespace: &str, names: &[String]) -> Result<usize, LogError> {
        let mut erased = 0;
        let mut described = Vec::new();
        for name in names {
            if let Some(info) = self.info(name).await? {
                // A version written before chunks were kept under their namespace.
                if !info.deleted && !info.nuid.is_empty() {
                    erased += erase_subject(self.stream, &chunk_subject(self.bucket, &info.nuid)).await?;
                }
                described.push(info);
            }
        }
        let filter = chunk_subject(self.bucket, &format!("{}.>", token(namespace)));
        let mut subjects = Vec::new();
        let stream = self.stream.clone();
        let mut listed = stream
            .info_with_subjects(filter)
            .await
            .map_err(|e| unavailable("listing an object's chunks", e))?;
        while let Some((subject, _)) =
            listed.try_next().await.map_err(|e| unavailable("listing an object's chunks", e))?
        {
            subjects.push(subject);
        }
        for subject in subjects {
            erased += erase_subject(self.stream, &subject).await?;
        }
        for mut info in described.into_iter().filter(|i| !i.deleted) {
            info.deleted = true;
            info.size = 0;
            info.chunks = 0;
            info.digest = None;
            self.describe(&info.name.clone(), &info).await?;
        }
        Ok(erased)
    }
}
