//! Reads at a pinned (validAt T, knownAt S): facts, slot histories, entities,
//! snapshots and neighbourhoods, every one resolved by the core's rules.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use ostrakon_core::{
    Candidate, Cardinality, Contradicts, Entity, EntityId, Episode, EpisodeId, FactId, Interval, Polarity,
    Seq, Status, Timestamp, Value, combine_confidence, normalize_name, resolve_current, resolve_slot,
};

use crate::facts::PredId;
use crate::facts::{FactRecord, Statement};
use crate::state::NamespaceIndex;
use ostrakon_core::{
    EntityFilter, EntityView, EpisodeCursor, EpisodeFilter, FactFilter, FactView, Neighborhood, Page,
    Retraction, RetractionView, Scope, SnapshotCursor, SnapshotPage, View,
};

/// One slot as resolution sees it (see [`NamespaceIndex::with_resolution`]).
pub(crate) struct Resolution<'r, 'a> {
    /// Records visible at S, in assertion order, retracted ones included.
    pub(crate) visible: Vec<&'a FactRecord>,
    /// The visible records not retracted at S.
    pub(crate) live: &'r [&'a FactRecord],
    /// Each live record's value as read at S (renamed by merges).
    pub(crate) values: &'r [Cow<'a, Value>],
    /// Whether merged entities make this slot one of several.
    pub(crate) merged: bool,
    /// For each live record that stands for others (only when merged): them, itself first.
    pub(crate) stood: &'r [Vec<usize>],
    /// For each live record: its candidate and verdict, unless another stands for it.
    pub(crate) verdict_of: Vec<Option<(&'r Candidate<'r>, ostrakon_core::Verdict)>>,
}

impl NamespaceIndex {
    fn cardinality_at(&self, pred: PredId, s: Seq) -> Cardinality {
        self.predicates[pred.0 as usize]
            .versions
            .iter()
            .rev()
            .find(|(seq, _)| *seq <= s)
            .map_or(Cardinality::Many, |(_, d)| d.cardinality)
    }

    /// Resolves one `(subject, predicate)` slot: every visible fact with its verdict,
    /// in assertion order. Retracted facts are included only for `Scope::All`.
    pub(crate) fn resolve(&self, slot: (EntityId, PredId), view: View, scope: Scope) -> Vec<FactView> {
        self.resolve_only(slot, view, scope, None)
    }

    /// [`NamespaceIndex::resolve`], keeping only the facts in `only` (when given): the
    /// slot is resolved whole, but only those are written out (their reasons, support,
    /// provenance), so asking for a few facts of a slot of thousands costs the
    /// resolution, not thousands of answers.
    pub(crate) fn resolve_only(
        &self,
        slot: (EntityId, PredId),
        view: View,
        scope: Scope,
        only: Option<&BTreeSet<FactId>>,
    ) -> Vec<FactView> {
        let s = view.known_at;
        self.with_resolution(slot, view, scope, |resolution| {
            let Resolution { visible, live, values, merged, stood, mut verdict_of } = resolution;
            let statements = move |i: usize| stood[i].iter().map(move |&j| live[j]);
            let mut views = Vec::with_capacity(visible.len());
            let mut next_live = 0;
            for r in visible {
                let wanted = only.is_none_or(|ids| ids.contains(&r.id));
                if r.is_retracted_at(s) {
                    if scope == Scope::All && wanted {
                        views.push(self.retracted_view(r, view));
                    }
                    continue;
                }
                let i = next_live;
                next_live += 1;
                let Some((candidate, verdict)) = verdict_of[i].take().filter(|_| wanted) else {
                    continue;
                };
                if scope == Scope::InForce
                    && !(verdict.status == Status::Current && r.polarity == Polarity::Asserted)
                {
                    continue;
                }
                let (confidence, corroborations, provenance) =
                    if merged { self.support_of(statements(i), s) } else { self.support(r, s) };
                let reason =
                    reason(verdict.status, candidate, verdict.beaten_by, &verdict.contradicts, self, r);
                let mut fact = self.fact_of(r);
                fact.subject = slot.0;
                if let Cow::Owned(v) = &values[i] {
                    fact.object = v.clone();
                }
                views.push(FactView {
                    fact,
                    valid: candidate.valid,
                    asserted_seq: r.seq,
                    asserted_at: self.system_time(r.seq).unwrap_or(Timestamp::MIN),
                    status: verdict.status,
                    beaten_by: verdict.beaten_by,
                    contradicts: verdict.contradicts,
                    effective: verdict.effective,
                    confidence,
                    corroborations,
                    provenance,
                    retraction: None,
                    reason,
                });
            }
            views
        })
    }

    /// What resolution makes of one slot at `view`, handed to `f`: the visible records,
    /// the live ones with their values as read at S, and each standing fact's candidate
    /// and verdict — every one's for `Scope::All`, only those in force at T for
    /// `Scope::InForce` (the others' verdicts are `None`), which is much cheaper on a slot
    /// with a long history. Every read of a slot goes through here.
    pub(crate) fn with_resolution<R>(
        &self,
        slot: (EntityId, PredId),
        view: View,
        need: Scope,
        f: impl FnOnce(Resolution<'_, '_>) -> R,
    ) -> R {
        let s = view.known_at;
        // Merged entities answer as one: their slots are one slot.
        let members = self.merge_group(slot.0, s);
        let merged = members.len() > 1;
        let ids: Cow<'_, [FactId]> = if merged {
            let mut ids: Vec<FactId> =
                members.iter().filter_map(|m| self.slots.get(&(*m, slot.1))).flatten().copied().collect();
            ids.sort();
            Cow::Owned(ids)
        } else {
            Cow::Borrowed(self.slots.get(&slot).map_or(&[][..], Vec::as_slice))
        };
        let visible: Vec<&FactRecord> =
            ids.iter().filter_map(|id| self.facts.get(id)).filter(|r| r.seq <= s).collect();
        let live: Vec<&FactRecord> = visible.iter().copied().filter(|r| !r.is_retracted_at(s)).collect();
        // Values as read at S; borrowed unless a merge renames an entity.
        let values: Vec<Cow<'_, Value>> = live
            .iter()
            .map(|r| match &r.object {
                Value::Entity(e) if !self.merged_into.is_empty() => {
                    Cow::Owned(Value::Entity(self.canonical_entity(*e, s)))
                }
                v => Cow::Borrowed(v),
            })
            .collect();
        let ends: Vec<Option<Timestamp>> = live.iter().map(|r| r.valid_to_at(s)).collect();
        // Once entities are merged, two facts may say the same thing: the first one stands
        // and the others corroborate it.
        let mut stands_for: Vec<usize> = (0..live.len()).collect();
        // The facts each standing one stands for, itself first (only when merged).
        let mut stood: Vec<Vec<usize>> = Vec::new();
        if merged {
            let mut first: HashMap<(&Value, Polarity, Timestamp, Option<Timestamp>), usize> = HashMap::new();
            stood = (0..live.len()).map(|_| Vec::new()).collect();
            for i in 0..live.len() {
                let key = (values[i].as_ref(), live[i].polarity, live[i].valid.from(), ends[i]);
                let j = *first.entry(key).or_insert(i);
                stands_for[i] = j;
                stood[j].push(i);
            }
        }
        let (live, stood) = (&live, &stood);
        let statements = |i: usize| stood[i].iter().map(|&j| live[j]);
        let standing: Vec<usize> = (0..live.len()).filter(|&i| stands_for[i] == i).collect();
        let candidates: Vec<Candidate<'_>> = standing
            .iter()
            .map(|&i| Candidate {
                id: live[i].id,
                value: values[i].as_ref(),
                polarity: live[i].polarity,
                // Ends are validated against the start when applied, so this never fails.
                valid: Interval::new("valid", live[i].valid.from(), ends[i]).unwrap_or(live[i].valid),
                // A fact ranks by its latest live statement: restating it after a
                // denial puts it above the denial again.
                seq: if merged {
                    statements(i).map(|r| r.rank_seq_at(s)).max().unwrap_or(live[i].seq)
                } else {
                    live[i].rank_seq_at(s)
                },
                confidence: if merged {
                    self.confidence_of(statements(i), s)
                } else {
                    self.confidence_at(live[i], s)
                },
            })
            .collect();
        let card = self.cardinality_at(slot.1, s);
        let mut verdict_of: Vec<Option<(&Candidate<'_>, ostrakon_core::Verdict)>> =
            (0..live.len()).map(|_| None).collect();
        match need {
            Scope::All => {
                let verdicts = resolve_slot(card, &candidates, view.valid_at);
                for (&i, cv) in standing.iter().zip(candidates.iter().zip(verdicts)) {
                    verdict_of[i] = Some(cv);
                }
            }
            Scope::InForce => {
                let verdicts = resolve_current(card, &candidates, view.valid_at);
                for (&i, (c, v)) in standing.iter().zip(candidates.iter().zip(verdicts)) {
                    verdict_of[i] = v.map(|v| (c, v));
                }
            }
        }
        f(Resolution { visible, live, values: &values, merged, stood, verdict_of })
    }

    /// Confidence, count and provenance of one fact stated by `records` (the fact first).
    fn support_of<'a>(
        &self,
        records: impl Iterator<Item = &'a FactRecord>,
        s: Seq,
    ) -> (f64, u32, Vec<EpisodeId>) {
        let mut confidences = Vec::new();
        let mut count = 0;
        let mut provenance = Vec::new();
        for r in records {
            let (c, n, p) = self.support(r, s);
            confidences.push(c);
            count += n;
            provenance.extend(p);
        }
        provenance.sort();
        provenance.dedup();
        let confidence =
            if confidences.len() == 1 { confidences[0] } else { combine_confidence(confidences) };
        (confidence, count, provenance)
    }

    fn confidence_of<'a>(&self, records: impl Iterator<Item = &'a FactRecord>, s: Seq) -> f64 {
        let confidences: Vec<f64> = records.map(|r| self.confidence_at(r, s)).collect();
        if confidences.len() == 1 { confidences[0] } else { combine_confidence(confidences) }
    }

    fn retracted_view(&self, r: &FactRecord, view: View) -> FactView {
        let (confidence, corroborations, provenance) = self.support(r, view.known_at);
        let (seq, kind) =
            r.retraction_at(view.known_at).unwrap_or((Seq(0), Retraction::Retracted { reason: None }));
        let (beaten_by, reason) = match &kind {
            Retraction::CorrectedBy(by) => (Some(*by), format!("corrected by {by} in batch {seq}")),
            Retraction::Retracted { reason: Some(why) } => (None, format!("retracted in batch {seq}: {why}")),
            Retraction::Retracted { reason: None } => (None, format!("retracted in batch {seq}")),
            Retraction::Ended(to) => (None, format!("its last statement was ended at {to} in batch {seq}")),
        };
        let to = r.valid_to_at(view.known_at);
        FactView {
            fact: self.fact_of(r),
            valid: Interval::new("valid", r.valid.from(), to).unwrap_or(r.valid),
            asserted_seq: r.seq,
            asserted_at: self.system_time(r.seq).unwrap_or(Timestamp::MIN),
            status: Status::Retracted,
            beaten_by,
            contradicts: Contradicts::none(),
            effective: Vec::new(),
            confidence,
            corroborations,
            provenance,
            retraction: Some(RetractionView { seq, kind }),
            reason,
        }
    }

    /// Confidence, statement count and provenance of a fact at `s`, from its live
    /// statements; a fact with none (retracted) reports every statement visible.
    fn support(&self, r: &FactRecord, s: Seq) -> (f64, u32, Vec<EpisodeId>) {
        let mut statements: Vec<Statement<'_>> = r.live_at(s).collect();
        if statements.is_empty() {
            statements = r.visible_at(s).collect();
        }
        let mut provenance: Vec<EpisodeId> =
            statements.iter().flat_map(|st| st.provenance.iter().copied()).collect();
        provenance.sort();
        provenance.dedup();
        (combined(&statements), statements.len() as u32, provenance)
    }

    /// The confidences of the live statements combined (noisy-or); exactly the stated
    /// confidence when there is one.
    fn confidence_at(&self, r: &FactRecord, s: Seq) -> f64 {
        combined(&r.live_at(s).collect::<Vec<_>>())
    }

    fn pred_id(&self, name: &str) -> Option<PredId> {
        self.predicate_ids.get(name).copied()
    }

    /// The slots of a subject as read at S: those of every entity merged into it, keyed by
    /// the subject it reads as.
    pub(crate) fn slots_of(&self, subject: EntityId, known_at: Seq) -> BTreeSet<(EntityId, PredId)> {
        if self.merged_into.is_empty() {
            return self
                .slots
                .range((subject, PredId(0))..=(subject, PredId(u32::MAX)))
                .map(|(k, _)| *k)
                .collect();
        }
        let c = self.canonical_entity(subject, known_at);
        self.merge_group(c, known_at)
            .into_iter()
            .flat_map(|m| self.slots.range((m, PredId(0))..=(m, PredId(u32::MAX))))
            .map(|((_, p), _)| (c, *p))
            .collect()
    }

    /// Every slot as read at S (merged subjects folded into the entity they read as).
    pub(crate) fn all_slots(&self, known_at: Seq) -> BTreeSet<(EntityId, PredId)> {
        self.slots.keys().map(|(e, p)| (self.canonical_entity(*e, known_at), *p)).collect()
    }

    /// Facts matching `filter` at `view`, ordered by (subject, predicate, valid start, id).
    /// With no filter at all, every slot is read: prefer [`NamespaceIndex::snapshot`].
    pub fn facts(&self, filter: &FactFilter, view: View, scope: Scope) -> Vec<FactView> {
        let pred = match &filter.predicate {
            Some(name) => match self.pred_id(name) {
                Some(p) => Some(p),
                None => return Vec::new(),
            },
            None => None,
        };
        let s = view.known_at;
        let canonical = |e: EntityId| self.canonical_entity(e, s);
        let object = filter.object.as_ref().map(|o| self.canonical_value(o, s));
        let slots: BTreeSet<(EntityId, PredId)> = match (filter.subject, pred, &object) {
            (Some(subject), Some(p), _) => [(canonical(subject), p)].into_iter().collect(),
            (Some(subject), None, _) => self.slots_of(subject, s),
            (None, _, Some(object)) => {
                let values: Vec<Value> = match object {
                    Value::Entity(e) => self.merge_group(*e, s).into_iter().map(Value::Entity).collect(),
                    literal => vec![literal.clone()],
                };
                values
                    .iter()
                    .flat_map(|v| self.facts.with_object(v))
                    .filter(|r| pred.is_none_or(|p| r.pred == p))
                    .map(|r| (canonical(r.subject), r.pred))
                    .collect()
            }
            (None, Some(p), None) => {
                self.by_predicate.get(&p).into_iter().flatten().map(|e| (canonical(*e), p)).collect()
            }
            (None, None, None) => self.all_slots(s),
        };
        let mut out: Vec<FactView> = slots
            .into_iter()
            .flat_map(|slot| self.resolve(slot, view, scope))
            .filter(|f| object.as_ref().is_none_or(|o| &f.fact.object == o))
            .collect();
        out.sort_by(|a, b| {
            (a.fact.subject, &a.fact.predicate, a.fact.valid.from(), a.fact.id).cmp(&(
                b.fact.subject,
                &b.fact.predicate,
                b.fact.valid.from(),
                b.fact.id,
            ))
        });
        out
    }

    /// Every version of the slot `(subject, predicate)` known at S, retracted ones
    /// included, ordered by valid start then id, each with its status at T.
    pub fn history(&self, subject: EntityId, predicate: &str, view: View) -> Vec<FactView> {
        let Some(pred) = self.pred_id(predicate) else {
            return Vec::new();
        };
        let subject = self.canonical_entity(subject, view.known_at);
        let mut out = self.resolve((subject, pred), view, Scope::All);
        out.sort_by_key(|f| (f.fact.valid.from(), f.fact.id));
        out
    }

    /// One entity as known at S, with its facts in force at T.
    pub fn entity_at(&self, id: EntityId, view: View) -> Option<EntityView> {
        let (declared_seq, entity) = self.entity_version(id, view.known_at)?;
        let filter = FactFilter { subject: Some(entity.id), ..FactFilter::default() };
        Some(EntityView { entity, declared_seq, facts: self.facts(&filter, view, Scope::InForce) })
    }

    /// Entities known at S matching `filter`, by id, at most `limit` after `after`; the
    /// second value says whether more follow.
    pub fn entities(
        &self,
        filter: &EntityFilter,
        known_at: Seq,
        after: Option<EntityId>,
        limit: usize,
    ) -> Page<(Seq, Entity)> {
        let key = filter.name.as_deref().map(normalize_name);
        let start = after.map_or(std::ops::Bound::Unbounded, std::ops::Bound::Excluded);
        // By name, only the entities that ever had it (or absorbed one that did) are
        // looked at: a hash probe, not a scan; the version at S still decides.
        let named: Option<BTreeSet<EntityId>> = key.as_ref().map(|k| {
            self.names
                .get(k)
                .into_iter()
                .flat_map(|named| &named.ever)
                .map(|e| self.canonical_entity(*e, known_at))
                .collect()
        });
        let ids: Box<dyn Iterator<Item = &EntityId> + '_> = match &named {
            Some(ids) => Box::new(ids.range((start, std::ops::Bound::Unbounded))),
            None => Box::new(self.entities.range((start, std::ops::Bound::Unbounded)).map(|(id, _)| id)),
        };
        let mut matching = ids
            .filter(|id| self.canonical_entity(**id, known_at) == **id)
            .filter_map(|id| self.entity_version(*id, known_at))
            .filter(|(_, e)| {
                key.as_ref().is_none_or(|k| {
                    std::iter::once(&e.name).chain(&e.aliases).any(|n| &normalize_name(n) == k)
                }) && filter.kind.as_ref().is_none_or(|k| e.kind.as_ref() == Some(k))
            });
        let items = matching.by_ref().take(limit).collect();
        Page { items, more: matching.next().is_some() }
    }

    /// Episodes known at S matching `filter`, by (occurred_at, id), at most `limit` after
    /// `after`; the second value says whether more follow.
    pub fn episodes(
        &self,
        filter: &EpisodeFilter,
        known_at: Seq,
        after: Option<EpisodeCursor>,
        limit: usize,
    ) -> Page<(Seq, Episode)> {
        let empty = BTreeSet::new();
        let order = match &filter.thread {
            Some(thread) => self.threads.get(thread).unwrap_or(&empty),
            None => &self.episode_order,
        };
        let lower = match (after, filter.from) {
            (Some(a), _) => std::ops::Bound::Excluded(a),
            (None, Some(from)) => std::ops::Bound::Included((from, EpisodeId(0))),
            (None, None) => std::ops::Bound::Unbounded,
        };
        let mut matching = order
            .range((lower, std::ops::Bound::Unbounded))
            .take_while(|(at, _)| filter.to.is_none_or(|to| *at < to))
            .filter(|(at, _)| filter.from.is_none_or(|from| *at >= from))
            .filter_map(|(_, id)| self.episodes.get(id))
            .filter(|(seq, _)| *seq <= known_at)
            .cloned();
        let items = matching.by_ref().take(limit).collect();
        Page { items, more: matching.next().is_some() }
    }

    /// An entity's version as known at S.
    /// The entity `id` reads as at S (following merges), as known then: merged entities'
    /// names join its aliases.
    pub fn entity_version(&self, id: EntityId, known_at: Seq) -> Option<(Seq, Entity)> {
        let version = |e: EntityId| self.entities.get(&e)?.iter().rev().find(|(seq, _)| *seq <= known_at);
        version(id)?;
        let c = self.canonical_entity(id, known_at);
        let (seq, entity) = version(c)?;
        let mut entity = entity.clone();
        for other in self.merge_group(c, known_at).into_iter().skip(1) {
            if let Some((_, merged)) = version(other) {
                for name in std::iter::once(&merged.name).chain(&merged.aliases) {
                    let known = std::iter::once(&entity.name)
                        .chain(&entity.aliases)
                        .any(|n| normalize_name(n) == normalize_name(name));
                    if !known {
                        entity.aliases.push(name.clone());
                    }
                }
            }
        }
        Some((*seq, entity))
    }

    /// One fact (or the fact a re-assertion restated) as seen from `view`, if known at S.
    pub fn fact_at(&self, id: FactId, view: View) -> Option<FactView> {
        let id = self.canonical(id);
        let r = self.facts.get(&id).filter(|r| r.seq <= view.known_at)?;
        let subject = self.canonical_entity(r.subject, view.known_at);
        let only = BTreeSet::from([id]);
        self.resolve_only((subject, r.pred), view, Scope::All, Some(&only))
            .into_iter()
            .find(|f| f.fact.id == id)
    }

    /// The statements of the fact `id` names (a statement's id names its fact) visible at
    /// S, in log order; empty when the fact is not known then.
    pub fn statements_at(&self, id: FactId, view: View) -> Vec<ostrakon_core::StatementView> {
        let s = view.known_at;
        let Some(r) = self.facts.get(&self.canonical(id)).filter(|r| r.seq <= s) else { return Vec::new() };
        let whole = r.retraction_at(s).filter(|_| r.is_retracted_whole());
        r.visible_at(s)
            .map(|st| ostrakon_core::StatementView {
                id: st.id,
                fact: r.id,
                seq: st.seq,
                asserted_at: self.system_time(st.seq).unwrap_or(Timestamp::MIN),
                confidence: st.confidence,
                provenance: st.provenance.to_vec(),
                withdrawn: st
                    .withdrawn
                    .filter(|(w, _)| *w <= s)
                    .cloned()
                    .or_else(|| whole.clone())
                    .map(|(seq, kind)| RetractionView { seq, kind }),
            })
            .collect()
    }

    /// Facts by id (a restatement's id gives the fact it restated) as seen from `view`,
    /// in the order asked, leaving out those not known at S. Each slot they touch is
    /// resolved once, however many of its facts are asked for.
    pub fn facts_by_id(&self, ids: &[FactId], view: View) -> Vec<FactView> {
        let mut wanted: BTreeMap<(EntityId, PredId), BTreeSet<FactId>> = BTreeMap::new();
        for id in ids {
            let id = self.canonical(*id);
            if let Some(r) = self.facts.get(&id).filter(|r| r.seq <= view.known_at) {
                let subject = self.canonical_entity(r.subject, view.known_at);
                wanted.entry((subject, r.pred)).or_default().insert(id);
            }
        }
        let mut found: BTreeMap<FactId, FactView> = BTreeMap::new();
        for (slot, ids) in wanted {
            found.extend(
                self.resolve_only(slot, view, Scope::All, Some(&ids)).into_iter().map(|f| (f.fact.id, f)),
            );
        }
        ids.iter().filter_map(|id| found.get(&self.canonical(*id)).cloned()).collect()
    }

    /// The batch that recorded an episode.
    pub fn episode_seq(&self, id: EpisodeId) -> Option<Seq> {
        self.episodes.get(&id).map(|(seq, _)| *seq)
    }

    /// An episode, if known at S.
    pub fn episode_at(&self, id: EpisodeId, known_at: Seq) -> Option<&Episode> {
        self.episodes.get(&id).filter(|(seq, _)| *seq <= known_at).map(|(_, e)| e)
    }

    /// Every fact in force at `view` (or, with [`Scope::All`], every fact visible at S
    /// whatever its status at T), ordered by (subject, predicate, fact id), at most `limit`
    /// of them after `after`.
    pub fn snapshot(
        &self,
        view: View,
        scope: Scope,
        after: Option<SnapshotCursor>,
        limit: usize,
    ) -> SnapshotPage {
        let start = after.map_or((EntityId(0), PredId(0)), |c| (c.subject, PredId(c.predicate)));
        let mut facts = Vec::new();
        let mut cursors = Vec::new();
        let mut last = None;
        // Without merges the slots are already keyed as read: no need to rebuild the set.
        let merged_slots = (!self.merged_into.is_empty()).then(|| self.all_slots(view.known_at));
        let slots: Box<dyn Iterator<Item = (EntityId, PredId)> + '_> = match &merged_slots {
            Some(set) => Box::new(set.range(start..).copied()),
            None => Box::new(self.slots.range(start..).map(|(k, _)| *k)),
        };
        for slot in slots {
            let mut found = self.resolve(slot, view, scope);
            found.sort_by_key(|f| f.fact.id);
            for f in found {
                let cursor = SnapshotCursor { subject: slot.0, predicate: slot.1.0, fact: f.fact.id };
                if after.is_some_and(|a| cursor <= a) {
                    continue;
                }
                if facts.len() == limit {
                    return SnapshotPage { facts, cursors, next: last };
                }
                facts.push(f);
                cursors.push(cursor);
                last = Some(cursor);
            }
        }
        SnapshotPage { facts, cursors, next: None }
    }

    /// Entities within `depth` hops of `start` over facts in force at `view` (either
    /// direction), with those facts. Every hop is resolved at the same (T, S).
    pub fn neighbors(&self, start: EntityId, depth: u32, view: View) -> Neighborhood {
        let mut dist: BTreeMap<EntityId, u32> = BTreeMap::new();
        let mut edges: BTreeMap<FactId, FactView> = BTreeMap::new();
        let declared =
            self.entities.get(&start).is_some_and(|v| v.iter().any(|(seq, _)| *seq <= view.known_at));
        if !declared {
            return Neighborhood { nodes: Vec::new(), edges: Vec::new() };
        }
        let start = self.canonical_entity(start, view.known_at);
        dist.insert(start, 0);
        let mut frontier = vec![start];
        for hop in 1..=depth {
            let mut next = BTreeSet::new();
            for &e in &frontier {
                for f in self.edges_of(e, view) {
                    let other =
                        if f.fact.subject == e { f.fact.object.as_entity() } else { Some(f.fact.subject) };
                    if let Some(other) = other
                        && !dist.contains_key(&other)
                    {
                        next.insert(other);
                    }
                    edges.entry(f.fact.id).or_insert(f);
                }
            }
            for &n in &next {
                dist.insert(n, hop);
            }
            frontier = next.into_iter().collect();
            if frontier.is_empty() {
                break;
            }
        }
        // Keep only edges whose both ends were reached (the last hop's outer edges lead out).
        let edges = edges
            .into_values()
            .filter(|f| {
                dist.contains_key(&f.fact.subject)
                    && f.fact.object.as_entity().is_some_and(|o| dist.contains_key(&o))
            })
            .collect();
        let mut nodes: Vec<(EntityId, u32)> = dist.into_iter().collect();
        nodes.sort_by_key(|&(e, d)| (d, e));
        Neighborhood { nodes, edges }
    }

    /// Facts in force at `view` joining `e` to another entity, outgoing then incoming.
    fn edges_of(&self, e: EntityId, view: View) -> Vec<FactView> {
        let s = view.known_at;
        let mut out: Vec<FactView> = self
            .slots_of(e, s)
            .into_iter()
            .flat_map(|slot| self.resolve(slot, view, Scope::InForce))
            .filter(|f| f.fact.object.as_entity().is_some())
            .collect();
        let incoming: BTreeSet<(EntityId, PredId)> = self
            .merge_group(e, s)
            .into_iter()
            .map(Value::Entity)
            .collect::<Vec<Value>>()
            .iter()
            .flat_map(|v| self.facts.with_object(v))
            .filter(|r| r.seq <= s)
            .map(|r| (self.canonical_entity(r.subject, s), r.pred))
            .collect();
        for slot in incoming {
            out.extend(
                self.resolve(slot, view, Scope::InForce)
                    .into_iter()
                    .filter(|f| f.fact.object == Value::Entity(e)),
            );
        }
        out
    }
}

/// Noisy-or of the statements' confidences; exactly the one when there is one.
fn combined(statements: &[Statement<'_>]) -> f64 {
    match statements {
        [] => 0.0,
        [one] => one.confidence,
        many => combine_confidence(many.iter().map(|st| st.confidence)),
    }
}

/// Facts a reason names of those a fact contradicts; the rest are counted.
const REASON_NAMES: usize = 5;

fn reason(
    status: Status,
    candidate: &Candidate<'_>,
    beaten_by: Option<FactId>,
    contradicts: &Contradicts,
    index: &NamespaceIndex,
    record: &FactRecord,
) -> String {
    let ids = |ids: &Contradicts| {
        let named = ids.first(REASON_NAMES).iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
        match ids.len().saturating_sub(REASON_NAMES) {
            0 => named,
            more => format!("{named} and {more} more"),
        }
    };
    let beater = beaten_by.map(|id| id.to_string()).unwrap_or_default();
    let beater_from =
        beaten_by.and_then(|id| index.facts.get(&id)).map(|r| r.valid.from().to_string()).unwrap_or_default();
    let base = match status {
        Status::Current if record.polarity == Polarity::Negated => "the denial holds".to_owned(),
        Status::Current => "in force".to_owned(),
        Status::NotYetValid => format!("valid from {}", candidate.valid.from()),
        Status::Ended => match candidate.valid.to() {
            Some(to) if Some(to) != record.valid.to() => format!("ended at {to} by a later update"),
            Some(to) => format!("ended at {to}"),
            None => "ended".to_owned(),
        },
        Status::Superseded => format!("superseded by {beater}, valid from {beater_from}"),
        Status::Negated if record.polarity == Polarity::Negated => {
            format!("overridden by {beater}, which restates the value from {beater_from}")
        }
        Status::Negated => format!("negated by {beater} from {beater_from}"),
        Status::Contradicted => {
            format!("contradicted by {beater}, which starts at the same time and ranks above")
        }
        Status::Retracted => "retracted".to_owned(),
    };
    if contradicts.is_empty() || status == Status::Contradicted {
        base
    } else {
        format!("{base}; contradicts {}", ids(contradicts))
    }
}
