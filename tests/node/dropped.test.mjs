// Sessions, subagents and streams dropped without close() or return():
// once the JavaScript object is collected, the Go side is closed as close()
// or return() would. A stream that can still be read keeps its session, so
// a run is never aborted under a reader; a run whose session and stream
// were both dropped is aborted and its records stored; a stream dropped on
// its own frees its session for the next run.
import { test } from "node:test";
import assert from "node:assert/strict";
import v8 from "node:v8";
import vm from "node:vm";
import { floe, meta, scriptedLLM, say, text, types } from "./helpers.mjs";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc");
const debug = floe[Symbol.for("floe.debug")];

// settle runs full collections, each followed by a macrotask (where the
// registry's callbacks run), until pred holds or 50 rounds have passed;
// it returns pred().
async function settle(pred) {
  for (let i = 0; i < 50 && !pred(); i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  return pred();
}

// rounds runs n collections with a macrotask after each.
async function rounds(n) {
  for (let i = 0; i < n; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
}

const llm = () => scriptedLLM(say("hello"));

test("sessions and subagents dropped without close() are closed once collected", async () => {
  const before = debug.dropped().sessions;
  (() => {
    for (let i = 0; i < 10; i++) floe.createSession({ meta: meta(), llm: llm(), store: false });
    for (let i = 0; i < 5; i++) floe.createSubagent({ meta: meta(), llm: llm() });
  })();
  assert.ok(await settle(() => debug.dropped().sessions >= before + 15), `closed ${debug.dropped().sessions - before} of 15`);
});

test("a closed session is not closed again when it is collected", async () => {
  const before = debug.dropped().sessions;
  await (async () => {
    const s = floe.createSession({ meta: meta(), llm: llm(), store: false });
    await s.close();
    floe.createSubagent({ meta: meta(), llm: llm() }).close();
  })();
  // a session dropped after them, to know collections have run
  (() => floe.createSession({ meta: meta(), llm: llm(), store: false }))();
  assert.ok(await settle(() => debug.dropped().sessions > before));
  await rounds(3);
  assert.equal(debug.dropped().sessions, before + 1);
});

test("a stream that can be read keeps its session: the run is not aborted under its reader", async () => {
  const before = debug.dropped().sessions;
  let open;
  const gate = new Promise((r) => (open = r));
  const model = scriptedLLM(async function* () {
    await gate;
    yield* say("late")();
  });
  // The session object is reachable only through the stream.
  let stream = floe.createSession({ meta: meta(), llm: model, store: false }).run("go");
  let it = stream[Symbol.asyncIterator]();
  const first = await it.next(); // the run is in flight, waiting for the model
  await rounds(5);
  assert.equal(debug.dropped().sessions, before, "the session was closed while its stream was read");
  open();
  const msgs = [first.value];
  for (let r = await it.next(); !r.done; r = await it.next()) msgs.push(r.value);
  assert.ok(!types(msgs).includes("abort"), `the run was aborted: ${types(msgs).join(" ")}`);
  assert.equal(msgs.findLast((m) => m.payload.type === "request_end").payload.status, "completed");
  stream = it = null;
  assert.ok(await settle(() => debug.dropped().sessions > before), "the session was not closed once its stream was dropped too");
});

test("a run whose session and stream were dropped is aborted and its records stored", async () => {
  const id = "session-2026-12-01-00-00-00-d0d0d0d0";
  const before = debug.dropped().sessions;
  await (async () => {
    const model = scriptedLLM(async function* ({ signal }) {
      yield* text("half");
      await new Promise((resolve) => signal.addEventListener("abort", resolve)); // until the run is aborted
      return { status: "aborted" };
    });
    const stream = floe.createSession({ meta: meta(id), llm: model, store: "memory" }).run("go");
    // Read up to the model's text, then stop: no pull is pending (a
    // pending pull is a promise someone may await, and keeps the stream).
    for (let r = await stream.next(); r.value.payload.type !== "text"; r = await stream.next());
  })();
  assert.ok(await settle(() => debug.dropped().sessions > before), "the dropped session was not closed");
  const stored = await until(async () => {
    const files = await floe.exportSession(id, { store: "memory" }).catch(() => []);
    const lines = files.flatMap((f) => f.text.split("\n").filter(Boolean).map((l) => JSON.parse(l)));
    return lines.some((m) => m.payload?.type === "abort") && lines;
  });
  assert.deepEqual(types(stored).slice(-2), ["request_end", "abort"], `stored: ${types(stored).join(" ")}`);
  await floe.deleteSession(id, { store: "memory" });
});

test("a stream dropped before its end abandons its run: its session takes the next one", async () => {
  const before = debug.dropped().streams;
  const half = async function* ({ signal }) {
    yield* text("half");
    await new Promise((resolve) => signal.addEventListener("abort", resolve));
    return { status: "aborted" };
  };
  const session = floe.createSession({ meta: meta(), llm: scriptedLLM(half, say("again")), store: false });
  await (async () => {
    const stream = session.run("go");
    for (let r = await stream.next(); r.value.payload.type !== "text"; r = await stream.next());
  })();
  assert.throws(() => session.run("too soon"), (e) => e.code === "session_busy");
  assert.ok(await settle(() => debug.dropped().streams > before), "the dropped stream was not abandoned");
  const next = await until(() => {
    try {
      return session.run("again");
    } catch (e) {
      if (e.code === "session_busy") return null; // the abandoned run is still ending
      throw e;
    }
  });
  const msgs = [];
  for await (const m of next) msgs.push(m);
  assert.equal(msgs.findLast((m) => m.payload.type === "request_end").payload.status, "completed");
  await session.close();
});

test("a subagent's stream dropped before its end abandons its run: its session's lock is let go", async () => {
  const id = "session-2026-12-01-00-00-00-d1d1d1d1";
  const before = debug.dropped().streams;
  const half = async function* ({ signal }) {
    yield* text("half");
    await new Promise((resolve) => signal.addEventListener("abort", resolve));
    return { status: "aborted" };
  };
  const sub = floe.createSubagent({ meta: meta(id), llm: scriptedLLM(half), store: "memory" });
  await (async () => {
    const stream = sub.run("go");
    for (let r = await stream.next(); r.value.payload.type !== "text"; r = await stream.next());
  })();
  await assert.rejects(floe.deleteSession(id, { store: "memory" }), (e) => e.code === "session_busy");
  assert.ok(await settle(() => debug.dropped().streams > before), "the dropped stream was not abandoned");
  await until(() =>
    floe.deleteSession(id, { store: "memory" }).then(
      () => true,
      (e) => {
        if (e.code === "session_busy") return false; // the abandoned run is still ending
        throw e;
      },
    ),
  );
  await assert.rejects(floe.exportSession(id, { store: "memory" }), (e) => e.code === "not_found");
  sub.close();
});

test("memory: 2,000 sessions dropped without close() grow wasm memory by < 1 MB", async (t) => {
  const batch = async (n) => {
    (() => {
      for (let i = 0; i < n; i++) floe.createSession({ meta: meta(), llm: llm(), store: false });
    })();
    await rounds(2);
  };
  const mem = () => debug.memoryBytes();
  for (let i = 0; i < 10; i++) await batch(200); // warm-up, as in the hardening tests
  const windows = [];
  for (let w = 0; w < 2; w++) {
    const start = mem();
    for (let i = 0; i < 10; i++) await batch(200);
    windows.push(mem() - start);
  }
  const grew = Math.min(...windows);
  t.diagnostic(`wasm memory grew ${grew} bytes`);
  assert.ok(grew < 1 << 20, `grew ${grew} bytes`);
});

// until polls f each macrotask until it returns a truthy value (the store's
// writes settle asynchronously), 200 rounds at most.
async function until(f) {
  for (let i = 0; i < 200; i++) {
    const v = await f();
    if (v) return v;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error("until: gave up");
}
