//! Lock helpers. A panic in another thread cannot leave the engine's shared structures
//! half-updated in a way a reader could observe (apply is only ever run to completion),
//! so a poisoned lock is taken as it is.

use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard};

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic in another thread cannot leave these structures half-updated in a way a
    // reader could observe (apply is only ever run to completion), so keep going.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(PoisonError::into_inner)
}

/// Stops a background thread fed by `jobs`: hangs up and waits at most `patience` for it
/// to finish. One stuck (an embedder that hangs while loading) is left behind rather than
/// holding up the exit: everything such a thread holds is derived from the log.
pub(crate) fn stop_thread<T>(
    jobs: (std::sync::mpsc::Sender<T>, std::thread::JoinHandle<()>),
    patience: std::time::Duration,
) {
    let (tx, handle) = jobs;
    drop(tx);
    let give_up = std::time::Instant::now() + patience;
    while !handle.is_finished() && std::time::Instant::now() < give_up {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    if handle.is_finished() {
        let _ = handle.join();
    }
}
