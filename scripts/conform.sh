#!/usr/bin/env bash
# ./build.sh conform [--resume] DIR — every *.json scenario in DIR, first
# through the native engine, then through the WebAssembly build
# (static/floe.mjs + floe.wasm, rebuilt when missing or older than a Go
# source). Exits non-zero if either run failed.
set -uo pipefail
cd "$(dirname "$0")/.."

status=0
go run ./cmd/floe-conform "$@" || status=1
# Resume mode is a property of the native trace store: the WebAssembly
# runner has nothing to add there.
for a in "$@"; do [ "$a" = --resume ] && exit $status; done

stale=0
if [ ! -f static/floe.wasm ] || [ ! -f static/wasm_exec.js ]; then
  stale=1
elif [ -n "$(find . -name '*.go' -newer static/floe.wasm -not -path './.cache/*' -print -quit)" ] ||
  [ go.mod -nt static/floe.wasm ]; then
  stale=1
fi
if [ "$stale" = 1 ]; then
  scripts/build.sh >/dev/null || { [ -f static/floe.wasm ] || { echo "conform: building floe.wasm failed" >&2; exit 1; }; }
fi
node tests/conform-wasm.mjs "$@" || status=1
exit $status
