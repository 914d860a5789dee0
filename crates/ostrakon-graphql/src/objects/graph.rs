//! Output types. Every object carries the point it was read at (its [`Pin`]), so nested
//! fields resolve at their parent's (validAt, knownAt).

use std::sync::Arc;

use async_graphql::{Context, Enum, ID, Object, Result, SimpleObject};
use ostrakon_core::{EpisodeId, FactId, Literal, RecordRef, Value};
use ostrakon_engine::{ReadAt, Store, views::FactFilter, views::FactView, views::Scope};

use crate::exec::context::Pin;
use crate::exec::context::engine;
use crate::exec::context::store;
use crate::objects::records::OutdatedMark;
pub(crate) use crate::objects::records::{EntityObject, EpisodeObject};
use crate::types::enums::FactStatus;
use crate::types::enums::Polarity;
use crate::types::enums::ValueType;
use crate::types::info::Interval;
use crate::types::info::interval;
use crate::types::input::invalid;
use crate::types::input::parse_id;
use crate::types::paging::Basis;
use crate::types::paging::Listing;
use crate::types::paging::Page;
use crate::types::retention::TraceFields;
use crate::types::scalars::DateTime;
use async_graphql::connection::Connection;
use async_graphql::connection::Edge;

#[Object(name = "Entity")]
impl EntityObject {
    /// Its id.
    async fn id(&self) -> ID {
        ID(self.entity.id.0.to_string())
    }

    /// Canonical name.
    async fn name(&self) -> &str {
        &self.entity.name
    }

    /// Other names.
    async fn aliases(&self) -> &[String] {
        &self.entity.aliases
    }

    /// Its kind.
    async fn kind(&self) -> Option<&str> {
        self.entity.kind.as_deref()
    }

    /// Its properties.
    async fn properties(&self) -> Vec<Property> {
        self.entity
            .properties
            .iter()
            .map(|(k, v)| Property {
                key: k.clone(),
                value: ValueObject { pin: Arc::clone(&self.pin), value: Value::Literal(v.clone()) },
            })
            .collect()
    }

    /// Its facts (as subject) in force at the read's validAt, or every visible one with
    /// `includeAll`; optionally of one predicate. The first `first` by (predicate, id);
    /// the root `facts` pages through all of them.
    async fn facts(
        &self,
        ctx: &Context<'_>,
        predicate: Option<String>,
        #[graphql(default = false)] include_all: bool,
        #[graphql(default = 100)] first: i32,
    ) -> Result<Vec<FactObject>> {
        let first = crate::types::paging::page_size(ctx, Some(first))?;
        let filter = FactFilter { subject: Some(self.entity.id), predicate, object: None };
        facts_at(ctx, &self.pin, &filter, include_all, first)
    }

    /// Facts in force that point at it (as object): the first `first`; the root `facts`
    /// with `object` pages through all of them.
    async fn incoming(
        &self,
        ctx: &Context<'_>,
        predicate: Option<String>,
        #[graphql(default = 100)] first: i32,
    ) -> Result<Vec<FactObject>> {
        let first = crate::types::paging::page_size(ctx, Some(first))?;
        let filter = FactFilter { subject: None, predicate, object: Some(Value::Entity(self.entity.id)) };
        facts_at(ctx, &self.pin, &filter, false, first)
    }

    /// Every version of one of its predicates, with statuses at the read's point: the
    /// first `first` in assertion order; the root `history` pages through all of them.
    async fn history(
        &self,
        ctx: &Context<'_>,
        predicate: String,
        #[graphql(default = 100)] first: i32,
    ) -> Result<Vec<FactObject>> {
        let first = crate::types::paging::page_size(ctx, Some(first))?;
        let views = self.pin.reader(store(ctx)?).history(self.entity.id, &predicate).map_err(engine)?;
        Ok(views
            .value
            .into_iter()
            .take(first)
            .map(|view| FactObject { pin: Arc::clone(&self.pin), view })
            .collect())
    }

    /// Entities associated with it in the topic network (mentioned with it in closed
    /// segments, or close in meaning), strongest (weight × retention) first.
    async fn related(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 10)] first: i32,
    ) -> Result<Vec<crate::objects::topics::Related>> {
        let store = store(ctx)?;
        let first = crate::types::paging::page_size(ctx, Some(first))?;
        let net = self.pin.reader(store).topic_network().map_err(engine)?;
        crate::objects::topics::related(store, &self.pin, &net.value, self.entity.id, first)
    }

    /// The topic it belongs to, if it has associations.
    async fn topic(&self, ctx: &Context<'_>) -> Result<Option<crate::objects::topics::TopicObject>> {
        let store = store(ctx)?;
        let net = self.pin.reader(store).topic_network().map_err(engine)?.value;
        let Some(i) = net.topic_of.get(&self.entity.id).copied() else { return Ok(None) };
        Ok(crate::objects::topics::topics(store, &self.pin, net).into_iter().nth(i))
    }

    /// The episodes that mention it (or an entity merged into it), in the order they
    /// occurred (ties by id).
    async fn mentions(
        &self,
        ctx: &Context<'_>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<crate::types::paging::Page<EpisodeObject>> {
        use async_graphql::connection::{Connection, Edge};
        let store = store(ctx)?;
        let first = crate::types::paging::page_size(ctx, first)?;
        let after = after.as_deref().map(crate::types::paging::episode_cursor).transpose()?;
        let page = self.pin.reader(store).mentioning(self.entity.id, after, first).map_err(engine)?;
        let mut out = Connection::with_additional_fields(
            after.is_some(),
            page.more,
            Listing { basis: (&self.pin.basis).into() },
        );
        out.edges.extend(page.items.into_iter().map(|(seq, episode)| {
            Edge::new(
                format!("{}:{}", episode.occurred_at.as_micros(), episode.id.0),
                EpisodeObject { pin: Arc::clone(&self.pin), episode, recorded_seq: seq.0 },
            )
        }));
        Ok(out)
    }

    /// The point this entity was read at.
    async fn basis(&self) -> Basis {
        (&self.pin.basis).into()
    }

    #[graphql(flatten)]
    async fn trace(&self) -> TraceFields {
        TraceFields { pin: Arc::clone(&self.pin), record: RecordRef::Entity(self.entity.id) }
    }
}

pub(crate) fn facts_at(
    ctx: &Context<'_>,
    pin: &Arc<Pin>,
    filter: &FactFilter,
    include_all: bool,
    first: usize,
) -> Result<Vec<FactObject>> {
    let scope = if include_all { Scope::All } else { Scope::InForce };
    let views = pin.reader(store(ctx)?).facts(filter, scope).map_err(engine)?;
    Ok(views.value.into_iter().take(first).map(|view| FactObject { pin: Arc::clone(pin), view }).collect())
}

/// A fact as seen from the read's (validAt, knownAt).
pub(crate) struct FactObject {
    pub(crate) pin: Arc<Pin>,
    pub(crate) view: FactView,
}

impl FactObject {
    /// Fact `id` as seen from the pin, if it was known then.
    pub(crate) fn load(store: &Store, pin: &Arc<Pin>, id: FactId) -> Option<Self> {
        let view = pin.reader(store).fact(id).ok()?.value?;
        Some(FactObject { pin: Arc::clone(pin), view })
    }

    /// Facts by id as seen from the pin, in the order given, leaving out those not known
    /// then (each slot resolved once).
    pub(crate) fn load_many(store: &Store, pin: &Arc<Pin>, ids: &[FactId]) -> Vec<Self> {
        let Ok(answer) = pin.reader(store).facts_by_id(ids) else {
            return Vec::new();
        };
        answer.value.into_iter().map(|view| FactObject { pin: Arc::clone(pin), view }).collect()
    }

    /// [`FactObject::load_many`] for facts' own ids (not a restatement's), keeping what it
    /// loads in the pin for the rest of the request: many facts tied at one instant each
    /// ask for the facts they contradict, mostly the same ones.
    pub(crate) fn load_kept(store: &Store, pin: &Arc<Pin>, ids: &[FactId]) -> Vec<Self> {
        let missing: Vec<FactId> = {
            let loaded = pin.loaded();
            ids.iter().copied().filter(|id| !loaded.contains_key(id)).collect()
        };
        if !missing.is_empty()
            && let Ok(answer) = pin.reader(store).facts_by_id(&missing)
        {
            pin.loaded().extend(answer.value.into_iter().map(|view| (view.fact.id, view)));
        }
        let loaded = pin.loaded();
        ids.iter()
            .filter_map(|id| loaded.get(id))
            .map(|view| FactObject { pin: Arc::clone(pin), view: view.clone() })
            .collect()
    }
}

#[Object(name = "Fact")]
impl FactObject {
    /// Its id.
    async fn id(&self) -> ID {
        ID(self.view.fact.id.0.to_string())
    }

    /// What it is about.
    async fn subject(&self, ctx: &Context<'_>) -> Result<Option<EntityObject>> {
        EntityObject::load(store(ctx)?, &self.pin, self.view.fact.subject)
    }

    /// The relation.
    async fn predicate(&self) -> &str {
        &self.view.fact.predicate
    }

    /// An entity or a literal.
    async fn object(&self) -> ValueObject {
        ValueObject { pin: Arc::clone(&self.pin), value: self.view.fact.object.clone() }
    }

    /// Stated or denied.
    async fn polarity(&self) -> Polarity {
        self.view.fact.polarity.into()
    }

    /// Its valid interval as known at knownAt (a later `endFact` sets its end).
    async fn valid(&self) -> Interval {
        interval(&self.view.valid)
    }

    /// Where it is in force over all valid time, as known at knownAt: its interval minus
    /// those of competing facts that outrank it.
    async fn effective(&self) -> Vec<Interval> {
        self.view.effective.iter().map(interval).collect()
    }

    /// Where it stands at validAt.
    async fn status(&self) -> FactStatus {
        self.view.status.into()
    }

    /// Why it has that status.
    async fn reason(&self) -> &str {
        &self.view.reason
    }

    /// The fact that beat it at validAt, or that corrected it.
    async fn superseded_by(&self, ctx: &Context<'_>) -> Result<Option<FactObject>> {
        let Some(id) = self.view.beaten_by else { return Ok(None) };
        Ok(FactObject::load(store(ctx)?, &self.pin, id))
    }

    /// Competing facts with the same start: a contradiction, resolved by rank. The first
    /// `first` by id (at most the server's page size); `contradictionCount` says how many
    /// there are in all.
    async fn contradicts(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 20)] first: i32,
    ) -> Result<Vec<FactObject>> {
        let first = crate::types::paging::page_size(ctx, Some(first))?;
        let store = store(ctx)?;
        Ok(FactObject::load_kept(store, &self.pin, &self.view.contradicts.first(first)))
    }

    /// How many facts it contradicts.
    async fn contradiction_count(&self) -> u64 {
        self.view.contradicts.len() as u64
    }

    /// Confidence, with corroborations folded in.
    async fn confidence(&self) -> f64 {
        self.view.confidence
    }

    /// How many times it was stated.
    async fn corroborations(&self) -> u32 {
        self.view.corroborations
    }

    /// The tiers of context it is placed in as known at knownAt (`CORE`, `ACTIVE <scope>`);
    /// none: ARCHIVE, found by search only.
    async fn tiers(&self, ctx: &Context<'_>) -> Result<Vec<String>> {
        let record = ostrakon_core::RecordRef::Fact(self.view.fact.id);
        let tiers = self.pin.reader(store(ctx)?).tiers_of(record).map_err(engine)?;
        Ok(tiers.iter().map(ostrakon_core::Tier::label).collect())
    }

    /// Who first stated it: null for a client; for a fact the server's extractor found in
    /// an episode, the model and prompt version that read it (`model@prompt-version`).
    async fn source(&self, ctx: &Context<'_>) -> Result<Option<String>> {
        let batch = store(ctx)?.extraction_of_batch(&self.pin.ns, self.view.asserted_seq).map_err(engine)?;
        Ok(batch.map(|(_, source)| source))
    }

    /// The episodes it comes from (the first `first` by id).
    async fn provenance(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 100)] first: i32,
    ) -> Result<Vec<EpisodeObject>> {
        episodes(ctx, &self.pin, &self.view.provenance, first)
    }

    /// The episodes of its provenance that were erased (a retention period, a person's
    /// request): the `ERASED` markers that stand in for them (the first `first`).
    async fn erased_provenance(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 100)] first: i32,
    ) -> Result<Vec<crate::objects::erased::ErasedMarker>> {
        let first = crate::types::paging::page_size(ctx, Some(first))?;
        crate::objects::erased::erased_episodes(store(ctx)?, &self.pin.ns, &self.view.provenance, first)
    }

    /// The batch that asserted it.
    async fn asserted_seq(&self) -> u64 {
        self.view.asserted_seq.0
    }

    /// When the store learned it.
    async fn asserted_at(&self) -> DateTime {
        self.view.asserted_at.into()
    }

    /// The batch that retracted it, if it was retracted by knownAt.
    async fn retracted_seq(&self) -> Option<u64> {
        self.view.retraction.as_ref().map(|r| r.seq.0)
    }

    /// The point this fact was read at.
    async fn basis(&self) -> Basis {
        (&self.pin.basis).into()
    }

    /// How much it matters, as given (salience).
    async fn importance(&self) -> Option<f64> {
        self.view.fact.importance
    }

    /// Whether it was the user's correction of the agent.
    async fn correction(&self) -> bool {
        self.view.fact.correction
    }

    /// Its statements visible at knownAt, in the order they were made (the first
    /// `first`): each assertion of it, with its own id (`s…`), batch, confidence and
    /// provenance, and its withdrawal. Retracting or ending the fact's own id acts on the
    /// whole fact; retracting a statement's id withdraws that statement alone.
    async fn statements(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 100)] first: i32,
    ) -> Result<Vec<StatementObject>> {
        let first = crate::types::paging::page_size(ctx, Some(first))?;
        let answer = self.pin.reader(store(ctx)?).statements(self.view.fact.id).map_err(engine)?;
        Ok(answer
            .value
            .into_iter()
            .take(first)
            .map(|view| StatementObject { pin: Arc::clone(&self.pin), view })
            .collect())
    }

    #[graphql(flatten)]
    async fn trace(&self) -> TraceFields {
        TraceFields { pin: Arc::clone(&self.pin), record: RecordRef::Fact(self.view.fact.id) }
    }
}

/// An observation, verbatim.
/// One statement of a fact: an assertion of it.
pub(crate) struct StatementObject {
    pub(crate) pin: Arc<Pin>,
    pub(crate) view: ostrakon_core::StatementView,
}

impl StatementObject {
    /// Statement `id` as seen from the pin, if it was made by then.
    pub(crate) fn load(store: &Store, pin: &Arc<Pin>, id: FactId) -> Option<Self> {
        let answer = pin.reader(store).statements(id).ok()?;
        let view = answer.value.into_iter().find(|s| s.id == id)?;
        Some(StatementObject { pin: Arc::clone(pin), view })
    }
}

/// A statement's id: `s` and the id its assertion was given, so that it never reads as a
/// fact's (a fact's first statement has the fact's number).
pub(crate) fn statement_id(id: FactId) -> ID {
    ID(format!("s{}", id.0))
}

#[Object(name = "Statement")]
impl StatementObject {
    /// Its id (`s` and a number): give it to `retractFact` to withdraw this statement
    /// alone.
    async fn id(&self) -> ID {
        statement_id(self.view.id)
    }

    /// The fact it states, as read at the same point.
    async fn fact(&self, ctx: &Context<'_>) -> Result<Option<FactObject>> {
        Ok(FactObject::load(store(ctx)?, &self.pin, self.view.fact))
    }

    /// The batch that made it.
    async fn seq(&self) -> u64 {
        self.view.seq.0
    }

    /// When the store learned it.
    async fn asserted_at(&self) -> DateTime {
        self.view.asserted_at.into()
    }

    /// Its confidence.
    async fn confidence(&self) -> f64 {
        self.view.confidence
    }

    /// The episodes it was stated from (the first `first`).
    async fn provenance(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 100)] first: i32,
    ) -> Result<Vec<EpisodeObject>> {
        episodes(ctx, &self.pin, &self.view.provenance, first)
    }

    /// The episodes of its provenance that were erased (a retention period, a person's
    /// request): the `ERASED` markers that stand in for them (the first `first`).
    async fn erased_provenance(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 100)] first: i32,
    ) -> Result<Vec<crate::objects::erased::ErasedMarker>> {
        let first = crate::types::paging::page_size(ctx, Some(first))?;
        crate::objects::erased::erased_episodes(store(ctx)?, &self.pin.ns, &self.view.provenance, first)
    }

    /// Whether it still supports its fact at knownAt.
    async fn live(&self) -> bool {
        self.view.withdrawn.is_none()
    }

    /// The batch that withdrew it (alone, or with its whole fact), if one did by knownAt.
    async fn withdrawn_seq(&self) -> Option<u64> {
        self.view.withdrawn.as_ref().map(|w| w.seq.0)
    }

    /// When it was withdrawn.
    async fn withdrawn_at(&self, ctx: &Context<'_>) -> Result<Option<DateTime>> {
        let Some(w) = &self.view.withdrawn else { return Ok(None) };
        let at = ReadAt { known_at: ostrakon_engine::KnownAt::Seq(w.seq), ..ReadAt::default() };
        Ok(store(ctx)?.basis(&self.pin.ns, at).map_err(engine)?.system_time.map(DateTime::from))
    }

    /// How it was withdrawn: the reason given, or the fact that corrected it.
    async fn withdrawn_because(&self) -> Option<String> {
        self.view.withdrawn.as_ref().map(|w| match &w.kind {
            ostrakon_core::Retraction::Retracted { reason: Some(r) } => r.clone(),
            ostrakon_core::Retraction::Retracted { reason: None } => "retracted".to_owned(),
            ostrakon_core::Retraction::CorrectedBy(by) => format!("corrected by {}", by.0),
            ostrakon_core::Retraction::Ended(to) => format!("ended at {to}"),
        })
    }
}

/// The first `first` of the episodes `ids` that exist at `pin` (a fact's or a
/// statement's provenance).
fn episodes(ctx: &Context<'_>, pin: &Arc<Pin>, ids: &[EpisodeId], first: i32) -> Result<Vec<EpisodeObject>> {
    let first = crate::types::paging::page_size(ctx, Some(first))?;
    let store = store(ctx)?;
    ids.iter().filter_map(|id| EpisodeObject::load(store, pin, *id).transpose()).take(first).collect()
}

#[Object(name = "Episode")]
impl EpisodeObject {
    /// Its id.
    async fn id(&self) -> ID {
        ID(self.episode.id.0.to_string())
    }

    /// The client's id for it, unique in the namespace.
    async fn external_id(&self) -> Option<&str> {
        self.episode.external_id.as_deref()
    }

    /// The text, verbatim.
    async fn text(&self) -> &str {
        &self.episode.text
    }

    /// When it happened.
    async fn occurred_at(&self) -> DateTime {
        self.episode.occurred_at.into()
    }

    /// Its conversation or session.
    async fn thread(&self) -> Option<&str> {
        self.episode.thread.as_deref()
    }

    /// Where it came from.
    async fn source(&self) -> Option<&str> {
        self.episode.source.as_deref()
    }

    /// Who spoke.
    async fn role(&self) -> Option<&str> {
        self.episode.role.as_deref()
    }

    /// The extractors (model and prompt version) that have read it, as known at knownAt.
    async fn extracted_by(&self, ctx: &Context<'_>) -> Result<Vec<String>> {
        self.pin.reader(store(ctx)?).extracted_by(self.episode.id).map_err(engine)
    }

    /// The batch that recorded it.
    async fn recorded_seq(&self) -> u64 {
        self.recorded_seq
    }

    /// When the store learned it: the system time of the batch that recorded it.
    async fn recorded_at(&self, ctx: &Context<'_>) -> Result<DateTime> {
        let time =
            store(ctx)?.batch_time(&self.pin.ns, ostrakon_core::Seq(self.recorded_seq)).map_err(engine)?;
        time.map(Into::into).ok_or_else(|| "the batch that recorded this episode is not in the log".into())
    }

    /// The point this episode was read at.
    async fn basis(&self) -> Basis {
        (&self.pin.basis).into()
    }

    /// How much it matters, as given (salience).
    async fn importance(&self) -> Option<f64> {
        self.episode.importance
    }

    /// The next episode of its thread (by occurredAt, then id) known at the read's point.
    async fn next(&self, ctx: &Context<'_>) -> Result<Option<EpisodeObject>> {
        self.neighbour(ctx, true)
    }

    /// The previous episode of its thread known at the read's point.
    async fn previous(&self, ctx: &Context<'_>) -> Result<Option<EpisodeObject>> {
        self.neighbour(ctx, false)
    }

    /// The entities it mentions, each once, as they read at the read's point: those the
    /// client gave, then those whose name or alias its text contains (the first `first`).
    async fn mentions(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 100)] first: i32,
    ) -> Result<Vec<Mention>> {
        let first = crate::types::paging::page_size(ctx, Some(first))?;
        let store = store(ctx)?;
        let found = self.pin.reader(store).mentions_of(self.episode.id).map_err(engine)?;
        found
            .into_iter()
            .filter_map(|(id, source)| {
                let entity = EntityObject::load(store, &self.pin, id).transpose()?;
                Some(entity.map(|entity| Mention { entity, source: source.into() }))
            })
            .take(first)
            .collect::<Result<_>>()
    }

    /// The facts stated with it as provenance, with their status at the read's point (the
    /// first `first` in the order they were stated).
    async fn facts(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 100)] first: i32,
    ) -> Result<Vec<FactObject>> {
        let first = crate::types::paging::page_size(ctx, Some(first))?;
        let store = store(ctx)?;
        let mut ids = self.pin.reader(store).sourced_facts(self.episode.id).map_err(engine)?;
        ids.truncate(first);
        Ok(FactObject::load_many(store, &self.pin, &ids))
    }

    /// What it stated that does not hold at the read's point: each fact stated from it
    /// that is superseded, denied, contradicted, corrected, retracted or ended, with what
    /// holds instead and since when (at most 16). Whoever quotes the episode should say so.
    async fn outdated(&self, ctx: &Context<'_>) -> Result<Vec<OutdatedMark>> {
        let marks = self.pin.reader(store(ctx)?).outdated(self.episode.id).map_err(engine)?;
        Ok(marks.into_iter().map(|m| OutdatedMark::new(&self.pin, m)).collect())
    }

    #[graphql(flatten)]
    async fn trace(&self) -> TraceFields {
        TraceFields { pin: Arc::clone(&self.pin), record: RecordRef::Episode(self.episode.id) }
    }
}

impl EpisodeObject {
    fn neighbour(&self, ctx: &Context<'_>, forward: bool) -> Result<Option<EpisodeObject>> {
        let store = store(ctx)?;
        let id = self.pin.reader(store).thread_neighbour(self.episode.id, forward).map_err(engine)?;
        Ok(id.map(|id| EpisodeObject::load(store, &self.pin, id)).transpose()?.flatten())
    }
}

/// An entity an episode mentions.
#[derive(SimpleObject)]
pub(crate) struct Mention {
    /// The entity, as it reads at the read's point (merges followed).
    pub entity: EntityObject,
    /// Who said so.
    pub source: MentionSource,
}

/// Who said that an episode mentions an entity.
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
#[graphql(remote = "ostrakon_core::MentionSource")]
pub enum MentionSource {
    /// The client, with the episode.
    Client,
    /// The store: a known name or alias appears in the text as a whole word.
    NameMatch,
}

/// A value: an entity or a literal; exactly one of the typed fields is set.
#[derive(Clone, Debug)]
pub(crate) struct ValueObject {
    pub(crate) pin: Arc<Pin>,
    pub(crate) value: Value,
}

#[Object(name = "Value")]
impl ValueObject {
    /// Its type.
    async fn r#type(&self) -> ValueType {
        self.value.value_type().into()
    }

    /// The entity, when it is one.
    async fn entity(&self, ctx: &Context<'_>) -> Result<Option<EntityObject>> {
        match self.value {
            Value::Entity(id) => EntityObject::load(store(ctx)?, &self.pin, id),
            Value::Literal(_) => Ok(None),
        }
    }

    /// Text.
    async fn string(&self) -> Option<&str> {
        match &self.value {
            Value::Literal(Literal::String(s)) => Some(s),
            _ => None,
        }
    }

    /// An integer.
    async fn integer(&self) -> Option<i64> {
        match &self.value {
            Value::Literal(Literal::Integer(i)) => Some(*i),
            _ => None,
        }
    }

    /// A float.
    async fn float(&self) -> Option<f64> {
        match &self.value {
            Value::Literal(Literal::Float(f)) => Some(*f),
            _ => None,
        }
    }

    /// A boolean.
    async fn boolean(&self) -> Option<bool> {
        match &self.value {
            Value::Literal(Literal::Boolean(b)) => Some(*b),
            _ => None,
        }
    }

    /// An instant.
    async fn time(&self) -> Option<DateTime> {
        match &self.value {
            Value::Literal(Literal::Time(t)) => Some((*t).into()),
            _ => None,
        }
    }
}

/// An entity reached by a traversal.
#[derive(SimpleObject)]
pub(crate) struct Neighbor {
    /// The entity.
    pub entity: EntityObject,
    /// Hops from the start.
    pub distance: u32,
}

/// Entities within N hops and the facts joining them, every hop at one (validAt, knownAt).
#[derive(SimpleObject)]
pub(crate) struct Neighborhood {
    /// The point it was read at.
    pub basis: Basis,
    /// Reached entities, by distance then id.
    pub nodes: Vec<Neighbor>,
    /// Facts in force between them.
    pub edges: Vec<FactObject>,
}

/// Pages a fully ordered list of facts by fact id cursors.
pub(crate) fn fact_page(
    pin: &Arc<Pin>,
    views: Vec<ostrakon_engine::views::FactView>,
    after: Option<String>,
    first: usize,
) -> Result<Page<FactObject>> {
    let start = match after {
        None => 0,
        Some(cursor) => {
            let id = parse_id("after", &ID(cursor.clone()))?;
            views
                .iter()
                .position(|v| v.fact.id.0 == id)
                .map(|p| p + 1)
                .ok_or_else(|| invalid("after", format!("{cursor:?}"), "not a cursor of this listing"))?
        }
    };
    let more = views.len() > start + first;
    let mut page =
        Connection::with_additional_fields(start > 0, more, Listing { basis: (&pin.basis).into() });
    page.edges.extend(
        views
            .into_iter()
            .skip(start)
            .take(first)
            .map(|view| Edge::new(view.fact.id.0.to_string(), FactObject { pin: Arc::clone(pin), view })),
    );
    Ok(page)
}

/// A property of an entity.
#[derive(SimpleObject)]
pub(crate) struct Property {
    /// Its key.
    pub key: String,
    /// Its value.
    pub value: ValueObject,
}
