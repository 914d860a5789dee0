//! The extractor at work: woken by every batch that records an episode, it reads the
//! episodes its source has not read, one call at a time, in id order per namespace, and
//! writes what each answer gives as one batch with the mark that the episode was read.
//! It runs beside the writes and never in their way: a write only marks its namespace
//! for reading. A call that fails is tried again after a doubling wait, within a daily
//! budget of calls; an episode given up is read again after the next start. Two
//! extractors of one source (two nodes, a server and `ostrakon extract`) never both write:
//! the store refuses a second mark of one (episode, source).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use ostrakon_core::{Episode, EpisodeId, Event, Namespace};
use ostrakon_engine::{Change, StorageError, Store, WriteError};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::answer::{self, Completion};
use crate::client::Client;
use crate::settings::ExtractionSettings;
use crate::status::Status;

/// How one pass over a namespace goes: at most `limit` episodes, writing nothing with
/// `preview`, until `stop`.
#[derive(Clone, Copy)]
pub struct Pass<'a> {
    /// The most episodes read.
    pub limit: usize,
    /// Write nothing: each outcome is a preview of what would be written.
    pub preview: bool,
    /// Cancelled: the pass ends at once.
    pub stop: &'a CancellationToken,
}

impl<'a> Pass<'a> {
    /// Every episode left, written, until `stop`.
    pub fn all(stop: &'a CancellationToken) -> Self {
        Pass { limit: usize::MAX, preview: false, stop }
    }
}

/// Episodes fetched per look at a namespace.
const PAGE: usize = 16;

/// What became of one episode.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    /// Its facts were written (possibly none), with the mark that it was read.
    Written {
        /// Facts written.
        facts: usize,
        /// Facts the answer gave that were left out.
        left_out: usize,
    },
    /// The model declined; the episode is marked read, with no facts.
    Refused(String),
    /// This source had read it already (another extractor did meanwhile).
    AlreadyRead,
    /// Given up after its tries, with the last reason; nothing was written.
    GaveUp(String),
    /// A preview: the changes that would be written.
    Preview(Vec<Change>),
    /// The extractor is stopping.
    Stopped,
}

/// The extractor of a store: its client, settings, counters and what wakes it.
pub struct Extractor {
    settings: ExtractionSettings,
    client: Client,
    status: Arc<Status>,
    wake: Arc<Notify>,
    dirty: Arc<Mutex<BTreeSet<Namespace>>>,
    /// The UTC day (days since 1970) the day's calls are counted for.
    day: Mutex<i64>,
}

impl Extractor {
    /// An extractor for `settings`.
    pub fn new(settings: ExtractionSettings) -> Result<Arc<Extractor>, String> {
        let client = Client::new(&settings)?;
        let mut status = Status::new(settings.source(), settings.daily_budget);
        status.secret = settings.api_key.clone();
        let status = Arc::new(status);
        Ok(Arc::new(Extractor {
            settings,
            client,
            status,
            wake: Arc::new(Notify::new()),
            dirty: Arc::default(),
            day: Mutex::new(i64::MIN),
        }))
    }

    /// Its counters.
    pub fn status(&self) -> &Arc<Status> {
        &self.status
    }

    /// Its settings.
    pub fn settings(&self) -> &ExtractionSettings {
        &self.settings
    }

    /// Marks a namespace for reading and wakes the extractor.
    pub fn mark(&self, ns: Namespace) {
        self.dirty.lock().unwrap_or_else(PoisonError::into_inner).insert(ns);
        self.wake.notify_one();
    }

    /// Has every batch of `store` that records an episode in a namespace it reads mark
    /// that namespace. The listener holds the wake-up only, never the extractor.
    pub fn listen(&self, store: &Store) {
        let (wake, dirty, settings) =
            (Arc::clone(&self.wake), Arc::clone(&self.dirty), self.settings.clone());
        let status = Arc::clone(&self.status);
        store.on_commit(Arc::new(move |batch| {
            let recorded = batch.events.iter().filter(|e| matches!(e, Event::EpisodeRecorded(_))).count();
            if recorded > 0 && settings.covers(batch.namespace.as_str()) {
                // Counted now, and again exactly at the extractor's next look.
                status.more_pending(batch.namespace.as_str(), batch.seq.0, recorded as u64);
                dirty.lock().unwrap_or_else(PoisonError::into_inner).insert(batch.namespace.clone());
                wake.notify_one();
            }
        }));
    }

    /// Reads what is marked until `stop`: the namespaces the settings name from the
    /// start, every other one from its first episode after the start.
    pub async fn run(self: Arc<Self>, store: Arc<Store>, stop: CancellationToken) {
        for name in &self.settings.namespaces {
            if let Ok(ns) = Namespace::new("namespaces", name) {
                self.mark(ns);
            }
        }
        let mut cursors: HashMap<Namespace, EpisodeId> = HashMap::new();
        loop {
            let next = self.dirty.lock().unwrap_or_else(PoisonError::into_inner).pop_first();
            let Some(ns) = next else {
                tokio::select! {
                    () = self.wake.notified() => continue,
                    () = stop.cancelled() => return,
                }
            };
            let cursor = cursors.entry(ns.clone()).or_insert(EpisodeId(0));
            if self.read_namespace(&store, &ns, cursor, Pass::all(&stop), &mut |_, _| {}).await {
                return;
            }
        }
    }

    /// Reads up to the pass's `limit` episodes of `ns` past `cursor` that its source has
    /// not read, moving `cursor` past each one dealt with, and tells `each` what became of
    /// it. True when stopped.
    pub async fn read_namespace(
        &self,
        store: &Arc<Store>,
        ns: &Namespace,
        cursor: &mut EpisodeId,
        pass: Pass<'_>,
        each: &mut (dyn FnMut(&Episode, &Outcome) + Send),
    ) -> bool {
        let Pass { limit, preview, stop } = pass;
        let source = self.settings.source();
        let mut done = 0usize;
        while done < limit {
            let (store2, ns2, source2, after) = (Arc::clone(store), ns.clone(), source.clone(), *cursor);
            // The backlog is counted once a look, and when nothing is left (each episode
            // read then takes one off, and the commit listener adds new ones), not at every
            // page: a count scans it whole. The count says the batch it was taken at, so
            // that announcements of later batches are kept and earlier ones not doubled.
            let first = done == 0;
            let looked = tokio::task::spawn_blocking(move || {
                let page = store2.unextracted(&ns2, &source2, after, PAGE)?;
                let counted = match first || page.0.is_empty() {
                    true => Some(store2.unextracted_count(&ns2, &source2, after)?),
                    false => None,
                };
                Ok::<_, StorageError>((page, counted))
            })
            .await;
            // A namespace that cannot be read now (damaged, unreachable) is looked at again
            // later: nothing of it is read meanwhile.
            let Ok(Ok(((page, last), counted))) = looked else { return false };
            if let Some((pending, as_of)) = counted {
                self.status.set_pending(ns.as_str(), pending, as_of.0);
            }
            if page.is_empty() {
                *cursor = last;
                return false;
            }
            for episode in page.into_iter().take(limit - done) {
                let outcome = self.read_episode(store, ns, &episode, preview, stop).await;
                if outcome == Outcome::Stopped {
                    return true;
                }
                *cursor = episode.id;
                done += 1;
                self.status.one_less_pending(ns.as_str());
                each(&episode, &outcome);
            }
        }
        false
    }

    /// Reads one episode: calls until an answer, a refusal, a failure not worth another
    /// try, or the last try; then writes (unless `preview`).
    pub async fn read_episode(
        &self,
        store: &Arc<Store>,
        ns: &Namespace,
        episode: &Episode,
        preview: bool,
        stop: &CancellationToken,
    ) -> Outcome {
        let mut last = String::new();
        for attempt in 0..self.settings.max_attempts.max(1) {
            if attempt > 0 {
                Status::add(&self.status.retries, 1);
                tokio::select! {
                    () = tokio::time::sleep(self.settings.backoff_before(attempt)) => {}
                    () = stop.cancelled() => return Outcome::Stopped,
                }
            }
            if !self.spend_call(stop).await {
                return Outcome::Stopped;
            }
            Status::add(&self.status.in_flight, 1);
            let answer = tokio::select! {
                answer = self.client.complete(episode) => Some(answer),
                () = stop.cancelled() => None,
            };
            self.status.in_flight.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
            let outcome = match answer {
                None => return Outcome::Stopped,
                Some(Ok(completion)) => self.write(store, ns, episode, completion, preview).await,
                Some(Err(e)) => {
                    last = format!("namespace {ns}, episode {}: {e}", episode.id);
                    self.status.failure(last.clone());
                    if e.retryable() {
                        continue;
                    }
                    break;
                }
            };
            return outcome;
        }
        Status::add(&self.status.failed, 1);
        Outcome::GaveUp(last)
    }

    /// Writes what an answer gave (a refusal writes that the episode was read), leaving
    /// out a fact the store refuses and trying again.
    async fn write(
        &self,
        store: &Arc<Store>,
        ns: &Namespace,
        episode: &Episode,
        completion: Completion,
        preview: bool,
    ) -> Outcome {
        let (facts, skipped, refused) = match completion {
            Completion::Facts { facts, skipped } => (facts, skipped, None),
            Completion::Refused(why) => (Vec::new(), 0, Some(why)),
        };
        let (store, ns2, episode2) = (Arc::clone(store), ns.clone(), episode.clone());
        let (source, confidence) = (self.settings.source(), self.settings.confidence);
        let written = tokio::task::spawn_blocking(move || {
            // A namespace that cannot be read (damaged) is the read's error, not `Any`.
            let unread = std::cell::RefCell::new(None);
            let value_type = |p: &str| match store.predicate(&ns2, p) {
                Ok(d) => d.value_type,
                Err(e) => {
                    unread.borrow_mut().get_or_insert(e);
                    ostrakon_core::ValueType::default()
                }
            };
            let (mut changes, mut left_out) =
                answer::changes(&episode2, &facts, &source, confidence, &value_type);
            if let Some(e) = unread.into_inner() {
                return Err(WriteError::Storage(e));
            }
            left_out += skipped;
            if preview {
                return Ok((changes, left_out, true));
            }
            loop {
                match store.append(&ns2, changes.clone()) {
                    Ok(_) => return Ok((changes, left_out, false)),
                    // A fact refused (a predicate declared meanwhile with another type, a
                    // limit): left out, and the rest written.
                    Err(WriteError::InChange { change, error })
                        if change + 1 < changes.len()
                            && !matches!(*error, WriteError::AlreadyExtracted { .. }) =>
                    {
                        changes.remove(change);
                        left_out += 1;
                    }
                    Err(e) => return Err(e),
                }
            }
        })
        .await;
        match written {
            Ok(Ok((changes, _, true))) => Outcome::Preview(changes),
            Ok(Ok((changes, left_out, false))) => {
                let facts = changes.len() - 1;
                Status::add(&self.status.read, 1);
                Status::add(&self.status.facts, facts as u64);
                Status::add(&self.status.left_out, left_out as u64);
                match refused {
                    Some(why) => {
                        Status::add(&self.status.refused, 1);
                        Outcome::Refused(why)
                    }
                    None => Outcome::Written { facts, left_out },
                }
            }
            Ok(Err(e)) if matches!(e.root(), WriteError::AlreadyExtracted { .. }) => Outcome::AlreadyRead,
            Ok(Err(e)) => {
                let why =
                    format!("namespace {ns}, episode {}: writing what was found failed: {e}", episode.id);
                self.status.failure(why.clone());
                Status::add(&self.status.failed, 1);
                Outcome::GaveUp(why)
            }
            Err(_) => Outcome::GaveUp("the writing task failed".into()),
        }
    }

    /// Takes one call of today's budget, waiting for the next day (UTC) when it is spent.
    /// False when stopped meanwhile.
    async fn spend_call(&self, stop: &CancellationToken) -> bool {
        use std::sync::atomic::Ordering;
        loop {
            let now = chrono::Utc::now();
            let today = now.timestamp().div_euclid(86_400);
            {
                let mut day = self.day.lock().unwrap_or_else(PoisonError::into_inner);
                if *day != today {
                    *day = today;
                    self.status.calls_today.store(0, Ordering::Relaxed);
                }
                if self.status.calls_today.load(Ordering::Relaxed) < self.settings.daily_budget {
                    Status::add(&self.status.calls_today, 1);
                    Status::add(&self.status.calls, 1);
                    return true;
                }
            }
            // At most a minute at a time: the clock may jump.
            let midnight = (today + 1) * 86_400 - now.timestamp();
            let wait = std::time::Duration::from_secs(midnight.clamp(1, 60) as u64);
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = stop.cancelled() => return false,
            }
        }
    }
}
