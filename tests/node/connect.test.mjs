// floe.connect against the native server (cmd/floe-server) on 127.0.0.1.
import { test, before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { getEventListeners } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { connect } from "../../static/connect.mjs";
import floeDefault from "../../static/floe.mjs";
import { floeServer } from "../floe-server.mjs";
import { checkStream } from "../../static/test.mjs";
import { msg } from "../../static/msg.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const server = floeServer("floe-connect-");
const tmp = server.tmp;

// start runs a server on a free port, with a Trace directory of its own, and
// resolves to its base URL.
const start = (...args) => server.start("--dir", mkdtempSync(join(tmp, "d-")), ...args);

async function create(base, mode, token) {
  const resp = await fetch(base + "/api/sessions", {
    method: "POST",
    headers: { "Content-Type": "application/json", ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ approvalMode: mode }),
  });
  assert.equal(resp.status, 201);
  return (await resp.json()).id;
}

// client connects and closes the client after the test, passed or failed:
// a client left open keeps reconnecting and holds the process up.
const clients = [];
function client(...args) {
  const c = connect(...args);
  clients.push(c);
  return c;
}
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

const complete = (m) => !m.payload.type.startsWith("partial_");
const history = async (s) => (await s.history()).messages.filter((m) => m.type !== "session_meta");

// cutWhen is resp, whose body fails ("connection cut") once cut settles,
// as a connection the network drops.
function cutWhen(resp, cut) {
  const reader = resp.body.getReader();
  return new Response(
    new ReadableStream({
      async pull(ctrl) {
        const r = await Promise.race([reader.read(), cut.then(() => null)]);
        if (r === null) {
          reader.cancel().catch(() => {});
          return ctrl.error(new Error("connection cut"));
        }
        if (r.done) return ctrl.close();
        ctrl.enqueue(r.value);
      },
    }),
    { status: resp.status, headers: resp.headers },
  );
}

test("run yields the run's messages and answers approvals", async () => {
  const base = await start("--delay", "0", "--token", "tok");
  const id = await create(base, "ask", "tok");
  const s = client(base, id, { token: "tok" });
  const asked = [];
  const got = [];
  for await (const m of s.run("Count the lines of main.go", { approve: (call) => (asked.push(call.payload.name), "allow") })) got.push(m);
  assert.deepEqual(asked, ["list_files", "count_lines"]);
  assert.equal(got[0].payload.type, "tool_list_ready", "the prompt is not yielded");
  assert.equal(got.at(-1).payload.type, "request_end");
  assert.equal(got.filter((m) => m.payload.type === "tool_call_output").length, 2);
  assert.deepEqual(got.filter(complete), (await history(s)).slice(1), "complete messages = history after the prompt");
  assert.equal(s.state, "idle");
  assert.equal(await s.retryNow(), false);
  assert.equal(await s.steer("late"), false);
  assert.equal(await s.abort(), false);
  s.close();
  await assert.rejects(s.steer("after close"), (e) => e.name === "FloeError" && e.code === "closed");
  await assert.rejects(s.history(), (e) => e.code === "closed");
  assert.throws(() => s.run("after close"), (e) => e.code === "closed");
  assert.throws(() => s.messages(), (e) => e.code === "closed");
});

test("floe.connect is the same function on the loaded API's module", () => {
  assert.equal(floeDefault.connect, connect);
});

test("steer and abort a remote run; a second run while busy is session_busy", async () => {
  const base = await start("--delay", "0");
  const id = await create(base, "ask");
  const s = client(base, id);
  const seen = [];
  let steered = null;
  let busy = null;
  const run = s.run("hi", {
    approve: async (call) => {
      assert.ok(s.pendingApprovals.some((c) => c.payload.tool_call_id === call.payload.tool_call_id), "pendingApprovals lists the call");
      if (call.payload.name === "list_files") {
        steered = await s.steer("And say hello.");
        try {
          for await (const m of s.run("other")) void m;
        } catch (e) {
          busy = e;
        }
        return "allow";
      }
      await s.abort();
      return "allow"; // too late: the abort denied it
    },
  });
  for await (const m of run) seen.push(m);
  assert.equal(steered, true);
  assert.equal(busy?.name, "FloeError");
  assert.equal(busy?.code, "session_busy");
  assert.equal(seen.at(-1).payload.type, "abort");
  assert.ok(!seen.some((m) => m.payload.type === "approval_decision" && m.payload.tool_call_id === "call_1_2"), "the aborted approval got no decision");
  s.close();
});

test("a client attaching mid-run gets every complete message once (history, live fragments, stream)", async () => {
  const base = await start("--delay", "2ms", "--mode", "allow-all");
  const id = await create(base, "");
  const driver = client(base, id);
  const run = driver.run("Count the lines of main.go and README.md");
  const first = await run.next(); // the run is streaming
  assert.equal(first.done, false);
  const watcher = client(base, id);
  const watched = [];
  const done = (async () => {
    for await (const m of watcher.messages()) {
      watched.push(m);
      if (m.payload.type === "request_end" && watched.filter((x) => x.payload.type === "request_end").length === 2) break;
    }
  })();
  for await (const m of run) void m;
  await done;
  const want = await history(driver);
  const got = watched.filter(complete);
  assert.deepEqual(got, want);
  // The fragments it saw rebuild the texts it saw completed: nothing lost mid-fragment.
  const texts = new Map();
  for (const m of watched) {
    if (m.payload.type !== "partial_text") continue;
    if (m.payload.event_type === "start") texts.set("t", m.payload.text ?? "");
    else if (m.payload.event_type === "delta") texts.set("t", (texts.get("t") ?? "") + m.payload.text);
    else if (m.payload.event_type === "stop") {
      assert.ok(want.some((w) => w.payload.type === "text" && w.payload.text === texts.get("t")), `a fragment rebuilt ${JSON.stringify(texts.get("t"))}`);
    }
  }
  driver.close();
  watcher.close();
});

// cutting wraps fetch so that the first `times` streams break after `after` chunks.
function cutting(after, times) {
  let cuts = 0;
  return async (url, init) => {
    const resp = await fetch(url, init);
    if (!String(url).endsWith("/stream") || cuts >= times) return resp;
    cuts++;
    const reader = resp.body.getReader();
    let n = 0;
    const body = new ReadableStream({
      async pull(ctrl) {
        const { value, done } = await reader.read();
        if (done) return ctrl.close();
        if (++n > after) {
          reader.cancel().catch(() => {});
          ctrl.error(new Error("connection cut"));
          return;
        }
        ctrl.enqueue(value);
      },
      cancel() {
        reader.cancel().catch(() => {});
      },
    });
    return new Response(body, { status: resp.status, headers: resp.headers });
  };
}

test("reconnects with Last-Event-ID, and after eviction resyncs from /messages", async () => {
  for (const [replay, label] of [["0", "replay"], ["3", "resync"]]) {
    const base = await start("--delay", "3ms", "--mode", "allow-all", "--replay-events", replay);
    const id = await create(base, "");
    const driver = client(base, id);
    // The client opens the stream first, then fetches /messages (TRANSPORT.md
    // §7): once /messages has answered, the watcher is connected.
    let connected;
    const opened = new Promise((resolve) => (connected = resolve));
    const cut = cutting(8, 3);
    const watch = async (url, init) => {
      const resp = await cut(url, init);
      if (String(url).endsWith("/messages")) connected();
      return resp;
    };
    const s = client(base, id, { fetch: watch, reconnectDelayMs: 60 });
    const watched = [];
    const ready = s.messages();
    const done = (async () => {
      for await (const m of ready) {
        watched.push(m);
        if (m.payload.type === "request_end" && watched.filter((x) => x.payload.type === "request_end").length === 2) break;
      }
    })();
    await opened; // the watcher is connected before the run starts
    for await (const m of driver.run("Count the lines of main.go")) void m;
    await done;
    assert.deepEqual(watched.filter(complete), await history(driver), `${label}: every complete message exactly once, in order`);
    // and every fragment whole: one start, its deltas, one stop, then its
    // complete message, the deltas joined (a resync mid-fragment sent a
    // second start, or lost the deltas and the stop).
    const W = watched.filter((m) => m.type !== "session_meta");
    assert.deepEqual(checkStream(W), [], `${label}: fragments across the reconnects`);
    driver.close();
    s.close();
  }
});

test("events up to history's cursor that reach the stream after history answered are not delivered twice", async () => {
  const base = await start("--delay", "0", "--mode", "allow-all");
  const id = await create(base, "");
  const driver = client(base, id);
  // The watcher's stream is connected, then the first run happens, then its
  // history answers (cursor: the run's last event), and only then does its
  // stream bring the run's events: every one of them is in that history.
  let subscribed;
  const connected = new Promise((r) => (subscribed = r));
  let answer;
  const historyMay = new Promise((r) => (answer = r));
  let release;
  const streamMay = new Promise((r) => (release = r));
  let streams = 0;
  const f = async (url, init = {}) => {
    const u = new URL(String(url));
    if (u.pathname.endsWith("/messages")) await historyMay;
    const resp = await fetch(url, init);
    if (!u.pathname.endsWith("/stream") || ++streams > 1) return resp;
    subscribed();
    const reader = resp.body.getReader();
    const body = new ReadableStream({
      async pull(ctrl) {
        await streamMay;
        const { value, done } = await reader.read();
        if (done) return ctrl.close();
        ctrl.enqueue(value);
      },
      cancel() {
        reader.cancel().catch(() => {});
      },
    });
    return new Response(body, { status: resp.status, headers: resp.headers });
  };
  const s = client(base, id, { fetch: f });
  const watched = [];
  let firstRunSeen;
  const firstRun = new Promise((r) => (firstRunSeen = r));
  const done = (async () => {
    let second = -1; // the request_ends of the second run (two requests, as the first)
    for await (const m of s.messages()) {
      watched.push(m);
      if (m.payload.type === "request_end" && watched.filter((x) => x.payload.type === "request_end").length === 2) firstRunSeen();
      if (m.payload.role === "user" && m.payload.text === "Count the lines of README.md") second = 0;
      if (second >= 0 && m.payload.type === "request_end" && ++second === 2) break;
    }
  })();
  await connected;
  for await (const m of driver.run("Count the lines of main.go")) void m;
  answer();
  await firstRun; // the first run, from history
  release();
  for await (const m of driver.run("Count the lines of README.md")) void m;
  await done;
  assert.deepEqual(watched.filter(complete), await history(driver), "every complete message exactly once, in order");
});

test("a wrong token is refused", async () => {
  const base = await start("--delay", "0", "--token", "right");
  const id = await create(base, "ask", "right");
  const s = client(base, id, { token: "wrong" });
  await assert.rejects(
    async () => {
      for await (const m of s.run("hi")) void m;
    },
    (e) => e.name === "FloeError" && e.code === "unauthorized" && e.status === 401,
  );
  s.close();
  assert.throws(() => connect("", id), (e) => e.code === "bad_argument");
  assert.throws(() => connect(base, id, { token: 5 }), (e) => e.code === "bad_argument");
  // A base without its scheme is named at once (it was fetched as a URL of
  // scheme "localhost:", or as a path of the page's server).
  for (const bad of ["localhost:8787", "127.0.0.1:8787", "ftp://a.example", "http://"]) {
    assert.throws(() => connect(bad, id), (e) => e.code === "bad_argument" && e.message === `connect: baseURL: want an http or https URL such as http://127.0.0.1:8787 (or a path on the page's own server), got ${JSON.stringify(bad)}`, bad);
  }
  for (const good of [base + "/", "HTTPS://agents.example", "/"]) connect(good, id).close();
  // A misspelt option is named (it was taken without a word: the default
  // used instead), and so is a value the client would trip on later.
  const bad = (re) => (e) => e.name === "FloeError" && e.code === "bad_argument" && re.test(e.message);
  assert.throws(() => connect(base, id, { reconectDelayMs: 1 }), bad(/^connect: options\.reconectDelayMs: unknown option \(did you mean reconnectDelayMs\?\); known: token, fetch, reconnectDelayMs, stallMs$/));
  assert.throws(() => connect(base, id, { fetch: "no" }), bad(/^connect: fetch: want a function/));
  const r = connect(base, id);
  assert.throws(() => r.run("hi", { aprove: () => "allow" }), bad(/^run: options\.aprove: unknown option \(did you mean approve\?\); known: approve, signal, thinkingLevel$/));
  assert.throws(() => r.run("hi", { signal: "stop" }), bad(/^run: signal: want an AbortSignal$/));
  assert.throws(() => r.run("hi", { thinkingLevel: 5 }), bad(/^run: thinkingLevel: want a string$/));
  assert.throws(() => r.messages({ signal: new AbortController().signal }), bad(/^messages: options\.signal: unknown option; known: approve$/));
  r.close();
});

// A session id with half a surrogate pair has no URL: encodeURIComponent
// threw its URIError ("URI malformed"), not a FloeError naming the id.
test("a session id holding half a surrogate pair is refused, naming it", () => {
  for (const [id, half] of [["a\uD800b", "\\ud800"], ["\uDC00", "\\udc00"]]) {
    assert.throws(
      () => connect("http://127.0.0.1:8787", id),
      (e) => e.name === "FloeError" && e.code === "bad_argument" && e.message === `connect: sessionId: ${JSON.stringify(id)} holds half a surrogate pair (${half}), which no URL can name`,
      JSON.stringify(id),
    );
  }
});

test("run works on a client that is already following messages()", async () => {
  const base = await start("--delay", "0", "--mode", "allow-all");
  const id = await create(base, "");
  const driver = client(base, id);
  for await (const m of driver.run("Count the lines of main.go")) void m;
  driver.close();
  const s = client(base, id);
  const it = s.messages();
  let first = await it.next(); // from history: the stream is open, history applied
  assert.equal(first.value.payload.type, "text");
  const got = [];
  const run = (async () => {
    for await (const m of s.run("Count the lines of README.md")) got.push(m);
  })();
  const followed = [];
  for (;;) {
    const { value } = await it.next();
    followed.push(value);
    if (value.payload.type === "request_end" && value.payload.status === "completed" && followed.some((m) => m.payload.text === "Count the lines of README.md")) break;
  }
  await run;
  assert.equal(got.at(-1).payload.type, "request_end");
  assert.ok(followed.some((m) => m.payload.role === "user" && m.payload.text === "Count the lines of README.md"), "messages() echoes the prompt");
  s.close();
});

// gatedFetch holds responses at the client's side of the wire, so a test can
// fix the order in which the client sees them: hold(path-predicate) returns
// a function releasing the responses held so far and from then on.
function gatedFetch() {
  const gates = [];
  const posts = [];
  const f = async (url, init = {}) => {
    const u = new URL(String(url));
    if (init.method === "POST") posts.push(u.pathname);
    const resp = await fetch(url, init);
    for (const g of gates) if (g.match(init.method ?? "GET", u.pathname)) await g.open;
    return resp;
  };
  f.posts = posts;
  f.hold = (match) => {
    let open;
    const g = { match, open: new Promise((r) => (open = r)) };
    gates.push(g);
    return open;
  };
  return f;
}

test("each approval is answered once when the stream brings it before the task's POST returns", async () => {
  const base = await start("--delay", "0");
  const id = await create(base, "ask");
  const g = gatedFetch();
  // The POST /tasks response reaches the client only after the stream has
  // delivered the first approval request; the decisions' responses only
  // after the run: the call is still pending on the client when the POST
  // returns, and is answered then (not before: until the server has taken
  // the task, the run the stream shows may be another's).
  let answered = false;
  const f = async (url, init = {}) => {
    const resp = await g(url, init);
    if (init.method === "POST" && new URL(String(url)).pathname.endsWith("/tasks")) {
      while (s.pendingApprovals.length === 0) await new Promise((r) => setImmediate(r));
      answered = true;
    }
    return resp;
  };
  f.posts = g.posts;
  const releaseDecisions = g.hold((method, path) => method === "POST" && path.includes("/approvals/"));
  const s = client(base, id, { fetch: f });
  const asked = [];
  for await (const m of s.run("Count the lines of main.go", {
    approve: (call) => {
      asked.push([call.payload.tool_call_id, answered]);
      return "allow";
    },
  }))
    void m;
  releaseDecisions();
  assert.deepEqual(asked, [["call_1_1", true], ["call_1_2", true]], "each tool call asked once, once the task was taken");
  const decided = f.posts.filter((p) => p.includes("/approvals/")).map((p) => p.slice(p.lastIndexOf("/") + 1));
  assert.deepEqual(decided, ["call_1_1", "call_1_2"], "the server got one decision per tool call");
});

// cutAfter wraps a stream response so that it breaks right after the first
// event whose text holds marker: what follows it is never delivered.
function cutAfter(resp, marker) {
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let text = "";
  const body = new ReadableStream({
    async pull(ctrl) {
      const { value, done } = await reader.read();
      if (done) return ctrl.close();
      text += decoder.decode(value, { stream: true });
      const at = text.indexOf(marker);
      const end = at < 0 ? -1 : text.indexOf("\n\n", at);
      if (end < 0) {
        if (at < 0) {
          ctrl.enqueue(encoder.encode(text));
          text = "";
        }
        return;
      }
      ctrl.enqueue(encoder.encode(text.slice(0, end + 2)));
      reader.cancel().catch(() => {});
      ctrl.error(new Error("connection cut"));
    },
    cancel() {
      reader.cancel().catch(() => {});
    },
  });
  return new Response(body, { status: resp.status, headers: resp.headers });
}

test("a call requested while the stream was away is announced by the resync and answered once", { timeout: 60_000 }, async () => {
  const base = await start("--delay", "0", "--replay-events", "1");
  const id = await create(base, "ask");
  const pendingOnServer = async () => {
    for (;;) {
      const j = await (await fetch(`${base}/api/sessions/${id}/messages`)).json();
      if (j.pendingApprovals?.length) return;
    }
  };
  let streams = 0;
  let histories = 0;
  let posted;
  const tasksPosted = new Promise((r) => (posted = r));
  const decided = [];
  const f = async (url, init = {}) => {
    const u = new URL(String(url));
    if (u.pathname.endsWith("/stream")) {
      const n = ++streams;
      // Reconnect only once the run waits for its first decision: the
      // request is published while this client is away, and the replay
      // buffer (one event) has lost what it missed.
      if (n === 2) await tasksPosted.then(pendingOnServer);
      const resp = await fetch(url, init);
      return n === 1 ? cutAfter(resp, '"state":"running"') : resp;
    }
    if (u.pathname.endsWith("/messages")) histories++;
    if (init.method === "POST" && u.pathname.includes("/approvals/")) decided.push(u.pathname.slice(u.pathname.lastIndexOf("/") + 1));
    const resp = await fetch(url, init);
    if (init.method === "POST" && u.pathname.endsWith("/tasks")) {
      const text = await resp.text();
      posted();
      return new Response(text, { status: resp.status, headers: resp.headers });
    }
    return resp;
  };
  const s = client(base, id, { fetch: f, reconnectDelayMs: 0 });
  const asked = [];
  const got = [];
  for await (const m of s.run("Count the lines of main.go", { approve: (call) => (asked.push(call.payload.tool_call_id), "allow") })) got.push(m);
  assert.ok(streams >= 2 && histories >= 2, `the client reconnected and resynced (streams ${streams}, histories ${histories})`);
  assert.deepEqual(asked, ["call_1_1", "call_1_2"], "each tool call asked once");
  assert.deepEqual(decided, ["call_1_1", "call_1_2"], "one decision per tool call");
  assert.equal(got.at(-1).payload.type, "request_end");
  assert.deepEqual(s.pendingApprovals, []);
});

test("close() arms no timer and ends what is in flight: a client's process exits on its own", { timeout: 60_000 }, async () => {
  const base = await start("--delay", "0");
  const id = await create(base, "ask");
  // The child breaks out of a run that waits for a decision and closes the
  // client while the abort is in flight, with a reconnect wait of an hour
  // armed by a cut stream; then it lists what still keeps it alive.
  const script = `
    // Timers the client arms once closed: there must be none.
    let closed = false;
    const late = [];
    const setTimer = globalThis.setTimeout;
    globalThis.setTimeout = function (fn, ms, ...rest) {
      if (closed && new Error().stack.includes("connect.mjs")) late.push(ms);
      return setTimer.call(this, fn, ms, ...rest);
    };
    const { connect } = await import(${JSON.stringify(join(ROOT, "static/connect.mjs"))});
    const [base, id] = process.argv.slice(1);
    let cut = null;
    const f = async (url, init) => {
      const resp = await fetch(url, init);
      if (!String(url).endsWith("/stream") || cut) return resp;
      const reader = resp.body.getReader();
      const body = new ReadableStream({
        start(ctrl) { cut = () => { reader.cancel().catch(() => {}); ctrl.error(new Error("connection cut")); }; },
        async pull(ctrl) { const { value, done } = await reader.read().catch(() => ({ done: true })); if (done) return; ctrl.enqueue(value); },
      });
      return new Response(body, { status: resp.status, headers: resp.headers });
    };
    const s = connect(base, id, { fetch: f, reconnectDelayMs: 3600000 });
    let asked;
    const waiting = new Promise((r) => (asked = r));
    const it = s.run("Count the lines of main.go", { approve: () => (asked(), new Promise(() => {})) });
    const first = it.next();
    await waiting;
    const more = s.messages();
    cut();
    const ret = it.return();
    s.close();
    closed = true;
    await ret;
    await first;
    await more.next();
    console.log(JSON.stringify({ late, left: process.getActiveResourcesInfo() }));
  `;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script, base, id], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (b) => (out += b));
  const code = await new Promise((r) => child.on("exit", r));
  assert.equal(code, 0, out);
  // (Idle keep-alive sockets of fetch may still be listed; they do not hold
  // the process, which has exited.)
  const { late, left } = JSON.parse(out.trim().split("\n").at(-1));
  assert.deepEqual(late, [], "no timer armed after close()");
  assert.ok(!left.includes("Timeout"), `no timer left after close(): ${left}`);
});

test("a /messages request that fails is made again on the next connection: run() ends, nothing is lost", { timeout: 30_000 }, async () => {
  const base = await start("--delay", "0", "--mode", "allow-all");
  const id = await create(base, "");
  // Before, the client cleared its resync flag before history answered: a
  // failed /messages left it following the stream without history, and
  // run() waited for it for ever.
  let failures = 0;
  const f = async (url, init) => {
    if (new URL(String(url)).pathname.endsWith("/messages") && failures++ === 0) throw new TypeError("fetch failed (the network went away)");
    return fetch(url, init);
  };
  const s = client(base, id, { fetch: f, reconnectDelayMs: 10 });
  const got = [];
  for await (const m of s.run("Count the lines of main.go")) got.push(m);
  assert.equal(failures > 1, true, "history was fetched again");
  assert.equal(got.filter(complete).at(-1).payload.type, "request_end");
  const all = [];
  const it = s.messages();
  for (const n = (await history(s)).length; all.length < n; ) all.push((await it.next()).value);
  assert.deepEqual(all, await history(s), "every complete message once, in order");
});

test("a gateway's 502, 503 or 504 on the stream is waited out; an answer that is not JSON is a FloeError naming it", { timeout: 30_000 }, async () => {
  const base = await start("--delay", "0", "--mode", "allow-all");
  const id = await create(base, "");
  // A proxy in front of a server that restarts answers with its own page.
  const page = (status) => new Response(`<html><body>${status} Bad Gateway</body></html>`, { status, headers: { "Content-Type": "text/html" } });
  const refusals = [502, 503, 504];
  let streams = 0;
  const f = async (url, init = {}) => {
    const path = new URL(String(url)).pathname;
    if (path.endsWith("/stream") && streams++ < refusals.length) return page(refusals[streams - 1]);
    if (path.endsWith("/steer")) return page(502);
    return fetch(url, init);
  };
  const s = client(base, id, { fetch: f, reconnectDelayMs: 10 });
  const got = [];
  for await (const m of s.run("Count the lines of main.go")) got.push(m);
  assert.equal(streams, refusals.length + 1, "the stream was opened again after each refusal");
  assert.equal(got.filter(complete).at(-1).payload.type, "request_end");
  await assert.rejects(s.steer("short"), (e) => e.name === "FloeError" && e.code === "http_502" && e.status === 502 && e.message.includes("POST /steer: 502") && e.message.includes("Bad Gateway"));
  // Any other refusal of the stream is final, as before.
  const gone = client(base, "no-such-session", { reconnectDelayMs: 10 });
  await assert.rejects(gone.messages().next(), (e) => e.code === "session_not_found" && e.status === 404);
});

// A proxy in front of a server that is down answers every request itself,
// An answer that is not the API's JSON is quoted by its first 80
// characters, cut on a whole one: an emoji at the cut was quoted half, as
// "\ud83d".
test("an answer that is not JSON is quoted without half an emoji", async () => {
  const body = "a".repeat(79) + "😀 and the rest";
  for (const [status, code] of [[200, "bad_response"], [500, "http_500"]]) {
    const s = client("https://example.com/agent", "s1", { fetch: async () => new Response(body, { status }) });
    await assert.rejects(s.history(), (e) => e.code === code && e.message.endsWith(` ${JSON.stringify("a".repeat(79) + "…")}`) && !e.message.includes("\\ud83d"));
  }
  const whole = client("https://example.com/agent", "s1", { fetch: async () => new Response("a".repeat(78) + "😀 and the rest", { status: 500 }) });
  await assert.rejects(whole.history(), (e) => e.message.endsWith(` ${JSON.stringify("a".repeat(78) + "😀…")}`));
});

// 502: a first connection that meets nothing else waited for ever (a
// direct one that reaches no server ends at once). It waits stallMs, in
// which a server that restarts comes back, then ends naming the status.
test("a first connection that meets only a gateway's 502 ends after stallMs, naming it", { timeout: 10_000 }, async () => {
  let asked = 0;
  const f = async () => (asked++, new Response("<html><body>502 Bad Gateway</body></html>", { status: 502, headers: { "Content-Type": "text/html" } }));
  const s = client("https://example.com/agent", "s1", { fetch: f, reconnectDelayMs: 10, stallMs: 100 });
  const why = (e) => e.name === "FloeError" && e.code === "http_502" && e.status === 502 && /Bad Gateway.*only a gateway's 502 for 100 ms: is the server behind it running\?/.test(e.message);
  await assert.rejects(async () => {
    for await (const m of s.run("hi")) void m;
  }, why);
  // Asked again after the first 502, which starts stallMs: how many
  // times more depends on how busy the machine is (a third ask within
  // 100 ms failed at a load of 15).
  assert.equal(asked >= 2, true, "the stream was not asked for again after the first 502");
  await assert.rejects(s.messages().next(), why);
});

// The stallMs of gateway errors count from the last time the stream
// opened: one that opened between them (its history refused, a proxy
// whose server is still starting) has reached the server. Before, they
// counted from the first 502, and a 502 after stallMs of that ended the
// session at once, saying it "answered only a gateway's 502".
test("a gateway's 502 after the stream opened is waited out anew, however long since the first", { timeout: 10_000 }, async () => {
  const base = await start("--delay", "0", "--mode", "allow-all");
  const id = await create(base, "");
  const page = () => new Response("<html><body>502 Bad Gateway</body></html>", { status: 502, headers: { "Content-Type": "text/html" } });
  const stallMs = 200;
  let streams = 0;
  let histories = 0;
  const f = async (url, init = {}) => {
    const path = new URL(String(url)).pathname;
    if (path.endsWith("/stream") && [1, 3].includes(++streams)) return page();
    // The first history answers 502 once stallMs have passed since the first 502.
    if (path.endsWith("/messages") && histories++ === 0) return new Promise((resolve) => setTimeout(() => resolve(page()), stallMs + 50));
    return fetch(url, init);
  };
  const s = client(base, id, { fetch: f, reconnectDelayMs: 10, stallMs });
  const got = [];
  for await (const m of s.run("Count the lines of main.go")) got.push(m);
  assert.equal(streams >= 4, true, `the stream was opened ${streams} times`);
  assert.equal(got.filter(complete).at(-1).payload.type, "request_end");
});

// A decision whose POST is lost on the network is posted again (not asked
// again) while the call is pending: the run goes on.
test("a decision's POST that fails on the network is made again; approve is still asked once per call", { timeout: 30_000 }, async () => {
  const base = await start("--delay", "0");
  const id = await create(base, "ask");
  const posts = [];
  let failed = false;
  const f = (url, init = {}) => {
    const u = new URL(String(url));
    if (init.method === "POST" && u.pathname.includes("/approvals/")) {
      posts.push(u.pathname.slice(u.pathname.lastIndexOf("/") + 1));
      if (!failed) {
        failed = true;
        return Promise.reject(new TypeError("fetch failed"));
      }
    }
    return fetch(url, init);
  };
  const s = client(base, id, { fetch: f, reconnectDelayMs: 10 });
  const asked = [];
  const got = [];
  for await (const m of s.run("Count the lines of main.go", { approve: (call) => (asked.push(call.payload.tool_call_id), "allow") })) got.push(m);
  assert.deepEqual(asked, ["call_1_1", "call_1_2"], "each tool call asked once");
  assert.deepEqual(posts, ["call_1_1", "call_1_1", "call_1_2"], "the lost decision was posted again");
  assert.equal(got.at(-1).payload.type, "request_end");
  assert.deepEqual(s.pendingApprovals, []);
});

// idleOnServer polls /messages until the session's run has ended.
async function idleOnServer(base, id) {
  for (;;) {
    const j = await (await fetch(`${base}/api/sessions/${id}/messages`)).json();
    if (j.state === "idle" && j.messages.some((m) => m.payload?.type === "request_end")) return j;
  }
}

// The prompt a text, or a text and an image: the run's messages are found
// after the prompt's last message in either case.
const SHOT = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==";
for (const [label, prompt] of [
  ["a text", "Count the lines of main.go"],
  ["a text and an image", [msg.userText("Count the lines of main.go"), { type: "model_msg", payload: { type: "image_url", role: "user", image_url: SHOT } }]],
])
test(`run() of ${label} whose whole run happens while the stream is away, past the replay buffer, yields it after the resync and ends`, { timeout: 30_000 }, async () => {
  const base = await start("--delay", "0", "--mode", "allow-all", "--replay-events", "1");
  const id = await create(base, "");
  let streams = 0;
  let cut;
  const cutNow = new Promise((r) => (cut = r));
  let tasksDone;
  const tasksAnswered = new Promise((r) => (tasksDone = r));
  const f = async (url, init = {}) => {
    const u = new URL(String(url));
    if (u.pathname.endsWith("/stream")) {
      const n = ++streams;
      // The second connection opens only once the run has ended on the
      // server: it missed all of it, and the replay buffer lost it.
      if (n === 2) await tasksAnswered.then(() => idleOnServer(base, id));
      const resp = await fetch(url, init);
      if (n !== 1) return resp;
      return cutWhen(resp, cutNow);
    }
    if (init.method === "POST" && u.pathname.endsWith("/tasks")) cut(); // the stream drops as the task goes out
    const resp = await fetch(url, init);
    if (init.method === "POST" && u.pathname.endsWith("/tasks")) tasksDone();
    return resp;
  };
  const s = client(base, id, { fetch: f, reconnectDelayMs: 0 });
  const got = [];
  for await (const m of s.run(prompt)) got.push(m);
  const h = await history(s);
  const n = typeof prompt === "string" ? 1 : prompt.length;
  const first = h.findIndex((m) => m.payload.type === "text" && m.payload.role === "user");
  assert.ok(streams >= 2, `the client reconnected (${streams} streams)`);
  assert.deepEqual(got, h.slice(first + n), "the run's messages, after its prompt, from the resync");
  assert.equal(got.at(-1).payload.type, "request_end");
});

test("messages(): a first connection that drops before its first event reconnects from history's cursor, losing nothing", { timeout: 30_000 }, async () => {
  const base = await start("--delay", "0", "--mode", "allow-all");
  const id = await create(base, "");
  let streams = 0;
  let applied;
  const historyApplied = new Promise((r) => (applied = r));
  let runEnded;
  const driverDone = new Promise((r) => (runEnded = r));
  const f = async (url, init = {}) => {
    const u = new URL(String(url));
    if (u.pathname.endsWith("/stream")) {
      const n = ++streams;
      if (n === 2) await driverDone; // reconnects only after a whole run
      const resp = await fetch(url, init);
      if (n !== 1) return resp;
      resp.body.cancel().catch(() => {});
      // The first connection breaks once history is in, before any event.
      return new Response(new ReadableStream({ start: (c) => void historyApplied.then(() => c.error(new TypeError("terminated"))) }), { status: 200, headers: resp.headers });
    }
    const resp = await fetch(url, init);
    if (u.pathname.endsWith("/messages")) {
      const text = await resp.text();
      setImmediate(applied);
      return new Response(text, { status: resp.status, headers: resp.headers });
    }
    return resp;
  };
  const watcher = client(base, id, { fetch: f, reconnectDelayMs: 0 });
  const watched = [];
  const it = watcher.messages();
  await historyApplied;
  const driver = client(base, id);
  for await (const m of driver.run("Count the lines of main.go")) void m;
  const h = await history(driver);
  runEnded();
  for await (const m of it) {
    if (complete(m)) watched.push(m);
    if (watched.length === h.length) break;
  }
  assert.equal(streams, 2);
  assert.deepEqual(watched, h, "every complete message of the run published while the watcher was away");
});

test("a run whose signal is aborted before its task is posted never starts: it yields its abort only", async () => {
  const base = await start("--delay", "0", "--mode", "allow-all");
  for (const when of ["before run()", "right after run()"]) {
    const id = await create(base, "");
    const s = client(base, id);
    const ac = new AbortController();
    if (when === "before run()") ac.abort();
    const it = s.run("Count the lines of main.go", { signal: ac.signal });
    if (when !== "before run()") ac.abort();
    const got = [];
    for await (const m of it) got.push(m);
    assert.deepEqual(got.map((m) => [m.payload.type, m.payload.reason]), [["abort", "aborted by user"]], when);
    assert.deepEqual(await history(s), [], `${when}: the task was posted`);
  }
});

test("a stream that goes silent (no ping, no close) is reopened after stallMs; a request that cannot reach the server is a FloeError", { timeout: 30_000 }, async () => {
  const base = await start("--delay", "0", "--mode", "allow-all");
  const id = await create(base, "");
  let streams = 0;
  const f = async (url, init = {}) => {
    if (String(url).endsWith("/stream") && ++streams === 1) {
      const resp = await fetch(url, init);
      resp.body.cancel().catch(() => {});
      return new Response(new ReadableStream({}), { status: 200, headers: resp.headers }); // nothing, ever
    }
    return fetch(url, init);
  };
  const s = client(base, id, { fetch: f, reconnectDelayMs: 0, stallMs: 100 });
  const got = [];
  for await (const m of s.run("Count the lines of main.go")) got.push(m);
  assert.ok(streams >= 2, "the silent stream was reopened");
  assert.equal(got.at(-1).payload.type, "request_end");
  assert.throws(() => connect(base, id, { stallMs: -1 }), /connect: stallMs: want a number of milliseconds/);
  const down = client(base, id, { fetch: () => Promise.reject(new TypeError("fetch failed")) });
  await assert.rejects(down.steer("x"), (e) => e.name === "FloeError" && e.code === "network" && /^POST \/steer: fetch failed$/.test(e.message) && e.cause instanceof TypeError);
});

test("a run that a crash of the server cuts off ends with an abort saying so, not as if it had ended", { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmp, "crash-"));
  const first = await server.start("--dir", dir, "--delay", "20ms", "--mode", "allow-all");
  const proc = server.servers.at(-1);
  const id = await create(first, "");
  let target = first;
  const f = (url, init) => fetch(String(url).replace(first, target), init);
  const s = client(first, id, { fetch: f, reconnectDelayMs: 20 });
  const got = [];
  let restarted = null;
  for await (const m of s.run("Count the lines of main.go")) {
    got.push(m);
    if (got.length === 10) {
      // The server dies mid-run; a new one takes its Trace directory.
      proc.kill("SIGKILL");
      restarted = new Promise((r) => proc.once("exit", r))
        .then(() => server.start("--dir", dir, "--delay", "20ms", "--mode", "allow-all"))
        .then((b) => (target = b));
    }
  }
  await restarted;
  const last = got.at(-1);
  assert.equal(last.payload.type, "abort", `the run ended on ${last.payload.type}`);
  assert.match(last.payload.reason, /^the run was cut off: the server stopped before it ended$/);
  assert.equal(got.filter((m) => m.payload.type === "abort").length, 1);
  // The fragments the crash cut are closed before it, as the engine closes
  // an aborted run's: a stop and the complete message, both "aborted".
  assert.deepEqual(checkStream(got), []);
});

test("a follower's messages() closes a run a crash of the server cut off, as run() does", { timeout: 20_000 }, async () => {
  const dir = mkdtempSync(join(tmp, "crash-"));
  const first = await server.start("--dir", dir, "--delay", "20ms", "--mode", "allow-all");
  const proc = server.servers.at(-1);
  const id = await create(first, "");
  let target = first;
  let subscribed;
  const following = new Promise((r) => (subscribed = r));
  const f = async (url, init) => {
    const resp = await fetch(String(url).replace(first, target), init);
    if (String(url).endsWith("/messages")) subscribed(); // its stream is open
    return resp;
  };
  const watcher = client(first, id, { fetch: f, reconnectDelayMs: 20 });
  const driver = client(first, id, { fetch: (url, init) => fetch(String(url).replace(first, target), init), reconnectDelayMs: 20 });
  const it = watcher.messages()[Symbol.asyncIterator]();
  const first0 = it.next();
  await following;
  const run = (async () => {
    for await (const m of driver.run("Count the lines of main.go")) void m;
  })();
  const watched = [(await first0).value];
  let restarted = null;
  while (watched.at(-1).payload.type !== "abort") {
    const m = watched.at(-1);
    if (m.payload.event_type === "delta" && !restarted) {
      // The server dies with a fragment open; a new one takes its Trace directory.
      proc.kill("SIGKILL");
      restarted = new Promise((r) => proc.once("exit", r))
        .then(() => server.start("--dir", dir, "--delay", "20ms", "--mode", "allow-all"))
        .then((b) => (target = b));
    }
    watched.push((await it.next()).value);
  }
  await restarted;
  await run;
  assert.equal(watched.at(-1).payload.reason, "the run was cut off: the server stopped before it ended");
  assert.equal(watched.filter((m) => m.payload.type === "abort").length, 1);
  assert.deepEqual(checkStream(watched), [], "the fragment the crash cut is closed before the abort");
});

test("next() called again before the last one settled: each gets the next message, in order (the first waited forever)", { timeout: 20_000 }, async () => {
  const base = await start("--delay", "0", "--mode", "allow-all");
  const id = await create(base, "");
  const s = client(base, id);
  const it = s.run("Count the lines of main.go");
  const firsts = await Promise.all([it.next(), it.next(), it.next()]);
  const got = firsts.map((r) => r.value);
  for (let r = await it.next(); !r.done; r = await it.next()) got.push(r.value);
  assert.ok(firsts.every((r) => !r.done));
  assert.equal(got[0].payload.type, "tool_list_ready");
  assert.equal(got.at(-1).payload.type, "request_end");
  assert.deepEqual(checkStream(got), []);
  assert.deepEqual(got.filter(complete), (await history(s)).slice(1));
  // And the same for messages(), and for next()s an end settles.
  const ms = s.messages();
  const pair = await Promise.all([ms.next(), ms.next()]);
  assert.deepEqual(pair.map((r) => r.value.payload.type), ["text", "tool_list_ready"]);
  for (let i = 2; i < got.filter(complete).length + 1; i++) await ms.next();
  const tail = [ms.next(), ms.next()];
  s.close();
  assert.deepEqual(await Promise.all(tail), [{ value: undefined, done: true }, { value: undefined, done: true }]);
});

test("a run refused as busy lets go of its signal: aborting it later does not abort the run that refused it", { timeout: 20_000 }, async () => {
  const base = await start("--delay", "0");
  const id = await create(base, "ask");
  const s = client(base, id);
  let asked;
  const askedP = new Promise((r) => (asked = r));
  let decide;
  const decision = new Promise((r) => (decide = r));
  const first = [];
  const running = (async () => {
    for await (const m of s.run("Count the lines of main.go", { approve: () => (asked(), decision) })) first.push(m);
  })();
  await askedP; // the first run waits for its decision
  const ac = new AbortController();
  await assert.rejects(async () => {
    for await (const m of s.run("other", { signal: ac.signal })) void m;
  }, { code: "session_busy" });
  assert.equal(getEventListeners(ac.signal, "abort").length, 0, "the refused run still listens to its signal");
  ac.abort();
  decide("allow");
  await running;
  assert.deepEqual(first.at(-1).payload, { type: "request_end", status: "completed" }, "the first run was aborted by the other's signal");
});

test("break (return()) while the task's POST is on its way aborts the run the POST starts; a signal aborted then too", { timeout: 30_000 }, async () => {
  const base = await start("--delay", "0");
  for (const how of ["return()", "signal"]) {
    const id = await create(base, "ask"); // the run waits for a decision that never comes
    // The task's POST waits for a gate before it goes out; an abort posted
    // meanwhile reaches the server first (the abort's answer is awaited
    // before the gate opens).
    let posting;
    const posted = new Promise((r) => (posting = r));
    let go;
    const gate = new Promise((r) => (go = r));
    let aborts = null;
    const f = async (url, init) => {
      if (String(url).endsWith("/tasks")) {
        posting();
        await gate;
      }
      const resp = fetch(url, init);
      if (String(url).endsWith("/abort")) aborts = resp;
      return resp;
    };
    const s = client(base, id, { fetch: f });
    const ac = new AbortController();
    const it = s.run("Count the lines of main.go", { signal: ac.signal, approve: () => new Promise(() => {}) });
    const first = it.next();
    await posted;
    let end;
    if (how === "return()") end = it.return();
    else ac.abort();
    await aborts;
    go();
    const got = [];
    if (how === "return()") await end;
    else for (let r = await first; !r.done; r = await it.next()) got.push(r.value);
    const h = await history(s);
    assert.equal(s.state, "idle", how);
    assert.equal(h.at(-1)?.payload.type, "abort", `${how}: the run was not aborted`);
    if (how === "signal") assert.equal(got.at(-1).payload.type, "abort");
  }
});

test("one signal shared by many remote runs holds one listener on it, and its abort ends them all", { timeout: 30_000 }, async () => {
  // A page's Stop button given to twelve sessions' runs: one listener each
  // made Node warn of a leak past ten.
  const base = await start("--delay", "0");
  const ac = new AbortController();
  const warnings = [];
  const onWarning = (w) => warnings.push(w.name);
  process.on("warning", onWarning);
  try {
    let waiting = 0;
    let allWaiting;
    const all = new Promise((r) => (allWaiting = r));
    const approve = () => {
      if (++waiting === 12) allWaiting();
      return new Promise(() => {}); // decided by the abort
    };
    const runs = [];
    for (let i = 0; i < 12; i++) {
      const s = client(base, await create(base, "ask"));
      runs.push((async () => {
        const out = [];
        for await (const m of s.run("Count the lines of main.go", { approve, signal: ac.signal })) out.push(m);
        return out;
      })());
    }
    await all;
    assert.equal(getEventListeners(ac.signal, "abort").length, 1);
    ac.abort();
    for (const out of await Promise.all(runs)) assert.equal(out.at(-1).payload.type, "abort");
    assert.equal(getEventListeners(ac.signal, "abort").length, 0);
    await new Promise((r) => setImmediate(r)); // a warning is emitted on the next tick
    assert.deepEqual(warnings, []);
  } finally {
    process.off("warning", onWarning);
  }
});

test("run's thinkingLevel goes with the task (POST …/tasks); a level no adapter reads is the server's 400, thrown by the stream", async () => {
  const base = await start("--delay", "0", "--mode", "allow-all");
  const id = await create(base, "");
  const tasks = [];
  const f = async (url, init = {}) => {
    if (init.method === "POST" && new URL(String(url)).pathname.endsWith("/tasks")) tasks.push(JSON.parse(init.body));
    return fetch(url, init);
  };
  const s = client(base, id, { fetch: f });
  const got = [];
  for await (const m of s.run("Count the lines of main.go", { thinkingLevel: "high" })) got.push(m);
  assert.equal(got.at(-1).payload.type, "request_end");
  for await (const m of s.run("Again")) void m;
  assert.deepEqual(tasks.map((t) => t.thinkingLevel ?? null), ["high", null]);
  await assert.rejects(
    (async () => {
      for await (const m of s.run("Once more", { thinkingLevel: "lots" })) void m;
    })(),
    (e) => e.name === "FloeError" && e.code === "bad_request" && e.status === 400 && /^thinkingLevel: unknown thinking level "lots"/.test(e.message),
  );
});

// The defaults, read from the timers connect.mjs arms (its own, by the
// stack that arms them): no test waits 45 s to see a silent stream go.
test("connect's defaults: a stream is given stallMs 45000 to bring something, as a request its answer, and a dropped one is reopened after reconnectDelayMs 1000", { timeout: 20_000 }, async () => {
  const base = await start("--delay", "0");
  const id = await create(base, "");
  let streams = 0;
  const f = async (url, init = {}) => {
    const resp = await fetch(url, init);
    if (String(url).endsWith("/stream") && ++streams === 1) {
      resp.body.cancel().catch(() => {});
      return new Response("", { status: 200, headers: resp.headers }); // dropped at once
    }
    return resp;
  };
  const armed = [];
  const bounds = []; // a request's bound (answered): stallMs too
  let reopened;
  const second = new Promise((r) => (reopened = r));
  const setTimeout0 = globalThis.setTimeout;
  globalThis.setTimeout = function (fn, ms, ...rest) {
    const stack = new Error().stack;
    if (/connect\.mjs/.test(stack) && /answered/.test(stack)) bounds.push(ms);
    else if (/connect\.mjs/.test(stack)) {
      armed.push(ms);
      if (streams >= 2 && armed.length >= 3) reopened();
    }
    return setTimeout0.call(this, fn, ms, ...rest);
  };
  try {
    const s = client(base, id, { fetch: f });
    const it = s.messages()[Symbol.asyncIterator]();
    it.next().catch(() => {});
    await second;
    s.close();
  } finally {
    globalThis.setTimeout = setTimeout0;
  }
  assert.deepEqual(armed.slice(0, 3), [45000, 1000, 45000]);
  assert.ok(bounds.length >= 3 && bounds.every((ms) => ms === 45000), `the requests' bounds: ${bounds}`);
});

// Two run()s of one client at once: the server takes one task and refuses
// the other (409). The refused run saw the stream go running after its
// POST went out, took the other run for its own, yielded its messages and
// ended with it, its refusal dropped; it could answer the other run's
// approvals with its approve. A run hands over what it sees only once the
// server has taken its task.
test("two run()s at once: the one the server refuses yields nothing of the other and rejects with session_busy", { timeout: 30_000 }, async () => {
  const base = await start("--delay", "0");
  const id = await create(base, "ask");
  // The second task goes out once the first was taken, and its refusal
  // comes back only after the first run has ended.
  let tasks = 0;
  let firstTaken;
  const taken = new Promise((r) => (firstTaken = r));
  let release;
  const refusalMay = new Promise((r) => (release = r));
  const f = async (url, init = {}) => {
    if (init.method !== "POST" || !new URL(String(url)).pathname.endsWith("/tasks")) return fetch(url, init);
    if (++tasks === 1) {
      const resp = await fetch(url, init);
      firstTaken();
      return resp;
    }
    await taken;
    const resp = await fetch(url, init);
    await refusalMay;
    return resp;
  };
  const s = client(base, id, { fetch: f });
  const askedB = [];
  const a = s.run("Count the lines of main.go", { approve: () => "allow" });
  const b = s.run("Count the lines of README.md", { approve: (call) => (askedB.push(call.payload.tool_call_id), "deny") });
  const gotB = [];
  const bEnded = (async () => {
    try {
      for await (const m of b) gotB.push(m);
      return null;
    } catch (e) {
      return e;
    }
  })();
  const gotA = [];
  for await (const m of a) gotA.push(m);
  release();
  const err = await bEnded;
  assert.equal(gotA.at(-1).payload.type, "request_end");
  assert.deepEqual(gotA.filter(complete), (await history(s)).slice(1), "the first run, whole");
  assert.deepEqual(gotB.map((m) => m.payload.type), [], "the refused run yielded the other's messages");
  assert.deepEqual(askedB, [], "the refused run's approve was asked");
  assert.equal(err?.code, "session_busy", `the refused run ended with ${err?.code ?? "no error"}`);
});

// The stream drops as the task goes out, the whole run happens while it is
// away (past the replay buffer), and the resync's history shows it ended
// before the task's POST has answered: the run waited for ever, as the
// history came while its task was not yet taken and nothing came after.
test("run() whose resync shows it whole before its task's POST answers yields it and ends", { timeout: 30_000 }, async () => {
  const base = await start("--delay", "0", "--mode", "allow-all", "--replay-events", "1");
  const id = await create(base, "");
  let streams = 0;
  let cut;
  const cutNow = new Promise((r) => (cut = r));
  let sent;
  const taskSent = new Promise((r) => (sent = r));
  let release;
  const answerMay = new Promise((r) => (release = r));
  const f = async (url, init = {}) => {
    const u = new URL(String(url));
    if (u.pathname.endsWith("/stream")) {
      const n = ++streams;
      if (n === 2) await taskSent.then(() => idleOnServer(base, id)); // it missed the whole run
      const resp = await fetch(url, init);
      if (n !== 1) return resp;
      return cutWhen(resp, cutNow);
    }
    if (init.method !== "POST" || !u.pathname.endsWith("/tasks")) return fetch(url, init);
    cut(); // the stream drops as the task goes out
    const resp = await fetch(url, init);
    sent();
    await answerMay; // its answer comes once the client has the run from history
    return resp;
  };
  const s = client(base, id, { fetch: f, reconnectDelayMs: 0 });
  const watcher = (async () => {
    for await (const m of s.messages()) {
      if (m.payload.type === "request_end") break;
    }
    release();
  })();
  const got = [];
  for await (const m of s.run("Count the lines of main.go")) got.push(m);
  await watcher;
  assert.ok(streams >= 2, `the client reconnected (${streams} streams)`);
  assert.deepEqual(got, (await history(s)).slice(1), "the run's messages, after its prompt, from the resync");
  assert.equal(got.at(-1).payload.type, "request_end");
});

// A connection whose /messages fails is left for a new one. It was left
// open: the server kept a subscriber for it, and its stall timer, armed
// for each read, outlived close() once an event reached it (a process
// waited stallMs to exit).
test("a connection the client leaves (its /messages failed) is cancelled, and close() leaves no timer of it", { timeout: 30_000 }, async () => {
  const base = await start("--delay", "0", "--mode", "allow-all");
  const id = await create(base, "");
  let streams = 0;
  let histories = 0;
  let first = null;
  let cancelled = false;
  const f = async (url, init = {}) => {
    const path = new URL(String(url)).pathname;
    if (path.endsWith("/stream") && ++streams === 1) {
      const resp = await fetch(url, init);
      resp.body.cancel().catch(() => {});
      // A stream the test feeds; it says when the client cancels it.
      const body = new ReadableStream({ start: (c) => void (first = c), cancel: () => void (cancelled = true) });
      return new Response(body, { status: 200, headers: resp.headers });
    }
    if (path.endsWith("/messages") && histories++ === 0) throw new TypeError("fetch failed (the network went away)");
    return fetch(url, init);
  };
  // The timers connect.mjs arms and that have neither fired nor been cleared.
  const live = new Set();
  const setTimeout0 = globalThis.setTimeout;
  const clearTimeout0 = globalThis.clearTimeout;
  globalThis.setTimeout = function (fn, ms, ...rest) {
    if (!/connect\.mjs/.test(new Error().stack)) return setTimeout0.call(this, fn, ms, ...rest);
    const t = setTimeout0.call(this, (...a) => (live.delete(t), fn(...a)), ms, ...rest);
    live.add(t);
    return t;
  };
  globalThis.clearTimeout = function (t) {
    live.delete(t);
    return clearTimeout0.call(this, t);
  };
  try {
    const s = connect(base, id, { fetch: f, reconnectDelayMs: 0 });
    const got = [];
    for await (const m of s.run("Count the lines of main.go")) got.push(m);
    assert.equal(got.at(-1).payload.type, "request_end");
    assert.ok(streams >= 2 && histories >= 2, `the client reconnected (streams ${streams}, histories ${histories})`);
    assert.equal(cancelled, true, "the connection left is still open");
    // An event reaches the connection left (when still open).
    try {
      first.enqueue(new TextEncoder().encode('id: x-1\ndata: {"type":"event_msg","payload":{"type":"x"}}\n\n'));
    } catch {}
    await new Promise((r) => setImmediate(r));
    s.close();
    await new Promise((r) => setImmediate(r));
    assert.equal(live.size, 0, "a timer of the client outlived close()");
  } finally {
    globalThis.setTimeout = setTimeout0;
    globalThis.clearTimeout = clearTimeout0;
  }
});

// An event whose data is not JSON (a proxy's page in the stream, a server
// that is not Floe's) ended the iterators with JSON.parse's bare
// SyntaxError, which named neither the stream nor the event.
test("a stream event that is not JSON ends the iterators with a FloeError naming it", async () => {
  const stream = 'id: a-1\nevent: server_event\ndata: {"type":"task_state","state":"idle"}\n\nid: a-2\ndata: <html>502 Bad Gateway</html>\n\n';
  const f = async (url) => {
    if (String(url).endsWith("/stream")) return new Response(stream, { status: 200, headers: { "Content-Type": "text/event-stream" } });
    return Response.json({ sessionId: "s1", state: "idle", messages: [], cursor: "a-0", unpublished: { from: 0, count: 0 } });
  };
  const s = client("https://example.com/agent", "s1", { fetch: f, reconnectDelayMs: 0 });
  await assert.rejects(
    s.messages().next(),
    (e) => e.name === "FloeError" && e.code === "bad_response" && e.message === 'stream: event a-2: want JSON, got "<html>502 Bad Gateway</html>"',
  );
});

// A stream answered 200 with another type than text/event-stream is no
// event stream (TRANSPORT.md T-1): a site that serves its page at every
// path (a single-page app's fallback) at the URL given. The client read it
// as one, found no event, and opened it again every reconnectDelayMs for
// ever, the iterators waiting; as EventSource fails such a connection, it
// ends them with a FloeError naming the type it got.
test("a stream answered 200 with another type than text/event-stream ends the iterators, naming the type, and is not opened again", async () => {
  const page = '<!doctype html><html><body><div id="app"></div></body></html>';
  let streams = 0;
  let reopened;
  const again = new Promise((_, reject) => (reopened = reject));
  const f = async (url) => {
    if (new URL(String(url)).pathname.endsWith("/stream") && ++streams > 1) reopened(new Error("the stream was opened again"));
    return new Response(page, { status: 200, headers: { "Content-Type": "text/html; charset=utf-8" } });
  };
  const s = client("https://example.com/app", "s1", { fetch: f, reconnectDelayMs: 0 });
  await assert.rejects(
    Promise.race([s.messages().next(), again]),
    (e) => e.name === "FloeError" && e.code === "bad_response" && e.message === 'GET /stream: 200: want text/event-stream, got text/html; charset=utf-8 "<!doctype html><html><body><div id=\\"app\\"></div></body></html>"',
  );
  assert.equal(streams, 1);
  // A type with parameters, or in capitals, is the same type.
  const said = { timestamp: "2026-01-01T00:00:00.000Z", type: "model_msg", payload: { type: "text", role: "user", text: "hi" } };
  for (const type of ["text/event-stream; charset=utf-8", "Text/Event-Stream"]) {
    const stream = 'id: a-1\nevent: server_event\ndata: {"type":"task_state","state":"idle"}\n\n';
    const g = async (url) =>
      String(url).endsWith("/stream")
        ? new Response(stream, { status: 200, headers: { "Content-Type": type } })
        : Response.json({ sessionId: "s1", state: "idle", messages: [said], cursor: "a-0", unpublished: { from: 0, count: 0 } });
    const ok = client("https://example.com/agent", "s1", { fetch: g, reconnectDelayMs: 0 });
    assert.deepEqual((await ok.messages().next()).value, said, type);
  }
});

// resync_required is known by its type (T-9, §4), not by its bytes: a
// server of the contract that writes its JSON with spaces, as Python's
// json.dumps does ({"type": "resync_required"}), was not heard, and what
// its replay had lost never came.
test("a resync_required written with spaces is a resync: /messages is fetched again and what it holds is delivered", { timeout: 30_000 }, async () => {
  const said = (text) => ({ timestamp: "2026-01-01T00:00:00.000Z", type: "model_msg", payload: { type: "text", role: "user", text } });
  const sse = { status: 200, headers: { "Content-Type": "text/event-stream" } };
  let streams = 0;
  let histories = 0;
  let lost;
  const missed = new Promise((_, reject) => (lost = reject));
  const f = async (url, init = {}) => {
    if (new URL(String(url)).pathname.endsWith("/messages")) {
      histories++;
      const messages = histories === 1 ? [said("one")] : [said("one"), said("two")];
      return Response.json({ sessionId: "s1", state: "idle", messages, cursor: `e${histories}-1`, unpublished: { from: 0, count: 0 } });
    }
    streams++;
    if (streams === 1) return new Response('id: e1-1\nevent: server_event\ndata: {"type": "task_state", "state": "idle"}\n\n', sse);
    if (streams === 2) {
      assert.equal(init.headers["Last-Event-ID"], "e1-1");
      return new Response('id: e2-1\nevent: server_event\ndata: {"type": "resync_required"}\n\n', sse);
    }
    if (histories < 2) lost(new Error("the stream was opened again without /messages after resync_required"));
    return new Response(new ReadableStream({}), sse); // nothing more
  };
  const s = client("https://example.com/agent", "s1", { fetch: f, reconnectDelayMs: 0 });
  const it = s.messages();
  assert.deepEqual((await Promise.race([it.next(), missed])).value, said("one"));
  assert.deepEqual((await Promise.race([it.next(), missed])).value, said("two"));
  assert.equal(histories, 2);
});

// A block of the stream with an id and no data is no event (the HTML
// standard's event stream: its id becomes the last event id, nothing is
// dispatched). It ended the iterators: "want JSON, got nothing".
test("an id without data is no event: the client takes the id and reconnects from it", { timeout: 30_000 }, async () => {
  const said = { timestamp: "2026-01-01T00:00:00.000Z", type: "model_msg", payload: { type: "text", role: "user", text: "hi" } };
  const sse = { status: 200, headers: { "Content-Type": "text/event-stream" } };
  const asked = [];
  let second;
  const reconnected = new Promise((r) => (second = r));
  const f = async (url, init = {}) => {
    if (new URL(String(url)).pathname.endsWith("/messages")) return Response.json({ sessionId: "s1", state: "idle", messages: [said], cursor: "e-0", unpublished: { from: 0, count: 0 } });
    asked.push(init.headers["Last-Event-ID"] ?? null);
    if (asked.length === 1) return new Response('id: e-1\nevent: server_event\ndata: {"type":"task_state","state":"idle"}\n\nid: e-2\n\n', sse);
    second();
    return new Response(new ReadableStream({}), sse); // nothing more
  };
  const s = client("https://example.com/agent", "s1", { fetch: f, reconnectDelayMs: 0 });
  const it = s.messages();
  assert.deepEqual((await it.next()).value, said);
  const failed = it.next().then(() => null, (e) => e);
  assert.equal(await Promise.race([reconnected.then(() => null), failed]), null, "the iterator ended before the stream was opened again");
  assert.deepEqual(asked, [null, "e-2"]);
});

const idle = 'event: server_event\ndata: {"type":"task_state","state":"idle"}';
const said = (text) => ({ timestamp: "2026-01-01T00:00:00.000Z", type: "model_msg", payload: { type: "text", role: "user", text } });

// sseResponse is a 200 event stream whose body brings each of parts in a
// read of its own, then ends (or stays open with open: true).
function sseResponse(parts, open = false) {
  const enc = new TextEncoder();
  const body = new ReadableStream({
    start(c) {
      for (const p of parts) c.enqueue(typeof p === "string" ? enc.encode(p) : p);
      if (!open) c.close();
    },
  });
  return new Response(body, { status: 200, headers: { "Content-Type": "text/event-stream" } });
}

// sseClient follows session s1 of a fake server whose history holds one
// message, whose first stream is first and whose later streams stay
// open, empty; reconnected resolves to the Last-Event-ID of the second.
function sseClient(first) {
  let streams = 0;
  let again;
  const reconnected = new Promise((r) => (again = r));
  const f = async (url, init = {}) => {
    if (new URL(String(url)).pathname.endsWith("/messages")) return Response.json({ sessionId: "s1", state: "idle", messages: [said("one")], cursor: "e-0", unpublished: { from: 0, count: 0 } });
    if (++streams === 1) return sseResponse(first);
    again(init.headers["Last-Event-ID"] ?? null);
    return sseResponse([], true);
  };
  return { reconnected, s: client("https://example.com/agent", "s1", { fetch: f, reconnectDelayMs: 0 }) };
}


// A lone CR ends a line, as CRLF and LF do (the HTML standard's event
// stream; a server or proxy of old Mac line ends may send it), and a CR
// that ends one read with the LF opening the next is one line end. The
// client split at LF only: a stream of CR line ends ran together into one
// line, its events lost or merged, its ids garbled.
test("a lone CR ends a line of the stream, and a CRLF split between two reads is one line end", async () => {
  const three = JSON.stringify(said("three"));
  const cut = three.indexOf('"payload"');
  const { reconnected, s } = sseClient([
    `id: e-1\r${idle.replace("\n", "\r")}\r\r`,
    `id: e-2\rdata: ${JSON.stringify(said("two"))}\r\r`,
    "id: e-3\r",
    `\ndata: ${three.slice(0, cut)}\r`,
    `\ndata: ${three.slice(cut)}\r\n\r`,
    "\n",
  ]);
  const it = s.messages();
  assert.deepEqual((await it.next()).value, said("one"));
  assert.deepEqual((await it.next()).value, said("two"));
  assert.deepEqual((await it.next()).value, said("three"), "its data lines joined with LF");
  assert.equal(await reconnected, "e-3");
});

// Session messages are unnamed events (TRANSPORT.md T-1; "message" is the
// name the HTML standard gives an unnamed one) and server events are named
// server_event: an event of another name is none of them, ignored as
// EventSource's onmessage ignores it, its id still taken. The client took
// any named event for a session message: a relay's own "event: heartbeat"
// with "data: tick" ended the iterators (want JSON), and JSON under
// another name was delivered as a message of the session.
test("a stream event named neither server_event nor message is ignored, its id still taken", async () => {
  const { reconnected, s } = sseClient([
    `id: e-1\n${idle}\n\n`,
    "id: e-2\nevent: heartbeat\ndata: tick\n\n",
    `id: e-3\nevent: note\ndata: ${JSON.stringify(said("not of the session"))}\n\n`,
    `id: e-4\nevent: message\ndata: ${JSON.stringify(said("two"))}\n\n`,
    "id: e-5\nevent: heartbeat\ndata: tock\n\n",
  ]);
  const it = s.messages();
  assert.deepEqual((await it.next()).value, said("one"));
  assert.deepEqual((await it.next()).value, said("two"));
  assert.equal(await reconnected, "e-5");
});

// An id field whose value holds U+0000 is ignored (the HTML standard's
// event stream): the last event id stays what it was. The client took it,
// and sent it back as Last-Event-ID (which fetch refuses as a header).
test("an id holding U+0000 is ignored: the last event id stays the one before", async () => {
  const { reconnected, s } = sseClient([`id: e-1\n${idle}\n\n`, `id: e-2\0\ndata: ${JSON.stringify(said("two"))}\n\n`]);
  const it = s.messages();
  assert.deepEqual((await it.next()).value, said("one"));
  assert.deepEqual((await it.next()).value, said("two"));
  assert.equal(await reconnected, "e-1");
});

// A read of many lines is framed in time linear in its size: the reader
// looks for the next CR only once it passed the last one, not at each
// line (a read of LF alone would be read again at every line). Counted,
// not timed: the characters String.prototype.indexOf looks at.
test("a read of many stream lines ended by LF alone is scanned once, not once a line", async () => {
  const text = `id: e-1\n${idle}\n\n` + 'id: e-2\nevent: heartbeat\ndata: {"type":"tick"}\n\n'.repeat(1000) + `id: e-3\ndata: ${JSON.stringify(said("two"))}\n\n`;
  const indexOf = String.prototype.indexOf;
  let scanned = 0;
  String.prototype.indexOf = function (s, from = 0) {
    const at = indexOf.call(this, s, from);
    if (s === "\r" || s === "\n") scanned += (at < 0 ? this.length : at + 1) - Math.min(from, this.length);
    return at;
  };
  try {
    const { s } = sseClient([text]);
    const it = s.messages();
    assert.deepEqual((await it.next()).value, said("one"));
    assert.deepEqual((await it.next()).value, said("two"));
  } finally {
    String.prototype.indexOf = indexOf;
  }
  assert.ok(scanned <= 4 * text.length, `${scanned} characters looked at for a read of ${text.length}`);
});

// The rules of the HTML standard's event stream the cases above leave out,
// pinned: a BOM opens the stream and is dropped (kept, it made the first
// line an unknown field); a character split between two reads comes
// whole; one space after the colon is dropped, not two; a block the body
// ends before its blank line is dropped (its id is not taken).
test("the stream's BOM is dropped, a character split between reads comes whole, one space after the colon is dropped, an unended last block is dropped", async () => {
  const m = JSON.stringify(said("Grüße 東京 🌸"));
  const bytes = new TextEncoder().encode(`\uFEFFdata: ${JSON.stringify(said("two"))}\n\nid:  e-2\ndata: ${m}\n\n`);
  const cut = bytes.indexOf(0xf0) + 2; // inside the 4 bytes of 🌸
  const { reconnected, s } = sseClient([bytes.subarray(0, cut), bytes.subarray(cut), `id: e-3\ndata: ${JSON.stringify(said("lost"))}\n`]);
  const it = s.messages();
  assert.deepEqual((await it.next()).value, said("one"));
  assert.deepEqual((await it.next()).value, said("two"));
  assert.deepEqual((await it.next()).value, said("Grüße 東京 🌸"));
  assert.equal(await reconnected, " e-2");
});

// A request the server (or a proxy before it) takes and never answers is
// given up after stallMs. Before, a run whose task's POST got no answer
// waited for ever, its signal and a break included (both wait for the
// POST's answer, to abort a task the server took), and a /messages or a
// stream's head that never came held the follower, and every run, so.
test("a request never answered is a timeout after stallMs: a run whose POST hangs ends with it, a break and the signal too; a /messages or a stream's head that hangs is asked again", { timeout: 30_000 }, async () => {
  const base = await start("--delay", "0", "--mode", "allow-all");
  const id = await create(base, "");
  // hang answers nothing, ever: heeding the signal (a fetch), or not (a
  // fetch function of the user's that drops it).
  const hang = (heed) => (url, init) => new Promise((_, reject) => heed && init.signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError"))));
  const timedOut = (e) => e.name === "FloeError" && e.code === "timeout" && e.message === "POST /tasks: no answer within 200 ms (stallMs): given up, though it may have reached the server";
  for (const heed of [true, false]) {
    const when = heed ? "a fetch that heeds the signal" : "a fetch that does not";
    let posted;
    const f = (url, init = {}) => {
      if (init.method === "POST" && String(url).endsWith("/tasks")) {
        posted();
        return hang(heed)(url, init);
      }
      return fetch(url, init);
    };
    const s = client(base, id, { fetch: f, reconnectDelayMs: 0, stallMs: 200 });
    let out = new Promise((r) => (posted = r));
    await assert.rejects(
      (async () => {
        for await (const m of s.run("hi")) assert.fail(`${when}: yielded ${m.payload.type}`);
      })(),
      timedOut,
      when,
    );
    // A break while the POST hangs ends the run once the POST is given up.
    out = new Promise((r) => (posted = r));
    const broken = s.run("hi");
    const first = broken.next();
    await out;
    assert.deepEqual(await broken.return(), { value: undefined, done: true }, when);
    await first.then(
      (r) => assert.deepEqual(r, { value: undefined, done: true }, when),
      (e) => assert.ok(timedOut(e), when), // (the next() made before the break: the POST's end)
    );
    // So does the run's signal, aborted while the POST hangs.
    out = new Promise((r) => (posted = r));
    const ctl = new AbortController();
    const aborted = s.run("hi", { signal: ctl.signal });
    const next = aborted.next();
    await out;
    ctl.abort();
    await assert.rejects(next, timedOut, when);
    s.close();
  }
  // A /messages that never answers is asked again, as a failed one is;
  // so is a stream whose head never comes once connected; a first
  // connection whose head never comes ends with a network error naming
  // the bound, as one that reaches no server does.
  const asked = { messages: 0, streams: 0 };
  const runs = async (f) => {
    const s = client(base, id, { fetch: f, reconnectDelayMs: 0, stallMs: 200 });
    const got = [];
    for await (const m of s.run("Count the lines of main.go")) got.push(m);
    assert.equal(got.at(-1).payload.type, "request_end");
    s.close();
  };
  await runs((url, init = {}) => (String(url).endsWith("/messages") && ++asked.messages === 1 ? hang(true)(url, init) : fetch(url, init)));
  assert.ok(asked.messages >= 2);
  await runs(async (url, init = {}) => {
    if (!String(url).endsWith("/stream")) return fetch(url, init);
    if (++asked.streams === 2) return hang(false)(url, init);
    const resp = await fetch(url, init);
    if (asked.streams > 1) return resp;
    resp.body.cancel().catch(() => {});
    return new Response("", { status: 200, headers: resp.headers }); // the first ends at once
  });
  assert.ok(asked.streams >= 3);
  const s = client(base, id, { fetch: (url, init = {}) => (String(url).endsWith("/stream") ? hang(true)(url, init) : fetch(url, init)), stallMs: 200 });
  await assert.rejects(
    (async () => {
      for await (const m of s.run("hi")) assert.fail(`yielded ${m.payload.type}`);
    })(),
    (e) => e.code === "network" && /^GET \/stream: no answer within 200 ms \(stallMs\): no answer from http:\/\/127\.0\.0\.1:\d+: is it running\?$/.test(e.message),
  );
});

// A connection left while its /messages was on its way (the stream cut,
// the client reconnecting) takes nothing from that answer: the next
// connection's history is the one applied. Before, the late answer was
// applied too, after the newer one: its session state undid the stream's,
// so an answer taken before the run started, come while it ran, ended
// run() at once with an abort saying the server cut it off, and its
// pending approvals (none) replaced the run's.
test("a /messages answered after its connection was left is dropped: a stale snapshot neither ends the run nor drops its pending approval", { timeout: 30_000 }, async () => {
  const base = await start("--delay", "0");
  const id = await create(base, "ask");
  let cut;
  const cutFirst = new Promise((r) => (cut = r));
  let late;
  const gate = new Promise((r) => (late = r));
  let taken; // the client has taken the late answer (applied or dropped it)
  const settled = new Promise((r) => (taken = r));
  let histories = 0;
  let streams = 0;
  const f = async (url, init = {}) => {
    const u = String(url);
    if (u.endsWith("/stream") && ++streams === 1) return cutWhen(await fetch(url, init), cutFirst);
    if (u.endsWith("/messages") && ++histories === 1) {
      // The session as it is now (idle, no run), answered once the run
      // is under way, whatever the signal says (a fetch that drops it).
      const resp = await fetch(url, { ...init, signal: undefined });
      const text = await resp.text();
      cut(); // the stream drops meanwhile: the client reconnects
      await gate;
      // What the client does with the answer is done in microtasks,
      // which all run before an immediate.
      setImmediate(taken);
      return { ok: resp.ok, status: resp.status, headers: resp.headers, text: async () => text };
    }
    return fetch(url, init);
  };
  const s = client(base, id, { fetch: f, reconnectDelayMs: 0 });
  const asked = [];
  const got = [];
  for await (const m of s.run("Count the lines of main.go", {
    approve: async (call) => {
      asked.push(call.payload.tool_call_id);
      if (asked.length === 2) {
        // The first call is decided and the second pending: the stale
        // answer (idle, nothing pending) comes now, and is dropped.
        late();
        await settled;
      }
      return "allow";
    },
  }))
    got.push(m);
  assert.equal(got.at(-1).payload.type, "request_end", `the run ended on ${JSON.stringify(got.at(-1).payload)}`);
  assert.equal(new Set(asked).size, asked.length, "each call asked once");
  assert.deepEqual(got.filter(complete), (await history(s)).slice(1));
  assert.equal(s.state, "idle");
});

// A run goes running when its own prompt shows (on the stream, T-4: the
// input is published before task_state running; or in a resync's
// history), not at a task_state running: after its POST went out, a
// reconnect's snapshot (the initial task_state, or /messages) may show
// another client's run, which the server ends before it takes this task.
// Before, that run's tail was yielded as this run's, which then ended
// with it; its own run went on unseen.
test("a reconnect's snapshot showing another client's run after this run's POST went out does not give this run that run's tail", { timeout: 30_000 }, async () => {
  const base = await start("--delay", "0");
  const id = await create(base, "ask");
  // Another client's run, held at its first approval until the test says.
  let approveOther;
  const otherMayGo = new Promise((r) => (approveOther = r));
  const other = client(base, id);
  const following = (async () => {
    for await (const m of other.messages({ approve: async () => (await otherMayGo, "allow") })) void m;
  })();
  await fetch(`${base}/api/sessions/${id}/tasks`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ input: "Count the lines of main.go" }) });
  // This client: its POST held until the other run has ended and its
  // second stream has shown that end; its first stream cut when the POST
  // goes out, so that the second's initial task_state (running: the
  // other's) comes after it.
  let cut;
  const cutFirst = new Promise((r) => (cut = r));
  let sawIdle;
  const idleSeen = new Promise((r) => (sawIdle = r));
  let sawRunning;
  const runningSeen = new Promise((r) => (sawRunning = r));
  let streams = 0;
  const f = async (url, init = {}) => {
    const u = String(url);
    if (u.endsWith("/stream")) {
      const n = ++streams;
      const resp = await fetch(url, init);
      if (n === 1) return cutWhen(resp, cutFirst);
      if (n > 2) return resp;
      const reader = resp.body.getReader();
      const dec = new TextDecoder();
      let seen = "";
      return new Response(
        new ReadableStream({
          async pull(ctrl) {
            const r = await reader.read();
            if (r.done) return ctrl.close();
            seen += dec.decode(r.value, { stream: true });
            ctrl.enqueue(r.value);
            if (seen.includes('"state":"running"')) sawRunning();
            if (seen.includes('"state":"idle"')) sawIdle();
          },
          cancel: () => reader.cancel(),
        }),
        { status: resp.status, headers: resp.headers },
      );
    }
    if (init.method === "POST" && u.endsWith("/tasks")) {
      cut();
      await runningSeen; // the second stream's snapshot: the other run, running
      approveOther();
      await idleSeen; // the other run ended, and this client was told
      await new Promise((r) => setImmediate(r)); // (what the client does with it is done in microtasks)
      return fetch(url, init);
    }
    return fetch(url, init);
  };
  const s = client(base, id, { fetch: f, reconnectDelayMs: 0 });
  const got = [];
  for await (const m of s.run("hi", { approve: () => "allow" })) got.push(m);
  assert.ok(streams >= 2);
  const h = await history(s);
  const mine = h.slice(h.findLastIndex((m) => m.payload.role === "user" && m.payload.text === "hi") + 1);
  assert.ok(mine.length > 0 && mine.length < h.length);
  assert.deepEqual(got.filter(complete), mine, "this run's messages, none of the other's");
  other.close();
  await following.catch(() => {});
});
