//! A namespace's search vectors saved beside its text indexes
//! (`<data>/search/<namespace>/vectors`), so that reopening it does not embed every text
//! again (or read every one back from the embedding cache) before search answers.
//!
//! Derived like every index: the file says which batches its vectors hold (the same
//! [`Stamp`] as the text indexes' commits), and one that is missing, damaged, of another
//! format, of another log, of another embedding mode or model, or not at the text indexes'
//! batch is ignored and the vectors are rebuilt. It is written whole to a temporary file,
//! synced and renamed, so a crash leaves the old file or the new one.
//!
//! ```text
//! magic    8 bytes  "MNEMOVEC"
//! version  u32      2
//! stamp    u64 seq, i64 time, i64 first   (µs; see Stamp)
//! mode     u8       1 built-in, 2 client
//! dim      u32
//! model    u16 length, UTF-8   (the built-in embedder's model id; empty for client vectors)
//! twice (alone, then with context):
//!   count  u64
//!   count × (key u64, dim × f32)
//! crc      u32      CRC-32 of every byte before it
//! ```
//!
//! All integers and floats little-endian.

use std::io::Write as _;
use std::path::Path;

use ostrakon_core::{EmbeddingMode, Seq, Timestamp};
use ostrakon_index::NamespaceIndex;
use ostrakon_search::{HnswConfig, VectorIndex};

const MAGIC: &[u8; 8] = b"MNEMOVEC";
const VERSION: u32 = 2;
/// magic, version, stamp, mode, dim.
const HEADER_LEN: usize = 8 + 4 + 24 + 1 + 4;

/// Vectors read back from disk.
pub(crate) struct Saved {
    pub(crate) stamp: Stamp,
    pub(crate) mode: EmbeddingMode,
    /// The model that made them (empty for client vectors).
    pub(crate) model: String,
    pub(crate) alone: VectorIndex,
    pub(crate) context: VectorIndex,
}

fn mode_tag(mode: EmbeddingMode) -> Option<u8> {
    match mode {
        EmbeddingMode::Builtin => Some(1),
        EmbeddingMode::Client { .. } => Some(2),
        EmbeddingMode::Model(ostrakon_core::BuiltinModel::E5) => Some(3),
        EmbeddingMode::Model(ostrakon_core::BuiltinModel::MiniLm) => Some(4),
        EmbeddingMode::Off => None,
    }
}

/// Writes the vectors of `mode` holding the batches of `stamp` to `path`, replacing
/// what is there. Nothing is written for [`EmbeddingMode::Off`].
pub(crate) fn save(
    path: &Path,
    stamp: Stamp,
    mode: EmbeddingMode,
    model: &str,
    alone: &VectorIndex,
    context: &VectorIndex,
) -> std::io::Result<()> {
    if mode_tag(mode).is_none() {
        return Ok(());
    }
    ostrakon_log::replace_file(path, |file| {
        let mut out = std::io::BufWriter::with_capacity(1 << 20, &mut *file);
        write_to(&mut out, stamp, mode, model, alone, context)?;
        out.flush()
    })
}

/// The bytes [`save`] writes, for a store that shares them through its log backend;
/// `None` for [`EmbeddingMode::Off`].
pub(crate) fn encode(
    stamp: Stamp,
    mode: EmbeddingMode,
    model: &str,
    alone: &VectorIndex,
    context: &VectorIndex,
) -> std::io::Result<Option<Vec<u8>>> {
    if mode_tag(mode).is_none() {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    write_to(&mut bytes, stamp, mode, model, alone, context)?;
    Ok(Some(bytes))
}

fn write_to(
    out: &mut impl std::io::Write,
    stamp: Stamp,
    mode: EmbeddingMode,
    model: &str,
    alone: &VectorIndex,
    context: &VectorIndex,
) -> std::io::Result<()> {
    let Some(tag) = mode_tag(mode) else { return Ok(()) };
    let dim = u32::try_from(alone.dim()).map_err(std::io::Error::other)?;
    let mut out = Crc { inner: out, crc: crc32fast::Hasher::new() };
    out.write_all(MAGIC)?;
    out.write_all(&VERSION.to_le_bytes())?;
    out.write_all(&stamp.seq.to_le_bytes())?;
    out.write_all(&stamp.time.to_le_bytes())?;
    out.write_all(&stamp.first.to_le_bytes())?;
    out.write_all(&[tag])?;
    out.write_all(&dim.to_le_bytes())?;
    let model_len = u16::try_from(model.len()).map_err(std::io::Error::other)?;
    out.write_all(&model_len.to_le_bytes())?;
    out.write_all(model.as_bytes())?;
    for index in [alone, context] {
        index.live_vectors(|count, vectors| -> std::io::Result<()> {
            out.write_all(&(count as u64).to_le_bytes())?;
            for (key, v) in vectors {
                out.write_all(&key.to_le_bytes())?;
                for x in v {
                    out.write_all(&x.to_le_bytes())?;
                }
            }
            Ok(())
        })?;
    }
    let crc = out.crc.finalize();
    out.inner.write_all(&crc.to_le_bytes())
}

/// The vectors saved at `path`, `Ok(None)` if there is no file, or why it cannot be used.
pub(crate) fn load(path: &Path, config: HnswConfig) -> Result<Option<Saved>, String> {
    match std::fs::read(path) {
        Ok(bytes) => decode(&bytes, config).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// The vectors `bytes` hold (as [`save`] writes them), or why they cannot be used.
pub(crate) fn decode(bytes: &[u8], config: HnswConfig) -> Result<Saved, String> {
    let Some(body_len) = bytes.len().checked_sub(4).filter(|n| *n >= HEADER_LEN) else {
        return Err("too short".into());
    };
    let (body, crc) = bytes.split_at(body_len);
    if crc32fast::hash(body) != u32::from_le_bytes([crc[0], crc[1], crc[2], crc[3]]) {
        return Err("checksum mismatch".into());
    }
    let mut r = Reader { bytes: body };
    if r.take(8)? != MAGIC {
        return Err("not a vector file".into());
    }
    let version = r.u32()?;
    if version != VERSION {
        return Err(format!("format {version}, this build reads {VERSION}"));
    }
    let stamp = Stamp { seq: r.u64()?, time: r.u64()? as i64, first: r.u64()? as i64 };
    let tag = r.take(1)?[0];
    let dim = r.u32()?;
    let mode = match tag {
        1 => EmbeddingMode::Builtin,
        2 => EmbeddingMode::Client { dim },
        3 => EmbeddingMode::Model(ostrakon_core::BuiltinModel::E5),
        4 => EmbeddingMode::Model(ostrakon_core::BuiltinModel::MiniLm),
        _ => return Err(format!("unknown embedding mode {tag}")),
    };
    let model_len = r.take(2)?;
    let model_len = usize::from(u16::from_le_bytes([model_len[0], model_len[1]]));
    let model = String::from_utf8(r.take(model_len)?.to_vec()).map_err(|_| "a model id that is not UTF-8")?;
    let dim = dim as usize;
    let mut index = || -> Result<VectorIndex, String> {
        let count = usize::try_from(r.u64()?).map_err(|e| e.to_string())?;
        let record = 8 + dim * 4;
        if count.checked_mul(record).is_none_or(|n| n > r.bytes.len()) {
            return Err("shorter than its count says".into());
        }
        let (mut keys, mut data) = (Vec::with_capacity(count), Vec::with_capacity(count * dim));
        for _ in 0..count {
            keys.push(r.u64()?);
            let v = r.take(dim * 4)?;
            data.extend(v.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])));
        }
        VectorIndex::from_vectors(dim, config, keys, data).map_err(|e| e.to_string())
    };
    let alone = index()?;
    let context = index()?;
    if !r.bytes.is_empty() {
        return Err("bytes after the vectors".into());
    }
    Ok(Saved { stamp, mode, model, alone, context })
}

/// The batch the file at `path` says its vectors hold, from its header alone (for
/// `ostrakon inspect`; loading checks the whole file).
pub(crate) fn header_batch(path: &Path) -> Option<u64> {
    use std::io::Read as _;
    let mut head = [0u8; HEADER_LEN];
    std::fs::File::open(path).ok()?.read_exact(&mut head).ok()?;
    let mut r = Reader { bytes: &head };
    (r.take(8).ok()? == MAGIC && r.u32().ok()? == VERSION).then_some(())?;
    r.u64().ok()
}

/// A writer that checksums what goes through it.
struct Crc<W> {
    pub(crate) inner: W,
    pub(crate) crc: crc32fast::Hasher,
}

impl<W: std::io::Write> std::io::Write for Crc<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

struct Reader<'a> {
    pub(crate) bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if n > self.bytes.len() {
            return Err("cut short".into());
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    pub(crate) fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(crate) fn u64(&mut self) -> Result<u64, String> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
}

/// What a persistent text index holds: every document of batches up to `seq`, of the
/// log whose batch `seq` and first batch have these system times. It is the payload of
/// each of its commits, and is checked against the log when the namespace opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub(crate) seq: u64,
    pub(crate) time: i64,
    pub(crate) first: i64,
}

/// What a text index's commit payload starts with: its format. The second writes a string
/// fact's value as it is (the first indexed its escaped form, `"a\\nb"`); the third takes
/// Korean particles off words; the fourth tags the days Korean and Spanish texts speak of
/// and reads a speaker's name in a script without case ("사용자:"), which makes an
/// exchange; an index of another format is not trusted, so it is built again from the log.
pub(crate) const TEXT_STAMP: &str = "ostrakon-text-4";

impl Stamp {
    pub(crate) fn of(index: &NamespaceIndex, seq: Seq) -> Stamp {
        let time = |s: Seq| index.system_time(s).map_or(i64::MIN, Timestamp::as_micros);
        Stamp { seq: seq.0, time: time(seq), first: time(Seq(1)) }
    }

    pub(crate) fn encode(self) -> String {
        format!("{TEXT_STAMP} {} {} {}", self.seq, self.time, self.first)
    }

    pub(crate) fn decode(payload: &str) -> Option<Stamp> {
        let mut parts = payload.split(' ');
        if parts.next()? != TEXT_STAMP {
            return None;
        }
        let mut n = || parts.next().and_then(|p| p.parse::<i64>().ok());
        let (seq, time, first) = (u64::try_from(n()?).ok()?, n()?, n()?);
        Some(Stamp { seq, time, first })
    }

    /// Whether it stands for the first batches of the log folded into `index` (whose
    /// batch times are the log's).
    pub(crate) fn fits(self, index: &NamespaceIndex) -> bool {
        self == Stamp::of(index, Seq(self.seq)) && Seq(self.seq) <= index.last_seq()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn index(dim: usize, n: u64) -> VectorIndex {
        let ix = VectorIndex::new(dim, HnswConfig::default());
        let items: Vec<(u64, Vec<f32>)> = (0..n)
            .map(|k| (k * 4 + 1, (0..dim).map(|i| ((k as usize * 7 + i) % 5) as f32 + 0.5).collect()))
            .collect();
        ix.upsert(&items).unwrap();
        ix
    }

    fn vectors(ix: &VectorIndex) -> Vec<(u64, Vec<f32>)> {
        ix.live_vectors(|_, it| it.map(|(k, v)| (k, v.to_vec())).collect())
    }

    #[test]
    fn saved_vectors_load_back_and_damage_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors");
        assert!(load(&path, HnswConfig::default()).unwrap().is_none());
        let stamp = Stamp { seq: 42, time: 1_700_000_000_000_000, first: 1_600_000_000_000_000 };
        let (alone, context) = (index(8, 30), index(8, 3));
        save(&path, stamp, EmbeddingMode::Builtin, "some/model-1", &alone, &context).unwrap();
        let back = load(&path, HnswConfig::default()).unwrap().unwrap();
        assert_eq!(back.stamp, stamp);
        assert_eq!((back.mode, back.model.as_str()), (EmbeddingMode::Builtin, "some/model-1"));
        assert_eq!(vectors(&back.alone), vectors(&alone));
        assert_eq!(vectors(&back.context), vectors(&context));
        let good = std::fs::read(&path).unwrap();
        for at in [0, 9, HEADER_LEN + 3, good.len() / 2, good.len() - 1] {
            let mut bad = good.clone();
            bad[at] ^= 0x40;
            std::fs::write(&path, &bad).unwrap();
            assert!(load(&path, HnswConfig::default()).is_err(), "a flipped byte at {at}");
        }
        std::fs::write(&path, &good[..good.len() - 9]).unwrap();
        assert!(load(&path, HnswConfig::default()).is_err(), "cut short");
        std::fs::remove_file(&path).unwrap();
        save(&path, stamp, EmbeddingMode::Off, "", &alone, &context).unwrap();
        assert!(load(&path, HnswConfig::default()).unwrap().is_none(), "nothing is written for Off");
    }
}
