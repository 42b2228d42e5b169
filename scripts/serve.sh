#!/usr/bin/env bash
# ./build.sh serve [PORT] — build every target, then serve static/ (the
# playground at /, the library at /floe.mjs) on http://127.0.0.1:PORT/
# (default 8080). Loopback only; the page loads nothing from the network.
set -euo pipefail
cd "$(dirname "$0")/.."
port=${1:-8080}
case "$port" in
  ''|*[!0-9]*) echo "serve: PORT must be a number, got '$port'" >&2; exit 2 ;;
esac
stamp=$(mktemp)
trap 'rm -f "$stamp"' EXIT
if ! ./build.sh build; then
  # build.sh also enforces size budgets: serve what it built, if it built it now.
  for f in static/floe.wasm static/playground.wasm static/wasm_exec.js; do
    [ "$f" -nt "$stamp" ] || { echo "serve: the build failed before writing $f" >&2; exit 1; }
  done
  echo "serve: ./build.sh build reported a failure (above); serving the files it wrote" >&2
fi
mkdir -p build
go build -trimpath -o build/floe-serve ./cmd/floe-serve
rm -f "$stamp"
exec build/floe-serve -addr "127.0.0.1:$port" -dir static
