// The first run after load(), which a CLI, a test or a serverless function
// waits for: each sample is a fresh Node process that imports a build's
// Node entry, loads its floe.wasm and at once runs one W1-shaped task (the
// shared peers' omni-stream.mjs and lib/workload.mjs, as ab.mjs). The
// processes alternate between two builds; prints the median load and
// first-task times of each and new ÷ base, as one JSON line.
//
//   node scripts/bench/first-run.mjs BASE NEW [processes] [shape-json]
//
// BASE and NEW are folders like static/ (floe-node.mjs or floe.mjs, and
// floe.wasm); processes per build, 10 by default. A child does nothing
// else while it loads, as such a script does: no timer, no I/O.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [baseDir, newDir, procsArg, shapeArg] = process.argv.slice(2);
if (!baseDir || !newDir) {
  console.error("usage: node scripts/bench/first-run.mjs BASE NEW [processes] [shape-json]");
  process.exit(2);
}
const procs = Number(procsArg ?? 10);
if (!Number.isInteger(procs) || procs < 1) {
  console.error(`first-run: processes ${JSON.stringify(procsArg)}: want a positive integer`);
  process.exit(2);
}
let shape;
try {
  shape = { T: 20, D: 200, K: 4, F: 10, ...JSON.parse(shapeArg ?? "{}") };
} catch (e) {
  console.error(`first-run: the shape ${JSON.stringify(shapeArg)} is not JSON: ${e.message}`);
  process.exit(2);
}
const peers = resolve(process.env.FLOE_SHARED ?? join(import.meta.dirname, "../../../shared"), "peers");
const meta = pathToFileURL(join(import.meta.dirname, "meta.mjs")).href;

function entryOf(dir) {
  const entry = ["floe-node.mjs", "floe.mjs"].map((f) => join(resolve(dir), f)).find((f) => existsSync(f));
  if (!entry || !existsSync(join(dir, "floe.wasm"))) {
    console.error(`first-run: ${dir} has no floe.mjs and floe.wasm`);
    process.exit(2);
  }
  return { entry: pathToFileURL(entry).href, wasm: pathToFileURL(join(resolve(dir), "floe.wasm")).href };
}

// The child's program: the workload's modules are imported before the
// clock starts; the build's entry, its load and the task after.
//
// The child writes its line and kills itself rather than exit: Node 24's
// exit can deadlock while V8 still compiles JavaScript in the background
// (nodejs/node#54918), as 3 processes in 20 did here right after their
// task. A child that has written nothing after two minutes is killed and
// reported.
function program({ entry, wasm }) {
  return `import { writeSync } from "node:fs";
const wl = await import(${JSON.stringify(pathToFileURL(join(peers, "lib/workload.mjs")).href)});
const { makeStream, consume } = await import(${JSON.stringify(pathToFileURL(join(peers, "omni-stream.mjs")).href)});
const { benchMeta } = await import(${JSON.stringify(meta)});
const shape = ${JSON.stringify(shape)};
const { llmTurn, toolRun } = makeStream(wl, { ts: false });
const t0 = performance.now();
const { load } = await import(${JSON.stringify(entry)});
const floe = await load({ wasm: new URL(${JSON.stringify(wasm)}) });
const t1 = performance.now();
let turn = 0;
const session = floe.createSession({
  meta: benchMeta("session-2026-01-01-00-00-00-00000001"),
  store: false,
  llm: { streamGenerate: () => llmTurn(shape, turn++) },
  environment: { executeTool: ({ toolCall }) => toolRun(shape, toolCall.payload.tool_call_id) },
});
const c = wl.newCounter();
for await (const m of session.run("go", { approve: async () => "allow" })) consume(c, m);
const t2 = performance.now();
if (turn !== shape.T) throw new Error("first-run: " + turn + " requests, want " + shape.T);
writeSync(1, JSON.stringify({ loadMs: t1 - t0, taskMs: t2 - t1 }) + "\\n");
process.kill(process.pid, "SIGKILL");`;
}

const builds = [entryOf(baseDir), entryOf(newDir)].map(program);
const samples = [[], []];
for (let i = 0; i < procs; i++) {
  // Each build goes first in every other pair.
  for (const b of i % 2 ? [1, 0] : [0, 1]) {
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", builds[b]], { encoding: "utf8", timeout: 120_000 });
    if (r.signal !== "SIGKILL" || !r.stdout.endsWith("\n")) {
      const how = r.error?.code === "ETIMEDOUT" ? "no result in two minutes" : r.signal ?? "exit " + r.status;
      console.error(`first-run: a child of ${b ? newDir : baseDir} failed (${how}): ${r.stderr.trim()}`);
      process.exit(1);
    }
    samples[b].push(JSON.parse(r.stdout));
  }
}
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
const of = (b, k) => median(samples[b].map((s) => s[k]));
console.log(
  JSON.stringify({
    shape,
    procs,
    base: { loadMs: +of(0, "loadMs").toFixed(1), taskMs: +of(0, "taskMs").toFixed(1) },
    new: { loadMs: +of(1, "loadMs").toFixed(1), taskMs: +of(1, "taskMs").toFixed(1) },
    taskRatio: +(of(1, "taskMs") / of(0, "taskMs")).toFixed(3),
  }),
);
