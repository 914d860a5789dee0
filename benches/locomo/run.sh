#!/usr/bin/env bash
# Recall on LoCoMo conversations: converts them, imports them into a fresh data directory
# and runs `ostrakon eval` over their questions, printing recall@1/5/10, hit@k, the share of
# questions with all their evidence in the top 10, and MRR, overall and per category.
#
#   benches/locomo/run.sh [--observations] [LOCOMO.json] [-- extra ostrakon eval flags]
#
# --observations also imports the dataset's own per-session observations as extracted
# facts citing their turns (see convert.py): an upper bound of what an extractor of that
# quality adds, through the graph list.
#
# LOCOMO.json defaults to ../shared/data/locomo-dev/locomo-dev.json. Uses the release
# binary (built if need be). Embeddings are cached in the user's cache across runs
# (OSTRAKON_EVAL_CACHE, default ~/.cache/ostrakon/locomo-embeddings), so only the first run
# embeds (~5 minutes for the five dev conversations on one core).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
data=$root/../shared/data/locomo-dev/locomo-dev.json
observations=
if [ "${1:-}" = "--observations" ]; then observations=--observations; shift; fi
if [ $# -gt 0 ] && [ "$1" != "--" ]; then data=${1:-$data}; shift; fi
[ "${1:-}" = "--" ] && shift
target=${CARGO_TARGET_DIR:-$root/target}
cargo build --release --manifest-path "$root/Cargo.toml" --quiet
bin=$target/release/ostrakon
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$root/benches/locomo/convert.py" "$data" "$work/in" $observations
cache=${OSTRAKON_EVAL_CACHE:-$HOME/.cache/ostrakon/locomo-embeddings}
mkdir -p "$cache"
"$bin" import "$work/in/episodes.jsonl" --data "$work/data" 2>/dev/null | tail -1
if [ -n "$observations" ]; then
  "$bin" import "$work/in/observations.jsonl" --data "$work/data" 2>/dev/null | tail -1
fi
ln -s "$cache" "$work/data/embeddings"
"$bin" eval "$work/in/questions.jsonl" --data "$work/data" "$@" 2> >(grep -v ' INFO ' >&2)
