// The Cloudflare target as an operator meets it, under local workerd: a
// provider model on a loopback server, records past the platform's SQL
// limits (tests/worker/sql-limits.mjs stands in for them), restarts, tokens
// and several sessions.
// Build first: scripts/worker.sh build (scripts/worker.sh test does both).
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { start, ports, modelServer } from "./workerd.mjs";
import { connect } from "../../static/connect.mjs";

const tmp = mkdtempSync(join(tmpdir(), "floe-workerd-operator-"));
const running = [];
after(async () => {
  for (const w of running) await w.stop();
  rmSync(tmp, { recursive: true, force: true });
});
const nextPort = ports(8870, 8899); // this file's block: worker.test.mjs 8800-8829, models.test.mjs 8830-8859, cors.test.mjs 8860-8869, operator.test.mjs 8870-8899
async function worker(opts) {
  const w = await start({ port: nextPort(), storage: mkdtempSync(join(tmp, "s-")), token: "tok", loopback: true, ...opts });
  running.push(w);
  return w;
}

const chunk = (delta, finish = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-t", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const sse = (...parts) => ({ status: 200, headers: { "content-type": "text/event-stream" }, body: parts.join("") + "data: [DONE]\n\n" });
const call = (id, name, args) => chunk({ tool_calls: [{ index: 0, id, type: "function", function: { name, arguments: JSON.stringify(args) } }] });

async function api(w, method, path, body, token = "tok") {
  const headers = { Authorization: `Bearer ${token}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const resp = await fetch(w.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await resp.text();
  return { status: resp.status, json: text ? JSON.parse(text) : undefined };
}

const model = (ms) => ({ FLOE_MODEL: "openai-compatible", FLOE_MODEL_ID: "m", FLOE_BASE_URL: ms.url + "/v1" });

test("records past Cloudflare's 2 MB row: a reply, tool call and tool output of over 2 MB each are kept whole, and resumed after a restart", { timeout: 300_000 }, async () => {
  const ms = await modelServer();
  const storage = mkdtempSync(join(tmp, "big-"));
  const port = nextPort();
  const opts = { port, storage, vars: model(ms), sqlLimits: true, mode: "allow-all" };
  const w = await worker(opts);
  const { json } = await api(w, "POST", "/api/sessions", {});
  // Multi-byte characters, so that a split at a byte count falls inside one.
  // Each just past the 2 MB that sql-limits.mjs refuses in one row, as
  // Cloudflare does: larger only cost the Go code's JSON and the SQL more
  // processor time (at 3.3 MB, two thirds of this file's).
  const reply = "ab€😀".repeat(240_000); // 2.16 MB of UTF-8
  const content = "é".repeat(1_080_000); // 2.16 MB
  ms.replies.push(
    sse(chunk({ role: "assistant", content: reply }), call("call_w", "write_file", { path: "big.txt", content }), chunk({}, "tool_calls")),
    sse(chunk({ role: "assistant", content: "" }), call("call_r", "read_file", { path: "big.txt" }), chunk({}, "tool_calls")),
    sse(chunk({ role: "assistant", content: "Done." }), chunk({}, "stop")),
  );
  const s = connect(w.url, json.id, { token: "tok" });
  const got = [];
  for await (const m of s.run("Write a big file.")) got.push(m);
  s.close();
  assert.equal(got.at(-1).payload.type, "request_end");
  assert.equal(got.at(-1).payload.status, "completed");
  const check = (messages, where) => {
    const texts = messages.filter((m) => m.type === "model_msg" && m.payload.type === "text" && m.payload.role === "assistant").map((m) => m.payload.text);
    assert.ok(texts.includes(reply), `${where}: the 2 MB reply is not in the history (${texts.map((t) => t.length)})`);
    const write = messages.find((m) => m.payload.type === "tool_call" && m.payload.tool_call_id === "call_w");
    assert.ok(write && JSON.parse(write.payload.arguments).content === content, `${where}: the 2 MB tool call`);
    const read = messages.find((m) => m.payload.type === "tool_call_output" && m.payload.tool_call_id === "call_r");
    assert.ok(read && read.payload.output.includes(content), `${where}: the 2 MB tool output`);
    assert.equal(messages.filter((m) => m.payload.type === "request_end" && m.payload.status === "completed").length, 3, where);
  };
  check((await api(w, "GET", `/api/sessions/${json.id}/messages`)).json.messages, "before the restart");
  await w.stop();
  const w2 = await worker(opts);
  check((await api(w2, "GET", `/api/sessions/${json.id}/messages`)).json.messages, "after the restart");
  // The resumed session hands the whole history to the model.
  ms.replies.push(sse(chunk({ role: "assistant", content: "Again." }), chunk({}, "stop")));
  const s2 = connect(w2.url, json.id, { token: "tok" });
  const again = [];
  for await (const m of s2.run("Once more.")) again.push(m);
  s2.close();
  assert.equal(again.at(-1).payload.status, "completed");
  const sent = JSON.parse(ms.seen.at(-1).body).messages;
  assert.ok(sent.some((m) => m.role === "assistant" && m.content === reply), "the resumed context lost the 2 MB reply");
  assert.ok(sent.some((m) => m.role === "tool" && m.tool_call_id === "call_r" && m.content.includes(content)), "the resumed context lost the 2 MB tool output");
});

test("a misspelt variable is named in the answer to every request, FLOE_TOKN first of all", async () => {
  // Before, FLOE_TOKN was ignored and the API was open to whoever had the URL.
  const w = await worker({ token: "", vars: { FLOE_TOKN: "tok" } });
  for (const [method, path, token] of [["POST", "/api/sessions", ""], ["GET", "/api/sessions", "tok"], ["GET", "/api/sessions/x/stream", ""]]) {
    const r = await api(w, method, path, method === "POST" ? {} : undefined, token);
    assert.equal(r.status, 500, `${method} ${path}`);
    assert.deepEqual(r.json.error, { code: "configuration", message: "the Worker cannot start: FLOE_TOKN: not a variable of Floe's Worker (did you mean FLOE_TOKEN?)" });
  }
  const w2 = await worker({ vars: { FLOE_MODLE: "openai" } });
  assert.match((await api(w2, "POST", "/api/sessions", {})).json.error.message, /FLOE_MODLE: not a variable of Floe's Worker \(did you mean FLOE_MODE or FLOE_MODEL\?\)$/);
  const w3 = await worker({ vars: { FLOE_SOMETHING_ELSE: "1" } });
  assert.match((await api(w3, "GET", "/api/sessions")).json.error.message, /FLOE_SOMETHING_ELSE: not a variable of Floe's Worker \(it reads FLOE_TOKEN, FLOE_ORIGINS, /);
  // Another case, a hyphen, or a space around the name is a misspelling
  // too: each left FLOE_TOKEN unset, and the API open, without a word.
  for (const [name, shown] of [["floe_token", "floe_token"], ["Floe-Token", '"Floe-Token"'], ["FLOE_TOKEN ", '"FLOE_TOKEN "']]) {
    const w5 = await worker({ token: "", vars: { [name]: "tok" } });
    const r = await api(w5, "GET", "/api/sessions", undefined, "tok");
    assert.equal(r.status, 500, name);
    assert.equal(r.json.error.message, `the Worker cannot start: ${shown}: not a variable of Floe's Worker (did you mean FLOE_TOKEN?)`);
  }
  // The secret FLOE_API_KEY_ENV names may have any name, FLOE_ or not.
  const w4 = await worker({ vars: { FLOE_MODEL: "openai", FLOE_MODEL_ID: "m", FLOE_API_KEY_ENV: "FLOE_OPENAI_KEY", FLOE_OPENAI_KEY: "sk" } });
  assert.equal((await api(w4, "POST", "/api/sessions", {})).status, 201);
});

test("without FLOE_TOKEN the API is open; a FLOE_TOKEN no request can match (a line feed at its end) is named in the answer to every request and in /readyz", async () => {
  // Its log says so once per isolate (before, it said nothing), and
  // only then: with a FLOE_TOKEN it says nothing of the kind.
  const logs = [];
  const open = await worker({ token: "", logs });
  assert.equal((await fetch(open.url + "/api/sessions", { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" })).status, 201);
  assert.equal((await fetch(open.url + "/api/sessions")).status, 200);
  assert.equal((await fetch(open.url + "/api/sessions/none")).status, 404);
  await open.stop(); // what it printed is all in logs once it is closed
  const warning = "floe: FLOE_TOKEN is unset: the API answers whoever has the Worker's URL (npx wrangler secret put FLOE_TOKEN)\n";
  assert.equal(logs.join("").split(warning).length - 1, 1, `want the warning once: ${logs.join("").slice(0, 2000)}`);
  const closedLogs = [];
  const closed = await worker({ logs: closedLogs });
  assert.equal((await api(closed, "POST", "/api/sessions", {})).status, 201);
  await closed.stop();
  assert.doesNotMatch(closedLogs.join(""), /FLOE_TOKEN is unset/);
  // Before, it refused every request, 401 "missing or wrong bearer
  // token", whatever the client sent: floe-server refuses such a --token
  // at its start, naming it.
  const w = await worker({ token: "tok\n" });
  for (const [method, path, token] of [["POST", "/api/sessions", "tok"], ["GET", "/api/sessions", "tok"], ["GET", "/api/sessions/x/stream", ""]]) {
    const r = await api(w, method, path, method === "POST" ? {} : undefined, token);
    assert.equal(r.status, 500, `${method} ${path}`);
    assert.deepEqual(r.json.error, {
      code: "configuration",
      message: "the Worker cannot start: FLOE_TOKEN: the token starts or ends with white space (a line feed from where it was copied?), which no Authorization header carries: every request would be refused",
    });
  }
  assert.equal((await fetch(w.url + "/readyz")).status, 503);
});

test("a Trace write the storage refuses is in the Worker's log, and the run goes on", async () => {
  // Before, the object dropped its diagnostics: records were lost without a word.
  const logs = [];
  const w = await worker({ sqlLimits: true, logs, mode: "allow-all", vars: { TEST_SQL_QUOTA: "4000" } });
  const { json } = await api(w, "POST", "/api/sessions", {});
  const s = connect(w.url, json.id, { token: "tok" });
  const got = [];
  for await (const m of s.run("Count the lines of main.go")) got.push(m);
  s.close();
  assert.equal(got.at(-1).payload.status, "completed");
  const warned = logs.join("").match(/floe: trace: .*database or disk is full: SQLITE_FULL/);
  assert.ok(warned, `no warning in the log: ${logs.join("").slice(0, 2000)}`);
  assert.match(warned[0], new RegExp(json.id), "the warning names the session");
});

test("a session the list's storage refuses is in the Worker's log, naming it; the session is made all the same", { timeout: 60_000 }, async () => {
  // index-full.mjs: the object "index" cannot write its list. Before, the
  // front dropped the failure: the session was never listed, and nothing
  // said why (this test's timeout ended it, waiting for the line).
  const logs = [];
  const waiters = [];
  logs.push = (...xs) => (Array.prototype.push.apply(logs, xs), waiters.splice(0).forEach((w) => w()), logs.length);
  const logged = async (re) => {
    while (!re.test(logs.join(""))) await new Promise((resolve) => waiters.push(resolve));
  };
  const w = await worker({ main: "index-full.mjs", logs });
  assert.equal((await api(w, "POST", "/api/sessions", { id: "unlisted" })).status, 201);
  assert.equal((await api(w, "GET", "/api/sessions/unlisted")).status, 200);
  await logged(/floe: the session list: adding "unlisted": database or disk is full: SQLITE_FULL\n/);
  assert.equal((await api(w, "DELETE", "/api/sessions/unlisted")).status, 204);
  await logged(/floe: the session list: removing "unlisted": database or disk is full: SQLITE_FULL\n/);
});

test("a record split where a U+FEFF starts a row keeps it, after a restart too", { timeout: 120_000 }, async () => {
  // Every cut of this reply's record falls before a U+FEFF: the Worker's
  // wasm_exec.js decoded each Go string handed to the SQL API with a
  // TextDecoder that drops a leading one, and the reply came back shorter.
  const ms = await modelServer();
  const opts = { port: nextPort(), storage: mkdtempSync(join(tmp, "bom-")), vars: model(ms), sqlLimits: true };
  const w = await worker(opts);
  const { json } = await api(w, "POST", "/api/sessions", {});
  const reply = "\ufeff".repeat(400_000); // 1.2 MB of UTF-8: two rows
  ms.replies.push(sse(chunk({ role: "assistant", content: reply }), chunk({}, "stop")));
  const s = connect(w.url, json.id, { token: "tok" });
  for await (const m of s.run("Mark it.")) void m;
  s.close();
  await w.stop();
  const w2 = await worker(opts);
  const texts = (await api(w2, "GET", `/api/sessions/${json.id}/messages`)).json.messages.filter((m) => m.payload.type === "text" && m.payload.role === "assistant").map((m) => m.payload.text.length);
  assert.deepEqual(texts, [reply.length]);
});

test("FLOE_MAX_IMAGES, FLOE_MAX_IMAGE_BYTES and FLOE_NO_IMAGES are the Worker's variables: the object reads them", async () => {
  // Before, each was refused as a misspelling ("not a variable of Floe's
  // Worker"), and every request answered with a 500.
  const img = (n) => ({ type: "model_msg", payload: { type: "image_url", role: "user", image_url: "data:image/png;base64,iVBORw0KGgo" + "A".repeat(n) } });
  const input = [{ type: "model_msg", payload: { type: "text", role: "user", text: "Look." } }, img(1), img(2)];
  for (const [vars, sent, text] of [
    [{ FLOE_MAX_IMAGES: "1", FLOE_MAX_IMAGE_BYTES: "1000000" }, 1, "[image omitted: "],
    [{ FLOE_NO_IMAGES: "true" }, 0, "[image not sent: the model takes no images]"],
  ]) {
    const ms = await modelServer();
    ms.replies.push(sse(chunk({ role: "assistant", content: "Seen." }), chunk({}, "stop")));
    const w = await worker({ vars: { ...model(ms), ...vars } });
    const created = await api(w, "POST", "/api/sessions", { approvalMode: "allow-all" });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const s = connect(w.url, created.json.id, { token: "tok" });
    for await (const m of s.run(input)) void m;
    s.close();
    assert.equal(ms.seen.length, 1);
    const body = ms.seen[0].body;
    assert.equal(body.split('"image_url":{"url":"data:image/png').length - 1, sent, body);
    assert.ok(body.includes(text), body);
  }
});

test("FLOE_STARTS_IN_THINKING is the Worker's variable: a reply of reasoning…</think>answer is thinking, then text; a bad value or model is refused naming it", async () => {
  // A variable missing from VARS is refused as a misspelling, every
  // request (and /readyz) answered with a 500 (503).
  const ms = await modelServer();
  ms.replies.push(sse(chunk({ role: "assistant", content: "Okay, the user.</th" }), chunk({ content: "ink>\n\nHi." }), chunk({}, "stop")));
  const w = await worker({ vars: { ...model(ms), FLOE_STARTS_IN_THINKING: "true" } });
  const ready = await fetch(w.url + "/readyz");
  assert.equal(ready.status, 200, await ready.text());
  const created = await api(w, "POST", "/api/sessions", { approvalMode: "allow-all" });
  assert.equal(created.status, 201, JSON.stringify(created.json));
  const s = connect(w.url, created.json.id, { token: "tok" });
  for await (const m of s.run("Hello.")) void m;
  s.close();
  const reply = (await api(w, "GET", `/api/sessions/${created.json.id}/messages`)).json.messages
    .filter((m) => m.type === "model_msg" && m.payload.role === "assistant").map((m) => `${m.payload.type}:${m.payload.text ?? m.payload.thinking}`);
  assert.deepEqual(reply, ["thinking:Okay, the user.", "text:Hi."]);

  for (const [vars, message] of [
    [{ ...model(ms), FLOE_STARTS_IN_THINKING: "yes" }, 'FLOE_STARTS_IN_THINKING="yes": want true or false (1 or 0)'],
    [{ FLOE_MODEL: "anthropic", FLOE_MODEL_ID: "m", FLOE_BASE_URL: ms.url + "/v1", FLOE_STARTS_IN_THINKING: "true" },
      "FLOE_STARTS_IN_THINKING: only with FLOE_MODEL=openai, openai-compatible or openai-responses (a chat template that opens the thinking), not FLOE_MODEL=anthropic"],
  ]) {
    const wb = await worker({ vars });
    const r = await api(wb, "POST", "/api/sessions", {});
    assert.equal(r.status, 500);
    assert.equal(r.json.error.code, "configuration");
    assert.ok(r.json.error.message.includes(message), r.json.error.message);
  }
});

test("FLOE_MAX_STREAMS bounds a session's streams as --max-streams does: the next is refused with 429, 0 is no bound", async () => {
  const open = [];
  after(() => open.forEach((ac) => ac.abort()));
  const stream = async (w, id) => {
    const ac = new AbortController();
    open.push(ac);
    const resp = await fetch(`${w.url}/api/sessions/${id}/stream`, { headers: { Authorization: "Bearer tok" }, signal: ac.signal });
    if (resp.status !== 200) return { status: resp.status, json: await resp.json() };
    return { status: 200 };
  };
  const w = await worker({ vars: { FLOE_MAX_STREAMS: "2" } });
  const { json } = await api(w, "POST", "/api/sessions", {});
  assert.equal((await stream(w, json.id)).status, 200);
  assert.equal((await stream(w, json.id)).status, 200);
  const r = await stream(w, json.id);
  assert.equal(r.status, 429);
  assert.equal(r.json.error.code, "too_many_streams");
  // Another session has streams of its own.
  const other = (await api(w, "POST", "/api/sessions", {})).json.id;
  assert.equal((await stream(w, other)).status, 200);

  const w0 = await worker({ vars: { FLOE_MAX_STREAMS: "0" } });
  const id0 = (await api(w0, "POST", "/api/sessions", {})).json.id;
  for (let i = 0; i < 3; i++) assert.equal((await stream(w0, id0)).status, 200);

  for (const bad of ["-1", "2.5", "many"]) {
    const wb = await worker({ vars: { FLOE_MAX_STREAMS: bad } });
    const rb = await api(wb, "POST", "/api/sessions", {});
    assert.equal(rb.status, 500);
    assert.equal(rb.json.error.code, "configuration");
    assert.ok(rb.json.error.message.includes(`FLOE_MAX_STREAMS=${JSON.stringify(bad)}: want a whole number from 0 to 1000000: streams of one session`), rb.json.error.message);
  }
});

test("every FLOE_ variable the Worker's code and wrangler.toml name is one the misspelling check takes", () => {
  // A variable read but missing from VARS answered every request with a
  // 500 calling it a misspelling (FLOE_NO_IMAGES did).
  const dir = fileURLToPath(new URL("../../wasm/worker/", import.meta.url));
  const src = readFileSync(join(dir, "session_object.mjs"), "utf8");
  const vars = new Set(JSON.parse(src.match(/const VARS = (\[[^\]]*\]);/)[1].replace(/,\s*\]$/, "]")));
  const named = new Set();
  const files = ["session_object.mjs", "wrangler.toml", ...["front", "object"].flatMap((d) => readdirSync(join(dir, d)).map((f) => join(d, f)))];
  // Quoted in the code ("FLOE_MODE", this.env.FLOE_MODE), set or shown
  // set in wrangler.toml (# FLOE_ORIGINS = …); the comments' misspellings
  // (FLOE_TOKN) are neither.
  const uses = /"(FLOE_[A-Z_]*[A-Z])"|env\.(FLOE_[A-Z_]*[A-Z])|^#? ?(FLOE_[A-Z_]*[A-Z]) =/gm;
  for (const f of files) for (const m of readFileSync(join(dir, f), "utf8").matchAll(uses)) named.add(m[1] ?? m[2] ?? m[3]);
  assert.ok(named.has("FLOE_TOKEN") && named.has("FLOE_NO_IMAGES"), [...named].join(" "));
  assert.deepEqual([...named].filter((n) => !vars.has(n)), []);
});
