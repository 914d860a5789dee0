"""OstrakonMemoryBlock inside LlamaIndex's own `Memory`, over both transports: the
context block reaches the prompt, messages flushed from the short-term window become
episodes, a past read point reads the past, and a block asked to shrink shrinks."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest

import ostrakon
from conftest import framework

framework("llama_index.core", "llama-index")

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import Memory

from ostrakon.llama_index import OstrakonMemoryBlock

UTC = dt.timezone.utc


@pytest.fixture
def client(client):
    """The shared client (both transports), with Ana's two homes in its store."""
    client.execute(
        'mutation { definePredicate(namespace: "ana", name: "livesIn", cardinality: ONE, valueType: ENTITY) { seq } }'
    )
    client.execute(
        """mutation { assertFacts(namespace: "ana", facts: [
             { subject: { name: "Ana" }, predicate: "livesIn", object: { entity: { name: "Lisbon" } }, validFrom: "2019" },
             { subject: { name: "Ana" }, predicate: "livesIn", object: { entity: { name: "Porto" } }, validFrom: "2023" }
           ]) { seq } }"""
    )
    return client


def memory(block: OstrakonMemoryBlock, session: str = "s1") -> Memory:
    return Memory.from_defaults(
        session_id=session, token_limit=120, token_flush_size=40, chat_history_token_ratio=0.5, memory_blocks=[block]
    )


def system_text(messages: list[ChatMessage]) -> str:
    return "\n".join(m.content or "" for m in messages if m.role.value == "system")


def test_the_context_block_reaches_the_prompt(client):
    mem = memory(OstrakonMemoryBlock(client=client, namespace="ana"))
    prompt = system_text(mem.get(input="Where does Ana live now?"))
    assert "<ostrakon>" in prompt and "Ana lives in Porto (since 2023" in prompt, prompt
    assert "Lisbon" not in prompt  # superseded: not a fact in force


def test_flushed_messages_become_episodes_and_are_recalled(client):
    mem = memory(OstrakonMemoryBlock(client=client, namespace="ana"))
    mem.put(ChatMessage(role="user", content="My sister Rita adopted a grey cat called Miso last weekend"))
    mem.put(ChatMessage(role="assistant", content="How lovely, Miso is a great name for a cat."))
    for n in range(10):
        mem.put(ChatMessage(role="user", content=f"Unrelated message number {n} about the weather and the news"))
    episodes = client.execute('query { episodes(namespace: "ana", first: 100) { nodes { text role thread source } } }')
    stored = {e["text"]: e for e in episodes["episodes"]["nodes"]}
    rita = stored["My sister Rita adopted a grey cat called Miso last weekend"]
    assert rita["role"] == "user" and rita["thread"] == "s1" and rita["source"] == "llama-index"
    assert stored["How lovely, Miso is a great name for a cat."]["role"] == "assistant"
    # Another session (a new Memory, nothing in its window) recalls it from Ostrakon.
    other = memory(OstrakonMemoryBlock(client=client, namespace="ana"), session="s2")
    prompt = system_text(other.get(input="What is the name of Rita's cat?"))
    assert "Miso" in prompt, prompt


def test_a_past_valid_time_reads_the_past(client):
    block = OstrakonMemoryBlock(client=client, namespace="ana", valid_at=dt.datetime(2020, 6, 1, tzinfo=UTC))
    text = asyncio.run(block.aget([ChatMessage(role="user", content="Where does Ana live?")]))
    assert "Ana lives in Lisbon" in text and "Porto" not in text, text
    with pytest.raises(ValueError, match="time zone"):
        asyncio.run(
            OstrakonMemoryBlock(client=client, namespace="ana", valid_at=dt.datetime(2020, 6, 1)).aget(
                [ChatMessage(role="user", content="Where does Ana live?")]
            )
        )


def test_truncation_asks_for_a_smaller_block(client):
    for n in range(20):
        client.execute(
            'mutation($t: String!) { recordEpisode(namespace: "ana", episode: { text: $t }) { seq } }',
            {"t": f"Ana talked about Porto and its bridges, day {n}"},
        )
    block = OstrakonMemoryBlock(client=client, namespace="ana", budget=400, priority=1)
    full = asyncio.run(block.aget([ChatMessage(role="user", content="Tell me about Ana in Porto")]))
    smaller = asyncio.run(block.atruncate(full, 200))
    assert smaller is not None and 0 < len(smaller) < len(full)
    assert asyncio.run(block.atruncate(full, 10_000)) is None


def test_nothing_to_ask_gives_an_empty_block(client):
    block = OstrakonMemoryBlock(client=client, namespace="ana")
    assert asyncio.run(block.aget([])) == ""
    assert asyncio.run(block.aget([ChatMessage(role="assistant", content="Hello!")])) == ""


def test_an_async_client_works_too(client):
    block = OstrakonMemoryBlock(client=ostrakon.AsyncClient(client), namespace="ana")
    text = asyncio.run(block.aget([ChatMessage(role="user", content="Where does Ana live?")]))
    assert "Porto" in text
