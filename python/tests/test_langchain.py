"""OstrakonRetriever through LangChain's own retriever interface (`invoke`, `ainvoke`),
over both transports: documents carry when they were true, when they were known, and
whether a later fact replaced them; reads as of a past time see the past."""

from __future__ import annotations

import asyncio
import datetime as dt
import time

import pytest

import ostrakon
from conftest import framework

framework("langchain_core", "langchain")

from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from ostrakon.langchain import OstrakonRetriever

UTC = dt.timezone.utc


def write(client: ostrakon.Client) -> dt.datetime:
    """Ana lives in Lisbon from 2019, then (learned later) in Porto from 2023; returns a time
    between the two writes."""
    client.execute(
        'mutation { definePredicate(namespace: "ana", name: "livesIn", cardinality: ONE, valueType: ENTITY) { seq } }'
    )
    client.execute(
        """mutation($f: [FactInput!]!) {
             recordEpisode(namespace: "ana", facts: $f, episode: {
               text: "I moved to Lisbon for the new job", occurredAt: "2019-04-02", role: "user", thread: "t1"
             }) { seq } }""",
        {"f": [{"subject": {"name": "Ana"}, "predicate": "livesIn", "object": {"entity": {"name": "Lisbon"}}, "validFrom": "2019-04-01"}]},
    )
    time.sleep(0.01)
    between = dt.datetime.now(UTC)
    time.sleep(0.01)
    client.execute(
        """mutation($f: [FactInput!]!) { assertFacts(namespace: "ana", facts: $f) { seq } }""",
        {"f": [{"subject": {"name": "Ana"}, "predicate": "livesIn", "object": {"entity": {"name": "Porto"}}, "validFrom": "2023-09-01"}]},
    )
    return between


def facts(documents: list[Document]) -> dict[str, dict]:
    return {d.page_content: d.metadata for d in documents if d.metadata["kind"] == "fact"}


def test_documents_say_when_they_were_true_and_known(client):
    between = write(client)
    retriever = OstrakonRetriever(client=client, namespace="ana", k=10)
    assert isinstance(retriever, BaseRetriever)

    now = facts(retriever.invoke("Where does Ana live?"))
    assert "Ana livesIn Porto" in now and "Ana livesIn Lisbon" not in now, now
    porto = now["Ana livesIn Porto"]
    assert porto["status"] == "CURRENT" and porto["superseded"] is False and porto["superseded_by"] is None
    assert porto["valid_from"].startswith("2023-09-01") and porto["valid_to"] is None
    assert dt.datetime.fromisoformat(porto["known_at"]) > between
    assert porto["score"] > 0 and porto["explain"]["components"], porto

    history = facts(
        OstrakonRetriever(client=client, namespace="ana", include_not_in_force=True).invoke("Where does Ana live?")
    )
    lisbon = history["Ana livesIn Lisbon"]
    assert lisbon["status"] == "SUPERSEDED" and lisbon["superseded"] is True
    assert lisbon["superseded_by"] == "Ana livesIn Porto"
    assert dt.datetime.fromisoformat(lisbon["known_at"]) < between


def test_reads_as_of_a_valid_time_and_a_known_time(client):
    between = write(client)
    in_2020 = facts(OstrakonRetriever(client=client, namespace="ana", valid_at=dt.datetime(2020, 1, 1, tzinfo=UTC)).invoke("Ana lives"))
    assert set(in_2020) == {"Ana livesIn Lisbon"}, in_2020
    assert in_2020["Ana livesIn Lisbon"]["status"] == "CURRENT"

    known_then = facts(OstrakonRetriever(client=client, namespace="ana", known_at=between).invoke("Ana lives"))
    assert set(known_then) == {"Ana livesIn Lisbon"}, known_then


def test_episodes_only_with_their_time_role_and_thread(client):
    write(client)
    documents = OstrakonRetriever(client=client, namespace="ana", kinds=["episode"]).invoke("moved to Lisbon job")
    assert documents and {d.metadata["kind"] for d in documents} == {"episode"}
    episode = documents[0]
    assert episode.page_content == "I moved to Lisbon for the new job"
    assert episode.metadata["valid_from"].startswith("2019-04-02")
    assert episode.metadata["role"] == "user" and episode.metadata["thread"] == "t1"
    assert episode.metadata["known_at"] and episode.id == f"episode:{episode.metadata['id']}"


def test_async_over_either_client(client):
    write(client)
    for given in (client, ostrakon.AsyncClient(client)):
        documents = asyncio.run(OstrakonRetriever(client=given, namespace="ana", k=3).ainvoke("Where does Ana live?"))
        assert "Ana livesIn Porto" in facts(documents)
        assert len(documents) <= 3


def test_an_unknown_namespace_is_an_error_not_an_empty_answer(client):
    with pytest.raises(ostrakon.OstrakonError):
        OstrakonRetriever(client=client, namespace="Not a namespace!").invoke("anything")
