//! The engine's enums as GraphQL enums (mirrored with `remote`, so they cannot drift).

use async_graphql::Enum;

/// Where a fact stands at (validAt, knownAt).
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
#[graphql(remote = "ostrakon_core::Status")]
pub enum FactStatus {
    /// In force (for a negation: the denial holds).
    Current,
    /// validAt is before its start.
    NotYetValid,
    /// validAt is at or after its end.
    Ended,
    /// A later value of a cardinality-one predicate holds.
    Superseded,
    /// A negation of its value holds (or, for a negation, a restatement).
    Negated,
    /// A competing fact with the same start ranks above it.
    Contradicted,
    /// It was retracted as of knownAt.
    Retracted,
}

/// Whether a fact states or denies its triple.
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug, Default, serde::Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[graphql(remote = "ostrakon_core::Polarity")]
pub enum Polarity {
    /// It holds.
    #[default]
    Asserted,
    /// It does not hold (removes the same value where it ranks above it).
    Negated,
}

/// One value at a time, or several.
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
#[graphql(remote = "ostrakon_core::Cardinality")]
pub enum Cardinality {
    /// A new value supersedes the old one from its start.
    One,
    /// Values coexist.
    Many,
}

/// The type of a value.
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug, Default)]
#[graphql(remote = "ostrakon_core::ValueType")]
pub enum ValueType {
    /// Anything (predicates only).
    #[default]
    Any,
    /// An entity.
    Entity,
    /// Text.
    String,
    /// A 64-bit integer.
    Integer,
    /// A float.
    Float,
    /// A boolean.
    Boolean,
    /// An instant.
    Time,
}
