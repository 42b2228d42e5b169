// Compaction through floe.mjs: what a long-running session sees when a
// compaction's fresh context cannot be made, and that a session resumed
// after compactions sends its model what the live session would have.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { floe, meta, collect, find, instantClock } from "./helpers.mjs";

const { msg } = floe;
let n = 0;
const newID = (what) => `compaction-${what}-${++n}`;

/**
 * A model world: every context it makes records its loadHistory and its
 * requests; request k (over all contexts, compaction requests aside) is
 * answered by script(k, i), i its number in its context, a compaction
 * request by a summary. total is the request total its token_usage reports.
 */
function world(script) {
  const requests = [];
  let k = 0;
  let summaries = 0;
  const context = () => {
    const ctx = { loaded: [], requests: [] };
    return {
      loadHistory(h) {
        ctx.loaded = h;
      },
      async *streamGenerate({ newMessages }) {
        const req = { ctx, newMessages, outputs: [], completed: false };
        ctx.requests.push(req);
        requests.push(req);
        const compacting = newMessages.some((m) => m.payload.type === "text" && m.payload.text === "Summarize.");
        const { text, call, total = 50 } = compacting ? { text: `[summary]S${summaries++}[/summary]` } : script(k++, ctx.requests.length);
        for (const m of [text !== undefined && msg.text(text), call && msg.toolCall(call, "echo", { x: call })]) {
          if (!m) continue;
          req.outputs.push(m);
          yield m;
        }
        yield msg.tokenUsage({ output: 5, total }, { output: 5, total });
        req.completed = true;
      },
    };
  };
  return { requests, llm: context(), newLLM: () => context() };
}

/** What the context of request req had committed before it, and its input. */
function seen(req) {
  const before = req.ctx.requests.slice(0, req.ctx.requests.indexOf(req));
  const history = [...req.ctx.loaded, ...before.filter((r) => r.completed).flatMap((r) => [...r.newMessages, ...r.outputs])];
  const strip = (ms) => ms.map(({ timestamp, ...m }) => m);
  return { history: strip(history), input: strip(req.newMessages) };
}

const echo = floe.tool({ name: "echo", parameters: { type: "object", properties: { x: { type: "string" } } }, execute: ({ x }) => "echo " + x });
const config = { compaction: { mode: "summarize", prompt: "Summarize.", maxContextLength: 400 } };

// A newLLM that throws (or returns no model) leaves the session with a
// context that fails every request the same way: retrying it only waited
// through the whole backoff ladder (2+4+8+16+30 s at the defaults) on every
// run before the same abort.
test("a newLLM that fails: the request after the compaction fails permanently, naming newLLM, without retries", async () => {
  for (const [what, newLLM, says] of [
    ["throws", () => { throw new Error("no fresh context"); }, /^newLLM: no fresh context$/],
    ["returns null", () => null, /^newLLM: createSession: newLLM\(\) result: want an object with streamGenerate\(\)/],
  ]) {
    const w = world((k) => (k === 0 ? { call: "c1", total: 500 } : { text: "r" + k }));
    const clock = instantClock();
    const session = floe.createSession({ meta: meta(newID("newllm")), llm: w.llm, newLLM, tools: [echo], config, clock });
    for (const prompt of ["one", "two"]) {
      const msgs = await collect(session.run(prompt, { approve: () => "allow" }));
      const ends = find(msgs, "request_end").filter((m) => m.payload.status !== "completed");
      assert.equal(ends.length, 1, `${what}: one failed request per run, not a retry ladder`);
      assert.match(ends[0].payload.error_message, says, what);
      assert.equal(ends[0].payload.retry_in_ms, undefined, what);
      assert.equal(msgs.at(-1).payload.type, "abort", what);
      assert.equal(msgs.at(-1).payload.reason, "llm request error: " + ends[0].payload.error_message, what);
    }
    assert.deepEqual(clock.sleeps, [], `${what}: no backoff waited`);
    await session.close();
  }
});

// A chat agent compacting in the middle of a task, resumed from its Trace
// (in the same store, and imported into a directory store): the resumed
// model gets, as its history and its next input, what the live model had
// and would have been sent.
test("resume after compactions sends what the live session would: memory store and an imported {dir} copy", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "floe-compaction-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  // Every even request calls a tool; a context passes 400 at its third request.
  const script = (k, i) => (k % 2 === 0 ? { call: "c" + k, total: 150 * i } : { text: "r" + k, total: 150 * i });
  const drive = async (session) => {
    const out = [];
    for (let i = 0; i < 5; i++) out.push(...(await collect(session.run("p" + i, { approve: () => "allow" }))));
    return out;
  };
  const live = world(script);
  const liveSession = floe.createSession({ meta: meta(newID("live")), llm: live.llm, newLLM: live.newLLM, tools: [echo], config, clock: instantClock() });
  const streamed = await drive(liveSession);
  assert.ok(find(streamed, "compaction_end").length >= 2, "the scenario compacts more than once");
  const at = live.requests.length;
  await collect(liveSession.run("next", { approve: () => "allow" }));
  await liveSession.close();
  const want = seen(live.requests[at]);
  assert.ok(want.history.length >= 2 && want.history[0].payload.text.startsWith("[context_summary]"), JSON.stringify(want.history));

  const id = newID("stored");
  const stored = world(script);
  const session = floe.createSession({ meta: meta(id), llm: stored.llm, newLLM: stored.newLLM, tools: [echo], config, clock: instantClock() });
  await drive(session);
  await session.close();
  const files = await floe.exportSession(id);
  assert.equal(await floe.importSession(files, { store: { dir } }), id);
  for (const store of ["memory", { dir }]) {
    const from = stored.requests.length;
    const resumed = await floe.resumeSession(id, { llm: stored.newLLM(), newLLM: stored.newLLM, tools: [echo], config, clock: instantClock(), store });
    await collect(resumed.run("next", { approve: () => "allow" }));
    await resumed.close();
    assert.deepEqual(seen(stored.requests[from]), want, JSON.stringify(store));
  }
});

// A compaction that did not complete: one stopped at its compaction_begin,
// before its first request (its prompt is in the Trace, no request sent
// it), and a manual one whose request failed after it folded in a run's
// carried-over prompt (the live engine restores that carry-over, E-13.13).
// A session resumed from the Trace must send what the live one sends.
test("resume after a compaction that did not complete sends what the live session would: its prompt is not carried over, a folded-in carry-over is", async () => {
  const script = (k) => ({ text: "r" + k });
  const failing = (w) => ({
    ...w,
    llm: {
      ...w.llm,
      async *streamGenerate(req) {
        if (req.newMessages.some((m) => m.payload.text === "Summarize.")) return { status: "auth", errorMessage: "no" };
        yield* w.llm.streamGenerate(req);
      },
    },
  });
  const cases = {
    "stopped at compaction_begin": async (s) => {
      await collect(s.run("one"));
      const c = s.compact();
      assert.equal((await c.next()).value.payload.type, "compaction_begin");
      await c.return();
    },
    "a manual compaction that failed after a run's abort": async (s) => {
      await collect(s.run("one"));
      const stop = new AbortController();
      stop.abort();
      assert.equal(find(await collect(s.run("two", { signal: stop.signal })), "abort").length, 1);
      assert.deepEqual(find(await collect(s.compact()), "compaction_end").map((m) => m.payload.status), ["failed"]);
    },
  };
  for (const [name, drive] of Object.entries(cases)) {
    const make = () => (name.startsWith("a manual") ? failing(world(script)) : world(script));
    const live = make();
    const liveSession = floe.createSession({ meta: meta(newID("live")), llm: live.llm, newLLM: live.newLLM, config, clock: instantClock(), store: false });
    await drive(liveSession);
    const at = live.requests.length;
    await collect(liveSession.run("next"));
    await liveSession.close();
    const want = seen(live.requests[at]);

    const id = newID("stored");
    const stored = make();
    const session = floe.createSession({ meta: meta(id), llm: stored.llm, newLLM: stored.newLLM, config, clock: instantClock() });
    await drive(session);
    await session.close();
    const resumed = await floe.resumeSession(id, { llm: stored.newLLM(), newLLM: stored.newLLM, config, clock: instantClock() });
    const from = stored.requests.length;
    await collect(resumed.run("next"));
    await resumed.close();
    assert.deepEqual(seen(stored.requests[from]), want, name);
    assert.ok(!want.input.some((m) => m.payload.text === "Summarize."), name);
  }
});

// A long session of a {dir} store compacting again and again, mid-task and
// at task boundaries, with tool outputs holding images and subagents'
// answers: every compaction request sends what it summarizes (drive checks
// it), the Trace gains a file per compaction, the Go instance's memory does
// not grow with the compactions (from the 100th to the 300th), and a
// session resumed after the fiftieth sends its model what the live session
// sends.
test("long compacting sessions on a { dir } store: each request's content, a file each, flat memory, a resume after 50 that sends what the live session sends", async (t) => {
  const tour = await import("../browser/fixtures/compaction-tour.mjs");
  const dir = await mkdtemp(join(tmpdir(), "floe-compaction-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const store = { dir };
  const memory = () => floe[Symbol.for("floe.debug")].memoryBytes();
  const open = (id, w) => floe.createSession({ meta: meta(id), llm: w.llm, newLLM: w.newLLM, tools: tour.tools(floe, false), config: tour.config, clock: instantClock(), store });
  {
    const w = tour.world(floe);
    const session = open(newID("tour-memory"), w);
    const { memory: mem } = await tour.drive(session, w, { compactions: 300, memory });
    await session.close();
    const shown = mem.map(([c, b]) => `${c}: ${(b / 2 ** 20).toFixed(1)} MB`).join(", ");
    t.diagnostic(`wasm memory at compactions ${shown}`);
    const at100 = mem.find(([c]) => c === 100)[1];
    assert.ok(Math.max(...mem.map(([, b]) => b)) - at100 <= 1 << 20, `wasm memory grew with the compactions: ${shown}`);
  }
  for (const extra of [0, 1, 3]) {
    const live = tour.world(floe);
    const liveID = newID("tour-live");
    const session = open(liveID, live);
    const { runs } = await tour.drive(session, live, { compactions: 50, extra });
    const at = live.requests.length;
    await collect(session.run("next", { approve: () => "allow" }));
    await session.close();
    const want = tour.seen(live.requests[at]);
    const files = await floe.exportSession(liveID, { store });
    assert.ok(files.length >= 51, `${files.length} files after 50 compactions`);
    for (const f of files.slice(1)) assert.match(f.text, /^\{[^\n]*"type":"session_meta"[^\n]*\n\{[^\n]*"type":"tool_list_ready"/, f.name);

    const id = newID("tour-stored");
    const stored = tour.world(floe);
    const first = open(id, stored);
    assert.equal((await tour.drive(first, stored, { compactions: 50, extra })).runs, runs);
    await first.close();
    const resumed = await floe.resumeSession(id, { llm: stored.newLLM(), newLLM: stored.newLLM, tools: tour.tools(floe, false), config: tour.config, clock: instantClock(), store });
    const from = stored.requests.length;
    await collect(resumed.run("next", { approve: () => "allow" }));
    await resumed.close();
    assert.deepEqual(tour.seen(stored.requests[from]), want, `resumed after 50 compactions and ${extra} runs`);
  }
});
