// The playground and the library copied to a plain static host under a
// sub-path (as GitHub Pages serves https://user.github.io/repo/): a file
// server with a generic MIME table and no headers of floe-serve's (no
// Content-Security-Policy, no Cache-Control), which answers nothing outside
// its sub-path. The page must run from there: relative URLs only, its own
// policy in a <meta> element, run_js sandboxed without the frame's header,
// WebAssembly served as application/octet-stream.
import { test } from "node:test";
import assert from "node:assert/strict";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";
import { ROOT, WAIT, explain, launch, page as firstPage } from "./harness.mjs";

const RUN = 60_000;
const PREFIX = "/demo/floe/";

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
};

/**
 * A copy of static/ (plus extra files) served under PREFIX by a plain Node
 * server: .wasm as wasmType, any other unknown type as
 * application/octet-stream, no other header but `headers`. Requests outside
 * PREFIX are answered 404 and recorded in `outside`; `dir` is the copy.
 */
async function staticHost(t, { wasmType = "application/wasm", extra = {}, headers = {} } = {}) {
  const dir = await mkdtemp(join(tmpdir(), "floe-static-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await cp(join(ROOT, "static"), dir, { recursive: true });
  for (const [name, text] of Object.entries(extra)) await writeFile(join(dir, name), text);
  const outside = [];
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    if (path === PREFIX.slice(0, -1)) {
      res.writeHead(301, { Location: PREFIX }).end();
      return;
    }
    if (!path.startsWith(PREFIX)) {
      outside.push(path);
      res.writeHead(404).end("not found");
      return;
    }
    let rel = normalize(path.slice(PREFIX.length));
    if (rel === "." || rel.endsWith("/")) rel = join(rel, "index.html");
    if (rel.startsWith("..")) {
      res.writeHead(404).end("not found");
      return;
    }
    try {
      const body = await readFile(join(dir, rel));
      const ext = extname(rel);
      res.writeHead(200, { ...headers, "Content-Type": ext === ".wasm" ? wasmType : TYPES[ext] ?? "application/octet-stream" });
      res.end(req.method === "HEAD" ? undefined : body);
    } catch {
      res.writeHead(404).end("not found");
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${server.address().port}${PREFIX}`, outside, dir };
}

const idle = (page) => page.locator('body[data-state="idle"]').waitFor({ timeout: RUN });
const lastReply = (page) => page.locator('#transcript > .msg.text[data-kind="text"] .body').last().innerText();
const lastCard = (page, tool) => page.locator("#transcript > .card", { has: page.locator(`.tool-name:text("${tool}")`) }).last();

async function send(page, prompt) {
  await idle(page);
  const n = await page.locator("#transcript > .msg.prompt").count();
  await page.fill("#prompt", prompt);
  await page.press("#prompt", "Enter");
  await page.locator("#transcript > .msg.prompt").nth(n).waitFor();
}

const allow = (page, tool) =>
  page.locator("#transcript > .card.ask", { has: page.locator(".tool-name", { hasText: tool }) }).last()
    .locator('button[data-decision="allow"]').click({ timeout: RUN });

/** Runs body in a fresh browser context; fails on page errors and console errors not expected. */
function hostTest(name, body, { expected = [] } = {}) {
  test(name, { timeout: 240_000 }, async (t) => {
    const { ctx, log } = await launch(t);
    const page = await firstPage(ctx);
    try {
      await body(t, page, ctx, log);
      const bad = log.filter((l) => (l.startsWith("page error") || l.startsWith("console.error")) && !expected.some((re) => re.test(l)));
      assert.deepEqual(bad, [], "errors in the page");
    } catch (e) {
      e.message += explain(log);
      throw e;
    }
  });
}

// The probe run_js runs: where its code is, whether it reaches the
// origin's IndexedDB and the network (a no-cors fetch of the host).
const probe = (host) =>
  "js: (async () => { let idb, net; try { indexedDB; idb = 'reachable' } catch (e) { idb = e.name } " +
  `try { await fetch('${host.url}', { mode: 'no-cors' }); net = 'sent' } catch (e) { net = e.name } ` +
  "return self.origin + ' ' + idb + ' ' + net })()";
const SANDBOXED = "result: null ReferenceError TypeError\n";

hostTest("static host: the playground under a sub-path runs a task and run_js, keeps its session over a reload and runs offline", async (t, page, ctx) => {
  const host = await staticHost(t);
  await page.goto(host.url + "?pace=0");
  await idle(page);

  await send(page, "How long is store.go?");
  await allow(page, "list_files");
  await allow(page, "count_lines");
  await idle(page);
  assert.match(await lastReply(page), /add up to \d+ lines/);

  // run_js: the sandbox frame has no header that sandboxes it here; it
  // still runs at an opaque origin.
  await send(page, probe(host));
  await allow(page, "run_js");
  await idle(page);
  assert.equal(await lastCard(page, "run_js").locator(".output").innerText(), SANDBOXED);
  assert.equal(await page.locator("iframe").count(), 0, "the sandbox frame outlived its call");

  // Reload: the same session, its cards and the service worker of the sub-path.
  const id = await page.locator("#session-id").innerText();
  await page.evaluate(() => navigator.serviceWorker.ready);
  assert.equal(await page.evaluate(() => navigator.serviceWorker.ready.then((r) => r.scope)), host.url);
  await page.reload();
  await idle(page);
  assert.equal(await page.locator("#session-id").innerText(), id);
  await page.locator("#transcript > .msg.text", { hasText: /add up to \d+ lines/ }).waitFor();
  assert.equal(await page.locator("#transcript > .card").count(), 3);
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null);

  // Offline: the page, the demo and run_js from the service worker's cache.
  await ctx.setOffline(true);
  await page.reload();
  await idle(page);
  await send(page, "echo: offline at a sub-path");
  await idle(page);
  assert.equal(await lastReply(page), "offline at a sub-path");
  await send(page, probe(host));
  await allow(page, "run_js");
  await idle(page);
  assert.equal(await lastCard(page, "run_js").locator(".output").innerText(), SANDBOXED);
  await ctx.setOffline(false);

  assert.deepEqual(host.outside, [], "requests outside the sub-path");
});

// A host that lets the browser cache its files a while (GitHub Pages sends
// Cache-Control: max-age=600): the service worker, network first, asks the
// host again at every load, so a rebuild is served at the next reload; it
// took the browser's HTTP cache's copy, the old app, until it expired (and
// its precache, fetching playground.wasm through that cache while the page
// compiled it, could abort the page's download on the first visit).
hostTest("static host: a rebuild is served at the next reload, whatever the host's max-age", async (t, page) => {
  const host = await staticHost(t, { headers: { "Cache-Control": "max-age=600" } });
  await page.goto(host.url + "?pace=0");
  await idle(page);
  // The worker installed and controls the page (its activate claims it).
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null);

  const app = join(host.dir, "app.js");
  await writeFile(app, (await readFile(app, "utf8")) + '\ndocument.documentElement.dataset.rebuilt = "yes";\n');
  await page.reload();
  await idle(page);
  assert.equal(await page.evaluate(() => document.documentElement.dataset.rebuilt), "yes", "the page ran the app.js of before the rebuild");
});

hostTest("static host: WebAssembly served as application/octet-stream: the playground and load() from a page beside the library", async (t, page) => {
  const host = await staticHost(t, {
    wasmType: "application/octet-stream",
    extra: {
      "lib.html": '<!doctype html><meta charset="utf-8"><title>lib</title><link rel="icon" href="data:,"><script src="wasm_exec.js"></script><script type="module" src="lib.js"></script>',
      "lib.js": `import { load } from "./floe.mjs";
import { mockModel } from "./test.mjs";
window.result = (async () => {
  const floe = await load();
  const out = [];
  for await (const m of floe.createSession({ llm: mockModel(["Hello from a sub-path."]) }).run("hi")) out.push(m);
  return JSON.stringify(out).includes("Hello from a sub-path.") ? "ran" : JSON.stringify(out);
})().catch((e) => "failed: " + e.message);
`,
    },
  });
  await page.goto(host.url + "?pace=0&nosw");
  await idle(page);
  await send(page, "echo: octets");
  await idle(page);
  assert.equal(await lastReply(page), "octets");

  await page.goto(host.url + "lib.html");
  await page.waitForFunction(() => window.result !== undefined, null, { timeout: WAIT });
  assert.equal(await page.evaluate(() => window.result), "ran");
  assert.deepEqual(host.outside, [], "requests outside the sub-path");
});

hostTest("static host: the page's own Content-Security-Policy is in force without a header", async (t, page) => {
  const host = await staticHost(t);
  const res = await page.goto(host.url + "?pace=0&nosw");
  assert.equal(res.headers()["content-security-policy"], undefined, "the host sent a policy");
  await idle(page);
  const got = await page.evaluate(async () => {
    const violations = [];
    let both;
    const reported = new Promise((r) => (both = r));
    document.addEventListener("securitypolicyviolation", (e) => {
      violations.push(e.effectiveDirective);
      if (violations.length === 2) both();
    });
    const s = document.createElement("script");
    s.textContent = "window.inlineRan = true";
    document.head.append(s);
    let fetched;
    try {
      await fetch("http://192.0.2.1:9/v1/models");
      fetched = "sent";
    } catch (e) {
      fetched = e.name;
    }
    // Each violation's event is a task of its own, queued on no task
    // source a timer's follows: wait for both (bounded; a missing one is
    // named by the check below) rather than for a timer's turn.
    await Promise.race([reported, new Promise((r) => setTimeout(r, 10_000))]);
    return { inline: window.inlineRan === true, fetched, violations: violations.sort() };
  });
  assert.deepEqual(got, { inline: false, fetched: "TypeError", violations: ["connect-src", "script-src-elem"] });

  // The remote-session form names the policy of the meta element.
  await page.locator(".remote summary").click();
  await page.getByLabel("Server URL").fill("http://10.255.255.1:8787");
  await page.getByLabel("Session id").fill("session-x");
  await page.getByRole("button", { name: "Attach", exact: true }).click();
  await page.locator("#remote-status", { hasText: "Content-Security-Policy blocks http://10.255.255.1:8787" }).waitFor();

  // The sandbox framed without the sandbox attribute (as any page may
  // frame it where no frame-ancestors header is sent) is at the
  // playground's origin: it answers, and runs no code.
  const answer = await page.evaluate((ms) => new Promise((resolve, reject) => {
    setTimeout(() => reject(new Error(`the sandbox frame did not answer within ${ms} ms`)), ms);
    const f = document.createElement("iframe");
    f.hidden = true;
    f.src = "eval-frame.html";
    f.onload = () => {
      const mc = new MessageChannel();
      const got = [];
      mc.port1.onmessage = (e) => {
        got.push(e.data);
        if (got.length === 2) resolve(got);
      };
      f.contentWindow.postMessage({ code: "'ran'" }, "*", [mc.port2]);
    };
    document.body.append(f);
  }), WAIT);
  assert.deepEqual(answer[0], { ready: true });
  assert.match(String(answer[1].error), /^the sandbox is at http:\/\/127\.0\.0\.1:\d+, not at an opaque origin .*so it ran no code$/, JSON.stringify(answer[1]));
}, { expected: [/Content Security Policy/, /Failed to fetch/] });
