//! The `DateTime` scalar: read as written (the namespace's time zone places dates), and
//! always written as RFC 3339 UTC with microseconds.

use async_graphql::{InputValueError, InputValueResult, Scalar, ScalarType, Value};
use ostrakon_core::Timestamp;

/// A time. As input: RFC 3339 with an offset, a local date-time, a date or a partial
/// date (`2014`, `2014-05`), read in the namespace's time zone. As output: RFC 3339 in UTC
/// with microseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DateTime {
    /// As a client wrote it; parsed by the resolver, which knows the namespace and the field.
    Text(String),
    /// An instant.
    At(Timestamp),
}

impl DateTime {
    /// The text as given, or the instant's RFC 3339 form.
    pub fn text(&self) -> String {
        match self {
            DateTime::Text(t) => t.clone(),
            DateTime::At(t) => t.to_string(),
        }
    }
}

impl From<Timestamp> for DateTime {
    fn from(t: Timestamp) -> Self {
        DateTime::At(t)
    }
}

#[Scalar(name = "DateTime")]
impl ScalarType for DateTime {
    fn parse(value: Value) -> InputValueResult<Self> {
        match value {
            Value::String(s) => Ok(DateTime::Text(s)),
            Value::Number(n) => Ok(DateTime::Text(n.to_string())),
            other => Err(InputValueError::expected_type(other)),
        }
    }

    fn to_value(&self) -> Value {
        Value::String(self.text())
    }
}

/// In JSON inputs (imports), a time is a string (or a bare year).
impl<'de> serde::Deserialize<'de> for DateTime {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Number(i64),
        }
        Ok(match Raw::deserialize(deserializer)? {
            Raw::Text(t) => DateTime::Text(t),
            Raw::Number(n) => DateTime::Text(n.to_string()),
        })
    }
}
