//! Query-time resolution: which facts of one slot are in force at a valid time T, given
//! the candidates visible at a system time S.
//!
//! The caller has already filtered by system time (rule 1): candidates are the facts
//! asserted and not retracted at S, each with the valid end set by its latest visible
//! `FactEnded`. Everything here is a pure function of those candidates, so the same
//! log prefix and the same (T, S) always give the same answer.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::ids::{FactId, Seq};
use crate::model::{Cardinality, Polarity};
use crate::segments::{End, Segments};
use crate::ties::{Contradicts, TieGroup};
use crate::time::{Interval, Timestamp};
use crate::value::Value;

/// A fact as resolution sees it.
#[derive(Clone, Copy, Debug)]
pub struct Candidate<'a> {
    /// The fact.
    pub id: FactId,
    /// Its object.
    pub value: &'a Value,
    /// Stated or denied.
    pub polarity: Polarity,
    /// Its valid interval, with the end of its latest visible `FactEnded`.
    pub valid: Interval,
    /// The batch that asserted it.
    pub seq: Seq,
    /// Its confidence (with corroborations folded in).
    pub confidence: f64,
}

impl Candidate<'_> {
    /// Rank order: (`valid_from`, system sequence, confidence, id), compared in that
    /// order; the greater ranks above.
    pub fn rank_cmp(&self, other: &Candidate<'_>) -> Ordering {
        self.valid
            .from()
            .cmp(&other.valid.from())
            .then(self.seq.cmp(&other.seq))
            .then(self.confidence.total_cmp(&other.confidence))
            .then(self.id.cmp(&other.id))
    }

    /// Whether `self` competes with `other` in a slot of cardinality `card`: a positive
    /// fact with a different value (cardinality one), or a negation of the other's
    /// value (and, symmetrically, a positive restatement of a negated value). Facts
    /// with the same value and polarity never compete.
    pub fn competes_with(&self, other: &Candidate<'_>, card: Cardinality) -> bool {
        match (self.polarity, other.polarity) {
            (Polarity::Asserted, Polarity::Asserted) => card == Cardinality::One && self.value != other.value,
            (Polarity::Negated, Polarity::Asserted) | (Polarity::Asserted, Polarity::Negated) => {
                self.value == other.value
            }
            (Polarity::Negated, Polarity::Negated) => false,
        }
    }
}

/// Where a fact stands at (T, S).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Status {
    /// In force at T (for a negation: the denial holds at T).
    Current,
    /// T is before its valid start.
    NotYetValid,
    /// T is at or after its valid end.
    Ended,
    /// A higher-ranked fact with another value of a cardinality-one slot holds at T.
    Superseded,
    /// A higher-ranked negation of its value holds at T (for a negation: a
    /// higher-ranked restatement of the value does).
    Negated,
    /// A competing fact with the same valid start outranks it at T: a contradiction.
    Contradicted,
    /// It was retracted (never true) as of S.
    Retracted,
}

impl Status {
    /// The stable upper-case name used by the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Current => "CURRENT",
            Status::NotYetValid => "NOT_YET_VALID",
            Status::Ended => "ENDED",
            Status::Superseded => "SUPERSEDED",
            Status::Negated => "NEGATED",
            Status::Contradicted => "CONTRADICTED",
            Status::Retracted => "RETRACTED",
        }
    }
}

/// The resolution of one candidate at (T, S).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Where it stands at T.
    pub status: Status,
    /// The highest-ranked competing fact that holds at T and outranks it, if that is
    /// why it is not current.
    pub beaten_by: Option<FactId>,
    /// Competing positive facts with the same valid start (rule 5), in id order: one
    /// group shared by all of them.
    pub contradicts: Contradicts,
    /// Where it is in force, over all valid time: its interval minus those of the
    /// competing facts that outrank it. Sorted, disjoint.
    pub effective: Vec<Interval>,
}

/// Resolves every candidate of one slot at valid time `t`; the verdicts come in the
/// candidates' order.
///
/// For cardinality `Many`, passing all values of `(subject, predicate)` together is
/// the same as resolving each `(subject, predicate, value)` slot apart: facts with
/// different values never compete there.
pub fn resolve_slot(card: Cardinality, candidates: &[Candidate<'_>], t: Timestamp) -> Vec<Verdict> {
    // Highest rank first, so the competitors that outrank candidate `order[i]` are
    // exactly `order[..i]`, and the first of them holding at T is the one that beat it.
    // Walking down that order, `above` keeps what the candidates already passed say, so
    // each candidate costs a few lookups and a range query: O(n log n) for the slot,
    // plus what the answer itself holds.
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by(|&a, &b| candidates[b].rank_cmp(&candidates[a]));
    let contradictions = Contradictions::new(card, candidates);
    let mut above = Above::default();
    let mut verdicts: Vec<Option<Verdict>> = vec![None; candidates.len()];
    for (pos, &i) in order.iter().enumerate() {
        let f = &candidates[i];
        let beaten_by = above.beaten_by(card, f).map(|p| &candidates[order[p]]);
        let effective = above.effective(card, f);
        let contradicts = contradictions.of(f);
        let (status, beaten_by) = if t < f.valid.from() {
            (Status::NotYetValid, None)
        } else if !f.valid.contains(t) {
            (Status::Ended, None)
        } else {
            match beaten_by {
                None => (Status::Current, None),
                Some(g) => {
                    let status = if g.polarity != f.polarity {
                        Status::Negated
                    } else if g.valid.from() == f.valid.from() {
                        Status::Contradicted
                    } else {
                        Status::Superseded
                    };
                    (status, Some(g.id))
                }
            }
        };
        verdicts[i] = Some(Verdict { status, beaten_by, contradicts, effective });
        above.pass(card, pos, f, t);
    }
    verdicts.into_iter().flatten().collect()
}

/// A segment's label in the union of the positive candidates above: covered by the
/// facts of one value only, or by several values.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Covered<'a> {
    Only(&'a Value),
    Several,
}

/// What the candidates already walked (all of which outrank the next one) say.
#[derive(Default)]
struct Above<'a> {
    /// The first positive candidate holding at T, and the first holding at T with
    /// another value than that one: for cardinality one, the first competitor holding
    /// at T of a positive fact of value v is the first of these whose value is not v.
    first_holding: Option<(usize, &'a Value)>,
    first_holding_other: Option<usize>,
    /// By value: the first positive and the first negative candidate holding at T.
    holding_asserted: BTreeMap<&'a Value, usize>,
    holding_negated: BTreeMap<&'a Value, usize>,
    /// By value: the union of the positive and of the negative candidates' intervals.
    asserted: BTreeMap<&'a Value, Segments<()>>,
    negated: BTreeMap<&'a Value, Segments<()>>,
    /// The union of every positive candidate's interval, each piece labelled with the
    /// values that cover it (cardinality one: the competitors of value v are the
    /// positive facts of any other value).
    positive: Option<Segments<Covered<'a>>>,
}

impl<'a> Above<'a> {
    /// The highest-ranked candidate above that competes with `f` and holds at T, by its
    /// position in the rank order.
    fn beaten_by(&self, card: Cardinality, f: &Candidate<'a>) -> Option<usize> {
        match f.polarity {
            Polarity::Negated => self.holding_asserted.get(f.value).copied(),
            Polarity::Asserted => {
                let denial = self.holding_negated.get(f.value).copied();
                let other = match (card, self.first_holding) {
                    (Cardinality::One, Some((j, v))) if v != f.value => Some(j),
                    (Cardinality::One, Some(_)) => self.first_holding_other,
                    _ => None,
                };
                // Positions in rank order: the smaller ranks higher.
                [denial, other].into_iter().flatten().min()
            }
        }
    }

    /// `f`'s interval minus those of the competitors above.
    fn effective(&self, card: Cardinality, f: &Candidate<'a>) -> Vec<Interval> {
        let (from, to) = (f.valid.from(), End(f.valid.to()));
        let mut removed: Vec<(Timestamp, End)> = Vec::new();
        match f.polarity {
            Polarity::Negated => {
                if let Some(s) = self.asserted.get(f.value) {
                    removed.extend(s.overlapping(from, to).map(|(s, e, ())| (s, e)));
                }
            }
            Polarity::Asserted => {
                if let Some(s) = self.negated.get(f.value) {
                    removed.extend(s.overlapping(from, to).map(|(s, e, ())| (s, e)));
                }
                if card == Cardinality::One
                    && let Some(p) = &self.positive
                {
                    removed.extend(
                        p.overlapping(from, to)
                            .filter(|(_, _, c)| *c != Covered::Only(f.value))
                            .map(|(s, e, _)| (s, e)),
                    );
                    removed.sort_by_key(|(s, _)| *s);
                }
            }
        }
        complement(from, to, removed)
    }

    /// Takes `f`, which holds at T, into the candidates holding at T above the rest (at
    /// position `pos` of the rank order: only the order of positions matters).
    fn pass_holding(&mut self, pos: usize, f: &Candidate<'a>) {
        match f.polarity {
            Polarity::Asserted => {
                self.holding_asserted.entry(f.value).or_insert(pos);
                match self.first_holding {
                    None => self.first_holding = Some((pos, f.value)),
                    Some((_, v)) if v != f.value && self.first_holding_other.is_none() => {
                        self.first_holding_other = Some(pos);
                    }
                    Some(_) => {}
                }
            }
            Polarity::Negated => {
                self.holding_negated.entry(f.value).or_insert(pos);
            }
        }
    }

    /// Takes `f` (at position `pos` of the rank order) into what lies above the rest.
    fn pass(&mut self, card: Cardinality, pos: usize, f: &Candidate<'a>, t: Timestamp) {
        let (from, to) = (f.valid.from(), End(f.valid.to()));
        if f.valid.contains(t) {
            self.pass_holding(pos, f);
        }
        match f.polarity {
            Polarity::Asserted => {
                self.asserted.entry(f.value).or_insert_with(Segments::new).cover(from, to, (), |()| ());
                // Only cardinality one sets positive facts of other values against each other.
                if card == Cardinality::One {
                    let value = f.value;
                    self.positive.get_or_insert_with(Segments::new).cover(
                        from,
                        to,
                        Covered::Only(value),
                        |c| match c {
                            Covered::Only(v) if v == value => c,
                            _ => Covered::Several,
                        },
                    );
                }
            }
            Polarity::Negated => {
                self.negated.entry(f.value).or_insert_with(Segments::new).cover(from, to, (), |()| ());
            }
        }
    }
}

/// The complement within `[from, to)` of the `removed` pieces, sorted by start (they may
/// overlap and reach outside it): the largest intervals that none of them covers.
fn complement(from: Timestamp, to: End, removed: Vec<(Timestamp, End)>) -> Vec<Interval> {
    let mut out = Vec::new();
    let mut cursor = Some(from);
    for (s, e) in removed {
        let Some(c) = cursor else { break };
        if c < s {
            out.push(Interval::between(c, Some(s)));
        }
        if End(Some(c)) < e {
            cursor = e.0;
        }
    }
    if let Some(c) = cursor
        && End(Some(c)) < to
    {
        out.push(Interval::between(c, to.0));
    }
    out
}

/// Most candidates in force at T for which [`resolve_current`] computes effective
/// validity one by one (each against every candidate above it); past it, the whole slot
/// is resolved at once.
const FEW_CURRENT: usize = 4;

/// The verdicts of the candidates in force at `t` (status `Current`), `None` for every
/// other, in the candidates' order: the same verdicts [`resolve_slot`] gives them. A read
/// of what holds at T (a point read, a count) needs no more, and this costs far less on
/// slots with a long history: only the candidates holding at T are ranked against each
/// other, and only the winners' effective validity and contradictions are computed.
pub fn resolve_current(
    card: Cardinality,
    candidates: &[Candidate<'_>],
    t: Timestamp,
) -> Vec<Option<Verdict>> {
    // A candidate is beaten at T only by a competitor that also holds at T, so the
    // statuses of those holding are decided among themselves, walking down by rank.
    let mut holding: Vec<usize> =
        (0..candidates.len()).filter(|&i| candidates[i].valid.contains(t)).collect();
    holding.sort_by(|&a, &b| candidates[b].rank_cmp(&candidates[a]));
    let mut above = Above::default();
    let mut current = Vec::new();
    for (pos, &i) in holding.iter().enumerate() {
        let f = &candidates[i];
        if above.beaten_by(card, f).is_none() {
            current.push(i);
            if current.len() > FEW_CURRENT {
                return resolve_slot(card, candidates, t)
                    .into_iter()
                    .map(|v| (v.status == Status::Current).then_some(v))
                    .collect();
            }
        }
        above.pass_holding(pos, f);
    }
    let mut verdicts: Vec<Option<Verdict>> = vec![None; candidates.len()];
    for i in current {
        let f = &candidates[i];
        // Its interval minus those of the competitors ranking above it.
        let mut removed: Vec<(Timestamp, End)> = candidates
            .iter()
            .filter(|g| {
                g.rank_cmp(f) == Ordering::Greater
                    && g.competes_with(f, card)
                    && End(f.valid.to()).after(g.valid.from())
                    && End(g.valid.to()).after(f.valid.from())
            })
            .map(|g| (g.valid.from(), End(g.valid.to())))
            .collect();
        removed.sort_by_key(|(s, _)| *s);
        let effective = complement(f.valid.from(), End(f.valid.to()), removed);
        // Rule 5: positive candidates of another value starting together (cardinality one).
        let contradicts = if card == Cardinality::One && f.polarity == Polarity::Asserted {
            let tied = candidates
                .iter()
                .filter(|g| g.polarity == Polarity::Asserted && g.valid.from() == f.valid.from())
                .map(|g| (g.id, g.value));
            TieGroup::new(tied).map_or_else(Contradicts::none, |group| Contradicts::in_group(&group, f.id))
        } else {
            Contradicts::none()
        };
        verdicts[i] = Some(Verdict { status: Status::Current, beaten_by: None, contradicts, effective });
    }
    verdicts
}

/// Rule 5, for every candidate at once: in a slot of cardinality one, the positive
/// candidates that start together and say different values contradict each other. Each
/// instant's candidates form one shared group, so n tied values cost O(n log n), not n².
struct Contradictions {
    /// By valid start: the group of the positive candidates starting there, if they say
    /// more than one value.
    by_start: BTreeMap<Timestamp, std::sync::Arc<TieGroup>>,
}

impl Contradictions {
    fn new(card: Cardinality, candidates: &[Candidate<'_>]) -> Self {
        let mut starts: BTreeMap<Timestamp, Vec<(FactId, &Value)>> = BTreeMap::new();
        if card == Cardinality::One {
            for c in candidates.iter().filter(|c| c.polarity == Polarity::Asserted) {
                starts.entry(c.valid.from()).or_default().push((c.id, c.value));
            }
        }
        let by_start = starts
            .into_iter()
            .filter(|(_, members)| members.len() > 1)
            .filter_map(|(from, members)| Some((from, TieGroup::new(members)?)))
            .collect();
        Contradictions { by_start }
    }

    fn of(&self, f: &Candidate<'_>) -> Contradicts {
        if f.polarity != Polarity::Asserted {
            return Contradicts::none();
        }
        match self.by_start.get(&f.valid.from()) {
            Some(group) => Contradicts::in_group(group, f.id),
            None => Contradicts::none(),
        }
    }
}

/// Combined confidence of independent sources (noisy-or): 1 − Π(1 − cᵢ).
pub fn combine_confidence(confidences: impl IntoIterator<Item = f64>) -> f64 {
    1.0 - confidences.into_iter().fold(1.0, |acc, c| acc * (1.0 - c.clamp(0.0, 1.0)))
}
