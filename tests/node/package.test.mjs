// The package as a new Node user meets it: `npm pack` of static/, installed
// from the tarball into a fresh project, and three small agents written
// from the README run there by plain `node`: one with floe.openaiCompatible
// (and the named export) against a loopback Chat Completions server, one
// with floe/test's mockModel, one with floe/ai-sdk's fromAISDK over a
// language model of the AI SDK's specification written by hand (as a
// provider package's is); each with a tool() and a transcript(); and tsc
// over a TypeScript file importing "@floehq/floe/ai-sdk" from the install.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { replayServer, openaiStream, SSE_HEADERS } from "./replay.mjs";

const exec = promisify(execFile);
const STATIC = fileURLToPath(new URL("../../static", import.meta.url));
const TSC = fileURLToPath(new URL("../types/node_modules/typescript/bin/tsc", import.meta.url));

async function run(cmd, args, cwd, env = {}) {
  try {
    return (await exec(cmd, args, { cwd, timeout: 60_000, maxBuffer: 16 << 20, env: { ...process.env, ...env } })).stdout;
  } catch (e) {
    throw new Error(`${cmd} ${args.join(" ")} failed: ${e.message}\n${e.stdout ?? ""}${e.stderr ?? ""}`);
  }
}

// An agent as the README's Models section writes one; BASE_URL comes from the test.
const AGENT = `
import floeDefault, { load, tool, transcript, openaiCompatible, httpOutcome, readLines } from "@floehq/floe";

const floe = await load();
const add = tool({
  name: "add",
  description: "Adds two numbers",
  parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
  execute: ({ a, b }) => String(a + b),
});
const models = [
  floe.openaiCompatible({ baseURL: process.env.BASE_URL, model: "llama3.2" }),
  openaiCompatible({ baseURL: process.env.BASE_URL, model: "llama3.2" }),
  floeDefault.openaiCompatible({ baseURL: process.env.BASE_URL, model: "llama3.2" }),
];
const out = [];
for (const llm of models) {
  const session = floe.createSession({ llm, tools: [add], system: "Use the tool." });
  const view = transcript();
  await view.consume(session.run("What is 2 + 3?", { approve: async () => "allow" }));
  out.push({ status: view.status, text: view.text, card: [view.card("call_add").status, view.card("call_add").output] });
  await session.close();
}
// The helpers for a model of your own, by name and on the loaded floe.
const failed = await httpOutcome(new Response('{"error":"no key"}', { status: 401 }), "mine");
const lines = [];
for await (const l of floe.readLines(new Response('{"a":1}\\r\\n{"b":2}').body)) lines.push(l);
out.push({ failed, lines, same: floe.httpOutcome === httpOutcome && floeDefault.readLines === readLines });
console.log(JSON.stringify(out));
`;

// The scripted model of floe/test, as the README's Testing section writes it.
const MOCK = `
import { load, tool } from "@floehq/floe";
import { mockModel, assertStream } from "@floehq/floe/test";

const floe = await load();
const add = tool({ name: "add", parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } }, execute: ({ a, b }) => String(a + b) });
const llm = mockModel([{ toolCall: { name: "add", args: { a: 2, b: 3 }, id: "x" } }, "It is 5."]);
const view = floe.transcript();
const messages = [];
for await (const m of floe.createSession({ llm, tools: [add] }).run("2 + 3?", { approve: () => "allow" })) {
  messages.push(m);
  view.push(m);
}
view.end();
assertStream(messages);
console.log(JSON.stringify({ status: view.status, text: view.text, output: view.card("x").output, sent: llm.calls[1].newMessages.map((m) => m.payload.output) }));
`;

// fromAISDK as the README's "Any AI SDK model" writes it, with a model of
// specification v4 by hand: no package of the AI SDK is installed.
const AISDK = `
import { load, tool, transcript } from "@floehq/floe";
import { fromAISDK } from "@floehq/floe/ai-sdk";

const floe = await load();
const add = tool({ name: "add", parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } }, execute: ({ a, b }) => String(a + b) });
const finish = (unified) => ({ type: "finish", finishReason: { unified, raw: unified }, usage: { inputTokens: { total: 10 }, outputTokens: { total: 5 } } });
const prompts = [];
const model = {
  specificationVersion: "v4",
  provider: "hand.chat",
  modelId: "m1",
  async doStream({ prompt, tools }) {
    prompts.push({ prompt, tools: tools.map((t) => t.name) });
    const parts = prompt.some((m) => m.role === "tool")
      ? [{ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: "It is " }, { type: "text-delta", id: "t", delta: "5." }, { type: "text-end", id: "t" }, finish("stop")]
      : [{ type: "tool-input-start", id: "call_add", toolName: "add" }, { type: "tool-input-delta", id: "call_add", delta: '{"a":2,' },
         { type: "tool-input-delta", id: "call_add", delta: '"b":3}' }, { type: "tool-input-end", id: "call_add" },
         { type: "tool-call", toolCallId: "call_add", toolName: "add", input: '{"a":2,"b":3}' }, finish("tool-calls")];
    return { stream: new ReadableStream({ start(c) { for (const p of [{ type: "stream-start", warnings: [] }, ...parts]) c.enqueue(p); c.close(); } }) };
  },
};
const llm = fromAISDK(model, { temperature: 0 });
const session = floe.createSession({ llm, tools: [add], store: false });
const view = transcript();
await view.consume(session.run("What is 2 + 3?", { approve: () => "allow" }));
await session.close();
let refused;
try {
  fromAISDK({ ...model, specificationVersion: "v2" });
} catch (e) {
  refused = [e.code, e.message];
}
console.log(JSON.stringify({ status: view.status, text: view.text, card: [view.card("call_add").status, view.card("call_add").output], provider: llm.provider,
  sent: prompts[1].prompt.at(-1), tools: prompts.map((p) => p.tools), refused }));
`;

// The types of "@floehq/floe/ai-sdk" as the install resolves them.
const AISDK_TS = `
import { load } from "@floehq/floe";
import { fromAISDK, type AISDKLanguageModel, type FromAISDKOptions } from "@floehq/floe/ai-sdk";

const model: AISDKLanguageModel = { specificationVersion: "v4", provider: "p", modelId: "m", doStream: async () => ({ stream: { getReader: () => null } }) };
const options: FromAISDKOptions = { maxOutputTokens: 100, providerOptions: ({ thinkingLevel }) => ({ p: { effort: thinkingLevel ?? null } }) };
const floe = await load();
const llm = fromAISDK(model, options);
const provider: string = llm.provider;
floe.createSession({ llm, store: false });
void provider;
// @ts-expect-error a specification v2 model is refused
fromAISDK({ ...model, specificationVersion: "v2" });
`;

test("npm pack of static/, installed into a fresh Node project: a README agent with openaiCompatible, one with floe/test, one with floe/ai-sdk and its types", { timeout: 300_000 }, async (t) => {
  const work = await mkdtemp(join(tmpdir(), "floe-newuser-"));
  t.after(() => rm(work, { recursive: true, force: true }));
  const [packed] = JSON.parse(await run("npm", ["pack", "--json", "--pack-destination", work], STATIC));
  assert.ok(packed.files.some((f) => f.path === "floe.wasm"), "the tarball holds floe.wasm");
  const app = join(work, "app");
  await run("mkdir", ["-p", app], work);
  await writeFile(join(app, "package.json"), JSON.stringify({ name: "new-user", private: true, type: "module" }));
  // The tarball has no dependencies: nothing is fetched.
  await run("npm", ["install", "--offline", "--no-audit", "--no-fund", join(work, packed.filename)], app);
  await writeFile(join(app, "agent.mjs"), AGENT);
  await writeFile(join(app, "mock.mjs"), MOCK);

  const srv = await replayServer(t, async (req, res, text) => {
    res.writeHead(200, SSE_HEADERS);
    const body = JSON.parse(text);
    const answered = (body.messages ?? []).some((m) => m.role === "tool");
    res.end(answered ? openaiStream({ text: ["It is ", "5."] }) : openaiStream({ calls: [{ id: "call_add", name: "add", args: ['{"a":2,', '"b":3}'] }] }));
  });
  const out = JSON.parse(await run("node", ["agent.mjs"], app, { BASE_URL: `${srv.url}/v1` }));
  assert.deepEqual(out.slice(0, 3), Array(3).fill({ status: "done", text: "It is 5.", card: ["done", "5"] }), "the loaded, named and default factories alike");
  assert.deepEqual(out[3], { failed: { status: "auth", errorMessage: "mine: HTTP 401: no key" }, lines: ['{"a":1}', '{"b":2}'], same: true });
  assert.equal(srv.requests.length, 6);
  for (const [i, r] of srv.requests.entries()) {
    assert.equal(r.url, "/v1/chat/completions");
    const body = JSON.parse(r.body);
    assert.equal(body.model, "llama3.2");
    const tool = body.messages.filter((m) => m.role === "tool");
    assert.deepEqual(tool.map((m) => [m.tool_call_id, m.content]), i % 2 ? [["call_add", "5"]] : [], `request ${i}: the tool's output goes back with the second request`);
  }

  const mock = JSON.parse(await run("node", ["mock.mjs"], app));
  assert.deepEqual(mock, { status: "done", text: "It is 5.", output: "5", sent: ["5"] });

  await writeFile(join(app, "aisdk.mjs"), AISDK);
  const aisdk = JSON.parse(await run("node", ["aisdk.mjs"], app));
  assert.deepEqual(aisdk, {
    status: "done", text: "It is 5.", card: ["done", "5"], provider: "hand.chat",
    sent: { role: "tool", content: [{ type: "tool-result", toolCallId: "call_add", toolName: "add", output: { type: "text", value: "5" } }] },
    tools: [["add"], ["add"]],
    refused: ["bad_argument", 'fromAISDK: model.specificationVersion: "v2" is not supported (supported: v3, v4; AI SDK 6 and later)'],
  });
  await writeFile(join(app, "aisdk.ts"), AISDK_TS);
  await writeFile(join(app, "tsconfig.json"), JSON.stringify({
    compilerOptions: { target: "ES2022", module: "nodenext", moduleResolution: "nodenext", lib: ["ES2022"], types: [], strict: true, exactOptionalPropertyTypes: true, noEmit: true },
    files: ["aisdk.ts"],
  }));
  assert.equal(await run("node", [TSC, "-p", "tsconfig.json"], app), "");
});
