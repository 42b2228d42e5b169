// The playground page, as in playground.test.mjs: Settings that give no
// usable provider or a refused URL, an XSS corpus, a phone's viewport, the
// page offline, run_js's sandbox, right-to-left text and titles.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { baseURL, WAIT } from "./harness.mjs";
import { replayServer, writeResponse, anthropicStream, SSE_HEADERS } from "../node/replay.mjs";
import { RUN, pageTest, open, idle, showSessions, send, askCard, decide, lastReply, XSS, checkInert, configure } from "./playground-lib.mjs";

pageTest("playground: settings that give no usable provider say why; any compaction threshold is accepted; the llama.cpp hint matches the README", async (page) => {
  await open(page);
  await configure(page, { provider: "openai-compatible", baseURL: "http://127.0.0.1:11434/v1" });
  assert.match(await page.locator("#model-label").innerText(), /scripted demo \(OpenAI-compatible server unavailable\)/);
  await page.locator("#note", { hasText: "Settings: choose a model name for OpenAI-compatible server" }).waitFor();
  await configure(page, { provider: "openai-compatible", model: "llama3.2" });
  await page.locator("#note", { hasText: "Settings: an OpenAI-compatible server needs its base URL" }).waitFor();
  await configure(page, { provider: "openai", model: "gpt-4o-mini" });
  await page.locator("#note", { hasText: "Settings: OpenAI needs an API key (or a Base URL: a proxy that adds it, a local server)." }).waitFor();
  await configure(page, { provider: "anthropic", model: "claude-sonnet-4-5" });
  await page.locator("#note", { hasText: "Settings: Anthropic needs an API key (or a Base URL: a proxy that adds it)." }).waitFor();
  // The note goes on the first run like any other; the demo answers.
  await send(page, "echo: the demo meanwhile");
  await idle(page);
  assert.equal(await lastReply(page), "the demo meanwhile");

  // The OpenAI-compatible hint names llama.cpp's port as the README does.
  await page.click("#open-settings");
  await page.selectOption("#set-provider", "openai-compatible");
  assert.match(await page.locator("#set-provider-note").innerText(), /llama-server \(http:\/\/127\.0\.0\.1:8081\/v1/);
  const readme = await readFile(new URL("../../README.md", import.meta.url), "utf8");
  assert.match(readme, /\| llama\.cpp \| `http:\/\/127\.0\.0\.1:8081\/v1` \|/);
  // A threshold that is no multiple of 1000 is accepted.
  await page.selectOption("#set-provider", "scripted");
  await page.fill("#set-compact-tokens", "1500");
  await page.click("#settings-save");
  await page.locator("#settings").waitFor({ state: "hidden" });
  const stored = JSON.parse(await page.evaluate(() => localStorage.getItem("floe-playground:settings")));
  assert.equal(stored.compactTokens, 1500);
});

pageTest("playground: Settings refuse a base URL that is not http(s); a URL the page's Content-Security-Policy blocks is named as such when saving and when sending, with the addresses the page may reach", async (page) => {
  const res = await open(page);
  assert.match(res.headers()["content-security-policy"], /connect-src 'self' https: http:\/\/127\.0\.0\.1:\* http:\/\/localhost:\*/);
  // ftp://: refused at once, the dialog stays open, nothing is saved.
  await page.click("#open-settings");
  await page.selectOption("#set-provider", "openai-compatible");
  await page.fill("#set-base-url", "ftp://127.0.0.1:8852/v1");
  await page.fill("#set-model", "llama3.2");
  await page.click("#settings-save");
  await page.locator("#set-base-url-error", { hasText: "is not http:// or https://" }).waitFor();
  assert.equal(await page.locator("#settings").isVisible(), true, "the dialog closed on a refused URL");
  assert.equal(await page.getAttribute("#set-base-url", "aria-invalid"), "true");
  assert.equal(await page.evaluate(() => localStorage.getItem("floe-playground:settings")), null, "a refused URL was saved");
  await page.click("#settings-cancel");
  // Reopened, the dialog shows no stale error.
  await page.click("#open-settings");
  assert.equal(await page.locator("#set-base-url-error").isVisible(), false);
  await page.click("#settings-cancel");

  // A LAN address over plain http: the page's policy blocks it. Save says
  // so under the field and keeps the dialog open; a second Save keeps it.
  await page.click("#open-settings");
  await page.selectOption("#set-provider", "openai-compatible");
  await page.fill("#set-base-url", "http://192.168.1.50:11434/v1");
  await page.fill("#set-model", "llama3.2");
  await page.click("#settings-save");
  const warning = page.locator("#set-base-url-error", { hasText: "Save again to keep these settings anyway." });
  await warning.waitFor();
  const said = await warning.innerText();
  assert.match(said, /^Settings: this page's Content-Security-Policy \(connect-src\) does not let it fetch http:\/\/192\.168\.1\.50:11434\/v1: /);
  assert.match(said, /may reach this page's own origin \(http:\/\/127\.0\.0\.1:\d+\), any https:\/\/ address, http:\/\/127\.0\.0\.1 on any port and http:\/\/localhost on any port/);
  assert.equal(await page.locator("#settings").isVisible(), true, "the dialog closed on a blocked URL");
  assert.equal(await page.evaluate(() => localStorage.getItem("floe-playground:settings")), null, "a blocked URL was saved at the first Save");
  // A URL the policy allows is saved at once.
  await page.fill("#set-base-url", "http://127.0.0.1:11434/v1");
  await page.click("#settings-save");
  await page.locator("#settings").waitFor({ state: "hidden" });
  assert.equal(JSON.parse(await page.evaluate(() => localStorage.getItem("floe-playground:settings"))).baseURL, "http://127.0.0.1:11434/v1");
  // Back to the blocked one: the first Save warns again, the second keeps it.
  await page.click("#open-settings");
  assert.equal(await page.locator("#set-base-url-error").isVisible(), false, "a stale warning");
  await page.fill("#set-base-url", "http://192.168.1.50:11434/v1");
  await page.click("#settings-save");
  await warning.waitFor();
  await page.click("#settings-save");
  await page.locator("#settings").waitFor({ state: "hidden" });
  assert.equal(JSON.parse(await page.evaluate(() => localStorage.getItem("floe-playground:settings"))).baseURL, "http://192.168.1.50:11434/v1");
  await page.click("#reset");
  // Sending then says so too (not CORS), with what the page may reach.
  await send(page, "Say hello");
  await page.locator(".request .retry .countdown").waitFor({ timeout: RUN });
  const text = await page.locator(".request").last().innerText();
  assert.match(text, /no request sent to http:\/\/192\.168\.1\.50:11434\/v1\/chat\/completions: this page's Content-Security-Policy \(connect-src\) does not let it fetch/);
  assert.match(text, /may reach this page's own origin \(http:\/\/127\.0\.0\.1:\d+\), any https:\/\/ address, http:\/\/127\.0\.0\.1 on any port and http:\/\/localhost on any port/);
  assert.doesNotMatch(text, /CORS|OLLAMA_ORIGINS/);
  await page.locator('.request .retry button:text("Give up")').click();
  await idle(page);
}, { expected: [/violates the following Content Security Policy directive/, /violates the document's Content Security Policy/] });

pageTest("playground: an XSS corpus through model text, thinking, tool arguments and output, file names and an imported trace executes nothing; CSP header", async (page) => {
  const dialogs = [];
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    d.dismiss().catch(() => {});
  });
  const res = await open(page);
  const csp = res.headers()["content-security-policy"] || "";
  assert.match(csp, /script-src 'self' 'wasm-unsafe-eval'(;|$)/);
  assert.doesNotMatch(csp, /unsafe-inline|'unsafe-eval'/);
  const corpus = XSS.join("\n\n");
  // Model text and thinking (echo: streams it as both).
  await send(page, "echo: " + corpus);
  await idle(page);
  await page.locator("#transcript details.thinking").last().locator("summary").click();
  assert.match(await lastReply(page), /window\.__xss = 1/, "the payload is shown as text");
  // Tool arguments, tool output and a file name.
  const name = `x<img src=x onerror=window.__xss=13>.md`;
  await send(page, `write ${name}: ${corpus}`);
  await decide(page, "write_file", "allow");
  await idle(page);
  await send(page, `read ${name}`);
  await decide(page, "read_file", "allow");
  await idle(page);
  await page.click("#tab-files");
  await page.locator("#files [data-path]", { hasText: "onerror" }).click();
  await page.locator("#file-view", { hasText: "__xss = 1" }).waitFor();
  // An imported trace.
  const ts = "2026-01-01T00:00:00.000Z";
  const sid = "session-2026-01-01-00-00-00-0bad0bad";
  const lines = [
    { timestamp: ts, type: "session_meta", payload: { session_id: sid, provider: "x", model_id: "<img src=x onerror=window.__xss=14>", model_context_window: 1, system_prompt: corpus, agent_state: "m", workspace: "w" } },
    { timestamp: ts, type: "model_msg", payload: { type: "text", role: "user", text: corpus } },
    { timestamp: ts, type: "event_msg", payload: { type: "request_begin" } },
    { timestamp: ts, type: "model_msg", payload: { type: "thinking", role: "assistant", thinking: corpus, stop_reason: "completed" } },
    { timestamp: ts, type: "model_msg", payload: { type: "text", role: "assistant", text: corpus, stop_reason: "completed" } },
    { timestamp: ts, type: "model_msg", payload: { type: "tool_call", role: "assistant", name: "<svg onload=window.__xss=15>", arguments: corpus, tool_call_id: "c<b>1", stop_reason: "completed" } },
  ];
  await page.setInputFiles("#import", { name: "evil.jsonl", mimeType: "application/x-ndjson", buffer: Buffer.from(lines.map((l) => JSON.stringify(l)).join("\n") + "\n") });
  await page.locator("#note", { hasText: `Imported ${sid}.` }).waitFor();
  await page.locator(`#sessions li[data-session-id="${sid}"] .session-open`).click();
  await page.locator("#transcript > .card .tool-name", { hasText: "svg onload" }).waitFor();
  await page.click("#tab-trace");
  await page.locator("#trace li").nth(1).click();
  await page.locator("#trace pre.json").first().waitFor();
  await checkInert(page, dialogs);
});

pageTest("playground: a phone-sized viewport (390 px): no sideways scrolling, the panels in a drawer", async (page) => {
  await open(page);
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 390, `the page is ${width} px wide`);
  assert.ok(await page.locator("#tokens").isVisible(), "token counts hidden");
  assert.equal(await page.locator("#side").isVisible(), false);
  await send(page, "echo: small **screen**");
  await idle(page);
  assert.equal(await page.locator("#transcript > .msg.text strong").innerText(), "screen");
  await page.click("#toggle-side");
  await page.locator("#side").waitFor();
  assert.ok((await page.locator("#stream li").count()) > 3);
  const box = await page.locator("#side").boundingBox();
  assert.ok(box.x >= 0 && box.x + box.width <= 390, `drawer at ${JSON.stringify(box)}`);
  await page.click("#toggle-side");
  await page.click("#toggle-sessions");
  await page.locator("#sessions-panel").waitFor();
  await page.locator("#sessions li.session").first().waitFor();
  const labels = await page.evaluate(() =>
    [...document.querySelectorAll("input:not([type=hidden]), textarea, select")].filter((e) => !e.labels || e.labels.length === 0).map((e) => e.id),
  );
  assert.deepEqual(labels, [], "inputs without a label");
  const live = await page.evaluate(() => [...document.querySelectorAll("[aria-live]")].map((e) => e.id));
  assert.deepEqual(live, ["live"], "aria-live only on the completed-message region");
  // Escape closes an open drawer (during a run too, which goes on), then stops the run.
  await page.click("#toggle-sessions");
  await page.locator('body[data-drawer=""]').waitFor();
  await send(page, "stream 3000");
  await page.click("#toggle-sessions");
  await page.locator('body[data-drawer="sessions"]').waitFor();
  await page.keyboard.press("Escape");
  await page.locator('body[data-drawer=""]').waitFor();
  assert.equal(await page.getAttribute("body", "data-state"), "running", "Escape in the drawer stopped the run");
  await page.keyboard.press("Escape");
  await idle(page);
}, { viewport: { width: 390, height: 844 } });

pageTest("playground: loads and runs offline once the service worker is installed", async (page, ctx) => {
  await open(page);
  await page.evaluate(() => navigator.serviceWorker.ready);
  await page.reload();
  await idle(page);
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
  await ctx.setOffline(true);
  await page.reload();
  await idle(page);
  await send(page, "echo: offline and fine");
  await idle(page);
  assert.equal(await lastReply(page), "offline and fine");
  // run_js: its sandbox frame comes from the service worker's cache.
  await send(page, "js: console.log('offline'); 6 * 7");
  await decide(page, "run_js", "allow");
  await idle(page);
  const js = page.locator("#transcript > .card", { has: page.locator('.tool-name:text("run_js")') }).last();
  assert.equal(await js.locator(".output").innerText(), "offline\nresult: 42\n");
  await ctx.setOffline(false);
});

// run_js runs its code at an opaque origin (a frame that floe-serve
// sandboxes by its Content-Security-Policy, and a worker of that frame):
// the playground's origin holds every session's Trace (IndexedDB), the
// service worker's cache (a page put there is served without a policy on
// the next load without network) and the provider keys (local storage).
// The code, a worker it starts (which has no storage blocklist), and
// script run in the frame itself (as if the code escaped its worker)
// reach none of it, nor the page, nor the network.
pageTest("playground: run_js code runs at an opaque origin: its worker, a nested worker and the frame reach none of the origin's storage, cookies, page or network", async (page) => {
  await open(page);
  await page.evaluate(() => navigator.serviceWorker.ready);
  const origin = new URL(baseURL()).origin;
  // The origin's data: a Trace, the cache, the workspace, a key in local
  // storage, a cookie; at the origin, the probe finds the first three.
  await page.evaluate(() => {
    localStorage.setItem("probe-key", "SECRET");
    document.cookie = "probe=SECRET";
  });
  const probe = `async () => {
    const out = [];
    const t = async (k, f) => { try { out.push(k + "=" + (await f())); } catch (e) { out.push(k + "!" + e.name); } };
    await t("origin", () => self.origin);
    await t("idb", () => new Promise((res, rej) => {
      const r = indexedDB.open("floe-playground");
      r.onsuccess = () => res([...r.result.objectStoreNames].join(",") || "none");
      r.onerror = () => rej(r.error);
    }));
    await t("caches", async () => (await caches.keys()).join(",") || "none");
    await t("opfs", async () => {
      const names = [];
      for await (const k of (await navigator.storage.getDirectory()).keys()) names.push(k);
      return names.join(",") || "none";
    });
    await t("fetch", async () => (await fetch("${origin}/static/index.html")).status);
    await t("worker", () => (new Worker("${origin}/static/sw.js"), "started"));
    return out.join(" ");
  }`;
  assert.match(await page.evaluate(`(${probe})()`), /^origin=http\S+ idb=[\w,]+ caches=floe-playground-v\d+ opfs=\S+ fetch=200 worker=started$/, "the probe finds nothing at the origin");
  const code = `(async () => {
    const nested = await new Promise((res) => {
      const w = new Worker(URL.createObjectURL(new Blob(["(" + (${probe}) + ")().then(postMessage)"])));
      w.onmessage = (e) => res(e.data);
      w.onerror = (e) => res("failed: " + e.message);
    });
    return (await (${probe})()) + " | nested: " + nested;
  })()`;
  await send(page, "js: " + code.replace(/\n\s*/g, " "));
  await decide(page, "run_js", "allow");
  await idle(page);
  const card = page.locator("#transcript > .card", { has: page.locator('.tool-name:text("run_js")') }).last();
  const out = await card.locator(".output").innerText();
  const [own, nested] = out.replace(/^result: /, "").trim().split(" | nested: ");
  // The sandbox's worker: the blocklist on top of the opaque origin.
  assert.equal(own, "origin=null idb!ReferenceError caches!ReferenceError opfs!TypeError fetch!TypeError worker!SecurityError", out);
  // A worker of its own, without the blocklist: the opaque origin alone.
  assert.equal(nested, "origin=null idb!SecurityError caches!ReferenceError opfs!TypeError fetch!TypeError worker!SecurityError", out);
  assert.equal(await page.locator("iframe").count(), 0, "the sandbox frame outlived its call");

  // Script in the frame itself: the frame jseval loads, driven by hand.
  await page.evaluate(() => {
    const f = document.createElement("iframe");
    f.hidden = true;
    f.src = "eval-frame.html";
    document.body.append(f);
    return new Promise((res) => f.addEventListener("load", res));
  });
  assert.equal(await page.evaluate(() => document.querySelector("iframe").contentDocument), null, "the frame is of the page's origin");
  const frame = page.frames().find((f) => f.url().endsWith("/eval-frame.html"));
  const inFrame = await frame.evaluate(async ([probe]) => {
    const out = [(await (0, eval)(probe)())];
    const t = async (k, f) => { try { out.push(k + "=" + (await f())); } catch (e) { out.push(k + "!" + e.name); } };
    await t("localStorage", () => localStorage.getItem("probe-key"));
    await t("cookie", () => document.cookie);
    await t("parent", () => parent.document.title);
    await t("top", () => top.localStorage.getItem("probe-key"));
    await t("open", () => window.open("about:blank"));
    return out.join(" ");
  }, [probe]);
  assert.match(inFrame, /^origin=null idb!SecurityError caches!SecurityError opfs!SecurityError fetch!TypeError worker!SecurityError localStorage!SecurityError cookie!SecurityError parent!SecurityError top!SecurityError open=null$/, inFrame);
  assert.equal(await page.evaluate(() => localStorage.getItem("probe-key")), "SECRET");
}, { expected: [/Content Security Policy/, /Blocked opening/] });

// Each call has its own frame and worker: the time limit and Stop remove
// the frame, which ends the worker, however long its code would run.
pageTest("playground: run_js ends its sandbox on the time limit and on Stop: the frame removed, the worker closed", async (page) => {
  await open(page, "/static/?pace=0");
  const closed = [];
  page.on("worker", (w) => closed.push(new Promise((res) => w.on("close", res))));
  const card = () => page.locator("#transcript > .card", { has: page.locator('.tool-name:text("run_js")') }).last();
  const bound = (p) => Promise.race([p, new Promise((_, rej) => setTimeout(() => rej(new Error("the sandbox's worker was not closed")), WAIT))]);
  await send(page, "js: while (true) {}");
  await decide(page, "run_js", "allow");
  await idle(page);
  assert.match(await card().locator(".output").innerText(), /timed out after 3 s; the worker was terminated/);
  assert.equal(closed.length, 1);
  await bound(closed[0]);
  assert.equal(await page.locator("iframe").count(), 0, "the sandbox frame outlived its call");

  await send(page, "js: while (true) {}");
  const started = page.waitForEvent("worker");
  await decide(page, "run_js", "allow");
  await started;
  await page.click("#stop");
  await idle(page);
  await bound(closed[1]);
  assert.equal(await page.locator("iframe").count(), 0, "the sandbox frame outlived its call");
  assert.match(await card().innerText(), /aborted/);
});

// The page runs no code in a sandbox that loaded at its own origin (served
// without the policy that sandboxes it, as a static host serves it): that
// is where the Traces and the keys are. It loads the sandbox again in a
// frame with sandbox="allow-scripts", at an opaque origin.
pageTest("playground: run_js in a sandbox served without its policy runs in a frame the attribute sandboxes", async (page) => {
  await page.route("**/eval-frame.html", async (route) => {
    const res = await route.fetch();
    const headers = { ...res.headers() };
    delete headers["content-security-policy"];
    await route.fulfill({ response: res, headers });
  });
  await open(page, "/static/?pace=0&nosw");
  await send(page, "js: let idb; try { indexedDB; idb = 'reachable' } catch (e) { idb = e.name } self.origin + ' ' + idb");
  await decide(page, "run_js", "allow");
  await idle(page);
  const out = await page.locator("#transcript > .card", { has: page.locator('.tool-name:text("run_js")') }).last().locator(".output").innerText();
  assert.equal(out, "result: null ReferenceError\n");
  assert.equal(await page.locator("iframe").count(), 0);
});

// The code's 3 s limit counts from the sandbox's start: a frame that takes
// 4 s to load (a slow device; a loaded machine) ran no code before, "did
// not start within 3 s".
pageTest("playground: run_js whose sandbox takes 4 s to load runs the code: its limit counts from the sandbox's start", async (page) => {
  await page.route("**/eval-frame.html", async (route) => {
    const res = await route.fetch();
    await new Promise((resolve) => setTimeout(resolve, 4000));
    await route.fulfill({ response: res });
  });
  await open(page, "/static/?pace=0&nosw");
  await send(page, "js: 6 * 7");
  await decide(page, "run_js", "allow");
  await idle(page);
  const out = await page.locator("#transcript > .card", { has: page.locator('.tool-name:text("run_js")') }).last().locator(".output").innerText();
  assert.equal(out, "result: 42\n");
});

// run_js's code can post anything to the page itself, before the sandbox
// posts its answer: the page reads a bounded part of it (it looped over a
// console's claimed length and copied any string whole, freezing the tab)
// and names what is not an answer at all.
pageTest("playground: run_js reads what the code posts to the page within bounds: a console's claimed length, many lines, a huge result, no object", async (page) => {
  await open(page, "/static/?pace=0"); // the demo model answers with the output: at once
  const card = () => page.locator("#transcript > .card", { has: page.locator('.tool-name:text("run_js")') }).last().locator(".output");
  const run = async (code, ms = RUN) => {
    await send(page, "js: " + code);
    await decide(page, "run_js", "allow");
    await page.locator('body[data-state="idle"]').waitFor({ timeout: ms });
    return card().innerText();
  };
  assert.equal(await run(`postMessage({ console: { length: 2e9 }, result: "first" }); "second"`), "result: first\n");
  assert.equal(await run(`postMessage(5)`), "error: the code posted a number to the page, not a result\n");
  // The demo model quotes the output's last line up to 200 characters. It
  // quoted all of it once: one word of 262,144 r's, streamed in 21,846
  // pieces, which the browser laid out again at each piece (the page's
  // pace is 0 here), holding the page for 15 to 70 s.
  await run(`postMessage({ console: Array(5000).fill("x"), result: "r".repeat(300000) })`);
  assert.match(await page.locator("#transcript > .msg.text .body").last().innerText(), /\nrun_js answered: result: r{192}…$/);
  const last = page.locator("#transcript > .card", { has: page.locator('.tool-name:text("run_js")') }).last();
  await last.locator('button.more:has-text("show all (")').last().click();
  const many = (await card().innerText()).split("\n");
  assert.equal(many.filter((l) => l === "x").length, 1000);
  assert.equal(many[1000], "… 4000 more lines not shown");
  assert.match(many[1001], /^result: r{262144}… \(300000 characters in all\)$/);
  // cut by UTF-16 units, never after half a surrogate pair; the console's
  // bound counts characters, not their bytes (a line of 100,000 Japanese
  // characters, 300,000 bytes, left room for the next)
  await run(`postMessage({ console: ["日".repeat(100000), "second"], result: "a" + "😀".repeat(200000) })`);
  await last.locator('button.more:has-text("show all (")').last().click().catch(() => {});
  const wide = (await card().innerText()).split("\n");
  assert.deepEqual(wide.slice(1, 2), ["second"]);
  assert.equal(wide[2], "result: a" + "😀".repeat(131071) + "… (400001 characters in all)");
});

// Arabic and Hebrew read right to left: the prompt box, a message, each
// block of a reply (which may mix them with English) and a session's title
// take their direction from their own text; a code block stays left to
// right. "مرحبا!" drawn left to right had its "!" on the wrong side.
pageTest("playground: right-to-left text: the prompt box, messages, each Markdown block, a session's title", async (page, ctx, log, t) => {
  const reply = "مرحبا بالعالم!\n\nHello, **world**.\n\n- عنصر أول\n- second\n\n> שלום\n\n```\nx = 1 # واحد\n```";
  const server = await replayServer(t, (req, res) => writeResponse(res, { status: 200, headers: SSE_HEADERS, body: anthropicStream({ text: [reply] }) }), { cors: new URL(baseURL()).origin });
  await open(page);
  await configure(page, { provider: "anthropic", baseURL: server.url + "/v1", model: "claude-test", key: "sk-ant-x" });
  const dir = (loc) => loc.evaluate((e) => (e.matches(":dir(rtl)") ? "rtl" : "ltr"));
  await page.fill("#prompt", "Hi");
  assert.equal(await dir(page.locator("#prompt")), "ltr");
  await page.fill("#prompt", "שלום, עולם!");
  assert.equal(await dir(page.locator("#prompt")), "rtl");
  await page.press("#prompt", "Enter");
  await idle(page);
  assert.equal(await dir(page.locator("#transcript > .msg.prompt .body").last()), "rtl");
  const md = page.locator("#transcript > .msg.text .body").last();
  assert.deepEqual(
    await md.evaluate((b) => [...b.querySelectorAll(".chunk > *, pre")].map((e) => e.tagName.toLowerCase() + " " + (e.matches(":dir(rtl)") ? "rtl" : "ltr"))),
    ["p rtl", "p ltr", "ul rtl", "blockquote rtl", "div ltr", "pre ltr"],
  );
  await showSessions(page);
  assert.equal(await dir(page.locator("#sessions .session-open .title").first()), "rtl");
  await page.locator("#sessions [data-do=rename]").first().click();
  assert.equal(await dir(page.locator("#sessions .rename-input")), "rtl");
});

// Japanese and Arabic in the list and the composer: a title is cut at 80
// characters (a Rename at 200), not bytes (a Japanese title kept a third of
// an English one's); a queued steering chip isolates its text, so an
// Arabic one does not reorder the label around it.
pageTest("playground: titles cut by characters; a steering chip isolates right-to-left text", async (page) => {
  await open(page);
  const prompt = "echo: " + "日本語のテキスト".repeat(12);
  await send(page, prompt);
  await idle(page);
  await showSessions(page);
  const title = page.locator("#sessions li.session .title").first();
  assert.equal(await title.innerText(), prompt.slice(0, 80) + "…");
  await page.locator("#sessions > li.session").first().locator('button[data-do="rename"]').click();
  await page.fill("#sessions .rename-input", "名".repeat(250));
  await page.press("#sessions .rename-input", "Enter");
  await page.locator("#sessions li.session .title", { hasText: "名".repeat(200) + "…" }).waitFor();
  assert.equal(await title.innerText(), "名".repeat(200) + "…");

  await send(page, "How long is store.go?");
  await askCard(page, "list_files").waitFor({ timeout: RUN });
  await page.fill("#prompt", "اذكر الاختبارات!");
  await page.press("#prompt", "Enter");
  const chip = page.locator(".chip", { hasText: "queued: اذكر الاختبارات!" });
  await chip.waitFor();
  assert.deepEqual(
    await chip.evaluate((c) => [c.matches(":dir(ltr)"), c.firstChild.textContent, c.querySelector("bdi")?.textContent, c.querySelector("bdi")?.matches(":dir(rtl)")]),
    [true, "queued: ", "اذكر الاختبارات!", true],
  );
  await decide(page, "list_files", "allow");
  await decide(page, "count_lines", "allow");
  await idle(page);
});
