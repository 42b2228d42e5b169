// Promises of the README and floe.d.ts that no other test pinned: each
// assertion fails when the promise breaks.
import { test } from "node:test";
import assert from "node:assert/strict";
import { floe, collect, find } from "./helpers.mjs";
import { transcript, msg } from "../../static/floe-node.mjs";
import { mockModel } from "../../static/test.mjs";

const fast = { reconnectBackoffMs: 0, reconnectBackoffMaxMs: 0 };
const lastReason = async (llm, config = fast) => (await collect(floe.createSession({ llm, store: false, config }).run("x"))).at(-1).payload.reason;

test("README: the abort of exhausted retries names the last status (E-10.3): malformed, timeout, a thrown non-Error as String(value)", async () => {
  assert.equal(await lastReason({ async *streamGenerate() { yield { garbage: true }; } }), "malformed response failed after 5 retries");
  assert.equal(await lastReason({ async *streamGenerate() { return { status: "timeout", errorMessage: "slow" }; } }), "reconnect failed after 5 retries");
  const once = { ...fast, maxReconnects: 1 };
  assert.equal(await lastReason({ async *streamGenerate() { throw { message: "objmsg" }; } }, once), "llm request failed after 1 retries: [object Object]");
  assert.equal(await lastReason({ async *streamGenerate() { throw null; } }, once), "llm request failed after 1 retries: null");
});

test("floe.d.ts: run() throws session_busy while a manual compaction is in flight; close() returns the same promise every call", async () => {
  const session = floe.createSession({
    llm: mockModel(["a", "[summary]short[/summary]"]),
    newLLM: () => mockModel(["fresh"]),
    config: { compaction: { mode: "summarize", prompt: "Summarize." } },
    store: false,
  });
  await collect(session.run("hello"));
  const compaction = session.compact();
  assert.equal((await compaction.next()).value.payload.type, "compaction_begin");
  assert.throws(() => session.run("again"), { code: "session_busy" });
  await collect(compaction);
  const closing = session.close();
  assert.equal(session.close(), closing);
  await closing;
});

test("floe.d.ts: skipReconnectWait() during a backoff returns true and the retry runs at once", async () => {
  let n = 0;
  const llm = { async *streamGenerate() { if (n++ === 0) return { status: "failed", errorMessage: "once" }; yield msg.text("back"); } };
  const session = floe.createSession({ llm, store: false, config: { reconnectBackoffMs: 3_600_000, reconnectBackoffMaxMs: 3_600_000 } });
  const seen = [];
  let skipping;
  for await (const m of session.run("x")) {
    seen.push(m);
    if (m.payload.type === "request_end" && m.payload.status === "failed") {
      assert.equal(m.payload.retry_in_ms, 3_600_000);
      // The engine sleeps once this message is taken (E-3.2): ask, beside
      // the loop, until the wait is there (an hour's backoff otherwise).
      skipping = (async () => {
        for (let i = 0; i < 100_000; i++) {
          if (session.skipReconnectWait()) return true;
          await new Promise((r) => setImmediate(r));
        }
        return false;
      })();
    }
  }
  assert.equal(await skipping, true);
  assert.deepEqual(find(seen, "request_end").map((m) => m.payload.status), ["failed", "completed"]);
  await session.close();
});

test("README: approvals are asked one at a time, in call order, even when the approver is slow", async () => {
  const calls = ["c1", "c2", "c3", "c4"].map((id) => ({ toolCall: { name: "t", id } }));
  const order = [];
  let inFlight = 0;
  let most = 0;
  const approve = async (call) => {
    inFlight++;
    most = Math.max(most, inFlight);
    order.push(call.payload.tool_call_id);
    await new Promise((r) => setTimeout(r, 5)); // a person taking time, not ordering events
    inFlight--;
    return "deny";
  };
  await collect(floe.createSession({ llm: mockModel([calls, "ok"]), store: false }).run("x", { approve }));
  assert.deepEqual(order, ["c1", "c2", "c3", "c4"]);
  assert.equal(most, 1);
});

test("transcript(): usage is the session's last token counts, each turn its usage and attempt; subscribe() returns its unsubscribe; sub-transcripts nest", async () => {
  const view = transcript();
  const out = await collect(floe.createSession({ llm: mockModel([{ error: "overloaded" }, "ok"]), store: false, config: fast }).run("x"));
  let calls = 0;
  const off = view.subscribe(() => calls++);
  for (const m of out.slice(0, 3)) view.push(m);
  const seen = calls;
  assert.ok(seen > 0);
  off();
  for (const m of out.slice(3)) view.push(m);
  assert.equal(calls, seen, "callbacks after unsubscribe");
  const usage = find(out, "token_usage").at(-1).payload.session;
  assert.deepEqual(view.usage, usage);
  assert.deepEqual(view.turns.map((t) => t.attempt), [1, 2]);
  assert.deepEqual(view.turns.at(-1).usage, find(out, "token_usage").at(-1).payload.request);
  // a grandchild's messages are a sub-transcript of the child's
  const nested = transcript();
  nested.push({ type: "event_msg", payload: { type: "request_begin" } });
  for (const m of [msg.text("deep")]) nested.push({ ...m, origin: ["child", "grand"] });
  assert.equal(nested.subagents.get("child").subagents.get("grand").text, "deep");
});

test("floe.d.ts: a model needs apiKey unless baseURL is given (a proxy that adds it)", () => {
  for (const make of [floe.openai, floe.openaiResponses, floe.anthropic]) {
    assert.doesNotThrow(() => make({ model: "m", baseURL: "http://127.0.0.1:9/v1" }));
    assert.throws(() => make({ model: "m" }), { code: "bad_argument" });
  }
});

test("README: the adapters' defaults on the wire: the base URLs, anthropic-version 2023-06-01, max_tokens 8192, store false", async () => {
  const seen = [];
  const fetch = async (url, init) => {
    seen.push({ url: String(url), headers: Object.fromEntries(new Headers(init.headers)), body: JSON.parse(init.body) });
    return new Response('{"error":{"message":"no","type":"authentication_error"}}', { status: 401, headers: { "content-type": "application/json" } });
  };
  for (const llm of [floe.anthropic({ apiKey: "k", model: "c", fetch }), floe.openaiResponses({ apiKey: "k", model: "r", fetch }), floe.openai({ apiKey: "k", model: "o", fetch })]) {
    await collect(floe.createSession({ llm, store: false }).run("hi"));
  }
  assert.deepEqual(seen.map((r) => r.url), ["https://api.anthropic.com/v1/messages", "https://api.openai.com/v1/responses", "https://api.openai.com/v1/chat/completions"]);
  assert.equal(seen[0].headers["anthropic-version"], "2023-06-01");
  assert.equal(seen[0].body.max_tokens, 8192);
  assert.equal(seen[1].body.store, false);
});

test("PROTOCOL.md P-5: a model's token_usage keeps its own keys, beside the payload's and inside its counts, in the stream and the Trace", async () => {
  const counts = { cache_read: 1, cache_write: 2, output: 3, total: 10, input: 4, details: { reasoning: 1 } };
  const llm = {
    async *streamGenerate() {
      yield { type: "model_msg", payload: { type: "text", role: "assistant", text: "hi", stop_reason: "completed" } };
      yield { type: "event_msg", payload: { type: "token_usage", provider: "p", session: counts, request: { total: 7, input: 6 } } };
    },
  };
  const traced = [];
  const session = floe.createSession({ llm, store: false, trace: { write: (r) => traced.push(typeof r === "string" ? JSON.parse(r) : r) } });
  const [streamed] = find(await collect(session.run("x")), "token_usage");
  const want = { type: "token_usage", session: counts, request: { cache_read: 0, cache_write: 0, output: 0, total: 7, input: 6 }, provider: "p" };
  assert.deepEqual(streamed.payload, want);
  await session.close();
  assert.deepEqual(traced.filter((r) => r.payload?.type === "token_usage").map((r) => r.payload), [want]);
});
