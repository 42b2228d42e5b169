#!/usr/bin/env bash
# This build against an earlier one, both in one Node process with their
# runs alternating (scripts/bench/ab.mjs), on W1, W1 with timestamps, W2
# and the cost model's requests and tools shapes (the tools shape also
# with an approver that decides at once), for each Node version:
# the measure for a change smaller than the noise between processes.
# Several processes per shape, the order of the builds swapped in each
# other one; prints each process's new ÷ base and their median.
#
#   scripts/bench/ab.sh BASE [NEW]    BASE, NEW: folders like static/ (NEW: static)
#
# Then, for each Node version, the first task after load() in fresh
# processes alternating the two builds (scripts/bench/first-run.mjs).
#
# Env: BENCH_NODES ("20 24"), BENCH_AB_PROCS (3), BENCH_FIRST_PROCS (10).
set -euo pipefail
cd "$(dirname "$0")/../.."
base=${1:?usage: scripts/bench/ab.sh BASE [NEW] (folders like static/)}
new=${2:-static}
NODES=${BENCH_NODES:-"20 24"}
PROCS=${BENCH_AB_PROCS:-3}
FIRST=${BENCH_FIRST_PROCS:-10}
. scripts/bench/node-bin.sh
[ -f "$new/floe.wasm" ] || scripts/build.sh >/dev/null
work=$(mktemp -d "${TMPDIR:-/tmp}/floe-ab.XXXXXX")
trap 'rm -rf "$work"' EXIT

shapes=(
  'W1|{}|40|'
  'W1 ts|{}|40|ts'
  'W2|{"T":1,"D":100000,"K":0,"F":0}|8|'
  'requests|{"T":60,"D":10,"K":1,"F":1}|30|'
  'tools|{"T":20,"D":10,"K":16,"F":1}|30|'
  'tools sync|{"T":20,"D":10,"K":16,"F":1}|30|sync'
)
for v in $NODES; do
  node_bin=$(node_bin "$v" "$work")
  echo "== $("$node_bin" --version): new ÷ base, $PROCS processes a shape"
  for s in "${shapes[@]}"; do
    IFS='|' read -r name shape iters ts <<<"$s"
    ratios=()
    for i in $(seq "$PROCS"); do
      if [ $((i % 2)) = 1 ]; then
        r=$("$node_bin" scripts/bench/ab.mjs "$base" "$new" "$shape" "$iters" $ts | node -e 'console.log(JSON.parse(require("fs").readFileSync(0, "utf8")).ratio)')
      else # the new build loaded first
        r=$("$node_bin" scripts/bench/ab.mjs "$new" "$base" "$shape" "$iters" $ts | node -e 'console.log((1 / JSON.parse(require("fs").readFileSync(0, "utf8")).ratio).toFixed(3))')
      fi
      ratios+=("$r")
    done
    # The median: the middle ratio, or the mean of the two middle ones.
    med=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{v[NR] = $1} END {printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}')
    printf '%-10s %s  median %s\n' "$name" "${ratios[*]}" "$med"
  done
  # The first W1 task after load(), each in a fresh process
  # (scripts/bench/first-run.mjs): what a CLI or a test waits for.
  r=$("$node_bin" scripts/bench/first-run.mjs "$base" "$new" "$FIRST")
  printf '%-10s %s\n' "first run" "$(node -e 'const r = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log(r.taskRatio + "  (" + r.base.taskMs + " ms → " + r.new.taskMs + ", medians of " + r.procs + " processes each)")' <<<"$r")"
done
