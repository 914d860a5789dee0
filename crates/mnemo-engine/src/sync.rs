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
