// Coming from PenguinHarness: the README section's example, run as written
// on a copy of a traces directory the reference wrote (shared/interop 06:
// a summarize compaction closed file 001, file 002 goes on), and what a
// reference user's callbacks meet in Floe.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { floe, collect } from "./helpers.mjs";

const shared = process.env.FLOE_SHARED ?? new URL("../../../shared", import.meta.url).pathname;
const interop = join(shared, "interop");
const readme = await readFile(new URL("../../README.md", import.meta.url), "utf8");
const section = readme.slice(readme.indexOf("## Coming from PenguinHarness"));
const example = section.match(/```js\n([\s\S]*?)```/)[1];
const MODEL = /floe\.openai\(\{[^)]*\}\)/;
const strip = ({ timestamp, ...m }) => m;

test("README Coming from PenguinHarness: the example resumes a reference traces directory and appends what the reference did", async (t) => {
  const fix = JSON.parse(await readFile(join(interop, "06_compaction_summarize.resume.json"), "utf8"));
  const base = await mkdtemp(join(tmpdir(), "floe-migration-"));
  t.after(() => rm(base, { recursive: true, force: true }));
  const traces = join(base, "traces");
  await mkdir(join(traces, "2026-11-30"), { recursive: true });
  const before = [];
  for (const [k, f] of fix.files.entries()) {
    const text = await readFile(join(interop, f), "utf8");
    before.push(text);
    await writeFile(join(traces, "2026-11-30", `${fix.session_id}_${String(k + 1).padStart(3, "0")}.jsonl`), text);
  }
  // What the example leaves to its reader; the model, a recording one in
  // place of floe.openai(...), answers as the reference's follow-up run's.
  const entry = JSON.stringify(new URL("../../static/floe-node.mjs", import.meta.url).href);
  const preamble = `import { load } from ${entry};
const floe = await load();
export const loaded = [], rendered = [], requests = [];
const model = {
  loadHistory(h) { loaded.push(...h); },
  async *streamGenerate({ newMessages }) {
    requests.push(newMessages);
    yield floe.msg.text("Resumed.");
    const request = { cache_read: 0, cache_write: 0, output: 3, total: 10 };
    const s = ${JSON.stringify(fix.next_run.llm_session_tokens)};
    yield floe.msg.tokenUsage({ cache_read: s.cache_read, cache_write: s.cache_write, output: s.output + 3, total: s.total + 10 }, request);
  },
};
const tools = ${JSON.stringify(fix.next_run.stream[0].payload.tools)}.map((d) => floe.tool({ ...d, execute: () => "unused" }));
const approve = () => "allow";
const render = (m) => rendered.push(m);
`;
  assert.match(example, MODEL);
  const code = preamble + example.replace('"./traces"', JSON.stringify(traces)).replace(MODEL, "model");
  await writeFile(join(base, "example.mjs"), code);
  const ex = await import(join(base, "example.mjs"));
  assert.deepEqual(ex.loaded.map(strip), fix.history.map(strip), "the history handed to loadHistory");
  assert.deepEqual(ex.requests[0].map(strip), fix.next_run.first_request.map(strip), "the first request");
  assert.deepEqual(ex.rendered.map(strip), fix.next_run.stream.map(strip), "the stream");
  // The files: the same two, file 002 gained the reference's records, each
  // a line the reference's reader parses (JSON, "\n" ended).
  assert.deepEqual(await readdir(join(traces, "2026-11-30")), ["sess-06_001.jsonl", "sess-06_002.jsonl"]);
  const after = await Promise.all([1, 2].map((k) => readFile(join(traces, "2026-11-30", `sess-06_00${k}.jsonl`), "utf8")));
  assert.equal(after[0], before[0], "file 001 untouched");
  assert.ok(after[1].startsWith(before[1]) && after[1].endsWith("\n"));
  const added = after[1].slice(before[1].length).split("\n").slice(0, -1).map((l) => strip(JSON.parse(l)));
  assert.deepEqual(fix.resume_writes, []);
  assert.deepEqual(added, fix.next_run.trace_appended[0].records.map(strip));
});

const u = { cache_read: 0, cache_write: 0, output: 1, total: 2 };
const answer = { async *streamGenerate() { yield floe.msg.text("ok"); yield floe.msg.tokenUsage(u, u); } };

// The reference's Environment lists its own tools; Floe announces the
// tools option only: such an environment given alone ran nothing, the
// model told of no tool, and nothing said why.
test("an environment with listTools and no tools option is bad_argument naming it", async () => {
  const environment = {
    async listTools() { return [{ name: "read_file", description: "Read a file", parameters: { type: "object" } }]; },
    async *executeTool({ toolCall }) { yield floe.msg.toolOutput(toolCall.payload.tool_call_id, "x"); },
  };
  const want = (fn) => ({ name: "FloeError", code: "bad_argument", message: `${fn}: environment.listTools: not called (the tools a session announces are its tools option): give tools: await environment.listTools()` });
  assert.throws(() => floe.createSession({ llm: answer, environment, store: false }), want("createSession"));
  assert.throws(() => floe.createSubagent({ llm: answer, environment, store: false }), want("createSubagent"));
  const s = floe.createSession({ llm: answer, store: "memory" });
  await collect(s.run("hi"));
  await s.close();
  await assert.rejects(floe.resumeSession(s.id, { llm: answer, environment, store: "memory" }), want("resumeSession"));
  // With its tools given, it runs them.
  const tools = await environment.listTools();
  let turn = 0;
  const llm = {
    async *streamGenerate() {
      yield turn++ === 0 ? floe.msg.toolCall("c1", "read_file", "{}") : floe.msg.text("done");
      yield floe.msg.tokenUsage(u, u);
    },
  };
  const msgs = await collect(floe.createSession({ llm, environment, tools, store: false }).run("go", { approve: () => "allow" }));
  assert.deepEqual(msgs.filter((m) => m.payload.type === "tool_call_output").map((m) => m.payload.output), ["x"]);
});

// A model without loadHistory (the reference's models take their history
// when they are made) resumed with a history answered without it, and
// nothing said so.
test("a resumed session whose model has no loadHistory says the history was not handed to it", async () => {
  const s = floe.createSession({ llm: answer, store: "memory" });
  await collect(s.run("remember 42"));
  await s.close();
  for (const withLoader of [false, true]) {
    const diags = [];
    const llm = withLoader ? { ...answer, loadHistory() {} } : answer;
    const r = await floe.resumeSession(s.id, { llm, store: "memory", onDiagnostic: (d) => diags.push(d) });
    await collect(r.run("what was it?"));
    await r.close();
    const llmDiags = diags.filter((d) => d.kind === "llm").map((d) => d.message);
    if (withLoader) assert.deepEqual(llmDiags, []);
    else assert.deepEqual(llmDiags, ["llm: the resumed history (2 messages) is not handed to the model: it has no LoadHistory (loadHistory in JavaScript); it continues without it"]);
  }
});
