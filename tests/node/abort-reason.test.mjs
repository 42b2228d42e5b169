// The signal a callback gets carries the reason the caller gave its own
// signal, as fetch and the DOM pass a reason on; an abort from elsewhere
// (close(), a break) is an AbortError. The abort message keeps its reason.
import { test } from "node:test";
import assert from "node:assert/strict";
import { floe, meta, scriptedLLM, say, text, usage, toolCall, toolOutput, collect } from "./helpers.mjs";

// A promise that resolves with signal's reason once it aborts.
const aborted = (signal) =>
  new Promise((resolve) => (signal.aborted ? resolve(signal.reason) : signal.addEventListener("abort", () => resolve(signal.reason))));

// A session whose model calls the tool "wait", which waits for its abort;
// toolSignal resolves with the tool's signal once it runs.
function waitingSession(extra = {}) {
  let gotSignal;
  const toolSignal = new Promise((resolve) => (gotSignal = resolve));
  const session = floe.createSession({
    meta: meta(),
    llm: scriptedLLM(async function* () {
      yield toolCall("w", "wait");
      yield usage();
      return { status: "completed" };
    }, say("done")),
    environment: {
      async *executeTool({ toolCall, signal }) {
        gotSignal(signal);
        await aborted(signal);
        yield toolOutput(toolCall.payload.tool_call_id, "stopped");
      },
    },
    ...extra,
  });
  return { session, toolSignal };
}

test("a tool's and a model's signal carry the reason the run's signal was aborted with", async () => {
  const why = { why: "the user left" };
  // The tool's.
  const ac = new AbortController();
  const { session, toolSignal } = waitingSession();
  const msgs = collect(session.run("go", { approve: () => "allow", signal: ac.signal }));
  const signal = await toolSignal;
  ac.abort(why);
  assert.equal(await aborted(signal), why);
  assert.deepEqual((await msgs).at(-1).payload, { type: "abort", reason: "aborted by user" }, "the abort message keeps ENGINE.md's reason");

  // The model's, read before and after the abort.
  let modelSignal;
  const ac2 = new AbortController();
  const s2 = floe.createSession({
    meta: meta(),
    llm: scriptedLLM(async function* ({ signal }) {
      modelSignal = signal;
      yield* text("x");
      await aborted(signal);
      return { status: "aborted" };
    }),
  });
  for await (const m of s2.run("go", { signal: ac2.signal })) {
    if (m.payload.type === "text") ac2.abort("a plain string");
  }
  assert.equal(modelSignal.reason, "a plain string");

  // A model that reads its signal only after the abort: it ignores the
  // abort, is abandoned after abortGraceMs, and reads it once the stream
  // has ended.
  const ac3 = new AbortController();
  let late;
  let gate;
  const read = new Promise((resolve) => (gate = resolve));
  const lateRead = new Promise((resolve) => (late = resolve));
  const s3 = floe.createSession({
    meta: meta(),
    abortGraceMs: 10,
    llm: scriptedLLM(async function* (params) {
      yield* text("x");
      await read;
      late(params.signal);
    }),
  });
  for await (const m of s3.run("go", { signal: ac3.signal })) {
    if (m.payload.type === "text") ac3.abort(why);
  }
  gate();
  const lateSignal = await lateRead;
  assert.equal(lateSignal.aborted, true);
  assert.equal(lateSignal.reason, why);
  await Promise.all([session.close(), s2.close(), s3.close()]);
});

test("an abort that is not the run's signal's gives the callbacks an AbortError", async () => {
  for (const how of ["close", "break", "signal without a reason"]) {
    const ac = new AbortController();
    const { session, toolSignal } = waitingSession();
    const stream = session.run("go", { approve: () => "allow", signal: ac.signal });
    const reading = (async () => {
      for await (const m of stream) {
        if (how === "break" && m.payload.type === "tool_call") break;
      }
    })();
    const signal = await toolSignal;
    if (how === "close") session.close();
    if (how === "signal without a reason") ac.abort();
    const reason = await aborted(signal);
    assert.ok(reason instanceof DOMException, how);
    assert.equal(reason.name, "AbortError", how);
    await reading;
    ac.abort("too late"); // the run ended: it changes nothing
    assert.equal(signal.reason, reason, how);
    await session.close();
  }
});

test("a subagent's tool, a backoff's sleep and a model's fetch get the reason too", async () => {
  const why = new Error("stop now");
  // A subagent run given the parent tool's signal.
  let childSignal;
  const childStarted = new Promise((resolve) => (childSignal = resolve));
  const ac = new AbortController();
  const session = floe.createSession({
    meta: meta("parent"),
    llm: scriptedLLM(async function* () {
      yield toolCall("spawn", "agent");
      yield usage();
      return { status: "completed" };
    }, say("done")),
    environment: {
      async *executeTool({ toolCall, approve, signal }) {
        const child = floe.createSubagent({
          meta: { ...meta("child"), source: "subagent" },
          llm: scriptedLLM(async function* ({ signal }) {
            childSignal(signal);
            await aborted(signal);
            return { status: "aborted" };
          }),
        });
        for await (const m of child.run("do it", { approve, signal })) yield m;
        child.close();
        yield toolOutput(toolCall.payload.tool_call_id, "child done");
      },
    },
  });
  const msgs = collect(session.run("go", { approve: () => "allow", signal: ac.signal }));
  const signal = await childStarted;
  ac.abort(why);
  assert.equal(await aborted(signal), why);
  await msgs;
  await session.close();

  // The clock's sleep of a reconnect backoff.
  let sleepSignal;
  const slept = new Promise((resolve) => (sleepSignal = resolve));
  const ac2 = new AbortController();
  const s2 = floe.createSession({
    meta: meta(),
    config: { maxReconnects: 1, reconnectBackoffMs: 1000 },
    clock: {
      now: () => Date.UTC(2025, 0, 1),
      sleep: (ms, signal) => (sleepSignal(signal), aborted(signal).then(() => false)),
    },
    llm: scriptedLLM(async function* () {
      return { status: "timeout", errorMessage: "slow" };
    }),
  });
  const msgs2 = collect(s2.run("go", { signal: ac2.signal }));
  const sleeping = await slept;
  ac2.abort(why);
  assert.equal(await aborted(sleeping), why);
  await msgs2;
  await s2.close();

  // The fetch function of a provider's model.
  let fetchSignal;
  const fetched = new Promise((resolve) => (fetchSignal = resolve));
  const fetch = (url, init) => {
    fetchSignal(init.signal);
    return aborted(init.signal).then((r) => Promise.reject(r));
  };
  const ac3 = new AbortController();
  const s3 = floe.createSession({ meta: meta(), llm: floe.openai({ apiKey: "k", model: "m", fetch }) });
  const msgs3 = collect(s3.run("go", { signal: ac3.signal }));
  const init = await fetched;
  ac3.abort(why);
  assert.equal(await aborted(init), why);
  assert.equal((await msgs3).at(-1).payload.type, "abort");
  await s3.close();
});
