"""One client, two transports: the store in this process, or a server over HTTP."""

from __future__ import annotations

import asyncio
import datetime
import enum
import json
import os
import http.client
import threading
import urllib.parse
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol

if TYPE_CHECKING:
    from .api import Api
    from .api_async import AsyncApi
    from ._jsonl import Imported

from ._scalars import serialize_datetime
from .errors import OstrakonError, Unavailable, from_errors


def json_variables(variables: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Variables as JSON values: aware datetimes and dates as ISO 8601 (a naive datetime
    is refused), enums by value, pydantic input models by their GraphQL names, and the
    arguments a typed method was not given left out."""
    if variables is None:
        return None
    return {k: _json_value(v) for k, v in variables.items() if not _unset(v)}


def _unset(value: Any) -> bool:
    return type(value).__name__ == "UnsetType"


def _json_value(value: Any) -> Any:
    if isinstance(value, (datetime.datetime, datetime.date)):
        return serialize_datetime(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Mapping):
        return {k: _json_value(v) for k, v in value.items() if not _unset(v)}
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    dump = getattr(value, "model_dump", None)  # a pydantic input model of the typed client
    if dump is not None:
        return _json_value(dump(by_alias=True, exclude_unset=True))
    return value


class Transport(Protocol):
    """Sends one GraphQL request and returns the response as JSON text."""

    def send(self, document: str, variables: Mapping[str, Any] | None, operation_name: str | None = None) -> str: ...

    def close(self) -> None: ...


class InProcess:
    """The store opened in this process by the extension: no server, no port. The GIL is
    released while the engine works."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        from . import _native  # the compiled engine, only needed in-process

        try:
            self._engine = _native.Engine(os.fspath(path))
        except OSError as e:
            # Another process holds the directory, or it cannot be read: say which.
            raise Unavailable(str(e)) from e

    def send(self, document: str, variables: Mapping[str, Any] | None, operation_name: str | None = None) -> str:
        text = json.dumps(dict(variables)) if variables else None
        return self._engine.execute(document, text, operation_name)

    def import_jsonl(self, path: str, progress: Callable[[int, int, int], None] | None) -> tuple[int, list]:
        return self._engine.import_jsonl(path, progress)

    def close(self) -> None:
        self._engine.close()


class Http:
    """A server's `/graphql` over HTTP, with an optional bearer token. Each thread keeps
    one connection open (HTTP/1.1 keep-alive) and opens it again if the server closed it."""

    def __init__(self, url: str, token: str | None = None, timeout: float = 30.0) -> None:
        base = url.rstrip("/")
        self.url = base if base.endswith("/graphql") else base + "/graphql"
        parts = urllib.parse.urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{url!r}: an http:// or https:// URL is expected")
        self._parts = parts
        self._path = parts.path or "/graphql"
        self.token = token
        self.timeout = timeout
        self._local = threading.local()
        self._opened: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def _connection(self) -> http.client.HTTPConnection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            kind = http.client.HTTPSConnection if self._parts.scheme == "https" else http.client.HTTPConnection
            connection = kind(self._parts.hostname, self._parts.port, timeout=self.timeout)
            self._local.connection = connection
            with self._lock:
                self._opened.append(connection)
        return connection

    def send(self, document: str, variables: Mapping[str, Any] | None, operation_name: str | None = None) -> str:
        payload: dict[str, Any] = {"query": document, "variables": dict(variables or {})}
        if operation_name:
            payload["operationName"] = operation_name
        body = json.dumps(payload).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        # A kept connection the server has since closed (it restarted, say) fails on first
        # use, before the server read the request: that one is sent once more on a new
        # connection. A fresh connection that fails is reported.
        for attempt in (0, 1):
            reused = getattr(self._local, "connection", None) is not None
            connection = self._connection()
            try:
                connection.request("POST", self._path, body, headers)
                response = connection.getresponse()
                status, text = response.status, response.read().decode("utf-8", errors="replace")
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as e:
                connection.close()
                self._local.connection = None
                if attempt == 1 or not reused:
                    raise Unavailable(f"cannot reach {self.url}: {e}") from e
            except OSError as e:
                connection.close()
                self._local.connection = None
                raise Unavailable(f"cannot reach {self.url}: {e}") from e
        if status >= 400:
            # GraphQL errors come with 4xx/5xx statuses too: their body says what went wrong.
            try:
                json.loads(text)
            except ValueError:
                raise Unavailable(f"{self.url} answered {status}: {text[:200]}") from None
        return text

    def close(self) -> None:
        with self._lock:
            opened, self._opened = self._opened, []
        for connection in opened:
            connection.close()


def _data(text: str) -> dict[str, Any]:
    response = json.loads(text)
    errors = response.get("errors")
    if errors:
        raise from_errors(errors)
    data = response.get("data")
    if data is None:
        raise OstrakonError("the response has neither data nor errors")
    return data


class Client:
    """Runs GraphQL operations against one store. Close it with `close()` or a `with`
    block; in-process, closing releases the data directory."""

    def __init__(self, transport: Transport) -> None:
        self._transport: Transport | None = transport

    def execute(
        self, document: str, variables: Mapping[str, Any] | None = None, operation_name: str | None = None
    ) -> dict[str, Any]:
        """Runs `document` (its operation `operation_name` when it holds several) and
        returns its `data`, or raises the `OstrakonError` subclass its first error's code
        names. Variables may hold aware datetimes and dates."""
        if self._transport is None:
            raise OstrakonError("the client is closed", code="BAD_REQUEST")
        return _data(self._transport.send(document, json_variables(variables), operation_name))

    @property
    def api(self) -> "Api":
        """The typed client: a method for each operation in `queries/`, taking and
        returning pydantic models (`memory.api.search(namespace="ana", text="…")`)."""
        from .api import Api

        return Api(self)

    def import_jsonl(
        self,
        path: str | os.PathLike[str],
        *,
        wait: bool = True,
        progress: bool | None = None,
        timeout: float = 3600.0,
    ) -> "Imported":
        """Imports a file in the import format (what `ostrakon import` reads, one batch
        per line; a refused line stores nothing and is reported). With `wait`, returns once
        every namespace's search indexes and embeddings hold what was imported. `progress`
        draws a bar on stderr (by default when stderr is a terminal)."""
        from ._jsonl import import_jsonl

        return import_jsonl(self, path, wait=wait, progress=progress, timeout=timeout)

    def wait_indexed(self, namespaces: list[str] | None = None, *, progress: bool | None = None, timeout: float = 3600.0) -> None:
        """Returns once the search indexes of `namespaces` (all when None) hold every
        batch written before the call; `Unavailable` after `timeout` seconds."""
        from ._jsonl import wait_indexed

        wait_indexed(self, namespaces, progress=progress, timeout=timeout)

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
            self._transport = None

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClient:
    """The same client for asyncio: each call runs in a worker thread (the engine releases
    the GIL, HTTP waits on the socket)."""

    def __init__(self, client: Client) -> None:
        self._client = client

    async def execute(
        self, document: str, variables: Mapping[str, Any] | None = None, operation_name: str | None = None
    ) -> dict[str, Any]:
        return await asyncio.to_thread(self._client.execute, document, variables, operation_name)

    @property
    def api(self) -> "AsyncApi":
        """The typed asyncio client: `await memory.api.search(namespace="ana", text="…")`."""
        from .api_async import AsyncApi

        return AsyncApi(self)

    async def import_jsonl(
        self, path: str | os.PathLike[str], *, wait: bool = True, progress: bool | None = None, timeout: float = 3600.0
    ) -> "Imported":
        """`Client.import_jsonl` in a worker thread."""
        return await asyncio.to_thread(self._client.import_jsonl, path, wait=wait, progress=progress, timeout=timeout)

    async def wait_indexed(
        self, namespaces: list[str] | None = None, *, progress: bool | None = None, timeout: float = 3600.0
    ) -> None:
        """`Client.wait_indexed` in a worker thread."""
        await asyncio.to_thread(self._client.wait_indexed, namespaces, progress=progress, timeout=timeout)

    async def close(self) -> None:
        await asyncio.to_thread(self._client.close)

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def open(path: str | os.PathLike[str]) -> Client:  # noqa: A001 - the package's verb
    """Opens the data directory at `path` in this process (created if absent)."""
    return Client(InProcess(path))


def connect(url: str, token: str | None = None, timeout: float = 30.0) -> Client:
    """A client of the Ostrakon server at `url` (its base or its `/graphql`)."""
    return Client(Http(url, token, timeout))


async def open_async(path: str | os.PathLike[str]) -> AsyncClient:
    """`open` for asyncio."""
    return AsyncClient(await asyncio.to_thread(open, path))


async def connect_async(url: str, token: str | None = None, timeout: float = 30.0) -> AsyncClient:
    """`connect` for asyncio."""
    return AsyncClient(connect(url, token, timeout))
