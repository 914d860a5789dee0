"""A LangChain retriever (`langchain_core.retrievers.BaseRetriever`) over Ostrakon: `pip
install "ostrakon[langchain]"`, then `OstrakonRetriever(client=ostrakon.open("memory"),
namespace="ana")` wherever LangChain takes a retriever (`retriever.invoke("…")`, a chain,
`create_retriever_tool`).

Each search hit becomes a `Document`: an episode's text, a fact as a line ("Ana livesIn
Lisbon"), an entity's name. Its metadata says what no vector store can:

- `kind` (`episode`, `fact`, `entity`), `id`, and `score` with `explain` (the ranked lists it
  came from, fused relevance and retention);
- `valid_from` / `valid_to`: when it was true (a fact's validity; the time an episode
  happened, with no end), as ISO 8601 strings (None for an entity);
- `known_at`: when the memory learned it (None for an entity);
- `status` of a fact at the read's valid time (`CURRENT`, `SUPERSEDED`, `ENDED`, …) with
  `superseded` (true when a later fact replaced it) and `superseded_by` (that fact's line);
- an episode's `external_id`, `thread` and `role`.

Reads are bitemporal like every Ostrakon read: `valid_at` asks what was true then, and
`known_at` what the memory knew then; `include_not_in_force=True` keeps superseded and ended
facts (marked) instead of leaving them out.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from ._client import AsyncClient, Client
from .api.enums import SearchKind
from .api.input_types import SearchFilter
from .api.retrieve import Retrieve, RetrieveSearchHits

Kind = Literal["episode", "fact", "entity"]


def _iso(value: _dt.datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _literal(value: Any) -> str:
    if value.entity is not None:
        return value.entity.name
    for field in ("string", "integer", "float_", "boolean", "time"):
        found = getattr(value, field)
        if found is not None:
            return found.isoformat() if isinstance(found, _dt.datetime) else str(found)
    return ""


def document(hit: RetrieveSearchHits) -> Document:
    """The `Document` for one search hit."""
    metadata: dict[str, Any] = {
        "kind": hit.kind.value.lower(),
        "score": hit.score,
        "explain": hit.explain.model_dump(mode="json", by_alias=False),
    }
    if hit.episode is not None:
        episode = hit.episode
        metadata |= {
            "id": episode.id,
            "external_id": episode.external_id,
            "thread": episode.thread,
            "role": episode.role,
            "valid_from": _iso(episode.occurred_at),
            "valid_to": None,
            "known_at": _iso(episode.recorded_at),
        }
        return Document(page_content=episode.text, metadata=metadata, id=f"episode:{episode.id}")
    if hit.fact is not None:
        fact = hit.fact
        subject = fact.subject.name if fact.subject is not None else "(erased)"
        status = fact.status.value
        replaced = fact.superseded_by
        metadata |= {
            "id": fact.id,
            "predicate": fact.predicate,
            "valid_from": _iso(fact.valid.from_),
            "valid_to": _iso(fact.valid.to),
            "known_at": _iso(fact.asserted_at),
            "status": status,
            "superseded": status == "SUPERSEDED",
            "superseded_by": f"{subject} {replaced.predicate} {_literal(replaced.object_)}" if replaced else None,
            "reason": fact.reason,
        }
        line = f"{subject} {fact.predicate} {_literal(fact.object_)}"
        return Document(page_content=line, metadata=metadata, id=f"fact:{fact.id}")
    entity = hit.entity
    assert entity is not None, "a search hit is an episode, a fact or an entity"
    metadata |= {"id": entity.id, "valid_from": None, "valid_to": None, "known_at": None}
    return Document(page_content=entity.name, metadata=metadata, id=f"entity:{entity.id}")


class OstrakonRetriever(BaseRetriever):
    """Search an Ostrakon namespace from LangChain; see the module's documentation."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    client: Client | AsyncClient
    """An open client: `ostrakon.open(path)` or `ostrakon.connect(url)` (or their async forms)."""
    namespace: str
    """The namespace searched."""
    k: int = 10
    """How many documents at most."""
    kinds: list[Kind] | None = None
    """Only these kinds of record (all when None)."""
    include_not_in_force: bool = False
    """Keep superseded, ended and retracted facts, marked by `status`."""
    valid_at: _dt.datetime | None = None
    """What was true then (default: now)."""
    known_at: _dt.datetime | None = None
    """As the memory knew it then (default: everything it knows)."""
    thread: str | None = None
    """Only episodes of this thread (and facts they sourced)."""

    def _arguments(self, query: str) -> dict[str, Any]:
        search_filter = SearchFilter(
            kinds=[SearchKind(k.upper()) for k in self.kinds] if self.kinds else None,
            include_not_in_force=self.include_not_in_force or None,
            thread=self.thread,
        )
        return {
            "namespace": self.namespace,
            "text": query,
            "limit": self.k,
            "filter_": search_filter,
            "valid_at": self.valid_at,
            "known_at": self.known_at,
        }

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        client = self.client._client if isinstance(self.client, AsyncClient) else self.client
        answer: Retrieve = client.api.retrieve(**self._arguments(query))
        return [document(hit) for hit in answer.search.hits]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        client = self.client if isinstance(self.client, AsyncClient) else AsyncClient(self.client)
        answer: Retrieve = await client.api.retrieve(**self._arguments(query))
        return [document(hit) for hit in answer.search.hits]
