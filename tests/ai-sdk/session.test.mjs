// floe/ai-sdk driving whole Floe sessions with the AI SDK's real providers
// against loopback servers: a tool call approved and its output sent back
// in the next request (asserted on the request bodies the server got), a
// prompt's image, Anthropic thinking whose signature goes back, a resume
// through loadHistory, and an abort mid-stream that closes the connection.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { createAnthropic } from "@ai-sdk/anthropic";
import { fromAISDK } from "../../static/ai-sdk.mjs";
import { checkStream } from "../../static/test.mjs";
import { floe, meta, collect, find, instantClock } from "../node/helpers.mjs";
import { replayServer, openaiStream, anthropicStream, SSE_HEADERS } from "../node/replay.mjs";

const PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==";

const readFile = floe.tool({
  name: "read_file",
  description: "Reads a file",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  execute: ({ path }) => `contents of ${path}`,
});

/** A server answering request k with replies[k] (an SSE body); the last repeats. */
async function server(t, replies) {
  const srv = await replayServer(t, async (req, res, body, entry) => {
    res.writeHead(200, SSE_HEADERS);
    res.end(replies[Math.min(srv.requests.indexOf(entry), replies.length - 1)]);
  });
  return srv;
}

test("openai-compatible: a tool call, approved, and its output in the next request; the prompt's image", async (t) => {
  const srv = await server(t, [
    openaiStream({ text: ["Let me ", "look."], calls: [{ id: "call_1", name: "read_file", args: ['{"path":', '"a.md"}'] }] }),
    openaiStream({ text: ["It says ", "hi."], usage: { prompt_tokens: 30, completion_tokens: 4 } }),
  ]);
  const model = createOpenAICompatible({ name: "compat", baseURL: `${srv.url}/v1`, apiKey: "sk-test", includeUsage: true }).chatModel("llama3.2");
  const llm = fromAISDK(model, { temperature: 0.5 });
  assert.equal(llm.provider, "compat.chat");
  assert.equal(llm.modelId, "llama3.2");
  const session = floe.createSession({ meta: { ...meta(), system_prompt: "Be brief." }, store: false, llm, tools: [readFile], clock: instantClock() });
  const asked = [];
  const msgs = await collect(
    session.run([floe.msg.userText("Read a.md; and this image?"), { type: "model_msg", payload: { type: "image_url", role: "user", image_url: PNG } }], {
      approve: (call) => (asked.push(call.payload.name), "allow"),
    }),
  );
  await session.close();
  assert.deepEqual(checkStream(msgs), []);
  assert.deepEqual(asked, ["read_file"]);
  assert.deepEqual(find(msgs, "approval_decision").map((m) => m.payload.decision), ["allow"]);
  assert.deepEqual(find(msgs, "tool_call").map((m) => [m.payload.tool_call_id, m.payload.arguments]), [["call_1", '{"path":"a.md"}']]);
  assert.deepEqual(find(msgs, "text").filter((m) => m.payload.role === "assistant").map((m) => m.payload.text), ["Let me look.", "It says hi."]);
  assert.deepEqual(find(msgs, "token_usage").map((m) => [m.payload.request.total, m.payload.session.total]), [[15, 15], [34, 49]]);
  assert.equal(find(msgs, "request_end").every((m) => m.payload.status === "completed"), true);

  assert.equal(srv.requests.length, 2);
  const [first, second] = srv.requests.map((r) => JSON.parse(r.body));
  assert.equal(first.temperature, 0.5);
  assert.deepEqual(first.tools.map((x) => [x.type, x.function.name, x.function.parameters.required]), [["function", "read_file", ["path"]]]);
  assert.deepEqual(first.messages[0], { role: "system", content: "Be brief." });
  assert.deepEqual(first.messages[1].content, [
    { type: "text", text: "Read a.md; and this image?" },
    { type: "image_url", image_url: { url: PNG } },
  ]);
  // The next request: the same conversation, the reply, the tool's output.
  assert.deepEqual(second.messages.slice(0, 2), first.messages);
  assert.equal(second.messages[2].role, "assistant");
  assert.equal(second.messages[2].content, "Let me look.");
  assert.deepEqual(second.messages[2].tool_calls.map((c) => [c.id, c.function.name, c.function.arguments]), [["call_1", "read_file", '{"path":"a.md"}']]);
  assert.deepEqual(second.messages[3], { role: "tool", tool_call_id: "call_1", content: "contents of a.md" });
  assert.equal(second.messages.length, 4);
});

test("anthropic: thinking's signature goes back; a resumed session's loadHistory carries it on; session tokens count on", async (t) => {
  const srv = await server(t, [
    anthropicStream({ thinking: "The user wants a.md.", text: ["Reading."], calls: [{ id: "toolu_1", name: "read_file", args: ['{"path":"a.md"}'] }] }),
    anthropicStream({ text: ["It says hi."], usage: { input_tokens: 40, output_tokens: 6 } }),
    anthropicStream({ text: ["Still hi."], usage: { input_tokens: 60, output_tokens: 3 } }),
  ]);
  const model = createAnthropic({ baseURL: `${srv.url}/v1`, apiKey: "sk-test" })("claude-sonnet-4-5");
  const id = floe.newSessionId();
  const session = floe.createSession({ meta: meta(id), store: "memory", llm: fromAISDK(model, { maxOutputTokens: 30000 }), tools: [readFile], clock: instantClock() });
  const msgs = await collect(session.run("Read a.md", { approve: () => "allow", thinkingLevel: "high" }));
  await session.close();
  assert.deepEqual(checkStream(msgs), []);
  const [thinking] = find(msgs, "thinking");
  assert.equal(thinking.payload.thinking, "The user wants a.md.");
  assert.deepEqual(thinking.payload.fidelity, { providerMetadata: { anthropic: { signature: "c2lnbmF0dXJl" } } });

  const bodies = () => srv.requests.map((r) => JSON.parse(r.body));
  // thinkingLevel "high" reaches the provider as v4's reasoning, which it maps to its thinking.
  assert.equal(bodies()[0].thinking?.type, "enabled");
  const block = { type: "thinking", thinking: "The user wants a.md.", signature: "c2lnbmF0dXJl" };
  const turn = bodies()[1].messages;
  assert.deepEqual(turn.map((m) => m.role), ["user", "assistant", "user"]);
  assert.deepEqual(turn[1].content[0], block);
  assert.deepEqual(turn[1].content.slice(1).map((c) => c.type), ["text", "tool_use"]);
  assert.equal(turn[2].content[0].type, "tool_result");
  assert.equal(turn[2].content[0].tool_use_id, "toolu_1");

  // Resumed with a fresh model: the history comes through loadHistory, fidelity and all.
  const resumed = await floe.resumeSession(id, { llm: fromAISDK(model), store: "memory", tools: [readFile], clock: instantClock() });
  const again = await collect(resumed.run("And now?"));
  await resumed.close();
  await floe.deleteSession(id, { store: "memory" });
  assert.deepEqual(checkStream(again), []);
  const third = bodies()[2].messages;
  assert.deepEqual(third.map((m) => m.role), ["user", "assistant", "user", "assistant", "user"]);
  assert.deepEqual(third[1].content[0], block);
  assert.deepEqual(third.slice(0, 3), turn);
  assert.deepEqual(third[3].content, [{ type: "text", text: "It says hi." }]);
  assert.deepEqual(third[4].content, [{ type: "text", text: "And now?" }]);
  const before = find(msgs, "token_usage").at(-1).payload.session;
  const [usage] = find(again, "token_usage");
  assert.equal(usage.payload.request.output, 3);
  assert.equal(usage.payload.session.output, before.output + 3);
});

test("an abort mid-stream aborts the provider's fetch: the server sees the connection close, the fragment is closed", async (t) => {
  const srv = await replayServer(t, async (req, res, body, entry) => {
    res.writeHead(200, SSE_HEADERS);
    const chunk = { id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: "Hel" }, finish_reason: null }] };
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    await entry.closed; // never ends on its own
  });
  const model = createOpenAICompatible({ name: "compat", baseURL: `${srv.url}/v1` }).chatModel("m");
  const session = floe.createSession({ meta: meta(), store: false, llm: fromAISDK(model), clock: instantClock() });
  const stop = new AbortController();
  const msgs = [];
  for await (const m of session.run("Hi", { signal: stop.signal })) {
    msgs.push(m);
    if (m.payload.type === "partial_text" && m.payload.event_type === "delta") stop.abort();
  }
  await session.close();
  assert.equal(await srv.requests[0].closed, true, "the server saw the connection close before the response ended");
  assert.deepEqual(checkStream(msgs), []);
  assert.equal(find(msgs, "request_end")[0].payload.status, "aborted");
  assert.deepEqual(find(msgs, "text").filter((m) => m.payload.role === "assistant").map((m) => [m.payload.text, m.payload.stop_reason]), [["Hel", "aborted"]]);
  assert.equal(msgs.at(-1).payload.type, "abort");
});

test("a provider without its API key (none given, none in the environment) ends the run at once as auth, naming it: it was tried again five times, over a minute of backoff", async () => {
  const saved = process.env.ANTHROPIC_API_KEY;
  delete process.env.ANTHROPIC_API_KEY;
  try {
    const clock = instantClock();
    const session = floe.createSession({ meta: meta(), store: false, llm: fromAISDK(createAnthropic()("claude-sonnet-4-5")), clock });
    const msgs = await collect(session.run("Hi"));
    await session.close();
    assert.deepEqual(checkStream(msgs), []);
    assert.deepEqual(find(msgs, "request_end").map((m) => m.payload.status), ["auth"]);
    assert.match(find(msgs, "abort")[0].payload.reason, /^llm request error: anthropic\.messages: Anthropic API key is missing\./);
    assert.deepEqual(clock.sleeps, []);
  } finally {
    if (saved !== undefined) process.env.ANTHROPIC_API_KEY = saved;
  }
});

test("a call's arguments that are no JSON (a call cut short, a server giving none for a tool without parameters) go back to the model as an empty object, as the built-in adapters send them: a Chat server got them as a JSON string (\"\"), which servers that parse them (vLLM, Ollama) refuse, in every later request", async (t) => {
  const anthropic = await server(t, [
    anthropicStream({ calls: [{ id: "toolu_1", name: "read_file", args: ['{"path": "a'] }] }),
    anthropicStream({ text: ["Cut short."] }),
  ]);
  const compat = await server(t, [
    openaiStream({ calls: [{ id: "call_1", name: "now", args: [] }] }),
    openaiStream({ text: ["Noon."] }),
  ]);
  const now = floe.tool({ name: "now", description: "The time", parameters: { type: "object", properties: {} }, execute: () => "noon" });
  const models = [
    createAnthropic({ baseURL: `${anthropic.url}/v1`, apiKey: "sk-test" })("claude-sonnet-4-5"),
    createOpenAICompatible({ name: "compat", baseURL: `${compat.url}/v1`, apiKey: "sk-test" }).chatModel("llama3.2"),
  ];
  for (const model of models) {
    const session = floe.createSession({ meta: meta(), store: false, llm: fromAISDK(model), tools: [readFile, now], clock: instantClock() });
    const msgs = await collect(session.run("Go", { approve: () => "allow" }));
    await session.close();
    assert.deepEqual(checkStream(msgs), []);
    assert.deepEqual(find(msgs, "request_end").map((m) => m.payload.status), ["completed", "completed"]);
  }
  const [, toAnthropic] = anthropic.requests.map((r) => JSON.parse(r.body));
  assert.deepEqual(toAnthropic.messages[1].content.map((c) => [c.type, c.id, c.input]), [["tool_use", "toolu_1", {}]]);
  const [, toCompat] = compat.requests.map((r) => JSON.parse(r.body));
  assert.deepEqual(toCompat.messages[1].tool_calls.map((c) => [c.id, c.function.name, c.function.arguments]), [["call_1", "now", "{}"]]);
});
