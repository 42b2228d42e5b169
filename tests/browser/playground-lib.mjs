// What the playground test files share: opening the page, sending a
// prompt, deciding an approval, a page test in a fresh browser context,
// and the helpers of the tests.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { baseURL, CHROMIUM, explain, FLAGS, launch, page as firstPage, WAIT } from "./harness.mjs";
import { chatServer } from "./model-servers.mjs";

export const RUN = 60_000; // bound of one paced playground run
export const PAGE = "/static/?pace=0.2"; // the scripted model at five times its normal speed

export const shotsDir = async () => process.env.FLOE_SCREENSHOT_DIR || (await mkdtemp(join(tmpdir(), "floe-shots-")));

/** Fails on console errors and page errors. */
export function clean(log, expected = []) {
  const bad = log.filter(
    (l) => (l.startsWith("page error") || l.startsWith("console.error") || l.includes("Playground error")) && !expected.some((re) => re.test(l)),
  );
  assert.deepEqual(bad, [], "errors in the page" + explain(log));
}

/** Runs body(page, ctx, log) in a fresh browser context; screenshot on failure. */
export function pageTest(name, body, { viewport = { width: 1280, height: 860 }, timeout = 240_000, expected = [] } = {}) {
  test(name, { timeout }, async (t) => {
    const { ctx, log } = await launch(t);
    const page = await firstPage(ctx);
    await page.setViewportSize(viewport);
    try {
      await body(page, ctx, log, t);
      clean(log, expected);
    } catch (e) {
      const file = join(await shotsDir(), name.replace(/[^a-z0-9]+/gi, "-") + ".png");
      await page.screenshot({ path: file }).catch(() => {});
      e.message += `\n(screenshot of the failure: ${file})` + explain(log);
      throw e;
    }
  });
}

export async function open(page, path = PAGE) {
  const res = await page.goto(baseURL() + path);
  await idle(page);
  return res;
}

export const idle = (page) => page.locator('body[data-state="idle"]').waitFor({ timeout: RUN });

/** Opens the sessions drawer where the window is too narrow to show the list beside the transcript. */
export async function showSessions(page) {
  if (await page.locator("#toggle-sessions").isVisible()) await page.click("#toggle-sessions");
  await page.locator("#sessions-panel").waitFor();
}

/** Sends a prompt; returns once the run has started (its prompt is shown; it may have ended already). */
export async function send(page, prompt) {
  await idle(page);
  const n = await page.locator("#transcript > .msg.prompt").count();
  await page.fill("#prompt", prompt);
  await page.press("#prompt", "Enter");
  await page.locator("#transcript > .msg.prompt").nth(n).waitFor();
}

/** The approval card of tool (the last one waiting), at the top level. */
export const askCard = (page, tool, scope = "#transcript > ") =>
  page.locator(`${scope}.card.ask`, { has: page.locator(".tool-name", { hasText: tool }) }).last();

export async function decide(page, tool, decision, scope) {
  await askCard(page, tool, scope).locator(`button[data-decision="${decision}"]`).click({ timeout: RUN });
}

export const lastReply = (page) => page.locator('#transcript > .msg.text[data-kind="text"] .body').last().innerText();

/** The ids of the sessions stored in IndexedDB. */
export const storedIDs = (page) =>
  page.evaluate(
    () =>
      new Promise((resolve, reject) => {
        const req = indexedDB.open("floe-playground");
        req.onerror = () => reject(req.error);
        req.onsuccess = () => {
          const db = req.result;
          const keys = db.transaction("sessions").objectStore("sessions").getAllKeys();
          keys.onsuccess = () => (db.close(), resolve(keys.result));
          keys.onerror = () => (db.close(), reject(keys.error));
        };
      }),
  );

/** A browser on a profile that survives a restart (close, launch again). */
export async function profile(t) {
  const dir = await mkdtemp(join(tmpdir(), "floe-playground-"));
  const log = [];
  const b = { log, ctx: null, n: 0 };
  b.launch = async () => {
    b.ctx = await chromium.launchPersistentContext(dir, { executablePath: CHROMIUM, headless: true, args: FLAGS, timeout: WAIT, acceptDownloads: true });
    b.ctx.setDefaultTimeout(WAIT);
    const tag = `[browser ${++b.n}] `;
    b.ctx.on("console", (m) => log.push(tag + `console.${m.type()}: ${m.text()}`));
    b.ctx.on("weberror", (e) => log.push(tag + `page error: ${e.error()}`));
    b.page = b.ctx.pages()[0] ?? (await b.ctx.newPage());
    await b.page.setViewportSize({ width: 1280, height: 860 });
    return b.page;
  };
  t.after(async () => {
    if (b.ctx) await b.ctx.close().catch(() => {});
    await rm(dir, { recursive: true, force: true });
  });
  return b;
}

/** Waits until the session's row in IndexedDB names its first prompt (its first records are committed). */
export async function storedPrompt(page, id) {
  await page.waitForFunction(
    (id) =>
      new Promise((resolve) => {
        const req = indexedDB.open("floe-playground");
        req.onerror = () => resolve(false);
        req.onsuccess = () => {
          const db = req.result;
          try {
            const get = db.transaction("sessions").objectStore("sessions").get(id);
            get.onsuccess = () => (db.close(), resolve(Boolean(get.result && get.result[1])));
            get.onerror = () => (db.close(), resolve(false));
          } catch {
            db.close();
            resolve(false);
          }
        };
      }),
    id,
    { timeout: WAIT, polling: 100 },
  );
}

export const sessionRow = (page, title) => page.locator("#sessions li.session", { has: page.locator(".title", { hasText: title }) });

export const rowOf = (page, id) => page.locator(`#sessions li[data-session-id="${id}"]`);
export const shownID = (page) => page.locator("#session-id").innerText();
/** Waits until the page shows a session other than id; returns its id. */
export async function otherSession(page, id) {
  await page.waitForFunction((id) => document.getElementById("session-id").textContent !== id, id, { timeout: RUN });
  return shownID(page);
}

export const XSS = [
  `<script>window.__xss = 1</script>`,
  `<img src=x onerror="window.__xss = 2">`,
  `<svg onload="window.__xss = 3"><circle r="1"/></svg>`,
  `[click](javascript:window.__xss=4)`,
  `[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)`,
  `![img](javascript:window.__xss=5)`,
  `<a href="javascript:window.__xss=6">x</a>`,
  `[x](&#106;avascript:window.__xss=7)`,
  `<noscript><p title="</noscript><img src=x onerror=window.__xss=8>">`,
  `<math><mtext><table><mglyph><style><img src=x onerror=window.__xss=9>`,
  "```\"><img src=x onerror=window.__xss=10>\ncode\n```",
  `<iframe src="javascript:window.__xss=11"></iframe>`,
  `<details open ontoggle="window.__xss=12">`,
];

export async function checkInert(page, dialogs) {
  assert.equal(await page.evaluate(() => window.__xss), undefined, "an XSS payload ran");
  assert.deepEqual(dialogs, [], "a dialog opened");
  const found = await page.evaluate(() => {
    const bad = [...document.querySelectorAll("main script, main img, main svg, main iframe, main math, main noscript, main style")].map((e) => e.tagName);
    for (const e of document.querySelectorAll("main *")) {
      for (const a of e.attributes) if (/^on/i.test(a.name)) bad.push(`${e.tagName}[${a.name}]`);
    }
    for (const a of document.querySelectorAll("main a[href]")) {
      if (!/^(https?:|mailto:)/i.test(a.getAttribute("href"))) bad.push("a[href=" + a.getAttribute("href") + "]");
      if (a.rel !== "noopener noreferrer" || a.target !== "_blank") bad.push("a without rel/target");
    }
    return bad;
  });
  assert.deepEqual(found, [], "markup from untrusted text in the page");
}

export async function configure(page, { provider, baseURL = "", model = "", key = "", effort, gemini, images, opened, systemPrompt }) {
  await page.click("#open-settings");
  await page.selectOption("#set-provider", provider);
  await page.fill("#set-base-url", baseURL);
  await page.fill("#set-model", model);
  await page.fill("#set-key", key);
  if (effort !== undefined) await page.selectOption("#set-effort", effort);
  if (gemini !== undefined) await page.setChecked("#set-gemini", gemini);
  if (images !== undefined) await page.setChecked("#set-images", images);
  if (opened !== undefined) await page.setChecked("#set-opened", opened);
  if (systemPrompt !== undefined) await page.fill("#set-system-prompt", systemPrompt);
  await page.click("#settings-save");
  await page.locator("#settings").waitFor({ state: "hidden" });
  await page.click("#reset");
}

/** The text of a Chat Completions message's content: a string, or text parts. */
export const contentText = (c) => (typeof c === "string" ? c : c.map((p) => p.text ?? "").join(""));

/** A loopback OpenAI-compatible server that hands a task to a subagent: the parent's first request gets a subagent call, the subagent's request (its own system prompt) an answer, the parent's next one (the call's output) a summary. */
export function delegatingServer(t) {
  return chatServer(t, (server, req, body, res, sse) => {
    const b = JSON.parse(body);
    server.requests.push(b);
    const last = b.messages.at(-1);
    res.writeHead(200, { ...sse.cors, "content-type": "text/event-stream" });
    if (/^You are a subagent/.test(contentText(b.messages[0].content))) {
      res.write(sse({ choices: [{ index: 0, delta: { role: "assistant", content: "The notes hold three files." }, finish_reason: "stop" }] }));
    } else if (last.role === "tool") {
      res.write(sse({ choices: [{ index: 0, delta: { role: "assistant", content: "The subagent says: " + contentText(last.content) }, finish_reason: "stop" }] }));
    } else {
      const call = { index: 0, id: "call_sub", type: "function", function: { name: "subagent", arguments: JSON.stringify({ task: "Count the notes." }) } };
      res.write(sse({ choices: [{ index: 0, delta: { role: "assistant", tool_calls: [call] }, finish_reason: "tool_calls" }] }));
    }
    sse.end(res);
  });
}

// A model the page answers itself: the page's fetch of PAGE_MODEL is taken
// by a script in the page, which answers request n with answers[n] (a
// Chat Completions SSE text) whole; where answers[n] is null, with a
// stream left open, which window.__model.push(text) feeds and
// window.__model.end() closes; past the end of answers, with "Done.". No
// server: a chunk pushed is drawn before the page's next frame (the first
// of an item at once; later ones of a streaming reply may wait).
export const PAGE_MODEL = "http://127.0.0.1:9/v1";
export const chunk = (o) => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "test-model", ...o })}\n\n`;
export const say = (s) => chunk({ choices: [{ index: 0, delta: { role: "assistant", content: s }, finish_reason: null }] });
export const think = (s) => chunk({ choices: [{ index: 0, delta: { role: "assistant", reasoning_content: s }, finish_reason: null }] });
export const ended = (reason) =>
  chunk({ choices: [{ index: 0, delta: {}, finish_reason: reason }] }) + chunk({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 } }) + "data: [DONE]\n\n";
export const callTool = (name) =>
  chunk({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name, arguments: "{}" } }] }, finish_reason: null }] });
/** n paragraphs of a reply (each a line of the transcript). */
export const paragraphs = (what, n) => Array.from({ length: n }, (_, i) => `${what}, paragraph ${i + 1}.`).join("\n\n");

export async function pageModel(page, answers) {
  await page.evaluate(
    ([base, answers, done]) => {
      const real = window.fetch;
      const enc = new TextEncoder();
      const m = (window.__model = { requests: 0 });
      window.fetch = function (url, init) {
        if (!String(url).startsWith(base)) return real.call(this, url, init);
        const a = m.requests < answers.length ? answers[m.requests] : done;
        m.requests++;
        const body = new ReadableStream({
          start(c) {
            if (a === null) {
              m.push = (s) => c.enqueue(enc.encode(s));
              m.end = () => c.close();
              return;
            }
            c.enqueue(enc.encode(a));
            c.close();
          },
        });
        return Promise.resolve(new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } }));
      };
    },
    [PAGE_MODEL, answers, say("Done.") + ended("stop")],
  );
  await configure(page, { provider: "openai-compatible", baseURL: PAGE_MODEL, model: "test-model" });
}

/** How far the transcript's view is above its end, in pixels. */
export const gapOf = (page) =>
  page.evaluate(() => {
    const t = document.getElementById("transcript");
    return t.scrollHeight - t.scrollTop - t.clientHeight;
  });

/** The transcript's scrollTop. */
export const scrollTop = (page) => page.evaluate(() => document.getElementById("transcript").scrollTop);

/** Scrolls the transcript to y, as the user would; resolves with its scrollTop once the scroll event has been handled. */
export const userScroll = (page, y) =>
  page.evaluate((y) => {
    const t = document.getElementById("transcript");
    return new Promise((resolve) => {
      t.addEventListener("scroll", () => resolve(t.scrollTop), { once: true });
      t.scrollTop = y;
    });
  }, y);

/** Feeds the page's model text, and resolves once the transcript has grown by it and the page's next two frames have passed. */
export const pushed = async (page, text) => {
  const h = await page.evaluate(() => document.getElementById("transcript").scrollHeight);
  await page.evaluate((s) => window.__model.push(s), text);
  await page.waitForFunction((h) => document.getElementById("transcript").scrollHeight > h, h);
  await frames(page);
};

/** Waits until the transcript shows its end. */
export const atEnd = (page) =>
  page.waitForFunction(() => {
    const t = document.getElementById("transcript");
    return t.scrollHeight - t.scrollTop - t.clientHeight < 1;
  }, null, { timeout: RUN });

/** Resolves after the page's next two frames (the second after every callback the first ran, the page's scroll to its end included). */
export const frames = (page) => page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));

/**
 * In one task of the page: runs change ("deny": a click on the Deny of
 * the approval card at the end, which the page draws at once, as it does
 * a click's or a key's; "close": a click on the summary of the open
 * <details>; else the composer's Enter), reads the layout (the browser
 * pulls the view up to the end now, as it would at a frame or any read of
 * the layout), then pushes text, which the page draws before the next
 * frame; resolves at the frame after that one (whose scroll event the
 * page has handled, and whose scroll to the end it has made, if it
 * follows), with how much the transcript's items got shorter and its view
 * taller by the change, how much the transcript then grew, and how far the view
 * is above its end. Chromium's scroll anchoring would put the view back
 * where it was as the transcript grows again, and send no scroll event:
 * it is turned off in the transcript, as in a browser without it.
 */
export const raceAt = (page, change, text) =>
  page.evaluate(
    ([change, text]) => {
      const t = document.getElementById("transcript");
      t.style.overflowAnchor = "none";
      /** Where the last item of the transcript ends, from its top. */
      const itemsEnd = () => t.lastElementChild.getBoundingClientRect().bottom - t.getBoundingClientRect().top + t.scrollTop;
      const [view, end] = [t.clientHeight, itemsEnd()];
      const card = document.querySelector("#transcript > .card.ask");
      const cardHeight = card?.offsetHeight;
      if (change === "deny") card.querySelector('button[data-decision="deny"]').click();
      else if (change === "close") document.querySelector("#transcript details[open] > summary").click();
      else document.getElementById("prompt").dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }));
      const at = { requests: window.__model.requests, shrank: card ? cardHeight - card.offsetHeight : 0, shorter: end - itemsEnd(), taller: t.clientHeight - view };
      const before = t.scrollHeight;
      window.__model.push(text);
      const gap = () => ({ ...at, grew: t.scrollHeight - before, gap: t.scrollHeight - t.scrollTop - t.clientHeight });
      return new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve(gap()))));
    },
    [change, text],
  );

/** Ends the page model's open stream, and waits for the run's end. */
export async function endStream(page) {
  await page.evaluate((s) => (window.__model.push(s), window.__model.end()), ended("stop"));
  await idle(page);
}

/**
 * Checks what raceAt gave: the transcript grew before the frame and still
 * followed its end after it; then ends the stream and checks the view at
 * the end once the run is over.
 */
export async function followedRace(page, at) {
  assert.ok(at.grew > 300, `the transcript grew ${at.grew} px only before the frame`);
  assert.ok(at.gap < 1, `the transcript stopped following: ${at.gap} px above its end after the next frame`);
  await endStream(page);
  await atEnd(page);
}

// holdCompletions holds back the page's news that an IndexedDB
// transaction of the given mode completed, until window.__release();
// window.__busy counts the transactions whose news has not been handled.
export async function holdCompletions(page, mode) {
  await page.evaluate((mode) => {
    const held = [];
    window.__busy = 0;
    const desc = Object.getOwnPropertyDescriptor(IDBTransaction.prototype, "oncomplete");
    Object.defineProperty(IDBTransaction.prototype, "oncomplete", {
      configurable: true,
      get() {
        return desc.get.call(this);
      },
      set(h) {
        const tx = this;
        if (typeof h !== "function" || tx.mode !== mode) return desc.set.call(this, h);
        window.__busy++;
        const done = (ev) => {
          try {
            h.call(tx, ev);
          } finally {
            window.__busy--;
          }
        };
        desc.set.call(this, (ev) => (window.__hold ? held.push(() => done(ev)) : done(ev)));
      },
    });
    window.__hold = true;
    window.__release = () => {
      window.__hold = false;
      for (const f of held.splice(0)) f();
    };
  }, mode);
}
