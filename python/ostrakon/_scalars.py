"""The GraphQL `DateTime` scalar in Python: an aware `datetime`, out and in.

A typed method's time argument may also be a `date` or a string the server reads
(`"2015"`, `"2015-06"`: the namespace's time zone places it). In the pydantic input models
a time is an aware `datetime` or full ISO 8601 text with an offset: anything else is
refused when the model is built (pydantic alone would read `"2015"` as 2015 seconds after
1970)."""

from __future__ import annotations

import datetime as _dt
from typing import Annotated, Any

from pydantic import BeforeValidator


def parse_datetime(value: Any) -> _dt.datetime:
    """The server's `2015-06-01T00:00:00.000000Z` as an aware `datetime` (UTC)."""
    if isinstance(value, _dt.datetime):
        return value
    text = str(value)
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"  # Python 3.10's fromisoformat does not read `Z`
    parsed = _dt.datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        raise ValueError(f"{value!r} has no offset")
    return parsed


def serialize_datetime(value: Any) -> Any:
    """What the server is sent for a `DateTime`: ISO 8601 text. A naive `datetime` is
    refused: which zone it means is a guess (give it a `tzinfo`, or pass a string, which
    the namespace's time zone places)."""
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(
                f"{value!r} is a naive datetime: give it a tzinfo (datetime.timezone.utc, say), "
                "or pass a string, which the namespace's time zone places"
            )
        return value.isoformat()
    if isinstance(value, _dt.date):
        return value.isoformat()
    return value


def _aware(value: Any) -> Any:
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError("a naive datetime: give it a tzinfo (datetime.timezone.utc, say)")
        return value
    if isinstance(value, str):
        try:
            return parse_datetime(value)
        except ValueError:
            raise ValueError(
                f"{value!r}: a time here is an aware datetime or ISO 8601 text with an offset "
                "(partial dates such as '2015' are read by the server in execute())"
            ) from None
    raise ValueError(f"{value!r} is not an aware datetime")


DateTime = Annotated[_dt.datetime, BeforeValidator(_aware)]
"""An aware `datetime`, checked as such when a model is built."""
