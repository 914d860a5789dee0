//! The GraphQL parser the server uses (async-graphql's), on any text: a document or an
//! error, never a panic. The server bounds depth and size before and after parsing.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = async_graphql_parser::parse_query(text);
    }
});
