//! The facts of a namespace, stored compactly: one fixed-size record per fact in chunks
//! that never move, found by id through a dense position table, and by object value
//! through chains of positions ([`ObjectIndex`]).
//!
//! Why by hand: a `HashMap<FactId, record>` costs the record's size again in empty
//! buckets right after it grows (and a `Fact` with its owned predicate name and a
//! statement list per fact made it ≈ 640 B a fact); a `HashMap<Value, Vec<FactId>>` keyed
//! by every distinct literal cost ≈ 130 B more. Ids are dense (the writer numbers facts
//! from 1), so a `Vec<u32>` of positions is a perfect hash at 4 B a fact, and an object's
//! facts are a linked list through a `u32` per record. `benches/memory.rs` in this crate
//! measures the result.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::OnceLock;

use serde::de::{SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use ostrakon_core::{
    EntityId, EpisodeId, Fact, FactId, Interval, Polarity, Retraction, Seq, Timestamp, Value,
};

/// Interned predicate, dense from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub(crate) struct PredId(pub(crate) u32);

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
    pub(crate) more: Option<Box<FactMore>>,
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
/// chain and readers compare the value itself. Never stored, so the hash function is
/// free to change.
pub(crate) fn object_key(value: &Value) -> u32 {
    // The high half: foldhash mixes every input bit into it.
    (foldhash::fast::FixedState::with_seed(0x6d6e_656d_6f00).hash_one(value) >> 32) as u32
}

/// The facts of each object value: for every record, the position of the previous record
/// with the same object key, and the newest position of each key.
///
/// Built in one pass when first needed (sorting `(key, position)` pairs), not record by
/// record as facts load: inserting ten million distinct values into a hash map one by
/// one is a cache miss each, and was the larger part of loading a checkpoint (3 of
/// 8.6 s at 10 M facts). Built, it follows every insert: new heads go to `recent`, which
/// is folded into the sorted `heads` once it grows to half their size.
#[derive(Clone, Debug, Default)]
struct ObjectIndex {
    /// `(key, newest position)`, sorted by key.
    heads: Vec<(u32, Pos)>,
    /// Heads that changed since `heads` was sorted; they win over `heads`.
    recent: HashMap<u32, Pos, foldhash::fast::FixedState>,
    /// Per position, the previous position with the same key, or `NONE`.
    next: Vec<Pos>,
}

impl ObjectIndex {
    fn build(records: impl Iterator<Item = u32>) -> Self {
        let mut pairs: Vec<u64> =
            records.enumerate().map(|(pos, key)| (u64::from(key) << 32) | pos as u64).collect();
        let mut next = vec![NONE; pairs.len()];
        pairs.sort_unstable();
        let mut heads: Vec<(u32, Pos)> = Vec::new();
        let mut last: Option<(u32, Pos)> = None;
        for pair in pairs {
            let (key, pos) = ((pair >> 32) as u32, pair as Pos);
            match last {
                Some((k, prev)) if k == key => next[pos as usize] = prev,
                Some(done) => heads.push(done),
                None => {}
            }
            last = Some((key, pos));
        }
        heads.extend(last);
        heads.shrink_to_fit();
        ObjectIndex { heads, recent: HashMap::default(), next }
    }

    fn head(&self, key: u32) -> Pos {
        if let Some(p) = self.recent.get(&key) {
            return *p;
        }
        match self.heads.binary_search_by_key(&key, |(k, _)| *k) {
            Ok(i) => self.heads[i].1,
            Err(_) => NONE,
        }
    }

    fn push(&mut self, key: u32, pos: Pos) {
        let before = self.head(key);
        self.next.push(before);
        self.recent.insert(key, pos);
        if self.recent.len() > (self.heads.len() / 2).max(1024) {
            let mut recent: Vec<(u32, Pos)> = self.recent.drain().collect();
            recent.sort_unstable();
            let mut merged = Vec::with_capacity(self.heads.len() + recent.len());
            let (mut a, mut b) = (self.heads.iter().peekable(), recent.into_iter().peekable());
            loop {
                match (a.peek(), b.peek()) {
                    (Some(x), Some(y)) if x.0 < y.0 => merged.extend(a.next().copied()),
                    (Some(x), Some(y)) if x.0 == y.0 => {
                        a.next();
                        merged.extend(b.next());
                    }
                    (_, Some(_)) => merged.extend(b.next()),
                    (Some(_), None) => merged.extend(a.next().copied()),
                    (None, None) => break,
                }
            }
            self.heads = merged;
        }
    }

    fn bytes(&self) -> usize {
        self.heads.capacity() * std::mem::size_of::<(u32, Pos)>()
            + self.recent.capacity() * 8 / 7 * (std::mem::size_of::<(u32, Pos)>() + 1)
            + self.next.capacity() * std::mem::size_of::<Pos>()
    }
}

/// The facts of a namespace in assertion order.
#[derive(Clone, Debug, Default)]
pub(crate) struct FactTable {
    chunks: Vec<Vec<FactRecord>>,
    len: usize,
    /// Position of fact id `i` at index `i`, or `NONE`.
    dense: Vec<Pos>,
    /// Positions of ids too far past the dense table.
    sparse: HashMap<FactId, Pos>,
    /// The records by object, once something asked for them (see [`FactTable::warm`]).
    objects: OnceLock<ObjectIndex>,
}

/// Tables are equal when their records are: the rest is derived from them.
impl PartialEq for FactTable {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.values().eq(other.values())
    }
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
    pub(crate) fn insert(&mut self, record: FactRecord) {
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
        if let Some(objects) = self.objects.get_mut() {
            objects.push(object_key(&record.object), pos);
        }
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
            + crate::heap::hash(&self.sparse)
            + self.objects.get().map_or(0, ObjectIndex::bytes)
    }

    fn object_index(&self) -> &ObjectIndex {
        self.objects.get_or_init(|| ObjectIndex::build(self.values().map(|r| object_key(&r.object))))
    }

    /// Builds what finds records by object, if not built yet: the first read that needs
    /// it otherwise waits for it (about 0.1 s per million facts).
    pub(crate) fn warm(&self) {
        self.object_index();
    }

    /// Every record, in assertion order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &FactRecord> {
        self.chunks.iter().flatten()
    }

    /// The records whose object is `value`, newest first.
    pub(crate) fn with_object<'a>(&'a self, value: &'a Value) -> impl Iterator<Item = &'a FactRecord> + 'a {
        let objects = self.object_index();
        let mut next = objects.head(object_key(value));
        std::iter::from_fn(move || {
            while next != NONE {
                let r = self.at(next);
                next = objects.next[next as usize];
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
    use ostrakon_core::Literal;

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
    fn ids_far_apart_and_objects_are_found_exactly() {
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

    #[test]
    fn objects_found_after_the_index_is_built_and_while_it_grows() {
        let mut table = FactTable::default();
        let object = |id: u64| Value::Literal(Literal::Integer((id * 7919 % 3001) as i64));
        let naive = |table: &FactTable, v: &Value| -> Vec<FactId> {
            let mut ids: Vec<FactId> = table.values().filter(|r| &r.object == v).map(|r| r.id).collect();
            ids.reverse();
            ids
        };
        for id in 1..=500 {
            table.insert(record(id, object(id)));
        }
        table.warm();
        // Enough inserts after it was built to fold `recent` into `heads` several times.
        for id in 501..=9000 {
            table.insert(record(id, object(id)));
            if id % 997 == 0 {
                for probe in [id, id / 2, 1, 3000] {
                    let v = object(probe);
                    assert_eq!(table.with_object(&v).map(|r| r.id).collect::<Vec<_>>(), naive(&table, &v));
                }
            }
        }
        let mut fresh = FactTable::default();
        for r in table.values() {
            fresh.insert(r.clone());
        }
        for probe in 0..3001 {
            let v = Value::Literal(Literal::Integer(probe));
            let found: Vec<FactId> = table.with_object(&v).map(|r| r.id).collect();
            assert_eq!(found, naive(&table, &v));
            assert_eq!(fresh.with_object(&v).map(|r| r.id).collect::<Vec<_>>(), found);
        }
    }

    #[test]
    fn values_that_share_a_key_share_a_chain_and_are_told_apart() {
        // Keys 0..4 for 40 records: each chain holds every tenth position, newest first.
        let mut objects = ObjectIndex::build((0..40u32).map(|p| p % 4));
        let chain = |o: &ObjectIndex, key: u32| {
            let mut out = Vec::new();
            let mut p = o.head(key);
            while p != NONE {
                out.push(p);
                p = o.next[p as usize];
            }
            out
        };
        assert_eq!(chain(&objects, 1), (0..40).rev().filter(|p| p % 4 == 1).collect::<Vec<u32>>());
        assert_eq!(chain(&objects, 9), Vec::<u32>::new());
        for p in 40..3000u32 {
            objects.push(p % 5, p);
        }
        for key in 0..6 {
            let expected: Vec<u32> =
                (0..3000u32).rev().filter(|p| if *p < 40 { p % 4 == key } else { p % 5 == key }).collect();
            assert_eq!(chain(&objects, key), expected, "key {key}");
        }
    }
}
