import { test } from "node:test";
import assert from "node:assert/strict";
import { floe, meta, scriptedLLM, say, text, usage, toolCall, toolOutput, collect, types, find, instantClock, until, never } from "./helpers.mjs";

test("a run with approve and concurrent tools", async () => {
  const llm = scriptedLLM(
    async function* () {
      yield* text("let me ", "look");
      yield toolCall("a", "read", '{"p":1}');
      yield toolCall("b", "write");
      yield usage();
      return { status: "completed" };
    },
    say("done"),
  );
  const executed = [];
  const session = floe.createSession({
    meta: meta(),
    llm,
    tools: [{ name: "read", description: "reads" }],
    environment: {
      async *executeTool({ toolCall, signal }) {
        executed.push(toolCall.payload.tool_call_id);
        assert.ok(signal instanceof AbortSignal);
        yield toolOutput(toolCall.payload.tool_call_id, `out ${toolCall.payload.name}`);
      },
    },
  });
  const asked = [];
  const approve = async (tc) => (asked.push(tc.payload.tool_call_id), tc.payload.name === "read" ? "allow" : "deny");
  const msgs = await collect(session.run("hello", { approve, thinkingLevel: "high" }));
  assert.equal(msgs[0].payload.type, "tool_list_ready");
  assert.deepEqual(llm.calls.map((p) => p.thinkingLevel), ["high", "high"]);
  assert.ok(llm.calls[0].signal instanceof AbortSignal);
  assert.deepEqual(asked, ["a", "b"]);
  assert.deepEqual(executed, ["a"]);
  const outs = find(msgs, "tool_call_output").map((m) => [m.payload.tool_call_id, m.payload.output]);
  assert.deepEqual(outs.sort(), [["a", "out read"], ["b", "Tool call denied by user."]]);
  assert.deepEqual(find(msgs, "approval_decision").map((m) => m.payload.decision), ["allow", "deny"]);
  assert.equal(find(msgs, "request_begin").length, 2);
  assert.equal(msgs.at(-1).payload.type, "request_end");
  // Messages are plain objects in the protocol's JSON.
  assert.equal(Object.getPrototypeOf(msgs[1]), Object.prototype);
  assert.match(msgs[1].timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  // The second request got the tool outputs in call order.
  assert.deepEqual(llm.calls[1].newMessages.map((m) => m.payload.tool_call_id), ["a", "b"]);
  await session.close();
});

test("break aborts the run and resolves once the engine finished", async () => {
  let llmSignal;
  let finished = false;
  const llm = scriptedLLM(
    async function* ({ signal }) {
      llmSignal = signal;
      try {
        yield* text("one ", "two ");
        await new Promise((resolve) => signal.addEventListener("abort", resolve));
        return { status: "aborted" };
      } finally {
        finished = true;
      }
    },
    say("fresh"),
  );
  const session = floe.createSession({ meta: meta(), llm });
  const run = session.run("go");
  for await (const m of run) {
    if (m.payload.type === "text") break;
  }
  assert.equal(llmSignal.aborted, true);
  assert.equal(finished, true, "break resolved before the model finished");
  assert.deepEqual(await run.next(), { value: undefined, done: true });
  assert.deepEqual(await run.return(), { value: undefined, done: true });
  const msgs = await collect(session.run("again"));
  assert.equal(msgs.at(-1).payload.type, "request_end");
  // The carry-over of the aborted turn went to the model with the new prompt.
  assert.ok(llm.calls[1].newMessages.length >= 2);
});

test("return() called elsewhere (a Stop button) ends the loop once the engine has stopped, as a break does", async () => {
  // The model ignores its abort: the run ends when it is abandoned, after
  // abortGraceMs. The loop's next() after the return() used to end it at
  // once, and a run() right after the loop was session_busy.
  let asked = 0;
  const llm = {
    async *streamGenerate() {
      if (++asked > 1) {
        yield* text("fresh");
        yield usage();
        return { status: "completed" };
      }
      yield* text("one");
      await never();
    },
  };
  const session = floe.createSession({ meta: meta(), llm, abortGraceMs: 50 });
  const stream = session.run("go");
  let stopped = null;
  for await (const m of stream) {
    if (m.payload.type === "text") stopped = stream.return(); // not awaited here
  }
  assert.ok(stopped, "the text came");
  const msgs = await collect(session.run("again"));
  assert.equal(msgs.at(-1).payload.type, "request_end");
  assert.deepEqual(await stopped, { value: undefined, done: true });
});

test("an AbortSignal aborts the run; the stream ends with abort", async () => {
  const ac = new AbortController();
  const session = floe.createSession({
    meta: meta(),
    llm: scriptedLLM(async function* ({ signal }) {
      yield* text("x");
      await new Promise((resolve) => signal.addEventListener("abort", resolve));
      return { status: "aborted" };
    }),
  });
  const msgs = [];
  for await (const m of session.run("go", { signal: ac.signal })) {
    msgs.push(m);
    if (m.payload.type === "text") ac.abort();
  }
  assert.deepEqual(msgs.at(-1).payload, { type: "abort", reason: "aborted by user" });
  // A signal aborted before the run: abort at once, no request.
  const pre = new AbortController();
  pre.abort();
  const again = await collect(session.run("later", { signal: pre.signal }));
  assert.deepEqual(types(again), ["abort"]);
});

test("a tool's approve after the run's abort, or pending at it, rejects with closed, naming the abort", async () => {
  // Before, it rejected with code "internal" and the message "context canceled".
  for (const when of ["after", "pending"]) {
    const ac = new AbortController();
    const asked = [];
    let answer;
    const llm = scriptedLLM(async function* () {
      yield toolCall("a", "ask");
      yield usage();
      return { status: "completed" };
    }, say("done"));
    const ask = floe.tool({
      name: "ask",
      description: "asks for a nested call",
      execute: async (_, { toolCall: call, approve }) => {
        const nested = { ...call, payload: { ...call.payload, tool_call_id: "nested" } };
        if (when === "after") ac.abort();
        answer = approve(nested).catch((e) => e);
        if (when === "pending") ac.abort(); // the approver below never answers it
        await answer;
        return "ok";
      },
    });
    const session = floe.createSession({ meta: meta(), llm, tools: [ask] });
    const approve = (c) => (asked.push(c.payload.tool_call_id), c.payload.tool_call_id === "a" ? "allow" : never());
    const msgs = await collect(session.run("go", { approve, signal: ac.signal }));
    const err = await answer;
    assert.ok(err instanceof Error, `${when}: approve resolved to ${err}`);
    assert.equal(err.name, "FloeError");
    assert.equal(err.code, "closed", `${when}: ${err.code}: ${err.message}`);
    assert.equal(err.message, "approve: the run was aborted: no decision");
    assert.deepEqual(asked, when === "after" ? ["a"] : ["a", "nested"], when);
    assert.deepEqual(msgs.at(-1).payload, { type: "abort", reason: "aborted by user" });
    await session.close();
  }
});

test("run() while a run is in flight throws session_busy synchronously", async () => {
  let release;
  const session = floe.createSession({
    meta: meta(),
    llm: scriptedLLM(
      async function* () {
        await new Promise((r) => (release = r));
        yield* text("ok");
        return { status: "completed" };
      },
      say("free"),
    ),
  });
  const first = session.run("one");
  assert.throws(() => session.run("two"), (e) => e.name === "FloeError" && e.code === "session_busy" && floe.isFloeError(e));
  assert.equal((await first.next()).value.payload.type, "request_begin");
  const pending = first.next(); // the model is called
  await until(() => release, "the model call");
  assert.throws(() => session.compact(), { code: "session_busy" });
  release();
  assert.equal((await pending).value.payload.type, "partial_text");
  await collect(first);
  await collect(session.run("three")); // free again
});

test("steer, compactability and skipReconnectWait answer", async () => {
  let steered;
  const session = floe.createSession({
    meta: meta(),
    llm: scriptedLLM(
      async function* () {
        steered = session.steer("also this");
        yield* text("a");
        yield toolCall("t1");
        yield usage();
        return { status: "completed" };
      },
      say("b"),
    ),
    environment: { async *executeTool({ toolCall }) { yield toolOutput(toolCall.payload.tool_call_id, "x"); } },
  });
  assert.equal(session.steer("nobody runs"), false);
  assert.equal(session.skipReconnectWait(), false);
  assert.equal(session.compactability(), "unsupported");
  const msgs = await collect(session.run("go", { approve: () => "allow" }));
  assert.ok(Number.isSafeInteger(steered) && steered >= 1, `steer() returned ${steered}, want an id`);
  assert.ok(msgs.some((m) => m.payload.type === "text" && m.payload.text.includes("[user_steering]")));
});

test("a subagent run streams the child with origin", async () => {
  const session = floe.createSession({
    meta: meta("parent"),
    llm: scriptedLLM(
      async function* () {
        yield toolCall("spawn", "agent");
        yield usage();
        return { status: "completed" };
      },
      say("done"),
    ),
    environment: {
      async *executeTool({ toolCall, approve, signal }) {
        const child = floe.createSubagent({ meta: { ...meta("child"), source: "subagent" }, llm: scriptedLLM(say("child says hi")) });
        for await (const m of child.run("do it", { approve, signal })) yield m;
        child.close();
        yield toolOutput(toolCall.payload.tool_call_id, "child done");
      },
    },
  });
  const msgs = await collect(session.run("go", { approve: () => "allow" }));
  const child = msgs.filter((m) => m.origin);
  assert.ok(child.length > 3);
  assert.ok(child.every((m) => m.origin[0] === "child"));
  assert.equal(child[0].type, "session_meta");
  assert.equal(child[1].payload.sender, "parent_agent");
});

test("retries wait on the injected clock", async () => {
  const clock = instantClock();
  const session = floe.createSession({
    meta: meta(),
    clock,
    config: { maxReconnects: 2, reconnectBackoffMs: 100 },
    llm: scriptedLLM(async function* () {
      return { status: "timeout", errorMessage: "slow" };
    }, async function* () { return { status: "timeout" }; }, say("ok")),
  });
  const msgs = await collect(session.run("go"));
  assert.deepEqual(clock.sleeps, [100, 200]);
  assert.deepEqual(find(msgs, "request_end").map((m) => m.payload.status), ["timeout", "timeout", "completed"]);
  assert.ok(msgs.every((m) => m.timestamp.startsWith("2025-01-01T")));
});

test("a promise that never settles is abandoned after the abort", async () => {
  const ac = new AbortController();
  const session = floe.createSession({ meta: meta(), abortGraceMs: 30, llm: { streamGenerate: () => never() } });
  const run = session.run("go", { signal: ac.signal });
  assert.equal((await run.next()).value.payload.type, "request_begin");
  setTimeout(() => ac.abort(), 5);
  const rest = await collect(run);
  assert.equal(rest.at(-1).payload.type, "abort");
});

for (const who of ["model", "tool"]) {
  test(`a ${who} whose stream comes after the run abandoned it: the stream is cancelled, as a fetch body's must be`, async () => {
    // An async callback that ignores its signal (a fetch that does not
    // take it) resolves to a ReadableStream once the run has ended: the
    // stream was never cancelled, and its connection stayed open.
    let called, release, cancelled;
    const calledP = new Promise((r) => (called = r));
    const gate = new Promise((r) => (release = r));
    const cancelledP = new Promise((r) => (cancelled = r));
    const late = async () => {
      called();
      await gate;
      return new ReadableStream({ pull() {}, cancel: () => cancelled("cancelled") });
    };
    const ac = new AbortController();
    const session = floe.createSession({
      meta: meta(),
      abortGraceMs: 10,
      llm: who === "model" ? { streamGenerate: late } : scriptedLLM(async function* () {
        yield toolCall("t1");
        yield usage();
        return { status: "completed" };
      }),
      environment: { executeTool: late },
    });
    const run = collect(session.run("go", { signal: ac.signal, approve: () => "allow" }));
    await calledP;
    ac.abort();
    const msgs = await run;
    assert.equal(msgs.at(-1).payload.type, "abort");
    release();
    assert.equal(await cancelledP, "cancelled");
    await session.close();
  });
}

test("compact() streams a manual compaction; compactability() follows it", async () => {
  const plain = floe.createSession({ meta: meta(), llm: scriptedLLM(say("a")) });
  assert.equal(plain.compactability(), "unsupported");
  assert.deepEqual(await collect(plain.compact()), []);
  const tokens = [];
  const session = floe.createSession({
    meta: meta(),
    llm: scriptedLLM(say("a"), say("[summary]short[/summary]")),
    newLLM: (t) => (tokens.push(t), scriptedLLM(say("fresh"))),
    config: { compaction: { mode: "summarize", prompt: "Summarize." } },
  });
  assert.equal(session.compactability(), "empty");
  await collect(session.run("hello"));
  assert.equal(session.compactability(), "ok");
  // A manual compaction is no run: steer() returns false (E-11.1), where
  // it returned an id and the text was dropped.
  const stream = session.compact();
  const first = await stream.next();
  assert.equal(session.steer("while compacting"), false);
  const msgs = [first.value, ...(await collect(stream))];
  assert.deepEqual(types(msgs), ["compaction_begin", "token_usage", "compaction_end"]);
  assert.equal(msgs[2].payload.status, "completed");
  assert.equal(session.compactability(), "just_compacted");
  assert.deepEqual(Object.keys(tokens[0]).sort(), ["cache_read", "cache_write", "output", "total"]);
});

test("a message is stamped when it reaches the engine, not when a slow consumer reads it", async () => {
  const T0 = Date.UTC(2026, 0, 1);
  let t = T0;
  let armed = false;
  let received; // resolved by the clock's first read after the model returned: Go reading its last batch
  const goHasAll = new Promise((r) => (received = r));
  let gotStart;
  const consumerHasStart = new Promise((r) => (gotStart = r));
  const clock = {
    now() {
      if (armed) {
        armed = false;
        received();
      }
      return t;
    },
    sleep: async () => true,
  };
  const llm = {
    async *streamGenerate() {
      const [start, ...rest] = [...text("a", "b")];
      yield start;
      await consumerHasStart; // the rest is queued behind the start the consumer holds
      yield* rest;
      yield usage();
      armed = true;
    },
  };
  const session = floe.createSession({ meta: meta(), llm, clock });
  const msgs = [];
  for await (const m of session.run("go")) {
    msgs.push(m);
    if (m.payload.type === "partial_text" && m.payload.event_type === "start") {
      gotStart();
      await goHasAll;
      t = T0 + 60_000; // the consumer reads the rest a minute later
    }
  }
  await session.close();
  const from = msgs.findIndex((m) => m.payload.type === "partial_text");
  const stamps = msgs.slice(from).map((m) => [m.payload.type, m.payload.event_type, m.timestamp]);
  const at = new Date(T0).toISOString();
  assert.deepEqual(
    stamps,
    stamps.map(([type, ev]) => [type, ev, at]),
    "every message of the request was stamped as it reached the engine",
  );
});
