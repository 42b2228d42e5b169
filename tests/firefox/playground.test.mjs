// The playground (static/index.html + playground.wasm) in headless Firefox
// ESR, driven as a person would: the scripted model's task with its two
// approvals, cut off by a reload while an approval waits (the session is
// listed, reopened, and the task carries over), run_js in its sandboxed
// frame's Worker, Stop during an approval; in a private window, the note
// that the workspace is kept in memory. No console error or page error.
import { test } from "node:test";
import assert from "node:assert/strict";
import { baseURL, explain, launch, waitTrue } from "./harness.mjs";

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
