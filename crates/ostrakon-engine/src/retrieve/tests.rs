//! Unit tests of retrieval's parts: speakers, context documents, and a vectors rebuild.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::sync::Arc;

use ostrakon_core::{EmbeddingMode, EpisodeId, RecordRef, Seq, Timestamp};

use crate::options::StoreOptions;
use crate::store::Store;

use super::docs::*;
use super::indexer::*;
use super::keys::*;
use super::lane::Lane;

fn ep(id: u64, text: &str, thread: Option<&str>) -> ostrakon_core::Episode {
    ostrakon_core::Episode {
        id: EpisodeId(id),
        text: text.into(),
        occurred_at: Timestamp::parse("t", "2023-05-08T13:56:00Z", &ostrakon_core::TimeZone::Utc).unwrap(),
        thread: thread.map(Into::into),
        source: None,
        role: None,
        external_id: None,
        importance: None,
    }
}

#[test]
fn speakers_are_a_leading_name_or_the_role() {
    let who = |t: &str| speaker(&ep(1, t, None)).map(str::to_owned);
    assert_eq!(who("Caroline: hi!").as_deref(), Some("Caroline"));
    assert_eq!(who("Mary Ann Lee: hello").as_deref(), Some("Mary Ann Lee"));
    assert_eq!(who("O'Brien: yes").as_deref(), Some("O'Brien"));
    assert_eq!(who("Note: buy milk"), Some("Note".into()));
    assert_eq!(who("the plan: buy milk"), None);
    assert_eq!(who("Meeting at 10:30"), None);
    assert_eq!(who("We met Anna, Bob and Carl Smith Jr yesterday: fun"), None);
    assert_eq!(who("no colon here"), None);
    // Scripts without case: any word of letters.
    assert_eq!(who("서연: 이틀 전에 갔어요").as_deref(), Some("서연"));
    assert_eq!(who("用户: 你好").as_deref(), Some("用户"));
    assert_eq!(who("서연, 내일 3:00에 봐요"), None);
    let mut e = ep(1, "hello there", None);
    e.role = Some("user".into());
    assert_eq!(speaker(&e), Some("user"));
    assert_eq!(name_words("Mary Ann O'Brien").collect::<Vec<_>>(), ["mary", "ann", "brien"]);
    assert_eq!(
        name_words("What did Caroline's friend say?").collect::<Vec<_>>(),
        ["what", "did", "caroline", "friend", "say"]
    );
    let tags = episode_tags(&ep(1, "Mary Ann: I went there yesterday", None), &ostrakon_core::TimeZone::Utc);
    assert_eq!(tags, ["d20230507", "d20230508", "m202305", "y2023"]);
}

/// A change of what is embedded rebuilds the vectors from the whole state, which may
/// hold batches applied after the ones the indexer was handed: those are still to
/// come as jobs, and must not be skipped as indexed (their text would never be added).
#[test]
fn a_vectors_rebuild_leaves_later_batches_to_their_own_jobs() {
    use crate::change::{Change, NewEpisode};
    let options = StoreOptions { defer_search: true, ..StoreOptions::default() };
    let store = Store::with_storage_and_options(
        Arc::new(ostrakon_log::MemStorage::new()),
        crate::read::point::system_clock(),
        options,
    )
    .unwrap();
    let ns = ostrakon_core::Namespace::new("ns", "n").unwrap();
    let episode = |text: &str| {
        Change::RecordEpisode(NewEpisode {
            text: text.into(),
            occurred_at: Timestamp::parse("t", "2029-06-01T00:00:00Z", &ostrakon_core::TimeZone::Utc)
                .unwrap(),
            ..NewEpisode::default()
        })
    };
    store.append(&ns, vec![episode("alpha garden")]).unwrap();
    store.append(&ns, vec![Change::ConfigureEmbedding(EmbeddingMode::Client { dim: 2 })]).unwrap();
    store.append(&ns, vec![episode("omega orchard")]).unwrap();
    let shard = store.shard(&ns).unwrap().unwrap();
    let mut batches: Vec<Job> = shard
        .log
        .read_after(0)
        .unwrap()
        .into_iter()
        .map(|r| {
            let events = crate::write::codec::decode(&shard.name, r.seq, &r.payload).unwrap();
            Job::Batch(Arc::clone(&shard), Seq(r.seq), events)
        })
        .collect();
    assert_eq!(batches.len(), 3);
    let last = batches.pop().unwrap();
    let indexer = Indexer {
        options: StoreOptions::default(),
        embedders: Default::default(),
        closing: false.into(),
        lane: Lane::new(),
    };
    // The indexer is handed the first two batches while the third is applied already.
    indexer.process(batches);
    assert_eq!(shard.search.indexed(), Seq(2), "the third batch's text is not indexed yet");
    indexer.process(vec![last]);
    assert_eq!(shard.search.indexed(), Seq(3));
    let found = shard.search.text.search("omega", &[KIND_EPISODE], 10).unwrap();
    assert_eq!(found.len(), 1, "the episode after the change of embedding is found by its text");
}

#[test]
fn context_documents_pair_each_turn_with_both_neighbours_and_are_only_added() {
    let tz = ostrakon_core::TimeZone::Utc;
    let mut previous = HashMap::new();
    let mut docs = Docs::default();
    for (id, text) in [(1, "a"), (2, "b"), (3, "c")] {
        docs.episode(&mut previous, &ep(id, text, Some("t")), &tz);
    }
    docs.episode(&mut previous, &ep(9, "alone", None), &tz);
    let context = |docs: &Docs| -> Vec<(RecordRef, u64, String)> {
        docs.context.iter().map(|(k, t)| (record(episode_key(*k)), k & 3, t.clone())).collect()
    };
    let e = |id| RecordRef::Episode(EpisodeId(id));
    let (own, next) = (KIND_EPISODE, KIND_WITH_NEXT);
    assert_eq!(
        context(&docs),
        vec![
            (e(1), own, "a".into()),
            (e(2), own, "a\nb".into()),
            (e(1), next, "a\nb".into()),
            (e(3), own, "b\nc".into()),
            (e(2), next, "a\nb\nc".into()),
            (e(9), own, "alone".into()),
        ]
    );
    // The next set of documents pairs the thread's last turn with the new one.
    let mut later = Docs::default();
    later.episode(&mut previous, &ep(4, "d", Some("t")), &tz);
    assert_eq!(context(&later), vec![(e(4), own, "c\nd".into()), (e(3), next, "b\nc\nd".into())]);
    // Exchanges are paired with the one before only.
    let mut exchanges = Docs::default();
    let mut previous = HashMap::new();
    for (id, text) in [(1, "User: hi\nAssistant: hello"), (2, "User: and?\nAssistant: so")] {
        exchanges.episode(&mut previous, &ep(id, text, Some("t")), &tz);
    }
    assert!(exchanges.context.iter().all(|(k, _)| k & 3 == KIND_EPISODE));
    assert!(is_exchange("User: hi\nAssistant: hello") && !is_exchange("Caroline: hi\nhow are you?"));
    assert!(is_exchange("사용자: 안녕하세요\n도우미: 반가워요"));
}
