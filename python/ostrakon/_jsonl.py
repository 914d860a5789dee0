"""Importing a file in the import format, and waiting for the search indexes.

In-process the engine reads the file itself (`ostrakon import`'s path). Over HTTP each line
runs as the mutation of the same name, its arguments typed from the server's schema (asked
once), so a line is validated and refused exactly as the server's own import would."""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from .errors import OstrakonError, Unavailable

if TYPE_CHECKING:
    from ._client import Client


@dataclass(frozen=True)
class Rejected:
    """A line that was not imported (1-based), with its error's code and message."""

    line: int
    code: str
    message: str


@dataclass(frozen=True)
class Imported:
    """What an import did: lines accepted, and those refused (nothing of them stored)."""

    accepted: int
    rejected: list[Rejected] = field(default_factory=list)


class Bar:
    """A one-line progress bar on stderr; silent when `shown` is false."""

    def __init__(self, shown: bool | None, label: str) -> None:
        self.shown = sys.stderr.isatty() if shown is None else shown
        self.label = label
        self.drawn = 0.0

    def update(self, done: float, total: float, note: str = "", force: bool = False) -> None:
        now = time.monotonic()
        if not self.shown or (not force and now - self.drawn < 0.1):
            return
        self.drawn = now
        share = min(done / total, 1.0) if total > 0 else 0.0
        filled = int(share * 30)
        sys.stderr.write(f"\r{self.label} [{'#' * filled}{' ' * (30 - filled)}] {share * 100:5.1f}% {note}\033[K")
        sys.stderr.flush()

    def close(self) -> None:
        if self.shown and self.drawn:
            sys.stderr.write("\n")
            sys.stderr.flush()


def import_jsonl(client: "Client", path: str | os.PathLike[str], *, wait: bool, progress: bool | None, timeout: float) -> Imported:
    from ._client import InProcess

    path = os.fspath(path)
    total = os.path.getsize(path)
    bar = Bar(progress, "import")
    transport = client._transport
    if transport is None:
        raise OstrakonError("the client is closed", code="BAD_REQUEST")
    try:
        if isinstance(transport, InProcess):

            def report(read: int, accepted: int, rejected: int) -> None:
                bar.update(read, total, f"{accepted} accepted, {rejected} rejected")

            accepted, refused = transport.import_jsonl(path, report)
            imported = Imported(accepted, [Rejected(line, code, message) for line, code, message in refused])
        else:
            imported = _import_over_http(client, path, total, bar)
        bar.update(total, total, f"{imported.accepted} accepted, {len(imported.rejected)} rejected", force=True)
    finally:
        bar.close()
    if wait:
        wait_indexed(client, None, progress=progress, timeout=timeout)
    return imported


def _import_over_http(client: "Client", path: str, total: int, bar: Bar) -> Imported:
    arguments = _mutation_arguments(client)
    documents: dict[tuple[str, tuple[str, ...]], str] = {}
    accepted, rejected, read = 0, [], 0
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            read += len(raw)
            text = raw.decode("utf-8", errors="replace").strip()
            if not text:
                continue
            try:
                line = json.loads(text)
            except ValueError as e:
                rejected.append(Rejected(number, "BAD_REQUEST", f"not JSON: {e}"))
                continue
            problem = _problem(line, arguments)
            if problem:
                rejected.append(Rejected(number, "BAD_REQUEST", problem))
                continue
            op = line["op"]
            names = tuple(sorted(k for k in line if k not in ("op", "namespace")))
            key = (op, names)
            if key not in documents:
                declared = ", ".join(f"${n}: {arguments[op][n]}" for n in ("namespace", *names))
                passed = ", ".join(f"{n}: ${n}" for n in ("namespace", *names))
                documents[key] = f"mutation Import({declared}) {{ {op}({passed}) {{ __typename }} }}"
            variables = {k: v for k, v in line.items() if k != "op"}
            try:
                client.execute(documents[key], variables)
                accepted += 1
            except Unavailable:
                raise
            except OstrakonError as e:
                rejected.append(Rejected(number, e.code or "BAD_REQUEST", e.message))
            bar.update(read, total, f"{accepted} accepted, {len(rejected)} rejected")
    return Imported(accepted, rejected)


def _problem(line: Any, arguments: dict[str, dict[str, str]]) -> str | None:
    if not isinstance(line, dict):
        return "a line is a JSON object"
    op = line.get("op")
    if op == "replay":
        return "replay lines (an export's batches) are restored by `ostrakon import` on the data directory, not over HTTP"
    if op not in arguments:
        return f"unknown op {op!r}; one of {', '.join(sorted(arguments))}"
    if not isinstance(line.get("namespace"), str):
        return "namespace: a string is required"
    unknown = [k for k in line if k not in ("op", "namespace") and k not in arguments[op]]
    if unknown:
        return f"unknown field {unknown[0]!r} for op {op}"
    return None


# The mutations an import line may name: the server's `ops::OPS` (a test checks they agree).
OPS = (
    "recordEpisode", "assertFacts", "endFact", "retractFact", "definePredicate",
    "configureNamespace", "recall", "addIntention", "cancelIntention",
)

_TYPE = "kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } }"


def _mutation_arguments(client: "Client") -> dict[str, dict[str, str]]:
    """Each import op's arguments with their GraphQL types, from the server's schema."""
    data = client.execute(f"{{ __schema {{ mutationType {{ fields {{ name args {{ name type {{ {_TYPE} }} }} }} }} }} }}")
    found: dict[str, dict[str, str]] = {}
    for f in data["__schema"]["mutationType"]["fields"]:
        if f["name"] in OPS:
            found[f["name"]] = {a["name"]: _type_name(a["type"]) for a in f["args"]}
    return found


def _type_name(t: dict[str, Any]) -> str:
    if t["kind"] == "NON_NULL":
        return _type_name(t["ofType"]) + "!"
    if t["kind"] == "LIST":
        return "[" + _type_name(t["ofType"]) + "]"
    return t["name"]


def wait_indexed(client: "Client", namespaces: list[str] | None, *, progress: bool | None, timeout: float) -> None:
    names = namespaces if namespaces is not None else _all_namespaces(client)
    bar = Bar(progress, "index ")
    deadline = time.monotonic() + timeout
    query = "query Indexing($name: String!) { namespace(name: $name) { indexing { indexedSeq latestSeq embedded toEmbed done } } }"
    try:
        pending = list(names)
        while pending:
            states = {n: client.execute(query, {"name": n})["namespace"]["indexing"] for n in pending}
            pending = [n for n, s in states.items() if not s["done"]]
            done = sum(s["embedded"] for s in states.values())
            total = sum(s["toEmbed"] for s in states.values())
            if total:
                bar.update(done, total, f"{done}/{total} texts embedded")
            if not pending:
                break
            if time.monotonic() > deadline:
                raise Unavailable(f"search indexes not caught up after {timeout:.0f} s: {', '.join(pending[:5])}")
            time.sleep(0.1)
    finally:
        bar.close()


def _all_namespaces(client: "Client") -> list[str]:
    names: list[str] = []
    after = None
    while True:
        page = client.execute("query Namespaces($after: String) { namespaces(first: 1000, after: $after) }", {"after": after})["namespaces"]
        names.extend(page)
        if len(page) < 1000:
            return names
        after = page[-1]


def pages(method: Callable[..., Any], /, *args: Any, **kwargs: Any):
    """Iterates over every node of a paged list, following `pageInfo.endCursor`: `method`
    is a typed operation whose answer holds one connection (`pageInfo` and `nodes`), as
    `pages(memory.api.entities, namespace="ana", first=100)`."""
    after = kwargs.pop("after", None)
    while True:
        connection = _connection(method(*args, after=after, **kwargs))
        yield from connection.nodes
        if not connection.page_info.has_next_page:
            return
        after = connection.page_info.end_cursor


async def apages(method: Callable[..., Any], /, *args: Any, **kwargs: Any):
    """`pages` for the asyncio typed client (`async for e in apages(memory.api.entities, …)`)."""
    after = kwargs.pop("after", None)
    while True:
        connection = _connection(await method(*args, after=after, **kwargs))
        for node in connection.nodes:
            yield node
        if not connection.page_info.has_next_page:
            return
        after = connection.page_info.end_cursor


def _connection(answer: Any) -> Any:
    found = [v for v in vars(answer).values() if hasattr(v, "page_info") and hasattr(v, "nodes")]
    if len(found) != 1:
        raise TypeError("pages() needs an operation that answers one list with pageInfo and nodes")
    return found[0]
