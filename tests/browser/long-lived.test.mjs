// A page open for days, in Chromium: see fixtures/long-lived.mjs. The
// first window warms up (Go's heap grows towards its target, V8 compiles);
// of the next two, the smaller growth is bounded, as in the Node tests
// (tests/node/hardening.test.mjs): a leak grows every window.
import { test } from "node:test";
import assert from "node:assert/strict";
import { baseURL, explain, launch, page as firstPage, WAIT } from "./harness.mjs";

const MB = 1 << 20;

test("a page that creates, runs, abandons and closes stored sessions keeps its memory flat and holds no lock after", { timeout: 180_000 }, async (t) => {
  const { ctx, log } = await launch(t, { args: ["--js-flags=--expose-gc", "--enable-precise-memory-info"] });
  const page = await firstPage(ctx);
  await page.goto(baseURL() + "/tests/browser/fixtures/long-lived.html");
  await page.waitForFunction(() => window.longLivedReady === true, null, { timeout: WAIT });
  const r = await page.evaluate(() => window.longLived(20, 2));
  assert.equal(r.error, undefined, `${r.error}${explain(log)}`);
  const rows = r.rows.slice(1);
  t.diagnostic(`growth per window of 20 cycles of each kind: ${rows.map((w) => `wasm ${w.wasm >> 10} KB, heap ${w.heap >> 10} KB`).join("; ")}`);
  const wasm = Math.min(...rows.map((w) => w.wasm));
  const heap = Math.min(...rows.map((w) => w.heap));
  assert.ok(wasm < MB, `wasm memory grew ${wasm} bytes in every window`);
  assert.ok(heap < MB, `the JavaScript heap grew ${heap} bytes in every window`);
  assert.deepEqual({ held: r.held, pending: r.pending }, { held: 0, pending: 0 }, "Web Locks left once every session is closed");
  assert.equal(r.listeners, 0, "listeners left on the page's long-lived signal");
  assert.deepEqual({ pumps: r.pumps, ticking: r.ticking }, { pumps: 0, ticking: 0 });
});
