#!/usr/bin/env bash
# scripts/test-firefox.sh [NODE_TEST_OPTION...] [TEST_FILE...] — headless
# Firefox ESR tests (tests/firefox): floe.mjs in a page, in a module Worker
# and in a private window, IndexedDB sessions across a reload and two tabs,
# the playground (its model-server settings against loopback servers too),
# and the extension example as a temporary add-on (its content script on a
# page this script serves).
#
# Installs Debian's firefox-esr when it is missing, installs the pinned
# puppeteer-core (npm ci; it drives Firefox over WebDriver BiDi and
# downloads no browser), builds when a WebAssembly target is missing or
# older than the Go sources, then serves the repository root with
# floe-serve on 127.0.0.1:$FLOE_TEST_PORT (default 8791). The tests of a
# file share one Firefox, each in a browser context of its own (storage
# included); a test that needs the browser's preferences or arguments (a
# private window, the extension) launches a Firefox of its own on a fresh
# profile.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
NAME=test-firefox
. scripts/browser-lib.sh
PORT=${FLOE_TEST_PORT:-8791}

if [ -z "${FLOE_FIREFOX:-}" ] && [ ! -x /usr/bin/firefox-esr ]; then
  echo "== installing firefox-esr (Debian)"
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y firefox-esr
fi

echo "== npm ci (tests/firefox)"
(cd tests/firefox && npm ci --no-audit --no-fund --loglevel=error)

build_if_stale
serve_repo "$PORT"

# One file at a time (FLOE_FIREFOX_JOBS sets how many): beside the Chromium
# suite, more at a time only added to the two cores' contention.
JOBS=${FLOE_FIREFOX_JOBS:-1} run_tests tests/firefox "$@"
