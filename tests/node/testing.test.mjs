// The tests a user writes for an agent built on Floe, with floe/test and
// the public API only: a tool that fails, a denial, an abort mid-stream
// and while an approval waits, a steer, a subagent, a retry after a model
// error; and the README's floe/test example as written. Each assertion is
// a promise of the README or floe.d.ts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync, rmSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { floe, collect, find } from "./helpers.mjs";
import { tool, transcript, msg } from "../../static/floe-node.mjs";
import { mockModel, assertStream } from "../../static/test.mjs";

const approve = () => "allow";
const outputOf = (msgs, id) => find(msgs, "tool_call_output").find((m) => m.payload.tool_call_id === id && !m.origin)?.payload;

test("README floe/test: the example runs as written and does what its comments say", async () => {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const section = readme.slice(readme.indexOf("### Testing: `floe/test`"));
  const example = section.match(/```js\n([\s\S]*?)```/)[1];
  const entry = (f) => JSON.stringify(new URL(`../../static/${f}`, import.meta.url).href);
  // What the example leaves to its reader: floe, a read_file tool, an approver.
  const preamble = `import { load, tool } from ${entry("floe-node.mjs")};
const floe = await load();
const tools = [tool({ name: "read_file", execute: ({ path }) => "contents of " + path })];
const approve = () => "allow";
`;
  const code = preamble + example.replace(/from "@floehq\/floe\/test";/, `from ${entry("test.mjs")};`) + "\nexport { llm, messages };\n";
  const dir = mkdtempSync(join(tmpdir(), "floe-readme-test-"));
  let ex;
  try {
    writeFileSync(join(dir, "example.mjs"), code);
    ex = await import(join(dir, "example.mjs"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // Three requests: the call, the failure ("a reconnect follows"), the answer.
  assert.deepEqual(find(ex.messages, "request_end").map((m) => m.payload.status), ["completed", "failed", "completed"]);
  assert.equal(find(ex.messages, "request_end")[1].payload.error_message, "overloaded");
  assert.equal(outputOf(ex.messages, "call_1").output, "contents of a.md");
  assert.deepEqual(find(ex.messages, "thinking").map((m) => m.payload.thinking), ["The user wants a file."]);
  assert.deepEqual(find(ex.messages, "text").map((m) => m.payload.text), ["Reading it.", "Done."]);
  // llm.calls[1].newMessages: what the model was sent, the tool's output.
  assert.deepEqual(ex.llm.calls[1].newMessages.map((m) => m.payload.output), ["contents of a.md"]);
});

test("a tool that throws: [tool error] on a failed card, the run goes on and the model hears of it", async () => {
  const boom = tool({ name: "boom", execute: () => { throw new Error("disk full"); } });
  const llm = mockModel([{ toolCall: { name: "boom" } }, "Sorry."]);
  const view = transcript();
  const msgs = assertStream(await collect(floe.createSession({ llm, tools: [boom], store: false }).run("go", { approve })));
  msgs.forEach((m) => view.push(m));
  view.end();
  assert.deepEqual([view.card("call_1").status, view.card("call_1").output], ["failed", "[tool error] disk full"]);
  assert.equal(view.status, "done");
  assert.deepEqual(llm.calls[1].newMessages.map((m) => [m.payload.output, m.payload.stop_reason]), [["[tool error] disk full", "failed"]]);
});

test("a denial: the tool never runs, the card is denied, the model gets the denial", async () => {
  let ran = 0;
  const rm = tool({ name: "rm", execute: () => (ran++, "gone") });
  const llm = mockModel([{ toolCall: { name: "rm", id: "r" } }, "OK, I will not."]);
  const view = await transcript().consume(floe.createSession({ llm, tools: [rm], store: false }).run("go", { approve: async () => "deny" }));
  assert.equal(ran, 0);
  assert.deepEqual([view.card("r").status, view.card("r").decision], ["denied", "deny"]);
  assert.equal(llm.calls[1].newMessages[0].payload.tool_call_id, "r");
});

test("an abort mid-stream: request_end aborted, then abort last; the delay ends at once", async () => {
  const stop = new AbortController();
  const llm = mockModel([["Hello", { delay: 3_600_000 }, "never"]]);
  const msgs = [];
  for await (const m of floe.createSession({ llm, store: false }).run("go", { signal: stop.signal })) {
    msgs.push(m);
    if (m.payload.type === "text") stop.abort();
  }
  assertStream(msgs);
  assert.deepEqual(msgs.slice(-2).map((m) => [m.payload.type, m.payload.status ?? m.payload.reason]), [["request_end", "aborted"], ["abort", "aborted by user"]]);
  assert.deepEqual(find(msgs, "text").map((m) => m.payload.text), ["Hello"]);
});

test("transcript(): an abort while an approval waits leaves no pending approval; the undecided card is aborted", async () => {
  const stop = new AbortController();
  const llm = mockModel([[{ toolCall: { name: "rm", id: "a" } }, { toolCall: { name: "rm", id: "b" } }]]);
  const rm = tool({ name: "rm", execute: () => "gone" });
  const view = transcript();
  const asked = [];
  const run = floe.createSession({ llm, tools: [rm], store: false }).run("go", {
    signal: stop.signal,
    // The user answers "a", then presses Stop while "b" is asked.
    approve: (call) => (asked.push(call.payload.tool_call_id), call.payload.tool_call_id === "a" ? "allow" : (stop.abort(), new Promise(() => {}))),
  });
  await view.consume(run);
  assert.deepEqual(asked, ["a", "b"]);
  assert.equal(view.status, "aborted");
  assert.deepEqual(view.pendingApprovals, [], "an approval prompt stays up after the run aborted");
  assert.ok(["done", "aborted"].includes(view.card("a").status), "the allowed call ran (its output may come after the abort)");
  assert.deepEqual([view.card("b").status, view.card("b").decision], ["aborted", null]);
  // end() alone (a stream cut before its abort) settles them too
  const cut = transcript();
  cut.push({ type: "event_msg", payload: { type: "request_begin" } });
  cut.push(msg.partialToolCall("start", "", "c", "rm"));
  cut.push(msg.toolCall("d", "rm"));
  assert.deepEqual(cut.pendingApprovals.map((c) => c.id), ["d"]);
  cut.end();
  assert.deepEqual([cut.pendingApprovals, cut.card("c").status, cut.card("d").status], [[], "aborted", "aborted"]);
});

test("a steer during a tool call reaches the next request as [user_steering]", async () => {
  let session;
  let steered;
  const wait = tool({ name: "wait", execute: () => ((steered = session.steer("Also check b.md")), "done") });
  const llm = mockModel([{ toolCall: { name: "wait" } }, "Checked both."]);
  session = floe.createSession({ llm, tools: [wait], store: false });
  const msgs = assertStream(await collect(session.run("Check a.md", { approve })));
  assert.equal(steered, 1);
  assert.equal(session.steer("too late"), false);
  const sent = llm.calls[1].newMessages.map((m) => m.payload.text ?? m.payload.output);
  assert.deepEqual(sent, ["done", "[user_steering]\nAlso check b.md\n[/user_steering]"]);
  assert.equal(find(msgs, "text").filter((m) => m.payload.role === "user").length, 1, "the steering is on the stream");
});

test("a subagent: its calls go to the run's approver with its origin; its answer is the tool's output; a sub-transcript follows it", async () => {
  const echo = tool({ name: "echo", parameters: { type: "object", properties: { s: { type: "string" } } }, execute: ({ s }) => s });
  const research = floe.subagentTool({ name: "research", create: () => ({ llm: mockModel([{ toolCall: { name: "echo", args: { s: "hi" } } }, "The answer is 42."]), tools: [echo], store: false }) });
  const llm = mockModel([{ toolCall: { name: "research", args: { prompt: "find it" } } }, "42."]);
  const seen = [];
  const view = await transcript().consume(
    (async function* () {
      for await (const m of floe.createSession({ llm, tools: [research], store: false }).run("go", { approve: (c) => (seen.push([c.payload.name, c.origin?.length ?? 0]), "allow") })) yield m;
    })(),
  );
  assert.deepEqual(seen, [["research", 0], ["echo", 1]]);
  assert.equal(view.card("call_1").output, "The answer is 42.");
  const [child] = view.subagents.values();
  assert.deepEqual([child.text, child.status, child.card("call_1").output], ["The answer is 42.", "done", "hi"]);
  // A child whose model fails fails the tool with the reason.
  const broken = floe.subagentTool({ create: () => ({ llm: mockModel([{ error: "no quota", status: "auth" }]), store: false }) });
  const msgs = await collect(floe.createSession({ llm: mockModel([{ toolCall: { name: "run_subagent", args: { prompt: "p" } } }, "ok"]), tools: [broken], store: false }).run("go", { approve }));
  assert.deepEqual([outputOf(msgs, "call_1").output, outputOf(msgs, "call_1").stop_reason], ["[tool error] the subagent stopped: llm request error: no quota", "failed"]);
});

test("a retry after a model error: the injected clock sleeps the backoffs; transcript.retry while it waits; the tool is not re-run", async () => {
  const sleeps = [];
  let now = Date.UTC(2025, 0, 1);
  const clock = { now: () => now, sleep: async (ms) => (sleeps.push(ms), (now += ms), true) };
  let runs = 0;
  const look = tool({ name: "look", execute: () => `seen ${++runs}` });
  const llm = mockModel([[{ toolCall: { name: "look" } }, { error: "overloaded", status: "timeout" }], { throws: "socket hang up" }, "Recovered."]);
  const retries = [];
  const view = transcript({ onChange: (t) => t.retry && t.retry.attempt !== retries.at(-1)?.attempt && retries.push({ ...t.retry }) });
  await view.consume(floe.createSession({ llm, tools: [look], clock, store: false }).run("go", { approve }));
  assert.deepEqual(sleeps, [2000, 4000]);
  assert.equal(runs, 1);
  assert.deepEqual(retries.map((r) => [r.attempt, r.inMs, r.error]), [[1, 2000, "overloaded"], [2, 4000, "socket hang up"]]);
  assert.equal(retries[0].until, Date.UTC(2025, 0, 1) + 2000);
  assert.deepEqual([view.retry, view.text, view.status], [null, "Recovered.", "done"]);
  assert.deepEqual(view.turns.map((t) => t.status), ["timeout", "failed", "completed"]);
});

test("floe/test refuses when made what it could not play: option types, unencodable args, error messages that are not strings", () => {
  const cases = [
    [() => mockModel(["x"], { sleep: 5 }), "mockModel: options.sleep: want a function"],
    [() => mockModel(["x"], { provider: 5 }), "mockModel: options.provider: want a string, got a number"],
    [() => mockModel(["x"], { modelId: null }), "mockModel: options.modelId: want a string, got null"],
    [() => mockModel(["x"], { contextWindow: "big" }), "mockModel: options.contextWindow: want a number of tokens (an integer, 0 or more), got a string"],
    [() => mockModel(["x"], { contextWindow: -1 }), "mockModel: options.contextWindow: want a number of tokens"],
    [() => mockModel([{ toolCall: { name: "t", args: () => 1 } }]), "mockModel: replies[0].toolCall.args: want a JSON text or a value JSON can encode, got a function"],
    [() => mockModel([[{ toolCall: { name: "t", args: { n: 1n } } }]]), "mockModel: replies[0][0].toolCall.args: cannot be encoded as JSON"],
    [() => mockModel([{ throws: new Error("x") }]), "mockModel: replies[0].throws: want a message string, got an Error"],
    [() => mockModel([{ error: 503 }]), "mockModel: replies[0].error: want a message string, got a number"],
    [() => mockModel([{ error: "x", permanent: "no" }]), "mockModel: replies[0].permanent: want a boolean, got a string"],
    [() => msg.tokenUsage({ totl: 5 }), "msg.tokenUsage: session.totl: unknown option (did you mean total?)"],
    [() => msg.tokenUsage({ total: 5 }, { output: -1 }), "msg.tokenUsage: request.output: want a count (an integer, 0 or more), got -1"],
    [() => transcript().subscribe("render"), "transcript.subscribe: fn: want a function"],
    ...["provider", "modelId", "contextWindow", "sleep"].map((k) => [
      () =>
        mockModel(
          ["x"],
          Object.defineProperty({}, k, {
            enumerable: true,
            get() {
              throw new Error("hostile read");
            },
          }),
        ),
      `mockModel: options.${k}: reading it threw: hostile read`,
    ]),
  ];
  for (const [f, text] of cases) {
    assert.throws(f, (e) => e.name === "FloeError" && e.code === "bad_argument" && e.message.startsWith(text), text);
  }
  assert.doesNotThrow(() => mockModel([{ toolCall: { name: "t", args: '{"a":1}' } }, { error: "x", permanent: false }], { contextWindow: 0, sleep: async () => true }));
});

test("transcript.consume() of something that is not a stream rejects with bad_argument; an array of messages is one", async () => {
  await assert.rejects(transcript().consume(5), { code: "bad_argument", message: /^transcript\.consume: stream: want an async iterable of messages/ });
  const view = await transcript().consume([msg.userText("hi")]);
  assert.deepEqual(view.turns, [{ role: "user", text: "hi", sender: "user" }]);
});

// The default sleep of a { delay } left its abort listener on the request's
// signal once the wait was over: a reply of more than ten delays set off
// Node's MaxListenersExceededWarning, and every wait's listener stayed
// until the signal was let go.
test("mockModel's { delay } takes its abort listener off the signal once the wait is over", async () => {
  const { getEventListeners } = await import("node:events");
  const llm = mockModel([[...Array.from({ length: 12 }, () => ({ delay: 0 })), "done"]]);
  const ac = new AbortController();
  const it = llm.streamGenerate({ signal: ac.signal, newMessages: [] });
  const got = [];
  let r;
  while (!(r = await it.next()).done) got.push(r.value.payload.type);
  assert.deepEqual(r.value, { status: "completed" });
  assert.equal(got.at(-1), "token_usage");
  assert.equal(getEventListeners(ac.signal, "abort").length, 0);
});
