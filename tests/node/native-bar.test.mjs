// scripts/bench/native-bar.mjs, which ./build.sh bench runs and the README's
// "Where Floe stands" names: the native bar's ratios from interleaved runs
// of the engine's test binary.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { benchmarks, parseBench, ratios, summary } from "../../scripts/bench/native-bar.mjs";

const script = fileURLToPath(new URL("../../scripts/bench/native-bar.mjs", import.meta.url));

test("parseBench reads ns/op by benchmark name, without the GOMAXPROCS suffix", () => {
  const out = [
    "goos: linux",
    "BenchmarkStream100kEngine-2    	      74	  16931825 ns/op	   5906156 msgs/s	 5196964 B/op	      84 allocs/op",
    "BenchmarkStream100kEngineSystemClock 	 3	 20000000.5 ns/op",
    "BenchmarkStream100kChannel-16   	     133	   9079965 ns/op	  11013479 msgs/s",
    "PASS",
  ].join("\n");
  assert.deepEqual(parseBench(out), {
    BenchmarkStream100kEngine: 16931825,
    BenchmarkStream100kEngineSystemClock: 20000000.5,
    BenchmarkStream100kChannel: 9079965,
  });
});

test("ratios divide the channel's time by each engine's; a missing benchmark gives none", () => {
  const r = ratios({ [benchmarks.engine]: 20, [benchmarks.system]: 40, [benchmarks.channel]: 10 });
  assert.deepEqual(r, { engine: 0.5, system: 0.25 });
  assert.deepEqual(ratios({ [benchmarks.engine]: 20, [benchmarks.channel]: 10 }), { engine: 0.5, system: undefined });
  assert.deepEqual(ratios({ [benchmarks.engine]: 20 }), { engine: undefined, system: undefined });
});

test("summary gives the median and range, leaving out what is missing", () => {
  assert.deepEqual(summary([0.5, 0.7, 0.6]), { median: 0.6, min: 0.5, max: 0.7, n: 3 });
  assert.deepEqual(summary([0.5, undefined, 0.75, 0.25, 1]), { median: 0.625, min: 0.25, max: 1, n: 4 });
  assert.equal(summary([undefined]), null);
});

test("the script builds the engine's benchmarks and prints both clocks' ratios", { timeout: 600_000 }, () => {
  const r = spawnSync(process.execPath, [script, "--rounds", "1", "--benchtime", "1x"], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split("\n");
  assert.match(lines[0], /^native bar: W2, the buffered channel's time ÷ the engine's \(≥ 0\.6\), 1 interleaved rounds/);
  const m = /^ {2}this tree: the tests' clock (\d\.\d{3}) \(.*\); the system clock (\d\.\d{3}) \(/.exec(lines[1]);
  assert.ok(m, lines[1]);
  for (const v of [m[1], m[2]]) assert.ok(Number(v) > 0 && Number(v) < 5, v);
});

test("the script names a bad argument", () => {
  for (const [args, want] of [
    [["--rounds", "0"], /--rounds wants a whole number/],
    [["--rounds"], /--rounds wants a value/],
    [["--fast"], /unknown argument --fast/],
  ]) {
    const r = spawnSync(process.execPath, [script, ...args], { encoding: "utf8" });
    assert.equal(r.status, 1);
    assert.match(r.stderr, want);
  }
});
