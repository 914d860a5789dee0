//! The tiers of a context block: CORE's records first, always, within CORE's share of the
//! budget (facts only while in force; no decay applies, as no search ranks them), then
//! the ACTIVE scopes asked for (or every current one), most relevant first, within
//! ACTIVE's share. ARCHIVE, what the message's search finds, gets what is left
//! (`context.rs`). Each tier reports what it gave and what the budget left out.

use std::collections::HashSet;

use ostrakon_core::{Entity, Episode, FactView, RecordRef, Tier, View};
use ostrakon_index::NamespaceIndex;

use crate::context::lines::{Builder, entity_line, episode_line, fact_line};

/// What one tier gave a context block.
#[derive(Clone, Debug, PartialEq)]
pub struct TierUse {
    /// CORE, an ACTIVE scope, or `None` for ARCHIVE (what search found).
    pub tier: Option<Tier>,
    /// The records it put in the block, in block order.
    pub records: Vec<RecordRef>,
    /// Its records the budget (its share, or the whole) left out.
    pub left_out: usize,
}

/// A placed record, resolved at the read's view.
enum Item {
    Fact(FactView),
    Episode(Episode),
    Entity(Entity),
}

/// What the tiers put in the block.
#[derive(Default)]
pub(crate) struct Placed {
    pub(crate) uses: Vec<TierUse>,
    pub(crate) facts: Vec<FactView>,
    pub(crate) episodes: Vec<Episode>,
    pub(crate) entities: Vec<Entity>,
    /// Records shown, which ARCHIVE does not repeat.
    pub(crate) shown: HashSet<RecordRef>,
}

/// Adds CORE and the ACTIVE scopes (`scopes`, or every current one) to `b`, ranking a
/// scope's records by `rank` (the search's order; unranked ones after, newest placement
/// first).
pub(crate) fn add_tiers(
    b: &mut Builder,
    index: &NamespaceIndex,
    view: View,
    budget: usize,
    scopes: Option<&[String]>,
    rank: &dyn Fn(RecordRef) -> Option<usize>,
) -> Placed {
    let mut placed = Placed::default();
    let settings = index.tier_settings(view.known_at);
    let core = index.tier_members(&Tier::Core, view.known_at);
    if !core.is_empty() {
        let records: Vec<RecordRef> = core.iter().map(|(r, _)| *r).collect();
        let limit = (budget as f64 * settings.core_share).floor() as usize;
        add_tier(b, index, view, Tier::Core, &records, limit, &mut placed);
    }
    let names: Vec<String> = match scopes {
        Some(named) => named.to_vec(),
        None => index.scopes(view.known_at).into_iter().map(|(s, _, _)| s).collect(),
    };
    let mut active_left = (budget as f64 * settings.active_share).floor() as usize;
    for scope in names {
        let tier = Tier::Active(scope.clone());
        let mut members = index.tier_members(&tier, view.known_at);
        if members.is_empty() {
            continue;
        }
        // Most relevant first: the search's order, then the newest placements.
        members.sort_by_key(|(r, p)| (rank(*r).unwrap_or(usize::MAX), std::cmp::Reverse(p.seq)));
        let records: Vec<RecordRef> = members.iter().map(|(r, _)| *r).collect();
        let before = b.tokens();
        add_tier(b, index, view, tier, &records, active_left, &mut placed);
        active_left = active_left.saturating_sub(b.tokens() - before);
    }
    placed
}

fn add_tier(
    b: &mut Builder,
    index: &NamespaceIndex,
    view: View,
    tier: Tier,
    records: &[RecordRef],
    limit: usize,
    placed: &mut Placed,
) {
    let header = match &tier {
        Tier::Core => "Core memory:".to_owned(),
        Tier::Active(scope) => format!("Active ({scope}):"),
    };
    let items: Vec<(RecordRef, Item)> = records
        .iter()
        .filter(|r| !placed.shown.contains(r))
        .filter_map(|r| {
            let item = match *r {
                RecordRef::Fact(id) => Item::Fact(index.fact_at(id, view).filter(FactView::in_force)?),
                RecordRef::Episode(id) => Item::Episode(index.episode_at(id, view.known_at)?.clone()),
                RecordRef::Entity(id) => Item::Entity(index.entity_at(id, view)?.entity),
            };
            Some((*r, item))
        })
        .collect();
    let lines: Vec<String> = items
        .iter()
        .map(|(_, item)| match item {
            Item::Fact(f) => fact_line(index, f, view.valid_at, 1),
            Item::Episode(e) => episode_line(index, view, e, b.as_of),
            Item::Entity(e) => entity_line(e),
        })
        .collect();
    let kept = b.section_within(&header, &lines, limit);
    let mut used = TierUse { tier: Some(tier), records: Vec::new(), left_out: items.len() - kept };
    for (record, item) in items.into_iter().take(kept) {
        placed.shown.insert(record);
        used.records.push(record);
        match item {
            Item::Fact(f) => placed.facts.push(f),
            Item::Episode(e) => placed.episodes.push(e),
            Item::Entity(e) => placed.entities.push(e),
        }
    }
    placed.uses.push(used);
}
