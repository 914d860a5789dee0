//! Analytics over entity histories, resolved at a pinned knownAt: timelines, durations,
//! series of subjects in force, change counts, interval relations and aggregates.
//!
//! Each starts from slot resolution ([`NamespaceIndex::with_resolution`]): a fact's
//! effective intervals (where it is in force over all valid time, as known at S, after
//! supersession, ends, negations and retractions) are what every analytic counts, so an
//! analytic never disagrees with a read at one point. They do not depend on validAt, so a
//! series over many steps resolves each slot once, then sweeps sorted endpoints
//! ([`ostrakon_core::count_at_points`]). No index of stored intervals is kept: an interval
//! tree or kiddo over (from, to) points would answer "in force at T" without resolving,
//! but intervals change meaning with S (a later correction shortens an earlier fact), so
//! such an index would hold one version per batch; resolving the predicate's slots per
//! request costs one pass over their facts (measured in `benches/peer`). For counts, the
//! engine keeps the stretches of one S sorted by their ends ([`Endpoints`], made by
//! [`NamespaceIndex::in_force_endpoints`]): one pass, then any T in two binary searches.

use std::collections::{BTreeMap, BTreeSet};

use ostrakon_core::{
    Allen, ChangeCounts, Endpoints, EntityId, FactId, Group, GroupBy, Held, HeldFor, Interval, Lane,
    MAX_PAIR_CHECKS, OverlapQuery, Polarity, Scope, SeriesGroup, Side, Status, Stretch, Timestamp, Value,
    View, clip, count_at_points, join,
};

use crate::facts::PredId;
use crate::read::Resolution;
use crate::state::NamespaceIndex;

/// An aggregate's group: (subject, predicate, value), each set only when grouped by it.
type GroupKey = (Option<EntityId>, Option<PredId>, Option<Value>);

/// A live positive fact of a slot, in force somewhere: the fact, the facts it stands for
/// (itself first; more when merged entities made them one), its value as read at S and
/// its effective intervals.
struct InForce {
    facts: Vec<FactId>,
    value: Value,
    effective: Vec<Interval>,
}

impl NamespaceIndex {
    fn in_force(&self, slot: (EntityId, PredId), view: View) -> Vec<InForce> {
        // Every candidate's effective validity, wherever T falls.
        self.with_resolution(slot, view, Scope::All, |resolution| {
            let Resolution { live, values, merged, stood, verdict_of, .. } = resolution;
            verdict_of
                .into_iter()
                .enumerate()
                .filter_map(|(i, verdict)| {
                    let (candidate, verdict) = verdict?;
                    if candidate.polarity != Polarity::Asserted || verdict.effective.is_empty() {
                        return None;
                    }
                    let facts = if merged {
                        stood[i].iter().map(|&j| live[j].id).collect()
                    } else {
                        vec![candidate.id]
                    };
                    Some(InForce {
                        facts,
                        value: values[i].clone().into_owned(),
                        effective: verdict.effective,
                    })
                })
                .collect()
        })
    }

    /// What one slot held over valid time: per value, its facts' effective intervals
    /// joined where they touch or overlap; by start, then value.
    fn held(&self, slot: (EntityId, PredId), view: View) -> Vec<Held> {
        let mut by_value: BTreeMap<Value, Vec<(Interval, BTreeSet<FactId>)>> = BTreeMap::new();
        for f in self.in_force(slot, view) {
            let pieces = by_value.entry(f.value).or_default();
            pieces.extend(f.effective.iter().map(|i| (*i, f.facts.iter().copied().collect())));
        }
        let mut out: Vec<Held> =
            by_value
                .into_iter()
                .flat_map(|(value, pieces)| {
                    join(pieces, |facts, more| facts.extend(more)).into_iter().map(move |(valid, facts)| {
                        Held { value: value.clone(), valid, facts: facts.into_iter().collect() }
                    })
                })
                .collect();
        out.sort_by(|a, b| (a.valid.from(), &a.value).cmp(&(b.valid.from(), &b.value)));
        out
    }

    /// The slots of `predicate` as read at S (merged subjects folded), or of `subject`
    /// alone; empty when the predicate is unknown.
    fn slots_for(&self, subject: Option<EntityId>, predicate: &str, view: View) -> Vec<(EntityId, PredId)> {
        let Some(pred) = self.predicate_ids.get(predicate).copied() else {
            return Vec::new();
        };
        let s = view.known_at;
        match subject {
            Some(e) => vec![(self.canonical_entity(e, s), pred)],
            None => {
                let set: BTreeSet<(EntityId, PredId)> = self
                    .by_predicate
                    .get(&pred)
                    .into_iter()
                    .flatten()
                    .map(|e| (self.canonical_entity(*e, s), pred))
                    .collect();
                set.into_iter().collect()
            }
        }
    }

    /// An entity's timeline: per predicate (those asked, in that order, or every one it
    /// has, by name), the values in force over valid time as known at S.
    pub fn timeline(&self, subject: EntityId, predicates: Option<&[String]>, view: View) -> Vec<Lane> {
        let subject = self.canonical_entity(subject, view.known_at);
        let names: Vec<String> = match predicates {
            Some(asked) => {
                let mut seen = BTreeSet::new();
                asked.iter().filter(|p| seen.insert(p.as_str())).cloned().collect()
            }
            None => {
                let mut names: Vec<String> = self
                    .slots_of(subject, view.known_at)
                    .into_iter()
                    .map(|(_, p)| self.pred_name(p).to_owned())
                    .collect();
                names.sort();
                names
            }
        };
        names
            .into_iter()
            .map(|predicate| {
                let held = self
                    .slots_for(Some(subject), &predicate, view)
                    .into_iter()
                    .flat_map(|slot| self.held(slot, view))
                    .collect();
                Lane { predicate, held }
            })
            .filter(|lane| predicates.is_some() || !lane.held.is_empty())
            .collect()
    }

    /// How long each value of one slot was held within `[from, to)`, longest first.
    pub fn durations(
        &self,
        subject: EntityId,
        predicate: &str,
        from: Timestamp,
        to: Timestamp,
        view: View,
    ) -> Vec<HeldFor> {
        let mut out: Vec<HeldFor> = Vec::new();
        for slot in self.slots_for(Some(subject), predicate, view) {
            for h in self.held(slot, view) {
                let Some(piece) = clip(&h.valid, from, to) else {
                    continue;
                };
                let micros =
                    piece.to().map_or(0, |end| end.as_micros().saturating_sub(piece.from().as_micros()));
                let at_end = h.valid.contains(Timestamp::from_micros(to.as_micros() - 1));
                match out.iter_mut().find(|d| d.value == h.value) {
                    Some(d) => {
                        d.micros = d.micros.saturating_add(micros);
                        d.stretches += 1;
                        d.at_end |= at_end;
                    }
                    None => out.push(HeldFor { value: h.value, micros, stretches: 1, at_end }),
                }
            }
        }
        out.sort_by(|a, b| b.micros.cmp(&a.micros).then_with(|| a.value.cmp(&b.value)));
        out
    }

    /// How many subjects had `predicate` in force (with `value`, if given) at each of
    /// `points` (sorted); with `by_value`, one group per value in force at some point, by
    /// value.
    pub fn in_force_series(
        &self,
        predicate: &str,
        value: Option<&Value>,
        points: &[Timestamp],
        by_value: bool,
        view: View,
    ) -> Vec<SeriesGroup> {
        let wanted = value.map(|v| self.canonical_value(v, view.known_at));
        let mut all: Vec<(EntityId, Interval)> = Vec::new();
        let mut grouped: BTreeMap<Value, Vec<(EntityId, Interval)>> = BTreeMap::new();
        for slot in self.slots_for(None, predicate, view) {
            for f in self.in_force(slot, view) {
                if wanted.as_ref().is_some_and(|w| *w != f.value) {
                    continue;
                }
                let stretches = f.effective.iter().map(|i| (slot.0, *i));
                if by_value {
                    grouped.entry(f.value).or_default().extend(stretches);
                } else {
                    all.extend(stretches);
                }
            }
        }
        if by_value {
            grouped
                .into_iter()
                .map(|(value, stretches)| SeriesGroup {
                    value: Some(value),
                    counts: count_at_points(stretches, points),
                })
                // A value in force only between the steps is not in the series.
                .filter(|g| g.counts.iter().any(|c| *c > 0))
                .collect()
        } else {
            vec![SeriesGroup { value: None, counts: count_at_points(all, points) }]
        }
    }

    /// Changes of the values in force of `predicate` (or of every predicate) in each
    /// bucket `[points[i], points[i+1])`, the last one ending at `to`: an instant where a
    /// slot's values in force change (a value starts, ends, or gives way to another, which
    /// is one change) counts once per slot. `top` subjects with most changes come too.
    pub fn changes(
        &self,
        predicate: Option<&str>,
        points: &[Timestamp],
        to: Timestamp,
        top: usize,
        view: View,
    ) -> ChangeCounts {
        let slots: Vec<(EntityId, PredId)> = match predicate {
            Some(p) => self.slots_for(None, p, view),
            None => self.all_slots(view.known_at).into_iter().collect(),
        };
        let mut counts = vec![0u64; points.len()];
        let mut by_subject: BTreeMap<EntityId, u64> = BTreeMap::new();
        let Some(&first) = points.first() else {
            return ChangeCounts { counts, top: Vec::new() };
        };
        for slot in slots {
            let mut instants: Vec<Timestamp> = Vec::new();
            for h in self.held(slot, view) {
                instants.push(h.valid.from());
                instants.extend(h.valid.to());
            }
            instants.sort();
            instants.dedup();
            for t in instants.into_iter().filter(|t| *t >= first && *t < to) {
                let bucket = points.partition_point(|p| *p <= t) - 1;
                counts[bucket] += 1;
                *by_subject.entry(slot.0).or_default() += 1;
            }
        }
        let mut ranked: Vec<(EntityId, u64)> = by_subject.into_iter().collect();
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.truncate(top);
        ChangeCounts { counts, top: ranked }
    }

    fn stretches(&self, side: &Side, view: View) -> Vec<Stretch> {
        let wanted = side.value.as_ref().map(|v| self.canonical_value(v, view.known_at));
        let mut out = Vec::new();
        for slot in self.slots_for(side.subject, &side.predicate, view) {
            for f in self.in_force(slot, view) {
                if wanted.as_ref().is_some_and(|w| *w != f.value) {
                    continue;
                }
                for i in &f.effective {
                    out.push(Stretch {
                        fact: f.facts[0],
                        subject: slot.0,
                        value: f.value.clone(),
                        valid: *i,
                    });
                }
            }
        }
        out
    }

    /// Pairs of facts (one of each side, never one fact with itself, and of one value when
    /// `same_value`) whose stretches in force stand in `relation`, by a's start then b's;
    /// at most `limit`, and whether more were left (or the comparisons reached
    /// [`MAX_PAIR_CHECKS`]).
    pub fn overlaps(&self, query: &OverlapQuery, view: View) -> (Vec<(Stretch, Stretch)>, bool) {
        let OverlapQuery { a, b, relation, same_value, limit } = query;
        let (relation, same_value, limit) = (*relation, *same_value, *limit);
        let mut left = self.stretches(a, view);
        let mut right = self.stretches(b, view);
        let order = |x: &Stretch, y: &Stretch| {
            (x.valid.from(), x.valid.to().is_none(), x.valid.to(), x.fact).cmp(&(
                y.valid.from(),
                y.valid.to().is_none(),
                y.valid.to(),
                y.fact,
            ))
        };
        left.sort_by(order);
        right.sort_by(order);
        let mut out = Vec::new();
        let mut checks = 0u64;
        for x in &left {
            let (from, to) = (x.valid.from(), x.valid.to());
            // The starts b may have for the relation to hold: [lo, hi) by position.
            let at = |t: Timestamp| right.partition_point(|y| y.valid.from() < t);
            let after = |t: Timestamp| right.partition_point(|y| y.valid.from() <= t);
            let end_pos = |t: Option<Timestamp>| t.map_or(right.len(), at);
            let (lo, hi) = match relation {
                Allen::Before => (to.map_or(right.len(), after), right.len()),
                Allen::Meets => to.map_or((0, 0), |t| (at(t), after(t))),
                Allen::After | Allen::MetBy | Allen::OverlappedBy | Allen::During | Allen::Finishes => {
                    (0, at(from))
                }
                Allen::Starts | Allen::StartedBy | Allen::Equals => (at(from), after(from)),
                Allen::Overlaps | Allen::Contains | Allen::FinishedBy => (after(from), end_pos(to)),
                Allen::Intersects => (0, end_pos(to)),
            };
            for y in right.get(lo..hi).unwrap_or_default() {
                checks += 1;
                if checks > MAX_PAIR_CHECKS {
                    return (out, true);
                }
                if x.fact == y.fact
                    || (same_value && x.value != y.value)
                    || !relation.holds(&x.valid, &y.valid)
                {
                    continue;
                }
                if out.len() == limit {
                    return (out, true);
                }
                out.push((x.clone(), y.clone()));
            }
        }
        (out, false)
    }

    /// The stretches in force of every positive fact of `predicate` (or of every
    /// predicate) as known at S: counted at any T, the facts [`NamespaceIndex::aggregate`]
    /// counts in force there.
    pub fn in_force_endpoints(&self, predicate: Option<&str>, view: View) -> Endpoints {
        let slots: Vec<(EntityId, PredId)> = match predicate {
            Some(p) => self.slots_for(None, p, view),
            None => self.all_slots(view.known_at).into_iter().collect(),
        };
        self.fact_endpoints(slots, view)
    }

    /// The effective intervals of the facts in force at S in the slots of `touched`
    /// (subjects as asserted, read as the entities they are at S; each slot once), of
    /// `predicate` or of all: what those slots give [`NamespaceIndex::in_force_endpoints`],
    /// for keeping it up to date as batches change a few slots.
    pub fn in_force_endpoints_of(
        &self,
        touched: &[(EntityId, String)],
        predicate: Option<&str>,
        view: View,
    ) -> Endpoints {
        self.fact_endpoints(self.touched_slots(touched, predicate, view), view)
    }

    /// Per subject of `predicate`, the stretches over valid time where it holds any value
    /// as known at S (its facts' effective intervals joined), as one set of endpoints: how
    /// many subjects hold it at each T, as [`NamespaceIndex::in_force_series`] counts them
    /// without values.
    pub fn subjects_in_force_endpoints(&self, predicate: &str, view: View) -> Endpoints {
        self.subject_endpoints(self.slots_for(None, predicate, view), view)
    }

    /// What the slots of `touched` (of `predicate`) give
    /// [`NamespaceIndex::subjects_in_force_endpoints`].
    pub fn subjects_in_force_endpoints_of(
        &self,
        touched: &[(EntityId, String)],
        predicate: &str,
        view: View,
    ) -> Endpoints {
        self.subject_endpoints(self.touched_slots(touched, Some(predicate), view), view)
    }

    /// The slots of `touched` (of `predicate`, if given) as read at S, each once.
    fn touched_slots(
        &self,
        touched: &[(EntityId, String)],
        predicate: Option<&str>,
        view: View,
    ) -> BTreeSet<(EntityId, PredId)> {
        touched
            .iter()
            .filter(|(_, p)| predicate.is_none_or(|wanted| wanted == p))
            .filter_map(|(e, p)| {
                Some((self.canonical_entity(*e, view.known_at), *self.predicate_ids.get(p)?))
            })
            .collect()
    }

    /// The effective intervals of the facts in force in `slots`.
    fn fact_endpoints(&self, slots: impl IntoIterator<Item = (EntityId, PredId)>, view: View) -> Endpoints {
        Endpoints::new(slots.into_iter().flat_map(|slot| self.in_force(slot, view)).flat_map(|f| f.effective))
    }

    fn subject_endpoints(
        &self,
        slots: impl IntoIterator<Item = (EntityId, PredId)>,
        view: View,
    ) -> Endpoints {
        Endpoints::of_unions(slots.into_iter().flat_map(|slot| {
            self.in_force(slot, view)
                .into_iter()
                .flat_map(move |f| f.effective.into_iter().map(move |i| (slot.0, i)))
        }))
    }

    /// Facts in force at T, counted in groups, most first (then by predicate, value, subject).
    pub fn aggregate(&self, predicate: Option<&str>, group_by: GroupBy, view: View) -> Vec<Group> {
        let slots: Vec<(EntityId, PredId)> = match predicate {
            Some(p) => self.slots_for(None, p, view),
            None => self.all_slots(view.known_at).into_iter().collect(),
        };
        let mut groups: BTreeMap<GroupKey, u64> = BTreeMap::new();
        for slot in slots {
            self.with_resolution(slot, view, Scope::InForce, |resolution| {
                let Resolution { values, verdict_of, .. } = resolution;
                for (i, verdict) in verdict_of.into_iter().enumerate() {
                    let Some((candidate, verdict)) = verdict else {
                        continue;
                    };
                    if candidate.polarity != Polarity::Asserted || verdict.status != Status::Current {
                        continue;
                    }
                    let key = match group_by {
                        GroupBy::Nothing => (None, None, None),
                        GroupBy::Subject => (Some(slot.0), None, None),
                        GroupBy::Predicate => (None, Some(slot.1), None),
                        GroupBy::Value => (None, None, Some(values[i].clone().into_owned())),
                    };
                    *groups.entry(key).or_default() += 1;
                }
            });
        }
        let mut out: Vec<Group> = groups
            .into_iter()
            .map(|((subject, pred, value), count)| Group {
                subject,
                predicate: pred.map(|p| self.pred_name(p).to_owned()),
                value,
                count,
            })
            .collect();
        if out.is_empty() && group_by == GroupBy::Nothing {
            out.push(Group { subject: None, predicate: None, value: None, count: 0 });
        }
        // Ties by predicate name, then value, then subject: never by internal numbering.
        out.sort_by(|a, b| {
            b.count
                .cmp(&a.count)
                .then_with(|| (&a.predicate, &a.value, a.subject).cmp(&(&b.predicate, &b.value, b.subject)))
        });
        out
    }
}
