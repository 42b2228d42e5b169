// The Worker's /healthz and /readyz, as floe-server's, under local workerd:
// no token, any Origin, GET or HEAD; /readyz 503 while a session could not
// start (a variable refused, FLOE_MODEL without FLOE_MODEL_ID, no SESSIONS
// binding, the object not answering), the reason in the Worker's log only;
// concurrent /readyz requests share one check of the object.
// Build first: scripts/worker.sh build (scripts/worker.sh test does both).
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { start, ports } from "./workerd.mjs";

const tmp = mkdtempSync(join(tmpdir(), "floe-workerd-health-"));
const running = [];
after(async () => {
  for (const w of running) await w.stop();
  rmSync(tmp, { recursive: true, force: true });
});
const nextPort = ports(8900, 8909); // this file's block: worker.test.mjs 8800-8829, models.test.mjs 8830-8859, cors.test.mjs 8860-8869, operator.test.mjs 8870-8899, health.test.mjs 8900-8909
async function worker(opts) {
  const w = await start({ port: nextPort(), storage: mkdtempSync(join(tmp, "s-")), token: "tok", ...opts });
  running.push(w);
  return w;
}

// watched is a log (start's logs) whose until(re) resolves once what it
// holds matches re.
function watched() {
  const logs = [];
  const waiters = [];
  logs.push = (...xs) => {
    const n = Array.prototype.push.apply(logs, xs);
    for (const w of waiters.splice(0)) w();
    return n;
  };
  logs.until = async (re) => {
    while (!re.test(logs.join(""))) await new Promise((resolve) => waiters.push(resolve));
  };
  return logs;
}

async function ask(w, path, init = {}) {
  const resp = await fetch(w.url + path, init);
  return { status: resp.status, body: await resp.text(), headers: resp.headers };
}

test("/healthz and /readyz answer as floe-server's: no token, any Origin, GET or HEAD, text never cached", async () => {
  const w = await worker({ vars: { FLOE_ORIGINS: "https://app.example" } });
  for (const [path, body] of [["/healthz", "ok\n"], ["/readyz", "ready\n"]]) {
    for (const headers of [{}, { Origin: "https://elsewhere.example" }, { Origin: "https://app.example", Authorization: "Bearer wrong" }]) {
      const r = await ask(w, path, { headers });
      assert.equal(r.status, 200, `${path} ${JSON.stringify(headers)}`);
      assert.equal(r.body, body);
      assert.equal(r.headers.get("content-type"), "text/plain; charset=utf-8");
      assert.equal(r.headers.get("cache-control"), "no-store");
    }
    const head = await ask(w, path, { method: "HEAD" });
    assert.equal(head.status, 200);
    assert.equal(head.body, "");
    const post = await ask(w, path, { method: "POST" });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get("allow"), "GET, HEAD");
    assert.equal(post.body, "method not allowed; use GET or HEAD\n");
  }
  // The API beside them still wants its token and an allowed Origin.
  assert.equal((await ask(w, "/api/sessions")).status, 401);
  assert.equal((await ask(w, "/api/sessions", { headers: { Origin: "https://elsewhere.example", Authorization: "Bearer tok" } })).status, 403);
});

test("/readyz is 503 while no session could start, the reason in the Worker's log; /healthz is 200", async () => {
  for (const [opts, reason] of [
    [{ vars: { FLOE_TOKN: "tok" } }, /floe: not ready: FLOE_TOKN: not a variable of Floe's Worker \(did you mean FLOE_TOKEN\?\)/],
    [{ vars: { FLOE_MODEL: "openai" } }, /floe: not ready: the session object cannot start: FLOE_MODEL_ID: required with FLOE_MODEL=openai/],
    [{ vars: { FLOE_MAX_STREAMS: "-1" } }, /floe: not ready: the session object cannot start: FLOE_MAX_STREAMS="-1": want a whole number/],
    [{ mode: "yolo" }, /floe: not ready: the session object cannot start: FLOE_MODE="yolo": want ask/],
    [{ sessions: false }, /floe: not ready: no SESSIONS binding/],
  ]) {
    const logs = watched();
    const w = await worker({ ...opts, logs });
    assert.equal((await ask(w, "/healthz")).status, 200, JSON.stringify(opts));
    const r = await ask(w, "/readyz");
    assert.equal(r.status, 503, JSON.stringify(opts));
    assert.equal(r.body, "not ready: the Worker cannot serve sessions (its log says why)\n");
    await logs.until(reason);
  }
});

// probes asks ready-probe.mjs's counts once at least arrived /readyz
// requests reached the front and probes checks the object "index".
async function probes(w, arrived = 0, probes = 0) {
  return (await fetch(`${w.url}/_test/probes?arrived=${arrived}&probes=${probes}`)).json();
}

test("concurrent /readyz requests share the check in flight: one request to the object, then its finding kept", async () => {
  const w = await worker({ readyProbe: true, vars: { TEST_READY_TTL_MS: "3600000", TEST_READY_TIMEOUT_MS: "3600000" } });
  const N = 8;
  const asked = Array.from({ length: N }, () => ask(w, "/readyz"));
  // All N are in the front and a check is held in the object: none has
  // its finding yet.
  await probes(w, N, 1);
  assert.equal((await fetch(w.url + "/_test/open")).status, 204);
  for (const r of await Promise.all(asked)) assert.deepEqual([r.status, r.body], [200, "ready\n"]);
  assert.deepEqual(await probes(w), { probes: 1, arrived: N });
  // Within its TTL the finding is kept: no request to the object.
  assert.equal((await ask(w, "/readyz")).status, 200);
  assert.deepEqual(await probes(w), { probes: 1, arrived: N + 1 });
});

test("/readyz is 503 when the object does not answer within the check's bound, and the next check asks again", async () => {
  const logs = watched();
  const w = await worker({ readyProbe: true, logs, vars: { TEST_READY_TTL_MS: "0", TEST_READY_TIMEOUT_MS: "50" } });
  // The object's gate is never opened: it never answers.
  const r = await ask(w, "/readyz");
  assert.deepEqual([r.status, r.body], [503, "not ready: the Worker cannot serve sessions (its log says why)\n"]);
  await logs.until(/floe: not ready: the Durable Object did not answer within 50 ms/);
  assert.equal((await ask(w, "/readyz")).status, 503);
  assert.deepEqual(await probes(w, 2, 2), { probes: 2, arrived: 2 }, "the check after a timeout is a new one");
});
