//! Naming a topic: the words that set its member documents apart from the rest, scored by
//! term frequency in the members times inverse document frequency over all documents.
//! A plain tf-idf is enough for a label a person reads; it needs no model and no index.

use std::collections::{BTreeMap, BTreeSet};

/// Words that carry no topic: common English function words and the filler of chat logs.
/// Sorted, for binary search (a test checks).
#[rustfmt::skip]
const STOPWORDS: &[&str] = &[
    "about", "above", "after", "again", "against", "all", "also", "and", "any", "are", "assistant",
    "because", "been", "before", "being", "below", "between", "both", "but", "can", "cannot",
    "could", "did", "does", "doing", "down", "during", "each", "few", "for", "from", "further",
    "get", "gets", "getting", "good", "got", "great", "had", "has", "have", "having", "hello",
    "her", "here", "hers", "herself", "him", "himself", "his", "how", "into", "its", "itself",
    "just", "know", "let", "like", "make", "more", "most", "much", "myself", "need", "not", "now",
    "off", "okay", "once", "one", "only", "other", "our", "ours", "ourselves", "out", "over", "own",
    "please", "really", "same", "see", "she", "should", "some", "such", "sure", "than", "thank",
    "thanks", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these",
    "they", "thing", "things", "think", "this", "those", "through", "too", "under", "until", "use",
    "user", "very", "want", "was", "way", "well", "were", "what", "when", "where", "which", "while",
    "who", "whom", "why", "will", "with", "would", "yeah", "yes", "you", "your", "yours",
    "yourself", "yourselves",
];

/// Lower-cased alphabetic words of at least three letters that are not stopwords.
fn tokens(doc: &str) -> impl Iterator<Item = String> + '_ {
    doc.split(|c: char| !c.is_alphabetic())
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .filter(|w| STOPWORDS.binary_search(&w.as_str()).is_err())
}

/// The `k` terms that best characterise `member_docs` against `all_docs`: score = count in
/// the members × (ln((N + 1) / (df + 1)) + 1), with N the number of `all_docs` and df how
/// many of them contain the term. Best first, ties by the term itself.
pub fn characteristic_terms(member_docs: &[&str], all_docs: &[&str], k: usize) -> Vec<String> {
    let mut tf: BTreeMap<String, u64> = BTreeMap::new();
    for doc in member_docs {
        for t in tokens(doc) {
            *tf.entry(t).or_default() += 1;
        }
    }
    let mut df: BTreeMap<&str, u64> = BTreeMap::new();
    for doc in all_docs {
        for t in tokens(doc).collect::<BTreeSet<_>>() {
            if let Some((term, _)) = tf.get_key_value(&t) {
                *df.entry(term.as_str()).or_default() += 1;
            }
        }
    }
    let n = all_docs.len() as f64;
    let mut scored: Vec<(f64, &String)> = tf
        .iter()
        .map(|(t, &f)| {
            let d = df.get(t.as_str()).copied().unwrap_or(0) as f64;
            (f as f64 * (((n + 1.0) / (d + 1.0)).ln() + 1.0), t)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.into_iter().take(k).map(|(_, t)| t.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopwords_are_sorted_and_unique() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn terms_of_a_tiny_corpus() {
        let cooking = [
            "User: How long should I knead bread dough? Assistant: Knead the dough ten minutes.",
            "Thanks! Would rye flour change the dough? Yes, rye flour makes it sticky.",
        ];
        let football = ["Who won the match yesterday? The match ended in a draw.", "Great goal though!"];
        let all: Vec<&str> = cooking.iter().chain(&football).copied().collect();
        assert_eq!(characteristic_terms(&cooking, &all, 3), vec!["dough", "flour", "knead"]);
        assert_eq!(characteristic_terms(&football, &all, 2), vec!["match", "draw"]);
        // Ties (same count, same df) go by the term.
        assert_eq!(characteristic_terms(&["zebra apple"], &["zebra apple"], 5), vec!["apple", "zebra"]);
        assert!(characteristic_terms(&cooking, &all, 0).is_empty());
        assert!(characteristic_terms(&[], &all, 3).is_empty());
        // Members need not be among all_docs; non-letters split words; short words drop.
        assert_eq!(characteristic_terms(&["Crème-brûlée, OK? 42x"], &[], 5), vec!["brûlée", "crème"]);
    }
}
