//! One namespace while it is open: its log, its folded index, its writer and search
//! indexes, and how a durable batch is published (applied in log order, handed to those
//! who follow the log and to the indexer).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, AtomicU64};
use std::sync::{Arc, Condvar, Mutex, RwLock};

use ostrakon_core::{Event, Namespace, Seq, Timestamp};
use ostrakon_index::NamespaceIndex;
use ostrakon_log::RecordLog;

use crate::read::sweeps::Sweeps;
use crate::retrieve::index::SearchIndex;
use crate::sync::lock;
use crate::sync::read;
use crate::write::writer::Writer;

thread_local! {
    /// Set while background upkeep runs on this thread: what it reads and writes does
    /// not count as use, so that upkeep never keeps an idle namespace open.
    pub(crate) static UPKEEP: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` as background upkeep (see `UPKEEP`).
pub(crate) fn as_upkeep<T>(f: impl FnOnce() -> T) -> T {
    let was = UPKEEP.with(|u| u.replace(true));
    let out = f();
    UPKEEP.with(|u| u.set(was));
    out
}

/// A batch as committed, for those who follow the log.
#[derive(Clone, Debug, PartialEq)]
pub struct CommittedBatch {
    /// Its namespace.
    pub namespace: Namespace,
    /// Its position in the namespace's log.
    pub seq: Seq,
    /// Its system time.
    pub system_time: Timestamp,
    /// Its events.
    pub events: Vec<Event>,
}

/// Called with every batch once it is durable and applied, in log order per namespace.
/// It runs on the writer's thread while the namespace's next batches wait: keep it short
/// (hand the batch to a channel).
pub type CommitListener = Arc<dyn Fn(&CommittedBatch) + Send + Sync>;

pub(crate) type Listeners = RwLock<Vec<CommitListener>>;

/// One namespace: its log, its index, its writer, and the batches durable but not yet
/// applied. Lock order: `writer` before `index`; `pending` before `index`; `writer` is
/// never taken while `index` is held.
pub(crate) struct Shard {
    pub(crate) name: Namespace,
    pub(crate) log: Box<dyn RecordLog>,
    pub(crate) index: RwLock<NamespaceIndex>,
    /// Full-text and vector indexes, fed by the indexer.
    pub(crate) search: SearchIndex,
    /// Held from validating a batch until the log has given it its seq.
    pub(crate) writer: Mutex<Writer>,
    /// Batches durable in the log, waiting for their predecessors to be applied.
    pub(crate) pending: Mutex<BTreeMap<u64, (Timestamp, Vec<Event>)>>,
    pub(crate) applied: Condvar,
    /// Held by a segmentation run.
    pub(crate) segmenting: Mutex<()>,
    /// When it was last asked for (the store's clock, µs): idle namespaces are closed.
    pub(crate) last_used: AtomicI64,
    /// The last batch that background upkeep has seen: a namespace closes only once
    /// upkeep has caught up with every write (nothing due is left behind).
    pub(crate) maintained: AtomicU64,
    /// The batch and log size of its newest checkpoint (loaded or written).
    pub(crate) checkpointed: Mutex<(Seq, u64)>,
    /// Its state's estimated bytes, and the batch they were estimated at.
    pub(crate) state_bytes: Mutex<(Seq, u64)>,
    /// Stretches in force by (S, predicate), kept for counts at any T (derived, dropped
    /// with the shard): see `analytics.rs`.
    pub(crate) sweeps: Sweeps,
    /// Set once an erasure is queued: nothing more is queued on this log (it is about to
    /// be rewritten); writers wait for the namespace to open again.
    pub(crate) retired: std::sync::atomic::AtomicBool,
    /// Why the log is damaged, once a batch of it was refused by the applier: nothing
    /// after that batch is applied, and whoever waits for it is told.
    pub(crate) damage: Mutex<Option<String>>,
}

impl Shard {
    /// Its state's estimated bytes (`NamespaceIndex::heap_bytes`), estimated again only
    /// after a batch: the estimate walks every fact.
    pub(crate) fn state_bytes(&self) -> u64 {
        let index = read(&self.index);
        let mut cached = lock(&self.state_bytes);
        if cached.0 != index.last_seq() {
            *cached = (index.last_seq(), index.heap_bytes());
        }
        cached.1 + self.sweeps.heap_bytes() as u64
    }
}
