// Persisted sessions through floe.mjs in Node: the memory store (the
// default here) and a {dir} store in the reference layout.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { existsSync } from "node:fs";
import { floe, meta, scriptedLLM, say, text, usage, collect, find, toolCall, types } from "./helpers.mjs";

let n = 0;
const newID = (what) => `persist-${what}-${++n}`;

async function tempDir(t) {
  const dir = await mkdtemp(join(tmpdir(), "floe-persist-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs one prompt in a new session of store and closes it. */
async function runOnce(id, store, prompt = "hello", llm = scriptedLLM(say("hi ", "there"))) {
  const session = floe.createSession({ meta: meta(id), llm, store });
  const msgs = await collect(session.run(prompt));
  await session.close();
  return msgs;
}

const records = (files) => files.flatMap((f) => f.text.split("\n").filter(Boolean).map((l) => JSON.parse(l)));

async function rejects(p, code, says) {
  await assert.rejects(p, (e) => {
    assert.equal(e.name, "FloeError");
    assert.equal(e.code, code, e.message);
    if (says) assert.match(e.message, says);
    return true;
  });
}

test("a run's records are listed and exported as soon as the run ends", async () => {
  const id = newID("list");
  const msgs = await runOnce(id);
  const list = await floe.listSessions();
  const s = list.find((x) => x.id === id);
  assert.ok(s, JSON.stringify(list));
  assert.equal(s.firstPrompt, "hello");
  assert.equal(s.files, 1);
  assert.match(s.lastActivity, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.equal(list[0].id, id, "newest first");

  const files = await floe.exportSession(id);
  assert.equal(files.length, 1);
  assert.match(files[0].name, new RegExp(`^\\d{4}-\\d\\d-\\d\\d/${id}_001\\.jsonl$`));
  assert.ok(files[0].text.endsWith("\n"));
  assert.equal(s.size, Buffer.byteLength(files[0].text));
  const recs = records(files);
  assert.equal(recs[0].type, "session_meta");
  // Every recordable streamed message is in the Trace, in stream order.
  const streamed = msgs.filter((m) => !m.payload.type?.startsWith("partial_")).map((m) => JSON.stringify(m));
  const traced = recs.map((m) => JSON.stringify(m));
  let k = 0;
  for (const r of traced) if (r === streamed[k]) k++;
  assert.equal(k, streamed.length, "streamed messages missing from the trace");
  const first = recs[0].timestamp;
  const d = new Date(first);
  const day = `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
  assert.equal(files[0].name.slice(0, 10), day, "date directory: local date of the first record");
});

test("resume after a completed run: history handed once, lazily; the same file continues", async () => {
  const id = newID("resume");
  await runOnce(id, "memory", "hello", scriptedLLM(say("hi")));
  const loaded = [];
  const calls = [];
  const llm = {
    loadHistory(history) {
      loaded.push({ history, before: calls.length });
    },
    streamGenerate(params) {
      calls.push(params);
      return say("again")();
    },
  };
  const session = await floe.resumeSession(id, { llm, tools: [{ name: "echo", description: "echoes" }] });
  assert.equal(session.id, id);
  assert.equal(loaded.length, 0, "history is handed at the first request, not at resume");
  const msgs = await collect(session.run("more"));
  assert.equal(loaded.length, 1);
  assert.equal(loaded[0].before, 0, "loadHistory before the first request");
  assert.deepEqual(
    loaded[0].history.map((m) => [m.payload.role, m.payload.text]),
    [["user", "hello"], ["assistant", "hi"]],
  );
  assert.deepEqual(calls[0].newMessages.map((m) => m.payload.text), ["more"]);
  assert.equal(msgs[0].payload.type, "tool_list_ready", "a resumed engine announces its tools again (E-17.6)");
  await session.close();

  const files = await floe.exportSession(id);
  assert.equal(files.length, 1, "resume continues the same file");
  const recs = records(files);
  assert.equal(find(recs, "request_begin").length, 2);
  assert.equal(recs.filter((r) => r.type === "session_meta").length, 1);
  assert.deepEqual(
    recs.filter((r) => r.payload.type === "text" && r.payload.role === "user").map((r) => r.payload.text),
    ["hello", "more"],
  );
});

test("resume after an aborted turn: the uncommitted prompt is carried over, no history", async () => {
  const id = newID("carry");
  const llm = scriptedLLM(async function* ({ signal }) {
    yield* text("partial ", "answer");
    await new Promise((resolve) => signal.addEventListener("abort", resolve));
    return { status: "aborted" };
  });
  const session = floe.createSession({ meta: meta(id), llm });
  for await (const m of session.run("first question")) {
    if (m.payload.type === "text") break;
  }
  await session.close();
  const loaded = [];
  const next = scriptedLLM(say("ok"));
  next.loadHistory = (h) => loaded.push(h);
  const resumed = await floe.resumeSession(id, { llm: next });
  await collect(resumed.run("second question"));
  assert.equal(loaded.length, 0, "an empty history is not handed (E-17.6)");
  const sent = next.calls[0].newMessages.filter((m) => m.payload.type === "text").map((m) => m.payload.text);
  assert.equal(sent.at(0), "first question", JSON.stringify(sent));
  assert.equal(sent.at(-1), "second question");
  await resumed.close();
});

test("resume of an imported crash: a committed tool call without output gets the interrupted placeholder", async () => {
  const id = newID("crash");
  const at = (ms) => new Date(Date.UTC(2026, 0, 2, 3, 4, 5, ms)).toISOString();
  const trace = [
    { timestamp: at(0), type: "session_meta", payload: meta(id) },
    { timestamp: at(1), type: "model_msg", payload: { type: "text", role: "user", text: "use a tool", stop_reason: "completed" } },
    { timestamp: at(2), type: "event_msg", payload: { type: "request_begin" } },
    { timestamp: at(3), ...toolCall("call_1", "echo") },
    { timestamp: at(4), type: "event_msg", payload: { type: "approval_decision", decision: "allow", tool_call_id: "call_1" } },
    { timestamp: at(5), ...usage() },
    { timestamp: at(6), type: "event_msg", payload: { type: "request_end", status: "completed" } },
  ];
  const jsonl = trace.map((r) => JSON.stringify(r) + "\n").join("") + '{"timestamp":"' + at(7) + '","type":"mo'; // torn tail
  assert.equal(await floe.importSession(jsonl), id);
  const next = scriptedLLM(say("done"));
  const loaded = [];
  next.loadHistory = (h) => loaded.push(h);
  const resumed = await floe.resumeSession(id, { llm: next });
  await collect(resumed.run("go on"));
  await resumed.close();
  assert.deepEqual(loaded[0].map((m) => m.payload.type), ["text", "tool_call"]);
  const out = next.calls[0].newMessages.find((m) => m.payload.type === "tool_call_output");
  assert.ok(out, JSON.stringify(next.calls[0].newMessages));
  assert.equal(out.payload.tool_call_id, "call_1");
  assert.equal(out.payload.output, "[interrupted: process exited before the tool finished]");
  // The resumed run healed the torn tail and continued the same file.
  const [file] = await floe.exportSession(id);
  assert.match(file.name, new RegExp(`^\\d{4}-\\d\\d-\\d\\d/${id}_001\\.jsonl$`));
  assert.ok(file.text.includes('"type":"mo\n'), "the torn line ends with the healing newline");
});

test("{dir}: the reference layout on disk, listed, resumed and deleted", async (t) => {
  const dir = await tempDir(t);
  const store = { dir };
  const id = newID("dir");
  await runOnce(id, store);
  const days = await readdir(dir);
  assert.equal(days.length, 1);
  assert.match(days[0], /^\d{4}-\d\d-\d\d$/);
  assert.deepEqual(await readdir(join(dir, days[0])), [`${id}_001.jsonl`]);
  const onDisk = await readFile(join(dir, days[0], `${id}_001.jsonl`), "utf8");
  const [exported] = await floe.exportSession(id, { store });
  assert.equal(exported.text, onDisk, "export gives the file's bytes");
  assert.equal(exported.name, `${days[0]}/${id}_001.jsonl`);

  const list = await floe.listSessions({ store });
  assert.deepEqual(list.map((s) => [s.id, s.firstPrompt, s.files, s.size]), [[id, "hello", 1, Buffer.byteLength(onDisk)]]);

  const resumed = await floe.resumeSession(id, { llm: scriptedLLM(say("back")), store });
  await collect(resumed.run("again"));
  await resumed.close();
  const after = await readFile(join(dir, days[0], `${id}_001.jsonl`), "utf8");
  assert.ok(after.startsWith(onDisk) && after.length > onDisk.length, "the resumed run appended to the same file");

  await floe.deleteSession(id, { store });
  assert.deepEqual(await floe.listSessions({ store }), []);
  await rejects(floe.exportSession(id, { store }), "not_found");
  await rejects(floe.deleteSession(id, { store }), "not_found");
  await rejects(floe.resumeSession(id, { llm: scriptedLLM(say("x")), store }), "not_found");
});

test("export → import round trip gives identical records; an existing id is refused", async (t) => {
  const dir = await tempDir(t);
  const id = newID("roundtrip");
  await runOnce(id, "memory");
  const files = await floe.exportSession(id);
  assert.equal(await floe.importSession(files, { store: { dir } }), id);
  assert.deepEqual(await floe.exportSession(id, { store: { dir } }), files);
  await rejects(floe.importSession(files), "session_exists", new RegExp(id));
  await rejects(floe.importSession(files, { store: { dir } }), "session_exists");
  // One JSONL text: its session_meta names the session.
  await floe.deleteSession(id);
  assert.equal(await floe.importSession(files[0].text), id);
  assert.deepEqual(records(await floe.exportSession(id)), records(files));
});

test("import refuses a malformed trace, naming the file and the line", async () => {
  const id = newID("bad");
  await runOnce(id);
  const [file] = await floe.exportSession(id);
  await floe.deleteSession(id);
  const lines = file.text.split("\n");
  lines.splice(1, 0, "{not json");
  await rejects(floe.importSession([{ name: file.name, text: lines.join("\n") }]), "invalid_trace", new RegExp(`"${file.name.replaceAll(".", "\\.")}": line 2`));
  await rejects(floe.importSession([{ name: "notes.txt", text: file.text }]), "invalid_trace", /notes\.txt/);
  await rejects(floe.importSession("{}\n"), "invalid_trace");
  await assert.rejects(floe.importSession(42), (e) => e.code === "bad_argument");
  assert.ok(!(await floe.listSessions()).some((s) => s.id === id), "a refused import stores nothing");
});

test("createSession with a stored id does not write into it; store: false writes nothing", async () => {
  const id = newID("reuse");
  await runOnce(id);
  const before = await floe.exportSession(id);
  const diags = [];
  const session = floe.createSession({ meta: meta(id), llm: scriptedLLM(say("x")), onDiagnostic: (d) => diags.push(d) });
  await collect(session.run("again"));
  await session.close();
  assert.deepEqual(await floe.exportSession(id), before);
  assert.ok(diags.some((d) => d.kind === "trace" && /already exists/.test(d.message)), JSON.stringify(diags));

  // Without onDiagnostic the loss is on the console, not silent: a page
  // that made its session anew at every load lost every later run so.
  const warned = [];
  const warn = console.warn;
  console.warn = (...args) => warned.push(args.join(" "));
  try {
    const again = floe.createSession({ meta: meta(id), llm: scriptedLLM(say("y")) });
    await collect(again.run("once more"));
    await again.close();
  } finally {
    console.warn = warn;
  }
  assert.deepEqual(await floe.exportSession(id), before);
  assert.equal(warned.length, 1, JSON.stringify(warned));
  assert.match(warned[0], new RegExp(`^floe: trace: append "${id}": session already exists: .*resume the stored session`));

  const none = newID("none");
  await runOnce(none, false);
  await rejects(floe.exportSession(none), "not_found");
});

test("store arguments are checked", async () => {
  assert.throws(() => floe.createSession({ meta: meta(), llm: scriptedLLM(say("x")), store: "disk" }), (e) => e.code === "bad_argument" && /store/.test(e.message));
  await assert.rejects(floe.listSessions({ store: "indexeddb" }), (e) => e.code === "bad_argument" && /indexeddb/.test(e.message));
  await assert.rejects(floe.exportSession("a/b"), (e) => e.code === "bad_argument" && /id/.test(e.message));
  await assert.rejects(floe.resumeSession("x", {}), (e) => e.code === "bad_argument" && /llm/.test(e.message));
});

// A CLI that resumes by id at its next start without store: { dir } looks
// in the memory store, Node's default, which the last process took with
// it: "not found" alone did not say where it looked.
test("a session not found says where it was looked for: the memory store it defaulted to, a directory", async (t) => {
  const llm = scriptedLLM(say("x"));
  const hint = /"gone-with-the-process": not found in the memory store, the default here, which keeps the sessions of this program only \(store: \{ dir \} keeps them in a directory\)$/;
  await rejects(floe.resumeSession("gone-with-the-process", { llm }), "not_found", hint);
  await rejects(floe.exportSession("gone-with-the-process"), "not_found", hint);
  await rejects(floe.deleteSession("gone-with-the-process"), "not_found", hint);
  await rejects(floe.readSession("gone-with-the-process"), "not_found", hint);
  // Named, the store is what the program asked for.
  await rejects(floe.resumeSession("gone-with-the-process", { llm, store: "memory" }), "not_found", /: not found$/);
  await rejects(floe.exportSession("gone-with-the-process", { store: "memory" }), "not_found", /: not found$/);
  // A relative directory is the working directory's: a CLI started in
  // another one finds nothing there.
  const dir = await tempDir(t);
  await rejects(floe.resumeSession("elsewhere", { llm, store: { dir } }), "not_found", new RegExp(`"elsewhere": not found in the directory ${JSON.stringify(JSON.stringify(dir)).slice(1, -1)}$`));
  const cwd = process.cwd().replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  await rejects(floe.deleteSession("elsewhere", { store: { dir: "sessions" } }), "not_found", new RegExp(`not found in the directory "sessions" \\(relative to the working directory ${cwd}\\)$`));
  await rejects(floe.readSession("elsewhere", { store: { dir: "sessions" } }), "not_found", new RegExp(`not found in the directory "sessions" \\(relative to the working directory ${cwd}\\)$`));
});

/** A LockManager where other tabs are simulated by adding names to held. */
function fakeLocks() {
  const held = new Set();
  return {
    held,
    async request(name, opts, cb) {
      assert.equal(opts.ifAvailable, true);
      if (held.has(name)) return cb(null);
      held.add(name);
      try {
        return await cb({ name, mode: "exclusive" });
      } finally {
        held.delete(name);
      }
    },
  };
}

test("Web Locks: one writer per persisted session", async (t) => {
  const locks = fakeLocks();
  Object.defineProperty(globalThis, "navigator", { value: { locks }, configurable: true });
  t.after(() => delete globalThis.navigator);
  const store = { dir: await tempDir(t) };
  const id = newID("lock");
  const name = `floe:session:${id}\ndir:${store.dir}`; // a lock of its store's
  let heldDuringRun = false;
  const llm = scriptedLLM(async function* () {
    heldDuringRun = locks.held.has(name);
    yield* text("hi");
    return { status: "completed" };
  });
  const session = floe.createSession({ meta: meta(id), llm, store });

  locks.held.add(name); // another tab runs the session
  const refused = session.run("hello");
  await rejects(refused.next(), "session_busy", /another tab/);
  assert.deepEqual(await refused.next(), { value: undefined, done: true });
  assert.equal(llm.calls.length, 0, "nothing ran");
  await rejects(floe.exportSession(id, { store }), "not_found"); // nothing traced
  await rejects(floe.resumeSession(id, { llm, store }), "session_busy");

  locks.held.delete(name);
  const run = session.run("hello");
  const first = await run.next();
  assert.equal(first.done, false);
  assert.throws(() => session.run("again"), (e) => e.code === "session_busy", "the same object: busy at once");
  for await (const m of run) void m;
  assert.ok(heldDuringRun, "the lock is held while the run streams");
  assert.equal(locks.held.has(name), false, "released once the run ended");
  assert.equal(records(await floe.exportSession(id, { store })).at(-1).payload.type, "request_end");

  // A break before the lock was taken starts nothing.
  const early = session.run("never");
  assert.deepEqual(await early.return(), { value: undefined, done: true });
  assert.equal(llm.calls.length, 1);
  await session.close();
});

// Two session objects of one stored session must not run at once: their
// records would interleave in one Trace. As Web Locks do between tabs, a
// lock of this program (Node has no Web Locks) lets one run at a time:
// another object's run(), or a resumeSession, is refused while it runs.
test("two session objects of one stored session: one run at a time (session_busy), records not interleaved", async (t) => {
  for (const store of ["memory", { dir: await tempDir(t) }]) {
    const id = newID("twice");
    let release;
    const gate = new Promise((r) => (release = r));
    const first = floe.createSession({
      meta: meta(id),
      store,
      llm: scriptedLLM(say("a"), async function* () { await gate; yield* text("late"); }),
    });
    await collect(first.run("one"));
    const second = await floe.resumeSession(id, { llm: scriptedLLM(say("x")), store }); // both idle: allowed
    const stream = first.run("two"); // holds the session's lock until its records are stored
    assert.equal((await stream.next()).value.payload.type, "request_begin");
    assert.throws(() => second.run("three"), (e) => e.code === "session_busy" && /is busy/.test(e.message));
    await rejects(floe.resumeSession(id, { llm: scriptedLLM(say("y")), store }), "session_busy", /is busy/);
    release();
    await collect(stream);
    // The first run over, the other object may run.
    assert.deepEqual(find(await collect(second.run("three")), "text").map((m) => m.payload.text), ["x"]);
    await first.close();
    await second.close();
    const texts = records(await floe.exportSession(id, { store })).filter((r) => r.payload?.type === "text").map((r) => r.payload.text);
    assert.deepEqual(texts, ["one", "a", "two", "late", "three", "x"], "each run's records together, in run order");
  }
});

// React's StrictMode runs a mount effect twice at once, and a component
// that closes its session on unmount resumes it when mounted again while
// the closed run still stores its records: a resume (or delete) waits for
// a resume of this program and for a closed session's run, instead of
// failing with session_busy. An open session's run still refuses it.
test("resumeSession waits for another resume of the session and for a closed session's run to end", async (t) => {
  for (const store of ["memory", { dir: await tempDir(t) }]) {
    const id = newID("strict");
    await collect(floe.createSession({ meta: meta(id), store, llm: scriptedLLM(say("a")) }).run("one"));
    // Two resumes at once: both get a session.
    const twice = await Promise.allSettled([1, 2].map(() => floe.resumeSession(id, { llm: scriptedLLM(say("x")), store })));
    assert.deepEqual(twice.map((r) => r.reason?.message ?? r.status), ["fulfilled", "fulfilled"]);
    await twice[0].value.close();
    const session = twice[1].value;
    // Its run in flight, the session is closed; a resume right after
    // waits for the run's end (abort) and then continues the Trace.
    const blocked = scriptedLLM(async function* ({ signal }) {
      await new Promise((r) => signal.addEventListener("abort", r));
      return { status: "aborted" };
    });
    const slow = await floe.resumeSession(id, { llm: blocked, store });
    await session.close();
    const stream = slow.run("two");
    assert.equal((await stream.next()).value.payload.type, "request_begin");
    const rest = collect(stream);
    const closed = slow.close();
    const again = await floe.resumeSession(id, { llm: scriptedLLM(say("b")), store });
    assert.equal(types(await rest).at(-1), "abort");
    await closed;
    await collect(again.run("three"));
    await again.close();
    const texts = records(await floe.exportSession(id, { store })).filter((r) => r.payload?.type === "text").map((r) => r.payload.text);
    assert.deepEqual(texts, ["one", "a", "two", "three", "b"]);
    // A run of an open session object still refuses a resume.
    const open = await floe.resumeSession(id, { llm: blocked, store });
    const busy = open.run("four");
    await busy.next();
    await rejects(floe.resumeSession(id, { llm: scriptedLLM(say("y")), store }), "session_busy", /is busy/);
    await open.close();
  }
});

test("deleteSession while a run of the session is in flight is refused; an open session object deleted between runs stores nothing more (no Trace without its session_meta)", async (t) => {
  for (const store of ["memory", { dir: await tempDir(t) }]) {
    const id = newID("delete-open");
    const diags = [];
    const session = floe.createSession({ meta: meta(id), llm: scriptedLLM(say("one"), say("two"), say("three")), store, onDiagnostic: (d) => diags.push(d) });
    await collect(session.run("first"));
    // A run in flight holds the session's lock: the delete is refused and
    // nothing of the session is lost.
    const stream = session.run("second");
    assert.equal((await stream.next()).done, false);
    await rejects(floe.deleteSession(id, { store }), "session_busy");
    for await (const m of stream) void m;
    const recs = records(await floe.exportSession(id, { store }));
    assert.equal(recs[0].type, "session_meta");
    assert.deepEqual(recs.filter((m) => m.payload.type === "text" && m.payload.role === "user").map((m) => m.payload.text), ["first", "second"]);
    // Between runs it is deleted; the object's next run stores nothing,
    // and says so once.
    await floe.deleteSession(id, { store });
    await collect(session.run("third"));
    await session.close();
    await rejects(floe.exportSession(id, { store }), "not_found");
    assert.deepEqual(await floe.listSessions({ store }).then((l) => l.filter((x) => x.id === id)), []);
    assert.deepEqual(diags.filter((d) => d.kind === "trace").map((d) => d.message.includes("the session was deleted while it was open")), [true]);
  }
});

test("deleteSession of an open subagent's session between its runs: it stores nothing more, as a session object does (no Trace without its session_meta)", async (t) => {
  for (const store of ["memory", { dir: await tempDir(t) }]) {
    const id = newID("delete-open-child");
    const diags = [];
    const sub = floe.createSubagent({ meta: meta(id), llm: scriptedLLM(say("one"), say("two")), store, onDiagnostic: (d) => diags.push(d) });
    await collect(sub.run("first"));
    assert.equal(records(await floe.exportSession(id, { store }))[0].payload.source, "subagent");
    await floe.deleteSession(id, { store });
    await collect(sub.run("second"));
    sub.close();
    await rejects(floe.exportSession(id, { store }), "not_found");
    assert.deepEqual(await floe.listSessions({ store }).then((l) => l.filter((x) => x.id === id)), []);
    assert.deepEqual(diags.filter((d) => d.kind === "trace").map((d) => d.message.includes("the session was deleted while it was open")), [true]);
  }
});

// A subagent's run holds its session's lock as a session's run does:
// deleteSession and resumeSession of its id are refused while it runs, and
// nothing of it is lost; once it has ended (normally, aborted, closed,
// failed) the lock is free again.
test("a subagent's run in flight holds its session's lock: deleteSession and resumeSession of its id are refused session_busy and nothing is lost; after its end, the delete succeeds", async (t) => {
  for (const store of ["memory", { dir: await tempDir(t) }]) {
    const id = newID("running-child");
    const diags = [];
    let open;
    const gate = new Promise((r) => (open = r));
    const llm = scriptedLLM(async function* () {
      yield* text("one");
      await gate;
      yield* text("two");
      yield usage();
      return { status: "completed" };
    });
    const sub = floe.createSubagent({ meta: meta(id), llm, store, onDiagnostic: (d) => diags.push(d) });
    const stream = sub.run("task");
    assert.equal((await stream.next()).value.type, "session_meta");
    await rejects(floe.deleteSession(id, { store }), "session_busy", /is busy/);
    await rejects(floe.resumeSession(id, { llm: scriptedLLM(say("x")), store }), "session_busy", /is busy/);
    // On a { dir } store it holds the lock file, as a session's run does.
    const lockFile = store.dir && join(store.dir, `.${id}.lock`);
    if (lockFile) assert.equal(existsSync(lockFile), true, "no lock file during the run");
    // Another object of the same id (a second createSubagent, a session)
    // is refused too: their records would interleave in one Trace.
    const twin = floe.createSubagent({ meta: meta(id), llm: scriptedLLM(say("x")), store });
    await rejects((async () => collect(twin.run("again")))(), "session_busy", /is busy/);
    twin.close();
    open();
    await collect(stream);
    const texts = records(await floe.exportSession(id, { store })).filter((r) => r.payload?.type === "text").map((r) => r.payload.text);
    assert.deepEqual(texts, ["task", "one", "two"]);
    assert.deepEqual(diags.filter((d) => d.kind === "trace"), []);
    if (lockFile) assert.equal(existsSync(lockFile), false, "the lock file outlived the run");
    // Ended, it holds nothing: its next run and a delete go through.
    await collect(sub.run("more"));
    sub.close();
    await floe.deleteSession(id, { store });
    await rejects(floe.exportSession(id, { store }), "not_found");
  }
});

test("a parent's run_subagent call: the child's session is busy while the child runs (its deleteSession and resumeSession refused), free once the call ended", async (t) => {
  for (const store of ["memory", { dir: await tempDir(t) }]) {
    let open;
    const gate = new Promise((r) => (open = r));
    const child = floe.subagentTool({
      create: () => ({
        store,
        llm: scriptedLLM(async function* () {
          yield* text("working");
          await gate;
          yield* text("found");
          yield usage();
          return { status: "completed" };
        }),
      }),
    });
    const call = async function* () {
      yield toolCall("c1", "run_subagent", JSON.stringify({ prompt: "find it" }));
      yield usage();
      return { status: "completed" };
    };
    const parent = floe.createSession({ meta: meta(newID("parent")), store, tools: [child], llm: scriptedLLM(call, say("done")) });
    const stream = parent.run("go", { approve: () => "allow" });
    // Read up to the child's first text (a break would abort the run).
    let m;
    while (!((m = (await stream.next()).value).origin && m.payload.role === "assistant"));
    const childId = m.origin[0];
    await rejects(floe.deleteSession(childId, { store }), "session_busy", /is busy/);
    await rejects(floe.resumeSession(childId, { llm: scriptedLLM(say("x")), store }), "session_busy", /is busy/);
    open();
    const rest = await collect(stream);
    assert.deepEqual(find(rest.filter((m) => !m.origin), "tool_call_output").map((m) => m.payload.output), ["found"]);
    const texts = records(await floe.exportSession(childId, { store })).filter((r) => r.payload?.type === "text").map((r) => r.payload.text);
    assert.deepEqual(texts, ["find it", "working", "found"]);
    await parent.close();
    await floe.deleteSession(childId, { store });
    await floe.deleteSession(parent.id, { store });
  }
});

test("a parent's run aborted while its run_subagent child runs: the child's run is aborted and lets its session's lock go", async (t) => {
  for (const store of ["memory", { dir: await tempDir(t) }]) {
    const child = floe.subagentTool({
      create: () => ({
        store,
        llm: scriptedLLM(async function* ({ signal }) {
          yield* text("working");
          await new Promise((r) => signal.addEventListener("abort", r));
          return { status: "aborted" };
        }),
      }),
    });
    const call = async function* () {
      yield toolCall("c1", "run_subagent", JSON.stringify({ prompt: "find it" }));
      yield usage();
      return { status: "completed" };
    };
    const parent = floe.createSession({ meta: meta(newID("aborted-parent")), store, tools: [child], llm: scriptedLLM(call) });
    const ac = new AbortController();
    const stream = parent.run("go", { approve: () => "allow", signal: ac.signal });
    let m;
    while (!((m = (await stream.next()).value).origin && m.payload.role === "assistant"));
    const childId = m.origin[0];
    await rejects(floe.deleteSession(childId, { store }), "session_busy");
    ac.abort();
    assert.equal(types(await collect(stream)).at(-1), "abort");
    const kinds = records(await floe.exportSession(childId, { store })).map((r) => r.payload?.type ?? r.type);
    assert.equal(kinds.at(-1), "abort", "the child's Trace ends with its abort");
    await floe.deleteSession(childId, { store });
    await parent.close();
    await floe.deleteSession(parent.id, { store });
  }
});

// A parent's Trace that names child, the parent's files of a real
// run_subagent call whose child session is left out (imported without it).
async function parentNaming(store) {
  const scratch = "memory";
  const child = floe.subagentTool({ create: () => ({ store: scratch, llm: scriptedLLM(say("found")) }) });
  const call = async function* () {
    yield toolCall("c1", "run_subagent", JSON.stringify({ prompt: "find it" }));
    yield usage();
    return { status: "completed" };
  };
  const parent = floe.createSession({ meta: meta(newID("tree-parent")), store: scratch, tools: [child], llm: scriptedLLM(call, say("done")) });
  const msgs = await collect(parent.run("go", { approve: () => "allow" }));
  await parent.close();
  const childId = msgs.find((m) => m.origin).origin[0];
  const files = await floe.exportSession(parent.id, { store: scratch });
  await floe.deleteSession(parent.id, { store: scratch });
  await floe.importSession(files.filter((f) => f.name.includes(parent.id)), { store });
  return { parentId: parent.id, childId };
}

test("deleteSession of a parent while a run of its subagent's child session is in flight is refused session_busy, naming the child, and deletes nothing; once that run ended it deletes both", async (t) => {
  for (const store of ["memory", { dir: await tempDir(t) }]) {
    const { parentId, childId } = await parentNaming(store);
    let open;
    const gate = new Promise((r) => (open = r));
    const sub = floe.createSubagent({
      meta: meta(childId),
      store,
      llm: scriptedLLM(say("done"), async function* () {
        yield* text("one");
        await gate;
        yield* text("two");
        yield usage();
        return { status: "completed" };
      }),
    });
    // Its first run stores its Trace (a child not stored yet is no session
    // of the tree); its second waits at the gate.
    await collect(sub.run("first"));
    const stream = sub.run("again");
    for (let m; (m = (await stream.next()).value).payload.text !== "one"; );
    await rejects(floe.deleteSession(parentId, { store }), "session_busy", new RegExp(`session "${parentId}" is not deleted, nor any of its subagents' sessions: its subagent's session "${childId}" is busy`));
    assert.ok((await floe.exportSession(parentId, { store })).length > 0, "the parent was deleted");
    open();
    await collect(stream);
    const texts = records(await floe.exportSession(childId, { store })).filter((r) => r.payload?.type === "text").map((r) => r.payload.text);
    assert.deepEqual(texts, ["first", "done", "again", "one", "two"], "the child's run lost records");
    sub.close();
    await floe.deleteSession(parentId, { store });
    await rejects(floe.exportSession(parentId, { store }), "not_found");
    await rejects(floe.exportSession(childId, { store }), "not_found");
  }
});

test("a subagent's lock is let go at every end of its run: an abort, a break, a failed model, close() while nobody reads", async (t) => {
  for (const store of ["memory", { dir: await tempDir(t) }]) {
    const id = newID("child-ends");
    const blocked = async function* ({ signal }) {
      yield* text("a");
      await new Promise((r) => signal.addEventListener("abort", r));
      return { status: "aborted" };
    };
    const failing = async function* () {
      throw new Error("model down");
    };
    const sub = floe.createSubagent({ meta: meta(id), llm: scriptedLLM(blocked, blocked, failing, blocked, say("late")), store, config: { maxReconnects: 0 } });
    const free = () => floe.resumeSession(id, { llm: scriptedLLM(say("x")), store }).then((s) => s.close());
    // Reads stream up to its model's first text: the model was called.
    const started = async (stream) => {
      for (let m; (m = (await stream.next()).value).payload.role !== "assistant"; );
    };
    // The run's signal aborts it.
    const ac = new AbortController();
    let stream = sub.run("one", { signal: ac.signal });
    await started(stream);
    await rejects(free(), "session_busy");
    ac.abort();
    assert.equal(types(await collect(stream)).at(-1), "abort");
    await free();
    // A break (return()) abandons it.
    stream = sub.run("two");
    await started(stream);
    await rejects(free(), "session_busy");
    await stream.return();
    await free();
    // Its model fails.
    assert.equal(find(await collect(sub.run("three")), "request_end")[0].payload.status, "failed");
    await free();
    // close() while its reader does not pull: the run is aborted and ends
    // (a resume waits for a closed object's run, as for a session's), and
    // its reader still gets the rest.
    stream = sub.run("four");
    await started(stream);
    sub.close();
    await free();
    assert.equal(types(await collect(stream)).at(-1), "abort");
    await floe.deleteSession(id, { store });
  }
});

// A resumed session's JavaScript model gets the session totals the Trace
// last stated with its history (E-17.5), as a built-in model's context
// does: mockModel's token_usage goes on from them (it said the session had
// used one request's tokens).
test("a resumed JavaScript model's loadHistory gets the session totals, and mockModel counts on from them", async () => {
  const { mockModel } = await import("../../static/test.mjs");
  const first = floe.createSession({ llm: mockModel(["one two", "three"]) });
  await collect(first.run("a"));
  const usage = (out) => out.filter((m) => m.payload.type === "token_usage").map((m) => m.payload.session);
  const before = usage(await collect(first.run("b"))).at(-1);
  await first.close();
  const seen = [];
  const model = mockModel(["four"]);
  const load = model.loadHistory;
  model.loadHistory = (history, totals) => {
    seen.push(totals);
    return load(history, totals);
  };
  const resumed = await floe.resumeSession(first.id, { llm: model });
  const after = usage(await collect(resumed.run("c")));
  await resumed.close();
  assert.deepEqual(seen, [before], "loadHistory's second argument is the last token_usage's session counts");
  assert.equal(model.history.filter((m) => m.payload.type === "text").length, 4);
  assert.deepEqual(after, [{ ...before, output: before.output + 4, total: before.total + 14 }]);
  await floe.deleteSession(first.id);
});

// A loadHistory that never settles gets a signal, aborted when the run is
// aborted or the session closed: it had none, and could not know to stop.
// The history a load cut short is handed again: it was dropped, and every
// later request went to a model without it.
test("loadHistory gets a signal, aborted by the run's abort and by close()", async () => {
  for (const end of ["abort", "close"]) {
    const id = newID(`load-signal-${end}`);
    const first = floe.createSession({ meta: meta(id), llm: scriptedLLM(say("one")) });
    await collect(first.run("one"));
    await first.close();
    const next = scriptedLLM(say("two"), say("three"));
    let signal;
    let loading;
    const entered = new Promise((resolve) => (loading = resolve));
    const loads = [];
    next.loadHistory = (history, totals, context) => {
      loads.push(history.length);
      if (loads.length > 1) return;
      signal = context.signal;
      loading();
      return new Promise(() => {}); // never settles
    };
    const resumed = await floe.resumeSession(id, { llm: next });
    const ac = new AbortController();
    const out = collect(resumed.run("again", { signal: ac.signal }));
    await entered;
    assert.equal(signal.aborted, false);
    const gone = new Promise((resolve) => signal.addEventListener("abort", resolve));
    if (end === "abort") ac.abort();
    else await resumed.close();
    await gone;
    assert.equal((await out).at(-1).payload.type, "abort", end);
    if (end === "abort") {
      // The load the abort cut short is handed again at the next request.
      await collect(resumed.run("once more"));
      assert.deepEqual(loads, [2, 2]);
    }
    await resumed.close();
  }
});

// An import takes the lock of each session it stores, as a run does: a
// run whose first record is not stored yet (run() made, its stream not
// read) held its session's lock, and the import took the id, the run's
// records then refused as a session stored already.
test("importSession of a session whose run has not stored its first record yet is refused session_busy and imports nothing; the run's records are stored", async (t) => {
  for (const store of ["memory", { dir: await tempDir(t) }]) {
    const id = newID("import-running");
    const session = floe.createSession({ meta: meta(id), store, llm: scriptedLLM(say("mine")) });
    const stream = session.run("my prompt");
    const line = (type, payload) => JSON.stringify({ timestamp: "2026-01-02T03:04:05.000Z", type, payload }) + "\n";
    const trace = line("session_meta", meta(id)) + line("model_msg", { type: "text", role: "user", text: "imported", stop_reason: "completed" });
    const refused = new RegExp(`importSession: session "${id}" is busy, and nothing was imported`);
    await rejects(floe.importSession(trace, { store }), "session_busy", refused);
    await rejects(floe.importSession([{ name: `2026-01-02/${id}_001.jsonl`, text: trace }], { store }), "session_busy", refused);
    await collect(stream);
    await session.close();
    const texts = records(await floe.exportSession(id, { store })).filter((r) => r.payload?.type === "text").map((r) => r.payload.text);
    assert.deepEqual(texts, ["my prompt", "mine"]);
    await rejects(floe.importSession(trace, { store }), "session_exists");
  }
});

test("importSession of a session with its subagents' sessions, one of which a run not stored yet holds, is refused session_busy naming it and stores none of them", async (t) => {
  const scratch = "memory";
  const child = floe.subagentTool({ create: () => ({ store: scratch, llm: scriptedLLM(say("found")) }) });
  const call = async function* () {
    yield toolCall("c1", "run_subagent", JSON.stringify({ prompt: "find it" }));
    yield usage();
    return { status: "completed" };
  };
  const parent = floe.createSession({ meta: meta(newID("import-tree")), store: scratch, tools: [child], llm: scriptedLLM(call, say("done")) });
  const msgs = await collect(parent.run("go", { approve: () => "allow" }));
  await parent.close();
  const childId = msgs.find((m) => m.origin).origin[0];
  const files = await floe.exportSession(parent.id, { store: scratch });
  assert.equal(files.length, 2);
  await floe.deleteSession(parent.id, { store: scratch });
  for (const store of ["memory", { dir: await tempDir(t) }]) {
    const sub = floe.createSubagent({ meta: meta(childId), store, llm: scriptedLLM(say("its own")) });
    const stream = sub.run("its task");
    await rejects(floe.importSession(files, { store }), "session_busy", new RegExp(`importSession: session "${childId}" is busy, and nothing was imported`));
    await rejects(floe.exportSession(parent.id, { store }), "not_found");
    await collect(stream);
    sub.close();
    const texts = records(await floe.exportSession(childId, { store })).filter((r) => r.payload?.type === "text").map((r) => r.payload.text);
    assert.deepEqual(texts, ["its task", "its own"]);
    await floe.deleteSession(childId, { store });
    assert.equal(await floe.importSession(files, { store }), parent.id);
    await floe.deleteSession(parent.id, { store });
  }
});

// A child session whose run has not stored its first record yet is one of
// its parent's, as a stored one is: the parent's delete went through, and
// the child then wrote its Trace, a subagent's session no parent names.
test("deleteSession of a parent whose subagent's child session is not stored yet while its run is in flight is refused session_busy naming the child; an object of it left open stores nothing after the delete", async (t) => {
  for (const store of ["memory", { dir: await tempDir(t) }]) {
    const { parentId, childId } = await parentNaming(store);
    const sub = floe.createSubagent({ meta: meta(childId), store, llm: scriptedLLM(say("done"), say("after")) });
    const stream = sub.run("first");
    await rejects(floe.deleteSession(parentId, { store }), "session_busy", new RegExp(`session "${parentId}" is not deleted, nor any of its subagents' sessions: its subagent's session "${childId}" is busy`));
    assert.ok((await floe.exportSession(parentId, { store })).length > 0, "the parent was deleted");
    await collect(stream);
    sub.close();
    await floe.deleteSession(parentId, { store });
    await rejects(floe.exportSession(parentId, { store }), "not_found");
    await rejects(floe.exportSession(childId, { store }), "not_found");

    // Not stored and not running: the delete goes through, and an object
    // of the child still open stores nothing more, as one of a stored
    // child does.
    const again = await parentNaming(store);
    const diags = [];
    const idle = floe.createSubagent({ meta: meta(again.childId), store, llm: scriptedLLM(say("late")), onDiagnostic: (d) => diags.push(d) });
    await floe.deleteSession(again.parentId, { store });
    await collect(idle.run("late task"));
    idle.close();
    await rejects(floe.exportSession(again.childId, { store }), "not_found");
    assert.ok(diags.some((d) => d.kind === "trace" && /deleted while it was open/.test(d.message)), JSON.stringify(diags));
  }
});

// The locks of sessions are one per store and id: two { dir } stores, or
// the memory store and one, hold sessions of their own.
test("sessions of one id in two stores run at once; two objects of it in one store do not", async (t) => {
  const id = newID("two-stores");
  const stores = [{ dir: await tempDir(t) }, { dir: await tempDir(t) }, "memory"];
  const sessions = stores.map((store) => floe.createSession({ meta: meta(id), store, llm: scriptedLLM(say("hi")) }));
  const streams = sessions.map((s) => s.run("hello"));
  const twin = floe.createSession({ meta: meta(id), store: stores[0], llm: scriptedLLM(say("never")) });
  assert.throws(() => twin.run("again"), (e) => e.code === "session_busy");
  await twin.close();
  for (const [i, stream] of streams.entries()) {
    assert.equal(find(await collect(stream), "text").at(-1).payload.text, "hi");
    await sessions[i].close();
    assert.ok((await floe.exportSession(id, { store: stores[i] })).length > 0);
  }
});
