"""OstrakonStore against LangGraph's own InMemoryStore: random batches of every op kind,
the same answers (normalised for the reference's known quirks); plus what only Ostrakon
has, reading as of a past time and an item's history."""

from __future__ import annotations

import datetime as dt
import random
import time

import pytest

from conftest import framework

framework("langgraph", "langgraph")

from langgraph.store.base import GetOp, ListNamespacesOp, MatchCondition, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from ostrakon.langgraph import OstrakonStore


@pytest.fixture
def store(client):
    return OstrakonStore(client)


NAMESPACES = [("users", "ana"), ("users", "bea"), ("users", "ana", "notes"), ("docs",), ("docs", "x", "y")]
KEYS = ["a", "A", "b", "c d", "ä"]


def random_op(rng: random.Random):
    kind = rng.choice(["put", "put", "put", "delete", "get", "search", "list"])
    ns = rng.choice(NAMESPACES)
    if kind == "put":
        return PutOp(ns, rng.choice(KEYS), {"n": rng.randrange(5), "tag": rng.choice(["x", "y"]), "items": list(range(rng.randrange(3)))})
    if kind == "delete":
        return PutOp(ns, rng.choice(KEYS), None)
    if kind == "get":
        return GetOp(ns, rng.choice(KEYS))
    if kind == "search":
        filter_ = rng.choice([None, {"tag": "x"}, {"n": {"$gte": 2}}, {"n": {"$ne": 1}, "tag": "y"}])
        return SearchOp(ns[: rng.randrange(len(ns) + 1)], filter_, limit=rng.choice([1, 3, 10]), offset=0)
    conditions = rng.choice([(), (MatchCondition("prefix", ("users",)),), (MatchCondition("suffix", ("notes",)),),
                             (MatchCondition("prefix", ("*", "ana")),)])
    return ListNamespacesOp(conditions, max_depth=rng.choice([None, 1, 2]), limit=100, offset=0)


def normal(op, result, live: set, reference: bool):
    """The answer without what the two stores may rightly differ in."""
    if isinstance(op, GetOp):
        return None if result is None else (tuple(result.namespace), result.key, result.value)
    if isinstance(op, SearchOp):
        # Orders differ (insertion against most recent first): compare what a page holds
        # when it holds every match, else how many it holds.
        return sorted((tuple(i.namespace), i.key, str(i.value)) for i in result) if len(result) < op.limit else len(result)
    if isinstance(op, ListNamespacesOp) and reference:
        # The reference keeps listing namespaces whose every item was deleted.
        return [n for n in result if any(n == ns[: len(n)] for ns in live)]
    return result


def test_random_batches_answer_as_langgraphs_in_memory_store(store):
    rng = random.Random(20261207)
    reference = InMemoryStore()
    live: set = set()
    for round_ in range(60):
        ops = [random_op(rng) for _ in range(rng.randrange(1, 7))]
        # Reads see the state before the batch's writes: both stores then apply the puts.
        ours, theirs = store.batch(ops), reference.batch(ops)
        for op, a, b in zip(ops, ours, theirs):
            assert normal(op, a, live, False) == normal(op, b, live, True), (round_, op, a, b)
        live = {tuple(i.namespace) for i in reference.search((), limit=10_000)}


def test_put_get_search_and_list(store):
    store.put(("users", "ana"), "k", {"city": "Lisbon", "n": 3})
    store.put(("users", "ana"), "K", {"city": "Porto", "n": 5})
    store.put(("users", "bea"), "k", {"city": "Rome", "n": 1})
    assert store.get(("users", "ana"), "k").value == {"city": "Lisbon", "n": 3}
    assert store.get(("users", "ana"), "K").value["city"] == "Porto"  # keys keep their case
    assert {i.key for i in store.search(("users", "ana"), filter={"n": {"$gt": 2}})} == {"k", "K"}
    found = store.search(("users",), query="Porto")
    assert found[0].value["city"] == "Porto" and found[0].score is not None
    assert store.list_namespaces(prefix=("users",)) == [("users", "ana"), ("users", "bea")]
    store.delete(("users", "bea"), "k")
    assert store.get(("users", "bea"), "k") is None
    assert store.list_namespaces() == [("users", "ana")]
    item = store.get(("users", "ana"), "k")
    assert item.created_at.tzinfo is not None and item.updated_at >= item.created_at


def test_as_of_and_history(store):
    store.put(("u",), "home", {"city": "Porto"})
    time.sleep(0.01)
    between = dt.datetime.now(dt.timezone.utc)
    time.sleep(0.01)
    store.put(("u",), "home", {"city": "Lisbon"})
    first = store.get(("u",), "home")
    assert first.value == {"city": "Lisbon"} and first.created_at < first.updated_at
    then = store.as_of(between)
    assert then.get(("u",), "home").value == {"city": "Porto"}
    with pytest.raises(PermissionError):
        then.put(("u",), "home", {"city": "Faro"})
    store.delete(("u",), "home")
    assert [h and h.value["city"] for h in store.history(("u",), "home")] == ["Porto", "Lisbon", None]


def test_a_ttl_ends_the_item(store):
    store.put(("t",), "brief", {"x": 1}, ttl=0.001)  # minutes: 60 ms
    assert store.get(("t",), "brief") is not None
    time.sleep(0.2)
    assert store.get(("t",), "brief") is None
