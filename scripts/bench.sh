#!/usr/bin/env bash
# ./build.sh bench — Go benchmarks of the engine and the merge queue (short
# benchtime), the native bar (scripts/bench/native-bar.mjs), then the
# WebAssembly throughput benchmark in Node: messages
# per second through session.run() against a plain JavaScript async
# generator handing the same messages to the same consumer; W3, the model
# adapters against the Vercel AI SDK on the same provider bytes; the
# IndexedDB store in Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== go test -bench (engine, mergequeue)"
go test -run '^$' -bench . -benchtime=200ms -count=1 ./engine/ ./mergequeue/

echo "== the native bar: W2, the buffered channel's time ÷ the engine's, 10 interleaved rounds"
node scripts/bench/native-bar.mjs --rounds 10

echo "== go test -bench (jsbridge under js/wasm: the codec as the bridge uses it)"
GOOS=js GOARCH=wasm go test -run '^$' -bench . -benchtime=100x -count=1 \
  -exec="$(go env GOROOT)/lib/wasm/go_js_wasm_exec" ./jsbridge/

if [ ! -f static/floe.wasm ] || [ ! -f static/wasm_exec.js ] ||
  [ -n "$(find . -name '*.go' -newer static/floe.wasm -not -path './.cache/*' -print -quit)" ]; then
  scripts/build.sh >/dev/null || [ -f static/floe.wasm ]
fi
echo "== wasm: session.run() vs a plain async generator (one Node process)"
node scripts/bench/wasm-bench.mjs "$@"

# W3 (shared/peers, README "W3"): W1's content as OpenAI Chat Completions
# SSE bytes from an in-process fetch, through floe.openaiCompatible() +
# session.run() (scripts/bench/peer-floe-w3.mjs) against the Vercel AI SDK
# (ai + @ai-sdk/openai-compatible, the versions pinned there) and the
# hand-written baseline, each peer a fresh node process, interleaved, in
# one run-all.mjs session. "x ai-sdk" of the floe row is the same-run ratio
# (below 1: Floe is faster). The peers folder is copied to build/peers and
# installed with npm ci when its lock file changes.
echo "== W3: floe.openaiCompatible vs the AI SDK on the same provider bytes (shared/peers run-all.mjs)"
peers_src=${FLOE_SHARED:-../shared}/peers
if [ ! -f "$peers_src/run-all.mjs" ] || [ ! -f "$peers_src/lib/w3.mjs" ]; then
  echo "bench: $peers_src has no run-all.mjs / lib/w3.mjs (set FLOE_SHARED to the shared folder)" >&2
  exit 1
fi
peers=build/peers
if [ ! -d "$peers/node_modules" ] || ! cmp -s "$peers_src/package-lock.json" "$peers/package-lock.json"; then
  rm -rf "$peers"
  mkdir -p "$peers"
  (cd "$peers_src" && tar --exclude=./node_modules --exclude=./results -cf - .) | (cd "$peers" && tar -xf -)
  (cd "$peers" && npm ci --no-audit --no-fund --loglevel=error)
else # the scripts, afresh (node_modules kept)
  (cd "$peers_src" && tar --exclude=./node_modules --exclude=./results -cf - .) | (cd "$peers" && tar -xf -)
fi
w3_reps=3
for a in "$@"; do [ "$a" = "--quick" ] && w3_reps=1; done
FLOE_STATIC="$PWD/static" FLOE_PEERS="$PWD/$peers" node "$peers/run-all.mjs" --workloads W3 --reps "$w3_reps" \
  --peers baseline:direct,ai-sdk,floe --ref baseline:direct,ai-sdk \
  --extra "floe@W3=$PWD/scripts/bench/peer-floe-w3.mjs"

node scripts/bench/idb-bench.mjs "$@" # Chromium: the streaming task with the IndexedDB store on vs off
echo "== shared/peers: Floe beside the JS agent loops (node 20 and 24), same-rep ratios, cost model"
scripts/bench/peers.sh
node scripts/bench/playground-bench.mjs "$@" # Chromium: the playground rendering Markdown vs plain text
if [ -n "${BENCH_BASE:-}" ]; then # an earlier build's static/ folder: this build against it, one process
  echo "== this build ÷ $BENCH_BASE, both in one Node process (scripts/bench/ab.sh)"
  scripts/bench/ab.sh "$BENCH_BASE"
fi
