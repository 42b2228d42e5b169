#!/usr/bin/env bash
# scripts/test-webkit.sh [NODE_TEST_OPTION...] [TEST_FILE...] — WebKit tests
# (tests/webkit): WebKitGTK's MiniBrowser, the engine of Safari, driven by
# Debian's WebKitWebDriver over classic W3C WebDriver: floe.mjs in a page
# and in a module Worker, IndexedDB sessions across a reload and two tabs,
# the model adapters' streaming fetch, and the playground.
#
# Installs Debian's webkit2gtk-driver and xvfb when they are missing (the
# tests need no npm package), builds when a WebAssembly target is missing
# or older than the Go sources, then serves the repository root with
# floe-serve on 127.0.0.1:$FLOE_TEST_PORT (default 8792). Each test runs
# its own driver and browser, on an Xvfb display of its own unless DISPLAY
# is set.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PORT=${FLOE_TEST_PORT:-8792}

if [ -z "${FLOE_WEBKIT_DRIVER:-}" ] && { [ ! -x /usr/bin/WebKitWebDriver ] || ! command -v Xvfb >/dev/null; }; then
  echo "== installing webkit2gtk-driver and xvfb (Debian)"
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y webkit2gtk-driver xvfb
fi

stale=""
for f in static/floe.wasm static/playground.wasm static/wasm_exec.js; do
  if [ ! -f "$f" ]; then stale="$f is missing"; break; fi
  newer=$(find . -path ./node_modules -prune -o -path '*/node_modules' -prune -o \
    \( \( -name '*.go' ! -name '*_test.go' \) -o -name go.mod -o -name go.sum \) -newer "$f" -print -quit)
  if [ -n "$newer" ]; then stale="$newer is newer than $f"; break; fi
done
if [ -n "$stale" ]; then
  echo "== build ($stale)"
  ./build.sh build || echo "test-webkit: ./build.sh build reported a failure (above); testing what it wrote" >&2
  for f in static/floe.wasm static/playground.wasm static/wasm_exec.js; do
    [ -f "$f" ] || { echo "test-webkit: the build did not write $f" >&2; exit 1; }
  done
fi

mkdir -p build
go build -trimpath -o build/floe-serve ./cmd/floe-serve
coproc SERVE { exec build/floe-serve -addr "127.0.0.1:$PORT" -dir . 2>&1; }
trap 'kill "$SERVE_PID" 2>/dev/null || true' EXIT
if ! read -r -t 30 -u "${SERVE[0]}" line || [[ "$line" != "floe-serve: serving"* ]]; then
  echo "test-webkit: floe-serve did not start on 127.0.0.1:$PORT: ${line:-no output} (set FLOE_TEST_PORT to use another port)" >&2
  exit 1
fi
echo "== $line"

export FLOE_BASE_URL="http://127.0.0.1:$PORT"
cd tests/webkit
if [ $# -eq 0 ]; then set -- *.test.mjs; fi
# A file named from the repository root (tests/webkit/x.test.mjs) is x.test.mjs here.
args=()
for a in "$@"; do args+=("${a#tests/webkit/}"); done
set -- "${args[@]}"
node --test --import "$ROOT/tests/exit-guard.mjs" --test-concurrency=1 --test-reporter=spec "$@"
