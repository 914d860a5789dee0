//! The typed reads: each pinned at a read point, answered from the namespace's index with
//! the basis it was computed from. Nothing of the index leaves the engine.

use ostrakon_core::{
    Counts, EntityFilter, EntityId, EntityView, EpisodeCursor, EpisodeFilter, FactFilter, FactView, Fading,
    Namespace, Neighborhood, Page, Recallable, RecordKind, RecordRef, Scope, Seq, SnapshotCursor,
    SnapshotPage, TimeZone, Timestamp, TraceState, View,
};
use ostrakon_index::NamespaceIndex;

use crate::error::read::ReadError;
use crate::error::storage::StorageError;
use crate::limits::MAX_DEPTH;
use crate::read::point::{Answer, Basis, KnownAt, ReadAt, check_limit, check_page, check_window};
use crate::store::Store;
use crate::sync::read;

impl Store {
    /// The read point `at` made concrete: the seq it sees, its valid time and its decay
    /// clock, each fixed now. A request pins its point once and resolves every nested
    /// read at the result, so a batch committed while it runs is not seen by any part.
    pub fn pin(&self, ns: &Namespace, at: ReadAt) -> Result<ReadAt, ReadError> {
        Ok(self.basis(ns, at)?.point())
    }

    /// What a read at `at` would be computed from: its seq, times and clock.
    pub fn basis(&self, ns: &Namespace, at: ReadAt) -> Result<Basis, ReadError> {
        Ok(self.read_basis(ns, at, |_, _| ())?.basis)
    }

    /// Runs `f` on a namespace's index pinned at `at`, and wraps its result with the basis.
    pub(crate) fn read_at<T>(
        &self,
        ns: &Namespace,
        at: ReadAt,
        f: impl FnOnce(&NamespaceIndex, View) -> T,
    ) -> Result<Answer<T>, ReadError> {
        self.read_basis(ns, at, |index, basis| {
            f(index, View { valid_at: basis.valid_at, known_at: basis.known_at })
        })
    }

    /// [`Store::read_at`], handing `f` the whole basis (the decay clock included).
    pub(crate) fn read_search<T>(
        &self,
        ns: &Namespace,
        at: ReadAt,
        f: impl FnOnce(&NamespaceIndex, &Basis) -> T,
    ) -> Result<Answer<T>, ReadError> {
        self.read_basis(ns, at, f)
    }

    fn read_basis<T>(
        &self,
        ns: &Namespace,
        at: ReadAt,
        f: impl FnOnce(&NamespaceIndex, &Basis) -> T,
    ) -> Result<Answer<T>, ReadError> {
        crate::interrupt::check("a read")?;
        let mut shard = self.shard(ns)?;
        if let (KnownAt::Seq(seq), Some(open)) = (at.known_at, &shard) {
            // Written on another node: wait until it is applied here.
            self.await_seq(open, seq)?;
            if open.retired.load(std::sync::atomic::Ordering::SeqCst) {
                // What it waited for was an erasure: read the namespace opened again.
                shard = self.shard(ns)?;
            }
        }
        let clock = self.now();
        let valid_at = at.valid_at.unwrap_or(clock);
        let guard = shard.as_ref().map(|s| read(&s.index));
        // An empty index only for a namespace that does not exist: building one for every
        // read cost about 1 % of a point read's CPU.
        let empty;
        let index = match guard.as_deref() {
            Some(index) => index,
            None => {
                empty = NamespaceIndex::new();
                &empty
            }
        };
        let latest = index.last_seq();
        let known_at = match at.known_at {
            KnownAt::Latest => latest,
            // Pinned before the namespace was dropped: what it asks about is gone.
            KnownAt::Seq(s) if s > latest && self.was_dropped(ns) => {
                return Err(StorageError::NamespaceDropped { namespace: ns.to_string() }.into());
            }
            KnownAt::Seq(s) if s > latest => return Err(ReadError::NotYetKnown { requested: s, latest }),
            KnownAt::Seq(s) => s,
            KnownAt::Time(t) => index.seq_at(t),
        };
        let at = at.at.unwrap_or(clock);
        let basis = Basis { known_at, system_time: index.system_time(known_at), valid_at, clock, at };
        let value = f(index, &basis);
        Ok(Answer { basis, value })
    }

    /// `Reader::facts`, positional.
    pub(crate) fn facts(
        &self,
        ns: &Namespace,
        filter: &FactFilter,
        at: ReadAt,
        scope: Scope,
    ) -> Result<Answer<Vec<FactView>>, ReadError> {
        self.read_at(ns, at, |index, view| index.facts(filter, view, scope))
    }

    /// `Reader::history`, positional.
    pub(crate) fn history(
        &self,
        ns: &Namespace,
        subject: EntityId,
        predicate: &str,
        at: ReadAt,
    ) -> Result<Answer<Vec<FactView>>, ReadError> {
        self.read_at(ns, at, |index, view| index.history(subject, predicate, view))
    }

    /// `Reader::entity`, positional.
    pub(crate) fn entity(
        &self,
        ns: &Namespace,
        id: EntityId,
        at: ReadAt,
    ) -> Result<Answer<Option<EntityView>>, ReadError> {
        self.read_at(ns, at, |index, view| index.entity_at(id, view))
    }

    /// `Reader::snapshot`, positional.
    pub(crate) fn snapshot(
        &self,
        ns: &Namespace,
        at: ReadAt,
        after: Option<SnapshotCursor>,
        limit: usize,
    ) -> Result<Answer<SnapshotPage>, ReadError> {
        check_page(limit)?;
        self.read_at(ns, at, |index, view| index.snapshot(view, Scope::InForce, after, limit))
    }

    /// `Reader::all_facts`, positional.
    pub(crate) fn all_facts(
        &self,
        ns: &Namespace,
        at: ReadAt,
        after: Option<SnapshotCursor>,
        limit: usize,
    ) -> Result<Answer<SnapshotPage>, ReadError> {
        check_page(limit)?;
        self.read_at(ns, at, |index, view| index.snapshot(view, Scope::All, after, limit))
    }

    /// `Reader::neighbors`, positional.
    pub(crate) fn neighbors(
        &self,
        ns: &Namespace,
        start: EntityId,
        depth: u32,
        at: ReadAt,
    ) -> Result<Answer<Neighborhood>, ReadError> {
        check_limit("depth", u64::from(depth), u64::from(MAX_DEPTH))?;
        self.read_at(ns, at, |index, view| index.neighbors(start, depth, view))
    }

    /// `Reader::trace`, positional.
    pub(crate) fn trace(
        &self,
        ns: &Namespace,
        record: RecordRef,
        at: ReadAt,
    ) -> Result<Answer<Option<TraceState>>, ReadError> {
        self.read_basis(ns, at, |index, basis| {
            index.trace(record, basis.known_at).map(|(trace, profile)| trace.state(&profile, basis.at))
        })
    }

    /// `Reader::recall_history`, positional.
    pub(crate) fn recall_history(
        &self,
        ns: &Namespace,
        record: RecordRef,
        at: ReadAt,
    ) -> Result<Answer<Vec<Timestamp>>, ReadError> {
        self.read_basis(ns, at, |index, basis| {
            index
                .trace(record, basis.known_at)
                .map(|(trace, _)| trace.recalls.into_iter().filter(|t| *t <= basis.at).collect())
                .unwrap_or_default()
        })
    }

    /// `Reader::recallable`, positional.
    pub(crate) fn recallable(
        &self,
        ns: &Namespace,
        at: ReadAt,
        kinds: &[RecordKind],
        limit: usize,
    ) -> Result<Answer<Vec<Recallable>>, ReadError> {
        check_page(limit)?;
        self.read_basis(ns, at, |index, basis| {
            let view = View { valid_at: basis.valid_at, known_at: basis.known_at };
            index.recallable(view, basis.at, kinds, limit)
        })
    }

    /// `Reader::forecast`, positional.
    pub(crate) fn forecast(
        &self,
        ns: &Namespace,
        from: Timestamp,
        to: Timestamp,
        at: ReadAt,
        kinds: &[RecordKind],
    ) -> Result<Answer<Vec<Fading>>, ReadError> {
        check_window("from..to", Some(from), Some(to))?;
        self.read_at(ns, at, |index, view| index.forecast(view, from, to, kinds))
    }

    /// `Reader::entities`, positional.
    pub(crate) fn entities(
        &self,
        ns: &Namespace,
        filter: &EntityFilter,
        at: ReadAt,
        after: Option<EntityId>,
        limit: usize,
    ) -> Result<Answer<Page<(Seq, ostrakon_core::Entity)>>, ReadError> {
        check_page(limit)?;
        self.read_at(ns, at, |index, view| index.entities(filter, view.known_at, after, limit))
    }

    /// `Reader::episodes`, positional.
    pub(crate) fn episodes(
        &self,
        ns: &Namespace,
        filter: &EpisodeFilter,
        at: ReadAt,
        after: Option<EpisodeCursor>,
        limit: usize,
    ) -> Result<Answer<Page<(Seq, ostrakon_core::Episode)>>, ReadError> {
        check_page(limit)?;
        check_window("from..to", filter.from, filter.to)?;
        self.read_at(ns, at, |index, view| index.episodes(filter, view.known_at, after, limit))
    }

    /// Runs `f` on a namespace's latest index: for tests and tools that look inside
    /// (feature `inspect`). The protocol crates use the typed reads, so that nothing of
    /// the index crosses the engine's API.
    #[cfg(feature = "inspect")]
    pub fn inspect<T>(
        &self,
        ns: &Namespace,
        f: impl FnOnce(&NamespaceIndex) -> T,
    ) -> Result<T, StorageError> {
        self.with_index(ns, f)
    }

    /// Runs `f` on a namespace's latest index (lookups by name, counts, configuration). A
    /// namespace with no log reads as empty; a damaged or unreachable one is an error,
    /// never an empty answer.
    pub(crate) fn with_index<T>(
        &self,
        ns: &Namespace,
        f: impl FnOnce(&NamespaceIndex) -> T,
    ) -> Result<T, StorageError> {
        Ok(match self.shard(ns)? {
            Some(shard) => f(&read(&shard.index)),
            None => f(&NamespaceIndex::new()),
        })
    }

    /// The namespace's time zone (UTC until configured).
    pub fn time_zone(&self, ns: &Namespace) -> Result<TimeZone, StorageError> {
        self.with_index(ns, |index| index.config().time_zone)
    }

    /// Reads a time as a client wrote it (RFC 3339, a local date-time, a date or a
    /// partial date), placing dates in the namespace's time zone.
    pub fn parse_time(&self, ns: &Namespace, field: &str, value: &str) -> Result<Timestamp, ReadError> {
        Ok(Timestamp::parse(field, value, &self.time_zone(ns)?)?)
    }

    /// Record counts of a namespace.
    pub fn counts(&self, ns: &Namespace) -> Result<Counts, StorageError> {
        self.with_index(ns, NamespaceIndex::counts)
    }

    /// Size of a namespace's log in bytes.
    pub fn log_size(&self, ns: &Namespace) -> Result<u64, StorageError> {
        Ok(self.shard(ns)?.map_or(0, |s| s.log.size_bytes()))
    }
}

impl Store {
    /// `Reader::topic_network`, positional.
    pub(crate) fn topic_network(
        &self,
        ns: &ostrakon_core::Namespace,
        at: crate::read::point::ReadAt,
    ) -> Result<crate::read::point::Answer<crate::read::topics::TopicNetwork>, crate::error::read::ReadError>
    {
        let answer = self.read_search(ns, at, |index, basis| {
            crate::read::topics::network(index, basis.known_at, basis.at)
        })?;
        Ok(crate::read::point::Answer { basis: answer.basis, value: answer.value? })
    }
}
