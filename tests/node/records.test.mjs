// Streamed fragments, complete text, thinking, tool_call and
// tool_call_output messages and token_usage events cross the boundary as
// compact records, every other message as JSON (jsbridge/records.go). These tests run the same
// scripted sessions with records and with JSON only and compare the
// streams byte for byte (keys and their order included).
import { test } from "node:test";
import assert from "node:assert/strict";
import { floe, meta, usage, instantClock, collect, inMode } from "./helpers.mjs";

const model = (payload) => ({ type: "model_msg", payload });
const part = (type, event_type, body, extra = {}) => {
  const key = { partial_text: "text", partial_thinking: "thinking", partial_tool_call: "arguments", partial_tool_call_output: "output" }[type];
  const role = type === "partial_tool_call_output" ? "user" : "assistant";
  return model({ type, role, event_type, [key]: body, ...extra });
};
const pieces = ["", "a", "abcdefg ", "é", "日本語", "😀x", "\u2028\u2029", '"\\', "\n\t\u0000\u001f", "12:J3:", "Tda0:", "\ud800 lone", "x".repeat(3000)];
// Around the shim's record writer's limits: a short ASCII string is written
// byte by byte (up to 64 units), any other through TextEncoder; lengths of
// two digits and more; a batch past its first 4 KB buffer; a string long
// enough to be encoded before it is written.
const edges = ["a".repeat(63) + "é", "b".repeat(64), "c".repeat(65), "d".repeat(9) + "😀", "0123456789", "e".repeat(70) + "\ud83d", "f".repeat(5000), "g".repeat(1 << 16) + "é😀"];

/** A text streamed in the given pieces, with start, stop and the complete text. */
function* textOf(type, list, stop = {}) {
  const complete = { partial_text: "text", partial_thinking: "thinking" }[type];
  yield part(type, "start", "");
  for (const p of list) yield part(type, "delta", p);
  yield part(type, "stop", "", stop);
  yield model({ type: complete, role: "assistant", [complete]: list.join(""), stop_reason: "completed" });
}

function* toolCallOf(id, args) {
  const extra = { name: "read", tool_call_id: id };
  yield part("partial_tool_call", "start", "", extra);
  for (let i = 0; i < args.length; i += 3) yield part("partial_tool_call", "delta", args.slice(i, i + 3), extra);
  yield part("partial_tool_call", "stop", "", extra);
  yield model({ type: "tool_call", role: "assistant", name: "read", arguments: args, tool_call_id: id, stop_reason: "completed" });
}

const event = (payload) => ({ type: "event_msg", payload });
const tokens = (n = 5) => ({ cache_read: n, cache_write: n + 1, output: n + 2, total: n + 3 });

class Message {
  constructor(payload) {
    this.type = "model_msg";
    this.payload = payload;
  }
}

// Each scenario is what one request yields; odd shapes come one per
// scenario, as the first invalid message ends the request.
const scenarios = {
  "text in every kind of piece": () => [...textOf("partial_text", pieces)],
  "text at the record writer's edges": () => [...textOf("partial_text", edges)],
  "more than one batch (the writer's pooled buffers in turn)": () => [
    ...textOf("partial_text", Array.from({ length: 1500 }, (_, i) => pieces[i % pieces.length].slice(0, 40) + edges[i % edges.length].slice(60, 80))),
  ],
  "thinking, then text": () => [...textOf("partial_thinking", ["hm", "😀"]), ...textOf("partial_text", ["ok"])],
  "stop_reason on the stop fragment": () => [...textOf("partial_text", ["a"], { stop_reason: "completed" })],
  "a tool call, its output streamed": () => [...toolCallOf("c1", '{"path":"/é/😀"}')],
  "keys in another order": () => [
    { payload: { text: "", event_type: "start", role: "assistant", type: "partial_text" }, type: "model_msg" },
    { payload: { event_type: "delta", text: "b", type: "partial_text", role: "assistant" }, type: "model_msg" },
  ],
  "a class instance": () => [new Message({ type: "partial_text", role: "assistant", event_type: "start", text: "" })],
  "a getter": () => [model({ type: "partial_text", role: "assistant", event_type: "start", get text() { return ""; } })],
  "a payload that is not enumerable": () => [Object.defineProperty({ type: "model_msg" }, "payload", { value: { type: "partial_text", role: "assistant", event_type: "start", text: "" } })],
  "a null-prototype object": () => [Object.assign(Object.create(null), part("partial_text", "start", ""))],
  "toJSON": () => [{ ...part("partial_text", "start", ""), toJSON: () => part("partial_text", "start", "from toJSON") }],
  "an extra payload key": () => [part("partial_text", "start", "", { extra: 1 })],
  "an extra envelope key": () => [{ ...part("partial_text", "start", ""), origin: ["x"] }],
  "a timestamp": () => [{ timestamp: "2025-01-01T00:00:00.000Z", ...part("partial_text", "start", "") }],
  "timestamps on every message, as the reference's builders write them": () =>
    [...textOf("partial_text", ["a", "é", "b"]), ...toolCallOf("c1", '{"p":1}')].map((m, i) => ({ timestamp: `2025-01-01T00:00:0${Math.floor(i / 3)}.000Z`, ...m })),
  "timestamped and unstamped fragments mixed": () =>
    [...textOf("partial_text", ["a", "b", "c", "d"])].map((m, i) => (i % 2 ? { timestamp: "2025-01-01T00:00:00.000Z", ...m } : m)),
  "a timestamp after the payload": () => [{ ...part("partial_text", "start", ""), timestamp: "2025-01-01T00:00:00.000Z" }],
  "an empty timestamp": () => [{ timestamp: "", ...part("partial_text", "start", "") }],
  "a timestamp with an offset": () => [{ timestamp: "2025-01-01T02:00:00+02:00", ...part("partial_text", "start", "") }],
  "a bad timestamp": () => [{ timestamp: "yesterday", ...part("partial_text", "start", "") }],
  "a number timestamp": () => [{ timestamp: 5, ...part("partial_text", "start", "") }],
  "a timestamp with separators": () => [{ timestamp: "12:J3:t0:", ...part("partial_text", "start", "") }],
  "a number body": () => [part("partial_text", "start", 5)],
  "an undefined key": () => [part("partial_text", "start", "", { stop_reason: undefined })],
  "an empty stop_reason": () => [part("partial_text", "start", "", { stop_reason: "" })],
  "an unknown event": () => [part("partial_text", "end", "")],
  "a user partial_text": () => [model({ type: "partial_text", role: "user", event_type: "start", text: "" })],
  "a missing body": () => [model({ type: "partial_text", role: "assistant", event_type: "start" })],
  "the wrong body key": () => [model({ type: "partial_text", role: "assistant", event_type: "start", thinking: "" })],
  "an empty tool_call_id": () => [part("partial_tool_call", "start", "", { name: "read", tool_call_id: "" })],
  "a tool call without name": () => [part("partial_tool_call", "start", "", { tool_call_id: "c1" })],
  "an output fragment from the model": () => [part("partial_tool_call_output", "start", "", { tool_call_id: "c1" })],
  "images": () => [part("partial_tool_call_output", "start", "", { tool_call_id: "c1", images: [] })],
  // Complete messages: the common shape is a record, anything else JSON.
  "a complete text without stop_reason": () => [model({ type: "text", role: "assistant", text: "hé😀" })],
  "a complete text in every kind of piece": () => pieces.map((p) => model({ type: "text", role: "assistant", text: p })),
  "a complete text, keys in another order, timestamped": () => [
    { payload: { stop_reason: "completed", text: "x", role: "assistant", type: "text" }, type: "model_msg", timestamp: "2025-01-01T00:00:00.000Z" },
    { timestamp: "2025-01-01T00:00:00.000Z", type: "model_msg", payload: { type: "thinking", thinking: "y", role: "assistant" } },
    { timestamp: "2025-01-01T00:00:01.000Z", type: "model_msg", payload: { type: "text", role: "assistant", text: "z" } },
  ],
  "a complete text with a bad timestamp": () => [{ timestamp: "yesterday", ...model({ type: "text", role: "assistant", text: "x" }) }],
  "a complete text with a number timestamp": () => [{ timestamp: 5, ...model({ type: "text", role: "assistant", text: "x" }) }],
  "a user text from the model": () => [model({ type: "text", role: "user", text: "x" })],
  "a user text with sender": () => [model({ type: "text", role: "user", text: "x", sender: "harness" })],
  "a system text": () => [model({ type: "text", role: "system", text: "x" })],
  "a complete text with fidelity": () => [model({ type: "text", role: "assistant", text: "x", fidelity: { k: 1 } })],
  "a complete text with an event_type": () => [model({ type: "text", role: "assistant", event_type: "delta", text: "x" })],
  "every status as a stop_reason (each a one-byte code in a record)": () => [
    part("partial_text", "start", ""),
    ...["completed", "failed", "aborted", "timeout", "malformed", "auth"].map((s) => part("partial_text", "delta", s, { stop_reason: s })),
    part("partial_text", "stop", "", { stop_reason: "auth" }),
    model({ type: "text", role: "assistant", text: "completedfailedabortedtimeoutmalformedauth", stop_reason: "timeout" }),
  ],
  "a stop_reason that is a code's letter": () => [model({ type: "text", role: "assistant", text: "x", stop_reason: "c" })],
  "a stop_reason that is the code of none": () => [model({ type: "text", role: "assistant", text: "x", stop_reason: "-" })],
  "a complete text with an unknown stop_reason": () => [model({ type: "text", role: "assistant", text: "x", stop_reason: "bogus" })],
  "a complete text with an empty stop_reason": () => [model({ type: "text", role: "assistant", text: "x", stop_reason: "" })],
  "a complete text with a number body": () => [model({ type: "text", role: "assistant", text: 5 })],
  "a complete text without body": () => [model({ type: "text", role: "assistant" })],
  "a complete text with the thinking key": () => [model({ type: "text", role: "assistant", thinking: "x" })],
  "a complete text with a name": () => [model({ type: "text", role: "assistant", text: "x", name: "n" })],
  "a complete text with an extra key": () => [model({ type: "text", role: "assistant", text: "x", extra: "" })],
  "a complete text, a class instance": () => [new Message({ type: "text", role: "assistant", text: "x" })],
  "a user thinking": () => [model({ type: "thinking", role: "user", thinking: "x" })],
  "a tool call with an empty name": () => [model({ type: "tool_call", role: "assistant", name: "", arguments: "{}", tool_call_id: "c1" })],
  "a tool call without name": () => [model({ type: "tool_call", role: "assistant", arguments: "{}", tool_call_id: "c1" })],
  "a tool call with an empty tool_call_id": () => [model({ type: "tool_call", role: "assistant", name: "read", arguments: "{}", tool_call_id: "" })],
  "a tool call without tool_call_id": () => [model({ type: "tool_call", role: "assistant", name: "read", arguments: "{}" })],
  "a tool call without arguments": () => [model({ type: "tool_call", role: "assistant", name: "read", tool_call_id: "c1" })],
  "a tool call with empty arguments": () => [model({ type: "tool_call", role: "assistant", name: "read", arguments: "", tool_call_id: "c1" })],
  "a tool call from the user": () => [model({ type: "tool_call", role: "user", name: "read", arguments: "{}", tool_call_id: "c1" })],
  "a tool call with fidelity": () => [model({ type: "tool_call", role: "assistant", name: "read", arguments: "{}", tool_call_id: "c1", fidelity: {} })],
  "a tool call with an event_type": () => [model({ type: "tool_call", role: "assistant", event_type: "stop", name: "read", arguments: "{}", tool_call_id: "c1" })],
  "a tool call with unicode ids and a lone surrogate": () => [model({ type: "tool_call", role: "assistant", name: "读😀", arguments: '{"p":"\ud800"}', tool_call_id: "c\udc00😀" })],
  "two tool calls, timestamped": () =>
    [...toolCallOf("c1", "{}"), ...toolCallOf("c2", '{"a":1}')].map((m) => ({ timestamp: "2025-01-01T00:00:00.000Z", ...m })),
  "a tool output from the model": () => [model({ type: "tool_call_output", role: "user", output: "x", tool_call_id: "c1" })],
  // token_usage: the common shape is a U record, anything else JSON.
  "token usage, timestamped, keys in another order": () => [
    { payload: { request: tokens(), session: { total: 9007199254740991, output: 3, cache_write: 2, cache_read: 1 }, type: "token_usage" }, timestamp: "2025-01-01T00:00:00.000Z", type: "event_msg" },
  ],
  "token usage with an extra count": () => [event({ type: "token_usage", session: { ...tokens(), reasoning: 1 }, request: tokens() })],
  "token usage with an extra key": () => [event({ type: "token_usage", session: tokens(), request: tokens(), model: "m" })],
  "token usage with a fractional count": () => [event({ type: "token_usage", session: { ...tokens(), output: 1.5 }, request: tokens() })],
  "token usage with a negative count": () => [event({ type: "token_usage", session: tokens(), request: { ...tokens(), total: -1 } })],
  "token usage past 2^53": () => [event({ type: "token_usage", session: { ...tokens(), total: 2 ** 53 }, request: tokens() })],
  "token usage with a string count": () => [event({ type: "token_usage", session: { ...tokens(), total: "5" }, request: tokens() })],
  "token usage with a missing count": () => [event({ type: "token_usage", session: { cache_read: 0, cache_write: 0, output: 0 }, request: tokens() })],
  "token usage without request": () => [event({ type: "token_usage", session: tokens() })],
  "token usage with an origin": () => [{ ...event({ type: "token_usage", session: tokens(), request: tokens() }), origin: ["sub"] }],
  "token usage, a class instance": () => [Object.assign(new Message(null), event({ type: "token_usage", session: tokens(), request: tokens() }))],
  "token usage with a getter": () => [event({ type: "token_usage", session: tokens(), get request() { return tokens(); } })],
  "token usage of zeros, and again": () => [event({ type: "token_usage", session: tokens(0), request: tokens(0) }), event({ type: "token_usage", session: tokens(7), request: tokens(7) })],
};

// What the tool yields for a call: each case runs one tool call.
const toolScenarios = {
  "an output without stop_reason": (id) => [model({ type: "tool_call_output", role: "user", output: "x", tool_call_id: id })],
  "an output in every kind of piece, timestamped": (id) =>
    pieces.map((p, i) => ({ timestamp: `2025-01-01T00:00:0${i % 3}.000Z`, ...model({ type: "tool_call_output", role: "user", output: p, tool_call_id: id }) })),
  "an empty output": (id) => [model({ type: "tool_call_output", role: "user", output: "", tool_call_id: id, stop_reason: "failed" })],
  "an output with images": (id) => [model({ type: "tool_call_output", role: "user", output: "x", images: ["data:image/png;base64,AA=="], tool_call_id: id })],
  "an output with empty images": (id) => [model({ type: "tool_call_output", role: "user", output: "x", images: [], tool_call_id: id })],
  "an output with an empty tool_call_id": () => [model({ type: "tool_call_output", role: "user", output: "x", tool_call_id: "" })],
  "an output without tool_call_id": () => [model({ type: "tool_call_output", role: "user", output: "x" })],
  "an output of another call": () => [model({ type: "tool_call_output", role: "user", output: "x", tool_call_id: "other" })],
  "an output from the assistant": (id) => [model({ type: "tool_call_output", role: "assistant", output: "x", tool_call_id: id })],
  "an output with a name": (id) => [model({ type: "tool_call_output", role: "user", output: "x", tool_call_id: id, name: "read" })],
  "an output with a number body": (id) => [model({ type: "tool_call_output", role: "user", output: 1, tool_call_id: id })],
  "an output with an unknown stop_reason": (id) => [model({ type: "tool_call_output", role: "user", output: "x", tool_call_id: id, stop_reason: "bogus" })],
  "an output with an event_type": (id) => [model({ type: "tool_call_output", role: "user", event_type: "stop", output: "x", tool_call_id: id })],
  "an output with an extra envelope key": (id) => [{ ...model({ type: "tool_call_output", role: "user", output: "x", tool_call_id: id }), origin: ["sub"] }],
};

// By default the tool streams its output in the same pieces.
function* streamedOutput(id) {
  yield part("partial_tool_call_output", "start", "", { tool_call_id: id });
  for (const p of pieces) yield part("partial_tool_call_output", "delta", p, { tool_call_id: id });
  yield part("partial_tool_call_output", "stop", "", { tool_call_id: id, stop_reason: "completed" });
  yield model({ type: "tool_call_output", role: "user", output: pieces.join(""), tool_call_id: id, stop_reason: "completed" });
}

function runScenario(make, jsonOnly, tool = streamedOutput) {
  const environment = {
    async *executeTool({ toolCall }) {
      yield* tool(toolCall.payload.tool_call_id);
    },
  };
  return inMode(jsonOnly, async () => {
    let turn = 0;
    const llm = {
      async *streamGenerate() {
        turn++;
        if (turn === 1) for (const m of make()) yield m;
        yield usage();
        return { status: "completed" };
      },
    };
    const session = floe.createSession({ meta: meta(), llm, environment, clock: instantClock(), config: { maxReconnects: 0 } });
    const msgs = await collect(session.run("go", { approve: () => "allow" }));
    await session.close();
    return msgs.map((m) => JSON.stringify(m));
  });
}

for (const [name, make] of Object.entries(scenarios)) {
  test(`records and JSON give the same stream: ${name}`, async () => {
    const viaJSON = await runScenario(make, true);
    const viaRecords = await runScenario(make, false);
    assert.deepEqual(viaRecords, viaJSON);
    assert.ok(viaJSON.some((s) => s.includes('"request_end"')));
  });
}

for (const [name, tool] of Object.entries(toolScenarios)) {
  test(`records and JSON give the same stream: a tool yields ${name}`, async () => {
    const make = () => [...toolCallOf("c1", '{"p":1}')];
    const viaJSON = await runScenario(make, true, tool);
    const viaRecords = await runScenario(make, false, tool);
    assert.deepEqual(viaRecords, viaJSON);
    assert.ok(viaJSON.some((s) => s.includes('"tool_call_output"')));
  });
}

// A message that travels as a record is read once (by the shim's record
// writer); one that travels as JSON a second time, by JSON.stringify. A
// getter on its body counts the reads.
test("complete messages of the common shape cross without JSON, the others as JSON", async () => {
  const counted = (payload, key, extra = {}) => {
    const value = payload[key];
    const m = { ...extra, type: "model_msg", payload: { ...payload } };
    const c = { reads: 0, m };
    Object.defineProperty(m.payload, key, {
      enumerable: true,
      get() {
        c.reads++;
        return value;
      },
    });
    return c;
  };
  const call = { type: "tool_call", role: "assistant", name: "read", arguments: "{}", tool_call_id: "c1" };
  const output = { type: "tool_call_output", role: "user", output: "out", tool_call_id: "c1" };
  const ts = { timestamp: "2025-01-01T00:00:00.000Z" };
  const records = [
    counted({ type: "text", role: "assistant", text: "hi", stop_reason: "completed" }, "text"),
    counted({ type: "thinking", role: "assistant", thinking: "hm" }, "thinking", ts),
    counted({ ...call, stop_reason: "completed" }, "arguments", ts),
  ];
  const json = [
    counted({ type: "text", role: "assistant", text: "hi", stop_reason: "" }, "text"),
    counted({ type: "text", role: "user", text: "hi", sender: "harness" }, "text"),
    counted({ type: "text", role: "assistant", text: "hi", fidelity: {} }, "text"),
    counted({ type: "text", role: "assistant", event_type: "stop", text: "hi" }, "text"),
    counted({ ...call, name: "", tool_call_id: "c2" }, "arguments"),
    counted({ ...call, tool_call_id: "" }, "arguments"),
  ];
  const outRecord = counted({ ...output, stop_reason: "completed" }, "output", ts);
  const outJSON = counted({ ...output, images: ["data:,"] }, "output");
  // Each message in a session of its own: an invalid one ends its request.
  const run = async (fromModel, fromTool) => {
    let turn = 0;
    const llm = {
      async *streamGenerate() {
        turn++;
        if (turn === 1) yield* fromModel;
        yield usage();
        return { status: "completed" };
      },
    };
    const environment = {
      async *executeTool() {
        yield fromTool;
      },
    };
    const session = floe.createSession({ meta: meta(), llm, environment, clock: instantClock(), config: { maxReconnects: 0 } });
    await collect(session.run("go", { approve: () => "allow" }));
    await session.close();
  };
  for (const c of [...records, ...json]) await run([c.m]);
  for (const c of [outRecord, outJSON]) await run([model({ ...call, stop_reason: "completed" })], c.m);
  assert.deepEqual([...records, outRecord].map((c) => c.reads), [1, 1, 1, 1]);
  for (const c of [...json, outJSON]) assert.equal(c.reads, 2, JSON.stringify(c.m));
});

// The same for token_usage: a getter on a count counts the reads.
test("token usage of the common shape crosses without JSON, the others as JSON", async () => {
  const counted = (request) => {
    const c = { reads: 0, request };
    const session = { cache_read: 1, cache_write: 2, output: 3 };
    Object.defineProperty(session, "total", {
      enumerable: true,
      get() {
        c.reads++;
        return 4;
      },
    });
    c.m = event({ type: "token_usage", session, request });
    return c;
  };
  const record = counted(tokens());
  const json = counted({ ...tokens(), total: 2 ** 53 }); // a count JavaScript may not hold exactly: as JSON
  for (const c of [record, json]) {
    const llm = {
      async *streamGenerate() {
        yield c.m;
      },
    };
    const session = floe.createSession({ meta: meta(), llm, clock: instantClock() });
    const msgs = await collect(session.run("go"));
    await session.close();
    const [u] = msgs.filter((m) => m.payload.type === "token_usage");
    assert.deepEqual(Object.keys(u), ["timestamp", "type", "payload"]);
    assert.deepEqual(Object.keys(u.payload), ["type", "session", "request"]);
    assert.deepEqual(u.payload.session, { cache_read: 1, cache_write: 2, output: 3, total: 4 });
    assert.deepEqual(u.payload.request, c.request);
  }
  assert.equal(record.reads, 1);
  assert.equal(json.reads, 2);
});

test("messages from records are fresh plain objects", async () => {
  const yielded = [...textOf("partial_text", ["a", "b"])];
  const llm = {
    async *streamGenerate() {
      yield* yielded;
      yield usage();
    },
  };
  const session = floe.createSession({ meta: meta(), llm });
  const msgs = await collect(session.run("go"));
  await session.close();
  const deltas = msgs.filter((m) => m.payload.event_type === "delta");
  assert.deepEqual(deltas.map((m) => m.payload.text), ["a", "b"]);
  for (const m of deltas) {
    assert.equal(Object.getPrototypeOf(m), Object.prototype);
    assert.equal(Object.getPrototypeOf(m.payload), Object.prototype);
    assert.ok(!yielded.includes(m) && !yielded.some((y) => y.payload === m.payload));
    assert.deepEqual(Object.keys(m), ["timestamp", "type", "payload"]);
    assert.deepEqual(Object.keys(m.payload), ["type", "role", "event_type", "text"]);
  }
  const [complete] = msgs.filter((m) => m.payload.type === "text" && m.payload.role === "assistant");
  assert.equal(complete.payload.text, "ab");
  assert.equal(Object.getPrototypeOf(complete.payload), Object.prototype);
  assert.ok(!yielded.some((y) => y.payload === complete.payload));
  assert.deepEqual(Object.keys(complete), ["timestamp", "type", "payload"]);
  assert.deepEqual(Object.keys(complete.payload), ["type", "role", "text", "stop_reason"]);
});

test("a batch that starts while an earlier batch's macrotask is pending is delivered by it", { timeout: 20000 }, async () => {
  // 600 deltas fill a batch (512 records), which goes to Go at once; the
  // macrotask its first message scheduled is still pending when the next
  // batch starts, and only that macrotask can deliver it: the model waits
  // for the consumer to see the last delta before it yields the rest.
  let seen;
  const gate = new Promise((resolve) => (seen = resolve));
  const llm = {
    async *streamGenerate() {
      yield part("partial_text", "start", "");
      for (let i = 0; i < 600; i++) yield part("partial_text", "delta", "a");
      yield part("partial_text", "delta", "z");
      await gate;
      yield part("partial_text", "stop", "");
      yield model({ type: "text", role: "assistant", text: "a".repeat(600) + "z", stop_reason: "completed" });
      yield usage();
    },
  };
  const session = floe.createSession({ meta: meta(), llm, clock: instantClock() });
  let deltas = 0;
  let ended = false;
  for await (const m of session.run("go")) {
    if (m.payload.type === "partial_text" && m.payload.event_type === "delta" && m.payload.text === "z") seen();
    if (m.payload.type === "partial_text" && m.payload.event_type === "delta") deltas++;
    if (m.payload.type === "request_end") ended = true;
  }
  await session.close();
  assert.equal(deltas, 601);
  assert.ok(ended);
});

test("a timestamped fragment that starts a batch is delivered although nothing follows it yet", { timeout: 20000 }, async () => {
  // The model waits for the consumer to see its first fragment before it
  // yields the rest: the fragment (a t record, then its own) must reach
  // Go within a macrotask, not wait for a full batch.
  let seen;
  const gate = new Promise((resolve) => (seen = resolve));
  const llm = {
    async *streamGenerate() {
      yield { timestamp: "2025-01-01T00:00:00.000Z", ...part("partial_text", "start", "") };
      await gate;
      yield { timestamp: "2025-01-01T00:00:01.000Z", ...part("partial_text", "delta", "x") };
      yield part("partial_text", "stop", "");
      yield model({ type: "text", role: "assistant", text: "x", stop_reason: "completed" });
      yield usage();
    },
  };
  const session = floe.createSession({ meta: meta(), llm, clock: instantClock() });
  const got = [];
  for await (const m of session.run("go")) {
    got.push(m);
    if (m.payload.type === "partial_text" && m.payload.event_type === "start") seen();
  }
  await session.close();
  const start = got.find((m) => m.payload.type === "partial_text");
  assert.equal(start.timestamp, "2025-01-01T00:00:00.000Z");
  assert.ok(got.some((m) => m.payload.type === "request_end"));
});

// A U record's eight counts are read digit by digit: exactly up to 2^53 − 1,
// and a record that does not hold eight counts is a malformed batch.
test("a consumer batch's token usage record: its counts exact, a malformed one refused", () => {
  const read = floe[Symbol.for("floe.debug")].readBatch;
  const [m] = read("t24:2025-01-01T00:00:00.000ZU9007199254740991,0,12,345,6,7,8,9;");
  assert.deepEqual(m, {
    timestamp: "2025-01-01T00:00:00.000Z",
    type: "event_msg",
    payload: { type: "token_usage", session: { cache_read: 9007199254740991, cache_write: 0, output: 12, total: 345 }, request: { cache_read: 6, cache_write: 7, output: 8, total: 9 } },
  });
  assert.equal(read("U1,2,3,4,5,6,7,8;U9,9,9,9,9,9,9,9;").length, 2);
  for (const bad of ["U1,2,3,4,5,6,7;", "U1,2,3,4,5,6,7,8", "U1,2,3,4,5,6,7,8,", "U,1,2,3,4,5,6,7;", "U1,2,3,4,5,6,7,-8;", "U1,2,3,4,5,6,7,8 ;", "U"]) {
    assert.throws(() => read(bad), { name: "FloeError", code: "internal", message: "pull: a malformed batch" }, bad);
  }
});

// The engine's own events of the common shape (request_begin, request_end
// with its status alone, approval_decision) reach the stream as E records;
// with a retry's or an error's details, as JSON. Either way the stream is
// the one JSON gives.
test("records and JSON give the same stream: the engine's own events", async () => {
  const run = (jsonOnly) =>
    inMode(jsonOnly, async () => {
      let turn = 0;
      const llm = {
        async *streamGenerate() {
          turn++;
          if (turn === 1) {
            for (const [id, d] of [["a", "allow"], ["d", "deny"], ["f", "forbidden"], ["é😀", "allow"]]) {
              yield model({ type: "tool_call", role: "assistant", name: d, arguments: "{}", tool_call_id: id, stop_reason: "completed" });
            }
          }
          if (turn === 2) return { status: "failed", errorMessage: "overloaded" }; // retried: request_end with attempt and retry_in_ms
          yield usage();
          return { status: "completed" };
        },
      };
      const environment = {
        async *executeTool({ toolCall }) {
          yield model({ type: "tool_call_output", role: "user", output: "ok", tool_call_id: toolCall.payload.tool_call_id });
        },
      };
      const session = floe.createSession({ meta: meta(), llm, environment, clock: instantClock(), config: { maxReconnects: 1, reconnectBackoffMs: 0 } });
      const msgs = await collect(session.run("go", { approve: (c) => c.payload.name }));
      await session.close();
      return msgs.map((m) => JSON.stringify(m));
    });
  const viaJSON = await run(true);
  assert.deepEqual(await run(false), viaJSON);
  const events = viaJSON.map((s) => JSON.parse(s).payload).filter((p) => p.type === "request_end" || p.type === "approval_decision");
  assert.ok(events.some((p) => p.attempt === 1 && p.retry_in_ms === 0 && p.error_message === "overloaded"), JSON.stringify(events));
  assert.deepEqual(
    events.filter((p) => p.type === "approval_decision").map((p) => p.decision),
    ["allow", "deny", "forbidden", "allow"],
  );
  assert.deepEqual(events[4], { type: "request_end", status: "completed" }, JSON.stringify(events)); // an E record
  assert.ok(events.some((p) => p.type === "request_end" && p.attempt === 2), JSON.stringify(events));
});

test("a consumer batch's event records: each event and status, a malformed one refused", () => {
  const read = floe[Symbol.for("floe.debug")].readBatch;
  const ts = "2025-01-01T00:00:00.000Z";
  assert.deepEqual(read(`t24:${ts}EbEecEeh`), [
    { timestamp: ts, type: "event_msg", payload: { type: "request_begin" } },
    { timestamp: ts, type: "event_msg", payload: { type: "request_end", status: "completed" } },
    { timestamp: ts, type: "event_msg", payload: { type: "request_end", status: "auth" } },
  ]);
  assert.deepEqual(read("Ee5:bogusEaa2:c1Ead0:Eaf3:é😀"), [
    { type: "event_msg", payload: { type: "request_end", status: "bogus" } },
    { type: "event_msg", payload: { type: "approval_decision", decision: "allow", tool_call_id: "c1" } },
    { type: "event_msg", payload: { type: "approval_decision", decision: "deny", tool_call_id: "" } },
    { type: "event_msg", payload: { type: "approval_decision", decision: "forbidden", tool_call_id: "é😀" } },
  ]);
  for (const bad of ["E", "Ex", "Eaz2:c1", "Ea", "Eaa", "Eaax:", "Ee"]) {
    assert.throws(() => read(bad), { name: "FloeError", code: "internal", message: "pull: a malformed batch" }, bad);
  }
});

// Go writes the tool call it hands the approver and the tool, and a
// request's new messages, as records too (jsbridge/messages.go): each
// gets the object JSON.parse gives the message's JSON, keys in order, the
// same as the stream shows, whether the message is a record or JSON there.
test("the approver, the tool and the model get the messages the stream shows", async () => {
  // A call is dispatched only with stop_reason "completed" (E-5.2).
  const call = (id, extra = {}) =>
    model({ type: "tool_call", role: "assistant", name: "read", arguments: '{"path":"é/😀 \\"x\\""}', tool_call_id: id, stop_reason: "completed", ...extra });
  const calls = [
    call("plain"),
    { timestamp: "2025-01-01T00:00:09.000Z", ...call("stamped") },
    { payload: { stop_reason: "completed", tool_call_id: "reordered", arguments: "{}", name: "read", role: "assistant", type: "tool_call" }, type: "model_msg" },
    new Message({ type: "tool_call", role: "assistant", name: "read", arguments: "{}", tool_call_id: "instance", stop_reason: "completed" }), // JSON from the shim: JSON to the tool
    call("long", { arguments: JSON.stringify({ text: "x".repeat(100) + "ü".repeat(70) }) }),
  ];
  const outputs = {
    plain: [model({ type: "tool_call_output", role: "user", output: "out é", tool_call_id: "plain", stop_reason: "completed" })],
    stamped: [{ timestamp: "2025-01-01T00:00:10.000Z", ...model({ type: "tool_call_output", role: "user", output: "", tool_call_id: "stamped" }) }],
    reordered: [part("partial_tool_call_output", "delta", "streamed", { tool_call_id: "reordered" })],
    instance: [model({ type: "tool_call_output", role: "user", output: "x", images: ["data:,"], tool_call_id: "instance" })], // JSON
    long: [],
  };
  const seen = { approver: {}, tool: {}, requests: [] };
  let turn = 0;
  const llm = {
    async *streamGenerate({ newMessages }) {
      assert.ok(Array.isArray(newMessages) && newMessages.every((m) => Object.getPrototypeOf(m) === Object.prototype));
      seen.requests.push(JSON.stringify(newMessages));
      turn++;
      if (turn === 1) yield* calls;
      yield usage();
      return { status: "completed" };
    },
  };
  const environment = {
    async *executeTool({ toolCall }) {
      assert.equal(Object.getPrototypeOf(toolCall), Object.prototype);
      seen.tool[toolCall.payload.tool_call_id] = JSON.stringify(toolCall);
      yield* outputs[toolCall.payload.tool_call_id];
    },
  };
  const approve = (toolCall) => {
    seen.approver[toolCall.payload.tool_call_id] = JSON.stringify(toolCall);
    return "allow";
  };
  const session = floe.createSession({ meta: meta(), llm, environment, clock: instantClock(), config: { maxReconnects: 0 } });
  const msgs = await collect(session.run("hé 😀", { approve }));
  await session.close();
  const complete = (type) => msgs.filter((m) => m.payload.type === type);
  const shown = Object.fromEntries(complete("tool_call").map((m) => [m.payload.tool_call_id, JSON.stringify(m)]));
  assert.deepEqual(Object.keys(shown), calls.map((c) => c.payload.tool_call_id));
  assert.deepEqual(seen.approver, shown);
  assert.deepEqual(seen.tool, shown);
  assert.equal(seen.requests.length, 2);
  assert.equal(seen.requests[0], JSON.stringify([model({ type: "text", role: "user", text: "hé 😀", stop_reason: "completed" })]));
  // The next request's input: the outputs in the order of their calls.
  const outputOf = Object.fromEntries(complete("tool_call_output").map((m) => [m.payload.tool_call_id, m]));
  assert.equal(seen.requests[1], JSON.stringify(calls.map((c) => outputOf[c.payload.tool_call_id])));
  assert.ok(seen.requests[1].includes('"images":["data:,"]') && seen.requests[1].includes('"output":"streamed"'));
});
