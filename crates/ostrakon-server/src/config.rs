//! The server's configuration file (TOML): access tokens scoped to namespaces, and limits.
//! Loading parses and validates everything up front, so a bad file stops the server at
//! start with an error naming the file and the line or field, never at the first request.
//!
//! ```toml
//! # Browser pages allowed to call the API besides the server's own origin (optional):
//! # their CORS preflights are granted, any other origin's refused.
//! allowed_origins = ["https://agent-console.example"]
//!
//! # Optional; these are the defaults.
//! [limits]
//! max_body_bytes = 2097152   # larger bodies: HTTP 413, LIMIT_EXCEEDED
//! max_response_bytes = 16777216  # larger answers are replaced by LIMIT_EXCEEDED
//! request_timeout_seconds = 30   # past it the work stops, LIMIT_EXCEEDED
//! max_running_requests = 64      # GraphQL requests working at once; others wait their turn
//! max_depth = 16             # selection depth
//! max_complexity = 500000    # fields, lists counted by the items they may return
//! max_fields = 2000          # fields once fragments are expanded
//! max_aliases = 100          # aliased fields
//! max_mutations = 20         # mutations (batches) per request
//! max_page = 1000            # largest `first`
//! max_neighbor_depth = 4     # largest `neighbors(depth:)`
//! sparql_max_statements = 1000000  # statements a SPARQL view may hold (~450 bytes each)
//! sparql_max_memory_bytes = 268435456  # what one SPARQL query may keep while it runs
//! sparql_max_view_bytes = 671088640    # what SPARQL's projections (views) may hold at once
//!
//! # Optional; these are the defaults (no memory budget).
//! [namespaces]
//! idle_close_seconds = 300   # a namespace unused this long is closed, its memory freed
//! max_open = 1024            # most namespaces open at once
//! # memory_budget_bytes = 2147483648  # the open namespaces' state kept within this
//!
//! # Optional; these are the defaults (see `persisted.rs`).
//! [persisted_queries]
//! automatic = true           # clients may send a document's SHA-256 once it is registered
//! cached_documents = 10000   # registered documents kept (the least recently used dropped)
//! # allow_list = "operations.json"  # only these run (an Apollo persisted-query manifest;
//! #                                 # a path relative to this file)
//!
//! # Optional: read facts out of episodes with a language model (see `extraction.rs`).
//! # [extraction]
//! # url = "https://api.openai.com/v1"
//! # model = "gpt-4o-mini"
//! # api_key_env = "OPENAI_API_KEY"
//!
//! # Optional: keep the logs on a NATS JetStream cluster instead of the data directory
//! # (see `ClusterSettings`).
//! # [cluster]
//! # nats = ["nats://127.0.0.1:4222"]
//!
//! # Each token: a name for logs, a secret of at least 16 characters sent as
//! # `Authorization: Bearer <token>`, and its namespaces ("*" = all): "read", "read-write",
//! # "erase" (read-write, and erasing records) or "admin" (all that, and dropping the namespace).
//! [[tokens]]
//! name = "agent-a"
//! token = "change-me-to-a-long-random-secret"
//! namespaces = { alice = "read-write", bob = "read" }
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ostrakon_engine::admin::Residency;
use ostrakon_engine::core::Namespace;
use ostrakon_graphql::{Access, Limits, Mode};
use serde::Deserialize;
use thiserror::Error;

/// Default largest request body: 2 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 2 * 1024 * 1024;

/// Default largest response body: 16 MiB.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;

/// Default number of GraphQL requests working at once: 64.
pub const DEFAULT_MAX_RUNNING_REQUESTS: usize = 64;

/// Default time a request may run: 30 s.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Shortest token accepted: a shorter one is guessable.
pub const MIN_TOKEN_LEN: usize = 16;

/// Why a configuration could not be used.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TOML or does not have the expected shape; the message
    /// gives the line and column.
    #[error("config {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A value breaks a rule.
    #[error("config {path}: invalid `{field}`: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The field, as a path (`tokens[1].namespaces."bob"`).
        field: String,
        /// What is wrong.
        reason: String,
    },
}

/// The file as written.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    allowed_origins: Vec<String>,
    #[serde(default)]
    tokens: Vec<RawToken>,
    #[serde(default)]
    limits: RawLimits,
    #[serde(default)]
    namespaces: RawNamespaces,
    cluster: Option<crate::cluster::RawCluster>,
    #[serde(default)]
    persisted_queries: RawPersisted,
    extraction: Option<crate::extraction::RawExtraction>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawPersisted {
    automatic: Option<bool>,
    cached_documents: Option<usize>,
    allow_list: Option<PathBuf>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawNamespaces {
    idle_close_seconds: Option<u64>,
    max_open: Option<usize>,
    memory_budget_bytes: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawToken {
    name: String,
    token: String,
    #[serde(default)]
    namespaces: BTreeMap<String, RawMode>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
enum RawMode {
    Read,
    ReadWrite,
    Erase,
    Admin,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    max_body_bytes: Option<usize>,
    max_response_bytes: Option<usize>,
    request_timeout_seconds: Option<u64>,
    max_running_requests: Option<usize>,
    max_depth: Option<usize>,
    max_complexity: Option<usize>,
    max_fields: Option<usize>,
    max_aliases: Option<usize>,
    max_mutations: Option<usize>,
    max_page: Option<usize>,
    max_neighbor_depth: Option<u32>,
    sparql_max_statements: Option<usize>,
    sparql_max_memory_bytes: Option<u64>,
    sparql_max_view_bytes: Option<u64>,
}

/// One access token and what it may do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// Its name, for logs (never the secret).
    pub name: String,
    /// The secret sent as `Authorization: Bearer <secret>`.
    pub secret: String,
    /// Namespace (or `*`) → mode.
    pub grants: BTreeMap<String, Mode>,
}

/// The server's configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Access tokens; none means every request is the local user ([`Access::Local`]).
    pub tokens: Vec<Token>,
    /// Limits every GraphQL request is held to.
    pub limits: Limits,
    /// Largest request body in bytes; a larger one is answered 413 `LIMIT_EXCEEDED`.
    pub max_body_bytes: usize,
    /// Largest response body in bytes; a larger answer is replaced by `LIMIT_EXCEEDED`.
    pub max_response_bytes: usize,
    /// How long a request may run before its work is stopped (`LIMIT_EXCEEDED`).
    pub request_timeout: Duration,
    /// How many GraphQL requests may work at once (a request whose client left or whose
    /// deadline passed counts until its work stops); the others wait, within their deadline.
    pub max_running_requests: usize,
    /// Origins (`scheme://host[:port]`) whose pages may call the API, besides the
    /// server's own.
    pub allowed_origins: Vec<String>,
    /// Which namespaces stay open: idle ones close, at most so many, within a memory budget.
    pub residency: Residency,
    /// Most statements a SPARQL view of one namespace may hold; a larger view is refused
    /// with `LIMIT_EXCEEDED`. Each costs about 450 bytes while kept.
    pub sparql_max_statements: usize,
    /// Bytes one SPARQL query may keep while it runs (strings it builds, property path
    /// closures, solutions held to sort, deduplicate or group); past it the query is
    /// refused with `LIMIT_EXCEEDED`.
    pub sparql_max_memory_bytes: u64,
    /// Bytes SPARQL's projections may hold at once, kept or in use (estimated); a view
    /// that needs more is refused with `LIMIT_EXCEEDED`.
    pub sparql_max_view_bytes: u64,
    /// The NATS JetStream cluster that keeps the logs (`[cluster]`); `None`: a data
    /// directory on this machine.
    pub cluster: Option<crate::cluster::ClusterSettings>,
    /// Persisted queries: automatic ones, and the operator's allow-list.
    pub persisted: crate::persisted::PersistedSettings,
    /// Extraction of facts from episodes by a language model (`[extraction]`); `None`: off.
    pub extraction: Option<ostrakon_extract::ExtractionSettings>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            tokens: Vec::new(),
            limits: Limits::default(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            residency: Residency::default(),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_running_requests: DEFAULT_MAX_RUNNING_REQUESTS,
            allowed_origins: Vec::new(),
            sparql_max_statements: ostrakon_rdf::DEFAULT_MAX_STATEMENTS,
            sparql_max_memory_bytes: ostrakon_rdf::DEFAULT_MAX_QUERY_MEMORY,
            sparql_max_view_bytes: ostrakon_rdf::DEFAULT_MAX_VIEW_MEMORY,
            cluster: None,
            persisted: crate::persisted::PersistedSettings::default(),
            extraction: None,
        }
    }
}

impl Config {
    /// Reads and validates a configuration file.
    pub fn load(path: impl AsRef<Path>) -> Result<Config, ConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|source| ConfigError::Read { path: path.to_owned(), source })?;
        Config::parse(&text, path)
    }

    /// Parses and validates configuration text; `path` names it in errors.
    pub fn parse(text: &str, path: impl AsRef<Path>) -> Result<Config, ConfigError> {
        let path = path.as_ref();
        let raw: RawConfig = toml::from_str(text)
            .map_err(|e| ConfigError::Parse { path: path.to_owned(), message: e.to_string() })?;
        let invalid = |field: String, reason: &str| ConfigError::Invalid {
            path: path.to_owned(),
            field,
            reason: reason.to_owned(),
        };

        let mut tokens: Vec<Token> = Vec::with_capacity(raw.tokens.len());
        for (i, t) in raw.tokens.into_iter().enumerate() {
            if t.name.trim().is_empty() {
                return Err(invalid(format!("tokens[{i}].name"), "must not be empty"));
            }
            if tokens.iter().any(|other| other.name == t.name) {
                return Err(invalid(format!("tokens[{i}].name"), "another token has this name"));
            }
            if t.token.chars().count() < MIN_TOKEN_LEN {
                return Err(invalid(
                    format!("tokens[{i}].token"),
                    &format!("must have at least {MIN_TOKEN_LEN} characters"),
                ));
            }
            if t.token.chars().any(|c| c.is_whitespace() || c.is_control()) {
                return Err(invalid(
                    format!("tokens[{i}].token"),
                    "must not contain spaces or control characters",
                ));
            }
            if tokens.iter().any(|other| other.secret == t.token) {
                return Err(invalid(format!("tokens[{i}].token"), "another token has the same secret"));
            }
            if t.namespaces.is_empty() {
                return Err(invalid(
                    format!("tokens[{i}].namespaces"),
                    "grant at least one namespace (\"*\" for all)",
                ));
            }
            let mut grants = BTreeMap::new();
            for (ns, mode) in t.namespaces {
                if ns != "*" {
                    Namespace::new("namespace", &ns)
                        .map_err(|e| invalid(format!("tokens[{i}].namespaces.{ns:?}"), &e.to_string()))?;
                }
                let mode = match mode {
                    RawMode::Read => Mode::Read,
                    RawMode::ReadWrite => Mode::ReadWrite,
                    RawMode::Erase => Mode::Erase,
                    RawMode::Admin => Mode::Admin,
                };
                grants.insert(ns, mode);
            }
            tokens.push(Token { name: t.name, secret: t.token, grants });
        }

        let defaults = Limits::default();
        let l = raw.limits;
        let limits = Limits {
            max_depth: l.max_depth.unwrap_or(defaults.max_depth),
            max_complexity: l.max_complexity.unwrap_or(defaults.max_complexity),
            max_fields: l.max_fields.unwrap_or(defaults.max_fields),
            max_aliases: l.max_aliases.unwrap_or(defaults.max_aliases),
            max_mutations: l.max_mutations.unwrap_or(defaults.max_mutations),
            max_page: l.max_page.unwrap_or(defaults.max_page),
            max_neighbor_depth: l.max_neighbor_depth.unwrap_or(defaults.max_neighbor_depth),
        };
        let max_body_bytes = l.max_body_bytes.unwrap_or(DEFAULT_MAX_BODY_BYTES);
        let max_response_bytes = l.max_response_bytes.unwrap_or(DEFAULT_MAX_RESPONSE_BYTES);
        let max_running_requests = l.max_running_requests.unwrap_or(DEFAULT_MAX_RUNNING_REQUESTS);
        let sparql_max_statements = l.sparql_max_statements.unwrap_or(ostrakon_rdf::DEFAULT_MAX_STATEMENTS);
        let sparql_max_memory_bytes =
            l.sparql_max_memory_bytes.unwrap_or(ostrakon_rdf::DEFAULT_MAX_QUERY_MEMORY);
        let sparql_max_view_bytes = l.sparql_max_view_bytes.unwrap_or(ostrakon_rdf::DEFAULT_MAX_VIEW_MEMORY);
        let timeout = l.request_timeout_seconds.unwrap_or(DEFAULT_REQUEST_TIMEOUT.as_secs());
        if timeout > MAX_REQUEST_TIMEOUT_SECONDS {
            return Err(invalid(
                "limits.request_timeout_seconds".into(),
                &format!("must be at most {MAX_REQUEST_TIMEOUT_SECONDS} (a day)"),
            ));
        }
        let positive = [
            ("limits.max_body_bytes", max_body_bytes),
            ("limits.max_response_bytes", max_response_bytes),
            ("limits.max_running_requests", max_running_requests),
            ("limits.request_timeout_seconds", usize::try_from(timeout).unwrap_or(usize::MAX)),
            ("limits.max_depth", limits.max_depth),
            ("limits.max_complexity", limits.max_complexity),
            ("limits.max_fields", limits.max_fields),
            ("limits.max_mutations", limits.max_mutations),
            ("limits.max_page", limits.max_page),
            ("limits.max_neighbor_depth", limits.max_neighbor_depth as usize),
            ("limits.sparql_max_statements", sparql_max_statements),
            (
                "limits.sparql_max_memory_bytes",
                usize::try_from(sparql_max_memory_bytes).unwrap_or(usize::MAX),
            ),
            ("limits.sparql_max_view_bytes", usize::try_from(sparql_max_view_bytes).unwrap_or(usize::MAX)),
        ];
        if let Some((field, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(invalid((*field).to_owned(), "must be at least 1"));
        }
        // The engine refuses larger pages and walks itself; a higher limit here would only
        // turn LIMIT_EXCEEDED into a different error further down.
        if limits.max_page > ostrakon_engine::limits::MAX_PAGE {
            return Err(invalid(
                "limits.max_page".into(),
                &format!("must be at most {} (the engine's limit)", ostrakon_engine::limits::MAX_PAGE),
            ));
        }
        if limits.max_neighbor_depth > ostrakon_engine::limits::MAX_DEPTH {
            return Err(invalid(
                "limits.max_neighbor_depth".into(),
                &format!("must be at most {} (the engine's limit)", ostrakon_engine::limits::MAX_DEPTH),
            ));
        }
        let defaults = Residency::default();
        let n = raw.namespaces;
        let idle = n.idle_close_seconds.unwrap_or((defaults.idle_after_micros / 1_000_000) as u64);
        if idle == 0 || idle > MAX_REQUEST_TIMEOUT_SECONDS * 365 {
            return Err(invalid(
                "namespaces.idle_close_seconds".into(),
                "must be from 1 to 31536000 (a year)",
            ));
        }
        let max_open = n.max_open.unwrap_or(defaults.max_open);
        if max_open == 0 {
            return Err(invalid("namespaces.max_open".into(), "must be at least 1"));
        }
        if n.memory_budget_bytes == Some(0) {
            return Err(invalid(
                "namespaces.memory_budget_bytes".into(),
                "must be at least 1 (leave it out for no budget)",
            ));
        }
        let residency = Residency {
            idle_after_micros: i64::try_from(idle).unwrap_or(i64::MAX).saturating_mul(1_000_000),
            max_open,
            max_state_bytes: n.memory_budget_bytes,
        };
        let mut allowed_origins = Vec::with_capacity(raw.allowed_origins.len());
        for (i, origin) in raw.allowed_origins.into_iter().enumerate() {
            let normal = normalize_origin(&origin).ok_or_else(|| {
                invalid(format!("allowed_origins[{i}]"), "must be scheme://host[:port], with no path")
            })?;
            allowed_origins.push(normal);
        }
        let cluster =
            raw.cluster.map(|c| c.check()).transpose().map_err(|(field, why)| invalid(field, &why))?;
        let p = raw.persisted_queries;
        let cached_documents = p.cached_documents.unwrap_or(crate::persisted::DEFAULT_CACHED_DOCUMENTS);
        if cached_documents > crate::persisted::MAX_CACHED_DOCUMENTS {
            return Err(invalid(
                "persisted_queries.cached_documents".into(),
                &format!("must be at most {}", crate::persisted::MAX_CACHED_DOCUMENTS),
            ));
        }
        let allow_list = p
            .allow_list
            .map(|list| {
                let list = path.parent().map_or(list.clone(), |dir| dir.join(&list));
                crate::persisted::read_allow_list(&list).map_err(|why| {
                    invalid("persisted_queries.allow_list".into(), &format!("{}: {why}", list.display()))
                })
            })
            .transpose()?;
        let persisted = crate::persisted::PersistedSettings {
            automatic: p.automatic.unwrap_or(true),
            cached_documents,
            allow_list,
        };
        let extraction =
            raw.extraction.map(|e| e.check()).transpose().map_err(|(field, why)| invalid(field, &why))?;
        Ok(Config {
            extraction,
            cluster,
            persisted,
            tokens,
            limits,
            max_body_bytes,
            max_response_bytes,
            request_timeout: Duration::from_secs(timeout),
            max_running_requests,
            allowed_origins,
            residency,
            sparql_max_statements,
            sparql_max_memory_bytes,
            sparql_max_view_bytes,
        })
    }

    /// The secrets this configuration holds (the tokens', the model endpoint's API key),
    /// which no log line or answer may show.
    pub fn secrets(&self) -> Vec<String> {
        let tokens = self.tokens.iter().map(|t| t.secret.clone());
        tokens.chain(self.extraction.as_ref().and_then(|e| e.api_key.clone())).collect()
    }

    /// Whether requests must carry a token (otherwise every request is the local user).
    pub fn requires_tokens(&self) -> bool {
        !self.tokens.is_empty()
    }

    /// The access a bearer secret gives, if any token has it. Every token is compared in
    /// full, in time independent of where the secrets differ, so response times do not
    /// reveal how much of a guess was right.
    pub fn access_for(&self, secret: &str) -> Option<Access> {
        let mut found = None;
        for token in &self.tokens {
            if constant_time_eq(token.secret.as_bytes(), secret.as_bytes()) {
                found = Some(token);
            }
        }
        found.map(|t| Access::Token { name: t.name.clone(), grants: t.grants.clone() })
    }
}

/// Longest request timeout accepted: a day.
pub const MAX_REQUEST_TIMEOUT_SECONDS: u64 = 86_400;

/// An origin in the form browsers send it (`scheme://host[:port]`, lowercase), or `None`
/// when `text` is not one.
pub(crate) fn normalize_origin(text: &str) -> Option<String> {
    let (scheme, authority) = text.trim().split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let valid_scheme =
        !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    let valid_authority =
        !authority.is_empty() && authority.chars().all(|c| c.is_ascii_alphanumeric() || "-.:[]_".contains(c));
    (valid_scheme && valid_authority).then(|| format!("{scheme}://{}", authority.to_ascii_lowercase()))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
