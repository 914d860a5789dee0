//! Heap estimates of the standard collections, from their capacities: the units that
//! `size.rs` adds up for a namespace's state and that each table uses for its own parts.

use std::collections::HashMap;
use std::mem::size_of;

/// A hash map's table: buckets (capacity × 8/7) of one entry and one control byte each.
pub(crate) fn hash<K, V, S>(map: &HashMap<K, V, S>) -> usize {
    map.capacity() * 8 / 7 * (size_of::<(K, V)>() + 1)
}

/// A B-tree's nodes: about half full after inserts in key order (the common case: ids
/// and times grow), with the node overhead.
pub(crate) fn btree<K, V>(len: usize) -> usize {
    len * (size_of::<K>() + size_of::<V>()) * 2
}

pub(crate) fn vec<T>(v: &Vec<T>) -> usize {
    v.capacity() * size_of::<T>()
}
