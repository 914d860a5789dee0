//! Input types and their translation into engine changes. Every error names the input
//! field as the request wrote it (`facts[2].validFrom`).

use std::fmt::Display;

use async_graphql::{ID, InputObject, OneofObject, Result};
use ostrakon_core::{EntityId, FactId, Interval, Literal, Namespace, Timestamp};
use ostrakon_engine::{Change, EntityRef, NewFact, ObjectRef, Store, change::EpisodeRef};
use serde::Deserialize;

use crate::error::engine_error as engine;
use crate::error::{code, coded};
use crate::types::enums::Polarity;
use crate::types::scalars::DateTime;

/// An entity by id, or by canonical name or alias: exactly one of the two (`@oneOf`). In
/// writes, a name nobody has creates the entity.
#[derive(OneofObject, Deserialize, Clone, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum EntityRefInput {
    /// Its id.
    Id(ID),
    /// Its canonical name or an alias (case and spacing ignored).
    Name(String),
}

/// A value: exactly one field set (`@oneOf`).
#[derive(OneofObject, Deserialize, Clone, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum ValueInput {
    /// An entity.
    Entity(EntityRefInput),
    /// Text.
    String(String),
    /// A 64-bit integer.
    Integer(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Boolean(bool),
    /// An instant.
    Time(DateTime),
}

/// A fact to assert (or deny).
#[derive(InputObject, Deserialize, Clone, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FactInput {
    /// What it is about.
    pub subject: EntityRefInput,
    /// The relation.
    pub predicate: String,
    /// An entity or a literal.
    pub object: ValueInput,
    /// When it starts to hold; the episode's time in `recordEpisode`, else now.
    pub valid_from: Option<DateTime>,
    /// When it stops holding (excluded); open-ended when absent.
    pub valid_to: Option<DateTime>,
    /// How sure the source is, in (0, 1]; 1 when absent.
    pub confidence: Option<f64>,
    /// Stated or denied.
    #[graphql(default)]
    #[serde(default)]
    pub polarity: Polarity,
    /// Episodes it comes from, by id.
    #[graphql(default)]
    #[serde(default)]
    pub provenance: Vec<ID>,
    /// Episodes it comes from, by external id.
    #[graphql(default)]
    #[serde(default)]
    pub provenance_external_ids: Vec<String>,
    /// The statement this one corrects (a fact's own id names its first statement): it is
    /// withdrawn as of this write, and the fact it stated is retracted once none of its
    /// statements is left.
    pub supersedes: Option<ID>,
    /// How much it matters, in [0, 1]: raises its initial strength (salience, not truth).
    pub importance: Option<f64>,
    /// Whether it is the user's correction of the agent: the strongest start.
    #[graphql(default = false)]
    #[serde(default)]
    pub correction: bool,
}

/// An observation.
#[derive(InputObject, Deserialize, Clone, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EpisodeInput {
    /// The text, verbatim.
    pub text: String,
    /// When it happened; now when absent.
    pub occurred_at: Option<DateTime>,
    /// Its conversation or session.
    pub thread: Option<String>,
    /// Where it came from.
    pub source: Option<String>,
    /// Who spoke.
    pub role: Option<String>,
    /// The client's id for it, unique in the namespace.
    pub external_id: Option<String>,
    /// How much it matters, in [0, 1]: raises its initial strength (salience, not truth).
    pub importance: Option<f64>,
    /// Its vector, in namespaces whose clients send vectors (see `configureNamespace`).
    pub embedding: Option<Vec<f64>>,
}

/// Where a namespace's vectors come from.
#[derive(async_graphql::Enum, Deserialize, Copy, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EmbeddingModeKind {
    /// The server's built-in embedder embeds every text, with its default model
    /// (multilingual-e5-small unless the server is set otherwise) or the one `model` names.
    Builtin,
    /// Clients send vectors with episodes and queries.
    Client,
    /// No vectors: full text and the graph only.
    Off,
}

/// A model of the server's built-in embedder.
#[derive(async_graphql::Enum, Deserialize, Copy, Clone, Debug, PartialEq, Eq)]
#[graphql(remote = "ostrakon_core::BuiltinModel")]
pub enum EmbeddingModel {
    /// multilingual-e5-small: about a hundred languages.
    E5,
    /// all-MiniLM-L6-v2: English only, about 2.7 times faster to embed.
    #[graphql(name = "MINILM")]
    #[serde(rename = "MINILM")]
    MiniLm,
}

/// Which facts the built-in embedder embeds (episodes always are).
#[derive(async_graphql::Enum, Deserialize, Copy, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[graphql(remote = "ostrakon_core::FactEmbedding")]
pub enum FactEmbeddingKind {
    /// None: facts are found by full text and the graph.
    None,
    /// Those whose predicate was defined with `embed: true` (the default).
    Declared,
    /// Every fact.
    All,
}

/// How a namespace gets its vectors, and which records the built-in embedder embeds.
/// Fields left out stay as they are.
#[derive(InputObject, Deserialize, Clone, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct EmbeddingInput {
    /// Where vectors come from.
    pub mode: Option<EmbeddingModeKind>,
    /// Their length (CLIENT only).
    pub dimensions: Option<u32>,
    /// The built-in embedder's model for this namespace (BUILTIN only; alone it means
    /// BUILTIN); without it, the server's default model.
    pub model: Option<EmbeddingModel>,
    /// Which facts are embedded (built-in mode).
    pub facts: Option<FactEmbeddingKind>,
    /// Whether entities are embedded (built-in mode).
    pub entities: Option<bool>,
}

impl EmbeddingInput {
    /// The changes this asks for: the mode, then the policy, each only if given.
    pub(crate) fn changes(&self) -> Result<Vec<Change>> {
        let mut changes = Vec::new();
        let mode = self.mode.or(self.model.map(|_| EmbeddingModeKind::Builtin));
        if let Some(mode) = mode {
            changes.push(Change::ConfigureEmbedding(Self::mode(mode, self.dimensions, self.model)?));
        } else if let Some(d) = self.dimensions {
            return Err(invalid("embedding.dimensions", d, "give the mode (CLIENT) with its dimensions"));
        }
        if self.facts.is_some() || self.entities.is_some() {
            changes.push(Change::ConfigureEmbeddingPolicy(ostrakon_engine::change::EmbeddingPolicyPatch {
                facts: self.facts.map(Into::into),
                entities: self.entities,
            }));
        }
        if changes.is_empty() {
            return Err(invalid("embedding", "{}", "give a mode, facts or entities"));
        }
        Ok(changes)
    }

    fn mode(
        mode: EmbeddingModeKind,
        dimensions: Option<u32>,
        model: Option<EmbeddingModel>,
    ) -> Result<ostrakon_core::EmbeddingMode> {
        use ostrakon_core::EmbeddingMode as M;
        match (mode, model) {
            (EmbeddingModeKind::Builtin, Some(model)) if dimensions.is_none() => {
                return Ok(M::Model(model.into()));
            }
            (EmbeddingModeKind::Client | EmbeddingModeKind::Off, Some(model)) => {
                return Err(invalid("embedding.model", format!("{model:?}"), "only BUILTIN takes a model"));
            }
            _ => {}
        }
        match (mode, dimensions) {
            (EmbeddingModeKind::Client, Some(dim)) => Ok(M::Client { dim }),
            (EmbeddingModeKind::Client, None) => {
                Err(invalid("embedding.dimensions", "null", "CLIENT needs the vectors' dimensions"))
            }
            (_, Some(d)) => Err(invalid("embedding.dimensions", d, "only CLIENT takes dimensions")),
            (EmbeddingModeKind::Builtin, None) => Ok(M::Builtin),
            (EmbeddingModeKind::Off, None) => Ok(M::Off),
        }
    }
}

/// An entity the client extracted: created if no entity has the name, else given the
/// aliases and kind as its next version.
#[derive(InputObject, Deserialize, Clone, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EntityInput {
    /// Canonical name.
    pub name: String,
    /// Other names.
    #[graphql(default)]
    #[serde(default)]
    pub aliases: Vec<String>,
    /// Its kind.
    pub kind: Option<String>,
}

pub(crate) fn invalid(field: impl Display, value: impl Display, reason: &str) -> async_graphql::Error {
    coded(code::INVALID_VALUE, format!("invalid value in `{field}`: {value}: {reason}"))
}

/// Reads an id field (`"12"`).
pub(crate) fn parse_id(field: impl Display, id: &ID) -> Result<u64> {
    id.as_str()
        .trim()
        .parse::<u64>()
        .map_err(|_| invalid(field, format!("{:?}", id.as_str()), "expected a numeric id"))
}

pub(crate) fn fact_id(field: impl Display, id: &ID) -> Result<FactId> {
    parse_id(field, id).map(FactId)
}

/// What an id given to `retractFact` or `endFact` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FactOrStatement {
    /// A fact (`12`), or a restatement by the number its assertion was given.
    Fact(FactId),
    /// One statement (`s12`): a fact's first statement has the fact's number.
    Statement(FactId),
}

/// Reads a fact id (`12`) or a statement id (`s12`).
pub(crate) fn fact_or_statement(field: impl Display, id: &ID) -> Result<FactOrStatement> {
    let text = id.as_str().trim();
    match text.strip_prefix('s') {
        Some(n) => n.parse::<u64>().map(|n| FactOrStatement::Statement(FactId(n))).map_err(|_| {
            invalid(
                field,
                format!("{text:?}"),
                "expected a fact id (a number) or a statement id (s and a number)",
            )
        }),
        None => text.parse::<u64>().map(|n| FactOrStatement::Fact(FactId(n))).map_err(|_| {
            invalid(
                field,
                format!("{text:?}"),
                "expected a fact id (a number) or a statement id (s and a number)",
            )
        }),
    }
}

// The conversions below take the input's name as something to display, written out only
// where it may be needed: an import converts millions of facts, and naming each part of
// each up front cost more than the rest of the conversion.

/// Parses a time for `field` in the namespace's time zone.
pub(crate) fn time(
    store: &Store,
    ns: &Namespace,
    field: impl Display,
    value: &DateTime,
) -> Result<Timestamp> {
    match value {
        DateTime::At(t) => Ok(*t),
        // The zone and the field's name are needed only for the other forms (and errors).
        DateTime::Text(text) => match Timestamp::from_rfc3339(text) {
            Some(t) => Ok(t),
            None => store.parse_time(ns, &field.to_string(), text).map_err(engine),
        },
    }
}

/// An entity reference for a write: by id, or by name (created when absent).
pub(crate) fn entity_ref(field: impl Display, r: &EntityRefInput) -> Result<EntityRef> {
    match r {
        EntityRefInput::Id(id) => Ok(EntityRef::Id(EntityId(parse_id(format_args!("{field}.id"), id)?))),
        EntityRefInput::Name(name) => Ok(EntityRef::Name(name.clone())),
    }
}

/// An entity reference for a read: it must exist at the read's knownAt.
pub(crate) fn existing_entity(
    store: &Store,
    ns: &Namespace,
    basis: ostrakon_engine::Basis,
    field: &str,
    r: &EntityRefInput,
) -> Result<EntityId> {
    let unknown =
        |value: String| coded(code::UNKNOWN_ENTITY, format!("unknown entity in `{field}`: {value}"));
    match entity_ref(field, r)? {
        EntityRef::Id(id) => {
            let reader = store.reader(ns, basis);
            let known = reader.entity_version(id).map_err(engine)?.is_some();
            if known { Ok(id) } else { Err(unknown(id.to_string())) }
        }
        EntityRef::Name(name) => {
            let found = store.reader(ns, basis).entity_named(&name).map_err(engine)?;
            found.ok_or_else(|| unknown(format!("{name:?}")))
        }
        _ => Err(unknown("?".into())),
    }
}

/// A value for a write.
pub(crate) fn object(
    store: &Store,
    ns: &Namespace,
    field: impl Display,
    v: &ValueInput,
) -> Result<ObjectRef> {
    Ok(match v {
        ValueInput::Entity(e) => ObjectRef::Entity(entity_ref(format_args!("{field}.entity"), e)?),
        ValueInput::String(s) => ObjectRef::Literal(Literal::String(s.clone())),
        ValueInput::Integer(i) => ObjectRef::Literal(Literal::Integer(*i)),
        ValueInput::Float(f) => ObjectRef::Literal(Literal::Float(*f)),
        ValueInput::Boolean(b) => ObjectRef::Literal(Literal::Boolean(*b)),
        ValueInput::Time(t) => {
            ObjectRef::Literal(Literal::Time(time(store, ns, format_args!("{field}.time"), t)?))
        }
    })
}

/// A value for a read filter: entities must exist.
pub(crate) fn object_value(
    store: &Store,
    ns: &Namespace,
    basis: ostrakon_engine::Basis,
    field: &str,
    v: &ValueInput,
) -> Result<ostrakon_core::Value> {
    if let ValueInput::Entity(e) = v {
        return existing_entity(store, ns, basis, &format!("{field}.entity"), e)
            .map(ostrakon_core::Value::Entity);
    }
    match object(store, ns, field, v)? {
        ObjectRef::Literal(l) => Ok(ostrakon_core::Value::Literal(l)),
        ObjectRef::Entity(_) => Err(invalid(field, "{…}", "an entity must be given by id or name")),
    }
}

/// A fact input as an engine fact; `default_from` applies when `validFrom` is absent.
/// `episode` is the batch's own episode (change index), made the fact's provenance.
/// `field` names the input in errors.
pub(crate) fn new_fact(
    store: &Store,
    ns: &Namespace,
    field: &dyn Display,
    f: &FactInput,
    default_from: Timestamp,
    episode: Option<usize>,
) -> Result<NewFact> {
    let from = match &f.valid_from {
        Some(t) => time(store, ns, format_args!("{field}.validFrom"), t)?,
        None => default_from,
    };
    let to = match &f.valid_to {
        Some(t) => Some(time(store, ns, format_args!("{field}.validTo"), t)?),
        None => None,
    };
    let valid = Interval::new(format_args!("{field}.validFrom..validTo"), from, to).map_err(engine)?;
    let mut provenance: Vec<EpisodeRef> = episode.map(EpisodeRef::New).into_iter().collect();
    for (i, id) in f.provenance.iter().enumerate() {
        provenance.push(EpisodeRef::Id(ostrakon_core::EpisodeId(parse_id(
            format_args!("{field}.provenance[{i}]"),
            id,
        )?)));
    }
    provenance.extend(f.provenance_external_ids.iter().map(|e| EpisodeRef::External(e.clone())));
    Ok(NewFact {
        subject: entity_ref(format_args!("{field}.subject"), &f.subject)?,
        predicate: f.predicate.clone(),
        object: object(store, ns, format_args!("{field}.object"), &f.object)?,
        valid,
        confidence: f.confidence,
        polarity: f.polarity.into(),
        provenance,
        supersedes: f
            .supersedes
            .as_ref()
            .map(|id| fact_id(format_args!("{field}.supersedes"), id))
            .transpose()?,
        importance: f.importance,
        correction: f.correction,
    })
}
