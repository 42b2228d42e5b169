#!/usr/bin/env bash
# scripts/test-browser.sh [NODE_TEST_OPTION...] [TEST_FILE...] — headless Chromium tests
# (tests/browser): floe.mjs in a page and in a module Worker, the playground,
# the MV3 extension example, and the npm package in a fresh Vite app.
#
# Installs Debian's chromium when /usr/bin/chromium is missing, installs the
# pinned playwright-core (npm ci; never `playwright install`), builds when a
# WebAssembly target is missing or older than the Go sources, then serves the
# repository root with floe-serve on 127.0.0.1:$FLOE_TEST_PORT (default 8790;
# fixed, because the port is part of the origin IndexedDB data belongs to).
# Screenshots go to a fresh temporary directory, printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PORT=${FLOE_TEST_PORT:-8790}

if [ ! -x /usr/bin/chromium ] && [ -z "${FLOE_CHROMIUM:-}" ]; then
  echo "== installing chromium (Debian)"
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y chromium
fi

echo "== npm ci (tests/browser)"
(cd tests/browser && npm ci --no-audit --no-fund --loglevel=error)

stale=""
for f in static/floe.wasm static/playground.wasm static/wasm_exec.js; do
  if [ ! -f "$f" ]; then stale="$f is missing"; break; fi
  newer=$(find . -path ./node_modules -prune -o -path '*/node_modules' -prune -o \
    \( \( -name '*.go' ! -name '*_test.go' \) -o -name go.mod -o -name go.sum \) -newer "$f" -print -quit)
  if [ -n "$newer" ]; then stale="$newer is newer than $f"; break; fi
done
if [ -n "$stale" ]; then
  echo "== build ($stale)"
  stamp=$(mktemp)
  if ! ./build.sh build; then
    # build.sh also enforces size budgets: test what it built, if it built it now.
    for f in static/floe.wasm static/playground.wasm static/wasm_exec.js; do
      [ "$f" -nt "$stamp" ] || { rm -f "$stamp"; echo "test-browser: the build failed before writing $f" >&2; exit 1; }
    done
    echo "test-browser: ./build.sh build reported a failure (above); testing the files it wrote" >&2
  fi
  rm -f "$stamp"
fi

mkdir -p build
go build -trimpath -o build/floe-serve ./cmd/floe-serve
coproc SERVE { exec build/floe-serve -addr "127.0.0.1:$PORT" -dir . 2>&1; }
trap 'kill "$SERVE_PID" 2>/dev/null || true' EXIT
if ! read -r -t 30 -u "${SERVE[0]}" line || [[ "$line" != "floe-serve: serving"* ]]; then
  echo "test-browser: floe-serve did not start on 127.0.0.1:$PORT: ${line:-no output} (set FLOE_TEST_PORT to use another port)" >&2
  exit 1
fi
echo "== $line"

shots=$(mktemp -d "${TMPDIR:-/tmp}/floe-screenshots.XXXXXX")
export FLOE_BASE_URL="http://127.0.0.1:$PORT" FLOE_SERVE="$ROOT/build/floe-serve" FLOE_SCREENSHOT_DIR="$shots"
cd tests/browser
if [ $# -eq 0 ]; then set -- *.test.mjs; fi
# A file named from the repository root (tests/browser/x.test.mjs) is x.test.mjs here.
args=()
for a in "$@"; do args+=("${a#tests/browser/}"); done
set -- "${args[@]}"
status=0
node --test --import "$ROOT/tests/exit-guard.mjs" --test-concurrency=1 --test-reporter=spec "$@" || status=$?
# The folder is named when a failing test left a screenshot in it, and
# removed when it is empty.
if rmdir "$shots" 2>/dev/null; then :; else echo "== screenshots: $shots"; fi
exit $status
