"""The Lyon/Berlin story through the official MCP Python SDK (`pip install mcp`), a client
Ostrakon's authors did not write: declare a one-valued predicate, assert, correct, ask as of
before and after; a correction of another slot and a wrong argument are refused with
errors that say why. Over stdio (`ostrakon mcp`) or streamable HTTP (`/mcp` of `ostrakon
serve`), where the session's close must not be reported as failed.

    python mcp_story.py stdio OSTRAKON_BINARY DATA_DIR
    python mcp_story.py http URL

Prints "ok" and exits 0, or fails with an assertion.
"""

import asyncio
import json
import logging
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

complaints = []


class Complaints(logging.Handler):
    """Every warning or error the SDK logs (a failed session close is one)."""

    def emit(self, record):
        if record.levelno >= logging.WARNING:
            complaints.append(f"{record.name}: {record.getMessage()}")


def failed(result):
    """Whether a tool result is an error (the SDK's field is `is_error`, `isError` before 2.0)."""
    return bool(getattr(result, "is_error", getattr(result, "isError", False)))


def body(result):
    structured = getattr(result, "structured_content", getattr(result, "structuredContent", None))
    if structured is not None:
        return structured
    return json.loads(result.content[0].text)


async def story(session):
    await session.initialize()
    tools = {t.name for t in (await session.list_tools()).tools}
    assert {"define_predicate", "remember", "facts_as_of"} <= tools, tools

    async def call(name, args):
        result = await session.call_tool(name, args)
        assert not failed(result), (name, body(result))
        return body(result)

    def cities(answer):
        return [n["object"]["entity"]["name"] for n in answer["nodes"]]

    ana = {"name": "Ana"}

    def lives(city, since, **more):
        return {"subject": ana, "predicate": "livesIn", "object": {"entity": {"name": city}},
                "validFrom": since, **more}

    await call("define_predicate", {"name": "livesIn", "cardinality": "ONE", "valueType": "ENTITY"})
    lyon = await call("remember", {"facts": [lives("Lyon", "2008")]})
    await call("remember", {"facts": [lives("Berlin", "2014")]})
    for year, city in [("2010-06-01", "Lyon"), ("2015-06-01", "Berlin")]:
        at = await call("facts_as_of", {"subject": ana, "predicate": "livesIn", "validAt": year})
        assert cities(at) == [city], (year, at)
    # A correction: it was Lille, not Lyon. As known before it, still Lyon.
    fix = await call("remember", {"facts": [lives("Lille", "2008", supersedes=lyon["facts"][0]["id"])]})
    now = await call("facts_as_of", {"subject": ana, "predicate": "livesIn", "validAt": "2010-06-01"})
    assert cities(now) == ["Lille"], now
    before = await call("facts_as_of", {"subject": ana, "predicate": "livesIn", "validAt": "2010-06-01",
                                        "knownAtSeq": fix["seq"] - 1})
    assert cities(before) == ["Lyon"], before
    # A correction of another slot is refused, and says which.
    job = await call("remember", {"facts": [{"subject": ana, "predicate": "worksAt",
                                             "object": {"entity": {"name": "Quillfeather"}}, "validFrom": "2015"}]})
    wrong = await session.call_tool("remember", {"facts": [lives("Munich", "2015", supersedes=job["facts"][0]["id"])]})
    assert failed(wrong) and body(wrong)["code"] == "SUPERSEDES_OTHER_SLOT", body(wrong)
    # A wrong argument is a tool result the model reads: isError, naming the tool and
    # the argument, with what the tool takes.
    missing = await session.call_tool("end_fact", {"validTo": "2020"})
    assert failed(missing) and body(missing)["code"] == "BAD_REQUEST", body(missing)
    assert "end_fact: missing argument `fact`" in body(missing)["message"], body(missing)


async def main():
    logging.getLogger().addHandler(Complaints())
    logging.getLogger().setLevel(logging.INFO)
    mode = sys.argv[1]
    if mode == "stdio":
        server = StdioServerParameters(
            command=sys.argv[2],
            args=["mcp", "--namespace", "py-stdio", "--data", sys.argv[3]],
            env={"OSTRAKON_EMBEDDER": "off", "OSTRAKON_LOG": "warn"},
        )
        async with stdio_client(server) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await story(session)
    else:
        async with streamable_http_client(sys.argv[2]) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await story(session)
    assert not complaints, complaints
    print("ok")


asyncio.run(main())
