//! A reader handle: one namespace at one pinned read point, with the typed reads. Every
//! read through a reader answers at the same basis, as every nested field of a request
//! does, without passing the namespace and the read point to each call.

use ostrakon_core::{
    Entity, EntityFilter, EntityId, EntityView, Episode, EpisodeCursor, EpisodeFilter, FactFilter, FactView,
    Namespace, Neighborhood, Page, Scope, Seq,
};

use crate::error::EngineError;
use crate::read_point::{Answer, Basis, ReadAt};
use crate::retrieve::query::{SearchQuery, SearchResult};
use crate::store::Store;

/// A namespace read at one pinned point (see [`Store::at`]).
#[derive(Clone)]
pub struct Reader<'s> {
    store: &'s Store,
    ns: Namespace,
    at: ReadAt,
}

impl Store {
    /// Pins `at` in `ns` once (its seq, valid time and decay clock fixed now) and returns a
    /// reader whose every read answers there: a batch committed meanwhile is seen by none.
    ///
    /// ```
    /// use ostrakon_engine::core::{FactFilter, Interval, Namespace, Polarity, Scope, TimeZone, Timestamp};
    /// use ostrakon_engine::{Change, EntityRef, NewFact, ObjectRef, ReadAt, Store};
    ///
    /// let store = Store::in_memory();
    /// let ns = Namespace::new("namespace", "demo")?;
    /// let lives_in = |city: &str, from: &str| -> Result<Change, Box<dyn std::error::Error>> {
    ///     let from = Timestamp::parse("validFrom", from, &TimeZone::Utc)?;
    ///     Ok(Change::AssertFact(NewFact {
    ///         subject: EntityRef::Name("Ada".into()),
    ///         predicate: "livesIn".into(),
    ///         object: ObjectRef::Entity(EntityRef::Name(city.into())),
    ///         valid: Interval::new("validFrom", from, None)?,
    ///         confidence: None,
    ///         polarity: Polarity::default(),
    ///         provenance: Vec::new(),
    ///         supersedes: None,
    ///         importance: None,
    ///         correction: false,
    ///     }))
    /// };
    /// store.append(&ns, vec![lives_in("Lyon", "2008-01-01T00:00:00Z")?])?;
    /// let reader = store.at(&ns, ReadAt::latest())?;
    /// store.append(&ns, vec![lives_in("Berlin", "2014-01-01T00:00:00Z")?])?;
    /// // The reader was pinned before the second batch: it sees one fact.
    /// let facts = reader.facts(&FactFilter::default(), Scope::All)?;
    /// assert_eq!(facts.value.len(), 1);
    /// assert_eq!(facts.basis.known_at.0, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn at(&self, ns: &Namespace, at: ReadAt) -> Result<Reader<'_>, EngineError> {
        Ok(Reader { store: self, ns: ns.clone(), at: self.pin(ns, at)? })
    }
}

impl Reader<'_> {
    /// The namespace read.
    pub fn namespace(&self) -> &Namespace {
        &self.ns
    }

    /// The pinned read point (concrete seq, valid time and decay clock).
    pub fn point(&self) -> ReadAt {
        self.at
    }

    /// What every answer of this reader is computed from.
    pub fn basis(&self) -> Result<Basis, EngineError> {
        self.store.basis(&self.ns, self.at)
    }

    /// [`Store::facts`] at this point.
    pub fn facts(&self, filter: &FactFilter, scope: Scope) -> Result<Answer<Vec<FactView>>, EngineError> {
        self.store.facts(&self.ns, filter, self.at, scope)
    }

    /// [`Store::history`] at this point.
    pub fn history(&self, subject: EntityId, predicate: &str) -> Result<Answer<Vec<FactView>>, EngineError> {
        self.store.history(&self.ns, subject, predicate, self.at)
    }

    /// [`Store::entity`] at this point.
    pub fn entity(&self, id: EntityId) -> Result<Answer<Option<EntityView>>, EngineError> {
        self.store.entity(&self.ns, id, self.at)
    }

    /// [`Store::entities`] at this point.
    pub fn entities(
        &self,
        filter: &EntityFilter,
        after: Option<EntityId>,
        limit: usize,
    ) -> Result<Answer<Page<(Seq, Entity)>>, EngineError> {
        self.store.entities(&self.ns, filter, self.at, after, limit)
    }

    /// [`Store::episodes`] at this point.
    pub fn episodes(
        &self,
        filter: &EpisodeFilter,
        after: Option<EpisodeCursor>,
        limit: usize,
    ) -> Result<Answer<Page<(Seq, Episode)>>, EngineError> {
        self.store.episodes(&self.ns, filter, self.at, after, limit)
    }

    /// [`Store::neighbors`] at this point.
    pub fn neighbors(&self, start: EntityId, depth: u32) -> Result<Answer<Neighborhood>, EngineError> {
        self.store.neighbors(&self.ns, start, depth, self.at)
    }

    /// [`Store::search`] at this point.
    pub fn search(&self, query: &SearchQuery) -> Result<Answer<SearchResult>, EngineError> {
        self.store.search(&self.ns, query, self.at)
    }
}
