"""The typed client generated from queries/ (`client.api`): pydantic models in and out,
aware datetimes, typed errors, paged iterators, over both transports."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ostrakon
from ostrakon.api.enums import Cardinality, FactStatus, ValueType
from ostrakon.api.input_types import EntityRefInput, EpisodeInput, FactInput, ValueInput

UTC = dt.timezone.utc
ROOT = Path(__file__).resolve().parents[2]


def lives_in(subject: str, city: str, year: int) -> FactInput:
    return FactInput(
        subject=EntityRefInput(name=subject),
        predicate="livesIn",
        object=ValueInput(entity=EntityRefInput(name=city)),
        valid_from=dt.datetime(year, 1, 1, tzinfo=UTC),
    )


def test_write_and_read_with_models_and_aware_datetimes(client):
    api = client.api
    defined = api.define_predicate(namespace="ana", name="livesIn", cardinality=Cardinality.ONE, value_type=ValueType.ENTITY)
    assert defined.define_predicate.predicate.cardinality is Cardinality.ONE
    written = api.mutation_record_episode(
        namespace="ana",
        episode=EpisodeInput(text="Ana moved from Porto to Lisbon in 2015.", occurred_at=dt.datetime(2016, 3, 1, 11, tzinfo=dt.timezone(dt.timedelta(hours=1)))),
        facts=[lives_in("Ana", "Porto", 2009), lives_in("Ana", "Lisbon", 2015)],
    )
    episode = written.record_episode.episode
    # Out: an aware datetime, the instant that was sent.
    assert episode.occurred_at == dt.datetime(2016, 3, 1, 10, tzinfo=UTC)
    assert episode.occurred_at.tzinfo is not None
    assert [f.status for f in written.record_episode.facts] == [FactStatus.SUPERSEDED, FactStatus.CURRENT]

    then = api.entity_as_of_valid_time(namespace="ana", name="Ana", valid_at=dt.datetime(2012, 6, 1, tzinfo=UTC))
    assert [f.object_.entity.name for f in then.entity.facts] == ["Porto"]
    assert then.entity.basis.valid_at == dt.datetime(2012, 6, 1, tzinfo=UTC)
    # A partial date as a method argument is the server's to place.
    now = api.entity_as_of_valid_time(namespace="ana", name="Ana", valid_at="2020")
    assert [f.object_.entity.name for f in now.entity.facts] == ["Lisbon"]
    # As known before the episode was written, Ana lived nowhere yet.
    before = api.entity_as_of_valid_time(namespace="ana", name="Ana", known_at=dt.datetime(2000, 1, 1, tzinfo=UTC))
    assert before.entity is None


def test_a_naive_datetime_is_refused_before_anything_is_sent(client):
    with pytest.raises(ValueError, match="naive"):
        client.api.entity_as_of_valid_time(namespace="ana", name="Ana", valid_at=dt.datetime(2012, 6, 1))
    with pytest.raises(ValueError):
        EpisodeInput(text="x", occurred_at="2015")  # pydantic alone would read 2015 s after 1970
    with pytest.raises(ValueError, match="naive"):
        client.execute("query($t: DateTime) { namespaces(first: 1) }", {"t": dt.datetime(2020, 1, 1)})


def test_typed_methods_raise_typed_errors(client):
    client.api.define_predicate(namespace="ana", name="livesIn", cardinality=Cardinality.ONE, value_type=ValueType.ENTITY)
    with pytest.raises(ostrakon.UnknownEntity) as caught:
        client.api.history_supersession(namespace="ana", subject="Nobody", predicate="livesIn")
    assert caught.value.code == "UNKNOWN_ENTITY"
    with pytest.raises(ostrakon.InvalidInput):
        client.api.end_fact(namespace="ana", fact="1", valid_to="not a time")


def test_pages_follow_the_cursor(client):
    names = [f"person {i:02}" for i in range(7)]
    client.api.mutation_assert_facts(
        namespace="crowd",
        facts=[FactInput(subject=EntityRefInput(name=n), predicate="age", object=ValueInput(integer=i)) for i, n in enumerate(names)],
    )
    seen = [e.name for e in ostrakon.pages(client.api.entities, namespace="crowd", first=3)]
    assert sorted(seen) == names and len(seen) == len(names)
    with pytest.raises(TypeError, match="pageInfo"):
        next(ostrakon.pages(client.api.namespace, name="crowd"))


def test_the_async_typed_client(tmp_path):
    async def run() -> list[str]:
        async with await ostrakon.open_async(tmp_path / "async") as memory:
            await memory.api.mutation_assert_facts(namespace="a", facts=[lives_in("Ana", "Porto", 2009)])
            found = await memory.api.search(namespace="a", text="Porto")
            assert found.search.hits
            return [e.name async for e in ostrakon.apages(memory.api.entities, namespace="a", first=1)]

    assert sorted(asyncio.run(run())) == ["Ana", "Porto"]


def test_the_generated_code_matches_the_schema_and_queries():
    """Regenerates the typed clients and fails on any difference from the committed code."""
    try:
        import ariadne_codegen  # noqa: F401
    except ImportError:
        if os.environ.get("OSTRAKON_CODEGEN_TEST") == "required":
            raise
        pytest.skip("ariadne-codegen is not installed (pip install 'ostrakon[codegen]')")
    done = subprocess.run([sys.executable, str(ROOT / "python" / "codegen" / "generate.py"), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
