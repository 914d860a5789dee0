//! Rule 5's contradictions as groups: the positive facts of a cardinality-one slot that
//! start at one instant contradict each other when their values differ. Among n tied
//! values that is n·(n − 1) pairs, so each fact does not list its own: the facts of one
//! instant share one [`TieGroup`], and a fact's [`Contradicts`] is that group seen from
//! its value. Building the group costs O(n log n); listing what a fact contradicts costs
//! what is listed.

use std::collections::HashMap;
use std::sync::Arc;

use crate::ids::FactId;
use crate::value::Value;

/// The positive facts of one slot starting at one instant, sorted by id, each with the
/// class of its value (facts of equal values share a class).
#[derive(Debug, PartialEq, Eq)]
pub struct TieGroup {
    members: Vec<(FactId, u32)>,
    /// Members per class.
    sizes: Vec<u32>,
}

impl TieGroup {
    /// The group of `members` (fact and value), in any order; `None` when they hold fewer
    /// than two values (nothing contradicts anything).
    pub fn new<'a>(members: impl IntoIterator<Item = (FactId, &'a Value)>) -> Option<Arc<TieGroup>> {
        let mut classes: HashMap<&Value, u32> = HashMap::new();
        let mut sizes = Vec::new();
        let mut out = Vec::new();
        for (id, value) in members {
            let next = u32::try_from(classes.len()).unwrap_or(u32::MAX);
            let class = *classes.entry(value).or_insert(next);
            if class as usize == sizes.len() {
                sizes.push(0);
            }
            sizes[class as usize] += 1;
            out.push((id, class));
        }
        if sizes.len() < 2 {
            return None;
        }
        out.sort_unstable();
        Some(Arc::new(TieGroup { members: out, sizes }))
    }

    /// The class of fact `id` in the group.
    fn class_of(&self, id: FactId) -> Option<u32> {
        let at = self.members.binary_search_by_key(&id, |(m, _)| *m).ok()?;
        Some(self.members[at].1)
    }
}

/// The facts one fact contradicts: the members of its group with another value, in id
/// order. Cheap to clone (the group is shared). Two are equal when they list the same
/// facts.
#[derive(Clone, Debug, Default)]
pub struct Contradicts {
    group: Option<(Arc<TieGroup>, u32)>,
}

impl PartialEq for Contradicts {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for Contradicts {}

impl Contradicts {
    /// Contradicts nothing.
    pub fn none() -> Self {
        Contradicts::default()
    }

    /// What fact `id`, a member of `group`, contradicts.
    pub fn in_group(group: &Arc<TieGroup>, id: FactId) -> Self {
        match group.class_of(id) {
            Some(class) => Contradicts { group: Some((Arc::clone(group), class)) },
            None => Contradicts::none(),
        }
    }

    /// How many facts it contradicts.
    pub fn len(&self) -> usize {
        match &self.group {
            None => 0,
            Some((g, class)) => g.members.len() - g.sizes[*class as usize] as usize,
        }
    }

    /// Whether it contradicts nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The facts it contradicts, in id order.
    pub fn iter(&self) -> impl Iterator<Item = FactId> + '_ {
        self.group
            .iter()
            .flat_map(|(g, class)| g.members.iter().filter(move |(_, c)| c != class).map(|(id, _)| *id))
    }

    /// The first `n` of them, in id order.
    pub fn first(&self, n: usize) -> Vec<FactId> {
        self.iter().take(n).collect()
    }

    /// All of them, in id order.
    pub fn to_vec(&self) -> Vec<FactId> {
        self.iter().collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::value::Literal;

    #[test]
    fn a_group_is_seen_from_each_value() {
        let (a, b) = (Value::Literal(Literal::Integer(1)), Value::Literal(Literal::Integer(2)));
        let group =
            TieGroup::new([(FactId(5), &a), (FactId(3), &b), (FactId(9), &a), (FactId(4), &b)]).unwrap();
        let of = |id| Contradicts::in_group(&group, FactId(id));
        assert_eq!(of(5).to_vec(), vec![FactId(3), FactId(4)]);
        assert_eq!(of(4).to_vec(), vec![FactId(5), FactId(9)]);
        assert_eq!((of(9).len(), of(9).first(1)), (2, vec![FactId(3)]));
        assert!(of(7).is_empty(), "not a member");
        assert!(TieGroup::new([(FactId(1), &a), (FactId(2), &a)]).is_none(), "one value: no contradiction");
    }
}
