"""A LlamaIndex memory block (`llama_index.core.memory.BaseMemoryBlock`) kept in Ostrakon:
`pip install "ostrakon[llama-index]"`, then

    memory = Memory.from_defaults(
        session_id="ana", memory_blocks=[OstrakonMemoryBlock(client=ostrakon.open("memory"), namespace="ana")]
    )

and give `memory` to an agent or a chat engine.

- **Reading**: for the conversation so far (its last user message is the cue, with the
  message before it when it is only a few words), the block is
  Ostrakon's context block within `budget` tokens — the CORE tier, the ACTIVE scopes
  (`scopes`), then what search finds: facts in force with their validity, the relevant
  episodes with their dates, the entities involved. `valid_at` / `known_at` read it as of
  another time. When LlamaIndex needs room (`priority` > 0), the block asks for a smaller
  budget instead of disappearing.
- **Writing**: the messages `Memory` flushes out of its short-term window become episodes,
  one per message, with the message's role, in the thread of the memory's session (or
  `thread`). Text that is empty is skipped; images and other blocks are not stored.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory import BaseMemoryBlock
from pydantic import Field, PrivateAttr

from ._client import AsyncClient, Client

CONTEXT = """
query OstrakonMemoryBlock(
  $namespace: String!, $message: String!, $budget: Int, $scopes: [String!],
  $validAt: DateTime, $knownAt: DateTime
) {
  context(namespace: $namespace, message: $message, budget: $budget, scopes: $scopes,
          validAt: $validAt, knownAt: $knownAt) { text tokens truncated }
}
"""

RECORD = """
mutation OstrakonMemoryBlockPut($namespace: String!, $episode: EpisodeInput!) {
  recordEpisode(namespace: $namespace, episode: $episode) { seq }
}
"""

SHORT_CUE_WORDS = 4  # a last user message shorter than this is read with the message before it


def _time(value: _dt.datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValueError("valid_at and known_at need a time zone (a naive datetime is ambiguous)")
    return value.isoformat()


class OstrakonMemoryBlock(BaseMemoryBlock[str]):
    """Long-term memory for LlamaIndex's `Memory`; see the module's documentation."""

    name: str = "ostrakon"
    description: str | None = "Long-term memory: facts in force, relevant episodes and entities, with their dates."
    client: Client | AsyncClient = Field(description="An open Ostrakon client (in-process or HTTP).")
    namespace: str = Field(description="The Ostrakon namespace this memory reads and writes.")
    budget: int = Field(default=600, gt=0, description="The block's size in tokens at most.")
    scopes: list[str] | None = Field(default=None, description="ACTIVE-tier scopes to include.")
    thread: str | None = Field(default=None, description="Thread for new episodes (default: the session id).")
    valid_at: _dt.datetime | None = Field(default=None, description="Read what was true then.")
    known_at: _dt.datetime | None = Field(default=None, description="Read as the memory knew it then.")

    _last_cue: str | None = PrivateAttr(default=None)
    _last_tokens: int = PrivateAttr(default=0)

    def _async_client(self) -> AsyncClient:
        return self.client if isinstance(self.client, AsyncClient) else AsyncClient(self.client)

    async def _context(self, cue: str, budget: int) -> str:
        answer = await self._async_client().execute(
            CONTEXT,
            {
                "namespace": self.namespace,
                "message": cue,
                "budget": budget,
                "scopes": self.scopes,
                "validAt": _time(self.valid_at),
                "knownAt": _time(self.known_at),
            },
        )
        self._last_tokens = answer["context"]["tokens"]
        return answer["context"]["text"]

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        messages = messages or []
        last_user = max((i for i, m in enumerate(messages) if m.role == MessageRole.USER), default=None)
        if last_user is None:
            return ""
        cue = (messages[last_user].content or "").strip()
        if len(cue.split()) < SHORT_CUE_WORDS and last_user > 0:
            # "Yes, that one!" means little alone: the message it answers says what.
            cue = f"{(messages[last_user - 1].content or '').strip()}\n{cue}".strip()
        if not cue:
            return ""
        self._last_cue = cue
        return await self._context(cue, self.budget)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        client = self._async_client()
        for message in messages:
            text = (message.content or "").strip()
            if not text:
                continue
            episode = {
                "text": text,
                "role": message.role.value,
                "thread": message.additional_kwargs.get("session_id") or self.thread,
                "source": "llama-index",
            }
            await client.execute(RECORD, {"namespace": self.namespace, "episode": episode})

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        """A smaller block for the same cue (None when nothing is left)."""
        if self._last_cue is None:
            return None
        budget = min(self.budget, self._last_tokens) - tokens_to_truncate
        if budget <= 0:
            return None
        return await self._context(self._last_cue, budget) or None
