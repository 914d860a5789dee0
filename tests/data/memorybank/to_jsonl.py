#!/usr/bin/env python3
"""Convert the MemoryBank evaluation histories into Ostrakon's JSONL import format.

Reads  memory_bank_en.json   (next to this script)
Writes memorybank.jsonl      (next to this script)

Mapping:
  - one namespace per user: "mb-" + the trimmed user name, lowercased, with every
    character outside [a-z0-9_.-] replaced by "-" ("Emily" -> "mb-emily",
    "John Zhang" -> "mb-john-zhang");
  - one recordEpisode line per query/response pair, days in sorted order, pairs in
    file order within a day:
      text       "User: <query>\\nAssistant: <response>"
      occurredAt the day ("2023-04-27")
      thread     the day
      externalId "<day>#<1-based index of the pair within that day>"
  - pairs whose query and response are both empty are skipped (the index still
    counts them, so external ids stay tied to positions in the source file).

Standard library only. Usage: python3 to_jsonl.py
"""

import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "memory_bank_en.json")
DST = os.path.join(HERE, "memorybank.jsonl")


def namespace(user):
    return "mb-" + re.sub(r"[^a-z0-9_.-]", "-", user.strip().lower())


def main():
    with open(SRC, encoding="utf-8") as f:
        data = json.load(f)

    lines = []
    counts = {}
    skipped = 0
    for user, record in data.items():
        ns = namespace(user)
        if ns in counts:
            sys.exit(f"duplicate namespace {ns}")
        counts[ns] = 0
        history = record.get("history", {})
        for day in sorted(history):
            for i, pair in enumerate(history[day], start=1):
                query = pair.get("query") or ""
                response = pair.get("response") or ""
                if not query.strip() and not response.strip():
                    skipped += 1
                    continue
                episode = {
                    "text": f"User: {query}\nAssistant: {response}",
                    "occurredAt": day,
                    "thread": day,
                    "externalId": f"{day}#{i}",
                }
                lines.append(
                    json.dumps(
                        {"namespace": ns, "op": "recordEpisode", "episode": episode},
                        ensure_ascii=False,
                        separators=(",", ":"),
                    )
                )
                counts[ns] += 1

    with open(DST, "w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            f.write(line + "\n")

    for ns, n in counts.items():
        print(f"{ns}\t{n}")
    print(f"total\t{len(lines)}")
    print(f"skipped (empty query and response)\t{skipped}")


if __name__ == "__main__":
    main()
