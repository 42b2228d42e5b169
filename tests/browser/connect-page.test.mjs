// floe.connect in a page of another origin than the session server's (the
// test server's page, floe-server on another port): what a page author
// meets. Every error a run can end with names what to check, and no run
// waits for ever: an origin the server does not allow, a wrong token, an
// unknown session, a server that is down, Stop while the client connects,
// Stop while the server is gone, a break while the task's POST is in flight.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { freePort } from "../free-port.mjs";
import { baseURL, explain, launch, page as firstPage } from "./harness.mjs";
import { floeServer } from "../floe-server.mjs";
import { connect } from "../../static/connect.mjs";

const server = floeServer("floe-connect-page-");

async function create(base, id) {
  const resp = await fetch(base + "/api/sessions", {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: "Bearer tok" },
    body: JSON.stringify({ approvalMode: "ask", ...(id ? { id } : {}) }),
  });
  assert.equal(resp.status, 201);
  return (await resp.json()).id;
}


async function open(t) {
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  await page.goto(baseURL() + "/tests/browser/fixtures/connect.html");
  await page.waitForFunction(() => window.ready);
  // window.drive(name, base, id, token, opts) runs a task from the page,
  // recording what it yields in window.runs[name]: {got, error, done}.
  await page.evaluate(() => {
    window.runs = {};
    window.remotes = {};
    window.drive = (name, base, id, token, { approve, abortOn, fetchGate } = {}) => {
      const r = (window.runs[name] = { got: [], asked: [], error: null, done: false });
      // fetchGate holds the task's POST until window.openGate() is called.
      const f = fetchGate
        ? async (url, init) => {
            if (String(url).endsWith("/tasks")) await new Promise((g) => (window.openGate = g));
            return fetch(url, init);
          }
        : undefined;
      const remote = (window.remotes[name] = window.connect(base, id, { token, reconnectDelayMs: 50, ...(f ? { fetch: f } : {}) }));
      const ac = (r.ac = new AbortController());
      const opts = { signal: ac.signal };
      if (approve) opts.approve = async (call) => (r.asked.push(call.payload.name), approve === "hold" ? new Promise(() => {}) : approve);
      r.it = remote.run("Count the lines of go.mod", opts)[Symbol.asyncIterator]();
      r.finished = (async () => {
        try {
          for (;;) {
            const { value, done } = await r.it.next();
            if (done) break;
            const p = value.payload;
            if (p.event_type !== "delta") r.got.push(p.type + (p.event_type ? "/" + p.event_type : "") + (p.reason ? ": " + p.reason : ""));
          }
        } catch (e) {
          r.error = { name: e.name, code: e.code, message: e.message };
        }
        r.done = true;
      })();
    };
    // settled waits for a run's end, failing after ms: a run that never ends is the bug.
    window.settled = (name, ms) =>
      Promise.race([window.runs[name].finished.then(() => ({ got: window.runs[name].got, error: window.runs[name].error })), new Promise((r) => setTimeout(() => r({ hung: `run ${name} did not end within ${ms} ms`, got: window.runs[name].got }), ms))]);
  });
  return { page, log };
}

test("a page of another origin: a server that does not allow it, a wrong token, an unknown session, a server that is down each end the run with an error naming it", { timeout: 120_000 }, async (t) => {
  const { page, log } = await open(t);
  const origin = baseURL();
  try {
    // No --origin: the page reads the refusal (before: "Failed to fetch",
    // and the run retried for ever).
    const closed = await server.start("--dir", ":memory:", "--token", "tok");
    const id = await create(closed);
    await page.evaluate(([b, id]) => window.drive("closed", b, id, "tok"), [closed, id]);
    let r = await page.evaluate(() => window.settled("closed", 20_000));
    assert.equal(r.hung, undefined, r.hung);
    assert.equal(r.error?.code, "origin_not_allowed", JSON.stringify(r));
    assert.equal(r.error.message, `Origin ${origin} may not use this server: start it with --origin ${origin} to allow pages of that origin`);

    const base = await server.start("--dir", ":memory:", "--token", "tok", "--origin", origin, "--delay", "1ms");
    const id2 = await create(base);
    for (const [name, token, sid, code, message] of [
      ["token", "wrong", id2, "unauthorized", "missing or wrong bearer token"],
      ["unknown", "tok", "session-none", "session_not_found", 'no session "session-none"'],
    ]) {
      await page.evaluate(([n, b, id, tok]) => window.drive(n, b, id, tok), [name, base, sid, token]);
      r = await page.evaluate((n) => window.settled(n, 20_000), name);
      assert.equal(r.hung, undefined, r.hung);
      assert.deepEqual([r.error?.code, r.error?.message], [code, message], name);
    }

    // A server that is down: the run ends with a network error naming the
    // server and what to check (before: it waited for ever, reconnecting).
    const port = await freePort();
    const later = `http://127.0.0.1:${port}`;
    await page.evaluate((b) => window.drive("down", b, "later", "tok"), later);
    r = await page.evaluate(() => window.settled("down", 20_000));
    assert.equal(r.hung, undefined, r.hung);
    assert.equal(r.error?.code, "network", JSON.stringify(r));
    assert.match(r.error.message, new RegExp(`^GET /stream: .+: no answer from ${later.replace(/[.:/]/g, "\\$&")}: is it running, and does it allow this page's origin ${origin.replace(/[.:/]/g, "\\$&")} \\(--origin, FLOE_ORIGINS\\)\\?$`));

    // The same client, once the server is up, connects again: a run with
    // its approvals answered from the page.
    const up = await server.start("--dir", ":memory:", "--token", "tok", "--origin", origin, "--delay", "1ms", "--port", String(port));
    assert.equal(up, later);
    await create(up, "later");
    const again = await page.evaluate(async () => {
      const got = [];
      const asked = [];
      const run = window.remotes.down.run("Count the lines of go.mod", { approve: async (call) => (asked.push(call.payload.name), "allow") });
      for await (const m of run) if (!m.payload.type.startsWith("partial_")) got.push(m.payload.type);
      return { got, asked };
    });
    assert.deepEqual(again.asked, ["list_files", "count_lines"]);
    assert.equal(again.got.at(-1), "request_end");
  } catch (e) {
    throw new Error(e.message + explain(log), { cause: e });
  }
});

// aborted resolves once the session's stream shows an abort: the server
// ended the run (bounded: a run left going is the bug).
async function aborted(base, id, ms = 20_000) {
  const c = connect(base, id, { token: "tok" });
  let timer;
  try {
    return await Promise.race([
      (async () => {
        for await (const m of c.messages()) if (m.payload.type === "abort") return m.payload.reason;
      })(),
      new Promise((r) => (timer = setTimeout(() => r(`no abort on ${id} within ${ms} ms: the task goes on`), ms))),
    ]);
  } finally {
    clearTimeout(timer);
    c.close();
  }
}

test("Stop from the page always ends the run: while the client connects, while the server is gone, while the task's POST is in flight (break too)", { timeout: 120_000 }, async (t) => {
  const { page, log } = await open(t);
  const origin = baseURL();
  try {
    // A server that takes the connection and never answers: Stop yields
    // the run's abort at once (before: the run waited for the stream).
    const silent = createServer(() => {});
    const sockets = new Set();
    silent.on("connection", (s) => (sockets.add(s), s.on("close", () => sockets.delete(s))));
    await new Promise((r) => silent.listen(0, "127.0.0.1", r));
    t.after(() => {
      for (const s of sockets) s.destroy();
      silent.close();
    });
    const hanging = `http://127.0.0.1:${silent.address().port}`;
    await page.evaluate((b) => window.drive("connecting", b, "s", "tok"), hanging);
    await page.evaluate(() => window.runs.connecting.ac.abort());
    let r = await page.evaluate(() => window.settled("connecting", 10_000));
    assert.equal(r.hung, undefined, r.hung);
    assert.deepEqual(r, { got: ["abort: aborted by user"], error: null });
    await page.evaluate(() => window.remotes.connecting.close());

    // Stop while the server is gone (killed while the run waits for an
    // approval): the run ends here, saying the server did not take it
    // (before: it waited for ever for an end the stream could not bring).
    const base = await server.start("--dir", ":memory:", "--token", "tok", "--origin", origin, "--delay", "1ms");
    const proc = server.servers.at(-1);
    const id = await create(base);
    await page.evaluate(([b, id]) => window.drive("gone", b, id, "tok", { approve: "hold" }), [base, id]);
    await page.waitForFunction(() => window.runs.gone.asked.length > 0);
    await new Promise((resolve) => (proc.once("exit", resolve), proc.kill("SIGKILL")));
    await page.evaluate(() => window.runs.gone.ac.abort());
    r = await page.evaluate(() => window.settled("gone", 10_000));
    assert.equal(r.hung, undefined, r.hung);
    assert.equal(r.error, null);
    assert.match(r.got.at(-1), /^abort: aborted by user, but the server did not take the abort \(POST \/abort: .+\): the run may go on there$/);
    await page.evaluate(() => window.remotes.gone.close());

    // Stop, or a break, while the task's POST has not reached the server:
    // the task, once taken, is aborted (before: the abort came first and
    // found the session idle, and the task went on without the page).
    const live = await server.start("--dir", ":memory:", "--token", "tok", "--origin", origin, "--delay", "1ms");
    for (const how of ["signal", "break"]) {
      const sid = await create(live);
      await page.evaluate(([b, id, how]) => window.drive(how, b, id, "tok", { approve: "hold", fetchGate: true }), [live, sid, how]);
      await page.waitForFunction(() => window.openGate);
      if (how === "signal") await page.evaluate(() => window.runs.signal.ac.abort());
      // (return() settles once the POST's answer says whether there is a
      // run to abort: not awaited here, where the POST waits for the gate)
      else await page.evaluate(() => void (window.runs.break.returned = window.runs.break.it.return()));
      await page.evaluate(() => {
        const open = window.openGate;
        window.openGate = undefined;
        open();
      });
      assert.equal(await aborted(live, sid), "aborted by user", how);
      if (how === "break") assert.deepEqual(await page.evaluate(() => window.runs.break.returned), { done: true, value: undefined });
      r = await page.evaluate((n) => window.settled(n, 10_000), how);
      assert.equal(r.hung, undefined, r.hung);
      assert.equal(r.error, null, how);
      if (how === "signal") assert.equal(r.got.at(-1), "abort: aborted by user");
      await page.evaluate((n) => window.remotes[n].close(), how);
    }
  } catch (e) {
    throw new Error(e.message + explain(log), { cause: e });
  }
});

test("a second page following messages({ approve }) answers the approvals of a run another page started, each once", { timeout: 120_000 }, async (t) => {
  const { page, log } = await open(t);
  const second = await page.context().newPage();
  await second.goto(baseURL() + "/tests/browser/fixtures/connect.html");
  await second.waitForFunction(() => window.ready);
  const posted = new Map();
  second.on("request", (r) => {
    const m = r.method() === "POST" && r.url().match(/\/approvals\/([^/?]+)$/);
    if (m) posted.set(m[1], (posted.get(m[1]) ?? 0) + 1);
  });
  try {
    const base = await server.start("--dir", ":memory:", "--token", "tok", "--origin", baseURL(), "--delay", "1ms");
    const id = await create(base);
    // The follower, before the run: it learns of each request from the
    // stream (before, messages() had no approve, and a page that did not
    // start the run could only poll pendingApprovals).
    await second.evaluate(
      ([b, id]) => {
        window.asked = [];
        window.follower = window.connect(b, id, { token: "tok" });
        window.following = (async () => {
          for await (const m of window.follower.messages({ approve: async (call) => (window.asked.push(call.payload.name), "allow") })) if (m.payload.type === "request_end" && window.asked.length === 2) break;
        })();
      },
      [base, id],
    );
    await page.evaluate(([b, id]) => window.drive("a", b, id, "tok"), [base, id]);
    const r = await page.evaluate(() => window.settled("a", 20_000));
    assert.equal(r.hung, undefined, r.hung);
    assert.equal(r.error, null);
    assert.equal(r.got.filter((g) => !g.includes("/")).at(-1), "request_end");
    await second.evaluate(() => window.following);
    assert.deepEqual(await second.evaluate(() => window.asked), ["list_files", "count_lines"]);
    assert.deepEqual([...posted.values()], [1, 1], "one decision per call");
    await second.evaluate(() => window.follower.close());
    await second.evaluate(() => {
      try {
        window.follower.messages({ approve: () => "allow" });
      } catch (e) {
        return e.code + ": " + e.message;
      }
    }).then((msg) => assert.equal(msg, "closed: remote session: closed"));
    const bad = await second.evaluate(() => {
      try {
        window.connect("http://127.0.0.1:1", "s").messages({ approve: "allow" });
      } catch (e) {
        return e.code + ": " + e.message;
      }
    });
    assert.equal(bad, "bad_argument: messages: approve: want a function");
  } catch (e) {
    throw new Error(e.message + explain(log), { cause: e });
  }
});
