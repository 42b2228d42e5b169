#!/usr/bin/env bash
# ./build.sh test — every test of the project.
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${FLOE_SHARED:-$PWD/../shared}
status=0
echo "== go vet"; go vet ./... || status=1
echo "== gofmt"; bad=$(gofmt -l $(git ls-files '*.go')); if [ -n "$bad" ]; then echo "gofmt: $bad"; status=1; fi
echo "== go test -race ./..."; go test -race -count=1 ./... || status=1
echo "== conformance"; ./build.sh conform "$SHARED/conformance" || status=1
exit $status
