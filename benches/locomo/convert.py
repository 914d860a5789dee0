#!/usr/bin/env python3
"""Turns LoCoMo conversations into an Ostrakon import file and a `ostrakon eval` question file.

    python3 benches/locomo/convert.py LOCOMO.json OUT_DIR [--observations]

LOCOMO.json is a JSON array of LoCoMo samples (`snap-research/LoCoMo`, `data/locomo10.json`,
or a subset of it such as `locomo-dev.json`). Writes:

- OUT_DIR/episodes.jsonl: one namespace per conversation (`locomo-<sample_id>`), one
  `recordEpisode` per turn: text "Speaker: words", occurredAt the session's time,
  externalId the turn's dia_id, thread the session. Nothing else is declared.
- OUT_DIR/observations.jsonl, with --observations: the dataset's per-session
  observations (sentences a language model extracted about each speaker, citing the
  turns they come from) as extracted facts, an `assertFacts` batch per session: subject
  the speaker, predicate `noted`, the sentence as object, valid from the session's time,
  confidence 0.8 (below a client's), provenance the cited turns. Imported after the
  episodes, they measure what an extractor of that quality would add to recall.
- OUT_DIR/questions.jsonl: one line per question with evidence turns, asked one day after
  the conversation's last session, tagged with its category.
"""

import json
import re
import sys
from datetime import datetime, timedelta
from pathlib import Path

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def session_time(text):
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")


def write_observations(out, ns, sample, turns):
    """Writes a sample's observations as `assertFacts` lines; returns how many."""
    conv = sample["conversation"]
    written = 0
    # Many values per speaker, embedded like the turns (facts are embedded where declared).
    define = {"namespace": ns, "op": "definePredicate", "name": "noted", "cardinality": "MANY",
              "valueType": "STRING", "embed": True,
              "description": "a sentence extracted from a session about a speaker"}
    out.write(json.dumps(define) + "\n")
    for key, by_speaker in sorted(sample.get("observation", {}).items()):
        m = re.fullmatch(r"session_(\d+)_observation", key)
        when_text = conv.get(f"session_{m.group(1)}_date_time") if m else None
        if not when_text:
            continue
        when = session_time(when_text).strftime("%Y-%m-%dT%H:%M:%SZ")
        facts = []
        for speaker, items in sorted(by_speaker.items()):
            for text, cites in items:
                cites = [cites] if isinstance(cites, str) else cites
                ids = [p for c in cites for p in re.split(r"[;,\s]+", c) if p in turns]
                if not ids:
                    continue
                facts.append({
                    "subject": {"name": speaker},
                    "predicate": "noted",
                    "object": {"string": text},
                    "validFrom": when,
                    "confidence": 0.8,
                    "provenanceExternalIds": ids,
                })
        if facts:
            line = {"namespace": ns, "op": "assertFacts", "facts": facts}
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
            written += len(facts)
    return written


def main():
    args = [a for a in sys.argv[1:] if a != "--observations"]
    if len(args) != 2:
        sys.exit(__doc__)
    observations = "--observations" in sys.argv[1:]
    samples = json.load(open(args[0], encoding="utf-8"))
    out = Path(args[1])
    out.mkdir(parents=True, exist_ok=True)
    episodes = questions = noted = 0
    with open(out / "episodes.jsonl", "w", encoding="utf-8") as ep, open(
        out / "questions.jsonl", "w", encoding="utf-8"
    ) as qs, open(out / "observations.jsonl", "w", encoding="utf-8") as ob:
        for sample in samples:
            ns = "locomo-" + re.sub(r"[^A-Za-z0-9_-]", "-", str(sample["sample_id"]))
            conv = sample["conversation"]
            sessions = sorted(
                (int(m.group(1)), k)
                for k in conv
                if (m := re.fullmatch(r"session_(\d+)", k)) and isinstance(conv[k], list)
            )
            turns = set()
            last = None
            for n, key in sessions:
                when = session_time(conv[f"{key}_date_time"])
                last = max(last, when) if last else when
                for turn in conv[key]:
                    turns.add(turn["dia_id"])
                    line = {
                        "namespace": ns,
                        "op": "recordEpisode",
                        "episode": {
                            "text": f"{turn['speaker']}: {turn['text']}",
                            "occurredAt": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
                            "thread": f"session {n}",
                            "externalId": turn["dia_id"],
                        },
                    }
                    ep.write(json.dumps(line, ensure_ascii=False) + "\n")
                    episodes += 1
            if observations:
                noted += write_observations(ob, ns, sample, turns)
            at = (last + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
            for q in sample["qa"]:
                # A few evidence strings hold several ids ("D8:6; D9:17"); ids naming no
                # turn are dropped.
                gold = []
                for e in q.get("evidence", []):
                    for part in re.split(r"[;,\s]+", e):
                        if part in turns and part not in gold:
                            gold.append(part)
                if not gold:
                    continue
                line = {
                    "namespace": ns,
                    "question": q["question"],
                    "gold": gold,
                    "at": at,
                    "tags": [CATEGORIES.get(q.get("category"), "other")],
                }
                if "answer" in q:
                    line["answer"] = q["answer"]
                qs.write(json.dumps(line, ensure_ascii=False) + "\n")
                questions += 1
    extra = f", {noted} observations" if observations else ""
    print(f"{episodes} episodes, {questions} questions{extra} in {out}")


if __name__ == "__main__":
    main()
