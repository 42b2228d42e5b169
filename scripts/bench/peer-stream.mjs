// A peer of the shared agent-loop benchmark with no engine at all: the
// workload's own stream (omni-stream.mjs, the generators peer-floe.mjs
// hands Floe), drained in the order an agent loop drains it — a turn's
// model stream, then its tool calls' streams concurrently — into the same
// consumer. Its time is what the workload itself costs every peer that
// reads it, so floe − stream is Floe's own time, and the "ts" variant
// shows what the timestamps the reference's builders write
// (new Date().toISOString() per message) cost the workload before any
// engine sees them.
//
//   FLOE_PEERS=<shared/peers copy> node peer-stream.mjs --workload W1|W2 [--variant ts]
//
// Run by scripts/bench/peers.sh through run-all.mjs --extra.
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

if (!process.env.FLOE_PEERS) throw new Error("peer-stream: set FLOE_PEERS to the peers folder");
const peersDir = resolve(process.env.FLOE_PEERS);
const imp = (p) => import(pathToFileURL(join(peersDir, p)).href);
const wl = await imp("lib/workload.mjs");
const { consume, makeStream } = await imp("omni-stream.mjs");
const { bench, newCounter, parseArgs } = wl;

const { variant } = parseArgs();
if (variant !== undefined && variant !== "ts") throw new Error(`unknown variant ${variant}`);
const { llmTurn, toolRun } = makeStream(wl, { ts: variant === "ts" });

async function runOnce(p) {
  const c = newCounter();
  for (let t = 0; t < p.T; t++) {
    const calls = [];
    const turn = llmTurn(p, t);
    for (;;) {
      const r = await turn.next();
      if (r.done) break;
      consume(c, r.value);
      if (r.value.payload.type === "tool_call") calls.push(r.value.payload.tool_call_id);
    }
    await Promise.all(
      calls.map(async (id) => {
        for await (const m of toolRun(p, id)) consume(c, m);
      }),
    );
  }
  return c;
}

await bench("stream", runOnce);
process.exit(process.exitCode ?? 0);
