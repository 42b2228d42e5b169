// The front Worker's CORS (FLOE_ORIGINS, as the native server's --origin)
// under local workerd: a page on an allowed origin can create a session and
// read its stream; another origin is refused, 403, and can read why.
// Build first: scripts/worker.sh build (scripts/worker.sh test does both).
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { start, ports } from "./workerd.mjs";

const tmp = mkdtempSync(join(tmpdir(), "floe-workerd-cors-"));
const running = [];
after(async () => {
  for (const w of running) await w.stop();
  rmSync(tmp, { recursive: true, force: true });
});
const nextPort = ports(8860, 8869); // this file's block: worker.test.mjs 8800-8829, models.test.mjs 8830-8859, cors.test.mjs 8860-8869
async function worker(vars) {
  const w = await start({ port: nextPort(), storage: mkdtempSync(join(tmp, "s-")), token: "tok", vars });
  running.push(w);
  return w;
}

const APP = "http://app.example";

test("FLOE_ORIGINS: preflight before authentication, headers on answers and streams, other origins refused", async () => {
  const w = await worker({ FLOE_ORIGINS: `${APP},http://other.example` });
  const pre = await fetch(w.url + "/api/sessions", {
    method: "OPTIONS",
    headers: { Origin: APP, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type" },
  });
  assert.equal(pre.status, 204);
  assert.equal(pre.headers.get("access-control-allow-origin"), APP);
  assert.match(pre.headers.get("access-control-allow-headers"), /Authorization/);
  assert.match(pre.headers.get("access-control-allow-methods"), /POST/);

  const created = await fetch(w.url + "/api/sessions", {
    method: "POST",
    headers: { Origin: APP, Authorization: "Bearer tok", "Content-Type": "application/json" },
    body: "{}",
  });
  assert.equal(created.status, 201);
  assert.equal(created.headers.get("access-control-allow-origin"), APP);
  const { id } = await created.json();

  const stream = await fetch(`${w.url}/api/sessions/${id}/stream`, { headers: { Origin: APP, Authorization: "Bearer tok" } });
  assert.equal(stream.status, 200);
  assert.equal(stream.headers.get("access-control-allow-origin"), APP);
  await stream.body.cancel();

  // A wrong token still gets the CORS headers, so that the page can read the 401.
  const denied = await fetch(w.url + "/api/sessions", { headers: { Origin: APP, Authorization: "Bearer nope" } });
  assert.equal(denied.status, 401);
  assert.equal(denied.headers.get("access-control-allow-origin"), APP);

  await refused(w, "http://evil.example");
  // A page of the Worker's own origin is served.
  const own = await fetch(w.url + "/api/sessions", { headers: { Origin: w.url, Authorization: "Bearer tok" } });
  assert.equal(own.status, 200);
  await own.body?.cancel();
});

// refused checks that a page of origin is refused, as by the native
// server: its preflight passes, and every request then gets a 403 naming
// the origin and FLOE_ORIGINS, with the CORS headers that let the page read
// it (before, the Worker served it, and a page that could not read an
// answer could still start a task with a POST its browser does not
// preflight).
async function refused(w, origin) {
  const pre = await fetch(w.url + "/api/sessions", {
    method: "OPTIONS",
    headers: { Origin: origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type" },
  });
  assert.equal(pre.status, 204);
  assert.equal(pre.headers.get("access-control-allow-origin"), origin);
  assert.equal(pre.headers.get("access-control-allow-credentials"), null, "credentials are for the origins FLOE_ORIGINS names");
  for (const [method, body] of [["GET"], ["POST", new Blob(['{"id":"planted"}'])]]) {
    const r = await fetch(w.url + "/api/sessions", { method, body, headers: { Origin: origin, Authorization: "Bearer tok" } });
    assert.equal(r.status, 403, `${method} from ${origin}`);
    assert.equal(r.headers.get("access-control-allow-origin"), origin);
    assert.equal(r.headers.get("access-control-allow-credentials"), null);
    assert.match(r.headers.get("vary") ?? "", /Origin/);
    assert.deepEqual(await r.json(), {
      error: { code: "origin_not_allowed", message: `Origin ${origin} may not use this server: add ${origin} to FLOE_ORIGINS to allow pages of that origin` },
    });
  }
  const list = await (await fetch(w.url + "/api/sessions", { headers: { Authorization: "Bearer tok" } })).json();
  assert.equal(JSON.stringify(list).includes("planted"), false, "a refused POST made a session");
}

test("without FLOE_ORIGINS there are no CORS headers, and a page of another origin is refused", async () => {
  const w = await worker({});
  const r = await fetch(w.url + "/api/sessions", { headers: { Authorization: "Bearer tok" } });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get("access-control-allow-origin"), null);
  await r.body?.cancel();
  await refused(w, APP);
});
