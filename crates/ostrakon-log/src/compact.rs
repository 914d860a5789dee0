//! Compaction: a log written again whole, with some batches' payloads replaced, as an
//! erasure needs (see `FORMAT.md`, "Compaction"). Every frame keeps its seq and system
//! time; a replaced payload gets its own checksum. The new file replaces the old one
//! atomically (written beside it, synced, renamed over it, the directory synced), so a
//! crash leaves either log, never a mix.

use std::io::Write;

use crate::error::LogError;
use crate::format::{MAX_PAYLOAD_LEN, file_header, seal_frame, unsealed_frame};
use crate::record::Record;

/// Writes a whole log file for `name` holding `records`, which must be numbered
/// 1, 2, … with strictly increasing system times (what a log holds), else `Corrupt`
/// and nothing is written.
pub fn write_log(out: &mut dyn Write, name: &str, records: &[Record]) -> Result<(), LogError> {
    check(records)?;
    out.write_all(&file_header(name))?;
    for record in records {
        let mut frame = unsealed_frame(&record.payload);
        seal_frame(&mut frame, record.seq, record.system_time);
        out.write_all(&frame)?;
    }
    Ok(())
}

fn check(records: &[Record]) -> Result<(), LogError> {
    let mut last_time = i64::MIN;
    for (i, record) in records.iter().enumerate() {
        let corrupt =
            |reason: &str| LogError::Corrupt { offset: 0, reason: format!("batch {}: {reason}", record.seq) };
        if record.seq != i as u64 + 1 {
            return Err(corrupt("out of sequence in a rewrite"));
        }
        if record.system_time <= last_time {
            return Err(corrupt("system time not after the previous batch's"));
        }
        if record.payload.len() > MAX_PAYLOAD_LEN {
            return Err(corrupt("payload too large"));
        }
        last_time = record.system_time;
    }
    Ok(())
}
