// Persistence of sessions in IndexedDB (floe.mjs, store "indexeddb"):
// (a) the page reloads at five points of a turn, (b) the browser restarts on
// the same profile at the same points; after each cut the session lists,
// resumes, runs on to the end, and its stored Trace satisfies ENGINE.md §16;
// also, reloading while a flood of records is being written keeps a prefix
// of them, never a hole; (c) two tabs, one session: the second tab's run is
// refused (session_busy) and writes nothing; (d) export → import (a session
// of two files, after a compaction) gives identical files; (e) a session
// deleted in another tab is not made again, headless, by a tab that holds it;
// (f) where there are no Web Locks (a page not a secure context, or an old
// browser), a stored session's run says so, and why; (g) an
// id with half a surrogate pair is refused (it named another session); (h)
// a subagent's run holds its session's lock against another tab.
//
// Every step waits on a condition with a bound (persist-harness.mjs, the
// page's waitFor); the page orders events with gates, never with timers.
import { test } from "node:test";
import { isDeepStrictEqual } from "node:util";
import assert from "node:assert/strict";
import { baseURL, explain, launch } from "./harness.mjs";
import { call, profileBrowser, ready, STEP } from "./persist-harness.mjs";
import {
  brief,
  canon,
  checkTrace,
  countPlaceholders,
  isRecordable,
  lostRecords,
  prefixMismatch,
  recordsOf,
  streamMismatch,
} from "./trace-rules.mjs";
import { FLOOD } from "./pages/persist.mjs";

const PROMPT = "say hi";

/** The five cut points: the first run's scenario and the labels it must reach. */
const POINTS = [
  { scenario: "approve", point: "before approval (approver pending)", cut: ["approve:call_1"] },
  { scenario: "toolStream", point: "while a tool streams (blocked after its first delta)", cut: ["partial_tool_call_output:delta:h"] },
  { scenario: "lateOutput", point: "after request_end with a late tool output pending", cut: ["tool:call_1", "request_end:completed"] },
  { scenario: "backoff", point: "during a reconnect backoff (clock.sleep pending)", cut: ["request_end:timeout", "sleep"] },
  { scenario: "plain", point: "after the task ended", cut: ["run:done"] },
];

const sid = (tag, i) => `session-2026-01-01-00-00-00-${tag}${String(i).padStart(7, "0")}`;

/** The Trace as one line per record, the cut marked, for failure reports. */
function dump(records, cut = -1) {
  return records.map((r, i) => `${i === cut ? "--- cut ---\n    " : ""}#${i} ${brief(r)}`).join("\n    ");
}

function traceDiagnostics(state) {
  return state.diagnostics.filter((d) => d.kind === "trace").map((d) => `${state.name}: trace diagnostic: ${d.message}`);
}

/** lastActivity as a number (ms), whether the API gives a number or a date string. */
const when = (v) => (typeof v === "number" ? v : Date.parse(v));

/** Checks listSessions() after a cut. */
async function checkListed(page, sessionId, log) {
  const list = await call(page, "list");
  assert.ok(Array.isArray(list), `listSessions() returned ${JSON.stringify(list)}, want an array`);
  const entry = list.find((e) => e && e.id === sessionId);
  assert.ok(entry, `listSessions() does not show ${sessionId}; it shows ${JSON.stringify(list.map((e) => e?.id))}${explain(log)}`);
  assert.equal(entry.firstPrompt, PROMPT, `listSessions() firstPrompt of ${sessionId}`);
  assert.ok(Number.isFinite(when(entry.lastActivity)), `listSessions() lastActivity of ${sessionId} is ${JSON.stringify(entry.lastActivity)}`);
  assert.ok(entry.size > 0, `listSessions() size of ${sessionId} is ${JSON.stringify(entry.size)}, want > 0`);
  const files = Array.isArray(entry.files) ? entry.files.length : entry.files;
  assert.ok(files >= 1, `listSessions() files of ${sessionId} is ${JSON.stringify(entry.files)}, want ≥ 1`);
  for (let i = 1; i < list.length; i++) {
    assert.ok(
      when(list[i - 1].lastActivity) >= when(list[i].lastActivity),
      `listSessions() is not newest first: ${list[i - 1].id} (${list[i - 1].lastActivity}) before ${list[i].id} (${list[i].lastActivity})`,
    );
  }
}

/**
 * Runs the first run of p in b.page until its cut point, cuts the page off
 * (how: "reload" or "restart"), then lists, resumes, runs on and checks the
 * Trace.
 */
async function cutAndResume(b, p, sessionId, how) {
  const log = b.log;
  let page = b.page;
  await call(page, "start", [{ sessionId, scenario: p.scenario, prompt: PROMPT }]);
  for (const label of p.cut) {
    await call(page, "waitFor", ["first", label, STEP]).catch((e) => {
      throw new Error(`the first run did not reach the point "${p.point}": ${e.message}${explain(log)}`);
    });
  }
  const first = await call(page, "state", ["first"]);
  assert.equal(first.error, null, `the first run failed before the cut: ${JSON.stringify(first.error)}${explain(log)}`);

  // What the store holds at the cut. After the task ended the run's iterator
  // has finished, so its records must be committed already; mid-turn, the
  // run is idle on a gate and the store must catch up with what the stream
  // showed.
  let files;
  if (p.scenario === "plain") {
    files = await call(page, "export", [sessionId]);
  } else {
    const w = await call(page, "waitStored", ["first", STEP]);
    assert.equal(
      w.missing,
      undefined,
      `records seen on the stream were not in IndexedDB ${STEP} ms after the run stopped ${p.point} ` +
        `(${w.polls} exports): missing ${JSON.stringify(w.missing)}`,
    );
    files = w.files;
  }
  const before = recordsOf(files);
  const problems = [];
  const m0 = streamMismatch(before, first.seen, `stored ${p.point}, before the cut`);
  if (m0) problems.push(m0 + (p.scenario === "plain" ? " (the run's iterator had finished: its records must be committed)" : ""));
  problems.push(...traceDiagnostics(first));

  // The cut.
  if (how === "reload") {
    await page.reload();
    await ready(page, log);
  } else {
    await b.restart();
    page = await b.open();
  }

  await checkListed(page, sessionId, log);
  const atCut = recordsOf(await call(page, "export", [sessionId]));
  // What a page renders of the session after the reload: its records, as stored.
  const readAtCut = await call(page, "read", [sessionId]);
  if (!isDeepStrictEqual(readAtCut, atCut)) {
    problems.push(`after the ${how}, readSession gave ${readAtCut.length} records, not the ${atCut.length} the export holds`);
  }
  const lost0 = lostRecords(before, atCut);
  if (lost0) problems.push(`after the ${how}, before resuming: ${lost0}`);
  else if (atCut.length !== before.length) {
    problems.push(`after the ${how}, before resuming: ${atCut.length - before.length} record(s) appeared that the store did not hold at the cut`);
  }

  // Resume with fresh callbacks and run on to the end.
  await call(page, "resume", [{ sessionId }]);
  await call(page, "waitFor", ["resumed", ["run:done", "run:error"], STEP]).catch((e) => {
    throw new Error(`the resumed run did not finish: ${e.message}${explain(log)}`);
  });
  const resumed = await call(page, "state", ["resumed"]);
  assert.equal(resumed.error, null, `the resumed run failed: ${JSON.stringify(resumed.error)}${explain(log)}`);
  assert.ok(
    resumed.reached.includes("text:assistant:Echo said: ok"),
    `the resumed run did not continue to its end: ${resumed.reached.join(", ")}`,
  );
  problems.push(...traceDiagnostics(resumed));

  // The stored Trace after the resumed run.
  const final = await call(page, "export", [sessionId]);
  const records = recordsOf(final);
  const placeholders = countPlaceholders(resumed.history, resumed.requests[0]);
  problems.push(...checkTrace(final, { cut: before.length, placeholders, sessionId }));
  const lost = lostRecords(before, records);
  if (lost) problems.push(lost);
  else {
    const m1 = streamMismatch(records.slice(before.length), resumed.seen, "the resumed run");
    if (m1) problems.push(m1);
  }
  // E-17.3: the first prompt reaches the resumed model once — in its history
  // when its request was committed, else as carry-over in the first request.
  const prompts = [...(resumed.history ?? []), ...(resumed.requests[0] ?? [])].filter(
    (m) => m.payload?.type === "text" && m.payload.role === "user" && m.payload.text === PROMPT,
  ).length;
  if (prompts !== 1) problems.push(`E-17.3: the resumed model received the first prompt ${prompts} times (history + first request), want 1`);

  assert.deepEqual(
    problems,
    [],
    `cut ${p.point} (${how}):\n  ${problems.join("\n  ")}\n  files: ${final.map((f) => f.name).join(", ")}\n  Trace:\n    ${dump(records, before.length)}` +
      `\n  resumed model's first request: ${(resumed.requests[0] ?? []).map(brief).join(" | ")}` +
      `\n  loadHistory: ${resumed.history ? resumed.history.map(brief).join(" | ") : "not called"}${explain(log)}`,
  );
}

test("(a) reload at five points of a turn: lists, resumes, continues; Trace per ENGINE.md §16", { timeout: 240_000 }, async (t) => {
  const b = await profileBrowser(t);
  for (const [i, p] of POINTS.entries()) {
    await t.test(`reload ${p.point}`, async () => {
      await b.open();
      await cutAndResume(b, p, sid("a", i + 1), "reload");
    });
  }
});

test("(a) reload while a flood of records is being stored: the store keeps a prefix, never a hole", { timeout: 120_000 }, async (t) => {
  const b = await profileBrowser(t);
  const page = await b.open();
  const sessionId = sid("e", 1);
  await call(page, "start", [{ sessionId, scenario: "flood", prompt: PROMPT }]);
  await call(page, "waitFor", ["first", "llm:1", STEP]);
  const w = await call(page, "waitStored", ["first", STEP]);
  assert.equal(w.missing, undefined, `records of the run's start did not reach IndexedDB: ${JSON.stringify(w.missing)}`);
  const seen0 = (await call(page, "state", ["first"])).seen;

  // Release FLOOD texts (one record each); the page reloads itself the
  // moment its consumer sees the last one, with their writes in flight.
  await call(page, "reloadOn", ["first", `text:assistant:t${FLOOD - 1}`]);
  const reloaded = page.waitForEvent("load", { timeout: STEP });
  await call(page, "release", ["first", "flood"]);
  await reloaded.catch((e) => {
    throw new Error(`the page did not reload itself after the flood: ${e.message}${explain(b.log)}`);
  });
  await ready(page, b.log);

  const before = recordsOf(await call(page, "export", [sessionId]));
  const texts = Array.from({ length: FLOOD }, (_, i) => ({
    type: "model_msg",
    payload: { type: "text", role: "assistant", text: `t${i}`, stop_reason: "completed" },
  }));
  const noTime = (r) => canon({ type: r.type, payload: r.payload });
  const pm = prefixMismatch(before, [...seen0, ...texts], "stored at the reload", noTime);
  assert.equal(pm.problem, null, `${pm.problem}\n  Trace:\n    ${dump(before)}`);
  const kept = pm.kept - seen0.filter(isRecordable).length;
  assert.ok(kept >= 0, `records seen before the flood were lost: ${pm.kept} stored of ${seen0.filter(isRecordable).length}`);
  t.diagnostic(`${kept} of ${FLOOD} flood records were stored when the page reloaded`);

  await call(page, "resume", [{ sessionId }]);
  await call(page, "waitFor", ["resumed", ["run:done", "run:error"], STEP]);
  const resumed = await call(page, "state", ["resumed"]);
  assert.equal(resumed.error, null, `the resumed run failed: ${JSON.stringify(resumed.error)}${explain(b.log)}`);
  const final = await call(page, "export", [sessionId]);
  const records = recordsOf(final);
  const problems = checkTrace(final, { cut: before.length, sessionId });
  const lost = lostRecords(before, records);
  if (lost) problems.push(lost);
  else {
    const m = streamMismatch(records.slice(before.length), resumed.seen, "the resumed run");
    if (m) problems.push(m);
  }
  problems.push(...traceDiagnostics(resumed));
  assert.deepEqual(problems, [], `flood:\n  ${problems.join("\n  ")}\n  Trace tail:\n    ${dump(records.slice(-20))}`);
});

test("(b) browser restart on the same profile at five points of a turn", { timeout: 300_000 }, async (t) => {
  const b = await profileBrowser(t);
  for (const [i, p] of POINTS.entries()) {
    await t.test(`restart ${p.point}`, async () => {
      await b.open();
      await cutAndResume(b, p, sid("b", i + 1), "restart");
    });
  }
});

test("(c) two tabs, one session: the second tab's run is refused with session_busy, no interleaved records", { timeout: 120_000 }, async (t) => {
  const b = await profileBrowser(t);
  const sessionId = sid("c", 1);
  const log = b.log;
  const tab1 = await b.open();
  await call(tab1, "start", [{ sessionId, prompt: PROMPT }]);
  await call(tab1, "waitFor", ["first", ["run:done", "run:error"], STEP]);
  assert.equal((await call(tab1, "state", ["first"])).error, null, "tab 1's first run failed");
  const run1 = recordsOf(await call(tab1, "export", [sessionId]));

  // Both tabs hold the session, resumed while nobody runs it.
  const tab2 = await b.open({ fresh: true });
  await call(tab2, "resume", [{ sessionId, name: "tab2", prompt: "from tab 2", callId: "call_9", go: false }]);
  await call(tab1, "resume", [{ sessionId, name: "tab1", scenario: "approve", callId: "call_2", go: false }]);

  // Tab 1 runs it and waits for approval; tab 2's run() is refused.
  await call(tab1, "go", ["tab1"]);
  await call(tab1, "waitFor", ["tab1", "approve:call_2", STEP]);
  await call(tab2, "go", ["tab2"]);
  await call(tab2, "waitFor", ["tab2", ["run:done", "run:error"], STEP]).catch((e) => {
    throw new Error(`tab 2's run neither failed nor finished while tab 1 ran the session: ${e.message}${explain(log)}`);
  });
  const s2 = await call(tab2, "state", ["tab2"]);
  assert.ok(s2.error, `tab 2's run was not refused while tab 1 ran the session: it ran (${s2.reached.join(", ")})`);
  assert.equal(s2.error.name, "FloeError", `tab 2's refusal is not a FloeError: ${JSON.stringify(s2.error)}`);
  assert.equal(s2.error.code, "session_busy", `tab 2's refusal code: ${JSON.stringify(s2.error)}`);
  assert.deepEqual(s2.seen, [], "tab 2's refused run streamed messages");
  t.diagnostic(`tab 2's run() refused (${s2.error.where}): ${s2.error.message}`);

  // Resuming in tab 2 while tab 1 runs: refused as well, or the run is.
  const r = await call(tab2, "resume", [{ sessionId, name: "tab2b", prompt: "from tab 2", callId: "call_8" }], STEP, { raw: true });
  let refusal = r.error;
  if (!refusal) {
    await call(tab2, "waitFor", ["tab2b", ["run:done", "run:error"], STEP]);
    refusal = (await call(tab2, "state", ["tab2b"])).error;
  }
  assert.equal(refusal?.code, "session_busy", `tab 2 resumed and ran the session while tab 1 ran it: ${JSON.stringify(refusal)}`);
  t.diagnostic(`tab 2's resume while tab 1 runs refused in ${refusal.where}`);

  // Deleting it from a tab that holds no session object while tab 1 runs
  // it: refused too (before, the delete went through and tab 1's run went
  // on writing a Trace without its session_meta, listed and unresumable).
  const tab3 = await b.open({ fresh: true });
  const del = await call(tab3, "delete", [sessionId], STEP, { raw: true });
  assert.equal(del.error?.code, "session_busy", `tab 3 deleted the session tab 1 runs: ${JSON.stringify(del)}`);

  // Tab 1 goes on to the end, alone in the Trace.
  await call(tab1, "release", ["tab1", "approve", "allow"]);
  await call(tab1, "waitFor", ["tab1", ["run:done", "run:error"], STEP]);
  const s1 = await call(tab1, "state", ["tab1"]);
  assert.equal(s1.error, null, `tab 1's run failed after tab 2's attempts: ${JSON.stringify(s1.error)}${explain(log)}`);
  const files = await call(tab1, "export", [sessionId]);
  const records = recordsOf(files);
  const problems = [...checkTrace(files, { sessionId })];
  const lost = lostRecords(run1, records);
  if (lost) problems.push(lost);
  else {
    const m = streamMismatch(records.slice(run1.length), s1.seen, "tab 1's run while tab 2 tried");
    if (m) problems.push(m);
  }
  const foreign = records.filter((x) => x.payload?.text === "from tab 2" || ["call_8", "call_9"].includes(x.payload?.tool_call_id));
  if (foreign.length) problems.push(`records of tab 2's refused runs in the Trace: ${foreign.map(brief).join(", ")}`);
  assert.deepEqual(problems, [], `two tabs:\n  ${problems.join("\n  ")}\n  Trace:\n    ${dump(records, run1.length)}${explain(log)}`);

  // The lock is released with tab 1's run: tab 2 resumes and runs.
  await call(tab2, "resume", [{ sessionId, name: "tab2c", prompt: "from tab 2", callId: "call_3" }]);
  await call(tab2, "waitFor", ["tab2c", ["run:done", "run:error"], STEP]);
  const s3 = await call(tab2, "state", ["tab2c"]);
  assert.equal(s3.error, null, `tab 2's run after tab 1 finished failed: ${JSON.stringify(s3.error)}${explain(log)}`);
  const after = await call(tab2, "export", [sessionId]);
  const afterRecords = recordsOf(after);
  const p2 = [...checkTrace(after, { sessionId })];
  const lost2 = lostRecords(records, afterRecords);
  if (lost2) p2.push(lost2);
  else {
    const m2 = streamMismatch(afterRecords.slice(records.length), s3.seen, "tab 2's later run");
    if (m2) p2.push(m2);
  }
  assert.deepEqual(p2, [], `tab 2 after tab 1:\n  ${p2.join("\n  ")}\n  Trace:\n    ${dump(afterRecords, records.length)}${explain(log)}`);
});

/** Compares two exports file by file: names, then bytes, then records. */
function sameExport(a, b, what) {
  assert.deepEqual(b.map((f) => f.name), a.map((f) => f.name), `${what}: file names differ`);
  for (let i = 0; i < a.length; i++) {
    if (a[i].text === b[i].text) continue;
    const ra = recordsOf([a[i]]);
    const rb = recordsOf([b[i]]);
    const lost = lostRecords(ra, rb) ?? (rb.length !== ra.length ? `${rb.length} records, want ${ra.length}` : null);
    assert.fail(`${what}: ${a[i].name} differs ${lost ? "in its records: " + lost : "in bytes only (same records)"}`);
  }
}

test("(d) export → import gives identical files (two files; delete then import; import into a fresh profile)", { timeout: 180_000 }, async (t) => {
  const sessionId = sid("d", 1);
  const b = await profileBrowser(t);
  let page = await b.open();
  // A session of two files: a run, a manual compaction (summarize), a reload,
  // then a resumed run, which starts file 002 (E-16.9, E-17.2).
  await call(page, "start", [{ sessionId, scenario: "plain", prompt: PROMPT, compaction: true }]);
  await call(page, "waitFor", ["first", ["run:done", "run:error"], STEP]);
  assert.equal((await call(page, "state", ["first"])).error, null, "the first run failed");
  const compaction = await call(page, "compact", ["first"]);
  assert.deepEqual(
    compaction.map((m) => m.payload?.type),
    ["compaction_begin", "token_usage", "compaction_end"],
    `the manual compaction streamed ${compaction.map(brief).join(", ")}`,
  );
  assert.equal(compaction[2].payload.status, "completed", "the manual compaction did not complete");
  await page.reload();
  await ready(page, b.log);
  await call(page, "resume", [{ sessionId, compaction: true }]);
  await call(page, "waitFor", ["resumed", ["run:done", "run:error"], STEP]);
  const resumed = await call(page, "state", ["resumed"]);
  assert.equal(resumed.error, null, `the resumed run failed: ${JSON.stringify(resumed.error)}`);
  assert.ok(
    (resumed.requests[0] ?? []).some((m) => m.payload?.role === "user" && String(m.payload.text).startsWith("[context_summary]")),
    `E-17.2: the resumed model's first request has no [context_summary]: ${(resumed.requests[0] ?? []).map(brief).join(" | ")}`,
  );

  const exported = await call(page, "export", [sessionId]);
  const where = `\n  files: ${exported.map((f) => f.name).join(", ")}\n  Trace:\n    ${dump(recordsOf(exported))}`;
  assert.deepEqual(checkTrace(exported, { sessionId }), [], "the exported Trace breaks §16" + where);
  assert.equal(exported.length, 2, "the session should have two files (rotation after the compaction)" + where);
  assert.ok(recordsOf(exported).filter(isRecordable).length > 10, "the export holds too few records");

  // Importing an id that exists is refused.
  const dup = await call(page, "import", [exported], STEP, { raw: true });
  assert.ok(dup.error, `importSession of an existing id succeeded (returned ${JSON.stringify(dup.ok)})`);
  assert.equal(dup.error.name, "FloeError", `importSession refusal: ${JSON.stringify(dup.error)}`);
  assert.equal(dup.error.code, "session_exists", `importSession refusal: ${JSON.stringify(dup.error)}`);
  sameExport(exported, await call(page, "export", [sessionId]), "after a refused import");

  // Delete, then import: the same files come back.
  await call(page, "delete", [sessionId]);
  const listed = await call(page, "list");
  assert.ok(!listed.some((e) => e.id === sessionId), `listSessions() still shows ${sessionId} after deleteSession`);
  const id = await call(page, "import", [exported]);
  assert.equal(id, sessionId, "importSession returned another id");
  await checkListed(page, sessionId, b.log);
  sameExport(exported, await call(page, "export", [sessionId]), "delete → import → export");
  await b.close();

  // A fresh profile: import, export, then the imported session resumes and runs.
  const b2 = await profileBrowser(t);
  page = await b2.open();
  assert.equal(await call(page, "import", [exported]), sessionId, "importSession in a fresh profile returned another id");
  sameExport(exported, await call(page, "export", [sessionId]), "import into a fresh profile → export");
  await checkListed(page, sessionId, b2.log);
  await call(page, "resume", [{ sessionId, callId: "call_4" }]);
  await call(page, "waitFor", ["resumed", ["run:done", "run:error"], STEP]);
  const s = await call(page, "state", ["resumed"]);
  assert.equal(s.error, null, `the imported session's resumed run failed: ${JSON.stringify(s.error)}${explain(b2.log)}`);
  const final = await call(page, "export", [sessionId]);
  const problems = checkTrace(final, { sessionId });
  const lost = lostRecords(recordsOf(exported), recordsOf(final));
  if (lost) problems.push(lost);
  assert.deepEqual(problems, [], `the imported session after a run:\n  ${problems.join("\n  ")}`);
});

test("(e) a session deleted in another tab while a tab holds it between runs: that tab's next run stores nothing and says so", { timeout: 120_000 }, async (t) => {
  const b = await profileBrowser(t);
  const sessionId = sid("e", 1);
  const tabs = [await b.open(), await b.open({ fresh: true })];
  for (const tab of tabs) {
    await tab.evaluate(async () => {
      const { load } = await import("/static/floe.mjs");
      const { mockModel } = await import("/static/test.mjs");
      window.tabE = { floe: await load(), mockModel, diagnostics: [] };
    });
  }
  const [tab1, tab2] = tabs;
  const first = await tab1.evaluate(async (id) => {
    const { floe, mockModel, diagnostics } = window.tabE;
    const s = floe.createSession({ meta: { session_id: id }, llm: mockModel(["one", "two"]), onDiagnostic: (d) => diagnostics.push(d) });
    for await (const m of s.run("first"));
    window.tabE.session = s;
    return (await floe.exportSession(id)).map((f) => f.text).join("");
  }, sessionId);
  assert.ok(first.includes('"text":"first"'), `tab 1's first run was not stored: ${first}`);

  const listed = await tab2.evaluate(async (id) => {
    await window.tabE.floe.deleteSession(id);
    return (await window.tabE.floe.listSessions()).map((s) => s.id);
  }, sessionId);
  assert.deepEqual(listed, [], "tab 2's delete");

  const r = await tab1.evaluate(async () => {
    const { session, diagnostics } = window.tabE;
    const seen = [];
    for await (const m of session.run("second")) seen.push(m.type + ":" + (m.payload?.type ?? ""));
    await session.close();
    return { seen, diagnostics: diagnostics.map((d) => `${d.kind}: ${d.message}`) };
  });
  assert.ok(r.seen.includes("model_msg:text"), `tab 1's second run did not run: ${r.seen.join(", ")}`);
  assert.ok(
    r.diagnostics.length > 0 && r.diagnostics.every((d) => d.startsWith(`trace: trace: append "${sessionId}" file 1: not found: the session was deleted while it was open`)),
    `want tab 1's writes refused, naming the session and the delete: ${JSON.stringify(r.diagnostics)}${explain(b.log)}`,
  );
  const after = await tab2.evaluate(async (id) => {
    const floe = window.tabE.floe;
    const out = { listed: (await floe.listSessions()).map((s) => s.id) };
    out.exported = await floe.exportSession(id).then(
      (files) => files.map((f) => f.text).join(""),
      (e) => e.code,
    );
    return out;
  }, sessionId);
  assert.deepEqual(after, { listed: [], exported: "not_found" }, "tab 1's second run made the deleted session again (without its session_meta: listed, never resumable)");
});

test("(f) a page without Web Locks (not a secure context): a stored session's first run says another tab's is not refused", { timeout: 120_000 }, async (t) => {
  // A host name other than localhost, mapped to the test server: plain
  // HTTP there is not a secure context, which has IndexedDB and no Web Locks.
  const port = new URL(baseURL()).port;
  const { ctx, log } = await launch(t, { args: ["--host-resolver-rules=MAP floe-plain-http.test 127.0.0.1"] });
  const tabs = [];
  for (let i = 0; i < 2; i++) {
    const tab = await ctx.newPage();
    await tab.goto(`http://floe-plain-http.test:${port}/tests/browser/pages/persist.html`);
    await ready(tab, log);
    const where = await tab.evaluate(async () => {
      const { load } = await import("/static/floe.mjs");
      const { mockModel } = await import("/static/test.mjs");
      window.tabF = { floe: await load(), mockModel, diagnostics: [] };
      return { secure: isSecureContext, locks: "locks" in navigator, indexedDB: "indexedDB" in globalThis };
    });
    assert.deepEqual(where, { secure: false, locks: false, indexedDB: true }, "the page should have IndexedDB and no Web Locks");
    tabs.push(tab);
  }
  const sessionId = sid("f", 1);
  const warning = `trace: session "${sessionId}" is stored, and this page has no Web Locks`;
  const first = await tabs[0].evaluate(async (id) => {
    const { floe, mockModel, diagnostics } = window.tabF;
    const s = floe.createSession({ meta: { session_id: id }, llm: mockModel(["one", "two"]), onDiagnostic: (d) => diagnostics.push(`${d.kind}: ${d.message}`) });
    for await (const m of s.run("first"));
    for await (const m of s.run("second"));
    await s.close();
    return diagnostics;
  }, sessionId);
  assert.equal(first.length, 1, `want one diagnostic for the session's two runs: ${JSON.stringify(first)}${explain(log)}`);
  assert.ok(first[0].startsWith(warning) && first[0].includes("another tab's run of it is not refused"), `tab 1: ${first[0]}`);
  const second = await tabs[1].evaluate(async (id) => {
    const { floe, mockModel, diagnostics } = window.tabF;
    const s = await floe.resumeSession(id, { llm: mockModel(["three"]), onDiagnostic: (d) => diagnostics.push(`${d.kind}: ${d.message}`) });
    for await (const m of s.run("third"));
    await s.close();
    return diagnostics;
  }, sessionId);
  assert.ok(second.length === 1 && second[0].startsWith(warning), `tab 2's resumed session: ${JSON.stringify(second)}${explain(log)}`);
});

test("(f) a browser without Web Locks, in a secure context: a stored session's run says so, and not that the page is insecure", { timeout: 120_000 }, async (t) => {
  // An older browser's page: navigator.locks taken away before Floe loads.
  // Before, its run's warning said the page was not a secure context and
  // to serve it over HTTPS, which it was.
  const { ctx, log } = await launch(t);
  const tabs = [];
  for (let i = 0; i < 2; i++) {
    const tab = await ctx.newPage();
    await tab.goto(`${baseURL()}/tests/browser/pages/persist.html`);
    await ready(tab, log);
    const where = await tab.evaluate(async () => {
      delete Navigator.prototype.locks;
      const { load } = await import("/static/floe.mjs");
      const { mockModel } = await import("/static/test.mjs");
      window.tabF = { floe: await load(), mockModel, diagnostics: [] };
      return { secure: isSecureContext, locks: "locks" in navigator };
    });
    assert.deepEqual(where, { secure: true, locks: false }, "the page should be a secure context without Web Locks");
    tabs.push(tab);
  }
  const sessionId = sid("f", 2);
  const run = (tab, resume, reply) =>
    tab.evaluate(
      async ({ id, resume, reply }) => {
        const { floe, mockModel, diagnostics } = window.tabF;
        const opts = { llm: mockModel([reply]), onDiagnostic: (d) => diagnostics.push(`${d.kind}: ${d.message}`) };
        const s = resume ? await floe.resumeSession(id, opts) : floe.createSession({ meta: { session_id: id }, ...opts });
        for await (const m of s.run(reply));
        await s.close();
        return diagnostics;
      },
      { id: sessionId, resume, reply },
    );
  const want = `trace: session "${sessionId}" is stored, and this page has no Web Locks (this browser or runtime has none: use one that has): another tab's run of it is not refused`;
  for (const [i, got] of [await run(tabs[0], false, "one"), await run(tabs[1], true, "two")].entries()) {
    assert.ok(got.length === 1 && got[0].startsWith(want), `tab ${i + 1}: ${JSON.stringify(got)}${explain(log)}`);
  }
});

test("(g) an id holding half a surrogate pair is refused, naming it: it crossed to Go as U+FFFD and named another session", { timeout: 120_000 }, async (t) => {
  const b = await profileBrowser(t);
  const page = await b.open();
  const r = await page.evaluate(async () => {
    const { load } = await import("/static/floe.mjs");
    const { mockModel } = await import("/static/test.mjs");
    const floe = await load();
    const s = floe.createSession({ meta: { session_id: "a\uFFFDb" }, llm: mockModel(["hi"]) });
    for await (const m of s.run("p"));
    await s.close();
    const refusal = async (f) => {
      try {
        await f();
        return "not refused";
      } catch (e) {
        return `${e.name} ${e.code}: ${e.message}`;
      }
    };
    const half = "a\uD800b";
    return {
      read: await refusal(() => floe.readSession(half)),
      exported: await refusal(() => floe.exportSession(half)),
      resumed: await refusal(() => floe.resumeSession(half, { llm: mockModel([]) })),
      deleted: await refusal(() => floe.deleteSession(half)),
      created: await refusal(() => floe.createSession({ meta: { session_id: "x\uDC00" }, llm: mockModel([]) })),
      listed: (await floe.listSessions()).map((s) => s.id),
    };
  });
  const want = (fn) => `FloeError bad_argument: ${fn}: "a\\ud800b" holds half a surrogate pair (\\ud800 at 1), which no session id holds: it would name "a\uFFFDb"`;
  assert.deepEqual(
    r,
    {
      read: want("readSession: id"),
      exported: want("exportSession: id"),
      resumed: want("resumeSession: id"),
      deleted: want("deleteSession: id"),
      created: `FloeError bad_argument: createSession: meta.session_id: "x\\udc00" holds half a surrogate pair (\\udc00 at 1), which no session id holds: it would name "x\uFFFD"`,
      listed: ["a\uFFFDb"],
    },
    explain(b.log),
  );
});

test("(h) a subagent's run in one tab holds its session's Web Lock: another tab's deleteSession and resumeSession of its id are refused, nothing is lost; after its end the delete goes through", { timeout: 120_000 }, async (t) => {
  const b = await profileBrowser(t);
  const childId = sid("h", 1);
  const tabs = [await b.open(), await b.open({ fresh: true })];
  for (const tab of tabs) {
    await tab.evaluate(async () => {
      const { load } = await import("/static/floe.mjs");
      const { mockModel } = await import("/static/test.mjs");
      window.tabH = { floe: await load(), mockModel };
    });
  }
  const [tab1, tab2] = tabs;
  // Tab 1's subagent (stored in IndexedDB, the default) streams a text,
  // then waits on a gate the test opens.
  const first = await tab1.evaluate(async (id) => {
    const h = window.tabH;
    const gate = new Promise((r) => (h.open = r));
    const text = (t) => ({ type: "model_msg", payload: { type: "text", role: "assistant", text: t, stop_reason: "completed" } });
    const llm = {
      async *streamGenerate() {
        yield text("one");
        await gate;
        yield text("two");
        return { status: "completed" };
      },
    };
    h.sub = h.floe.createSubagent({ meta: { session_id: id }, llm });
    h.stream = h.sub.run("task");
    const seen = [];
    for (let m; (m = (await h.stream.next()).value).payload.role !== "assistant"; ) seen.push(m.type);
    return seen;
  }, childId);
  assert.deepEqual(first.slice(0, 2), ["session_meta", "model_msg"], "tab 1's subagent run did not start");
  const during = await tab2.evaluate(async (id) => {
    const { floe, mockModel } = window.tabH;
    const refusal = (f) => f().then(() => "not refused", (e) => `${e.name} ${e.code}`);
    return {
      deleted: await refusal(() => floe.deleteSession(id)),
      resumed: await refusal(() => floe.resumeSession(id, { llm: mockModel([]) })),
    };
  }, childId);
  assert.deepEqual(during, { deleted: "FloeError session_busy", resumed: "FloeError session_busy" }, `tab 2 while tab 1's subagent runs${explain(b.log)}`);
  const texts = await tab1.evaluate(async (id) => {
    const h = window.tabH;
    h.open();
    for await (const m of h.stream);
    h.sub.close();
    const files = await h.floe.exportSession(id);
    return files.flatMap((f) => f.text.split("\n").filter(Boolean).map((l) => JSON.parse(l))).filter((r) => r.payload?.type === "text").map((r) => r.payload.text);
  }, childId);
  assert.deepEqual(texts, ["task", "one", "two"], "the subagent's Trace");
  const after = await tab2.evaluate(async (id) => {
    const { floe } = window.tabH;
    await floe.deleteSession(id);
    return (await floe.listSessions()).map((s) => s.id);
  }, childId);
  assert.deepEqual(after, [], "tab 2's delete after the subagent's run ended");
});

// Where there are Web Locks a run's stream takes its lock at its first
// next(); until then it held none, and a parent's deleteSession deleted
// the parent under its subagent's run not pulled yet (the child's later
// writes refused). Without Web Locks (Node) run() takes the program's lock
// at once, and the delete is refused: so it is here.
test("(i) a subagent's run not pulled yet: its parent's deleteSession is refused session_busy naming the child, deleting nothing; after its end the delete goes through", { timeout: 120_000 }, async (t) => {
  const b = await profileBrowser(t);
  const tab = await b.open();
  const r = await tab.evaluate(async () => {
    const { load } = await import("/static/floe.mjs");
    const floe = await load();
    const usage = { type: "event_msg", payload: { type: "token_usage", session: { output: 1, total: 2 }, request: { output: 1, total: 2 } } };
    const text = (t) => ({ type: "model_msg", payload: { type: "text", role: "assistant", text: t, stop_reason: "completed" } });
    const turns = (...ts) => {
      let i = 0;
      return { streamGenerate: () => ts[Math.min(i++, ts.length - 1)]() };
    };
    const say = (t) =>
      async function* () {
        yield text(t);
        yield usage;
        return { status: "completed" };
      };
    const call = async function* () {
      yield { type: "model_msg", payload: { type: "tool_call", role: "assistant", name: "run_subagent", arguments: JSON.stringify({ prompt: "find it" }), tool_call_id: "c1", stop_reason: "completed" } };
      yield usage;
      return { status: "completed" };
    };
    // A parent whose Trace names a child session not stored: made in the
    // memory store, its own files imported into IndexedDB.
    const child = floe.subagentTool({ create: () => ({ store: "memory", llm: turns(say("found")) }) });
    const parent = floe.createSession({ meta: { session_id: "session-2026-01-01-00-00-00-i0000001" }, store: "memory", tools: [child], llm: turns(call, say("done")) });
    const msgs = [];
    for await (const m of parent.run("go", { approve: () => "allow" })) msgs.push(m);
    await parent.close();
    const childId = msgs.find((m) => m.origin).origin[0];
    const files = await floe.exportSession(parent.id, { store: "memory" });
    await floe.importSession(files.filter((f) => f.name.includes(parent.id)));
    const refusal = (f) => f().then(() => "not refused", (e) => `${e.code}: ${e.message}`);

    const sub = floe.createSubagent({ meta: { session_id: childId }, llm: turns(say("late")) });
    const stream = sub.run("first"); // not pulled
    const deleted = await refusal(() => floe.deleteSession(parent.id));
    const kept = (await floe.exportSession(parent.id)).length;
    const texts = [];
    for await (const m of stream) if (m.payload?.type === "text") texts.push(m.payload.text);
    await sub.close();
    await floe.deleteSession(parent.id);
    return {
      childId,
      parentId: parent.id,
      deleted,
      kept,
      texts,
      parentAfter: await refusal(() => floe.exportSession(parent.id)),
      childAfter: await refusal(() => floe.exportSession(childId)),
    };
  });
  assert.match(r.deleted, new RegExp(`^session_busy: deleteSession: session "${r.parentId}" is not deleted, nor any of its subagents' sessions: its subagent's session "${r.childId}" is busy`), explain(b.log));
  assert.equal(r.kept, 1, "the parent's files after the refused delete");
  assert.deepEqual(r.texts, ["first", "late"], "the child's run after the refused delete");
  assert.match(r.parentAfter, /^not_found/);
  assert.match(r.childAfter, /^not_found/);
});
