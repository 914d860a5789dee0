#!/usr/bin/env python3
"""Leave one conversation out: is a temporal rule general, or fitted to the conversations
it was tuned on?

    python3 benches/locomo/loo.py [LOCOMO.json] [--metric temporal] [--rules temporal|segment]

Imports the conversations once (as run.sh does), runs `ostrakon eval` once per rule set
(the temporal lists and boost switched off one by one, and other boost values), and
then, for each conversation, picks the rule set that does best on the *other* ones and
reports how it does on the one left out — beside the defaults and beside no temporal
rules at all. A rule that only helps the conversations it was chosen on shows up as a
held-out recall below the defaults'. Prints a Markdown table (recall@10 of the category,
per conversation).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# name -> extra `ostrakon eval` flags. The first is the defaults, the second what the
# defaults are compared with.
TEMPORAL = [
    ("defaults", []),
    ("no temporal rules", ["--without", "time,vector-in-time,when"]),
    ("without the time boost", ["--without", "when"]),
    ("without the time list", ["--without", "time"]),
    ("without vector-in-time", ["--without", "vector-in-time"]),
    ("boost only", ["--without", "time,vector-in-time"]),
    ("time boost 0.1", ["--time-boost", "0.1"]),
    ("time boost 0.4", ["--time-boost", "0.4"]),
]
# The segment list (the other turns of the best turns' topical segments), on or off.
SEGMENT = [
    ("defaults", []),
    ("no segment list", ["--without", "segment"]),
]
RULE_SETS = {"temporal": TEMPORAL, "segment": SEGMENT}
CUT = 10


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def prepare(locomo, work):
    """Converts and imports; returns the binary and the data directory."""
    run(["cargo", "build", "--release", "--quiet", "--manifest-path", os.path.join(ROOT, "Cargo.toml")])
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    binary = os.path.join(target, "release", "ostrakon")
    run([sys.executable, os.path.join(ROOT, "benches", "locomo", "convert.py"), locomo, os.path.join(work, "in")])
    data = os.path.join(work, "data")
    run([binary, "import", os.path.join(work, "in", "episodes.jsonl"), "--data", data], stdout=subprocess.DEVNULL)
    cache = os.environ.get("OSTRAKON_EVAL_CACHE", os.path.expanduser("~/.cache/ostrakon/locomo-embeddings"))
    os.makedirs(cache, exist_ok=True)
    os.symlink(cache, os.path.join(data, "embeddings"))
    return binary, data


def recalls(binary, data, questions, flags, dump):
    """Per (conversation, category): [sum of recall@CUT, questions]."""
    run([binary, "eval", questions, "--data", data, "--dump", dump, *flags],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = {}
    with open(dump) as f:
        for line in f:
            row = json.loads(line)
            found = sum(1 for r in row["ranks"] if r <= CUT) / max(1, len(row["gold"]))
            for tag in row["tags"] + ["all"]:
                cell = out.setdefault((row["namespace"], tag), [0.0, 0])
                cell[0] += found
                cell[1] += 1
    return out


def score(table, conversations, category):
    total = sum(table.get((c, category), [0, 0])[0] for c in conversations)
    n = sum(table.get((c, category), [0, 0])[1] for c in conversations)
    return total / n if n else 0.0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("locomo", nargs="?", default=os.path.join(ROOT, "..", "shared", "data", "locomo-dev", "locomo-dev.json"))
    p.add_argument("--metric", default="temporal", help="the category rules are chosen by (default temporal)")
    p.add_argument("--rules", default="temporal", choices=sorted(RULE_SETS), help="which rules (default temporal)")
    a = p.parse_args()
    rules = RULE_SETS[a.rules]
    other = rules[1][0]
    with tempfile.TemporaryDirectory() as work:
        binary, data = prepare(a.locomo, work)
        questions = os.path.join(work, "in", "questions.jsonl")
        tables = {}
        for name, flags in rules:
            tables[name] = recalls(binary, data, questions, flags, os.path.join(work, "dump.jsonl"))
            print(f"ran {name}", file=sys.stderr)
    conversations = sorted({c for c, _ in tables["defaults"]})
    cat = a.metric
    print(f"| conversation | {cat} questions | defaults | {other} | chosen on the other {len(conversations) - 1} | held-out recall@{CUT} |")
    print("|---|---|---|---|---|---|")
    held_total = held_n = 0.0
    for c in conversations:
        others = [o for o in conversations if o != c]
        # Ties go to the earlier rule set (the defaults first).
        chosen = max(rules, key=lambda r: (round(score(tables[r[0]], others, cat), 6), -rules.index(r)))[0]
        held = score(tables[chosen], [c], cat)
        n = tables["defaults"].get((c, cat), [0, 0])[1]
        held_total += held * n
        held_n += n
        print(f"| {c} | {n} | {score(tables['defaults'], [c], cat):.3f} | "
              f"{score(tables[other], [c], cat):.3f} | {chosen} | {held:.3f} |")
    print(f"| all | {int(held_n)} | {score(tables['defaults'], conversations, cat):.3f} | "
          f"{score(tables[other], conversations, cat):.3f} | | {held_total / max(1, held_n):.3f} |")
    print()
    print(f"Each rule set, {cat} recall@{CUT} per conversation (and all categories, all conversations):")
    print()
    print("| rule set | " + " | ".join(conversations) + f" | {cat} | all categories |")
    print("|---|" + "---|" * (len(conversations) + 2))
    for name, _ in rules:
        t = tables[name]
        cells = " | ".join(f"{score(t, [c], cat):.3f}" for c in conversations)
        print(f"| {name} | {cells} | {score(t, conversations, cat):.3f} | {score(t, conversations, 'all'):.3f} |")


if __name__ == "__main__":
    main()
