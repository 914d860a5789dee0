//! A token filter that takes the Korean particles off a word ("서연이는" → "서연",
//! "학교에서" → "학교", by `ostrakon_core::particles`), so that a question's word meets
//! the text's other forms of it, as the English stemmer does for "moved" and "moves".
//! Index and queries use the same analyzer, so both sides are stripped alike.

use ostrakon_core::particles::strip_particles;
use tantivy::tokenizer::{Token, TokenFilter, TokenStream, Tokenizer};

/// Takes the Korean particles off each token (see the module).
#[derive(Clone)]
pub(crate) struct KoreanParticles;

impl TokenFilter for KoreanParticles {
    type Tokenizer<T: Tokenizer> = Filter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> Filter<T> {
        Filter { tokenizer }
    }
}

#[derive(Clone)]
pub(crate) struct Filter<T> {
    tokenizer: T,
}

impl<T: Tokenizer> Tokenizer for Filter<T> {
    type TokenStream<'a> = Stream<T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        Stream { tail: self.tokenizer.token_stream(text) }
    }
}

pub(crate) struct Stream<T> {
    tail: T,
}

impl<T: TokenStream> TokenStream for Stream<T> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        let token = self.tail.token_mut();
        if let Some(stem) = strip_particles(&token.text) {
            let stem = stem.len();
            token.text.truncate(stem);
        }
        true
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}
