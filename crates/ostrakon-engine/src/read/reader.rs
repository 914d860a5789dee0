//! A reader handle: one namespace at one pinned read point, with the typed reads. Every
//! read through a reader answers at the same basis, as every nested field of a request
//! does, without passing the namespace and the read point to each call.

use ostrakon_core::{
    Entity, EntityFilter, EntityId, EntityView, Episode, EpisodeCursor, EpisodeFilter, EpisodeId, FactFilter,
    FactId, FactView, Fading, Group, GroupBy, HeldFor, IntentionId, IntentionView, Lane, MentionSource,
    Namespace, Neighborhood, OverlapQuery, Page, Recallable, RecordKind, RecordRef, Scope, Seq,
    SnapshotCursor, SnapshotPage, StatementView, Tier, TierSettings, Timestamp, TraceState, View,
};
use ostrakon_index::{NamespaceIndex, Placement, Proposal};

use crate::context::block::ContextBlock;
use crate::error::read::ReadError;
use crate::maintain::intentions::Due;
use crate::read::analytics::{Changes, ChangesQuery, Overlaps, Series, SeriesQuery};
use crate::read::outdated::Outdated;
use crate::read::point::{Answer, Basis, ReadAt};
use crate::read::topics::TopicNetwork;
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

    /// Facts matching `filter` at this point: those in force, or every visible one with its status.
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

    /// Every version of the slot `(subject, predicate)` known at S, with statuses at T.
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

    /// One entity as known at S with its facts in force at T.
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

    /// Entities known at this point matching `filter`, by id, a page of at most `limit`.
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

    /// Episodes known at this point matching `filter`, by (occurred_at, id), a page of at most `limit`.
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

    /// Entities within `depth` hops of `start`, every hop resolved at this point.
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

    /// Hybrid search at a read point: BM25 ∪ vectors ∪ the graph around named entities,
    /// fused by reciprocal rank, weighted by retention (with a floor), diversified by
    /// MMR. Facts not in force at (T, S) are left out unless asked for.
    /// ```
    /// use ostrakon_engine::core::{Namespace, Timestamp};
    /// use ostrakon_engine::{Change, NewEpisode, ReadAt, SearchQuery, Store};
    ///
    /// let store = Store::in_memory();
    /// let ns = Namespace::new("namespace", "demo")?;
    /// let episode = |text: &str| {
    ///     Change::RecordEpisode(NewEpisode {
    ///         text: text.into(),
    ///         occurred_at: Timestamp::from_micros(1_700_000_000_000_000),
    ///         ..NewEpisode::default()
    ///     })
    /// };
    /// store.append(&ns, vec![episode("We hiked up to the glacier lake."), episode("The invoice is due Friday.")])?;
    /// // The search waits until the indexes hold what it reads.
    /// let query = SearchQuery { text: Some("glacier".into()), ..SearchQuery::default() };
    /// let found = store.at(&ns, ReadAt::latest())?.search(&query)?;
    /// assert_eq!(found.value.hits.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
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

    /// What an episode stated that does not hold at this point: each fact stated from
    /// it that is superseded, negated, contradicted, corrected, retracted or ended, with
    /// what holds instead and since when.
    /// ```
    #[doc = include_str!("../../doc/ada_moves.txt")]
    /// use ostrakon_engine::change::EpisodeRef;
    /// // Ada says she lives in Lyon, and the fact is restated citing her words; Berlin
    /// // replaced Lyon in 2014.
    /// let words = NewEpisode { text: "Ada: I live in Lyon.".into(), occurred_at: time("2010-05-01")?, ..NewEpisode::default() };
    /// let Change::AssertFact(mut again) = lives_in("Lyon", "2008-01-01")? else { unreachable!() };
    /// again.provenance = vec![EpisodeRef::New(0)];
    /// let third = store.append(&ns, vec![Change::RecordEpisode(words), Change::AssertFact(again)])?;
    /// let Some(RecordId::Episode(said)) = third.ids[0] else { unreachable!() };
    /// let now = store.at(&ns, ReadAt::latest())?.outdated(said)?;
    /// assert_eq!(now.len(), 1);
    /// assert_eq!((now[0].verb(), now[0].since), ("superseded", Some(time("2014-01-01")?)));
    /// // In 2010 what she said still held.
    /// assert!(store.at(&ns, ReadAt::valid(time("2010-06-01")?))?.outdated(said)?.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn outdated(&self, episode: EpisodeId) -> Result<Vec<Outdated>, ReadError> {
        let view = View { valid_at: self.basis.valid_at, known_at: self.seq() };
        self.index(|i| crate::read::outdated::outdated(i, episode, view))
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

    /// One fact resolved at this point (a restatement's id names the fact it restated).
    pub fn fact(&self, id: FactId) -> Result<Answer<Option<FactView>>, ReadError> {
        self.store.fact(self.ns, id, self.point())
    }

    /// The pending intentions due at the read's clock for `message`: those whose time has
    /// come, whose entities the message names, or whose cue it is close to (built-in
    /// embeddings only); by priority, then id. Records nothing.
    pub fn due_intentions(&self, message: Option<&str>) -> Result<Answer<Vec<Due>>, ReadError> {
        self.store.due_intentions(self.ns, message, self.point())
    }

    /// The statements of the fact `id` names (a statement's id names its fact), visible at
    /// this point's S, in log order.
    pub fn statements(&self, id: FactId) -> Result<Answer<Vec<StatementView>>, ReadError> {
        self.store.statements(self.ns, id, self.point())
    }

    /// Facts by id as seen from this point, in the order asked, leaving out those not known
    /// then; each slot is resolved once, however many of its facts are asked for.
    pub fn facts_by_id(&self, ids: &[FactId]) -> Result<Answer<Vec<FactView>>, ReadError> {
        self.store.facts_by_id(self.ns, ids, self.point())
    }

    /// The intentions known at this point, by id; without `include_inactive`, only those still
    /// pending at its decay clock.
    pub fn intentions(&self, include_inactive: bool) -> Result<Answer<Vec<IntentionView>>, ReadError> {
        self.store.intentions(self.ns, self.point(), include_inactive)
    }

    /// These intentions as known at this point (those unknown there left out), in the order given.
    pub fn intentions_by_id(&self, ids: &[IntentionId]) -> Result<Answer<Vec<IntentionView>>, ReadError> {
        self.store.intentions_by_id(self.ns, ids, self.point())
    }

    /// A page of every fact in force at this point.
    /// ```
    #[doc = include_str!("../../doc/ada_moves.txt")]
    /// // Every fact in force in 2010, as known now: Lyon only, on one page.
    /// let in_2010 = store.at(&ns, ReadAt::valid(time("2010-06-01")?))?.snapshot(None, 10)?.value;
    /// assert_eq!((in_2010.facts.len(), in_2010.next), (1, None));
    /// // Now both are known, Berlin in force.
    /// let now = store.at(&ns, ReadAt::latest())?.snapshot(None, 10)?.value;
    /// assert_eq!(now.facts.len(), 1);
    /// assert_ne!(now.facts[0].fact.object, in_2010.facts[0].fact.object);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn snapshot(
        &self,
        after: Option<SnapshotCursor>,
        limit: usize,
    ) -> Result<Answer<SnapshotPage>, ReadError> {
        self.store.snapshot(self.ns, self.point(), after, limit)
    }

    /// A page of every fact visible at this point's S whatever its status at T (retracted ones
    /// included), in the order of [`Reader::snapshot`]: the whole history as known then.
    pub fn all_facts(
        &self,
        after: Option<SnapshotCursor>,
        limit: usize,
    ) -> Result<Answer<SnapshotPage>, ReadError> {
        self.store.all_facts(self.ns, self.point(), after, limit)
    }

    /// A record's trace as known at S, read at the decay clock.
    pub fn trace(&self, record: RecordRef) -> Result<Answer<Option<TraceState>>, ReadError> {
        self.store.trace(self.ns, record, self.point())
    }

    /// When a record was recalled, as known at S and up to the decay clock, in order.
    pub fn recall_history(&self, record: RecordRef) -> Result<Answer<Vec<Timestamp>>, ReadError> {
        self.store.recall_history(self.ns, record, self.point())
    }

    /// What an agent might bring up unprompted: records that are not dormant at the decay
    /// clock, by retention, at most `limit`.
    pub fn recallable(
        &self,
        kinds: &[RecordKind],
        limit: usize,
    ) -> Result<Answer<Vec<Recallable>>, ReadError> {
        self.store.recallable(self.ns, self.point(), kinds, limit)
    }

    /// Records that turn dormant within `[from, to)` unless recalled, by when.
    pub fn forecast(
        &self,
        from: Timestamp,
        to: Timestamp,
        kinds: &[RecordKind],
    ) -> Result<Answer<Vec<Fading>>, ReadError> {
        self.store.forecast(self.ns, from, to, self.point(), kinds)
    }

    /// The topic network at this point, from the segments closed there.
    /// Reading writes nothing: segments close by [`Store::segment`] (the `closeSegments`
    /// mutation), consolidation, and [`Store::maintain`].
    pub fn topic_network(&self) -> Result<Answer<TopicNetwork>, ReadError> {
        self.store.topic_network(self.ns, self.point())
    }

    /// `subject`'s timeline: per predicate, the values in force over valid time as known
    /// at S, with the facts behind each stretch.
    pub fn timeline(
        &self,
        subject: EntityId,
        predicates: Option<&[String]>,
    ) -> Result<Answer<Vec<Lane>>, ReadError> {
        self.store.timeline(self.ns, subject, predicates, self.point())
    }

    /// How long each value of `(subject, predicate)` held within `[from, to)` (default:
    /// all time before the read's validAt), longest first.
    pub fn durations(
        &self,
        subject: EntityId,
        predicate: &str,
        from: Option<Timestamp>,
        to: Option<Timestamp>,
    ) -> Result<Answer<Vec<HeldFor>>, ReadError> {
        self.store.durations(self.ns, subject, predicate, from, to, self.point())
    }

    /// How many subjects had the query's predicate (with its value, if given) in force at
    /// each step of `[from, to)`; with `by_value`, one group per value.
    pub fn in_force_series(&self, query: &SeriesQuery<'_>) -> Result<Answer<Series>, ReadError> {
        self.store.in_force_series(self.ns, query, self.point())
    }

    /// Value changes of the query's predicate (or of every predicate) per step of
    /// `[from, to)`, and the `top` subjects that changed most.
    pub fn changes(&self, query: &ChangesQuery<'_>) -> Result<Answer<Changes>, ReadError> {
        self.store.changes(self.ns, query, self.point())
    }

    /// Pairs of facts, one of each side (of one value when `same_value`), whose stretches
    /// in force stand in `relation`.
    pub fn overlaps(&self, query: &OverlapQuery) -> Result<Answer<Overlaps>, ReadError> {
        self.store.overlaps(self.ns, query, self.point())
    }

    /// Facts in force at (T, S), of `predicate` or all, counted in groups, most first.
    /// A count in all is read from the stretches in force at S (`Sweeps`): the first
    /// count at an S resolves every slot once, later ones at any T cost two binary
    /// searches, and the first at the S after a write carries the last one forward
    /// through the slots the write touched.
    /// ```
    /// use ostrakon_engine::core::{GroupBy, Interval, Namespace, TimeZone, Timestamp};
    /// use ostrakon_engine::{Change, EntityRef, NewFact, ObjectRef, ReadAt, Store};
    ///
    /// let store = Store::in_memory();
    /// let ns = Namespace::new("namespace", "demo")?;
    /// let at = |t: &str| Timestamp::parse("validFrom", t, &TimeZone::Utc);
    /// let lives_in = |who: &str, city: &str, from: &str| -> Result<Change, Box<dyn std::error::Error>> {
    ///     let city = ObjectRef::Entity(EntityRef::Name(city.into()));
    ///     let valid = Interval::new("validFrom", at(from)?, None)?;
    ///     Ok(Change::AssertFact(NewFact::new(EntityRef::Name(who.into()), "livesIn", city, valid)))
    /// };
    /// store.append(&ns, vec![lives_in("Ada", "Lyon", "2008-01-01")?, lives_in("Bob", "Lyon", "2020-01-01")?])?;
    /// // How many facts of `livesIn` held in 2010, and in 2021.
    /// let in_2010 = ReadAt::valid(at("2010-06-01")?);
    /// let in_2021 = ReadAt::valid(at("2021-06-01")?);
    /// assert_eq!(store.at(&ns, in_2010)?.aggregate(Some("livesIn"), GroupBy::Nothing)?.value[0].count, 1);
    /// assert_eq!(store.at(&ns, in_2021)?.aggregate(Some("livesIn"), GroupBy::Nothing)?.value[0].count, 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn aggregate(
        &self,
        predicate: Option<&str>,
        group_by: GroupBy,
    ) -> Result<Answer<Vec<Group>>, ReadError> {
        self.store.aggregate(self.ns, predicate, group_by, self.point())
    }

    /// The context block for `message` within `budget` tokens, read at this point, with every
    /// current ACTIVE scope ([`Reader::context_in`]).
    /// ```
    /// use ostrakon_engine::SearchQuery;
    #[doc = include_str!("../../doc/ada_moves.txt")]
    /// // What to put in a prompt about a message, within a budget of tokens.
    /// let block = store.at(&ns, ReadAt::latest())?.context("Where does Ada live?", 400, &SearchQuery::default())?;
    /// assert!(block.value.text.contains("Berlin"), "{}", block.value.text);
    /// assert!(block.value.tokens <= 400);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn context(
        &self,
        message: &str,
        budget: usize,
        query: &SearchQuery,
    ) -> Result<Answer<ContextBlock>, ReadError> {
        self.store.context(self.ns, message, budget, query, self.point())
    }

    /// The context block for `message` within `budget` tokens, read at this point: due
    /// intentions, CORE, the ACTIVE scopes `scopes` names (`None`: every scope with
    /// records), then what the search finds. Read at a valid time before the clock (as
    /// of a past day), the block leaves out the episodes found that happened after it.
    pub fn context_in(
        &self,
        message: &str,
        budget: usize,
        query: &SearchQuery,
        scopes: Option<&[String]>,
    ) -> Result<Answer<ContextBlock>, ReadError> {
        self.store.context_in(self.ns, message, budget, query, scopes, self.point())
    }
}
