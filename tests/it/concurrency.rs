//! Writes decided under the writer lock: concurrent requests that name one new entity
//! create it once, concurrent settings patches on different fields both survive, and a
//! nested field of an answer pinned at S does not see a batch committed during the
//! request.

use std::sync::Arc;

use ostrakon_engine::Store;
use ostrakon_engine::core::Namespace;
use ostrakon_graphql::{Access, Limits, OstrakonSchema};
use serde_json::Value;

async fn execute(schema: &OstrakonSchema, query: String) -> Value {
    let response = schema.execute(async_graphql::Request::new(query).data(Access::Local)).await;
    assert!(response.errors.is_empty(), "{:?}", response.errors);
    serde_json::to_value(&response.data).unwrap()
}

fn file_store() -> (tempfile::TempDir, Arc<Store>) {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path()).unwrap());
    (dir, store)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_episodes_naming_one_new_entity_create_it_once() {
    let (_dir, store) = file_store();
    let schema = ostrakon_graphql::schema(Arc::clone(&store), Limits::default());
    let ns = Namespace::new("ns", "race").unwrap();
    for round in 0..20 {
        let name = format!("Zelda {round}");
        // Half give it with an episode, half name it as a fact's subject.
        let tasks: Vec<_> = (0..8)
            .map(|i| {
                let schema = schema.clone();
                let query = if i % 2 == 0 {
                    format!(
                        r#"mutation {{ recordEpisode(namespace: "race", episode: {{ text: "turn {i}" }},
                             entities: [{{ name: "{name}", aliases: ["Z{round}-{i}"] }}]) {{ entities {{ id }} }} }}"#
                    )
                } else {
                    format!(
                        r#"mutation {{ assertFacts(namespace: "race", facts: [{{ subject: {{ name: "{name}" }},
                             predicate: "turn", object: {{ integer: {i} }} }}]) {{ facts {{ subject {{ id }} }} }} }}"#
                    )
                };
                tokio::spawn(async move { execute(&schema, query).await })
            })
            .collect();
        let mut ids = std::collections::BTreeSet::new();
        for task in tasks {
            let data = task.await.unwrap();
            let id = match data.get("recordEpisode") {
                Some(r) => &r["entities"][0]["id"],
                None => &data["assertFacts"]["facts"][0]["subject"]["id"],
            };
            ids.insert(id.as_str().unwrap().to_owned());
        }
        // Every request got the same entity, and the namespace holds one of that name...
        assert_eq!(ids.len(), 1, "round {round}: {ids:?}");
        let named = store.inspect(&ns, |i| i.entities_named(&name)).unwrap();
        assert_eq!(named.len(), 1, "round {round}: {named:?}");
        // ...which carries every alias the episodes gave.
        let aliases = store.inspect(&ns, |i| i.entity(named[0]).unwrap().aliases.clone()).unwrap();
        assert_eq!(aliases.len(), 4, "round {round}: {aliases:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_settings_patches_on_different_fields_both_survive() {
    let (_dir, store) = file_store();
    let schema = ostrakon_graphql::schema(Arc::clone(&store), Limits::default());
    let ns = Namespace::new("ns", "cfg").unwrap();
    for round in 0..20u64 {
        let zone = format!("+0{}:00", round % 9 + 1);
        let every = 100 + round;
        let a = {
            let schema = schema.clone();
            let q = format!(
                r#"mutation {{ configureNamespace(namespace: "cfg", timeZone: "{zone}") {{ name }} }}"#
            );
            tokio::spawn(async move { execute(&schema, q).await })
        };
        let b = {
            let schema = schema.clone();
            let q = format!(
                r#"mutation {{ configureNamespace(namespace: "cfg", consolidateEverySeconds: {every}) {{ name }} }}"#
            );
            tokio::spawn(async move { execute(&schema, q).await })
        };
        let c = {
            let schema = schema.clone();
            let q = format!(
                r#"mutation {{ configureNamespace(namespace: "cfg", segmentation: {{ minLength: {} }}) {{ name }} }}"#,
                round + 2
            );
            tokio::spawn(async move { execute(&schema, q).await })
        };
        let d = {
            let schema = schema.clone();
            let q = r#"mutation { configureNamespace(namespace: "cfg", segmentation: { threshold: 0.5 }) { name } }"#;
            tokio::spawn(async move { execute(&schema, q.to_owned()).await })
        };
        for t in [a, b, c, d] {
            t.await.unwrap();
        }
        let config = store.inspect(&ns, |i| i.config()).unwrap();
        assert_eq!(config.time_zone.to_string(), zone, "round {round}");
        assert_eq!(config.consolidate_every_seconds, Some(every), "round {round}");
        let seg = store.inspect(&ns, |i| i.segment_config(i.last_seq())).unwrap();
        assert_eq!((seg.min_len, seg.threshold), (round as u32 + 2, 0.5), "round {round}");
    }
}

/// Commits one batch the first time a field named `trigger` resolves: a write that lands
/// while a request is between its top-level read and its nested fields.
struct WriteDuring {
    store: Arc<Store>,
    trigger: &'static str,
    fired: Arc<std::sync::atomic::AtomicBool>,
}

impl async_graphql::extensions::ExtensionFactory for WriteDuring {
    fn create(&self) -> Arc<dyn async_graphql::extensions::Extension> {
        Arc::new(WriteDuring {
            store: Arc::clone(&self.store),
            trigger: self.trigger,
            fired: Arc::clone(&self.fired),
        })
    }
}

#[async_trait::async_trait]
impl async_graphql::extensions::Extension for WriteDuring {
    async fn resolve(
        &self,
        ctx: &async_graphql::extensions::ExtensionContext<'_>,
        info: async_graphql::extensions::ResolveInfo<'_>,
        next: async_graphql::extensions::NextResolve<'_>,
    ) -> async_graphql::ServerResult<Option<async_graphql::Value>> {
        if info.path_node.field_name() == self.trigger
            && !self.fired.swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            use ostrakon_engine::{Change, EntityRef, NewEntity, NewEpisode, NewFact, ObjectRef};
            let ns = Namespace::new("ns", "pin").unwrap();
            let t = |s: &str| {
                ostrakon_engine::core::Timestamp::parse("t", s, &ostrakon_engine::core::TimeZone::Utc)
                    .unwrap()
            };
            self.store
                .append(
                    &ns,
                    vec![
                        Change::DeclareEntity(NewEntity {
                            id: Some(ostrakon_engine::core::EntityId(1)),
                            name: "Alice".into(),
                            aliases: vec!["Ally".into()],
                            ..NewEntity::default()
                        }),
                        Change::RecordEpisode(NewEpisode {
                            text: "Alice moved to Oslo".into(),
                            occurred_at: t("2021-01-01"),
                            ..NewEpisode::default()
                        }),
                        Change::AssertFact(NewFact::new(
                            EntityRef::Name("Alice".into()),
                            "livesIn",
                            ObjectRef::Entity(EntityRef::Name("Oslo".into())),
                            ostrakon_engine::core::Interval::open(t("2021-01-01")),
                        )),
                        Change::AssertFact(NewFact::new(
                            EntityRef::Name("Bob".into()),
                            "knows",
                            ObjectRef::Entity(EntityRef::Name("Alice".into())),
                            ostrakon_engine::core::Interval::open(t("2021-01-01")),
                        )),
                    ],
                )
                .unwrap();
        }
        next.run(ctx, info).await
    }
}

#[tokio::test]
async fn nested_fields_of_a_pinned_answer_do_not_see_a_batch_committed_during_the_request() {
    let store = Arc::new(Store::in_memory());
    let plain = ostrakon_graphql::schema(Arc::clone(&store), Limits::default());
    execute(
        &plain,
        r#"mutation { recordEpisode(namespace: "pin", episode: { text: "Alice lives in Paris", occurredAt: "2020-01-01" },
             entities: [{ name: "Alice" }],
             facts: [{ subject: { name: "Alice" }, predicate: "livesIn", object: { entity: { name: "Paris" } }, validFrom: "2020-01-01" }]) { seq } }"#
            .to_owned(),
    )
    .await;
    let body = r#"basis { seq } name aliases
        facts { object { entity { name aliases } } status }
        history(predicate: "livesIn") { status object { entity { name } } }
        incoming { id }
        mentions { edges { node { text } } }"#;
    let before = execute(
        &plain,
        format!(r#"{{ entity(namespace: "pin", name: "Alice", validAt: "2022-01-01") {{ {body} }} }}"#),
    )
    .await;
    let fired = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sneaky = ostrakon_graphql::builder(Arc::clone(&store), Limits::default())
        .extension(WriteDuring { store: Arc::clone(&store), trigger: "aliases", fired: Arc::clone(&fired) })
        .finish();
    let during = execute(
        &sneaky,
        format!(r#"{{ entity(namespace: "pin", name: "Alice", validAt: "2022-01-01") {{ {body} }} }}"#),
    )
    .await;
    assert!(fired.load(std::sync::atomic::Ordering::SeqCst), "the write did not happen during the request");
    // The answer is the one before the write, in every nested field.
    assert_eq!(during, before);
    // And the write did land: read again, Alice lives in Oslo and has her alias.
    let after = execute(
        &plain,
        format!(r#"{{ entity(namespace: "pin", name: "Alice", validAt: "2022-01-01") {{ {body} }} }}"#),
    )
    .await;
    assert_ne!(after, before);
    assert_eq!(after["entity"]["aliases"], serde_json::json!(["Ally"]));
}
