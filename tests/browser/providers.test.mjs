// The built-in model adapters in headless Chromium: a page of the test
// server's origin uses floe.openaiCompatible() and floe.anthropic() against
// loopback replay servers on other ports (other origins), which answer with
// CORS headers as such servers send them. Each runs a two-tool task with
// approvals (reads allowed, deletions denied); the test checks what the page
// rendered, what the servers received, and, after a reload, what IndexedDB
// holds. A server without CORS headers shows what a refused origin becomes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { awaitGlobal, baseURL, explain, launch, page as firstPage, ROOT, WAIT } from "./harness.mjs";
import { replayServer, openaiStream, anthropicStream, SSE_HEADERS } from "../node/replay.mjs";

const NOTES = "buy milk";
const FINAL = ["Your notes say: ", NOTES, ". I did not delete the file."];

/** A server for one provider's two requests; check(body) names what request 2 lacks. */
function twoTurns(first, check, final) {
  let n = 0;
  return async (req, res, body) => {
    n++;
    if (n === 2) {
      const why = check(JSON.parse(body));
      if (why) {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: `request 2: ${why}`, type: "invalid_request_error" } }));
        return;
      }
    }
    res.writeHead(200, SSE_HEADERS);
    res.end(n === 1 ? first : final);
  };
}

const openaiCheck = (body) => {
  const tool = (id) => body.messages.find((m) => m.role === "tool" && m.tool_call_id === id);
  if (!body.messages.some((m) => m.role === "assistant" && m.tool_calls?.length === 2)) return "no assistant message with the two calls";
  if (tool("call_read")?.content !== NOTES) return "the read's output is missing";
  if (!tool("call_del")?.content) return "the denied call has no output";
  return null;
};

const anthropicCheck = (body) => {
  const last = body.messages.at(-1);
  const results = (Array.isArray(last?.content) ? last.content : []).filter((b) => b.type === "tool_result");
  const out = (id) => results.find((b) => b.tool_use_id === id);
  const text = (b) => (typeof b?.content === "string" ? b.content : (b?.content ?? []).map((x) => x.text).join(""));
  if (!body.messages.some((m) => m.role === "assistant" && m.content.filter((b) => b.type === "tool_use").length === 2)) return "no assistant turn with the two tool_use blocks";
  if (text(out("toolu_read")) !== NOTES) return "the read's tool_result is missing";
  if (!out("toolu_del")) return "the denied call has no tool_result";
  return null;
};

test("openaiCompatible and anthropic from a page, across origins, with approvals and IndexedDB", { timeout: 120_000 }, async (t) => {
  const origin = new URL(baseURL()).origin;
  const openai = await replayServer(
    t,
    twoTurns(
      openaiStream({ text: ["I will ", "read the notes."], calls: [
        { id: "call_read", name: "read_file", args: ['{"path":', '"notes.txt"}'] },
        { id: "call_del", name: "delete_file", args: ['{"path":"notes.txt"}'] },
      ] }),
      openaiCheck,
      openaiStream({ text: FINAL }),
    ),
    { cors: origin },
  );
  const anthropic = await replayServer(
    t,
    twoTurns(
      anthropicStream({ thinking: "The user wants two things.", text: ["I will ", "read the notes."], calls: [
        { id: "toolu_read", name: "read_file", args: ['{"path": ', '"notes.txt"}'] },
        { id: "toolu_del", name: "delete_file", args: ['{"path": "notes.txt"}'] },
      ] }),
      anthropicCheck,
      anthropicStream({ text: FINAL }),
    ),
    { cors: origin },
  );
  const nocors = await replayServer(t, async (req, res) => {
    res.writeHead(200, SSE_HEADERS);
    res.end(openaiStream({ text: ["never seen"] }));
  });

  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  const q = new URLSearchParams({ openai: `${openai.url}/v1`, anthropic: `${anthropic.url}/v1`, nocors: `${nocors.url}/v1` });
  const url = `${baseURL()}/tests/browser/pages/providers.html?${q}`;
  await page.goto(url);
  assert.equal(await awaitGlobal(page, "providersReady"), true, explain(log));

  const ids = { openai: "session-2026-12-01-10-00-00-0000a001", anthropic: "session-2026-12-01-10-00-00-0000a002" };
  for (const section of ["openai", "anthropic"]) {
    const types = await page.evaluate(([s, id]) => window.providers.run(s, id), [section, ids[section]]);
    assert.ok(types.includes("partial_text"), `${section}: the text streamed` + explain(log));
    const shown = await page.locator(`#${section} .text`).textContent();
    assert.equal(shown, "I will read the notes.\n" + FINAL.join("") + "\n", `${section}: rendered text` + explain(log));
    const events = await page.locator(`#${section} .events li`).allTextContents();
    const sp = section === "anthropic" ? " " : ""; // the arguments exactly as streamed
    const want = [`call read_file {"path":${sp}"notes.txt"}`, "decision allow", `call delete_file {"path":${sp}"notes.txt"}`,
      "decision deny", "request_end completed", "request_end completed"];
    assert.deepEqual(events.filter((e) => !e.startsWith("output ")).sort(), want.sort(), `${section}: rendered events ${JSON.stringify(events)}` + explain(log));
    assert.ok(events.includes(`output ${NOTES}`), `${section}: the read's output` + explain(log));
    assert.equal(await page.locator(`#${section} .status`).textContent(), "done");
  }

  // What the servers received: the page's origin, the keys only where they
  // belong, Anthropic's browser header by default.
  assert.equal(openai.requests.length, 2);
  assert.equal(anthropic.requests.length, 2);
  for (const r of openai.requests) {
    assert.equal(r.headers.origin, origin);
    assert.equal(r.headers.authorization, "Bearer sk-local");
    assert.equal(r.headers["x-api-key"], undefined);
  }
  for (const r of anthropic.requests) {
    assert.equal(r.headers.origin, origin);
    assert.equal(r.headers["x-api-key"], "sk-ant-test");
    assert.equal(r.headers.authorization, undefined);
    assert.equal(r.headers["anthropic-dangerous-direct-browser-access"], "true");
  }

  // A server that sends no CORS headers: the browser refuses the response.
  await page.evaluate(() => window.providers.run("nocors", "session-2026-12-01-10-00-00-0000a003"));
  const refused = await page.locator("#nocors .events li").allTextContents();
  assert.equal(refused.length, 1, JSON.stringify(refused));
  assert.match(refused[0], /^request_end timeout: openai: request failed: fetch http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions: TypeError: Failed to fetch \(.*CORS/);
  assert.equal(await page.locator("#nocors .text").textContent(), "");

  // IndexedDB: after a reload, both sessions are listed and their Traces
  // hold the task (complete messages only, never fragments).
  await page.goto(url);
  assert.equal(await awaitGlobal(page, "providersReady"), true, explain(log));
  const listed = await page.evaluate(() => window.providers.list());
  for (const id of Object.values(ids)) assert.ok(listed.some((s) => s.id === id), `${id} listed: ${JSON.stringify(listed)}`);
  for (const [section, id] of Object.entries(ids)) {
    const files = await page.evaluate((x) => window.providers.export(x), id);
    const records = files.flatMap((f) => f.text.trim().split("\n").map((l) => JSON.parse(l)));
    const kinds = records.map((r) => (r.type === "session_meta" ? r.type : r.payload.type));
    assert.equal(kinds[0], "session_meta");
    assert.equal(records[0].payload.provider, section === "anthropic" ? "anthropic" : "openai-chat");
    assert.ok(!kinds.some((k) => k.startsWith("partial_")), `${section}: no fragments stored: ${kinds}`);
    const calls = records.filter((r) => r.payload.type === "tool_call").map((r) => r.payload.tool_call_id);
    assert.deepEqual(calls, section === "anthropic" ? ["toolu_read", "toolu_del"] : ["call_read", "call_del"]);
    const outs = records.filter((r) => r.payload.type === "tool_call_output");
    assert.equal(outs.length, 2);
    assert.equal(outs.find((o) => o.payload.tool_call_id === calls[0]).payload.output, NOTES);
    assert.deepEqual(records.filter((r) => r.payload.type === "approval_decision").map((r) => r.payload.decision), ["allow", "deny"]);
    const texts = records.filter((r) => r.payload.type === "text" && r.payload.role === "assistant").map((r) => r.payload.text);
    assert.deepEqual(texts, ["I will read the notes.", FINAL.join("")]);
    if (section === "anthropic") {
      const thinking = records.find((r) => r.payload.type === "thinking");
      assert.equal(thinking?.payload.thinking, "The user wants two things.");
    }
    assert.equal(records.filter((r) => r.payload.type === "token_usage").length, 2);
  }
});

test("openaiCompatible and anthropic in a module Worker", { timeout: 90_000 }, async (t) => {
  const origin = new URL(baseURL()).origin;
  const serve = (first, final) => {
    let n = 0;
    return async (req, res) => {
      res.writeHead(200, SSE_HEADERS);
      res.end(++n === 1 ? first : final);
    };
  };
  const openai = await replayServer(t, serve(
    openaiStream({ calls: [{ id: "call_w", name: "read_file", args: ['{"path":"notes.txt"}'] }] }),
    openaiStream({ text: ["It says ", NOTES, "."] }),
  ), { cors: origin });
  const anthropic = await replayServer(t, serve(
    anthropicStream({ calls: [{ id: "toolu_w", name: "read_file", args: ['{"path":"notes.txt"}'] }] }),
    anthropicStream({ text: ["It says ", NOTES, "."] }),
  ), { cors: origin });
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  const q = new URLSearchParams({ openai: `${openai.url}/v1`, anthropic: `${anthropic.url}/v1` });
  await page.goto(`${baseURL()}/tests/browser/pages/providers-worker.html?${q}`);
  const r = await awaitGlobal(page, "workerResult");
  assert.equal(r.error, undefined, r.error + explain(log));
  assert.deepEqual(r.openai, { texts: [`It says ${NOTES}.`], calls: ["call_w"], ends: ["completed", "completed"] });
  assert.deepEqual(r.anthropic, { texts: [`It says ${NOTES}.`], calls: ["toolu_w"], ends: ["completed", "completed"] });
  // A Worker is a browser: Anthropic's header is on by default.
  assert.equal(anthropic.requests[0].headers["anthropic-dangerous-direct-browser-access"], "true");
  assert.equal(openai.requests[0].headers.origin, origin);
});

test("an MV3 extension page and its service worker with host_permissions reach a server that sends no CORS headers", { timeout: 120_000 }, async (t) => {
  const srv = await replayServer(t, async (req, res) => {
    res.writeHead(200, SSE_HEADERS); // no Access-Control-* at all
    res.end(openaiStream({ text: ["from ", "the extension"] }));
  });
  // The extension example with host_permissions for the server, and a page
  // of this test's own (extension pages allow no inline script).
  const dir = await mkdtemp(join(tmpdir(), "floe-extension-models-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await cp(join(ROOT, "examples/extension"), dir, { recursive: true });
  // The package's browser modules (floe.mjs imports its siblings), the wasm and Go's glue.
  const files = (await readdir(join(ROOT, "static"))).filter((f) => f.endsWith(".mjs") && f !== "floe-node.mjs" && f !== "test.mjs");
  for (const f of [...files, "floe.wasm", "wasm_exec.js"]) await cp(join(ROOT, "static", f), join(dir, f));
  const manifest = JSON.parse(await readFile(join(dir, "manifest.json"), "utf8"));
  manifest.host_permissions = ["http://127.0.0.1/*"];
  // Its service worker runs the same code (a service worker has no window and no import()).
  manifest.background = { service_worker: "model-sw.js", type: "module" };
  await writeFile(join(dir, "manifest.json"), JSON.stringify(manifest));
  await writeFile(join(dir, "model-sw.js"), `import { load } from "./floe.mjs";
self.runModel = async (base) => {
  const floe = await load();
  const session = floe.createSession({ store: false, llm: floe.openaiCompatible({ baseURL: base, model: "m" }), config: { maxReconnects: 0 } });
  const out = [];
  for await (const m of session.run("hi")) if (m.payload.type === "text" || m.payload.type === "request_end") out.push(m.payload.text ?? m.payload.status + " " + (m.payload.error_message ?? ""));
  return out;
};
`);
  await writeFile(join(dir, "model.html"), '<!doctype html><meta charset="utf-8"><script type="module" src="model.js"></script>');
  await writeFile(join(dir, "model.js"), `import { load } from "./floe.mjs";
window.floeResult = (async () => {
  const floe = await load();
  const session = floe.createSession({
    meta: { session_id: "ext-model", provider: "p", model_id: "m", model_context_window: 1000, system_prompt: "", agent_state: "", workspace: "" },
    store: false, llm: floe.openaiCompatible({ baseURL: new URLSearchParams(location.search).get("base"), model: "m" }),
    config: { maxReconnects: 0 },
  });
  const out = [];
  for await (const m of session.run("hi")) if (m.payload.type === "text" || m.payload.type === "request_end") out.push(m.payload.text ?? m.payload.status + " " + (m.payload.error_message ?? ""));
  return out;
})().catch((e) => ({ error: String(e) }));
`);
  const { ctx, log } = await launch(t, {
    args: [`--disable-extensions-except=${dir}`, `--load-extension=${dir}`],
    ignoreDefaultArgs: ["--disable-extensions"],
  });
  const worker =
    ctx.serviceWorkers().find((w) => w.url().startsWith("chrome-extension://")) ??
    (await ctx.waitForEvent("serviceworker", { timeout: WAIT }));
  const page = await ctx.newPage();
  await page.goto(`chrome-extension://${new URL(worker.url()).host}/model.html?base=${encodeURIComponent(srv.url + "/v1")}`);
  const r = await awaitGlobal(page, "floeResult");
  assert.deepEqual(r, ["from the extension", "completed "], JSON.stringify(r) + explain(log));
  assert.match(srv.requests[0].headers.origin ?? "", /^chrome-extension:\/\//);
  const fromWorker = await worker.evaluate((base) => self.runModel(base).catch((e) => ({ error: String(e) })), srv.url + "/v1");
  assert.deepEqual(fromWorker, ["from the extension", "completed "], "in the service worker: " + JSON.stringify(fromWorker) + explain(log));
  assert.equal(srv.requests.length, 2);
});

test("idleTimeoutMs in a page: a server that goes silent after its headers ends the request as timeout; one that sends comments does not", { timeout: 60_000 }, async (t) => {
  const origin = new URL(baseURL()).origin;
  const server = await replayServer(t, async (req, res) => {
    res.writeHead(200, SSE_HEADERS);
    if (!req.url.startsWith("/pings")) {
      res.write(": open\n\n"); // then nothing, the connection held
      return;
    }
    // A comment every 40 ms for 600 ms (bytes, though no event), then the
    // answer: far within the 2 s, however slow the machine.
    const full = openaiStream({ text: ["Still ", "here."] });
    let n = 0;
    const tick = setInterval(() => {
      if (++n < 15) return void res.write(": ping\n\n");
      clearInterval(tick);
      res.end(full);
    }, 40);
    res.on("close", () => clearInterval(tick));
  }, { cors: origin });
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  await page.goto(`${baseURL()}/tests/browser/pages/providers.html`);
  assert.equal(await awaitGlobal(page, "providersReady"), true, explain(log));
  const run = (base) =>
    page.evaluate(async (base) => {
      const { load } = await import("/static/floe.mjs");
      const floe = await load();
      const session = floe.createSession({
        meta: { session_id: `session-2026-12-05-00-00-00-${Math.random().toString(16).slice(2, 10).padEnd(8, "0")}`, system_prompt: "" },
        store: false,
        llm: floe.openaiCompatible({ baseURL: base, model: "m", idleTimeoutMs: 2000 }),
        config: { maxTurns: 1, maxReconnects: 0 },
      });
      const out = [];
      for await (const m of session.run("Hi")) {
        if (m.payload.type === "request_end") out.push([m.payload.status, m.payload.error_message ?? ""]);
        if (m.payload.type === "text") out.push(["text", m.payload.text]);
      }
      return out;
    }, base);
  assert.deepEqual(await run(`${server.url}/v1`), [["timeout", "openai: no data from the server for 2s (the idle timeout)"]], explain(log));
  assert.equal(await server.requests[0].closed, true, "the silent request's connection was closed");
  assert.deepEqual(await run(`${server.url}/pings/v1`), [["text", "Still here."], ["completed", ""]], explain(log));
});
