// The playground (static/index.html + playground.wasm) in headless Firefox
// ESR, driven as a person would: the scripted model's task with its two
// approvals, cut off by a reload while an approval waits (the session is
// listed, reopened, and the task carries over), run_js in its sandboxed
// frame's Worker, Stop during an approval; in a private window, the note
// that the workspace is kept in memory; Settings' model-server forms
// (OpenAI-compatible, OpenAI with a Base URL, Anthropic) against loopback
// servers. No console error or page error.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { baseURL, explain, launch, waitTrue } from "./harness.mjs";
import { closedPort, modelServer } from "../browser/model-servers.mjs";
import { anthropicStream, corpusDir, replayServer, SSE_HEADERS, writeResponse } from "../node/replay.mjs";

const RUN = 60_000; // bound of one playground run
const PAGE = "/static/?pace=0"; // the scripted model streams at once

const idle = (page) => waitTrue(page, () => document.body?.dataset.state === "idle", null, RUN, "the playground was not idle");
const texts = (page, sel) => page.$$eval(sel, (l) => l.map((e) => e.innerText));
const lastText = async (page, sel) => (await texts(page, sel)).at(-1);
const lastReply = (page) => lastText(page, '#transcript > .msg.text[data-kind="text"] .body');

/** Sends a prompt; returns once the run has started (its prompt is shown). */
async function send(page, prompt) {
  await idle(page);
  const n = (await texts(page, "#transcript > .msg.prompt")).length;
  await page.type("#prompt", prompt);
  await page.keyboard.press("Enter");
  await waitTrue(page, (n) => document.querySelectorAll("#transcript > .msg.prompt").length > n, n, RUN, `prompt ${n + 1} was not shown`);
}

/**
 * Presses the decision button of the last approval card of tool, once it
 * is in view with no tool of the run running (its output, drawn above the
 * card, moves it), and returns once the card no longer asks. A button
 * scrolled into view by the click itself could move as the page followed
 * its end, and the click was lost (seen in WebKit's tests).
 */
async function decide(page, tool, decision) {
  // The button found is marked (data-pressed), to wait for its card to stop asking.
  const find = new Function(
    `for (const e of document.querySelectorAll("[data-pressed]")) delete e.dataset.pressed;
    if ([...document.querySelectorAll("#transcript > .card .badge.status")].some((e) => ["running", "started"].includes(e.textContent))) return null;
    const button = [...document.querySelectorAll("#transcript > .card.ask")]
      .filter((c) => c.querySelector(".tool-name")?.textContent === ${JSON.stringify(tool)})
      .pop()?.querySelector('button[data-decision="${decision}"]');
    if (!button) return null;
    const view = document.getElementById("transcript").getBoundingClientRect();
    const r = button.getBoundingClientRect();
    if (r.top < view.top || r.bottom > view.bottom) {
      button.scrollIntoView({ block: "center" });
      return null;
    }
    button.dataset.pressed = "";
    return button`,
  );
  // A locator waits until the button is visible and still, then clicks.
  await page.locator(find).setTimeout(RUN).click();
  await waitTrue(page, () => document.querySelector("#transcript > .card.ask [data-pressed]") === null, null, RUN, `the ${decision} of ${tool} was not taken`);
}

/**
 * Waits until tool's approval card asks. The card just decided keeps its
 * class "ask" until the page draws again, so a wait for any asking card
 * right after a decision could end on that one.
 */
const asking = (page, tool) =>
  waitTrue(
    page,
    (tool) => [...document.querySelectorAll("#transcript > .card.ask .tool-name")].some((e) => e.textContent === tool),
    tool,
    RUN,
    `no approval card of ${tool}`,
  );

/** Waits until the session's row in IndexedDB names its first prompt (its first records are committed). */
async function storedPrompt(page, id) {
  await waitTrue(
    page,
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
    RUN,
    `session ${id} has no stored first prompt`,
  );
}

test("playground: approvals; a reload mid-task reopens the session and carries the task over; run_js; Stop", { timeout: 180_000 }, async (t) => {
  const b = await launch(t);
  const page = await b.newPage();
  await page.setViewport({ width: 1280, height: 860 });
  try {
    await page.goto(baseURL() + PAGE);
    await idle(page);
    const id = await page.$eval("#session-id", (e) => e.textContent);
    assert.match(id, /^session-\d{4}(-\d\d){5}-[0-9a-f]{8}$/);
    assert.match(await page.$eval("#model-label", (e) => e.textContent), /scripted demo/);

    // A reload while an approval waits: the session is reopened from
    // IndexedDB and the cut-off task carries over to the next prompt.
    await send(page, "How long is store.go?");
    await decide(page, "list_files", "allow");
    await asking(page, "count_lines");
    await storedPrompt(page, id); // records reach IndexedDB in batches, off the run's path
    await page.reload();
    await idle(page);
    assert.equal(await page.$eval("#session-id", (e) => e.textContent), id, "the page did not reopen the session");
    const rows = await texts(page, "#sessions li");
    assert.equal(rows.length, 1, `sessions listed: ${JSON.stringify(rows)}`);
    assert.match(rows[0], /How long is store\.go\?/);
    assert.match((await texts(page, "#transcript > .notice")).join("\n"), /Resumed from storage: \d+ records\. The last task was cut off/);
    await send(page, "Continue, please.");
    await decide(page, "list_files", "allow");
    await decide(page, "count_lines", "allow");
    await idle(page);
    assert.match(await lastReply(page), /add up to \d+ lines/);

    // run_js: the sandboxed frame (an opaque origin) and its Worker.
    await send(page, "js: console.log('hi', 1 + 1); [1, 2, 3].map((x) => x * 2)");
    await decide(page, "run_js", "allow");
    await idle(page);
    assert.equal(await lastText(page, "#transcript > .card .output"), "hi 2\nresult: [2,4,6]\n");

    // Stop while an approval waits.
    await send(page, "What is in this project?");
    await decide(page, "list_files", "allow");
    await asking(page, "count_lines");
    await page.click("#stop");
    await idle(page);
    assert.match(await lastText(page, "#transcript > .notice"), /Run aborted: aborted by user/);
    assert.equal((await texts(page, ".card.ask")).length, 0, "approval buttons left after Stop");

    const bad = b.log.filter((l) => l.includes("page error") || l.includes("console.error"));
    assert.deepEqual(bad, [], "errors in the page" + explain(b.log));
  } catch (e) {
    e.message += explain(b.log);
    throw e;
  }
});

test("playground in a private window: the page says the workspace is kept in memory, its files lasting until a reload", { timeout: 90_000 }, async (t) => {
  // Firefox refuses a private window's page its origin private file
  // system: the workspace is in memory, and the page says so.
  const b = await launch(t, { prefs: { "browser.privatebrowsing.autostart": true } });
  const page = await b.newPage();
  await page.setViewport({ width: 1280, height: 860 });
  try {
    await page.goto(baseURL() + PAGE);
    await idle(page);
    const shown = (sel) => page.$eval(sel, (e) => !e.hidden && e.getClientRects().length > 0);
    assert.ok(await shown("#intro-memory"), "no note in the intro");
    assert.match(await page.$eval("#intro-memory", (e) => e.innerText), /the workspace is kept in memory, and its files last until the page is closed or reloaded\./);
    assert.equal(await page.$eval("#tab-files", (e) => e.innerText), "Files · in memory");
    await page.click("#tab-files");
    assert.ok(await shown("#files-memory"), "no note in the Files panel");
    const bad = b.log.filter((l) => l.includes("page error") || l.includes("console.error"));
    assert.deepEqual(bad, [], "errors in the page" + explain(b.log));
  } catch (e) {
    e.message += explain(b.log);
    throw e;
  }
});

/** Clicks the button of sel whose text is text, once there is one. */
async function press(page, sel, text) {
  await waitTrue(
    page,
    ([sel, text]) => {
      for (const e of document.querySelectorAll("[data-pressed]")) delete e.dataset.pressed;
      const button = [...document.querySelectorAll(sel)].find((b) => b.textContent === text && !b.disabled);
      if (button) button.dataset.pressed = "";
      return button !== undefined;
    },
    [sel, text],
    RUN,
    `no ${text} button (${sel})`,
  );
  await page.click("[data-pressed]");
}

/**
 * Fills Settings' model-server form as a person would (the provider's
 * select, the text fields typed over what they held), saves, and starts a
 * new session with it.
 */
async function configure(page, { provider, baseURL = "", model = "", key = "" }) {
  await page.click("#open-settings");
  await waitTrue(page, () => document.getElementById("settings").open, null, RUN, "Settings did not open");
  await page.select("#set-provider", provider);
  for (const [sel, value] of [["#set-base-url", baseURL], ["#set-model", model], ["#set-key", key]]) {
    await page.locator(sel).fill(value);
  }
  await page.click("#settings-save");
  await waitTrue(page, () => !document.getElementById("settings").open, null, RUN, "Settings did not close on Save");
  await idle(page);
  await page.click("#reset");
  await idle(page);
}

const lastRequest = (page) => lastText(page, ".request");

/** Runs body(b, page) in a fresh Firefox; no console error or page error but expected. */
function formTest(name, body, expected = []) {
  test(name, { timeout: 180_000 }, async (t) => {
    const b = await launch(t);
    const page = await b.newPage();
    await page.setViewport({ width: 1280, height: 860 });
    try {
      await page.goto(baseURL() + PAGE);
      await idle(page);
      await body(t, page, b);
      const bad = b.log.filter((l) => (l.includes("page error") || l.includes("console.error")) && !expected.some((re) => re.test(l)));
      assert.deepEqual(bad, [], "errors in the page" + explain(b.log));
    } catch (e) {
      e.message += explain(b.log);
      throw e;
    }
  });
}

formTest("playground: a real model through an OpenAI-compatible server; settings kept locally; auth, redirect and unreachable-server messages", async (t, page) => {
  const server = await modelServer(t);
  const url = `http://127.0.0.1:${server.address().port}/v1`;
  await configure(page, { provider: "openai-compatible", baseURL: url, model: "test-model", key: "sk-local" });
  assert.match(await page.$eval("#model-label", (e) => e.innerText), /OpenAI-compatible server · test-model/);
  await send(page, "Say hello");
  await idle(page);
  assert.equal(await lastReply(page), "Hello from the server");
  assert.equal(await lastText(page, "#transcript > .msg.text strong"), "the server");
  assert.match(await lastRequest(page), /completed · 16 tokens/);
  assert.equal(server.requests.length, 1);
  assert.equal(server.requests[0].auth, "Bearer sk-local");
  assert.equal(server.requests[0].body.model, "test-model");
  assert.ok(server.requests[0].body.tools.some((d) => d.function.name === "write_file"), "the workspace tools are offered");
  assert.match(server.requests[0].body.messages[0].content, /^You are an agent working in the Floe playground/, "a real model gets the workspace prompt");
  const stored = JSON.parse(await page.evaluate(() => localStorage.getItem("floe-playground:settings")));
  assert.deepEqual([stored.provider, stored.baseURL, stored.model, stored.key], ["openai-compatible", url, "test-model", "sk-local"]);
  await page.reload();
  await idle(page);
  assert.match(await page.$eval("#model-label", (e) => e.innerText), /test-model/, "the settings did not survive a reload");

  // An empty answer, and a reply cut at the model's output limit.
  await configure(page, { provider: "openai-compatible", baseURL: url, model: "empty", key: "sk-local" });
  await send(page, "Say hello");
  await idle(page);
  assert.match(await lastRequest(page), /completed · the model answered nothing/);
  await configure(page, { provider: "openai-compatible", baseURL: url, model: "cut", key: "sk-local" });
  await send(page, "Say hello");
  await idle(page);
  assert.equal(await lastReply(page), "Half a sen");
  assert.match(await lastText(page, "#transcript > .notice"), /^The provider cut the reply short \(finish_reason "length"\)/);

  // A refused key: the request ends "auth", with what to do.
  await configure(page, { provider: "openai-compatible", baseURL: url, model: "test-model", key: "bad" });
  await send(page, "Say hello");
  await idle(page);
  assert.match(await lastRequest(page), /auth.*Incorrect API key.*check the API key in Settings/s);

  // A redirect is not followed: the key goes to the configured URL only.
  await configure(page, { provider: "openai-compatible", baseURL: url, model: "test-model", key: "redirect" });
  await send(page, "Say hello");
  await press(page, ".request .retry button", "Give up");
  await idle(page);
  assert.deepEqual(server.requests.map((r) => r.url).filter((u) => u !== "/v1/chat/completions"), [], "a redirect was followed");
  assert.ok(server.requests.every((r) => r.cookie === undefined), "a request carried cookies");

  // No server: the message says what to set; Give up ends the retries.
  await configure(page, { provider: "openai-compatible", baseURL: `http://127.0.0.1:${await closedPort()}/v1`, model: "m" });
  await send(page, "Say hello");
  await waitTrue(page, () => document.querySelector(".request:last-of-type .retry .countdown") !== null, null, RUN, "no retry countdown");
  assert.match(await lastRequest(page), /no response from http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions.*CORS/s);
  await press(page, ".request .retry button", "Give up");
  await idle(page);

  // OpenAI with a Base URL (a proxy): the requests go there, with the key.
  const before = server.requests.length;
  await configure(page, { provider: "openai", baseURL: url, model: "gpt-test", key: "sk-proxy" });
  assert.match(await page.$eval("#model-label", (e) => e.innerText), /OpenAI · gpt-test/);
  await send(page, "Say hello");
  await idle(page);
  assert.equal(await lastReply(page), "Hello from the server");
  assert.deepEqual(server.requests.slice(before).map((r) => [r.url, r.auth, r.body.model]), [["/v1/chat/completions", "Bearer sk-proxy", "gpt-test"]]);

  await configure(page, { provider: "scripted" });
  assert.match(await page.$eval("#model-label", (e) => e.innerText), /scripted demo/);
}, [
  // Firefox's own report of the request to the closed port (Chromium's
  // reads net::ERR_CONNECTION_REFUSED).
  /page error: Cross-Origin Request Blocked: .* at http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions\. \(Reason: CORS request did not succeed\)/,
]);

formTest("playground: Anthropic: thinking counted in characters, a redacted one said as such; a tool loop; the key in x-api-key only, never in IndexedDB", async (t, page) => {
  const recorded = JSON.parse(await readFile(join(corpusDir(), "an_hand_thinking_redacted.json"), "utf8")).response;
  const stream = (body) => ({ status: 200, headers: SSE_HEADERS, body });
  const queue = [
    recorded,
    stream(anthropicStream({ thinking: "先列出文件。", text: ["Looking."], calls: [{ id: "toolu_1", name: "list_files", args: ["{}"] }] })),
    stream(anthropicStream({ text: ["Six files."] })),
  ];
  const server = await replayServer(t, (req, res) => writeResponse(res, queue.shift()), { cors: new URL(baseURL()).origin });
  await configure(page, { provider: "anthropic", baseURL: server.url + "/v1", model: "claude-test", key: "sk-ant-secret" });
  await send(page, "What is 2+2?");
  await idle(page);
  // textContent: the summaries are drawn in capitals.
  const summaries = () => page.$$eval("#transcript > details.thinking summary", (l) => l.map((e) => e.textContent));
  assert.deepEqual(await summaries(), ["thinking · 30 characters", "thinking · not shown by the provider"]);
  assert.equal(await lastReply(page), "4");
  await send(page, "How many files?");
  await decide(page, "list_files", "allow");
  await idle(page);
  assert.equal(await lastReply(page), "Six files.");
  assert.equal((await summaries())[2], "thinking · 6 characters");
  assert.equal(server.requests.length, 3);
  for (const r of server.requests) {
    assert.equal(r.url, "/v1/messages");
    assert.equal(r.headers["x-api-key"], "sk-ant-secret");
    assert.equal(r.headers.authorization, undefined);
  }
  const sent = JSON.parse(server.requests[2].body).messages;
  assert.deepEqual(sent[1].content.map((b) => b.type), ["thinking", "redacted_thinking", "text"], "the redacted block goes back as it came");
  // Everything of the page's IndexedDB, as text.
  const stored = await page.evaluate(
    () =>
      new Promise((resolve, reject) => {
        const req = indexedDB.open("floe-playground");
        req.onerror = () => reject(req.error);
        req.onsuccess = () => {
          const db = req.result;
          const out = [];
          const tx = db.transaction(db.objectStoreNames, "readonly");
          for (const n of db.objectStoreNames) {
            tx.objectStore(n).openCursor().onsuccess = (e) => {
              const c = e.target.result;
              if (!c) return;
              const v = c.value;
              out.push(v instanceof ArrayBuffer || ArrayBuffer.isView(v) ? new TextDecoder().decode(v) : JSON.stringify(v));
              c.continue();
            };
          }
          tx.oncomplete = () => (db.close(), resolve(out.join("\n")));
        };
      }),
  );
  assert.ok(stored.includes("先列出文件"), "the session is not in IndexedDB");
  assert.ok(!stored.includes("sk-ant-secret"), "the key is stored with the session");
});

formTest("playground: Settings refuse a base URL that is not http(s); a URL the page's Content-Security-Policy blocks is named as such when saving and when sending", async (t, page) => {
  const error = () => page.$eval("#set-base-url-error", (e) => (e.hidden || e.getClientRects().length === 0 ? "" : e.innerText));
  const saved = async () => JSON.parse(await page.evaluate(() => localStorage.getItem("floe-playground:settings")));
  const open = async () => {
    await page.click("#open-settings");
    await waitTrue(page, () => document.getElementById("settings").open, null, RUN, "Settings did not open");
  };
  // ftp://: refused at once, the dialog stays open, nothing is saved.
  await open();
  await page.select("#set-provider", "openai-compatible");
  await page.locator("#set-base-url").fill("ftp://127.0.0.1:8852/v1");
  await page.locator("#set-model").fill("llama3.2");
  await page.click("#settings-save");
  await waitTrue(page, () => /is not http:\/\/ or https:\/\//.test(document.getElementById("set-base-url-error").innerText), null, RUN, "no error under the base URL");
  assert.equal(await page.$eval("#settings", (e) => e.open), true, "the dialog closed on a refused URL");
  assert.equal(await page.$eval("#set-base-url", (e) => e.getAttribute("aria-invalid")), "true");
  assert.equal(await saved(), null, "a refused URL was saved");
  await page.click("#settings-cancel");

  // A LAN address over plain http: the page's policy blocks it. The first
  // Save says so and keeps the dialog open; the second keeps the settings.
  await open();
  assert.equal(await error(), "", "a stale error");
  await page.select("#set-provider", "openai-compatible");
  await page.locator("#set-base-url").fill("http://192.168.1.50:11434/v1");
  await page.locator("#set-model").fill("llama3.2");
  await page.click("#settings-save");
  await waitTrue(page, () => document.getElementById("set-base-url-error").innerText.includes("Save again to keep these settings anyway."), null, RUN, "no warning of the page's policy");
  const said = await error();
  assert.match(said, /^Settings: this page's Content-Security-Policy \(connect-src\) does not let it fetch http:\/\/192\.168\.1\.50:11434\/v1: /);
  assert.match(said, /may reach this page's own origin \(http:\/\/127\.0\.0\.1:\d+\), any https:\/\/ address, http:\/\/127\.0\.0\.1 on any port and http:\/\/localhost on any port/);
  assert.equal(await saved(), null, "a blocked URL was saved at the first Save");
  await page.click("#settings-save");
  await waitTrue(page, () => !document.getElementById("settings").open, null, RUN, "Settings did not close on the second Save");
  assert.equal((await saved()).baseURL, "http://192.168.1.50:11434/v1");
  await idle(page);
  await page.click("#reset");
  // Sending says so too (not CORS): Firefox refuses the fetch before it goes out.
  await send(page, "Say hello");
  await waitTrue(page, () => document.querySelector(".request:last-of-type .retry .countdown") !== null, null, RUN, "no retry countdown");
  const text = await lastRequest(page);
  assert.match(text, /no request sent to http:\/\/192\.168\.1\.50:11434\/v1\/chat\/completions: this page's Content-Security-Policy \(connect-src\) does not let it fetch/);
  assert.doesNotMatch(text, /CORS|OLLAMA_ORIGINS/);
  await press(page, ".request .retry button", "Give up");
  await idle(page);
}, [
  // Firefox's own report of the fetch the policy refused at send.
  /page error: Content-Security-Policy: The page’s settings blocked the loading of a resource \(connect-src\) at http:\/\/192\.168\.1\.50:11434\/v1\/chat\/completions /,
]);
