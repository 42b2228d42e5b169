// The Worker's /readyz with the bounds a deployment has (the workerd tests
// set their own): a check waits 2 s for the object named "index", and a
// finding is kept a second, as the README's "On Cloudflare" says. The
// Worker's main module (wasm/worker/index.mjs) runs here under Node, its
// two imports (the Go front Worker and the session object, both
// WebAssembly) replaced by stubs, on mocked timers: no test waits.
import { test, mock } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const dir = mkdtempSync(join(tmpdir(), "floe-front-"));
copyFileSync(new URL("../../wasm/worker/index.mjs", import.meta.url), join(dir, "index.mjs"));
writeFileSync(join(dir, "worker.mjs"), `export default { fetch: () => new Response("the front Worker") };\n`);
writeFileSync(join(dir, "session_object.mjs"), `export const unknownVar = () => "";\nexport const tokenProblem = () => "";\nexport class SessionObject {}\n`);
const { front } = await import(pathToFileURL(join(dir, "index.mjs")).href);
rmSync(dir, { recursive: true });

// sessions is a SESSIONS binding whose object "index" answers /_index/ready
// with answer(), counting the checks.
function sessions(answer) {
  const ns = { checks: 0, idFromName: (name) => name, get: () => ({ fetch: () => (ns.checks++, answer()) }) };
  return ns;
}

const ctx = { waitUntil() {} };
const readyz = (f, env) => f.fetch(new Request("https://worker.example/readyz"), env, ctx);
const turn = () => new Promise((resolve) => setImmediate(resolve)); // the promises settle; setImmediate is not mocked

test("/readyz waits 2 s for an object that does not answer, then answers 503 and logs why", async (t) => {
  mock.timers.enable({ apis: ["setTimeout", "Date"] });
  t.after(() => mock.timers.reset());
  const logged = [];
  t.mock.method(console, "error", (...a) => logged.push(a.join(" ")));
  const env = { SESSIONS: sessions(() => new Promise(() => {})) };
  let answer = null;
  readyz(front(), env).then((r) => (answer = r));
  await turn();
  mock.timers.tick(1999);
  await turn();
  assert.equal(answer, null, "answered before 2 s");
  mock.timers.tick(1);
  for (let i = 0; i < 10 && !answer; i++) await turn();
  assert.equal(answer?.status, 503);
  assert.equal(await answer.text(), "not ready: the Worker cannot serve sessions (its log says why)\n");
  assert.deepEqual(logged.filter((l) => l.startsWith("floe:")), ["floe: not ready: the Durable Object did not answer within 2000 ms"]);
});

test("/readyz keeps a finding a second: one check of the object, then another", async (t) => {
  mock.timers.enable({ apis: ["setTimeout", "Date"] });
  t.after(() => mock.timers.reset());
  const env = { SESSIONS: sessions(() => new Response(null, { status: 204 })) };
  const f = front();
  assert.equal((await readyz(f, env)).status, 200);
  assert.equal(env.SESSIONS.checks, 1);
  mock.timers.tick(999);
  assert.equal((await readyz(f, env)).status, 200);
  assert.equal(env.SESSIONS.checks, 1, "checked again within a second");
  mock.timers.tick(1);
  assert.equal((await readyz(f, env)).status, 200);
  assert.equal(env.SESSIONS.checks, 2, "not checked again after a second");
});
