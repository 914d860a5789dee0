//! Query-time resolution: which facts of one slot are in force at a valid time T, given
//! the candidates visible at a system time S.
//!
//! The caller has already filtered by system time (rule 1): candidates are the facts
//! asserted and not retracted at S, each with the valid end set by its latest visible
//! `FactEnded`. Everything here is a pure function of those candidates, so the same
//! log prefix and the same (T, S) always give the same answer.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

use crate::ids::{FactId, Seq};
use crate::model::{Cardinality, Polarity};
use crate::time::{Interval, Timestamp, subtract_all};
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
    /// Competing positive facts with the same valid start (rule 5), sorted.
    pub contradicts: Vec<FactId>,
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
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by(|&a, &b| candidates[b].rank_cmp(&candidates[a]));
    let mut verdicts: Vec<Option<Verdict>> = vec![None; candidates.len()];
    for (pos, &i) in order.iter().enumerate() {
        let f = &candidates[i];
        let above = order[..pos].iter().map(|&j| &candidates[j]).filter(|g| g.competes_with(f, card));
        let mut beaten_by: Option<&Candidate<'_>> = None;
        let mut outranking = Vec::new();
        for g in above {
            if beaten_by.is_none() && g.valid.contains(t) {
                beaten_by = Some(g);
            }
            outranking.push(g.valid);
        }
        let effective = subtract_all(vec![f.valid], &outranking);
        let contradicts = contradictions(card, candidates, f);
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
    }
    verdicts.into_iter().flatten().collect()
}

/// Rule 5: positive facts that compete with positive `f` and start when it does.
fn contradictions(card: Cardinality, candidates: &[Candidate<'_>], f: &Candidate<'_>) -> Vec<FactId> {
    if f.polarity != Polarity::Asserted {
        return Vec::new();
    }
    let mut ids: Vec<FactId> = candidates
        .iter()
        .filter(|g| {
            g.id != f.id
                && g.polarity == Polarity::Asserted
                && g.valid.from() == f.valid.from()
                && g.competes_with(f, card)
        })
        .map(|g| g.id)
        .collect();
    ids.sort();
    ids
}

/// Combined confidence of independent sources (noisy-or): 1 − Π(1 − cᵢ).
pub fn combine_confidence(confidences: impl IntoIterator<Item = f64>) -> f64 {
    1.0 - confidences.into_iter().fold(1.0, |acc, c| acc * (1.0 - c.clamp(0.0, 1.0)))
}
