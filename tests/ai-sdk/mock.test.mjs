// floe/ai-sdk with the AI SDK's own mock models (ai/test's
// MockLanguageModelV4 and V3): what doStream is given, the parts that are
// rare on the wire (interleaved tool input, text-encoded input, error
// parts, finish reasons, unknown parts), a failed attempt's input sent
// again, a model wrapped in middleware (wrapLanguageModel), and the bad
// inputs fromAISDK refuses.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runInNewContext } from "node:vm";
import { MockLanguageModelV3, MockLanguageModelV4, simulateReadableStream } from "ai/test";
import { APICallError, LoadAPIKeyError, LoadSettingError, NoSuchModelError, wrapLanguageModel, extractReasoningMiddleware, defaultSettingsMiddleware } from "ai";
import { createProviderStreamError } from "@ai-sdk/provider-utils";
import { fromAISDK } from "../../static/ai-sdk.mjs";
import { checkStream } from "../../static/test.mjs";
import { floe, meta, collect, find, instantClock } from "../node/helpers.mjs";

const usage = (input, output) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 2, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});
const finish = (unified = "stop", u = usage(10, 5)) => ({ type: "finish", finishReason: { unified, raw: unified }, usage: u });
const stream = (parts) => ({ stream: simulateReadableStream({ chunks: parts, initialDelayInMs: null, chunkDelayInMs: null }) });

/** A mock model of version v whose request k streams replies[k] (parts, or a function that throws); calls holds doStream's options. */
function mock(v, ...replies) {
  const calls = [];
  const Mock = v === "v3" ? MockLanguageModelV3 : MockLanguageModelV4;
  const model = new Mock({
    provider: "mock",
    modelId: "mock-1",
    doStream: async (options) => {
      calls.push(options);
      const r = replies[Math.min(calls.length, replies.length) - 1];
      return typeof r === "function" ? r() : stream(r);
    },
  });
  return { model, calls };
}

const run = async (llm, prompt = "Hi", opts = {}, extra = {}) => {
  const session = floe.createSession({ meta: meta(), store: false, llm, clock: instantClock(), ...extra });
  const msgs = await collect(session.run(prompt, opts));
  await session.close();
  return msgs;
};
const ends = (msgs) => find(msgs, "request_end").map((m) => [m.payload.status, m.payload.error_message ?? ""]);
const bodies = (msgs) => msgs.filter((m) => m.type === "model_msg" && m.payload.role === "assistant").map((m) => [m.payload.type, m.payload.event_type ?? "", m.payload.text ?? m.payload.thinking ?? m.payload.arguments]);

test("v4: reasoning with its metadata, a tool call whose input streams around a text, text-encoded input, unknown parts; what doStream gets", async () => {
  const { model, calls } = mock("v4", [
    { type: "stream-start", warnings: [] },
    { type: "response-metadata", id: "r1" },
    { type: "reasoning-start", id: "r", providerMetadata: { p: { itemId: "i1" } } },
    { type: "reasoning-delta", id: "r", delta: "Think." },
    { type: "reasoning-delta", id: "r", delta: "", providerMetadata: { p: { signature: "sig" } } },
    { type: "reasoning-end", id: "r" },
    { type: "text-start", id: "t" },
    { type: "text-delta", id: "t", delta: "Look" },
    { type: "tool-input-start", id: "call_a", toolName: "read_file" },
    { type: "tool-input-delta", id: "call_a", delta: '{"path":' },
    { type: "text-delta", id: "t", delta: "ing." }, // waits for the call
    { type: "tool-input-delta", id: "call_a", delta: '"a.md"}' },
    { type: "a-part-from-the-future", id: "x" },
    { type: "tool-input-end", id: "call_a" },
    { type: "tool-call", toolCallId: "call_a", toolName: "read_file", input: '{"path":"a.md"}', providerMetadata: { p: { thought: "s2" } } },
    { type: "text-end", id: "t" },
    { type: "tool-input-start", id: "call_b", toolName: "shell", inputEncoding: "text" },
    { type: "tool-input-delta", id: "call_b", delta: "ls -l" },
    { type: "tool-input-end", id: "call_b" },
    { type: "tool-call", toolCallId: "call_b", toolName: "shell", input: '"ls -l"' },
    { type: "tool-call", toolCallId: "srv_1", toolName: "web_search", input: "{}", providerExecuted: true },
    { type: "tool-result", toolCallId: "srv_1", toolName: "web_search", result: {} },
    finish("length"),
  ]);
  const tools = [
    { name: "read_file", description: "Reads", parameters: { type: "object", properties: { path: { type: "string" } } } },
    { name: "shell", description: "Runs" },
  ];
  const environment = { async *executeTool({ toolCall }) { yield floe.msg.toolOutput(toolCall.payload.tool_call_id, "ok"); } };
  const seen = [];
  const llm = fromAISDK(model, { providerOptions: ({ thinkingLevel }) => (seen.push(thinkingLevel), { p: { x: 1 } }), topK: 3 });
  const msgs = await run(llm, "Hi", { approve: () => "deny", thinkingLevel: "max" }, { tools, environment, config: { maxTurns: 1 } });
  assert.deepEqual(checkStream(msgs), []);
  assert.deepEqual(bodies(msgs.slice(0, msgs.findIndex((m) => m.payload.type === "request_end"))), [
    ["partial_thinking", "start", ""], ["partial_thinking", "delta", "Think."], ["partial_thinking", "stop", ""], ["thinking", "", "Think."],
    ["partial_text", "start", ""], ["partial_text", "delta", "Look"], ["partial_text", "stop", ""], ["text", "", "Look"],
    ["partial_tool_call", "start", ""], ["partial_tool_call", "delta", '{"path":'], ["partial_tool_call", "delta", '"a.md"}'], ["partial_tool_call", "stop", ""], ["tool_call", "", '{"path":"a.md"}'],
    ["partial_text", "start", ""], ["partial_text", "delta", "ing."], ["partial_text", "stop", ""], ["text", "", "ing."],
    ["partial_tool_call", "start", ""], ["partial_tool_call", "delta", '"ls -l"'], ["partial_tool_call", "stop", ""], ["tool_call", "", '"ls -l"'],
  ]);
  assert.deepEqual(find(msgs, "thinking")[0].payload.fidelity, { providerMetadata: { p: { itemId: "i1", signature: "sig" } } });
  assert.deepEqual(find(msgs, "tool_call")[0].payload.fidelity, { providerMetadata: { p: { thought: "s2" } } });
  // A reply cut by its token limit is completed, as far as it went.
  assert.deepEqual(ends(msgs), [["completed", ""]]);
  assert.deepEqual(find(msgs, "token_usage")[0].payload.request, { cache_read: 2, cache_write: 0, output: 5, total: 15 });

  const [o] = calls;
  assert.equal(o.reasoning, "max");
  assert.deepEqual(seen, ["max"]);
  assert.deepEqual(o.providerOptions, { p: { x: 1 } });
  assert.equal(o.topK, 3);
  assert.ok(o.abortSignal instanceof AbortSignal);
  assert.deepEqual(o.tools, [
    { type: "function", name: "read_file", description: "Reads", inputSchema: tools[0].parameters },
    { type: "function", name: "shell", description: "Runs", inputSchema: { type: "object", properties: {} } },
  ]);
  assert.deepEqual(o.prompt, [{ role: "user", content: [{ type: "text", text: "Hi" }] }]);
});

test("the history in the specification's prompt format, v4 and v3: images, tool outputs with images, metadata as providerOptions", async () => {
  const png = "iVBORw0KGgo=";
  const history = [
    floe.msg.userText("See this."),
    { type: "model_msg", payload: { type: "image_url", role: "user", image_url: `data:image/png;base64,${png}` } },
    { type: "model_msg", payload: { type: "image_url", role: "user", image_url: "https://example.com/a.jpg" } },
    { type: "model_msg", payload: { type: "inline_data", role: "user", data: png, mime_type: "image/png" } },
    Object.assign(floe.msg.thinking("Hm."), {}),
    floe.msg.text(""),
    floe.msg.toolCall("call_1", "shot", { x: 1 }),
    floe.msg.toolOutput("call_1", "taken", "completed", [`data:image/png;base64,${png}`]),
    floe.msg.toolCall("call_2", "read", "not json"), // arguments that are no JSON: an empty object
    floe.msg.toolOutput("call_2", "denied"),
  ];
  history[4].payload.fidelity = { providerMetadata: { anthropic: { signature: "s" } } };
  const prompts = {};
  for (const v of ["v4", "v3"]) {
    const { model, calls } = mock(v, [{ type: "text-delta", id: "t", delta: "ok" }, finish()]);
    const llm = fromAISDK(model);
    llm.loadHistory(history, { cache_read: 0, cache_write: 0, output: 7, total: 70 });
    const out = [];
    const it = llm.streamGenerate({ newMessages: [floe.msg.userText("Next")], signal: new AbortController().signal, tools: [], systemPrompt: "Sys" });
    let r;
    while (!(r = await it.next()).done) out.push(r.value);
    assert.deepEqual(r.value, { status: "completed" });
    assert.deepEqual(out.at(-1).payload.session, { cache_read: 2, cache_write: 0, output: 12, total: 85 });
    prompts[v] = calls[0].prompt;
  }
  const url = new URL("https://example.com/a.jpg");
  const common = (user, toolImage) => [
    { role: "system", content: "Sys" },
    { role: "user", content: user },
    { role: "assistant", content: [
      { type: "reasoning", text: "Hm.", providerOptions: { anthropic: { signature: "s" } } },
      { type: "tool-call", toolCallId: "call_1", toolName: "shot", input: { x: 1 } },
    ] },
    { role: "tool", content: [{ type: "tool-result", toolCallId: "call_1", toolName: "shot", output: { type: "content", value: [{ type: "text", text: "taken" }, toolImage] } }] },
    { role: "assistant", content: [{ type: "tool-call", toolCallId: "call_2", toolName: "read", input: {} }] },
    { role: "tool", content: [{ type: "tool-result", toolCallId: "call_2", toolName: "read", output: { type: "text", value: "denied" } }] },
    { role: "user", content: [{ type: "text", text: "Next" }] },
  ];
  assert.deepEqual(prompts.v4, common([
    { type: "text", text: "See this." },
    { type: "file", mediaType: "image/png", data: { type: "data", data: png } },
    { type: "file", mediaType: "image", data: { type: "url", url } },
    { type: "file", mediaType: "image/png", data: { type: "data", data: png } },
  ], { type: "file", mediaType: "image/png", data: { type: "data", data: png } }));
  assert.deepEqual(prompts.v3, common([
    { type: "text", text: "See this." },
    { type: "file", mediaType: "image/png", data: png },
    { type: "file", mediaType: "image/*", data: url },
    { type: "file", mediaType: "image/png", data: png },
  ], { type: "image-data", mediaType: "image/png", data: png }));
});

test("failures: an API error's retryability, error parts, finish reasons, a stream without its finish, a part that is no part, a read that fails", async () => {
  const apiError = (statusCode, isRetryable) => () => {
    throw new APICallError({ message: `boom ${statusCode}`, url: "http://x", requestBodyValues: {}, statusCode, isRetryable });
  };
  const cyclic = { reason: "overloaded" };
  cyclic.self = cyclic;
  const part = (error) => [{ type: "text-delta", id: "t", delta: "a" }, { type: "error", error }];
  const cases = [
    [apiError(400, false), ["failed", "mock: HTTP 400: boom 400"], 1],
    [apiError(401, false), ["auth", "mock: HTTP 401: boom 401"], 1],
    [apiError(503, true), ["timeout", "mock: HTTP 503: boom 503"], 2],
    [() => { throw new TypeError("no network"); }, ["failed", "mock: no network"], 2],
    // Thrown before sending: no API key (given or in the environment), a setting missing, a model the provider has not.
    [() => { throw new LoadAPIKeyError({ message: "API key is missing" }); }, ["auth", "mock: API key is missing"], 1],
    [() => { throw new LoadSettingError({ message: "Resource name is missing" }); }, ["failed", "mock: Resource name is missing"], 1],
    [() => { throw new NoSuchModelError({ modelId: "m", modelType: "languageModel" }); }, ["failed", "mock: No such languageModel: m"], 1],
    // An error the provider reported inside its 200 stream, without an HTTP status: by its type and its
    // code, as the built-in adapters take an error event (transient: timeout; auth; a spent quota: permanent).
    [part({ type: "overloaded_error", message: "Overloaded" }), ["timeout", "mock: error event: overloaded_error: Overloaded"], 2],
    [part({ message: "Rate limit reached", type: "tokens", param: null, code: "rate_limit_exceeded" }), ["timeout", "mock: error event: tokens (rate_limit_exceeded): Rate limit reached"], 2],
    [part({ message: "Provider returned error", code: 502 }), ["timeout", "mock: error event: 502: Provider returned error"], 2],
    [part({ type: "server_error", message: "The server had an error" }), ["timeout", "mock: error event: server_error: The server had an error"], 2],
    [part({ type: "authentication_error", message: "invalid x-api-key" }), ["auth", "mock: error event: authentication_error: invalid x-api-key"], 1],
    [part({ message: "You exceeded your current quota", type: "insufficient_quota", code: "insufficient_quota" }), ["failed", "mock: error event: insufficient_quota: You exceeded your current quota"], 1],
    [part({ type: "invalid_request_error", message: "Bad" }), ["failed", "mock: error event: invalid_request_error: Bad"], 2],
    // The AI SDK's own stream errors (a status and retryability inferred from the type): an event too, not an HTTP status.
    [part(createProviderStreamError({ message: "Overloaded", type: "overloaded_error", statusCode: 529, isRetryable: true, data: {} })), ["timeout", "mock: error event: overloaded_error: Overloaded"], 2],
    [part(createProviderStreamError({ message: "Odd", type: "odd_error", statusCode: 500, isRetryable: true, data: {} })), ["timeout", "mock: error event: odd_error: Odd"], 2],
    [part(createProviderStreamError({ message: "Too large", type: "request_too_large", statusCode: 413, isRetryable: false, data: {} })), ["failed", "mock: error event: request_too_large: Too large"], 1],
    [part(createProviderStreamError({ message: "Key revoked", type: "invalid_authentication", statusCode: 401, isRetryable: false, data: {} })), ["auth", "mock: error event: invalid_authentication: Key revoked"], 1],
    [part({ message: "no type" }), ["failed", "mock: no type"], 2],
    // An Error (of any realm) with a code is no event: Node's system errors carry one.
    [part(runInNewContext('Object.assign(new Error("socket hang up"), { code: "ECONNRESET" })')), ["failed", "mock: socket hang up"], 2],
    [[{ type: "error", error: cyclic }], ["failed", "mock: an object that is not JSON"], 2],
    [[{ type: "error", error: { code: 5n } }], ["failed", "mock: an object that is not JSON"], 2],
    [[{ type: "error", error: new APICallError({ message: "bad", url: "u", requestBodyValues: {}, statusCode: 422, isRetryable: false }) }], ["failed", "mock: HTTP 422: bad"], 1],
    [[finish("error")], ["failed", "mock: the model finished with an error (error)"], 2],
    [[finish("interrupted")], ["malformed", "mock: the stream ended before the reply did (interrupted)"], 2],
    [[{ type: "text-delta", id: "t", delta: "a" }], ["malformed", "mock: the stream ended without a finish part"], 2],
    [["text"], ["malformed", 'mock: a stream part is not an object with a type: "text"'], 2],
    // A read of the stream that fails is the network's: timeout, retried.
    [() => ({ stream: new ReadableStream({ start(c) { c.enqueue({ type: "text-delta", id: "t", delta: "a" }); c.error(new TypeError("terminated")); } }) }), ["timeout", "mock: terminated"], 2],
  ];
  for (const [reply, end, requests] of cases) {
    const { model, calls } = mock("v4", reply, [finish()]);
    const msgs = await run(fromAISDK(model), "Hi", {}, { config: { maxReconnects: 1 } });
    assert.deepEqual(checkStream(msgs), [], String(end));
    assert.deepEqual(ends(msgs)[0], end);
    assert.equal(calls.length, requests, `${end}: a permanent failure is not retried, others are`);
    // A failed attempt's input is sent again (with a [turn_retried] text when it said something):
    // the history grows only when a request completes.
    for (const c of calls) {
      assert.deepEqual(c.prompt.map((m) => m.role), ["user"]);
      assert.deepEqual(c.prompt[0].content[0], { type: "text", text: "Hi" });
    }
  }
  const permanent = find(await run(fromAISDK(mock("v4", apiError(400, false)).model)), "request_end")[0];
  assert.equal(permanent.payload.status, "failed");
});

// An API error's wait, as the built-in adapters read it (retry-after-ms,
// Retry-After's seconds or date, Gemini's retryDelay): the retry waits it
// when it is longer than the backoff, and request_end announces it.
test("failures: a retryable API error's Retry-After, retry-after-ms or retryDelay is the retry's wait", async () => {
  const later = new Date(Date.now() + 3_600_000).toUTCString();
  const cases = [
    [{ "retry-after": "3" }, undefined, 3000],
    [{ "retry-after-ms": "4500", "retry-after": "9" }, undefined, 4500],
    [{}, '{"error":{"code":429,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}}', 1500],
    [{}, undefined, 10], // none: the backoff's
    [{ "retry-after": later }, undefined, undefined], // past 120 s: failed at once
  ];
  for (const [responseHeaders, responseBody, wait] of cases) {
    const { model, calls } = mock("v4", () => {
      throw new APICallError({ message: "slow down", url: "http://x", requestBodyValues: {}, statusCode: 429, isRetryable: true, responseHeaders, responseBody });
    }, [{ type: "text-delta", id: "t", delta: "ok" }, finish()]);
    const clock = instantClock();
    const session = floe.createSession({ meta: meta(), store: false, llm: fromAISDK(model), clock, config: { maxReconnects: 1, reconnectBackoffMs: 10 } });
    const msgs = await collect(session.run("Hi"));
    await session.close();
    const first = find(msgs, "request_end")[0].payload;
    assert.equal(first.retry_in_ms, wait, JSON.stringify(responseHeaders));
    assert.deepEqual(clock.sleeps, wait === undefined ? [] : [wait]);
    assert.equal(calls.length, wait === undefined ? 1 : 2);
  }
});

test("thinkingLevel: v4's reasoning levels; another level, or any on a v3 model, fails unless providerOptions is a function", async () => {
  const reply = [{ type: "text-delta", id: "t", delta: "ok" }, finish()];
  for (const [level, want] of [["off", "none"], ["minimal", "minimal"], ["xhigh", "xhigh"]]) {
    const { model, calls } = mock("v4", reply);
    await run(fromAISDK(model), "Hi", { thinkingLevel: level });
    assert.equal(calls[0].reasoning, want);
  }
  const { model: none, calls: noneCalls } = mock("v4", reply);
  await run(fromAISDK(none));
  assert.equal("reasoning" in noneCalls[0], false);
  const refused = [
    ["v4", "5000", 'mock: thinkingLevel "5000": want none, off, minimal, low, medium, high, xhigh, max (or give providerOptions as a function of { thinkingLevel })'],
    ["v3", "high", 'mock: thinkingLevel "high": a specification v3 model takes no reasoning level (or give providerOptions as a function of { thinkingLevel })'],
  ];
  for (const [v, level, message] of refused) {
    const { model, calls } = mock(v, reply);
    const msgs = await run(fromAISDK(model), "Hi", { thinkingLevel: level });
    assert.deepEqual(ends(msgs), [["failed", message]]);
    assert.equal(calls.length, 0);
    const { model: m2, calls: c2 } = mock(v, reply);
    await run(fromAISDK(m2, { providerOptions: ({ thinkingLevel }) => ({ mock: { budget: Number(thinkingLevel) || 1 } }) }), "Hi", { thinkingLevel: level });
    assert.equal("reasoning" in c2[0], false);
    assert.deepEqual(c2[0].providerOptions, { mock: { budget: Number(level) || 1 } });
  }
});

test("bad input is a FloeError naming it: not a model, a model id, an unsupported specificationVersion, no doStream, a bad option", () => {
  const v4 = new MockLanguageModelV4();
  const bad = [
    [() => fromAISDK(null), /^fromAISDK: model: want a LanguageModel of the AI SDK \(an object with specificationVersion and doStream\), got null$/],
    [() => fromAISDK("anthropic/claude-sonnet-4.5"), /^fromAISDK: model: want a LanguageModel object .* got the string "anthropic\/claude-sonnet-4.5": a model id needs a provider$/],
    [() => fromAISDK({ specificationVersion: "v2", doStream() {} }), /^fromAISDK: model.specificationVersion: "v2" is not supported \(supported: v3, v4; AI SDK 6 and later\)$/],
    [() => fromAISDK({ doStream() {} }), /^fromAISDK: model.specificationVersion: undefined is not supported/],
    [() => fromAISDK({ specificationVersion: "v4", doGenerate() {} }), /^fromAISDK: model.doStream: want a function, got undefined$/],
    [() => fromAISDK(v4, { temperatur: 1 }), /^fromAISDK: options.temperatur: unknown option \(did you mean temperature\?\)/],
    [() => fromAISDK(v4, { maxOutputTokens: 0 }), /^fromAISDK: options.maxOutputTokens: want an integer, 1 or more, got 0$/],
    [() => fromAISDK(v4, { providerOptions: [] }), /^fromAISDK: options.providerOptions: want an object \(keyed by provider\) or a function/],
    [() => fromAISDK(v4, { headers: { "x-a": 1 } }), /^fromAISDK: options.headers.x-a: want a string, got 1$/],
    [() => fromAISDK(v4, []), /^fromAISDK: options: want an object/],
  ];
  for (const [f, message] of bad) assert.throws(f, (e) => e.name === "FloeError" && e.code === "bad_argument" && message.test(e.message), String(message));
});

test("a model wrapped in middleware (wrapLanguageModel) is a v4 model: <think> in the text is reasoning, default settings reach doStream", async () => {
  const { model, calls } = mock("v4", [
    { type: "stream-start", warnings: [] },
    { type: "text-start", id: "t" },
    { type: "text-delta", id: "t", delta: "<think>Plan" },
    { type: "text-delta", id: "t", delta: " it.</think>" },
    { type: "text-delta", id: "t", delta: "Done." },
    { type: "text-end", id: "t" },
    finish(),
  ]);
  const wrapped = wrapLanguageModel({ model, middleware: [extractReasoningMiddleware({ tagName: "think" }), defaultSettingsMiddleware({ settings: { temperature: 0.3 } })] });
  const llm = fromAISDK(wrapped);
  assert.deepEqual([llm.provider, llm.modelId], ["mock", "mock-1"]);
  const msgs = await run(llm);
  assert.deepEqual(checkStream(msgs), []);
  assert.deepEqual(ends(msgs), [["completed", ""]]);
  assert.deepEqual(bodies(msgs).filter(([, e]) => e === ""), [["thinking", "", "Plan it."], ["text", "", "Done."]]);
  assert.equal(calls[0].temperature, 0.3);
});

test("tool calls of one reply under one id (a server repeating it) go by ids of their own: the reply completes, each output pairs with its call, the prompt is sent once", async () => {
  const { model, calls } = mock(
    "v4",
    [
      { type: "tool-call", toolCallId: "call_0", toolName: "t", input: '{"n":1}' },
      { type: "tool-input-start", id: "call_0", toolName: "t" },
      { type: "tool-input-delta", id: "call_0", delta: '{"n":2}' },
      { type: "tool-input-end", id: "call_0" },
      { type: "tool-call", toolCallId: "call_0", toolName: "t", input: '{"n":2}' },
      { type: "tool-call", toolCallId: "call_0", toolName: "t", input: '{"n":3}' },
      finish("tool-calls"),
    ],
    [{ type: "text-delta", id: "x", delta: "Done." }, finish()],
  );
  const environment = { async *executeTool({ toolCall }) { yield floe.msg.toolOutput(toolCall.payload.tool_call_id, `out ${toolCall.payload.arguments}`); } };
  const msgs = await run(fromAISDK(model), "Hi", { approve: () => "allow" }, { tools: [{ name: "t", description: "T" }], environment });
  assert.deepEqual(checkStream(msgs), []);
  assert.deepEqual(ends(msgs), [["completed", ""], ["completed", ""]]);
  const ids = find(msgs, "tool_call").map((m) => m.payload.tool_call_id);
  assert.equal(ids[0], "call_0");
  assert.equal(new Set(ids).size, 3);
  const [, second] = calls;
  assert.deepEqual(second.prompt.map((m) => m.role), ["user", "assistant", "tool"]);
  assert.deepEqual(second.prompt[1].content.map((c) => [c.toolCallId, c.input.n]), ids.map((id, i) => [id, i + 1]));
  assert.deepEqual(second.prompt[2].content.map((c) => [c.toolCallId, c.output.value]), ids.map((id, i) => [id, `out {"n":${i + 1}}`]));
});

test("a tool call without an id or a tool name (a model of one's own) goes by an id of its own and unnamed_tool, as the built-in adapters' do: the reply completes, and the model gets the engine's answer to a tool it does not know", async () => {
  const { model, calls } = mock(
    "v4",
    [
      { type: "tool-input-start", id: "", toolName: "" },
      { type: "tool-input-delta", id: "", delta: "{}" },
      { type: "tool-call", toolCallId: "", toolName: "", input: "{}" },
      { type: "tool-call", toolCallId: undefined, toolName: undefined, input: "{}" },
      finish("tool-calls"),
    ],
    [{ type: "text-delta", id: "x", delta: "Done." }, finish()],
  );
  const msgs = await run(fromAISDK(model), "Hi", { approve: () => "allow" });
  assert.deepEqual(checkStream(msgs), []);
  assert.deepEqual(ends(msgs), [["completed", ""], ["completed", ""]]);
  const made = find(msgs, "tool_call").map((m) => [m.payload.tool_call_id, m.payload.name]);
  assert.deepEqual(made, [["call_floe_1", "unnamed_tool"], ["call_floe_2", "unnamed_tool"]]);
  const [, second] = calls;
  assert.deepEqual(second.prompt[1].content.map((c) => [c.toolCallId, c.toolName]), made);
  assert.deepEqual(second.prompt[2].content.map((c) => [c.toolCallId, c.toolName]), made);
  assert.deepEqual(second.prompt[2].content.map((c) => c.output.value), made.map(() => '[unknown tool] there is no tool named "unnamed_tool"'));
});

test("an abort cancels the stream of a model that does not heed abortSignal: the request ends aborted at once, not at the abort grace", async () => {
  let cancelled = false;
  const { model } = mock("v4", () => ({
    stream: new ReadableStream({
      start: (c) => c.enqueue({ type: "text-delta", id: "t", delta: "Hel" }), // and never more, nor an end
      cancel: () => void (cancelled = true),
    }),
  }));
  const session = floe.createSession({ meta: meta(), store: false, llm: fromAISDK(model), clock: instantClock() });
  const stop = new AbortController();
  const msgs = [];
  for await (const m of session.run("Hi", { signal: stop.signal })) {
    msgs.push(m);
    if (m.payload.type === "partial_text" && m.payload.event_type === "delta") stop.abort();
  }
  await session.close();
  assert.deepEqual(checkStream(msgs), []);
  assert.deepEqual(ends(msgs), [["aborted", "mock: aborted"]]);
  assert.equal(cancelled, true);
  assert.deepEqual(find(msgs, "text").map((m) => [m.payload.text, m.payload.stop_reason]), [["Hel", "aborted"]]);
});

test("contextWindow is the session_meta's model_context_window; sessionTokens are the totals the token_usage's session counts go on from", async () => {
  const { model } = mock("v4", [{ type: "text-delta", id: "t", delta: "ok" }, finish("stop", usage(10, 5))]);
  const llm = fromAISDK(model, { contextWindow: 200_000, sessionTokens: { cache_read: 4, output: 7, total: 100 } });
  const records = [];
  const session = floe.createSession({ llm, trace: { write: (r) => records.push(r) }, clock: instantClock() });
  const msgs = await collect(session.run("Hi"));
  await session.close();
  assert.deepEqual([...new Set(records.filter((r) => r.type === "session_meta").map((r) => [r.payload.provider, r.payload.model_id, r.payload.model_context_window].join(" ")))], ["mock mock-1 200000"]);
  const [u] = msgs.filter((m) => m.payload.type === "token_usage");
  assert.deepEqual(u.payload.request, { cache_read: 2, cache_write: 0, output: 5, total: 15 });
  assert.deepEqual(u.payload.session, { cache_read: 6, cache_write: 0, output: 12, total: 115 });
});

test("tool calls of two replies under one id (a server numbering its calls afresh in each reply) go by ids unique in the session: a later call under an id the session has goes by a new one, each output pairs with its call, also after loadHistory; a failed attempt's ids are free again", async () => {
  const call = (input) => [{ type: "tool-call", toolCallId: "call_0", toolName: "t", input }, finish("tool-calls")];
  const { model, calls } = mock("v4", call('{"n":1}'), call('{"n":2}'), [{ type: "text-delta", id: "x", delta: "Done." }, finish()]);
  const environment = { async *executeTool({ toolCall }) { yield floe.msg.toolOutput(toolCall.payload.tool_call_id, `out ${toolCall.payload.arguments}`); } };
  const msgs = await run(fromAISDK(model), "Hi", { approve: () => "allow" }, { tools: [{ name: "t", description: "T" }], environment });
  assert.deepEqual(checkStream(msgs), []);
  assert.deepEqual(ends(msgs), [["completed", ""], ["completed", ""], ["completed", ""]]);
  const ids = find(msgs, "tool_call").map((m) => m.payload.tool_call_id);
  assert.deepEqual(ids, ["call_0", "call_floe_1"]);
  assert.deepEqual(find(msgs, "partial_tool_call").map((m) => m.payload.tool_call_id), []);
  assert.deepEqual(find(msgs, "tool_call_output").map((m) => [m.payload.tool_call_id, m.payload.output]), [["call_0", 'out {"n":1}'], ["call_floe_1", 'out {"n":2}']]);
  const last = calls[2].prompt;
  assert.deepEqual(last.map((m) => m.role), ["user", "assistant", "tool", "assistant", "tool"]);
  assert.deepEqual(last.slice(1).map((m) => [m.content[0].toolCallId, m.content[0].input?.n ?? m.content[0].output.value]), [["call_0", 1], ["call_0", 'out {"n":1}'], ["call_floe_1", 2], ["call_floe_1", 'out {"n":2}']]);

  // A resumed conversation's ids are taken too; a streamed call under one of them goes by a new id from its start.
  const { model: m2, calls: c2 } = mock("v4", [
    { type: "tool-input-start", id: "call_0", toolName: "t" },
    { type: "tool-input-delta", id: "call_0", delta: "{}" },
    { type: "tool-input-end", id: "call_0" },
    { type: "tool-call", toolCallId: "call_0", toolName: "t", input: "{}" },
    finish("tool-calls"),
  ]);
  const llm = fromAISDK(m2);
  llm.loadHistory([floe.msg.userText("Hi"), floe.msg.toolCall("call_0", "t", {}), floe.msg.toolOutput("call_0", "ok"), floe.msg.toolCall("call_floe_1", "t", {}), floe.msg.toolOutput("call_floe_1", "ok")]);
  const out = [];
  for await (const m of llm.streamGenerate({ newMessages: [floe.msg.userText("Again")], signal: new AbortController().signal, tools: [] })) out.push(m);
  assert.deepEqual([...new Set(out.filter((m) => m.payload.tool_call_id).map((m) => m.payload.tool_call_id))], ["call_floe_2"]);
  assert.equal(c2.length, 1);

  // A failed attempt's calls never joined the conversation: its retry keeps the model's id.
  const { model: m3 } = mock("v4", [{ type: "tool-call", toolCallId: "call_0", toolName: "t", input: "{}" }, { type: "error", error: new TypeError("cut") }], call("{}"), [finish()]);
  const retried = await run(fromAISDK(m3), "Hi", { approve: () => "allow" }, { tools: [{ name: "t", description: "T" }], environment });
  assert.deepEqual(ends(retried).map(([s]) => s), ["failed", "completed", "completed"]);
  assert.deepEqual(find(retried, "tool_call").map((m) => m.payload.tool_call_id), ["call_0", "call_0"]);
});

test("idleTimeoutMs: a model that sends nothing for it (no part, no end; no stream at all) ends the request as timeout, cancelling its stream and request; the time the session holds the stream does not count; a bad value is refused", async () => {
  const silent = (state) => () => ({
    stream: new ReadableStream({
      start: (c) => c.enqueue({ type: "text-delta", id: "t", delta: "Hel" }), // and never more, nor an end
      cancel: () => void (state.cancelled = true),
    }),
  });
  const state = {};
  const { model, calls } = mock("v4", silent(state));
  const msgs = await run(fromAISDK(model, { idleTimeoutMs: 1 }), "Hi", {}, { config: { maxReconnects: 0 } });
  assert.deepEqual(checkStream(msgs), []);
  assert.deepEqual(ends(msgs), [["timeout", "mock: nothing came from the model for 1 ms (idleTimeoutMs)"]]);
  assert.equal(state.cancelled, true);
  assert.equal(calls[0].abortSignal.aborted, true, "the HTTP request is cancelled");
  assert.deepEqual(find(msgs, "text").map((m) => [m.payload.text, m.payload.stop_reason]), [["Hel", "timeout"]]);

  // doStream that never answers (its headers never come), and heeds no abortSignal: the same.
  const { model: m2, calls: c2 } = mock("v4", () => new Promise(() => {}));
  assert.deepEqual(ends(await run(fromAISDK(m2, { idleTimeoutMs: 1 }), "Hi", {}, { config: { maxReconnects: 0 } })), [["timeout", "mock: nothing came from the model for 1 ms (idleTimeoutMs)"]]);
  assert.equal(c2[0].abortSignal.aborted, true);

  // Parts that wait on the session (its reader busy for many times the bound) are no silence.
  const many = Array.from({ length: 3000 }, () => ({ type: "text-delta", id: "t", delta: "a" }));
  const { model: m3 } = mock("v4", [...many, finish()]);
  const session = floe.createSession({ meta: meta(), store: false, llm: fromAISDK(m3, { idleTimeoutMs: 1 }), clock: instantClock(), config: { maxReconnects: 0 } });
  const held = [];
  for await (const m of session.run("Hi")) {
    held.push(m);
    if (m.payload.type === "partial_text" && m.payload.event_type === "start") await new Promise((r) => setTimeout(r, 20));
  }
  await session.close();
  assert.deepEqual(ends(held), [["completed", ""]]);
  assert.equal(find(held, "text")[0].payload.text, "a".repeat(3000));

  for (const [v, message] of [[-1, "got -1"], [1.5, "got 1.5"], [86400001, "got 86400001"], ["1", "got a string"]]) {
    assert.throws(() => fromAISDK(m3, { idleTimeoutMs: v }), (e) => e.code === "bad_argument" && e.message === `fromAISDK: options.idleTimeoutMs: want a whole number of milliseconds up to 86400000 (0 = no idle timeout), ${message}`);
  }
});

test("an abort while doStream has not answered (a model that does not heed abortSignal) ends the request aborted at once; so does one with no idle timeout", async () => {
  for (const idleTimeoutMs of [undefined, 0]) {
    let called;
    const started = new Promise((r) => (called = r));
    const { model } = mock("v4", () => (called(), new Promise(() => {})));
    const session = floe.createSession({ meta: meta(), store: false, llm: fromAISDK(model, idleTimeoutMs === undefined ? {} : { idleTimeoutMs }), clock: instantClock(), abortGraceMs: 600000 });
    const stop = new AbortController();
    const out = collect(session.run("Hi", { signal: stop.signal }));
    await started;
    stop.abort();
    const msgs = await out;
    await session.close();
    assert.deepEqual(ends(msgs), [["aborted", "mock: aborted"]]);
  }
});

test("files the model makes (file parts: base64, bytes, a data: URL) are assistant inline_data, with their metadata, sent back as the assistant's file parts; one by a web URL is a text naming it; a reasoning file is inline_thinking, sent back as a reasoning file", async () => {
  const png = "iVBORw0KGgo=";
  const bytes = Uint8Array.from(atob(png), (c) => c.charCodeAt(0));
  for (const v of ["v4", "v3"]) {
    const data = (d) => (v === "v4" ? { type: "data", data: d } : d);
    const { model, calls } = mock(
      v,
      [
        { type: "text-start", id: "t" },
        { type: "text-delta", id: "t", delta: "Here:" },
        { type: "file", mediaType: "image/png", data: data(png), providerMetadata: { google: { thoughtSignature: "s1" } } },
        { type: "file", mediaType: "image/png", data: data(bytes) },
        ...(v === "v4" ? [
          { type: "file", mediaType: "image/jpeg", data: { type: "url", url: new URL(`data:image/jpeg;base64,${png}`) } },
          { type: "file", mediaType: "image/png", data: { type: "url", url: new URL("https://example.com/a.png") } },
          { type: "reasoning-file", mediaType: "image/png", data: { type: "data", data: png }, providerMetadata: { google: { thoughtSignature: "s2" } } },
          { type: "file", mediaType: "text/plain", data: { type: "url", url: new URL("data:text/plain,caf%C3%A9%20ok") } },
          { type: "reasoning-file", mediaType: "image/webp", data: { type: "url", url: new URL("https://example.com/sketch.webp") } },
        ] : []),
        { type: "text-delta", id: "t", delta: "Done." },
        { type: "text-end", id: "t" },
        finish(),
      ],
      [{ type: "text-delta", id: "x", delta: "ok" }, finish()],
    );
    const session = floe.createSession({ meta: meta(), store: false, llm: fromAISDK(model), clock: instantClock() });
    const msgs = [...(await collect(session.run("Draw"))), ...(await collect(session.run("Again")))];
    await session.close();
    assert.deepEqual(checkStream(msgs), [], v);
    const made = msgs.filter((m) => m.type === "model_msg" && m.payload.role === "assistant" && !m.payload.event_type).slice(0, -1);
    const files = [
      { type: "inline_data", role: "assistant", data: png, mime_type: "image/png", stop_reason: "completed", fidelity: { providerMetadata: { google: { thoughtSignature: "s1" } } } },
      { type: "inline_data", role: "assistant", data: png, mime_type: "image/png", stop_reason: "completed" },
      ...(v === "v4" ? [
        { type: "inline_data", role: "assistant", data: png, mime_type: "image/jpeg", stop_reason: "completed" },
        { type: "text", role: "assistant", text: "[file made by the model: image/png, at https://example.com/a.png]", stop_reason: "completed" },
        { type: "inline_thinking", role: "assistant", data: png, mime_type: "image/png", stop_reason: "completed", fidelity: { providerMetadata: { google: { thoughtSignature: "s2" } } } },
        { type: "inline_data", role: "assistant", data: btoa("caf\xc3\xa9 ok"), mime_type: "text/plain", stop_reason: "completed" },
        { type: "thinking", role: "assistant", thinking: "[file made by the model: image/webp, at https://example.com/sketch.webp]", stop_reason: "completed" },
      ] : []),
    ];
    assert.deepEqual(made.map((m) => m.payload), [{ type: "text", role: "assistant", text: "Here:", stop_reason: "completed" }, ...files, { type: "text", role: "assistant", text: "Done.", stop_reason: "completed" }], v);
    const file = (d, mediaType) => (v === "v4" ? { type: "file", mediaType, data: { type: "data", data: d } } : { type: "file", mediaType, data: d });
    assert.deepEqual(calls[1].prompt[1], {
      role: "assistant",
      content: [
        { type: "text", text: "Here:" },
        { ...file(png, "image/png"), providerOptions: { google: { thoughtSignature: "s1" } } },
        file(png, "image/png"),
        ...(v === "v4" ? [
          file(png, "image/jpeg"),
          { type: "text", text: "[file made by the model: image/png, at https://example.com/a.png]" },
          { type: "reasoning-file", mediaType: "image/png", data: { type: "data", data: png }, providerOptions: { google: { thoughtSignature: "s2" } } },
          file(btoa("caf\xc3\xa9 ok"), "text/plain"),
          { type: "reasoning", text: "[file made by the model: image/webp, at https://example.com/sketch.webp]" },
        ] : []),
        { type: "text", text: "Done." },
      ],
    }, v);
  }
});
