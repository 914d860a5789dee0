//! Paging: the basis every listing reports, page sizes within the limits, and cursors.

use crate::error::code;
use crate::error::coded;
use crate::exec::context::limits;
use crate::types::input::invalid;
use crate::types::scalars::DateTime;
use async_graphql::connection::Connection;
use async_graphql::{Context, Result, SimpleObject};
use ostrakon_core::Timestamp;

/// What an answer was computed from; pass `seq` as `knownAtSeq` (and `validAt`) to get
/// the same answer again.
#[derive(SimpleObject, Clone, Debug)]
pub(crate) struct Basis {
    /// The last batch visible to the read.
    pub seq: u64,
    /// That batch's system time (null before the first batch).
    pub system_time: Option<DateTime>,
    /// The valid time the read resolved at.
    pub valid_at: DateTime,
    /// The server's clock when the read ran.
    pub clock: DateTime,
    /// The clock retention was read at (the `at` argument; default: now).
    pub at: DateTime,
}

impl From<&ostrakon_engine::Basis> for Basis {
    fn from(b: &ostrakon_engine::Basis) -> Self {
        Basis {
            seq: b.known_at.0,
            system_time: b.system_time.map(DateTime::from),
            valid_at: b.valid_at.into(),
            clock: b.clock.into(),
            at: b.at.into(),
        }
    }
}

/// The fields every listing adds to its connection.
#[derive(SimpleObject, Clone, Debug)]
pub(crate) struct Listing {
    /// What the listing was computed from.
    pub basis: Basis,
}
pub(crate) type Page<T> = Connection<String, T, Listing>;
/// Reads an episode listing's cursor (`micros:id`).
pub(crate) fn episode_cursor(a: &str) -> Result<(Timestamp, ostrakon_core::EpisodeId)> {
    let bad = || invalid("after", format!("{a:?}"), "not a cursor of this listing");
    let (t, id) = a.split_once(':').ok_or_else(bad)?;
    Ok((
        Timestamp::from_micros(t.parse().map_err(|_| bad())?),
        ostrakon_core::EpisodeId(id.parse().map_err(|_| bad())?),
    ))
}

/// How many items a page holds when `first` is not given.
pub(crate) fn default_page_size(limits: &crate::exec::limits::Limits) -> usize {
    limits.max_page.min(50)
}

/// How many items a page may hold: `first`, within the limit (50 when not given).
pub(crate) fn page_size(ctx: &Context<'_>, first: Option<i32>) -> Result<usize> {
    let limits = limits(ctx)?;
    let max = limits.max_page;
    match first {
        None => Ok(default_page_size(limits)),
        Some(n) if n < 1 => Err(invalid("first", n, "must be at least 1")),
        Some(n) if n as usize > max => {
            Err(coded(code::LIMIT_EXCEEDED, format!("limit exceeded in `first`: {n} (at most {max})")))
        }
        Some(n) => Ok(n as usize),
    }
}
