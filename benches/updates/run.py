#!/usr/bin/env python3
"""Stale as current: does a memory give an old value as if it still held?

    python3 benches/updates/run.py [--binary PATH] [--cases FILE] [--verbose]

Each case of `cases.jsonl` (30: moves, new jobs, new numbers, corrections, reversed
preferences, ended memberships; English, Korean and Spanish) is a person who states a
value and later another one, among unrelated small talk, in a namespace of its own. The
script starts `ostrakon serve` on a fresh data directory, writes every case twice — once
with the facts an extractor would write beside the episodes (`facts`), once with the
episodes alone (`episodes`) — and asks each case's question about the present
("Where does Maya live?") through `context` (a 400-token block) and `search` (the top
five). It counts, per mode:

- **new in block**: the new value is in the block;
- **stale as current, block**: the old value shows as if it held — a fact line in force
  with it, or the old episode's line with no mark that it no longer holds, above the new
  episode's line or without it;
- **stale as current, search**: the same among the hits (the old episode, unmarked,
  ranked above the new one or without it);
- **old episode above the new one**: in the block, marked or not.

Facts written: a ONE predicate's new value from its day (a move, a job), a correction that
supersedes the wrong statement, a denial of what was liked, the end of a membership. With
episodes alone there is nothing that says which statement replaced which: only the
ranking (newer first) can keep an old value from reading as current. Run by hand (it
builds nothing: give the binary, default target/release/ostrakon).
"""

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# Unrelated small talk per language: (text, day offset from the old statement).
FILLER = {
    "en": ["The weather was lovely at the market today.", "I finished that mystery novel, what an ending.",
           "My sister sent photos from her trip.", "Made lasagne for dinner, it turned out great.",
           "Work was hectic, lots of meetings."],
    "ko": ["오늘 시장 날씨가 정말 좋았어.", "그 추리 소설 다 읽었어, 결말이 대단해.", "언니가 여행 사진을 보내줬어.",
           "저녁으로 라자냐를 만들었는데 맛있었어.", "회사가 정신없었어, 회의가 너무 많았어."],
    "es": ["Hoy hizo un tiempo precioso en el mercado.", "Terminé esa novela policiaca, qué final.",
           "Mi hermana me mandó fotos de su viaje.", "Hice lasaña para cenar, me salió genial.",
           "El trabajo fue una locura, muchas reuniones."],
}


def post(url, query, variables=None):
    body = json.dumps({"query": query, "variables": variables or {}}).encode()
    req = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        answer = json.load(r)
    if answer.get("errors"):
        raise RuntimeError(f"{answer['errors']} for {query[:80]}")
    return answer["data"]


def shift(at, days):
    t = time.strptime(at[:19], "%Y-%m-%dT%H:%M:%S")
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.mktime(t) - time.timezone + days * 86400))


RECORD = """mutation($ns: String!, $e: EpisodeInput!, $f: [FactInput!]!) {
  recordEpisode(namespace: $ns, episode: $e, facts: $f) { seq facts { id } } }"""


def write_case(url, ns, case, with_facts):
    who, old, new = case["subject"], case["old"], case["new"]
    kind = case["kind"]
    filler = FILLER[case["lang"]]
    if with_facts and kind in ("update", "correction"):
        post(url, f'mutation {{ definePredicate(namespace: "{ns}", name: "{case["predicate"]}", cardinality: ONE) {{ seq }} }}')
    # Small talk before, between and after: the old and new statements are not alone.
    span = max(2, round((time.mktime(time.strptime(new["at"][:10], "%Y-%m-%d"))
                         - time.mktime(time.strptime(old["at"][:10], "%Y-%m-%d"))) / 86400))
    for n, days in enumerate([-20, -5, span // 3, 2 * span // 3, span + 3]):
        text = f"{who}: {filler[n]}"
        post(url, RECORD, {"ns": ns, "e": {"text": text, "occurredAt": shift(old["at"], days), "thread": "chat"}, "f": []})

    def fact(value, valid_from, **extra):
        f = {"subject": {"name": who}, "predicate": case["predicate"], "object": {"string": value},
             "validFrom": valid_from}
        f.update(extra)
        return f

    old_facts = [fact(old["value"], old["at"])] if with_facts else []
    made = post(url, RECORD, {"ns": ns, "e": {"text": old["text"], "occurredAt": old["at"], "thread": "chat"},
                              "f": old_facts})
    old_id = made["recordEpisode"]["facts"][0]["id"] if with_facts else None
    new_facts = []
    if with_facts:
        if kind == "update":
            new_facts = [fact(new["value"], new["at"])]
        elif kind == "correction":
            new_facts = [fact(new["value"], old["at"], supersedes=old_id)]
        elif kind == "reversal":
            new_facts = [fact(old["value"], new["at"], polarity="NEGATED")]
    post(url, RECORD, {"ns": ns, "e": {"text": new["text"], "occurredAt": new["at"], "thread": "chat"},
                       "f": new_facts})
    if with_facts and kind == "ended":
        post(url, f'mutation {{ endFact(namespace: "{ns}", fact: "{old_id}", validTo: "{new["at"]}") {{ seq }} }}')


ASK = """query($ns: String!, $q: String!) {
  context(namespace: $ns, message: $q, budget: 400) { text }
  search(namespace: $ns, text: $q, limit: 5) {
    hits { kind fact { status object { string } } episode { text outdated { note } } } } }"""


def ask(url, ns, question):
    try:
        return post(url, ASK, {"ns": ns, "q": question})
    except RuntimeError as e:
        # A build from before episodes carried their marks: ask without them.
        if "outdated" not in str(e):
            raise
        answer = post(url, ASK.replace(" outdated { note }", ""), {"ns": ns, "q": question})
        for h in answer["search"]["hits"]:
            if h["episode"] is not None:
                h["episode"]["outdated"] = []
        return answer


def judge(case, answer):
    old, new = case["old"], case["new"]
    block = answer["context"]["text"]
    lines = block.splitlines()
    new_in_block = new["value"].lower() in block.lower()

    def place(text):
        return next((i for i, l in enumerate(lines) if text in l), None)

    old_at, new_at = place(old["text"]), place(new["text"])
    # A fact line in force that gives the old value (as a whole word: "4 de julio" is not
    # in "14 de julio").
    said = re.compile(r"(?<!\w)" + re.escape(old["value"]) + r"(?!\w)")
    section = ""
    stale_fact = False
    for line in lines:
        if not line.startswith("- "):
            section = line
        elif section.startswith("Facts in force") and said.search(line) and new["value"] not in line:
            stale_fact = True
    old_unmarked = old_at is not None and "no longer holds" not in lines[old_at]
    stale_block = stale_fact or (old_unmarked and (new_at is None or old_at < new_at))
    hits = [h["episode"] for h in answer["search"]["hits"] if h["kind"] == "EPISODE"]
    rank = lambda text: next((i for i, e in enumerate(hits) if e["text"] == text), None)
    o, n = rank(old["text"]), rank(new["text"])
    stale_search = o is not None and not hits[o]["outdated"] and (n is None or o < n)
    older_first = old_at is not None and (new_at is None or old_at < new_at)
    return new_in_block, stale_block, stale_search, older_first


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--binary", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")),
                                                    "release", "ostrakon"))
    p.add_argument("--cases", default=os.path.join(os.path.dirname(__file__), "cases.jsonl"))
    p.add_argument("--verbose", action="store_true", help="print each case's verdicts, and the blocks that fail")
    p.add_argument("--show", default="", help="print the blocks of these cases (comma-separated ids)")
    a = p.parse_args()
    cases = [json.loads(l) for l in open(a.cases, encoding="utf-8") if l.strip()]
    with tempfile.TemporaryDirectory() as data:
        port = free_port()
        server = subprocess.Popen([a.binary, "serve", "--data", data, "--listen", f"127.0.0.1:{port}"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}/graphql"
        try:
            for _ in range(600):
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
                    break
                except OSError:
                    time.sleep(0.1)
            results = {}
            for mode in ("facts", "episodes"):
                for c in cases:
                    write_case(url, f"{mode}-{c['id']}", c, mode == "facts")
                for c in cases:
                    answer = ask(url, f"{mode}-{c['id']}", c["question"])
                    r = results[(mode, c["id"])] = judge(c, answer)
                    if a.verbose:
                        print(f"{mode:8} {c['id']:18} new={r[0]!s:5} stale block={r[1]!s:5} search={r[2]}")
                    if c["id"] in a.show.split(",") or (a.verbose and r[1]):
                        print("  " + answer["context"]["text"].replace("\n", "\n  "))
        finally:
            server.terminate()
            server.wait()
    print("| mode | cases | new value in block | stale as current, block | stale as current, search | "
          "old episode above the new one, block |")
    print("|---|---|---|---|---|---|")
    for mode in ("facts", "episodes"):
        for lang in (None, "en", "ko", "es"):
            chosen = [c for c in cases if lang is None or c["lang"] == lang]
            r = [results[(mode, c["id"])] for c in chosen]
            pct = lambda i: 100.0 * sum(x[i] for x in r) / len(r)
            name = mode if lang is None else f"{mode}, {lang}"
            print(f"| {name} | {len(r)} | {pct(0):.0f} % | {pct(1):.0f} % | {pct(2):.0f} % | {pct(3):.0f} % |")
    stale = [(m, i) for (m, i), r in results.items() if r[1] or r[2]]
    if stale:
        print("\nstale as current:", ", ".join(f"{m}/{i}" for m, i in stale))


if __name__ == "__main__":
    main()
