"""`import_jsonl`: the import format through either transport, refused lines reported
with their line and code, nothing of them stored; `wait` returns once search finds it."""

from __future__ import annotations

import json

import pytest


LINES = [
    {"namespace": "ana", "op": "definePredicate", "name": "livesIn", "cardinality": "ONE", "valueType": "ENTITY"},
    {"namespace": "ana", "op": "recordEpisode",
     "episode": {"text": "Ana moved to Lisbon.", "occurredAt": "2015-03-01T09:00:00Z", "externalId": "e1"},
     "facts": [{"subject": {"name": "Ana"}, "predicate": "livesIn", "object": {"entity": {"name": "Lisbon"}}, "validFrom": "2015"}]},
    {"namespace": "ana", "op": "assertFacts", "facts": [
        {"subject": {"name": "Ana"}, "predicate": "livesIn", "object": {"entity": {"name": "Porto"}}, "validFrom": "not a date"}]},
    {"namespace": "bea", "op": "assertFacts", "facts": [
        {"subject": {"name": "Bea"}, "predicate": "age", "object": {"integer": 41}, "validFrom": "2020"}]},
    {"namespace": "ana", "op": "fly"},
]


def test_import_reports_each_refused_line_and_keeps_the_rest(client, tmp_path):
    path = tmp_path / "memories.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in LINES[:3]) + "\n\n" + "\n".join(json.dumps(line) for line in LINES[3:]) + "\n")
    imported = client.import_jsonl(path, wait=True, progress=False)
    assert imported.accepted == 3
    assert [(r.line, r.code) for r in imported.rejected] == [(3, "INVALID_TIME"), (6, "BAD_REQUEST")]
    assert "fly" in imported.rejected[1].message
    # The refused line stored nothing: Ana lives in Lisbon only.
    facts = client.execute('{ facts(namespace: "ana", predicate: "livesIn", includeAll: true) { nodes { object { entity { name } } } } }')
    assert [f["object"]["entity"]["name"] for f in facts["facts"]["nodes"]] == ["Lisbon"]
    # With wait, search already finds what was imported.
    hits = client.execute('{ search(namespace: "ana", text: "Lisbon") { hits { episode { externalId } } } }')["search"]["hits"]
    assert any(h["episode"] and h["episode"]["externalId"] == "e1" for h in hits)
    state = client.execute('{ namespace(name: "ana") { indexing { done indexedSeq latestSeq } } }')["namespace"]["indexing"]
    assert state["done"] and state["indexedSeq"] == state["latestSeq"] == 2


def test_a_missing_file_is_an_os_error(client, tmp_path):
    with pytest.raises(OSError):
        client.import_jsonl(tmp_path / "absent.jsonl")


def test_the_ops_imported_over_http_are_the_servers():
    """The HTTP importer names the ops the server's importer takes (ops::OPS)."""
    import pathlib
    import re

    from ostrakon._jsonl import OPS

    source = (pathlib.Path(__file__).resolve().parents[2] / "crates/ostrakon-graphql/src/ops.rs").read_text()
    listed = re.search(r"pub const OPS: \[&str; \d+\] = \[(.*?)\];", source, re.S)
    assert listed, "ops::OPS not found"
    assert tuple(re.findall(r'"(\w+)"', listed.group(1))) == OPS
