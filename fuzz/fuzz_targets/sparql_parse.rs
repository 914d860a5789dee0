//! The SPARQL parser as Ostrakon builds it (the patched spargebra of vendor/), on any
//! text: a query or an error, never a panic (its backtracking was made linear there).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = spargebra::SparqlParser::new().parse_query(text);
    }
});
