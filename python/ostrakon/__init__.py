"""Ostrakon: a bitemporal memory for AI agents.

`ostrakon.open(path)` runs the store in this process; `ostrakon.connect(url)` talks to an
Ostrakon server. Both give a `Client` whose `execute(document, variables)` returns the
GraphQL `data` or raises an `OstrakonError` subclass chosen by the error's code, and
whose `api` has a typed method (pydantic models in and out) for each named operation of
`queries/`.
"""

from ._client import AsyncClient, Client, connect, connect_async, open, open_async
from ._jsonl import Imported, Rejected, apages, pages
from .errors import (
    BadRequest,
    Conflict,
    Damaged,
    Forbidden,
    Gone,
    InvalidInput,
    InvalidQuery,
    LimitExceeded,
    OstrakonError,
    PersistedQueryError,
    Unavailable,
    UnknownEntity,
    UnknownEpisode,
    UnknownFact,
    UnknownIntention,
    UnknownPredicate,
    UnknownRecord,
    WriteConflict,
)

__all__ = [
    "AsyncClient", "BadRequest", "Imported", "Rejected", "apages", "pages", "Client", "Conflict", "Damaged", "Forbidden", "Gone",
    "InvalidInput", "InvalidQuery", "LimitExceeded", "OstrakonError", "PersistedQueryError",
    "Unavailable", "UnknownEntity", "UnknownEpisode", "UnknownFact", "UnknownIntention",
    "UnknownPredicate", "UnknownRecord", "WriteConflict", "connect", "connect_async", "open",
    "open_async",
]
