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
    /// A string, or a list, longer than its documented limit.
    #[error("limit exceeded in `{field}`: {len} {unit} (at most {max})")]
    TooLong {
        /// The input field.
        field: String,
        /// Its length.
        len: usize,
        /// What is counted: `bytes` or `items`.
        unit: &'static str,
        /// The limit.
        max: usize,
    },
}

impl CoreError {
    /// Fails with [`CoreError::TooLong`] when `len` is over `max`.
    pub fn check_len(
        field: impl std::fmt::Display,
        len: usize,
        max: usize,
        unit: &'static str,
    ) -> Result<(), Self> {
        if len > max {
            return Err(CoreError::TooLong { field: field.to_string(), len, unit, max });
        }
        Ok(())
    }

    /// Shorthand for [`CoreError::InvalidValue`].
    pub fn invalid_value(
        field: impl std::fmt::Display,
        value: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        CoreError::InvalidValue { field: field.to_string(), value: value.into(), reason: reason.into() }
    }
}
