"""The `ostrakon mcp` command the wheel installs, as an MCP client's configuration runs it
(README: "In the framework you already use"): it answers `initialize` and lists its
tools within the documented size, over stdio, with no server running."""

from __future__ import annotations

import json
import subprocess

from conftest import ostrakon_command


def test_the_installed_command_serves_mcp_over_stdio(tmp_path):
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "remember", "arguments": {"text": "Ana moved to Porto", "role": "user"}}},
    ]
    process = subprocess.Popen(
        [*ostrakon_command(), "mcp", "--namespace", "me", "--data", str(tmp_path / "agent")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    answers = {}
    assert process.stdin and process.stdout
    for request in requests:
        process.stdin.write(json.dumps(request) + "\n")
        process.stdin.flush()
        if "id" in request:
            answer = json.loads(process.stdout.readline())
            answers[answer["id"]] = (answer, len(json.dumps(answer["result"], separators=(",", ":"))))
    process.stdin.close()
    assert process.wait(timeout=30) == 0, process.stderr.read()[-2000:]
    assert answers[1][0]["result"]["serverInfo"]["name"]
    tools, size = answers[2][0]["result"]["tools"], answers[2][1]
    assert len(tools) == 12 and size <= 16_000, (len(tools), size)
    recorded = answers[3][0]["result"]
    assert not recorded.get("isError"), recorded
    assert recorded["structuredContent"]["episode"]["id"], recorded
