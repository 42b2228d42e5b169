// floe.mjs in WebKit (WebKitGTK's MiniBrowser), on the pages of the
// Chromium tests: the scripted session (a tool, an approval) in the page
// and in a module Worker; an abort while an approval waits; an IndexedDB
// session cut off by a reload mid-approval, listed, resumed and run on,
// with a second tab refused by the Web Lock; openaiCompatible() and
// anthropic() streaming through the page's fetch from loopback servers of
// another origin, one without CORS headers refused, and an abort while the
// reply streams.
import { test } from "node:test";
import assert from "node:assert/strict";
import { awaitGlobal, baseURL, call, explain, launch, PERSIST_PAGE, persistReady } from "./harness.mjs";
import { compact, EXPECTED } from "../browser/fixtures/scripted.mjs";
import { checkTrace, countPlaceholders, lostRecords, recordsOf, streamMismatch } from "../browser/trace-rules.mjs";
import { replayServer, openaiStream, anthropicStream, SSE_HEADERS } from "../node/replay.mjs";

const STEP = 20_000;

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

test("scripted session in the page, then an abort while an approval waits", { timeout: 90_000 }, async (t) => {
  const b = await launch(t);
  await b.goto("/tests/browser/fixtures/main.html");
  check(await awaitGlobal(b, "floeResult"), "page", b.log);

  // The user's reason reaches the run's abort as ENGINE.md's one reason;
  // the approver's call is cancelled, nothing throws.
  const r = await b.eval(async () => {
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

test("a tool that returns a fetch body's ReadableStream streams it (WebKit's ReadableStream is not async iterable)", { timeout: 60_000 }, async (t) => {
  const b = await launch(t);
  await b.goto("/tests/browser/fixtures/main.html");
  await awaitGlobal(b, "floeResult");
  const r = await b.eval(async () => {
    const { load, tool } = await import("/static/floe.mjs");
    const { mockModel } = await import("/static/test.mjs");
    const floe = await load();
    const body = () => new Response(new Blob(["line 1\n", "line 2\n"])).body.pipeThrough(new TextDecoderStream());
    const session = floe.createSession({
      store: false,
      llm: mockModel([[{ toolCall: { name: "cat", args: "{}", id: "c0" } }], "done"]),
      tools: [tool({ name: "cat", execute: body })],
    });
    const outputs = [];
    for await (const m of session.run("cat", { approve: () => "allow" })) {
      if (m.payload.type === "tool_call_output") outputs.push([m.payload.output, m.payload.stop_reason]);
    }
    await session.close();
    return { iterable: typeof ReadableStream.prototype[Symbol.asyncIterator], outputs };
  });
  assert.deepEqual(r, { iterable: "undefined", outputs: [["line 1\nline 2\n", "completed"]] }, explain(b.log));
});

test("scripted session in a dedicated module worker", { timeout: 90_000 }, async (t) => {
  const b = await launch(t);
  await b.goto("/tests/browser/fixtures/worker.html");
  check(await awaitGlobal(b, "floeResult"), "worker", b.log);
});

test("IndexedDB: a session cut off by a reload mid-approval resumes; a second tab's resume is refused while it runs", { timeout: 90_000 }, async (t) => {
  const b = await launch(t);
  const sessionId = "session-2026-01-01-00-00-00-ff000001";
  await b.goto(PERSIST_PAGE);
  await persistReady(b);
  await call(b, "start", [{ sessionId, scenario: "approve", prompt: "say hi" }]);
  await call(b, "waitFor", ["first", "approve:call_1", STEP]);
  const w = await call(b, "waitStored", ["first", STEP]);
  assert.equal(w.missing, undefined, `records seen were not in IndexedDB: ${JSON.stringify(w.missing)}${explain(b.log)}`);
  const before = recordsOf(w.files);

  await b.reload();
  await persistReady(b);
  const list = await call(b, "list");
  const entry = list.find((e) => e.id === sessionId);
  assert.ok(entry, `listSessions() does not show ${sessionId}: ${JSON.stringify(list)}${explain(b.log)}`);
  assert.equal(entry.firstPrompt, "say hi");

  await call(b, "resume", [{ sessionId }]);
  await call(b, "waitFor", ["resumed", ["run:done", "run:error"], STEP]);
  const resumed = await call(b, "state", ["resumed"]);
  assert.equal(resumed.error, null, `the resumed run failed: ${JSON.stringify(resumed.error)}${explain(b.log)}`);
  assert.ok(resumed.reached.includes("text:assistant:Echo said: ok"), `the resumed run did not finish: ${resumed.reached}`);
  const files = await call(b, "export", [sessionId]);
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

  // Web Locks: tab 1 runs the session (waiting for approval); tab 2's
  // resume is refused with session_busy, and once tab 1's run ends tab 2
  // resumes and runs it.
  const tab1 = await b.window();
  await call(b, "resume", [{ sessionId, name: "tab1", scenario: "approve", callId: "call_3" }]);
  await call(b, "waitFor", ["tab1", "approve:call_3", STEP]);
  const tab2 = await b.newWindow();
  await b.goto(PERSIST_PAGE);
  await persistReady(b);
  const r = await call(b, "resume", [{ sessionId, name: "tab2", callId: "call_4" }], STEP, { raw: true });
  let refusal = r.error;
  if (!refusal) {
    await call(b, "waitFor", ["tab2", ["run:done", "run:error"], STEP]);
    refusal = (await call(b, "state", ["tab2"])).error;
  }
  assert.equal(refusal?.code, "session_busy", `tab 2 ran the session while tab 1 ran it: ${JSON.stringify(refusal)}${explain(b.log)}`);
  await b.switchTo(tab1);
  await call(b, "release", ["tab1", "approve", "allow"]);
  await call(b, "waitFor", ["tab1", ["run:done", "run:error"], STEP]);
  assert.equal((await call(b, "state", ["tab1"])).error, null, "tab 1's run failed" + explain(b.log));
  await b.switchTo(tab2);
  await call(b, "resume", [{ sessionId, name: "tab2b", callId: "call_5" }]);
  await call(b, "waitFor", ["tab2b", ["run:done", "run:error"], STEP]);
  assert.equal((await call(b, "state", ["tab2b"])).error, null, "tab 2's run after tab 1's failed" + explain(b.log));
  const calls = recordsOf(await call(b, "export", [sessionId]))
    .filter((x) => x.payload?.type === "tool_call")
    .map((x) => x.payload.tool_call_id);
  assert.deepEqual(calls, ["call_1", "call_2", "call_3", "call_5"], "the Trace's tool calls");
});

const NOTES = "buy milk";
const FINAL = ["Your notes say: ", NOTES, ". I did not delete the file."];

test("openaiCompatible and anthropic stream through the page's fetch across origins; one without CORS is refused", { timeout: 90_000 }, async (t) => {
  const origin = new URL(baseURL()).origin;
  const twoTurns = (first, final) => {
    let n = 0;
    return async (req, res) => {
      res.writeHead(200, SSE_HEADERS);
      res.end(++n === 1 ? first : final);
    };
  };
  const openai = await replayServer(t, twoTurns(
    openaiStream({ text: ["I will ", "read the notes."], calls: [
      { id: "call_read", name: "read_file", args: ['{"path":', '"notes.txt"}'] },
      { id: "call_del", name: "delete_file", args: ['{"path":"notes.txt"}'] },
    ] }),
    openaiStream({ text: FINAL }),
  ), { cors: origin });
  const anthropic = await replayServer(t, twoTurns(
    anthropicStream({ thinking: "The user wants two things.", text: ["I will ", "read the notes."], calls: [
      { id: "toolu_read", name: "read_file", args: ['{"path": ', '"notes.txt"}'] },
      { id: "toolu_del", name: "delete_file", args: ['{"path": "notes.txt"}'] },
    ] }),
    anthropicStream({ text: FINAL }),
  ), { cors: origin });
  const nocors = await replayServer(t, async (req, res) => {
    res.writeHead(200, SSE_HEADERS);
    res.end(openaiStream({ text: ["never seen"] }));
  });
  const b = await launch(t);
  const q = new URLSearchParams({ openai: `${openai.url}/v1`, anthropic: `${anthropic.url}/v1`, nocors: `${nocors.url}/v1` });
  await b.goto(`/tests/browser/pages/providers.html?${q}`);
  assert.equal(await awaitGlobal(b, "providersReady"), true, explain(b.log));
  const ids = { openai: "session-2026-12-01-10-00-00-0000a001", anthropic: "session-2026-12-01-10-00-00-0000a002" };
  for (const section of ["openai", "anthropic"]) {
    const types = await b.eval((s, id) => window.providers.run(s, id), [section, ids[section]]);
    assert.ok(types.includes("partial_text"), `${section}: the text streamed` + explain(b.log));
    const shown = await b.eval((s) => ({
      text: document.querySelector(`#${s} .text`).textContent,
      events: [...document.querySelectorAll(`#${s} .events li`)].map((e) => e.textContent),
    }), [section]);
    assert.equal(shown.text, "I will read the notes.\n" + FINAL.join("") + "\n", `${section}: rendered text` + explain(b.log));
    assert.ok(shown.events.includes(`output ${NOTES}`), `${section}: the read's output: ${shown.events}`);
    assert.deepEqual(shown.events.filter((e) => e.startsWith("decision")), ["decision allow", "decision deny"]);
  }
  assert.equal(openai.requests.length, 2);
  assert.equal(anthropic.requests.length, 2);
  assert.equal(openai.requests[0].headers.origin, origin);

  // No CORS headers: WebKit refuses the response ("Load failed"); the
  // error adds the same hint as in the other browsers.
  await b.eval((id) => window.providers.run("nocors", id), ["session-2026-12-01-10-00-00-0000a003"]);
  const refused = await b.eval(() => [...document.querySelectorAll("#nocors .events li")].map((e) => e.textContent));
  assert.equal(refused.length, 1, JSON.stringify(refused));
  assert.match(refused[0], /^request_end timeout: openai: request failed: fetch http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions: TypeError: Load failed \(no response reached the page: .*CORS/);
});

test("openaiCompatible: an abort while the reply streams ends the request and closes the connection", { timeout: 60_000 }, async (t) => {
  const origin = new URL(baseURL()).origin;
  let release;
  const held = new Promise((r) => (release = r));
  const srv = await replayServer(t, async (req, res) => {
    res.writeHead(200, SSE_HEADERS);
    const chunk = (delta) => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta }] })}\n\n`;
    res.write(chunk({ role: "assistant", content: "Hello" }));
    res.write(chunk({ content: " wor" }));
    await held; // the rest never comes before the abort
    res.end();
  }, { cors: origin });
  t.after(() => release());
  const b = await launch(t);
  await b.goto("/tests/browser/fixtures/main.html");
  await awaitGlobal(b, "floeResult");
  const r = await b.eval(async (base) => {
    const { load } = await import("/static/floe.mjs");
    const floe = await load();
    const session = floe.createSession({ store: false, llm: floe.openaiCompatible({ baseURL: base, model: "m" }) });
    const ac = new AbortController();
    const seen = [];
    let text = "";
    for await (const m of session.run("hi", { signal: ac.signal })) {
      const p = m.payload;
      seen.push(p.type + (p.event_type ? ":" + p.event_type : "") + (p.status ? ":" + p.status : ""));
      if (p.type === "partial_text" && p.event_type === "delta") {
        text += p.text;
        if (text === "Hello wor") ac.abort(new Error("enough"));
      }
    }
    await session.close();
    return { seen, text };
  }, [srv.url + "/v1"]);
  assert.equal(r.text, "Hello wor", explain(b.log));
  assert.deepEqual(r.seen.slice(-2), ["request_end:aborted", "abort"], JSON.stringify(r.seen));
  assert.equal(await srv.requests[0].closed, true, "the connection was not closed by the abort");
});
