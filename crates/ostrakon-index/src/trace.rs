//! Memory traces derived from the log: when each record was first experienced, how
//! salient it was, and when it was recalled — and the feeds built on them (what an agent
//! might bring up unprompted, what is about to turn dormant). Salience only: nothing here
//! is consulted by resolution.

use std::collections::BTreeSet;

use ostrakon_core::{
    Cardinality, EntityId, Polarity, Profile, RecordKind, RecordRef, Seq, Timestamp, Trace, Value,
    salient_strength,
};

use crate::facts::FactRecord;
use crate::state::NamespaceIndex;
use ostrakon_core::{Fading, Recallable, Scope, View};

impl NamespaceIndex {
    /// The forgetting profile of a record as configured at S: for a fact, its predicate's
    /// own profile if it has one, else the namespace's per-kind or default profile.
    pub fn profile(&self, record: RecordRef, known_at: Seq) -> Profile {
        let config = self.configs.iter().rev().find(|(seq, _)| *seq <= known_at).map(|(_, c)| c.decay);
        let config = config.unwrap_or_default();
        if let RecordRef::Fact(id) = record
            && let Some(r) = self.facts.get(&self.canonical(id))
            && let Some(profile) = self.predicates[r.pred.0 as usize]
                .versions
                .iter()
                .rev()
                .find(|(seq, _)| *seq <= known_at)
                .and_then(|(_, def)| def.decay)
        {
            return profile;
        }
        config.profile(record.kind())
    }

    /// A record's trace and profile as known at S, or `None` if it was unknown then.
    pub fn trace(&self, record: RecordRef, known_at: Seq) -> Option<(Trace, Profile)> {
        let profile = self.profile(record, known_at);
        let trace = match record {
            RecordRef::Episode(id) => {
                let episode = self.episode_at(id, known_at)?;
                Trace {
                    born: episode.occurred_at,
                    initial_strength: salient_strength(&profile, episode.importance, false),
                    recalls: self.recalls(record, known_at),
                }
            }
            RecordRef::Entity(id) => {
                self.entity_version(id, known_at)?;
                // Merged entities share one trace: the earliest experience and every recall
                // of any of them (the stronger activation, the union of links).
                let c = self.canonical_entity(id, known_at);
                let mut born: Option<Timestamp> = None;
                let mut recalls = Vec::new();
                for m in self.merge_group(c, known_at) {
                    let first_seq = self.entities.get(&m).and_then(|v| v.first()).map(|(s, _)| *s);
                    let declared = first_seq.and_then(|s| self.system_time(s));
                    let m_born = self.entity_born(m, known_at).or(declared);
                    born = match (born, m_born) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                    recalls.extend(self.recalls(RecordRef::Entity(m), known_at));
                }
                recalls.sort();
                Trace { born: born?, initial_strength: profile.initial_strength, recalls }
            }
            RecordRef::Fact(id) => {
                let r = self.facts.get(&self.canonical(id)).filter(|r| r.seq <= known_at)?;
                let mut recalls = self.recalls(RecordRef::Fact(r.id), known_at);
                // Corroboration slows decay: each re-assertion counts as a recall when it
                // was experienced.
                for c in r.statements().skip(1).filter(|c| c.seq <= known_at) {
                    let experienced = c
                        .provenance
                        .iter()
                        .filter_map(|e| self.episode_at(*e, known_at).map(|e| e.occurred_at))
                        .min();
                    if let Some(t) = experienced.or(self.system_time(c.seq)) {
                        recalls.push(t);
                    }
                }
                // What it replaced hands down its recalls: the memory of "where I work"
                // stays strong when the employer changes.
                for predecessor in self.predecessors(r, known_at) {
                    recalls.extend(self.recalls(RecordRef::Fact(predecessor), known_at));
                }
                recalls.sort();
                Trace {
                    born: self.fact_born(r, known_at),
                    initial_strength: salient_strength(&profile, r.importance(), r.correction),
                    recalls,
                }
            }
        };
        Some((trace, profile))
    }

    /// Recall times of one record visible at S, sorted.
    fn recalls(&self, record: RecordRef, known_at: Seq) -> Vec<Timestamp> {
        let mut at: Vec<Timestamp> = self
            .reinforced
            .get(&record)
            .into_iter()
            .flatten()
            .filter(|(seq, _)| *seq <= known_at)
            .map(|(_, t)| *t)
            .collect();
        at.sort();
        at
    }

    /// When a fact was first experienced: its earliest source episode, else when the store
    /// learned it.
    fn fact_born(&self, r: &FactRecord, known_at: Seq) -> Timestamp {
        r.provenance
            .iter()
            .filter_map(|e| self.episode_at(*e, known_at).map(|e| e.occurred_at))
            .min()
            .or(self.system_time(r.seq))
            .unwrap_or(Timestamp::EPOCH)
    }

    /// When an entity was first experienced: the earliest experience of a fact naming it.
    fn entity_born(&self, id: EntityId, known_at: Seq) -> Option<Timestamp> {
        let outgoing = self.slots.range((id, crate::facts::PredId(0))..=(id, crate::facts::PredId(u32::MAX)));
        let object = Value::Entity(id);
        let incoming = self.facts.with_object(&object);
        outgoing
            .flat_map(|(_, ids)| ids.iter())
            .filter_map(|f| self.facts.get(f))
            .chain(incoming)
            .filter(|r| r.seq <= known_at)
            .map(|r| self.fact_born(r, known_at))
            .min()
    }

    /// Facts a fact replaced, as known at S: those it corrected (`supersedes`, followed
    /// back), and, in a cardinality-one slot, the earlier values it follows.
    fn predecessors(&self, r: &FactRecord, known_at: Seq) -> BTreeSet<ostrakon_core::FactId> {
        let mut out = BTreeSet::new();
        let mut next = r.supersedes();
        while let Some(id) = next.map(|id| self.canonical(id)) {
            if !out.insert(id) {
                break;
            }
            next = self.facts.get(&id).filter(|p| p.seq <= known_at).and_then(|p| p.supersedes());
        }
        let one = self.predicates[r.pred.0 as usize]
            .versions
            .iter()
            .rev()
            .find(|(seq, _)| *seq <= known_at)
            .is_some_and(|(_, d)| d.cardinality == Cardinality::One);
        if one && let Some(ids) = self.slots.get(&(r.subject, r.pred)) {
            out.extend(
                ids.iter()
                    .filter_map(|id| self.facts.get(id))
                    .filter(|p| {
                        p.seq <= known_at
                            && p.id != r.id
                            && p.polarity == Polarity::Asserted
                            && p.object != r.object
                            && p.valid.from() < r.valid.from()
                    })
                    .map(|p| p.id),
            );
        }
        out
    }

    /// Every record an agent could be offered at `view`: facts in force at (T, S),
    /// entities and episodes known at S.
    fn candidates(&self, view: View, kinds: &[RecordKind]) -> Vec<RecordRef> {
        let mut out = Vec::new();
        if kinds.contains(&RecordKind::Fact) {
            for slot in self.slots.keys() {
                out.extend(
                    self.resolve(*slot, view, Scope::InForce).into_iter().map(|f| RecordRef::Fact(f.fact.id)),
                );
            }
        }
        if kinds.contains(&RecordKind::Entity) {
            out.extend(
                self.entities
                    .iter()
                    .filter(|(_, v)| v.first().is_some_and(|(seq, _)| *seq <= view.known_at))
                    .map(|(id, _)| RecordRef::Entity(*id)),
            );
        }
        if kinds.contains(&RecordKind::Episode) {
            out.extend(
                self.episode_order
                    .iter()
                    .filter(|(_, id)| self.episode_at(*id, view.known_at).is_some())
                    .map(|(_, id)| RecordRef::Episode(*id)),
            );
        }
        out
    }

    /// What an agent might bring up unprompted at clock `at`: records already experienced
    /// and not dormant, by retention (highest first, then by record), at most `limit`.
    pub fn recallable(
        &self,
        view: View,
        at: Timestamp,
        kinds: &[RecordKind],
        limit: usize,
    ) -> Vec<Recallable> {
        let mut out: Vec<Recallable> = self
            .candidates(view, kinds)
            .into_iter()
            .filter_map(|record| {
                let (trace, profile) = self.trace(record, view.known_at)?;
                // Not experienced yet at the clock: nothing to recall.
                if trace.born > at {
                    return None;
                }
                let state = trace.state(&profile, at);
                (!state.dormant).then_some(Recallable { record, state })
            })
            .collect();
        out.sort_by(|a, b| b.state.retention.total_cmp(&a.state.retention).then(a.record.cmp(&b.record)));
        out.truncate(limit);
        out
    }

    /// Records experienced by `from` that turn dormant within `[from, to)` unless
    /// recalled, by when.
    pub fn forecast(&self, view: View, from: Timestamp, to: Timestamp, kinds: &[RecordKind]) -> Vec<Fading> {
        let mut out: Vec<Fading> = self
            .candidates(view, kinds)
            .into_iter()
            .filter_map(|record| {
                let (trace, profile) = self.trace(record, view.known_at)?;
                if trace.born > from {
                    return None;
                }
                trace.turns_dormant(&profile, from, to).map(|dormant_at| Fading { record, dormant_at })
            })
            .collect();
        out.sort_by(|a, b| a.dormant_at.cmp(&b.dormant_at).then(a.record.cmp(&b.record)));
        out
    }
}
