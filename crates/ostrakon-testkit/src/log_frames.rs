//! Shared by the recovery property test (`tests/fuzz.rs`) and the `fuzz_recovery` example:
//! building valid logs, damaging them, and checking what `Log::open` and `Log::inspect` make
//! of the result.
//!
//! Invariants checked for every input: neither panics; `inspect` leaves the bytes unchanged;
//! when `open` succeeds, `inspect` reports the same records and cut, seqs are gapless from 1,
//! times increase, the file afterwards is exactly the kept prefix (or a fresh header), and a
//! reopen finds the same records and nothing to cut; when `open` fails, the file is unchanged.
//! For damaged valid logs, the records are a prefix of the frames written, every frame still
//! intact at its place is among them when `open` succeeds (no silent loss), and damage confined
//! to the tail (from some offset after the header to the end) never makes `open` fail.

use std::sync::Arc;

use ostrakon_log::{Log, LogError, MemStorage, Record, Recovery, Storage};

/// Name of every fuzzed log.
pub const NAME: &str = "log";

/// Length of the version-2 header of [`NAME`].
pub const V2_HEADER_LEN: usize = 16 + NAME.len() + 4;

/// A valid log and what it holds.
#[derive(Clone, Debug)]
pub struct Original {
    /// The file's bytes.
    pub bytes: Vec<u8>,
    /// Its frames, as recovery must return them.
    pub records: Vec<Record>,
    /// Length of its file header (16 for version 1).
    pub header_len: usize,
    /// End offset of each frame.
    pub frame_ends: Vec<usize>,
}

/// Builds a log of `payloads` (times from `t0` on), as version 1 when `v1`.
pub fn build(payloads: &[Vec<u8>], v1: bool, t0: i64) -> Original {
    let storage = MemStorage::new();
    let (log, _) = Log::open(storage.open(NAME).unwrap(), NAME, Arc::new(move || t0)).unwrap();
    // Group some batches into one write, as concurrent writers would.
    let mut tickets = Vec::new();
    for (i, p) in payloads.iter().enumerate() {
        tickets.push(log.submit(p).unwrap());
        if i % 3 != 1 {
            for t in tickets.drain(..) {
                log.wait(t).unwrap();
            }
        }
    }
    for t in tickets {
        log.wait(t).unwrap();
    }
    let records: Vec<Record> = (1..=payloads.len())
        .zip(payloads)
        .map(|(i, p)| Record { seq: i as u64, system_time: t0 + i as i64 - 1, payload: p.clone() })
        .collect();
    let mut bytes = storage.bytes(NAME).unwrap();
    let mut header_len = V2_HEADER_LEN;
    if v1 {
        let mut v1_bytes = b"MNEMOLOG".to_vec();
        v1_bytes.extend_from_slice(&1u32.to_le_bytes());
        v1_bytes.extend_from_slice(&[0; 4]);
        v1_bytes.extend_from_slice(&bytes[V2_HEADER_LEN..]);
        bytes = v1_bytes;
        header_len = 16;
    }
    let mut frame_ends = Vec::new();
    let mut end = header_len;
    for p in payloads {
        end += 32 + p.len();
        frame_ends.push(end);
    }
    assert_eq!(end, bytes.len());
    Original { bytes, records, header_len, frame_ends }
}

/// One way of damaging a file. Offsets are taken modulo the file length where needed.
#[derive(Clone, Debug)]
pub enum Mutation {
    /// Xor one byte with a non-zero mask.
    Flip { at: usize, mask: u8 },
    /// Cut the file to `len` bytes (a crash losing the end of a write).
    Truncate { len: usize },
    /// Zero every byte from `from` to the end (a last write zero-filled).
    ZeroTail { from: usize },
    /// Replace every byte from `from` to the end with `fill` repeated (a garbled last write).
    GarbageTail { from: usize, fill: Vec<u8> },
    /// Zero `len` bytes from `from` (damage in the middle).
    ZeroRange { from: usize, len: usize },
    /// Replace `remove` bytes at `at` with `insert`.
    Splice { at: usize, remove: usize, insert: Vec<u8> },
    /// Copy `len` bytes of the file from `from` over the bytes at `to` (a misplaced sector).
    CopyWithin { from: usize, len: usize, to: usize },
}

impl Mutation {
    /// A short name of the mutation's kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Mutation::Flip { .. } => "flip",
            Mutation::Truncate { .. } => "truncate",
            Mutation::ZeroTail { .. } => "zero-tail",
            Mutation::GarbageTail { .. } => "garbage-tail",
            Mutation::ZeroRange { .. } => "zero-range",
            Mutation::Splice { .. } => "splice",
            Mutation::CopyWithin { .. } => "copy-within",
        }
    }

    /// Applies the mutation; returns the damaged bytes and, for damage confined to the end of
    /// the file, the offset it starts at.
    pub fn apply(&self, original: &[u8]) -> (Vec<u8>, Option<usize>) {
        let mut b = original.to_vec();
        let n = b.len();
        let clamp = |x: usize| if n == 0 { 0 } else { x % (n + 1) };
        match self {
            Mutation::Flip { at, mask } => {
                if n > 0 {
                    b[at % n] ^= (*mask).max(1);
                }
                (b, None)
            }
            Mutation::Truncate { len } => {
                let len = clamp(*len);
                b.truncate(len);
                (b, Some(len))
            }
            Mutation::ZeroTail { from } => {
                let from = clamp(*from);
                b[from..].fill(0);
                (b, Some(from))
            }
            Mutation::GarbageTail { from, fill } => {
                let from = clamp(*from);
                if !fill.is_empty() {
                    for (i, x) in b[from..].iter_mut().enumerate() {
                        *x = fill[i % fill.len()];
                    }
                }
                (b, Some(from))
            }
            Mutation::ZeroRange { from, len } => {
                let from = clamp(*from);
                let end = from.saturating_add(*len).min(n);
                b[from..end].fill(0);
                (b, None)
            }
            Mutation::Splice { at, remove, insert } => {
                let at = clamp(*at);
                let end = at.saturating_add(*remove).min(n);
                b.splice(at..end, insert.iter().copied());
                (b, None)
            }
            Mutation::CopyWithin { from, len, to } => {
                if n > 0 {
                    let from = from % n;
                    let to = to % n;
                    let len = (*len).min(n - from).min(n - to);
                    b.copy_within(from..from + len, to);
                }
                (b, None)
            }
        }
    }
}

/// The kind of result `open` gave, for counting.
pub fn outcome(result: &Result<Recovery, LogError>) -> &'static str {
    match result {
        Ok(r) if r.new_header => "ok-new-header",
        Ok(r) if r.truncation.is_some() => "ok-truncated",
        Ok(_) => "ok-clean",
        Err(LogError::Corrupt { .. }) => "corrupt",
        Err(LogError::BadMagic) => "bad-magic",
        Err(LogError::UnsupportedVersion { .. }) => "unsupported-version",
        Err(LogError::WrongName { .. }) => "wrong-name",
        Err(_) => "other-error",
    }
}

/// Recovers `bytes` with `inspect` and `open` and checks the invariants (see the module doc).
/// `original`: the valid log the bytes were damaged from, and where tail-only damage starts.
/// Returns `open`'s result kind, or a description of the broken invariant.
pub fn check(bytes: &[u8], original: Option<(&Original, Option<usize>)>) -> Result<&'static str, String> {
    let storage = MemStorage::new();
    storage.set_bytes(NAME, bytes.to_vec());
    let inspected = Log::inspect(storage.open_read_only(NAME).unwrap().as_ref());
    if storage.bytes(NAME).unwrap() != bytes {
        return Err("inspect changed the file".into());
    }
    let opened = Log::open(storage.open(NAME).unwrap(), NAME, Arc::new(|| 0)).map(|(_, r)| r);
    let kind = outcome(&opened);
    let after = storage.bytes(NAME).unwrap();
    let recovery = match opened {
        Ok(r) => r,
        Err(e) => {
            if after != bytes {
                return Err(format!("open failed ({e}) but changed the file"));
            }
            if let Some((o, Some(from))) = original
                && from >= o.header_len
            {
                return Err(format!("tail damage from {from} made open fail: {e}"));
            }
            return Ok(kind);
        }
    };

    let Ok(inspected) = inspected else {
        return Err("open succeeded where inspect failed".into());
    };
    if (&inspected.records, &inspected.truncation, inspected.format_version, inspected.new_header)
        != (&recovery.records, &recovery.truncation, recovery.format_version, recovery.new_header)
    {
        return Err(format!("inspect and open disagree: {inspected:?} vs {recovery:?}"));
    }
    for (i, r) in recovery.records.iter().enumerate() {
        if r.seq != i as u64 + 1 {
            return Err(format!("seq {} at index {i}", r.seq));
        }
    }
    if !recovery.records.windows(2).all(|w| w[0].system_time < w[1].system_time) {
        return Err("times do not increase".into());
    }
    match &recovery.truncation {
        _ if recovery.new_header => {
            if after.get(..8) != Some(b"MNEMOLOG".as_slice()) || after.len() != V2_HEADER_LEN {
                return Err("a new header was not written alone".into());
            }
        }
        Some(cut) => {
            if cut.file_len_before != bytes.len() as u64
                || cut.offset + cut.bytes != cut.file_len_before
                || after != bytes[..cut.offset as usize]
            {
                return Err(format!("file after open is not the prefix named by {cut:?}"));
            }
        }
        None => {
            if after != bytes {
                return Err("a clean open changed the file".into());
            }
        }
    }
    let (_, again) = Log::open(storage.open(NAME).unwrap(), NAME, Arc::new(|| 0))
        .map_err(|e| format!("reopen after recovery failed: {e}"))?;
    if again.records != recovery.records || again.truncation.is_some() || again.new_header {
        return Err("reopen after recovery is not clean and identical".into());
    }

    if let Some((o, tail_from)) = original {
        if !o.records.starts_with(&recovery.records) {
            return Err(format!(
                "records are not a prefix of those written ({} recovered, {} written)",
                recovery.records.len(),
                o.records.len()
            ));
        }
        // No silent loss (I5): a frame still intact at its place is never cut, since recovery
        // must see it and refuse to explain the damage before it as a torn tail.
        let mut start = o.header_len;
        for (i, &end) in o.frame_ends.iter().enumerate() {
            if bytes.get(start..end) == Some(&o.bytes[start..end]) && recovery.records.len() <= i {
                return Err(format!(
                    "frame {i} ({start}..{end}) is intact but was not recovered ({} records)",
                    recovery.records.len()
                ));
            }
            start = end;
        }
        if let Some(from) = tail_from {
            let whole_before = o.frame_ends.iter().filter(|&&end| end <= from).count();
            if recovery.records.len() < whole_before {
                return Err(format!(
                    "tail damage from {from} lost frames before it ({} recovered, {whole_before} whole)",
                    recovery.records.len()
                ));
            }
        }
    }
    Ok(kind)
}
