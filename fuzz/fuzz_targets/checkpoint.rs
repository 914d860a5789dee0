//! The checkpoint reader on any bytes: a file that is not a sound checkpoint of this
//! format is refused with an error, never a panic or an unbounded allocation.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let header = ostrakon_index::checkpoint::header(data);
    if let Ok((decoded, _index)) = ostrakon_index::checkpoint::decode(data) {
        assert!(header.is_ok(), "a checkpoint that decodes has a sound header");
        let _ = decoded;
    }
});
