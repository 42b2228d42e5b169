#!/usr/bin/env bash
# scripts/pgo.sh — writes wasm/floe-node/default.pgo, the CPU profile the
# Node build (floe-node.wasm) is compiled with (go build reads a main
# package's default.pgo), and wasm/floe/default.pgo, the browser build's
# (the same profile, Floe's functions only): the engine's benchmarks, run
# natively (W2 through the engine, and the W1, requests and tools task
# shapes). The profile names functions, so a native one guides the
# WebAssembly builds too; it says nothing of the bridge, which only runs on
# WebAssembly. Run it again when the engine's hot paths change: an older
# profile still builds, and only guides the compiler less.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d "${TMPDIR:-/tmp}/floe-pgo.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
go test -run '^$' -bench 'Stream100kEngine|BenchmarkTask' -benchtime 2s \
  -o "$tmp/engine.test" -cpuprofile "$tmp/cpu.pprof" ./engine/
cp "$tmp/cpu.pprof" wasm/floe-node/default.pgo
echo "pgo: wrote wasm/floe-node/default.pgo ($(wc -c <wasm/floe-node/default.pgo) bytes)"
# The browser build (floe.wasm, within its size budget) gets the same
# profile with only Floe's own functions shown: the compiler then inlines
# the hot calls from one of Floe's functions into another, and none into
# or inside the standard library and the runtime (the whole profile made
# floe.wasm 42 kB larger; this one, about 6).
go tool pprof -proto -show='^github\.com/floehq/floe/' wasm/floe-node/default.pgo >"$tmp/floe.pgo"
cp "$tmp/floe.pgo" wasm/floe/default.pgo
echo "pgo: wrote wasm/floe/default.pgo ($(wc -c <wasm/floe/default.pgo) bytes)"
