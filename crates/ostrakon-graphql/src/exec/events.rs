//! The feed of committed batches behind the `events` subscription: one per schema, fed
//! by the store's commit hook.

use std::sync::Arc;

use ostrakon_engine::{Store, log::CommittedBatch};

/// The feed of committed batches behind the `events` subscription.
pub type Events = tokio::sync::broadcast::Sender<Arc<CommittedBatch>>;

/// The feed of the store's commits.
pub(crate) fn feed(store: &Store) -> Events {
    let (events, _) = tokio::sync::broadcast::channel::<Arc<CommittedBatch>>(4096);
    let feed = events.clone();
    store.on_commit(Arc::new(move |batch| {
        // No subscriber is not an error.
        let _ = feed.send(Arc::new(batch.clone()));
    }));
    events
}
