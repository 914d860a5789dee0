"""The Python client against the built wheel: in-process and over HTTP, the same answers
and the same typed errors; the CLI installed as `ostrakon`."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

import ostrakon
from conftest import ostrakon_command

SETUP = """
mutation {
  definePredicate(namespace: "ana", name: "livesIn", cardinality: ONE, valueType: ENTITY) { seq }
  recordEpisode(
    namespace: "ana"
    episode: { text: "Ana lived in Porto from 2009 and moved to Lisbon in 2015.", occurredAt: "2016-03-01T10:00:00Z" }
    entities: [{ name: "Ana" }, { name: "Porto" }, { name: "Lisbon" }]
    facts: [
      { subject: { name: "Ana" }, predicate: "livesIn", object: { entity: { name: "Porto" } }, validFrom: "2009" }
      { subject: { name: "Ana" }, predicate: "livesIn", object: { entity: { name: "Lisbon" } }, validFrom: "2015" }
    ]
  ) { seq }
}
"""

WHERE = """
query Where($at: String!) {
  facts(namespace: "ana", subject: { name: "Ana" }, predicate: "livesIn", validAt: $at) {
    nodes { object { entity { name } } }
  }
}
"""


def where(client: ostrakon.Client, at: str) -> list[str]:
    data = client.execute(WHERE, {"at": at})
    return [n["object"]["entity"]["name"] for n in data["facts"]["nodes"]]


def check(client: ostrakon.Client) -> None:
    seqs = client.execute(SETUP)
    assert seqs["recordEpisode"]["seq"] > seqs["definePredicate"]["seq"]
    assert where(client, "2012") == ["Porto"]
    assert where(client, "2020") == ["Lisbon"]
    assert where(client, "2001") == []
    with pytest.raises(ostrakon.UnknownEntity) as raised:
        client.execute('{ facts(namespace: "ana", subject: { name: "Nobody" }) { nodes { id } } }')
    assert raised.value.code == "UNKNOWN_ENTITY"
    assert raised.value.path == ["facts"]
    assert "Nobody" in raised.value.message
    assert isinstance(raised.value, ostrakon.UnknownRecord)
    with pytest.raises(ostrakon.BadRequest):
        client.execute("{ noSuchField }")
    with pytest.raises(ostrakon.InvalidInput):
        client.execute(WHERE, {"at": "not a time"})


def test_in_process(tmp_path):
    with ostrakon.open(tmp_path / "data") as client:
        check(client)
    # Closed: the directory is free again, and what was written is kept.
    with ostrakon.open(tmp_path / "data") as client:
        assert where(client, "2012") == ["Porto"]
    with pytest.raises(ostrakon.OstrakonError):
        client.execute(WHERE, {"at": "2012"})


def test_over_http(server):
    with ostrakon.connect(server) as client:
        check(client)
    with ostrakon.connect(server + "/graphql") as client:
        assert where(client, "2020") == ["Lisbon"]


def test_a_server_that_is_not_there_is_unavailable():
    with ostrakon.connect("http://127.0.0.1:9", timeout=2) as client:
        with pytest.raises(ostrakon.Unavailable):
            client.execute("{ __typename }")


def test_a_directory_in_use_is_refused_naming_its_holder(tmp_path):
    with ostrakon.open(tmp_path / "data"):
        probe = f"import ostrakon; ostrakon.open({str(tmp_path / 'data')!r})"
        result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
        assert result.returncode != 0
        assert "locked" in result.stderr and "ostrakon serve" in result.stderr, result.stderr


def test_async_twins(tmp_path, server):
    async def run() -> None:
        async with await ostrakon.open_async(tmp_path / "data") as local:
            await local.execute(SETUP)
            data = await local.execute(WHERE, {"at": "2012"})
            assert data["facts"]["nodes"][0]["object"]["entity"]["name"] == "Porto"
        async with await ostrakon.connect_async(server) as remote:
            await remote.execute(SETUP)
            data = await remote.execute(WHERE, {"at": "2020"})
            assert data["facts"]["nodes"][0]["object"]["entity"]["name"] == "Lisbon"

    asyncio.run(run())


def test_the_command_line(tmp_path):
    help_text = subprocess.run([*ostrakon_command(), "--help"], capture_output=True, text=True, timeout=60)
    assert help_text.returncode == 0 and "serve" in help_text.stdout
    wrong = subprocess.run([*ostrakon_command(), "no-such-command"], capture_output=True, text=True, timeout=60)
    assert wrong.returncode == 2 and "no-such-command" in wrong.stderr
    data = tmp_path / "cli"
    ask = subprocess.run(
        [*ostrakon_command(), "query", "--data", str(data), SETUP], capture_output=True, text=True, timeout=120
    )
    assert ask.returncode == 0, ask.stderr
    with ostrakon.open(data) as client:
        assert where(client, "2012") == ["Porto"]


def test_the_readme_example(tmp_path, monkeypatch):
    import pathlib
    import re

    readme = pathlib.Path(__file__).resolve().parents[2] / "README.md"
    blocks = re.findall(r"```python\n(.*?)```", readme.read_text(), re.S)
    assert blocks, "the README has a Python example"
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        exec(compile(block, str(readme), "exec"), {})


def test_ctrl_c_stops_a_command_started_from_python(tmp_path):
    import signal
    import socket
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen(
        [*ostrakon_command(), "serve", "--data", str(tmp_path / "d"), "--listen", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 60
    while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
        assert process.poll() is None and time.monotonic() < deadline, process.stderr.read()
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=30) == 0, process.stderr.read()
