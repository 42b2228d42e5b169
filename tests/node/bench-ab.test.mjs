// scripts/bench/ab.mjs, the one-process comparison of two builds that the
// README's Performance section names: it runs a task through each build and
// reports both medians and their ratio, and refuses a bad shape.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const script = fileURLToPath(new URL("../../scripts/bench/ab.mjs", import.meta.url));
const statics = fileURLToPath(new URL("../../static", import.meta.url));

test("ab.mjs runs the same task through two builds and prints new ÷ base", () => {
  const out = execFileSync(process.execPath, [script, statics, statics, '{"T":3,"D":4,"K":2,"F":2}', "4", "ts"], { cwd: root, encoding: "utf8" });
  const r = JSON.parse(out);
  assert.deepEqual(r.shape, { T: 3, D: 4, K: 2, F: 2 });
  assert.equal(r.ts, true);
  assert.equal(r.sync, false);
  assert.equal(r.iters, 4);
  assert.ok(r.baseMs > 0 && r.newMs > 0, out);
  // The times are printed to 0.01 ms and the ratio, of the unrounded
  // medians, to 0.001: it lies between the ratios of the times' ends.
  const lo = (r.newMs - 0.005) / (r.baseMs + 0.005) - 0.0005;
  const hi = (r.newMs + 0.005) / (r.baseMs - 0.005) + 0.0005;
  assert.ok(r.ratio >= lo && r.ratio <= hi, out);
  const s = JSON.parse(execFileSync(process.execPath, [script, statics, statics, '{"T":2,"D":1,"K":2,"F":1}', "2", "ts,sync"], { cwd: root, encoding: "utf8" }));
  assert.equal(s.ts, true);
  assert.equal(s.sync, true);
});

test("ab.mjs names a bad shape, a bad count and a folder without a build", () => {
  for (const [args, want] of [
    [[statics, statics, "{T:1}"], /the shape "\{T:1\}" is not JSON/],
    [[statics, statics, "{}", "1"], /iterations "1": want an integer of 2 or more/],
    [[root, statics, "{}", "2"], /has no floe.mjs and floe.wasm/],
    [[statics, statics, "{}", "2", "fast"], /unknown flag "fast": want ts or sync/],
  ]) {
    const r = spawnSync(process.execPath, [script, ...args], { cwd: root, encoding: "utf8" });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, want);
  }
});
