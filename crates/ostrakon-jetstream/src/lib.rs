//! Ostrakon's log on NATS JetStream: the record-level log seam ([`ostrakon_log::LogBackend`])
//! over replicated streams, so that several Ostrakon nodes serve the same namespaces.
//!
//! - **Streams.** A fixed number of shard streams (`MNEMO_LOG_<shard>`), each holding the
//!   subjects `mnemo.log.<shard>.<namespace>`: a namespace is one subject, not one stream,
//!   so 10,000 namespaces are 16 Raft groups, not 10,000.
//! - **Records.** A message is one or more of the file log's checksummed frames back to
//!   back (`ostrakon_log::encode_frame`), verified when read back: the batch seq and system
//!   time live in the frame, so every node numbers batches alike.
//! - **Appends.** A batch is published with `Nats-Expected-Last-Subject-Sequence` set to
//!   the stream sequence of the namespace's last record this node knows: if another node
//!   appended first, JetStream refuses it and the writer catches up and prepares again.
//!   A message id (`Nats-Msg-Id`) makes a retried publish land once. Batches queued while
//!   one publish is in flight go out together in the next (group commit).
//! - **Checkpoints** go to the object store bucket `mnemo-checkpoints`.
//! - **Erasure.** A message an erasure changed is replaced (the new frames on
//!   `<subject>.redo`, naming the message they replace) and securely deleted; a
//!   checkpoint is removed by securely deleting its chunks (`rewrite.rs`).
//!
//! Every call here blocks (the engine is synchronous): the backend runs its own small
//! Tokio runtime and hands work to it.

mod answers;
mod backend;
mod bridge;
mod config;
mod handle;
mod handover;
mod layout;
mod link;
mod objects;
mod probe;
mod reading;
mod rewrite;
mod subjects;
mod tails;
mod wal;

pub use backend::JetStreamBackend;
pub use config::ClusterConfig;
pub use objects::CHECKPOINT_BUCKET;
pub use subjects::{namespace_of, subject_of};
