#!/usr/bin/env bash
# ./build.sh conform [--resume] DIR — every *.json scenario in DIR, native
# engine (and, once built, the WebAssembly build).
set -euo pipefail
cd "$(dirname "$0")/.."
go run ./cmd/floe-conform "$@"
