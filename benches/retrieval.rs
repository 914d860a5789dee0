//! Retrieval benchmarks, printed as tables (no criterion, no assertions):
//!
//! - `vectors`: exact scan against HNSW over clustered random 384-d unit vectors: HNSW build
//!   time, query latency of both, HNSW recall@10, and the size from which HNSW is twice as fast;
//! - `search`: the whole `Reader::search` (full text + vector) over a client-vector namespace:
//!   ingest time, time until indexed, and query latency;
//! - `embed`: MiniLM throughput on short and long texts, and the latency of one query;
//! - `restart`: a store with the built-in embedder and its embedding cache: time until
//!   searchable when created, when reopened, and when reopened without its cache.
//!
//! Run with `cargo bench --bench retrieval` (every part), or name parts:
//! `cargo bench --bench retrieval -- vectors embed`. Sizes can be overridden with
//! `OSTRAKON_BENCH_VECTOR_SIZES` and `OSTRAKON_BENCH_SEARCH_SIZES` (comma-separated counts, e.g.
//! `10000,100000`). Under `cargo test` every part runs at a token size.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ostrakon_embed::{
    CachedEmbedder, EmbedError, Embedder, EmbeddingCache, MiniLm, default_model_cache, locate_or_fetch,
};
use ostrakon_engine::core::{EmbeddingMode, Namespace, Timestamp};
use ostrakon_engine::{
    Change, NewEpisode, ReadAt, ReadError, SearchQuery, Store, StoreOptions, change::EpisodeRef,
    log::MemStorage, log::system_clock, search::EmbedderSource, search::HnswConfig,
};
use ostrakon_search::VectorIndex;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Vector length throughout (that of all-MiniLM-L6-v2).
const DIM: usize = 384;
/// Clusters the random vectors are drawn around (`OSTRAKON_BENCH_CLUSTERS`; 0: no clusters).
const CLUSTERS: usize = 256;
/// Spread of a vector around its cluster's centre (per component, centres span [-1, 1]).
const SPREAD: f32 = 0.8;
/// Hits asked for.
const TOP: usize = 10;
/// Timed queries per measurement.
const QUERIES: usize = 200;
/// Untimed queries before each measurement.
const WARM_UP: usize = 10;
/// Vectors added per `upsert` while loading an index, episodes per `append` in `search`.
const LOAD_BATCH: usize = 10_000;
/// Above this size the HNSW graph is not built (it would take too long).
const HNSW_MAX: usize = 100_000;
/// `search` stops ingesting once this much time went by.
const INGEST_BUDGET: Duration = Duration::from_secs(240);
/// `search` waits at most this long for the indexes to catch up, then measures anyway.
const INDEX_BUDGET: Duration = Duration::from_secs(240);
/// Episodes per thread (conversation) in `search` and `restart`.
const THREAD_LEN: usize = 20;
/// 2024-01-01T00:00:00Z in microseconds.
const T0: i64 = 1_704_067_200_000_000;
/// A minute in microseconds.
const MINUTE: i64 = 60_000_000;

/// Whether `cargo bench` runs this (rather than `cargo test`, which only smoke-tests it).
fn bench_mode() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn sizes(var: &str, default: &[usize]) -> Vec<usize> {
    match std::env::var(var) {
        Ok(v) if !v.trim().is_empty() => {
            v.split(',').map(|s| s.trim().replace('_', "").parse().expect("a count")).collect()
        }
        _ => default.to_vec(),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let all = ["vectors", "search", "embed", "restart"];
    for a in &args {
        if !all.contains(&a.as_str()) {
            panic!("unknown part {a:?}: expected some of {all:?}");
        }
    }
    let wanted = |part: &str| args.is_empty() || args.iter().any(|a| a == part);
    let bench = bench_mode();
    let started = Instant::now();
    if wanted("vectors") {
        let default: &[usize] = if bench {
            &[1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 1_000_000]
        } else {
            &[500, 1_000]
        };
        vectors(&sizes("OSTRAKON_BENCH_VECTOR_SIZES", default), if bench { QUERIES } else { 10 });
    }
    if wanted("search") {
        let default: &[usize] = if bench { &[10_000, 100_000, 1_000_000] } else { &[1_000] };
        search(&sizes("OSTRAKON_BENCH_SEARCH_SIZES", default), if bench { QUERIES } else { 10 });
    }
    if wanted("embed") {
        if bench { embed(1_000, 200, 100) } else { embed(32, 4, 2) }
    }
    if wanted("restart") {
        restart(if bench { 2_000 } else { 40 });
    }
    println!("\ntotal {:.1} s", started.elapsed().as_secs_f64());
}

// ---------------------------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------------------------

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The `p`-th percentile (0–100) of sorted durations, nearest rank.
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

struct Latency {
    p50: Duration,
    p99: Duration,
}

/// Runs `f` on each input (the first `WARM_UP` untimed, cycling), returns the latencies.
fn time_each<T, R>(inputs: &[T], n: usize, mut f: impl FnMut(&T) -> R) -> Latency {
    for q in inputs.iter().cycle().take(WARM_UP.min(n)) {
        black_box(f(q));
    }
    let mut times: Vec<Duration> = inputs
        .iter()
        .cycle()
        .take(n)
        .map(|q| {
            let t = Instant::now();
            black_box(f(q));
            t.elapsed()
        })
        .collect();
    times.sort();
    Latency { p50: percentile(&times, 50.0), p99: percentile(&times, 99.0) }
}

/// Clustered random vectors: a point is its cluster's centre plus uniform noise (not
/// normalised; the index normalises).
struct VectorGen {
    rng: StdRng,
    centres: Vec<Vec<f32>>,
}

fn clusters() -> usize {
    std::env::var("OSTRAKON_BENCH_CLUSTERS").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(CLUSTERS)
}

impl VectorGen {
    fn new(seed: u64) -> Self {
        let mut rng = StdRng::seed_from_u64(seed);
        let centres =
            (0..clusters()).map(|_| (0..DIM).map(|_| rng.random_range(-1.0f32..1.0)).collect()).collect();
        VectorGen { rng, centres }
    }

    fn next(&mut self) -> Vec<f32> {
        if self.centres.is_empty() {
            return (0..DIM).map(|_| self.rng.random_range(-1.0f32..1.0)).collect();
        }
        let c = &self.centres[self.rng.random_range(0..self.centres.len())];
        c.iter().map(|x| x + self.rng.random_range(-SPREAD..SPREAD)).collect()
    }
}

/// A synthetic vocabulary drawn by a Zipf-like law (weight 1/rank), so that some terms are
/// in a large share of texts and most in few.
struct Words {
    words: Vec<String>,
    /// Cumulative weights.
    cumulative: Vec<f64>,
}

impl Words {
    fn new(n: usize) -> Self {
        const ONSETS: [&str; 16] =
            ["b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "st"];
        const VOWELS: [&str; 5] = ["a", "e", "i", "o", "u"];
        let syllable = |i: usize| format!("{}{}", ONSETS[i % 16], VOWELS[(i / 16) % 5]);
        let words: Vec<String> = (0..n)
            .map(|i| {
                // Two or three syllables, distinct for every i below 80^3.
                let (a, b, c) = (i % 80, (i / 80) % 80, i / 6400);
                let mut w = syllable(a) + &syllable(b + 7);
                if c > 0 || i % 3 == 0 {
                    w += &syllable(c + 31);
                }
                w + "n"
            })
            .collect();
        let mut total = 0.0;
        let cumulative = (0..n)
            .map(|r| {
                total += 1.0 / (r + 1) as f64;
                total
            })
            .collect();
        Words { words, cumulative }
    }

    fn pick(&self, rng: &mut StdRng) -> &str {
        let x = rng.random_range(0.0..*self.cumulative.last().unwrap());
        let i = self.cumulative.partition_point(|&c| c <= x).min(self.words.len() - 1);
        &self.words[i]
    }

    fn text(&self, rng: &mut StdRng, n: usize) -> String {
        (0..n).map(|_| self.pick(rng)).collect::<Vec<_>>().join(" ")
    }
}

/// Common English words, for texts a real tokenizer and model see as language.
const ENGLISH: &[&str] = &[
    "the",
    "a",
    "and",
    "of",
    "to",
    "in",
    "is",
    "it",
    "that",
    "was",
    "for",
    "on",
    "with",
    "as",
    "at",
    "by",
    "from",
    "this",
    "but",
    "not",
    "we",
    "they",
    "she",
    "he",
    "you",
    "I",
    "my",
    "our",
    "their",
    "her",
    "his",
    "meeting",
    "project",
    "deadline",
    "coffee",
    "train",
    "Paris",
    "Berlin",
    "Alice",
    "Bob",
    "manager",
    "team",
    "weekend",
    "hiking",
    "birthday",
    "dinner",
    "restaurant",
    "flight",
    "hotel",
    "doctor",
    "appointment",
    "garden",
    "book",
    "movie",
    "music",
    "guitar",
    "piano",
    "dog",
    "cat",
    "sister",
    "brother",
    "mother",
    "father",
    "friend",
    "colleague",
    "office",
    "remote",
    "salary",
    "budget",
    "report",
    "launch",
    "customer",
    "feedback",
    "bug",
    "release",
    "database",
    "server",
    "prefers",
    "likes",
    "hates",
    "moved",
    "started",
    "finished",
    "forgot",
    "remembered",
    "asked",
    "told",
    "said",
    "wants",
    "needs",
    "booked",
    "cancelled",
    "visited",
    "called",
    "emailed",
    "bought",
    "sold",
    "tea",
    "running",
    "marathon",
    "yoga",
    "vegetarian",
    "allergic",
    "peanuts",
    "spicy",
    "food",
    "morning",
    "evening",
    "yesterday",
    "tomorrow",
    "Monday",
    "Friday",
    "March",
    "July",
    "summer",
    "winter",
    "holiday",
    "beach",
    "mountains",
    "city",
    "apartment",
    "rent",
    "car",
    "bike",
    "bus",
    "early",
    "late",
    "new",
    "old",
    "big",
    "small",
    "favourite",
    "usual",
    "quickly",
    "again",
    "never",
    "always",
    "often",
    "because",
    "after",
    "before",
    "during",
    "about",
    "next",
    "last",
    "week",
    "month",
];

fn english(rng: &mut StdRng, words: usize) -> String {
    let mut s: String =
        (0..words).map(|_| ENGLISH[rng.random_range(0..ENGLISH.len())]).collect::<Vec<_>>().join(" ");
    s.push('.');
    s
}

fn rule(width: usize) {
    println!("{}", "-".repeat(width));
}

// ---------------------------------------------------------------------------------------------
// vectors: exact scan against HNSW
// ---------------------------------------------------------------------------------------------

struct VectorRow {
    n: usize,
    load: Duration,
    exact: Latency,
    /// Build time, latency, recall@10.
    hnsw: Option<(Duration, Latency, f64)>,
}

fn vectors(sizes: &[usize], queries: usize) {
    let config = HnswConfig { threshold: usize::MAX, ..HnswConfig::default() };
    println!(
        "\n== vectors: exact scan vs HNSW (dim {DIM}, {} clusters, top {TOP}, {queries} queries; \
         HNSW M={}, ef_construction={}, ef_search={}) ==",
        clusters(),
        config.connections,
        config.ef_construction,
        config.ef_search
    );
    let header = format!(
        "{:>9} | {:>7} | {:>10} {:>10} | {:>8} | {:>10} {:>10} | {:>9} | {:>8}",
        "n", "load s", "exact p50", "exact p99", "build s", "hnsw p50", "hnsw p99", "recall@10", "speed-up"
    );
    println!(
        "{header}\n{:>9} | {:>7} | {:>10} {:>10} | {:>8} | {:>10} {:>10} | {:>9} | {:>8}",
        "", "", "ms", "ms", "", "ms", "ms", "", "p50 ×"
    );
    rule(header.len());
    let mut rows = Vec::new();
    for &n in sizes {
        let row = vector_row(n, queries, config);
        let (build, hp50, hp99, recall, speed) = match &row.hnsw {
            Some((b, l, r)) => (
                format!("{:.2}", b.as_secs_f64()),
                format!("{:.3}", ms(l.p50)),
                format!("{:.3}", ms(l.p99)),
                format!("{r:.3}"),
                format!("{:.1}", row.exact.p50.as_secs_f64() / l.p50.as_secs_f64()),
            ),
            None => ("-".into(), "-".into(), "-".into(), "-".into(), "-".into()),
        };
        println!(
            "{:>9} | {:>7.2} | {:>10.3} {:>10.3} | {build:>8} | {hp50:>10} {hp99:>10} | {recall:>9} | {speed:>8}",
            n,
            row.load.as_secs_f64(),
            ms(row.exact.p50),
            ms(row.exact.p99),
        );
        rows.push(row);
    }
    // Where HNSW's median first beats the exact scan's by 2×.
    let ratio =
        |r: &VectorRow| r.hnsw.as_ref().map(|(_, l, _)| r.exact.p50.as_secs_f64() / l.p50.as_secs_f64());
    let measured: Vec<(usize, f64)> = rows.iter().filter_map(|r| ratio(r).map(|x| (r.n, x))).collect();
    match measured.iter().position(|&(_, x)| x >= 2.0) {
        None => println!("HNSW p50 is never 2× faster than the exact scan at the sizes measured"),
        Some(0) => println!(
            "HNSW p50 is ≥ 2× faster than the exact scan from the smallest size measured ({})",
            measured[0].0
        ),
        Some(i) => {
            let ((n0, x0), (n1, x1)) = (measured[i - 1], measured[i]);
            // Log-linear interpolation of the ratio in n.
            let f = (2.0 - x0) / (x1 - x0);
            let est = ((n0 as f64).ln() + f * ((n1 as f64).ln() - (n0 as f64).ln())).exp();
            println!(
                "crossover (HNSW p50 ≥ 2× faster than exact): between n = {n0} ({x0:.1}×) and n = {n1} ({x1:.1}×), \
                 ≈ {:.0} by log interpolation",
                est
            );
        }
    }
}

fn vector_row(n: usize, queries: usize, config: HnswConfig) -> VectorRow {
    let mut vgen = VectorGen::new(42);
    let index = VectorIndex::new(DIM, config);
    let mut load = Duration::ZERO;
    let mut key = 0u64;
    while (key as usize) < n {
        let m = LOAD_BATCH.min(n - key as usize);
        let items: Vec<(u64, Vec<f32>)> = (0..m)
            .map(|_| {
                key += 1;
                (key, vgen.next())
            })
            .collect();
        let t = Instant::now();
        index.upsert(&items).unwrap();
        load += t.elapsed();
    }
    assert_eq!(index.len(), n);
    let qs: Vec<Vec<f32>> = (0..queries).map(|_| vgen.next()).collect();
    let exact_hits: Vec<Vec<u64>> = qs
        .iter()
        .map(|q| index.search_exact(q, TOP, &|_| true).unwrap().iter().map(|h| h.0).collect())
        .collect();
    let exact = time_each(&qs, queries, |q| index.search_exact(q, TOP, &|_| true).unwrap());
    let hnsw = (n <= HNSW_MAX).then(|| {
        let t = Instant::now();
        index.build_hnsw();
        let build = t.elapsed();
        let latency = time_each(&qs, queries, |q| index.search_hnsw(q, TOP, &|_| true).unwrap());
        let mut found = 0usize;
        let mut wanted = 0usize;
        for (q, exact) in qs.iter().zip(&exact_hits) {
            let approx = index.search_hnsw(q, TOP, &|_| true).unwrap();
            found += approx.iter().filter(|h| exact.contains(&h.0)).count();
            wanted += exact.len();
        }
        (build, latency, found as f64 / wanted.max(1) as f64)
    });
    VectorRow { n, load, exact, hnsw }
}

// ---------------------------------------------------------------------------------------------
// search: the whole Reader::search over a client-vector namespace
// ---------------------------------------------------------------------------------------------

fn bench_ns() -> Namespace {
    Namespace::new("namespace", "bench").unwrap()
}

/// Searches until the indexes hold everything appended (each try waits up to the store's
/// own limit).
fn search_waiting(store: &Store, ns: &Namespace, query: &SearchQuery) {
    loop {
        match store.at(ns, ReadAt::latest()).and_then(|r| r.search(query)) {
            Ok(_) => return,
            Err(ReadError::IndexBehind { .. }) => continue,
            Err(e) => panic!("search failed: {e}"),
        }
    }
}

/// Polls (searching without waiting) until the indexes hold every batch, or `budget` went
/// by; returns whether they caught up, and the last batch indexed and visible.
fn poll_indexed(store: &Store, ns: &Namespace, query: &SearchQuery, budget: Duration) -> (bool, u64, u64) {
    let query = SearchQuery { wait_for_index: false, ..query.clone() };
    let started = Instant::now();
    loop {
        let answer = store.at(ns, ReadAt::latest()).and_then(|r| r.search(&query)).unwrap();
        let (indexed, known) = (answer.value.indexed_seq.0, answer.basis.known_at.0);
        if indexed >= known || started.elapsed() > budget {
            return (indexed >= known, indexed, known);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn search(sizes: &[usize], queries: usize) {
    let hnsw = HnswConfig::default();
    println!(
        "\n== search: Reader::search, text + vector, limit {TOP}, {queries} queries (in-memory store, client \
         vectors dim {DIM}, 12-word texts over a 5,000-word Zipf vocabulary; HNSW from {} vectors) ==",
        hnsw.threshold
    );
    let header = format!(
        "{:>9} | {:>8} | {:>9} | {:>9} | {:>8} {:>8} | {:>8} {:>8} | {:>8} {:>8} | {:>6}",
        "episodes",
        "ingest s",
        "episode/s",
        "indexed s",
        "both p50",
        "both p99",
        "text p50",
        "text p99",
        "vec p50",
        "vec p99",
        "hits"
    );
    println!("{header}");
    println!(
        "{:>9} | {:>8} | {:>9} | {:>9} | {:>8} {:>8} | {:>8} {:>8} | {:>8} {:>8} | {:>6}",
        "", "", "", "(after)", "ms", "ms", "ms", "ms", "ms", "ms", "mean"
    );
    rule(header.len());
    for &n in sizes {
        search_row(n, queries);
    }
    println!(
        "ingest s: time in Store::append, batches of {LOAD_BATCH} episodes each with its vector; indexed s: \
         from the last append until a search sees every batch; text/vec: the same queries with only text \
         or only the vector; + after indexed s: still behind when measured."
    );
}

fn search_row(n: usize, queries: usize) {
    let store =
        Store::with_storage_and_options(Arc::new(MemStorage::new()), system_clock(), StoreOptions::default())
            .unwrap();
    let ns = bench_ns();
    store.append(&ns, vec![Change::ConfigureEmbedding(EmbeddingMode::Client { dim: DIM as u32 })]).unwrap();
    let words = Words::new(5_000);
    let mut rng = StdRng::seed_from_u64(7);
    let mut vgen = VectorGen::new(42);
    let started = Instant::now();
    let mut ingest = Duration::ZERO;
    let mut done = 0usize;
    while done < n {
        if started.elapsed() > INGEST_BUDGET {
            println!(
                "(ingest stopped after {:.0} s at {done} of {n} episodes)",
                started.elapsed().as_secs_f64()
            );
            break;
        }
        let m = LOAD_BATCH.min(n - done);
        let mut changes = Vec::with_capacity(2 * m);
        for j in 0..m {
            let i = done + j;
            changes.push(Change::RecordEpisode(NewEpisode {
                text: words.text(&mut rng, 12),
                occurred_at: Timestamp::from_micros(T0 + i as i64 * MINUTE),
                thread: Some(format!("thread-{}", i / THREAD_LEN)),
                ..NewEpisode::default()
            }));
            changes.push(Change::Embed { episode: EpisodeRef::New(2 * j), vector: vgen.next() });
        }
        let t = Instant::now();
        store.append(&ns, changes).unwrap();
        ingest += t.elapsed();
        done += m;
    }
    let qs: Vec<(String, Vec<f32>)> = (0..queries).map(|_| (words.text(&mut rng, 4), vgen.next())).collect();
    let t = Instant::now();
    let probe = SearchQuery { text: Some(qs[0].0.clone()), limit: TOP, ..SearchQuery::default() };
    let (caught_up, indexed_seq, known_seq) = poll_indexed(&store, &ns, &probe, INDEX_BUDGET);
    let indexed = t.elapsed();
    if !caught_up {
        println!(
            "(indexes still behind after {:.0} s: batch {indexed_seq} of {known_seq}; searching what is indexed)",
            indexed.as_secs_f64()
        );
    }
    let run = |text: bool, vector: bool| {
        let mut hits = 0usize;
        let latency = time_each(&qs, queries, |(t, v)| {
            let q = SearchQuery {
                text: text.then(|| t.clone()),
                vector: vector.then(|| v.clone()),
                limit: TOP,
                wait_for_index: caught_up,
                ..SearchQuery::default()
            };
            let answer = store.at(&ns, ReadAt::latest()).and_then(|r| r.search(&q)).unwrap();
            hits += answer.value.hits.len();
            answer
        });
        (latency, hits as f64 / (queries + WARM_UP.min(queries)) as f64)
    };
    let (both, hits) = run(true, true);
    let (text, _) = run(true, false);
    let (vector, _) = run(false, true);
    println!(
        "{:>9} | {:>8.1} | {:>9.0} | {:>8.1}{} | {:>8.2} {:>8.2} | {:>8.2} {:>8.2} | {:>8.2} {:>8.2} | {:>6.1}",
        done,
        ingest.as_secs_f64(),
        done as f64 / ingest.as_secs_f64(),
        indexed.as_secs_f64(),
        if caught_up { " " } else { "+" },
        ms(both.p50),
        ms(both.p99),
        ms(text.p50),
        ms(text.p99),
        ms(vector.p50),
        ms(vector.p99),
        hits
    );
}

// ---------------------------------------------------------------------------------------------
// embed: MiniLM throughput
// ---------------------------------------------------------------------------------------------

fn model_dir() -> std::path::PathBuf {
    locate_or_fetch(&default_model_cache(), &|line| eprintln!("{line}")).expect("the MiniLM model")
}

fn embed(short: usize, long: usize, singles: usize) {
    println!("\n== embed: all-MiniLM-L6-v2 on the CPU (one inference thread), batches of 32 ==");
    let dir = model_dir();
    let t = Instant::now();
    let model = MiniLm::load(&dir).unwrap();
    let load = t.elapsed();
    let mut rng = StdRng::seed_from_u64(3);
    let short_texts: Vec<String> = (0..short).map(|_| english(&mut rng, 12)).collect();
    let long_texts: Vec<String> = (0..long).map(|_| english(&mut rng, 150)).collect();
    // Warm up (first calls allocate).
    let warm: Vec<&str> = short_texts.iter().take(32).map(String::as_str).collect();
    model.embed(&warm).unwrap();
    let throughput = |texts: &[String]| {
        let t = Instant::now();
        for chunk in texts.chunks(32) {
            let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
            black_box(model.embed(&refs).unwrap());
        }
        let d = t.elapsed();
        (d, texts.len() as f64 / d.as_secs_f64())
    };
    let (short_time, short_rate) = throughput(&short_texts);
    let (long_time, long_rate) = throughput(&long_texts);
    let single = time_each(&short_texts, singles, |s| model.embed(&[s.as_str()]).unwrap());
    let header = format!("{:<36} | {:>7} | {:>8} | {:>10}", "workload", "texts", "total s", "texts/s");
    println!("model load {:.2} s", load.as_secs_f64());
    println!("{header}");
    rule(header.len());
    println!(
        "{:<36} | {:>7} | {:>8.2} | {:>10.1}",
        "short (12 words), batches of 32",
        short,
        short_time.as_secs_f64(),
        short_rate
    );
    println!(
        "{:<36} | {:>7} | {:>8.2} | {:>10.1}",
        "long (150 words), batches of 32",
        long,
        long_time.as_secs_f64(),
        long_rate
    );
    println!(
        "one short text per call (a query): p50 {:.2} ms, p99 {:.2} ms over {singles} calls",
        ms(single.p50),
        ms(single.p99)
    );
}

// ---------------------------------------------------------------------------------------------
// restart: time until searchable with the built-in embedder and its cache
// ---------------------------------------------------------------------------------------------

/// Counts the texts that reach the model (behind the cache).
struct Counting {
    inner: MiniLm,
    texts: Arc<AtomicUsize>,
}

impl Embedder for Counting {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.texts.fetch_add(texts.len(), Ordering::Relaxed);
        self.inner.embed(texts)
    }
}

/// What the embedder source did: texts embedded by the model, time spent loading it.
#[derive(Clone, Default)]
struct Probe {
    texts: Arc<AtomicUsize>,
    load: Arc<Mutex<Duration>>,
}

fn builtin_options(dir: &Path, model: &Path, probe: &Probe) -> StoreOptions {
    let (cache_dir, model, probe) = (dir.join("embeddings"), model.to_owned(), probe.clone());
    let source: EmbedderSource = Arc::new(move |_| {
        let t = Instant::now();
        let inner = MiniLm::load(&model).map_err(|e| e.to_string())?;
        let cache =
            EmbeddingCache::open(&cache_dir, inner.model_id(), inner.dim()).map_err(|e| e.to_string())?;
        let counting = Counting { inner, texts: Arc::clone(&probe.texts) };
        *probe.load.lock().unwrap() = t.elapsed();
        let embedder: Arc<dyn Embedder> = Arc::new(CachedEmbedder::new(counting, cache));
        Ok(embedder)
    });
    StoreOptions { embedder: Some(source), hnsw: HnswConfig::default(), ..StoreOptions::default() }
}

fn restart(n: usize) {
    const APPEND_BATCH: usize = 100;
    println!(
        "\n== restart: {n} episodes of 12 words (threads of {THREAD_LEN}) in a store on disk with the built-in \
         embedder and its cache at <dir>/embeddings; time until a search sees everything =="
    );
    let model = model_dir();
    let dir = tempfile::tempdir().unwrap();
    let ns = bench_ns();
    let query = SearchQuery {
        text: Some("when is the team meeting about the launch".into()),
        ..SearchQuery::default()
    };
    let header = format!(
        "{:<34} | {:>8} | {:>8} | {:>12} | {:>12} | {:>14}",
        "case", "open s", "append s", "searchable s", "model load s", "texts embedded"
    );
    println!("{header}");
    println!("{:<34} | {:>8} | {:>8} | {:>12} | {:>12} | {:>14}", "", "", "", "(total)", "", "by the model");
    rule(header.len());
    let row = |case: &str, open: Duration, append: Option<Duration>, total: Duration, probe: &Probe| {
        println!(
            "{:<34} | {:>8.2} | {:>8} | {:>12.2} | {:>12.2} | {:>14}",
            case,
            open.as_secs_f64(),
            append.map_or_else(|| "-".into(), |a| format!("{:.2}", a.as_secs_f64())),
            total.as_secs_f64(),
            probe.load.lock().unwrap().as_secs_f64(),
            probe.texts.load(Ordering::Relaxed)
        );
    };

    // First open: every text is embedded.
    {
        let probe = Probe::default();
        let t = Instant::now();
        let store = Store::open_with(dir.path(), builtin_options(dir.path(), &model, &probe)).unwrap();
        let open = t.elapsed();
        let mut rng = StdRng::seed_from_u64(11);
        let texts: Vec<String> = (0..n).map(|_| english(&mut rng, 12)).collect();
        let ta = Instant::now();
        for (b, chunk) in texts.chunks(APPEND_BATCH).enumerate() {
            let changes = chunk
                .iter()
                .enumerate()
                .map(|(j, text)| {
                    let i = b * APPEND_BATCH + j;
                    Change::RecordEpisode(NewEpisode {
                        text: text.clone(),
                        occurred_at: Timestamp::from_micros(T0 + i as i64 * MINUTE),
                        thread: Some(format!("thread-{}", i / THREAD_LEN)),
                        ..NewEpisode::default()
                    })
                })
                .collect();
            store.append(&ns, changes).unwrap();
        }
        let append = ta.elapsed();
        search_waiting(&store, &ns, &query);
        row("first open (embeds everything)", open, Some(append), t.elapsed(), &probe);
    }
    // Reopen: replay the log, rebuild the indexes, vectors from the cache.
    {
        let probe = Probe::default();
        let t = Instant::now();
        let store = Store::open_with(dir.path(), builtin_options(dir.path(), &model, &probe)).unwrap();
        let open = t.elapsed();
        search_waiting(&store, &ns, &query);
        row("reopen (cache kept)", open, None, t.elapsed(), &probe);
    }
    // Reopen without the cache, for comparison.
    {
        std::fs::remove_dir_all(dir.path().join("embeddings")).unwrap();
        let probe = Probe::default();
        let t = Instant::now();
        let store = Store::open_with(dir.path(), builtin_options(dir.path(), &model, &probe)).unwrap();
        let open = t.elapsed();
        search_waiting(&store, &ns, &query);
        row("reopen (cache deleted)", open, None, t.elapsed(), &probe);
    }
    println!(
        "searchable s: from opening until a search (waiting for the indexes) returns, model load and \
         appends included; each episode is embedded alone and with the one before it in its thread."
    );
}
