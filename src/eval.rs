//! `ostrakon eval`: retrieval quality on a user's own questions. Each JSONL line names a
//! question and the external ids of the episodes that answer it; the command searches
//! episodes for each question and reports recall@k, hit@k, the share of questions with
//! all their evidence in the top k, and MRR, overall and per tag; and how long the
//! searches took (p50, p95). Before the questions of a namespace it closes the segments
//! of its idle threads, as the server's upkeep does.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use ostrakon_core::{Namespace, RecordKind, RecordRef};
use ostrakon_engine::{ReadAt, SearchQuery, Store, search::Component};
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

/// How to run an evaluation.
pub(crate) struct Options {
    /// Namespace of lines that name none.
    pub namespace: Option<String>,
    /// Print each question's first gold rank.
    pub verbose: bool,
    /// The deepest cut-off (recall@1, @5 and @k are printed).
    pub k: usize,
    /// Only questions with this tag.
    pub filter: Option<String>,
    /// The decay clock for every question (instead of each line's `at`).
    pub at: Option<String>,
    /// Where to write each question's ranked external ids (JSONL).
    pub dump: Option<PathBuf>,
    /// The lists and boosts left out.
    pub without: Without,
    /// Also build each question's context block within this many tokens and count the
    /// questions with an evidence episode in it.
    pub context: Option<usize>,
}

/// Longest time to wait for one namespace's indexes.
const INDEX_WAIT: Duration = Duration::from_secs(6 * 3600);

#[derive(Default, Clone)]
struct Score {
    questions: usize,
    recall: Vec<f64>,
    hit: Vec<f64>,
    all: f64,
    rr: f64,
}

impl Score {
    fn add(&mut self, cuts: &[usize], ranks: &[usize], gold: usize) {
        self.recall.resize(cuts.len(), 0.0);
        self.hit.resize(cuts.len(), 0.0);
        self.questions += 1;
        for (i, k) in cuts.iter().enumerate() {
            let found = ranks.iter().filter(|r| **r <= *k).count();
            self.recall[i] += found as f64 / gold as f64;
            self.hit[i] += if found > 0 { 1.0 } else { 0.0 };
            if i + 1 == cuts.len() && found == gold {
                self.all += 1.0;
            }
        }
        self.rr += ranks.iter().min().map_or(0.0, |r| 1.0 / *r as f64);
    }

    fn row(&self, name: &str, cuts: usize) -> String {
        let n = self.questions.max(1) as f64;
        let mut out = format!("{name:<16} {:>5}", self.questions);
        let zero = vec![0.0; cuts];
        for v in [&self.recall, &self.hit] {
            for x in if v.is_empty() { &zero } else { v } {
                out.push_str(&format!(" {:>7.3}", x / n));
            }
        }
        out.push_str(&format!(" {:>7.3} {:>7.3}", self.all / n, self.rr / n));
        out
    }
}

/// What `--without` leaves out: lists, and the speaker and time boosts.
#[derive(Default)]
pub(crate) struct Without {
    /// Lists left out of the fusion.
    pub lists: Vec<Component>,
    /// No speaker boost (`speaker`).
    pub speaker: bool,
    /// No time boost (`when`).
    pub when: bool,
    /// The time boost, when not the search's default (`--time-boost`).
    pub time_boost: Option<f64>,
}

/// Parses `time,vector-in-time,…` into search components and the boosts `speaker` and
/// `when`.
pub(crate) fn components(list: &str) -> anyhow::Result<Without> {
    let names = [
        ("text", Component::Text),
        ("text-in-context", Component::TextInContext),
        ("vector", Component::Vector),
        ("vector-in-context", Component::VectorInContext),
        ("graph", Component::Graph),
        ("time", Component::Time),
        ("vector-in-time", Component::VectorInTime),
        ("neighbour", Component::Neighbour),
        ("segment", Component::Segment),
    ];
    let mut without = Without::default();
    for name in list.split(',').map(|s| s.trim().to_lowercase().replace('_', "-")).filter(|s| !s.is_empty()) {
        match names.iter().find(|(n, _)| *n == name) {
            Some((_, c)) => without.lists.push(*c),
            None if name == "speaker" => without.speaker = true,
            None if name == "when" => without.when = true,
            None => {
                let known: Vec<&str> = names.iter().map(|(n, _)| *n).collect();
                bail!("no search component {name:?} (known: {}, speaker, when)", known.join(", "));
            }
        }
    }
    Ok(without)
}

/// Waits until the namespace's indexes hold all its batches, showing how far embedding is.
pub(crate) fn wait_for_index(store: &Store, ns: &Namespace) -> anyhow::Result<()> {
    let start = Instant::now();
    let tty = std::io::stderr().is_terminal();
    let mut shown = Instant::now() - Duration::from_secs(60);
    let mut drew = false;
    loop {
        let Some(state) = store.indexing(ns)? else { return Ok(()) };
        if state.indexed >= state.latest {
            if drew && tty {
                eprintln!();
            }
            return Ok(());
        }
        if start.elapsed() > INDEX_WAIT {
            bail!(
                "{ns}: indexes still at batch {} of {} after {:?}",
                state.indexed,
                state.latest,
                INDEX_WAIT
            );
        }
        let every = if tty { Duration::from_millis(200) } else { Duration::from_secs(10) };
        if shown.elapsed() >= every && start.elapsed() > Duration::from_millis(500) {
            let line = if state.to_embed > 0 {
                let width = 30;
                let filled = (state.embedded * width / state.to_embed.max(1)) as usize;
                format!(
                    "indexing {ns}: [{}{}] {}/{} texts embedded, {:.0} s",
                    "#".repeat(filled),
                    " ".repeat(width as usize - filled),
                    state.embedded,
                    state.to_embed,
                    start.elapsed().as_secs_f64()
                )
            } else {
                format!(
                    "indexing {ns}: batch {} of {}, {:.0} s",
                    state.indexed,
                    state.latest,
                    start.elapsed().as_secs_f64()
                )
            };
            if tty {
                eprint!("\r{line}");
                let _ = std::io::stderr().flush();
            } else {
                eprintln!("{line}");
            }
            drew = true;
            shown = Instant::now();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Runs the questions of `file` against `store`; prints the table. Returns false when
/// some line could not be evaluated.
pub(crate) fn eval(store: &Store, file: &Path, options: &Options) -> anyhow::Result<bool> {
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let mut cuts: Vec<usize> = [1, 5, options.k].into_iter().filter(|c| *c <= options.k).collect();
    cuts.sort_unstable();
    cuts.dedup();
    let depth = options.k.max(1);
    let mut dump = match &options.dump {
        Some(path) => Some(std::io::BufWriter::new(
            std::fs::File::create(path).with_context(|| format!("cannot write {}", path.display()))?,
        )),
        None => None,
    };
    let mut overall = Score::default();
    let mut by_tag: BTreeMap<String, Score> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut in_block = (0usize, 0usize);
    let mut ready: Vec<Namespace> = Vec::new();
    let mut latencies: Vec<Duration> = Vec::new();
    let known = store.namespaces();
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
        if let Some(tag) = &options.filter
            && !line.tags.contains(tag)
        {
            continue;
        }
        let Some(ns_name) = line.namespace.as_deref().or(options.namespace.as_deref()) else {
            problems.push(format!("{where_}: no namespace (give one in the line or --namespace)"));
            continue;
        };
        let ns = match Namespace::new("namespace", ns_name) {
            Ok(ns) => ns,
            Err(e) => {
                problems.push(format!("{where_}: {e}"));
                continue;
            }
        };
        if !known.contains(&ns) {
            problems.push(format!("{where_}: no namespace {ns_name:?} in the data directory"));
            continue;
        }
        if !ready.contains(&ns) {
            wait_for_index(store, &ns)?;
            // As the server's upkeep would have: threads idle for longer than the
            // namespace's gap close their segments (the `segment` list ranks in them).
            store.segment(&ns, false).with_context(|| format!("cannot segment {ns_name}"))?;
            ready.push(ns.clone());
        }
        let mut gold = Vec::new();
        for ext in &line.gold {
            match store.episode_by_external_id(&ns, ext)? {
                Some(id) => gold.push(id),
                None => problems.push(format!("{where_}: no episode with external id {ext:?} in {ns_name}")),
            }
        }
        if gold.is_empty() {
            continue;
        }
        let mut read = ReadAt::latest();
        if let Some(at) = options.at.as_ref().or(line.at.as_ref()) {
            match store.parse_time(&ns, "at", at) {
                Ok(t) => read.at = Some(t),
                Err(e) => {
                    problems.push(format!("{where_}: {e}"));
                    continue;
                }
            }
        }
        let query = SearchQuery {
            text: Some(line.question.clone()),
            kinds: vec![RecordKind::Episode],
            limit: depth,
            without: options.without.lists.clone(),
            speaker_boost: if options.without.speaker {
                0.0
            } else {
                ostrakon_engine::search::DEFAULT_SPEAKER_BOOST
            },
            time_boost: match &options.without {
                w if w.when => 0.0,
                w => w.time_boost.unwrap_or(ostrakon_engine::search::DEFAULT_TIME_BOOST),
            },
            ..SearchQuery::default()
        };
        let started = Instant::now();
        let searched = store.at(&ns, read).and_then(|r| r.search(&query));
        latencies.push(started.elapsed());
        let found = match searched {
            Ok(found) => found,
            Err(e) => {
                problems.push(format!("{where_}: search failed: {e}"));
                continue;
            }
        };
        let ranks: Vec<usize> = found
            .value
            .hits
            .iter()
            .enumerate()
            .filter(|(_, h)| matches!(h.record, RecordRef::Episode(id) if gold.contains(&id)))
            .map(|(i, _)| i + 1)
            .collect();
        if options.verbose {
            println!(
                "{:<4} {ns_name:<16} {:?} {}",
                ranks.first().map_or("-".into(), |r| r.to_string()),
                line.gold,
                line.question
            );
        }
        if let Some(out) = dump.as_mut() {
            let reader = store.reader(&ns, found.basis);
            let mut ranked: Vec<serde_json::Value> = Vec::new();
            for h in &found.value.hits {
                ranked.push(match h.record {
                    RecordRef::Episode(id) => reader
                        .episode_at(id)?
                        .and_then(|(e, _)| e.external_id)
                        .map_or_else(|| serde_json::json!(id.0.to_string()), serde_json::Value::from),
                    _ => serde_json::Value::Null,
                });
            }
            // Where each evidence episode that was found stands: its rank and its rank
            // in each list that found it (to tell a miss that fusion could mend from one
            // that no list finds).
            let evidence: Vec<serde_json::Value> = found
                .value
                .hits
                .iter()
                .enumerate()
                .filter(|(_, h)| matches!(h.record, RecordRef::Episode(id) if gold.contains(&id)))
                .map(|(i, h)| {
                    let lists: serde_json::Map<String, serde_json::Value> = h
                        .explanation
                        .components
                        .iter()
                        .map(|c| (format!("{:?}", c.component), serde_json::json!(c.rank)))
                        .collect();
                    serde_json::json!({ "id": ranked[i], "rank": i + 1, "lists": lists })
                })
                .collect();
            let row = serde_json::json!({
                "namespace": ns_name, "question": line.question, "tags": line.tags,
                "gold": line.gold, "ranks": ranks, "ranked": ranked, "evidence": evidence,
            });
            writeln!(out, "{row}")?;
        }
        if let Some(budget) = options.context {
            match store.at(&ns, read).and_then(|r| r.context(&line.question, budget, &SearchQuery::default()))
            {
                Ok(block) => {
                    in_block.0 += 1;
                    in_block.1 += usize::from(block.value.episodes.iter().any(|e| gold.contains(&e.id)));
                }
                Err(e) => problems.push(format!("{where_}: context failed: {e}")),
            }
        }
        overall.add(&cuts, &ranks, gold.len());
        for tag in &line.tags {
            by_tag.entry(tag.clone()).or_default().add(&cuts, &ranks, gold.len());
        }
    }
    if let Some(mut out) = dump {
        out.flush()?;
    }
    if overall.questions == 0 && problems.is_empty() {
        bail!("{} holds no questions", file.display());
    }
    let mut head = format!("{:<16} {:>5}", "", "n");
    for what in ["R", "hit"] {
        for k in &cuts {
            head.push_str(&format!(" {:>7}", format!("{what}@{k}")));
        }
    }
    head.push_str(&format!(" {:>7} {:>7}", format!("all@{}", cuts[cuts.len() - 1]), "MRR"));
    println!("{head}");
    println!("{}", overall.row("all", cuts.len()));
    for (tag, score) in &by_tag {
        println!("{}", score.row(tag, cuts.len()));
    }
    if !latencies.is_empty() {
        latencies.sort_unstable();
        let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e3;
        println!("search latency: p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms", at(0.5), at(0.95), at(1.0));
    }
    if let (Some(budget), (n, found)) = (options.context, in_block)
        && n > 0
    {
        println!(
            "evidence in a {budget}-token context block: {found} of {n} ({:.3})",
            found as f64 / n as f64
        );
    }
    for p in &problems {
        eprintln!("ostrakon eval: {p}");
    }
    Ok(problems.is_empty())
}
