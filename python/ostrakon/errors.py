"""Errors raised by the client, one class per GraphQL error code."""

from __future__ import annotations

from typing import Any


class OstrakonError(Exception):
    """An error Ostrakon answered (or the transport met), with its code, message and path."""

    code: str = "INTERNAL"

    def __init__(self, message: str, code: str | None = None, path: list[Any] | None = None,
                 errors: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.path = path or []
        #: Every error of the response, as GraphQL gave them.
        self.errors = errors or []

    def __str__(self) -> str:
        where = f" at {'.'.join(str(p) for p in self.path)}" if self.path else ""
        return f"{self.code}{where}: {self.message}"


class BadRequest(OstrakonError):
    """The document or its variables are not valid (BAD_REQUEST)."""
    code = "BAD_REQUEST"


class InvalidInput(OstrakonError):
    """A time, interval or value that cannot be read (INVALID_TIME, INVALID_INTERVAL,
    INVALID_VALUE, WRONG_VALUE_TYPE)."""


class UnknownRecord(OstrakonError):
    """An entity, episode, fact, predicate or intention that does not exist."""


class UnknownEntity(UnknownRecord):
    code = "UNKNOWN_ENTITY"


class UnknownEpisode(UnknownRecord):
    code = "UNKNOWN_EPISODE"


class UnknownFact(UnknownRecord):
    code = "UNKNOWN_FACT"


class UnknownPredicate(UnknownRecord):
    code = "UNKNOWN_PREDICATE"


class UnknownIntention(UnknownRecord):
    code = "UNKNOWN_INTENTION"


class Conflict(OstrakonError):
    """The write contradicts what is stored (ALREADY_RETRACTED, NOT_A_FACT,
    SUPERSEDES_OTHER_SLOT, DUPLICATE_EXTERNAL_ID, ALREADY_EXTRACTED, CONFIRMATION_MISMATCH)."""


class WriteConflict(OstrakonError):
    """Another writer got there first; the write can be sent again (WRITE_CONFLICT)."""
    code = "WRITE_CONFLICT"


class Forbidden(OstrakonError):
    """The token may not do this (FORBIDDEN, OPERATION_NOT_ALLOWED)."""
    code = "FORBIDDEN"


class LimitExceeded(OstrakonError):
    """The request passes a documented limit (LIMIT_EXCEEDED)."""
    code = "LIMIT_EXCEEDED"


class Unavailable(OstrakonError):
    """The store cannot answer now; try again (UNAVAILABLE, INDEX_BEHIND, NOT_YET_KNOWN,
    ERASURE_UNFINISHED), or the server could not be reached."""
    code = "UNAVAILABLE"


class Gone(OstrakonError):
    """What was asked for was erased or its namespace dropped (ERASED, NAMESPACE_DROPPED)."""


class Damaged(OstrakonError):
    """A namespace's log is damaged (NAMESPACE_DAMAGED)."""
    code = "NAMESPACE_DAMAGED"


class InvalidQuery(OstrakonError):
    """A SPARQL query that is not valid (INVALID_QUERY)."""
    code = "INVALID_QUERY"


class PersistedQueryError(OstrakonError):
    """A persisted query that is unknown, mismatched or not supported."""


_BY_CODE: dict[str, type[OstrakonError]] = {
    "BAD_REQUEST": BadRequest,
    "INVALID_TIME": InvalidInput,
    "INVALID_INTERVAL": InvalidInput,
    "INVALID_VALUE": InvalidInput,
    "WRONG_VALUE_TYPE": InvalidInput,
    "UNKNOWN_ENTITY": UnknownEntity,
    "UNKNOWN_EPISODE": UnknownEpisode,
    "UNKNOWN_FACT": UnknownFact,
    "UNKNOWN_PREDICATE": UnknownPredicate,
    "UNKNOWN_INTENTION": UnknownIntention,
    "ALREADY_RETRACTED": Conflict,
    "NOT_A_FACT": Conflict,
    "SUPERSEDES_OTHER_SLOT": Conflict,
    "DUPLICATE_EXTERNAL_ID": Conflict,
    "ALREADY_EXTRACTED": Conflict,
    "CONFIRMATION_MISMATCH": Conflict,
    "WRITE_CONFLICT": WriteConflict,
    "FORBIDDEN": Forbidden,
    "OPERATION_NOT_ALLOWED": Forbidden,
    "LIMIT_EXCEEDED": LimitExceeded,
    "UNAVAILABLE": Unavailable,
    "INDEX_BEHIND": Unavailable,
    "NOT_YET_KNOWN": Unavailable,
    "ERASURE_UNFINISHED": Unavailable,
    "ERASED": Gone,
    "NAMESPACE_DROPPED": Gone,
    "NAMESPACE_DAMAGED": Damaged,
    "INVALID_QUERY": InvalidQuery,
    "NOT_ACCEPTABLE": BadRequest,
    "PERSISTED_QUERY_NOT_FOUND": PersistedQueryError,
    "PERSISTED_QUERY_HASH_MISMATCH": PersistedQueryError,
    "PERSISTED_QUERY_NOT_SUPPORTED": PersistedQueryError,
}


def from_errors(errors: list[dict[str, Any]]) -> OstrakonError:
    """The exception for a GraphQL response's errors: the first error's code chooses it."""
    first = errors[0] if errors else {}
    code = str((first.get("extensions") or {}).get("code") or "INTERNAL")
    kind = _BY_CODE.get(code, OstrakonError)
    return kind(str(first.get("message", "unknown error")), code=code, path=first.get("path"), errors=errors)
