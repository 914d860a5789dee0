//! Search while the built-in embedder is behind the writes: the text of every batch is
//! searchable at once and a search that does not wait for the vectors answers without
//! them (saying how far they are), while one that waits gives the answer every later read
//! at that basis gives. The query's own vector is made without queueing behind the
//! embedder's batches.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use ostrakon_engine::core::{Namespace, RecordRef};
use ostrakon_engine::{
    Change, KnownAt, NewEntity, NewEpisode, ReadAt, RecordId, SearchQuery, Store, StoreOptions,
    log::MemStorage, log::system_clock, search::Component, search::EmbedError, search::Embedder,
    search::EmbedderSource, search::SearchHit,
};

/// An embedder whose batches (the indexer's) wait while the gate is shut; a text someone
/// waits for (`embed_now`, a query) is embedded at once.
struct Gated {
    open: Mutex<bool>,
    opened: Condvar,
    batches: AtomicUsize,
}

impl Gated {
    fn new() -> Self {
        Gated { open: Mutex::new(true), opened: Condvar::new(), batches: AtomicUsize::new(0) }
    }

    fn set(&self, open: bool) {
        *self.open.lock().unwrap() = open;
        self.opened.notify_all();
    }

    fn is_open(&self) -> bool {
        *self.open.lock().unwrap()
    }
}

fn vector(text: &str) -> Vec<f32> {
    let mut v = [0.1f32; 8];
    for word in text.split_whitespace() {
        let h = word.bytes().fold(7usize, |h, b| h.wrapping_mul(31).wrapping_add(usize::from(b)));
        v[h % 8] += 1.0;
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / norm).collect()
}

impl Embedder for Gated {
    fn model_id(&self) -> &str {
        "gated"
    }
    fn dim(&self) -> usize {
        8
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.opened.wait(open).unwrap();
        }
        self.batches.fetch_add(1, Ordering::SeqCst);
        Ok(texts.iter().map(|t| vector(t)).collect())
    }
    fn embed_now(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        Ok(vector(text))
    }
}

fn store(gated: &Arc<Gated>) -> Arc<Store> {
    let embedder = Arc::clone(gated);
    let source: EmbedderSource = Arc::new(move |_| Ok(Arc::clone(&embedder) as Arc<dyn Embedder>));
    let options = StoreOptions { embedder: Some(source), ..StoreOptions::default() };
    Arc::new(Store::with_storage_and_options(Arc::new(MemStorage::new()), system_clock(), options).unwrap())
}

fn episode(text: &str) -> Change {
    Change::RecordEpisode(NewEpisode { text: text.into(), ..NewEpisode::default() })
}

/// Whether the hit of `record` among `hits` was found by its vector.
fn by_vector(hits: &[SearchHit], record: RecordRef) -> bool {
    let hit = hits.iter().find(|h| h.record == record).expect("the record is among the hits");
    hit.explanation.components.iter().any(|c| c.component == Component::Vector)
}

#[test]
fn search_answers_by_words_while_the_vectors_are_behind_and_waits_for_them_when_asked() {
    let gated = Arc::new(Gated::new());
    let store = store(&gated);
    let ns = Namespace::new("lane", "live").unwrap();
    let first = store.append(&ns, vec![episode("We hiked up to the glacier lake.")]).unwrap();
    let query = SearchQuery { text: Some("glacier".into()), ..SearchQuery::default() };
    assert_eq!(
        store.at(&ns, ReadAt::latest()).and_then(|r| r.search(&query)).unwrap().value.indexed_seq,
        first.seq
    );

    // The embedder stalls; a second batch is written.
    gated.set(false);
    let second = store.append(&ns, vec![episode("The invoice for the glacier trip is due Friday.")]).unwrap();
    let Some(RecordId::Episode(id)) = second.ids[0] else { panic!("no episode id: {second:?}") };
    let record = RecordRef::Episode(id);
    // A batch with nothing to embed does not mark the vectors ahead of the one before it.
    let entity = NewEntity { name: "Ana".into(), ..NewEntity::default() };
    let third = store.append(&ns, vec![Change::DeclareEntity(entity)]).unwrap();
    let latest = SearchQuery { wait_for_vectors: false, ..query.clone() };
    let found = store.at(&ns, ReadAt::latest()).and_then(|r| r.search(&latest)).unwrap();
    assert!(!gated.is_open(), "the embedder was never let through");
    assert_eq!(found.value.hits.len(), 2, "both found by their words: {:?}", found.value.hits);
    assert!(!by_vector(&found.value.hits, record), "its vector is not written yet");
    assert_eq!(found.value.indexed_seq, first.seq);
    assert!(
        found.value.warnings.iter().any(|w| w == "vectors hold batches up to 1 of 3, text up to 3"),
        "{:?}",
        found.value.warnings
    );

    // Waiting for the vectors (here at the named batch): not before they hold it.
    let named = ReadAt { known_at: KnownAt::Seq(second.seq), ..ReadAt::latest() };
    let waiting = {
        let (store, ns, gated, query) = (Arc::clone(&store), ns.clone(), Arc::clone(&gated), query.clone());
        std::thread::spawn(move || {
            let answer = store.at(&ns, named).and_then(|r| r.search(&query)).unwrap();
            (gated.is_open(), answer)
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(!waiting.is_finished(), "a read waiting for the vectors answered before they were written");
    gated.set(true);
    let (opened_first, answer) = waiting.join().unwrap();
    assert!(opened_first);
    assert!(answer.value.indexed_seq >= second.seq);
    assert!(answer.value.warnings.is_empty(), "{:?}", answer.value.warnings);
    assert!(by_vector(&answer.value.hits, record), "{:?}", answer.value.hits);
    assert!(gated.batches.load(Ordering::SeqCst) >= 2);

    // A later read gives the same hits, vectors and all.
    let settled = store.at(&ns, ReadAt::latest()).and_then(|r| r.search(&query)).unwrap();
    assert_eq!(settled.value.indexed_seq, third.seq);
    let explained = |hits: &[SearchHit]| {
        hits.iter().map(|h| (h.record, format!("{:?}", h.explanation.components))).collect::<Vec<_>>()
    };
    assert_eq!(explained(&settled.value.hits), explained(&answer.value.hits));
}
