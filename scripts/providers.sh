#!/usr/bin/env bash
# ./build.sh providers DIR — replay every *.json provider response case in
# DIR against the model adapters through the native HTTP transport; prints
# PASS/FAIL per case and "providers: N passed, M failed". Exits non-zero
# when a case failed.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 1 ]; then echo "usage: ./build.sh providers DIR" >&2; exit 2; fi
exec go run ./cmd/floe-providers "$1"
