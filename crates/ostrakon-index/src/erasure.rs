//! Erasure in the folded state: what an erasure of an entity, episodes or facts takes
//! with it, the erasures and tombstones the log holds, and whether an erasure still has
//! content to remove (its compaction did not finish before a crash).

use std::collections::BTreeSet;

use ostrakon_core::{
    EntityId, EpisodeId, ErasedRef, Erasure, Event, FactId, RecordRef, Seq, Timestamp, TombstoneOf, Trigger,
    Value,
};

use crate::state::NamespaceIndex;

/// Where an erased record was and when it was erased, for the `ERASED` marker a read
/// answers in its place.
#[derive(Clone, Debug, PartialEq)]
pub struct ErasedMark {
    /// The record.
    pub record: ErasedRef,
    /// The batch that held it (`None` when compaction has not run yet).
    pub seq: Option<Seq>,
    /// The batch that erased it.
    pub erased_in: Seq,
    /// When that batch committed.
    pub erased_at: Timestamp,
}

/// An erasure as the log holds it, for audit.
#[derive(Clone, Debug, PartialEq)]
pub struct ErasureRecord {
    /// The batch that decided it.
    pub seq: Seq,
    /// When it committed.
    pub at: Timestamp,
    /// What it erased, why and for whom.
    pub erasure: Erasure,
}

/// Why an erasure cannot be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EraseRefused {
    /// The id names nothing in the namespace (or something erased already).
    #[error("{0} is not a record of this namespace")]
    Unknown(String),
}

impl NamespaceIndex {
    pub(crate) fn apply_erased(&mut self, seq: Seq, erasure: &Erasure) {
        if erasure.records.iter().any(|(r, _)| self.holds(*r)) {
            // Compaction had not removed the content when the log was last closed.
            self.pending_erasure = true;
        }
        self.erasures.push((seq, erasure.clone()));
    }

    pub(crate) fn apply_tombstone(&mut self, seq: Seq, of: TombstoneOf) {
        let TombstoneOf::Record(record) = of else { return };
        // Ids are never given twice, erased or not.
        match record {
            ErasedRef::Entity(id) => self.max_entity = self.max_entity.max(id.0),
            ErasedRef::Fact(id) => self.max_fact = self.max_fact.max(id.0),
            ErasedRef::Episode(id) => self.max_episode = self.max_episode.max(id.0),
            ErasedRef::Intention(id) => self.max_intention = self.max_intention.max(id.0),
        }
        self.tombstones.insert(record, seq);
    }

    /// Whether the state holds content of `record`.
    fn holds(&self, record: ErasedRef) -> bool {
        match record {
            ErasedRef::Entity(id) => self.entities.contains_key(&id),
            ErasedRef::Fact(id) => self.facts.contains_key(&id) || self.aliases.contains_key(&id),
            ErasedRef::Episode(id) => self.episodes.contains_key(&id),
            ErasedRef::Intention(id) => self.intentions.contains_key(&id),
        }
    }

    /// How long episodes are kept.
    pub fn retention(&self) -> ostrakon_core::RetentionPolicy {
        self.retention
    }

    /// When the retention period next makes an episode due: the oldest episode's record
    /// time plus the period; `None` without a period or episodes.
    pub fn retention_due_at(&self) -> Option<Timestamp> {
        let after = self.retention.episodes_after_micros?;
        let oldest = self.episodes.values().map(|(seq, _)| *seq).min()?;
        let recorded = self.system_time(oldest)?;
        Some(Timestamp::from_micros(recorded.as_micros().saturating_add(after)))
    }

    /// The episodes recorded (by the system time of their batch) before `t`, oldest
    /// first: what a retention period that ended at `t` erases.
    pub fn episodes_recorded_before(&self, t: Timestamp) -> Vec<EpisodeId> {
        let last = self.seq_at(Timestamp::from_micros(t.as_micros().saturating_sub(1)));
        let mut due: Vec<(Seq, EpisodeId)> = self
            .episodes
            .iter()
            .filter(|(_, (seq, _))| *seq <= last)
            .map(|(id, (seq, _))| (*seq, *id))
            .collect();
        due.sort();
        due.into_iter().map(|(_, id)| id).collect()
    }

    /// Whether an erasure in the log still has content to remove: the log must be
    /// compacted before the namespace serves.
    pub fn erasure_pending(&self) -> bool {
        self.pending_erasure
    }

    /// Every erasure, in log order.
    pub fn erasures(&self) -> Vec<ErasureRecord> {
        self.erasures
            .iter()
            .map(|(seq, erasure)| ErasureRecord {
                seq: *seq,
                at: self.system_time(*seq).unwrap_or(Timestamp::from_micros(0)),
                erasure: erasure.clone(),
            })
            .collect()
    }

    /// The marker of an erased record, if `record` was erased.
    pub fn erased(&self, record: ErasedRef) -> Option<ErasedMark> {
        let (erased_in, _) =
            self.erasures.iter().find(|(_, e)| e.records.iter().any(|(r, _)| *r == record))?;
        Some(ErasedMark {
            record,
            seq: self.tombstones.get(&record).copied(),
            erased_in: *erased_in,
            erased_at: self.system_time(*erased_in).unwrap_or(Timestamp::from_micros(0)),
        })
    }

    /// Whether a write may not name `record` any more: it was erased.
    pub fn is_erased(&self, record: ErasedRef) -> bool {
        self.tombstones.contains_key(&record)
            || self.erasures.iter().any(|(_, e)| e.records.iter().any(|(r, _)| *r == record))
    }

    /// What erasing `entity` removes: the entity, every fact statement whose subject or
    /// object it is, every episode that mentions it (a mention recorded when it was
    /// written, or one of the entity's names or aliases in its text), and every intention
    /// triggered by mentions of it.
    pub fn erase_set_of_entity(&self, entity: EntityId) -> Result<BTreeSet<ErasedRef>, EraseRefused> {
        if !self.entities.contains_key(&entity) {
            return Err(EraseRefused::Unknown(entity.to_string()));
        }
        let mut set = BTreeSet::from([ErasedRef::Entity(entity)]);
        let mut facts: Vec<FactId> = self
            .slots
            .range((entity, crate::facts::PredId(0))..=(entity, crate::facts::PredId(u32::MAX)))
            .flat_map(|(_, ids)| ids.iter().copied())
            .collect();
        facts.extend(self.facts.with_object(&Value::Entity(entity)).map(|r| r.id));
        for fact in facts {
            self.add_fact(fact, &mut set);
        }
        for (_, episode) in self.mentioned_in.get(&entity).into_iter().flatten() {
            set.insert(ErasedRef::Episode(*episode));
        }
        set.extend(self.episodes_naming(entity).into_iter().map(ErasedRef::Episode));
        for (id, record) in &self.intentions {
            if let Trigger::Mentions(entities) = &record.intention.trigger
                && entities.contains(&entity)
            {
                set.insert(ErasedRef::Intention(*id));
            }
        }
        Ok(set)
    }

    /// What erasing these episodes removes: the episodes (the facts stated from them stay,
    /// their provenance naming an erased episode).
    pub fn erase_set_of_episodes(&self, episodes: &[EpisodeId]) -> Result<BTreeSet<ErasedRef>, EraseRefused> {
        let mut set = BTreeSet::new();
        for id in episodes {
            if !self.episodes.contains_key(id) {
                return Err(EraseRefused::Unknown(id.to_string()));
            }
            set.insert(ErasedRef::Episode(*id));
        }
        Ok(set)
    }

    /// What erasing these facts removes: each fact with every statement of it (a
    /// restatement's id erases the fact it restates).
    pub fn erase_set_of_facts(&self, facts: &[FactId]) -> Result<BTreeSet<ErasedRef>, EraseRefused> {
        let mut set = BTreeSet::new();
        for id in facts {
            if !self.facts.contains_key(id) && !self.aliases.contains_key(id) {
                return Err(EraseRefused::Unknown(id.to_string()));
            }
            self.add_fact(*id, &mut set);
        }
        Ok(set)
    }

    fn add_fact(&self, id: FactId, set: &mut BTreeSet<ErasedRef>) {
        let id = self.aliases.get(&id).copied().unwrap_or(id);
        match self.facts.get(&id) {
            Some(record) => set.extend(record.statements().map(|s| ErasedRef::Fact(s.id))),
            None => {
                set.insert(ErasedRef::Fact(id));
            }
        }
    }

    /// The record's content as it stands, as the event that would record it (an
    /// entity's latest version; a statement's fact under the statement's id): what an
    /// erasure hashes.
    pub fn content_of(&self, record: ErasedRef) -> Option<Event> {
        match record {
            ErasedRef::Entity(id) => {
                self.entities.get(&id).and_then(|v| v.last()).map(|(_, e)| Event::EntityDeclared(e.clone()))
            }
            ErasedRef::Episode(id) => self.episodes.get(&id).map(|(_, e)| Event::EpisodeRecorded(e.clone())),
            ErasedRef::Intention(id) => {
                self.intentions.get(&id).map(|r| Event::IntentionAdded(r.intention.clone()))
            }
            ErasedRef::Fact(id) => {
                let canonical = self.aliases.get(&id).copied().unwrap_or(id);
                let record = self.facts.get(&canonical)?;
                let mut fact = record.to_fact(&self.predicates[record.pred.0 as usize].name);
                fact.id = id;
                Some(Event::FactAsserted(fact))
            }
        }
    }

    /// The episodes whose text holds one of the entity's names or aliases (any version),
    /// compared as names are matched (case and accents folded).
    fn episodes_naming(&self, entity: EntityId) -> Vec<EpisodeId> {
        let names: BTreeSet<String> = self
            .entities
            .get(&entity)
            .into_iter()
            .flatten()
            .flat_map(|(_, e)| std::iter::once(&e.name).chain(e.aliases.iter()))
            .map(|n| ostrakon_core::normalize_name(n))
            .filter(|n| !n.is_empty())
            .collect();
        self.episodes
            .iter()
            .filter(|(_, (_, ep))| {
                let text = ostrakon_core::normalize_name(&ep.text);
                names.iter().any(|n| holds_word(&text, n))
            })
            .map(|(id, _)| *id)
            .collect()
    }

    /// The record `r` refers to, as an erasure names it.
    pub fn erased_ref(r: RecordRef) -> ErasedRef {
        match r {
            RecordRef::Fact(id) => ErasedRef::Fact(id),
            RecordRef::Entity(id) => ErasedRef::Entity(id),
            RecordRef::Episode(id) => ErasedRef::Episode(id),
        }
    }
}

/// Whether `name` occurs in `text` as whole words (not inside a longer word: "ada" is not
/// in "canada").
fn holds_word(text: &str, name: &str) -> bool {
    let boundary = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
    text.match_indices(name).any(|(at, _)| {
        boundary(text[..at].chars().next_back()) && boundary(text[at + name.len()..].chars().next())
    })
}
