// The front Worker's CORS (FLOE_ORIGINS, as the native server's --origin)
// under local workerd: a page on an allowed origin can create a session and
// read its stream; another origin gets no CORS headers.
// Build first: scripts/worker.sh build (scripts/worker.sh test does both).
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { start } from "./workerd.mjs";

const tmp = mkdtempSync(join(tmpdir(), "floe-workerd-cors-"));
const running = [];
after(async () => {
  for (const w of running) await w.stop();
  rmSync(tmp, { recursive: true, force: true });
});
let nextPort = 8841; // the ports of this file: 8841-8845
async function worker(vars) {
  const w = await start({ port: nextPort++, storage: mkdtempSync(join(tmp, "s-")), token: "tok", vars });
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

  const other = await fetch(w.url + "/api/sessions", { headers: { Origin: "http://evil.example", Authorization: "Bearer tok" } });
  assert.equal(other.headers.get("access-control-allow-origin"), null);
  assert.match(other.headers.get("vary") ?? "", /Origin/);
});

test("without FLOE_ORIGINS there are no CORS headers", async () => {
  const w = await worker({});
  const r = await fetch(w.url + "/api/sessions", { headers: { Origin: APP, Authorization: "Bearer tok" } });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get("access-control-allow-origin"), null);
  await r.body?.cancel();
});
