//! Nearest vectors by cosine similarity. Vectors are normalised on the way in, so
//! similarity is a dot product. Below a size threshold every query scans all vectors
//! exactly (a tight loop the compiler vectorises); at the threshold an HNSW graph
//! (hnsw_rs) is built once, off the lock, and kept up to date from then on.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use hnsw_rs::anndists::dist::Distance;
use hnsw_rs::hnsw::Hnsw;

use crate::error::SearchError;

/// When and how to use HNSW.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HnswConfig {
    /// Live vectors at which the index switches from exact scan to HNSW.
    pub threshold: usize,
    /// Links per node (M).
    pub connections: usize,
    /// Candidate list while building.
    pub ef_construction: usize,
    /// Candidate list while searching (at least the number of hits asked for).
    pub ef_search: usize,
}

impl Default for HnswConfig {
    fn default() -> Self {
        HnswConfig { threshold: 50_000, connections: 16, ef_construction: 100, ef_search: 128 }
    }
}

/// 1 − cosine of unit vectors, never negative. hnsw_rs's own dot distance asserts on
/// rounding just above 1, which unit vectors do produce.
#[derive(Clone, Copy, Default)]
struct UnitDot;

impl Distance<f32> for UnitDot {
    fn eval(&self, a: &[f32], b: &[f32]) -> f32 {
        (1.0 - dot(a, b)).max(0.0)
    }
}

/// Dot product, written in lanes of eight so that it vectorises.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let tail: f32 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

struct Inner {
    /// Slot → key; a replaced vector leaves a dead slot behind.
    keys: Vec<u64>,
    /// Slot-major vectors.
    data: Vec<f32>,
    live: Vec<bool>,
    slot_of: HashMap<u64, usize>,
    hnsw: Option<Hnsw<'static, f32, UnitDot>>,
    /// Whether an upsert that reaches the threshold builds the graph itself; not for an
    /// index loaded from disk, whose owner builds it once the index is serving.
    auto_build: bool,
}

/// Vectors of one dimension, named by `u64` keys.
pub struct VectorIndex {
    dim: usize,
    config: HnswConfig,
    inner: RwLock<Inner>,
}

#[derive(PartialEq)]
struct Hit(f32, u64);
impl Eq for Hit {}
impl PartialOrd for Hit {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Hit {
    // Reversed: the heap's top is the worst hit kept.
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0).then(self.1.cmp(&other.1))
    }
}

/// Normalises a vector, refusing NaN, infinities and zero.
pub(crate) fn normalised(v: &[f32]) -> Result<Vec<f32>, SearchError> {
    if v.iter().any(|x| !x.is_finite()) {
        return Err(SearchError::BadVector);
    }
    let norm = dot(v, v).sqrt();
    if norm == 0.0 || !norm.is_finite() {
        return Err(SearchError::BadVector);
    }
    Ok(v.iter().map(|x| x / norm).collect())
}

impl VectorIndex {
    /// An empty index of `dim`-long vectors.
    pub fn new(dim: usize, config: HnswConfig) -> Self {
        VectorIndex {
            dim,
            config,
            inner: RwLock::new(Inner {
                keys: Vec::new(),
                data: Vec::new(),
                live: Vec::new(),
                slot_of: HashMap::new(),
                hnsw: None,
                auto_build: true,
            }),
        }
    }

    /// An index of the vectors `data` (slot-major, `dim` each, unit length as
    /// [`VectorIndex::live_vectors`] gives them) under `keys`, a later key replacing an
    /// earlier one. Its HNSW graph is not built here: see [`VectorIndex::build_if_large`].
    pub fn from_vectors(
        dim: usize,
        config: HnswConfig,
        keys: Vec<u64>,
        data: Vec<f32>,
    ) -> Result<Self, SearchError> {
        if dim == 0 || data.len() != keys.len().saturating_mul(dim) {
            return Err(SearchError::Dimension {
                expected: keys.len().saturating_mul(dim),
                actual: data.len(),
            });
        }
        if data.iter().any(|x| !x.is_finite()) {
            return Err(SearchError::BadVector);
        }
        let mut live = vec![true; keys.len()];
        let mut slot_of = HashMap::with_capacity(keys.len());
        for (slot, key) in keys.iter().enumerate() {
            if let Some(old) = slot_of.insert(*key, slot) {
                live[old] = false;
            }
        }
        Ok(VectorIndex {
            dim,
            config,
            inner: RwLock::new(Inner { keys, data, live, slot_of, hnsw: None, auto_build: false }),
        })
    }

    /// Hands `f` how many live vectors there are and each with its key, in the order
    /// they were added, all as of one moment.
    pub fn live_vectors<R>(&self, f: impl FnOnce(usize, &mut dyn Iterator<Item = (u64, &[f32])>) -> R) -> R {
        let inner = self.read();
        let mut live = inner
            .data
            .chunks_exact(self.dim)
            .enumerate()
            .filter(|(slot, _)| inner.live[*slot])
            .map(|(slot, v)| (inner.keys[slot], v));
        f(inner.slot_of.len(), &mut live)
    }

    /// Builds the HNSW graph if the index has reached the threshold without one (as an
    /// index loaded by [`VectorIndex::from_vectors`] does); searches scan meanwhile.
    pub fn build_if_large(&self) {
        let wanted = {
            let inner = self.read();
            inner.hnsw.is_none() && inner.slot_of.len() >= self.config.threshold
        };
        if wanted {
            self.build_hnsw();
        }
    }

    fn read(&self) -> RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The vectors' length.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Live vectors.
    pub fn len(&self) -> usize {
        self.read().slot_of.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether queries go through HNSW.
    pub fn uses_hnsw(&self) -> bool {
        self.read().hnsw.is_some()
    }

    /// Checks a vector against the index's dimension and normalises it.
    pub fn check(&self, v: &[f32]) -> Result<Vec<f32>, SearchError> {
        if v.len() != self.dim {
            return Err(SearchError::Dimension { expected: self.dim, actual: v.len() });
        }
        normalised(v)
    }

    /// Adds vectors, replacing those with the same keys. Builds the HNSW graph when the
    /// index reaches the threshold (searches keep scanning while it is built).
    pub fn upsert(&self, items: &[(u64, Vec<f32>)]) -> Result<(), SearchError> {
        let checked: Vec<(u64, Vec<f32>)> =
            items.iter().map(|(k, v)| self.check(v).map(|v| (*k, v))).collect::<Result<_, _>>()?;
        let build = {
            let mut inner = self.write();
            for (key, v) in checked {
                let slot = inner.keys.len();
                if let Some(old) = inner.slot_of.insert(key, slot) {
                    inner.live[old] = false;
                }
                inner.keys.push(key);
                inner.live.push(true);
                inner.data.extend_from_slice(&v);
                if let Some(hnsw) = &inner.hnsw {
                    hnsw.insert_slice((&inner.data[slot * self.dim..(slot + 1) * self.dim], slot));
                }
            }
            inner.auto_build && inner.hnsw.is_none() && inner.slot_of.len() >= self.config.threshold
        };
        if build {
            self.build_hnsw();
        }
        Ok(())
    }

    /// Builds the HNSW graph over every vector now present: from a copy, without
    /// blocking searches, then catches up with what was added meanwhile.
    pub fn build_hnsw(&self) {
        let (data, upto) = {
            let inner = self.read();
            (inner.data.clone(), inner.keys.len())
        };
        let hnsw =
            Hnsw::new(self.config.connections, upto.max(1) * 2, 16, self.config.ef_construction, UnitDot);
        let points: Vec<(&[f32], usize)> =
            (0..upto).map(|slot| (&data[slot * self.dim..(slot + 1) * self.dim], slot)).collect();
        hnsw.parallel_insert_slice(&points);
        let mut inner = self.write();
        for slot in upto..inner.keys.len() {
            hnsw.insert_slice((&inner.data[slot * self.dim..(slot + 1) * self.dim], slot));
        }
        inner.hnsw = Some(hnsw);
        inner.auto_build = true;
    }

    /// A key's vector (normalised).
    pub fn get(&self, key: u64) -> Option<Vec<f32>> {
        let inner = self.read();
        inner.slot_of.get(&key).map(|&s| inner.data[s * self.dim..(s + 1) * self.dim].to_vec())
    }

    /// The `limit` most similar vectors among keys that pass `keep`, by cosine, best
    /// first (ties by key): HNSW when built, else an exact scan.
    pub fn search(
        &self,
        query: &[f32],
        limit: usize,
        keep: &dyn Fn(u64) -> bool,
    ) -> Result<Vec<(u64, f32)>, SearchError> {
        if self.uses_hnsw() {
            self.search_hnsw(query, limit, keep)
        } else {
            self.search_exact(query, limit, keep)
        }
    }

    /// Exact scan over every live vector.
    pub fn search_exact(
        &self,
        query: &[f32],
        limit: usize,
        keep: &dyn Fn(u64) -> bool,
    ) -> Result<Vec<(u64, f32)>, SearchError> {
        let q = self.check(query)?;
        let inner = self.read();
        let mut heap = BinaryHeap::with_capacity(limit + 1);
        if limit == 0 {
            return Ok(Vec::new());
        }
        for (slot, v) in inner.data.chunks_exact(self.dim).enumerate() {
            if !inner.live[slot] {
                continue;
            }
            let s = dot(&q, v);
            if heap.len() == limit && heap.peek().is_some_and(|w: &Hit| s <= w.0) {
                continue;
            }
            let key = inner.keys[slot];
            if !keep(key) {
                continue;
            }
            heap.push(Hit(s, key));
            if heap.len() > limit {
                heap.pop();
            }
        }
        Ok(sorted(heap))
    }

    /// Approximate search through the HNSW graph (an exact scan if it is not built).
    pub fn search_hnsw(
        &self,
        query: &[f32],
        limit: usize,
        keep: &dyn Fn(u64) -> bool,
    ) -> Result<Vec<(u64, f32)>, SearchError> {
        let q = self.check(query)?;
        let inner = self.read();
        let Some(hnsw) = &inner.hnsw else {
            drop(inner);
            return self.search_exact(query, limit, keep);
        };
        if limit == 0 {
            return Ok(Vec::new());
        }
        let filter = |slot: &usize| inner.live[*slot] && keep(inner.keys[*slot]);
        let ef = self.config.ef_search.max(limit);
        let found = hnsw.search_filter(&q, limit, ef, Some(&filter));
        let mut hits: Vec<(u64, f32)> =
            found.iter().map(|n| (inner.keys[n.d_id], 1.0 - n.distance)).collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.dedup_by_key(|h| h.0);
        Ok(hits)
    }
}

fn sorted(heap: BinaryHeap<Hit>) -> Vec<(u64, f32)> {
    let mut hits: Vec<(u64, f32)> = heap.into_iter().map(|h| (h.1, h.0)).collect();
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    hits
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    use super::*;

    fn random(rng: &mut StdRng, dim: usize) -> Vec<f32> {
        (0..dim).map(|_| rng.random_range(-1.0f32..1.0)).collect()
    }

    #[test]
    fn exact_scan_is_exact_and_filters() {
        let ix = VectorIndex::new(3, HnswConfig::default());
        ix.upsert(&[(1, vec![1.0, 0.0, 0.0]), (2, vec![0.7, 0.7, 0.0]), (3, vec![0.0, 0.0, 5.0])]).unwrap();
        let hits = ix.search(&[2.0, 0.1, 0.0], 2, &|_| true).unwrap();
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), vec![1, 2]);
        assert!((hits[0].1 - 0.99875).abs() < 1e-4);
        let odd = ix.search(&[2.0, 0.1, 0.0], 5, &|k| k % 2 == 1).unwrap();
        assert_eq!(odd.iter().map(|h| h.0).collect::<Vec<_>>(), vec![1, 3]);
        ix.upsert(&[(1, vec![0.0, 0.0, 1.0])]).unwrap();
        assert_eq!(ix.len(), 3);
        assert_eq!(ix.search(&[1.0, 0.0, 0.0], 1, &|_| true).unwrap()[0].0, 2);
        assert!(matches!(
            ix.upsert(&[(9, vec![1.0])]),
            Err(SearchError::Dimension { expected: 3, actual: 1 })
        ));
        assert!(matches!(ix.search(&[f32::NAN, 0.0, 0.0], 1, &|_| true), Err(SearchError::BadVector)));
        assert!(matches!(ix.upsert(&[(9, vec![0.0; 3])]), Err(SearchError::BadVector)));
        assert_eq!(ix.len(), 3, "a rejected batch adds nothing");
    }

    #[test]
    fn hnsw_switches_on_at_threshold_and_agrees_with_exact() {
        let mut rng = StdRng::seed_from_u64(7);
        let dim = 32;
        let config = HnswConfig { threshold: 2_000, ..HnswConfig::default() };
        let ix = VectorIndex::new(dim, config);
        let items: Vec<(u64, Vec<f32>)> = (0..1_999).map(|k| (k, random(&mut rng, dim))).collect();
        ix.upsert(&items).unwrap();
        assert!(!ix.uses_hnsw());
        ix.upsert(&[(5_000, random(&mut rng, dim)), (5_001, random(&mut rng, dim))]).unwrap();
        assert!(ix.uses_hnsw());
        let mut agree = 0;
        let queries = 50;
        for _ in 0..queries {
            let q = random(&mut rng, dim);
            let exact = ix.search_exact(&q, 10, &|_| true).unwrap();
            let approx = ix.search(&q, 10, &|_| true).unwrap();
            agree += approx.iter().filter(|h| exact.iter().any(|e| e.0 == h.0)).count();
        }
        let recall = agree as f64 / (queries * 10) as f64;
        assert!(recall > 0.9, "HNSW recall@10 {recall}");
        // Added after the build: found through the graph too.
        let v = random(&mut rng, dim);
        ix.upsert(&[(9_999, v.clone())]).unwrap();
        assert_eq!(ix.search(&v, 1, &|_| true).unwrap()[0].0, 9_999);
        assert!(ix.search(&v, 3, &|k| k != 9_999).unwrap().iter().all(|h| h.0 != 9_999));
    }

    #[test]
    fn an_index_rebuilt_from_its_vectors_answers_alike_and_builds_its_graph_when_told() {
        let mut rng = StdRng::seed_from_u64(11);
        let dim = 16;
        let config = HnswConfig { threshold: 500, ..HnswConfig::default() };
        let ix = VectorIndex::new(dim, config);
        let items: Vec<(u64, Vec<f32>)> = (0..600).map(|k| (k % 550, random(&mut rng, dim))).collect();
        ix.upsert(&items).unwrap();
        let (mut keys, mut data) = (Vec::new(), Vec::new());
        ix.live_vectors(|_, vectors| {
            for (k, v) in vectors {
                keys.push(k);
                data.extend_from_slice(v);
            }
        });
        assert_eq!(keys.len(), 550, "replaced vectors are not kept");
        let back = VectorIndex::from_vectors(dim, config, keys, data).unwrap();
        assert_eq!(back.len(), 550);
        assert!(!back.uses_hnsw(), "not built on load");
        back.upsert(&[(10_000, random(&mut rng, dim))]).unwrap();
        assert!(!back.uses_hnsw(), "nor by an upsert after it");
        for _ in 0..20 {
            let q = random(&mut rng, dim);
            let mut want = ix.search_exact(&q, 5, &|k| k != 10_000).unwrap();
            let mut got = back.search_exact(&q, 5, &|k| k != 10_000).unwrap();
            want.iter_mut().chain(got.iter_mut()).for_each(|h| h.1 = (h.1 * 1e5).round());
            assert_eq!(got, want);
        }
        back.build_if_large();
        assert!(back.uses_hnsw());
        assert!(matches!(
            VectorIndex::from_vectors(dim, config, vec![1, 2], vec![0.0; dim]),
            Err(SearchError::Dimension { .. })
        ));
    }
}
