#!/usr/bin/env bash
# scripts/worker.sh build — builds the Cloudflare target into build/worker:
# the Go front Worker (syumai/workers: worker.mjs, runtime.mjs, its
# wasm_exec.js, app.wasm), the session object's WebAssembly (object.wasm),
# the Durable Object class and the main module; prints the sizes.
# scripts/worker.sh test — builds (printing the raw sizes only), then runs
# the workerd tests (tests/worker).
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/worker
build() {
  rm -rf "$out" && mkdir -p "$out"
  go run github.com/syumai/workers/cmd/workers-assets-gen -mode=go -o "$out" >/dev/null
  # Its wasm_exec.js keeps a leading U+FEFF of a Go string, as the build's
  # does (scripts/build.sh): a Trace row cut before one lost it.
  sed -i 's/new TextDecoder("utf-8");/new TextDecoder("utf-8", { ignoreBOM: true });/' "$out/wasm_exec.js"
  if ! grep -q 'ignoreBOM: true' "$out/wasm_exec.js"; then
    echo "worker.sh: wasm_exec.js: its TextDecoder was not found to keep a leading U+FEFF" >&2
    exit 1
  fi
  GOOS=js GOARCH=wasm go build -trimpath -ldflags='-s -w' -o "$out/app.wasm" ./wasm/worker/front
  GOOS=js GOARCH=wasm go build -trimpath -ldflags='-s -w' -o "$out/object.wasm" ./wasm/worker/object
  cp wasm/worker/index.mjs wasm/worker/session_object.mjs "$out/"
  node scripts/pack-data.mjs "$out/app.wasm" "$out/object.wasm" >/dev/null # data segments joined (README, Sizes)
  for f in app.wasm object.wasm; do
    # gzip -9 of the two takes 3 s of processor time: the tests, which
    # check no size, print the raw ones only.
    if [ "${1:-}" = raw ]; then
      printf 'worker: %-12s %9d bytes raw (gzip: scripts/worker.sh build)\n' "$f" "$(wc -c <"$out/$f")"
    else
      printf 'worker: %-12s %9d bytes raw, %9d gzip\n' "$f" "$(wc -c <"$out/$f")" "$(gzip -9c "$out/$f" | wc -c)"
    fi
  done
}
case "${1:-build}" in
  build) build ;;
  test)
    build raw
    if [ ! -x tests/worker/node_modules/.bin/workerd ]; then
      (cd tests/worker && npm ci --no-audit --no-fund --loglevel=error)
    fi
    # The files serve on blocks of ports of their own: one runs at a time
    # (FLOE_WORKER_JOBS sets how many more): beside the Chromium suite, more
    # at a time only added to the two cores' contention.
    node --test --import ./tests/exit-guard.mjs --test-concurrency="${FLOE_WORKER_JOBS:-1}" tests/worker/
    ;;
  *) echo "worker.sh: want build or test" >&2; exit 2 ;;
esac
