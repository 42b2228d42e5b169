#!/usr/bin/env bash
# ./build.sh test — every test of the project: native go test -race, the
# GOOS=js tests in Node, the Node tests of the built floe.mjs and tsc over
# floe.d.ts, floe/ai-sdk with the AI SDK's providers, tool() with zod, Valibot and ArkType, conformance through both runners (the shared scenarios and the
# project's own), the provider replay cases (shared and the project's own), the packed package under Deno
# and Bun, the headless Chromium and Firefox ESR tests, the WebKit
# (WebKitGTK) tests and the Cloudflare target under workerd (the last
# three beside the Chromium suite, in the background).
# Installs what it needs (Debian chromium, firefox-esr, webkit2gtk-driver and
# xvfb, npm packages from
# committed lock files). Ends with the time each step took (and its
# processor time), the runners' summary lines and a total.
set -uo pipefail
cd "$(dirname "$0")/.."
SHARED=${FLOE_SHARED:-$PWD/../shared}
export FLOE_SHARED=$SHARED
if [ ! -d "$SHARED/conformance" ] || [ ! -d "$SHARED/interop" ]; then
  echo "test: the shared scenarios are expected in $SHARED/conformance and $SHARED/interop" >&2
  echo "test: put the shared folder next to the repository, or set FLOE_SHARED to it" >&2
  exit 1
fi
log=$(mktemp) lane=$(mktemp -d)
status=0
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
# step NAME…: starts a step; the time each took is listed at the end,
# with the processor time its processes took (both cores': a step whose
# processor time is well under its time waits, not computes).
# The processor time is read from a control group of cgroup v1's cpuacct
# where this shell may make one (Linux, as root): a group counts every
# process started in it, the browsers and servers that leave their parent
# too. Elsewhere it is the waited-for children's user and system time
# (Linux's /proc; 0 elsewhere), which misses those.
cg="" cgroot=/sys/fs/cgroup/cpuacct cghome=""
if [ -w "$cgroot" ] && mkdir "$cgroot/floe-test-$$" 2>/dev/null; then
  cghome=$cgroot$(awk -F: '$2 ~ /(^|,)cpuacct(,|$)/ { print $3; exit }' /proc/self/cgroup)
  if mkdir "$cgroot/floe-test-$$/main" && echo $$ >"$cgroot/floe-test-$$/main/cgroup.procs"; then
    cg=$cgroot/floe-test-$$
  else
    rmdir "$cgroot/floe-test-$$/main" "$cgroot/floe-test-$$" 2>/dev/null
  fi
fi
# ungroup: puts this shell, and what is left in the groups, back where
# the shell was, and removes the groups.
ungroup() {
  [ -n "$cg" ] || return 0
  local d p
  for d in "$cg"/*/; do
    while read -r p; do echo "$p" >"$cghome/cgroup.procs" 2>/dev/null; done <"$d/cgroup.procs"
    rmdir "$d" 2>/dev/null
  done
  rmdir "$cg" 2>/dev/null
}
trap 'ungroup; rm -rf "$log" "$lane"' EXIT
# cputicks [GROUP|PID]: the processor time of this shell's steps (or of a
# lane's group, or subshell PID), in clock ticks.
cputicks() {
  local f
  if [ -n "$cg" ] && [ -f "$cg/${1:-main}/cpuacct.usage" ]; then
    read -r f <"$cg/${1:-main}/cpuacct.usage"
    echo $((f * hz / 1000000000))
  elif read -r -a f 2>/dev/null <"/proc/${1:-$$}/stat"; then echo $((f[15] + f[16])); else echo 0; fi
}
times=() last="" since=$SECONDS cpusince=$(cputicks)
# lap NAME [END]: ends the step going on (at END, in $SECONDS), starts NAME.
lap() {
  local now end=${2:-$SECONDS}
  now=$(cputicks)
  [ -z "$last" ] || times+=("$(printf '%5d s %6d s cpu  %s' $((end - since)) $(((now - cpusince) / hz)) "$last")")
  last=$1 since=$SECONDS cpusince=$now
}
step() { lap "$*"; echo; echo "== $*"; }
# run CMD…: runs a step, keeps its output in the log for the summary.
run() { "$@" 2>&1 | tee -a "$log"; local rc=${PIPESTATUS[0]}; [ "$rc" = 0 ] || status=1; return 0; }

step "build (size budget enforced)"
run ./build.sh build --budget-only # floe.wasm's sizes only: the others' are never checked
export FLOE_TEST_BUILT=1 # the steps below test this build, not build again

step "go vet"
run go vet ./...
step "gofmt"
bad=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$bad" ]; then echo "gofmt would change: $bad"; status=1; fi

step "go test -race ./..."
go test -race -count=1 -json ./... 2>&1 | node scripts/gotest-summary.mjs | tee -a "$log"
[ "${PIPESTATUS[1]}" = 0 ] || status=1

step "WebAssembly: GOOS=js tests, Node tests of floe.mjs, tsc"
run scripts/test-wasm.sh

# deps DIR installs DIR's npm packages from its lock file when they are
# missing or older than it (npm keeps a copy of the lock it installed in
# node_modules/.package-lock.json): a lock changed by a pull is installed
# again, an unchanged one is not downloaded again.
deps() {
  if [ ! -f "$1/node_modules/.package-lock.json" ] || [ "$1/package-lock.json" -nt "$1/node_modules/.package-lock.json" ]; then
    (cd "$1" && npm ci --no-audit --no-fund --loglevel=error) || status=1
  fi
}

step "Deno and Bun: the packed package run by each (tests/runtimes)"
deps tests/runtimes
run node --test --import ./tests/exit-guard.mjs tests/runtimes/

step "floe/ai-sdk: the AI SDK's own providers and mock models (tests/ai-sdk)"
deps tests/ai-sdk
run node --test --import ./tests/exit-guard.mjs tests/ai-sdk/

step "tool() with zod, Valibot and ArkType schemas (tests/standard-schema)"
deps tests/standard-schema
run node --test --import ./tests/exit-guard.mjs tests/standard-schema/

step "conformance: shared scenarios"
run ./build.sh conform "$SHARED/conformance"
step "conformance: project scenarios"
run ./build.sh conform testdata/conformance
step "conformance: resume after every scenario"
run ./build.sh conform --resume "$SHARED/conformance"
run ./build.sh conform --resume testdata/conformance
step "providers: shared cases"
run ./build.sh providers "$SHARED/providers"
step "providers: project cases"
run ./build.sh providers testdata/providers

# Firefox's, WebKit's and the Worker's suites mostly wait (on a browser,
# a server, a timer), as the Chromium suite does: they run beside it in
# the background, in two lanes (Firefox then WebKit; the Worker), and
# their output follows its own. Every suite serves on ports of its own
# (browser-lib.sh, tests/worker).
step "browser tests (headless Chromium), and beside it the three steps after it"
# The browsers the three suites need, installed at once before they start
# side by side (two apt-get at a time: one fails on dpkg's lock). Each
# suite's script installs its own when run alone.
pkgs=()
[ -x /usr/bin/chromium ] || [ -n "${FLOE_CHROMIUM:-}" ] || pkgs+=(chromium)
[ -x /usr/bin/firefox-esr ] || [ -n "${FLOE_FIREFOX:-}" ] || pkgs+=(firefox-esr)
if [ -z "${FLOE_WEBKIT_DRIVER:-}" ] && { [ ! -x /usr/bin/WebKitWebDriver ] || ! command -v Xvfb >/dev/null; }; then
  pkgs+=(webkit2gtk-driver xvfb)
fi
if [ "${#pkgs[@]}" -gt 0 ]; then
  echo "== installing ${pkgs[*]} (Debian)"
  { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "${pkgs[@]}"; } 2>&1 | tee -a "$log"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
fi
# sub N NAME CMD…: a step of a lane, its output, time and processor time
# (its group's, or its subshell's waited-for children's) kept as the N-th.
sub() {
  local i=$1 name=$2
  shift 2
  (
    t0=$SECONDS me=$BASHPID
    if [ -n "$cg" ] && mkdir "$cg/lane-$i" && echo "$BASHPID" >"$cg/lane-$i/cgroup.procs"; then me=lane-$i; fi
    { echo; echo "== $name"; } >"$lane/out-$i"
    "$@" >>"$lane/out-$i" 2>&1 </dev/null || touch "$lane/failed"
    c=$(cputicks "$me")
    echo "$c" >"$lane/ticks-$i"
    printf '%5d s %6d s cpu  %s\n' $((SECONDS - t0)) $((c / hz)) "$name (beside Chromium)" >"$lane/times-$i"
  )
}
(
  sub 1 "browser tests (headless Firefox ESR)" scripts/test-firefox.sh
  sub 2 "browser tests (WebKit: WebKitGTK's MiniBrowser on Xvfb)" scripts/test-webkit.sh
) </dev/null &
lane1=$!
sub 3 "Cloudflare target under local workerd (front Worker + session Durable Objects)" scripts/worker.sh test &
lane2=$!
run scripts/test-browser.sh
end=$SECONDS
wait "$lane1" "$lane2"
# The lanes' processor time is in their own lines, not the Chromium
# suite's (without groups bash adds it to this shell's as the lanes end;
# with them it is in the lanes' groups, which the total adds).
lanes=0
for i in 1 2 3; do
  [ ! -f "$lane/ticks-$i" ] || lanes=$((lanes + $(cat "$lane/ticks-$i")))
done
[ -n "$cg" ] || cpusince=$((cpusince + lanes))
lap "" "$end"
for i in 1 2 3; do
  [ ! -f "$lane/out-$i" ] || run cat "$lane/out-$i"
  [ ! -f "$lane/times-$i" ] || times+=("$(cat "$lane/times-$i")")
done
[ ! -e "$lane/failed" ] || status=1
echo
echo "== time per step"
printf '%s\n' "${times[@]}"
all=$(cputicks)
[ -z "$cg" ] || all=$((all + lanes))
echo "$(printf '%5d s %6d s cpu' "$SECONDS" $((all / hz)))  in all"

echo
echo "== summary"
# The failed tests by name (the output above has their reasons): a run
# read from its end alone says what failed.
grep -E '^(--- FAIL |FAIL |[[:space:]]*not ok [0-9]+ - |[[:space:]]*✖ )' "$log" | sed -E 's/^[[:space:]]+//; s/ \([0-9.]+ms\)$//' |
  grep -v "^✖ failing tests:$" | awk '!seen[$0]++' | head -40 | sed 's/^/failed: /'
grep -E '^(go test: |conformance \(|providers: |(# |ℹ )(pass|fail) |tsc: )' "$log"
node -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n");
let p = 0, f = 0;
for (const l of lines) {
  let m = l.match(/^(go test|conformance \([^)]*\)|providers): (\d+) passed, (\d+) failed/);
  if (m) { p += +m[2]; f += +m[3]; continue; }
  m = l.match(/^(?:# |ℹ )(pass|fail) (\d+)$/);
  if (m) { if (m[1] === "pass") p += +m[2]; else f += +m[2]; }
}
if (process.argv[2] !== "0" && f === 0) f = 1; // a step failed without a count
console.log(`total: ${p} passed, ${f} failed`);
' "$log" "$status"
exit $status
