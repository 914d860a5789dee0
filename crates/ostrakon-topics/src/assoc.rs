//! Helpers for counting associations inside a closed segment: which entities occurred
//! together, and how alike two embeddings are. The engine turns the pairs into weighted
//! edges of the topic network; keeping the pair rule here makes it one rule everywhere.

/// The unique unordered pairs of distinct entities in `entities`, each as `(a, b)` with
/// `a < b`, sorted. Repeated entities count once; an entity is never paired with itself.
pub fn cooccurrences(entities: &[u64]) -> Vec<(u64, u64)> {
    let mut unique = entities.to_vec();
    unique.sort_unstable();
    unique.dedup();
    let mut pairs = Vec::with_capacity(unique.len() * unique.len().saturating_sub(1) / 2);
    for (i, &a) in unique.iter().enumerate() {
        pairs.extend(unique[i + 1..].iter().map(|&b| (a, b)));
    }
    pairs
}

/// Cosine similarity in [-1, 1], computed in f64. `None` when the lengths differ, a vector
/// is empty, all zero, or has a non-finite component.
pub fn cosine(a: &[f32], b: &[f32]) -> Option<f32> {
    if a.len() != b.len() || a.is_empty() {
        return None;
    }
    let (mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (f64::from(x), f64::from(y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    let norms = (na * nb).sqrt();
    if !dot.is_finite() || !norms.is_finite() || norms <= 0.0 {
        return None;
    }
    Some((dot / norms).clamp(-1.0, 1.0) as f32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_unique_sorted_and_ordered() {
        assert_eq!(cooccurrences(&[3, 1, 2, 3, 1]), vec![(1, 2), (1, 3), (2, 3)]);
        assert!(cooccurrences(&[]).is_empty());
        assert!(cooccurrences(&[7, 7, 7]).is_empty());
        assert_eq!(cooccurrences(&[9, 4]), vec![(4, 9)]);
    }

    #[test]
    fn cosine_edge_cases() {
        assert_eq!(cosine(&[1.0, 0.0], &[2.0, 0.0]), Some(1.0));
        assert_eq!(cosine(&[1.0, 0.0], &[0.0, 3.0]), Some(0.0));
        assert_eq!(cosine(&[1.0, 1.0], &[-1.0, -1.0]), Some(-1.0));
        assert_eq!(cosine(&[1.0], &[1.0, 0.0]), None);
        assert_eq!(cosine(&[], &[]), None);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), None);
        assert_eq!(cosine(&[f32::NAN, 1.0], &[1.0, 0.0]), None);
        assert_eq!(cosine(&[f32::INFINITY, 1.0], &[1.0, 0.0]), None);
        // Large components do not overflow: the sums are in f64.
        assert_eq!(cosine(&[f32::MAX, 0.0], &[f32::MAX, 0.0]), Some(1.0));
    }
}
