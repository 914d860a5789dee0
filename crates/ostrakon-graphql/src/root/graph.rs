//! Entities, facts, episodes and threads: reads at a pinned point, and the writes that record them.

use async_graphql::connection::{Connection, Edge};
use async_graphql::{Context, ID, Object, Result};

use crate::error::code;
use crate::error::coded;
use crate::error::engine_error;
use crate::exec::access::Mode;
use crate::exec::context::Pin;
use crate::exec::context::Start;
use crate::exec::context::commit;
use crate::exec::context::engine;
use crate::exec::context::limits;
use crate::exec::context::pin_after;
use crate::exec::context::read_at;
use crate::exec::context::start;
use crate::objects::graph::EntityObject;
use crate::objects::graph::EpisodeObject;
use crate::objects::graph::FactObject;
use crate::objects::graph::Neighbor;
use crate::objects::graph::Neighborhood;
use crate::objects::graph::fact_page;
use crate::objects::graph::statement_id;
use crate::objects::payloads::DefinePredicatePayload;
use crate::objects::payloads::RecordEpisodePayload;
use crate::objects::payloads::WritePayload;
use crate::objects::payloads::Written;
use crate::objects::payloads::created;
use crate::objects::payloads::fact_payload;
use crate::objects::payloads::written_facts;
use crate::types::enums::Cardinality;
use crate::types::enums::ValueType;
use crate::types::info::Predicate;
use crate::types::input::EntityInput;
use crate::types::input::EntityRefInput;
use crate::types::input::EpisodeInput;
use crate::types::input::FactInput;
use crate::types::input::FactOrStatement;
use crate::types::input::ValueInput;
use crate::types::input::existing_entity;
use crate::types::input::fact_or_statement;
use crate::types::input::invalid;
use crate::types::input::new_fact;
use crate::types::input::object_value;
use crate::types::input::parse_id;
use crate::types::input::time;
use crate::types::paging::Listing;
use crate::types::paging::Page;
use crate::types::paging::episode_cursor;
use crate::types::paging::page_size;
use crate::types::retention::ProfileInput;
use crate::types::scalars::DateTime;
use ostrakon_core::PredicateDef;
use ostrakon_engine::Change;
use ostrakon_engine::EntityRef;
use ostrakon_engine::NewEpisode;
use ostrakon_engine::RecordId;
use ostrakon_engine::change::EpisodeRef;
use ostrakon_engine::change::NoteEntity;
use ostrakon_engine::views::EntityFilter;
use ostrakon_engine::views::EpisodeFilter;
use ostrakon_engine::views::FactFilter;
use ostrakon_engine::views::Scope;
use ostrakon_engine::views::SnapshotCursor;
use std::sync::Arc;
/// Queries: entities, facts, episodes and threads: reads at a pinned point, and the writes that record them.
#[derive(Default)]
pub(super) struct GraphQuery;

#[Object]
impl GraphQuery {
    /// One entity, by id or by name, as known at knownAt, its facts at validAt.
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn entity(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        id: Option<ID>,
        name: Option<String>,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
    ) -> Result<Option<EntityObject>> {
        let Start { ns, store } = start(ctx, &namespace, Mode::Read)?;
        let at = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, at.as_ref())?;
        let basis = store.basis(&ns, at).map_err(engine)?;
        let pin = Pin::new(ns.clone(), basis);
        let reference = match (id, name) {
            (Some(id), None) => EntityRefInput::Id(id),
            (None, Some(name)) => EntityRefInput::Name(name),
            _ => return Err(invalid("entity", "{…}", "give exactly one of `id` and `name`")),
        };
        let found = match existing_entity(store, &ns, basis, "entity", &reference) {
            Ok(id) => EntityObject::load(store, &pin, id)?,
            Err(_) => None,
        };
        // One not found by id may have been erased: that says so. Any other nobody has
        // (yet, at knownAt) reads as null.
        if found.is_none()
            && let EntityRefInput::Id(id) = &reference
        {
            let id = ostrakon_core::EntityId(crate::types::input::parse_id("id", id)?);
            crate::objects::erased::refuse_erased(store, &ns, ostrakon_core::ErasedRef::Entity(id))?;
        }
        Ok(found)
    }

    /// Entities known at knownAt, by id; filtered by name (or alias) and kind.
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn entities(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        name: Option<String>,
        kind: Option<String>,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Page<EntityObject>> {
        let Start { ns, store } = start(ctx, &namespace, Mode::Read)?;
        let first = page_size(ctx, first)?;
        let at = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, at.as_ref())?;
        let after = after.map(|a| parse_id("after", &ID(a)).map(ostrakon_core::EntityId)).transpose()?;
        let answer = store
            .at(&ns, at)
            .and_then(|r| r.entities(&EntityFilter { name, kind }, after, first))
            .map_err(engine)?;
        let pin = Pin::new(ns, answer.basis);
        let mut page = Connection::with_additional_fields(
            after.is_some(),
            answer.value.more,
            Listing { basis: (&answer.basis).into() },
        );
        page.edges.extend(answer.value.items.into_iter().map(|(_, entity)| {
            Edge::new(entity.id.0.to_string(), EntityObject { pin: Arc::clone(&pin), entity })
        }));
        Ok(page)
    }

    /// Facts by subject, predicate and/or object (at least one): those in force at
    /// validAt as known at knownAt, or every visible one with its status (`includeAll`).
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn facts(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        subject: Option<EntityRefInput>,
        predicate: Option<String>,
        object: Option<ValueInput>,
        #[graphql(default = false)] include_all: bool,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Page<FactObject>> {
        let Start { ns, store } = start(ctx, &namespace, Mode::Read)?;
        let first = page_size(ctx, first)?;
        if subject.is_none() && predicate.is_none() && object.is_none() {
            return Err(invalid("facts", "{}", "give a subject, a predicate or an object (or use snapshot)"));
        }
        if let Some(predicate) = &predicate {
            crate::exec::predicates::known(store, &ns, "predicate", predicate)?;
        }
        let at = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, at.as_ref())?;
        let known = store.basis(&ns, at).map_err(engine)?;
        let filter = FactFilter {
            subject: subject
                .as_ref()
                .map(|s| existing_entity(store, &ns, known, "subject", s))
                .transpose()?,
            predicate,
            object: object.as_ref().map(|o| object_value(store, &ns, known, "object", o)).transpose()?,
        };
        let scope = if include_all { Scope::All } else { Scope::InForce };
        let answer = store.at(&ns, at).and_then(|r| r.facts(&filter, scope)).map_err(engine)?;
        fact_page(&Pin::new(ns, answer.basis), answer.value, after, first)
    }

    /// Every version of one slot (subject, predicate) known at knownAt, retracted ones
    /// included, each with its status at validAt.
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn history(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        subject: EntityRefInput,
        predicate: String,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Page<FactObject>> {
        let Start { ns, store } = start(ctx, &namespace, Mode::Read)?;
        let first = page_size(ctx, first)?;
        let at = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, at.as_ref())?;
        let known = store.basis(&ns, at).map_err(engine)?;
        let subject = existing_entity(store, &ns, known, "subject", &subject)?;
        crate::exec::predicates::known(store, &ns, "predicate", &predicate)?;
        let answer = store.at(&ns, at).and_then(|r| r.history(subject, &predicate)).map_err(engine)?;
        fact_page(&Pin::new(ns, answer.basis), answer.value, after, first)
    }

    /// Every fact in force at validAt as known at knownAt, by (subject, predicate, id).
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn snapshot(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Page<FactObject>> {
        let Start { ns, store } = start(ctx, &namespace, Mode::Read)?;
        let first = page_size(ctx, first)?;
        let at = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, at.as_ref())?;
        let cursor = after
            .as_ref()
            .map(|a| {
                SnapshotCursor::decode(a)
                    .ok_or_else(|| invalid("after", format!("{a:?}"), "not a cursor of this listing"))
            })
            .transpose()?;
        let answer = store.at(&ns, at).and_then(|r| r.snapshot(cursor, first)).map_err(engine)?;
        let pin = Pin::new(ns, answer.basis);
        let mut page = Connection::with_additional_fields(
            cursor.is_some(),
            answer.value.next.is_some(),
            Listing { basis: (&answer.basis).into() },
        );
        for (view, cursor) in answer.value.facts.into_iter().zip(answer.value.cursors) {
            page.edges.push(Edge::new(cursor.encode(), FactObject { pin: Arc::clone(&pin), view }));
        }
        Ok(page)
    }

    /// Entities within `depth` hops of one entity over facts in force, every hop at the
    /// same (validAt, knownAt).
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn neighbors(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        entity: EntityRefInput,
        #[graphql(default = 1)] depth: u32,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
        #[graphql(default = 100)] first: i32,
    ) -> Result<Neighborhood> {
        let first = page_size(ctx, Some(first))?;
        let Start { ns, store } = start(ctx, &namespace, Mode::Read)?;
        let max = limits(ctx)?.max_neighbor_depth;
        if depth > max {
            return Err(coded(
                code::LIMIT_EXCEEDED,
                format!("limit exceeded in `depth`: {depth} (at most {max})"),
            ));
        }
        let at = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, at.as_ref())?;
        let known = store.basis(&ns, at).map_err(engine)?;
        let start = existing_entity(store, &ns, known, "entity", &entity)?;
        let answer = store.at(&ns, at).and_then(|r| r.neighbors(start, depth)).map_err(engine)?;
        let pin = Pin::new(ns, answer.basis);
        Ok(Neighborhood {
            basis: (&answer.basis).into(),
            nodes: answer
                .value
                .nodes
                .into_iter()
                .take(first)
                .filter_map(|(id, distance)| {
                    let entity = EntityObject::load(store, &pin, id).transpose()?;
                    Some(entity.map(|entity| Neighbor { entity, distance }))
                })
                .collect::<Result<_>>()?,
            edges: answer
                .value
                .edges
                .into_iter()
                .take(first)
                .map(|view| FactObject { pin: Arc::clone(&pin), view })
                .collect(),
        })
    }

    /// Episodes known at knownAt, by the time they occurred; by thread and time window.
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn episodes(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        thread: Option<String>,
        from: Option<DateTime>,
        to: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Page<EpisodeObject>> {
        let Start { ns, store } = start(ctx, &namespace, Mode::Read)?;
        let first = page_size(ctx, first)?;
        let at = read_at(store, &ns, None, known_at.as_ref(), known_at_seq, at.as_ref())?;
        let filter = EpisodeFilter {
            thread,
            from: from.as_ref().map(|t| time(store, &ns, "from", t)).transpose()?,
            to: to.as_ref().map(|t| time(store, &ns, "to", t)).transpose()?,
        };
        let after = after.as_deref().map(episode_cursor).transpose()?;
        let answer = store.at(&ns, at).and_then(|r| r.episodes(&filter, after, first)).map_err(engine)?;
        let pin = Pin::new(ns, answer.basis);
        let mut page = Connection::with_additional_fields(
            after.is_some(),
            answer.value.more,
            Listing { basis: (&answer.basis).into() },
        );
        page.edges.extend(answer.value.items.into_iter().map(|(seq, episode)| {
            Edge::new(
                format!("{}:{}", episode.occurred_at.as_micros(), episode.id.0),
                EpisodeObject { pin: Arc::clone(&pin), episode, recorded_seq: seq.0 },
            )
        }));
        Ok(page)
    }

    /// A thread of the event progression graph: its episodes known at knownAt, in the
    /// order they occurred (ties by id); each links to its `next` and `previous`.
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn thread(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        thread: String,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Page<EpisodeObject>> {
        ostrakon_core::validate_name("thread", &thread).map_err(engine)?;
        self.episodes(ctx, namespace, Some(thread), None, None, known_at, known_at_seq, at, first, after)
            .await
    }
}

/// Mutations: entities, facts, episodes and threads: reads at a pinned point, and the writes that record them.
#[derive(Default)]
pub(super) struct GraphMutation;

#[Object]
impl GraphMutation {
    /// Records one episode and, in the same atomic batch, the entities and facts the client
    /// extracted from it; the facts get the episode as provenance and, unless they say
    /// otherwise, start when it occurred.
    async fn record_episode(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        episode: EpisodeInput,
        #[graphql(default)] entities: Vec<EntityInput>,
        #[graphql(default)] facts: Vec<FactInput>,
    ) -> Result<RecordEpisodePayload> {
        let Start { ns, store } = start(ctx, &namespace, Mode::ReadWrite)?;
        let occurred_at = match &episode.occurred_at {
            Some(t) => time(store, &ns, "episode.occurredAt", t)?,
            None => store.now(),
        };
        let mut changes = vec![Change::RecordEpisode(NewEpisode {
            importance: episode.importance,
            text: episode.text,
            occurred_at,
            thread: episode.thread,
            source: episode.source,
            role: episode.role,
            external_id: episode.external_id,
        })];
        let mut paths = vec!["episode".to_owned()];
        if let Some(vector) = episode.embedding {
            changes.push(Change::Embed {
                episode: EpisodeRef::New(0),
                vector: vector.into_iter().map(|x| x as f32).collect(),
            });
            paths.push("episode".to_owned());
        }
        // Each entity is found by name or created under the writer lock, so concurrent
        // episodes naming one new entity create it once.
        let mut noted = Vec::with_capacity(entities.len());
        let mut mentioned = Vec::with_capacity(entities.len());
        for (i, e) in entities.into_iter().enumerate() {
            noted.push(changes.len());
            mentioned.push(EntityRef::New(changes.len()));
            changes.push(Change::NoteEntity(NoteEntity { name: e.name, aliases: e.aliases, kind: e.kind }));
            paths.push(format!("entities[{i}]"));
        }
        // The entities given with an episode are the ones it mentions.
        if !mentioned.is_empty() {
            changes.push(Change::Mention {
                episode: EpisodeRef::New(0),
                entities: mentioned,
                source: ostrakon_core::MentionSource::Client,
            });
            paths.push("entities".to_owned());
        }
        for (i, f) in facts.iter().enumerate() {
            let field = format!("facts[{i}]");
            changes.push(Change::AssertFact(new_fact(store, &ns, &field, f, occurred_at, Some(0))?));
            paths.push(field);
        }
        let receipt = commit(store, &ns, changes, &paths)?;
        let pin = pin_after(store, &ns, &receipt, None)?;
        let entities = noted
            .into_iter()
            .filter_map(|n| match receipt.ids.get(n) {
                Some(Some(RecordId::Entity(id))) => EntityObject::load(store, &pin, *id).transpose(),
                _ => None,
            })
            .collect::<Result<_>>()?;
        Ok(RecordEpisodePayload {
            seq: receipt.seq.0,
            system_time: receipt.system_time.into(),
            episode: receipt.episode(0).map(|id| EpisodeObject::load(store, &pin, id)).transpose()?.flatten(),
            entities,
            facts: written_facts(store, &pin, &receipt),
            created_entities: created(store, &pin, &receipt)?,
            basis: (&pin.basis).into(),
            written: Written::of(&pin, &receipt),
        })
    }

    /// Asserts (or denies) facts in one atomic batch; without `validFrom` they start now.
    async fn assert_facts(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        facts: Vec<FactInput>,
    ) -> Result<WritePayload> {
        let Start { ns, store } = start(ctx, &namespace, Mode::ReadWrite)?;
        if facts.is_empty() {
            return Err(invalid("facts", "[]", "give at least one fact"));
        }
        let now = store.now();
        let mut changes = Vec::with_capacity(facts.len());
        let mut paths = Vec::with_capacity(facts.len());
        for (i, f) in facts.iter().enumerate() {
            let field = format!("facts[{i}]");
            changes.push(Change::AssertFact(new_fact(store, &ns, &field, f, now, None)?));
            paths.push(field);
        }
        let receipt = commit(store, &ns, changes, &paths)?;
        let pin = pin_after(store, &ns, &receipt, None)?;
        Ok(WritePayload {
            seq: receipt.seq.0,
            system_time: receipt.system_time.into(),
            facts: written_facts(store, &pin, &receipt),
            created_entities: created(store, &pin, &receipt)?,
            basis: (&pin.basis).into(),
            written: Written::of(&pin, &receipt),
        })
    }

    /// Ends a fact's validity at `validTo`: it held until then (an update in valid time).
    /// `fact` is a fact's id; a statement's (`s12`, or a restatement's number) is refused
    /// with `NOT_A_FACT`: a statement's validity is its fact's. To take one statement back,
    /// retract it.
    async fn end_fact(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        fact: ID,
        valid_to: DateTime,
    ) -> Result<WritePayload> {
        let Start { ns, store } = start(ctx, &namespace, Mode::ReadWrite)?;
        let id = match fact_or_statement("fact", &fact)? {
            FactOrStatement::Fact(id) => id,
            FactOrStatement::Statement(id) => {
                return Err(engine_error(ostrakon_engine::WriteError::NotAFact {
                    field: "fact".into(),
                    value: statement_id(id).to_string(),
                }));
            }
        };
        let valid_to = time(store, &ns, "validTo", &valid_to)?;
        let receipt = commit(store, &ns, vec![Change::EndFact { fact: id, valid_to }], &[String::new()])?;
        fact_payload(store, &ns, &receipt, id)
    }

    /// Retracts a fact: it was never true (a correction in system time). Reads pinned
    /// before this write still see it. Given a fact's id (`12`), this retracts the fact with
    /// every statement of it; given a statement's id (`s12`, as `statements` lists them,
    /// the first statement included; or a restatement's number), it withdraws that one
    /// statement (one source taking back what it said), and the fact stands while another
    /// statement supports it.
    async fn retract_fact(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        fact: ID,
        reason: Option<String>,
    ) -> Result<WritePayload> {
        let Start { ns, store } = start(ctx, &namespace, Mode::ReadWrite)?;
        let (id, change) = match fact_or_statement("fact", &fact)? {
            FactOrStatement::Fact(id) => (id, Change::RetractFact { fact: id, reason }),
            FactOrStatement::Statement(id) => (id, Change::WithdrawStatement { statement: id, reason }),
        };
        let receipt = commit(store, &ns, vec![change], &[String::new()])?;
        fact_payload(store, &ns, &receipt, id)
    }

    /// Declares a predicate's cardinality and value type (undeclared ones are MANY, ANY),
    /// and optionally how its facts fade.
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn define_predicate(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        name: String,
        cardinality: Cardinality,
        #[graphql(default)] value_type: ValueType,
        description: Option<String>,
        decay: Option<ProfileInput>,
        #[graphql(
            desc = "Whether the built-in embedder embeds its facts (when the namespace embeds `DECLARED` facts, the default); left out, as it was."
        )]
        embed: Option<bool>,
    ) -> Result<DefinePredicatePayload> {
        let Start { ns, store } = start(ctx, &namespace, Mode::ReadWrite)?;
        let def = PredicateDef {
            name: name.clone(),
            cardinality: cardinality.into(),
            value_type: value_type.into(),
            description,
            decay: decay.as_ref().map(ostrakon_core::Profile::from),
        };
        let mut changes = vec![Change::DefinePredicate(def)];
        if let Some(embed) = embed {
            changes.push(Change::EmbedPredicate { predicate: name.clone(), embed });
        }
        let paths = vec![String::new(); changes.len()];
        let receipt = commit(store, &ns, changes, &paths)?;
        let mut predicate: Predicate = store.predicate(&ns, &name).map_err(engine)?.into();
        predicate.embed = store.predicate_embedded(&ns, &name).map_err(engine)?;
        Ok(DefinePredicatePayload { seq: receipt.seq.0, system_time: receipt.system_time.into(), predicate })
    }
}
