//! Search vectors shared through the log backend, as nodes of a cluster share them: a
//! node opening a namespace loads the vectors another node saved with its checkpoint and
//! embeds only the batches after them, answering searches as that node does; vectors
//! that cannot be used (damaged, of other batches) are ignored and everything is
//! embedded again, to the same answers.

use std::sync::{Arc, Mutex};

use ostrakon_engine::core::{Namespace, Timestamp};
use ostrakon_engine::{
    Change, NewEpisode, ReadAt, SearchQuery, Store, StoreOptions, log::LogBackend, log::SharedBackend,
    log::system_clock, search::EmbedError, search::Embedder, search::EmbedderSource,
};

const QUERY: &str = "the garden by the lake";

/// An embedder that counts the texts it embedded (the query's aside): a vector made
/// from the text's bytes, so that search ranks by them.
#[derive(Default)]
struct Counting(Mutex<Vec<String>>);

impl Counting {
    fn embedded(&self) -> usize {
        self.0.lock().unwrap().iter().filter(|t| *t != QUERY).count()
    }
}

impl Embedder for Counting {
    fn model_id(&self) -> &str {
        "counting"
    }
    fn dim(&self) -> usize {
        8
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut seen = self.0.lock().unwrap();
        Ok(texts
            .iter()
            .map(|t| {
                seen.push((*t).to_owned());
                let mut v = [0.1f32; 8];
                for (i, b) in t.bytes().enumerate() {
                    v[(i * 7 + usize::from(b)) % 8] += f32::from(b % 13);
                }
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                v.iter().map(|x| x / norm).collect()
            })
            .collect())
    }
}

/// A node: a store over its own handle on the backend, embedding with `embedder`.
fn node(backend: Arc<dyn LogBackend>, embedder: &Arc<Counting>) -> Arc<Store> {
    let embedder = Arc::clone(embedder);
    let source: EmbedderSource = Arc::new(move |_| Ok(Arc::clone(&embedder) as Arc<dyn Embedder>));
    let options = StoreOptions { embedder: Some(source), ..StoreOptions::default() };
    let store = Arc::new(Store::with_backend(backend, system_clock(), options).unwrap());
    store.follow_others();
    store
}

fn ns() -> Namespace {
    Namespace::new("namespace", "garden").unwrap()
}

fn episodes(store: &Store, from: usize, n: usize) {
    let places = ["the garden", "the lake", "the market", "the station", "the old mill"];
    let batch = (from..from + n)
        .map(|i| {
            Change::RecordEpisode(NewEpisode {
                text: format!(
                    "Day {i}: we walked to {} and talked about {}.",
                    places[i % 5],
                    places[(i * 3) % 5]
                ),
                occurred_at: Timestamp::from_micros(1_700_000_000_000_000 + i as i64 * 3_600_000_000),
                thread: Some(format!("t{}", i % 3)),
                ..NewEpisode::default()
            })
        })
        .collect();
    store.append(&ns(), batch).unwrap();
}

/// What a search answers: each hit's record and score.
fn search(store: &Store) -> Vec<String> {
    let query =
        SearchQuery { text: Some(QUERY.into()), wait_for_index: true, limit: 20, ..SearchQuery::default() };
    let result = store.at(&ns(), ReadAt::latest()).and_then(|r| r.search(&query)).unwrap().value;
    assert!(result.warnings.is_empty(), "{:?}", result.warnings);
    result.hits.iter().map(|h| format!("{:?} {:.6}", h.record, h.score)).collect()
}

#[test]
fn a_node_loads_the_vectors_another_shared_and_embeds_only_the_batches_after_them() {
    let backend = SharedBackend::new();
    shares_vectors(|| Arc::new(backend.clone()));
}

#[test]
fn nodes_over_jetstream_share_their_vectors_through_the_object_store() {
    let Some(cluster) = crate::cluster::Cluster::start() else { return };
    shares_vectors(|| cluster.backend());
}

fn shares_vectors(backend: impl Fn() -> Arc<dyn LogBackend>) {
    let writer = Arc::new(Counting::default());
    let a = node(backend(), &writer);
    for b in 0..10 {
        episodes(&a, b * 4, 4);
    }
    assert!(!search(&a).is_empty());
    assert!(writer.embedded() >= 40, "{} texts", writer.embedded());
    a.checkpoint(&ns()).unwrap().expect("a checkpoint");
    assert!(backend().load_vectors(ns().as_str()).unwrap().is_some(), "the vectors are shared");
    // Two episodes after the checkpoint and the shared vectors.
    episodes(&a, 40, 2);
    let expected = search(&a);

    let reader = Arc::new(Counting::default());
    let b = node(backend(), &reader);
    assert_eq!(search(&b), expected);
    // Only the two episodes after the shared vectors: alone, and in their thread's
    // context windows (of one and two turns before).
    assert!((2..=6).contains(&reader.embedded()), "{:?}", reader.0.lock().unwrap());
    assert!(
        reader.0.lock().unwrap().iter().all(|t| t == QUERY || t.contains("Day 40") || t.contains("Day 41"))
    );

    // Shared vectors that cannot be used are ignored: everything is embedded again.
    backend().save_vectors(ns().as_str(), b"MNEMOVEC not vectors").unwrap();
    let again = Arc::new(Counting::default());
    let c = node(backend(), &again);
    assert_eq!(search(&c), expected);
    assert!(again.embedded() >= 42, "{} texts", again.embedded());
    // A node saves its own once it checkpoints, replacing those.
    c.checkpoint(&ns()).unwrap();
    let fresh = Arc::new(Counting::default());
    assert_eq!(search(&node(backend(), &fresh)), expected);
    assert_eq!(fresh.embedded(), 0);
}

/// Another model of the same length: each text's vector cubed (another geometry, so
/// that it ranks otherwise), texts counted by the [`Counting`] inside.
struct Other(Arc<Counting>);

impl Embedder for Other {
    fn model_id(&self) -> &str {
        "other"
    }
    fn dim(&self) -> usize {
        8
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let squared = |v: Vec<f32>| {
            let v: Vec<f32> = v.iter().map(|x| x * x * x).collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.into_iter().map(|x| x / norm).collect()
        };
        Ok(self.0.embed(texts)?.into_iter().map(squared).collect())
    }
}

#[test]
fn vectors_another_model_made_are_never_searched_with_this_one_s_queries() {
    let backend = SharedBackend::new();
    let a = node(Arc::new(backend.clone()), &Arc::new(Counting::default()));
    episodes(&a, 0, 12);
    let first = search(&a);
    a.checkpoint(&ns()).unwrap().expect("a checkpoint");
    assert!(backend.load_vectors(ns().as_str()).unwrap().is_some());
    // A node whose built-in embedder is another model embeds everything again, and
    // answers as a node of that model that never saw the first one's vectors.
    let other = |counting: &Arc<Counting>| {
        let model: Arc<dyn Embedder> = Arc::new(Other(Arc::clone(counting)));
        let source: EmbedderSource = Arc::new(move |_| Ok(Arc::clone(&model)));
        let options = StoreOptions { embedder: Some(source), ..StoreOptions::default() };
        Arc::new(Store::with_backend(Arc::new(backend.clone()), system_clock(), options).unwrap())
    };
    let counted = Arc::new(Counting::default());
    let answers = search(&other(&counted));
    assert!(counted.embedded() >= 12, "{} texts embedded", counted.embedded());
    backend.save_vectors(ns().as_str(), b"none").unwrap();
    assert_eq!(search(&other(&Arc::new(Counting::default()))), answers);
    assert_ne!(answers, first, "the two models rank alike: the test shows nothing");
}
