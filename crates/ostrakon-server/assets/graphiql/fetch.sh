#!/usr/bin/env bash
# Re-fetches GraphiQL and React from the npm registry at the pinned versions, checks
# every file against SHA256SUMS, and only then copies them here. With --update-sums it
# writes SHA256SUMS from what it fetched instead (after changing a version).
set -euo pipefail

GRAPHIQL=4.1.2    # the last release that ships a UMD build (graphiql.min.js)
REACT=18.3.1      # React 19 ships no UMD builds; GraphiQL 4 takes React 18 or 19

here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

unpack() { # package version -> $work/<package>/
    (cd "$work" && npm pack --silent "$1@$2" >/dev/null)
    mkdir -p "$work/$1"
    tar -xzf "$work/$1-$2.tgz" -C "$work/$1" --strip-components=1
}

unpack graphiql "$GRAPHIQL"
unpack react "$REACT"
unpack react-dom "$REACT"

out="$work/out"
mkdir "$out"
cp "$work/graphiql/graphiql.min.js" "$work/graphiql/graphiql.min.css" "$out/"
cp "$work/graphiql/LICENSE" "$out/LICENSE.graphiql"
cp "$work/react/umd/react.production.min.js" "$out/"
cp "$work/react/LICENSE" "$out/LICENSE.react"
cp "$work/react-dom/umd/react-dom.production.min.js" "$out/"
cp "$work/react-dom/LICENSE" "$out/LICENSE.react-dom"

if [[ "${1:-}" == "--update-sums" ]]; then
    (cd "$out" && sha256sum -- *) >"$here/SHA256SUMS"
    echo "wrote $here/SHA256SUMS"
else
    (cd "$out" && sha256sum --check --strict --quiet "$here/SHA256SUMS")
    # Every fetched file is listed, and nothing else is.
    diff <(cd "$out" && ls | sort) <(awk '{print $2}' "$here/SHA256SUMS" | sort)
fi
cp "$out"/* "$here/"
echo "graphiql $GRAPHIQL, react $REACT, react-dom $REACT: $(ls "$out" | wc -l) files in $here"
