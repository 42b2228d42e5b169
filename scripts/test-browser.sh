#!/usr/bin/env bash
# scripts/test-browser.sh [NODE_TEST_OPTION...] [TEST_FILE...] — headless Chromium tests
# (tests/browser): floe.mjs in a page and in a module Worker, the playground,
# the MV3 extension example, and the npm package in a fresh Vite app.
# The tests of a file share one Chromium, each in a fresh context of its
# own, but for those that need a profile on disk (tests/browser/harness.mjs).
# Two files run at a time (FLOE_BROWSER_JOBS sets how many): the suite
# waits on Chromium far more than it computes.
#
# Installs Debian's chromium when /usr/bin/chromium is missing, installs the
# pinned playwright-core (npm ci; never `playwright install`), builds when a
# WebAssembly target is missing or older than the Go sources, then serves the
# repository root with floe-serve on 127.0.0.1:$FLOE_TEST_PORT (default 8790;
# fixed, because the port is part of the origin IndexedDB data belongs to).
# Screenshots go to a fresh temporary directory, printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
NAME=test-browser
. scripts/browser-lib.sh
PORT=${FLOE_TEST_PORT:-8790}

if [ ! -x /usr/bin/chromium ] && [ -z "${FLOE_CHROMIUM:-}" ]; then
  echo "== installing chromium (Debian)"
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y chromium
fi

echo "== npm ci (tests/browser)"
(cd tests/browser && npm ci --no-audit --no-fund --prefer-offline --loglevel=error)

build_if_stale
serve_repo "$PORT"

shots=$(mktemp -d "${TMPDIR:-/tmp}/floe-screenshots.XXXXXX")
export FLOE_SCREENSHOT_DIR="$shots"
# The npm tarballs are packed once a run, into FLOE_PACK_DIR, by the first
# test that needs them (tests/browser/pack.mjs); each test installs them
# into a fresh app of its own.
FLOE_PACK_DIR=$(mktemp -d "${TMPDIR:-/tmp}/floe-pack.XXXXXX")
export FLOE_PACK_DIR
status=0
(JOBS=${FLOE_BROWSER_JOBS:-2} run_tests tests/browser "$@") || status=$?
rm -rf "$FLOE_PACK_DIR"
# The folder is named when a failing test left a screenshot in it, and
# removed when it is empty.
if rmdir "$shots" 2>/dev/null; then :; else echo "== screenshots: $shots"; fi
exit $status
