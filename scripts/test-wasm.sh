#!/usr/bin/env bash
# The WebAssembly side's tests: the bridge under GOOS=js, the Node tests
# of the built static/floe.mjs, and tsc over static/floe.d.ts.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0

echo "== go vet (js/wasm)"
GOOS=js GOARCH=wasm go vet ./jsbridge/... ./wasm/... || status=1

echo "== go test (js/wasm) ./jsbridge"
GOOS=js GOARCH=wasm go test -count=1 -exec="$(go env GOROOT)/lib/wasm/go_js_wasm_exec" ./jsbridge/... || status=1

echo "== build"
# Over the size budget still leaves a floe.wasm to test; build.sh reports it.
scripts/build.sh || status=1
if [ ! -f static/floe.wasm ]; then
  echo "test-wasm: no static/floe.wasm" >&2
  exit 1
fi

echo "== node --test tests/node/"
node --test tests/node/ || status=1

echo "== tsc --noEmit -p tests/types"
if [ ! -x tests/types/node_modules/.bin/tsc ]; then
  (cd tests/types && npm ci --no-audit --no-fund --loglevel=error) || status=1
fi
(cd tests/types && npx --no-install tsc --noEmit -p .) && echo "tsc: ok" || status=1

exit $status
