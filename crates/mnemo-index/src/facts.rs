//! The facts of a namespace, stored compactly: one fixed-size record per fact in chunks
//! that never move, found by id through a dense position table, and by object value
//! through a chain threaded through the records.
//!
//! Why by hand: a `HashMap<FactId, record>` costs the record's size again in empty
//! buckets right after it grows (and a `Fact` with its owned predicate name and a
//! statement list per fact made it ≈ 640 B a fact); a `HashMap<Value, Vec<FactId>>` keyed
//! by every distinct literal cost ≈ 130 B more. Ids are dense (the writer numbers facts
//! from 1), so a `Vec<u32>` of positions is a perfect hash at 4 B a fact, and an object's
//! facts are a linked list through a `u32` in each record. `benches/memory.rs` in this
//! crate measures the result.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde::de::{SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use mnemo_core::{EntityId, EpisodeId, Fact, FactId, Interval, Polarity, Retraction, Seq, Timestamp, Value};

use crate::state::PredId;

/// A record's position in the table.
type Pos = u32;
/// No position.
const NONE: Pos = Pos::MAX;
/// Records per chunk: chunks are allocated whole and never reallocated.
const CHUNK: usize = 4096;
/// An id this far past the dense table goes to the sparse map instead (a log from
/// another writer could number facts sparsely; the table must not grow with the id).
const DENSE_GAP: u64 = 1 << 16;

/// One statement of a fact, as read: its first assertion, or a restatement of it (an
/// identical assertion while the fact was live), each with its own id, batch,
/// confidence and provenance.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Statement<'a> {
    pub(crate) id: FactId,
    pub(crate) seq: Seq,
    pub(crate) confidence: f64,
    pub(crate) provenance: &'a [EpisodeId],
    /// When and how it was withdrawn on its own (retracted, corrected, or ended as a
    /// restatement): it no longer supports the fact from then on.
    pub(crate) withdrawn: Option<&'a (Seq, Retraction)>,
}

impl Statement<'_> {
    fn live_at(&self, s: Seq) -> bool {
        self.seq <= s && self.withdrawn.is_none_or(|(w, _)| *w > s)
    }
}

/// A statement after the first, as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Restatement {
    pub(crate) id: FactId,
    pub(crate) seq: Seq,
    pub(crate) confidence: f64,
    pub(crate) provenance: Box<[EpisodeId]>,
    pub(crate) withdrawn: Option<(Seq, Retraction)>,
}

/// What few facts have: kept out of line so that the common record stays small.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct FactMore {
    pub(crate) supersedes: Option<FactId>,
    pub(crate) importance: Option<f64>,
    /// `FactEnded` events in log order.
    pub(crate) ends: Vec<(Seq, Timestamp)>,
    /// Retracted as a whole (`retractFact` on the fact's own id).
    pub(crate) retracted: Option<(Seq, Retraction)>,
    /// The withdrawal of its first statement.
    pub(crate) withdrawn: Option<(Seq, Retraction)>,
    /// Its other statements in log order.
    pub(crate) restatements: Vec<Restatement>,
}

/// Everything the log says about one fact. Its first statement is the record itself
/// (id, batch, confidence, provenance).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct FactRecord {
    pub(crate) id: FactId,
    pub(crate) subject: EntityId,
    pub(crate) object: Value,
    pub(crate) valid: Interval,
    pub(crate) confidence: f64,
    pub(crate) seq: Seq,
    pub(crate) provenance: Box<[EpisodeId]>,
    pub(crate) pred: PredId,
    pub(crate) polarity: Polarity,
    pub(crate) correction: bool,
    /// The previous record with the same object key (derived: rebuilt on load).
    #[serde(skip, default = "none")]
    next_same_object: Pos,
    pub(crate) more: Option<Box<FactMore>>,
}

fn none() -> Pos {
    NONE
}

impl FactRecord {
    /// The record of an asserted fact, first stated in batch `seq`.
    pub(crate) fn new(fact: &Fact, pred: PredId, seq: Seq) -> Self {
        let more = (fact.supersedes.is_some() || fact.importance.is_some()).then(|| {
            Box::new(FactMore {
                supersedes: fact.supersedes,
                importance: fact.importance,
                ..FactMore::default()
            })
        });
        FactRecord {
            id: fact.id,
            subject: fact.subject,
            object: fact.object.clone(),
            valid: fact.valid,
            confidence: fact.confidence,
            seq,
            provenance: fact.provenance.clone().into_boxed_slice(),
            pred,
            polarity: fact.polarity,
            correction: fact.correction,
            next_same_object: NONE,
            more,
        }
    }

    /// The fact as asserted, named `predicate`.
    pub(crate) fn to_fact(&self, predicate: &str) -> Fact {
        Fact {
            id: self.id,
            subject: self.subject,
            predicate: predicate.to_owned(),
            object: self.object.clone(),
            valid: self.valid,
            confidence: self.confidence,
            polarity: self.polarity,
            provenance: self.provenance.to_vec(),
            supersedes: self.supersedes(),
            importance: self.importance(),
            correction: self.correction,
        }
    }

    pub(crate) fn supersedes(&self) -> Option<FactId> {
        self.more.as_ref().and_then(|m| m.supersedes)
    }

    pub(crate) fn importance(&self) -> Option<f64> {
        self.more.as_ref().and_then(|m| m.importance)
    }

    pub(crate) fn more_mut(&mut self) -> &mut FactMore {
        self.more.get_or_insert_with(Box::default)
    }

    fn retracted(&self) -> Option<&(Seq, Retraction)> {
        self.more.as_ref().and_then(|m| m.retracted.as_ref())
    }

    pub(crate) fn is_retracted_whole(&self) -> bool {
        self.retracted().is_some()
    }

    /// Its statements in log order, the first being its own assertion.
    pub(crate) fn statements(&self) -> impl Iterator<Item = Statement<'_>> {
        let first = Statement {
            id: self.id,
            seq: self.seq,
            confidence: self.confidence,
            provenance: &self.provenance,
            withdrawn: self.more.as_ref().and_then(|m| m.withdrawn.as_ref()),
        };
        let rest = self.more.as_ref().map_or(&[][..], |m| m.restatements.as_slice());
        std::iter::once(first).chain(rest.iter().map(|r| Statement {
            id: r.id,
            seq: r.seq,
            confidence: r.confidence,
            provenance: &r.provenance,
            withdrawn: r.withdrawn.as_ref(),
        }))
    }

    /// The statement `id` may withdraw, if not withdrawn yet.
    pub(crate) fn withdrawal_slot(&mut self, id: FactId) -> Option<&mut Option<(Seq, Retraction)>> {
        let slot = if id == self.id {
            &mut self.more_mut().withdrawn
        } else {
            &mut self.more.as_mut()?.restatements.iter_mut().find(|r| r.id == id)?.withdrawn
        };
        slot.is_none().then_some(slot)
    }

    /// The valid end set by the latest `FactEnded` visible at `s`, else its own.
    pub(crate) fn valid_to_at(&self, s: Seq) -> Option<Timestamp> {
        let ends = self.more.as_ref().map_or(&[][..], |m| m.ends.as_slice());
        ends.iter().rev().find(|(seq, _)| *seq <= s).map_or(self.valid.to(), |(_, to)| Some(*to))
    }

    /// Its statements that support it at `s`: visible, not withdrawn, and the fact not
    /// retracted as a whole.
    pub(crate) fn live_at(&self, s: Seq) -> impl Iterator<Item = Statement<'_>> {
        let whole = self.retracted().is_some_and(|(seq, _)| *seq <= s);
        self.statements().filter(move |st| !whole && st.live_at(s))
    }

    /// Its statements visible at `s`, withdrawn or not.
    pub(crate) fn visible_at(&self, s: Seq) -> impl Iterator<Item = Statement<'_>> {
        self.statements().filter(move |st| st.seq <= s)
    }

    /// Whether nothing supports it at `s` (retracted as a whole, or every statement
    /// withdrawn).
    pub(crate) fn is_retracted_at(&self, s: Seq) -> bool {
        self.live_at(s).next().is_none()
    }

    /// Why it is retracted at `s`: the whole retraction, else the latest withdrawal.
    pub(crate) fn retraction_at(&self, s: Seq) -> Option<(Seq, Retraction)> {
        if let Some((seq, kind)) = self.retracted()
            && *seq <= s
        {
            return Some((*seq, kind.clone()));
        }
        if !self.is_retracted_at(s) {
            return None;
        }
        self.visible_at(s)
            .filter_map(|st| st.withdrawn.filter(|(w, _)| *w <= s))
            .max_by_key(|(w, _)| *w)
            .cloned()
    }

    /// The batch it ranks by at `s`: that of its latest live statement.
    pub(crate) fn rank_seq_at(&self, s: Seq) -> Seq {
        self.live_at(s).map(|st| st.seq).max().unwrap_or(self.seq)
    }
}

/// The key an object value is chained under: a hash, so different values may share a
/// chain and readers compare the value itself. Never stored.
fn object_key(value: &Value) -> u32 {
    let mut h = DefaultHasher::new();
    value.hash(&mut h);
    h.finish() as u32
}

/// The facts of a namespace in assertion order.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct FactTable {
    chunks: Vec<Vec<FactRecord>>,
    len: usize,
    /// Position of fact id `i` at index `i`, or `NONE`.
    dense: Vec<Pos>,
    /// Positions of ids too far past the dense table.
    sparse: HashMap<FactId, Pos>,
    /// Object key → position of the latest record with it (the head of its chain).
    objects: HashMap<u32, Pos>,
}

impl FactTable {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    fn pos(&self, id: FactId) -> Option<Pos> {
        let dense = usize::try_from(id.0).ok().and_then(|i| self.dense.get(i)).copied();
        match dense {
            Some(p) if p != NONE => Some(p),
            _ => self.sparse.get(&id).copied(),
        }
    }

    fn at(&self, p: Pos) -> &FactRecord {
        let p = p as usize;
        &self.chunks[p / CHUNK][p % CHUNK]
    }

    pub(crate) fn contains_key(&self, id: &FactId) -> bool {
        self.pos(*id).is_some()
    }

    pub(crate) fn get(&self, id: &FactId) -> Option<&FactRecord> {
        self.pos(*id).map(|p| self.at(p))
    }

    pub(crate) fn get_mut(&mut self, id: &FactId) -> Option<&mut FactRecord> {
        let p = self.pos(*id)? as usize;
        Some(&mut self.chunks[p / CHUNK][p % CHUNK])
    }

    /// Adds a record whose id is not in the table. Ignored past `u32::MAX - 1` records.
    pub(crate) fn insert(&mut self, mut record: FactRecord) {
        let Ok(pos) = Pos::try_from(self.len) else { return };
        if pos == NONE {
            return;
        }
        let id = record.id;
        match usize::try_from(id.0) {
            Ok(i) if id.0 < self.dense.len() as u64 + DENSE_GAP => {
                if i >= self.dense.len() {
                    self.dense.resize(i + 1, NONE);
                }
                self.dense[i] = pos;
            }
            _ => {
                self.sparse.insert(id, pos);
            }
        }
        let head = self.objects.entry(object_key(&record.object)).or_insert(NONE);
        record.next_same_object = *head;
        *head = pos;
        if self.len.is_multiple_of(CHUNK) {
            self.chunks.push(Vec::with_capacity(CHUNK));
        }
        if let Some(chunk) = self.chunks.last_mut() {
            chunk.push(record);
        }
        self.len += 1;
    }

    /// The heap of the table itself, without what records own.
    pub(crate) fn chunk_bytes(&self) -> usize {
        self.chunks.len() * CHUNK * std::mem::size_of::<FactRecord>()
            + self.chunks.capacity() * std::mem::size_of::<Vec<FactRecord>>()
            + self.dense.capacity() * std::mem::size_of::<Pos>()
            + crate::size::hash(&self.sparse)
            + crate::size::hash(&self.objects)
    }

    /// Every record, in assertion order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &FactRecord> {
        self.chunks.iter().flatten()
    }

    /// The records whose object is `value`, newest first.
    pub(crate) fn with_object<'a>(&'a self, value: &'a Value) -> impl Iterator<Item = &'a FactRecord> + 'a {
        let mut next = self.objects.get(&object_key(value)).copied().unwrap_or(NONE);
        std::iter::from_fn(move || {
            while next != NONE {
                let r = self.at(next);
                next = r.next_same_object;
                if &r.object == value {
                    return Some(r);
                }
            }
            None
        })
    }
}

impl Serialize for FactTable {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // The length up front: postcard writes it before the elements.
        let mut seq = serializer.serialize_seq(Some(self.len))?;
        for record in self.values() {
            seq.serialize_element(record)?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for FactTable {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Records;
        impl<'de> Visitor<'de> for Records {
            type Value = FactTable;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a sequence of fact records")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FactTable, A::Error> {
                let mut table = FactTable::default();
                // The length is known up front: the position table is sized once.
                if let Some(n) = seq.size_hint() {
                    table.dense.reserve(n.saturating_add(1).min(1 << 32));
                    table.chunks.reserve(n.div_ceil(CHUNK));
                }
                while let Some(record) = seq.next_element::<FactRecord>()? {
                    table.insert(record);
                }
                Ok(table)
            }
        }
        deserializer.deserialize_seq(Records)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mnemo_core::Literal;

    fn record(id: u64, object: Value) -> FactRecord {
        let fact = Fact {
            id: FactId(id),
            subject: EntityId(1),
            predicate: "p".into(),
            object,
            valid: Interval::new("valid", Timestamp::EPOCH, None).unwrap_or_else(|_| unreachable!()),
            confidence: 1.0,
            polarity: Polarity::Asserted,
            provenance: vec![],
            supersedes: None,
            importance: None,
            correction: false,
        };
        FactRecord::new(&fact, PredId(0), Seq(1))
    }

    #[test]
    fn ids_far_apart_and_objects_that_share_a_chain_are_found_exactly() {
        let mut table = FactTable::default();
        let ids = [1, 2, 3, 1 << 40, 70_000, 5, u64::MAX];
        for (i, id) in ids.iter().enumerate() {
            table.insert(record(*id, Value::Literal(Literal::Integer(i as i64 % 3))));
        }
        for id in ids {
            assert_eq!(table.get(&FactId(id)).map(|r| r.id), Some(FactId(id)));
        }
        assert!(table.get(&FactId(4)).is_none() && table.get(&FactId(1 << 39)).is_none());
        assert_eq!(table.len(), ids.len());
        let found: Vec<FactId> =
            table.with_object(&Value::Literal(Literal::Integer(1))).map(|r| r.id).collect();
        assert_eq!(found, vec![FactId(70_000), FactId(2)]);
        assert_eq!(table.with_object(&Value::Entity(EntityId(1))).count(), 0);
        // A reloaded table is the same table, lookups included.
        let bytes = postcard::to_stdvec(&table).unwrap_or_default();
        let back: FactTable = postcard::from_bytes(&bytes).unwrap_or_default();
        assert_eq!(back, table);
    }

    #[test]
    fn a_chunk_boundary_keeps_every_record_in_place() {
        let mut table = FactTable::default();
        for id in 1..=(CHUNK as u64 * 2 + 7) {
            table.insert(record(id, Value::Entity(EntityId(id % 10))));
        }
        assert!(table.values().zip(1..).all(|(r, id)| r.id == FactId(id)));
        assert_eq!(table.with_object(&Value::Entity(EntityId(3))).count(), table.len() / 10 + 1);
        let last = FactId(CHUNK as u64 * 2 + 7);
        assert_eq!(table.get(&last).map(|r| r.id), Some(last));
    }
}
