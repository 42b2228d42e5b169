#!/usr/bin/env bash
# ./build.sh server [--port N] [--dir D] [--model scripted|openai|openai-compatible|
# openai-responses|anthropic] [--model-id NAME] [--base-url URL] [...] — builds and
# runs the session server (cmd/floe-server); every flag is passed on.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
go build -trimpath -o build/floe-server ./cmd/floe-server
exec build/floe-server "$@"
