// scripts/gotest-summary.mjs, which ./build.sh test reads `go test -json`
// through: a failed test's output and name, a package that failed without
// a test's verdict (the time limit) naming the tests it left running, and
// the counts line the run's total adds up.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const SCRIPT = fileURLToPath(new URL("../../scripts/gotest-summary.mjs", import.meta.url));
const ev = (o) => JSON.stringify(o) + "\n";

test("gotest-summary: failed tests by name with their output; a package's time limit names the test still running; counts", () => {
  const input = [
    ev({ Action: "run", Package: "p/a", Test: "TestOK" }),
    ev({ Action: "output", Package: "p/a", Test: "TestOK", Output: "=== RUN   TestOK\n" }),
    ev({ Action: "pass", Package: "p/a", Test: "TestOK" }),
    ev({ Action: "output", Package: "p/a", Test: "TestBad", Output: "    a_test.go:9: got 1, want 2\n" }),
    ev({ Action: "fail", Package: "p/a", Test: "TestBad" }),
    ev({ Action: "skip", Package: "p/a", Test: "TestSkip" }),
    ev({ Action: "fail", Package: "p/a" }),
    ev({ Action: "output", Package: "p/x", Test: "TestSlow", Output: "=== RUN   TestSlow\n" }),
    ev({ Action: "output", Package: "p/x", Output: "panic: test timed out after 10m0s\n" }),
    ev({ Action: "output", Package: "p/x", Output: "\trunning tests:\n\t\tTestSlow (10m0s)\n" }),
    ev({ Action: "fail", Package: "p/x" }),
  ].join("");
  const r = spawnSync(process.execPath, [SCRIPT], { input, encoding: "utf8" });
  assert.equal(r.status, 1);
  assert.match(r.stdout, /^--- FAIL p\/a TestBad\n    a_test\.go:9: got 1, want 2\n/m);
  assert.match(r.stdout, /^--- FAIL p\/x TestSlow \(no verdict: still running when p\/x failed\)\n=== RUN   TestSlow\n/m);
  assert.match(r.stdout, /running tests:\n\t\tTestSlow \(10m0s\)\n/);
  assert.doesNotMatch(r.stdout, /TestOK/);
  assert.match(r.stdout, /go test: 1 passed, 2 failed, 1 skipped\n$/);
});
