"""The base of the generated typed client (`ostrakon.api.Api`): each generated method
builds its operation and runs it here, through an `ostrakon.Client` of either transport
(in-process or HTTP). Copied into the generated package by `python/codegen/generate.py`."""

from typing import Any, Optional

from ostrakon._client import Client


class TypedBase:
    """Runs the generated operations on `client` (`ostrakon.open(...)` or
    `ostrakon.connect(...)`); errors raise the `OstrakonError` subclass of their code."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def __enter__(self) -> "TypedBase":
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.close()

    def execute(
        self,
        query: str,
        operation_name: Optional[str] = None,
        variables: Optional[dict[str, Any]] = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        # The client turns the variables into JSON (datetimes, enums, input models).
        return self.client.execute(query, variables, operation_name=operation_name)

    def get_data(self, response: dict[str, Any]) -> dict[str, Any]:
        return response
