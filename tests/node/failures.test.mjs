// Each failure of a callback yields the protocol's answer (ENGINE.md); API
// misuse is a FloeError naming the argument; a Go panic leaves the runtime up.
import { test } from "node:test";
import assert from "node:assert/strict";
import { floe, meta, scriptedLLM, say, text, usage, toolCall, collect, find, instantClock, never } from "./helpers.mjs";

const bad = { type: "model_msg", payload: { type: "text", role: "assistant", text: 5 } };

const llmCases = [
  ["throws synchronously", () => { throw new Error("sync boom"); }, "failed", "sync boom"],
  ["rejects", async () => { throw new Error("async boom"); }, "failed", "async boom"],
  ["throws a non-Error", () => { throw "plain string"; }, "failed", "plain string"],
  ["returns null", () => null, "failed", "returned null"],
  ["returns a number", () => 42, "failed", "returned a number"],
  ["returns a non-iterable", () => ({ hello: 1 }), "failed", "not an async iterator"],
  ["returns a fetch Response, not its body read", () => new Response("x"), "failed", "returned a Response, which is not an async iterator: read its body"],
  ["returns its generator function uncalled", () => async function* () {}, "failed", "returned a function, which is not an async iterator: call it"],
  ["throws mid-stream", async function* () { yield* text("half"); throw new Error("lost"); }, "failed", "lost"],
  ["yields a number", async function* () { yield 7; }, "malformed", "yielded a number"],
  ["yields a malformed message", async function* () { yield* text("ok"); yield bad; }, "malformed", "payload.text"],
  ["returns a bad outcome", async function* () { return { status: "fine" }; }, "failed", "outcome"],
];

for (const [name, streamGenerate, status, message] of llmCases) {
  test(`llm ${name}: request_end ${status}, then retries`, async () => {
    const clock = instantClock();
    const session = floe.createSession({
      meta: meta(),
      clock,
      config: { maxReconnects: 1, reconnectBackoffMs: 10 },
      llm: scriptedLLM(streamGenerate, say("recovered")),
    });
    const msgs = await collect(session.run("go"));
    const ends = find(msgs, "request_end").map((m) => m.payload);
    assert.equal(ends.length, 2, JSON.stringify(ends));
    assert.equal(ends[0].status, status);
    assert.match(ends[0].error_message, new RegExp(message));
    assert.equal(ends[0].retry_in_ms, 10);
    assert.deepEqual(clock.sleeps, [10]);
    assert.equal(ends[1].status, "completed");
  });
}

// A model's outcome may say how long to wait before the retry
// (retryAfterMs, e.g. from its server's Retry-After), as the built-in
// adapters' do: a longer wait than the backoff's is waited and announced;
// one past 120 s fails the request at once, permanent, naming the wait;
// anything but a number of 0 or more is the request failing, named.
const waitCases = [
  ["a wait longer than the backoff's", { status: "timeout", errorMessage: "HTTP 429", retryAfterMs: 7500 }, ["timeout", "completed"], [7500], [7500]],
  ["a fraction of a millisecond, rounded up", { status: "failed", retryAfterMs: 1500.25 }, ["failed", "completed"], [1501], [1501]],
  ["a wait shorter than the backoff's", { status: "malformed", retryAfterMs: 5 }, ["malformed", "completed"], [10], [10]],
  ["the longest wait", { status: "timeout", retryAfterMs: 120_000 }, ["timeout", "completed"], [120_000], [120_000]],
  ["a permanent failure's wait", { status: "failed", permanent: true, retryAfterMs: 7500 }, ["failed"], [undefined], []],
  ["a wait past 120 s", { status: "timeout", errorMessage: "HTTP 429", retryAfterMs: 120_001 }, ["failed"], [undefined], [],
    "HTTP 429: the model asks for a wait of 121 s before another request, longer than a retry waits (at most 120 s)"],
  ["a wait past 120 s and no message", { status: "failed", retryAfterMs: 3_600_000 }, ["failed"], [undefined], [],
    "the model asks for a wait of 3600 s before another request, longer than a retry waits (at most 120 s)"],
  ["a negative wait", { status: "timeout", retryAfterMs: -1 }, ["failed", "completed"], [10], [10],
    "llm.streamGenerate: outcome.retryAfterMs: want a number of milliseconds, 0 or more, got -1"],
  ["a wait that is NaN", { status: "timeout", retryAfterMs: NaN }, ["failed", "completed"], [10], [10], "outcome.retryAfterMs: want a number of milliseconds, 0 or more, got NaN"],
  ["a wait that is Infinity", { status: "timeout", retryAfterMs: Infinity }, ["failed", "completed"], [10], [10], "outcome.retryAfterMs: want a number of milliseconds, 0 or more, got Infinity"],
  ["a wait as a string", { status: "timeout", retryAfterMs: "20" }, ["failed", "completed"], [10], [10], "outcome.retryAfterMs: want a number of milliseconds, 0 or more, got a string"],
];

for (const [name, outcome, statuses, retryIn, sleeps, message] of waitCases) {
  test(`llm outcome.retryAfterMs, ${name}`, async () => {
    const clock = instantClock();
    const session = floe.createSession({
      meta: meta(),
      clock,
      config: { maxReconnects: 1, reconnectBackoffMs: 10 },
      llm: scriptedLLM(async function* () {
        yield usage();
        return outcome;
      }, say("recovered")),
    });
    const msgs = await collect(session.run("go"));
    const ends = find(msgs, "request_end").map((m) => m.payload);
    assert.deepEqual(ends.map((e) => e.status), statuses, JSON.stringify(ends));
    assert.deepEqual(ends.slice(0, 1).map((e) => e.retry_in_ms), retryIn);
    assert.deepEqual(clock.sleeps, sleeps);
    if (message) assert.equal(ends[0].error_message.slice(-message.length), message);
    if (statuses.length === 1) assert.equal(msgs.at(-1).payload.type, "abort");
  });
}

const toolCases = [
  ["throws synchronously", () => { throw new Error("sync tool"); }, "sync tool"],
  ["rejects", async () => { throw new Error("async tool"); }, "async tool"],
  ["returns null", () => null, "returned null"],
  ["returns a number", () => 3, "returned a number"],
  ["returns a non-iterable", () => ({}), "not an async iterator"],
  ["returns a fetch Response, not its body read", () => new Response("x"), "returned a Response, which is not an async iterator: read its body"],
  ["returns its generator function uncalled", () => async function* () {}, "returned a function, which is not an async iterator: call it"],
  ["yields a number", async function* () { yield 1; }, "yielded a number"],
  ["yields a malformed message", async function* () { yield bad; }, "payload.text"],
];

// A model that calls tool t1, then ends the task.
const callsTool = () =>
  scriptedLLM(
    async function* () {
      yield toolCall("t1");
      yield usage();
      return { status: "completed" };
    },
    say("done"),
  );

for (const [name, executeTool, message] of toolCases) {
  test(`tool ${name}: a failed tool_call_output`, async () => {
    const session = floe.createSession({ meta: meta(), llm: callsTool(), environment: { executeTool } });
    const msgs = await collect(session.run("go", { approve: () => "allow" }));
    const out = find(msgs, "tool_call_output").map((m) => m.payload);
    assert.equal(out.length, 1);
    assert.equal(out[0].stop_reason, "failed");
    assert.match(out[0].output, /^\[tool error\] /);
    assert.match(out[0].output, new RegExp(message));
    assert.equal(msgs.at(-1).payload.type, "request_end");
  });
}

test("a tool that never settles is abandoned after the abort", async () => {
  const ac = new AbortController();
  const session = floe.createSession({
    meta: meta(),
    abortGraceMs: 20,
    llm: callsTool(),
    environment: { executeTool: () => never() },
  });
  const msgs = [];
  for await (const m of session.run("go", { approve: () => "allow", signal: ac.signal })) {
    msgs.push(m);
    if (m.payload.type === "request_end") ac.abort();
  }
  assert.equal(msgs.at(-1).payload.type, "abort");
  assert.equal(find(msgs, "tool_call_output").length, 1);
});

const approverCases = [
  ["throws synchronously", () => { throw new Error("no"); }],
  ["rejects", async () => { throw new Error("channel closed"); }],
  ["returns a number", () => 1],
  ["returns another string", () => "maybe"],
  ["returns null", () => null],
];

for (const [name, approve] of approverCases) {
  test(`approver ${name}: deny`, async () => {
    const diags = [];
    const session = floe.createSession({
      meta: meta(),
      llm: callsTool(),
      environment: { executeTool: () => assert.fail("a denied tool ran") },
      onDiagnostic: (d) => diags.push(d),
    });
    const msgs = await collect(session.run("go", { approve }));
    assert.deepEqual(find(msgs, "approval_decision").map((m) => m.payload.decision), ["deny"]);
    assert.equal(find(msgs, "tool_call_output")[0].payload.output, "Tool call denied by user.");
    assert.ok(diags.every((d) => d.kind !== "panic"), JSON.stringify(diags));
    assert.ok(diags.some((d) => d.kind === "approver" && d.message), JSON.stringify(diags));
  });
}

test("an approver that never settles: the abort ends the run without a decision", async () => {
  const ac = new AbortController();
  const session = floe.createSession({ meta: meta(), llm: callsTool() });
  const msgs = [];
  const approve = () => {
    setTimeout(() => ac.abort(), 5);
    return never();
  };
  for await (const m of session.run("go", { approve, signal: ac.signal })) msgs.push(m);
  assert.equal(find(msgs, "approval_decision").length, 0);
  assert.deepEqual(msgs.at(-1).payload, { type: "abort", reason: "aborted by user" });
});

const misuse = [
  ["createSession without options", () => floe.createSession(), "createSession: options"],
  ["createSession without llm", () => floe.createSession({ meta: meta() }), "createSession: llm"],
  ["createSession with a bad meta", () => floe.createSession({ meta: "s", llm: scriptedLLM(say("x")) }), "createSession: meta"],
  ["createSession with a numeric session_id", () => floe.createSession({ meta: { session_id: 5 }, llm: scriptedLLM(say("x")) }), "session_id"],
  ["a config number as a string", () => floe.createSession({ meta: meta(), llm: scriptedLLM(say("x")), config: { maxTurns: "3" } }), "config.maxTurns"],
  ["a clock without sleep", () => floe.createSession({ meta: meta(), llm: scriptedLLM(say("x")), clock: { now: Date.now } }), "createSession: clock"],
  ["createSubagent without llm", () => floe.createSubagent({ meta: meta() }), "createSubagent: llm"],
];

for (const [name, f, arg] of misuse) {
  test(`misuse: ${name}`, () => {
    assert.throws(f, (e) => floe.isFloeError(e) && e.code === "bad_argument" && e.message.includes(arg));
  });
}

test("misuse of run() names the argument", async () => {
  const session = floe.createSession({ meta: meta(), llm: scriptedLLM(say("x")) });
  const cases = [
    [() => session.run(42), "run: prompt"],
    [() => session.run("x", { signal: {} }), "run: signal"],
    [() => session.run("x", { approve: "yes" }), "run: approve"],
    [() => session.run("x", { thinkingLevel: 2 }), "run: thinkingLevel"],
    [() => session.run([{ type: "model_msg" }]), "run: prompt"],
    [() => session.steer(5), "steer: input"],
  ];
  for (const [f, arg] of cases) {
    assert.throws(f, (e) => floe.isFloeError(e) && e.code === "bad_argument" && e.message.includes(arg), arg);
  }
  await session.close();
  assert.throws(() => session.run("x"), { name: "FloeError", code: "closed" });
});

test("a Go panic is an error and the runtime stays up", async () => {
  const logged = console.error;
  console.error = () => {};
  try {
    assert.throws(() => floe[Symbol.for("floe.debug")].panic("sync"), { name: "FloeError", code: "internal" });
    await assert.rejects(floe[Symbol.for("floe.debug")].panic("async"), { name: "FloeError", code: "internal" });
  } finally {
    console.error = logged;
  }
  const session = floe.createSession({ meta: meta(), llm: scriptedLLM(say("still alive")) });
  const msgs = await collect(session.run("hello"));
  assert.equal(find(msgs, "text")[0].payload.text, "still alive");
});
