//! Finds known entity names and aliases in a text, to seed graph expansion.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

/// An automaton over names, each naming a `u64` key (several names may share a key).
pub struct NameMatcher {
    automaton: Option<AhoCorasick>,
    keys: Vec<u64>,
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

impl NameMatcher {
    /// Builds the matcher. Matching ignores ASCII case; names shorter than two
    /// characters, or with no letter or digit, are left out (they would match everywhere).
    pub fn new<S: AsRef<str>>(names: impl IntoIterator<Item = (S, u64)>) -> Self {
        let mut patterns = Vec::new();
        let mut keys = Vec::new();
        for (name, key) in names {
            let name = name.as_ref().trim();
            if name.chars().count() < 2 || !name.chars().any(char::is_alphanumeric) {
                continue;
            }
            patterns.push(name.to_owned());
            keys.push(key);
        }
        let automaton = if patterns.is_empty() {
            None
        } else {
            AhoCorasickBuilder::new()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::LeftmostLongest)
                .build(&patterns)
                .ok()
        };
        NameMatcher { automaton, keys }
    }

    /// Names known.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no name is known.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The keys named in `text` as whole words, with the byte range of each mention, in
    /// text order (the longest name wins where names overlap).
    pub fn find(&self, text: &str) -> Vec<(u64, std::ops::Range<usize>)> {
        let Some(automaton) = &self.automaton else {
            return Vec::new();
        };
        automaton
            .find_iter(text)
            .filter(|m| {
                let before = text[..m.start()].chars().next_back();
                let after = text[m.end()..].chars().next();
                !before.is_some_and(is_word) && !after.is_some_and(is_word)
            })
            .map(|m| (self.keys[m.pattern().as_usize()], m.range()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_words_any_case_longest_first() {
        let m = NameMatcher::new([("Paris", 1), ("Paris Hilton", 2), ("Al", 3), ("A", 4), ("Émile", 5)]);
        let found: Vec<u64> =
            m.find("paris hilton visited Paris; Alice met al. Émile!").iter().map(|f| f.0).collect();
        assert_eq!(found, vec![2, 1, 3, 5]);
        assert!(m.find("Parisian cafés").is_empty());
        assert!(NameMatcher::new(Vec::<(String, u64)>::new()).find("anything").is_empty());
    }
}
