"""The base of the generated asyncio client (`ostrakon.api_async.AsyncApi`): the same as
`TypedBase`, over an `ostrakon.AsyncClient`. Copied into the generated package by
`python/codegen/generate.py`."""

from typing import Any, Optional

from ostrakon._client import AsyncClient


class AsyncTypedBase:
    """Runs the generated operations on `client` (`ostrakon.open_async(...)` or
    `ostrakon.connect_async(...)`)."""

    def __init__(self, client: AsyncClient) -> None:
        self.client = client

    async def __aenter__(self) -> "AsyncTypedBase":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.client.close()

    async def execute(
        self,
        query: str,
        operation_name: Optional[str] = None,
        variables: Optional[dict[str, Any]] = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        # The client turns the variables into JSON (datetimes, enums, input models).
        return await self.client.execute(query, variables, operation_name=operation_name)

    def get_data(self, response: dict[str, Any]) -> dict[str, Any]:
        return response
