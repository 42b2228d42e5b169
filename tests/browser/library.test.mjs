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

// The harness's contexts (launch without a profile): two tests of a file
// share its Chromium, and the second sees nothing the first stored.
test("two tests' contexts share one Chromium, and neither sees what the other stored: IndexedDB, localStorage, OPFS, Cache Storage", { timeout: 90_000 }, async (t) => {
  const a = await launch(t);
  const b = await launch(t);
  assert.ok(a.ctx.browser() && a.ctx.browser() === b.ctx.browser(), "each context has a browser of its own");
  // What a page of the origin finds stored.
  const stored = (page) =>
    page.evaluate(async () => {
      const opfs = [];
      for await (const k of (await navigator.storage.getDirectory()).keys()) opfs.push(k);
      return { idb: (await indexedDB.databases()).map((d) => d.name), local: Object.keys(localStorage), opfs, caches: await caches.keys() };
    });
  const pa = await firstPage(a.ctx);
  await pa.goto(baseURL() + "/tests/browser/fixtures/main.html");
  await awaitGlobal(pa, "floeResult");
  await pa.evaluate(async () => {
    await new Promise((resolve, reject) => {
      const req = indexedDB.open("probe");
      req.onsuccess = () => (req.result.close(), resolve());
      req.onerror = () => reject(req.error);
    });
    localStorage.setItem("probe", "1");
    await (await navigator.storage.getDirectory()).getFileHandle("probe", { create: true });
    await (await caches.open("probe")).put("/probe", new Response("1"));
  });
  const first = await stored(pa);
  for (const [k, names] of Object.entries(first)) assert.ok(names.includes("probe"), `the first context stored no ${k}: ${JSON.stringify(first)}`);
  const pb = await firstPage(b.ctx);
  await pb.goto(baseURL() + "/tests/browser/fixtures/scripted.mjs"); // a document of the origin that stores nothing
  assert.deepEqual(await stored(pb), { idb: [], local: [], opfs: [], caches: [] }, "the second context sees the first's storage" + explain(a.log) + explain(b.log));
});

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

// A run whose callbacks all answer at once does not freeze the page: a
// timer and a click (an input event, dispatched by the browser while the
// run goes on) both get their turn, and the click's abort ends the run.
test("an endless run whose callbacks answer at once leaves the page responsive", { timeout: 90_000 }, async (t) => {
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  await page.goto(baseURL() + "/tests/browser/fixtures/main.html");
  await awaitGlobal(page, "floeResult");
  await page.evaluate(async () => {
    const { load } = await import("/static/floe.mjs");
    const floe = await load();
    let i = 0;
    const session = floe.createSession({
      store: false,
      llm: {
        async *streamGenerate() {
          yield { type: "model_msg", payload: { type: "tool_call", role: "assistant", name: "t", arguments: "{}", tool_call_id: "c" + ++i, stop_reason: "completed" } };
        },
      },
    });
    const ac = new AbortController();
    const button = document.createElement("button");
    button.id = "stop";
    button.textContent = "Stop";
    button.onclick = () => ac.abort();
    document.body.append(button);
    window.endless = { timer: false, messages: 0, last: null, done: false };
    setTimeout(() => (window.endless.timer = true), 0);
    (async () => {
      for await (const m of session.run("go", { signal: ac.signal })) {
        window.endless.messages++;
        window.endless.last = m.payload.type;
        if (window.endless.messages === 2_000_000) break;
      }
      window.endless.done = true;
    })();
  });
  // The click reaches the page while the run goes on: the page answers.
  await page.click("#stop", { timeout: 20_000 });
  await page.waitForFunction(() => window.endless.done, null, { timeout: 20_000 });
  const r = await page.evaluate(() => window.endless);
  assert.equal(r.timer, true, "the timer did not fire" + explain(log));
  assert.equal(r.last, "abort", `the run ended with ${r.last} after ${r.messages} messages` + explain(log));
  assert.ok(r.messages < 2_000_000, "the click's abort came only at the end");
});

// Two run()s of one stored session object, neither pulled when the second
// was made: the first pulled takes the Web Lock, and the second's refusal
// names this object's run, not another tab.
test("a second run() of one session object refused at its first next() says the session is running here", { timeout: 90_000 }, async (t) => {
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  await page.goto(baseURL() + "/tests/browser/fixtures/main.html");
  await awaitGlobal(page, "floeResult");
  const r = await page.evaluate(async () => {
    const { load } = await import("/static/floe.mjs");
    const { mockModel } = await import("/static/test.mjs");
    const floe = await load();
    const session = floe.createSession({ llm: mockModel(["one", "two"]), store: "indexeddb" });
    const first = session.run("one")[Symbol.asyncIterator]();
    const second = session.run("two")[Symbol.asyncIterator]();
    const out = {};
    const a = first.next();
    try {
      await second.next();
      out.second = "ran";
    } catch (e) {
      out.second = { code: e.code, message: e.message };
    }
    for (let x = await a; !x.done; x = await first.next());
    await session.close();
    return out;
  });
  assert.equal(r.second.code, "session_busy", JSON.stringify(r) + explain(log));
  assert.match(r.second.message, /^run: the session is busy: a run or compaction is already in flight$/, JSON.stringify(r));
});

// A stored session's run starts once its Web Lock is granted, after run()
// returned: an abort of its signal meanwhile must still count.
test("a stored session's run whose signal is aborted before its lock is granted yields its abort only", { timeout: 90_000 }, async (t) => {
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  await page.goto(baseURL() + "/tests/browser/fixtures/main.html");
  await awaitGlobal(page, "floeResult");
  const r = await page.evaluate(async () => {
    const { load } = await import("/static/floe.mjs");
    const { mockModel } = await import("/static/test.mjs");
    const floe = await load();
    let calls = 0;
    const model = mockModel(["one", "two"]);
    const session = floe.createSession({ llm: { streamGenerate: (p) => (calls++, model.streamGenerate(p)) }, store: "indexeddb" });
    const ac = new AbortController();
    const stream = session.run("one", { signal: ac.signal });
    ac.abort();
    const types = [];
    for await (const m of stream) types.push(m.payload.type);
    const again = [];
    for await (const m of session.run("two")) again.push(m.payload.type);
    await session.close();
    return { types, calls, again: again.at(-1) };
  });
  assert.deepEqual(r.types, ["abort"], "the abort before the lock was lost" + explain(log));
  assert.equal(r.calls, 1, "the aborted run asked the model");
  assert.equal(r.again, "request_end");
});

// close() of a stored session: it waits for the run in flight even when a
// later run() of it (made before the first took the lock) was refused at
// its first next(); a run whose first next() waits for the lock when
// close() comes never starts and ends empty (it rejected with "closed").
test("a stored session's close() waits for the run in flight past a refused run(); a run waiting for its lock then never starts", { timeout: 90_000 }, async (t) => {
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  await page.goto(baseURL() + "/tests/browser/fixtures/main.html");
  await awaitGlobal(page, "floeResult");
  const r = await page.evaluate(async () => {
    const { load } = await import("/static/floe.mjs");
    const { mockModel } = await import("/static/test.mjs");
    const floe = await load();
    const out = {};
    // The model ignores its abort: the run ends when it is abandoned, 3 s
    // after close() aborted it.
    const ignoring = {
      async *streamGenerate() {
        yield { type: "model_msg", payload: { type: "partial_text", role: "assistant", event_type: "start", text: "" } };
        await new Promise(() => {});
      },
    };
    const s2 = floe.createSession({ llm: ignoring, store: "indexeddb", abortGraceMs: 3000 });
    const first = s2.run("one")[Symbol.asyncIterator]();
    const second = s2.run("two")[Symbol.asyncIterator](); // made before the first took the lock
    await first.next();
    try {
      await second.next();
    } catch (e) {
      out.second = e.code;
    }
    await s2.close();
    out.heldAfterClose = (await navigator.locks.query()).held.map((l) => l.name).filter((n) => n === "floe:session:" + s2.id);
    const rest = [];
    for (let x = await first.next(); !x.done; x = await first.next()) rest.push(x.value.payload.type);
    out.firstEnd = rest.at(-1);
    const s3 = floe.createSession({ llm: mockModel(["one"]), store: "indexeddb" });
    const it = s3.run("one")[Symbol.asyncIterator]();
    const n = it.next();
    const closing = s3.close();
    out.pending = await n.then((x) => x, (e) => ({ error: e.code }));
    await closing;
    out.listed = (await floe.listSessions()).some((x) => x.id === s3.id);
    return out;
  });
  assert.equal(r.second, "session_busy");
  assert.deepEqual(r.heldAfterClose, [], "close() resolved with the run in flight still holding the session's lock" + explain(log));
  assert.equal(r.firstEnd, "abort");
  assert.deepEqual(r.pending, { value: undefined, done: true }, "a run waiting for its lock when close() came");
  assert.equal(r.listed, false, "the run that never started wrote a session");
});

// Two resumes at once (React's StrictMode) of a session another tab is
// running: the second waited for the first's attempt, which was refused,
// and then queued for the lock behind the other tab's run (it resolved
// only once that run had ended, and then held the lock the other tab's
// next run asked for) instead of being refused as the first was.
test("two resumes at once of a session another tab is running are both refused with session_busy", { timeout: 90_000 }, async (t) => {
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  await page.goto(baseURL() + "/tests/browser/fixtures/main.html");
  await awaitGlobal(page, "floeResult");
  const r = await page.evaluate(async () => {
    const { load } = await import("/static/floe.mjs");
    const { mockModel } = await import("/static/test.mjs");
    const floe = await load();
    const s = floe.createSession({ llm: mockModel(["one"]), store: "indexeddb" });
    for await (const _ of s.run("one"));
    await s.close();
    // Another tab's run: the session's lock held by no one of this program.
    let letGo;
    const held = new Promise((granted) =>
      navigator.locks.request("floe:session:" + s.id, () => (granted(), new Promise((r) => (letGo = r)))),
    );
    await held;
    const both = Promise.allSettled([1, 2].map(() => floe.resumeSession(s.id, { llm: mockModel(["x"]) })));
    // A guard, not an order: a resume queued behind the other tab never
    // settles while it holds the lock.
    const out = await Promise.race([both, new Promise((r) => setTimeout(() => r("pending"), 10_000))]);
    letGo();
    const settled = await both;
    for (const x of settled) if (x.status === "fulfilled") await x.value.close();
    // That tab done, two resumes at once both get the session, one after
    // the other.
    const again = await Promise.allSettled([1, 2].map(() => floe.resumeSession(s.id, { llm: mockModel(["x"]) })));
    for (const x of again) if (x.status === "fulfilled") await x.value.close();
    return {
      out: out === "pending" ? out : out.map((x) => x.reason?.code ?? x.status),
      again: again.map((x) => x.reason?.code ?? x.status),
      pending: (await navigator.locks.query()).pending.length,
    };
  });
  assert.deepEqual(r.out, ["session_busy", "session_busy"], JSON.stringify(r) + explain(log));
  assert.deepEqual(r.again, ["fulfilled", "fulfilled"], JSON.stringify(r));
  assert.equal(r.pending, 0);
});
