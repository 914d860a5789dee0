"""Ostrakon: a bitemporal memory for AI agents.

`ostrakon.open(path)` runs the store in this process; `ostrakon.connect(url)` talks to an
Ostrakon server. Both give a `Client` whose `execute(document, variables)` returns the
GraphQL `data` or raises an `OstrakonError` subclass chosen by the error's code.
"""

from ._client import AsyncClient, Client, connect, connect_async, open, open_async
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
    "AsyncClient", "BadRequest", "Client", "Conflict", "Damaged", "Forbidden", "Gone",
    "InvalidInput", "InvalidQuery", "LimitExceeded", "OstrakonError", "PersistedQueryError",
    "Unavailable", "UnknownEntity", "UnknownEpisode", "UnknownFact", "UnknownIntention",
    "UnknownPredicate", "UnknownRecord", "WriteConflict", "connect", "connect_async", "open",
    "open_async",
]
