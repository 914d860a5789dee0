//! Predicates a read names: one the namespace never declared nor used is a misspelling
//! far more often than a question whose answer is "nothing", so it is refused as
//! `UNKNOWN_PREDICATE`, naming the nearest predicates the namespace has (a namespace with
//! no predicate yet answers empty: there is nothing to misspell).

use async_graphql::Result;
use ostrakon_core::Namespace;
use ostrakon_engine::Store;

use crate::error::{code, coded};

/// Names offered as the nearest at most.
const NEAREST: usize = 3;

/// That `name` is a predicate `ns` declared or used.
pub(crate) fn known(store: &Store, ns: &Namespace, field: &str, name: &str) -> Result<()> {
    let names = store.predicate_names(ns).map_err(crate::error::engine_error)?;
    // A namespace with no predicate has nothing to misspell: its answer is empty.
    if names.is_empty() || names.iter().any(|n| n == name) {
        return Ok(());
    }
    let nearest = nearest(&names, name);
    let hint = if nearest.is_empty() {
        match names.len() {
            0 => "the namespace has no predicate yet".to_owned(),
            _ => {
                format!("it has {}", names.iter().take(10).map(String::as_str).collect::<Vec<_>>().join(", "))
            }
        }
    } else {
        format!("did you mean {}?", nearest.join(", "))
    };
    Err(coded(
        code::UNKNOWN_PREDICATE,
        format!(
            "unknown predicate in `{field}`: {name:?} — no fact of namespace {:?} has used it and none declared it; {hint}",
            ns.as_str()
        ),
    ))
}

/// The names nearest to `name` (case and separators aside, then by edit distance), the
/// nearest first; none when none is near.
fn nearest(names: &[String], name: &str) -> Vec<String> {
    let fold =
        |s: &str| s.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect::<String>();
    let wanted = fold(name);
    let mut scored: Vec<(usize, &String)> = names
        .iter()
        .map(|n| (strsim::levenshtein(&fold(n), &wanted), n))
        .filter(|(d, n)| *d <= (n.chars().count().max(wanted.chars().count()) / 3).max(2))
        .collect();
    scored.sort();
    scored.into_iter().take(NEAREST).map(|(_, n)| n.clone()).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_nearest_names_are_found_across_case_separators_and_typos() {
        let names: Vec<String> = ["livesIn", "likes", "worksAt", "born_in"].map(String::from).to_vec();
        assert_eq!(super::nearest(&names, "livesin"), ["livesIn"]);
        assert_eq!(super::nearest(&names, "lives_in"), ["livesIn"]);
        assert_eq!(super::nearest(&names, "workAt"), ["worksAt"]);
        assert_eq!(super::nearest(&names, "bornIn"), ["born_in"]);
        assert!(super::nearest(&names, "hasChild").is_empty());
    }
}
