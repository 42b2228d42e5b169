// close() of a session whose runs hold its Web Lock (a persisted store where
// navigator.locks exists), and a subagent's run, which holds it too: Node
// has no Web Locks, so this file installs a minimal LockManager (exclusive,
// ifAvailable) before loading floe.mjs; the browser tests run the same
// paths on Chromium's. With slowRelease set it
// lets a lock go as Deno's does: a released lock is seen free only a
// macrotask later, though the request's promise still settles after that.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getEventListeners } from "node:events";

const held = new Set();
let slowRelease = false;
globalThis.navigator = {
  locks: {
    async request(name, opts, cb) {
      if (held.has(name)) return cb(null);
      held.add(name);
      try {
        return await cb({ name });
      } finally {
        if (slowRelease) await new Promise((r) => setImmediate(r));
        held.delete(name);
      }
    },
  },
};

const { floe, meta, scriptedLLM, say, text, usage, collect, find, types, runBesideLastWrite } = await import("./helpers.mjs");

async function tempDir(t) {
  const dir = await mkdtemp(join(tmpdir(), "floe-locks-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test("close() inside the model of a locked run: the stream ends with abort and the lock is released", async (t) => {
  const dir = await tempDir(t);
  let s;
  let closed;
  s = floe.createSession({
    meta: meta("locked-close"),
    store: { dir },
    llm: scriptedLLM(async function* ({ signal }) {
      yield* text("a");
      closed = s.close();
      assert.equal(signal.aborted, true);
      yield usage();
      return { status: "aborted" };
    }),
  });
  const msgs = await collect(s.run("go"));
  await closed;
  assert.equal(msgs.at(-1).payload.type, "abort");
  assert.equal(find(msgs, "request_end")[0].payload.status, "aborted");
  assert.equal(held.size, 0, "the session's lock is still held");
  const files = await floe.exportSession("locked-close", { store: { dir } });
  const recs = files[0].text.trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(recs.at(-1).payload.type, "abort");
});

test("close() before the first next() of a locked run: nothing runs, nothing is written", async (t) => {
  const dir = await tempDir(t);
  const model = scriptedLLM(say("never"));
  const s = floe.createSession({ meta: meta("locked-unstarted"), store: { dir }, llm: model });
  const ac = new AbortController();
  const stream = s.run("go", { signal: ac.signal });
  assert.equal(getEventListeners(ac.signal, "abort").length, 1);
  await s.close();
  assert.deepEqual(types(await collect(stream)), []);
  assert.equal(getEventListeners(ac.signal, "abort").length, 0, "the run that never started still listens to the signal");
  assert.equal(model.calls.length, 0);
  assert.equal(held.size, 0);
  const files = await floe.exportSession("locked-unstarted", { store: { dir } }).catch((e) => e);
  assert.ok(Array.isArray(files) ? files.every((f) => !f.text.includes('"request_begin"')) : files.code === "not_found", String(files?.message ?? files));
});

test("close() while the locked run's consumer does not pull: resolves after the run ended", async (t) => {
  const dir = await tempDir(t);
  const s = floe.createSession({
    meta: meta("locked-idle"),
    store: { dir },
    llm: scriptedLLM(async function* ({ signal }) {
      yield* text("a");
      if (!signal.aborted) await new Promise((r) => signal.addEventListener("abort", r));
      return { status: "aborted" };
    }),
  });
  const it = s.run("go")[Symbol.asyncIterator]();
  assert.equal((await it.next()).value.payload.type, "request_begin");
  await s.close();
  assert.equal(held.size, 0, "close() resolved before the run released its lock");
  const rest = [];
  for (let r = await it.next(); !r.done; r = await it.next()) rest.push(r.value);
  assert.equal(rest.at(-1).payload.type, "abort");
});

test("a lock manager that sees a release a macrotask late (Deno's): runs back to back, a resume after close() and its run are not refused as busy", async (t) => {
  slowRelease = true;
  t.after(() => (slowRelease = false));
  const dir = await tempDir(t);
  const store = { dir };
  const s = floe.createSession({ meta: meta("slow-release"), store, llm: scriptedLLM(say("one"), say("two"), say("three")) });
  for (const p of ["a", "b", "c"]) assert.equal(types(await collect(s.run(p))).at(-1), "request_end", `run ${p}`);
  await s.close();
  const r = await floe.resumeSession("slow-release", { store, llm: scriptedLLM(say("four")), onDiagnostic: () => {} });
  assert.equal(types(await collect(r.run("d"))).at(-1), "request_end");
  await r.close();
  await floe.deleteSession("slow-release", { store });
  await assert.rejects(floe.resumeSession("slow-release", { store, llm: scriptedLLM() }), { code: "not_found" });
});

test("a run accepted while the locked run before it still writes its records holds the Web Lock until it ends too", async (t) => {
  const dir = await tempDir(t);
  const out = await runBesideLastWrite(t, dir, "locked-overlap");
  assert.deepEqual(out, { firstEnded: true, lockFileDuring: true, resumeDuring: "session_busy", text: "two", lockFileAfter: false });
  assert.equal(held.size, 0);
});

test("a subagent's run holds its session's Web Lock from its first next() until its records are stored: deleteSession of its id is refused meanwhile; close() before the first next() starts nothing", async (t) => {
  const dir = await tempDir(t);
  const store = { dir };
  let open;
  const gate = new Promise((r) => (open = r));
  const sub = floe.createSubagent({
    meta: meta("locked-child"),
    store,
    llm: scriptedLLM(async function* () {
      yield* text("a");
      await gate;
      yield usage();
      return { status: "completed" };
    }),
  });
  const stream = sub.run("task");
  assert.equal(held.size, 0, "the lock is taken at the first next()");
  assert.equal((await stream.next()).value.type, "session_meta");
  assert.deepEqual([...held], [`floe:session:locked-child\ndir:${dir}`], "a lock of its store's");
  await assert.rejects(floe.deleteSession("locked-child", { store }), { code: "session_busy" });
  // Another object's run of the id is refused at its first next().
  const twin = floe.createSubagent({ meta: meta("locked-child"), store, llm: scriptedLLM(say("never")) });
  const refused = twin.run("again");
  await assert.rejects(refused.next(), { code: "session_busy" });
  twin.close();
  open();
  assert.equal(types(await collect(stream)).at(-1), "request_end");
  assert.equal(held.size, 0);
  sub.close();
  await floe.deleteSession("locked-child", { store });
  // Closed before its first next(), its run never starts.
  const model = scriptedLLM(say("never"));
  const idle = floe.createSubagent({ meta: meta("locked-child-idle"), store, llm: model });
  const unstarted = idle.run("task");
  idle.close();
  assert.deepEqual(await collect(unstarted), []);
  assert.equal(model.calls.length, 0);
  assert.equal(held.size, 0);
});

// A run's Web Lock is taken at its stream's first next(): until then a
// subagent's run of a child session not stored yet held nothing, and its
// parent's deleteSession went through (the child's writes then refused).
// As without Web Locks, where run() takes the program's lock at once, the
// delete is refused naming the child, and a resume or an import of the
// id too.
test("a subagent's run not pulled yet: its parent's deleteSession, and a resume or import of its id, are refused session_busy; after its end the delete goes through", async (t) => {
  const { toolCall } = await import("./helpers.mjs");
  const store = { dir: await tempDir(t) };
  const child = floe.subagentTool({ create: () => ({ store: "memory", llm: scriptedLLM(say("found")) }) });
  const call = async function* () {
    yield toolCall("c1", "run_subagent", JSON.stringify({ prompt: "find it" }));
    yield usage();
    return { status: "completed" };
  };
  const parent = floe.createSession({ meta: meta(), store: "memory", tools: [child], llm: scriptedLLM(call, say("done")) });
  const msgs = await collect(parent.run("go", { approve: () => "allow" }));
  await parent.close();
  const childId = msgs.find((m) => m.origin).origin[0];
  const files = await floe.exportSession(parent.id, { store: "memory" });
  await floe.importSession(files.filter((f) => f.name.includes(parent.id)), { store });

  const sub = floe.createSubagent({ meta: meta(childId), store, llm: scriptedLLM(say("late")) });
  const stream = sub.run("first"); // not pulled
  const refused = (p) => p.then(() => "not refused", (e) => `${e.code}: ${e.message}`);
  assert.match(await refused(floe.deleteSession(parent.id, { store })), new RegExp(`^session_busy: deleteSession: session "${parent.id}" is not deleted, nor any of its subagents' sessions: its subagent's session "${childId}" is busy`));
  assert.match(await refused(floe.resumeSession(childId, { store, llm: scriptedLLM(say("x")) })), /^session_busy: resumeSession/);
  const own = files.filter((f) => !f.name.includes(parent.id)).map((f) => ({ ...f }));
  assert.match(await refused(floe.importSession(own, { store })), /^session_busy: importSession/);
  assert.equal((await floe.exportSession(parent.id, { store })).length, 1, "the parent is kept");
  assert.deepEqual(find(await collect(stream), "text").map((m) => m.payload.text), ["first", "late"]);
  sub.close();
  await floe.deleteSession(parent.id, { store });
  await assert.rejects(floe.exportSession(parent.id, { store }), (e) => e.code === "not_found");
  await assert.rejects(floe.exportSession(childId, { store }), (e) => e.code === "not_found");
});

// A run whose { dir } lock file cannot be read (a directory in its place)
// fails at its first next(), storage; it is not left counted as a run not
// pulled yet, which refused every later resume or delete of its session.
test("a run refused at its first next() by its lock file (storage) leaves no claim on its session: a later delete is not refused", async (t) => {
  const { mkdir } = await import("node:fs/promises");
  const dir = await tempDir(t);
  const store = { dir };
  await mkdir(join(dir, ".blocked.lock"));
  const s = floe.createSession({ meta: meta("blocked"), store, llm: scriptedLLM(say("never")) });
  const stream = s.run("x");
  await assert.rejects(stream.next(), (e) => e.code === "storage" && /\.blocked\.lock cannot be read/.test(e.message));
  await s.close();
  await rm(join(dir, ".blocked.lock"), { recursive: true });
  await assert.rejects(floe.deleteSession("blocked", { store }), (e) => e.code === "not_found");
});
