// The higher layer of floe.mjs: builders (the Go shapes), session defaults,
// what the model callback receives, transcript(), floe/test, subagentTool().
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { floe, collect, find, meta } from "./helpers.mjs";
import { msg, isMessage, tool, transcript, newSessionId } from "../../static/floe-node.mjs";
import { mockModel, checkStream, assertStream } from "../../static/test.mjs";

test("msg builders make the Go omni builders' messages, key order included", () => {
  const want = readFileSync(new URL("../../engine/omni/testdata/builders.jsonl", import.meta.url), "utf8").trim().split("\n");
  const img = ["data:image/png;base64,AAAA"];
  const got = [
    msg.userText("hello"),
    msg.userText("from the parent", "parent_agent"),
    msg.text("hi"),
    msg.thinking("hmm"),
    msg.toolCall("call_1", "read_file", { path: "a.txt" }),
    msg.toolOutput("call_1", "contents"),
    msg.toolOutput("call_1", "[invalid arguments]", "failed"),
    msg.toolOutput("call_1", "a chart", "completed", img),
    msg.partialText("start"),
    msg.partialText("delta", "hi"),
    msg.partialThinking("delta", "hmm"),
    msg.partialToolCall("delta", '{"pa', "call_1", "read_file"),
    msg.partialToolOutput("delta", "cont", "call_1"),
    msg.partialText("stop", "", "aborted"),
    msg.tokenUsage({ output: 3, total: 10 }, { cache_read: 1, output: 3, total: 10 }),
  ].map((m) => JSON.stringify(m));
  assert.deepEqual(got, want);
});

test("isMessage narrows by payload type, and by session_meta", () => {
  const call = msg.toolCall("c", "n");
  assert.equal(isMessage(call, "tool_call"), true);
  assert.equal(isMessage(call, "text"), false);
  assert.equal(isMessage({ type: "session_meta", payload: meta() }, "session_meta"), true);
  assert.equal(isMessage(null, "text"), false);
  assert.equal(isMessage({ type: "model_msg" }, "text"), false);
});

test("createSession({ llm }) alone: a generated id in the reference format, meta from the model object, documented defaults", async () => {
  const llm = mockModel(["hi"], { provider: "acme", modelId: "acme-1", contextWindow: 64000 });
  const records = [];
  const session = floe.createSession({ llm, system: "Be brief.", trace: { write: (r) => records.push(r) } });
  assert.match(session.id, /^session-\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}-[0-9a-f]{8}$/);
  const out = await collect(session.run("hello"));
  assert.deepEqual(checkStream(out), []);
  assert.deepEqual(records[0], {
    timestamp: records[0].timestamp,
    type: "session_meta",
    payload: {
      session_id: session.id,
      provider: "acme",
      model_id: "acme-1",
      model_context_window: 64000,
      system_prompt: "Be brief.",
      agent_state: "floe",
      workspace: process.cwd(),
    },
  });
  // a model object without provider/modelId
  const r2 = [];
  floe.createSession({ llm: { async *streamGenerate() {} }, trace: { write: (r) => r2.push(r) } });
  await Promise.resolve();
  const s2 = floe.createSession({ llm: mockModel(["x"]), meta: { session_id: "session-mine", workspace: "/w", agent_state: undefined }, trace: { write: (r) => r2.push(r) } });
  assert.equal(s2.id, "session-mine");
  await collect(s2.run("x"));
  const m2 = r2.find((r) => r.type === "session_meta" && r.payload.session_id === "session-mine").payload;
  assert.deepEqual([m2.provider, m2.model_id, m2.model_context_window, m2.system_prompt, m2.workspace, m2.agent_state], ["mock", "mock-model", 200000, "", "/w", "floe"]);
});

test("createSession: ids with spaces, options of a prototype, and a getter read where the option is checked", async () => {
  const s = floe.createSession({ llm: mockModel(["x"]), store: false, meta: { session_id: "my session 2" } });
  assert.equal(s.id, "my session 2");
  await collect(s.run("hi"));
  await s.close();
  const inherited = Object.create({ llm: mockModel(["y"]), onDiagnostic: () => {} });
  inherited.store = "memory";
  const s2 = floe.createSession(inherited);
  assert.match(s2.id, /^session-/);
  await s2.close();
  let reads = 0;
  const opts = {
    llm: mockModel(["z"]),
    get clock() {
      reads++;
      throw new Error("no clock");
    },
  };
  assert.throws(() => floe.createSession(opts), { code: "bad_argument", message: "createSession: clock: reading it threw: no clock" });
  assert.equal(reads, 1);
});

test("model_id falls back to a string model key of the model object (the provider adapters' descriptions carry one)", async () => {
  const records = [];
  const llm = { provider: "acme", model: "acme-2", async *streamGenerate() {} };
  floe.createSession({ llm, trace: { write: (r) => records.push(r) } });
  const s = floe.createSession({ llm: { ...llm, model: { client: true } }, trace: { write: (r) => records.push(r) } });
  await collect(s.run("x"));
  const metas = records.filter((r) => r.type === "session_meta").map((r) => r.payload.model_id);
  assert.deepEqual(metas, ["custom"], "the session that ran wrote its meta; a non-string model is not an id");
  const r2 = [];
  await collect(floe.createSession({ llm, trace: { write: (r) => r2.push(r) } }).run("x"));
  assert.equal(r2.find((r) => r.type === "session_meta").payload.model_id, "acme-2");
});

test("newSessionId: UTC time and 8 hex digits", () => {
  assert.match(newSessionId(Date.UTC(2026, 6, 18, 11, 10, 22)), /^session-2026-07-18-11-10-22-[0-9a-f]{8}$/);
  assert.notEqual(newSessionId(0), newSessionId(0));
  // The random bits are drawn 64 values at a time: ids across two refills stay distinct.
  assert.equal(new Set(Array.from({ length: 130 }, () => newSessionId(0))).size, 130);
});

test("defaults misuse: system not a string, system and meta.system_prompt disagreeing, a bad provider", () => {
  const llm = mockModel([]);
  for (const [opts, want] of [
    [{ llm, system: 5 }, "createSession: system"],
    [{ llm, system: "a", meta: { system_prompt: "b" } }, "system and meta.system_prompt differ"],
    [{ llm: { ...llm, streamGenerate: llm.streamGenerate, provider: 3 } }, "createSession: llm.provider"],
  ]) {
    assert.throws(() => floe.createSession(opts), (e) => floe.isFloeError(e) && e.code === "bad_argument" && e.message.includes(want), want);
  }
});

test("the model callback receives the tool list and the system prompt on every request", async () => {
  const t = tool({ name: "echo", description: "echoes", parameters: { type: "object", properties: { s: { type: "string" } } }, execute: ({ s }) => s ?? "" });
  const llm = mockModel([{ toolCall: { name: "echo", args: { s: "x" } } }, "done"]);
  await collect(floe.createSession({ llm, tools: [t], system: "You are terse." }).run("go", { approve: () => "allow" }));
  assert.equal(llm.calls.length, 2);
  for (const c of llm.calls) {
    assert.equal(c.systemPrompt, "You are terse.");
    assert.deepEqual(c.tools, [{ name: "echo", description: "echoes", parameters: { type: "object", properties: { s: { type: "string" } } } }]);
  }
  assert.equal(llm.calls[0].tools, llm.calls[1].tools, "the same array on every request");
  const bare = mockModel(["x"]);
  await collect(floe.createSession({ llm: bare }).run("go"));
  assert.deepEqual([bare.calls[0].tools, bare.calls[0].systemPrompt], [[], ""]);
});

test("mockModel streams text, thinking and tool calls in discipline, then token_usage", async () => {
  const llm = mockModel([[{ thinking: "hmm" }, { text: "a b", chunks: ["a", " b"] }, { toolCall: { name: "t", args: { x: 1 }, id: "k" } }]]);
  const ac = new AbortController();
  const got = [];
  for await (const m of llm.streamGenerate({ newMessages: [], signal: ac.signal })) got.push(m);
  assert.deepEqual(got, [
    msg.partialThinking("start"), msg.partialThinking("delta", "hmm"), msg.partialThinking("stop"), msg.thinking("hmm"),
    msg.partialText("start"), msg.partialText("delta", "a"), msg.partialText("delta", " b"), msg.partialText("stop"), msg.text("a b"),
    msg.partialToolCall("start", "", "k", "t"), msg.partialToolCall("delta", '{"x":1}', "k", "t"), msg.partialToolCall("stop", "", "k", "t"), msg.toolCall("k", "t", '{"x":1}'),
    msg.tokenUsage({ output: 13, total: 23 }, { output: 13, total: 23 }),
  ]);
});

test("mockModel failures, throws, delays and running out of replies", async () => {
  const sleeps = [];
  const llm = mockModel([{ error: "overloaded" }, { error: "bad key", status: "auth" }, { throws: "boom" }, [{ delay: 250 }, "late"]], {
    sleep: async (ms) => (sleeps.push(ms), true),
  });
  const session = floe.createSession({ llm, config: { reconnectBackoffMs: 0, maxReconnects: 0 } });
  const ends = async () => find(await collect(session.run("x")), "request_end").map((m) => [m.payload.status, m.payload.error_message]);
  assert.deepEqual(await ends(), [["failed", "overloaded"]]);
  assert.deepEqual(await ends(), [["auth", "bad key"]]);
  assert.deepEqual(await ends(), [["failed", "boom"]]);
  assert.deepEqual(await ends(), [["completed", undefined]]);
  assert.deepEqual(sleeps, [250]);
  assert.deepEqual(await ends(), [["failed", "mockModel: no reply for request 5 (4 scripted)"]]);
});

test("mockModel's delay ends the request aborted when the run is aborted", async () => {
  const llm = mockModel([["first", { delay: 60_000 }]]);
  const ac = new AbortController();
  const out = [];
  for await (const m of floe.createSession({ llm }).run("x", { signal: ac.signal })) {
    out.push(m);
    if (m.payload.type === "text") ac.abort();
  }
  assert.deepEqual(checkStream(out), []);
  assert.equal(out.at(-1).payload.type, "abort");
});

// Streams of the real engine keep every guarantee; broken copies are named.
// The max_turns notice (E-12.2) is the engine's own text after the last
// request_end: a run stopped by maxTurns passes checkStream, and the same
// text inside no request from elsewhere is still reported.
test("checkStream: a run stopped by maxTurns passes, its notice outside any request", async () => {
  const t = tool({ name: "t", execute: () => "ok" });
  const out = await collect(floe.createSession({ llm: mockModel([[{ toolCall: { name: "t" } }], "done"]), tools: [t], config: { maxTurns: 1 } }).run("go", { approve: () => "allow" }));
  assert.equal(out.at(-1).payload.text, "[reached max turns (1); stopping]");
  assert.deepEqual(checkStream(out), []);
  const forged = [...out.slice(0, -4), msg.text("[reached max turns (1); stopping]", "failed")];
  assert.match(checkStream(forged).join("\n"), /text outside a request/);
});

test("checkStream: real streams pass; each broken guarantee is reported", async () => {
  const t = tool({ name: "t", execute: async ({ ms = 0 }) => (await new Promise((r) => setTimeout(r, ms)), `slept ${ms}`) });
  const llm = mockModel([[{ toolCall: { name: "t", args: { ms: 20 }, id: "A" } }, { toolCall: { name: "t", args: { ms: 0 }, id: "B" } }, { toolCall: { name: "t", id: "C" } }], "done"]);
  const out = await collect(floe.createSession({ llm, tools: [t] }).run("x", { approve: (c) => (c.payload.tool_call_id === "C" ? "deny" : "allow") }));
  assert.deepEqual(checkStream(out), []);
  assertStream(out);
  const idx = (type, id) => out.findIndex((m) => m.payload.type === type && (id === undefined || m.payload.tool_call_id === id));
  const without = (i) => out.filter((_, j) => j !== i);
  const move = (from, to) => {
    const c = [...out];
    const [m] = c.splice(from, 1);
    c.splice(to, 0, m);
    return c;
  };
  const reply = out.findLastIndex((m) => m.payload.type === "text" && m.payload.role === "assistant"); // "done", streamed
  const broken = [
    [without(idx("tool_call_output", "A")), "the decided call A has no tool_call_output"],
    [move(idx("approval_decision", "A"), idx("tool_call", "A")), "approval_decision for A before its tool_call"],
    [move(idx("approval_decision", "B"), idx("tool_call_output", "B")), "approval_decision for B after its output"],
    [move(idx("approval_decision", "B"), idx("tool_call_output", "B")), "output of B before its approval_decision"],
    [[...out.slice(0, idx("tool_call_output", "A")), out[idx("approval_decision", "A")], ...out.slice(idx("tool_call_output", "A"))], "a second approval_decision for A"],
    [move(idx("tool_call_output", "C"), out.length - 1), "between the denial of C and its output"],
    [[...out, out[idx("tool_call_output", "B")]], "a second tool_call_output for B"],
    [without(idx("request_end")), "request_begin inside a request"],
    [move(idx("token_usage"), idx("tool_call", "A")), "after token_usage"],
    [move(idx("tool_call_output", "A"), out.length - 1), "request_begin before the output of A"],
    [without(out.findIndex((m) => m.payload.type === "partial_tool_call" && m.payload.event_type === "start")), "partial_tool_call delta without start"],
    [without(out.findIndex((m) => m.payload.type === "partial_tool_call" && m.payload.event_type === "stop")), "complete tool_call before its fragments stopped"],
    [[...out, { type: "event_msg", payload: { type: "abort", reason: "x" } }, msg.text("after")], "comes after abort"],
    [[...out, msg.partialText("start")], "fragments never stopped"],
    // P-6: the producer's next message after a stop is the complete one; P-7: the deltas join to it
    [move(out.findLastIndex((m) => m.payload.type === "token_usage"), reply), "token_usage between the stop at"],
    [out.map((m, i) => (i === reply ? { ...m, payload: { ...m.payload, text: "not the deltas" } } : m)), "complete text differs from its deltas joined (P-7)"],
  ];
  for (const [s, want] of broken) {
    const bad = checkStream(s);
    assert.ok(bad.some((b) => b.includes(want)), `want ${JSON.stringify(want)}, got ${JSON.stringify(bad)}`);
    assert.throws(() => assertStream(s), new RegExp(want.replace(/[()[\]]/g, "\\$&")));
  }
});

test("transcript: turns, text so far, cards paired by id and origin, late output, approvals pending, retries, change callback", async () => {
  let gate;
  const slow = tool({ name: "slow", execute: () => new Promise((r) => (gate = r)) });
  const quick = tool({ name: "quick", execute: () => "fast" });
  const llm = mockModel([{ error: "overloaded" }, [{ text: "Looking." }, { toolCall: { name: "slow", id: "s" } }, { toolCall: { name: "quick", id: "q" } }], "All done."]);
  let changes = 0;
  const view = transcript({ onChange: () => changes++ });
  view.push(msg.userText("please"));
  let approveNow;
  const approved = new Promise((r) => (approveNow = r));
  const session = floe.createSession({ llm, tools: [slow, quick], config: { reconnectBackoffMs: 1 } });
  const seen = [];
  const consumed = (async () => {
    for await (const m of session.run("please", {
      approve: async (c) => {
        if (c.payload.tool_call_id === "s") await approved;
        return "allow";
      },
    })) {
      view.push(m);
      seen.push(m);
      const p = m.payload;
      if (p.type === "request_end" && p.status === "failed") {
        assert.equal(view.retry.attempt, 1);
        assert.equal(view.retry.inMs, 1);
        assert.equal(view.retry.error, "overloaded");
        assert.equal(typeof view.retry.until, "number");
      }
      if (p.type === "tool_call" && p.tool_call_id === "s") {
        assert.deepEqual(view.pendingApprovals.map((c) => c.id), ["s"]);
        assert.equal(view.card("s").status, "awaiting_approval");
        assert.equal(view.text, "Looking.");
        approveNow();
      }
      if (p.type === "request_end" && p.status === "completed" && view.turns.length === 3) {
        assert.equal(view.card("s").status, "running");
        setTimeout(() => gate("slow result"), 1);
      }
    }
  })();
  await consumed;
  view.end();
  assert.deepEqual(checkStream(seen), []);
  assert.equal(changes, view.version);
  assert.ok(changes >= seen.length);
  assert.deepEqual(view.turns.map((t) => t.role + ":" + (t.status ?? t.text)), ["user:please", "assistant:failed", "assistant:completed", "assistant:completed"]);
  assert.equal(view.retry, null);
  assert.equal(view.status, "done");
  assert.equal(view.text, "All done.");
  const s = view.card("s");
  assert.deepEqual([s.name, s.status, s.decision, s.output, s.late, s.turn], ["slow", "done", "allow", "slow result", true, 2]);
  assert.equal(view.card("q").output, "fast");
  assert.deepEqual(view.turns[2].items.map((i) => i.kind + ":" + (i.text ?? i.id)), ["text:Looking.", "tool:s", "tool:q"]);
  assert.deepEqual(view.pendingApprovals, []);
  assert.doesNotThrow(() => JSON.stringify(view.turns));
});

// Some servers number calls per request (call_0 every time), and a call
// numbered again after a reload takes a cut-off call's id: a new call of
// an id whose card has its complete call gets a card of its own.
test("transcript: a call reusing an earlier call's id gets its own card; the earlier keeps its output", () => {
  const view = transcript();
  const begin = { type: "event_msg", payload: { type: "request_begin" } };
  for (const m of [
    begin,
    msg.partialToolCall("start", "", "call_0", "read"),
    msg.partialToolCall("stop", "", "call_0", "read"),
    msg.toolCall("call_0", "read", { path: "a" }),
    { type: "event_msg", payload: { type: "approval_decision", decision: "allow", tool_call_id: "call_0" } },
    msg.toolOutput("call_0", "A"),
    begin,
    msg.partialToolCall("start", "", "call_0", "write"),
    msg.partialToolCall("delta", '{"path":"b"}', "call_0", "write"),
    msg.partialToolCall("stop", "", "call_0", "write"),
    msg.toolCall("call_0", "write", { path: "b" }),
    { type: "event_msg", payload: { type: "approval_decision", decision: "deny", tool_call_id: "call_0" } },
    msg.toolOutput("call_0", "denied", "failed"),
  ])
    view.push(m);
  assert.deepEqual(
    view.cards.map((c) => [c.name, c.arguments, c.decision, c.output, c.turn]),
    [
      ["read", '{"path":"a"}', "allow", "A", 0],
      ["write", '{"path":"b"}', "deny", "denied", 1],
    ],
  );
  assert.equal(view.card("call_0").name, "write", "card(id) is the latest call of the id");
});

test("transcript: a card's args are the arguments the tool got: empty arguments (some models send none for a tool without parameters) are {}", async () => {
  const got = [];
  const now = tool({ name: "now", execute: (args) => (got.push(args), "12:00") });
  const llm = mockModel([[{ toolCall: { name: "now", args: "", id: "c0" } }, { toolCall: { name: "now", args: " \n", id: "c1" } }], "ok"]);
  const view = transcript();
  await view.consume(floe.createSession({ llm, tools: [now] }).run("time?", { approve: () => "allow" }));
  assert.deepEqual(got, [{}, {}]);
  assert.deepEqual(view.cards.map((c) => [c.arguments, c.args, c.status]), [["", {}, "done"], [" \n", {}, "done"]]);
});

// React's useSyncExternalStore(view.subscribe, () => view.version) calls
// subscribe alone, without its object: it threw a TypeError (its private
// listeners read through an undefined this).
test("transcript: subscribe works detached from its transcript, and its unsubscribe too", () => {
  const view = transcript();
  const { subscribe } = view;
  let seen = 0;
  const unsubscribe = subscribe(() => seen++);
  view.push(msg.userText("hi"));
  unsubscribe();
  view.push(msg.userText("again"));
  assert.equal(seen, 2, "once at once, once for the push");
  assert.deepEqual(Object.keys(view).includes("subscribe"), false, "not an enumerable key of the view");
});

// A transcript is a store (Svelte's $view): subscribe calls fn with the
// current value at once, before it returns. It called fn only at the
// next change, so $view was undefined until then (a chat resumed with its
// history showed nothing).
test("transcript: subscribe calls fn(transcript, null) at once, then after each change", () => {
  const view = transcript();
  view.push(msg.userText("stored"));
  const calls = [];
  const unsubscribe = view.subscribe((t, m) => calls.push([t, m, t.turns.length]));
  assert.deepEqual(calls, [[view, null, 1]], "called at once with the current value");
  view.push(msg.userText("next"));
  assert.equal(calls.length, 2);
  assert.deepEqual([calls[1][0], calls[1][1].payload.text, calls[1][2]], [view, "next", 2]);
  unsubscribe();
  view.push(msg.userText("after"));
  assert.equal(calls.length, 2);
  // A fn that throws at once is not subscribed.
  assert.throws(() => view.subscribe(() => { throw new Error("bad fn"); }), /bad fn/);
  view.push(msg.userText("quiet")); // would throw "bad fn" had it been
});

// Vue's ref() and reactive() wrap an object whose Object.prototype.toString
// tag is "Object" in a Proxy, and the transcript's methods and getters
// refused it (its private fields): view.value.push(m) threw "Receiver must
// be an instance of class Transcript". Another tag leaves it unwrapped.
test("transcript: tagged Transcript, so Vue's reactive() leaves it unwrapped", () => {
  const view = transcript();
  assert.equal(Object.prototype.toString.call(view), "[object Transcript]");
  view.push({ ...msg.userText("x"), origin: ["child"] });
  assert.equal(Object.prototype.toString.call(view.subagents.get("child")), "[object Transcript]", "a sub-transcript too");
  assert.deepEqual(Object.keys(view).includes(Symbol.toStringTag), false);
});

test("transcript: subagent sub-transcripts by origin; the same tool_call_id in parent and child are different cards; abort", () => {
  const view = transcript();
  const calls = [];
  view.subscribe((t, m) => calls.push(m?.payload?.type));
  const o = (m, origin) => ({ ...m, origin });
  const seq = [
    { type: "event_msg", payload: { type: "request_begin" } },
    msg.toolCall("call_1", "run_subagent", { prompt: "p" }),
    { type: "event_msg", payload: { type: "approval_decision", decision: "allow", tool_call_id: "call_1" } },
    o({ type: "session_meta", payload: meta("child") }, ["child"]),
    o(msg.userText("p", "parent_agent"), ["child"]),
    o({ type: "event_msg", payload: { type: "request_begin" } }, ["child"]),
    o(msg.partialText("start"), ["child"]),
    o(msg.partialText("delta", "chi"), ["child"]),
    o(msg.toolCall("call_1", "read", {}), ["child"]),
    o(msg.toolCall("call_9", "deep", {}), ["child", "grandchild"]),
    o(msg.toolOutput("call_1", "child output"), ["child"]),
    msg.toolOutput("call_1", "parent output"),
    { type: "event_msg", payload: { type: "abort", reason: "user" } },
  ];
  for (const m of seq.slice(0, 9)) view.push(m);
  assert.deepEqual(view.pendingApprovals.map((c) => [c.id, c.origin]), [["call_1", ["child"]]], "a subagent's pending approval is the root's too");
  for (const m of seq.slice(9)) view.push(m);
  assert.equal(calls.length, seq.length + 1, "once at subscribe, once a message");
  assert.equal(view.card("call_1").output, "parent output");
  assert.equal(view.card("call_1", ["child"]).output, "child output");
  assert.equal(view.card("call_9", ["child", "grandchild"]).name, "deep");
  const child = view.subagents.get("child");
  assert.deepEqual(child.origin, ["child"]);
  assert.equal(child.meta.session_id, "child");
  assert.equal(child.text, "chi");
  assert.deepEqual(child.turns[0], { role: "user", text: "p", sender: "parent_agent" });
  assert.deepEqual(child.subagents.get("grandchild").origin, ["child", "grandchild"]);
  assert.deepEqual([view.status, view.abortReason], ["aborted", "user"]);
});

test("subagentTool: prompt in, the child's final text out, the child's stream forwarded with origin, its calls approved with the origin chain", async () => {
  const read = tool({ name: "read", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] }, execute: ({ path }) => `contents of ${path}` });
  let childLLM;
  const research = floe.subagentTool({
    name: "research",
    description: "Delegates a research task.",
    create: async () => ({ llm: (childLLM = mockModel([{ toolCall: { name: "read", args: { path: "notes" } } }, "The answer is 42."])), tools: [read], system: "You research." }),
  });
  assert.deepEqual(research.parameters.required, ["prompt"]);
  const llm = mockModel([{ toolCall: { name: "research", args: { prompt: "Find the answer." }, id: "r" } }, "It is 42."]);
  const approvals = [];
  const out = await collect(floe.createSession({ llm, tools: [research] }).run("go", { approve: (c) => (approvals.push([c.payload.name, c.origin ?? []]), "allow") }));
  assert.deepEqual(checkStream(out), []);
  const childId = out.find((m) => m.type === "session_meta").origin[0];
  assert.deepEqual(approvals, [["research", []], ["read", [childId]]]);
  const forwarded = out.filter((m) => m.origin);
  assert.ok(forwarded.every((m) => m.origin[0] === childId));
  assert.equal(forwarded.find((m) => m.type === "session_meta").payload.source, "subagent");
  assert.equal(forwarded.find((m) => m.type === "session_meta").payload.system_prompt, "You research.");
  assert.deepEqual(forwarded[1].payload, { type: "text", role: "user", text: "Find the answer.", stop_reason: "completed", sender: "parent_agent" });
  const own = out.filter((m) => !m.origin);
  assert.deepEqual(find(own, "tool_call_output").map((m) => m.payload.output), ["The answer is 42."]);
  assert.equal(llm.calls[1].newMessages[0].payload.output, "The answer is 42.");
  assert.equal(childLLM.calls[0].systemPrompt, "You research.");
  // a child that fails: the tool fails with the reason
  const broken = floe.subagentTool({ create: () => ({ llm: mockModel([{ error: "no quota", status: "auth" }]) }) });
  const out2 = await collect(floe.createSession({ llm: mockModel([{ toolCall: { name: "run_subagent", args: { prompt: "x" } } }, "ok"]), tools: [broken] }).run("go", { approve: () => "allow" }));
  assert.match(find(out2.filter((m) => !m.origin), "tool_call_output")[0].payload.output, /^\[tool error\] the subagent stopped: llm request error: no quota/);
});

test("transcript: consume() a whole stream, compaction state, a function as the change callback", async () => {
  const seen = [];
  const view = transcript((t, m) => seen.push(m?.payload?.type ?? null));
  async function* stream() {
    yield { type: "event_msg", payload: { type: "compaction_begin", reason: "manual", mode: "discard", context: 10, turns: 1 } };
    assert.deepEqual(view.compaction, { reason: "manual", mode: "discard", status: null, error: null });
    yield { type: "event_msg", payload: { type: "compaction_end", reason: "manual", mode: "discard", status: "completed" } };
  }
  await view.consume(stream());
  assert.deepEqual(view.compaction, { reason: "manual", mode: "discard", status: "completed", error: null });
  assert.equal(view.status, "done");
  assert.deepEqual(seen, ["compaction_begin", "compaction_end", null]);
});

test("transcript: a stream that throws (a run refused as busy) leaves status failed with its error, and the next run is running again", async () => {
  const session = floe.createSession({ llm: mockModel(["one", "two"]), store: false });
  const view = transcript();
  const first = session.run("a");
  await first.next(); // the first run holds the session
  // (run() of a session without a store refuses at once; a stored one's at its first next())
  await assert.rejects(view.consume((async function* () { yield* session.run("b"); })()), { code: "session_busy" });
  assert.equal(view.status, "failed");
  assert.equal(view.error.code, "session_busy");
  await first.return();
  view.push(msg.userText("c"));
  assert.equal(view.status, "running");
  assert.equal(view.error, null);
  await view.consume(session.run("c"));
  assert.equal(view.status, "done");
  await session.close();
});

// The helpers check their arguments as the API does: a wrong one is a
// FloeError (bad_argument) naming it where it is written, not a message the
// engine later refuses, a plain TypeError or a silently wrong value.
test("msg builders, mockModel, checkStream, transcript.push and newSessionId refuse bad arguments, naming them", () => {
  const cases = [
    [() => msg.userText(5), "msg.userText: text: want a string, got a number"],
    [() => msg.userText("hi", "bogus"), 'msg.userText: sender: want "user", "parent_agent", "harness", "server", got "bogus"'],
    [() => msg.text("x", "done"), 'msg.text: stopReason: want "completed", "failed"'],
    [() => msg.toolCall("", "t"), "msg.toolCall: id: want a non-empty string, got an empty string"],
    [() => msg.toolCall("c1", "t", { n: 1n }), "msg.toolCall: args: cannot be encoded as JSON"],
    [() => msg.toolOutput("c1", "x", "completed", "nope"), "msg.toolOutput: images: want an array of data: URL strings"],
    [() => msg.partialText("middle"), 'msg.partialText: eventType: want "start", "delta", "stop", got "middle"'],
    [() => msg.tokenUsage({ total: -1 }), "msg.tokenUsage: session.total: want a count"],
    [() => mockModel([{ bogus: 1 }]), 'mockModel: replies[0]: want one of the keys text, thinking, toolCall, delay, error, throws, got ["bogus"]'],
    [() => mockModel([[{ text: "a", delay: 3 }]]), "mockModel: replies[0][0].delay: unknown option"],
    [() => mockModel([{ toolCall: {} }]), "mockModel: replies[0].toolCall.name: want a non-empty string"],
    [() => mockModel([{ error: "x", status: "bad" }]), "mockModel: replies[0].status: want one of failed, aborted, timeout, malformed, auth"],
    [() => mockModel([{ error: "x", status: "completed" }]), 'mockModel: replies[0].status: want one of failed, aborted, timeout, malformed, auth, got "completed"'],
    [() => mockModel([{ text: "abc", chunks: ["x"] }]), 'mockModel: replies[0].chunks: want pieces that join to the text "abc", got "x"'],
    [() => mockModel([[{ thinking: "ab", chunks: ["a"] }]]), 'mockModel: replies[0][0].chunks: want pieces that join to the thinking "ab", got "a"'],
    [() => mockModel(["x"], { modelID: "m" }), "mockModel: options.modelID: unknown option (did you mean modelId?)"],
    [() => checkStream(5), "checkStream: messages: want an array of the stream's messages, got a number"],
    [() => floe.transcript().push(5), "transcript.push: message: want an OmniMessage"],
    [() => floe.transcript({ onchange() {} }), "transcript: options.onchange: unknown option (did you mean onChange?)"],
    [() => floe.transcript({ onChange: "render" }), "transcript: options.onChange: want a function, got a string"],
    [() => floe.transcript("x"), "transcript: options: want { onChange } or a function, got a string"],
    [() => newSessionId("x"), "newSessionId: now: want a time in milliseconds"],
  ];
  for (const [f, want] of cases) {
    assert.throws(f, (e) => e.name === "FloeError" && e.code === "bad_argument" && e.message.includes(want), want);
  }
  // What they build is unchanged (the golden file above): the defaults still apply.
  assert.deepEqual(msg.partialToolCall("start", undefined, "c1", "t").payload, { type: "partial_tool_call", role: "assistant", event_type: "start", name: "t", arguments: "", tool_call_id: "c1" });
});

test("subagentTool: a blank prompt fails the call and makes no child; a run aborted while create() is pending starts none", async (t) => {
  let created = 0;
  const blank = floe.subagentTool({ create: () => (created++, { llm: mockModel(["never"]) }) });
  const out = await collect(floe.createSession({ llm: mockModel([{ toolCall: { name: "run_subagent", args: { prompt: " \n\t" } } }, "ok"]), tools: [blank], store: false }).run("go", { approve: () => "allow" }));
  const output = find(out, "tool_call_output")[0].payload;
  assert.match(output.output, /^\[tool error\] prompt: the task is blank/);
  assert.equal(output.stop_reason, "failed");
  assert.equal(created, 0);
  assert.ok(!out.some((m) => m.origin), "no child ran");
  // create() still pending when the run is aborted: no child session is made
  const { mkdtemp, rm } = await import("node:fs/promises");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const dir = await mkdtemp(join(tmpdir(), "floe-subagent-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const store = { dir };
  let release;
  const gate = new Promise((r) => (release = r));
  let asked;
  const asking = new Promise((r) => (asked = r));
  const slow = floe.subagentTool({ create: async () => (asked(), await gate, { llm: mockModel(["late"]), store }) });
  const ac = new AbortController();
  const parent = floe.createSession({ llm: mockModel([{ toolCall: { name: "run_subagent", args: { prompt: "task" } } }, "ok"]), tools: [slow], store: false });
  const run = collect(parent.run("go", { approve: () => "allow", signal: ac.signal }));
  await asking;
  ac.abort();
  release();
  const out2 = await run;
  assert.equal(out2.at(-1).payload.type, "abort");
  assert.ok(!out2.some((m) => m.origin), "no child ran");
  assert.deepEqual(await floe.listSessions({ store }), []);
});

test("a subagent's child writes its own Trace to its store (E-15.6), which the parent's Trace names", async (t) => {
  const { mkdtemp, rm } = await import("node:fs/promises");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const dir = await mkdtemp(join(tmpdir(), "floe-subagent-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const store = { dir };
  const records = (files) => files.flatMap((f) => f.text.split("\n").filter(Boolean).map((l) => JSON.parse(l)));
  const research = floe.subagentTool({ name: "research", create: () => ({ llm: mockModel(["The answer is 42."]), store }) });
  const parent = floe.createSession({ llm: mockModel([{ toolCall: { name: "research", args: { prompt: "Find it." } } }, "It is 42."]), tools: [research], store });
  const out = await collect(parent.run("go", { approve: () => "allow" }));
  await parent.close();
  const childId = out.find((m) => m.type === "session_meta" && m.origin).origin[0];
  const child = records(await floe.exportSession(childId, { store }));
  assert.equal(child[0].type, "session_meta");
  assert.equal(child[0].payload.source, "subagent");
  assert.deepEqual(child.filter((m) => m.payload.type === "text").map((m) => m.payload.text), ["Find it.", "The answer is 42."]);
  const own = records(await floe.exportSession(parent.id, { store }));
  assert.ok(own.some((m) => m.payload.type === "subagent" && m.payload.session_id === childId), "the parent's Trace names its child");
  assert.ok(own.every((m) => !m.origin), "the child's records are not in the parent's Trace");
  assert.deepEqual((await floe.listSessions({ store })).map((x) => x.id).sort(), [childId, parent.id].sort());
  // createSubagent itself, with the default store (memory in Node).
  const direct = floe.createSubagent({ llm: mockModel(["done"]), meta: { session_id: "direct-child" } });
  await collect(direct.run("task"));
  direct.close();
  const stored = records(await floe.exportSession("direct-child"));
  assert.deepEqual(stored.map((m) => m.payload.type ?? m.type), ["session_meta", "text", "request_begin", "text", "token_usage", "request_end"]);
  assert.equal(stored[0].payload.source, "subagent");
  await floe.deleteSession("direct-child");
  // store: false keeps nothing.
  const none = floe.createSubagent({ llm: mockModel(["done"]), meta: { session_id: "no-store-child" }, store: false });
  await collect(none.run("task"));
  await assert.rejects(floe.exportSession("no-store-child"), (e) => e.code === "not_found");
});

test("transcript: a tool call whose start came without its name takes the name that comes later (P-8: the last non-empty one); a delta's images show at once", () => {
  const view = transcript();
  for (const m of [
    { type: "event_msg", payload: { type: "request_begin" } },
    msg.partialToolCall("start", "", "c1", ""),
    msg.partialToolCall("delta", '{"a":1}', "c1", "read_file"),
    msg.partialToolCall("stop", "", "c1", ""),
    msg.toolCall("c1", "read_file", '{"a":1}'),
  ]) view.push(m);
  assert.equal(view.card("c1").name, "read_file");
  // A tool's images come whole in one delta: the card shows them from then.
  const img = "data:image/png;base64,AAAA";
  const delta = msg.partialToolOutput("delta", "chart", "c1");
  delta.payload = { ...delta.payload, images: [img] };
  for (const m of [{ type: "event_msg", payload: { type: "approval_decision", decision: "allow", tool_call_id: "c1" } }, msg.partialToolOutput("start", "", "c1"), delta]) view.push(m);
  assert.deepEqual(view.card("c1").images, [img]);
  assert.equal(view.card("c1").output, "chart");
});

test("a subagent's close() aborts its run in flight, as a session's does: the stream ends with the abort, and the child's Trace holds it", async () => {
  let asked;
  const waiting = new Promise((r) => (asked = r));
  const llm = {
    async *streamGenerate({ signal }) {
      asked();
      await new Promise((r) => signal.addEventListener("abort", r));
      return { status: "aborted" };
    },
  };
  const sub = floe.createSubagent({ llm, meta: { session_id: "closed-mid-run-child" } });
  const out = [];
  const reading = (async () => {
    for await (const m of sub.run("task")) out.push(m);
  })();
  await waiting;
  sub.close();
  await reading; // it never ended: the run went on after close()
  assert.deepEqual(out.map((m) => m.payload.type ?? m.type), ["session_meta", "text", "request_begin", "request_end", "abort"]);
  assert.equal(out.at(-1).payload.reason, "aborted by user");
  const stored = (await floe.exportSession("closed-mid-run-child"))[0].text.trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(stored.at(-1).payload.type, "abort");
  assert.throws(() => sub.run("again"), { code: "closed" });
  await floe.deleteSession("closed-mid-run-child");
});

test("transcript: a user's images (image_url, an image's inline_data) are on the user turn they follow; a stored session read back shows a prompt's image", async () => {
  const img = (u) => ({ type: "model_msg", payload: { type: "image_url", role: "user", image_url: u } });
  const view = transcript();
  for (const m of [
    msg.userText("What is this?"),
    img("https://example.com/a.png"),
    { type: "model_msg", payload: { type: "inline_data", role: "user", data: "iVBORw==", mime_type: "image/png" } },
    { type: "model_msg", payload: { type: "inline_data", role: "user", data: "JVBERi0=", mime_type: "application/pdf" } },
    { type: "event_msg", payload: { type: "request_begin" } },
    msg.text("A cat."),
    img("data:image/gif;base64,R0lGODlh"),
  ]) view.push(m);
  assert.deepEqual(view.turns[0], { role: "user", text: "What is this?", sender: "user", images: ["https://example.com/a.png", "data:image/png;base64,iVBORw=="] });
  assert.deepEqual(view.turns[2], { role: "user", text: "", sender: "user", images: ["data:image/gif;base64,R0lGODlh"] });
  assert.equal(view.turns.length, 3);
  // A run's prompt with an image, read back from its Trace.
  const m = meta();
  const s = floe.createSession({ meta: m, llm: mockModel(["It is a pixel."]) });
  await collect(s.run([msg.userText("Look."), img("data:image/png;base64,iVBORw==")]));
  await s.close();
  const back = transcript();
  for (const r of await floe.readSession(m.session_id)) back.push(r);
  assert.deepEqual(back.turns[0], { role: "user", text: "Look.", sender: "user", images: ["data:image/png;base64,iVBORw=="] });
  await floe.deleteSession(m.session_id);
});

test("transcript: a delivered steering message is a user turn marked steering, its text the words inside the markers, live and read back; the markers elsewhere are a plain text", async () => {
  const view = transcript();
  for (const text of [
    "[user_steering]\nalso check the tests\n[/user_steering]",
    " \n[user_steering]  spaced out \u3000[/user_steering]\n",
    "[user_steering][/user_steering]",
    "see [user_steering]\nx\n[/user_steering]",
    "[user_steering]\nx\n[/user_steering] and more",
    "[user_steering]",
    "[/user_steering][user_steering]",
  ]) view.push(msg.userText(text));
  assert.deepEqual(view.turns, [
    { role: "user", text: "also check the tests", sender: "user", steering: true },
    { role: "user", text: "spaced out", sender: "user", steering: true },
    { role: "user", text: "", sender: "user", steering: true },
    { role: "user", text: "see [user_steering]\nx\n[/user_steering]", sender: "user" },
    { role: "user", text: "[user_steering]\nx\n[/user_steering] and more", sender: "user" },
    { role: "user", text: "[user_steering]", sender: "user" },
    { role: "user", text: "[/user_steering][user_steering]", sender: "user" },
  ]);

  // A run steered while its first request streams: the steering comes after
  // the tool's output, its image on its turn; read back from the Trace, the same.
  const m = meta();
  const img = { type: "model_msg", payload: { type: "image_url", role: "user", image_url: "data:image/png;base64,iVBORw==" } };
  let s;
  let steered;
  const llm = {
    async *streamGenerate({ newMessages }) {
      if (newMessages.some((x) => x.payload.type === "tool_call_output")) {
        yield msg.text("Checked.");
        return { status: "completed" };
      }
      steered = s.steer([msg.userText("  also check the tests "), img]);
      yield msg.toolCall("c1", "look");
      return { status: "completed" };
    },
  };
  const look = tool({ name: "look", execute: () => "fine" });
  s = floe.createSession({ meta: m, llm, tools: [look] });
  const live = transcript();
  live.push(msg.userText("Fix the bug."));
  await live.consume(s.run("Fix the bug.", { approve: () => "allow" }));
  await s.close();
  assert.ok(steered, "steer() queued the entry");
  const want = { role: "user", text: "also check the tests", sender: "user", steering: true, images: ["data:image/png;base64,iVBORw=="] };
  const users = (v) => v.turns.filter((t) => t.role === "user");
  assert.deepEqual(users(live), [{ role: "user", text: "Fix the bug.", sender: "user" }, want]);
  const back = transcript();
  for (const r of await floe.readSession(m.session_id)) back.push(r);
  back.end();
  assert.deepEqual(users(back), users(live));
  assert.deepEqual(back.turns.map((t) => t.role), live.turns.map((t) => t.role));
  await floe.deleteSession(m.session_id);
});

test("transcript: a file the model made (assistant inline_data) is an item of its turn: an image with a data: URL, another file named for a download", () => {
  const file = (mime, data) => ({ type: "model_msg", payload: { type: "inline_data", role: "assistant", data, mime_type: mime, stop_reason: "completed" } });
  const view = transcript();
  for (const m of [
    msg.userText("Draw a cat, and its card as a PDF."),
    { type: "event_msg", payload: { type: "request_begin" } },
    msg.text("Here it is:"),
    file("image/png", "iVBORw=="),
    file("application/pdf", "JVBERi0="),
    file("image/svg+xml", "PHN2Zz4="),
    file("application/x-weird thing", "AAAA"),
    msg.text("Done."),
  ]) view.push(m);
  const t = view.turns[1];
  assert.deepEqual(t.items, [
    { kind: "text", text: "Here it is:", done: true },
    { kind: "file", mimeType: "image/png", data: "iVBORw==", name: "image-1.png", url: "data:image/png;base64,iVBORw==" },
    { kind: "file", mimeType: "application/pdf", data: "JVBERi0=", name: "file-2.pdf" },
    { kind: "file", mimeType: "image/svg+xml", data: "PHN2Zz4=", name: "image-3.svg", url: "data:image/svg+xml;base64,PHN2Zz4=" },
    { kind: "file", mimeType: "application/x-weird thing", data: "AAAA", name: "file-4.bin" },
    { kind: "text", text: "Done.", done: true },
  ]);
  assert.equal(view.text, "Here it is:Done.");
  assert.equal(view.turns.length, 2);
});
