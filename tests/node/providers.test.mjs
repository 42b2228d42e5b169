// The built-in model adapters through floe.mjs + floe.wasm in Node, with
// Node's real fetch against loopback servers: the shared provider corpus
// and the project's own cases (testdata/providers) replayed byte for byte,
// then this project's own scripted exchanges
// (abort mid-stream, auth, network failures, redirects, a tool task over
// several requests, compaction and resume).
import { test } from "node:test";
import assert from "node:assert/strict";
import { floe, meta, collect, find, instantClock } from "./helpers.mjs";
import { replayServer, writeResponse, loadCases, projectCasesDir, checkCase, modelMessages, disciplineError, openaiStream, anthropicStream, SSE_HEADERS } from "./replay.mjs";

/** The text of a Chat Completions message content: a string or text parts. */
const textOf = (c) => (typeof c === "string" ? c : c.map((x) => x.text ?? "").join("\n"));

const FACTORY = { "openai-chat": "openaiCompatible", "openai-responses": "openaiResponses", anthropic: "anthropic" };

/** A model of provider against baseURL. */
const modelFor = (provider, baseURL, extra = {}) => floe[FACTORY[provider]]({ baseURL, model: "floe-test", apiKey: "sk-test", ...extra });

/** One request (maxTurns 1, no retries), every tool call denied. */
function oneRequest(llm, extra = {}) {
  const session = floe.createSession({
    meta: meta(),
    store: false,
    llm,
    tools: [{ name: "get_weather", description: "Weather of a city", parameters: { type: "object", properties: { city: { type: "string" } } } }],
    config: { maxTurns: 1, maxReconnects: 0 },
    clock: instantClock(),
    ...extra,
  });
  return session;
}

test("the shared provider corpus and the project's cases, replayed through floe.wasm's fetch seam", async (t) => {
  const cases = [...loadCases(), ...loadCases(projectCasesDir)];
  const byName = new Map(cases.map((c) => [c.name, c]));
  const srv = await replayServer(t, async (req, res) => {
    const name = req.url.split("/")[1];
    const c = byName.get(name);
    if (!c) {
      res.writeHead(404).end();
      return;
    }
    await writeResponse(res, c.response);
  });
  const failed = [];
  for (const c of cases) {
    await t.test(c.name, async () => {
      const session = oneRequest(modelFor(c.provider, `${srv.url}/${c.name}/v1`));
      const msgs = await collect(session.run("Go.", { approve: async () => "deny" }));
      await session.close();
      const diff = checkCase(c.expect, msgs);
      if (diff) failed.push(c.name);
      assert.equal(diff, null, `${c.name}: ${diff}`);
    });
  }
  assert.ok(cases.length > 0);
  assert.deepEqual(failed, []);
});

test("a checker that fails changed bytes", () => {
  // The corpus check above must be able to fail: a case's text changed.
  const c = loadCases().find((x) => x.expect.text && x.expect.outcome?.status === "completed");
  const msgs = [
    { type: "model_msg", payload: { type: "text", role: "assistant", text: c.expect.text + "!" } },
    { type: "event_msg", payload: { type: "token_usage", session: {}, request: {} } },
    { type: "event_msg", payload: { type: "request_end", status: "completed" } },
  ];
  assert.match(checkCase(c.expect, msgs), /^text: /);
  assert.match(
    disciplineError([
      { payload: { type: "partial_text", event_type: "start", text: "" } },
      { payload: { type: "partial_text", event_type: "delta", text: "a" } },
      { payload: { type: "partial_text", event_type: "stop", text: "" } },
      { payload: { type: "text", text: "b" } },
    ]),
    /complete text/,
  );
});

test("the request: URL, key, headers, options and the conversation's JSON", async (t) => {
  const srv = await replayServer(t, async (req, res) => {
    res.writeHead(200, SSE_HEADERS);
    res.end(req.url.includes("/anthropic/") ? anthropicStream({ text: ["Hi"] }) : openaiStream({ text: ["Hi"] }));
  });
  const key = "sk-secret-0123";
  const chat = floe.openai({ apiKey: key, model: "gpt-test", baseURL: `${srv.url}/openai/v1/`, headers: { "X-Trace": "t1" }, maxTokens: 77, temperature: 0.25, body: { seed: 7 } });
  assert.deepEqual({ ...chat }, { provider: "openai-chat", model: "gpt-test", baseURL: `${srv.url}/openai/v1` });
  assert.ok(!JSON.stringify(chat).includes(key), "the key is not part of the model object");
  assert.ok(Object.isFrozen(chat));
  let msgs = await collect(oneRequest(chat).run("Hello"));
  assert.equal(find(msgs, "request_end")[0].payload.status, "completed");
  const r = srv.requests[0];
  assert.equal(r.method, "POST");
  assert.equal(r.url, "/openai/v1/chat/completions");
  assert.equal(r.headers.authorization, `Bearer ${key}`);
  assert.equal(r.headers["x-trace"], "t1");
  const body = JSON.parse(r.body);
  assert.equal(body.model, "gpt-test");
  assert.equal(body.stream, true);
  assert.equal(body.temperature, 0.25);
  assert.equal(body.seed, 7);
  assert.equal(body.max_tokens ?? body.max_completion_tokens, 77);
  assert.equal(textOf(body.messages.at(-1).content), "Hello");
  assert.equal(body.tools[0].function.name, "get_weather");

  assert.equal(body.reasoning_effort, undefined);

  // thinkingLevel: the model's default for its runs; a run's own wins.
  const thinker = floe.openaiCompatible({ baseURL: `${srv.url}/openai/v1`, model: "m", thinkingLevel: "low" });
  const ts = oneRequest(thinker, { config: { maxReconnects: 0 } });
  await collect(ts.run("a"));
  await collect(ts.run("b", { thinkingLevel: "high" }));
  assert.deepEqual(srv.requests.slice(1).map((x) => JSON.parse(x.body).reasoning_effort), ["low", "high"]);
  srv.requests.length = 1;

  const claude = floe.anthropic({ apiKey: key, model: "claude-test", baseURL: `${srv.url}/anthropic/v1` });
  msgs = await collect(oneRequest(claude).run("Hello"));
  assert.equal(find(msgs, "request_end")[0].payload.status, "completed");
  assert.deepEqual(find(msgs, "text").map((m) => m.payload.text), ["Hi"]);
  const a = srv.requests[1];
  assert.equal(a.url, "/anthropic/v1/messages");
  assert.equal(a.headers["x-api-key"], key);
  assert.equal(a.headers.authorization, undefined);
  assert.ok(a.headers["anthropic-version"]);
  assert.equal(a.headers["anthropic-dangerous-direct-browser-access"], undefined, "not sent from Node by default");
  await collect(oneRequest(floe.anthropic({ apiKey: key, model: "claude-test", baseURL: `${srv.url}/anthropic/v1`, browserAccess: true })).run("Hello"));
  assert.equal(srv.requests[2].headers["anthropic-dangerous-direct-browser-access"], "true");
  // An extra header replaces the adapter's of that name, however it is
  // spelt: not joined to it ("other, <key>").
  await collect(oneRequest(floe.anthropic({ apiKey: key, model: "claude-test", baseURL: `${srv.url}/anthropic/v1`, headers: { "X-Api-Key": "other", "Anthropic-Version": "2099-01-01" } })).run("Hello"));
  assert.equal(srv.requests[3].headers["x-api-key"], "other");
  assert.equal(srv.requests[3].headers["anthropic-version"], "2099-01-01");
});

// A base URL with a query (Azure OpenAI's deployment URLs): the
// adapter's path goes before it, the path's trailing slashes dropped, and
// each request keeps it; an error quotes the URL without it (a key there
// is not shown).
test("a baseURL with a query: the path goes before it, errors do not quote it", async (t) => {
  const srv = await replayServer(t, async (req, res) => {
    if (req.url.startsWith("/missing/")) {
      res.writeHead(404, { "content-type": "text/plain" }).end("404 page not found");
      return;
    }
    res.writeHead(200, SSE_HEADERS);
    res.end(req.url.includes("/messages?") ? anthropicStream({ text: ["Hi"] }) : openaiStream({ text: ["Hi"] }));
  });
  const deployment = `${srv.url}/openai/deployments/d`;
  const m = floe.openaiCompatible({ baseURL: `${deployment}//?api-version=2024-10-21`, model: "gpt-4o" });
  assert.equal(m.baseURL, `${deployment}?api-version=2024-10-21`);
  let msgs = await collect(oneRequest(m).run("Hello"));
  assert.equal(find(msgs, "request_end")[0].payload.status, "completed");
  assert.deepEqual(find(msgs, "text").map((x) => x.payload.text), ["Hi"]);
  assert.equal(srv.requests[0].url, "/openai/deployments/d/chat/completions?api-version=2024-10-21");
  await collect(oneRequest(floe.anthropic({ apiKey: "k", model: "m", baseURL: `${srv.url}/anthropic/v1?beta=true` })).run("Hello"));
  assert.equal(srv.requests[1].url, "/anthropic/v1/messages?beta=true");

  msgs = await collect(oneRequest(floe.openaiCompatible({ baseURL: `${srv.url}/missing/v1?key=s3cret`, model: "m" })).run("Hi"));
  let end = find(msgs, "request_end")[0].payload;
  assert.match(end.error_message, new RegExp(`\\(at ${srv.url}/missing/v1/chat/completions\\)$`));
  assert.ok(!JSON.stringify(msgs).includes("s3cret"), "the query is not quoted");

  const dead = await replayServer(t, () => {});
  const deadPort = new URL(dead.url).port;
  await dead.close(); // nothing listens there now
  msgs = await collect(oneRequest(floe.openaiCompatible({ baseURL: `http://127.0.0.1:${deadPort}/v1?key=s3cret`, model: "m" })).run("Hi"));
  end = find(msgs, "request_end")[0].payload;
  assert.match(end.error_message, new RegExp(`fetch http://127.0.0.1:${deadPort}/v1/chat/completions: TypeError: fetch failed`));
  assert.ok(!JSON.stringify(msgs).includes("s3cret"), "the query is not quoted");
});

// A gateway that refuses stream_options (422 "extra inputs are not
// permitted"): body.stream_options: null sends none, and the reply, which
// has no usage, completes with counts of 0; an object replaces the
// adapter's ({"include_usage":true}), sent once.
test("openai: body.stream_options replaces the adapter's, null sends none", async (t) => {
  const noUsage = `data: {"id":"c1","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}\n\n` +
    `data: {"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n`;
  const srv = await replayServer(t, async (req, res, body) => {
    if (body.includes('"stream_options"') && req.url.startsWith("/strict/")) {
      res.writeHead(422, { "content-type": "application/json" }).end('{"detail":[{"type":"extra_forbidden","loc":["body","stream_options"],"msg":"Extra inputs are not permitted"}]}');
      return;
    }
    res.writeHead(200, SSE_HEADERS).end(noUsage);
  });
  const run = async (path, body) => {
    const msgs = await collect(oneRequest(floe.openaiCompatible({ baseURL: `${srv.url}/${path}/v1`, model: "m", body })).run("Hello"));
    return { status: find(msgs, "request_end")[0].payload.status, text: find(msgs, "text").map((m) => m.payload.text).join(), usage: find(msgs, "token_usage")[0]?.payload.request };
  };
  assert.equal((await run("strict", { seed: 7 })).status, "failed");
  assert.deepEqual(await run("strict", { seed: 7, stream_options: null }), { status: "completed", text: "Hi", usage: { cache_read: 0, cache_write: 0, output: 0, total: 0 } });
  await run("loose", { stream_options: { include_usage: false } });
  const [refused, sent, replaced] = srv.requests.map((r) => r.body);
  assert.equal(JSON.parse(refused).stream_options.include_usage, true);
  assert.ok(!sent.includes("stream_options"), sent);
  assert.equal(JSON.parse(sent).seed, 7);
  assert.equal(replaced.split('"stream_options"').length, 2, replaced);
  assert.deepEqual(JSON.parse(replaced).stream_options, { include_usage: false });
});

// Anthropic's prompt-cache breakpoints: on by default (the system prompt as
// one text block, the last block of the last message and of the user
// message before it, over a tool loop), for an hour with cache: "1h", none
// with cache: false.
test("anthropic: cache_control breakpoints, cache: \"1h\" and cache: false", async () => {
  const bodies = [];
  const betas = [];
  const fetch = async (url, init) => {
    bodies.push(JSON.parse(init.body));
    betas.push(new Headers(init.headers).get("anthropic-beta"));
    const n = bodies.length;
    const stream = n % 2 ? anthropicStream({ calls: [{ id: `toolu_${n}`, name: "get_weather", args: ['{"city":"Paris"}'] }] }) : anthropicStream({ text: ["Sunny."] });
    return new Response(stream, { status: 200, headers: SSE_HEADERS });
  };
  for (const cache of [undefined, true, "5m", "1h", false]) {
    const eph = cache === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
    bodies.length = 0;
    betas.length = 0;
    const llm = floe.anthropic({ apiKey: "k", model: "claude-test", fetch, ...(cache === undefined ? {} : { cache }) });
    const session = oneRequest(llm, { meta: { ...meta(), system_prompt: "Be brief." }, config: { maxTurns: 3, maxReconnects: 0 } });
    await collect(session.run("Weather?", { approve: async () => "deny" }));
    await session.close();
    assert.equal(bodies.length, 2, `cache ${cache}`);
    assert.deepEqual(betas, cache === "1h" ? ["extended-cache-ttl-2025-04-11", "extended-cache-ttl-2025-04-11"] : [null, null], `cache ${cache}: anthropic-beta`);
    const [first, second] = bodies;
    if (cache === false) {
      assert.equal(first.system, "Be brief.");
      assert.ok(!JSON.stringify(bodies).includes("cache_control"), "cache: false sends none");
      continue;
    }
    assert.deepEqual(first.system, [{ type: "text", text: "Be brief.", cache_control: eph }], `cache ${cache}`);
    assert.deepEqual(first.messages, [{ role: "user", content: [{ type: "text", text: "Weather?", cache_control: eph }] }]);
    assert.equal(second.messages.length, 3);
    assert.deepEqual(second.messages[0], first.messages[0], "the user message before the last keeps its breakpoint");
    assert.equal(second.messages[1].content.at(-1).cache_control, undefined);
    assert.deepEqual(second.messages[2].content.at(-1).cache_control, eph);
    assert.equal(JSON.stringify(second).split('"cache_control"').length - 1, 3);
  }
  assert.throws(() => floe.anthropic({ apiKey: "k", model: "m", cache: "no" }), /anthropic: options.cache: want true, false, "5m" or "1h", got "no"/);
  assert.throws(() => floe.anthropic({ apiKey: "k", model: "m", cache: "1H" }), /anthropic: options.cache: want true, false, "5m" or "1h", got "1H"/);
  assert.throws(() => floe.openai({ apiKey: "k", model: "m", cache: false }), /openai: options.cache: unknown option of openai\(\) \(anthropic\(\) has it\)/);
});

// A session of screenshots: past maxImageBytes (or maxImages), the oldest
// images go as a text saying so, in every factory; 0 sends them all.
test("maxImageBytes and maxImages leave the oldest images out of a request", async () => {
  const shot = (n) => "data:image/png;base64,iVBORw0KGgo" + String(n) + "A".repeat(400 - 34);
  const run = async (factory, opts) => {
    const bodies = [];
    const fetch = async (url, init) => {
      bodies.push(init.body);
      const n = bodies.length;
      const calls = n < 4 ? [{ id: `call_${n}`, name: "shot", args: ["{}"] }] : [];
      const stream = factory === "anthropic" ? anthropicStream({ calls, text: calls.length ? [] : ["Done."] }) : openaiStream({ calls, text: calls.length ? [] : ["Done."] });
      return new Response(stream, { status: 200, headers: SSE_HEADERS });
    };
    const llm = factory === "anthropic" ? floe.anthropic({ apiKey: "k", model: "m", fetch, ...opts }) : floe.openaiCompatible({ baseURL: "http://127.0.0.1:9/v1", model: "m", fetch, ...opts });
    let i = 0;
    const session = floe.createSession({
      meta: meta(),
      store: false,
      llm,
      tools: [floe.tool({ name: "shot", description: "Screenshot", parameters: { type: "object" }, execute: async () => ({ output: "shot", images: [shot(++i)] }) })],
      config: { maxTurns: 5, maxReconnects: 0 },
      clock: instantClock(),
    });
    const msgs = await collect(session.run("Look.", { approve: async () => "allow" }));
    await session.close();
    assert.deepEqual(find(msgs, "tool_call_output").map((m) => m.payload.images.length), [1, 1, 1], "the history keeps them all");
    return bodies.map((b) => [...b.matchAll(/iVBORw0KGgo(\d)|\[image omitted: /g)].map((m) => Number(m[1] ?? 0)));
  };
  for (const factory of ["anthropic", "openaiCompatible"]) {
    // 1200 bytes of images past 1000: the two oldest left out.
    assert.deepEqual(await run(factory, { maxImageBytes: 1000 }), [[], [1], [1, 2], [0, 0, 3]], factory);
    assert.deepEqual(await run(factory, { maxImages: 2 }), [[], [1], [1, 2], [0, 0, 3]], factory);
    assert.deepEqual(await run(factory, { maxImageBytes: 0, maxImages: 0 }), [[], [1], [1, 2], [1, 2, 3]], factory);
  }
  for (const [k, v] of [["maxImageBytes", -1], ["maxImageBytes", 1.5], ["maxImageBytes", "1000"], ["maxImages", -2], ["maxImages", NaN]]) {
    const what = k === "maxImages" ? "images" : "bytes";
    assert.throws(() => floe.openaiResponses({ apiKey: "k", model: "m", [k]: v }), (e) => e.code === "bad_argument" && e.message.startsWith(`openaiResponses: options.${k}: want a whole number of ${what} (0 = no limit), got `), `${k} ${v}`);
  }
});

// images: false, for a model without vision (DeepSeek's API answers 400
// to any image part, its Anthropic API takes none; a model behind LM
// Studio's Responses API): a tool's image and the user's go as a text, by
// the Chat, the Responses and the Anthropic adapters.
test("images: false sends no image, a text in its place", async () => {
  const png = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg";
  const none = "[image not sent: the model takes no images]";
  // A Responses API stream: one call of shot, or a text.
  const responsesStream = (call) => {
    const ev = (data) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
    const item = call
      ? { type: "function_call", call_id: "call_1", name: "shot", arguments: "{}" }
      : { type: "message", role: "assistant", content: [{ type: "output_text", text: "Done." }] };
    return ev({ type: "response.output_item.added", output_index: 0, item: call ? { ...item, arguments: "" } : { ...item, content: [] } }) +
      (call ? ev({ type: "response.function_call_arguments.delta", output_index: 0, delta: "{}" }) : ev({ type: "response.output_text.delta", output_index: 0, content_index: 0, delta: "Done." })) +
      ev({ type: "response.output_item.done", output_index: 0, item }) +
      ev({ type: "response.completed", response: { id: "resp_1", status: "completed", usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } } });
  };
  for (const factory of ["openaiCompatible", "openaiResponses", "anthropic"]) {
    const bodies = [];
    const fetch = async (url, init) => {
      bodies.push(JSON.parse(init.body));
      const call = bodies.length === 1;
      const script = { calls: call ? [{ id: "call_1", name: "shot", args: ["{}"] }] : [], text: call ? [] : ["Done."] };
      const stream = factory === "openaiResponses" ? responsesStream(call) : factory === "anthropic" ? anthropicStream(script) : openaiStream(script);
      return new Response(stream, { status: 200, headers: SSE_HEADERS });
    };
    const session = floe.createSession({
      meta: meta(),
      store: false,
      llm: floe[factory]({ baseURL: "http://127.0.0.1:9/v1", apiKey: "k", model: "m", fetch, images: false }),
      tools: [floe.tool({ name: "shot", description: "Screenshot", parameters: { type: "object" }, execute: async () => ({ output: "shot", images: [png] }) })],
      config: { maxTurns: 3, maxReconnects: 0 },
      clock: instantClock(),
    });
    const prompt = [{ type: "model_msg", payload: { type: "text", role: "user", text: "Look." } }, { type: "model_msg", payload: { type: "image_url", role: "user", image_url: png } }];
    await collect(session.run(prompt, { approve: async () => "allow" }));
    await session.close();
    assert.equal(bodies.length, 2, factory);
    const text = JSON.stringify(bodies[1]);
    assert.ok(!text.includes("iVBORw0KGgo"), text);
    if (factory === "openaiResponses") {
      assert.equal(bodies[1].input.find((m) => m.type === "function_call_output").output, "shot\n" + none);
      assert.deepEqual(bodies[1].input[0].content.at(-1), { type: "input_text", text: none });
    } else if (factory === "anthropic") {
      const result = bodies[1].messages.at(-1).content.find((b) => b.type === "tool_result");
      assert.deepEqual(result.content, [{ type: "text", text: "shot" }, { type: "text", text: none }]);
      assert.equal(bodies[1].messages[0].content.at(-1).text, none);
    } else {
      assert.equal(bodies[1].messages.find((m) => m.role === "tool").content, "shot\n" + none);
      assert.deepEqual(bodies[1].messages[0].content.at(-1), { type: "text", text: none });
    }
  }
  assert.throws(() => floe.openai({ apiKey: "k", model: "m", images: "no" }), { code: "bad_argument", message: /openai: options\.images: want a boolean \(false: a model without vision\), got a string$/ });
  assert.throws(() => floe.openaiResponses({ apiKey: "k", model: "m", images: 0 }), { code: "bad_argument", message: /openaiResponses: options\.images: want a boolean \(false: a model without vision\), got a number$/ });
  assert.throws(() => floe.anthropic({ apiKey: "k", model: "m", images: "no" }), { code: "bad_argument", message: /anthropic: options\.images: want a boolean \(false: a model without vision\), got a string$/ });
});

// startsInThinking: a reply whose chat template opened the thinking
// (content "reasoning</think>answer") is thinking, then text, through the
// Go adapter in floe.wasm; the option is checked.
test("startsInThinking: the reply is thinking until its </think>", async () => {
  for (const startsInThinking of [true, false]) {
    const fetch = async () => new Response(openaiStream({ text: ["Okay, the", " user.</th", "ink>\n\nHi."] }), { status: 200, headers: SSE_HEADERS });
    const session = floe.createSession({
      meta: meta(),
      store: false,
      llm: floe.openaiCompatible({ baseURL: "http://127.0.0.1:9/v1", model: "m", fetch, startsInThinking }),
      config: { maxTurns: 1, maxReconnects: 0 },
      clock: instantClock(),
    });
    const msgs = await collect(session.run("Hi"));
    await session.close();
    const body = (t) => msgs.filter((m) => m.type === "model_msg" && m.payload.type === t).map((m) => m.payload.text ?? m.payload.thinking).join("");
    if (startsInThinking) assert.deepEqual([body("thinking"), body("text")], ["Okay, the user.", "Hi."]);
    else assert.deepEqual([body("thinking"), body("text")], ["", "Okay, the user.</think>\n\nHi."]);
  }
  assert.throws(() => floe.openaiResponses({ apiKey: "k", model: "m", startsInThinking: "yes" }), { code: "bad_argument", message: /openaiResponses: options\.startsInThinking: want a boolean \(true: the chat template opens the thinking\), got a string$/ });
  assert.throws(() => floe.anthropic({ apiKey: "k", model: "m", startsInThinking: true }), { code: "bad_argument", message: /anthropic: options\.startsInThinking: unknown option of anthropic\(\)/ });
});

test("model options are checked when the model is made", () => {
  const bad = [
    [() => floe.openai({ model: "m" }), /openai: options.apiKey: want the API key/],
    [() => floe.openai({ apiKey: "k" }), /openai: options.model: want a model name/],
    [() => floe.openaiCompatible({ model: "m" }), /openaiCompatible: options.baseURL: want the server's URL/],
    [() => floe.openaiCompatible({ model: "m", baseURL: "localhost:11434" }), /want an http: or https: URL/],
    [() => floe.openaiCompatible({ model: "m", baseURL: "/v1" }), /is not an absolute URL/],
    [() => floe.anthropic({ apiKey: "k", model: "m", maxTokens: 0 }), /maxTokens: want a positive integer/],
    [() => floe.anthropic({ apiKey: "k", model: "m", headers: { a: 1 } }), /headers\["a"\]: want a string/],
    [() => floe.openai({ apiKey: "k", model: "m", browserAccess: true }), /browserAccess: unknown option of openai\(\)/],
    [() => floe.openai({ apiKey: "k", model: "m", temprature: 1 }), /temprature: unknown option/],
    [() => floe.openai({ apiKey: "k", model: "m", fetch: "no" }), /fetch: want a function/],
    [() => floe.openai({ apiKey: "k", model: "m", body: [] }), /body: want an object/],
    [() => floe.openai({ apiKey: "k", model: "m", thinkingLevel: 3 }), /thinkingLevel: want a level/],
    [() => floe.openai({ apiKey: "k", model: "m", temprature: 1 }), /did you mean temperature\?/],
    // A header fetch() would refuse at every request (each then retried as a timeout).
    [() => floe.openai({ apiKey: "k", model: "m", headers: { "bad name": "v" } }), /headers\["bad name"\]: not a header name/],
    [() => floe.openai({ apiKey: "k", model: "m", headers: { "x-a": "caf\u0113" } }), /headers\["x-a"\]: a header value cannot hold/],
    [() => floe.openai({ apiKey: "k", model: "m", headers: { "x-a": "a\x01b" } }), /headers\["x-a"\]: a header value cannot hold a line break, another control character or a character above U\+00FF$/],
    // A key or a version fetch() would refuse: a key read from a file with
    // its line break, one pasted in typographic quotes (never shown).
    [() => floe.openai({ apiKey: "sk-secret\n", model: "m" }), /^openai: options.apiKey: a header value cannot hold a line break, another control character or a character above U\+00FF \(it ends in one: read from a file with it\?\)$/],
    [() => floe.openaiResponses({ apiKey: "\u201csk-secret\u201d", model: "m" }), /^openaiResponses: options.apiKey: a header value cannot hold a line break, another control character or a character above U\+00FF$/],
    [() => floe.anthropic({ apiKey: "sk-secret", model: "m", version: "2023-06-01\r\n" }), /^anthropic: options.version: a header value cannot hold/],
    [() => floe.openai({ apiKey: "k", model: "m", headers: { Authorization: "a", authorization: "b" } }), /options.headers: "Authorization" and "authorization" name one header/],
    // A fragment is not sent to the server (a query is: below); fetch()
    // refuses credentials.
    [() => floe.openaiCompatible({ model: "m", baseURL: "http://h/v1#x" }), /options.baseURL: want the API's base URL without a fragment \(#…\): a fragment is not sent to the server$/],
    [() => floe.openaiCompatible({ model: "m", baseURL: "https://x.openai.azure.com/openai/deployments/d?api-version=2024-10-21#" }), /options.baseURL: want the API's base URL without a fragment/],
    [() => floe.openaiCompatible({ model: "m", baseURL: "http://u:s3cret@h/v1" }), /options.baseURL: want the API's base URL without credentials \(user:password@\)/],
    // A body JSON cannot encode, and members the adapter writes itself (sent twice before).
    [() => { const b = {}; b.self = b; return floe.openai({ apiKey: "k", model: "m", body: b }); }, /openai: options.body: cannot be encoded as JSON/],
    [() => floe.openai({ apiKey: "k", model: "m", body: { n: 1n } }), /openai: options.body: cannot be encoded as JSON/],
    [() => { let d = {}; for (let i = 0; i < 20000; i++) d = { d }; return floe.openai({ apiKey: "k", model: "m", body: d }); }, /body: is nested too deeply for JSON/],
    [() => floe.openai({ apiKey: "k", model: "m", body: { model: "x" } }), /body.model: the adapter writes it \(use the model option\)/],
    [() => floe.openaiCompatible({ baseURL: "http://h/v1", model: "m", body: { messages: [] } }), /body.messages: the adapter writes it/],
    [() => floe.openai({ apiKey: "k", model: "m", body: { max_completion_tokens: 5 } }), /body.max_completion_tokens: the adapter writes it \(use the maxTokens option\)/],
    [() => floe.openaiResponses({ apiKey: "k", model: "m", body: { max_output_tokens: 5 } }), /body.max_output_tokens: the adapter writes it \(use the maxTokens option\)/],
    [() => floe.anthropic({ apiKey: "k", model: "m", body: { thinking: {} } }), /body.thinking: the adapter writes it \(use the thinkingLevel option\)/],
    ...[-1, 1.5, "5000", 86400001, NaN].map((v) => [() => floe.openai({ apiKey: "k", model: "m", idleTimeoutMs: v }), /options.idleTimeoutMs: want a whole number of milliseconds up to 86400000 \(0 = no idle timeout\)/]),
  ];
  for (const [f, re] of bad) {
    assert.throws(f, (e) => e.name === "FloeError" && e.code === "bad_argument" && re.test(e.message), String(re));
  }
  const m = floe.openaiCompatible({ baseURL: "http://127.0.0.1:11434/v1", model: "llama3" });
  assert.throws(() => floe.createSession({ meta: meta(), llm: { ...m } }), /llm: want an object with streamGenerate\(\) or a model/);
  assert.throws(() => floe.createSession({ meta: meta(), llm: m, newLLM: 3 }), /newLLM: want a function or a model/);
});

test("abort mid-stream: the connection closes and the open fragment is closed", async (t) => {
  let sent;
  const gotThere = new Promise((r) => (sent = r));
  const srv = await replayServer(t, async (req, res) => {
    res.writeHead(200, SSE_HEADERS);
    const full = openaiStream({ text: ["Hel", "lo", " never"] });
    const cut = full.indexOf('"lo"');
    res.write(full.slice(0, full.indexOf("\n\n", cut) + 2), () => sent()); // then hold the connection open
  });
  const ac = new AbortController();
  const session = oneRequest(floe.openaiCompatible({ baseURL: `${srv.url}/v1`, model: "m" }));
  const msgs = [];
  for await (const m of session.run("Hi", { signal: ac.signal })) {
    msgs.push(m);
    if (m.payload.type === "partial_text" && m.payload.text === "lo") ac.abort();
  }
  await gotThere;
  assert.equal(await srv.requests[0].closed, true, "the server saw the connection closed before the response ended");
  const ends = find(msgs, "request_end");
  assert.equal(ends[0].payload.status, "aborted");
  assert.equal(msgs.at(-1).payload.type, "abort");
  const ms = modelMessages(msgs);
  assert.equal(disciplineError(ms), null);
  assert.deepEqual(find(msgs, "text").map((m) => m.payload.text), ["Hello"]);
});

test("an auth error stops at once with the server's message", async (t) => {
  const srv = await replayServer(t, async (req, res) => {
    res.writeHead(401, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: "Incorrect API key provided: sk-te***", type: "invalid_request_error", code: "invalid_api_key" } }));
  });
  const session = floe.createSession({ meta: meta(), store: false, llm: floe.openai({ apiKey: "sk-test", model: "m", baseURL: `${srv.url}/v1` }), clock: instantClock() });
  const msgs = await collect(session.run("Hi"));
  const end = find(msgs, "request_end");
  assert.equal(end.length, 1, "auth is not retried");
  assert.equal(end[0].payload.status, "auth");
  assert.match(end[0].payload.error_message, /401.*Incorrect API key provided/);
  assert.equal(srv.requests.length, 1);
});

test("no response (refused, or refused like a browser's CORS failure) is timeout, saying what happened", async (t) => {
  const srv = await replayServer(t, () => {});
  const port = new URL(srv.url).port;
  await srv.close(); // nothing listens there now
  let msgs = await collect(oneRequest(floe.openaiCompatible({ baseURL: `http://127.0.0.1:${port}/v1`, model: "m" })).run("Hi"));
  let end = find(msgs, "request_end")[0].payload;
  assert.equal(end.status, "timeout");
  assert.match(end.error_message, new RegExp(`fetch http://127.0.0.1:${port}/v1/chat/completions: TypeError: fetch failed \\(ECONNREFUSED`));

  // A browser rejects a CORS refusal as "TypeError: Failed to fetch".
  const cors = async () => {
    throw new TypeError("Failed to fetch");
  };
  msgs = await collect(oneRequest(floe.anthropic({ apiKey: "k", model: "m", fetch: cors })).run("Hi"));
  end = find(msgs, "request_end")[0].payload;
  assert.equal(end.status, "timeout");
  assert.match(end.error_message, /fetch https:\/\/api\.anthropic\.com\/v1\/messages: TypeError: Failed to fetch/);
});

test("a server that goes silent ends the request as timeout after idleTimeoutMs, its open text closed", async (t) => {
  const srv = await replayServer(t, async (req, res) => {
    if (req.url.includes("silent")) return; // no headers, ever
    res.writeHead(200, SSE_HEADERS);
    const full = openaiStream({ text: ["Hel", "lo"] });
    res.write(full.slice(0, full.indexOf("\n\n", full.indexOf('"Hel"')) + 2)); // then nothing
  });
  for (const base of ["v1", "silent/v1"]) {
    const msgs = await collect(oneRequest(floe.openaiCompatible({ baseURL: `${srv.url}/${base}`, model: "m", idleTimeoutMs: 60 })).run("Hi"));
    const end = find(msgs, "request_end")[0].payload;
    assert.equal(end.status, "timeout", base);
    assert.equal(end.error_message, "openai: no data from the server for 60ms (the idle timeout)");
    assert.equal(disciplineError(modelMessages(msgs)), null);
    const texts = find(msgs, "text").map((m) => [m.payload.text, m.payload.stop_reason]);
    assert.deepEqual(texts, base === "v1" ? [["Hel", "timeout"]] : []);
  }
  assert.deepEqual(await Promise.all(srv.requests.map((r) => r.closed)), [true, true], "both connections were closed");
});

test("the idle timeout counts only the wait on the server: a consumer that pauses mid-stream does not trip it", async (t) => {
  const words = Array.from({ length: 5000 }, (_, i) => `w${i} `);
  const srv = await replayServer(t, async (req, res) => {
    res.writeHead(200, SSE_HEADERS);
    res.end(openaiStream({ text: words }));
  });
  const session = oneRequest(floe.openaiCompatible({ baseURL: `${srv.url}/v1`, model: "m", idleTimeoutMs: 50 }));
  const msgs = [];
  for await (const m of session.run("Hi")) {
    msgs.push(m);
    // Far longer than the idle timeout, while the engine's queue fills
    // and the adapter's emit waits: no read of the body meanwhile.
    if (msgs.length === 10) await new Promise((r) => setTimeout(r, 300));
  }
  assert.equal(find(msgs, "request_end")[0].payload.status, "completed");
  assert.equal(find(msgs, "text")[0].payload.text, words.join(""));
});

test("the body decides whether a 200 answer is an event stream, not its content-type", async (t) => {
  const srv = await replayServer(t, async (req, res) => {
    if (req.url.startsWith("/json-labelled")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(openaiStream({ text: ["Hi there"] }));
    } else {
      res.writeHead(200, SSE_HEADERS);
      res.end(JSON.stringify({ error: { code: 429, message: "Rate limit exceeded: free-models-per-min" } }));
    }
  });
  let msgs = await collect(oneRequest(floe.openaiCompatible({ baseURL: `${srv.url}/json-labelled/v1`, model: "m" })).run("Hi"));
  assert.equal(find(msgs, "request_end")[0].payload.status, "completed");
  assert.deepEqual(find(msgs, "text").map((m) => m.payload.text), ["Hi there"]);
  msgs = await collect(oneRequest(floe.openaiCompatible({ baseURL: `${srv.url}/v1`, model: "m" })).run("Hi"));
  const end = find(msgs, "request_end")[0].payload;
  assert.equal(end.status, "timeout");
  assert.equal(end.error_message, "openai: HTTP 200 answered a JSON body (text/event-stream; charset=utf-8), not an event stream: 429: Rate limit exceeded: free-models-per-min");
});

test("a fetch function that follows a redirect itself is refused, not its answer used", async (t) => {
  const followed = async () => {
    const r = new Response(openaiStream({ text: ["from elsewhere"] }), { headers: SSE_HEADERS });
    Object.defineProperty(r, "redirected", { value: true });
    Object.defineProperty(r, "url", { value: "https://elsewhere.example/v1/chat/completions" });
    return r;
  };
  const msgs = await collect(oneRequest(floe.openai({ apiKey: "k", model: "m", fetch: followed }), { config: { maxTurns: 1 } }).run("Hi"));
  const ends = find(msgs, "request_end");
  assert.equal(ends.length, 1, "permanent: not retried");
  assert.equal(ends[0].payload.status, "failed");
  assert.match(ends[0].payload.error_message, /HTTP 302: the fetch function followed a redirect to https:\/\/elsewhere\.example\/v1\/chat\/completions although asked not to/);
  assert.deepEqual(find(msgs, "text"), []);
});

test("a fetch function's Response that cannot be read ends the request at once, naming why: no wait for the idle timeout, no unhandled rejection", async (t) => {
  const unhandled = [];
  const onUnhandled = (e) => unhandled.push(e);
  process.on("unhandledRejection", onUnhandled);
  t.after(() => process.off("unhandledRejection", onUnhandled));
  const sse = () => new Response(openaiStream({ text: ["never read"] }), { headers: SSE_HEADERS });
  const cases = [
    // A wrapper that logged the body and returned the Response it read.
    [
      async () => {
        const r = sse();
        await r.text();
        return r;
      },
      /^openai: request failed: fetch https:\/\/api\.openai\.com\/v1\/chat\/completions: the fetch function's Response cannot be read: TypeError: .*locked/,
    ],
    [
      async () => {
        const r = sse();
        Object.defineProperty(r, "body", {
          get() {
            throw new Error("no body here");
          },
        });
        return r;
      },
      /: the fetch function's Response cannot be read: Error: no body here$/,
    ],
    [async () => ({ status: 200, headers: new Headers(SSE_HEADERS), body: { getReader: () => ({ read: async () => null }) } }), /: reading the response: the body's reader resolved to null, want \{done, value\}$/],
    [
      async () => ({
        status: 200,
        headers: new Headers(SSE_HEADERS),
        body: {
          getReader: () => ({
            read() {
              throw new Error("reader broken");
            },
          }),
        },
      }),
      /: reading the response: Error: reader broken$/,
    ],
  ];
  for (const [fetch, want] of cases) {
    // A long idle timeout, whose message would say the server was silent.
    const msgs = await collect(oneRequest(floe.openai({ apiKey: "k", model: "m", fetch, idleTimeoutMs: 5000 })).run("Hi"));
    const ends = find(msgs, "request_end");
    assert.equal(ends.length, 1);
    assert.match(ends[0].payload.error_message, want);
    assert.deepEqual(find(msgs, "text"), []);
  }
  assert.deepEqual(unhandled, []);
});

test("an abort cancels the response body of a fetch function that does not pass the signal on: the connection is not left streaming", async () => {
  const chunk = (t) => new TextEncoder().encode(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: t } }] })}\n\n`);
  const cancels = [];
  // A wrapper that copies init's method, headers and body, not its signal,
  // in front of a server that streams for ever.
  const fetch = async (url, init) => {
    let i = 0;
    const body = new ReadableStream({
      pull: (c) => c.enqueue(chunk(`w${i++} `)),
      cancel: (reason) => cancels.push(reason),
    });
    assert.equal(typeof init.method, "string");
    return new Response(body, { status: 200, headers: SSE_HEADERS });
  };
  // A break: the body is cancelled before the loop ends, with an AbortError.
  let deltas = 0;
  for await (const m of oneRequest(floe.openai({ apiKey: "k", model: "m", fetch })).run("Hi")) {
    if (m.payload.type === "partial_text" && ++deltas === 3) break;
  }
  assert.equal(cancels.length, 1);
  assert.equal(cancels[0]?.name, "AbortError");
  // The run's signal: with its reason.
  const stop = new AbortController();
  deltas = 0;
  for await (const m of oneRequest(floe.openai({ apiKey: "k", model: "m", fetch })).run("Hi", { signal: stop.signal })) {
    if (m.payload.type === "partial_text" && ++deltas === 3) stop.abort("stopped by the user");
  }
  assert.deepEqual(cancels.slice(1), ["stopped by the user"]);
});

test("a response that a fetch function ignoring the signal gives after the abort has its body cancelled, not left open", async () => {
  const cancels = [];
  let answer;
  const answered = new Promise((r) => (answer = r));
  let asked;
  const sent = new Promise((r) => (asked = r));
  const fetch = async () => {
    asked();
    await answered; // the signal is not listened to: the answer comes anyway
    const body = new ReadableStream({ pull: () => {}, cancel: (reason) => cancels.push(reason) });
    return new Response(body, { status: 200, headers: SSE_HEADERS });
  };
  const stop = new AbortController();
  const stream = oneRequest(floe.openai({ apiKey: "k", model: "m", fetch })).run("Hi", { signal: stop.signal });
  const reading = collect(stream);
  await sent;
  stop.abort("stopped by the user");
  const msgs = await reading;
  assert.equal(find(msgs, "request_end")[0].payload.status, "aborted");
  answer();
  await answered;
  // The response's then() ran when answered settled, after the fetch's own.
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(cancels, ["stopped by the user"]);
});

test("a redirect a fetch function ignoring the signal answered has its body cancelled, not left open", async () => {
  const cancels = [];
  const fetch = async () => {
    const body = new ReadableStream({ pull: () => {}, cancel: (reason) => cancels.push(reason?.name) });
    return new Response(body, { status: 307, headers: { location: "https://elsewhere.example/v1/chat/completions" } });
  };
  const msgs = await collect(oneRequest(floe.openai({ apiKey: "k", model: "m", fetch })).run("Hi"));
  assert.match(find(msgs, "request_end")[0].payload.error_message, /HTTP 307: the server redirected to https:\/\/elsewhere\.example/);
  assert.deepEqual(cancels, ["AbortError"]);
});

test("redirects are not followed: the key reaches only the configured endpoint", async (t) => {
  const other = await replayServer(t, async (req, res) => {
    res.writeHead(200, SSE_HEADERS);
    res.end(openaiStream({ text: ["stolen"] }));
  });
  const srv = await replayServer(t, async (req, res) => {
    res.writeHead(307, { location: `${other.url}/v1/chat/completions` });
    res.end();
  });
  const session = oneRequest(floe.openai({ apiKey: "sk-secret", model: "m", baseURL: `${srv.url}/v1` }), { config: { maxTurns: 1 } });
  const msgs = await collect(session.run("Hi"));
  assert.equal(find(msgs, "request_end").length, 1, "a redirect is permanent: not retried");
  assert.equal(srv.requests.length, 1);
  const end = find(msgs, "request_end")[0].payload;
  assert.equal(end.status, "failed");
  assert.match(end.error_message, /HTTP 307: the server redirected to http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions; Floe does not follow redirects/);
  assert.equal(other.requests.length, 0);
});

test("a tool task over two requests, then compaction with a fresh context of the same model, then resume", async (t) => {
  const bodies = [];
  const srv = await replayServer(t, async (req, res, body) => {
    const n = bodies.push(JSON.parse(body));
    res.writeHead(200, SSE_HEADERS);
    if (n === 1) {
      res.end(openaiStream({ text: ["Checking."], calls: [{ id: "call_a", name: "get_weather", args: ['{"city":', '"Oslo"}'] }, { id: "call_b", name: "get_weather", args: ['{"city":"Rome"}'] }] }));
    } else if (n === 2) res.end(openaiStream({ text: ["Oslo is cold; Rome was not asked."] }));
    else if (n === 3) res.end(openaiStream({ text: ["Summary: weather asked."] }));
    else res.end(openaiStream({ text: ["Yes."] }));
  });
  const model = floe.openaiCompatible({ baseURL: `${srv.url}/v1`, model: "m" });
  const session = floe.createSession({
    meta: meta("session-2026-12-01-09-00-00-0000abcd"),
    store: "memory",
    llm: model,
    tools: [{ name: "get_weather", description: "Weather", parameters: { type: "object" } }],
    environment: {
      async *executeTool({ toolCall }) {
        yield { type: "model_msg", payload: { type: "tool_call_output", role: "user", output: `cold in ${JSON.parse(toolCall.payload.arguments).city}`, tool_call_id: toolCall.payload.tool_call_id, stop_reason: "completed" } };
      },
    },
    config: { compaction: { mode: "summarize" } },
  });
  const msgs = await collect(session.run("Weather?", { approve: async (c) => (c.payload.tool_call_id === "call_a" ? "allow" : "deny") }));
  assert.deepEqual(find(msgs, "request_end").map((m) => m.payload.status), ["completed", "completed"]);
  assert.deepEqual(find(msgs, "tool_call").map((m) => [m.payload.tool_call_id, m.payload.arguments]), [["call_a", '{"city":"Oslo"}'], ["call_b", '{"city":"Rome"}']]);
  // Request 2 carries the assistant's calls and both outputs, paired by id.
  const second = bodies[1].messages;
  assert.ok(second.find((m) => m.role === "assistant" && m.tool_calls?.length === 2));
  assert.equal(second.find((m) => m.role === "tool" && m.tool_call_id === "call_a").content, "cold in Oslo");
  assert.ok(second.find((m) => m.role === "tool" && m.tool_call_id === "call_b"));
  // Compaction: no newLLM given, the model is its own factory.
  const comp = await collect(session.compact());
  assert.equal(find(comp, "compaction_end")[0].payload.status ?? "completed", "completed", JSON.stringify(find(comp, "compaction_end")));
  assert.equal(bodies.length, 3);
  await session.close();
  // Resume: the history is handed to a fresh context (loadHistory), so the
  // next request carries it.
  const resumed = await floe.resumeSession("session-2026-12-01-09-00-00-0000abcd", { llm: model, store: "memory" });
  const more = await collect(resumed.run("And now?"));
  assert.equal(find(more, "request_end")[0].payload.status, "completed");
  const last = bodies[3].messages;
  assert.ok(JSON.stringify(last).includes("Summary: weather asked."), JSON.stringify(last));
  assert.match(textOf(last.at(-1).content), /And now\?$/);
  await resumed.close();
});

// A resumed session's built-in model goes on counting from the session
// totals its Trace holds (ENGINE.md E-17.5, the reference's
// llm_session_tokens): its context started from zero, so the token_usage
// of every resumed run said the session had used one request's tokens.
test("resume: a built-in model's token_usage goes on from the session totals of the Trace", async (t) => {
  const srv = await replayServer(t, async (req, res) => {
    res.writeHead(200, SSE_HEADERS);
    res.end(openaiStream({ text: ["Hi."], usage: { prompt_tokens: 100, completion_tokens: 7 } }));
  });
  const id = "session-2026-12-01-09-00-00-00000707";
  const model = floe.openaiCompatible({ baseURL: `${srv.url}/v1`, model: "m" });
  const first = floe.createSession({ meta: meta(id), store: "memory", llm: model });
  const a = find(await collect(first.run("One.")), "token_usage").at(-1).payload;
  assert.deepEqual([a.session.output, a.session.total], [7, 107]);
  await first.close();
  for (const n of [2, 3]) {
    const resumed = await floe.resumeSession(id, { llm: model, store: "memory" });
    const u = find(await collect(resumed.run(`Run ${n}.`)), "token_usage").at(-1).payload;
    assert.deepEqual([u.request.total, u.session.output, u.session.total], [107, 7 * n, 107 * n], `run ${n}: ${JSON.stringify(u)}`);
    await resumed.close();
  }
  await floe.deleteSession(id, { store: "memory" });
});

// Google's Gemini API through its OpenAI endpoint, its base URL as
// Google's page gives it (a trailing slash; the host tells the adapter it
// talks to Gemini, and the model's fetch sends to the replay server),
// bytes hand-made from its documentation: a tool call whole without index,
// its thought signature in extra_content, finish_reason "stop". The
// signature reaches the tool call's fidelity in JavaScript and goes back on
// the call in the next request (Gemini 3 answers 400 without it); then a
// resumed session sends it again from the Trace, and a session resumed
// on a server not Gemini's sends the call without extra_content.
test("Gemini's OpenAI endpoint: a tool loop carries the thought signature back, after a resume too", async (t) => {
  const bodies = [];
  const chunk = (delta, finish) => `data: ${JSON.stringify({ choices: [{ delta, ...(finish ? { finish_reason: finish } : {}), index: 0 }], model: "gemini-3-flash-preview", object: "chat.completion.chunk" })}\n\n`;
  const call = { extra_content: { google: { thought_signature: "CpMCAdHtim9sig/A+=" } }, function: { arguments: '{"city":"Oslo"}', name: "get_weather" }, id: "function-call-42", type: "function" };
  const srv = await replayServer(t, async (req, res, body) => {
    const n = bodies.push({ url: req.url, body: JSON.parse(body) });
    res.writeHead(200, SSE_HEADERS);
    if (n === 1) res.end(chunk({ role: "assistant", tool_calls: [call] }) + chunk({ role: "assistant" }, "stop") + "data: [DONE]\n\n");
    else res.end(chunk({ role: "assistant", content: "Cold." }, "stop") + "data: [DONE]\n\n");
  });
  const google = "https://generativelanguage.googleapis.com";
  const model = floe.openaiCompatible({ baseURL: `${google}/v1beta/openai/`, model: "gemini-3-flash-preview", apiKey: "AIza-test", fetch: (url, init) => fetch(srv.url + url.slice(google.length), init) });
  const session = floe.createSession({
    meta: meta("session-2026-12-02-09-00-00-0000abcd"),
    store: "memory",
    llm: model,
    tools: [{ name: "get_weather", description: "Weather", parameters: { type: "object" } }],
    environment: {
      async *executeTool({ toolCall }) {
        yield { type: "model_msg", payload: { type: "tool_call_output", role: "user", output: "-3°C", tool_call_id: toolCall.payload.tool_call_id, stop_reason: "completed" } };
      },
    },
  });
  const msgs = await collect(session.run("Oslo?", { approve: async () => "allow" }));
  assert.deepEqual(find(msgs, "request_end").map((m) => m.payload.status), ["completed", "completed"]);
  assert.equal(bodies[0].url, "/v1beta/openai/chat/completions");
  assert.deepEqual(find(msgs, "tool_call")[0].payload.fidelity, call.extra_content);
  const sent = (i) => bodies[i].body.messages.find((m) => m.role === "assistant" && m.tool_calls).tool_calls[0];
  assert.deepEqual(sent(1), call);
  await session.close();
  const resumed = await floe.resumeSession("session-2026-12-02-09-00-00-0000abcd", { llm: model, store: "memory" });
  await collect(resumed.run("And Rome?"));
  assert.deepEqual(sent(2), call);
  await resumed.close();
  // The same Trace to another server: the call goes back without extra_content.
  const other = await floe.resumeSession("session-2026-12-02-09-00-00-0000abcd", { llm: floe.openaiCompatible({ baseURL: `${srv.url}/v1`, model: "m" }), store: "memory" });
  await collect(other.run("And Bern?"));
  assert.deepEqual(sent(3), { id: call.id, type: call.type, function: call.function });
  await other.close();
  // Gemini behind a proxy, told by gemini: true: the call goes back with
  // its signature, and minimal goes as low (Gemini refuses minimal).
  const proxied = await floe.resumeSession("session-2026-12-02-09-00-00-0000abcd", { llm: floe.openaiCompatible({ baseURL: `${srv.url}/proxy/v1`, model: "gemini-3-flash-preview", gemini: true, thinkingLevel: "minimal" }), store: "memory" });
  await collect(proxied.run("And Lima?"));
  assert.equal(bodies[4].url, "/proxy/v1/chat/completions");
  assert.deepEqual(sent(4), call);
  assert.equal(bodies[4].body.reasoning_effort, "low");
  await proxied.close();
  assert.throws(() => floe.openaiCompatible({ baseURL: srv.url, model: "m", gemini: "yes" }), { code: "bad_argument", message: /openaiCompatible: options\.gemini: want a boolean/ });
  assert.throws(() => floe.anthropic({ apiKey: "k", model: "m", gemini: true }), { code: "bad_argument", message: /anthropic: options\.gemini: unknown option of anthropic\(\) \(openaiCompatible\(\) and openai\(\) have it\)/ });
});

// A reply the provider cut at its output-token limit completes as far as it
// went (PROTOCOL.md has no stop reason for it), and onDiagnostic says so.
test("a reply cut by finish_reason \"length\" or stop_reason \"max_tokens\": an llm diagnostic names it", async () => {
  const cut = (text) => `data: {"id":"c1","choices":[{"index":0,"delta":{"role":"assistant","content":"${text}"},"finish_reason":null}]}\n\n` +
    `data: {"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}\n\ndata: [DONE]\n\n`;
  const anthropicCut = [
    `{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":3,"output_tokens":1}}}`,
    `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
    `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Half a sen"}}`,
    `{"type":"content_block_stop","index":0}`,
    `{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":3}}`,
    `{"type":"message_stop"}`,
  ].map((d) => `event: ${JSON.parse(d).type}\ndata: ${d}\n\n`).join("");
  for (const [llm, want] of [
    [floe.openai({ apiKey: "k", model: "m", fetch: async () => new Response(cut("Half a sen"), { headers: SSE_HEADERS }) }), 'finish_reason "length"'],
    [floe.anthropic({ apiKey: "k", model: "m", fetch: async () => new Response(anthropicCut, { headers: SSE_HEADERS }) }), 'stop_reason "max_tokens"'],
  ]) {
    const diags = [];
    const out = await collect(oneRequest(llm, { onDiagnostic: (d) => diags.push(d) }).run("Go."));
    assert.equal(out.find((m) => m.payload.type === "text")?.payload.text, "Half a sen");
    assert.equal(out.find((m) => m.payload.type === "request_end").payload.status, "completed");
    assert.deepEqual(diags.map((d) => d.kind), ["llm"], JSON.stringify(diags));
    assert.match(diags[0].message, new RegExp(`the provider cut the reply short \\(${want}\\)`));
  }
});
