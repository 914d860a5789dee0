//! Entities merged by consolidation: reads follow a merge from its batch on, so the facts,
//! names and links of both entities answer as one; before that batch they stay apart, and
//! nothing of either is edited.

use std::collections::BTreeSet;

use ostrakon_core::{EntityId, Seq, Value};

use crate::state::NamespaceIndex;

impl NamespaceIndex {
    /// The entity `e` reads as at S: itself, or the entity it was merged into.
    pub fn canonical_entity(&self, e: EntityId, known_at: Seq) -> EntityId {
        let mut current = e;
        // Merges never form a cycle (checked when applied); the bound is a safeguard.
        for _ in 0..64 {
            let next = self
                .merged_into
                .get(&current)
                .and_then(|v| v.iter().rev().find(|(seq, _)| *seq <= known_at))
                .map(|(_, into)| *into);
            match next {
                Some(into) if into != current => current = into,
                _ => break,
            }
        }
        current
    }

    /// Every entity that reads as canonical entity `c` at S (`c` first, then by id).
    pub fn merge_group(&self, c: EntityId, known_at: Seq) -> Vec<EntityId> {
        if self.merged_into.is_empty() {
            return vec![c];
        }
        let mut seen = BTreeSet::from([c]);
        let mut stack = vec![c];
        while let Some(e) = stack.pop() {
            for (seq, from) in self.absorbed.get(&e).into_iter().flatten() {
                if *seq <= known_at && self.canonical_entity(*from, known_at) == c && seen.insert(*from) {
                    stack.push(*from);
                }
            }
        }
        seen.remove(&c);
        std::iter::once(c).chain(seen).collect()
    }

    /// A value as read at S: an entity followed through merges.
    pub(crate) fn canonical_value(&self, v: &Value, known_at: Seq) -> Value {
        match v {
            Value::Entity(e) if !self.merged_into.is_empty() => {
                Value::Entity(self.canonical_entity(*e, known_at))
            }
            other => other.clone(),
        }
    }
}

impl NamespaceIndex {
    /// Entities that are the same, as consolidation finds them at the latest batch: equal
    /// normalised names or aliases, and kinds that agree (equal, or one of them unknown) —
    /// "Paris" the city and "Paris" the person stay apart. Each pair is (merged away, kept);
    /// the kept one is the lowest id of its group.
    pub fn merge_candidates(&self) -> Vec<(EntityId, EntityId)> {
        let latest = self.last_seq();
        // Groups in id order: (root, kind, names).
        let mut roots: Vec<(EntityId, Option<String>)> = Vec::new();
        let mut owner: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        let mut merges = Vec::new();
        for &id in self.entities.keys() {
            if self.canonical_entity(id, latest) != id {
                continue;
            }
            let Some((_, entity)) = self.entity_version(id, latest) else { continue };
            let kind = entity.kind.as_ref().map(|k| ostrakon_core::normalize_name(k));
            let keys: Vec<String> = std::iter::once(&entity.name)
                .chain(&entity.aliases)
                .map(|n| ostrakon_core::normalize_name(n))
                .collect();
            let agrees = |group: &(EntityId, Option<String>)| match (&group.1, &kind) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            };
            let group = keys.iter().filter_map(|k| owner.get(k).copied()).find(|g| agrees(&roots[*g]));
            let g = match group {
                Some(g) => {
                    merges.push((id, roots[g].0));
                    if roots[g].1.is_none() {
                        roots[g].1 = kind;
                    }
                    g
                }
                None => {
                    roots.push((id, kind));
                    roots.len() - 1
                }
            };
            for k in keys {
                owner.entry(k).or_insert(g);
            }
        }
        merges
    }
}
