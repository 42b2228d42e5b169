// The Cloudflare target under local workerd (the npm package, pinned; no
// account, no network): the Go front Worker routes to one Durable Object per
// session, which hosts the engine and the channel over SQLite storage.
// Build first: scripts/worker.sh build (scripts/worker.sh test does both).
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { start, ports } from "./workerd.mjs";
import { connect } from "../../static/connect.mjs";

const tmp = mkdtempSync(join(tmpdir(), "floe-workerd-"));
const running = [];
after(async () => {
  for (const w of running) await w.stop();
  rmSync(tmp, { recursive: true, force: true });
});
const nextPort = ports(8800, 8829); // this file's block: worker.test.mjs 8800-8829, models.test.mjs 8830-8859, cors.test.mjs 8860-8869
async function worker(opts = {}) {
  const w = await start({ port: opts.port ?? nextPort(), storage: opts.storage ?? mkdtempSync(join(tmp, "s-")), ...opts });
  running.push(w);
  return w;
}

async function api(w, method, path, body, token = "tok") {
  const headers = { Authorization: `Bearer ${token}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const resp = await fetch(w.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await resp.text();
  return { status: resp.status, json: text ? JSON.parse(text) : undefined };
}

const complete = (m) => !m.payload.type.startsWith("partial_");
const history = async (s) => (await s.history()).messages.filter((m) => m.type !== "session_meta");

// blocks reads a stream response's blocks as written: next() gives the
// text of one (an event's lines, or a comment), null at the end.
function blocks(resp) {
  const reader = resp.body.getReader();
  const dec = new TextDecoder();
  let buf = "";
  return {
    async next() {
      for (;;) {
        const end = buf.indexOf("\n\n");
        if (end >= 0) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          return block;
        }
        const { value, done } = await reader.read();
        if (done) return null;
        buf += dec.decode(value, { stream: true });
      }
    },
    close: () => reader.cancel().catch(() => {}),
  };
}

// sse reads a stream response incrementally: next() gives {id, event, data}.
function sse(resp) {
  const st = blocks(resp);
  return {
    async next() {
      for (let block; (block = await st.next()) !== null; ) {
        const ev = { id: "", event: "", data: "" };
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue;
          const [k, ...v] = line.split(": ");
          if (k in ev) ev[k] = ev[k] && k === "data" ? ev[k] + "\n" + v.join(": ") : v.join(": ");
        }
        if (ev.id || ev.data) return ev;
      }
      return null;
    },
    close: st.close,
  };
}

async function stream(w, id, lastId) {
  const headers = { Authorization: "Bearer tok" };
  if (lastId !== undefined) headers["Last-Event-ID"] = lastId;
  const resp = await fetch(`${w.url}/api/sessions/${id}/stream`, { headers });
  assert.equal(resp.status, 200);
  // T-1's headers, relayed by the front as the object writes them.
  assert.deepEqual(
    ["content-type", "cache-control", "x-accel-buffering"].map((h) => resp.headers.get(h)),
    ["text/event-stream", "no-cache, no-transform", "no"],
  );
  return sse(resp);
}

test("the front Worker authenticates, creates and lists sessions", async () => {
  const w = await worker({ token: "tok" });
  assert.equal((await api(w, "GET", "/api/sessions", undefined, "wrong")).status, 401);
  assert.equal((await api(w, "GET", "/api/sessions/x/stream", undefined, "")).status, 401);
  const { status, json } = await api(w, "POST", "/api/sessions", { approvalMode: "ask" });
  assert.equal(status, 201);
  assert.match(json.id, /^session-\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d-[0-9a-f]{8}$/);
  const list = await api(w, "GET", "/api/sessions");
  assert.deepEqual(list.json.sessions.map((s) => s.id), [json.id]);
  const bogus = await api(w, "POST", "/api/sessions", { bogus: 1 });
  assert.equal(bogus.status, 400);
  assert.match(bogus.json.error.message, /^request body: unknown field "bogus"/); // the client's terms, as the native API's
  assert.doesNotMatch(bogus.json.error.message, /Go|struct|unmarshal/);
  const arr = await fetch(w.url + "/api/sessions", { method: "POST", headers: { Authorization: "Bearer tok", "Content-Type": "application/json" }, body: "[]" });
  assert.equal((await arr.json()).error.message, "request body: want a JSON object, got array");
  // The Bearer scheme in any case (RFC 7235), as the native server takes it.
  for (const scheme of ["bearer", "BEARER"]) {
    const r = await fetch(w.url + "/api/sessions", { headers: { Authorization: `${scheme} tok` } });
    assert.equal(r.status, 200, scheme);
  }
  assert.equal((await api(w, "POST", `/api/sessions/${json.id}/tasks`, { input: "hi", bogus: 1 })).json.error.code, "bad_json");
  assert.equal((await api(w, "DELETE", `/api/sessions/${json.id}`)).status, 204);
  assert.deepEqual((await api(w, "GET", "/api/sessions")).json.sessions, []);
});

test("sessions made in the same millisecond are listed newest first all the same", async () => {
  // one-instant.mjs stores every session as made at one instant. Before,
  // the list was ordered by that time alone, and SQLite gave a tie in
  // whatever order it read the rows.
  const at = Date.UTC(2026, 0, 2, 3, 4, 5, 6);
  const w = await worker({ token: "tok", main: "one-instant.mjs", vars: { TEST_CREATED_MS: at } });
  const ids = async () => (await api(w, "GET", "/api/sessions")).json.sessions;
  for (const id of ["m", "z", "a"]) assert.equal((await api(w, "POST", "/api/sessions", { id })).status, 201, id);
  const listed = await ids();
  assert.deepEqual(listed.map((s) => s.id), ["a", "z", "m"]);
  assert.deepEqual(new Set(listed.map((s) => s.created)), new Set([new Date(at).toISOString()]), "a tie");
  // A session made again after its deletion is the newest.
  assert.equal((await api(w, "DELETE", "/api/sessions/z")).status, 204);
  assert.equal((await api(w, "POST", "/api/sessions", { id: "z" })).status, 201);
  assert.deepEqual((await ids()).map((s) => s.id), ["z", "a", "m"]);
});

test("a session deleted while its creation is answered is not left in the list", async () => {
  // index-gate.mjs holds the list's add until the test opens its gate.
  // Before, the DELETE took the id off the list before the add put it
  // there: the list kept a session that was no more, and a DELETE of it
  // answered 404 and left it.
  const w = await worker({ token: "tok", main: "index-gate.mjs" });
  const made = await fetch(w.url + "/api/sessions", { method: "POST", headers: { Authorization: "Bearer tok", "Content-Type": "application/json" }, body: '{"id":"g"}' });
  assert.equal(made.status, 201);
  assert.equal((await api(w, "DELETE", "/api/sessions/g")).status, 204);
  assert.equal((await fetch(w.url + "/_test/open", { method: "POST" })).status, 204);
  assert.equal((await made.json()).id, "g"); // its answer ends once the list is written
  assert.deepEqual((await api(w, "GET", "/api/sessions")).json.sessions, []);
  assert.equal((await api(w, "GET", "/api/sessions/g")).status, 404);
  // A session made and kept is listed as before, an id that needs
  // escaping in a path too (the object is asked for it by its path).
  for (const id of ["k", "a?b%c#ü"]) assert.equal((await api(w, "POST", "/api/sessions", { id })).status, 201, id);
  assert.deepEqual((await api(w, "GET", "/api/sessions")).json.sessions.map((s) => s.id), ["a?b%c#ü", "k"]);
});

test("a session made again while its DELETE is answered stays in the list", async () => {
  // index-gate.mjs holds the DELETE's remove from the list until the test
  // opens its gate. Before, the new session's add found the id still
  // listed, and the remove that came after it took the id off: a session
  // there was, and the list never showed.
  const w = await worker({ token: "tok", main: "index-gate.mjs", vars: { TEST_HOLD: "/_index/remove" } });
  assert.equal((await api(w, "POST", "/api/sessions", { id: "r" })).status, 201);
  const deleted = api(w, "DELETE", "/api/sessions/r");
  assert.equal((await fetch(w.url + "/_test/held")).status, 204); // the object deleted it; the remove waits
  assert.equal((await api(w, "POST", "/api/sessions", { id: "r" })).status, 201);
  assert.equal((await fetch(w.url + "/_test/open", { method: "POST" })).status, 204);
  assert.equal((await deleted).status, 204);
  assert.deepEqual((await api(w, "GET", "/api/sessions")).json.sessions.map((s) => s.id), ["r"]);
  assert.equal((await api(w, "GET", "/api/sessions/r")).status, 200);
  // Deleted and not made again, it is off the list.
  assert.equal((await api(w, "DELETE", "/api/sessions/r")).status, 204);
  assert.deepEqual((await api(w, "GET", "/api/sessions")).json.sessions, []);
});

test("a Worker cut off between a session's making or deletion and the list's write: the next list sets the list right", async () => {
  // index-gate.mjs holds the list's add (or remove) while the test stops
  // workerd (SIGKILL), as a restart, a deploy or a request's CPU limit
  // cuts the front off. Before, a session made so was never listed, and
  // one deleted so stayed listed for good, its DELETE answering 404.
  const cut = async (hold, act) => {
    const storage = mkdtempSync(join(tmp, "cut-"));
    const port = nextPort();
    const w = await worker({ token: "tok", main: "index-gate.mjs", vars: { TEST_HOLD: hold }, storage, port });
    await act(w);
    assert.equal((await fetch(w.url + "/_test/held")).status, 204);
    await w.stop();
    return worker({ token: "tok", storage, port });
  };
  const made = await cut("/_index/add", async (w) => {
    const resp = await fetch(w.url + "/api/sessions", { method: "POST", headers: { Authorization: "Bearer tok", "Content-Type": "application/json" }, body: '{"id":"g"}' });
    assert.equal(resp.status, 201);
    resp.text().catch(() => {}); // cut off with its Worker
  });
  assert.equal((await api(made, "GET", "/api/sessions/g")).status, 200);
  assert.deepEqual((await api(made, "GET", "/api/sessions")).json.sessions.map((s) => s.id), ["g"]);
  const deleted = await cut("/_index/remove", async (w) => {
    assert.equal((await api(w, "POST", "/api/sessions", { id: "r" })).status, 201);
    assert.equal((await api(w, "POST", "/api/sessions", { id: "kept" })).status, 201);
    api(w, "DELETE", "/api/sessions/r").catch(() => {}); // cut off with its Worker
  });
  assert.deepEqual((await api(deleted, "GET", "/api/sessions")).json.sessions.map((s) => s.id), ["kept"]);
  assert.equal((await api(deleted, "GET", "/api/sessions/r")).status, 404);
  // Settled, the rows are listed as any other, and made and deleted as before.
  assert.equal((await api(made, "DELETE", "/api/sessions/g")).status, 204);
  assert.deepEqual((await api(made, "GET", "/api/sessions")).json.sessions, []);
  // A creation the object refuses is not listed (a bad id).
  assert.equal((await api(deleted, "POST", "/api/sessions", { id: "a b" })).status, 400);
  assert.deepEqual((await api(deleted, "GET", "/api/sessions")).json.sessions.map((s) => s.id), ["kept"]);
});

test("a session list a version before made is read, and written, as it was", async () => {
  // old-index.mjs: the list's table without the column the marks need.
  const w = await worker({ token: "tok", main: "old-index.mjs" });
  assert.deepEqual((await api(w, "GET", "/api/sessions")).json.sessions.map((s) => s.id), ["old"]);
  assert.equal((await api(w, "POST", "/api/sessions", { id: "new" })).status, 201);
  assert.deepEqual((await api(w, "GET", "/api/sessions")).json.sessions.map((s) => s.id), ["new", "old"]);
});

test("requests a front Worker could not relay as they came: a GET with a body, a session made with a body of another type", async () => {
  const w = await worker({ token: "tok" });
  const { json } = await api(w, "POST", "/api/sessions", {});
  // A GET or HEAD with a body made the JavaScript glue panic: a plain 500
  // and a front Worker that exited. The native server ignores the body.
  for (const path of [`/api/sessions/${json.id}`, `/api/sessions/${json.id}/messages`]) {
    const got = await new Promise((resolve, reject) => {
      const u = new URL(w.url + path);
      const req = httpRequest({ host: u.hostname, port: u.port, path: u.pathname, method: "GET", headers: { Authorization: "Bearer tok", "Content-Type": "application/json", "Content-Length": "2" } }, (res) => {
        let text = "";
        res.on("data", (c) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode, text }));
      });
      req.on("error", reject);
      req.end("{}");
    });
    assert.equal(got.status, 200, `${path}: ${got.text}`);
    assert.equal(JSON.parse(got.text).id ?? JSON.parse(got.text).sessionId, json.id);
  }
  // POST /api/sessions checks the Content-Type as the session routes do.
  const r = await fetch(w.url + "/api/sessions", { method: "POST", headers: { Authorization: "Bearer tok", "Content-Type": "text/plain" }, body: '{"id":"s1"}' });
  assert.equal(r.status, 415);
  assert.deepEqual(await r.json(), { error: { code: "unsupported_media_type", message: "Content-Type: want application/json, got text/plain" } });
  assert.equal((await api(w, "GET", "/api/sessions/s1")).status, 404, "the session was not made");
});

// tables lists, for each session object's SQLite files in storage, whether
// they hold the Trace's table: the bytes of its CREATE statement, which
// SQLite keeps in its schema (in the file or its write-ahead log).
function tables(storage) {
  const dir = join(storage, "floe-sessions");
  const objects = new Map();
  for (const f of readdirSync(dir)) {
    const name = f.replace(/\.sqlite(-wal|-shm)?$/, "");
    if (name === "metadata" || name === f) continue;
    objects.set(name, (objects.get(name) ?? false) || readFileSync(join(dir, f)).includes("CREATE TABLE floe_trace"));
  }
  return [...objects.values()];
}

test("a request for an unknown id writes nothing to its object's storage; a deleted id can be made again", async () => {
  const storage = mkdtempSync(join(tmp, "s-"));
  const w = await worker({ token: "tok", storage });
  for (const path of ["/api/sessions/nosuch", "/api/sessions/nosuch/messages", "/api/sessions/other/stream"]) {
    const r = await api(w, "GET", path);
    assert.deepEqual([r.status, r.json.error.code], [404, "session_not_found"], path);
  }
  const task = await api(w, "POST", "/api/sessions/third/tasks", { input: "hi" });
  assert.deepEqual([task.status, task.json.error.code], [404, "session_not_found"]);
  // Before, each of the three objects made the Trace's table when it woke.
  assert.deepEqual(tables(storage), [false, false, false]);
  assert.equal((await api(w, "POST", "/api/sessions", { id: "kept" })).status, 201);
  // One more object without it: "index", which keeps the session list.
  assert.deepEqual(tables(storage).sort(), [false, false, false, false, true]);
  // Deleted, the session's table is dropped; the id is free, and a
  // session made again under it starts empty.
  const made = await api(w, "POST", "/api/sessions", { id: "again" });
  assert.equal(made.status, 201);
  assert.equal((await api(w, "DELETE", "/api/sessions/again")).status, 204);
  assert.equal((await api(w, "GET", "/api/sessions/again")).status, 404);
  assert.equal((await api(w, "POST", "/api/sessions", { id: "again" })).status, 201);
  const msgs = await api(w, "GET", "/api/sessions/again/messages");
  assert.equal(msgs.status, 200);
  assert.deepEqual(msgs.json.messages.filter((m) => m.type !== "session_meta"), []);
  assert.deepEqual((await api(w, "GET", "/api/sessions")).json.sessions.map((s) => s.id).sort(), ["again", "kept"]);
});

test("the id index, the name of the session list's object, is refused", async () => {
  const w = await worker({ token: "tok" });
  // Before, it was created (201) in the index object and listed, and every
  // later request for it answered 404.
  const { status, json } = await api(w, "POST", "/api/sessions", { id: "index" });
  assert.equal(status, 400);
  assert.equal(json.error.code, "bad_request");
  assert.match(json.error.message, /^id: "index" is reserved/);
  assert.deepEqual((await api(w, "GET", "/api/sessions")).json.sessions, []);
  const gone = await api(w, "GET", "/api/sessions/index");
  assert.deepEqual([gone.status, gone.json.error.message], [404, 'no session "index"']);
  assert.equal((await api(w, "POST", "/api/sessions", { id: "index-2" })).status, 201);
  assert.equal((await api(w, "GET", "/api/sessions/index-2")).status, 200);
});

test("a path with a trailing slash is a 404 that says the API's paths have none", async () => {
  const w = await worker({ token: "tok" });
  assert.equal((await api(w, "POST", "/api/sessions", { id: "s" })).status, 201);
  // Before, the front answered /api/sessions/ with 'no session ""'.
  for (const path of ["/api/sessions/", "/api/sessions/s/", "/api/sessions/s/messages/"]) {
    const r = await api(w, "GET", path);
    assert.deepEqual([r.status, r.json.error.code, r.json.error.message], [404, "not_found", `no route ${path} (the API's paths end without a slash)`], path);
  }
});

// raw sends path as it is written (fetch resolves "." and ".." segments
// before it sends).
function raw(w, method, path, body) {
  return new Promise((resolve, reject) => {
    const u = new URL(w.url);
    const headers = { Authorization: "Bearer tok" };
    if (body !== undefined) Object.assign(headers, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
    const req = httpRequest({ host: u.hostname, port: u.port, path, method, headers }, (res) => {
      let text = "";
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

test("a path with a . or .. segment is a 404, as on the native server: it does not reach another path of a session's object", async () => {
  const w = await worker({ token: "tok" });
  assert.equal((await api(w, "POST", "/api/sessions", { id: "s" })).status, 201);
  // Before, workerd resolved the segments on the way to the object of "s",
  // which answered them as paths of its own: its session list's routes
  // (/_index/add wrote to its storage), or another session's.
  for (const [method, path, body] of [
    ["POST", "/api/sessions/s/../../../_index/add", '{"id":"planted"}'],
    ["GET", "/api/sessions/s/%2e%2e/%2E%2E/%2e%2e/_index/list"],
    ["GET", "/api/sessions/s/../other/messages"],
    ["GET", "/api/sessions/s/./messages"],
  ]) {
    const r = await raw(w, method, path, body);
    assert.equal(r.status, 404, `${path}: ${r.text}`);
    assert.deepEqual(JSON.parse(r.text).error, { code: "not_found", message: `no route ${decodeURIComponent(path)} (the API's paths have no . or .. segment)` }, path);
  }
  assert.deepEqual((await api(w, "GET", "/api/sessions")).json.sessions.map((x) => x.id), ["s"]);
  assert.equal((await api(w, "GET", "/api/sessions/s/messages")).status, 200);
});

test("the front's own errors are not to be cached, as the object's are", async () => {
  const w = await worker({ token: "tok" });
  for (const [path, token, status] of [["/api/sessions/", "tok", 404], ["/api/sessions", "nope", 401], ["/api/sessions/s", "tok", 404]]) {
    const r = await fetch(w.url + path, { headers: { Authorization: `Bearer ${token}` } });
    await r.body?.cancel();
    assert.deepEqual([r.status, r.headers.get("cache-control")], [status, "no-store"], path);
  }
});

test("a run streamed from the object: approvals over HTTP, steer, abort, history", async () => {
  const w = await worker({ token: "tok" });
  const { json } = await api(w, "POST", "/api/sessions", { approvalMode: "ask" });
  const s = connect(w.url, json.id, { token: "tok" });
  const asked = [];
  let steered = null;
  const got = [];
  for await (const m of s.run("Count the lines of main.go", {
    approve: async (call) => {
      asked.push(call.payload.name);
      if (asked.length === 1) steered = await s.steer("And greet me.");
      return "allow";
    },
  }))
    got.push(m);
  assert.deepEqual(asked, ["list_files", "count_lines"]);
  assert.equal(steered, true);
  assert.equal(got.at(-1).payload.type, "request_end");
  const hist = await history(s);
  assert.deepEqual(got.filter(complete), hist.slice(1));
  assert.ok(hist.some((m) => JSON.stringify(m).includes("And greet me.")), "the steering is in the Trace");
  // Abort while an approval is pending.
  const run = s.run("again", { approve: async () => (await s.abort(), "allow") });
  const rest = [];
  for await (const m of run) rest.push(m);
  assert.equal(rest.at(-1).payload.type, "abort");
  s.close();
});

test("the heartbeat (T-11): `: ping` between whole events, and the stream and a run through it unbroken", { timeout: 60_000 }, async () => {
  // ping.mjs has the object ping every 20 ms. Before, nothing set the
  // object's heartbeat: it pinged every 20 s, and this test's timeout
  // ended it before the five pings it waits for first.
  const w = await worker({ token: "tok", main: "ping.mjs", vars: { TEST_PING_MS: 20 }, mode: "allow-all", delayMs: 1 });
  const { json } = await api(w, "POST", "/api/sessions", {});
  const id = json.id;
  const resp = await fetch(`${w.url}/api/sessions/${id}/stream`, { headers: { Authorization: "Bearer tok" } });
  assert.equal(resp.status, 200);
  const st = blocks(resp);
  const events = [];
  let pings = 0;
  let state = "";
  // read takes blocks until done() holds: each a ping, exactly, or an event
  // of id, event and data lines whose data is JSON.
  const read = async (done) => {
    while (!done()) {
      const b = await st.next();
      assert.notEqual(b, null, "the stream ended");
      if (b === ": ping") {
        pings++;
        continue;
      }
      const ev = { id: "", event: "", data: "" };
      for (const line of b.split("\n")) {
        const m = /^(id|event|data): (.*)$/.exec(line);
        assert.ok(m, `a line of an event: ${JSON.stringify(line)}`);
        ev[m[1]] = m[2];
      }
      const data = JSON.parse(ev.data);
      if (ev.event === "server_event" && data.type === "task_state") state = data.state;
      events.push({ ...ev, data });
    }
  };
  await read(() => pings >= 5);
  assert.deepEqual(events.map((e) => [e.event, e.data]), [["server_event", { type: "task_state", state: "idle" }]], "the initial event, then pings");
  assert.equal((await api(w, "POST", `/api/sessions/${id}/tasks`, { input: "Count the lines of main.go" })).status, 202);
  let ran = false;
  await read(() => (ran ||= state === "running") && state === "idle");
  const after = pings;
  await read(() => pings >= after + 3);
  st.close();
  // The ids count on from the first, pings or not.
  const [epoch] = events[0].id.split("-");
  assert.deepEqual(events.map((e) => e.id), events.map((_, i) => `${epoch}-${Number(events[0].id.split("-")[1]) + i}`));
  // The run's messages are the session's history.
  const hist = (await api(w, "GET", `/api/sessions/${id}/messages`)).json.messages.filter((m) => m.type !== "session_meta");
  const streamed = events.filter((e) => e.event === "" && complete(e.data)).map((e) => e.data);
  assert.ok(streamed.length >= 5, `${streamed.length} messages`);
  assert.deepEqual(streamed, hist.slice(hist.length - streamed.length));
  // floe.connect reads such a stream as well.
  const s = connect(w.url, id, { token: "tok" });
  const got = [];
  for await (const m of s.run("And README.md?")) got.push(m);
  assert.equal(got.at(-1).payload.type, "request_end");
  assert.deepEqual(got.filter(complete), (await history(s)).slice(-got.filter(complete).length));
  s.close();
});

test("workerd restarted mid-task: the object resumes the session from its SQLite Trace", async () => {
  const storage = mkdtempSync(join(tmp, "restart-"));
  const port = nextPort();
  const w = await worker({ token: "tok", storage, port });
  const { json } = await api(w, "POST", "/api/sessions", { approvalMode: "ask" });
  const id = json.id;
  const st = await stream(w, id);
  await api(w, "POST", `/api/sessions/${id}/tasks`, { input: "Count the lines of main.go" });
  let lastId = "";
  let sawCall = false;
  let sawRequest = false;
  while (!(sawCall && sawRequest)) {
    const ev = await st.next();
    lastId = ev.id;
    sawRequest ||= ev.event === "server_event" && ev.data.includes('"approval_request"');
    sawCall ||= ev.event === "" && ev.data.includes('"type":"tool_call"');
  }
  st.close();
  await w.stop(); // mid-task: a tool call awaits approval
  const w2 = await worker({ token: "tok", storage, port, mode: "allow-all" });
  const h = await api(w2, "GET", `/api/sessions/${id}/messages`);
  assert.equal(h.json.state, "idle");
  assert.ok(h.json.messages.some((m) => m.payload.text === "Count the lines of main.go"));
  const again = await stream(w2, id, lastId);
  assert.equal((await again.next()).data, '{"type":"resync_required"}', "a new object instance has a new epoch");
  again.close();
  await api(w2, "PATCH", `/api/sessions/${id}`, { approvalMode: "allow-all" });
  const s = connect(w2.url, id, { token: "tok" });
  const got = [];
  for await (const m of s.run("Continue.")) got.push(m);
  assert.equal(got.at(-1).payload.type, "request_end");
  assert.ok(got.some((m) => m.payload.type === "tool_call_output"), "the carried-over task ran its tools");
  s.close();
});

// follow reads a session's run through seeded disconnects, reconnecting with
// Last-Event-ID, and returns the message events it saw.
async function follow(w, id, seed, started) {
  let rng = seed;
  const rand = (n) => ((rng = (rng * 1103515245 + 12345) % 2147483648), 1 + (rng % n));
  const msgs = [];
  let resynced = false;
  let st = await stream(w, id);
  await st.next(); // the snapshot
  started();
  let running = false;
  for (;;) {
    let budget = rand(40);
    let last = null;
    while (budget > 0) {
      const ev = await st.next();
      if (ev === null) break;
      last = ev.id;
      if (ev.data === '{"type":"resync_required"}') resynced = true;
      else if (ev.event === "server_event" && ev.data.startsWith('{"type":"task_state","state":"running"')) running = true;
      else if (ev.event === "server_event" && ev.data.startsWith('{"type":"task_state","state":"idle"') && running) {
        st.close();
        return { msgs, resynced };
      } else if (ev.event === "") {
        msgs.push(ev);
        budget--;
      }
    }
    st.close();
    st = await stream(w, id, last ?? msgs.at(-1)?.id);
  }
}

test("50 clients disconnecting at seeded points each see every message once, in order", { timeout: 240_000 }, async () => {
  const w = await worker({ token: "tok", delayMs: 2, mode: "allow-all" });
  const { json } = await api(w, "POST", "/api/sessions", {});
  const id = json.id;
  const ref = await stream(w, id);
  await ref.next();
  let n = 0;
  let allStarted;
  const startedAll = new Promise((r) => (allStarted = r));
  const clients = [];
  for (let i = 0; i < 50; i++) clients.push(follow(w, id, i + 1, () => ++n === 50 && allStarted()));
  await startedAll;
  await api(w, "POST", `/api/sessions/${id}/tasks`, { input: "Count the lines of main.go and README.md" });
  const want = [];
  let running = false;
  for (;;) {
    const ev = await ref.next();
    if (ev.event === "") want.push(ev);
    if (ev.event === "server_event" && ev.data.startsWith('{"type":"task_state","state":"running"')) running = true;
    if (running && ev.event === "server_event" && ev.data.startsWith('{"type":"task_state","state":"idle"')) break;
  }
  ref.close();
  const results = await Promise.all(clients);
  assert.ok(want.length >= 100, `the run streamed ${want.length} messages`);
  for (const [i, r] of results.entries()) {
    assert.equal(r.resynced, false, `client ${i} was told to resync`);
    assert.deepEqual(r.msgs, want, `client ${i}`);
  }
});

test("after eviction: resync_required, then /messages recovers the same state", async () => {
  const w = await worker({ token: "tok", mode: "allow-all", replayEvents: 20 });
  const { json } = await api(w, "POST", "/api/sessions", {});
  const id = json.id;
  const gone = await stream(w, id);
  const snapshot = await gone.next();
  gone.close();
  const s = connect(w.url, id, { token: "tok" });
  const got = [];
  for await (const m of s.run("hi")) got.push(m);
  s.close();
  const back = await stream(w, id, snapshot.id);
  assert.equal((await back.next()).data, '{"type":"resync_required"}');
  back.close();
  const h = await api(w, "GET", `/api/sessions/${id}/messages`);
  const recovered = h.json.messages.filter((m) => m.type !== "session_meta");
  assert.deepEqual(recovered.slice(1), got.filter(complete));
});

test("an isolate lets the servers of objects gone or idle go: one per object reset, at most 8 idle besides the last; a session whose server went answers and runs as after an eviction", { timeout: 120_000 }, async () => {
  // evict.mjs resets an object (ctx.abort: its next request makes a new
  // instance in the same isolate, as an eviction does) and counts the
  // servers object.wasm keeps. Before, every instance opened one that
  // nothing let go: a reset object's stayed beside its new one's, and an
  // isolate kept one per object it had ever hosted.
  const w = await worker({ token: "tok", main: "evict.mjs", mode: "allow-all" });
  const servers = async (id) => (await (await fetch(`${w.url}/_test/servers/${id}`)).json()).servers;
  assert.equal((await api(w, "POST", "/api/sessions", { id: "a" })).status, 201);
  assert.equal(await servers("a"), 1);
  await (await fetch(`${w.url}/_test/abort/a`, { method: "POST" })).text(); // its answer: the reset's error
  assert.equal((await api(w, "GET", "/api/sessions/a")).status, 200);
  assert.equal(await servers("a"), 1, "the reset instance's server let go");
  // A stream held open on "a" keeps its server, however many are opened.
  const held = await stream(w, "a");
  assert.ok(await held.next(), "the stream is open");
  for (let i = 0; i < 12; i++) assert.equal((await api(w, "POST", "/api/sessions", { id: `s${i}` })).status, 201);
  assert.equal(await servers("s0"), 10, "a's (streaming), s11's and the 8 idle used last");
  const a = connect(w.url, "a", { token: "tok" });
  const ranA = [];
  for await (const m of a.run("hi")) ranA.push(m);
  a.close();
  assert.equal(ranA.at(-1).payload.type, "request_end");
  for (let ev; (ev = await held.next()) !== null; ) {
    if (JSON.parse(ev.data).payload?.type === "request_end") break;
  }
  held.close();
  // s0's server went: its object opens another, the session resumed from
  // its Trace, and it runs, as after an eviction.
  const s = connect(w.url, "s0", { token: "tok" });
  const got = [];
  for await (const m of s.run("hi")) got.push(m);
  assert.equal(got.at(-1).payload.type, "request_end");
  assert.deepEqual(got.filter(complete), (await history(s)).slice(1));
  s.close();
  assert.ok((await servers("s0")) <= 10);
});

test("an object idle past its timer lets its server go, unless a stream is open or a run goes on; its next request opens another", { timeout: 120_000 }, async () => {
  // evict.mjs runs an object's idle timer when the test says. Before, an
  // idle object's server stayed until eight others were opened in its
  // isolate, after the object's eviction too.
  const w = await worker({ token: "tok", main: "evict.mjs", mode: "allow-all" });
  const idle = async (id) => (await fetch(`${w.url}/_test/idle/${id}`, { method: "POST" })).json();
  assert.equal((await api(w, "POST", "/api/sessions", { id: "a" })).status, 201);
  assert.deepEqual(await idle("a"), { fired: true, servers: 0 }, "idle: let go");
  // Its next request opens another, the session resumed from its Trace.
  const s = connect(w.url, "a", { token: "tok" });
  const got = [];
  for await (const m of s.run("hi")) got.push(m);
  assert.equal(got.at(-1).payload.type, "request_end");
  assert.deepEqual(got.filter(complete), (await history(s)).slice(1));
  s.close();
  // A stream open keeps it, and so does a run awaiting an approval once
  // the stream is closed.
  assert.equal((await api(w, "PATCH", "/api/sessions/a", { approvalMode: "ask" })).status, 200);
  const st = await stream(w, "a");
  assert.deepEqual(await idle("a"), { fired: true, servers: 1 }, "a stream open");
  await api(w, "POST", "/api/sessions/a/tasks", { input: "Count the lines of main.go" });
  for (let ev; (ev = await st.next()) !== null; ) {
    if (ev.event === "server_event" && ev.data.includes('"approval_request"')) break;
  }
  st.close();
  assert.deepEqual(await idle("a"), { fired: true, servers: 1 }, "a run awaiting an approval");
  assert.equal((await api(w, "GET", "/api/sessions/a")).json.state, "running");
});
