//! Paging: page sizes within the limits, cursors, and pages of fully ordered lists.

use super::*;

/// Reads an episode listing's cursor (`micros:id`).
pub(crate) fn episode_cursor(a: &str) -> Result<(Timestamp, mnemo_core::EpisodeId)> {
    let bad = || invalid("after", format!("{a:?}"), "not a cursor of this listing");
    let (t, id) = a.split_once(':').ok_or_else(bad)?;
    Ok((
        Timestamp::from_micros(t.parse().map_err(|_| bad())?),
        mnemo_core::EpisodeId(id.parse().map_err(|_| bad())?),
    ))
}

/// How many items a page may hold: `first`, within the limit (50 when not given).
pub(crate) fn page_size(ctx: &Context<'_>, first: Option<i32>) -> Result<usize> {
    let max = limits(ctx)?.max_page;
    match first {
        None => Ok(max.min(50)),
        Some(n) if n < 1 => Err(invalid("first", n, "must be at least 1")),
        Some(n) if n as usize > max => {
            Err(coded(code::LIMIT_EXCEEDED, format!("limit exceeded in `first`: {n} (at most {max})")))
        }
        Some(n) => Ok(n as usize),
    }
}

/// Pages a fully ordered list of facts by fact id cursors.
pub(super) fn fact_page(
    pin: &Arc<Pin>,
    views: Vec<mnemo_engine::FactView>,
    after: Option<String>,
    first: usize,
) -> Result<Page<FactObject>> {
    let start = match after {
        None => 0,
        Some(cursor) => {
            let id = parse_id("after", &ID(cursor.clone()))?;
            views
                .iter()
                .position(|v| v.fact.id.0 == id)
                .map(|p| p + 1)
                .ok_or_else(|| invalid("after", format!("{cursor:?}"), "not a cursor of this listing"))?
        }
    };
    let more = views.len() > start + first;
    let mut page =
        Connection::with_additional_fields(start > 0, more, Listing { basis: (&pin.basis).into() });
    page.edges.extend(
        views
            .into_iter()
            .skip(start)
            .take(first)
            .map(|view| Edge::new(view.fact.id.0.to_string(), FactObject { pin: Arc::clone(pin), view })),
    );
    Ok(page)
}
