// The cycles of long-lived.test.mjs, one function each: a session created,
// run (or abandoned at some point) and closed, with the program's one
// long-lived signal where a run takes one. Also run by a child script.
import assert from "node:assert/strict";
import { floe, meta } from "./helpers.mjs";
import { tool, transcript } from "../../static/floe-node.mjs";
import { mockModel } from "../../static/test.mjs";

const drain = async (stream) => {
  for await (const _ of stream);
};

// A model that starts a text, then waits for its abort.
export const hanging = () => ({
  async *streamGenerate({ signal }) {
    yield { type: "model_msg", payload: { type: "partial_text", role: "assistant", event_type: "start", text: "" } };
    if (!signal.aborted) await new Promise((r) => signal.addEventListener("abort", r, { once: true }));
    return { status: "aborted" };
  },
});

const echo = tool({ name: "echo", parameters: { type: "object", properties: {} }, execute: () => "ok" });
const boom = tool({
  name: "boom",
  parameters: { type: "object", properties: {} },
  execute: () => {
    throw new Error("tool threw");
  },
});
const sse = [
  'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"}}]}',
  'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}',
  "data: [DONE]",
  "",
].join("\n\n");
// A fetch whose stream sends one chunk, then waits for the request's abort.
const stalling = async (_url, init) =>
  new Response(
    new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(sse.split("\n\n")[0] + "\n\n"));
        init.signal.addEventListener("abort", () => c.error(new Error("aborted")), { once: true });
      },
    }),
    { headers: { "content-type": "text/event-stream" } },
  );
const quiet = { onDiagnostic: () => {} };

export const kinds = (signal) => ({
  async tools() {
    const s = floe.createSession({ meta: meta(), llm: mockModel([[{ toolCall: { name: "echo" } }, { toolCall: { name: "boom" } }], "done"]), tools: [echo, boom], store: false });
    await drain(s.run("go", { approve: () => "allow", signal }));
    await s.close();
  },
  async throwing() {
    const s = floe.createSession({ meta: meta(), llm: mockModel([{ toolCall: { name: "echo" } }, "done"]), tools: [echo], store: false, ...quiet });
    await drain(s.run("go", { approve: () => { throw new Error("approver threw"); }, signal }));
    const m = floe.createSession({ meta: meta(), llm: { async *streamGenerate() { throw new Error("model threw"); } }, store: false, config: { maxReconnects: 0 } });
    await drain(m.run("go", { signal }));
    await s.close();
    await m.close();
  },
  async broken() {
    const s = floe.createSession({ meta: meta(), llm: hanging(), store: false });
    for await (const _ of s.run("go", { signal })) break;
    await s.close();
  },
  async aborted() {
    const ac = new AbortController();
    const s = floe.createSession({ meta: meta(), llm: hanging(), store: false });
    for await (const m of s.run("go", { signal: AbortSignal.any([signal, ac.signal]) })) if (m.payload.type === "partial_text") ac.abort();
    await s.close();
  },
  async closedMidRun() {
    const s = floe.createSession({ meta: meta(), llm: hanging(), store: "memory" });
    const it = s.run("go", { signal })[Symbol.asyncIterator]();
    await it.next();
    await s.close();
    await floe.deleteSession(s.id, { store: "memory" });
  },
  async steeredAndCompacted() {
    const s = floe.createSession({ meta: meta(), llm: mockModel(["hi", "a summary", "again"]), store: false });
    const run = s.run("go", { signal });
    const first = await run.next();
    assert.equal(first.done, false);
    const steer = s.steer("more");
    if (steer !== false) s.unsteer(steer);
    await drain(run);
    await drain(s.compact({ signal }));
    await s.close();
  },
  async refused() {
    const id = meta().session_id;
    const a = floe.createSession({ meta: meta(id), llm: hanging(), store: "memory" });
    const b = floe.createSession({ meta: meta(id), llm: hanging(), store: "memory", ...quiet });
    const it = a.run("go", { signal })[Symbol.asyncIterator]();
    await it.next();
    assert.throws(() => b.run("too", { signal }), (e) => e.code === "session_busy");
    await a.close();
    await b.close();
    await floe.deleteSession(id, { store: "memory" });
  },
  async subagentAndTranscript() {
    const sub = floe.subagentTool({ create: () => ({ llm: mockModel([{ toolCall: { name: "echo" } }, "42"]), tools: [echo] }) });
    const s = floe.createSession({ meta: meta(), llm: mockModel([{ toolCall: { name: "run_subagent", args: { prompt: "x" } } }, "done"]), tools: [sub], store: false });
    const view = transcript({ onChange: () => {} });
    for await (const m of s.run("go", { approve: () => "allow", signal })) view.push(m);
    await s.close();
  },
  async adapters() {
    const s = floe.createSession({ meta: meta(), llm: floe.openai({ model: "m", apiKey: "k", fetch: async () => new Response(sse, { headers: { "content-type": "text/event-stream" } }) }), store: false });
    await drain(s.run("go", { signal }));
    await s.close();
    const u = floe.createSession({ meta: meta(), llm: floe.openai({ model: "m", apiKey: "k", fetch: stalling }), store: false });
    for await (const m of u.run("go", { signal })) if (m.payload.type === "partial_text") break;
    await u.close();
  },
});

