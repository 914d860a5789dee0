//! GraphQL errors with a stable `extensions.code`, and the extension that gives one to
//! every error the GraphQL machinery raises itself (limits, validation).

use std::sync::Arc;

use async_graphql::extensions::{Extension, ExtensionContext, ExtensionFactory, NextRequest};
use async_graphql::{Error, ErrorExtensions, Response};
use ostrakon_core::CoreError;
use ostrakon_engine::{OpenError, ReadError, StorageError, WriteError};

/// Stable error codes, as found in `extensions.code`.
pub mod code {
    /// A time could not be read.
    pub const INVALID_TIME: &str = "INVALID_TIME";
    /// An interval's start is not before its end.
    pub const INVALID_INTERVAL: &str = "INVALID_INTERVAL";
    /// A value breaks a rule (a name, a number, a confidence, a missing or extra field).
    pub const INVALID_VALUE: &str = "INVALID_VALUE";
    /// A referenced entity does not exist.
    pub const UNKNOWN_ENTITY: &str = "UNKNOWN_ENTITY";
    /// A referenced episode does not exist.
    pub const UNKNOWN_EPISODE: &str = "UNKNOWN_EPISODE";
    /// A referenced intention does not exist.
    pub const UNKNOWN_INTENTION: &str = "UNKNOWN_INTENTION";
    /// A referenced fact does not exist.
    pub const UNKNOWN_FACT: &str = "UNKNOWN_FACT";
    /// A read names a predicate no fact of the namespace has used and none declared
    /// (the message names the nearest ones).
    pub const UNKNOWN_PREDICATE: &str = "UNKNOWN_PREDICATE";
    /// A fact's value has a type its predicate does not take.
    pub const WRONG_VALUE_TYPE: &str = "WRONG_VALUE_TYPE";
    /// The fact was already retracted.
    pub const ALREADY_RETRACTED: &str = "ALREADY_RETRACTED";
    /// A statement's id where a fact's is needed (`endFact` of a statement).
    pub const NOT_A_FACT: &str = "NOT_A_FACT";
    /// A correction names a fact of another subject or predicate.
    pub const SUPERSEDES_OTHER_SLOT: &str = "SUPERSEDES_OTHER_SLOT";
    /// Another episode has this external id.
    pub const DUPLICATE_EXTERNAL_ID: &str = "DUPLICATE_EXTERNAL_ID";
    /// This extractor (model and prompt version) has read this episode already.
    pub const ALREADY_EXTRACTED: &str = "ALREADY_EXTRACTED";
    /// `knownAt` is past the last committed batch.
    pub const NOT_YET_KNOWN: &str = "NOT_YET_KNOWN";
    /// The token may not do this in this namespace.
    pub const FORBIDDEN: &str = "FORBIDDEN";
    /// A size, depth, complexity or page limit was exceeded.
    pub const LIMIT_EXCEEDED: &str = "LIMIT_EXCEEDED";
    /// The request is not valid GraphQL for this schema.
    pub const BAD_REQUEST: &str = "BAD_REQUEST";
    /// Something failed inside the server; details are in its log.
    pub const INTERNAL: &str = "INTERNAL";
    /// Other writers (other nodes of a cluster) kept appending to the namespace first:
    /// nothing was written, and the same request may be sent again.
    pub const WRITE_CONFLICT: &str = "WRITE_CONFLICT";
    /// The log's service (a cluster's JetStream) cannot be reached: the write was not
    /// acknowledged (it may still appear, whole, if the service stored it first).
    pub const UNAVAILABLE: &str = "UNAVAILABLE";
    /// The search indexes did not catch up with the read in time (retry later).
    pub const INDEX_BEHIND: &str = "INDEX_BEHIND";
    /// The namespace's log is damaged: the namespace is refused until its log is restored
    /// (from a backup, or the file moved away); other namespaces serve. `ostrakon inspect`
    /// names the damage.
    pub const NAMESPACE_DAMAGED: &str = "NAMESPACE_DAMAGED";
    /// The erasure is recorded and acknowledged, but removing its content from the log's
    /// copies failed for now: it is finished when the namespace next opens. Do not send it
    /// again.
    pub const ERASURE_UNFINISHED: &str = "ERASURE_UNFINISHED";
    /// A SPARQL query is malformed, or failed while it ran.
    pub const INVALID_QUERY: &str = "INVALID_QUERY";
    /// None of the media types the client accepts can carry the answer (HTTP 406).
    pub const NOT_ACCEPTABLE: &str = "NOT_ACCEPTABLE";
    /// The record was erased: its content is gone; the error says where it was (batch)
    /// and when it was erased.
    pub const ERASED: &str = "ERASED";
    /// The namespace was dropped after the request pinned its read point.
    pub const NAMESPACE_DROPPED: &str = "NAMESPACE_DROPPED";
    /// `dropNamespace`'s `confirm` is not the namespace's name.
    pub const CONFIRMATION_MISMATCH: &str = "CONFIRMATION_MISMATCH";
    /// A request sent a persisted query's hash without its document, and the server does
    /// not know it (message `PersistedQueryNotFound`): send the document with the hash.
    pub const PERSISTED_QUERY_NOT_FOUND: &str = "PERSISTED_QUERY_NOT_FOUND";
    /// A persisted query's hash is not the SHA-256 of the document sent with it.
    pub const PERSISTED_QUERY_HASH_MISMATCH: &str = "PERSISTED_QUERY_HASH_MISMATCH";
    /// A persisted query of another protocol version, or sent to a server that takes
    /// whole documents only.
    pub const PERSISTED_QUERY_NOT_SUPPORTED: &str = "PERSISTED_QUERY_NOT_SUPPORTED";
    /// The server runs only the operations of its allow-list, and this is not one.
    pub const OPERATION_NOT_ALLOWED: &str = "OPERATION_NOT_ALLOWED";
}

/// The code of an RDF projection's or SPARQL query's error (an engine error's own code
/// when the read failed).
pub fn rdf_code(error: &ostrakon_rdf::RdfError) -> &'static str {
    use ostrakon_rdf::RdfError as E;
    match error {
        E::Engine(e) => e.code().unwrap_or(code::INTERNAL),
        E::Syntax(_) | E::Evaluation(_) => code::INVALID_QUERY,
        E::TooLarge { .. }
        | E::ViewTooBig { .. }
        | E::QueryTooComplex { .. }
        | E::TooMuchMemory { .. }
        | E::TooExpensive { .. }
        | E::AnswerTooLong { .. }
        | E::Interrupted { .. }
        | E::Cancelled => code::LIMIT_EXCEEDED,
        E::NotAcceptable { .. } => code::NOT_ACCEPTABLE,
        E::Io(_) | E::Internal(_) => code::INTERNAL,
    }
}

/// Maps an RDF error to a coded GraphQL error.
pub fn rdf_error(error: ostrakon_rdf::RdfError) -> Error {
    match error {
        ostrakon_rdf::RdfError::Engine(e) => engine_error(e),
        other => {
            let code = rdf_code(&other);
            if code == code::INTERNAL {
                tracing::error!(error = %other, "SPARQL failure");
                return coded(code, "internal error; see the server log");
            }
            coded(code, other.to_string())
        }
    }
}

/// An error with a code and a message.
pub(crate) fn coded(code: &'static str, message: impl Into<String>) -> Error {
    Error::new(message).extend_with(|_, e| e.set("code", code))
}

/// Maps an engine error (of any operation) to a coded GraphQL error. An error about one
/// change of a batch should be placed at the request's own path first
/// ([`WriteError::within`]).
pub(crate) fn engine_error(error: impl EngineFailure) -> Error {
    match error.code() {
        Some(code) => coded(code, error.to_string()),
        None => {
            tracing::error!(error = %error, "engine failure");
            coded(code::INTERNAL, "internal error; see the server log")
        }
    }
}

/// An engine error, by the code a client can act on; `None` for an internal failure.
///
/// The one place errors get their codes: each `match` below names every variant (none of
/// the engine's error types is `#[non_exhaustive]`), so a new variant does not compile
/// until it has a code.
pub(crate) trait EngineFailure: std::fmt::Display {
    /// The code; `None` for the store's own failure (logged, shown as `INTERNAL`).
    fn code(&self) -> Option<&'static str>;
}

impl EngineFailure for CoreError {
    fn code(&self) -> Option<&'static str> {
        Some(match self {
            CoreError::InvalidTime { .. } => code::INVALID_TIME,
            CoreError::InvalidInterval { .. } => code::INVALID_INTERVAL,
            CoreError::TooLong { .. } => code::LIMIT_EXCEEDED,
            CoreError::InvalidValue { .. } => code::INVALID_VALUE,
        })
    }
}

impl EngineFailure for StorageError {
    fn code(&self) -> Option<&'static str> {
        Some(match self {
            StorageError::Unavailable { .. } => code::UNAVAILABLE,
            StorageError::Damaged { .. } => code::NAMESPACE_DAMAGED,
            StorageError::NamespaceDropped { .. } => code::NAMESPACE_DROPPED,
            // The store's own failures: nothing the client can change makes them pass.
            StorageError::Decode { .. }
            | StorageError::Log { .. }
            | StorageError::Io { .. }
            | StorageError::Encode(_)
            | StorageError::Index(_) => return None,
        })
    }
}

impl EngineFailure for OpenError {
    fn code(&self) -> Option<&'static str> {
        match self {
            // Only a server opens a store, and a locked one never starts.
            OpenError::Locked { .. } => None,
            OpenError::Storage(e) => e.code(),
        }
    }
}

impl EngineFailure for ReadError {
    fn code(&self) -> Option<&'static str> {
        Some(match self {
            ReadError::Invalid(e) => return e.code(),
            ReadError::LimitExceeded { .. } | ReadError::Interrupted { .. } => code::LIMIT_EXCEEDED,
            ReadError::NotYetKnown { .. } => code::NOT_YET_KNOWN,
            ReadError::IndexBehind { .. } => code::INDEX_BEHIND,
            ReadError::Storage(e) => return e.code(),
        })
    }
}

impl EngineFailure for WriteError {
    fn code(&self) -> Option<&'static str> {
        Some(match self {
            WriteError::Invalid(e) => return e.code(),
            WriteError::UnknownEntity { .. } => code::UNKNOWN_ENTITY,
            WriteError::UnknownEpisode { .. } => code::UNKNOWN_EPISODE,
            WriteError::UnknownIntention { .. } => code::UNKNOWN_INTENTION,
            WriteError::UnknownFact { .. } => code::UNKNOWN_FACT,
            WriteError::WrongValueType { .. } => code::WRONG_VALUE_TYPE,
            WriteError::AlreadyRetracted { .. } => code::ALREADY_RETRACTED,
            WriteError::NotAFact { .. } => code::NOT_A_FACT,
            WriteError::SupersedesOtherSlot { .. } => code::SUPERSEDES_OTHER_SLOT,
            WriteError::DuplicateExternalId { .. } => code::DUPLICATE_EXTERNAL_ID,
            WriteError::AlreadyExtracted { .. } => code::ALREADY_EXTRACTED,
            WriteError::LimitExceeded { .. } => code::LIMIT_EXCEEDED,
            WriteError::Conflict { .. } => code::WRITE_CONFLICT,
            WriteError::ErasureUnfinished { .. } => code::ERASURE_UNFINISHED,
            // A replay is the operator's (`ostrakon import`), never a request's.
            WriteError::ReplayMismatch { .. } => return None,
            WriteError::InChange { error, .. } => return error.code(),
            WriteError::Read(e) => return e.code(),
            WriteError::Storage(e) => return e.code(),
        })
    }
}

/// Gives `extensions.code` to errors raised before any resolver runs (parsing,
/// validation, depth and complexity limits).
pub struct ErrorCodes;

impl ExtensionFactory for ErrorCodes {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(ErrorCodes)
    }
}

#[async_trait::async_trait]
impl Extension for ErrorCodes {
    async fn request(&self, ctx: &ExtensionContext<'_>, next: NextRequest<'_>) -> Response {
        with_codes(next.run(ctx).await)
    }
}

/// `response` with a code on every error: errors without one are `BAD_REQUEST`.
pub(crate) fn with_codes(mut response: Response) -> Response {
    for error in &mut response.errors {
        let has_code = error.extensions.as_ref().is_some_and(|e| e.get("code").is_some());
        if has_code {
            continue;
        }
        // Limits are refused, coded, before validation (`budget`); what async-graphql
        // itself reports past that is a request that is not valid for this schema.
        let code = code::BAD_REQUEST;
        error.extensions.get_or_insert_with(Default::default).set("code", code);
    }
    response
}
