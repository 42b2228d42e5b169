// The Cloudflare target with a provider model (FLOE_MODEL and the rest),
// under local workerd: the session object's fetch reaches a model server on
// 127.0.0.1 that replays recorded provider responses (the shared corpus,
// FLOE_SHARED or ../shared: every recorded text reply of each provider) and
// a hand-written tool conversation; a configuration the object cannot
// start with is named in the answer to every request.
// Build first: scripts/worker.sh build (scripts/worker.sh test does both).
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { get as httpGet } from "node:http";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { start, ports, modelServer } from "./workerd.mjs";
import { connect } from "../../static/connect.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const PROVIDERS = join(process.env.FLOE_SHARED ?? join(ROOT, "../shared"), "providers");
const tmp = mkdtempSync(join(tmpdir(), "floe-workerd-models-"));
const running = [];
after(async () => {
  for (const w of running) await w.stop();
  rmSync(tmp, { recursive: true, force: true });
});
const nextPort = ports(8830, 8859); // this file's block: worker.test.mjs 8800-8829, models.test.mjs 8830-8859, cors.test.mjs 8860-8869
async function worker(vars) {
  const w = await start({ port: nextPort(), storage: mkdtempSync(join(tmp, "s-")), token: "tok", vars, loopback: true });
  running.push(w);
  return w;
}

async function createSession(w, body = { approvalMode: "ask" }) {
  const resp = await fetch(w.url + "/api/sessions", {
    method: "POST",
    headers: { Authorization: "Bearer tok", "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: resp.status, json: await resp.json() };
}

const textOf = (ms) =>
  ms
    .filter((m) => m.type === "model_msg" && m.payload.type === "text" && m.payload.role === "assistant")
    .map((m) => m.payload.text)
    .join("");

// The corpus's recorded text replies: a completed outcome, a text, no tool call.
const cases = readdirSync(PROVIDERS)
  .filter((f) => f.endsWith(".json"))
  .map((f) => JSON.parse(readFileSync(join(PROVIDERS, f), "utf8")))
  .filter((c) => c.label === "recorded" && c.response.status === 200 && c.expect.outcome?.status === "completed")
  .filter((c) => typeof c.expect.text === "string" && !(c.expect.tool_calls?.length > 0));

const providers = [
  // provider of the corpus, FLOE_MODEL, the path the adapter posts to, the key's header
  ["openai-chat", "openai-compatible", "/v1/chat/completions", (h) => h.authorization, "Bearer "],
  ["openai-responses", "openai-responses", "/v1/responses", (h) => h.authorization, "Bearer "],
  ["anthropic", "anthropic", "/v1/messages", (h) => h["x-api-key"], ""],
];

for (const [provider, model, path, key, prefix] of providers) {
  test(`FLOE_MODEL=${model}: the recorded text replies of the corpus, streamed from the object`, async () => {
    const mine = cases.filter((c) => c.provider === provider);
    assert.ok(mine.length > 0, `no recorded text reply of ${provider} in ${PROVIDERS}`);
    const ms = await modelServer();
    const w = await worker({
      FLOE_MODEL: model,
      FLOE_MODEL_ID: "test-model",
      FLOE_BASE_URL: ms.url + "/v1",
      FLOE_API_KEY_ENV: "MODEL_KEY",
      MODEL_KEY: "sk-test",
    });
    for (const c of mine) {
      const { status, json } = await createSession(w);
      assert.equal(status, 201, JSON.stringify(json));
      const s = connect(w.url, json.id, { token: "tok" });
      ms.replies.push(c.response);
      const got = [];
      for await (const m of s.run("Say something.", { approve: async () => "allow" })) got.push(m);
      const req = ms.seen.at(-1);
      assert.equal(req.path, path, c.name);
      assert.equal(key(req.headers), prefix + "sk-test", c.name);
      assert.equal(JSON.parse(req.body).model, "test-model", c.name);
      assert.ok(req.body.includes("Say something."), c.name);
      assert.equal(textOf(got), c.expect.text, c.name);
      const end = got.at(-1);
      assert.equal(end.payload.type, "request_end", c.name);
      const meta = (await s.history()).messages[0];
      assert.equal(meta.payload.provider, model, c.name);
      assert.equal(meta.payload.model_id, "test-model", c.name);
      s.close();
    }
    assert.equal(ms.seen.length, mine.length);
  });
}

const chunk = (delta, finish = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-t", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const sse = (...parts) => ({ status: 200, headers: { "content-type": "text/event-stream" }, body: parts.join("") + "data: [DONE]\n\n" });

test("a provider model's tool call: approved over HTTP, run in the object's workspace, its output sent back", async () => {
  const ms = await modelServer();
  const w = await worker({ FLOE_MODEL: "openai-compatible", FLOE_MODEL_ID: "m", FLOE_BASE_URL: ms.url + "/v1" });
  ms.replies.push(
    sse(
      chunk({ role: "assistant", content: "Looking." }),
      chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "list_files", arguments: "{}" } }] }),
      chunk({}, "tool_calls"),
    ),
    sse(chunk({ role: "assistant", content: "Three files." }), chunk({}, "stop")),
  );
  const { json } = await createSession(w);
  const s = connect(w.url, json.id, { token: "tok" });
  const asked = [];
  const got = [];
  for await (const m of s.run("What files are there?", { approve: async (call) => (asked.push(call.payload.name), "allow") })) got.push(m);
  assert.deepEqual(asked, ["list_files"]);
  assert.equal(textOf(got), "Looking.Three files.");
  const out = got.find((m) => m.payload.type === "tool_call_output");
  assert.ok(out && out.payload.tool_call_id === "call_1" && out.payload.output.includes("main.go"), JSON.stringify(out));
  assert.equal(ms.seen.length, 2);
  assert.equal(ms.seen[0].headers.authorization, undefined, "openai-compatible sends no key unless FLOE_API_KEY_ENV names one");
  const second = JSON.parse(ms.seen[1].body);
  const tool = second.messages.find((m) => m.role === "tool");
  assert.equal(tool?.tool_call_id, "call_1");
  assert.equal(tool.content, out.payload.output);
  assert.deepEqual(textOf((await s.history()).messages), "Looking.Three files.");
  s.close();
});

test("a configuration the object cannot start with is named in the answer", async () => {
  const w = await worker({ FLOE_MODEL: "anthropic", FLOE_MODEL_ID: "claude" }); // no ANTHROPIC_API_KEY
  let r = await createSession(w);
  assert.equal(r.status, 500);
  assert.equal(r.json.error.code, "configuration");
  assert.match(r.json.error.message, /FLOE_MODEL=anthropic: the secret ANTHROPIC_API_KEY is empty or unset \(set it, or name another with FLOE_API_KEY_ENV\)/);
  const w2 = await worker({ FLOE_MODEL: "gpt" });
  r = await createSession(w2);
  assert.equal(r.status, 500);
  assert.match(r.json.error.message, /FLOE_MODEL="gpt": want scripted, openai, openai-compatible, openai-responses or anthropic/);
  const w3 = await worker({ FLOE_MODEL: "openai", FLOE_BASE_URL: "api.openai.com" });
  r = await createSession(w3);
  assert.match(r.json.error.message, /FLOE_MODEL_ID: required with FLOE_MODEL=openai/);
  // The scripted model takes no provider setting.
  const w4 = await worker({ FLOE_MODEL_ID: "m" });
  r = await createSession(w4);
  assert.match(r.json.error.message, /FLOE_MODEL_ID: only with a provider model \(FLOE_MODEL=scripted is offline\)/);
  // The other variables are refused naming themselves, as the native
  // server's flags are: FLOE_MODE named Go's Config before, and numbers
  // that were not (NaN, negative) were taken.
  const w5 = await worker({ FLOE_MODE: "yolo", FLOE_DELAY_MS: "fast" });
  r = await createSession(w5);
  assert.equal(r.json.error.code, "configuration");
  assert.match(r.json.error.message, /FLOE_DELAY_MS="fast": want a number from 0 to 60000/);
  const w6 = await worker({ FLOE_MODE: "yolo" });
  r = await createSession(w6);
  assert.match(r.json.error.message, /FLOE_MODE="yolo": want ask, allow-all, deny-all or read-only$/);
  const w7 = await worker({ FLOE_REPLAY_EVENTS: "-1" });
  r = await createSession(w7);
  assert.match(r.json.error.message, /FLOE_REPLAY_EVENTS="-1": want a whole number from 0 to 10000000/);
});

test("FLOE_IDLE_TIMEOUT_MS: a provider that goes silent after its headers ends the request as timeout, and the retry answers", async () => {
  const ms = await modelServer();
  const w = await worker({ FLOE_MODEL: "openai-compatible", FLOE_MODEL_ID: "m", FLOE_BASE_URL: ms.url + "/v1", FLOE_IDLE_TIMEOUT_MS: "300" });
  ms.replies.push(
    { status: 200, headers: { "content-type": "text/event-stream" }, body: "data: " + JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { role: "assistant", content: "Hel" }, finish_reason: null }] }) + "\n\n", hold: true },
    sse(chunk({ role: "assistant", content: "Hello." }), chunk({}, "stop")),
  );
  const { json } = await createSession(w);
  const s = connect(w.url, json.id, { token: "tok" });
  const ends = [];
  const got = [];
  for await (const m of s.run("hi", { approve: async () => "allow" })) {
    got.push(m);
    if (m.payload.type === "request_end") {
      ends.push([m.payload.status, m.payload.error_message ?? ""]);
      if (m.payload.retry_in_ms) await s.retryNow(); // or the 2 s backoff, if the wait had not begun
    }
  }
  assert.deepEqual(ends, [["timeout", "openai: no data from the server for 300ms (the idle timeout)"], ["completed", ""]]);
  const texts = got.filter((m) => m.type === "model_msg" && m.payload.type === "text" && m.payload.role === "assistant");
  assert.deepEqual(texts.map((m) => [m.payload.text, m.payload.stop_reason]), [["Hel", "timeout"], ["Hello.", "completed"]]);
  s.close();
});

test("a provider's redirect is not followed: the key goes only to the URL it was sent to", async () => {
  const ms = await modelServer();
  const w = await worker({ FLOE_MODEL: "openai", FLOE_MODEL_ID: "m", FLOE_BASE_URL: ms.url + "/v1", OPENAI_API_KEY: "sk-test" });
  ms.replies.push({ status: 302, headers: { location: ms.url + "/elsewhere" }, body: "" });
  const { json } = await createSession(w);
  const s = connect(w.url, json.id, { token: "tok" });
  const run = s.run("hi", { approve: async () => "allow" });
  let end;
  for await (const m of run) {
    if (m.payload.type === "request_end") {
      end = m;
      break; // the engine would retry: one failed request is what this test reads
    }
  }
  assert.equal(end.payload.status, "failed");
  assert.equal(end.payload.retry_in_ms, undefined, "a redirect is permanent: not retried");
  assert.match(end.payload.error_message, /HTTP 302: the server redirected to http:\/\/127\.0\.0\.1:\d+\/elsewhere, not followed/);
  assert.ok(ms.seen.length >= 1 && ms.seen.every((r) => r.path === "/v1/chat/completions"), JSON.stringify(ms.seen.map((r) => r.path)));
  await s.abort();
  s.close();
});

test("a client that stops reading its stream is disconnected, as on the native server, and can come back", { timeout: 120_000 }, async () => {
  // A long answer (150,000 deltas, some 30 MB of events) while the one
  // subscriber reads nothing: once the kernel's and workerd's buffers and
  // the object's 8 MiB mark are full, the server's write waits, and the
  // subscriber is dropped at FLOE_WRITE_TIMEOUT_MS or once it is 4,096
  // events behind, as on the native server. Before, the object queued
  // every event for it (28.5 MB) and the stream never ended.
  const N = 150_000;
  const ms = await modelServer();
  const w = await worker({ FLOE_MODEL: "openai-compatible", FLOE_MODEL_ID: "m", FLOE_BASE_URL: ms.url + "/v1", FLOE_WRITE_TIMEOUT_MS: "500" });
  const one = chunk({ content: "abcdefghij" });
  ms.replies.push(sse(chunk({ role: "assistant", content: "" }) + one.repeat(N), chunk({}, "stop")));
  const { json } = await createSession(w);
  const auth = { Authorization: "Bearer tok" };
  const paused = await new Promise((resolve, reject) => {
    const req = httpGet(`${w.url}/api/sessions/${json.id}/stream`, { headers: auth }, (res) => {
      res.pause();
      resolve(res);
    });
    req.on("error", reject);
  });
  assert.equal(paused.statusCode, 200);
  const task = await fetch(`${w.url}/api/sessions/${json.id}/tasks`, {
    method: "POST",
    headers: { ...auth, "Content-Type": "application/json" },
    body: JSON.stringify({ input: "Go on." }),
  });
  assert.equal(task.status, 202, await task.text());
  // The run goes on without the subscriber: wait until it is over.
  for (;;) {
    const s = await (await fetch(`${w.url}/api/sessions/${json.id}`, { headers: auth })).json();
    if (s.state === "idle") break;
    await new Promise((r) => setTimeout(r, 100));
  }
  // Read what was queued: the stream ends, before the run's last events.
  let text = "";
  paused.setEncoding("utf8");
  paused.on("data", (d) => (text += d));
  await new Promise((resolve, reject) => {
    paused.on("end", resolve);
    paused.on("error", reject);
    paused.resume();
  });
  const ids = [...text.matchAll(/^id: (\S+)$/gm)].map((m) => m[1]);
  assert.ok(ids.length > 0, "the subscriber got nothing before it was dropped");
  assert.ok(!text.includes('"request_end"'), "the dropped subscriber got the whole run");
  // It comes back with its Last-Event-ID: the rest, or resync_required when
  // the buffer no longer holds it; either way the history has every delta.
  const back = await fetch(`${w.url}/api/sessions/${json.id}/stream`, { headers: { ...auth, "Last-Event-ID": ids.at(-1) } });
  assert.equal(back.status, 200);
  const reader = back.body.getReader();
  const { value } = await reader.read();
  assert.ok(value && value.length > 0);
  reader.cancel();
  const history = await (await fetch(`${w.url}/api/sessions/${json.id}/messages`, { headers: auth })).json();
  assert.equal(textOf(history.messages), "abcdefghij".repeat(N));
});

test("FLOE_GEMINI: openai-compatible speaks Gemini's dialect at a proxy's URL, sending a tool call's thought signature back", async () => {
  const ms = await modelServer();
  const w = await worker({ FLOE_MODEL: "openai-compatible", FLOE_MODEL_ID: "gemini-3-flash-preview", FLOE_BASE_URL: ms.url + "/v1beta/openai", FLOE_GEMINI: "true" });
  const call = { extra_content: { google: { thought_signature: "c2lnLTE=" } }, function: { arguments: "{}", name: "list_files" }, id: "function-call-1", type: "function" };
  ms.replies.push(sse(chunk({ role: "assistant", tool_calls: [call] }, "tool_calls")), sse(chunk({ role: "assistant", content: "Listed." }, "stop")));
  const { json } = await createSession(w);
  const s = connect(w.url, json.id, { token: "tok" });
  let text = "";
  for await (const m of s.run("List the files.", { approve: async () => "allow" })) {
    if (m.type === "model_msg" && m.payload.type === "text" && m.payload.role === "assistant") text += m.payload.text;
  }
  s.close();
  assert.equal(text, "Listed.");
  assert.equal(ms.seen.length, 2);
  const sent = JSON.parse(ms.seen[1].body).messages.find((m) => m.role === "assistant");
  assert.deepEqual(sent.tool_calls[0].extra_content, call.extra_content);
  const w2 = await worker({ FLOE_MODEL: "anthropic", FLOE_MODEL_ID: "m", ANTHROPIC_API_KEY: "k", FLOE_GEMINI: "true" });
  const r = await createSession(w2);
  assert.match(r.json.error.message, /FLOE_GEMINI: only with FLOE_MODEL=openai or openai-compatible/);
});
