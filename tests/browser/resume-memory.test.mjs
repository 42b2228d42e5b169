// Resuming long stored sessions in Chromium: WebAssembly's memory never
// shrinks, so what a resume holds at its peak, and what a resumed session
// keeps, is the page's for good. Four sessions of 5,000 turns (a 5.8 MB
// Trace each) are imported in one page, then resumed, run once and kept
// open in a fresh page (a fresh floe.wasm). Each resumed session kept every
// record of its file and its history, the records and the history grew by
// appends, and so did the first run's history JSON: 149 MB in all; then
// 31 MB (up to 59 MB seen, as the collector's cycles fall); 21 MB with each
// file read a part at a time.
import { test } from "node:test";
import assert from "node:assert/strict";
import { baseURL, explain, launch, page as firstPage, WAIT } from "./harness.mjs";

const PAGE = "/tests/browser/fixtures/long-resume.html";
const IDS = [1, 2, 3, 4].map((i) => `session-2026-01-01-00-00-00-longresum${i}`);
const TURNS = 5000;
const BOUND = 96 << 20;

async function open(page) {
  await page.goto(baseURL() + PAGE);
  await page.waitForFunction(() => window.longResumeReady === true, null, { timeout: WAIT });
}

test("four long sessions resumed and run in a page stay under 96 MB of wasm memory", { timeout: 180_000 }, async (t) => {
  const { ctx, log } = await launch(t);
  const first = await firstPage(ctx);
  await open(first);
  const size = await first.evaluate(([ids, turns]) => window.longResume.importLong(window.longResume.load, ids, turns), [IDS, TURNS]);
  assert.ok(size > 5 << 20, `a Trace of ${size} bytes`);
  await first.close();
  const page = await ctx.newPage();
  await open(page);
  const r = await page.evaluate((ids) => window.longResume.resumeLong(window.longResume.load, ids), IDS);
  assert.deepEqual(r.loaded, IDS.map(() => 2 * TURNS), `history lengths loaded${explain(log)}`);
  const steps = r.steps.map(([what, n]) => `${what}: ${(n / 2 ** 20).toFixed(0)} MB`).join(", ");
  t.diagnostic(steps);
  const peak = Math.max(...r.steps.map(([, n]) => n));
  assert.ok(peak < BOUND, `wasm memory reached ${(peak / 2 ** 20).toFixed(0)} MB (${steps}); want under ${BOUND >> 20} MB${explain(log)}`);
});

// One session of 20,000 turns (a 23 MB Trace), resumed in a fresh page: the
// file is read from IndexedDB a part at a time and replayed a record at a
// time. Read whole, the file, its records and the history took WebAssembly's
// memory to 109 MB; 48 MB now.
const LONG = "session-2026-01-01-00-00-00-longresum0";
const LONG_BOUND = 64 << 20;

test("a session of 20,000 turns resumes in a fresh page under 64 MB of wasm memory", { timeout: 300_000 }, async (t) => {
  const { ctx, log } = await launch(t);
  const first = await firstPage(ctx);
  await open(first);
  const size = await first.evaluate((id) => window.longResume.importLong(window.longResume.load, [id], 20000), LONG);
  assert.ok(size > 20 << 20, `a Trace of ${size} bytes`);
  await first.close();
  const page = await ctx.newPage();
  await open(page);
  const r = await page.evaluate((id) => window.longResume.resumeLong(window.longResume.load, [id]), LONG);
  assert.deepEqual(r.loaded, [40000], `history lengths loaded${explain(log)}`);
  const steps = r.steps.map(([what, n]) => `${what.split(" ")[0]}: ${(n / 2 ** 20).toFixed(0)} MB`).join(", ");
  t.diagnostic(steps);
  const resumed = r.steps[1][1];
  assert.ok(resumed < LONG_BOUND, `wasm memory reached ${(resumed / 2 ** 20).toFixed(0)} MB at the resume (${steps}); want under ${LONG_BOUND >> 20} MB${explain(log)}`);
});
