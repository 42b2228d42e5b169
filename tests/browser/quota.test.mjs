// A full IndexedDB quota (Chromium's quota of the origin set to 4 MB through
// the DevTools protocol) and twelve turns of 500 kB each: the writes that
// fail are reported and their records held. Nothing accepted is lost
// unreported: close() writes them once more (the quota raised meanwhile:
// the Trace is whole), or reports how many records it drops (the Trace
// keeps its prefix, and a resume continues from it without a gap); a
// resumeSession in the same page stores them first and continues after
// them, as the session's own next run does.
import { test } from "node:test";
import assert from "node:assert/strict";
import { awaitGlobal, baseURL, explain, launch, page as firstPage } from "./harness.mjs";
import { checkTrace, recordsOf } from "./trace-rules.mjs";

const TURNS = 12;

/**
 * A page of a fresh profile whose origin's quota is 4 MB; raise() lifts it.
 * A profile on disk, as a user's: the quota of a context in memory is
 * another.
 */
async function smallQuota(t) {
  const { ctx, log } = await launch(t, { profile: true });
  const page = await firstPage(ctx);
  const cdp = await ctx.newCDPSession(page);
  const origin = baseURL();
  await cdp.send("Storage.overrideQuotaForOrigin", { origin, quotaSize: 4 << 20 }); // before the page opens: it reads it once
  await page.goto(baseURL() + "/tests/browser/fixtures/main.html");
  await awaitGlobal(page, "floeResult");
  await page.evaluate(async (turns) => {
    const { load } = await import("/static/floe.mjs");
    const { mockModel } = await import("/static/test.mjs");
    const floe = await load();
    // 500 kB of random text a reply: IndexedDB does not compress it.
    const reply = () => {
      const a = new Uint8Array(375_000);
      for (let i = 0; i < a.length; i += 65536) crypto.getRandomValues(a.subarray(i, i + 65536));
      let s = "";
      for (let i = 0; i < a.length; i += 3000) s += btoa(String.fromCharCode(...a.subarray(i, i + 3000)));
      return s;
    };
    const diagnostics = [];
    const onDiagnostic = (d) => diagnostics.push(`${d.kind}: ${d.message}`);
    window.q = {
      floe,
      diagnostics,
      open: (id) =>
        id
          ? floe.resumeSession(id, { llm: mockModel(["after"]), onDiagnostic })
          : floe.createSession({ llm: mockModel(Array.from({ length: turns }, reply)), store: "indexeddb", onDiagnostic }),
      async run(session, from, to) {
        for (let i = from; i < to; i++) for await (const m of session.run("turn " + i));
      },
      exportSession: (id) => floe.exportSession(id),
    };
  }, TURNS);
  const raise = () => cdp.send("Storage.overrideQuotaForOrigin", { origin }); // no quotaSize: the override is lifted
  return { page, log, raise };
}

/** The prompts of a Trace, in order. */
const prompts = (files) =>
  recordsOf(files)
    .filter((r) => r.type === "model_msg" && r.payload.type === "text" && r.payload.role === "user")
    .map((r) => r.payload.text);

const turns = (from, to) => Array.from({ length: to - from }, (_, i) => "turn " + (from + i));

/** Runs the twelve turns in a new session: its id and the diagnostics of the runs. */
async function fill(page, log) {
  const r = await page.evaluate(async (turns) => {
    const s = await window.q.open();
    window.q.first = s;
    await window.q.run(s, 0, turns);
    return { id: s.id, diagnostics: window.q.diagnostics.splice(0) };
  }, TURNS);
  assert.ok(
    r.diagnostics.length > 0 && r.diagnostics.every((d) => d.includes(`"${r.id}"`) && d.includes("QuotaExceededError")),
    `want each failed write reported, naming the session and the full quota: ${JSON.stringify(r.diagnostics)}` + explain(log),
  );
  return r.id;
}

test("a full quota: close() writes the held records once more once the quota is raised", { timeout: 120_000 }, async (t) => {
  const { page, log, raise } = await smallQuota(t);
  const id = await fill(page, log);
  await raise();
  const r = await page.evaluate(async (id) => {
    await window.q.first.close();
    return { files: await window.q.exportSession(id), diagnostics: window.q.diagnostics };
  }, id);
  assert.deepEqual(r.diagnostics, [], "close() after the quota was raised" + explain(log));
  assert.deepEqual(prompts(r.files), turns(0, TURNS), "the turns held at close() were not stored" + explain(log));
  assert.deepEqual(checkTrace(r.files, { sessionId: id }), []);
});

test("a full quota: close() reports the records it drops; a resume continues from the stored prefix", { timeout: 120_000 }, async (t) => {
  const { page, log, raise } = await smallQuota(t);
  const id = await fill(page, log);
  const r = await page.evaluate(async (id) => {
    await window.q.first.close();
    return { files: await window.q.exportSession(id), diagnostics: window.q.diagnostics.splice(0) };
  }, id);
  const stored = prompts(r.files);
  assert.ok(stored.length < TURNS, `all ${TURNS} turns fitted in the quota: the test needs a smaller one`);
  assert.deepEqual(stored, turns(0, stored.length));
  const lost = 1 + TURNS * 5 - recordsOf(r.files).length; // session_meta, then 5 records a turn
  assert.equal(r.diagnostics.length, 1, `want one report of the loss at close(): ${JSON.stringify(r.diagnostics)}` + explain(log));
  assert.match(r.diagnostics[0], new RegExp(`^trace: trace: append "${id}" file 1: indexeddb: QuotaExceededError.*; ${lost} records waiting to be written again are dropped`));

  await raise();
  const after = await page.evaluate(async (id) => {
    const s = await window.q.open(id);
    for await (const m of s.run("after the loss"));
    await s.close();
    return { files: await window.q.exportSession(id), diagnostics: window.q.diagnostics };
  }, id);
  assert.deepEqual(after.diagnostics, [], "the resumed session" + explain(log));
  assert.deepEqual(prompts(after.files), [...stored, "after the loss"], "the resumed Trace");
  // The prefix may end inside a turn, as after a crash (its request is open).
  assert.deepEqual(checkTrace(after.files, { sessionId: id, cut: recordsOf(r.files).length }), []);
});

test("a full quota: resumeSession in the same page stores the records the open session holds, then continues after them", { timeout: 120_000 }, async (t) => {
  const { page, log, raise } = await smallQuota(t);
  const id = await fill(page, log);
  await raise();
  const r = await page.evaluate(async (id) => {
    const s = await window.q.open(id);
    const resumed = await window.q.exportSession(id);
    for await (const m of s.run("after the resume"));
    await s.close();
    await window.q.first.close(); // it holds nothing more: it writes nothing
    return { resumed, files: await window.q.exportSession(id), diagnostics: window.q.diagnostics };
  }, id);
  assert.deepEqual(r.diagnostics, [], "the resume" + explain(log));
  assert.deepEqual(prompts(r.resumed), turns(0, TURNS), "the held turns were not stored before the resume read the Trace" + explain(log));
  assert.deepEqual(prompts(r.files), [...turns(0, TURNS), "after the resume"]);
  assert.deepEqual(checkTrace(r.files, { sessionId: id }), []);
});

test("a full quota: the session's next run once the quota is raised stores the held records first, in order", { timeout: 120_000 }, async (t) => {
  const { page, log, raise } = await smallQuota(t);
  const id = await fill(page, log);
  await raise();
  const r = await page.evaluate(async (id) => {
    const s = window.q.first;
    for await (const m of s.run("turn 12")); // the model has no reply left: it fails, and is traced
    const files = await window.q.exportSession(id);
    await s.close();
    return { files, diagnostics: window.q.diagnostics };
  }, id);
  assert.deepEqual(r.diagnostics, [], "the run after the quota was raised" + explain(log));
  assert.deepEqual(prompts(r.files), turns(0, TURNS + 1), "the held turns, then the new one" + explain(log));
  assert.deepEqual(checkTrace(r.files, { sessionId: id }), []);
});
