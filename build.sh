#!/usr/bin/env bash
# Floe build entry point. See README.md.
#   ./build.sh build [--budget-only]   build every target into static/ (--budget-only: only floe.wasm compressed)
#   ./build.sh serve [PORT]   build, then serve the playground on 127.0.0.1
#   ./build.sh test           install what tests need, run every test
#   ./build.sh conform [--resume] DIR   run conformance scenarios in DIR
#   ./build.sh providers DIR  replay the provider response cases in DIR
#   ./build.sh bench          benchmarks (Go and wasm)
#   ./build.sh server [--port N] [--dir D] [--model M]   the session server (HTTP + SSE)
#   ./build.sh worker [build|test]   the Cloudflare target into build/worker
#   ./build.sh pgo            rewrite the builds' profiles (wasm/floe-node/ and wasm/floe/default.pgo)
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$PWD
SHARED=${FLOE_SHARED:-$ROOT/../shared}
export FLOE_SHARED=$SHARED

cmd=${1:-build}
shift || true
case "$cmd" in
  build) exec scripts/build.sh "$@" ;;
  serve) exec scripts/serve.sh "$@" ;;
  test) exec scripts/test.sh "$@" ;;
  conform) exec scripts/conform.sh "$@" ;;
  providers) exec scripts/providers.sh "$@" ;;
  bench) exec scripts/bench.sh "$@" ;;
  server) exec scripts/server.sh "$@" ;;
  worker) exec scripts/worker.sh "$@" ;;
  pgo) exec scripts/pgo.sh "$@" ;;
  *) echo "build.sh: unknown command '$cmd' (want build, serve, test, conform, providers, bench, server, worker, pgo)" >&2; exit 2 ;;
esac
