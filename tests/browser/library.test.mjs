// (a) and (b): the scripted session through static/floe.mjs, in the page's
// main thread and in a dedicated module Web Worker.
import { test } from "node:test";
import assert from "node:assert/strict";
import { awaitGlobal, baseURL, explain, launch, page as firstPage } from "./harness.mjs";
import { compact, EXPECTED } from "./fixtures/scripted.mjs";

function check(result, where, log) {
  assert.ok(result, "no result" + explain(log));
  assert.equal(result.error, undefined, `the session failed in the ${where}: ${result.error}${explain(log)}`);
  assert.equal(result.where, where);
  assert.deepEqual(result.messages.map(compact), EXPECTED, "stream order" + explain(log));
  // The prompt reached the model as one user text; the tool output came back.
  assert.deepEqual(
    result.requests.map((r) => r.map(compact)),
    [["text:user:say hi"], ["tool_call_output:call_1:hi:completed"]],
  );
  assert.equal(result.approvals.length, 1);
  assert.equal(result.approvals[0].payload.tool_call_id, "call_1");
  for (const m of result.messages) {
    assert.match(m.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, `timestamp of ${compact(m)}`);
  }
}

test("scripted session in the page's main thread", { timeout: 90_000 }, async (t) => {
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  await page.goto(baseURL() + "/tests/browser/fixtures/main.html");
  check(await awaitGlobal(page, "floeResult"), "page", log);
});

test("scripted session in a dedicated module worker", { timeout: 90_000 }, async (t) => {
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  await page.goto(baseURL() + "/tests/browser/fixtures/worker.html");
  check(await awaitGlobal(page, "floeResult"), "worker", log);
});
