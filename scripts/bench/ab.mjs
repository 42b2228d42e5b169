// One process, two builds: loads Floe from two static folders (a base and
// a new build) in this Node process and runs the same W1-shaped task
// through each, alternating, so that both see the same machine at the same
// moment. Prints one JSON line: the median wall time of each and new ÷ base.
//
//   node scripts/bench/ab.mjs BASE NEW [shape-json] [iterations] [ts|sync|ts,sync]
//
// BASE and NEW are folders like static/ (floe.mjs or floe-node.mjs, and
// floe.wasm). The shape is the workload's {T, D, K, F} (W1 by default);
// "ts" gives every input message a timestamp, as peer-floe.mjs's ts variant
// does; "sync" makes the approver return its decision at once instead of
// a Promise. The task is the shared peers' (FLOE_SHARED, ../shared by default):
// its omni-stream.mjs and lib/workload.mjs, imported as they are.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { benchMeta } from "./meta.mjs";

const [baseDir, newDir, shapeArg, itersArg, flagsArg] = process.argv.slice(2);
const flags = new Set((flagsArg ?? "").split(",").filter(Boolean));
for (const f of flags) {
  if (f !== "ts" && f !== "sync") {
    console.error(`ab: unknown flag ${JSON.stringify(f)}: want ts or sync`);
    process.exit(2);
  }
}
const approve = flags.has("sync") ? () => "allow" : async () => "allow";
if (!baseDir || !newDir) {
  console.error("usage: node scripts/bench/ab.mjs BASE NEW [shape-json] [iterations] [ts]");
  process.exit(2);
}
const peers = resolve(process.env.FLOE_SHARED ?? join(import.meta.dirname, "../../../shared"), "peers");
const wl = await import(pathToFileURL(join(peers, "lib/workload.mjs")).href);
const { consume, makeStream } = await import(pathToFileURL(join(peers, "omni-stream.mjs")).href);

let shape;
try {
  shape = { T: 20, D: 200, K: 4, F: 10, ...JSON.parse(shapeArg ?? "{}") };
} catch (e) {
  console.error(`ab: the shape ${JSON.stringify(shapeArg)} is not JSON: ${e.message}`);
  process.exit(2);
}
const iters = Number(itersArg ?? 40);
if (!Number.isInteger(iters) || iters < 2) {
  console.error(`ab: iterations ${JSON.stringify(itersArg)}: want an integer of 2 or more`);
  process.exit(2);
}
const { llmTurn, toolRun } = makeStream(wl, { ts: flags.has("ts") });

// task returns a function that runs one whole task through the build in
// dir and resolves to its wall time in milliseconds.
async function task(dir) {
  const entry = ["floe-node.mjs", "floe.mjs"].map((f) => join(resolve(dir), f)).find((f) => existsSync(f));
  if (!entry || !existsSync(join(dir, "floe.wasm"))) throw new Error(`ab: ${dir} has no floe.mjs and floe.wasm`);
  const { load } = await import(pathToFileURL(entry).href);
  const floe = await load({ wasm: pathToFileURL(join(resolve(dir), "floe.wasm")) });
  let n = 0;
  // Timed from createSession to close's end, as the peers' harness times
  // its task.
  return async () => {
    let turn = 0;
    const t = performance.now();
    const session = floe.createSession({
      meta: benchMeta(`session-2026-01-01-00-00-00-${(++n).toString(16).padStart(8, "0")}`),
      store: false,
      llm: { streamGenerate: () => llmTurn(shape, turn++) },
      environment: { executeTool: ({ toolCall }) => toolRun(shape, toolCall.payload.tool_call_id) },
    });
    const c = wl.newCounter();
    for await (const m of session.run("go", { approve })) consume(c, m);
    await session.close();
    return performance.now() - t;
  };
}

const runBase = await task(baseDir);
const runNew = await task(newDir);
for (let i = 0; i < 5; i++) {
  await runBase();
  await runNew();
}
const base = [];
const neu = [];
for (let i = 0; i < iters; i++) {
  // Each build goes first in every other pair.
  if (i % 2) {
    base.push(await runBase());
    neu.push(await runNew());
  } else {
    neu.push(await runNew());
    base.push(await runBase());
  }
}
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
console.log(JSON.stringify({ shape, ts: flags.has("ts"), sync: flags.has("sync"), iters, baseMs: +median(base).toFixed(2), newMs: +median(neu).toFixed(2), ratio: +(median(neu) / median(base)).toFixed(3) }));
process.exit(0);
