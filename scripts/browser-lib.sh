# scripts/browser-lib.sh — what the browser test scripts (test-browser.sh,
# test-firefox.sh, test-webkit.sh) share; sourced by each, from the
# repository root, with NAME set to the script's name for its messages.

# build_if_stale builds when a WebAssembly target is missing or older than
# the Go sources. build.sh also enforces size budgets: a build that
# reports a failure is tested still, if it wrote the targets now.
build_if_stale() {
  local stale="" f newer stamp
  for f in static/floe.wasm static/playground.wasm static/wasm_exec.js; do
    if [ ! -f "$f" ]; then stale="$f is missing"; break; fi
    newer=$(find . -path ./node_modules -prune -o -path '*/node_modules' -prune -o \
      \( \( -name '*.go' ! -name '*_test.go' \) -o -name go.mod -o -name go.sum \) -newer "$f" -print -quit)
    if [ -n "$newer" ]; then stale="$newer is newer than $f"; break; fi
  done
  [ -z "$stale" ] && return 0
  echo "== build ($stale)"
  stamp=$(mktemp)
  if ! ./build.sh build; then
    for f in static/floe.wasm static/playground.wasm static/wasm_exec.js; do
      [ "$f" -nt "$stamp" ] || { rm -f "$stamp"; echo "$NAME: the build failed before writing $f" >&2; exit 1; }
    done
    echo "$NAME: ./build.sh build reported a failure (above); testing the files it wrote" >&2
  fi
  rm -f "$stamp"
}

# serve_repo serves the repository root with floe-serve on 127.0.0.1:$1
# until the script exits (fixed, because the port is part of the origin
# the browser's data belongs to), and exports FLOE_BASE_URL and
# FLOE_SERVE for the tests.
serve_repo() {
  local line
  mkdir -p build
  go build -trimpath -o build/floe-serve ./cmd/floe-serve
  coproc SERVE { exec build/floe-serve -addr "127.0.0.1:$1" -dir . 2>&1; }
  trap 'kill "$SERVE_PID" 2>/dev/null || true' EXIT
  if ! read -r -t 30 -u "${SERVE[0]}" line || [[ "$line" != "floe-serve: serving"* ]]; then
    echo "$NAME: floe-serve did not start on 127.0.0.1:$1: ${line:-no output} (set FLOE_TEST_PORT to use another port)" >&2
    exit 1
  fi
  echo "== $line"
  export FLOE_BASE_URL="http://127.0.0.1:$1" FLOE_SERVE="$PWD/build/floe-serve"
}

# run_tests DIR [NODE_TEST_OPTION...] [TEST_FILE...] runs DIR's test files
# (all when none is named, the largest first; a file may be named from the
# repository root, tests/x/y.test.mjs, or from DIR), $JOBS at a time (1
# when JOBS is unset). An option is one argument, --name=value: any
# argument not starting with "-" is a file.
run_tests() {
  local dir=$1 a args=() files=""
  shift
  cd "$dir"
  for a in "$@"; do
    case $a in
      -*) ;;
      *) files=1 ;;
    esac
    args+=("${a#"$dir"/}")
  done
  # The largest files take the longest: started first, they do not end
  # alone after the others.
  [ -n "$files" ] || mapfile -t -O "${#args[@]}" args < <(ls -S -- *.test.mjs)
  node --test --import "$ROOT/tests/exit-guard.mjs" --test-concurrency="${JOBS:-1}" --test-reporter=spec "${args[@]}"
}
