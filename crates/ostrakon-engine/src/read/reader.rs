//! A reader handle: one namespace at one pinned read point, with the typed reads. Every
//! read through a reader answers at the same basis, as every nested field of a request
//! does, without passing the namespace and the read point to each call.

use ostrakon_core::{
    Entity, EntityFilter, EntityId, EntityView, Episode, EpisodeCursor, EpisodeFilter, EpisodeId, FactFilter,
    FactId, FactView, MentionSource, Namespace, Neighborhood, Page, RecordRef, Scope, Seq, Tier,
    TierSettings,
};
use ostrakon_index::{NamespaceIndex, Placement, Proposal};

use crate::error::read::ReadError;
use crate::read::point::{Answer, Basis, ReadAt};
use crate::retrieve::query::{SearchQuery, SearchResult};
use crate::store::Store;

/// A namespace read at one pinned point (see [`Store::at`]).
#[derive(Clone, Copy)]
pub struct Reader<'s> {
    store: &'s Store,
    ns: &'s Namespace,
    basis: Basis,
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
    pub fn at<'s>(&'s self, ns: &'s Namespace, at: ReadAt) -> Result<Reader<'s>, ReadError> {
        Ok(self.reader(ns, self.basis(ns, at)?))
    }

    /// A reader at a basis this store reported before (a request that pinned its point
    /// once reads every nested field there).
    pub fn reader<'s>(&'s self, ns: &'s Namespace, basis: Basis) -> Reader<'s> {
        Reader { store: self, ns, basis }
    }
}

impl<'s> Reader<'s> {
    /// The namespace read.
    pub fn namespace(&self) -> &'s Namespace {
        self.ns
    }

    /// The pinned read point (concrete seq, valid time and decay clock).
    pub fn point(&self) -> ReadAt {
        self.basis.point()
    }

    /// What every answer of this reader is computed from.
    pub fn basis(&self) -> Basis {
        self.basis
    }

    /// The batch this reader reads after.
    fn seq(&self) -> Seq {
        self.basis.known_at
    }

    /// Runs `f` on the namespace's index (read at [`Reader::seq`] by `f`).
    fn index<T>(&self, f: impl FnOnce(&NamespaceIndex) -> T) -> Result<T, ReadError> {
        Ok(self.store.with_index(self.ns, f)?)
    }

    /// [`Store::facts`] at this point.
    /// ```
    /// use ostrakon_engine::views::{FactFilter, Scope};
    #[doc = include_str!("../../doc/ada_moves.txt")]
    /// let ada_facts = FactFilter { subject: Some(ada), ..FactFilter::default() };
    /// // In 2010, as known now: Lyon. Now: Berlin.
    /// let in_2010 = store.at(&ns, ReadAt::valid(time("2010-06-01")?))?;
    /// let then = in_2010.facts(&ada_facts, Scope::InForce)?.value;
    /// let now = store.at(&ns, ReadAt::latest())?.facts(&ada_facts, Scope::InForce)?.value;
    /// assert_eq!((then.len(), now.len()), (1, 1));
    /// assert_ne!(then[0].fact.object, now[0].fact.object);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn facts(&self, filter: &FactFilter, scope: Scope) -> Result<Answer<Vec<FactView>>, ReadError> {
        self.store.facts(self.ns, filter, self.point(), scope)
    }

    /// [`Store::history`] at this point.
    /// ```
    #[doc = include_str!("../../doc/ada_moves.txt")]
    /// // Every value the slot had, whichever holds at the reader's point.
    /// let history = store.at(&ns, ReadAt::latest())?.history(ada, "livesIn")?;
    /// assert_eq!(history.value.len(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn history(&self, subject: EntityId, predicate: &str) -> Result<Answer<Vec<FactView>>, ReadError> {
        self.store.history(self.ns, subject, predicate, self.point())
    }

    /// [`Store::entity`] at this point.
    /// ```
    #[doc = include_str!("../../doc/ada_moves.txt")]
    /// let view = store.at(&ns, ReadAt::latest())?.entity(ada)?.value.expect("Ada is known");
    /// assert_eq!(view.entity.name, "Ada");
    /// // Its facts in force now: Berlin only.
    /// assert_eq!(view.facts.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn entity(&self, id: EntityId) -> Result<Answer<Option<EntityView>>, ReadError> {
        self.store.entity(self.ns, id, self.point())
    }

    /// [`Store::entities`] at this point.
    /// ```
    /// use ostrakon_engine::views::EntityFilter;
    #[doc = include_str!("../../doc/ada_moves.txt")]
    /// let reader = store.at(&ns, ReadAt::latest())?;
    /// let named = EntityFilter { name: Some("ada".into()), kind: None };
    /// let page = reader.entities(&named, None, 10)?.value;
    /// assert_eq!((page.items.len(), page.more), (1, false));
    /// // Ada, Lyon and Berlin, two at a time.
    /// let first_two = reader.entities(&EntityFilter::default(), None, 2)?.value;
    /// assert!(first_two.more);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn entities(
        &self,
        filter: &EntityFilter,
        after: Option<EntityId>,
        limit: usize,
    ) -> Result<Answer<Page<(Seq, Entity)>>, ReadError> {
        self.store.entities(self.ns, filter, self.point(), after, limit)
    }

    /// [`Store::episodes`] at this point.
    /// ```
    /// use ostrakon_engine::views::EpisodeFilter;
    #[doc = include_str!("../../doc/ada_moves.txt")]
    /// let chat = EpisodeFilter { thread: Some("chat".into()), ..EpisodeFilter::default() };
    /// let page = store.at(&ns, ReadAt::latest())?.episodes(&chat, None, 10)?.value;
    /// assert_eq!(page.items[0].1.text, "Ada moved to Berlin.");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn episodes(
        &self,
        filter: &EpisodeFilter,
        after: Option<EpisodeCursor>,
        limit: usize,
    ) -> Result<Answer<Page<(Seq, Episode)>>, ReadError> {
        self.store.episodes(self.ns, filter, self.point(), after, limit)
    }

    /// [`Store::neighbors`] at this point.
    /// ```
    #[doc = include_str!("../../doc/ada_moves.txt")]
    /// // One step from Ada along the facts in force: Berlin.
    /// let around = store.at(&ns, ReadAt::latest())?.neighbors(ada, 1)?.value;
    /// assert!(around.nodes.iter().any(|(_, distance)| *distance == 1));
    /// assert_eq!(around.edges.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn neighbors(&self, start: EntityId, depth: u32) -> Result<Answer<Neighborhood>, ReadError> {
        self.store.neighbors(self.ns, start, depth, self.point())
    }

    /// [`Store::search`] at this point.
    pub fn search(&self, query: &SearchQuery) -> Result<Answer<SearchResult>, ReadError> {
        self.store.search(self.ns, query, self.point())
    }

    /// Entity `id` as it read at this point (merges followed), if it existed then.
    pub fn entity_version(&self, id: EntityId) -> Result<Option<Entity>, ReadError> {
        self.index(|i| i.entity_version(id, self.seq()).map(|(_, e)| e))
    }

    /// The entity a canonical name or alias named at this point (case and spacing
    /// ignored; the lowest id when several do): a name given later is not seen.
    /// ```
    #[doc = include_str!("../../doc/ada_moves.txt")]
    /// let before = store.at(&ns, ReadAt::bitemporal(time("2020-01-01")?, first.seq))?;
    /// let after = store.at(&ns, ReadAt::latest())?;
    /// // Berlin was named by the second batch: a reader pinned before it does not know it.
    /// assert_eq!(before.entity_named("berlin")?, None);
    /// assert!(after.entity_named("Berlin")?.is_some());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn entity_named(&self, name: &str) -> Result<Option<EntityId>, ReadError> {
        let filter = EntityFilter { name: Some(name.to_owned()), kind: None };
        self.index(|i| i.entities(&filter, self.seq(), None, 1).items.first().map(|(_, e)| e.id))
    }

    /// Episode `id` if recorded by this point, with the batch that recorded it.
    /// ```
    #[doc = include_str!("../../doc/ada_moves.txt")]
    /// let (episode, recorded) = store.at(&ns, ReadAt::latest())?.episode_at(moved)?.expect("recorded");
    /// assert_eq!((episode.text.as_str(), recorded), ("Ada moved to Berlin.", second.seq));
    /// let before = store.at(&ns, ReadAt::bitemporal(time("2020-01-01")?, first.seq))?;
    /// assert!(before.episode_at(moved)?.is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn episode_at(&self, id: EpisodeId) -> Result<Option<(Episode, Seq)>, ReadError> {
        self.index(|i| Some((i.episode_at(id, self.seq())?.clone(), i.episode_seq(id)?)))
    }

    /// The episodes mentioning an entity (and those merged with it), in the order they
    /// occurred, a page after `after`.
    /// ```
    #[doc = include_str!("../../doc/ada_moves.txt")]
    /// // The store recorded that the episode names Ada.
    /// let page = store.at(&ns, ReadAt::latest())?.mentioning(ada, None, 10)?;
    /// assert_eq!(page.items.iter().map(|(_, e)| e.id).collect::<Vec<_>>(), [moved]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn mentioning(
        &self,
        entity: EntityId,
        after: Option<EpisodeCursor>,
        limit: usize,
    ) -> Result<Page<(Seq, Episode)>, ReadError> {
        self.index(|i| i.mentioning(entity, self.seq(), after, limit))
    }

    /// The entities an episode mentions, and who said so.
    pub fn mentions_of(&self, episode: EpisodeId) -> Result<Vec<(EntityId, MentionSource)>, ReadError> {
        self.index(|i| i.mentions_of(episode, self.seq()))
    }

    /// The facts an episode is provenance of.
    pub fn sourced_facts(&self, episode: EpisodeId) -> Result<Vec<FactId>, ReadError> {
        self.index(|i| i.sourced_facts(episode, self.seq()))
    }

    /// Who has read an episode (the store's extractor: a model and a prompt version
    /// each), in log order.
    pub fn extracted_by(&self, episode: EpisodeId) -> Result<Vec<String>, ReadError> {
        self.index(|i| i.extracted_by(episode, self.seq()).into_iter().map(str::to_owned).collect())
    }

    /// The episode after (`forward`) or before an episode in its thread.
    pub fn thread_neighbour(
        &self,
        episode: EpisodeId,
        forward: bool,
    ) -> Result<Option<EpisodeId>, ReadError> {
        self.index(|i| i.thread_neighbour(episode, self.seq(), forward).map(|e| e.id))
    }

    /// The records in `tier`, with the placement that put each there.
    pub fn tier_members(&self, tier: &Tier) -> Result<Vec<(RecordRef, Placement)>, ReadError> {
        self.index(|i| i.tier_members(tier, self.seq()))
    }

    /// The ACTIVE scopes with records: name, member count, the batch of its latest
    /// placement.
    pub fn scopes(&self) -> Result<Vec<(String, usize, Seq)>, ReadError> {
        self.index(|i| i.scopes(self.seq()))
    }

    /// The tiers a record is in.
    pub fn tiers_of(&self, record: RecordRef) -> Result<Vec<Tier>, ReadError> {
        self.index(|i| i.tiers_of(record, self.seq()))
    }

    /// A record's placements and releases in log order, as known here.
    pub fn placement_history(&self, record: RecordRef) -> Result<Vec<(Tier, Placement)>, ReadError> {
        self.index(|i| i.placement_history(record, self.seq()))
    }

    /// Upkeep's proposals that no placement or release has answered.
    pub fn open_proposals(&self) -> Result<Vec<Proposal>, ReadError> {
        self.index(|i| i.open_proposals(self.seq()))
    }

    /// The tier settings.
    pub fn tier_settings(&self) -> Result<TierSettings, ReadError> {
        self.index(|i| i.tier_settings(self.seq()))
    }
}
