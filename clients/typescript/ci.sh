#!/usr/bin/env bash
# The TypeScript client's checks (clients/typescript), as CI runs them: an install from
# the lockfile, the generated code against a fresh codegen run, then the build and the
# tests against the server binary OSTRAKON_BIN names. From .ci/run, after the Rust build:
#   OSTRAKON_BIN="$CARGO_TARGET_DIR/debug/ostrakon" bash clients/typescript/ci.sh
set -euo pipefail
cd "$(dirname "$0")"
: "${OSTRAKON_BIN:?OSTRAKON_BIN must name the ostrakon binary (\$CARGO_TARGET_DIR/debug/ostrakon)}"
export OSTRAKON_BIN
npm ci --no-audit --no-fund
npm run codegen:check
OSTRAKON_NODE_TEST=required npm test
