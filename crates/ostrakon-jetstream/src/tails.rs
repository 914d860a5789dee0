//! What this node heard appended to each namespace's log, and not yet applied: its lag,
//! measured from the stream rather than from what it happened to read. Every append's
//! message names its last batch (`Mnemo-Last-Batch`), and the node hears every append
//! (headers only) as it is stored; what it has not applied of them, and since when, is
//! how far behind it is.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use ostrakon_log::Behind;

/// Appends heard and not yet known applied, kept per namespace at most this many (the
/// oldest's time and the newest's batch are what count).
const KEPT: usize = 1_024;

/// Per namespace open here (with how many handles have it open): the batches heard (the
/// last of each message), with when, oldest first. Appends to namespaces not open here
/// are not kept: they are read whole when opened.
#[derive(Default)]
pub(crate) struct Tails {
    heard: Mutex<HashMap<String, Tail>>,
}

/// The handles open on one namespace's log, and the batches heard, oldest first.
type Tail = (usize, VecDeque<(u64, Instant)>);

impl Tails {
    /// A handle on `namespace`'s log opened: its appends are kept from now on.
    pub(crate) fn track(&self, namespace: &str) {
        let mut heard = self.heard.lock().unwrap_or_else(PoisonError::into_inner);
        heard.entry(namespace.to_owned()).or_default().0 += 1;
    }

    /// A handle on `namespace`'s log closed; once none is left, nothing of it is kept.
    pub(crate) fn untrack(&self, namespace: &str) {
        let mut heard = self.heard.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((handles, _)) = heard.get_mut(namespace) {
            *handles = handles.saturating_sub(1);
            if *handles == 0 {
                heard.remove(namespace);
            }
        }
    }

    /// Another append to `namespace` ends at batch `last`.
    pub(crate) fn heard(&self, namespace: &str, last: u64) {
        let mut heard = self.heard.lock().unwrap_or_else(PoisonError::into_inner);
        let Some((_, tail)) = heard.get_mut(namespace) else { return };
        if tail.back().is_some_and(|(b, _)| *b >= last) {
            return;
        }
        if tail.len() >= KEPT {
            // Keep the oldest (its time is the lag) and the newest; drop one in between.
            tail.remove(1);
        }
        tail.push_back((last, Instant::now()));
    }

    /// How far what was heard of `namespace` is past batch `applied` (forgetting what is
    /// applied).
    pub(crate) fn behind(&self, namespace: &str, applied: u64) -> Option<Behind> {
        let mut heard = self.heard.lock().unwrap_or_else(PoisonError::into_inner);
        let (_, tail) = heard.get_mut(namespace)?;
        while tail.front().is_some_and(|(b, _)| *b <= applied) {
            tail.pop_front();
        }
        let (&(_, since), &(last, _)) = (tail.front()?, tail.back()?);
        Some(Behind { last, since })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behind_is_the_newest_batch_heard_since_the_oldest_not_applied() {
        let tails = Tails::default();
        tails.heard("a", 1);
        assert_eq!(tails.behind("a", 0), None, "kept before the namespace is open here");
        tails.track("a");
        tails.track("a");
        tails.heard("a", 3);
        let first = tails.behind("a", 0).map(|b| b.since);
        tails.heard("a", 5);
        tails.heard("a", 4);
        let b = tails.behind("a", 2).unwrap();
        assert_eq!((b.last, Some(b.since)), (5, first));
        let b = tails.behind("a", 3).unwrap();
        assert_eq!(b.last, 5);
        assert!(Some(b.since) > first);
        assert_eq!(tails.behind("a", 5), None);
        for i in 6..3_000 {
            tails.heard("a", i);
        }
        let b = tails.behind("a", 5).unwrap();
        assert_eq!(b.last, 2_999);
        tails.untrack("a");
        assert!(tails.behind("a", 5).is_some(), "one handle is still open");
        tails.untrack("a");
        assert_eq!(tails.behind("a", 0), None);
    }
}
