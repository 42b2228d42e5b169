#!/usr/bin/env node
// Throughput of session.run() through floe.wasm against a plain JavaScript
// async generator handing the same message objects to the same consumer,
// in one Node process.
//
//   node scripts/bench/wasm-bench.mjs [--iters N] [--quick] [--only stream|tools] [--wasm FILE]
//
// Workloads (the shapes of the peers' W2 and W1):
//   stream: 1 turn, 100,000 streamed text deltas of 8 bytes, no tools;
//   tools:  20 turns × (200 text deltas + 4 concurrent tool calls, each
//           streamed in 4 argument deltas of 10 bytes, whose tools yield 10
//           output fragments of 16 bytes); the last turn calls no tools.
import { load } from "../../static/floe-node.mjs";
import { benchMeta } from "./meta.mjs";

const W = {
  stream: { T: 1, D: 100000, K: 0, F: 0 },
  tools: { T: 20, D: 200, K: 4, F: 10 },
};
const TEXT_DELTA = "abcdefg ";
const FRAGMENT = "out-fragment-16\n";

function toolArgsJson(t, k) {
  const head = `{"path":"/ws/t${String(t).padStart(2, "0")}/c${k}/`;
  const tail = `.txt"}`;
  return head + "a".repeat(Math.max(0, 40 - head.length - tail.length)) + tail;
}
function argDeltas(json) {
  const size = Math.ceil(json.length / 4);
  return [0, 1, 2, 3].map((i) => json.slice(i * size, (i + 1) * size));
}
const callId = (t, k) => `call_${t}_${k}`;

const model = (type, payload) => ({ type: "model_msg", payload: { type, ...payload } });
const counts = { cache_read: 0, cache_write: 0, output: 10, total: 100 };
const usage = { type: "event_msg", payload: { type: "token_usage", session: counts, request: counts } };

// The messages of turn t (built once, shared by both sides).
function turnMessages(p, t) {
  const out = [model("partial_text", { role: "assistant", event_type: "start", text: "" })];
  for (let i = 0; i < p.D; i++) out.push(model("partial_text", { role: "assistant", event_type: "delta", text: TEXT_DELTA }));
  out.push(model("partial_text", { role: "assistant", event_type: "stop", text: "" }));
  out.push(model("text", { role: "assistant", text: TEXT_DELTA.repeat(p.D), stop_reason: "completed" }));
  if (p.K > 0 && t < p.T - 1) {
    for (let k = 0; k < p.K; k++) {
      const id = callId(t, k);
      const args = toolArgsJson(t, k);
      const base = { role: "assistant", name: "read", tool_call_id: id };
      out.push(model("partial_tool_call", { ...base, event_type: "start", arguments: "" }));
      for (const d of argDeltas(args)) out.push(model("partial_tool_call", { ...base, event_type: "delta", arguments: d }));
      out.push(model("partial_tool_call", { ...base, event_type: "stop", arguments: "" }));
      out.push(model("tool_call", { ...base, arguments: args, stop_reason: "completed" }));
    }
  }
  out.push(usage);
  return out;
}
function toolMessages(p, id) {
  const base = { role: "user", tool_call_id: id };
  const out = [model("partial_tool_call_output", { ...base, event_type: "start", output: "" })];
  for (let i = 0; i < p.F; i++) out.push(model("partial_tool_call_output", { ...base, event_type: "delta", output: FRAGMENT }));
  out.push(model("partial_tool_call_output", { ...base, event_type: "stop", output: "" }));
  out.push(model("tool_call_output", { ...base, output: FRAGMENT.repeat(p.F), stop_reason: "completed" }));
  return out;
}
function script(p) {
  const turns = [];
  const tools = new Map();
  for (let t = 0; t < p.T; t++) {
    turns.push(turnMessages(p, t));
    if (p.K > 0 && t < p.T - 1) for (let k = 0; k < p.K; k++) tools.set(callId(t, k), toolMessages(p, callId(t, k)));
  }
  return { turns, tools };
}

async function* llmTurn(msgs) {
  for (const m of msgs) yield m;
  return { status: "completed" };
}
async function* toolRun(msgs) {
  for (const m of msgs) yield m;
}

// The consumer: counts messages and the payload bytes of the deltas.
function newCounter() {
  return { messages: 0, textBytes: 0, argBytes: 0, outBytes: 0 };
}
function consume(c, m) {
  c.messages++;
  const p = m.payload;
  if (p.event_type === "delta") {
    switch (p.type) {
      case "partial_text":
        c.textBytes += p.text.length;
        break;
      case "partial_tool_call":
        c.argBytes += p.arguments.length;
        break;
      case "partial_tool_call_output":
        c.outBytes += p.output.length;
        break;
    }
  }
}

// Baseline: one async generator yields every turn's model messages, then
// each tool's messages, through plain async generators.
async function baseline(p, s) {
  async function* all() {
    for (let t = 0; t < p.T; t++) {
      yield* llmTurn(s.turns[t]);
      if (p.K > 0 && t < p.T - 1) for (let k = 0; k < p.K; k++) yield* toolRun(s.tools.get(callId(t, k)));
    }
  }
  const c = newCounter();
  for await (const m of all()) consume(c, m);
  return c;
}

const meta = benchMeta("bench");

async function viaFloe(floe, p, s) {
  let turn = 0;
  const session = floe.createSession({
    meta,
    llm: { streamGenerate: () => llmTurn(s.turns[turn++]) },
    environment: { executeTool: ({ toolCall }) => toolRun(s.tools.get(toolCall.payload.tool_call_id)) },
  });
  const c = newCounter();
  for await (const m of session.run("go", { approve: () => "allow" })) consume(c, m);
  await session.close();
  if (turn !== p.T) throw new Error(`floe made ${turn} requests, want ${p.T}`);
  return c;
}

function expected(p) {
  const toolTurns = p.K > 0 ? p.T - 1 : 0;
  return { textBytes: p.T * p.D * 8, argBytes: toolTurns * p.K * 40, outBytes: toolTurns * p.K * p.F * 16 };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

async function measure(run, p, warmup, iters) {
  let c;
  for (let i = 0; i < warmup; i++) await run();
  const walls = [];
  for (let i = 0; i < iters; i++) {
    const t0 = process.hrtime.bigint();
    c = await run();
    walls.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const e = expected(p);
  if (c.textBytes !== e.textBytes || c.argBytes !== e.argBytes || c.outBytes !== e.outBytes) {
    throw new Error(`payload bytes ${JSON.stringify(c)}, want ${JSON.stringify(e)}`);
  }
  const ms = median(walls);
  return { messages: c.messages, ms, perSec: c.messages / (ms / 1000) };
}

async function main() {
  const argv = process.argv.slice(2);
  const quick = argv.includes("--quick");
  const at = argv.indexOf("--iters");
  const iters = at >= 0 ? Number(argv[at + 1]) : quick ? 1 : 3;
  const only = argv.indexOf("--only");
  const wasmAt = argv.indexOf("--wasm");
  const floe = await load(wasmAt >= 0 ? { wasm: new URL(argv[wasmAt + 1], `file://${process.cwd()}/`) } : {});
  const fmt = (n) => Math.round(n).toLocaleString("en-US");
  console.log("workload                   side        messages      ms   messages/s   ratio");
  for (const [name, p] of Object.entries(W)) {
    if (only >= 0 && argv[only + 1] !== name) continue;
    const s = script(p);
    const base = await measure(() => baseline(p, s), p, 1, iters);
    const wasm = await measure(() => viaFloe(floe, p, s), p, 1, iters);
    const label = name === "stream" ? "stream (100k deltas)" : "tools (20 turns, 4 tools)";
    const row = (side, r, ratio) =>
      console.log(
        `${label.padEnd(27)}${side.padEnd(10)}${fmt(r.messages).padStart(10)}${r.ms.toFixed(1).padStart(8)}${fmt(r.perSec).padStart(13)}${ratio.padStart(8)}`,
      );
    row("js-gen", base, "1.00");
    row("floe", wasm, (wasm.perSec / base.perSec).toFixed(3));
  }
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
