//! `mnemo eval`: retrieval quality on a user's own questions. Each JSONL line names a
//! question and the external ids of the episodes that answer it; the command searches
//! episodes for each question and reports recall@k, hit@k and MRR, overall and per tag.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, bail};
use mnemo_core::{Namespace, RecordKind, RecordRef};
use mnemo_engine::{ReadAt, SearchQuery, Store};
use serde::Deserialize;

/// One question.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    namespace: Option<String>,
    question: String,
    /// External ids of the episodes that answer it.
    gold: Vec<String>,
    /// The decay clock to search at (default: now).
    at: Option<String>,
    #[serde(default)]
    tags: Vec<String>,
    /// For people reading the file.
    #[serde(default)]
    #[allow(dead_code)]
    answer: Option<serde_json::Value>,
}

const CUTS: [usize; 3] = [1, 5, 10];

#[derive(Default, Clone)]
struct Score {
    questions: usize,
    recall: [f64; 3],
    hit: [f64; 3],
    rr: f64,
}

impl Score {
    fn add(&mut self, ranks: &[usize], gold: usize) {
        self.questions += 1;
        for (i, k) in CUTS.iter().enumerate() {
            let found = ranks.iter().filter(|r| **r <= *k).count();
            self.recall[i] += found as f64 / gold as f64;
            self.hit[i] += if found > 0 { 1.0 } else { 0.0 };
        }
        self.rr += ranks.iter().min().map_or(0.0, |r| 1.0 / *r as f64);
    }

    fn row(&self, name: &str) -> String {
        let n = self.questions.max(1) as f64;
        format!(
            "{name:<16} {:>5} {:>7.3} {:>7.3} {:>7.3} {:>7.3} {:>7.3} {:>7.3} {:>7.3}",
            self.questions,
            self.recall[0] / n,
            self.recall[1] / n,
            self.recall[2] / n,
            self.hit[0] / n,
            self.hit[1] / n,
            self.hit[2] / n,
            self.rr / n
        )
    }
}

/// Runs the questions of `file` against `store`; prints the table. Returns false when
/// some line could not be evaluated.
pub fn eval(store: &Store, file: &Path, namespace: Option<&str>, verbose: bool) -> anyhow::Result<bool> {
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let mut overall = Score::default();
    let mut by_tag: BTreeMap<String, Score> = BTreeMap::new();
    let mut problems = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let where_ = format!("{}:{}", file.display(), n + 1);
        let line: Line = match serde_json::from_str(raw) {
            Ok(l) => l,
            Err(e) => {
                problems.push(format!("{where_}: {e}"));
                continue;
            }
        };
        let Some(ns_name) = line.namespace.as_deref().or(namespace) else {
            problems.push(format!("{where_}: no namespace (give one in the line or --namespace)"));
            continue;
        };
        let ns = Namespace::new("namespace", ns_name)?;
        if !store.namespaces().contains(&ns) {
            problems.push(format!("{where_}: no namespace {ns_name:?} in the data directory"));
            continue;
        }
        let mut gold = Vec::new();
        for ext in &line.gold {
            match store.episode_by_external_id(&ns, ext) {
                Some(id) => gold.push(id),
                None => problems.push(format!("{where_}: no episode with external id {ext:?} in {ns_name}")),
            }
        }
        if gold.is_empty() {
            continue;
        }
        let mut read = ReadAt::latest();
        if let Some(at) = &line.at {
            read.at = Some(store.parse_time(&ns, "at", at)?);
        }
        let query = SearchQuery {
            text: Some(line.question.clone()),
            kinds: vec![RecordKind::Episode],
            limit: *CUTS.last().unwrap_or(&10),
            ..SearchQuery::default()
        };
        let found = store.search(&ns, &query, read)?;
        let ranks: Vec<usize> = found
            .value
            .hits
            .iter()
            .enumerate()
            .filter(|(_, h)| matches!(h.record, RecordRef::Episode(id) if gold.contains(&id)))
            .map(|(i, _)| i + 1)
            .collect();
        if verbose {
            println!(
                "{:<4} {ns_name:<16} {:?} {}",
                ranks.first().map_or("-".into(), |r| r.to_string()),
                line.gold,
                line.question
            );
        }
        overall.add(&ranks, gold.len());
        for tag in &line.tags {
            by_tag.entry(tag.clone()).or_default().add(&ranks, gold.len());
        }
    }
    if overall.questions == 0 && problems.is_empty() {
        bail!("{} holds no questions", file.display());
    }
    println!(
        "{:<16} {:>5} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}",
        "", "n", "R@1", "R@5", "R@10", "hit@1", "hit@5", "hit@10", "MRR"
    );
    println!("{}", overall.row("all"));
    for (tag, score) in &by_tag {
        println!("{}", score.row(tag));
    }
    for p in &problems {
        eprintln!("mnemo eval: {p}");
    }
    Ok(problems.is_empty())
}
