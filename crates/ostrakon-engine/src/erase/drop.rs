//! Dropping a namespace: its log, checkpoint, search indexes and saved vectors removed,
//! its texts forgotten by the embedding cache, its name free again — here, and on a
//! shared log on every node that had it open (`Store::close_dropped`, when its log turns
//! out gone: `LogError::Dropped`).
//!
//! A read that pinned its read point before the drop and resolves a field after it gets
//! [`StorageError::NamespaceDropped`] rather than an answer about nothing (or about a new
//! namespace of the same name that has not reached its batch yet), until the name is used
//! again here.

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use ostrakon_core::Namespace;

use crate::error::storage::StorageError;
use crate::shard::Shard;
use crate::store::Store;
use crate::sync::{lock, read};

impl Store {
    /// Removes a namespace whole: its log, checkpoint, search indexes and saved vectors,
    /// and its texts from the embedding cache; the name is free again (a write to it
    /// starts a new, empty namespace). Returns whether there was one to drop. Writes in
    /// flight finish first; writes that come while it drops go to the new namespace. On a
    /// shared log the stream's messages are securely deleted one by one, and every other
    /// node that has the namespace open closes it when it next reads its log.
    pub fn drop_namespace(&self, ns: &Namespace) -> Result<bool, StorageError> {
        let shard = {
            let _opening = self.opening_lock(ns);
            // From here nobody opens the namespace until it is gone.
            lock(&self.compacting).insert(ns.clone());
            self.shards.write().unwrap_or_else(PoisonError::into_inner).remove(ns)
        };
        let outcome = self.drop_marked(ns, shard);
        {
            let _opening = lock(&self.opening);
            lock(&self.compacting).remove(ns);
        }
        self.compacted.notify_all();
        outcome
    }

    /// The work of [`Store::drop_namespace`], with the namespace marked compacting.
    fn drop_marked(&self, ns: &Namespace, open: Option<Arc<Shard>>) -> Result<bool, StorageError> {
        // A closed namespace is opened only for the embedding cache to forget its texts.
        let embeds = self.retrieval.has_embedder();
        let exists = open.is_some() || read(&self.known).contains(ns) || self.backend.shared();
        let shard = match open {
            Some(shard) => Some(shard),
            None if embeds && exists && !read(&self.damaged).contains_key(ns) => match self.open_shard(ns) {
                Ok(shard) if shard.log.last_seq() > 0 => Some(Arc::new(shard)),
                Ok(_) => None,
                Err(e @ StorageError::Unavailable { .. }) => return Err(e),
                Err(_) => None,
            },
            None => None,
        };
        let (texts, embedders) = match &shard {
            Some(shard) => {
                let texts = self.retire_for_good(shard, embeds);
                (texts, self.retrieval.embedders_used(&read(&shard.index)))
            }
            None => Default::default(),
        };
        let existed = shard.is_some() || read(&self.known).contains(ns) || self.log_has_records(ns)?;
        if !existed {
            return Ok(false);
        }
        self.forget_namespace(ns);
        drop(shard);
        self.backend.remove(ns.as_str()).map_err(|source| StorageError::of_log(ns, source))?;
        self.remove_search_dir(ns)?;
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        for embedder in embedders {
            embedder.forget(&texts).map_err(|e| StorageError::Index(e.to_string()))?;
        }
        tracing::info!(namespace = %ns, "namespace dropped");
        Ok(true)
    }

    /// Whether a namespace that is not open here has a log with records (on a shared log
    /// another node may have written one this node never opened).
    fn log_has_records(&self, ns: &Namespace) -> Result<bool, StorageError> {
        if !self.backend.shared() {
            return Ok(false);
        }
        let names = self.backend.list().map_err(|source| StorageError::of_log(ns, source))?;
        Ok(names.iter().any(|n| n == ns.as_str()))
    }

    /// Retires a shard that will not open again: nothing is queued after this, what was
    /// queued before is applied, the indexer is done with it. Returns its texts when an
    /// embedding cache must forget them.
    fn retire_for_good(&self, shard: &Shard, texts: bool) -> std::collections::HashSet<String> {
        {
            let _writer = lock(&shard.writer);
            shard.retired.store(true, Ordering::SeqCst);
        }
        self.settle(shard);
        self.abandon_search(shard);
        if texts { crate::retrieve::docs::all_texts(&read(&shard.index)) } else { Default::default() }
    }

    /// Forgets everything this store keeps about a namespace, and marks it dropped.
    fn forget_namespace(&self, ns: &Namespace) {
        self.shards.write().unwrap_or_else(PoisonError::into_inner).remove(ns);
        self.known.write().unwrap_or_else(PoisonError::into_inner).remove(ns);
        self.damaged.write().unwrap_or_else(PoisonError::into_inner).remove(ns);
        lock(&self.sleeping).remove(ns);
        lock(&self.truncations).remove(ns);
        lock(&self.dropped).insert(ns.clone());
    }

    /// Another node dropped a namespace open here (its log is gone, or begins anew):
    /// closes it and drops this node's own copies (search indexes, the embedding cache's
    /// texts). The next use opens what the log holds now.
    pub(crate) fn close_dropped(&self, shard: &Arc<Shard>) -> StorageError {
        let ns = &shard.name;
        let already = {
            let _writer = lock(&shard.writer);
            shard.retired.swap(true, Ordering::SeqCst)
        };
        if !already {
            let texts = self.retire_for_good(shard, self.retrieval.has_embedder());
            let embedders = self.retrieval.embedders_used(&read(&shard.index));
            {
                let _opening = self.opening_lock(ns);
                let current = read(&self.shards).get(ns).is_some_and(|s| Arc::ptr_eq(s, shard));
                if current {
                    self.forget_namespace(ns);
                }
                if let Err(e) = self.remove_search_dir(ns) {
                    tracing::warn!(namespace = %ns, error = %e, "a dropped namespace's search files stay");
                }
            }
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            for embedder in embedders {
                if let Err(e) = embedder.forget(&texts) {
                    tracing::warn!(namespace = %ns, error = %e, "the embedding cache keeps a dropped namespace's texts");
                }
            }
            tracing::info!(namespace = %ns, "namespace dropped by another node; closed here");
        }
        StorageError::NamespaceDropped { namespace: ns.to_string() }
    }

    /// Whether the namespace was dropped while this store ran and its name not used since.
    pub(crate) fn was_dropped(&self, ns: &Namespace) -> bool {
        lock(&self.dropped).contains(ns)
    }
}
