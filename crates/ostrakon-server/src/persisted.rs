//! Persisted queries: a client sends a document's SHA-256 instead of the document.
//!
//! - **Automatic** (Apollo's protocol, on by default): a request whose
//!   `extensions.persistedQuery` is `{ "version": 1, "sha256Hash": "<hex>" }` and has no
//!   `query` runs the document registered under that hash, or is answered
//!   `PERSISTED_QUERY_NOT_FOUND` (message `PersistedQueryNotFound`, as Apollo clients
//!   expect); the client then sends the document with its hash once, which registers it
//!   (after checking the hash). The documents are kept in memory, the least recently used
//!   dropped past a bound — a dropped one is simply sent again.
//! - **Allow-list** (`[persisted_queries] allow_list = "operations.json"`): only the
//!   documents of an Apollo persisted-query manifest run, sent by hash or whole; any other
//!   is refused with `OPERATION_NOT_ALLOWED`, and nothing is registered. It governs every
//!   query endpoint: `/graphql`, its WebSocket, and `/sparql` (the manifest may list SPARQL
//!   queries, each under the SHA-256 of its text; any other is refused, HTTP 403). The
//!   server's own documents (the MCP tools') are not held to it.

use std::num::NonZeroUsize;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use ostrakon_graphql::code;
use serde::Deserialize;
use sha2::Digest as _;

/// Documents remembered by default.
pub const DEFAULT_CACHED_DOCUMENTS: usize = 10_000;
/// Most documents that may be remembered.
pub(crate) const MAX_CACHED_DOCUMENTS: usize = 1_000_000;
/// Most bytes of registered documents kept, whatever their number: past it the least
/// recently used are dropped.
pub const CACHED_BYTES: usize = 64 << 20;

/// Why a request's persisted query cannot run: its code and message.
pub(crate) type Refusal = (&'static str, String);

/// The documents known by hash.
pub(crate) struct Persisted {
    /// Registered by clients (automatic persisted queries); `None` when off.
    cache: Option<Mutex<Cache>>,
    /// The operator's allow-list: hash → document; `None` when every document may run.
    allowed: Option<std::collections::HashMap<String, Arc<str>>>,
}

/// Registered documents by hash, and the bytes they hold.
struct Cache {
    documents: lru::LruCache<String, Arc<str>>,
    bytes: usize,
}

impl Cache {
    fn put(&mut self, hash: String, document: &str) {
        if let Some((_, old)) = self.documents.push(hash, Arc::from(document)) {
            self.bytes -= old.len();
        }
        self.bytes += document.len();
        while self.bytes > CACHED_BYTES {
            let Some((_, dropped)) = self.documents.pop_lru() else { break };
            self.bytes -= dropped.len();
        }
    }
}

/// How persisted queries are configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PersistedSettings {
    /// Whether clients may register documents by hash.
    pub automatic: bool,
    /// How many registered documents are kept.
    pub cached_documents: usize,
    /// Only these documents run (hash → document), when given.
    pub allow_list: Option<std::collections::BTreeMap<String, String>>,
}

impl Default for PersistedSettings {
    fn default() -> Self {
        PersistedSettings { automatic: true, cached_documents: DEFAULT_CACHED_DOCUMENTS, allow_list: None }
    }
}

/// An Apollo persisted-query manifest, as its tools write it.
#[derive(Deserialize)]
struct Manifest {
    format: String,
    version: u32,
    operations: Vec<ManifestOperation>,
}

#[derive(Deserialize)]
struct ManifestOperation {
    id: String,
    body: String,
}

/// Reads an allow-list: an Apollo persisted-query manifest (`format`
/// `"apollo-persisted-query-manifest"`, `version` 1, `operations` of `id` and `body`),
/// each id the SHA-256 of its body. Returns hash → document, or why the file cannot be
/// used.
pub fn read_allow_list(path: &Path) -> Result<std::collections::BTreeMap<String, String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read it: {e}"))?;
    let manifest: Manifest = serde_json::from_str(&text).map_err(|e| format!("not a manifest: {e}"))?;
    if manifest.format != "apollo-persisted-query-manifest" || manifest.version != 1 {
        return Err(format!(
            "format {:?} version {}: expected \"apollo-persisted-query-manifest\" version 1",
            manifest.format, manifest.version
        ));
    }
    let mut out = std::collections::BTreeMap::new();
    for (i, op) in manifest.operations.into_iter().enumerate() {
        let hash = sha256_hex(&op.body);
        if op.id != hash {
            return Err(format!("operations[{i}].id is not the SHA-256 of its body (that is {hash})"));
        }
        out.insert(hash, op.body);
    }
    Ok(out)
}

/// The lowercase hex SHA-256 of `text`.
pub(crate) fn sha256_hex(text: &str) -> String {
    sha2::Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

impl Persisted {
    pub(crate) fn new(settings: &PersistedSettings) -> Self {
        let allowed = settings
            .allow_list
            .as_ref()
            .map(|list| list.iter().map(|(hash, doc)| (hash.clone(), Arc::from(doc.as_str()))).collect());
        let cache = (settings.automatic && allowed.is_none())
            .then(|| NonZeroUsize::new(settings.cached_documents))
            .flatten()
            .map(|n| Mutex::new(Cache { documents: lru::LruCache::new(n), bytes: 0 }));
        Persisted { cache, allowed }
    }

    /// Fills in the document of a request sent by hash, registers one sent with its hash,
    /// and holds every request to the allow-list; `Err` says why it cannot run.
    pub(crate) fn resolve(&self, request: &mut async_graphql::Request) -> Result<(), Refusal> {
        let Some(hash) = asked_hash(request)? else { return self.allows(&request.query) };
        if !request.query.is_empty() {
            // Sent whole with its hash: it must be that document's.
            if sha256_hex(&request.query) != hash {
                return Err((
                    code::PERSISTED_QUERY_HASH_MISMATCH,
                    "provided sha does not match query: `extensions.persistedQuery.sha256Hash` must be the SHA-256 \
                     (lowercase hex) of `query`"
                        .into(),
                ));
            }
            if let Some(allowed) = &self.allowed {
                return if allowed.contains_key(&hash) { Ok(()) } else { Err(not_allowed()) };
            }
            if let Some(cache) = &self.cache {
                cache.lock().unwrap_or_else(PoisonError::into_inner).put(hash, &request.query);
            }
            return Ok(());
        }
        let found = match (&self.allowed, &self.cache) {
            (Some(allowed), _) => allowed.get(&hash).cloned(),
            (None, Some(cache)) => {
                cache.lock().unwrap_or_else(PoisonError::into_inner).documents.get(&hash).cloned()
            }
            (None, None) => {
                return Err((
                    code::PERSISTED_QUERY_NOT_SUPPORTED,
                    "PersistedQueryNotSupported: this server takes whole documents only".into(),
                ));
            }
        };
        match found {
            Some(document) => {
                request.query = document.to_string();
                Ok(())
            }
            None if self.allowed.is_some() => Err(not_allowed()),
            None => Err((code::PERSISTED_QUERY_NOT_FOUND, "PersistedQueryNotFound".into())),
        }
    }
}

impl Persisted {
    /// Whether `query` may run where documents come whole (subscriptions): every one,
    /// or those of the allow-list.
    pub(crate) fn allows(&self, query: &str) -> Result<(), Refusal> {
        match &self.allowed {
            Some(allowed) if !allowed.contains_key(&sha256_hex(query)) => Err(not_allowed()),
            _ => Ok(()),
        }
    }

    /// Whether only the allow-list's documents run.
    pub(crate) fn has_allow_list(&self) -> bool {
        self.allowed.is_some()
    }
}

fn not_allowed() -> Refusal {
    (
        code::OPERATION_NOT_ALLOWED,
        "this server runs only the operations of its allow-list (`[persisted_queries] allow_list`)".into(),
    )
}

/// The hash a request's `extensions.persistedQuery` names, if it has one.
fn asked_hash(request: &async_graphql::Request) -> Result<Option<String>, Refusal> {
    use async_graphql::Value;
    let Some(persisted) = request.extensions.get("persistedQuery") else { return Ok(None) };
    let bad = |what: &str| {
        (
            code::BAD_REQUEST,
            format!(
                "`extensions.persistedQuery` {what}: expected {{\"version\": 1, \"sha256Hash\": \"<64 hex digits>\"}}"
            ),
        )
    };
    let Value::Object(fields) = persisted else { return Err(bad("is not an object")) };
    match fields.get("version") {
        Some(Value::Number(n)) if n.as_u64() == Some(1) => {}
        _ => {
            return Err((
                code::PERSISTED_QUERY_NOT_SUPPORTED,
                "PersistedQueryNotSupported: `extensions.persistedQuery.version` must be 1".into(),
            ));
        }
    }
    match fields.get("sha256Hash") {
        Some(Value::String(hash)) if hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            Ok(Some(hash.to_ascii_lowercase()))
        }
        _ => Err(bad("has no `sha256Hash` of 64 hex digits")),
    }
}
