#!/usr/bin/env bash
# ./build.sh bench — Go benchmarks of the engine and the merge queue (short
# benchtime), then the WebAssembly throughput benchmark in Node: messages
# per second through session.run() against a plain JavaScript async
# generator handing the same messages to the same consumer.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== go test -bench (engine, mergequeue)"
go test -run '^$' -bench . -benchtime=200ms -count=1 ./engine/ ./mergequeue/

echo "== go test -bench (jsbridge under js/wasm: the codec as the bridge uses it)"
GOOS=js GOARCH=wasm go test -run '^$' -bench . -benchtime=100x -count=1 \
  -exec="$(go env GOROOT)/lib/wasm/go_js_wasm_exec" ./jsbridge/

if [ ! -f static/floe.wasm ] || [ ! -f static/wasm_exec.js ] ||
  [ -n "$(find . -name '*.go' -newer static/floe.wasm -not -path './.cache/*' -print -quit)" ]; then
  scripts/build.sh >/dev/null || [ -f static/floe.wasm ]
fi
echo "== wasm: session.run() vs a plain async generator (one Node process)"
node scripts/bench/wasm-bench.mjs "$@"
node scripts/bench/idb-bench.mjs "$@" # Chromium: the streaming task with the IndexedDB store on vs off
node scripts/bench/playground-bench.mjs "$@" # Chromium: the playground rendering Markdown vs plain text
