#!/usr/bin/env bash
# scripts/test-webkit.sh [NODE_TEST_OPTION...] [TEST_FILE...] — WebKit tests
# (tests/webkit): WebKitGTK's MiniBrowser, the engine of Safari, driven by
# Debian's WebKitWebDriver over classic W3C WebDriver: floe.mjs in a page
# and in a module Worker, IndexedDB sessions across a reload and two tabs,
# the model adapters' streaming fetch, and the playground.
#
# Installs Debian's webkit2gtk-driver and xvfb when they are missing (the
# tests need no npm package), builds when a WebAssembly target is missing
# or older than the Go sources, then serves the repository root with
# floe-serve on 127.0.0.1:$FLOE_TEST_PORT (default 8792). Each test runs
# its own driver and browser, on an Xvfb display of its own unless DISPLAY
# is set.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
NAME=test-webkit
. scripts/browser-lib.sh
PORT=${FLOE_TEST_PORT:-8792}

if [ -z "${FLOE_WEBKIT_DRIVER:-}" ] && { [ ! -x /usr/bin/WebKitWebDriver ] || ! command -v Xvfb >/dev/null; }; then
  echo "== installing webkit2gtk-driver and xvfb (Debian)"
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y webkit2gtk-driver xvfb
fi

build_if_stale
serve_repo "$PORT"

run_tests tests/webkit "$@"
