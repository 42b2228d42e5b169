#!/usr/bin/env bash
# ./build.sh build [--budget-only] — build the WebAssembly targets into
# static/, copy the toolchain's wasm_exec.js beside them, print raw / gzip
# / brotli sizes and fail when floe.wasm is over its brotli budget. With
# --budget-only (./build.sh test's build) only floe.wasm, which has the
# budget, is compressed: the other modules' line is their raw size (their
# brotli at quality 11 took about 70 s of processor time, and nothing
# checks it).
set -euo pipefail
cd "$(dirname "$0")/.."
budget_only=""
case "${1:-}" in
  "") ;;
  --budget-only) budget_only=1 ;;
  *) echo "build: unknown argument '$1' (want --budget-only or nothing)" >&2; exit 2 ;;
esac

BUDGET_BROTLI=${FLOE_WASM_BUDGET:-800000} # bytes, floe.wasm after brotli -q 11

# The garbage collector: the one before Green Tea (the nogreenteagc
# experiment), which on WebAssembly's one thread runs short agent turns as
# fast or faster and makes floe.wasm about 6.5 kB (brotli) smaller; that
# room pays for the runtime's inlining budget below. A toolchain without
# the experiment builds with Green Tea and the budget of before.
#
# Inlining, per package (README "Sizes"). The runtime inlines only its
# small functions, of an inline cost of 40 or less (10 with Green Tea), and
# the calls it makes into internal/runtime (atomics and the like). A budget
# of 10 made short agent turns about 0.9 of the time of no inlining for
# about 5 kB (brotli); 40, with the collector above, about 0.92 of that. The budget is a flag of the
# toolchain's newer inliner, the newinliner experiment, which the build
# turns on; it changes no other package's size or speed measurably.
# The model adapters (cold: a few calls a streamed chunk), the error
# formatting, the clock's package, `time`, the number parsing and formatting
# under strconv (internal/strconv), the web glue (IndexedDB) and the
# Trace's package (resume, export, the records of persisted sessions only)
# are compiled without inlining, which pays for it. (Compressed sizes move by a
# few kB either way with any change of the code: keep the margin.)
# A space-separated list of package=flags, each passed as its own
# -gcflags; FLOE_WASM_GCFLAGS replaces it. A toolchain without the
# experiment gets the list without it (the runtime without inlining).
has_experiment() { GOEXPERIMENT=${GOEXPERIMENT:+$GOEXPERIMENT,}$1 go env GOEXPERIMENT >/dev/null 2>&1; }
slack=-70 # an inline budget of 80 - 70
if has_experiment nogreenteagc; then
  export GOEXPERIMENT=${GOEXPERIMENT:+$GOEXPERIMENT,}nogreenteagc
  slack=-40
else
  echo "build: this Go has no nogreenteagc experiment: built with the Green Tea collector" >&2
fi
GCFLAGS_NEWINLINER="runtime=-d=inlbudgetslack=$slack time=-l internal/strconv=-l github.com/floehq/floe/web/...=-l github.com/floehq/floe/provider/...=-l github.com/floehq/floe/internal/errf=-l github.com/floehq/floe/clock=-l github.com/floehq/floe/engine/trace=-l"
GCFLAGS_PLAIN='runtime=-l time=-l github.com/floehq/floe/web/...=-l'
if has_experiment newinliner; then
  export GOEXPERIMENT=${GOEXPERIMENT:+$GOEXPERIMENT,}newinliner
  GCFLAGS=${FLOE_WASM_GCFLAGS-$GCFLAGS_NEWINLINER}
else
  echo "build: this Go has no newinliner experiment: the runtime is compiled without inlining" >&2
  GCFLAGS=${FLOE_WASM_GCFLAGS-$GCFLAGS_PLAIN}
fi
gcflags=()
for g in $GCFLAGS; do gcflags+=("-gcflags=$g"); done
# go build compiles each module with its main package's default.pgo
# (scripts/pgo.sh). floe.wasm's, wasm/floe/default.pgo, shows Floe's own
# functions only: the hot calls between them are inlined, none into the
# runtime (about 6 kB; W2 0.93-0.95 of the time). The Node build has no
# size budget: its runtime keeps Go's own inlining (the list without the
# runtime's entry), and its profile, wasm/floe-node/default.pgo, inlines
# the engine's and the runtime's hot calls. Both together: 0.91-0.99 of
# the time of a Node build without them on the benchmarks' task shapes,
# for 56 kB more (README "Sizes").
node_gcflags=()
for g in $GCFLAGS; do
  if [ -n "${FLOE_WASM_GCFLAGS+set}" ] || [ "${g%%=*}" != runtime ]; then node_gcflags+=("-gcflags=$g"); fi
done

# -buildid= leaves the build ID out: it is a hash of the sources, comments
# included, and its 86 bytes alone moved floe.wasm's brotli size by 0.5 kB.
# scripts/pack-data.mjs then joins the data segments Go's linker splits at
# every run of zeros (about 50,000 in floe.wasm, mostly 2 bytes each): 55 kB
# less after brotli, 0.5 MB more raw, the same memory at instantiation.
#
# Each module's sizes are measured while the next one builds (brotli at
# quality 11 takes 15-40 s a module, one core each): sized PID OUTPUT
# writes its line into $sizes/OUTPUT's name.
sizes=$(mktemp -d "${TMPDIR:-/tmp}/floe-sizes.XXXXXX")
sizers=()
build() { # build PACKAGE OUTPUT [go build flags…]
  echo "build: $1 -> $2"
  local pkg=$1 out=$2
  shift 2
  GOOS=js GOARCH=wasm go build -trimpath "${gcflags[@]}" -ldflags="-s -w -buildid=" "$@" -o "$out" "$pkg"
  chmod 644 "$out" # a module, not a program: packed without the executable bit
  node scripts/pack-data.mjs "$out" >/dev/null
  if [ -n "$budget_only" ] && [ "$(basename "$out")" != floe.wasm ]; then
    printf '%-17s%8s kB  (compressed sizes not measured: --budget-only)\n' "$(basename "$out")" \
      "$(awk -v n="$(wc -c <"$out")" 'BEGIN{printf "%.1f", n/1000}')" >"$sizes/$(basename "$out")"
    return
  fi
  node scripts/wasm-size.mjs "$out" "$BUDGET_BROTLI" >"$sizes/$(basename "$out")" 2>&1 &
  sizers+=($!)
}

# floe.wasm takes internal/stdoverlay/godebug for the standard library's
# internal/godebug (README "Sizes"): 28.6 kB less after brotli. A Go whose
# internal/godebug no longer has that API (its time package does not
# compile with the stand-in) builds without it, and says so.
overlay=()
ovjson=$(mktemp "${TMPDIR:-/tmp}/floe-overlay.XXXXXX")
trap 'rm -rf "$ovjson" "$sizes"' EXIT
node -e 'console.log(JSON.stringify({ Replace: { [process.argv[1]]: process.argv[2] } }))' \
  "$(go env GOROOT)/src/internal/godebug/godebug.go" "$PWD/internal/stdoverlay/godebug/godebug.go" >"$ovjson"
if GOOS=js GOARCH=wasm go build -overlay="$ovjson" time 2>/dev/null; then
  overlay=(-overlay="$ovjson")
else
  echo "build: this Go's internal/godebug does not take the stand-in (internal/stdoverlay/godebug): floe.wasm is built without it" >&2
fi
build ./wasm/floe static/floe.wasm "${overlay[@]}"
browser_gcflags=("${gcflags[@]}")
gcflags=("${node_gcflags[@]}")
build ./wasm/floe-node static/floe-node.wasm -tags floenode # Node: directory stores (trace.FileStore, os); no budget
gcflags=("${browser_gcflags[@]}")
wasms=(static/floe.wasm static/floe-node.wasm)
if [ -d wasm/playground ]; then
  build ./wasm/playground static/playground.wasm
  wasms+=(static/playground.wasm)
fi
# The toolchain's wasm_exec.js with one change: its TextDecoder keeps a
# leading U+FEFF (ignoreBOM), which it dropped from every Go string handed
# to JavaScript that starts with one (a system prompt, a session id).
sed 's/new TextDecoder("utf-8");/new TextDecoder("utf-8", { ignoreBOM: true });/' \
  "$(go env GOROOT)/lib/wasm/wasm_exec.js" >static/wasm_exec.js
if ! grep -q 'ignoreBOM: true' static/wasm_exec.js; then
  echo "build: wasm_exec.js: its TextDecoder was not found to keep a leading U+FEFF" >&2
  exit 1
fi
cp static/floe-node.wasm npm/floe-node/floe-node.wasm && chmod 644 npm/floe-node/floe-node.wasm # the @floehq/floe-node package

# Sizes: gzip -9 and brotli quality 11, both with node's zlib
# (scripts/wasm-size.mjs); floe.wasm's brotli size is held to its budget.
over=0
for p in "${sizers[@]}"; do wait "$p" || over=1; done
echo "size:            raw        gzip      brotli"
for f in "${wasms[@]}"; do cat "$sizes/$(basename "$f")"; done
exit $over
