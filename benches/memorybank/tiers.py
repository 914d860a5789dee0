#!/usr/bin/env python3
"""Context in tiers on MemoryBank: the share of questions whose evidence episode is in a
context block of a given budget (400 tokens by default), before and after each user's
stated preferences are placed in CORE.

A stated preference is found by one general rule on the user's own words in an episode
(I like / love / enjoy / prefer / hate, my favourite, I'm allergic…), never from the
questions or their evidence. Episodes are placed in the order they were recorded until
CORE's caps refuse one (LIMIT_EXCEEDED: 50 records, 1,000 tokens by default).

    python3 benches/memorybank/tiers.py [--ostrakon target/release/ostrakon] [--budget 400]
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EPISODES = os.path.join(ROOT, "tests/data/memorybank/memorybank.jsonl")
GOLD = os.path.join(ROOT, "tests/memorybank_gold.jsonl")
PREFERENCE = re.compile(
    r"\bI (?:really |also |just |do )?(?:like|love|enjoy|prefer|adore|hate|dislike|can't stand)\b"
    r"|\bmy (?:favou?rite|hobby|hobbies)\b|\bI(?:'m| am) (?:allergic|vegetarian|vegan|a fan of|into)\b",
    re.IGNORECASE,
)


def preferences():
    """(namespace, episode id, external id) of each episode whose user words state one."""
    found, counts = [], {}
    for line in open(EPISODES):
        op = json.loads(line)
        ns = op["namespace"]
        counts[ns] = counts.get(ns, 0) + 1
        text = op["episode"]["text"]
        user = text.split("\nAssistant:")[0]
        if PREFERENCE.search(user):
            found.append((ns, counts[ns], op["episode"]["externalId"]))
    return found


def evaluate(ostrakon, data, budget, env, tag=None):
    only = ["--filter", tag] if tag else []
    out = subprocess.run(
        [ostrakon, "eval", GOLD, "--data", data, "--context", str(budget)] + only,
        capture_output=True, text=True, env=env, check=True,
    ).stdout
    line = [l for l in out.splitlines() if l.startswith("evidence in a")][0]
    return line


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ostrakon", default=os.path.join(ROOT, "target/release/ostrakon"))
    ap.add_argument("--budget", type=int, default=400)
    args = ap.parse_args()
    env = dict(os.environ, OSTRAKON_LOG="warn")
    work = tempfile.mkdtemp()
    try:
        data = os.path.join(work, "data")
        subprocess.run([args.ostrakon, "import", EPISODES, "--data", data], capture_output=True, env=env, check=True)
        # Embeddings are derived: a cache shared between runs spares embedding them again.
        cache = os.path.expanduser("~/.cache/ostrakon/mb-embeddings")
        os.makedirs(cache, exist_ok=True)
        os.symlink(cache, os.path.join(data, "embeddings"))
        before = [evaluate(args.ostrakon, data, args.budget, env, tag) for tag in (None, "preference")]
        placed, refused = 0, 0
        full = set()
        for ns, episode, ext in preferences():
            if ns in full:
                refused += 1
                continue
            doc = (f'mutation {{ placeMemory(namespace: "{ns}", episode: "{episode}", tier: CORE, '
                   f'reason: "stated preference ({ext})") {{ basis {{ seq }} }} }}')
            out = subprocess.run([args.ostrakon, "query", doc, "--data", data], capture_output=True, text=True, env=env)
            answer = json.loads(out.stdout)
            if answer.get("errors"):
                assert answer["errors"][0]["extensions"]["code"] == "LIMIT_EXCEEDED", answer
                full.add(ns)
                refused += 1
            else:
                placed += 1
        after = [evaluate(args.ostrakon, data, args.budget, env, tag) for tag in (None, "preference")]
        print(f"stated preferences found: {placed + refused}; placed in CORE: {placed}; refused by CORE's caps: {refused}")
        for what, b, a in zip(("all questions", "questions tagged preference"), before, after):
            print(f"{what}: before tiers: {b}")
            print(f"{what}: after tiers:  {a}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
