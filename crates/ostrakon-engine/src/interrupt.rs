//! Cooperative interruption of long work: a deadline and a cancel flag that a caller
//! attaches to the work it runs on one thread ([`Interrupt::run`]).
//!
//! The engine checks them where work can grow with the data — at the start of every read,
//! between the phases of a search, in the loops of the topic network and consolidation —
//! and stops with [`ReadError::Interrupted`]. A server sets a deadline per request and
//! cancels when the client goes away; nothing here runs a thread or a timer. Reads only
//! read, so stopping one leaves nothing behind; a write is decided and appended as one
//! step and is never interrupted half-way.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::error::read::ReadError;

/// A deadline and a cancel flag, shared between the work and whoever may stop it. Cheap to
/// clone.
#[derive(Clone, Debug, Default)]
pub struct Interrupt {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    cancelled: AtomicBool,
    deadline: Option<Instant>,
    /// Cancelling the parent (a server that stops) stops this work too.
    parent: Option<Interrupt>,
}

thread_local! {
    static CURRENT: RefCell<Option<Interrupt>> = const { RefCell::new(None) };
}

impl Interrupt {
    /// An interrupt that fires at `deadline` (if any) or when [`Interrupt::cancel`]led.
    pub fn new(deadline: Option<Instant>) -> Self {
        Interrupt { inner: Arc::new(Inner { cancelled: AtomicBool::new(false), deadline, parent: None }) }
    }

    /// An interrupt for one piece of work under this one: it fires at its own `deadline`,
    /// when cancelled, or when this one fires.
    pub fn child(&self, deadline: Option<Instant>) -> Self {
        Interrupt {
            inner: Arc::new(Inner {
                cancelled: AtomicBool::new(false),
                deadline,
                parent: Some(self.clone()),
            }),
        }
    }

    /// Stops the work at its next check (the client went away, the server is stopping).
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::Relaxed);
    }

    /// Whether the work was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::Relaxed)
    }

    /// Runs `f` on this thread with this interrupt in force: every check the engine makes
    /// inside `f` consults it. Nested calls restore the outer interrupt afterwards.
    pub fn run<T>(&self, f: impl FnOnce() -> T) -> T {
        let previous = CURRENT.with(|c| c.replace(Some(self.clone())));
        struct Restore(Option<Interrupt>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let previous = self.0.take();
                CURRENT.with(|c| *c.borrow_mut() = previous);
            }
        }
        let _restore = Restore(previous);
        f()
    }

    /// The interrupt in force on this thread, if any: for work the engine does not run
    /// itself (a query engine with its own cancellation) to watch.
    pub fn current() -> Option<Interrupt> {
        CURRENT.with(|c| c.borrow().clone())
    }

    /// Why the work must stop, if it must.
    pub fn reason(&self) -> Option<&'static str> {
        if self.is_cancelled() {
            Some("cancelled")
        } else if self.inner.deadline.is_some_and(|d| Instant::now() >= d) {
            Some("deadline passed")
        } else {
            self.inner.parent.as_ref().and_then(Interrupt::reason)
        }
    }
}

/// Fails with [`ReadError::Interrupted`] when the interrupt in force on this thread has
/// fired; `during` says what was stopped. Without one in force it never fails.
pub(crate) fn check(during: &str) -> Result<(), ReadError> {
    let reason = CURRENT.with(|c| c.borrow().as_ref().and_then(Interrupt::reason));
    match reason {
        Some(reason) => Err(ReadError::Interrupted { reason, during: during.to_owned() }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn checks_fire_only_inside_run_and_after_the_deadline_or_cancel() {
        assert!(check("x").is_ok());
        let past = Interrupt::new(Some(Instant::now()));
        assert!(past.run(|| check("reading")).is_err());
        assert!(check("x").is_ok(), "the interrupt is gone once run returns");
        let later = Interrupt::new(Some(Instant::now() + std::time::Duration::from_secs(3600)));
        assert!(later.run(|| check("x")).is_ok());
        later.cancel();
        let err = later.run(|| check("search")).unwrap_err();
        assert!(err.to_string().contains("cancelled"), "{err}");
        // A child fires with its parent.
        let server = Interrupt::new(None);
        let request = server.child(None);
        assert!(request.run(|| check("x")).is_ok());
        server.cancel();
        assert!(request.run(|| check("x")).is_err());
        // Nested: the inner one is in force inside, the outer one again after.
        let outer = Interrupt::new(None);
        outer.run(|| {
            assert!(past.run(|| check("x")).is_err());
            assert!(check("x").is_ok());
        });
    }
}
