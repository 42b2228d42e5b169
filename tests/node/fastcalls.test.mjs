// The calls a run makes most (a producer's batch, a settled approval, a
// consumer's pull) cross through the module's own export floe_call and a
// resume of the runtime for those of one microtask checkpoint, instead of
// a js.Func call each (jsbridge/fast.go). These tests check that they do,
// and that a run gives the same stream either way.
import { test } from "node:test";
import assert from "node:assert/strict";
import { floe, meta, usage, instantClock, collect, text, toolCall, toolOutput, find } from "./helpers.mjs";

const debug = floe[Symbol.for("floe.debug")];

// Three requests; the first two call three tools at once, each approved
// asynchronously and streaming its output in two pieces.
function session() {
  let turn = 0;
  const llm = {
    async *streamGenerate() {
      turn++;
      yield* text("turn ", String(turn));
      if (turn < 3) for (let k = 0; k < 3; k++) yield toolCall(`c${turn}_${k}`, "work", `{"k":${k}}`);
      yield usage();
      return { status: "completed" };
    },
  };
  const part = (id, event_type, output) => ({
    type: "model_msg",
    payload: { type: "partial_tool_call_output", role: "user", event_type, output, tool_call_id: id },
  });
  const environment = {
    async *executeTool({ toolCall: tc }) {
      const id = tc.payload.tool_call_id;
      yield part(id, "start", "");
      yield part(id, "delta", "out ");
      yield part(id, "delta", id);
      yield part(id, "stop", "");
      yield toolOutput(id, "out " + id);
    },
  };
  return floe.createSession({ meta: meta(), llm, environment, clock: instantClock(), config: { maxReconnects: 0 } });
}

async function run(approve = async () => "allow") {
  const before = debug.calls();
  const s = session();
  const msgs = await collect(s.run("go", { approve }));
  await s.close();
  const after = debug.calls();
  const calls = Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - before[k]]));
  return { msgs: msgs.map((m) => JSON.stringify({ ...m, timestamp: undefined })), calls };
}

// runSlow is run with every queued call made as a js.Func call.
async function runSlow() {
  debug.slowCalls(true);
  try {
    return await run();
  } finally {
    debug.slowCalls(false);
  }
}

test("batches, approvals and pulls cross through floe_call", async () => {
  const { msgs, calls } = await run();
  assert.ok(msgs.length > 40, `${msgs.length} messages`);
  // Nothing takes a js.Func call: not even the end of a model request, whose
  // plain { status: "completed" } crosses as undefined.
  assert.equal(calls.funcs, 0, JSON.stringify(calls));
  // 6 approvals and 6 tool batches at least, and the consumer's pulls.
  assert.ok(calls.fast >= 12, JSON.stringify(calls));
  assert.ok(calls.resumes > 0 && calls.resumes <= calls.fast, `a resume runs one call or more: ${JSON.stringify(calls)}`);
});

test("a decision the approver returns at once crosses with its call: no settle, the same stream", async () => {
  const later = await run();
  const seen = [];
  const atOnce = await run((call) => (seen.push(call.payload.tool_call_id), "allow"));
  assert.deepEqual(atOnce.msgs, later.msgs);
  assert.deepEqual(seen, ["c1_0", "c1_1", "c1_2", "c2_0", "c2_1", "c2_2"]);
  // The 6 approvals of the asynchronous approver each settle through
  // floe_call, and a resume each; the same decisions returned at once need
  // none (and the tools' batches may then share more resumes).
  const counts = JSON.stringify({ later: later.calls, atOnce: atOnce.calls });
  assert.ok(later.calls.fast - atOnce.calls.fast >= 6, counts);
  assert.ok(later.calls.resumes - atOnce.calls.resumes >= 6, counts);
  // A decision returned at once is checked as a resolved one: not a string
  // is a failed approval, and the call is denied (E-5.4).
  const bad = await run(() => 5);
  const outputs = bad.msgs.map((s) => JSON.parse(s)).filter((m) => m.payload.type === "tool_call_output");
  assert.equal(outputs.length, 6);
  for (const o of outputs) assert.equal(o.payload.output, "Tool call denied by user.");
  const threw = await run(() => {
    throw new Error("no");
  });
  assert.equal(threw.msgs.filter((s) => s.includes("Tool call denied by user.")).length, 6);
});

test("a producer's start asks for its first batch and its end stops its pump", async () => {
  const { calls } = await run();
  // 3 requests and 6 tool executions, each ending on its own: Go pulls only
  // a batch after a producer's first, and stops none.
  assert.equal(calls.stops, 0, JSON.stringify(calls));
  assert.ok(calls.pulls < 9, `fewer pulls than producers: ${JSON.stringify(calls)}`);
  assert.equal(debug.calls().pumps, 0, "every pump is forgotten");
  // A producer Go ends before its end is stopped by Go: a request the run's
  // close interrupts.
  const never = floe.createSession({
    meta: meta(),
    llm: {
      async *streamGenerate({ signal }) {
        yield* text("wait");
        await new Promise((resolve) => signal.addEventListener("abort", resolve));
      },
    },
    clock: instantClock(),
    config: { maxReconnects: 0 },
  });
  const before = debug.calls();
  const it = never.run("go")[Symbol.asyncIterator]();
  await it.next();
  await never.close();
  const after = debug.calls();
  assert.equal(after.stops - before.stops, 1, JSON.stringify({ before, after }));
  assert.equal(after.pumps, 0);
});

// A batch whose first message came waits for a macrotask to pass before it
// is delivered without more; one macrotask serves every waiting batch, and a
// batch delivered first (its producer ended, or it filled) takes its
// callback out: nothing holds a pump's state once it has stopped. When each
// batch had a macrotask of its own, a loop of runs that never yields to the
// event loop kept every pump alive until the loop turned.
test("a batch delivered before its macrotask leaves nothing waiting for it", async () => {
  const s = session();
  const msgs = await collect(s.run("go"));
  // Checked as the stream ends: 3 requests and 6 tool executions each
  // delivered their batches at their end, before any macrotask could run.
  assert.equal(debug.calls().ticking, 0, JSON.stringify(debug.calls()));
  await s.close();
  assert.ok(msgs.length > 40);
});

// Every resume starts with syscall/js reading go._pendingEvent; the shim
// answers the read itself when there is no event (the resumes of
// floe_call's calls), and leaves every other read to wasm_exec.js.
test("a resume without a pending event reads it through the shim's quick path", async () => {
  const { msgs, calls } = await run();
  assert.ok(msgs.length > 40);
  assert.ok(calls.resumes > 0, JSON.stringify(calls));
  assert.ok(calls.quickReads >= calls.resumes, `each resume's read answered: ${JSON.stringify(calls)}`);
  // js.Func calls carry a pending event: their reads are wasm_exec.js's,
  // and the run is the same.
  const slow = await runSlow();
  assert.ok(slow.calls.funcs > 0, JSON.stringify(slow.calls));
  assert.equal(slow.msgs.length, msgs.length);
});

test("a run gives the same stream through floe_call and through js.Func calls", async () => {
  const fast = await run();
  const slow = await runSlow();
  assert.equal(slow.calls.fast, 0);
  assert.ok(slow.calls.funcs > fast.calls.funcs, JSON.stringify(slow.calls));
  // Concurrent tools may interleave differently; each call's own messages,
  // and everything else, come in the same order.
  const byCall = (msgs) => {
    const out = {};
    for (const m of msgs) {
      const id = JSON.parse(m).payload?.tool_call_id ?? "-";
      (out[id] ??= []).push(m);
    }
    return out;
  };
  assert.deepEqual(byCall(fast.msgs), byCall(slow.msgs));
  assert.equal(fast.msgs.length, slow.msgs.length);
});

test("a long batch with every kind of character crosses whole", async () => {
  const piece = "aé日😀\ud800x"; // a lone surrogate becomes U+FFFD, as through any string crossing
  const long = piece.repeat(20000); // 140,000 UTF-16 units: the shim encodes it before asking for room
  const llm = {
    async *streamGenerate() {
      yield* text(long);
      yield usage();
    },
  };
  const s = floe.createSession({ meta: meta(), llm, clock: instantClock() });
  const msgs = await collect(s.run("go"));
  await s.close();
  const got = msgs.find((m) => m.payload?.type === "text")?.payload.text;
  assert.equal(got, long.replaceAll("\ud800", "\ufffd"));
  const delta = msgs.find((m) => m.payload?.event_type === "delta")?.payload.text;
  assert.equal(delta, got);
});

test("an export called while calls are queued makes them first", async () => {
  const s = floe.createSession({ meta: meta(), llm: { async *streamGenerate() { yield* text("hi"); yield usage(); } }, clock: instantClock() });
  const it = s.run("go")[Symbol.asyncIterator]();
  const first = it.next(); // queues the stream's pull, made at the end of this task
  const before = debug.calls();
  s.steer("more"); // an export: the queued pull is made (and run) before it, then steer and its own resume
  const after = debug.calls();
  assert.equal(after.resumes - before.resumes, 2, JSON.stringify({ before, after }));
  assert.equal(after.fast - before.fast, 2, JSON.stringify({ before, after }));
  assert.equal(after.funcs - before.funcs, 0, JSON.stringify({ before, after }));
  assert.equal((await first).done, false);
  for (let r = await it.next(); !r.done; r = await it.next());
  await s.close();
});

// Session.close is made through floe_call and a resume: a run in flight
// still ends with its abort, the session refuses a run after it, and no
// js.Func call is made.
test("close goes through floe_call and aborts the run in flight", async () => {
  const s = floe.createSession({
    meta: meta("session-close-fast"),
    llm: { async *streamGenerate() { yield* text("started"); await new Promise(() => {}); } },
    clock: instantClock(),
    config: { maxReconnects: 0 },
    abortGraceMs: 0,
  });
  const it = s.run("go")[Symbol.asyncIterator]();
  const seen = [(await it.next()).value];
  const before = debug.calls();
  const closed = s.close();
  for (let r = await it.next(); !r.done; r = await it.next()) seen.push(r.value);
  await closed;
  const after = debug.calls();
  assert.equal(after.funcs - before.funcs, 0, JSON.stringify({ before, after }));
  assert.ok(after.fast - before.fast >= 1, JSON.stringify({ before, after }));
  assert.equal(seen.at(-1).payload.type, "abort");
  assert.throws(() => s.run("again"), { code: "closed" });
  // The same id is free again: the bridge forgot the handle and the session.
  const again = floe.createSession({ meta: meta("session-close-fast"), llm: { async *streamGenerate() { yield* text("ok"); yield usage(); } }, clock: instantClock() });
  assert.equal(find(await collect(again.run("go")), "text")[0].payload.text, "ok");
  await again.close();
});

// The bridge's exports are called through floe_call too (op 4: arguments
// and result in the port's array, then a resume), except from inside a
// call of Go's, where a js.Func call is the only way in: a steer from an
// approver that decides at once.
test("exports go through floe_call while Go is idle and through js.Func calls from inside Go's calls", async () => {
  let steered;
  let turn = 0;
  const llm = {
    async *streamGenerate() {
      turn++;
      if (turn === 1) yield toolCall("c1", "work", "{}");
      else yield* text("done");
      yield usage();
      return { status: "completed" };
    },
  };
  const environment = { async *executeTool({ toolCall: tc }) { yield toolOutput(tc.payload.tool_call_id, "ok"); } };
  const before = debug.calls();
  const s = floe.createSession({ meta: meta("session-indexed"), llm, environment, clock: instantClock() });
  const created = debug.calls();
  assert.equal(created.fast - before.fast, 1, JSON.stringify({ before, created }));
  assert.equal(created.funcs - before.funcs, 0, JSON.stringify({ before, created }));
  const msgs = await collect(
    s.run("go", {
      approve: () => {
        const at = debug.calls().fast;
        steered = [s.steer("also this"), debug.calls().fast - at];
        return "allow";
      },
    }),
  );
  await s.close();
  assert.deepEqual(steered, [1, 0]); // its id, and made as a js.Func call, not through floe_call
  assert.ok(msgs.some((m) => m.payload?.type === "text" && m.payload.text.includes("also this")), JSON.stringify(msgs.map((m) => m.payload?.type)));
  // An export's error still comes back as the FloeError it was.
  assert.throws(() => s.run("again"), { code: "closed" });
  assert.throws(() => floe.createSession({ meta: { session_id: 5 }, llm }), { code: "bad_argument" });
});

// A queued batch or settle whose value the records do not carry (a
// model's outcome with more than its status, a clock's sleep resolving
// true) is made through floe_call's export call, inside the queue's
// resume, not a js.Func call; the stream is the same either way.
test("a batch's outcome and a settle of another value than a string go through floe_call", async () => {
  const runIt = async () => {
    let turn = 0;
    const llm = {
      async *streamGenerate() {
        turn++;
        yield* text(`try ${turn}`);
        yield usage();
        return turn === 1 ? { status: "failed", error_message: "first try fails" } : { status: "completed" };
      },
    };
    const before = debug.calls();
    const s = floe.createSession({ meta: meta("session-values"), llm, clock: instantClock(), config: { maxReconnects: 1, reconnectBackoffMs: 5 } });
    const msgs = await collect(s.run("go"));
    await s.close();
    const after = debug.calls();
    return { msgs: msgs.map((m) => JSON.stringify({ ...m, timestamp: undefined })), funcs: after.funcs - before.funcs, ends: find(msgs, "request_end").map((m) => m.payload.status) };
  };
  const fast = await runIt();
  assert.deepEqual(fast.ends, ["failed", "completed"]);
  assert.equal(fast.funcs, 0);
  debug.slowCalls(true);
  let slow;
  try {
    slow = await runIt();
  } finally {
    debug.slowCalls(false);
  }
  assert.ok(slow.funcs >= 2, `the outcome's batch and the sleep's settle as js.Func calls: ${slow.funcs}`);
  assert.deepEqual(slow.msgs, fast.msgs);
});
