//! The engine calls its log synchronously, from any thread (a request's blocking task, a
//! test's thread, a Tokio worker); the NATS client is async. The backend owns a small
//! runtime and every call is a task on it whose result comes back over a channel:
//! `Runtime::block_on` would panic on a thread that is already inside a runtime.

use std::future::Future;

use ostrakon_log::LogError;

/// A runtime of its own, with one worker: NATS I/O is light, and the engine's threads
/// only wait for it.
pub(crate) struct Bridge {
    runtime: tokio::runtime::Runtime,
}

impl Bridge {
    pub(crate) fn new() -> Result<Self, LogError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("ostrakon-nats")
            .enable_all()
            .build()?;
        Ok(Bridge { runtime })
    }

    pub(crate) fn handle(&self) -> &tokio::runtime::Handle {
        self.runtime.handle()
    }

    /// Runs `work` on the runtime and waits for its result.
    pub(crate) fn run<T: Send + 'static>(
        &self,
        work: impl Future<Output = T> + Send + 'static,
    ) -> Result<T, LogError> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.runtime.spawn(async move {
            let _ = tx.send(work.await);
        });
        // No answer: the task panicked (async-nats 0.47's object store unwraps a timed-out
        // chunk request while reading, `Object::poll_read`), which the runtime contains, or
        // the runtime stopped. Either way the call failed, and nothing was acknowledged.
        rx.recv().map_err(|_| LogError::Unavailable {
            reason: "the NATS client failed (a task of its runtime panicked or stopped)".into(),
        })
    }
}
