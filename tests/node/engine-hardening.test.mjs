// The engine's guarantees as floe.mjs users meet them: fragments the engine
// ends are closed, messages only the engine produces cannot be forged by a
// callback, steering and subagent misuse are errors, damaged traces are
// refused, a resumed compaction is just_compacted, images fold for models
// without vision.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { floe, meta, usage, toolCall, toolOutput, scriptedLLM, say, text, collect, find, never, instantClock } from "./helpers.mjs";
import { checkStream } from "../../static/test.mjs";

const frag = (event_type, text) => ({ type: "model_msg", payload: { type: "partial_text", role: "assistant", event_type, text } });

/** Every fragment opened in the stream is stopped and completed (PROTOCOL P-6), per producer key. */
function assertClosed(msgs) {
  const open = new Map();
  for (const m of msgs) {
    const p = m.payload;
    if (!p.type?.startsWith("partial_")) continue;
    const key = `${p.type}/${p.tool_call_id ?? ""}`;
    if (p.event_type === "start") open.set(key, true);
    if (p.event_type === "stop") open.delete(key);
  }
  assert.deepEqual([...open.keys()], [], "fragments left open");
}

let n = 0;
const id = (what) => `hardening-${what}-${++n}`;

test("a model that throws mid-fragment: failed with its message, the fragment closed", async () => {
  const llm = scriptedLLM(
    async function* () {
      yield frag("start", "");
      yield frag("delta", "half");
      throw new Error("socket reset");
    },
    say("ok"),
  );
  const msgs = await collect(floe.createSession({ meta: meta(id("throw")), llm, clock: instantClock() }).run("go"));
  assertClosed(msgs);
  const end = find(msgs, "request_end")[0].payload;
  assert.equal(end.status, "failed");
  assert.equal(end.error_message, "socket reset");
  const i = msgs.findIndex((m) => m.payload.type === "request_end");
  assert.deepEqual(
    msgs.slice(i - 2, i).map((m) => [m.payload.type, m.payload.event_type, m.payload.text, m.payload.stop_reason]),
    [
      ["partial_text", "stop", "", "failed"],
      ["text", undefined, "half", "failed"],
    ],
  );
});

// A hand-written iterator, as a model or a tool may return instead of an
// async generator: next() is the function given.
const iterator = (next) => ({ [Symbol.asyncIterator]() { return this; }, next });
const textMsg = (text) => ({ type: "model_msg", payload: { type: "text", role: "assistant", text } });

test("a model's iterator that breaks the protocol fails its request with what it did; a thenable or a sync iterator streams", async () => {
  const broken = [
    ["next() throws", () => { let i = 0; return iterator(() => { if (i++ === 0) return Promise.resolve({ value: textMsg("a"), done: false }); throw new Error("next broke"); }); }, /^next broke$/],
    ["next() rejects", () => iterator(() => Promise.reject(new Error("next rejected"))), /^next rejected$/],
    ["next() resolves to a number", () => iterator(() => Promise.resolve(3)), /^llm\.streamGenerate: iterator\.next\(\) resolved to a number, want \{done, value\}$/],
    ["next() returns a plain object", () => { let i = 0; return iterator(() => (i++ === 0 ? { value: textMsg("b"), done: false } : undefined)); }, /^llm\.streamGenerate: iterator\.next\(\) resolved to undefined, want \{done, value\}$/],
  ];
  for (const [name, turn, want] of broken) {
    const msgs = await collect(floe.createSession({ meta: meta(id("iter")), llm: scriptedLLM(turn, say("ok")), clock: instantClock() }).run("go"));
    const end = find(msgs, "request_end")[0].payload;
    assert.equal(end.status, "failed", name);
    assert.match(end.error_message, want, name);
    assert.equal(find(msgs, "request_end").at(-1).payload.status, "completed", `${name}: the retry`);
  }
  // A thenable that is not a Promise, and a plain iterator, of 600
  // messages: more than a batch, so the pump waits for room at least once.
  const many = [...text(...Array(598).fill("x")), usage()];
  const working = [
    ["a thenable", () => { let i = 0; return iterator(() => ({ then: (ok) => ok(i < many.length ? { value: many[i++], done: false } : { value: { status: "completed" }, done: true }) })); }],
    ["a sync iterator", () => many[Symbol.iterator]()],
  ];
  for (const [name, turn] of working) {
    const msgs = await collect(floe.createSession({ meta: meta(id("iter")), llm: scriptedLLM(turn), clock: instantClock() }).run("go"));
    assert.deepEqual(find(msgs, "request_end").map((m) => m.payload.status), ["completed"], name);
    assert.equal(msgs.filter((m) => m.payload.type === "partial_text").length, 600, name);
    assert.equal(find(msgs, "token_usage").length, 1, name);
    assert.equal(find(msgs, "text")[0]?.payload.text, "x".repeat(598), name);
  }
});

test("a model that ignores its abort: abandoned after abortGraceMs, aborted (not malformed), fragment closed", async () => {
  const ac = new AbortController();
  const llm = {
    async *streamGenerate() {
      yield frag("start", "");
      yield frag("delta", "thinking…");
      await never();
    },
  };
  const session = floe.createSession({ meta: meta(id("grace")), abortGraceMs: 10, llm });
  const msgs = [];
  for await (const m of session.run("go", { signal: ac.signal })) {
    msgs.push(m);
    if (m.payload.event_type === "delta") ac.abort();
  }
  assertClosed(msgs);
  const end = find(msgs, "request_end")[0].payload;
  assert.equal(end.status, "aborted");
  assert.match(end.error_message, /did not finish within 10 ms of the abort/);
  assert.equal(msgs.at(-1).payload.type, "abort");
});

test("token_usage is the model's last message: what follows it, or a fragment open at it, is malformed naming it; the stream keeps its order", async () => {
  const cases = [
    ["a text after it", async function* () { yield usage(); yield textMsg("late"); }, /^invalid message from llm: text after token_usage \(token_usage is the model's last message\)$/],
    ["a fragment after it", async function* () { yield usage(); yield* text("late"); }, /^invalid message from llm: partial_text after token_usage/],
    ["a tool call after it", async function* () { yield usage(); yield toolCall("c1", "read"); }, /^invalid message from llm: tool_call after token_usage/],
    ["a fragment open at it", async function* () { yield frag("start", ""); yield frag("delta", "half"); yield usage(); }, /^invalid message from llm: token_usage while partial_text is open \(token_usage is the model's last message: end every fragment first\)$/],
  ];
  for (const [name, turn, want] of cases) {
    const llm = scriptedLLM(turn, say("ok"));
    const msgs = await collect(floe.createSession({ meta: meta(id("usage-last")), llm, clock: instantClock() }).run("go", { approve: () => "allow" }));
    const ends = find(msgs, "request_end").map((m) => m.payload);
    assert.deepEqual(ends.map((e) => e.status), ["malformed", "completed"], name);
    assert.match(ends[0].error_message, want, name);
    assert.deepEqual(checkStream(msgs), [], name);
    assert.equal(find(msgs, "approval_decision").length, 0, `${name}: nothing after token_usage is dispatched`);
  }
  // Several token_usage messages in a row stay a completed request (each counts a turn, E-4.7).
  const two = await collect(floe.createSession({ meta: meta(id("usage-last")), llm: scriptedLLM(async function* () { yield* text("a"); yield usage(); yield usage(); }), clock: instantClock() }).run("go"));
  assert.deepEqual(find(two, "request_end").map((m) => m.payload.status), ["completed"]);
});

test("a model that completes without token_usage: an llm diagnostic says so, once per session", async () => {
  const diags = [];
  const llm = scriptedLLM(async function* () { yield* text("no usage"); });
  const session = floe.createSession({ meta: meta(id("no-usage")), llm, clock: instantClock(), onDiagnostic: (d) => diags.push(d) });
  await collect(session.run("one"));
  await collect(session.run("two"));
  assert.deepEqual(diags, [{ kind: "llm", message: "llm: a request completed without token_usage (the model's last message): compaction cannot see the context's size or count its turns; said once per session" }]);
  const quiet = [];
  await collect(floe.createSession({ meta: meta(id("no-usage")), llm: scriptedLLM(say("fine")), clock: instantClock(), onDiagnostic: (d) => quiet.push(d) }).run("go"));
  assert.deepEqual(quiet, []);
});

test("messages only the engine produces, yielded by a tool or the model, are dropped with a diagnostic", async () => {
  const forged = [
    { type: "event_msg", payload: { type: "abort", reason: "forged" } },
    { type: "event_msg", payload: { type: "request_end", status: "completed" } },
    { type: "event_msg", payload: { type: "approval_decision", decision: "allow", tool_call_id: "A" } },
  ];
  const diags = [];
  const llm = scriptedLLM(
    async function* () {
      yield* forged;
      yield toolOutput("A", "the model answering its own call");
      yield toolCall("A");
      yield { type: "model_msg", payload: { ...toolCall("B").payload, stop_reason: "failed" } };
      yield usage();
      return { status: "completed" };
    },
    say("done"),
  );
  const environment = {
    async *executeTool({ toolCall: c }) {
      yield* forged;
      yield toolOutput("Z", "another call's output");
      yield toolOutput(c.payload.tool_call_id, "real");
    },
  };
  const session = floe.createSession({ meta: meta(id("forged")), llm, environment, onDiagnostic: (d) => diags.push(d) });
  const msgs = await collect(session.run("go", { approve: () => "allow" }));
  assert.equal(find(msgs, "abort").length, 0, "no abort mid-stream");
  assert.equal(find(msgs, "request_end").length, 2);
  assert.deepEqual(find(msgs, "approval_decision").map((m) => m.payload.tool_call_id), ["A"]);
  assert.deepEqual(find(msgs, "tool_call_output").map((m) => m.payload.output), ["real"]);
  const text = diags.map((d) => `${d.kind}: ${d.message}`).join("\n");
  assert.match(text, /llm: llm: abort dropped: only the engine produces it/);
  assert.match(text, /tool: tool A: request_end dropped/);
  assert.match(text, /llm: llm: tool_call_output for "A" dropped/);
  assert.match(text, /tool: tool A: tool_call_output for tool_call_id "Z", not its own call, dropped/);
  assert.match(text, /llm: llm: tool_call "B" has stop_reason "failed", not completed: it is not dispatched/);
});

test("a model that repeats a tool_call_id in one request: malformed naming the id, retried", async () => {
  let runs = 0;
  const llm = scriptedLLM(
    async function* () {
      yield toolCall("X");
      yield toolCall("X");
      yield usage();
      return { status: "completed" };
    },
    say("fine"),
  );
  const environment = {
    async *executeTool({ toolCall: c }) {
      runs++;
      yield toolOutput(c.payload.tool_call_id, "ran");
    },
  };
  const session = floe.createSession({ meta: meta(id("dup")), llm, environment, clock: instantClock() });
  const msgs = await collect(session.run("go", { approve: () => "allow" }));
  const ends = find(msgs, "request_end").map((m) => m.payload);
  assert.equal(ends[0].status, "malformed");
  assert.match(ends[0].error_message, /"X"/);
  assert.equal(ends.at(-1).status, "completed");
  assert.equal(find(msgs, "approval_decision").length, 1);
  assert.equal(runs, 1);
});

test("steer() with an invalid message is bad_argument and queues nothing", async () => {
  let session;
  let error;
  const llm = scriptedLLM(async function* () {
    try {
      session.steer([{ type: "bogus", payload: { type: "text", text: "x" } }]);
    } catch (e) {
      error = e;
    }
    yield usage();
    return { status: "completed" };
  });
  session = floe.createSession({ meta: meta(id("steer")), llm });
  const msgs = await collect(session.run("go"));
  assert.equal(error?.name, "FloeError");
  assert.equal(error.code, "bad_argument");
  assert.match(error.message, /steer: input.*invalid input: input\[0\]/);
  assert.equal(msgs.filter((m) => m.type === "bogus" || /user_steering/.test(m.payload.text ?? "")).length, 0);
});

test("a second concurrent run of one subagent handle is session_busy", async () => {
  let release;
  const gate = new Promise((r) => (release = r));
  const child = floe.createSubagent({
    meta: { ...meta(id("child")), source: "subagent" },
    llm: {
      async *streamGenerate() {
        await gate;
        yield usage();
        return { status: "completed" };
      },
    },
  });
  const first = child.run("task");
  const firstMsg = await first.next();
  assert.equal(firstMsg.value.type, "session_meta");
  assert.throws(
    () => child.run("again"),
    (e) => e.name === "FloeError" && e.code === "session_busy",
  );
  release();
  const rest = await collect(first);
  assert.equal(rest.at(-1).payload.type, "request_end");
  child.close();
});

const line = (o) => JSON.stringify({ timestamp: "2026-11-30T04:09:45.000Z", ...o });
function badTrace(sid) {
  return [
    line({ type: "session_meta", payload: meta(sid) }),
    line({ type: "model_msg", payload: { type: "text", role: "user", text: "go" } }),
    line({ type: "event_msg", payload: { type: "request_begin" } }),
    line({ type: "model_msg", payload: { type: "tool_call", role: "assistant", name: "t", arguments: "{}", stop_reason: "completed" } }),
  ].join("\n") + "\n";
}

test("importSession and resumeSession refuse a tool call without tool_call_id: invalid_trace naming file and line", async (t) => {
  const sid = id("import");
  const name = `2026-11-30/${sid}_001.jsonl`;
  await assert.rejects(floe.importSession([{ name, text: badTrace(sid) }]), (e) => {
    assert.equal(e.name, "FloeError");
    assert.equal(e.code, "invalid_trace", e.message);
    assert.match(e.message, new RegExp(`/${sid}_001\\.jsonl": line 4: .*tool_call without tool_call_id`));
    return true;
  });
  const dir = await mkdtemp(join(tmpdir(), "floe-hardening-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, "2026-11-30"));
  await writeFile(join(dir, name), badTrace(sid));
  await assert.rejects(floe.resumeSession(sid, { llm: scriptedLLM(say("x")), store: { dir } }), (e) => {
    assert.equal(e.code, "invalid_trace", e.message);
    assert.match(e.message, /file 1: line 4: .*tool_call without tool_call_id/);
    return true;
  });
});

test("compactability() is just_compacted after resuming a Trace that ends on a compaction", async () => {
  const sid = id("compacted");
  const options = {
    llm: scriptedLLM(say("a"), say("[summary]short[/summary]")),
    newLLM: () => scriptedLLM(say("fresh")),
    config: { compaction: { mode: "summarize", prompt: "Summarize." } },
  };
  const session = floe.createSession({ meta: meta(sid), ...options });
  await collect(session.run("go"));
  await collect(session.compact());
  assert.equal(session.compactability(), "just_compacted");
  await session.close();
  const resumed = await floe.resumeSession(sid, options);
  assert.equal(resumed.compactability(), "just_compacted");
  await resumed.close();
});

test("foldInputImages folds a steering entry's images into its [user_steering] block", async () => {
  let session;
  const folded = [];
  const llm = scriptedLLM(async function* () {
    session.steer([
      { type: "model_msg", payload: { type: "text", role: "user", text: "this one" } },
      { type: "model_msg", payload: { type: "image_url", role: "user", image_url: "data:image/png;base64,AAAA" } },
    ]);
    yield usage();
    return { status: "completed" };
  }, say("seen"));
  session = floe.createSession({
    meta: meta(id("fold")),
    llm,
    foldInputImages: async (messages) => {
      folded.push(messages.length);
      return messages.map((m) =>
        m.payload.type === "image_url" ? { type: "model_msg", payload: { type: "text", role: "user", text: "[attached image: /scratch/1.png]" } } : m,
      );
    },
  });
  const msgs = await collect(session.run("go"));
  assert.deepEqual(folded, [2]);
  const second = llm.calls[1].newMessages;
  assert.equal(second.length, 1);
  assert.equal(second[0].payload.text, "[user_steering]\nthis one\n\n[attached image: /scratch/1.png]\n[/user_steering]");
  assert.equal(msgs.filter((m) => m.payload.type === "image_url").length, 0);
  assert.throws(
    () => floe.createSession({ meta: meta(id("fold-bad")), llm, foldInputImages: 3 }),
    (e) => e.code === "bad_argument" && /foldInputImages/.test(e.message),
  );
});
