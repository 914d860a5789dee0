//! multilingual-e5-small's tokenizer (XLM-RoBERTa's SentencePiece unigram) rebuilt from the
//! model file: each character replaced as the file's normalisation map says, runs of
//! spaces made one, a leading "▁" and every space made "▁" (SentencePiece's metaspace),
//! then the most likely split into pieces — `tokenizers`' Unigram model, whose Viterbi
//! search, unknown-character score (lowest piece score less 10) and tie-breaking are
//! SentencePiece's. Unknown characters are one `<unk>` each, as the reference engine
//! makes them (`tokenizers` fuses a run of them into one).

use std::collections::HashMap;

use tokenizers::Model;
use tokenizers::models::unigram::Unigram;

use crate::e5_file::Vocabulary;

/// SentencePiece's word-start marker, U+2581.
const METASPACE: char = '\u{2581}';

pub(crate) struct E5Tokenizer {
    unigram: Unigram,
    normalise: HashMap<char, Vec<char>>,
    pub bos: u32,
    pub eos: u32,
    unk: u32,
}

impl E5Tokenizer {
    pub(crate) fn new(vocabulary: Vocabulary) -> Result<E5Tokenizer, String> {
        let Vocabulary { mut pieces, bos, eos, unk, normalise } = vocabulary;
        // The reference engine never matches `<unk>` as a piece of text: nor does this one.
        if let Some(piece) = pieces.get_mut(unk as usize) {
            piece.0 = "\u{0}<unk>".into();
        }
        let unigram = Unigram::from(pieces, Some(unk as usize), false).map_err(|e| e.to_string())?;
        Ok(E5Tokenizer { unigram, normalise, bos, eos, unk })
    }

    /// The piece ids of `text`, without `<s>` and `</s>`.
    pub(crate) fn content_ids(&self, text: &str) -> Result<Vec<u32>, String> {
        let mut normalised = String::with_capacity(text.len() + 3);
        let mut last_space = false;
        let mut push = |c: char, out: &mut String| {
            if c == ' ' && last_space {
                return;
            }
            last_space = c == ' ';
            out.push(if c == ' ' { METASPACE } else { c });
        };
        for c in text.chars() {
            match self.normalise.get(&c) {
                Some(to) => to.iter().for_each(|c| push(*c, &mut normalised)),
                None => push(c, &mut normalised),
            }
        }
        if !normalised.starts_with(METASPACE) {
            normalised.insert(0, METASPACE);
        }
        let tokens = self.unigram.tokenize(&normalised).map_err(|e| e.to_string())?;
        let mut ids = Vec::with_capacity(tokens.len());
        for token in tokens {
            if token.id == self.unk {
                ids.extend(token.value.chars().map(|_| self.unk));
            } else {
                ids.push(token.id);
            }
        }
        Ok(ids)
    }
}
