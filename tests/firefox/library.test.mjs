// floe.mjs in headless Firefox ESR, on the pages of the Chromium tests:
// the scripted session (a tool, an approval) in the page and in a module
// Worker; an abort while an approval waits; an IndexedDB session cut off by
// a reload mid-approval, listed, resumed and run on, with a second tab
// refused by the Web Lock; the same store in a private window (a Firefox
// of its own); two browser contexts of the file's Firefox, which the
// other tests run in, seeing none of each other's storage.
import { test } from "node:test";
import assert from "node:assert/strict";
import { awaitGlobal, baseURL, call, explain, launch, PERSIST_PAGE, persistReady } from "./harness.mjs";
import { compact, EXPECTED } from "../browser/fixtures/scripted.mjs";
import { checkTrace, countPlaceholders, lostRecords, recordsOf, streamMismatch } from "../browser/trace-rules.mjs";

const STEP = 20_000;
const WEB_PAGE = "/tests/firefox/pages/web-page.html";

function check(result, where, log) {
  assert.ok(result, "no result" + explain(log));
  assert.equal(result.error, undefined, `the session failed in the ${where}: ${result.error}${explain(log)}`);
  assert.equal(result.where, where);
  assert.deepEqual(result.messages.map(compact), EXPECTED, "stream order" + explain(log));
  assert.deepEqual(
    result.requests.map((r) => r.map(compact)),
    [["text:user:say hi"], ["tool_call_output:call_1:hi:completed"]],
  );
  assert.deepEqual(result.approvals.map((c) => c.payload.tool_call_id), ["call_1"]);
}

// The harness gives each test a browser context of the file's shared
// Firefox: the tests below rely on their storage being their own.
test("two browser contexts of the shared Firefox see none of each other's localStorage, IndexedDB, origin private file system or Cache Storage", { timeout: 90_000 }, async (t) => {
  const one = await launch(t);
  const two = await launch(t);
  assert.equal(one.browser, two.browser, "the two contexts are not of one Firefox");
  assert.notEqual(one.context, two.context, "the two tests share a context");
  const [p1, p2] = [await one.newPage(), await two.newPage()];
  await p1.goto(baseURL() + WEB_PAGE);
  await p2.goto(baseURL() + WEB_PAGE);
  const write = await p1.evaluate(async () => {
    localStorage.setItem("isolation", "one");
    const db = await new Promise((resolve, reject) => {
      const r = indexedDB.open("isolation", 1);
      r.onupgradeneeded = () => r.result.createObjectStore("s");
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
    await new Promise((resolve, reject) => {
      const tx = db.transaction("s", "readwrite");
      tx.objectStore("s").put("one", "k");
      tx.oncomplete = resolve;
      tx.onerror = () => reject(tx.error);
    });
    db.close();
    const root = await navigator.storage.getDirectory();
    await root.getFileHandle("isolation.txt", { create: true });
    await (await caches.open("isolation")).put("/isolation", new Response("one"));
    return "written";
  });
  assert.equal(write, "written");
  const seen = (page) =>
    page.evaluate(async () => {
      const root = await navigator.storage.getDirectory();
      const names = [];
      for await (const name of root.keys()) names.push(name);
      return {
        localStorage: localStorage.getItem("isolation"),
        indexedDB: (await indexedDB.databases()).map((d) => d.name).filter((n) => n === "isolation"),
        opfs: names.filter((n) => n === "isolation.txt"),
        caches: (await caches.keys()).filter((n) => n === "isolation"),
      };
    });
  assert.deepEqual(await seen(p1), { localStorage: "one", indexedDB: ["isolation"], opfs: ["isolation.txt"], caches: ["isolation"] }, "the first context's own storage" + explain(one.log));
  assert.deepEqual(await seen(p2), { localStorage: null, indexedDB: [], opfs: [], caches: [] }, "the second context sees the first's storage" + explain(two.log));
});

test("scripted session in the page, then an abort while an approval waits", { timeout: 90_000 }, async (t) => {
  const b = await launch(t);
  const page = await b.newPage();
  await page.goto(baseURL() + "/tests/browser/fixtures/main.html");
  check(await awaitGlobal(page, "floeResult"), "page", b.log);

  // The user's reason reaches the run's abort as ENGINE.md's one reason;
  // the approver's call is cancelled, nothing throws.
  const r = await page.evaluate(async () => {
    const { load } = await import("/static/floe.mjs");
    const { scriptedSession, compact } = await import("/tests/browser/fixtures/scripted.mjs");
    const floe = await load();
    const s = scriptedSession();
    const meta = { ...s.meta, session_id: "session-2026-01-01-00-00-00-0000ab01" };
    const session = floe.createSession({ meta, llm: s.llm, environment: s.environment, tools: s.tools });
    const ac = new AbortController();
    const seen = [];
    let error = null;
    const approve = () => {
      ac.abort(new Error("stopped by the page"));
      return new Promise(() => {});
    };
    try {
      for await (const m of session.run("say hi", { approve, signal: ac.signal })) seen.push(compact(m));
    } catch (e) {
      error = String(e);
    }
    // A bad argument is a FloeError naming it.
    let bad = null;
    try {
      floe.createSession({ meta: 42 });
    } catch (e) {
      bad = { name: e.name, code: e.code, message: e.message };
    }
    await session.close();
    return { seen, error, bad };
  });
  assert.equal(r.error, null, "the aborted run threw" + explain(b.log));
  assert.ok(r.seen.includes('tool_call:call_1:echo:{"text":"hi"}'), `no tool call: ${r.seen}`);
  assert.deepEqual(r.seen.slice(-2), ["request_end:completed", "abort:aborted by user"], explain(b.log));
  assert.ok(!r.seen.includes("approval_decision:allow:call_1"), `a decision after the abort: ${r.seen}`);
  assert.deepEqual(r.bad, {
    name: "FloeError",
    code: "bad_argument",
    message: "createSession: meta: want a session_meta payload object, got a number",
  });
});

test("scripted session in a dedicated module worker", { timeout: 90_000 }, async (t) => {
  const b = await launch(t);
  const page = await b.newPage();
  await page.goto(baseURL() + "/tests/browser/fixtures/worker.html");
  check(await awaitGlobal(page, "floeResult"), "worker", b.log);
});

/**
 * Starts a session waiting for its approval, reloads the page, and checks
 * it is listed, resumes and runs on to the end with a Trace per ENGINE.md
 * §16. Returns the page after the resumed run.
 */
async function reloadAndResume(b, sessionId) {
  let page = await b.newPage();
  await page.goto(baseURL() + PERSIST_PAGE);
  await persistReady(page, b.log);
  await call(page, "start", [{ sessionId, scenario: "approve", prompt: "say hi" }]);
  await call(page, "waitFor", ["first", "approve:call_1", STEP]);
  const w = await call(page, "waitStored", ["first", STEP]);
  assert.equal(w.missing, undefined, `records seen were not in IndexedDB: ${JSON.stringify(w.missing)}${explain(b.log)}`);
  const before = recordsOf(w.files);

  await page.reload();
  await persistReady(page, b.log);
  const list = await call(page, "list");
  const entry = list.find((e) => e.id === sessionId);
  assert.ok(entry, `listSessions() does not show ${sessionId}: ${JSON.stringify(list)}${explain(b.log)}`);
  assert.equal(entry.firstPrompt, "say hi");

  await call(page, "resume", [{ sessionId }]);
  await call(page, "waitFor", ["resumed", ["run:done", "run:error"], STEP]);
  const resumed = await call(page, "state", ["resumed"]);
  assert.equal(resumed.error, null, `the resumed run failed: ${JSON.stringify(resumed.error)}${explain(b.log)}`);
  assert.ok(resumed.reached.includes("text:assistant:Echo said: ok"), `the resumed run did not finish: ${resumed.reached}`);
  const files = await call(page, "export", [sessionId]);
  const records = recordsOf(files);
  // The cut request has no request_end: the Trace is checked as cut there.
  const placeholders = countPlaceholders(resumed.history, resumed.requests[0]);
  const problems = checkTrace(files, { cut: before.length, placeholders, sessionId });
  const lost = lostRecords(before, records);
  if (lost) problems.push(lost);
  else {
    const m = streamMismatch(records.slice(before.length), resumed.seen, "the resumed run");
    if (m) problems.push(m);
  }
  assert.deepEqual(problems, [], explain(b.log));
  return page;
}

test("IndexedDB: a session cut off by a reload mid-approval resumes; a second tab's resume is refused while it runs", { timeout: 90_000 }, async (t) => {
  const b = await launch(t);
  const sessionId = "session-2026-01-01-00-00-00-ff000001";
  const tab1 = await reloadAndResume(b, sessionId);

  // Web Locks: tab 1 runs the session (waiting for approval); tab 2's
  // resume is refused with session_busy, and once tab 1's run ends tab 2
  // resumes and runs it.
  await call(tab1, "resume", [{ sessionId, name: "tab1", scenario: "approve", callId: "call_3" }]);
  await call(tab1, "waitFor", ["tab1", "approve:call_3", STEP]);
  const tab2 = await b.newPage();
  await tab2.goto(baseURL() + PERSIST_PAGE);
  await persistReady(tab2, b.log);
  const r = await call(tab2, "resume", [{ sessionId, name: "tab2", callId: "call_4" }], STEP, { raw: true });
  let refusal = r.error;
  if (!refusal) {
    await call(tab2, "waitFor", ["tab2", ["run:done", "run:error"], STEP]);
    refusal = (await call(tab2, "state", ["tab2"])).error;
  }
  assert.equal(refusal?.code, "session_busy", `tab 2 ran the session while tab 1 ran it: ${JSON.stringify(refusal)}${explain(b.log)}`);
  await call(tab1, "release", ["tab1", "approve", "allow"]);
  await call(tab1, "waitFor", ["tab1", ["run:done", "run:error"], STEP]);
  assert.equal((await call(tab1, "state", ["tab1"])).error, null, "tab 1's run failed" + explain(b.log));
  await call(tab2, "resume", [{ sessionId, name: "tab2b", callId: "call_5" }]);
  await call(tab2, "waitFor", ["tab2b", ["run:done", "run:error"], STEP]);
  assert.equal((await call(tab2, "state", ["tab2b"])).error, null, "tab 2's run after tab 1's failed" + explain(b.log));
  const records = recordsOf(await call(tab2, "export", [sessionId]));
  const calls = records.filter((x) => x.payload?.type === "tool_call").map((x) => x.payload.tool_call_id);
  assert.deepEqual(calls, ["call_1", "call_2", "call_3", "call_5"], "the Trace's tool calls");
});

test("IndexedDB in a private window: a session survives a reload of the window's page and resumes", { timeout: 90_000 }, async (t) => {
  // Firefox keeps a private window's IndexedDB in memory until the window
  // closes; the origin private file system is refused there (SecurityError).
  const b = await launch(t, { prefs: { "browser.privatebrowsing.autostart": true } });
  const page = await reloadAndResume(b, "session-2026-01-01-00-00-00-ff000002");
  const opfs = await page.evaluate(() => navigator.storage.getDirectory().then(() => "opened", (e) => e.name));
  assert.equal(opfs, "SecurityError", "the profile is not private: its origin private file system opened");
});
