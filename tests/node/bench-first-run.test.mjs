// scripts/bench/first-run.mjs, the first run after load() in fresh
// processes (README "Where Floe stands"): it loads each build and runs one
// task at once, reports both builds' medians and their ratio, and refuses
// bad arguments.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const script = fileURLToPath(new URL("../../scripts/bench/first-run.mjs", import.meta.url));
const statics = fileURLToPath(new URL("../../static", import.meta.url));

test("first-run.mjs loads each build in fresh processes and times its first task", () => {
  const out = execFileSync(process.execPath, [script, statics, statics, "2", '{"T":3,"D":4,"K":2,"F":2}'], { cwd: root, encoding: "utf8" });
  const r = JSON.parse(out);
  assert.deepEqual(r.shape, { T: 3, D: 4, K: 2, F: 2 });
  assert.equal(r.procs, 2);
  for (const b of [r.base, r.new]) assert.ok(b.loadMs > 0 && b.taskMs > 0, out);
  const lo = (r.new.taskMs - 0.05) / (r.base.taskMs + 0.05) - 0.0005;
  const hi = (r.new.taskMs + 0.05) / (r.base.taskMs - 0.05) + 0.0005;
  assert.ok(r.taskRatio >= lo && r.taskRatio <= hi, out);
});

test("first-run.mjs names a bad count, a bad shape and a folder without a build", () => {
  for (const [args, want] of [
    [[statics], /usage: node scripts\/bench\/first-run.mjs BASE NEW/],
    [[statics, statics, "0"], /processes "0": want a positive integer/],
    [[statics, statics, "1", "{T:1}"], /the shape "\{T:1\}" is not JSON/],
    [[root, statics, "1"], /has no floe.mjs and floe.wasm/],
  ]) {
    const r = spawnSync(process.execPath, [script, ...args], { cwd: root, encoding: "utf8" });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, want);
  }
});
