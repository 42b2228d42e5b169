// floe.readSession: a stored session's records, its subagents' inlined,
// as its runs showed them, to render it again after a reload.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { floe, collect } from "./helpers.mjs";
import { msg, tool, transcript } from "../../static/floe-node.mjs";
import { mockModel } from "../../static/test.mjs";

async function tempDir(t) {
  const dir = await mkdtemp(join(tmpdir(), "floe-read-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const records = (files) => files.flatMap((f) => f.text.split("\n").filter(Boolean).map((l) => JSON.parse(l)));

/** What a page renders of a transcript: its turns, state and subagents, as plain data. */
function view(t) {
  const subagents = {};
  for (const [id, sub] of t.subagents) subagents[id] = view(sub);
  return JSON.parse(JSON.stringify({ turns: t.turns, status: t.status, usage: t.usage, meta: t.meta, subagents }));
}

const search = tool({
  name: "search",
  description: "Searches the notes",
  parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
  execute: ({ q }) => `3 notes mention ${q}`,
});

test("readSession gives a stored session's records, which a transcript renders as the runs did", async (t) => {
  const store = { dir: await tempDir(t) };
  const research = floe.subagentTool({ name: "research", create: () => ({ llm: mockModel([{ toolCall: { name: "search", args: { q: "otters" } } }, "Otters hold hands."]), tools: [search], store }) });
  const llm = mockModel([
    { toolCall: { name: "search", args: { q: "rivers" } } },
    "Two runs of notes.",
    { toolCall: { name: "research", args: { prompt: "Find otter facts." } } },
    "They hold hands.",
  ]);
  const session = floe.createSession({ llm, tools: [search, research], store });
  const live = transcript();
  for (const prompt of ["What about rivers?", "And otters?"]) {
    live.push(msg.userText(prompt)); // a run does not yield its prompt: the page shows it
    for await (const m of session.run(prompt, { approve: () => "allow" })) live.push(m);
  }
  live.end();
  await session.close();

  const stored = await floe.readSession(session.id, { store });
  // The session's own records are its Trace, as exported.
  const own = (files) => records(files.filter((f) => f.name.includes(session.id)));
  assert.deepEqual(stored.filter((m) => !m.origin), own(await floe.exportSession(session.id, { store })));
  // The child's follow the pointer that names it, origin prepended.
  const at = stored.findIndex((m) => m.payload.type === "subagent");
  const childId = stored[at].payload.session_id;
  const child = records(await floe.exportSession(childId, { store }));
  assert.deepEqual(stored.slice(at + 1, at + 1 + child.length), child.map((m) => ({ ...m, origin: [childId, ...(m.origin ?? [])] })));
  assert.equal(stored.length, records(await floe.exportSession(session.id, { store })).length, "the export holds the child's files too");

  // The list tells the child from its parent.
  const listed = Object.fromEntries((await floe.listSessions({ store })).map((x) => [x.id, x.source]));
  assert.deepEqual(listed, { [session.id]: null, [childId]: "subagent" });

  // Exported with its child, imported elsewhere, it reads back the same;
  // deleted, the child goes with it.
  const files = await floe.exportSession(session.id, { store });
  assert.deepEqual(files.map((f) => f.name.split("/")[1]), [`${session.id}_001.jsonl`, `${childId}_001.jsonl`]);
  const elsewhere = { dir: await tempDir(t) };
  assert.equal(await floe.importSession(files, { store: elsewhere }), session.id);
  assert.deepEqual(await floe.readSession(session.id, { store: elsewhere }), stored);
  await floe.deleteSession(session.id, { store: elsewhere });
  assert.deepEqual(await floe.listSessions({ store: elsewhere }), [], "the child was deleted with its parent");

  const again = transcript();
  for (const m of stored) again.push(m);
  again.end();
  assert.deepEqual({ ...view(again), meta: null }, view(live), "the live stream has no session_meta of its own");
  assert.equal(again.meta.session_id, session.id);
  assert.deepEqual(again.card(stored.find((m) => m.payload.type === "tool_call" && m.origin)?.payload.tool_call_id, [childId])?.output, "3 notes mention otters");
});

test("readSession reads every file of a compacted session, leaves out a torn last line, and says what is missing", async (t) => {
  const store = { dir: await tempDir(t) };
  const llm = mockModel(["first answer", "[summary]They said one.[/summary]"]);
  const config = { compaction: { mode: "summarize", prompt: "Summarize." } };
  const session = floe.createSession({ llm, newLLM: () => mockModel(["second answer"]), config, store });
  await collect(session.run("one"));
  await collect(session.compact());
  await collect(session.run("two"));
  await session.close();
  const files = await floe.exportSession(session.id, { store });
  assert.equal(files.length, 2, "compaction starts a second file");
  const all = await floe.readSession(session.id, { store });
  assert.deepEqual(all, records(files));
  assert.deepEqual(all.filter((m) => m.type === "session_meta").length, 2);

  // A crash cut the last record short: a resume leaves it out, and so does readSession.
  const day = (await readdir(store.dir)).find((d) => /^\d{4}-\d\d-\d\d$/.test(d));
  const last = join(store.dir, day, files[1].name.split("/")[1]);
  await writeFile(last, (await readFile(last, "utf8")) + '{"timestamp":"2026-12-06T07:00:00.000Z","type":"model_msg","payl');
  assert.deepEqual(await floe.readSession(session.id, { store }), all);

  await assert.rejects(floe.readSession("never-stored", { store }), (e) => e.name === "FloeError" && e.code === "not_found" && e.message.startsWith("readSession: "));
  await assert.rejects(floe.readSession(undefined), (e) => e.code === "bad_argument" && e.message.includes("readSession: id"));
});

test("readSession of the memory store (the default in Node) and of a session still open", async () => {
  const session = floe.createSession({ llm: mockModel(["hello", "again"]) });
  await collect(session.run("hi"));
  const first = await floe.readSession(session.id);
  assert.deepEqual(first.map((m) => m.payload.type ?? m.type), ["session_meta", "text", "request_begin", "text", "token_usage", "request_end"]);
  await collect(session.run("more"));
  const second = await floe.readSession(session.id);
  assert.deepEqual(second.slice(0, first.length), first, "a later read starts with what an earlier one gave");
  assert.equal(second.length, first.length + 5);
  await session.close();
  await floe.deleteSession(session.id);
});

test("a Trace made by hand whose subagent pointers name stored sessions is refused on import, and deleting, exporting or reading it reaches no session of the store's own", async (t) => {
  const store = { dir: await tempDir(t) };
  const mine = floe.createSession({ llm: mockModel(["my private answer"]), store });
  await collect(mine.run("my private question"));
  await mine.close();
  const [file] = await floe.exportSession(mine.id, { store });
  const hostile = file.text
    .split("\n")
    .filter(Boolean)
    .slice(0, 2)
    .map((l) => JSON.parse(l))
    .map((m) => (m.type === "session_meta" ? { ...m, payload: { ...m.payload, session_id: "hostile" } } : m));
  hostile.push({ timestamp: hostile[1].timestamp, type: "event_msg", payload: { type: "subagent", session_id: mine.id } });
  const text = hostile.map((m) => JSON.stringify(m)).join("\n") + "\n";
  await assert.rejects(floe.importSession(text, { store }), (e) => e.code === "invalid_trace" && e.message.includes(JSON.stringify(mine.id)));
  assert.deepEqual((await floe.listSessions({ store })).map((s) => s.id), [mine.id], "nothing was imported");

  // Stored all the same (an older build imported it): its pointer leads nowhere.
  await writeFile(join(store.dir, file.name.split("/")[0], "hostile_001.jsonl"), text);
  assert.equal((await floe.readSession("hostile", { store })).some((m) => m.origin), false, "another session's records shown as its subagent's");
  assert.deepEqual((await floe.exportSession("hostile", { store })).map((f) => f.name.split("/")[1]), ["hostile_001.jsonl"]);
  await floe.deleteSession("hostile", { store });
  assert.deepEqual((await floe.listSessions({ store })).map((s) => s.id), [mine.id], "deleting it deleted another session");
});

// A child session that does not read is left out, as exportSession and
// deleteSession leave it, and said on the console: readSession rejected
// whole, and the parent could not be shown at all.
test("readSession leaves out a subagent's session that does not read, and says so on the console", async (t) => {
  const store = { dir: await tempDir(t) };
  const research = floe.subagentTool({ name: "research", create: () => ({ llm: mockModel(["Otters hold hands."]), store }) });
  const session = floe.createSession({ llm: mockModel([{ toolCall: { name: "research", args: { prompt: "Otters?" } } }, "They hold hands."]), tools: [research], store });
  await collect(session.run("And otters?", { approve: () => "allow" }));
  await session.close();
  const [own, child] = await floe.exportSession(session.id, { store });
  const childId = child.name.split("/")[1].replace(/_001\.jsonl$/, "");
  // The child's file becomes one no read takes: larger than a Trace file
  // may be (sparse: it takes no room on the disk).
  await truncate(join(store.dir, child.name), 2 ** 30 + 1);
  const warned = [];
  const warn = console.warn;
  console.warn = (...a) => warned.push(a.join(" "));
  let stored;
  try {
    stored = await floe.readSession(session.id, { store });
  } finally {
    console.warn = warn;
  }
  assert.deepEqual(stored, records([own]), "the parent's records, the child's left out");
  assert.equal(warned.length, 1, JSON.stringify(warned));
  assert.match(warned[0], new RegExp(`^floe: storage: readSession: subagent session "${childId}" left out: `));
});

// A Trace a crash or a reload cut: the user's "Read a.md", then a request
// whose call A of read came whole; allowedA adds its approval and the
// request's end (the tool was running when it was cut).
const at = (i) => `2026-01-01T00:00:0${i}.000Z`;
const cutAtCall = [
  { timestamp: at(1), type: "model_msg", payload: { type: "text", role: "user", text: "Read a.md" } },
  { timestamp: at(2), type: "event_msg", payload: { type: "request_begin" } },
  { timestamp: at(3), type: "model_msg", payload: { type: "tool_call", role: "assistant", name: "read", arguments: "{}", tool_call_id: "A", stop_reason: "completed" } },
];
const allowedA = [
  { timestamp: at(4), type: "event_msg", payload: { type: "approval_decision", decision: "allow", tool_call_id: "A" } },
  { timestamp: at(5), type: "event_msg", payload: { type: "request_end", status: "completed" } },
];

/** Stores lines as session id's Trace in a { dir } store of its own; returns the store. */
async function storeCut(t, id, lines) {
  const store = { dir: await tempDir(t) };
  const meta = { timestamp: at(0), type: "session_meta", payload: { session_id: id, provider: "test", model_id: "m", model_context_window: 0, system_prompt: "", agent_state: "", workspace: "" } };
  await floe.importSession([{ name: `2026-01-01/${id}_001.jsonl`, text: [meta, ...lines].map((l) => JSON.stringify(l) + "\n").join("") }], { store });
  return store;
}

test("a Trace cut mid-request (a reload while an approval waited) renders that request aborted, not streaming and awaiting approval for ever", async (t) => {
  const id = "session-cut-at-approval";
  const store = await storeCut(t, id, cutAtCall);
  const stored = await floe.readSession(id, { store });
  const cut = (v) => ({ status: v.status, turn: v.turns[1].status, card: v.card("A").status, pending: v.pendingApprovals.length });

  // Read back and ended (what a page shows after a reload).
  const reloaded = transcript();
  for (const m of stored) reloaded.push(m);
  assert.deepEqual(cut(reloaded), { status: "running", turn: "streaming", card: "awaiting_approval", pending: 1 }, "as the run showed it when it was cut");
  reloaded.end();
  assert.deepEqual(cut(reloaded), { status: "aborted", turn: "aborted", card: "aborted", pending: 0 });

  // Read back, then the resumed session's next run in the same view.
  const resumed = await floe.resumeSession(id, { llm: mockModel(["Done."]), store });
  const v = transcript();
  for (const m of stored) v.push(m);
  v.push(msg.userText("again"));
  await v.consume(resumed.run("again"));
  assert.deepEqual(cut(v), { status: "done", turn: "aborted", card: "aborted", pending: 0 });
  assert.equal(v.turns.at(-1).status, "completed");
  await resumed.close();
});

test("a Trace cut while an allowed tool ran renders its card aborted at end(), not running for ever", () => {
  const lines = [...cutAtCall, ...allowedA];
  const v = transcript();
  for (const m of lines) v.push(m);
  assert.equal(v.card("A").status, "running", "as the run showed it when it was cut");
  v.end();
  assert.deepEqual([v.status, v.card("A").status], ["aborted", "aborted"]);
  // A stream that ends with its abort: a call it left running is aborted too.
  const w = transcript();
  for (const m of lines) w.push(m);
  w.push({ timestamp: at(6), type: "event_msg", payload: { type: "abort", reason: "aborted by user" } });
  assert.deepEqual([w.status, w.card("A").status], ["aborted", "aborted"]);
});

test("a Trace cut while an allowed tool ran, then resumed, renders the call aborted and the session's last run done", async (t) => {
  const id = "session-cut-at-tool";
  const store = await storeCut(t, id, [...cutAtCall, ...allowedA]);
  // The resumed session answers the call in its next request's input (a
  // placeholder it does not write): no output of A ever comes.
  const resumed = await floe.resumeSession(id, { llm: mockModel(["Done."]), store });
  const v = transcript();
  for (const m of await floe.readSession(id, { store })) v.push(m);
  v.push(msg.userText("again"));
  await v.consume(resumed.run("again"));
  await resumed.close();
  assert.deepEqual([v.status, v.card("A").status, v.turns.at(-1).status], ["done", "aborted", "completed"], "the live view of the resumed run");
  // Read back whole after the resumed run: the same.
  const w = transcript();
  for (const m of await floe.readSession(id, { store })) w.push(m);
  w.end();
  assert.deepEqual([w.status, w.card("A").status, w.turns.at(-1).status], ["done", "aborted", "completed"], "read back");
});
