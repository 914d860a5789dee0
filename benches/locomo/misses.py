#!/usr/bin/env python3
"""Where the evidence that `ostrakon eval` missed stands, per category.

    ostrakon eval QUESTIONS --data DIR --k 200 --dump ranked.jsonl
    python3 benches/locomo/misses.py ranked.jsonl [--cut 10] [--near 50]

For every evidence turn outside the top CUT of its question, the dump (`--k 200`) says
whether the search found it at all within its 200 best and, if so, its rank in each list
that found it. A miss is then one of:

- near: some list ranks it within NEAR: a better fusion or weighting of the same lists
  could lift it;
- far: found, but no list ranks it within NEAR: the lists themselves would have to change;
- unfound: not among the 200 best at all: no list ranks it high enough to be fused in.

The last two are what a cue-based retriever (words, embeddings, days, speakers,
neighbours) does not reach; the table says how much of each category that is.
"""
import argparse
import collections
import json


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dump")
    p.add_argument("--cut", type=int, default=10)
    p.add_argument("--near", type=int, default=50)
    a = p.parse_args()
    rows = [json.loads(line) for line in open(a.dump) if line.strip()]
    counts = collections.defaultdict(collections.Counter)
    for row in rows:
        found = {e["id"]: e for e in row.get("evidence", [])}
        for tag in row["tags"] or ["-"]:
            for gold in row["gold"]:
                c = counts[tag]
                c["evidence"] += 1
                e = found.get(gold)
                if e is not None and e["rank"] <= a.cut:
                    c["hit"] += 1
                elif e is None:
                    c["unfound"] += 1
                elif min(e["lists"].values(), default=10**9) <= a.near:
                    c["near"] += 1
                else:
                    c["far"] += 1
    print(f"{'category':<14} {'evidence':>8} {'in top ' + str(a.cut):>10} {'near':>6} {'far':>6} {'unfound':>8}")
    for tag in sorted(counts):
        c = counts[tag]
        n = c["evidence"]
        share = lambda k: f"{c[k] / n:.3f}" if n else "-"
        print(f"{tag:<14} {n:>8} {share('hit'):>10} {share('near'):>6} {share('far'):>6} {share('unfound'):>8}")


if __name__ == "__main__":
    main()
