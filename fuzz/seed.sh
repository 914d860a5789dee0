#!/bin/sh
# The first corpus of each target, from the project's own inputs.
set -eu
cd "$(dirname "$0")"
mkdir -p corpus/log_frames corpus/checkpoint corpus/graphql_parse corpus/sparql_parse
for f in ../tests/data/formats/log1/logs/*.log; do
    # The frames without the file header (the decoder reads frames; version 1's is 16 bytes).
    tail -c +17 "$f" > "corpus/log_frames/$(basename "$f")"
done
cp ../tests/data/formats/*/checkpoints/*.ckpt corpus/checkpoint/ 2>/dev/null || true
cp ../tests/data/checkpoint-v8.ckpt corpus/checkpoint/
cp ../queries/*.graphql corpus/graphql_parse/
grep -ho 'SELECT[^"]*' ../tests/clients/*.py | head -20 | while read -r q; do
    printf '%s\n' "$q" > "corpus/sparql_parse/$(printf '%s' "$q" | cksum | cut -d' ' -f1).rq"
done
echo "seeded: $(ls corpus/*/ | wc -l) files"
