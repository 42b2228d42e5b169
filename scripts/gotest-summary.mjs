// Reads `go test -json` on stdin, prints the output of failing tests and
// package failures, and ends with "go test: N passed, M failed" (tests,
// subtests included). Exit status 1 if anything failed.
import { createInterface } from "node:readline";

const out = new Map(); // "pkg test" -> output lines
let passed = 0, failed = 0, skipped = 0, pkgFail = 0;
const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  let e;
  try { e = JSON.parse(line); } catch { console.log(line); continue; }
  const key = `${e.Package} ${e.Test ?? ""}`;
  if (e.Action === "output") {
    if (!out.has(key)) out.set(key, []);
    out.get(key).push(e.Output);
    if (!e.Test && /^(ok|FAIL|---|panic)/.test(e.Output)) process.stdout.write(e.Output);
  } else if (e.Test && e.Action === "pass") { passed++; out.delete(key); }
  else if (e.Test && e.Action === "skip") { skipped++; out.delete(key); }
  else if (e.Test && e.Action === "fail") { failed++; process.stdout.write(`--- FAIL ${key}\n${(out.get(key) ?? []).join("")}`); }
  else if (!e.Test && e.Action === "fail") {
    // A package that failed without a test's verdict (a build error, a
    // panic, the time limit): the tests it left running and its own last
    // lines, which name the cause.
    pkgFail++;
    for (const [k, lines] of out) {
      if (!k.startsWith(e.Package + " ") || k === key) continue;
      process.stdout.write(`--- FAIL ${k} (no verdict: still running when ${e.Package} failed)\n${lines.slice(-20).join("")}`);
      out.delete(k);
    }
    process.stdout.write((out.get(key) ?? []).slice(-40).join(""));
  }
}
if (pkgFail > failed) failed = pkgFail; // a package that failed to build or panicked
console.log(`go test: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 ? 1 : 0);
