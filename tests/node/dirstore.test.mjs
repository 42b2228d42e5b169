// The {dir} store as a backend service or a CLI meets it: several processes
// on one directory (one writer per session: a lock file), a process killed
// in the middle of a run, and a directory of many sessions.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fork, spawnSync } from "node:child_process";
import nodeFS from "node:fs";
import { mkdtemp, rm, writeFile, mkdir } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { floe, meta, scriptedLLM, say, collect, find, runBesideLastWrite } from "./helpers.mjs";

async function tempDir(t) {
  const dir = await mkdtemp(join(tmpdir(), "floe-dirstore-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function rejects(p, code, says) {
  await assert.rejects(p, (e) => {
    assert.equal(e.code, code, e.message);
    if (says) assert.match(e.message, says);
    return true;
  });
}

// A child process that creates session id in dir and runs it: its tool
// says "at-tool" and waits for a message from the test before it answers.
const CHILD = `
const [url, dir, id] = process.argv.slice(2);
const { load } = await import(url);
const floe = await load();
let n = 0;
const llm = {
  async *streamGenerate() {
    if (++n === 1) {
      yield { type: "model_msg", payload: { type: "tool_call", role: "assistant", name: "wait", arguments: "{}", tool_call_id: "call-child", stop_reason: "completed" } };
      return { status: "completed" };
    }
    yield { type: "model_msg", payload: { type: "text", role: "assistant", text: "child done", stop_reason: "completed" } };
    return { status: "completed" };
  },
};
const wait = floe.tool({ name: "wait", execute: () => new Promise((resolve) => { process.send("at-tool"); process.once("message", () => resolve("answered")); }) });
const session = floe.createSession({ meta: { session_id: id }, llm, tools: [wait], store: { dir } });
for await (const m of session.run("from the child", { approve: () => "allow" }));
process.send("done");
process.disconnect();
`;

async function startChild(t, dir, id) {
  const script = join(dir, "..", `child-${process.pid}-${id}.mjs`);
  await writeFile(script, CHILD);
  t.after(() => rm(script, { force: true }));
  const url = new URL("../../static/floe-node.mjs", import.meta.url).href;
  const child = fork(script, [url, dir, id], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const said = [];
  let wake = null;
  child.on("message", (m) => {
    said.push(m);
    wake?.();
  });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  t.after(() => child.kill("SIGKILL"));
  const hear = async (what) => {
    while (!said.includes(what)) {
      const woke = new Promise((resolve) => (wake = resolve));
      const end = await Promise.race([woke.then(() => "message"), exited.then(() => "exit")]);
      if (end === "exit" && !said.includes(what)) throw new Error(`the child exited before it said ${what}`);
    }
  };
  return { child, hear, exited };
}

/** Waits until the session's stored Trace holds a record of type. */
async function stored(id, store, type) {
  for (let i = 0; i < 100_000; i++) {
    const files = await floe.exportSession(id, { store }).catch(() => []);
    if (files.some((f) => f.text.includes(`"type":"${type}"`))) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`no ${type} record stored`);
}

const lockFile = (dir, id) => join(dir, `.${id}.lock`);

test("{dir}: another process's run holds the session: resume and delete here are refused, naming it; after it ends they go", { timeout: 60_000 }, async (t) => {
  const dir = await tempDir(t);
  const store = { dir };
  const id = "two processes";
  const { child, hear, exited } = await startChild(t, dir, id);
  await hear("at-tool");
  await stored(id, store, "approval_decision");
  const holder = new RegExp(`another process \\(pid ${child.pid} on [^)]*\\) is running it \\(its lock file .*${id}\\.lock`);
  await rejects(floe.resumeSession(id, { llm: scriptedLLM(say("x")), store }), "session_busy", holder);
  await rejects(floe.deleteSession(id, { store }), "session_busy", holder);
  child.send("go");
  await hear("done");
  assert.deepEqual(await exited, { code: 0, signal: null });
  assert.equal(nodeFS.existsSync(lockFile(dir, id)), false, "the child's lock file is gone with its run");

  const s = await floe.resumeSession(id, { llm: scriptedLLM(say("back")), store });
  await collect(s.run("here"));
  await s.close();
  const [file] = await floe.exportSession(id, { store });
  const prompts = file.text.split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((r) => r.payload.role === "user" && r.payload.type === "text");
  assert.deepEqual(prompts.map((r) => r.payload.text), ["from the child", "here"], "one writer after the other");
  assert.equal(nodeFS.existsSync(lockFile(dir, id)), false);
  assert.deepEqual((await floe.listSessions({ store })).map((x) => x.id), [id], "the lock file is not listed as a session");
});

test("{dir}: a process killed in the middle of a run leaves a lock no process holds: the session resumes, its cut tool call answered", { timeout: 60_000 }, async (t) => {
  const dir = await tempDir(t);
  const store = { dir };
  const id = "killed";
  const { child, hear, exited } = await startChild(t, dir, id);
  await hear("at-tool");
  await stored(id, store, "approval_decision");
  child.kill("SIGKILL");
  assert.equal((await exited).signal, "SIGKILL");
  assert.ok(nodeFS.existsSync(lockFile(dir, id)), "SIGKILL released nothing");

  const llm = scriptedLLM(say("resumed"));
  const s = await floe.resumeSession(id, { llm, store });
  const msgs = await collect(s.run("again"));
  await s.close();
  assert.equal(msgs.at(-1).payload.type, "request_end");
  const sent = llm.calls[0].newMessages.map((m) => m.payload);
  assert.ok(sent.some((p) => p.type === "tool_call_output" && p.tool_call_id === "call-child" && /^\[interrupted: process exited/.test(p.output)), JSON.stringify(sent));
  assert.equal(nodeFS.existsSync(lockFile(dir, id)), false);
});

test("{dir}: a lock file left by this process's pid in another life is stale; one from another host is not", async (t) => {
  const dir = await tempDir(t);
  const store = { dir };
  const id = "stale";
  const s = floe.createSession({ meta: meta(id), llm: scriptedLLM(say("hi")), store });
  await collect(s.run("hello"));
  await s.close();
  // A container's pid 1, restarted: the same pid, another process.
  await writeFile(lockFile(dir, id), JSON.stringify({ pid: process.pid, host: hostname(), token: "before" }) + "\n");
  const again = await floe.resumeSession(id, { llm: scriptedLLM(say("hi")), store });
  await collect(again.run("again"));
  assert.equal(nodeFS.existsSync(lockFile(dir, id)), false);
  // A directory shared with another machine: its process cannot be checked.
  await writeFile(lockFile(dir, id), JSON.stringify({ pid: 1, host: "elsewhere", token: "x" }) + "\n");
  assert.throws(() => again.run("blocked"), (e) => e.code === "session_busy" && /pid 1 on elsewhere.*delete it if that process is gone/.test(e.message));
  await rejects(floe.resumeSession(id, { llm: scriptedLLM(say("x")), store }), "session_busy", /elsewhere/);
  await again.close();
});

test("{dir}: deleteSession of a parent whose subagent's child session another process holds is refused, naming that process and file, and deletes nothing", async (t) => {
  const dir = await tempDir(t);
  const store = { dir };
  const child = floe.subagentTool({ create: () => ({ store, llm: scriptedLLM(say("found")) }) });
  const call = async function* () {
    yield { type: "model_msg", payload: { type: "tool_call", role: "assistant", name: "run_subagent", arguments: JSON.stringify({ prompt: "find it" }), tool_call_id: "c1", stop_reason: "completed" } };
    return { status: "completed" };
  };
  const parent = floe.createSession({ meta: meta("tree parent"), store, tools: [child], llm: scriptedLLM(call, say("done")) });
  const msgs = await collect(parent.run("go", { approve: () => "allow" }));
  await parent.close();
  const childId = msgs.find((m) => m.origin).origin[0];
  // A live process of this host (this one's parent) holds the child.
  await writeFile(lockFile(dir, childId), JSON.stringify({ pid: process.ppid, host: hostname(), token: "other", beat: 30 }) + "\n");
  const holder = new RegExp(`subagent's session "${childId}" is busy: another process \\(pid ${process.ppid} on [^)]*\\) is running it \\(its lock file .*${childId}\\.lock`);
  await rejects(floe.deleteSession(parent.id, { store }), "session_busy", holder);
  assert.deepEqual((await floe.listSessions({ store })).map((x) => x.id).sort(), [childId, parent.id].sort(), "a session was deleted");
  assert.equal(nodeFS.existsSync(lockFile(dir, parent.id)), false, "the parent's lock file outlived the refused delete");
  await rm(lockFile(dir, childId));
  await floe.deleteSession(parent.id, { store });
  assert.deepEqual(await floe.listSessions({ store }), []);
});

// A holder touches its lock file every beat while it holds it, so one its
// pid cannot judge (another host: a container made anew over the same
// directory; a pid another process took) is gone once its file has gone
// ten beats untouched. A file without a beat (an older build) is never
// judged by its age.
test("{dir}: a lock file another host left untouched for ten beats is stale; one touched within them, or of an older build, is not; a run's lock beats", async (t) => {
  const dir = await tempDir(t);
  const store = { dir };
  const id = "silent";
  const s = floe.createSession({ meta: meta(id), llm: scriptedLLM(say("hi")), store });
  await collect(s.run("hello"));
  await s.close();
  const path = lockFile(dir, id);
  const leave = async (holder, ageMs) => {
    await writeFile(path, JSON.stringify(holder) + "\n");
    const at = new Date(Date.now() - ageMs);
    nodeFS.utimesSync(path, at, at);
  };
  await leave({ pid: 1, host: "elsewhere", token: "x", beat: 30 }, 4 * 60_000);
  await rejects(floe.resumeSession(id, { llm: scriptedLLM(say("x")), store }), "session_busy", /pid 1 on elsewhere.*judged gone once its file goes 300 s untouched/);
  await leave({ pid: 1, host: "elsewhere", token: "x" }, 24 * 3600_000);
  await rejects(floe.resumeSession(id, { llm: scriptedLLM(say("x")), store }), "session_busy", /delete it if that process is gone/);
  await leave({ pid: 1, host: "elsewhere", token: "x", beat: 30 }, 6 * 60_000);
  const again = await floe.resumeSession(id, { llm: scriptedLLM(say("hi")), store });
  await collect(again.run("again"));
  assert.equal(nodeFS.existsSync(path), false);

  // The run's own lock names its beat and is touched while the run waits.
  const { nodeHooks } = await import("../../static/internal.mjs");
  let beaten;
  nodeHooks.lockBeatMs = 5;
  nodeHooks.lockBeaten = () => beaten?.();
  t.after(() => {
    nodeHooks.lockBeatMs = undefined;
    nodeHooks.lockBeaten = undefined;
  });
  let open;
  const gate = new Promise((r) => (open = r));
  const llm = { async *streamGenerate() { await gate; yield { type: "model_msg", payload: { type: "text", role: "assistant", text: "late", stop_reason: "completed" } }; return { status: "completed" }; } };
  const held = await floe.resumeSession(id, { llm, store });
  const run = collect(held.run("wait"));
  while (!nodeFS.existsSync(path)) await new Promise((r) => setImmediate(r));
  assert.equal(JSON.parse(nodeFS.readFileSync(path, "utf8")).beat, 0.005);
  const old = new Date(Date.now() - 3600_000);
  nodeFS.utimesSync(path, old, old);
  const alive = setInterval(() => {}, 1000); // the beat's timer holds no process open
  while (nodeFS.statSync(path).mtimeMs < Date.now() - 60_000) await new Promise((r) => (beaten = r));
  clearInterval(alive);
  open();
  await run;
  await held.close();
  assert.equal(nodeFS.existsSync(path), false);
});

test("{dir}: a store whose lock file cannot be made refuses the run, storage naming the file and the system's error, and runs nothing", async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, "a-file");
  await writeFile(file, "not a directory");
  const model = scriptedLLM(say("hi"));
  const s = floe.createSession({ meta: meta("nowhere"), llm: model, store: { dir: file } });
  assert.throws(() => s.run("hello"), (e) => e.code === "storage" && e.message.includes(`run: session "nowhere": its lock file ${join(file, ".nowhere.lock")} cannot be made: ENOTDIR`));
  await s.close();
  assert.equal(model.calls.length, 0);
  // A missing directory is made by a run, not by a resume or a delete.
  const missing = join(dir, "missing");
  await rejects(floe.resumeSession("x", { llm: scriptedLLM(say("x")), store: { dir: missing } }), "not_found");
  await rejects(floe.deleteSession("x", { store: { dir: missing } }), "not_found");
  assert.equal(nodeFS.existsSync(missing), false);
});

// A directory the process may not write (a read-only one; the tests run as
// root, which permissions do not stop, so open(2) is made to fail) whose
// date directory it may: the run went on unlocked, its records written.
test("{dir}: a lock file that cannot be made (no permission) or read (a directory in its place) refuses the run, resume and delete, naming the file and the system's error; nothing is written", async (t) => {
  const dir = await tempDir(t);
  const store = { dir };
  const path = lockFile(dir, "guarded");
  const { openSync } = nodeFS;
  nodeFS.openSync = function (p, ...rest) {
    if (String(p) === path) throw Object.assign(new Error(`EACCES: permission denied, open '${p}'`), { code: "EACCES" });
    return openSync.call(this, p, ...rest);
  };
  let restored = false;
  const restore = () => restored || ((restored = true), (nodeFS.openSync = openSync));
  t.after(restore);
  const model = scriptedLLM(say("one"));
  const s = floe.createSession({ meta: meta("guarded"), llm: model, store });
  assert.throws(() => s.run("hello"), (e) => e.code === "storage" && e.message === `run: session "guarded": its lock file ${path} cannot be made: EACCES: permission denied, open '${path}'`);
  restore();
  assert.equal(model.calls.length, 0);
  assert.deepEqual(await floe.listSessions({ store }), [], "nothing written");
  await collect(s.run("hello"));
  await s.close();

  await mkdir(path); // a directory in its place: it was another process's lock
  const again = floe.createSession({ meta: meta("guarded"), llm: scriptedLLM(say("two")), store });
  const unreadable = (fn) => (e) => e.code === "storage" && e.message.startsWith(`${fn}: session "guarded": its lock file ${path} cannot be read: EISDIR`);
  assert.throws(() => again.run("again"), unreadable("run"));
  await again.close();
  await assert.rejects(floe.resumeSession("guarded", { llm: scriptedLLM(say("x")), store }), unreadable("resumeSession"));
  await assert.rejects(floe.deleteSession("guarded", { store }), unreadable("deleteSession"));
  assert.equal((await floe.exportSession("guarded", { store })).length, 1);
  await rm(path, { recursive: true });
  await floe.deleteSession("guarded", { store });
});

// Counts the calls floe-node.wasm makes to Node's fs (Go's file system
// calls go through globalThis.fs, node:fs itself) while fn runs.
async function countFS(fn) {
  const counts = {};
  const saved = {};
  for (const name of ["lstat", "stat", "fstat", "readdir", "open"]) {
    saved[name] = nodeFS[name];
    nodeFS[name] = function (...args) {
      counts[name] = (counts[name] ?? 0) + 1;
      return saved[name].apply(this, args);
    };
  }
  try {
    await fn();
  } finally {
    Object.assign(nodeFS, saved);
  }
  return counts;
}

test("{dir}: listSessions reads the directory once, not once per session; a new session's first write stats no other session's file", async (t) => {
  assert.equal(globalThis.fs, nodeFS, "Go's file system calls go through node:fs");
  const dir = await tempDir(t);
  const N = 30;
  const day = join(dir, "2026-01-02");
  await mkdir(day);
  for (let i = 0; i < N; i++) {
    const id = `many-${i}`;
    const m = { timestamp: "2026-01-02T03:04:05.000Z", type: "session_meta", payload: meta(id) };
    const p = { timestamp: "2026-01-02T03:04:05.000Z", type: "model_msg", payload: { type: "text", role: "user", text: `prompt ${i}`, stop_reason: "completed" } };
    await writeFile(join(day, `${id}_001.jsonl`), JSON.stringify(m) + "\n" + JSON.stringify(p) + "\n");
  }
  let list;
  const listing = await countFS(async () => (list = await floe.listSessions({ store: { dir } })));
  assert.equal(list.length, N);
  assert.deepEqual(new Set(list.map((s) => s.firstPrompt)).size, N);
  assert.ok((listing.readdir ?? 0) <= 2, `readdir ${JSON.stringify(listing)}`);
  // Each session: a stat of its file in the scan, then its file read (a
  // stat and the reads' own); a scan of them all per session was 2N².
  const stats = (listing.lstat ?? 0) + (listing.stat ?? 0) + (listing.fstat ?? 0);
  assert.ok(stats <= 5 * N, `${stats} stats for ${N} sessions: ${JSON.stringify(listing)}`);

  const writing = await countFS(async () => {
    const s = floe.createSession({ meta: meta("new-one"), llm: scriptedLLM(say("hi")), store: { dir } });
    await collect(s.run("hello"));
    await s.close();
  });
  const wstats = (writing.lstat ?? 0) + (writing.stat ?? 0) + (writing.fstat ?? 0);
  assert.ok(wstats < N, `${wstats} stats for a new session's writes: ${JSON.stringify(writing)}`);
  assert.ok((await floe.listSessions({ store: { dir } })).some((s) => s.id === "new-one"));
});

test("{dir}: the directory removed while a session is open: its next run says so and writes no Trace without its session_meta", async (t) => {
  const dir = await tempDir(t);
  const store = { dir };
  const diags = [];
  const s = floe.createSession({ meta: meta("removed"), llm: scriptedLLM(say("one"), say("two")), store, onDiagnostic: (d) => diags.push(d) });
  await collect(s.run("first"));
  await rm(dir, { recursive: true, force: true }); // rm -rf of the store, a temp cleaner
  const msgs = await collect(s.run("second"));
  await s.close();
  assert.equal(find(msgs, "text").at(-1).payload.text, "two", "the run goes on");
  assert.ok(diags.length > 0 && diags.every((d) => d.kind === "trace" && /append "removed" file 1: not found: the file was removed while the session was open/.test(d.message)), JSON.stringify(diags));
  // A file of the second run's records alone was listed and never resumed.
  assert.deepEqual(await floe.listSessions({ store }), []);
  await rejects(floe.resumeSession("removed", { llm: scriptedLLM(say("x")), store }), "not_found");
});

test("{dir}: a lock file whose write fails (a full disk) refuses the run, naming it and the error, and is not left behind empty, refusing every later run", async (t) => {
  const dir = await tempDir(t);
  const store = { dir };
  const model = scriptedLLM(say("two"));
  const s = floe.createSession({ meta: meta("full"), llm: model, store });
  const { openSync, writeSync, closeSync } = nodeFS;
  let failed = 0;
  const lockFds = new Set();
  nodeFS.openSync = function (path, ...rest) {
    const fd = openSync.call(this, path, ...rest);
    if (String(path).endsWith(".full.lock")) lockFds.add(fd);
    return fd;
  };
  nodeFS.writeSync = function (fd, ...rest) {
    if (lockFds.has(fd) && failed++ === 0) throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    return writeSync.call(this, fd, ...rest);
  };
  t.after(() => Object.assign(nodeFS, { openSync, writeSync, closeSync }));
  assert.throws(() => s.run("first"), (e) => e.code === "storage" && e.message === `run: session "full": its lock file ${lockFile(dir, "full")} cannot be written: ENOSPC: no space left on device, write`);
  assert.equal(failed, 1, "the lock's write failed once");
  assert.equal(model.calls.length, 0);
  assert.equal(nodeFS.existsSync(lockFile(dir, "full")), false, "no empty lock file left");
  const msgs = await collect(s.run("second")); // the disk has room again
  assert.equal(find(msgs, "text").at(-1).payload.text, "two");
  await s.close();
});

// A run ends in the engine, then its stream ends once its records are
// written: a run() made between the two (a send button clicked while the
// last write is on disk) is accepted. The first run's end let the
// session's lock go under it: its lock file was removed and a resume in
// this program (or a run in another process) wrote the Trace beside it.
test("{dir}: a run accepted while the run before it still writes its records holds the session's lock until it ends too", async (t) => {
  const dir = await tempDir(t);
  const out = await runBesideLastWrite(t, dir, "overlap");
  assert.deepEqual(out, { firstEnded: true, lockFileDuring: true, resumeDuring: "session_busy", text: "two", lockFileAfter: false });
  const resumed = await floe.resumeSession("overlap", { llm: scriptedLLM(say("three")), store: { dir } });
  await resumed.close();
});

// Two processes started at once after a crash both find the dead
// process's lock: the first takes it over (its own file in its place)
// between the second's read of the stale file and its removal of it. The
// second removed the first's fresh file then, and both ran the session.
test("{dir}: a stale lock taken over by another process while this one judged it is not removed: this run is refused", async (t) => {
  const dir = await tempDir(t);
  const store = { dir };
  const id = "race";
  const dead = spawnSync(process.execPath, ["-e", ""]).pid; // ended: its pid runs no process
  const staleText = JSON.stringify({ pid: dead, host: hostname(), token: "dead" }) + "\n";
  const fresh = JSON.stringify({ pid: process.ppid, host: hostname(), token: "other" }) + "\n";
  const path = lockFile(dir, id);
  await mkdir(dir, { recursive: true });
  await writeFile(path, staleText);
  const { readFileSync } = nodeFS;
  let raced = false;
  nodeFS.readFileSync = function (p, ...rest) {
    const out = readFileSync.call(this, p, ...rest);
    if (String(p) === path && !raced) {
      raced = true; // the other process, now: removes the stale file, makes its own
      nodeFS.unlinkSync(path);
      nodeFS.writeFileSync(path, fresh, { flag: "wx" });
    }
    return out;
  };
  t.after(() => (nodeFS.readFileSync = readFileSync));
  const s = floe.createSession({ meta: meta(id), llm: scriptedLLM(say("x")), store });
  assert.throws(() => s.run("hello"), (e) => e.code === "session_busy" && new RegExp(`pid ${process.ppid} on`).test(e.message));
  assert.ok(raced);
  assert.equal(nodeFS.readFileSync(path, "utf8"), fresh, "the other process's lock file is still there");
  await s.close();
});

// A holder stopped (Ctrl-Z, a debugger) for longer than ten beats is taken
// for gone, and another process takes its lock and writes. Resumed, this
// one writes before its beat runs again: that write finds the beat late,
// reads the lock file, and is refused, as is every later write of the
// session (a trace diagnostic says so once); the session object's next
// run is refused, and a resume goes on from the Trace.
test("{dir}: a holder whose lock another process took while it was stopped writes no more, says so, and refuses its next run", async (t) => {
  const dir = await tempDir(t);
  const store = { dir };
  const id = "stopped";
  const path = lockFile(dir, id);
  const { nodeHooks } = await import("../../static/internal.mjs");
  let now = 0; // the holder's clock, in ms
  nodeHooks.lockNow = () => now;
  t.after(() => (nodeHooks.lockNow = undefined));
  let open;
  const gate = new Promise((r) => (open = r));
  const llm = { async *streamGenerate() { await gate; yield { type: "model_msg", payload: { type: "text", role: "assistant", text: "after the stop", stop_reason: "completed" } }; return { status: "completed" }; } };
  const diags = [];
  const s = floe.createSession({ meta: meta(id), llm, store, onDiagnostic: (d) => diags.push(d) });
  const run = collect(s.run("before the stop"));
  await stored(id, store, "model_msg");
  const [{ name }] = await floe.exportSession(id, { store });
  const before = (await floe.exportSession(id, { store }))[0].text;

  now += 6 * 60_000; // stopped for six minutes: another process took the lock and wrote
  const theirs = JSON.stringify({ pid: 4242, host: "elsewhere", token: "k2j4x0lq8mbz1", beat: 30 }) + "\n";
  nodeFS.unlinkSync(path);
  await writeFile(path, theirs);
  const traceFile = nodeFS.readdirSync(dir, { recursive: true }).find((f) => f.endsWith(name));
  const their = JSON.stringify({ timestamp: "2026-01-02T03:04:05.000Z", type: "model_msg", payload: { type: "text", role: "user", text: "from the other process", stop_reason: "completed" } }) + "\n";
  nodeFS.appendFileSync(join(dir, traceFile), their);
  open();
  const msgs = await run;
  assert.equal(find(msgs, "text").at(-1).payload.text, "after the stop", "the run itself goes on");

  const lost = diags.filter((d) => d.kind === "trace");
  assert.equal(lost.length, 1, JSON.stringify(diags));
  assert.match(lost[0].message, /"stopped".*another process took its lock \(pid 4242 on elsewhere holds its lock file .*\.stopped\.lock\).*resume the session/);
  assert.equal(nodeFS.readFileSync(join(dir, traceFile), "utf8"), before + their, "nothing of this process's written after the other's");
  assert.equal(nodeFS.readFileSync(path, "utf8"), theirs, "the other process's lock file is left");

  nodeFS.unlinkSync(path); // the other process is done
  assert.throws(() => s.run("again"), (e) => e.code === "session_busy" && /another process took its lock \(pid 4242 on elsewhere/.test(e.message));
  await s.close();
  assert.equal(nodeFS.readFileSync(join(dir, traceFile), "utf8"), before + their, "close wrote nothing more");
  const again = await floe.resumeSession(id, { llm: scriptedLLM(say("resumed")), store });
  await collect(again.run("after the resume"));
  await again.close();
  assert.match(nodeFS.readFileSync(join(dir, traceFile), "utf8"), /from the other process.*\n.*after the resume/);
  assert.equal(nodeFS.existsSync(path), false);
});

test("the host name is read when a {dir} lock is first taken, not when floe-node.mjs is imported: Deno asks a permission for it (sys), and a program without {dir} stores was asked at its import", async () => {
  // A fresh process whose os.hostname counts its calls (the module's
  // named import sees the change through syncBuiltinESMExports).
  const entry = new URL("../../static/floe-node.mjs", import.meta.url).href;
  const dir = await mkdtemp(join(tmpdir(), "floe-host-"));
  try {
    const src = `
import { createRequire, syncBuiltinESMExports } from "node:module";
const os = createRequire(import.meta.url)("node:os");
const real = os.hostname;
let calls = 0;
os.hostname = () => (calls++, real());
syncBuiltinESMExports();
const { load } = await import(${JSON.stringify(entry)});
const floe = await load();
const said = [];
const llm = { async *streamGenerate() { yield { type: "model_msg", payload: { type: "text", role: "assistant", text: "hi", stop_reason: "completed" } }; } };
for await (const m of floe.createSession({ llm }).run("go"));
said.push(calls);
const s = floe.createSession({ llm, store: { dir: ${JSON.stringify(dir)} } });
for await (const m of s.run("go"));
for await (const m of s.run("again"));
await s.close();
said.push(calls);
console.log(JSON.stringify(said));`;
    const out = spawnSync(process.execPath, ["--input-type=module", "-e", src], { encoding: "utf8", timeout: 60_000 });
    assert.equal(out.status, 0, out.stderr);
    assert.deepEqual(JSON.parse(out.stdout), [0, 1], "calls of os.hostname: after a run without a {dir} store, after two runs of one");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("{dir}: two spellings of one directory are one store: a session deleted through one and created again through the other is dated anew, not written into the deleted one's date directory", async (t) => {
  const dir = await tempDir(t);
  const a = { dir };
  const b = { dir: `${dir}/./` };
  const id = "two spellings";
  const s = floe.createSession({ meta: meta(id), llm: scriptedLLM(say("hi")), store: a });
  await collect(s.run("hello"));
  await s.close();
  // The same session dated 2020: its store learns that date directory.
  const files = await floe.exportSession(id, { store: a });
  await floe.deleteSession(id, { store: a });
  await floe.importSession(files.map((f) => ({ name: f.name.replace(/^\d{4}/, "2020"), text: f.text.replace(/"timestamp":"\d{4}-\d\d-\d\d/g, '"timestamp":"2020-01-01') })), { store: a });
  assert.deepEqual(nodeFS.readdirSync(dir).filter((d) => d.startsWith("2020")).length, 1);
  await floe.deleteSession(id, { store: b });
  const again = floe.createSession({ meta: meta(id), llm: scriptedLLM(say("hi")), store: a });
  await collect(again.run("hello again"));
  await again.close();
  const dates = nodeFS.readdirSync(dir).filter((d) => /^\d{4}-/.test(d));
  assert.equal(dates.length, 1, dates.join(", "));
  assert.doesNotMatch(dates[0], /^2020/, "the new session went into the deleted one's date directory");
});
