"""Point read by id from Python: the store in-process (`ostrakon.open`) against the same
store behind `ostrakon serve` over HTTP (`ostrakon.connect`), raw `execute` and the typed
client. Prints the median and 99th percentile latency of each, and their ratios.

    pip install ostrakon            # or the wheel built from this checkout
    python benches/python/point_read.py [--reads 20000]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

import ostrakon

READ = 'query Read($id: ID!) { entity(namespace: "bench", id: $id) { id name facts { predicate object { integer } } } }'


def measure(label: str, read, ids: list[str], reads: int) -> float:
    for i in range(min(1000, reads)):  # warm up
        read(ids[i % len(ids)])
    samples = []
    for i in range(reads):
        start = time.perf_counter_ns()
        read(ids[i % len(ids)])
        samples.append(time.perf_counter_ns() - start)
    samples.sort()
    median = statistics.median(samples) / 1000
    p99 = samples[int(len(samples) * 0.99)] / 1000
    print(f"{label:<28} median {median:8.1f} µs   p99 {p99:8.1f} µs   {1e6 / median:9.0f} reads/s")
    return median


def serve(data: str) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = shutil.which("ostrakon", path=os.path.dirname(sys.executable)) or "ostrakon"
    process = subprocess.Popen([command, "serve", "--data", data, "--listen", f"127.0.0.1:{port}"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            urllib.request.urlopen(url + "/livez", timeout=1).close()
            return process, url
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("the server did not start")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reads", type=int, default=20000)
    parser.add_argument("--entities", type=int, default=1000)
    args = parser.parse_args()
    os.environ.setdefault("OSTRAKON_EMBEDDER", "off")
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "data")
        with ostrakon.open(data) as memory:
            facts = [{"subject": {"name": f"person {i}"}, "predicate": "age", "object": {"integer": i % 90}}
                     for i in range(args.entities)]
            memory.execute("mutation($f: [FactInput!]!) { assertFacts(namespace: \"bench\", facts: $f) { seq } }", {"f": facts})
            ids = [n.id for n in ostrakon.pages(memory.api.entities, namespace="bench", first=500)]
            print(f"{len(ids)} entities, {args.reads} reads each, one client, Python {sys.version.split()[0]}")
            local = measure("in-process execute", lambda i: memory.execute(READ, {"id": i}), ids, args.reads)
            api = memory.api
            measure("in-process typed (pydantic)", lambda i: api.entity(namespace="bench", id=i), ids, args.reads)
        process, url = serve(data)
        try:
            with ostrakon.connect(url) as remote:
                http = measure("HTTP execute", lambda i: remote.execute(READ, {"id": i}), ids, args.reads)
        finally:
            process.terminate()
            process.wait(timeout=30)
    print(f"HTTP ÷ in-process median: {http / local:.1f}×")


if __name__ == "__main__":
    main()
