"""LangGraph's own store test cases, run against OstrakonStore over both transports.

Source: https://github.com/langchain-ai/langgraph (commit f09cfe8ffc1e), MIT License,
Copyright (c) 2024 LangChain, Inc. — the licence is in `LICENSE-langgraph` beside this
file. The cases are adapted from:

- `libs/checkpoint-sqlite/tests/test_store.py` (SqliteStore's store cases),
- `libs/checkpoint-sqlite/tests/test_ttl.py` (its TTL cases),
- `libs/checkpoint/tests/test_store.py` (InMemoryStore's list_namespaces cases and the
  refused namespaces).

Each case keeps its intent. Where upstream asserts a score of its character-frequency
embedding, the case asserts what any ranking must give: the matching item first, a
`score` on what was ranked; an item the query shares no word with is not ranked (its
`score` is None) and comes after those that are. Filter keys name top-level keys of the
value verbatim, as InMemoryStore and PostgresStore read them (SqliteStore alone reads a
dotted key as a JSON path). A ttl here is the end of the value's validity: an item
expires without a sweep, and reading it does not extend its life.

Left out:
- sqlite `test_nonnull_migrations`: SqliteStore's migration statements;
- sqlite `test_escape_glob_literal`, `test_namespace_match_pattern`,
  `test_list_namespaces_prefix_uses_indexable_condition`: its GLOB/regex helpers and SQL
  text (the behaviour they guard is covered by the segment-boundary, wildcard and
  metacharacter cases below);
- sqlite `test_vector_store_initialization`: its vector tables and the embedding object
  it holds (Ostrakon ranks the text itself; no embedder is configured on the store);
- sqlite `test_sql_injection_vulnerability`'s `ValueError("Invalid filter key")`: a
  SQLite key allow-list; the case is kept as "such a key finds nothing it should not";
- ttl `test_ttl_refresh`, `test_async_ttl_refresh`, `test_async_asearch_refresh_ttl`:
  refresh on read, which OstrakonStore does not do (a ttl is a fixed end of validity);
- ttl `test_ttl_sweeper`, `test_async_ttl_sweeper`: SqliteStore's sweeper thread (an
  expired item is out of force at once; `test_an_item_expires_after_the_default_ttl`
  covers what the sweeper is for);
- checkpoint `test_cannot_put_empty_namespace`'s `MockAsyncBatchedStore` half: that
  checks `AsyncBatchedBaseStore`, not a store.

(`libs/checkpoint-sqlite/tests/test_async_store.py` repeats the cases above through
AsyncSqliteStore; the async methods are exercised here by the refused-namespace and TTL
cases.)
"""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from conftest import framework

framework("langgraph", "langgraph")

from langgraph.store.base import GetOp, InvalidNamespaceError, Item, ListNamespacesOp, MatchCondition, PutOp, SearchOp

from ostrakon.langgraph import OstrakonStore


@pytest.fixture
def store(client):
    return OstrakonStore(client)


def keys(results) -> list[str]:
    return [r.key for r in results]


def ranked_below(score: float | None, than: float | None) -> bool:
    """Whether an item scored `score` ranks below one scored `than` (unranked is lowest)."""
    assert than is not None
    return score is None or score < than


def wait_until(moment: float) -> None:
    time.sleep(max(0.0, moment - time.monotonic()))




# -- batches -----------------------------------------------------------------------------


def test_a_batch_answers_each_op_in_its_place(store):
    # upstream: sqlite test_batch_order
    store.put(("test", "foo"), "key1", {"data": "value1"})
    store.put(("test", "bar"), "key2", {"data": "value2"})

    results = store.batch([
        GetOp(namespace=("test", "foo"), key="key1"),
        PutOp(namespace=("test", "bar"), key="key2", value={"data": "value2"}),
        SearchOp(namespace_prefix=("test",), filter={"data": "value1"}, limit=10, offset=0),
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
        GetOp(namespace=("test",), key="key3"),
    ])
    assert len(results) == 5
    assert isinstance(results[0], Item)
    assert results[0].value == {"data": "value1"}
    assert results[0].key == "key1"
    assert results[0].namespace == ("test", "foo")
    assert results[1] is None
    assert [(r.key, r.value) for r in results[2]] == [("key1", {"data": "value1"})]
    assert ("test", "foo") in results[3] and ("test", "bar") in results[3]
    assert results[4] is None

    reordered = store.batch([
        SearchOp(namespace_prefix=("test",), filter=None, limit=5, offset=0),
        GetOp(namespace=("test", "bar"), key="key2"),
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=5, offset=0),
        PutOp(namespace=("test",), key="key3", value={"data": "value3"}),
        GetOp(namespace=("test", "foo"), key="key1"),
    ])
    assert len(reordered) == 5
    # The batch's reads see the store as it was before its put.
    assert sorted(keys(reordered[0])) == ["key1", "key2"]
    assert (reordered[1].namespace, reordered[1].key, reordered[1].value) == (("test", "bar"), "key2", {"data": "value2"})
    assert reordered[2] == [("test", "bar"), ("test", "foo")]
    assert reordered[3] is None
    assert (reordered[4].namespace, reordered[4].key, reordered[4].value) == (("test", "foo"), "key1", {"data": "value1"})

    assert store.get(("test",), "key3").value == {"data": "value3"}


def test_a_batch_of_gets_answers_none_for_a_missing_key(store):
    # upstream: sqlite test_batch_get_ops
    store.put(("test",), "key1", {"data": "value1"})
    store.put(("test",), "key2", {"data": "value2"})

    results = store.batch([GetOp(("test",), "key1"), GetOp(("test",), "key2"), GetOp(("test",), "key3")])

    assert len(results) == 3
    assert results[0].key == "key1" and results[1].key == "key2"
    assert results[2] is None


def test_a_batch_of_puts_writes_each_and_a_none_value_deletes(store):
    # upstream: sqlite test_batch_put_ops
    results = store.batch([
        PutOp(("test",), "key1", {"data": "value1"}),
        PutOp(("test",), "key2", {"data": "value2"}),
        PutOp(("test",), "key3", None),
    ])
    assert results == [None, None, None]

    assert store.get(("test",), "key1").value == {"data": "value1"}
    assert store.get(("test",), "key2").value == {"data": "value2"}
    assert store.get(("test",), "key3") is None


def test_a_batch_of_searches_answers_each_by_its_own_prefix_filter_and_limit(store):
    # upstream: sqlite test_batch_search_ops
    for namespace, key, value in [
        (("test", "foo"), "key1", {"data": "value1", "tag": "a"}),
        (("test", "bar"), "key2", {"data": "value2", "tag": "a"}),
        (("test", "baz"), "key3", {"data": "value3", "tag": "b"}),
    ]:
        store.put(namespace, key, value)

    results = store.batch([
        SearchOp(namespace_prefix=("test",), filter={"tag": "a"}, limit=10, offset=0),
        SearchOp(namespace_prefix=("test",), filter=None, limit=2, offset=0),
        SearchOp(namespace_prefix=("test", "foo"), filter=None, limit=10, offset=0),
    ])
    assert len(results) == 3
    assert sorted(keys(results[0])) == ["key1", "key2"]
    assert all(item.value["tag"] == "a" for item in results[0])
    assert len(results[1]) == 2
    assert [(r.namespace, r.key) for r in results[2]] == [(("test", "foo"), "key1")]


def test_a_batch_of_listings_answers_each_by_its_own_conditions(store):
    # upstream: sqlite test_batch_list_namespaces_ops
    test_data = [
        (("test", "documents", "public"), "doc1", {"content": "public doc"}),
        (("test", "documents", "private"), "doc2", {"content": "private doc"}),
        (("test", "images", "public"), "img1", {"content": "public image"}),
        (("prod", "documents", "public"), "doc3", {"content": "prod doc"}),
    ]
    for namespace, key, value in test_data:
        store.put(namespace, key, value)

    results = store.batch([
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
        ListNamespacesOp(match_conditions=None, max_depth=2, limit=10, offset=0),
        ListNamespacesOp(match_conditions=(MatchCondition("suffix", ("public",)),), max_depth=None, limit=10, offset=0),
    ])
    assert len(results) == 3
    assert sorted(results[0]) == sorted(ns for ns, _, _ in test_data)
    assert sorted(results[1]) == [("prod", "documents"), ("test", "documents"), ("test", "images")]
    assert sorted(results[2]) == [("prod", "documents", "public"), ("test", "documents", "public"), ("test", "images", "public")]


# -- get, put, delete, search ------------------------------------------------------------


def test_an_item_is_put_read_updated_and_deleted(store):
    # upstream: sqlite TestSqliteStore.test_basic_store_ops
    namespace = ("test", "documents")
    store.put(namespace, "doc1", {"title": "Test Document", "content": "Hello, World!"})
    item = store.get(namespace, "doc1")
    assert (item.namespace, item.key, item.value) == (namespace, "doc1", {"title": "Test Document", "content": "Hello, World!"})

    time.sleep(0.01)
    store.put(namespace, "doc1", {"title": "Updated Document", "content": "Hello, Updated!"})
    updated = store.get(namespace, "doc1")
    assert updated.value == {"title": "Updated Document", "content": "Hello, Updated!"}
    assert updated.updated_at > item.updated_at
    assert updated.created_at == item.created_at

    assert store.get(("test", "other_documents"), "doc1") is None

    store.delete(namespace, "doc1")
    assert store.get(namespace, "doc1") is None


def test_namespaces_are_listed_by_prefix_suffix_depth_and_limit(store):
    # upstream: sqlite TestSqliteStore.test_list_namespaces
    test_namespaces = [
        ("test", "documents", "public"),
        ("test", "documents", "private"),
        ("test", "images", "public"),
        ("test", "images", "private"),
        ("prod", "documents", "public"),
        ("prod", "documents", "private"),
    ]
    for namespace in test_namespaces:
        store.put(namespace, "dummy", {"content": "dummy"})

    assert sorted(store.list_namespaces()) == sorted(test_namespaces)

    test_prefix = store.list_namespaces(prefix=["test"])
    assert len(test_prefix) == 4 and all(ns[0] == "test" for ns in test_prefix)

    public = store.list_namespaces(suffix=["public"])
    assert len(public) == 3 and all(ns[-1] == "public" for ns in public)

    assert sorted(store.list_namespaces(max_depth=2)) == [("prod", "documents"), ("test", "documents"), ("test", "images")]

    assert len(store.list_namespaces(limit=3)) == 3

    for namespace in test_namespaces:
        store.delete(namespace, "dummy")
    assert store.list_namespaces() == []


def test_search_narrows_by_namespace_prefix_filter_and_page(store):
    # upstream: sqlite TestSqliteStore.test_search
    test_data = [
        (("test", "docs"), "doc1", {"title": "First Doc", "author": "Alice", "tags": ["important"]}),
        (("test", "docs"), "doc2", {"title": "Second Doc", "author": "Bob", "tags": ["draft"]}),
        (("test", "images"), "img1", {"title": "Image 1", "author": "Alice", "tags": ["final"]}),
    ]
    for namespace, key, value in test_data:
        store.put(namespace, key, value)

    # A list is taken for a namespace prefix as readily as a tuple.
    assert len(store.search(["test"])) == 3

    docs = store.search(["test", "docs"])
    assert len(docs) == 2 and all(item.namespace == ("test", "docs") for item in docs)

    alice = store.search(["test"], filter={"author": "Alice"})
    assert sorted(keys(alice)) == ["doc1", "img1"]

    assert len(store.search(["test"], limit=2)) == 2
    assert len(store.search(["test"], offset=2)) == 1

    for namespace, key, _ in test_data:
        store.delete(namespace, key)
    assert store.search(["test"]) == []


def test_an_item_keeps_its_times_and_search_and_listing_follow_puts_and_deletes(client):
    # upstream: sqlite test_basic_store_operations
    store = OstrakonStore(client, index={"fields": ["key0", "key1", "key3"]})
    uid = uuid.uuid4().hex
    namespace = (uid, "test", "documents")
    assert store.search((uid,)) == []

    store.put(namespace, "doc1", {"title": "Test Document", "content": "Hello, World!"})
    item = store.get(namespace, "doc1")
    assert (item.namespace, item.key, item.value) == (namespace, "doc1", {"title": "Test Document", "content": "Hello, World!"})
    assert item.created_at is not None and item.updated_at is not None

    store.put(namespace, "doc1", {"title": "Updated Test Document", "content": "Hello, LangGraph!"})
    updated = store.get(namespace, "doc1")
    assert updated.value == {"title": "Updated Test Document", "content": "Hello, LangGraph!"}
    assert updated.updated_at >= item.updated_at

    assert store.get((uid, "test", "other_documents"), "doc1") is None

    store.put(namespace, "doc2", {"title": "Another Document", "content": "Greetings!"})
    assert sorted(keys(store.search((uid, "test"), limit=10))) == ["doc1", "doc2"]
    assert (uid, "test", "documents") in store.list_namespaces(prefix=(uid, "test"))

    store.delete(namespace, "doc1")
    store.delete(namespace, "doc2")
    assert store.get(namespace, "doc1") is None
    assert store.get(namespace, "doc2") is None
    assert store.search((uid, "test"), limit=10) == []


def test_namespaces_are_listed_by_combined_prefix_suffix_and_wildcards(store):
    # upstream: sqlite test_list_namespaces_operations
    p = str(uuid.uuid4())
    test_namespaces = [
        (p, "test", "documents", "public", p),
        (p, "test", "documents", "private", p),
        (p, "test", "images", "public", p),
        (p, "test", "images", "private", p),
        (p, "prod", "documents", "public", p),
        (p, "prod", "documents", "some", "nesting", "public", p),
        (p, "prod", "documents", "private", p),
    ]
    for namespace in test_namespaces:
        store.put(namespace, "dummy", {"content": "dummy"})

    prefixed = store.list_namespaces(prefix=(p, "test"))
    assert len(prefixed) == 4 and all(ns[1] == "test" for ns in prefixed)

    specific = store.list_namespaces(prefix=(p, "test", "documents"))
    assert len(specific) == 2 and all(ns[1:3] == ("test", "documents") for ns in specific)

    suffixed = store.list_namespaces(suffix=("public", p))
    assert len(suffixed) == 4 and all(ns[-2] == "public" for ns in suffixed)

    both = store.list_namespaces(prefix=(p, "test"), suffix=("public", p))
    assert len(both) == 2 and all(ns[1] == "test" and ns[-2] == "public" for ns in both)

    wildcard_prefix = store.list_namespaces(prefix=(p, "*", "documents"))
    assert len(wildcard_prefix) == 5 and all(ns[2] == "documents" for ns in wildcard_prefix)

    wildcard_suffix = store.list_namespaces(suffix=("*", "public", p))
    assert len(wildcard_suffix) == 4 and all(ns[-2] == "public" for ns in wildcard_suffix)

    assert store.list_namespaces(suffix=("some", "*", "public", p)) == [(p, "prod", "documents", "some", "nesting", "public", p)]

    assert all(len(ns) <= 3 for ns in store.list_namespaces(max_depth=3))

    deep = store.list_namespaces(max_depth=4, prefix=(p, "*", "documents"))
    assert len(set(deep)) == len(deep) == 5

    assert len(store.list_namespaces(prefix=(p,), limit=3)) == 3
    assert len(store.list_namespaces(prefix=(p,), offset=3)) == len(test_namespaces) - 3

    everything = store.list_namespaces(prefix=(p,))
    assert len(everything) == len(test_namespaces) and set(everything) == set(test_namespaces)

    for namespace in test_namespaces:
        store.delete(namespace, "dummy")


def test_search_pages_are_disjoint_and_most_recently_updated_first(client):
    # upstream: sqlite test_search_items
    store = OstrakonStore(client, index={"fields": ["key0", "key1", "key3"]})
    base = "test_search_items"
    test_namespaces = [(base, "documents", "user1"), (base, "documents", "user2"),
                       (base, "reports", "department1"), (base, "reports", "department2")]
    test_items = [
        {"title": "Doc 1", "author": "John Doe", "tags": ["important"]},
        {"title": "Doc 2", "author": "Jane Smith", "tags": ["draft"]},
        {"title": "Report A", "author": "John Doe", "tags": ["final"]},
        {"title": "Report B", "author": "Alice Johnson", "tags": ["draft"]},
    ]
    for ns, item in zip(test_namespaces, test_items):
        store.put(ns, f"item_{ns[-1]}", item)

    docs = store.search((base, "documents"))
    assert len(docs) == 2 and all(item.namespace[1] == "documents" for item in docs)
    reports = store.search((base, "reports"))
    assert len(reports) == 2 and all(item.namespace[1] == "reports" for item in reports)

    first_page = store.search((base,), limit=2, offset=0)
    second_page = store.search((base,), limit=2, offset=2)
    # Without a query the most recently updated come first.
    assert keys(first_page) == ["item_department2", "item_department1"]
    assert keys(second_page) == ["item_user2", "item_user1"]
    assert len(store.search((base,))) == 4

    john = store.search((base,), filter={"author": "John Doe"})
    assert len(john) == 2 and all(item.value["author"] == "John Doe" for item in john)

    draft = store.search((base,), filter={"tags": ["draft"]})
    assert sorted(keys(draft)) == ["item_department2", "item_user2"]

    for ns in test_namespaces:
        store.delete(ns, f"item_{ns[-1]}")
    assert store.search((base,)) == []


# -- search with a query -----------------------------------------------------------------


def test_a_query_finds_the_items_whose_text_it_shares(store):
    # upstream: sqlite test_vector_insert_with_auto_embedding
    for key, value in [
        ("doc1", {"text": "short text"}),
        ("doc2", {"text": "longer text document"}),
        ("doc3", {"text": "longest text document here"}),
        ("doc4", {"description": "text in description field"}),
        ("doc5", {"content": "text in content field"}),
        ("doc6", {"body": "text in body field"}),
    ]:
        store.put(("test",), key, value)

    results = store.search(("test",), query="long text")
    assert "doc2" in keys(results) and "doc3" in keys(results)
    assert all(r.score is not None for r in results)  # every one shares "text"

    # A word only one item has ranks that item first.
    results = store.search(("test",), query="longest")
    assert results[0].key == "doc3" and results[0].score is not None


def test_an_update_changes_what_a_query_finds_and_an_unindexed_item_is_not_ranked(store):
    # upstream: sqlite test_vector_update_with_embedding
    store.put(("test",), "doc1", {"text": "zany zebra Xerxes"})
    store.put(("test",), "doc2", {"text": "something about dogs"})
    store.put(("test",), "doc3", {"text": "text about birds"})

    initial = store.search(("test",), query="Zany Xerxes")
    assert initial[0].key == "doc1"
    initial_score = initial[0].score
    assert initial_score is not None

    store.put(("test",), "doc1", {"text": "new text about dogs"})

    after = store.search(("test",), query="Zany Xerxes")
    after_score = next(r.score for r in after if r.key == "doc1")
    assert ranked_below(after_score, initial_score)

    renewed = store.search(("test",), query="new text about dogs")
    assert renewed[0].key == "doc1" and renewed[0].score is not None

    store.put(("test",), "doc4", {"text": "new text about dogs"}, index=False)
    top = store.search(("test",), query="new text about dogs", limit=3)
    assert "doc4" not in keys(top)
    unranked = next(r for r in store.search(("test",), query="new text about dogs") if r.key == "doc4")
    assert unranked.score is None


def test_a_query_ranks_within_the_filter(store):
    # upstream: sqlite test_vector_search_with_filters
    for key, value in [
        ("doc1", {"text": "red apple", "color": "red", "score": 4.5}),
        ("doc2", {"text": "red car", "color": "red", "score": 3.0}),
        ("doc3", {"text": "green apple", "color": "green", "score": 4.0}),
        ("doc4", {"text": "blue car", "color": "blue", "score": 3.5}),
    ]:
        store.put(("test",), key, value)

    results = store.search(("test",), query="apple", filter={"color": "red"})
    assert len(results) == 2
    assert results[0].key == "doc1"

    results = store.search(("test",), query="car", filter={"color": "red"})
    assert results[0].key == "doc2"

    # Upstream queries "bbbbluuu", near "blue" in character frequencies; here a word.
    results = store.search(("test",), query="blue", filter={"score": {"$gt": 3.2}})
    assert len(results) == 3
    assert results[0].key == "doc4"
    assert {"doc1", "doc3"} <= set(keys(results))

    results = store.search(("test",), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"})
    assert keys(results) == ["doc3"]


def test_query_pages_are_disjoint_and_in_descending_score(store):
    # upstream: sqlite test_vector_search_pagination
    for i in range(5):
        store.put(("test",), f"doc{i}", {"text": f"test document number {i}"})

    page1 = store.search(("test",), query="test", limit=2)
    page2 = store.search(("test",), query="test", limit=2, offset=2)
    assert len(page1) == 2 and len(page2) == 2
    assert set(keys(page1)).isdisjoint(keys(page2))
    assert page1[0].score >= page1[1].score
    assert page2[0].score >= page2[1].score

    everything = store.search(("test",), query="test", limit=10)
    assert len(everything) == 5
    assert everything[0].score >= everything[2].score
    assert keys(everything[:2]) == keys(page1) and keys(everything[2:4]) == keys(page2)


def test_an_empty_long_or_punctuated_query_still_answers(store):
    # upstream: sqlite test_vector_search_edge_cases
    store.put(("test",), "doc1", {"text": "test document"})

    assert len(store.search(("test",), query="")) == 1
    assert len(store.search(("test",), query=None)) == 1
    assert len(store.search(("test",), query="test " * 100)) == 1
    assert len(store.search(("test",), query="test!@#$%^&*()")) == 1


def test_only_the_configured_fields_are_ranked(client):
    # upstream: sqlite test_embed_with_path
    store = OstrakonStore(client, index={"fields": ["key0", "key1", "key3"]})
    store.put(("test",), "doc1", {"key1": "xxx", "key2": "yyy", "key3": "zzz"})  # no key0: not an error
    store.put(("test",), "doc2", {"key0": "uuu", "key1": "vvv", "key2": "www", "key3": "xxx"})

    results = store.search(("test",), query="xxx")
    assert sorted(keys(results)) == ["doc1", "doc2"]
    assert all(r.score is not None for r in results)

    results = store.search(("test",), query="uuu")
    assert keys(results) == ["doc2", "doc1"]
    assert ranked_below(results[1].score, results[0].score)

    results = store.search(("test",), query="zzz")
    assert keys(results) == ["doc1", "doc2"]
    assert ranked_below(results[1].score, results[0].score)

    # key2 is not indexed: neither item is ranked by it.
    results = store.search(("test",), query="www")
    assert sorted(keys(results)) == ["doc1", "doc2"]
    assert [r.score for r in results] == [None, None]


def test_a_puts_own_index_fields_override_the_configured_ones(client):
    # upstream: sqlite test_embed_with_path_operation_config
    store = OstrakonStore(client, index={"fields": ["key17"]})
    store.put(("test",), "doc3", {"key0": "aaa", "key1": "bbb", "key2": "ccc", "key3": "ddd"}, index=["key0", "key1"])
    store.put(("test",), "doc4", {"key0": "eee", "key1": "bbb", "key2": "fff", "key3": "ggg"}, index=["key1", "key3"])

    results = store.search(("test",), query="aaa")
    assert keys(results) == ["doc3", "doc4"]
    assert ranked_below(results[1].score, results[0].score)

    results = store.search(("test",), query="ggg")
    assert keys(results) == ["doc4", "doc3"]
    assert ranked_below(results[1].score, results[0].score)

    # Both index "bbb": both are ranked.
    results = store.search(("test",), query="bbb")
    assert sorted(keys(results)) == ["doc3", "doc4"]
    assert all(r.score is not None for r in results)

    # Neither indexes key2.
    results = store.search(("test",), query="ccc")
    assert len(results) == 2 and all(r.score is None for r in results)

    store.put(("test",), "doc5", {"key0": "hhh", "key1": "iii"}, index=False)
    results = store.search(("test",))
    assert len(results) == 3 and "doc5" in keys(results)


@pytest.mark.parametrize(("query", "shares_a_word"), [("aaa", True), ("bbb", False), ("ccc", False), ("abcd", False), ("poisson", False)])
def test_an_item_is_scored_only_by_a_query_sharing_its_indexed_text(client, query, shares_a_word):
    # upstream: sqlite test_scores
    store = OstrakonStore(client, index={"fields": ["key0"]})
    store.put(("test",), "doc", {"key0": "aaa"}, index=["key0", "key1"])

    results = store.search((), query=query)
    assert keys(results) == ["doc"]
    if shares_a_word:
        assert results[0].score is not None and results[0].score > 0
    else:
        assert results[0].score is None


def test_a_query_in_each_script_finds_its_item_first(store):
    # upstream: sqlite test_non_ascii
    texts = {"1": "这是中文", "2": "これは日本語です", "3": "이건 한국어야", "4": "Это русский", "5": "यह रूसी है"}
    for key, text in texts.items():
        store.put(("user_123", "memories"), key, {"text": text})

    for key, text in texts.items():
        results = store.search(("user_123", "memories"), query=text)
        assert results[0].key == key and results[0].score is not None
        assert results[0].value == {"text": text}


# -- filters -------------------------------------------------------------------------------


def test_an_injection_looking_filter_key_finds_nothing_it_should_not(store):
    # upstream: sqlite test_sql_injection_vulnerability
    store.put(("docs",), "public", {"access": "public", "data": "public info"})
    store.put(("docs",), "private", {"access": "private", "data": "secret", "password": "123"})

    normal = store.search(("docs",), filter={"access": "public"})
    assert keys(normal) == ["public"]

    malicious_key = "access') = 'public' OR '1'='1' OR json_extract(value, '$."
    assert store.search(("docs",), filter={malicious_key: "dummy"}) == []

    # The key is just a key: a value that has it is found by it.
    store.put(("docs",), "odd", {malicious_key: "dummy"})
    found = store.search(("docs",), filter={malicious_key: "dummy"})
    assert keys(found) == ["odd"] and found[0].value == {malicious_key: "dummy"}


def test_injection_looking_filter_values_match_only_verbatim(store):
    # upstream: sqlite test_sql_injection_filter_values
    store.put(("docs",), "doc1", {"access": "public", "title": "Public Document"})
    store.put(("docs",), "doc2", {"access": "private", "title": "Private Document"})
    store.put(("docs",), "doc3", {"access": "secret", "title": "Secret Document"})

    malicious = ["public' OR '1'='1", "public'; --", "public' UNION SELECT * FROM store --",
                 "public\x00' OR '1'='1", "''''", "public' OR 'א'='א"]
    for value in malicious:
        assert store.search(("docs",), filter={"access": value}) == [], value

    store.put(("docs",), "doc4", {"title": "O'Brien's Document", "access": "public"})
    results = store.search(("docs",), filter={"title": "O'Brien's Document"})
    assert keys(results) == ["doc4"]
    assert results[0].value["title"] == "O'Brien's Document"

    # Stored, each is kept verbatim and found by itself alone.
    for n, value in enumerate(malicious):
        store.put(("kept",), f"k{n}", {"access": value})
    for n, value in enumerate(malicious):
        assert store.get(("kept",), f"k{n}").value == {"access": value}
        assert keys(store.search(("kept",), filter={"access": value})) == [f"k{n}"]


def test_numeric_filters_compare_numbers_including_infinities_nan_and_big_ints(store):
    # upstream: sqlite test_numeric_filter_safety
    store.put(("items",), "item1", {"price": 10, "quantity": 5})
    store.put(("items",), "item2", {"price": 20, "quantity": 3})
    store.put(("items",), "item3", {"price": 30, "quantity": 1})

    results = store.search(("items",), filter={"price": {"$gt": 15}})
    assert sorted(keys(results)) == ["item2", "item3"]

    assert len(store.search(("items",), filter={"price": {"$lt": float("inf")}})) == 3
    assert len(store.search(("items",), filter={"price": {"$gt": float("-inf")}})) == 3
    assert store.search(("items",), filter={"price": {"$eq": float("nan")}}) == []
    assert len(store.search(("items",), filter={"price": {"$lt": 10**100}})) == 3

    store.put(("items",), "item4", {"price": -10, "quantity": 0})
    assert keys(store.search(("items",), filter={"price": {"$lt": 0}})) == ["item4"]

    # The bounds: $gte and $lte take the value itself, $ne all others.
    assert sorted(keys(store.search(("items",), filter={"price": {"$gte": 20}}))) == ["item2", "item3"]
    assert sorted(keys(store.search(("items",), filter={"price": {"$lte": 10}}))) == ["item1", "item4"]
    assert sorted(keys(store.search(("items",), filter={"price": {"$ne": 20}}))) == ["item1", "item3", "item4"]
    assert keys(store.search(("items",), filter={"price": {"$gt": 10, "$lt": 30}})) == ["item2"]
    assert keys(store.search(("items",), filter={"price": {"$eq": 20}})) == ["item2"]


def test_boolean_filters_match_true_and_false(store):
    # upstream: sqlite test_boolean_filter_safety
    store.put(("flags",), "flag1", {"active": True, "name": "Feature A"})
    store.put(("flags",), "flag2", {"active": False, "name": "Feature B"})
    store.put(("flags",), "flag3", {"active": True, "name": "Feature C"})

    results = store.search(("flags",), filter={"active": True})
    assert sorted(keys(results)) == ["flag1", "flag3"]
    assert all(r.value["active"] is True for r in results)

    results = store.search(("flags",), filter={"active": False})
    assert keys(results) == ["flag2"]
    assert results[0].value["active"] is False


def test_filter_keys_with_hyphens_and_leading_digits_match(store):
    # upstream: sqlite test_filter_keys_with_hyphens_and_digits
    store.put(("docs",), "hyphen", {"access-level": "public", "user": {"access-level": "nested"}})
    store.put(("docs",), "digit", {"123abc": "ok", "user": {"123abc": "ok2"}})

    assert keys(store.search(("docs",), filter={"access-level": "public"})) == ["hyphen"]
    assert keys(store.search(("docs",), filter={"123abc": "ok"})) == ["digit"]
    # A nested value is reached through a nested filter value.
    assert keys(store.search(("docs",), filter={"user": {"access-level": "nested"}})) == ["hyphen"]
    assert keys(store.search(("docs",), filter={"user": {"123abc": "ok2"}})) == ["digit"]

    # A dotted key names a top-level key verbatim (as InMemoryStore and PostgresStore
    # read it; SqliteStore reads it as a JSON path).
    store.put(("docs",), "dotted", {"user.access-level": "flat"})
    assert keys(store.search(("docs",), filter={"user.access-level": "flat"})) == ["dotted"]
    assert store.search(("docs",), filter={"user.access-level": "nested"}) == []


# -- namespaces ------------------------------------------------------------------------------


def test_search_prefix_stops_at_label_boundaries(store):
    # upstream: sqlite test_search_namespace_segment_boundary
    for namespace in [("foo",), ("foo", "child"), ("foo", "child", "deep"), ("foobar",), ("foobar", "baz"), ("foo2",)]:
        store.put(namespace, "k", {"v": 1})

    def namespaces(prefix):
        return {item.namespace for item in store.search(prefix, limit=100)}

    assert namespaces(("foo",)) == {("foo",), ("foo", "child"), ("foo", "child", "deep")}
    assert namespaces(("foobar",)) == {("foobar",), ("foobar", "baz")}
    assert namespaces(("foo2",)) == {("foo2",)}
    assert namespaces(("fo",)) == set()


def test_search_prefix_takes_wildcard_characters_literally(store):
    # upstream: sqlite test_search_namespace_wildcard_chars_are_literal
    for namespace in [("user_1",), ("user_1", "child"), ("userX1",), ("a%b",), ("axxb",), ("star*",), ("starX",)]:
        store.put(namespace, "k", {"v": 1})

    def namespaces(prefix):
        return {item.namespace for item in store.search(prefix, limit=100)}

    assert namespaces(("user_1",)) == {("user_1",), ("user_1", "child")}
    assert namespaces(("a%b",)) == {("a%b",)}
    assert namespaces(("star*",)) == {("star*",)}


def test_search_prefix_is_case_sensitive(store):
    # upstream: sqlite test_search_namespace_is_case_sensitive
    store.put(("Foo",), "k", {"v": "upper"})
    store.put(("foo",), "k", {"v": "lower"})

    assert {item.namespace for item in store.search(("foo",), limit=100)} == {("foo",)}
    assert {item.namespace for item in store.search(("Foo",), limit=100)} == {("Foo",)}
    assert store.get(("Foo",), "k").value == {"v": "upper"}
    assert store.get(("foo",), "k").value == {"v": "lower"}


def test_listing_prefix_suffix_and_wildcard_align_to_labels(store):
    # upstream: sqlite test_list_namespaces_segment_boundary
    uid = {("uid", "users", "alice"), ("uid", "users", "malice"), ("uid", "a", "b", "alice")}
    for namespace in [("foo",), ("foo", "child"), ("foobar",), ("foobar", "baz"), *uid]:
        store.put(namespace, "k", {"v": 1})

    assert set(store.list_namespaces(prefix=["foo"], limit=100)) == {("foo",), ("foo", "child")}
    assert set(store.list_namespaces(suffix=["alice"], limit=100)) == {("uid", "users", "alice"), ("uid", "a", "b", "alice")}
    assert set(store.list_namespaces(prefix=["uid", "*", "alice"], limit=100)) == {("uid", "users", "alice")}
    assert set(store.list_namespaces(prefix=["uid"], limit=100)) == uid


def test_an_empty_search_prefix_finds_every_namespace(store):
    # upstream: sqlite test_search_empty_prefix_is_unconstrained
    for namespace in [("a",), ("b", "c"), ("d", "e", "f")]:
        store.put(namespace, "k", {"v": 1})

    assert {item.namespace for item in store.search((), limit=100)} == {("a",), ("b", "c"), ("d", "e", "f")}


def test_a_label_with_a_trailing_newline_is_a_different_label(store):
    # upstream: sqlite test_namespace_labels_with_trailing_newline
    store.put(("users", "alice"), "k", {"v": 1})
    store.put(("users", "alice\n"), "k", {"v": 2})

    assert set(store.list_namespaces(suffix=["alice"], limit=100)) == {("users", "alice")}
    assert set(store.list_namespaces(prefix=["users", "alice"], limit=100)) == {("users", "alice")}
    assert store.get(("users", "alice\n"), "k").value == {"v": 2}
    assert {item.namespace for item in store.search(("users", "alice"))} == {("users", "alice")}


def test_listing_takes_metacharacters_in_labels_literally(store):
    # upstream: sqlite test_list_namespaces_metacharacter_labels
    pairs = [("star*", "starX"), ("q?m", "qXm"), ("br[ack]et", "brXacXket"), ("user_1", "userX1"), ("a%b", "axxb"), ("plus+", "plusX")]
    for label, decoy in pairs:
        store.put((label,), "k", {"v": 1})
        store.put((decoy,), "k", {"v": 1})
        store.put((label, "child"), "k", {"v": 1})

    for label, decoy in pairs:
        found = set(store.list_namespaces(prefix=[label], limit=100))
        assert found == {(label,), (label, "child")}
        assert (decoy,) not in found
        assert set(store.list_namespaces(prefix=[label, "child"], limit=100)) == {(label, "child")}


# -- list_namespaces (InMemoryStore's cases) -----------------------------------------------


def test_namespaces_are_listed_in_order_by_prefix_suffix_wildcard_depth_and_page(store):
    # upstream: checkpoint test_list_namespaces_basic
    namespaces = [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f"),
                  ("users", "123"), ("users", "456", "settings"), ("admin", "users", "789")]
    for i, ns in enumerate(namespaces):
        store.put(namespace=ns, key=f"id_{i}", value={"data": f"value_{i:02d}"})

    assert sorted(store.list_namespaces(prefix=("a", "b"))) == [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f")]
    assert sorted(store.list_namespaces(suffix=("f",))) == [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert sorted(store.list_namespaces(prefix=("a",), suffix=("f",))) == [("a", "b", "f"), ("a", "c", "f")]
    assert sorted(store.list_namespaces(prefix=("a", "b"), max_depth=3)) == [("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f")]
    assert store.list_namespaces(prefix=("a", "b"), limit=2) == [("a", "b", "c"), ("a", "b", "d", "e")]
    assert store.list_namespaces(prefix=("a", "b"), offset=2) == [("a", "b", "d", "i"), ("a", "b", "f")]
    assert sorted(store.list_namespaces(prefix=("a", "*", "f"))) == [("a", "b", "f"), ("a", "c", "f")]
    assert sorted(store.list_namespaces(suffix=("*", "f"))) == [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert store.list_namespaces(prefix=("nonexistent",)) == []
    assert store.list_namespaces(prefix=("users", "123")) == [("users", "123")]


def test_a_wildcard_matches_exactly_one_label_in_prefix_and_suffix(store):
    # upstream: checkpoint test_list_namespaces_with_wildcards
    namespaces = [("users", "123"), ("users", "456"), ("users", "789", "settings"), ("admin", "users", "789"),
                  ("guests", "123"), ("guests", "456", "preferences")]
    for i, ns in enumerate(namespaces):
        store.put(namespace=ns, key=f"id_{i}", value={"data": f"value_{i:02d}"})

    assert sorted(store.list_namespaces(prefix=("users", "*"))) == [("users", "123"), ("users", "456"), ("users", "789", "settings")]
    assert store.list_namespaces(suffix=("*", "preferences")) == [("guests", "456", "preferences")]
    assert store.list_namespaces(prefix=("*", "users"), suffix=("*", "settings")) == []

    # Upstream puts this and states the expectation without asserting it.
    store.put(namespace=("admin", "users", "settings", "789"), key="foo", value={"data": "some_val"})
    assert store.list_namespaces(prefix=("*", "users"), suffix=("settings", "*")) == [("admin", "users", "settings", "789")]


def test_namespace_listing_pages_by_limit_and_offset(store):
    # upstream: checkpoint test_list_namespaces_pagination
    for i in range(20):
        store.put(namespace=("namespace", f"sub_{i:02d}"), key=f"id_{i:02d}", value={"data": f"value_{i:02d}"})

    assert store.list_namespaces(prefix=("namespace",), limit=5, offset=0) == [("namespace", f"sub_{i:02d}") for i in range(5)]
    assert store.list_namespaces(prefix=("namespace",), limit=5, offset=5) == [("namespace", f"sub_{i:02d}") for i in range(5, 10)]
    assert store.list_namespaces(prefix=("namespace",), limit=5, offset=15) == [("namespace", f"sub_{i:02d}") for i in range(15, 20)]


def test_max_depth_truncates_and_merges_namespaces(store):
    # upstream: checkpoint test_list_namespaces_max_depth
    for i, ns in enumerate([("a", "b", "c", "d"), ("a", "b", "c", "e"), ("a", "b", "f"), ("a", "g"), ("h", "i", "j", "k")]):
        store.put(namespace=ns, key=f"id_{i}", value={"data": f"value_{i:02d}"})

    assert sorted(store.list_namespaces(max_depth=2)) == [("a", "b"), ("a", "g"), ("h", "i")]


def test_listing_without_conditions_gives_every_namespace(store):
    # upstream: checkpoint test_list_namespaces_no_conditions
    namespaces = [("a", "b"), ("c", "d"), ("e", "f", "g")]
    for i, ns in enumerate(namespaces):
        store.put(namespace=ns, key=f"id_{i}", value={"data": f"value_{i:02d}"})

    assert sorted(store.list_namespaces()) == sorted(namespaces)


def test_an_empty_store_lists_no_namespaces(store):
    # upstream: checkpoint test_list_namespaces_empty_store
    assert store.list_namespaces() == []


def test_an_empty_namespace_or_label_a_period_or_a_langgraph_root_is_refused(store):
    # upstream: checkpoint test_cannot_put_empty_namespace
    doc = {"foo": "bar"}

    async def refused():
        for namespace in [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")]:
            with pytest.raises(InvalidNamespaceError):
                store.put(namespace, "foo", doc)
            with pytest.raises(InvalidNamespaceError):
                await store.aput(namespace, "foo", doc)

        await store.aput(("foo", "langgraph", "foo"), "bar", doc)
        assert (await store.aget(("foo", "langgraph", "foo"), "bar")).value == doc
        assert (await store.asearch(("foo", "langgraph", "foo"), query="bar"))[0].value == doc
        await store.adelete(("foo", "langgraph", "foo"), "bar")
        assert await store.aget(("foo", "langgraph", "foo"), "bar") is None

        # Past the public put, a "langgraph" root is not refused.
        await store.abatch([PutOp(("langgraph", "foo"), "bar", doc)])
        assert (await store.aget(("langgraph", "foo"), "bar")).value == doc
        assert (await store.asearch(("langgraph", "foo")))[0].value == doc
        await store.adelete(("langgraph", "foo"), "bar")
        assert await store.aget(("langgraph", "foo"), "bar") is None

    asyncio.run(refused())

    store.put(("foo", "langgraph", "foo"), "bar", doc)
    assert store.get(("foo", "langgraph", "foo"), "bar").value == doc
    assert store.search(("foo", "langgraph", "foo"), query="bar")[0].value == doc
    store.delete(("foo", "langgraph", "foo"), "bar")
    assert store.get(("foo", "langgraph", "foo"), "bar") is None

    store.batch([PutOp(("langgraph", "foo"), "bar", doc)])
    assert store.get(("langgraph", "foo"), "bar").value == doc
    assert store.search(("langgraph", "foo"))[0].value == doc
    store.delete(("langgraph", "foo"), "bar")
    assert store.get(("langgraph", "foo"), "bar") is None


# -- TTL (upstream in seconds; here shorter) -------------------------------------------------

SHORT, LONG = 1.0, 3.0  # seconds


def test_an_item_expires_after_the_default_ttl(client):
    # upstream: ttl test_ttl_basic
    store = OstrakonStore(client, ttl={"default_ttl": SHORT / 60})
    start = time.monotonic()
    store.put(("test",), "item1", {"value": "test"})
    assert store.get(("test",), "item1").value["value"] == "test"

    wait_until(start + SHORT + 0.5)
    assert store.get(("test",), "item1") is None


def test_each_item_expires_after_its_own_ttl(store):
    # upstream: ttl test_ttl_custom_value
    start = time.monotonic()
    store.put(("test",), "item1", {"value": "short"}, ttl=SHORT / 60)
    store.put(("test",), "item2", {"value": "long"}, ttl=LONG / 60)

    wait_until(start + SHORT + 0.5)
    assert store.get(("test",), "item1") is None
    assert store.get(("test",), "item2") is not None

    wait_until(start + LONG + 0.5)
    assert store.get(("test",), "item2") is None


def test_a_puts_ttl_overrides_the_default_and_none_means_forever(client):
    # upstream: ttl test_ttl_override_default
    store = OstrakonStore(client, ttl={"default_ttl": LONG / 60})
    start = time.monotonic()
    store.put(("test",), "item1", {"value": "override"}, ttl=SHORT / 60)
    store.put(("test",), "item2", {"value": "default"})
    store.put(("test",), "item3", {"value": "permanent"}, ttl=None)

    wait_until(start + SHORT + 0.5)
    assert store.get(("test",), "item1") is None
    assert store.get(("test",), "item2") is not None
    assert store.get(("test",), "item3") is not None

    wait_until(start + LONG + 0.5)
    assert store.get(("test",), "item2") is None
    assert store.get(("test",), "item3") is not None


def test_search_no_longer_finds_an_expired_item(client):
    # upstream: ttl test_search_with_ttl
    store = OstrakonStore(client, ttl={"default_ttl": SHORT / 60})
    start = time.monotonic()
    store.put(("test",), "item1", {"value": "apple"})
    store.put(("test",), "item2", {"value": "banana"})

    assert keys(store.search(("test",), filter={"value": "apple"})) == ["item1"]

    wait_until(start + SHORT + 0.5)
    assert store.search(("test",), filter={"value": "apple"}) == []
    assert store.search(("test",), query="apple") == []


def test_an_item_expires_after_the_default_ttl_through_the_async_api(client):
    # upstream: ttl test_async_ttl_basic (and test_async_search_with_ttl)
    store = OstrakonStore(client, ttl={"default_ttl": SHORT / 60})

    async def run():
        start = time.monotonic()
        await store.aput(("test",), "item1", {"value": "test"})
        assert (await store.aget(("test",), "item1")).value["value"] == "test"
        assert keys(await store.asearch(("test",), filter={"value": "test"})) == ["item1"]

        await asyncio.sleep(max(0.0, start + SHORT + 0.5 - time.monotonic()))
        assert await store.aget(("test",), "item1") is None
        assert await store.asearch(("test",), filter={"value": "test"}) == []

    asyncio.run(run())
