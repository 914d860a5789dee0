//! A memory budget for the query evaluated on the current thread (patched in).
//!
//! Joins are bounded by the cancellation token's budget of results, but a query can hold
//! memory without joining: strings built by `CONCAT` (doubled forty times: terabytes),
//! the closure of a property path, the solutions an `ORDER BY`, `DISTINCT` or `GROUP BY`
//! keeps, the build side of a hash join. Each of those places charges an estimate of the
//! bytes it keeps to this budget; once it is spent, [`CancellationToken`] checks fail
//! everywhere (the query stops at its next check) and the place that overspent stops
//! growing. A single string longer than [`MAX_STRING_BYTES`] is refused before it is
//! built.
//!
//! The budget is per thread because evaluation is (the evaluator uses `Rc` throughout):
//! the caller enters it on the thread that pulls the results, with [`MemoryBudget::enter`].
//!
//! [`CancellationToken`]: crate::CancellationToken

use std::cell::Cell;

/// Longest string a function (`CONCAT`, `REPLACE`, `GROUP_CONCAT`…) may build.
pub const MAX_STRING_BYTES: usize = 16 * 1024 * 1024;

/// Bytes assumed for each entry of a hash set or map beyond its value (hash, control
/// bytes, load factor).
pub(crate) const ENTRY_OVERHEAD: usize = 24;

thread_local! {
    /// Bytes the query on this thread may still keep; `None` when no budget is entered.
    static LEFT: Cell<Option<u64>> = const { Cell::new(None) };
    /// Whether it overspent.
    static EXHAUSTED: Cell<bool> = const { Cell::new(false) };
}

/// A budget entered on this thread; leaving it (dropping) lifts it.
#[must_use = "the budget holds only while this is alive"]
pub struct MemoryBudget {
    _not_send: std::marker::PhantomData<*const ()>,
}

impl MemoryBudget {
    /// Gives the evaluation on this thread `bytes` to keep.
    pub fn enter(bytes: u64) -> Self {
        LEFT.with(|l| l.set(Some(bytes)));
        EXHAUSTED.with(|e| e.set(false));
        Self { _not_send: std::marker::PhantomData }
    }

    /// Whether the evaluation on this thread overspent its budget.
    pub fn is_exhausted(&self) -> bool {
        exhausted()
    }
}

impl Drop for MemoryBudget {
    fn drop(&mut self) {
        LEFT.with(|l| l.set(None));
        EXHAUSTED.with(|e| e.set(false));
    }
}

/// Whether the budget entered on this thread is spent.
pub(crate) fn exhausted() -> bool {
    EXHAUSTED.with(Cell::get)
}

/// Spends `bytes`; `false` (and the budget marked spent) when they do not fit.
pub(crate) fn charge(bytes: usize) -> bool {
    LEFT.with(|l| match l.get() {
        None => true,
        Some(left) => {
            let bytes = u64::try_from(bytes).unwrap_or(u64::MAX);
            if bytes > left || exhausted() {
                EXHAUSTED.with(|e| e.set(true));
                l.set(Some(0));
                false
            } else {
                l.set(Some(left - bytes));
                true
            }
        }
    })
}

/// Whether a string of `len` bytes may be built: at most [`MAX_STRING_BYTES`], and
/// within the budget (spent on it). A string refused under a budget marks it spent.
pub(crate) fn string(len: usize) -> bool {
    string_fits(len) && charge(len)
}

/// Whether a string may grow to `len` bytes (nothing is spent): at most
/// [`MAX_STRING_BYTES`]. A string refused under a budget marks it spent.
pub(crate) fn string_fits(len: usize) -> bool {
    if len > MAX_STRING_BYTES {
        if LEFT.with(Cell::get).is_some() {
            EXHAUSTED.with(|e| e.set(true));
        }
        return false;
    }
    true
}

/// The bytes an entry of `size` bytes keeps in a hash set or a vector.
pub(crate) fn entry(size: usize) -> usize {
    size + ENTRY_OVERHEAD
}
