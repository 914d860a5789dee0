//! Values a fact can point at: another entity or a typed literal.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

use serde::{Deserialize, Serialize};

use crate::error::CoreError;
use crate::ids::EntityId;
use crate::time::Timestamp;

/// Longest string literal (a fact's value, an entity property), in bytes. Longer text
/// belongs in an episode.
pub const MAX_LITERAL_BYTES: usize = 64 * 1024;

/// A typed literal. Floats are finite (checked by [`Literal::validate`]) and compare by
/// their total order, so literals can be keys.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Literal {
    /// Text.
    String(String),
    /// A signed 64-bit integer.
    Integer(i64),
    /// A finite 64-bit float.
    Float(f64),
    /// A boolean.
    Boolean(bool),
    /// An instant.
    Time(Timestamp),
}

impl Literal {
    /// The literal's type.
    pub fn value_type(&self) -> ValueType {
        match self {
            Literal::String(_) => ValueType::String,
            Literal::Integer(_) => ValueType::Integer,
            Literal::Float(_) => ValueType::Float,
            Literal::Boolean(_) => ValueType::Boolean,
            Literal::Time(_) => ValueType::Time,
        }
    }

    /// Rejects non-finite floats and strings over [`MAX_LITERAL_BYTES`]; `field` names the
    /// input in the error.
    pub fn validate(&self, field: impl fmt::Display) -> Result<(), CoreError> {
        match self {
            Literal::Float(f) if !f.is_finite() => {
                Err(CoreError::invalid_value(field, f.to_string(), "a float must be finite"))
            }
            Literal::String(s) => CoreError::check_len(field, s.len(), MAX_LITERAL_BYTES, "bytes"),
            _ => Ok(()),
        }
    }

    /// The same literal with one zero: `-0.0` becomes `0.0` (they are equal as numbers
    /// but not in the total order literals are compared by).
    pub fn normalized(self) -> Self {
        match self {
            // A float pattern matches by `==`, so this catches -0.0 too.
            Literal::Float(0.0) => Literal::Float(0.0),
            other => other,
        }
    }

    fn discriminant(&self) -> u8 {
        match self {
            Literal::String(_) => 0,
            Literal::Integer(_) => 1,
            Literal::Float(_) => 2,
            Literal::Boolean(_) => 3,
            Literal::Time(_) => 4,
        }
    }
}

impl PartialEq for Literal {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Literal {}

impl PartialOrd for Literal {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Literal {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Literal::String(a), Literal::String(b)) => a.cmp(b),
            (Literal::Integer(a), Literal::Integer(b)) => a.cmp(b),
            (Literal::Float(a), Literal::Float(b)) => a.total_cmp(b),
            (Literal::Boolean(a), Literal::Boolean(b)) => a.cmp(b),
            (Literal::Time(a), Literal::Time(b)) => a.cmp(b),
            _ => self.discriminant().cmp(&other.discriminant()),
        }
    }
}

impl Hash for Literal {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.discriminant().hash(state);
        match self {
            Literal::String(s) => s.hash(state),
            Literal::Integer(i) => i.hash(state),
            Literal::Float(f) => f.to_bits().hash(state),
            Literal::Boolean(b) => b.hash(state),
            Literal::Time(t) => t.hash(state),
        }
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::String(s) => write!(f, "{s:?}"),
            Literal::Integer(i) => write!(f, "{i}"),
            Literal::Float(x) => write!(f, "{x:?}"),
            Literal::Boolean(b) => write!(f, "{b}"),
            Literal::Time(t) => write!(f, "{t}"),
        }
    }
}

/// The object of a fact.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Value {
    /// Another entity: the fact is an edge of the graph.
    Entity(EntityId),
    /// A literal: the fact is a property.
    Literal(Literal),
}

impl Value {
    /// The value's type.
    pub fn value_type(&self) -> ValueType {
        match self {
            Value::Entity(_) => ValueType::Entity,
            Value::Literal(l) => l.value_type(),
        }
    }

    /// The entity pointed at, if any.
    pub fn as_entity(&self) -> Option<EntityId> {
        match self {
            Value::Entity(e) => Some(*e),
            Value::Literal(_) => None,
        }
    }
}

impl From<EntityId> for Value {
    fn from(e: EntityId) -> Self {
        Value::Entity(e)
    }
}

impl From<Literal> for Value {
    fn from(l: Literal) -> Self {
        Value::Literal(l)
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Entity(e) => write!(f, "{e}"),
            Value::Literal(l) => write!(f, "{l}"),
        }
    }
}

/// The type of value a predicate accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum ValueType {
    /// Anything.
    #[default]
    Any,
    /// An entity.
    Entity,
    /// Text.
    String,
    /// An integer.
    Integer,
    /// A float.
    Float,
    /// A boolean.
    Boolean,
    /// An instant.
    Time,
}

/// As the schema names it: `ENTITY`, `STRING`, `INTEGER`, `FLOAT`, `BOOLEAN`, `TIME`, `ANY`.
impl std::fmt::Display for ValueType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ValueType::Any => "ANY",
            ValueType::Entity => "ENTITY",
            ValueType::String => "STRING",
            ValueType::Integer => "INTEGER",
            ValueType::Float => "FLOAT",
            ValueType::Boolean => "BOOLEAN",
            ValueType::Time => "TIME",
        })
    }
}

impl ValueType {
    /// Whether a value of type `actual` is accepted.
    pub fn accepts(self, actual: ValueType) -> bool {
        self == ValueType::Any || self == actual
    }
}
