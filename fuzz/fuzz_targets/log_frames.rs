//! The log's frame decoder on any bytes: it returns the records before the first bad
//! frame, or where and why it stopped; it never panics and never reads past the input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match ostrakon_log::decode_frames(data) {
        Ok(records) => assert!(records.len() <= data.len()),
        Err((at, why)) => assert!(at <= data.len() && !why.is_empty()),
    }
});
