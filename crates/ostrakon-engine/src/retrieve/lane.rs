//! The vector lane: the built-in embedder's vectors of live batches, written on a thread
//! of its own behind the batches' text. The embedder runs at a few dozen texts a second
//! on one core; while it works through what was written, the text of later batches goes
//! on being indexed, and a search finds them by their words at once (it waits for their
//! vectors only when it names the batch it reads at).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};

use ostrakon_core::Seq;
use ostrakon_search::{Embedder, VectorIndex};

use crate::retrieve::index::{SearchIndex, Vectors};
use crate::retrieve::query::{EMBED_BATCH, INDEXER_STOP_WAIT};
use crate::shard::Shard;
use crate::sync::{lock, stop_thread};

/// Texts the lane embeds at once: small, so that a new epoch (a rebuild) or the store
/// closing stops it soon.
const LANE_BATCH: usize = 32;

/// The vectors of some live batches, for the lane.
pub(crate) struct VectorWork {
    pub(crate) shard: Arc<Shard>,
    pub(crate) embedder: Arc<dyn Embedder>,
    /// The vector indexes they go to (those of the namespace's mode when queued).
    pub(crate) target: Arc<Vectors>,
    /// (key, text) of records embedded alone, and of episodes in context.
    pub(crate) alone: Vec<(u64, String)>,
    pub(crate) context: Vec<(u64, String)>,
    /// The last of the batches.
    pub(crate) upto: Seq,
    /// The epoch of the vectors they were queued in.
    pub(crate) epoch: u64,
    /// Why the batches' text could not be indexed, if it could not.
    pub(crate) warning: Option<String>,
}

impl VectorWork {
    /// Whether `next` can be embedded with this one: the same namespace, vector indexes
    /// and epoch.
    fn joins(&self, next: &VectorWork) -> bool {
        Arc::ptr_eq(&self.shard, &next.shard)
            && Arc::ptr_eq(&self.target, &next.target)
            && self.epoch == next.epoch
    }

    /// Embeds the texts, `batch` at a time, and marks the batches searchable — unless the
    /// epoch they were queued in is over; `stop` says to stop short.
    pub(crate) fn write(self, batch: usize, stop: &dyn Fn() -> bool) {
        let search = &self.shard.search;
        // Abandoned (erased from, dropped): nothing more of it is embedded.
        let Some(_busy) = search.work() else { return };
        let stop = || stop() || search.epoch() != self.epoch;
        let lists = [(&self.alone[..], &self.target.alone), (&self.context[..], &self.target.context)];
        let (complete, warning) = match embed_into(&*self.embedder, lists, search, batch, &stop) {
            Ok(complete) => (complete, self.warning),
            Err(w) => (false, Some(w)),
        };
        search.settle(self.upto, complete, false, warning, self.epoch);
    }
}

/// The lane's thread, started on first use. Dropping it stops the thread (what is left
/// is derived from the log, and made again when the namespace is next opened).
pub(crate) struct Lane {
    jobs: Mutex<Option<(Sender<VectorWork>, std::thread::JoinHandle<()>)>>,
    closing: Arc<AtomicBool>,
}

impl Lane {
    pub(crate) fn new() -> Self {
        Lane { jobs: Mutex::new(None), closing: Arc::new(AtomicBool::new(false)) }
    }

    /// Queues `work`; back when there is no thread to run it (then it is for the caller).
    pub(crate) fn submit(&self, work: VectorWork) -> Result<(), VectorWork> {
        let mut jobs = lock(&self.jobs);
        if jobs.is_none() {
            let (tx, rx) = channel();
            let closing = Arc::clone(&self.closing);
            match std::thread::Builder::new()
                .name("ostrakon-vectors".into())
                .spawn(move || run(&rx, &closing))
            {
                Ok(handle) => *jobs = Some((tx, handle)),
                Err(_) => return Err(work),
            }
        }
        let Some((tx, _)) = jobs.as_ref() else { return Err(work) };
        if let Err(std::sync::mpsc::SendError(work)) = tx.send(work) {
            // The thread died (it never should): the caller writes the vectors.
            *jobs = None;
            return Err(work);
        }
        Ok(())
    }

    /// Stops the thread: the work in hand is left at its next batch of texts, the work
    /// queued is dropped.
    pub(crate) fn stop(&self) {
        self.closing.store(true, Ordering::SeqCst);
        if let Some(jobs) = lock(&self.jobs).take() {
            stop_thread(jobs, INDEXER_STOP_WAIT);
        }
    }
}

impl Drop for Lane {
    fn drop(&mut self) {
        self.stop();
    }
}

fn run(rx: &Receiver<VectorWork>, closing: &AtomicBool) {
    let mut next = None;
    loop {
        let Some(mut work) = next.take().or_else(|| rx.recv().ok()) else { return };
        // What was queued meanwhile for the same namespace is embedded in the same calls.
        while let Ok(more) = rx.try_recv() {
            if work.joins(&more) {
                work.alone.extend(more.alone);
                work.context.extend(more.context);
                work.upto = more.upto;
                work.warning = more.warning.or(work.warning);
            } else {
                next = Some(more);
                break;
            }
        }
        if !closing.load(Ordering::SeqCst) {
            work.write(LANE_BATCH, &|| closing.load(Ordering::SeqCst));
        }
    }
}

/// Embeds each list's texts into its vector index, `batch` texts at a time, reporting
/// progress in `search`; `Ok(false)` when `stop` said to stop short.
pub(crate) fn embed_into(
    embedder: &dyn Embedder,
    lists: [(&[(u64, String)], &VectorIndex); 2],
    search: &SearchIndex,
    batch: usize,
    stop: &dyn Fn() -> bool,
) -> Result<bool, String> {
    let total = lists.iter().map(|(l, _)| l.len() as u64).sum::<u64>();
    let mut done = 0u64;
    let report = |done: u64, total: u64| lock(&search.progress).embedding = (done, total);
    report(0, total);
    // Nothing left to embed once the run is over, however it ended.
    let _reset = Reset(|| report(0, 0));
    for (list, target) in lists {
        for chunk in list.chunks(batch.clamp(1, EMBED_BATCH)) {
            if stop() || search.is_abandoned() {
                return Ok(false);
            }
            done += chunk.len() as u64;
            let texts: Vec<&str> = chunk.iter().map(|(_, t)| t.as_str()).collect();
            let embedded = embedder.embed(&texts).map_err(|e| format!("embedding failed: {e}"))?;
            let items: Vec<(u64, Vec<f32>)> = chunk.iter().map(|(k, _)| *k).zip(embedded).collect();
            target.upsert(&items).map_err(|e| format!("vector index: {e}"))?;
            report(done, total);
        }
    }
    Ok(true)
}

/// Runs a closure when dropped.
struct Reset<F: Fn()>(F);

impl<F: Fn()> Drop for Reset<F> {
    fn drop(&mut self) {
        (self.0)();
    }
}
