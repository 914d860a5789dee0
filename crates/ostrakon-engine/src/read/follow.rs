//! Following what other nodes append, on a log they share: a read that names a batch
//! this node has not applied yet waits for it (read-your-writes across nodes), and a
//! follower thread applies other nodes' batches as they come, so that subscriptions and
//! plain reads here see them within milliseconds.

use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use ostrakon_core::{Namespace, Seq};

use crate::error::read::ReadError;
use crate::error::storage::StorageError;
use crate::limits::MAX_CATCH_UP_WAIT;
use crate::shard::{Shard, as_upkeep};
use crate::store::Store;
use crate::sync::read;

/// How often the follower catches every open namespace up even without a hint (hints
/// come from ordered consumers, which skip what they miss while they are recreated).
const SWEEP_EVERY: Duration = Duration::from_secs(2);

impl Store {
    /// Waits until `shard` has applied batch `seq`, catching up with its shared log, for
    /// at most [`MAX_CATCH_UP_WAIT`] (less if the caller's deadline comes first). Returns
    /// at once on a log with one writer: what it has not applied does not exist.
    pub(crate) fn await_seq(&self, shard: &Arc<Shard>, seq: Seq) -> Result<(), ReadError> {
        if read(&shard.index).last_seq() >= seq || shard.log.exclusive() {
            return Ok(());
        }
        let started = Instant::now();
        loop {
            match self.catch_up_shard(shard) {
                Ok(applied) if applied >= seq => return Ok(()),
                Ok(_) => {}
                // The log may not answer for a moment (a stream electing its leader): the
                // read waits on, and past its bound answers `NotYetKnown` with how far
                // this node got, as it would had the batch not come.
                Err(StorageError::Unavailable { reason, .. }) => {
                    tracing::debug!(namespace = %shard.name, reason, "catching up for a read; the log does not answer yet");
                }
                Err(e) => return Err(e.into()),
            }
            if started.elapsed() >= MAX_CATCH_UP_WAIT {
                return Ok(());
            }
            crate::interrupt::check("waiting for a batch another node wrote")?;
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// On a shared log, starts the thread that applies other nodes' batches to the open
    /// namespaces as the backend hears of them (and every couple of seconds regardless).
    /// Does nothing on a log with one writer. The thread ends with the store.
    pub fn follow_others(self: &Arc<Self>) {
        if !self.backend.shared() {
            return;
        }
        let (tx, rx) = channel::<String>();
        self.backend.watch(Arc::new(move |name: &str| {
            let _ = tx.send(name.to_owned());
        }));
        let store = Arc::downgrade(self);
        let spawned =
            std::thread::Builder::new().name("ostrakon-follow".into()).spawn(move || follow(&store, &rx));
        if let Err(e) = spawned {
            tracing::error!(error = %e, "cannot start the follower: other nodes' writes are seen on reads only");
        }
    }
}

fn follow(store: &Weak<Store>, hints: &Receiver<String>) {
    let mut swept = Instant::now();
    loop {
        let hint = hints.recv_timeout(SWEEP_EVERY);
        let Some(store) = store.upgrade() else { return };
        let mut hinted: Vec<String> = match hint {
            Ok(name) => std::iter::once(name).chain(hints.try_iter()).collect(),
            Err(RecvTimeoutError::Timeout) => Vec::new(),
            Err(RecvTimeoutError::Disconnected) => return,
        };
        hinted.sort();
        hinted.dedup();
        let open = |name: &str| {
            let ns = Namespace::new("namespace", name).ok()?;
            // Only namespaces open here: a closed one reads the log when it opens.
            read(&store.shards).get(&ns).cloned()
        };
        for name in &hinted {
            if let Some(shard) = open(name) {
                catch_up_on_hint(&store, &shard);
            }
        }
        if swept.elapsed() >= SWEEP_EVERY {
            swept = Instant::now();
            for ns in store.open_namespace_names() {
                if let Some(shard) = open(ns.as_str())
                    && let Err(e) = as_upkeep(|| follow_one(&store, &shard))
                    && !matches!(e, StorageError::NamespaceDropped { .. })
                {
                    tracing::warn!(namespace = %ns, error = %e, "following another node's writes failed; retrying");
                }
            }
        }
    }
}

/// Applies what another node appended to `shard`. An erasure it brings is forgotten on
/// a thread of its own (compacting reads the namespace's whole log), so that following
/// every other namespace goes on meanwhile; the shard is retired at once, so reads and
/// writes wait for the namespace to open again rather than see what was erased.
fn follow_one(store: &Arc<Store>, shard: &Arc<Shard>) -> Result<Seq, StorageError> {
    if shard.retired.load(std::sync::atomic::Ordering::SeqCst) {
        // Being compacted or dropped: the namespace opened again is followed instead.
        return Ok(read(&shard.index).last_seq());
    }
    if store.apply_new(shard)? {
        if !store.begin_forgetting(shard) {
            return Ok(read(&shard.index).last_seq());
        }
        let finish = |store: &Store, shard: &Arc<Shard>| {
            if let Err(e) = store.finish_forgetting(shard) {
                tracing::warn!(namespace = %shard.name, error = %e, "forgetting another node's erasure failed; the next open compacts");
            }
        };
        let (owned_store, owned_shard) = (Arc::clone(store), Arc::clone(shard));
        let spawned = std::thread::Builder::new()
            .name("ostrakon-forget".into())
            .spawn(move || finish(&owned_store, &owned_shard));
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "cannot start a thread to forget an erasure; forgetting it here");
            finish(store, shard);
        }
    }
    Ok(read(&shard.index).last_seq())
}

/// Catches `shard` up after a hint that it moved. A replica that answers the read may
/// not hold the new record yet: when nothing new comes, it looks again a few times
/// within about 50 ms (the sweep catches anything later).
fn catch_up_on_hint(store: &Arc<Store>, shard: &Arc<Shard>) {
    let before = read(&shard.index).last_seq();
    for pause in [0, 1, 2, 4, 8, 15, 20] {
        std::thread::sleep(Duration::from_millis(pause));
        match as_upkeep(|| follow_one(store, shard)) {
            Ok(now) if now > before => return,
            Ok(_) => {}
            Err(StorageError::NamespaceDropped { .. }) => return,
            Err(e) => {
                tracing::warn!(namespace = %shard.name, error = %e, "following another node's writes failed; retrying");
                return;
            }
        }
    }
}
