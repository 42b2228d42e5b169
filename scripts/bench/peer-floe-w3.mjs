// W3 peer of the shared agent-loop benchmark (shared/peers, README "W3"):
// Floe through floe.openaiCompatible() + session.run() in Node. The model
// is the Go Chat Completions adapter inside floe.wasm, reading the W3 bytes
// through the replaced fetch of lib/w3.mjs (the `fetch` model option);
// only the response's chunks cross into Go. Tools and the consumer are
// those of peer-floe.mjs (omni-stream.mjs); every call is allowed.
//
//   FLOE_STATIC=<checkout>/static FLOE_PEERS=<shared/peers copy> \
//     node peer-floe-w3.mjs --workload W3 [--read 1024-4096] [--warmup N --iters N]
//
// Run by ./build.sh bench through run-all.mjs --extra floe@W3=<this file>.
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

for (const v of ["FLOE_STATIC", "FLOE_PEERS"]) {
  if (!process.env[v]) throw new Error(`peer-floe-w3: set ${v} (FLOE_STATIC: the static/ folder of a built checkout; FLOE_PEERS: the peers folder)`);
}
const staticDir = resolve(process.env.FLOE_STATIC);
const peersDir = resolve(process.env.FLOE_PEERS);
const imp = (p) => import(pathToFileURL(join(peersDir, p)).href);
const wl = await imp("lib/workload.mjs");
const { DEFAULT_READ, W3_BASE_URL, W3_MODEL, checkW3, createW3Fetch, w3Args } = await imp("lib/w3.mjs");
const { consume, makeStream } = await imp("omni-stream.mjs");
const { bench, newCounter } = wl;

const { variant, read } = w3Args();
if (variant) throw new Error(`unknown variant ${variant}`);

const tImport = process.hrtime.bigint();
const { load } = await import(pathToFileURL(join(staticDir, "floe.mjs")).href);
const floe = await load({ wasm: pathToFileURL(join(staticDir, "floe.wasm")) });
const loadMs = Number(process.hrtime.bigint() - tImport) / 1e6;

const { toolRun } = makeStream(wl, { ts: false });
const TOOLS = [
  {
    name: "work",
    description: "scripted async tool",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
];

let seq = 0;
async function runOnce(p) {
  const { fetch, stats } = createW3Fetch(p, { read });
  const session = floe.createSession({
    meta: {
      session_id: `session-2026-12-01-00-00-00-${(++seq).toString(16).padStart(8, "0")}`,
      provider: "openai-chat",
      model_id: W3_MODEL,
      model_context_window: 1000000,
      system_prompt: "",
      agent_state: "",
      workspace: "",
    },
    store: false,
    llm: floe.openaiCompatible({ baseURL: W3_BASE_URL, model: W3_MODEL, apiKey: "w3", fetch }),
    tools: TOOLS,
    environment: { executeTool: ({ toolCall }) => toolRun(p, toolCall.payload.tool_call_id) },
    config: { maxReconnects: 0 },
  });
  const c = newCounter();
  const usage = { input: 0, output: 0 };
  for await (const m of session.run("run the scripted task", { approve: async () => "allow" })) {
    consume(c, m);
    const x = m.payload;
    if (x.type === "token_usage") {
      usage.input += x.request.total - x.request.output; // the adapter's total: prompt + completion
      usage.output += x.request.output;
    } else if (x.type === "request_end" && x.status !== "completed") {
      throw new Error(`request failed: ${x.status}: ${x.error_message}`);
    }
  }
  await session.close();
  checkW3(p, stats, usage);
  c.inputTokens = usage.input;
  c.outputTokens = usage.output;
  c.requests = stats.requests;
  c.wireBytes = stats.bytes;
  c.reads = stats.reads;
  return c;
}

await bench("floe", runOnce, { variantName: "openaiCompatible", wasm: "floe.wasm", loadMs, read: read ?? DEFAULT_READ });
process.exit(process.exitCode ?? 0);
