//! Labelled, disjoint segments of valid time: the interval structure slot resolution
//! keeps while it walks a slot's candidates in rank order, so that "the union of the
//! competitors above this one" is a range query, not a rescan of every competitor.
//!
//! Written by hand: interval-tree crates answer stabbing queries over a fixed set, but
//! what resolution needs is a union that grows and is queried as it grows, with a label
//! per piece; a `BTreeMap` keyed by start does that in `O(log n + k)` per operation.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::time::Timestamp;

/// The end of a segment: an instant (excluded), or `None` for open-ended, which orders
/// after every instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct End(pub(crate) Option<Timestamp>);

impl Ord for End {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.0, other.0) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Greater,
            (Some(_), None) => Ordering::Less,
            (Some(a), Some(b)) => a.cmp(&b),
        }
    }
}

impl PartialOrd for End {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl End {
    /// Whether `t` lies before this end.
    pub(crate) fn after(self, t: Timestamp) -> bool {
        self.0.is_none_or(|e| t < e)
    }
}

/// Disjoint segments `[from, end)`, each with a label; touching segments with the same
/// label are kept as one.
#[derive(Debug)]
pub(crate) struct Segments<L> {
    map: BTreeMap<Timestamp, (End, L)>,
}

impl<L: Copy + Eq> Segments<L> {
    pub(crate) fn new() -> Self {
        Segments { map: BTreeMap::new() }
    }

    /// The segments that overlap `[from, to)`, clipped to it, in order.
    pub(crate) fn overlapping(
        &self,
        from: Timestamp,
        to: End,
    ) -> impl Iterator<Item = (Timestamp, End, L)> + '_ {
        // The segment that starts at or before `from` may reach into the range.
        let before = self
            .map
            .range(..=from)
            .next_back()
            .filter(|(_, (end, _))| end.after(from))
            .map(|(s, (e, l))| (*s, *e, *l));
        let after = self
            .map
            .range((std::ops::Bound::Excluded(from), std::ops::Bound::Unbounded))
            .take_while(move |(s, _)| to.after(**s))
            .map(|(s, (e, l))| (*s, *e, *l));
        before.into_iter().chain(after).map(move |(s, e, l)| (s.max(from), e.min(to), l))
    }

    /// Covers `[from, to)`: where nothing was, with `fresh`; where a segment labelled `l`
    /// was, with `mix(l)`.
    pub(crate) fn cover(&mut self, from: Timestamp, to: End, fresh: L, mix: impl Fn(L) -> L) {
        // Take out every segment overlapping the range, whole.
        let starts: Vec<Timestamp> = {
            let before =
                self.map.range(..=from).next_back().filter(|(_, (end, _))| end.after(from)).map(|(s, _)| *s);
            let after = self
                .map
                .range((std::ops::Bound::Excluded(from), std::ops::Bound::Unbounded))
                .take_while(|(s, _)| to.after(**s))
                .map(|(s, _)| *s);
            before.into_iter().chain(after).collect()
        };
        let mut pieces: Vec<(Timestamp, End, L)> = Vec::with_capacity(starts.len() * 2 + 1);
        // Where the range is covered up to; `None` once it reached the end of time.
        let mut cursor = Some(from);
        for s in starts {
            let Some((end, label)) = self.map.remove(&s) else { continue };
            if s < from {
                pieces.push((s, End(Some(from)), label));
            }
            let start = s.max(from);
            if let Some(c) = cursor
                && c < start
            {
                pieces.push((c, End(Some(start)), fresh));
            }
            let stop = end.min(to);
            pieces.push((start, stop, mix(label)));
            if end > to
                && let Some(t) = to.0
            {
                pieces.push((t, end, label));
            }
            cursor = stop.0;
        }
        if let Some(c) = cursor
            && to.after(c)
        {
            pieces.push((c, to, fresh));
        }
        // Neighbours that touch the pieces and may join them.
        if let Some((first, _, label)) = pieces.first().copied()
            && let Some((&s, &(end, l))) = self.map.range(..first).next_back()
            && end == End(Some(first))
            && l == label
        {
            self.map.remove(&s);
            pieces.insert(0, (s, end, l));
        }
        if let Some((_, End(Some(last)), label)) = pieces.last().copied()
            && let Some(&(end, l)) = self.map.get(&last)
            && l == label
        {
            self.map.remove(&last);
            pieces.push((last, end, l));
        }
        let mut joined: Option<(Timestamp, End, L)> = None;
        for (s, e, l) in pieces {
            joined = match joined {
                Some((js, je, jl)) if jl == l && je == End(Some(s)) => Some((js, e, jl)),
                Some((js, je, jl)) => {
                    self.map.insert(js, (je, jl));
                    Some((s, e, l))
                }
                None => Some((s, e, l)),
            };
        }
        if let Some((s, e, l)) = joined {
            self.map.insert(s, (e, l));
        }
    }

    #[cfg(test)]
    fn all(&self) -> Vec<(Timestamp, End, L)> {
        self.map.iter().map(|(s, (e, l))| (*s, *e, *l)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(x: i64) -> Timestamp {
        Timestamp::from_micros(x)
    }

    fn label_at(segs: &Segments<u8>, x: i64) -> Option<u8> {
        segs.overlapping(ts(x), End(Some(ts(x + 1)))).next().map(|(_, _, l)| l)
    }

    #[test]
    fn cover_labels_gaps_and_mixes_overlaps_and_joins_neighbours() {
        let mut segs = Segments::new();
        let max = |a: u8| move |l: u8| l.max(a);
        segs.cover(ts(10), End(Some(ts(20))), 1, max(1));
        segs.cover(ts(30), End(None), 1, max(1));
        segs.cover(ts(15), End(Some(ts(35))), 2, max(2));
        assert_eq!(
            segs.all(),
            vec![(ts(10), End(Some(ts(15))), 1), (ts(15), End(Some(ts(35))), 2), (ts(35), End(None), 1)]
        );
        segs.cover(ts(0), End(None), 2, max(2));
        assert_eq!(segs.all(), vec![(ts(0), End(None), 2)]);
        assert_eq!(
            segs.overlapping(ts(5), End(Some(ts(7)))).collect::<Vec<_>>(),
            vec![(ts(5), End(Some(ts(7))), 2)]
        );
    }

    #[test]
    fn agrees_with_a_pointwise_model() {
        // A deterministic pseudo-random walk over small coordinates.
        let mut seed = 7u64;
        let mut next = |m: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        for _ in 0..200 {
            let mut segs = Segments::new();
            let mut model = [None::<u8>; 60];
            for _ in 0..12 {
                let from = next(50) as i64;
                let to = if next(4) == 0 { None } else { Some(from + 1 + next(20) as i64) };
                let label = next(3) as u8;
                segs.cover(ts(from), End(to.map(ts)), label, |l| if l == label { l } else { 9 });
                for (x, slot) in model.iter_mut().enumerate() {
                    let x = x as i64;
                    if x >= from && to.is_none_or(|t| x < t) {
                        *slot = Some(match *slot {
                            None => label,
                            Some(l) if l == label => l,
                            Some(_) => 9,
                        });
                    }
                }
                for (x, want) in model.iter().enumerate() {
                    assert_eq!(label_at(&segs, x as i64), *want, "at {x}");
                }
                // Kept canonical: no two touching segments share a label.
                let all = segs.all();
                for w in all.windows(2) {
                    assert!(!(w[0].1 == End(Some(w[1].0)) && w[0].2 == w[1].2), "{all:?}");
                }
            }
        }
    }
}
