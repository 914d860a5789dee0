//! What an episode stated that no longer holds. An episode is kept as it was said ("I live
//! in Paris"), and a prompt that cites it beside a newer one must not read its value as
//! current. The facts stated from an episode say whether it still holds: each one that is,
//! at the read point, superseded, negated, contradicted, corrected, retracted or ended is
//! an [`Outdated`] mark on the episode, with what holds in its place and since when. The
//! marks are read at (T, S) like everything else: an as-of read marks what was outdated
//! then.

use ostrakon_core::{EpisodeId, FactId, FactView, Retraction, Status, Timestamp};
use ostrakon_index::{FactFilter, NamespaceIndex, Scope, View};

use crate::limits::{MAX_OUTDATED, MAX_REPLACEMENTS};
use crate::retrieve::docs::fact_sentence;

/// A fact stated from an episode that does not hold at the read point.
#[derive(Clone, Debug, PartialEq)]
pub struct Outdated {
    /// The fact the episode stated.
    pub fact: FactId,
    /// Where it stands at (T, S): never `Current` or `NotYetValid`.
    pub status: Status,
    /// Whether it was corrected (a fact asserted in its place, as a correction) rather
    /// than retracted outright; with `Retracted` only.
    pub corrected: bool,
    /// Valid time from which it stopped holding: the start of what replaced it, or the
    /// end of its validity; `None` for a retraction (it never held).
    pub since: Option<Timestamp>,
    /// What holds instead: the fact that beat or corrected it, else the facts in force
    /// in its slot (subject and predicate), at most [`MAX_REPLACEMENTS`].
    pub replaced_by: Vec<FactId>,
    /// The mark in words, as a context block shows it: `no longer holds: Ada lives in
    /// Lyon (superseded on 2014-01-01 by: Ada lives in Berlin)`.
    pub note: String,
}

impl Outdated {
    /// The status in words, as a prompt reads it: "superseded", "ended"…
    pub fn verb(&self) -> &'static str {
        match self.status {
            Status::Superseded => "superseded",
            Status::Negated => "denied",
            Status::Contradicted => "contradicted",
            Status::Ended => "ended",
            Status::Retracted if self.corrected => "corrected",
            Status::Retracted => "retracted",
            Status::Current | Status::NotYetValid => "in force",
        }
    }
}

/// The marks of `episode` at `view`: one per fact stated from it that does not hold, by
/// fact id, at most [`MAX_OUTDATED`]. An episode that stated nothing, or only what still
/// holds, has none; nor does one that also stated what replaced it ("I lived in Paris,
/// then moved to London" tells its own story).
pub(crate) fn outdated(index: &NamespaceIndex, episode: EpisodeId, view: View) -> Vec<Outdated> {
    marks(index, episode, view)
        .map(|(f, mut mark)| {
            mark.note = note(index, view, &f, &mark);
            mark
        })
        .collect()
}

/// What replaced the statements of `episode` that no longer hold, as [`outdated`] marks
/// them, without putting the marks in words (ranking needs only this).
pub(crate) fn replacements(index: &NamespaceIndex, episode: EpisodeId, view: View) -> Vec<FactId> {
    marks(index, episode, view).flat_map(|(_, mark)| mark.replaced_by).collect()
}

/// The marks without their words, each with the fact it is about.
fn marks(
    index: &NamespaceIndex,
    episode: EpisodeId,
    view: View,
) -> impl Iterator<Item = (FactView, Outdated)> {
    let sourced = index.sourced_facts(episode, view.known_at);
    let facts: Vec<FactView> = sourced.iter().filter_map(|id| index.fact_at(*id, view)).collect();
    facts
        .into_iter()
        .filter_map(move |f| {
            let mark = mark(index, &f, view)?;
            let own = mark.replaced_by.iter().any(|r| sourced.contains(r));
            (!own).then_some((f, mark))
        })
        .take(MAX_OUTDATED)
}

fn mark(index: &NamespaceIndex, f: &FactView, view: View) -> Option<Outdated> {
    let corrected_by = match f.retraction.as_ref().map(|r| &r.kind) {
        Some(Retraction::CorrectedBy(by)) => Some(*by),
        _ => None,
    };
    let since = match f.status {
        Status::Current | Status::NotYetValid => return None,
        Status::Retracted => None,
        Status::Ended => f.valid.to(),
        // Beaten at T: from the end of its last stretch in force before T, else from the
        // start of the fact that beat it.
        Status::Superseded | Status::Negated | Status::Contradicted => f
            .effective
            .iter()
            .filter_map(|i| i.to())
            .filter(|end| *end <= view.valid_at)
            .max()
            .or_else(|| f.beaten_by.and_then(|b| index.fact_at(b, view)).map(|b| b.valid.from())),
    };
    let mut replaced_by: Vec<FactId> = corrected_by.or(f.beaten_by).into_iter().collect();
    if replaced_by.is_empty() && f.status != Status::Retracted {
        let slot = FactFilter {
            subject: Some(index.canonical_entity(f.fact.subject, view.known_at)),
            predicate: Some(f.fact.predicate.clone()),
            object: None,
        };
        replaced_by = index
            .facts(&slot, view, Scope::InForce)
            .into_iter()
            .map(|g| g.fact.id)
            .filter(|g| *g != f.fact.id)
            .take(MAX_REPLACEMENTS)
            .collect();
    }
    Some(Outdated {
        fact: f.fact.id,
        status: f.status,
        corrected: corrected_by.is_some(),
        since,
        replaced_by,
        note: String::new(),
    })
}

fn note(index: &NamespaceIndex, view: View, f: &FactView, o: &Outdated) -> String {
    let mut note = format!("no longer holds: {} ({}", fact_sentence(index, &f.fact), o.verb());
    if let Some(since) = o.since {
        let day = since.to_string();
        note.push_str(&format!(" on {}", day.get(..10).unwrap_or(&day)));
    }
    let instead: Vec<String> = o
        .replaced_by
        .iter()
        .filter_map(|id| index.fact_at(*id, view))
        .map(|g| fact_sentence(index, &g.fact))
        .collect();
    if !instead.is_empty() {
        note.push_str(&format!(" by: {}", instead.join("; ")));
    }
    note.push(')');
    note
}
