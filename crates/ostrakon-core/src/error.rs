//! The core's error type: every rejection names the input field and the value.

use thiserror::Error;

/// A rejected input. Nothing of an input that produced one is stored.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
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
    /// The input field it names.
    pub fn field(&self) -> &str {
        match self {
            CoreError::InvalidTime { field, .. }
            | CoreError::InvalidInterval { field, .. }
            | CoreError::InvalidValue { field, .. }
            | CoreError::TooLong { field, .. } => field,
        }
    }

    /// The same error with `prefix` before the field it names (`facts[1]` and `object`
    /// give `facts[1].object`); an empty prefix leaves it as it is.
    pub fn within(mut self, prefix: &str) -> Self {
        let (CoreError::InvalidTime { field, .. }
        | CoreError::InvalidInterval { field, .. }
        | CoreError::InvalidValue { field, .. }
        | CoreError::TooLong { field, .. }) = &mut self;
        *field = join_field(prefix, field);
        self
    }

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

/// `prefix.field`, or either alone when the other is empty.
pub fn join_field(prefix: &str, field: &str) -> String {
    match (prefix.is_empty(), field.is_empty()) {
        (true, _) => field.to_owned(),
        (false, true) => prefix.to_owned(),
        (false, false) => format!("{prefix}.{field}"),
    }
}
