"""Fixtures: a server started from the installed `ostrakon` command, on a free port."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def framework(module: str, extra: str) -> None:
    """Imports a framework the adapters are tested against, or skips the calling test module
    when it is not installed (fails instead when OSTRAKON_FRAMEWORK_TEST=required, as in CI)."""
    import importlib

    try:
        importlib.import_module(module)
    except ImportError:
        if os.environ.get("OSTRAKON_FRAMEWORK_TEST") == "required":
            raise
        pytest.skip(f"{module} is not installed (pip install 'ostrakon[{extra}]')", allow_module_level=True)


def ostrakon_command() -> list[str]:
    """The `ostrakon` console script the wheel installed beside this interpreter."""
    script = shutil.which("ostrakon", path=os.path.dirname(sys.executable))
    assert script, "the wheel's `ostrakon` command is not installed"
    return [script]


@pytest.fixture(autouse=True)
def _no_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    # The tests check the client, not recall: no model to load.
    monkeypatch.setenv("OSTRAKON_EMBEDDER", "off")


@pytest.fixture
def server(tmp_path):
    port = _free_port()
    env = dict(os.environ, OSTRAKON_EMBEDDER="off")
    process = subprocess.Popen(
        [*ostrakon_command(), "serve", "--data", str(tmp_path / "served"), "--listen", f"127.0.0.1:{port}"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(url + "/livez", timeout=1):
                break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise RuntimeError(f"the server did not start: {process.stderr.read().decode()[-2000:]}")
            time.sleep(0.1)
    yield url
    process.terminate()
    process.wait(timeout=30)


@pytest.fixture(params=["in-process", "http"])
def client(request, tmp_path):
    """A client of a fresh store: in this process, then over HTTP to a fresh server."""
    import ostrakon

    if request.param == "in-process":
        memory = ostrakon.open(tmp_path / "store")
    else:
        memory = ostrakon.connect(request.getfixturevalue("server"))
    yield memory
    memory.close()
