"""One client, two transports: the store in this process, or a server over HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import urllib.error
import urllib.request
from typing import Any, Mapping, Protocol

from .errors import OstrakonError, Unavailable, from_errors


class Transport(Protocol):
    """Sends one GraphQL request and returns the response as JSON text."""

    def send(self, document: str, variables: Mapping[str, Any] | None) -> str: ...

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

    def send(self, document: str, variables: Mapping[str, Any] | None) -> str:
        text = json.dumps(dict(variables)) if variables else None
        return self._engine.execute(document, text)

    def close(self) -> None:
        self._engine.close()


class Http:
    """A server's `/graphql` over HTTP, with an optional bearer token."""

    def __init__(self, url: str, token: str | None = None, timeout: float = 30.0) -> None:
        base = url.rstrip("/")
        self.url = base if base.endswith("/graphql") else base + "/graphql"
        self.token = token
        self.timeout = timeout

    def send(self, document: str, variables: Mapping[str, Any] | None) -> str:
        body = json.dumps({"query": document, "variables": dict(variables or {})}).encode()
        request = urllib.request.Request(self.url, data=body, method="POST")
        request.add_header("Content-Type", "application/json")
        request.add_header("Accept", "application/json")
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.read().decode()
        except urllib.error.HTTPError as e:
            # GraphQL errors come with 4xx/5xx statuses too: their body says what went wrong.
            text = e.read().decode(errors="replace")
            try:
                json.loads(text)
                return text
            except ValueError:
                raise Unavailable(f"{self.url} answered {e.code}: {text[:200]}") from e
        except (urllib.error.URLError, OSError) as e:
            raise Unavailable(f"cannot reach {self.url}: {e}") from e

    def close(self) -> None:
        pass


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

    def execute(self, document: str, variables: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Runs `document` and returns its `data`, or raises the `OstrakonError` subclass
        its first error's code names."""
        if self._transport is None:
            raise OstrakonError("the client is closed", code="BAD_REQUEST")
        return _data(self._transport.send(document, variables))

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

    async def execute(self, document: str, variables: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return await asyncio.to_thread(self._client.execute, document, variables)

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
