//! The core's error type: every rejection names the input field and the value.

use thiserror::Error;

/// A rejected input. Nothing of an input that produced one is stored.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum CoreError {
    /// A time could not be read.
    #[error("invalid time in `{field}`: {value:?}: {reason}")]
    InvalidTime {
        /// The input field.
        field: String,
        /// The value as given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An interval whose start is not before its end.
    #[error("invalid interval in `{field}`: from {from} is not before to {to}")]
    InvalidInterval {
        /// The input field.
        field: String,
        /// The start as read.
        from: String,
        /// The end as read.
        to: String,
    },
    /// A value that breaks a rule of the model (a name, a number, a confidence…).
    #[error("invalid value in `{field}`: {value:?}: {reason}")]
    InvalidValue {
        /// The input field.
        field: String,
        /// The value as given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl CoreError {
    /// Shorthand for [`CoreError::InvalidValue`].
    pub fn invalid_value(
        field: impl std::fmt::Display,
        value: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        CoreError::InvalidValue { field: field.to_string(), value: value.into(), reason: reason.into() }
    }
}
