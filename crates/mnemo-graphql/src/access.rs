//! Who may read or write which namespace.

use std::collections::BTreeMap;

/// What a grant allows in a namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    /// Queries and subscriptions.
    Read,
    /// Queries, subscriptions and mutations.
    ReadWrite,
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
