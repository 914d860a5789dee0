//! Counts in force at one S read from kept sweeps: the stretches in force of a predicate
//! (or of all) at that S, sorted by their ends, kept per open namespace — and carried
//! forward as batches commit, so that the first count after a write does not resolve
//! every slot again.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use ostrakon_core::{Endpoints, EntityId, Event, Seq, View};
use ostrakon_index::NamespaceIndex;

/// Sweeps kept per namespace.
const SWEEPS: usize = 8;
/// Most batches and slots noted since the oldest kept sweep; past it, what was noted is
/// dropped (a count at a new S then builds its sweep whole, and notes start again).
const MAX_TOUCHED: usize = 100_000;

/// The stretches in force of a predicate (or of all) at one S, sorted by their ends,
/// kept for the last few (S, predicate) asked — and per subject of a predicate, the
/// stretches where it holds any value, for series of subjects in force: what is in force over valid time does not
/// depend on T, so every count at that S reads the same sweep. Derived from the index
/// like any read, and dropped with it; a dropped sweep is built again, equal.
///
/// A sweep at a newer S is made from a kept one at an older S when every batch between
/// them is known to have touched only some slots (facts asserted, ended, retracted,
/// withdrawn): the stretches those slots had at the older S are taken out and those they
/// have at the newer S put in — a merge of sorted lists instead of resolving every slot.
/// A batch that may change slots it does not name (a merge, a predicate's or the
/// namespace's settings, an erasure) makes the next sweep whole.
#[derive(Debug, Default)]
pub(crate) struct Sweeps {
    kept: Mutex<Vec<KeptSweep>>,
    /// The slots each batch after the oldest kept sweep touched, noted as batches are
    /// applied while any sweep is kept. A batch missing here (not noted, or one that may
    /// have changed slots it does not name) ends every carry across it.
    touched: Mutex<Touched>,
}

#[derive(Debug, Default)]
struct Touched {
    batches: BTreeMap<Seq, Vec<(EntityId, String)>>,
    /// The slots `batches` hold, in all.
    slots: usize,
}

/// What a sweep holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum What<'a> {
    /// The stretches of the facts in force, of a predicate (`None`: of all).
    Facts(Option<&'a str>),
    /// Per subject of a predicate, the stretches where it holds any value.
    Subjects(&'a str),
}

/// [`What`], kept.
#[derive(Debug, PartialEq, Eq)]
enum Kept {
    Facts(Option<String>),
    Subjects(String),
}

impl Kept {
    fn of(what: What<'_>) -> Kept {
        match what {
            What::Facts(p) => Kept::Facts(p.map(str::to_owned)),
            What::Subjects(p) => Kept::Subjects(p.to_owned()),
        }
    }

    fn is(&self, what: What<'_>) -> bool {
        match (self, what) {
            (Kept::Facts(a), What::Facts(b)) => a.as_deref() == b,
            (Kept::Subjects(a), What::Subjects(b)) => a == b,
            _ => false,
        }
    }
}

/// One kept sweep: its S, what it holds, and its stretches.
type KeptSweep = (Seq, Kept, Arc<Sweep>);

/// Stretches in force: those of a sweep made whole, less those taken out and with those
/// put in as it was carried forward. Each carry adds a few endpoints to the two small
/// lists (merging them into the whole one each time would move every endpoint); once
/// they grow past a share of it, they are merged into a new whole one.
#[derive(Debug, Default)]
pub(crate) struct Sweep {
    whole: Arc<Endpoints>,
    removed: Endpoints,
    added: Endpoints,
}

/// The carried endpoints merged into the whole ones past this many, or past a 32nd of
/// the whole ones.
const CARRIED_MERGED_PAST: usize = 256;

impl Sweep {
    fn whole(endpoints: Endpoints) -> Sweep {
        Sweep { whole: Arc::new(endpoints), ..Sweep::default() }
    }

    /// How many stretches contain `t`.
    pub(crate) fn count_at(&self, t: ostrakon_core::Timestamp) -> u64 {
        let count = |e: &Endpoints| i64::try_from(e.count_at(t)).unwrap_or(i64::MAX);
        u64::try_from(count(&self.whole) + count(&self.added) - count(&self.removed)).unwrap_or(0)
    }

    /// This sweep with `removed` taken out and `added` put in; `None` when `removed`
    /// holds what it does not.
    fn carried(&self, removed: &Endpoints, added: &Endpoints) -> Option<Sweep> {
        let none = Endpoints::default();
        let removed = self.removed.changed(&none, removed)?;
        let added = self.added.changed(&none, added)?;
        if removed.len() + added.len() > CARRIED_MERGED_PAST.max(self.whole.len() / 32) {
            // Added first: what was taken out may have been put in by an earlier carry.
            return Some(Sweep::whole(self.whole.changed(&none, &added)?.changed(&removed, &none)?));
        }
        Some(Sweep { whole: Arc::clone(&self.whole), removed, added })
    }

    fn heap_bytes(&self) -> usize {
        self.whole.heap_bytes() + self.removed.heap_bytes() + self.added.heap_bytes()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Sweeps {
    /// The sweep of `what` at `view.known_at` in `index`: kept, carried forward from a
    /// kept one, or built whole.
    pub(crate) fn get(&self, index: &NamespaceIndex, what: What<'_>, view: View) -> Arc<Sweep> {
        let seq = view.known_at;
        let base = {
            let kept = lock(&self.kept);
            if let Some((_, _, found)) = kept.iter().find(|(s, k, _)| *s == seq && k.is(what)) {
                return Arc::clone(found);
            }
            kept.iter()
                .filter(|(s, k, _)| *s < seq && k.is(what))
                .max_by_key(|(s, _, _)| *s)
                .map(|(s, _, e)| (*s, Arc::clone(e)))
        };
        let of = |touched: &[(EntityId, String)], view: View| match what {
            What::Facts(p) => index.in_force_endpoints_of(touched, p, view),
            What::Subjects(p) => index.subjects_in_force_endpoints_of(touched, p, view),
        };
        let carried = base.and_then(|(from, sweep)| {
            let touched = self.touched_between(from, seq)?;
            sweep.carried(&of(&touched, View { known_at: from, ..view }), &of(&touched, view))
        });
        let made = Arc::new(carried.unwrap_or_else(|| {
            Sweep::whole(match what {
                What::Facts(p) => index.in_force_endpoints(p, view),
                What::Subjects(p) => index.subjects_in_force_endpoints(p, view),
            })
        }));
        let mut kept = lock(&self.kept);
        if kept.len() >= SWEEPS {
            kept.remove(0);
        }
        kept.push((seq, Kept::of(what), Arc::clone(&made)));
        let oldest = kept.iter().map(|(s, _, _)| *s).min().unwrap_or(seq);
        drop(kept);
        let mut touched = lock(&self.touched);
        let newer = touched.batches.split_off(&Seq(oldest.0 + 1));
        touched.batches = newer;
        touched.slots = touched.batches.values().map(Vec::len).sum();
        made
    }

    /// Every slot the batches after `from` up to `to` touched, if each was noted.
    fn touched_between(&self, from: Seq, to: Seq) -> Option<Vec<(EntityId, String)>> {
        let touched = lock(&self.touched);
        let mut slots = BTreeSet::new();
        let mut expected = from.0 + 1;
        for (seq, noted) in touched.batches.range(Seq(from.0 + 1)..=to) {
            if seq.0 != expected {
                return None;
            }
            slots.extend(noted.iter().cloned());
            expected += 1;
        }
        (expected == to.0 + 1).then(|| slots.into_iter().collect())
    }

    /// Notes the slots batch `seq` (just applied to `index`) touched, while any sweep is
    /// kept that a later one could be carried forward from.
    pub(crate) fn note(&self, seq: Seq, events: &[Event], index: &NamespaceIndex) {
        if lock(&self.kept).is_empty() {
            return;
        }
        let mut touched = lock(&self.touched);
        match slots_touched(events, index) {
            Some(slots) if touched.batches.len() + touched.slots + slots.len() < MAX_TOUCHED => {
                touched.slots += slots.len();
                touched.batches.insert(seq, slots);
            }
            // Left out, this batch ends every carry across it: what came before is of no use.
            _ => *touched = Touched::default(),
        }
    }

    /// Bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        let sweeps: usize = lock(&self.kept).iter().map(|(_, _, sweep)| sweep.heap_bytes()).sum();
        sweeps + lock(&self.touched).slots * std::mem::size_of::<(EntityId, String)>()
    }
}

/// The slots (subject as asserted, predicate) whose facts `events` may have changed, or
/// `None` when they may have changed others too.
fn slots_touched(events: &[Event], index: &NamespaceIndex) -> Option<Vec<(EntityId, String)>> {
    let mut slots = Vec::new();
    let mut slot_of = |fact| {
        let fact = index.fact(fact)?;
        slots.push((fact.subject, fact.predicate));
        Some(())
    };
    for event in events {
        match event {
            Event::FactAsserted(fact) => {
                slot_of(fact.id)?;
                if let Some(other) = fact.supersedes {
                    slot_of(other)?;
                }
            }
            Event::FactEnded { fact, .. } | Event::FactRetracted { fact, .. } => slot_of(*fact)?,
            Event::StatementWithdrawn { statement, .. } => slot_of(*statement)?,
            // What touches no fact.
            Event::EpisodeRecorded(_)
            | Event::EntityDeclared(_)
            | Event::EntityCreated(_)
            | Event::Reinforced { .. }
            | Event::EmbeddingConfigured(_)
            | Event::Embedded { .. }
            | Event::Mentioned { .. }
            | Event::Extracted { .. }
            | Event::Placed { .. }
            | Event::Released { .. }
            | Event::PlacementProposed { .. }
            | Event::TiersConfigured(_)
            | Event::SegmentationConfigured(_)
            | Event::SegmentClosed { .. }
            | Event::IntentionAdded(_)
            | Event::IntentionCancelled { .. }
            | Event::IntentionFired { .. }
            | Event::EmbeddingPolicySet(_)
            | Event::PredicateEmbedding { .. } => {}
            // Merges, settings, erasures and whatever comes: any slot.
            _ => return None,
        }
    }
    Some(slots)
}
