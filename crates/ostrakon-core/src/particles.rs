//! Korean particles. Korean writes a noun's role as a particle joined to it, with no
//! space: "서연은" (Seoyeon, as topic), "서연이가" (with the familiar 이 first), "서연의"
//! (Seoyeon's), "지민이에요" (it is Jimin). A word of the text is then never the bare name
//! or noun another text uses, so a name is not found and a word does not meet its other
//! forms. The rule here is the cheap one: a known list of particles (and the copula's
//! polite forms) at the end of a word, at most [`MAX_TAIL_PIECES`] of them, after a stem
//! of at least two characters — a one-syllable stem is as often a word of its own ("아이",
//! a child, is not "아" with 이). The stem may be in another script: a name written the
//! Korean way, "Paris에서".
//!
//! Written by hand: the morphological analysers that do this properly (mecab-ko, lindera
//! with its Korean dictionary) ship dictionaries of tens of megabytes, for a rule that
//! names need only at their end.

/// The particles and endings recognised, in no order that matters: every way of cutting a
/// tail into them is tried ([`is_particle_tail`]).
const PARTICLES: &[&str] = &[
    "에게서",
    "한테서",
    "이에요",
    "입니다",
    "이었어요",
    "였어요",
    "이라고",
    "라고",
    "이랑",
    "에게",
    "한테",
    "에서",
    "께서",
    "부터",
    "까지",
    "처럼",
    "보다",
    "으로",
    "이나",
    "이든",
    "이야",
    "이다",
    "이지",
    "이죠",
    "예요",
    "에는",
    "에도",
    "로",
    "은",
    "는",
    "이",
    "가",
    "을",
    "를",
    "의",
    "와",
    "과",
    "도",
    "랑",
    "만",
    "께",
    "에",
    "나",
    "야",
];

/// Most particles one word ends with ("서연이한테는": 이, 한테, 는).
pub const MAX_TAIL_PIECES: usize = 3;

/// Whether `c` is a Hangul syllable.
pub fn is_hangul(c: char) -> bool {
    ('\u{AC00}'..='\u{D7A3}').contains(&c)
}

/// Whether `tail` is nothing but particles, the end of a word after a noun: "은",
/// "이가", "이한테는". Empty is not a tail.
pub fn is_particle_tail(tail: &str) -> bool {
    // Bounded: at most MAX_TAIL_PIECES pieces of at most four syllables each.
    !tail.is_empty() && tail.chars().count() <= 4 * MAX_TAIL_PIECES && pieces(tail, MAX_TAIL_PIECES)
}

fn pieces(tail: &str, left: usize) -> bool {
    if tail.is_empty() {
        return true;
    }
    left > 0 && PARTICLES.iter().any(|p| tail.strip_prefix(p).is_some_and(|rest| pieces(rest, left - 1)))
}

/// The word without the particles at its end, when it ends in some and at least two
/// characters are left: "서연이는" → "서연", "학교에서" → "학교", and a name in another
/// script written the Korean way, "Paris에서" → "Paris"; `None` for "아이", "서연" or
/// "Seoyeon".
pub fn strip_particles(word: &str) -> Option<&str> {
    if !word.chars().next_back().is_some_and(is_hangul) {
        return None;
    }
    // The shortest stem that leaves a whole tail: "고양이를" is 고양 + 이를.
    let mut stems = word.char_indices().skip(2).map(|(i, _)| i);
    stems.find(|&i| is_particle_tail(&word[i..])).map(|i| &word[..i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_lose_their_particles_and_short_words_stay() {
        for (word, stem) in [
            ("서연은", "서연"),
            ("서연이", "서연"),
            ("서연의", "서연"),
            ("서연이가", "서연"),
            ("서연이한테는", "서연"),
            ("지민이에요", "지민"),
            ("학교에서", "학교"),
            ("선생님으로", "선생님"),
            ("땅콩은", "땅콩"),
            ("paris에서", "paris"),
            ("Alice는", "Alice"),
        ] {
            assert_eq!(strip_particles(word), Some(stem), "{word}");
        }
        for word in ["서연", "아이", "이", "Seoyeon", "서연s", ""] {
            assert_eq!(strip_particles(word), None, "{word}");
        }
        assert!(is_particle_tail("이가") && is_particle_tail("은"));
        assert!(!is_particle_tail("") && !is_particle_tail("연은") && !is_particle_tail("은s"));
    }
}
