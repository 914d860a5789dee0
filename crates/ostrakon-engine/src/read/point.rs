//! Read points and answers: where a read is pinned ([`ReadAt`], [`KnownAt`]), what an
//! answer was computed from ([`Basis`]), the answer itself ([`Answer`]), the clock reads
//! resolve against, and the checks every read makes of its window and page.

use std::sync::Arc;

use ostrakon_core::{Seq, Timestamp};

use crate::error::read::ReadError;
use crate::limits::MAX_PAGE;

/// The store's clock: now, in UTC microseconds. Injected so that tests can pin it.
pub type Clock = Arc<dyn Fn() -> Timestamp + Send + Sync>;

/// The wall clock.
pub fn system_clock() -> Clock {
    let log_clock = ostrakon_log::system_clock();
    Arc::new(move || Timestamp::from_micros(log_clock()))
}

/// Which system time a read sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum KnownAt {
    /// Everything committed so far.
    #[default]
    Latest,
    /// Batches up to and including this one.
    Seq(Seq),
    /// Batches committed at or before this system time.
    Time(Timestamp),
}

/// Where a read is pinned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ReadAt {
    /// Valid time; the clock when `None`.
    pub valid_at: Option<Timestamp>,
    /// System time; the latest when `Latest`.
    pub known_at: KnownAt,
    /// The clock decay is read at; the clock (now) when `None`. Salience only: it never
    /// changes what is true.
    pub at: Option<Timestamp>,
}

impl ReadAt {
    /// Now, as known now.
    pub fn latest() -> Self {
        ReadAt::default()
    }

    /// Valid time `t`, as known now.
    pub fn valid(t: Timestamp) -> Self {
        ReadAt { valid_at: Some(t), known_at: KnownAt::Latest, at: None }
    }

    /// Valid time `t`, as known after batch `s`.
    /// ```
    #[doc = include_str!("../../doc/ada_moves.txt")]
    /// // Valid in 2015, as known after the first batch: the store knew only of Lyon then.
    /// let then = store.at(&ns, ReadAt::bitemporal(time("2015-01-01")?, first.seq))?;
    /// assert_eq!(then.basis().known_at, first.seq);
    /// assert_eq!(then.history(ada, "livesIn")?.value.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn bitemporal(t: Timestamp, s: Seq) -> Self {
        ReadAt { valid_at: Some(t), known_at: KnownAt::Seq(s), at: None }
    }
}

/// What an answer was computed from: pinning a read to it replays it exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Basis {
    /// The last batch visible to the read.
    pub known_at: Seq,
    /// That batch's system time (`None` before the first batch).
    pub system_time: Option<Timestamp>,
    /// The valid time the read resolved at.
    pub valid_at: Timestamp,
    /// The clock when the read ran.
    pub clock: Timestamp,
    /// The clock decay was read at.
    pub at: Timestamp,
}

impl Basis {
    /// Whether the read is of the present: its valid time is no earlier than the system
    /// time of the last batch it knows (or than the clock, which a batch's time can pass
    /// when the clock stands still: batch times only increase). A read pinned once and
    /// resolved again later (a request's nested fields) stays of the present, and one as
    /// of an earlier day never is.
    pub fn of_the_present(&self) -> bool {
        self.system_time.is_none_or(|known| self.valid_at >= known.min(self.clock))
    }

    /// The read point that reproduces this answer.
    pub fn point(&self) -> ReadAt {
        ReadAt { at: Some(self.at), ..ReadAt::bitemporal(self.valid_at, self.known_at) }
    }
}

/// An answer with its basis.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer<T> {
    /// How it was computed.
    pub basis: Basis,
    /// What was found.
    pub value: T,
}

/// A time window `[from, to)` must not be empty: an inverted window is a mistake, not a
/// question with an empty answer (episodes, forecast and search agree on it).
pub(crate) fn check_window(
    field: &str,
    from: Option<Timestamp>,
    to: Option<Timestamp>,
) -> Result<(), ReadError> {
    match (from, to) {
        (Some(from), Some(to)) if from >= to => Err(ostrakon_core::CoreError::InvalidInterval {
            field: field.into(),
            from: from.to_string(),
            to: to.to_string(),
        }
        .into()),
        _ => Ok(()),
    }
}

/// A page holds 1 to `MAX_PAGE` items: an empty page would read as the last one.
pub(crate) fn check_page(limit: usize) -> Result<(), ReadError> {
    if limit == 0 {
        return Err(ReadError::LimitExceeded { field: "limit".into(), value: 0, max: MAX_PAGE as u64 });
    }
    check_limit("limit", limit as u64, MAX_PAGE as u64)
}

pub(crate) fn check_limit(field: &str, value: u64, max: u64) -> Result<(), ReadError> {
    if value > max {
        return Err(ReadError::LimitExceeded { field: field.into(), value, max });
    }
    Ok(())
}
