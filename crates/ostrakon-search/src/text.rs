//! BM25 over short texts with tantivy: in RAM, or in a directory (memory-mapped) whose
//! commits carry a payload saying what they hold.

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

use tantivy::collector::{DocSetCollector, TopDocs};
use tantivy::indexer::IndexWriterOptions;
use tantivy::query::{BooleanQuery, ConstScoreQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, NumericOptions, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer, StopWordFilter, TextAnalyzer,
};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use crate::error::SearchError;
use crate::particles::KoreanParticles;

const ANALYZER: &str = "mnemo_en";
/// The writer's memory budget (tantivy's minimum per thread is 15 MB): past it, the
/// writer flushes a segment and goes on.
const WRITER_BUDGET: usize = 32 << 20;

/// A full-text index of documents named by `u64` keys, each tagged with a `u64` kind and
/// any number of exact tags (such as days) that a search may be narrowed to.
///
/// Its writer (a tantivy `IndexWriter`, with an indexing, a segment-updating and a
/// merging thread and its memory arena) exists only between the first
/// [`TextIndex::upsert`] of a round and its [`TextIndex::commit`], which waits for the
/// merges it started and closes it: an index at rest holds no thread and no arena, so
/// that thousands of namespaces cost threads only while they are being written.
pub struct TextIndex {
    index: Index,
    writer: Mutex<Option<IndexWriter>>,
    reader: IndexReader,
    key: Field,
    kind: Field,
    text: Field,
    tags: Field,
}

/// How long opening a writer waits for a lock held for a moment (see `writer_in`).
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

/// A document: key, kind, text, tags.
pub type Doc<'a> = (u64, u64, &'a str, &'a [String]);

fn analyzer() -> TextAnalyzer {
    let builder = TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(KoreanParticles)
        .dynamic();
    let builder = match StopWordFilter::new(Language::English) {
        Some(stop) => builder.filter_dynamic(stop),
        None => builder,
    };
    builder.filter_dynamic(Stemmer::new(Language::English)).build()
}

impl TextIndex {
    /// An empty index in RAM.
    pub fn new() -> Result<Self, SearchError> {
        let (schema, fields) = Self::schema();
        Self::over(Index::create_in_ram(schema), fields)
    }

    /// The index kept in `dir` (created if absent), with the payload of its last commit.
    /// An index whose files are not this schema's is an error: the caller removes it.
    pub fn open_in(dir: &Path) -> Result<(Self, Option<String>), SearchError> {
        std::fs::create_dir_all(dir).map_err(|e| SearchError::Text(format!("{}: {e}", dir.display())))?;
        let (schema, fields) = Self::schema();
        let directory = tantivy::directory::MmapDirectory::open(dir)
            .map_err(|e| SearchError::Text(format!("{}: {e}", dir.display())))?;
        let index = Index::open_or_create(directory, schema)?;
        let payload = index.load_metas()?.payload;
        Ok((Self::over(index, fields)?, payload))
    }

    fn over(index: Index, [key, kind, text, tags]: [Field; 4]) -> Result<Self, SearchError> {
        index.tokenizers().register(ANALYZER, analyzer());
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()?;
        Ok(TextIndex { index, writer: Mutex::new(None), reader, key, kind, text, tags })
    }

    fn schema() -> (Schema, [Field; 4]) {
        let mut schema = Schema::builder();
        let key = schema.add_u64_field("key", NumericOptions::default().set_indexed().set_fast());
        let kind = schema.add_u64_field("kind", NumericOptions::default().set_indexed());
        let text = schema.add_text_field(
            "text",
            TextOptions::default().set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer(ANALYZER)
                    .set_index_option(IndexRecordOption::WithFreqs),
            ),
        );
        let tags = schema.add_text_field("tags", STRING);
        (schema.build(), [key, kind, text, tags])
    }

    /// Adds documents, replacing any with the same key. Visible after [`TextIndex::commit`].
    pub fn upsert<'a>(&self, docs: impl IntoIterator<Item = Doc<'a>>) -> Result<(), SearchError> {
        self.write(docs, true)
    }

    /// Adds documents whose keys the index does not hold yet: no delete is queued for
    /// them, which spares the commit a lookup of every key in every segment (with keys
    /// it does hold, both documents would stay). Visible after [`TextIndex::commit`].
    pub fn add<'a>(&self, docs: impl IntoIterator<Item = Doc<'a>>) -> Result<(), SearchError> {
        self.write(docs, false)
    }

    fn write<'a>(&self, docs: impl IntoIterator<Item = Doc<'a>>, replace: bool) -> Result<(), SearchError> {
        let mut docs = docs.into_iter().peekable();
        if docs.peek().is_none() {
            return Ok(());
        }
        let mut slot = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let writer = self.writer_in(&mut slot)?;
        for (key, kind, text, tags) in docs {
            if replace {
                writer.delete_term(Term::from_field_u64(self.key, key));
            }
            let mut doc = TantivyDocument::default();
            doc.add_u64(self.key, key);
            doc.add_u64(self.kind, kind);
            doc.add_text(self.text, text);
            for tag in tags {
                doc.add_text(self.tags, tag);
            }
            writer.add_document(doc)?;
        }
        Ok(())
    }

    fn writer_in<'w>(&self, slot: &'w mut Option<IndexWriter>) -> Result<&'w mut IndexWriter, SearchError> {
        if let Some(w) = slot {
            return Ok(w);
        }
        let options = IndexWriterOptions::builder()
            .num_worker_threads(1)
            .num_merge_threads(1)
            .memory_budget_per_thread(WRITER_BUDGET)
            .build();
        // The writer's lock file, released by the last commit, may still be held for a
        // moment by a process this one is starting (a child holds a copy of every
        // descriptor until it executes its program): tried again, for a bounded time.
        let give_up = std::time::Instant::now() + LOCK_PATIENCE;
        loop {
            match self.index.writer_with_options(options.clone()) {
                Err(tantivy::TantivyError::LockFailure(
                    tantivy::directory::error::LockError::LockBusy,
                    _,
                )) if std::time::Instant::now() < give_up => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                writer => return Ok(slot.insert(writer?)),
            }
        }
    }

    /// Makes every document added so far searchable, lets the merges this starts
    /// finish, and closes the writer.
    pub fn commit(&self) -> Result<(), SearchError> {
        let taken = self.writer.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(mut writer) = taken {
            writer.commit()?;
            writer.wait_merging_threads()?;
            self.reader.reload()?;
        }
        Ok(())
    }

    /// [`TextIndex::commit`], recording `payload` with the commit (even with nothing
    /// added): reopening the index's directory returns it.
    pub fn commit_with(&self, payload: &str) -> Result<(), SearchError> {
        let mut slot = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        self.writer_in(&mut slot)?;
        if let Some(mut writer) = slot.take() {
            let mut prepared = writer.prepare_commit()?;
            prepared.set_payload(payload);
            prepared.commit()?;
            writer.wait_merging_threads()?;
            self.reader.reload()?;
        }
        Ok(())
    }

    /// Removes every document (visible after the next commit).
    pub fn clear(&self) -> Result<(), SearchError> {
        let mut slot = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        self.writer_in(&mut slot)?.delete_all_documents()?;
        Ok(())
    }

    /// The terms a text is searched by: the index's own analysis, deduplicated, in order.
    pub fn terms(&self, text: &str) -> Vec<String> {
        let mut analyzer = analyzer();
        let mut stream = analyzer.token_stream(text);
        let mut seen = HashSet::new();
        let mut terms = Vec::new();
        while stream.advance() {
            let t = &stream.token().text;
            if seen.insert(t.clone()) {
                terms.push(t.clone());
            }
        }
        terms
    }

    /// The best `limit` documents of the given kinds (all kinds when empty) for a text, by
    /// BM25, best first; ties by key. Query syntax is not interpreted: any text is a query.
    pub fn search(&self, text: &str, kinds: &[u64], limit: usize) -> Result<Vec<(u64, f32)>, SearchError> {
        self.search_tagged(text, kinds, &[], limit)
    }

    /// [`TextIndex::search`] among the documents with at least one of `tags` (all
    /// documents when empty).
    pub fn search_tagged(
        &self,
        text: &str,
        kinds: &[u64],
        tags: &[String],
        limit: usize,
    ) -> Result<Vec<(u64, f32)>, SearchError> {
        let terms = self.terms(text);
        if terms.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let words: Vec<(Occur, Box<dyn Query>)> = terms
            .iter()
            .map(|t| {
                let q: Box<dyn Query> = Box::new(TermQuery::new(
                    Term::from_field_text(self.text, t),
                    IndexRecordOption::WithFreqs,
                ));
                (Occur::Should, q)
            })
            .collect();
        let mut query: Box<dyn Query> = Box::new(BooleanQuery::new(words));
        let mut filters: Vec<Box<dyn Query>> = Vec::new();
        if !kinds.is_empty() {
            filters.push(self.any_of(kinds.iter().map(|k| Term::from_field_u64(self.kind, *k))));
        }
        if !tags.is_empty() {
            filters.push(self.any_of(tags.iter().map(|t| Term::from_field_text(self.tags, t))));
        }
        if !filters.is_empty() {
            let mut all = vec![(Occur::Must, query)];
            all.extend(filters.into_iter().map(|f| {
                let f: Box<dyn Query> = Box::new(ConstScoreQuery::new(f, 0.0));
                (Occur::Must, f)
            }));
            query = Box::new(BooleanQuery::new(all));
        }
        let searcher = self.reader.searcher();
        let top = searcher.search(&query, &TopDocs::with_limit(limit).order_by_score())?;
        let mut hits = Vec::with_capacity(top.len());
        for (score, address) in top {
            let keys = searcher.segment_reader(address.segment_ord).fast_fields().u64("key")?;
            if let Some(key) = keys.first(address.doc_id) {
                hits.push((key, score));
            }
        }
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok(hits)
    }

    fn any_of(&self, terms: impl Iterator<Item = Term>) -> Box<dyn Query> {
        let terms: Vec<(Occur, Box<dyn Query>)> = terms
            .map(|t| {
                let q: Box<dyn Query> = Box::new(TermQuery::new(t, IndexRecordOption::Basic));
                (Occur::Should, q)
            })
            .collect();
        Box::new(BooleanQuery::new(terms))
    }

    /// The keys of the documents with at least one of `tags`, at most `limit` of them.
    pub fn keys_tagged(&self, tags: &[String], limit: usize) -> Result<HashSet<u64>, SearchError> {
        if tags.is_empty() || limit == 0 {
            return Ok(HashSet::new());
        }
        let query = self.any_of(tags.iter().map(|t| Term::from_field_text(self.tags, t)));
        let searcher = self.reader.searcher();
        // The matching documents unscored, in index order.
        let mut found: Vec<tantivy::DocAddress> =
            searcher.search(&query, &DocSetCollector)?.into_iter().collect();
        found.sort();
        let mut keys = HashSet::with_capacity(found.len().min(limit));
        for address in found.into_iter().take(limit) {
            let fast = searcher.segment_reader(address.segment_ord).fast_fields().u64("key")?;
            if let Some(key) = fast.first(address.doc_id) {
                keys.insert(key);
            }
        }
        Ok(keys)
    }

    /// Documents searchable now.
    pub fn len(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// Whether nothing is searchable.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The underlying tantivy index (for inspection).
    pub fn index(&self) -> &Index {
        &self.index
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn ranks_by_bm25_filters_kinds_and_replaces_by_key() {
        let ix = TextIndex::new().unwrap();
        let (may, june) = (vec!["m202305".to_owned()], vec!["m202306".to_owned(), "y2023".to_owned()]);
        ix.upsert([
            (1, 0, "I ran five kilometres in the park this morning", may.as_slice()),
            (2, 0, "We talked about painting and tea", &[]),
            (3, 2, "Emily likes running in parks", june.as_slice()),
            (4, 0, "The park was closed; running is hard in the rain, so I ran on the treadmill", &may),
        ])
        .unwrap();
        ix.commit().unwrap();
        let hits = ix.search("How long did I run in the park?", &[], 10).unwrap();
        let keys: Vec<u64> = hits.iter().map(|h| h.0).collect();
        assert!(keys.contains(&1) && keys.contains(&3) && keys.contains(&4), "{hits:?}");
        assert!(!keys.contains(&2), "stop words alone must not match: {hits:?}");
        let only_episodes = ix.search("run park", &[0], 10).unwrap();
        assert!(only_episodes.iter().all(|h| h.0 != 3));
        let tagged = |tags: &[&str]| {
            let tags: Vec<String> = tags.iter().map(|t| (*t).to_owned()).collect();
            let mut keys: Vec<u64> =
                ix.search_tagged("run park", &[], &tags, 10).unwrap().iter().map(|h| h.0).collect();
            keys.sort();
            keys
        };
        assert_eq!(tagged(&["m202305"]), vec![1, 4]);
        assert_eq!(tagged(&["m202306", "m202305"]), vec![1, 3, 4]);
        assert_eq!(tagged(&["m209901"]), Vec::<u64>::new());
        let keys = ix.keys_tagged(&may, 10).unwrap();
        assert_eq!(keys, HashSet::from([1, 4]));
        assert_eq!(ix.keys_tagged(&["y2023".to_owned()], 10).unwrap(), HashSet::from([3]));
        assert_eq!(ix.keys_tagged(&may, 1).unwrap().len(), 1);
        assert!(ix.keys_tagged(&["m209901".to_owned()], 10).unwrap().is_empty());
        ix.upsert([(2, 0, "park run", &[][..])]).unwrap();
        ix.commit().unwrap();
        assert_eq!(ix.len(), 4);
        assert!(ix.search("tea", &[], 10).unwrap().is_empty());
        assert!(ix.search("(((\"AND OR: ~ ^", &[], 10).is_ok());
        assert!(ix.search("the of and", &[], 10).unwrap().is_empty());
    }

    #[test]
    fn a_korean_word_meets_its_forms_with_other_particles() {
        let ix = TextIndex::new().unwrap();
        ix.upsert([
            (1, 0, "땅콩이 첫 생일을 맞았군요", &[][..]),
            (2, 0, "호두는 세 살이에요", &[]),
            (3, 0, "아이가 학교에서 왔어요", &[]),
        ])
        .unwrap();
        ix.commit().unwrap();
        let keys = |q: &str| {
            let mut keys: Vec<u64> = ix.search(q, &[], 10).unwrap().iter().map(|h| h.0).collect();
            keys.sort();
            keys
        };
        // 땅콩은 meets 땅콩이; 살이에요 is left whole (살 is one syllable) and meets itself.
        assert_eq!(keys("땅콩은 몇 살이에요?"), [1, 2]);
        assert_eq!(keys("호두의 나이"), [2]);
        assert_eq!(keys("학교"), [3]);
        // A one-syllable stem is a word of its own: 아이 is not 아.
        assert!(keys("아").is_empty());
    }
}
