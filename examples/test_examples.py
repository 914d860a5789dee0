"""Each example runs as a user would run it (its own process, a fresh data directory, no
model download: OSTRAKON_EMBEDDER=off), and says what its docstring promises."""

import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).parent
PYTHON = os.environ.get("OSTRAKON_EXAMPLES_PYTHON", sys.executable)


def run(script: str, tmp_path: pathlib.Path) -> str:
    done = subprocess.run(
        [PYTHON, str(HERE / script), str(tmp_path / "memory")],
        env=dict(os.environ, OSTRAKON_EMBEDDER="off", OSTRAKON_LOG="warn"),
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.parametrize("script", sorted(p.name for p in HERE.glob("*.py") if p.name != "test_examples.py"))
def test_each_example_is_short(script):
    assert len((HERE / script).read_text().splitlines()) < 60


def test_langgraph(tmp_path):
    out = run("langgraph_memory.py", tmp_path).splitlines()
    assert out == ["You live in Porto.", "as known before the move: Lisbon", "history: ['Lisbon', 'Porto']"], out


def test_langchain(tmp_path):
    out = run("langchain_retriever.py", tmp_path)
    assert "fact    'Ana worksAt Dona Estefania' valid from 2024-09-01 (CURRENT)" in out, out
    assert "'Ana worksAt Santa Maria' valid from 2019-03-04 (SUPERSEDED, replaced by 'Ana worksAt Dona Estefania')" in out, out
    assert "in 2020: ['Ana worksAt Santa Maria']" in out, out


def test_llama_index(tmp_path):
    out = run("llama_index_memory.py", tmp_path)
    assert "<ostrakon>" in out and "violin lessons on Thursdays" in out, out
