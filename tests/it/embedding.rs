//! What the built-in embedder embeds: every episode, and facts and entities only where
//! the namespace or the predicate asks. A change of policy rebuilds the vectors as a
//! rebuild from the log would, and takes effect on the running indexer.

use std::sync::{Arc, Condvar, Mutex};

use ostrakon_engine::core::{Cardinality, Namespace, PredicateDef, ValueType};
use ostrakon_engine::core::{FactEmbedding, Interval, Literal, Timestamp};
use ostrakon_engine::{
    Change, EntityRef, NewEpisode, NewFact, ObjectRef, ReadAt, SearchQuery, Store, StoreOptions,
    change::EmbeddingPolicyPatch, log::MemStorage, log::system_clock, search::EmbedderSource,
};
use ostrakon_search::{EmbedError, Embedder};

/// Embeds each text as a bag of its words hashed into 16 dimensions, and remembers every
/// text it was given. While `shut` is set, its batches (the indexer's) wait; a text someone
/// waits for (a query) is embedded at once.
struct Recording(Mutex<Vec<String>>, Gate);

#[derive(Default)]
struct Gate {
    shut: Mutex<bool>,
    changed: Condvar,
}

impl Gate {
    fn set(&self, shut: bool) {
        *self.shut.lock().unwrap() = shut;
        self.changed.notify_all();
    }
}

fn bag_of_words(text: &str) -> Vec<f32> {
    let mut v = [0.01f32; 16];
    for word in text.split_whitespace() {
        let h = word.bytes().fold(7usize, |h, b| h.wrapping_mul(31).wrapping_add(usize::from(b)));
        v[h % 16] += 1.0;
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / norm).collect()
}

impl Embedder for Recording {
    fn model_id(&self) -> &str {
        "recording"
    }
    fn dim(&self) -> usize {
        16
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut shut = self.1.shut.lock().unwrap();
        while *shut {
            shut = self.1.changed.wait(shut).unwrap();
        }
        drop(shut);
        texts.iter().map(|text| self.embed_now(text)).collect()
    }
    fn embed_now(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.0.lock().unwrap().push(text.to_owned());
        Ok(bag_of_words(text))
    }
}

fn store() -> (Store, Arc<Recording>) {
    let recording = Arc::new(Recording(Mutex::new(Vec::new()), Gate::default()));
    let r = Arc::clone(&recording);
    let source: EmbedderSource = Arc::new(move |_| Ok(Arc::clone(&r) as Arc<dyn Embedder>));
    let options = StoreOptions { embedder: Some(source), ..StoreOptions::default() };
    (
        Store::with_storage_and_options(Arc::new(MemStorage::new()), system_clock(), options).unwrap(),
        recording,
    )
}

/// Waits until the indexes hold every batch.
fn settle(store: &Store, ns: &Namespace) {
    let query = SearchQuery { text: Some("anything".into()), ..SearchQuery::default() };
    store.at(ns, ReadAt::latest()).and_then(|r| r.search(&query)).unwrap();
}

fn fact(subject: &str, predicate: &str, value: &str) -> Change {
    Change::AssertFact(NewFact::new(
        EntityRef::Name(subject.into()),
        predicate,
        ObjectRef::Literal(Literal::String(value.into())),
        Interval::open(Timestamp::from_micros(0)),
    ))
}

#[test]
fn facts_and_entities_are_embedded_only_where_asked() {
    let (store, recording) = store();
    let ns = Namespace::new("ns", "policy").unwrap();
    let define = |name: &str| {
        Change::DefinePredicate(PredicateDef {
            name: name.into(),
            cardinality: Cardinality::One,
            value_type: ValueType::Any,
            description: None,
            decay: None,
        })
    };
    store
        .append(
            &ns,
            vec![
                define("livesIn"),
                Change::EmbedPredicate { predicate: "livesIn".into(), embed: true },
                define("shoeSize"),
            ],
        )
        .unwrap();
    store
        .append(
            &ns,
            vec![
                Change::RecordEpisode(NewEpisode {
                    text: "Alice moved to Lyon".into(),
                    ..NewEpisode::default()
                }),
                fact("Alice", "livesIn", "Lyon"),
                fact("Alice", "shoeSize", "38"),
            ],
        )
        .unwrap();
    settle(&store, &ns);
    let embedded = recording.0.lock().unwrap().clone();
    assert!(embedded.iter().any(|t| t == "Alice moved to Lyon"), "episodes always: {embedded:?}");
    assert!(embedded.iter().any(|t| t.contains("lives in")), "a declared predicate's facts: {embedded:?}");
    assert!(!embedded.iter().any(|t| t.contains("shoe size")), "not the others: {embedded:?}");
    assert!(!embedded.iter().any(|t| t == "Alice"), "nor entities by default: {embedded:?}");
    let settings = store.settings(&ns).unwrap();
    assert_eq!(settings.embedding_policy.facts, FactEmbedding::Declared);
    assert!(settings.embedded_predicates.contains("livesIn"));

    // Asking for every fact and the entities embeds what is already there, as a rebuild
    // from the log would.
    recording.0.lock().unwrap().clear();
    let patch = EmbeddingPolicyPatch { facts: Some(FactEmbedding::All), entities: Some(true) };
    store.append(&ns, vec![Change::ConfigureEmbeddingPolicy(patch)]).unwrap();
    settle(&store, &ns);
    let embedded = recording.0.lock().unwrap().clone();
    assert!(embedded.iter().any(|t| t.contains("shoe size")), "{embedded:?}");
    assert!(embedded.iter().any(|t| t == "Alice"), "{embedded:?}");

    // A patch changes only what it names.
    let patch = EmbeddingPolicyPatch { facts: Some(FactEmbedding::None), entities: None };
    store.append(&ns, vec![Change::ConfigureEmbeddingPolicy(patch)]).unwrap();
    let policy = store.settings(&ns).unwrap().embedding_policy;
    assert_eq!((policy.facts, policy.entities), (FactEmbedding::None, true));
    recording.0.lock().unwrap().clear();
    store.append(&ns, vec![fact("Bob", "livesIn", "Oslo")]).unwrap();
    settle(&store, &ns);
    let embedded = recording.0.lock().unwrap().clone();
    assert!(!embedded.iter().any(|t| t.contains("Oslo")), "{embedded:?}");
}

/// Through GraphQL, a search answers by words while the embedder is behind new writes,
/// saying how far the vectors are, unless it names its batch (`knownAtSeq`): then it
/// waits for them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_waits_for_the_vectors_of_new_writes_only_when_it_names_its_batch() {
    let (store, recording) = store();
    let store = Arc::new(store);
    let ns = Namespace::new("namespace", "live").unwrap();
    let schema = ostrakon_graphql::schema(Arc::clone(&store), ostrakon_graphql::Limits::default());
    let episode =
        |text: &str| Change::RecordEpisode(NewEpisode { text: text.into(), ..NewEpisode::default() });
    store.append(&ns, vec![episode("We hiked up to the glacier lake.")]).unwrap();
    settle(&store, &ns);
    recording.1.set(true);
    let second = store.append(&ns, vec![episode("The invoice for the glacier trip is due Friday.")]).unwrap();
    let search = |at: &str| {
        format!(
            r#"{{ search(namespace: "live", text: "glacier"{at}) {{ indexedSeq warnings hits {{ score }} }} }}"#
        )
    };
    let found = crate::common::gql(&schema, &search("")).await;
    assert_eq!(found["search"]["indexedSeq"], 1, "{found}");
    assert_eq!(found["search"]["hits"].as_array().unwrap().len(), 2, "{found}");
    assert_eq!(found["search"]["warnings"][0], "vectors hold batches up to 1 of 2, text up to 2");

    let named = {
        let (schema, query) = (schema.clone(), search(&format!(", knownAtSeq: {}", second.seq.0)));
        tokio::spawn(async move { crate::common::gql(&schema, &query).await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(!named.is_finished(), "a search at a named batch answered before its vectors were written");
    recording.1.set(false);
    let answer = named.await.unwrap();
    assert_eq!(answer["search"]["indexedSeq"], 2, "{answer}");
    assert_eq!(answer["search"]["warnings"], serde_json::json!([]), "{answer}");
}

/// An embedder of one model: its texts hashed as [`bag_of_words`] shifted by its
/// model (so two models' vectors differ), remembering what it embedded and forgot.
struct Model {
    id: &'static str,
    shift: usize,
    embedded: Mutex<Vec<String>>,
    forgotten: Mutex<Vec<String>>,
}

impl Embedder for Model {
    fn model_id(&self) -> &str {
        self.id
    }
    fn dim(&self) -> usize {
        16
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        texts.iter().map(|text| self.embed_now(text)).collect()
    }
    fn embed_now(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.embedded.lock().unwrap().push(text.to_owned());
        let mut v = bag_of_words(text);
        v.rotate_left(self.shift);
        Ok(v)
    }
    fn forget(&self, texts: &[&str]) -> Result<usize, EmbedError> {
        self.forgotten.lock().unwrap().extend(texts.iter().map(|t| (*t).to_owned()));
        Ok(texts.len())
    }
}

#[tokio::test]
async fn a_namespace_names_its_model_and_every_model_it_used_forgets_an_erased_text() {
    use ostrakon_engine::core::BuiltinModel;
    let model =
        |id, shift| Arc::new(Model { id, shift, embedded: Mutex::default(), forgotten: Mutex::default() });
    let (e5, minilm) = (model("e5", 0), model("minilm", 3));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let source: EmbedderSource = {
        let (e5, minilm, asked) = (Arc::clone(&e5), Arc::clone(&minilm), Arc::clone(&asked));
        Arc::new(move |named| {
            asked.lock().unwrap().push(named);
            // The store's default is e5, as the binary's is.
            let chosen = if named == Some(BuiltinModel::MiniLm) { &minilm } else { &e5 };
            Ok(Arc::clone(chosen) as Arc<dyn Embedder>)
        })
    };
    let options = StoreOptions { embedder: Some(source), ..StoreOptions::default() };
    let store = Arc::new(
        Store::with_storage_and_options(Arc::new(MemStorage::new()), system_clock(), options).unwrap(),
    );
    let schema = ostrakon_graphql::schema(Arc::clone(&store), ostrakon_graphql::Limits::default());
    let configured = crate::common::gql(
        &schema,
        r#"mutation { configureNamespace(namespace: "english", embedding: { model: MINILM }) {
            embedding { mode model dimensions } } }"#,
    )
    .await;
    assert_eq!(
        configured["configureNamespace"]["embedding"],
        serde_json::json!({ "mode": "BUILTIN", "model": "MINILM", "dimensions": null })
    );
    let refused = crate::common::gql_error(
        &schema,
        r#"mutation { configureNamespace(namespace: "x", embedding: { mode: OFF, model: E5 }) { name } }"#,
    )
    .await;
    assert_eq!(refused, "INVALID_VALUE");
    let (english, default) =
        (Namespace::new("ns", "english").unwrap(), Namespace::new("ns", "default").unwrap());
    for ns in [&english, &default] {
        let episode = NewEpisode { text: format!("the weather in {ns} is mild"), ..NewEpisode::default() };
        store.append(ns, vec![Change::RecordEpisode(episode)]).unwrap();
        settle(&store, ns);
    }
    assert!(minilm.embedded.lock().unwrap().iter().any(|t| t.contains("english")));
    assert!(!minilm.embedded.lock().unwrap().iter().any(|t| t.contains("default")));
    assert!(e5.embedded.lock().unwrap().iter().any(|t| t.contains("default")));
    assert!(!e5.embedded.lock().unwrap().iter().any(|t| t.contains("english")));
    // Each namespace's query goes to its own model.
    let query = SearchQuery { text: Some("weather".into()), ..SearchQuery::default() };
    let before = minilm.embedded.lock().unwrap().len();
    store.at(&english, ReadAt::latest()).and_then(|r| r.search(&query)).unwrap();
    assert_eq!(minilm.embedded.lock().unwrap().len(), before + 1);
    // A namespace that changed its model: an erased text is forgotten by both caches.
    store
        .append(&english, vec![Change::ConfigureEmbedding(ostrakon_engine::core::EmbeddingMode::Builtin)])
        .unwrap();
    settle(&store, &english);
    assert!(e5.embedded.lock().unwrap().iter().any(|t| t.contains("english")), "the default model re-embeds");
    let request = ostrakon_engine::EraseRequest {
        target: ostrakon_engine::EraseTarget::Episodes(vec![ostrakon_engine::core::EpisodeId(1)]),
        reason: None,
        by: None,
    };
    store.erase(&english, request).unwrap();
    for m in [&e5, &minilm] {
        assert!(m.forgotten.lock().unwrap().iter().any(|t| t.contains("english is mild")), "{}", m.id);
    }
    assert!(asked.lock().unwrap().contains(&Some(BuiltinModel::MiniLm)));
    assert!(asked.lock().unwrap().contains(&None));
}
