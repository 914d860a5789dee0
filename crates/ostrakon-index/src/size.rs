//! An estimate of the heap a namespace's state holds, from the capacities of its
//! structures: what `/metrics` reports as resident bytes. `benches/memory.rs` prints it
//! beside the allocator's own count (it came within 10 % of it on the peer workload's
//! facts, entities and episodes).

use std::mem::size_of;

use ostrakon_core::{Entity, Episode, Literal, Value};

use crate::facts::{FactMore, FactRecord, FactTable, Restatement};
use crate::heap::{btree, hash, vec};
use crate::state::NamespaceIndex;

fn value(v: &Value) -> usize {
    match v {
        Value::Literal(Literal::String(s)) => s.capacity(),
        _ => 0,
    }
}

fn entity(e: &Entity) -> usize {
    e.name.capacity()
        + e.aliases.iter().map(|a| size_of::<String>() + a.capacity()).sum::<usize>()
        + e.kind.as_ref().map_or(0, String::capacity)
        + e.properties.keys().map(|k| k.len() + size_of::<(String, Literal)>() * 3 / 2).sum::<usize>()
}

fn episode(e: &Episode) -> usize {
    e.text.capacity()
        + [&e.thread, &e.source, &e.role, &e.external_id]
            .iter()
            .map(|o| o.as_ref().map_or(0, String::capacity))
            .sum::<usize>()
}

impl FactTable {
    pub(crate) fn heap_bytes(&self) -> usize {
        let records: usize = self.values().map(record).sum();
        self.chunk_bytes() + records
    }
}

fn record(r: &FactRecord) -> usize {
    let more = r.more.as_ref().map_or(0, |m| {
        size_of::<FactMore>()
            + m.ends.capacity() * size_of::<(u64, i64)>()
            + m.restatements.capacity() * size_of::<Restatement>()
            + m.restatements.iter().map(|s| s.provenance.len() * 8).sum::<usize>()
    });
    r.provenance.len() * 8 + value(&r.object) + more
}

impl NamespaceIndex {
    /// About how many bytes of heap this state holds (its structures' capacities and the
    /// text they own); the vectors of episodes included.
    pub fn heap_bytes(&self) -> u64 {
        let mut n = self.facts.heap_bytes();
        n += btree::<(u64, u32), Vec<u64>>(self.slots.len()) + self.slots.values().map(vec).sum::<usize>();
        n += hash(&self.slot_starts)
            + self.slot_starts.values().map(|m| hash(m) + m.values().map(vec).sum::<usize>()).sum::<usize>();
        n += hash(&self.by_predicate)
            + self.by_predicate.values().map(|s| btree::<u64, ()>(s.len())).sum::<usize>();
        n += hash(&self.aliases);
        n += btree::<u64, smallvec::SmallVec<[(u64, Entity); 1]>>(self.entities.len())
            + self
                .entities
                .values()
                .map(|v| {
                    let spilled = if v.spilled() { v.capacity() * size_of::<(u64, Entity)>() } else { 0 };
                    spilled + v.iter().map(|(_, e)| entity(e)).sum::<usize>()
                })
                .sum::<usize>();
        n += hash(&self.names)
            + self
                .names
                .iter()
                .map(|(k, named)| {
                    let list = |l: &crate::state::IdList| if l.spilled() { l.capacity() * 8 } else { 0 };
                    k.capacity() + list(&named.ever) + list(&named.now)
                })
                .sum::<usize>();
        n += hash(&self.episodes) + self.episodes.values().map(|(_, e)| episode(e)).sum::<usize>();
        n += hash(&self.external_ids) + self.external_ids.keys().map(|k| k.capacity()).sum::<usize>();
        n += btree::<(i64, u64), ()>(self.episode_order.len());
        n += hash(&self.threads)
            + self
                .threads
                .iter()
                .map(|(k, s)| k.capacity() + btree::<(i64, u64), ()>(s.len()))
                .sum::<usize>();
        n += hash(&self.mentions)
            + self.mentions.values().map(|v| if v.spilled() { v.capacity() * 24 } else { 0 }).sum::<usize>();
        n += hash(&self.mentioned_in) + self.mentioned_in.values().map(vec).sum::<usize>();
        n += hash(&self.sourced) + self.sourced.values().map(vec).sum::<usize>();
        n += hash(&self.reinforced) + self.reinforced.values().map(vec).sum::<usize>();
        n += hash(&self.merged_into) + self.merged_into.values().map(vec).sum::<usize>();
        n += hash(&self.absorbed) + self.absorbed.values().map(vec).sum::<usize>();
        n += hash(&self.embedded) + self.embedded.values().map(|(_, v)| vec(v)).sum::<usize>();
        n += vec(&self.batches) + hash(&self.segment_of);
        n += btree::<(u64, u64), Vec<crate::placement::Placement>>(self.placements.len())
            + self
                .placements
                .iter()
                .map(|((tier, _), list)| {
                    let scope = match tier {
                        ostrakon_core::Tier::Active(s) => s.capacity(),
                        ostrakon_core::Tier::Core => 0,
                    };
                    scope + vec(list)
                })
                .sum::<usize>()
            + vec(&self.proposals)
            + vec(&self.tier_settings);
        n += hash(&self.extraction_batches)
            + hash(&self.extracted)
            + self
                .extracted
                .values()
                .map(|v| {
                    let spilled = if v.spilled() { v.capacity() * 24 } else { 0 };
                    spilled + v.iter().map(|(_, s)| s.len()).sum::<usize>()
                })
                .sum::<usize>();
        n += self
            .segments
            .iter()
            .map(|s| s.episodes.capacity() * 8 + s.centroid.as_ref().map_or(0, vec))
            .sum::<usize>();
        n += btree::<u64, crate::state::IntentionRecord>(self.intentions.len());
        n as u64
    }
}
