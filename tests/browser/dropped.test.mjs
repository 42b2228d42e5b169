// Sessions and streams dropped without close() or return(), in Chromium:
// see fixtures/dropped.mjs. The browser runs with --js-flags=--expose-gc so
// the page can force collections.
import { test } from "node:test";
import assert from "node:assert/strict";
import { awaitGlobal, baseURL, explain, launch, page as firstPage } from "./harness.mjs";

test("dropped sessions are closed and dropped streams abandoned once collected, in the page", { timeout: 90_000 }, async (t) => {
  const { ctx, log } = await launch(t, { args: ["--js-flags=--expose-gc"] });
  const page = await firstPage(ctx);
  await page.goto(baseURL() + "/tests/browser/fixtures/dropped.html");
  const r = await awaitGlobal(page, "floeResult");
  assert.equal(r.error, undefined, `${r.error}${explain(log)}`);
  assert.deepEqual(r.stored.slice(-2), ["request_end", "abort"], `stored: ${r.stored.join(" ")}`);
  assert.equal(r.againStatus, "completed");
  assert.equal(r.againAborted, false);
  assert.ok(r.dropped.sessions >= 1 && r.dropped.streams >= 1, JSON.stringify(r.dropped));
  assert.equal(r.listenersAdded, 1);
  assert.equal(r.listenersLeft, 0);
});
