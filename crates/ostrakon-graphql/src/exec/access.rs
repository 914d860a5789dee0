//! Who may read or write which namespace.

use std::collections::BTreeMap;

/// What a grant allows in a namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    /// Queries and subscriptions.
    Read,
    /// Queries, subscriptions and mutations.
    ReadWrite,
    /// All of that, and erasing records (`eraseEntity`, `eraseEpisodes`, `eraseFacts`).
    Erase,
    /// All of that, and dropping the namespace (`dropNamespace`).
    Admin,
}

impl Mode {
    /// What a refusal says the token may not do.
    pub(crate) fn verb(self) -> &'static str {
        match self {
            Mode::Read => "read",
            Mode::ReadWrite => "write to",
            Mode::Erase => "erase from",
            Mode::Admin => "administer",
        }
    }
}

/// The caller's rights, put in each request's data by the transport.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Access {
    /// The local single user (no tokens configured): everything.
    Local,
    /// A token's grants: namespace name (or `*` for every namespace) → mode.
    Token {
        /// The token's name, for logs.
        name: String,
        /// Its grants.
        grants: BTreeMap<String, Mode>,
    },
    /// Nothing (no or unknown credentials).
    Denied,
}

impl Access {
    /// Who is asking, for an audit record: the token's name, or `local`.
    pub fn who(&self) -> Option<String> {
        match self {
            Access::Local => Some("local".into()),
            Access::Token { name, .. } => Some(name.clone()),
            Access::Denied => None,
        }
    }
}

impl Access {
    /// Whether the caller may use `namespace` in `mode`.
    pub fn allows(&self, namespace: &str, mode: Mode) -> bool {
        match self {
            Access::Local => true,
            Access::Denied => false,
            Access::Token { grants, .. } => {
                grants.get(namespace).or_else(|| grants.get("*")).is_some_and(|granted| *granted >= mode)
            }
        }
    }
}
