// The playground page (static/index.html + playground.wasm), driven as a
// person would: type, press Enter, click Allow/Deny, Stop, steer; the
// assertions read what is on screen. Every test runs in a fresh browser context; a
// failing test saves a screenshot in FLOE_SCREENSHOT_DIR. No test may log
// a console error or a page error.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, writeFile, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { baseURL, CHROMIUM, explain, FLAGS, launch, page as firstPage, WAIT } from "./harness.mjs";
import { corpusDir, replayServer, writeResponse, anthropicStream, SSE_HEADERS } from "../node/replay.mjs";
import { chatServer, closedPort, modelServer } from "./model-servers.mjs";

const RUN = 60_000; // bound of one paced playground run
const PAGE = "/static/?pace=0.2"; // the scripted model at five times its normal speed

const shotsDir = async () => process.env.FLOE_SCREENSHOT_DIR || (await mkdtemp(join(tmpdir(), "floe-shots-")));

/** Fails on console errors and page errors. */
function clean(log, expected = []) {
  const bad = log.filter(
    (l) => (l.startsWith("page error") || l.startsWith("console.error") || l.includes("Playground error")) && !expected.some((re) => re.test(l)),
  );
  assert.deepEqual(bad, [], "errors in the page" + explain(log));
}

/** Runs body(page, ctx, log) in a fresh browser context; screenshot on failure. */
function pageTest(name, body, { viewport = { width: 1280, height: 860 }, timeout = 240_000, expected = [] } = {}) {
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

const idle = (page) => page.locator('body[data-state="idle"]').waitFor({ timeout: RUN });

/** Opens the sessions drawer where the window is too narrow to show the list beside the transcript. */
async function showSessions(page) {
  if (await page.locator("#toggle-sessions").isVisible()) await page.click("#toggle-sessions");
  await page.locator("#sessions-panel").waitFor();
}

/** Sends a prompt; returns once the run has started (its prompt is shown; it may have ended already). */
async function send(page, prompt) {
  await idle(page);
  const n = await page.locator("#transcript > .msg.prompt").count();
  await page.fill("#prompt", prompt);
  await page.press("#prompt", "Enter");
  await page.locator("#transcript > .msg.prompt").nth(n).waitFor();
}

/** The approval card of tool (the last one waiting), at the top level. */
const askCard = (page, tool, scope = "#transcript > ") =>
  page.locator(`${scope}.card.ask`, { has: page.locator(".tool-name", { hasText: tool }) }).last();

async function decide(page, tool, decision, scope) {
  await askCard(page, tool, scope).locator(`button[data-decision="${decision}"]`).click({ timeout: RUN });
}

const lastReply = (page) => page.locator('#transcript > .msg.text[data-kind="text"] .body').last().innerText();

pageTest("playground: approve, tool output, answer; steer; deny; always allow; Stop; Escape", async (page, ctx, log) => {
  await open(page);
  assert.match(await page.locator("#session-id").innerText(), /^session-\d{4}(-\d\d){5}-[0-9a-f]{8}$/);
  assert.match(await page.locator("#model-label").innerText(), /scripted demo/);

  // Prompt → approve → tool output → answer; steering from the main composer.
  await send(page, "How long is store.go?");
  await decide(page, "list_files", "allow");
  await askCard(page, "count_lines").waitFor({ timeout: RUN });
  assert.equal(await page.locator("#send").innerText(), "Steer");
  await page.fill("#prompt", "mention the tests");
  await page.press("#prompt", "Enter");
  await page.locator('.chip:text("queued: mention the tests")').waitFor();
  await decide(page, "count_lines", "allow");
  await idle(page);
  const reply = await lastReply(page);
  assert.match(reply, /add up to \d+ lines/, "final reply" + explain(log));
  assert.match(reply, /You added: “mention the tests”/);
  assert.match(await page.locator('#transcript > .card[data-call-id="call_1_1"] .output').innerText(), /files/);
  assert.equal(await page.locator('#transcript > .card .badge.status[data-status="completed"]').count(), 2);
  assert.match(await page.locator("#transcript > .card .timer").first().innerText(), /^\d+\.\d s$/);
  await page.locator('.msg.user .label:text("steering · delivered to the model")').waitFor();
  // Markdown: inline code is a <code> element; thinking is collapsed.
  assert.ok((await page.locator("#transcript > .msg.text .body code").count()) > 0, "no inline code rendered");
  assert.equal(await page.locator("#transcript details.thinking[open]").count(), 0, "thinking is open by default");
  assert.ok((await page.locator("#transcript details.thinking").count()) > 0);
  assert.match(await page.locator("#tokens").innerText(), /session: \d+ tokens/);
  assert.match(await page.locator(".request").first().innerText(), /\d+ tokens/);
  assert.match(await page.locator("#live").innerText(), /add up to/, "the completed answer is announced");

  // Deny reaches the model.
  await send(page, "Count the lines of go.mod");
  await decide(page, "list_files", "deny");
  await decide(page, "count_lines", "allow");
  await idle(page);
  assert.match(await lastReply(page), /You denied `?list_files/);

  // Always allow: the next list_files call is not asked.
  await send(page, "What is in this project?");
  await decide(page, "list_files", "always");
  await decide(page, "count_lines", "allow");
  await idle(page);
  await send(page, "And go.mod?");
  await decide(page, "count_lines", "allow");
  await idle(page);
  const lastList = page.locator('#transcript > .card', { has: page.locator('.tool-name:text("list_files")') }).last();
  assert.equal(await lastList.locator(".badge.decision").innerText(), "allowed");

  // Stop during an approval: the card shows the cancelled decision.
  await send(page, "What is in this project?");
  await askCard(page, "count_lines").waitFor({ timeout: RUN });
  await page.click("#stop");
  await idle(page);
  await page.locator('.notice:text("Run aborted: aborted by user")').last().waitFor();
  assert.equal(await page.locator(".card.ask").count(), 0, "approval buttons left after Stop");
  await page.locator('.badge.decision:text("approval cancelled by Stop")').first().waitFor();

  // Stop during streaming, with Escape; focus stays where the user is.
  await send(page, "stream 4000");
  await page.locator("#transcript > .msg.text.streaming").waitFor();
  await page.focus("#prompt");
  await page.keyboard.type("draft");
  await page.keyboard.press("Escape");
  await idle(page);
  assert.equal(await page.evaluate(() => document.activeElement.id), "prompt");
  assert.equal(await page.inputValue("#prompt"), "draft", "the draft was lost");
  await page.locator('.notice:text("Run aborted: aborted by user")').last().waitFor();
  assert.match(await page.locator("#transcript > .msg.text").last().locator(".label").innerText(), /aborted/i);
});

pageTest("playground: retry countdown and Retry now; Compact; workspace files; run_js; subagent", async (page, ctx, log) => {
  // A backoff of ten minutes: the retry waits for the click, however slow
  // the machine (at the default 2 s, a loaded one retried before it).
  await open(page, PAGE + "&backoff=600000");
  // A scripted failure: the countdown runs, Retry now ends the wait.
  await send(page, "fail: echo: recovered");
  const retry = page.locator(".request .retry");
  await retry.locator(".countdown").waitFor({ timeout: RUN });
  assert.match(await retry.locator(".countdown").innerText(), /retrying in \d+\.\d s/);
  // The countdown ticks without replacing the buttons: a button made anew
  // at a tick between the press and the release of a click lost it.
  const button = await retry.locator('button:text("Retry now")').elementHandle();
  const shown = await retry.locator(".countdown").innerText();
  await page.waitForFunction((t) => document.querySelector(".request .retry .countdown")?.textContent !== t, shown);
  assert.ok(await button.evaluate((b) => b.isConnected), "a tick of the countdown replaced the Retry now button");
  await retry.locator('button:text("Retry now")').click();
  await idle(page);
  assert.equal(await lastReply(page), "recovered");
  assert.equal(await page.locator('.request[data-status="failed"]').count(), 1);

  // Compaction: the button, then one collapsed row; the session's token
  // count goes on from where it was.
  const sessionOutput = async () => Number((await page.locator("#tokens").innerText()).match(/output (\d+)/)[1]);
  const beforeCompact = await sessionOutput();
  const requestsBefore = await page.locator("#transcript > .request").count();
  await page.locator("#compact:not([disabled])").waitFor();
  await page.click("#compact");
  await idle(page);
  const row = page.locator("#transcript > details.compact");
  assert.equal(await row.count(), 1);
  assert.match(await row.locator("summary").innerText(), /Compaction · completed/);
  assert.equal(await page.locator("#transcript > details.compact[open]").count(), 0);

  // Workspace: write, then read it back; the file panel lists it.
  await send(page, "write notes/todo.md: # Todo\n\n- ship it");
  await decide(page, "write_file", "allow");
  await idle(page);
  const since = (await page.locator("#transcript > .request").allInnerTexts()).slice(requestsBefore);
  const sinceOutput = since.reduce((n, t) => n + Number(t.match(/output (\d+)/)[1]), 0);
  assert.ok(since.length > 0 && (await sessionOutput()) >= beforeCompact + sinceOutput, `the session's tokens restarted after the compaction: ${await page.locator("#tokens").innerText()}, ${beforeCompact} before it, requests since: ${since}`);
  await page.click("#tab-files");
  await page.locator('#files [data-path="notes/todo.md"]').waitFor();
  await send(page, "read notes/todo.md");
  await decide(page, "read_file", "allow");
  await idle(page);
  assert.match(await page.locator('#transcript > .card', { has: page.locator('.tool-name:text("read_file")') }).locator(".output").innerText(), /# Todo\n\n- ship it/);
  // The answer quotes the file in a code block with a Copy button.
  const block = page.locator("#transcript > .msg.text .codeblock").last();
  assert.match(await block.locator("pre").innerText(), /# Todo/);
  await block.locator("button.copy").click();
  await block.locator('button.copy:text("Copied")').waitFor();
  await page.click('#files [data-path="notes/todo.md"]');
  await page.locator('#file-view:text("ship it")').waitFor();
  // A directory read as a file, or a file as a directory, is named as such
  // (the browser's words named neither the path nor its kind).
  await send(page, "read notes");
  await decide(page, "read_file", "allow");
  await idle(page);
  assert.match(await lastReply(page), /failed: \[tool error\] not a file: "notes" is a directory/);
  await send(page, "read notes/todo.md/x");
  await decide(page, "read_file", "allow");
  await idle(page);
  assert.match(await lastReply(page), /failed: \[tool error\] no such file: "notes\/todo.md\/x" \("todo.md" is a file, not a directory\)/);
  // An exact-match edit.
  await send(page, "edit notes/todo.md: ship it => ship it today");
  await decide(page, "edit_file", "allow");
  await idle(page);
  await page.locator('#file-view:text("ship it today")').waitFor();

  // Long arguments are cut, with "show all".
  await send(page, "write big.txt: " + "0123456789".repeat(300));
  const big = askCard(page, "write_file");
  await big.waitFor({ timeout: RUN });
  assert.ok((await big.locator(".args").innerText()).length < 1400, "long arguments are not cut");
  await big.locator('button.more:has-text("show all (")').click();
  assert.ok((await big.locator(".args").innerText()).length > 3000, "show all does not show all");
  await big.locator('button.more:text("show less")').waitFor();
  await decide(page, "write_file", "allow");
  await idle(page);

  // run_js in the Worker: a result, then a timeout.
  await send(page, "js: console.log('hi', 1 + 1); [1, 2, 3].map((x) => x * 2)");
  await decide(page, "run_js", "allow");
  await idle(page);
  const jsCard = page.locator('#transcript > .card', { has: page.locator('.tool-name:text("run_js")') });
  assert.equal(await jsCard.last().locator(".output").innerText(), "hi 2\nresult: [2,4,6]\n");
  await send(page, "js: while (true) {}");
  await decide(page, "run_js", "allow");
  await idle(page);
  assert.match(await jsCard.last().locator(".output").innerText(), /timed out after 3 s; the worker was terminated/);
  assert.equal(await page.locator("iframe").count(), 0, "the sandbox frame outlived its call");
  // Code that throws: the card says failed and keeps the error.
  await send(page, "js: console.log('before'); throw new Error('boom')");
  await decide(page, "run_js", "allow");
  await idle(page);
  assert.match(await jsCard.last().locator(".output").innerText(), /^before\nerror: Error: boom/);
  assert.equal(await jsCard.last().locator(":scope > .head .badge.status").innerText(), "failed");

  // A subagent: its cards are nested in the parent's card, its call ids
  // its own (the child's first call has the parent's id, call_N_1).
  await send(page, "subagent: look around");
  await decide(page, "subagent", "allow");
  const nested = '#transcript > .card[data-call-id] .subagent > ';
  await decide(page, "list_files", "allow", nested);
  await decide(page, "count_lines", "allow", nested);
  await idle(page);
  const parent = page.locator("#transcript > .card", { has: page.locator(':scope > .head .tool-name:text("subagent")') }).last();
  assert.equal(await parent.locator(".subagent > .card").count(), 2);
  assert.match(await parent.locator(":scope > .output").innerText(), /add up to \d+ lines/);
  assert.match(await parent.locator(":scope > .head .badge.status").innerText(), /completed/);
});

/** The ids of the sessions stored in IndexedDB. */
const storedIDs = (page) =>
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

pageTest("playground: a subagent's nested cards come back after a reload; its child session is stored, not listed, and deleted with its parent", async (page, ctx, log, t) => {
  await open(page);
  const id = await page.locator("#session-id").innerText();
  // The Trace tab reads the stored records again once the run's records are written.
  await page.click("#tab-trace");
  await send(page, "subagent: look around");
  await decide(page, "subagent", "allow");
  const nested = '#transcript > .card[data-call-id] .subagent > ';
  await decide(page, "list_files", "allow", nested);
  await decide(page, "count_lines", "allow", nested);
  await idle(page);
  await page.locator("#trace li", { has: page.locator('.type:text-is("subagent")') }).waitFor();
  await page.locator("#trace li:last-child .type:text-is('request_end')").waitFor();
  const parentCard = () => page.locator("#transcript > .card", { has: page.locator(':scope > .head .tool-name:text-is("subagent")') });
  const before = await parentCard().locator(".subagent > .card .tool-name").allInnerTexts();
  assert.deepEqual(before, ["list_files", "count_lines"]);

  await page.reload();
  await idle(page);
  assert.equal(await page.locator("#session-id").innerText(), id);
  await page.locator("#transcript > .notice", { hasText: "Resumed from storage" }).waitFor();
  assert.equal(await parentCard().count(), 1);
  assert.deepEqual(await parentCard().locator(".subagent > .card .tool-name").allInnerTexts(), before, "the nested cards did not come back");
  assert.deepEqual(await parentCard().locator(".subagent > .card > .head .badge.status").allInnerTexts(), ["completed", "completed"]);
  assert.equal(await page.locator("#transcript > .card:not([data-call-id])").count(), 0, "a subagent drawn apart from its call");
  assert.equal(await page.locator("#transcript > .notice", { hasText: /^subagent$/ }).count(), 0, "a lone subagent notice");

  // The child is stored under its own id, listed with its parent only.
  const ids = await storedIDs(page);
  assert.equal(ids.length, 2, `stored sessions ${ids}`);
  const child = ids.find((s) => s !== id);
  await rowOf(page, id).waitFor();
  assert.equal(await page.locator("#sessions li.session").count(), 1);
  assert.equal(await rowOf(page, child).count(), 0, "the child session is listed");
  // Export gives the parent's file and the child's.
  const downloads = [];
  const both = new Promise((resolve) =>
    page.on("download", (d) => {
      downloads.push(d);
      if (downloads.length === 2) resolve();
    }),
  );
  await rowOf(page, id).locator('button:text("Export")').click();
  await both;
  const dir = await mkdtemp(join(tmpdir(), "floe-export-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const files = [];
  for (const d of downloads) {
    files.push(join(dir, d.suggestedFilename()));
    await d.saveAs(files.at(-1));
  }
  assert.deepEqual(downloads.map((d) => d.suggestedFilename()).sort(), [`${id}_001.jsonl`, `${child}_001.jsonl`].sort());
  await page.locator("#note", { hasText: `Exported ${id} (2 file(s)).` }).waitFor();
  // Deleting the parent deletes the child.
  await rowOf(page, id).locator('button:text("Delete")').click();
  await rowOf(page, id).locator('button:text("Confirm delete")').click();
  await page.locator("#note", { hasText: `Deleted ${id}.` }).waitFor();
  const left = await storedIDs(page);
  assert.ok(!left.includes(id) && !left.includes(child), `left after the delete: ${left}`);

  // Imported, both files bring the session back with its subagent: listed
  // alone, its nested cards shown as before.
  await page.setInputFiles("#import", files);
  await page.locator("#note", { hasText: `Imported ${id}.` }).waitFor();
  const back = await storedIDs(page);
  assert.ok(back.includes(id) && back.includes(child), `stored after the import: ${back}`);
  await rowOf(page, id).waitFor();
  assert.equal(await rowOf(page, child).count(), 0, "the imported child session is listed");
  await rowOf(page, id).locator(".session-open").click();
  await page.locator("#transcript > .notice", { hasText: "Resumed from storage" }).waitFor();
  assert.equal(await page.locator("#session-id").innerText(), id);
  assert.deepEqual(await parentCard().locator(".subagent > .card .tool-name").allInnerTexts(), before, "the imported session lost its nested cards");
  // Importing them again is refused, naming the session already stored.
  await page.setInputFiles("#import", files);
  await page.locator("#note", { hasText: "Import refused" }).waitFor();
  assert.match(await page.locator("#note").innerText(), /session already exists; nothing was imported/);

  // Dropped on the page, files a browser renamed when saving them again
  // ("… (1).jsonl", Chrome's copy names) import as exported; the browser
  // does not open a file dropped in place of the page.
  await rowOf(page, id).locator('button:text("Delete")').click();
  await rowOf(page, id).locator('button:text("Confirm delete")').click();
  await page.locator("#note", { hasText: `Deleted ${id}.` }).waitFor();
  const drop = (files, target = "transcript") =>
    page.evaluate(
      ([files, target]) => {
        const dt = new DataTransfer();
        for (const f of files) dt.items.add(new File([f.text], f.name, { type: f.type }));
        const to = document.getElementById(target);
        const over = new DragEvent("dragover", { dataTransfer: dt, bubbles: true, cancelable: true });
        to.dispatchEvent(over);
        const ev = new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true });
        to.dispatchEvent(ev);
        return over.defaultPrevented && ev.defaultPrevented;
      },
      [files, target],
    );
  const copies = [];
  for (const f of files) copies.push({ name: basename(f).replace(/\.jsonl$/, " (1).jsonl"), type: "", text: await readFile(f, "utf8") });
  await page.evaluate(() => (document.querySelector("#note").textContent = ""));
  assert.equal(await drop(copies), true, "the drop was left to the browser");
  await page.locator("#note", { hasText: `Imported ${id}.` }).waitFor();
  const again = await storedIDs(page);
  assert.ok(again.includes(id) && again.includes(child), `stored after the drop: ${again}`);
  // Dropped twice, with the files of their first names: refused, stored already.
  assert.equal(await drop([...copies, ...copies.map((c) => ({ ...c, name: c.name.replace(" (1)", "") }))], "composer"), true);
  await page.locator("#note", { hasText: "Import refused" }).waitFor();
  assert.match(await page.locator("#note").innerText(), /session already exists; nothing was imported/);
  assert.equal(await page.locator("#attachments li").count(), 0, "a Trace file attached as an image");
  // Another file dropped outside the composer says where files go.
  assert.equal(await drop([{ name: "photo.png", type: "image/png", text: "x" }]), true);
  await page.locator("#note", { hasText: "Drop images on the composer to attach them, a session's .jsonl files anywhere to import it." }).waitFor();
});

/** A browser on a profile that survives a restart (close, launch again). */
async function profile(t) {
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
async function storedPrompt(page, id) {
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

const sessionRow = (page, title) => page.locator("#sessions li.session", { has: page.locator(".title", { hasText: title }) });

test("playground sessions: reload mid-task, resume, continue; browser restart; rename, delete, export → import; trace viewer", { timeout: 300_000 }, async (t) => {
  const b = await profile(t);
  let page = await b.launch();
  try {
    await open(page);
    const id = await page.locator("#session-id").innerText();
    await send(page, "How long is store.go?");
    await decide(page, "list_files", "allow");
    await askCard(page, "count_lines").waitFor({ timeout: RUN });
    await storedPrompt(page, id); // records reach IndexedDB in batches, off the run's path
    // Reload mid-task: listed, reopened, the cut-off task carries over.
    await page.reload();
    await idle(page);
    assert.equal(await page.locator("#session-id").innerText(), id, "the page did not reopen the session");
    await sessionRow(page, "How long is store.go?").waitFor();
    assert.equal(await sessionRow(page, "How long is store.go?").getAttribute("aria-current"), "true");
    await page.locator('#transcript > .msg.prompt:has-text("How long is store.go?")').waitFor();
    await page.locator("#transcript > .notice", { hasText: "Resumed from storage" }).waitFor();
    await send(page, "Continue, please.");
    await decide(page, "list_files", "allow");
    await decide(page, "count_lines", "allow");
    await idle(page);
    assert.match(await lastReply(page), /add up to \d+ lines/);

    // The trace viewer shows the stored records; a row opens its JSON.
    await page.click("#tab-trace");
    await page.locator('#trace li .type:text("session_meta")').first().waitFor();
    await page.locator("#trace li").first().click();
    assert.match(await page.locator("#trace li pre.json").first().innerText(), /"session_id":"session-/);
    // and Enter on a focused row does, as a click does
    await page.locator("#trace li button.row").nth(1).focus();
    await page.keyboard.press("Enter");
    await page.locator("#trace li").nth(1).locator("pre.json").waitFor();

    // Rename during a run: the list is redrawn when the run ends, and the
    // field keeps what was typed. The title survives a browser restart,
    // as does the session.
    await send(page, "How big is store.go?");
    await askCard(page, "list_files").waitFor({ timeout: RUN });
    await sessionRow(page, "How long is store.go?").locator('button:text("Rename")').click();
    await page.fill("#sessions .rename-input", "Store size");
    await page.evaluate(() => document.querySelector("#sessions .rename-input").closest("li").setAttribute("data-drawn-before", ""));
    await decide(page, "list_files", "allow");
    await decide(page, "count_lines", "allow");
    await idle(page);
    await page.waitForFunction(() => !document.querySelector("#sessions li[data-drawn-before]")); // the list was drawn again
    assert.equal(await page.inputValue("#sessions .rename-input"), "Store size", "the redrawn list lost the typed title");
    await page.press("#sessions .rename-input", "Enter");
    await sessionRow(page, "Store size").waitFor();
    await b.ctx.close();
    page = await b.launch();
    await open(page);
    assert.equal(await page.locator("#session-id").innerText(), id, "the restarted browser did not reopen the session");
    await sessionRow(page, "Store size").waitFor();
    await page.locator('#transcript > .msg.prompt:has-text("Continue, please.")').waitFor();
    assert.match(await lastReply(page), /add up to \d+ lines/);

    // New session, then open the stored one from the list.
    await page.click("#reset");
    await page.locator("#intro").waitFor();
    assert.notEqual(await page.locator("#session-id").innerText(), id);
    await sessionRow(page, "Store size").locator(".session-open").click();
    await page.locator('#transcript > .msg.prompt:has-text("How long is store.go?")').waitFor();
    assert.equal(await page.locator("#session-id").innerText(), id);

    // Export → delete → import gives the session back.
    const [download] = await Promise.all([page.waitForEvent("download"), sessionRow(page, "Store size").locator('button:text("Export")').click()]);
    assert.equal(download.suggestedFilename(), `${id}_001.jsonl`);
    const dir = await mkdtemp(join(tmpdir(), "floe-export-"));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, download.suggestedFilename());
    await download.saveAs(file);
    const text = await readFile(file, "utf8");
    assert.match(text.split("\n")[0], /"type":"session_meta"/);
    await page.click("#reset");
    await sessionRow(page, "Store size").locator('button:text("Delete")').click();
    await sessionRow(page, "Store size").locator('button:text("Confirm delete")').click();
    await page.locator(`#sessions li[data-session-id="${id}"]`).waitFor({ state: "detached" });
    await page.setInputFiles("#import", file);
    await page.locator("#note", { hasText: `Imported ${id}.` }).waitFor();
    await sessionRow(page, "How long is store.go?").locator(".session-open").click();
    await page.locator('#transcript > .msg.prompt:has-text("Continue, please.")').waitFor();
    // Importing it again is refused, with the reason.
    await page.setInputFiles("#import", file);
    await page.locator("#note", { hasText: "Import refused" }).waitFor();
    // A file named as no file of a session (_000) is taken by its
    // session_meta, as a file of any other name is; its import used to
    // panic and end the playground's program.
    await page.evaluate(() => (document.querySelector("#note").textContent = ""));
    await page.setInputFiles("#import", { name: `${id}_000.jsonl`, mimeType: "application/jsonl", buffer: Buffer.from(text) });
    await page.locator("#note", { hasText: "Import refused" }).waitFor();
    assert.match(await page.locator("#note").innerText(), /already exists/);
    assert.equal(await page.locator("#error").isVisible(), false, "the program still runs");
    clean(b.log);
  } catch (e) {
    const shot = join(await shotsDir(), "playground-sessions.png");
    await b.page?.screenshot({ path: shot }).catch(() => {});
    e.message += `\n(screenshot of the failure: ${shot})` + explain(b.log);
    throw e;
  }
});

const rowOf = (page, id) => page.locator(`#sessions li[data-session-id="${id}"]`);
const shownID = (page) => page.locator("#session-id").innerText();
/** Waits until the page shows a session other than id; returns its id. */
async function otherSession(page, id) {
  await page.waitForFunction((id) => document.getElementById("session-id").textContent !== id, id, { timeout: RUN });
  return shownID(page);
}

pageTest("playground: a Rename left open does not take the focus back from the composer; steering a Stop cut off comes back to the composer", async (page) => {
  await open(page);
  await send(page, "echo: first");
  await idle(page);
  // Rename opened, then the user goes back to the composer: the list's
  // redraws (the new session's row, the run's end) left the focus in the
  // rename field, and the next keys went into the title.
  await page.click("#reset");
  await idle(page);
  await page.locator("#sessions > li.session").first().locator('button[data-do="rename"]').click();
  await page.locator("#sessions .rename-input").waitFor();
  await page.click("#prompt");
  await page.keyboard.type("echo: hello");
  await page.keyboard.press("Enter");
  await idle(page);
  await page.locator("#sessions > li.session").nth(1).waitFor(); // the new session's row was drawn
  await page.keyboard.type("next question");
  assert.equal(await page.evaluate(() => document.activeElement?.id), "prompt");
  assert.equal(await page.inputValue("#prompt"), "next question");
  assert.equal(await page.inputValue("#sessions .rename-input"), "echo: first", "keys went into the rename field");
  await page.press("#sessions .rename-input", "Escape");
  await page.fill("#prompt", "");

  // Steering queued, then Stop: its text is given back to the empty composer.
  await send(page, "stream 3000");
  await page.fill("#prompt", "and then the tests");
  await page.press("#prompt", "Enter");
  await page.locator('.chip:text("queued: and then the tests")').waitFor();
  await page.click("#stop");
  await idle(page);
  assert.equal(await page.inputValue("#prompt"), "and then the tests");
  assert.match(await page.locator("#note").innerText(), /1 steering message\(s\) not delivered: the run ended first\. Their text is back in the composer\./);
});

// An input method's Enter confirms the text being composed (Japanese,
// Chinese, Korean), its Escape cancels it: neither sends the prompt or
// ends a Rename. The Rename field took them as its own (the title cut at
// the first confirmed word); Safari's last key of a composition has
// isComposing false and keyCode 229.
pageTest("playground: an input method's Enter and Escape neither send the prompt nor end a Rename", async (page) => {
  await open(page);
  const key = (sel, key, init) => page.evaluate(([sel, key, init]) => {
    document.querySelector(sel).dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true, ...init }));
  }, [sel, key, init]);
  await page.fill("#prompt", "echo: こんにちは");
  await key("#prompt", "Enter", { isComposing: true });
  await key("#prompt", "Enter", { keyCode: 229 });
  await page.fill("#prompt", "echo: こんにちは、世界");
  await page.press("#prompt", "Enter");
  await idle(page);
  assert.deepEqual(await page.locator("#transcript > .msg.prompt").allInnerTexts(), ["YOU\necho: こんにちは、世界"]);

  await page.locator("#sessions > li.session").first().locator('button[data-do="rename"]').click();
  await page.fill("#sessions .rename-input", "名前");
  await key("#sessions .rename-input", "Enter", { isComposing: true });
  await key("#sessions .rename-input", "Enter", { keyCode: 229 });
  await key("#sessions .rename-input", "Escape", { isComposing: true });
  await page.fill("#sessions .rename-input", "名前です");
  await page.press("#sessions .rename-input", "Enter");
  await page.locator("#sessions li.session .title", { hasText: "名前です" }).waitFor();
});

// The page's Escape stops a run (or closes a drawer); an input method's
// Escape, which cancels the text being composed in the composer or a
// Rename field, is not the page's: it stopped the run.
pageTest("playground: an input method's Escape does not stop the run", async (page) => {
  await open(page);
  await send(page, "How long is store.go?");
  await askCard(page, "list_files").waitFor({ timeout: RUN });
  const key = (sel, init) => page.evaluate(([sel, init]) => {
    document.querySelector(sel).dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true, cancelable: true, ...init }));
  }, [sel, init]);
  await page.fill("#prompt", "名前");
  await key("#prompt", { isComposing: true });
  await key("#prompt", { keyCode: 229 });
  await page.locator("#sessions > li.session").first().locator('button[data-do="rename"]').click();
  await key("#sessions .rename-input", { isComposing: true });
  // Work is done in the order it came: had an Escape stopped the run, the
  // approval below would come after the stop.
  await decide(page, "list_files", "allow");
  await decide(page, "count_lines", "allow");
  await idle(page);
  assert.equal(await page.locator('.notice:text("Run aborted: aborted by user")').count(), 0, "an input method's Escape stopped the run");
  assert.match(await lastReply(page), /add up to \d+ lines/);
});

pageTest("playground: New session moves the highlight at once; the new row appears during its first run; the stop-first note clears when the run ends; deleting the session in flight stops its run, and nothing of it comes back on reload", async (page, ctx, log) => {
  await open(page);
  const first = await shownID(page);
  await send(page, "echo: first");
  await idle(page);
  await rowOf(page, first).waitFor();
  assert.equal(await rowOf(page, first).getAttribute("aria-current"), "true");

  // New session: the old row is no longer the current one, at once.
  await page.click("#reset");
  const second = await otherSession(page, first);
  assert.equal(await rowOf(page, first).getAttribute("aria-current"), null, "the previous session stays highlighted");
  // Its row appears (highlighted) while its first run is in flight.
  await send(page, "stream 3000");
  await rowOf(page, second).waitFor({ timeout: RUN });
  assert.equal(await page.getAttribute("body", "data-state"), "running", "the row appeared only after the run");
  assert.equal(await rowOf(page, second).getAttribute("aria-current"), "true");

  // Opening another session while it runs: a note, gone when the run ends.
  await rowOf(page, first).locator(".session-open").click();
  await page.locator("#note", { hasText: "Stop the run in flight before opening another session." }).waitFor();
  await page.click("#stop");
  await idle(page);
  assert.equal(await page.locator("#note").innerText(), "", "the stop-first note outlived the run");

  // Delete the current session while its run streams: the run is stopped
  // first, then the Trace removed; the page moves to a new session.
  await send(page, "stream 3000");
  await page.locator("#transcript > .msg.text.streaming").waitFor();
  await rowOf(page, second).locator('button:text("Delete")').click();
  await rowOf(page, second).locator('button:text("Confirm delete")').click();
  const third = await otherSession(page, second);
  assert.notEqual(third, first);
  await idle(page);
  await page.locator("#note", { hasText: `Deleted ${second}.` }).waitFor();
  await rowOf(page, second).waitFor({ state: "detached" });
  assert.equal(await page.locator("#stop").isDisabled(), true);

  // Nothing of it was written after the delete: a reload neither lists it
  // nor fails to open it, and the page is usable.
  await page.reload();
  await idle(page);
  await rowOf(page, first).waitFor();
  assert.equal(await rowOf(page, second).count(), 0, "the deleted session came back");
  assert.doesNotMatch(await page.locator("#note").innerText(), /Could not open/);
  await send(page, "echo: after the reload");
  await idle(page);
  assert.equal(await lastReply(page), "after the reload");
});

pageTest("playground: a stored session that cannot be resumed does not block the page: a note, a new session, the row kept deletable", async (page) => {
  await open(page);
  // A session whose Trace has records but no session_meta, shown last.
  const id = "session-2026-01-02-03-04-05-0badc0de";
  await page.evaluate(async (id) => {
    const line = JSON.stringify({ timestamp: "2026-01-02T03:04:05.000Z", type: "model_msg", payload: { type: "text", role: "user", text: "orphan" } }) + "\n";
    const bytes = new TextEncoder().encode(line);
    const db = await new Promise((resolve, reject) => {
      const req = indexedDB.open("floe-playground");
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
    await new Promise((resolve, reject) => {
      const tx = db.transaction(["records", "files", "sessions"], "readwrite");
      tx.objectStore("records").put(bytes, [id, 1, 0]);
      tx.objectStore("files").put([1, bytes.length, 1, 10, Date.now()], [id, 1]);
      tx.objectStore("sessions").put([id, "orphan", Date.now(), bytes.length, 1], id);
      tx.oncomplete = resolve;
      tx.onerror = () => reject(tx.error);
    });
    db.close();
    localStorage.setItem("floe-playground:current", id);
  }, id);

  await page.reload();
  await idle(page); // not stuck on "loading…"
  await page.locator("#note", { hasText: `Could not open ${id}` }).waitFor();
  assert.match(await page.locator("#note").innerText(), /no session_meta.*A new session was started/s);
  assert.notEqual(await shownID(page), id);
  assert.equal(await page.locator("#send").isDisabled(), false);
  await send(page, "echo: still usable");
  await idle(page);
  assert.equal(await lastReply(page), "still usable");

  // Every later load opens the session in use, not the broken one.
  await page.reload();
  await idle(page);
  await page.locator('#transcript > .msg.prompt:has-text("echo: still usable")').waitFor();

  // The broken row says why it does not open, and can be deleted.
  await rowOf(page, id).locator(".session-open").click();
  await page.locator("#note", { hasText: `Could not open ${id}` }).waitFor();
  assert.equal(await page.getAttribute("body", "data-state"), "idle");
  await rowOf(page, id).locator('button:text("Delete")').click();
  await rowOf(page, id).locator('button:text("Confirm delete")').click();
  await rowOf(page, id).waitFor({ state: "detached" });
  await page.locator('#transcript > .msg.prompt:has-text("echo: still usable")').waitFor();
});

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

const XSS = [
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

async function checkInert(page, dialogs) {
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

async function configure(page, { provider, baseURL = "", model = "", key = "", effort, gemini, images, opened, systemPrompt }) {
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

pageTest("playground: a real model through an OpenAI-compatible server; settings kept locally; auth and unreachable-server messages", async (page, ctx, log, t) => {
  const server = await modelServer(t);
  const url = `http://127.0.0.1:${server.address().port}/v1`;
  await open(page);
  await configure(page, { provider: "openai-compatible", baseURL: url, model: "test-model", key: "sk-local" });
  assert.match(await page.locator("#model-label").innerText(), /OpenAI-compatible server · test-model/);
  await send(page, "Say hello");
  await idle(page);
  assert.equal(await lastReply(page), "Hello from the server");
  assert.equal(await page.locator("#transcript > .msg.text strong").last().innerText(), "the server");
  assert.match(await page.locator(".request").last().innerText(), /completed · 16 tokens/);
  assert.equal(server.requests.length, 1);
  assert.equal(server.requests[0].auth, "Bearer sk-local");
  assert.equal(server.requests[0].body.model, "test-model");
  assert.ok(server.requests[0].body.tools.some((d) => d.function.name === "write_file"), "the workspace tools are offered");
  const system = server.requests[0].body.messages[0];
  assert.equal(system.role, "system");
  assert.match(system.content, /^You are an agent working in the Floe playground/, "a real model gets the workspace prompt");
  assert.doesNotMatch(system.content, /scripted model/);
  const stored = JSON.parse(await page.evaluate(() => localStorage.getItem("floe-playground:settings")));
  assert.deepEqual([stored.provider, stored.baseURL, stored.model, stored.key], ["openai-compatible", url, "test-model", "sk-local"]);
  // Survives a reload.
  await page.reload();
  await idle(page);
  assert.match(await page.locator("#model-label").innerText(), /test-model/);

  // An empty answer: the request says so (the page showed nothing at all).
  await configure(page, { provider: "openai-compatible", baseURL: url, model: "empty", key: "sk-local" });
  await send(page, "Say hello");
  await idle(page);
  assert.match(await page.locator(".request").last().innerText(), /completed · the model answered nothing/);

  // A reply cut at the model's output limit: completed, and a notice says why.
  await configure(page, { provider: "openai-compatible", baseURL: url, model: "cut", key: "sk-local" });
  await send(page, "Say hello");
  await idle(page);
  assert.equal(await lastReply(page), "Half a sen");
  assert.match(await page.locator(".request").last().innerText(), /completed/);
  assert.match(await page.locator("#transcript > .notice").last().innerText(), /^The provider cut the reply short \(finish_reason "length"\): a reply at its output-token limit/);

  // A refused key: the request ends "auth", with what to do.
  await configure(page, { provider: "openai-compatible", baseURL: url, model: "test-model", key: "bad" });
  await send(page, "Say hello");
  await idle(page);
  assert.match(await page.locator(".request").last().innerText(), /auth.*Incorrect API key.*check the API key in Settings/s);

  // A redirect is not followed: the key goes to the configured URL only.
  await configure(page, { provider: "openai-compatible", baseURL: url, model: "test-model", key: "redirect" });
  await send(page, "Say hello");
  await page.locator(".request .retry .countdown").waitFor({ timeout: RUN });
  await page.locator('.request .retry button:text("Give up")').click();
  await idle(page);
  assert.deepEqual(server.requests.map((r) => r.url).filter((u) => u !== "/v1/chat/completions"), [], "a redirect was followed");
  assert.ok(server.requests.every((r) => r.cookie === undefined), "a request carried cookies");

  // No server (or CORS refused): the message says what to set; Give up ends the retries.
  const closed = await closedPort();
  await configure(page, { provider: "openai-compatible", baseURL: `http://127.0.0.1:${closed}/v1`, model: "m" });
  await send(page, "Say hello");
  await page.locator(".request .retry .countdown").waitFor({ timeout: RUN });
  assert.match(await page.locator(".request").last().innerText(), /no response from http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions.*CORS/s);
  await page.locator('.request .retry button:text("Give up")').click();
  await idle(page);

  // OpenAI with a Base URL (a proxy): the requests go there, with the key.
  const before = server.requests.length;
  await configure(page, { provider: "openai", baseURL: url, model: "gpt-test", key: "sk-proxy" });
  assert.match(await page.locator("#model-label").innerText(), /OpenAI · gpt-test/);
  await send(page, "Say hello");
  await idle(page);
  assert.equal(await lastReply(page), "Hello from the server");
  assert.deepEqual(server.requests.slice(before).map((r) => [r.url, r.auth, r.body.model]), [["/v1/chat/completions", "Bearer sk-proxy", "gpt-test"]]);

  // Back to the scripted demo.
  await configure(page, { provider: "scripted" });
  assert.match(await page.locator("#model-label").innerText(), /scripted demo/);
}, { expected: [/Failed to load resource: the server responded with a status of 401/, /Failed to load resource: net::ERR_CONNECTION_REFUSED/, /Failed to load resource: net::ERR_FAILED/] });

/** The text of a Chat Completions message's content: a string, or text parts. */
const contentText = (c) => (typeof c === "string" ? c : c.map((p) => p.text ?? "").join(""));

/** A loopback OpenAI-compatible server that hands a task to a subagent: the parent's first request gets a subagent call, the subagent's request (its own system prompt) an answer, the parent's next one (the call's output) a summary. */
function delegatingServer(t) {
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

pageTest("playground: a subagent in a real model's session asks the same model, with a subagent's prompt and the file tools only", async (page, ctx, log, t) => {
  const server = await delegatingServer(t);
  await open(page);
  await configure(page, { provider: "openai-compatible", baseURL: `http://127.0.0.1:${server.address().port}/v1`, model: "test-model" });
  await send(page, "Hand the notes to a subagent");
  await decide(page, "subagent", "allow");
  await idle(page);
  assert.equal(await lastReply(page), "The subagent says: The notes hold three files.");
  assert.equal(server.requests.length, 3, "the parent's request, the subagent's, the parent's next");
  const [first, child, next] = server.requests;
  assert.match(contentText(first.messages[0].content), /^You are an agent working in the Floe playground/);
  assert.match(contentText(child.messages[0].content), /^You are a subagent working in the Floe playground/);
  assert.doesNotMatch(contentText(child.messages[0].content), /JavaScript|hand a task/, "the subagent's prompt offers what it lacks");
  assert.equal(child.model, "test-model");
  assert.deepEqual(child.messages.slice(1).map((m) => [m.role, contentText(m.content)]), [["user", "Count the notes."]], "the subagent's context is not fresh");
  assert.deepEqual(child.tools.map((d) => d.function.name), ["list_files", "count_lines", "read_file", "write_file", "edit_file", "delete_file"]);
  assert.ok(first.tools.some((d) => d.function.name === "subagent"), "the parent is offered the subagent tool");
  assert.equal(contentText(next.messages.at(-1).content), "The notes hold three files.");
  // The subagent's answer is shown nested in the call that ran it.
  const card = page.locator("#transcript > .card", { has: page.locator(':scope > .head .tool-name:text-is("subagent")') });
  await card.locator(".subagent", { hasText: "The notes hold three files." }).waitFor();
});

// A key fetch cannot send (an ellipsis of a key shown cut short, a tab
// pasted with it) is refused under its field, the dialog left open,
// never quoting the key: it was saved, and every request then failed
// naming the Authorization header only. A session resumed after Settings
// changed goes on with the model they give now, and says so.
pageTest("playground: Settings refuse a key an HTTP header cannot carry; a session resumed with other Settings names the model it was made with and the one it goes on with", async (page, ctx, log, t) => {
  const server = await modelServer(t);
  const url = `http://127.0.0.1:${server.address().port}/v1`;
  await open(page);
  await page.click("#open-settings");
  await page.selectOption("#set-provider", "openai-compatible");
  await page.fill("#set-base-url", url);
  await page.fill("#set-model", "test-model");
  for (const [key, said] of [["sk-proj-ab\u2026", /holds “…” \(U\+2026\) at character 11/], ["sk-lo\tcal", /holds a tab at character 6/]]) {
    await page.fill("#set-key", key);
    await page.click("#settings-save");
    const error = page.locator("#set-key-error", { hasText: said });
    await error.waitFor();
    assert.match(await error.innerText(), /^Settings: the API key holds .*which an HTTP header cannot carry; paste the key again\.$/);
    assert.doesNotMatch(await error.innerText(), /sk-/, "the error shows the key");
    assert.equal(await page.getAttribute("#set-key", "aria-invalid"), "true");
    assert.equal(await page.locator("#settings").isVisible(), true, "the dialog closed on a refused key");
    assert.equal(await page.evaluate(() => localStorage.getItem("floe-playground:settings")), null, "a refused key was saved");
  }
  // Spaces pasted around the model and the key are dropped.
  await page.fill("#set-model", " test-model ");
  await page.fill("#set-key", " sk-local ");
  await page.click("#settings-save");
  await page.locator("#settings").waitFor({ state: "hidden" });
  await page.click("#open-settings");
  assert.equal(await page.locator("#set-key-error").isVisible(), false, "a stale key error");
  await page.click("#settings-cancel");

  // Made with test-model; Settings changed to the scripted demo; reloaded.
  await page.click("#reset");
  await send(page, "Say hello");
  await idle(page);
  assert.deepEqual(server.requests.map((r) => [r.body.model, r.auth]), [["test-model", "Bearer sk-local"]]);
  await configure(page, { provider: "scripted" });
  await page.reload();
  await idle(page);
  // The first session, reopened from the list.
  await page.locator("#sessions li.session .session-open").first().click();
  await page.locator("#transcript > .notice", { hasText: "Resumed from storage" }).waitFor();
  assert.equal(await page.locator("#note").innerText(), "This session was made with OpenAI-compatible server · test-model; it goes on with the scripted demo, as Settings say now.");
  assert.match(await page.locator("#model-label").innerText(), /scripted demo/);
});

// Anthropic through its Messages API (a proxy's base URL): a recorded
// answer with a redacted thinking block, then a tool loop whose thinking
// is not ASCII. A thinking's length is counted in characters (it counted
// bytes), and a thinking the provider keeps to itself says so (it said
// "0 characters"). The key goes in x-api-key, never into the Trace.
pageTest("playground: Anthropic: thinking counted in characters, a redacted one said as such; a tool loop; the key in x-api-key only, never in the Trace", async (page, ctx, log, t) => {
  const recorded = JSON.parse(await readFile(join(corpusDir(), "an_hand_thinking_redacted.json"), "utf8")).response;
  const stream = (body) => ({ status: 200, headers: SSE_HEADERS, body });
  const queue = [
    recorded,
    stream(anthropicStream({ thinking: "先列出文件。", text: ["Looking."], calls: [{ id: "toolu_1", name: "list_files", args: ["{}"] }] })),
    stream(anthropicStream({ text: ["Six files."] })),
  ];
  const server = await replayServer(t, (req, res) => writeResponse(res, queue.shift()), { cors: new URL(baseURL()).origin });
  await open(page);
  await configure(page, { provider: "anthropic", baseURL: server.url + "/v1", model: "claude-test", key: "sk-ant-secret" });
  await send(page, "What is 2+2?");
  await idle(page);
  assert.deepEqual(await page.locator("#transcript > details.thinking summary").allTextContents(), ["thinking · 30 characters", "thinking · not shown by the provider"]);
  assert.equal(await lastReply(page), "4");
  await send(page, "How many files?");
  await decide(page, "list_files", "allow");
  await idle(page);
  assert.equal(await lastReply(page), "Six files.");
  assert.equal(await page.locator("#transcript > details.thinking summary").nth(2).textContent(), "thinking · 6 characters");
  assert.equal(server.requests.length, 3);
  for (const r of server.requests) {
    assert.equal(r.url, "/v1/messages");
    assert.equal(r.headers["x-api-key"], "sk-ant-secret");
    assert.equal(r.headers.authorization, undefined);
  }
  // The redacted block and the thinking go back to the model as they came.
  const sent = JSON.parse(server.requests[2].body).messages;
  assert.deepEqual(sent[1].content.map((b) => b.type), ["thinking", "redacted_thinking", "text"]);
  assert.equal(sent[3].content[0].thinking, "先列出文件。");
  await page.click("#tab-trace");
  await page.locator("#trace li").first().waitFor();
  const stored = await page.evaluate(() => new Promise((resolve, reject) => {
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
  }));
  assert.ok(stored.includes("先列出文件"), "the session is not in IndexedDB");
  assert.ok(!stored.includes("sk-ant-secret"), "the key is stored with the session");
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

// The OpenAI Responses API through Settings, with a reasoning effort: a
// recorded tool loop (an encrypted reasoning item and a call of a tool the
// playground lacks, then the answer), each request to /responses with
// store: false and the effort the level maps to ("max" is OpenAI's
// "xhigh"), the reasoning sent back as it came; a compaction goes to the
// same provider and names no effort.
pageTest("playground: the OpenAI Responses API with a reasoning effort: a recorded tool loop, store false, the effort each run; a compaction on the same provider without it", async (page, ctx, log, t) => {
  const recorded = async (name) => JSON.parse(await readFile(join(corpusDir(), name + ".json"), "utf8")).response;
  const call = await recorded("or_rec_reasoning_then_call");
  const answer = await recorded("or_rec_text_after_tools");
  const queue = [call, answer, answer];
  const server = await replayServer(t, (req, res) => writeResponse(res, queue.shift()), { cors: new URL(baseURL()).origin });
  await open(page);
  // Like OpenAI's, the choice needs a key.
  await configure(page, { provider: "openai-responses", model: "gpt-test" });
  await page.locator("#note", { hasText: "Settings: the OpenAI Responses API needs an API key (or a Base URL: a proxy that adds it, a local server)." }).waitFor();
  await page.click("#open-settings");
  assert.equal(await page.locator("#set-gemini-row").isVisible(), false, "the Gemini switch is offered for the Responses API");
  await page.click("#settings-cancel");
  await configure(page, { provider: "openai-responses", baseURL: server.url + "/v1", model: "gpt-test", key: "sk-resp", effort: "max" });
  assert.equal(await page.locator("#model-label").innerText(), "Model: OpenAI Responses API · gpt-test · effort max");
  const stored = JSON.parse(await page.evaluate(() => localStorage.getItem("floe-playground:settings")));
  assert.deepEqual([stored.provider, stored.thinkingLevel, stored.gemini], ["openai-responses", "max", false]);
  await send(page, "What is (12+7)*3*10?");
  await decide(page, "calculator", "allow");
  await idle(page);
  assert.equal(await lastReply(page), "The final result is 570.");
  assert.match(await page.locator("#transcript > details.thinking summary").first().textContent(), /^thinking · \d+ characters$/);
  assert.equal(server.requests.length, 2);
  const [first, second] = server.requests.map((r) => JSON.parse(r.body));
  for (const [i, r] of server.requests.entries()) {
    assert.equal(r.url, "/v1/responses");
    assert.equal(r.headers.authorization, "Bearer sk-resp");
    const b = JSON.parse(r.body);
    assert.equal(b.model, "gpt-test");
    assert.equal(b.store, false, `request ${i}: store`);
    assert.deepEqual(b.reasoning, { summary: "auto", effort: "xhigh" }, `request ${i}: reasoning`);
    assert.deepEqual(b.include, ["reasoning.encrypted_content"]);
  }
  assert.match(first.instructions, /^You are an agent working in the Floe playground/);
  assert.ok(first.tools.some((d) => d.name === "write_file"), "the workspace tools are offered");
  // The reasoning item goes back as it came, then the call and its output.
  const encrypted = call.body.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)))
    .find((e) => e.type === "response.output_item.done" && e.item.type === "reasoning").item.encrypted_content;
  const items = second.input;
  assert.deepEqual(items.map((it) => it.type ?? it.role), ["user", "reasoning", "function_call", "function_call_output"]);
  assert.equal(items[1].encrypted_content, encrypted);
  assert.equal(items[2].call_id, "call_AB6AaRZ1FYZB2RwS6A5vbdqn");
  assert.equal(items[3].call_id, "call_AB6AaRZ1FYZB2RwS6A5vbdqn");
  assert.match(items[3].output, /unknown tool "calculator"/);

  // A compaction asks the same provider, with no effort.
  await page.locator("#compact:not([disabled])").waitFor();
  await page.click("#compact");
  await idle(page);
  assert.match(await page.locator("#transcript > details.compact summary").innerText(), /Compaction · completed/);
  assert.equal(server.requests.length, 3);
  const compaction = JSON.parse(server.requests[2].body);
  assert.equal(server.requests[2].url, "/v1/responses");
  assert.equal(compaction.store, false);
  assert.equal(compaction.reasoning, undefined, "a compaction named the effort");
});

// A Base URL (a local server, a proxy that adds the key) needs no key: the
// request goes without an Authorization header. Before, the Responses API,
// OpenAI and Anthropic asked for one whatever the URL, and a user of a
// local server had to type a made-up key.
pageTest("playground: with a Base URL the OpenAI Responses API, OpenAI and Anthropic need no key, and none is sent", async (page, ctx, log, t) => {
  const answer = JSON.parse(await readFile(join(corpusDir(), "or_rec_text_after_tools.json"), "utf8")).response;
  const server = await replayServer(t, (req, res) => writeResponse(res, answer), { cors: new URL(baseURL()).origin });
  await open(page);
  await configure(page, { provider: "openai-responses", baseURL: server.url + "/v1", model: "local-model" });
  assert.equal(await page.locator("#model-label").innerText(), "Model: OpenAI Responses API · local-model");
  await send(page, "Hello");
  await idle(page);
  assert.equal(await lastReply(page), "The final result is 570.");
  assert.equal(server.requests.length, 1);
  assert.equal(server.requests[0].url, "/v1/responses");
  assert.equal(server.requests[0].headers.authorization, undefined, "a key was sent");
  for (const provider of ["openai", "anthropic"]) {
    await configure(page, { provider, baseURL: server.url + "/v1", model: "m" });
    assert.doesNotMatch(await page.locator("#model-label").innerText(), /unavailable/, provider);
  }
});

// The reasoning effort on Chat Completions: sent as reasoning_effort with
// every request of a run, a subagent's included; with the Gemini switch
// (a proxy in front of Google's API) as the level Gemini takes. Settings
// stored by a page without the effort still load; a stored effort the
// page does not offer is refused, said under the composer and under the
// field, and Save then keeps the default.
pageTest("playground: Chat Completions get the reasoning effort on every request, a subagent's too, and Gemini's level with the Gemini switch; older stored settings load, an unknown stored effort is refused", async (page, ctx, log, t) => {
  const server = await delegatingServer(t);
  const url = `http://127.0.0.1:${server.address().port}/v1`;
  await open(page);
  await configure(page, { provider: "openai-compatible", baseURL: url, model: "test-model", effort: "high" });
  assert.equal(await page.locator("#model-label").innerText(), "Model: OpenAI-compatible server · test-model · effort high");
  await send(page, "Hand the notes to a subagent");
  await decide(page, "subagent", "allow");
  await idle(page);
  assert.equal(await lastReply(page), "The subagent says: The notes hold three files.");
  assert.deepEqual(server.requests.map((b) => b.reasoning_effort), ["high", "high", "high"], "the parent's, the subagent's, the parent's next");

  // Gemini's dialect through a proxy: minimal goes as low, max as high;
  // without the switch, as named ("max" is OpenAI's "xhigh").
  for (const [gemini, effort, sent] of [[true, "minimal", "low"], [true, "max", "high"], [false, "minimal", "minimal"], [false, "max", "xhigh"]]) {
    await page.click("#open-settings");
    await page.selectOption("#set-provider", "anthropic");
    assert.equal(await page.locator("#set-gemini-row").isVisible(), false, "the Gemini switch is offered for Anthropic");
    await page.click("#settings-cancel");
    await configure(page, { provider: "openai-compatible", baseURL: url, model: "test-model", effort, gemini });
    const before = server.requests.length;
    await send(page, "Hand the notes to a subagent");
    await decide(page, "subagent", "allow");
    await idle(page);
    assert.deepEqual(server.requests.slice(before).map((b) => b.reasoning_effort), [sent, sent, sent], `${effort}, gemini ${gemini}`);
  }
  assert.equal(JSON.parse(await page.evaluate(() => localStorage.getItem("floe-playground:settings"))).gemini, false);

  // Settings stored before the effort and the switch existed.
  const older = { provider: "openai-compatible", baseURL: url, model: "test-model", key: "", compactTokens: 0, compactMode: "summarize" };
  await page.evaluate((s) => localStorage.setItem("floe-playground:settings", JSON.stringify(s)), older);
  await page.reload();
  await idle(page);
  await page.click("#reset");
  assert.equal(await page.locator("#model-label").innerText(), "Model: OpenAI-compatible server · test-model");
  let before = server.requests.length;
  await send(page, "Hand the notes to a subagent");
  await decide(page, "subagent", "allow");
  await idle(page);
  assert.deepEqual(server.requests.slice(before).map((b) => "reasoning_effort" in b), [false, false, false], "an effort was sent by default");

  // A stored effort the page does not offer: refused, said where it shows.
  await page.evaluate((s) => localStorage.setItem("floe-playground:settings", JSON.stringify(s)), { ...older, thinkingLevel: "ultra" });
  await page.reload();
  await idle(page);
  await page.click("#reset");
  assert.match(await page.locator("#model-label").innerText(), /scripted demo \(OpenAI-compatible server unavailable\)/);
  const said = "Settings: the reasoning effort “ultra” is not one the page offers; choose default, minimal, low, medium, high or max.";
  await page.locator("#note", { hasText: said }).waitFor();
  await page.click("#open-settings");
  assert.equal(await page.locator("#set-effort-error").innerText(), said);
  assert.equal(await page.getAttribute("#set-effort", "aria-invalid"), "true");
  assert.equal(await page.inputValue("#set-effort"), "");
  await page.click("#settings-save");
  await page.locator("#settings").waitFor({ state: "hidden" });
  assert.equal(JSON.parse(await page.evaluate(() => localStorage.getItem("floe-playground:settings"))).thinkingLevel, "");
  await page.click("#reset");
  assert.equal(await page.locator("#model-label").innerText(), "Model: OpenAI-compatible server · test-model");
  // One put in the select otherwise is refused under the field at Save.
  await page.click("#open-settings");
  assert.equal(await page.locator("#set-effort-error").isVisible(), false, "a stale effort error");
  await page.evaluate(() => {
    const o = document.createElement("option");
    o.value = o.textContent = "extreme";
    document.getElementById("set-effort").append(o);
  });
  await page.selectOption("#set-effort", "extreme");
  await page.click("#settings-save");
  await page.locator("#set-effort-error", { hasText: "the reasoning effort “extreme” is not one the page offers" }).waitFor();
  assert.equal(await page.locator("#settings").isVisible(), true, "the dialog closed on a refused effort");
  assert.equal(JSON.parse(await page.evaluate(() => localStorage.getItem("floe-playground:settings"))).thinkingLevel, "");
});

// The transcript follows its end while a reply streams, until the user
// scrolls up; back at the end, it follows again. Whether it follows is
// decided by the user's scrolls, and the scroll to the end is made once a
// frame (reading the layout at every render made a long reply quadratic).
pageTest("playground: the transcript follows a streaming reply, not once the user scrolled up, and again at the end", async (page) => {
  // The scripted model streams a word every 1.5 ms at this pace (the
  // browser's timers make it 5 or so): the 1,500 words' stream, some
  // 7,500 px, goes on for some 8 s, most of it after the test has
  // scrolled up.
  await open(page, "/static/?pace=0.05");
  const gap = () => page.evaluate(() => {
    const t = document.getElementById("transcript");
    return t.scrollHeight - t.scrollTop - t.clientHeight;
  });
  const taller = (h) => page.waitForFunction((h) => document.getElementById("transcript").scrollHeight > h, h, { timeout: RUN });
  await send(page, "stream 1500");
  await taller(3000);
  await page.waitForFunction(() => {
    const t = document.getElementById("transcript");
    return t.scrollHeight - t.scrollTop - t.clientHeight < 48;
  }, null, { timeout: RUN });
  await page.evaluate(() => (document.getElementById("transcript").scrollTop = 0));
  const h = await page.evaluate(() => document.getElementById("transcript").scrollHeight);
  await taller(h + 1000);
  assert.ok((await gap()) > 1000, "the transcript scrolled back down after the user scrolled up");
  await idle(page);
  await page.evaluate(() => {
    const t = document.getElementById("transcript");
    t.scrollTop = t.scrollHeight;
  });
  await page.waitForFunction(() => {
    const t = document.getElementById("transcript");
    return t.scrollHeight - t.scrollTop - t.clientHeight < 48;
  });
  const h2 = await page.evaluate(() => document.getElementById("transcript").scrollHeight);
  await send(page, "stream 600");
  await taller(h2 + 1000);
  await page.waitForFunction(() => {
    const t = document.getElementById("transcript");
    return t.scrollHeight - t.scrollTop - t.clientHeight < 48;
  }, null, { timeout: RUN });
  await idle(page);
});

// A model the page answers itself: the page's fetch of PAGE_MODEL is taken
// by a script in the page, which answers request n with answers[n] (a
// Chat Completions SSE text) whole; where answers[n] is null, with a
// stream left open, which window.__model.push(text) feeds and
// window.__model.end() closes; past the end of answers, with "Done.". No
// server: a chunk pushed is drawn before the page's next frame (the first
// of an item at once; later ones of a streaming reply may wait).
const PAGE_MODEL = "http://127.0.0.1:9/v1";
const chunk = (o) => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "test-model", ...o })}\n\n`;
const say = (s) => chunk({ choices: [{ index: 0, delta: { role: "assistant", content: s }, finish_reason: null }] });
const think = (s) => chunk({ choices: [{ index: 0, delta: { role: "assistant", reasoning_content: s }, finish_reason: null }] });
const ended = (reason) =>
  chunk({ choices: [{ index: 0, delta: {}, finish_reason: reason }] }) + chunk({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 } }) + "data: [DONE]\n\n";
const callTool = (name) =>
  chunk({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name, arguments: "{}" } }] }, finish_reason: null }] });
/** n paragraphs of a reply (each a line of the transcript). */
const paragraphs = (what, n) => Array.from({ length: n }, (_, i) => `${what}, paragraph ${i + 1}.`).join("\n\n");

async function pageModel(page, answers) {
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
const gapOf = (page) =>
  page.evaluate(() => {
    const t = document.getElementById("transcript");
    return t.scrollHeight - t.scrollTop - t.clientHeight;
  });

/** The transcript's scrollTop. */
const scrollTop = (page) => page.evaluate(() => document.getElementById("transcript").scrollTop);

/** Scrolls the transcript to y, as the user would; resolves with its scrollTop once the scroll event has been handled. */
const userScroll = (page, y) =>
  page.evaluate((y) => {
    const t = document.getElementById("transcript");
    return new Promise((resolve) => {
      t.addEventListener("scroll", () => resolve(t.scrollTop), { once: true });
      t.scrollTop = y;
    });
  }, y);

/** Feeds the page's model text, and resolves once the transcript has grown by it and the page's next two frames have passed. */
const pushed = async (page, text) => {
  const h = await page.evaluate(() => document.getElementById("transcript").scrollHeight);
  await page.evaluate((s) => window.__model.push(s), text);
  await page.waitForFunction((h) => document.getElementById("transcript").scrollHeight > h, h);
  await frames(page);
};

/** Waits until the transcript shows its end. */
const atEnd = (page) =>
  page.waitForFunction(() => {
    const t = document.getElementById("transcript");
    return t.scrollHeight - t.scrollTop - t.clientHeight < 1;
  }, null, { timeout: RUN });

/** Resolves after the page's next two frames (the second after every callback the first ran, the page's scroll to its end included). */
const frames = (page) => page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));

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
const raceAt = (page, change, text) =>
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
async function endStream(page) {
  await page.evaluate((s) => (window.__model.push(s), window.__model.end()), ended("stop"));
  await idle(page);
}

/**
 * Checks what raceAt gave: the transcript grew before the frame and still
 * followed its end after it; then ends the stream and checks the view at
 * the end once the run is over.
 */
async function followedRace(page, at) {
  assert.ok(at.grew > 300, `the transcript grew ${at.grew} px only before the frame`);
  assert.ok(at.gap < 1, `the transcript stopped following: ${at.gap} px above its end after the next frame`);
  await endStream(page);
  await atEnd(page);
}

// When a card at the end of the transcript shrinks (a decided approval
// loses its buttons), the browser pulls the view up to the new end at its
// next layout, and sends the scroll event of that at its next frame. If
// the transcript has grown again by then, the view is above the end the
// page scrolled to and not near the new one: the page took that for the
// user's scroll up, and stopped following.
pageTest("playground: the transcript follows its end when a card at the end shrinks and the transcript grows again before the scroll event", async (page) => {
  await open(page);
  await pageModel(page, [say(paragraphs("Before the call", 60)) + callTool("list_files") + ended("tool_calls"), null]);
  await page.setViewportSize({ width: 390, height: 844 }); // a phone's: the approval's buttons take two lines
  await send(page, "Go");
  await askCard(page, "list_files").waitFor({ timeout: RUN });
  await atEnd(page);
  const at = await raceAt(page, "deny", say(paragraphs("After the denial", 30)));
  assert.equal(at.requests, 2, "the denial did not reach the model in the click's task");
  assert.ok(at.shrank > 0 && at.shorter > 0, `the card shrank ${at.shrank} px, the transcript ${at.shorter} px`);
  await followedRace(page, at);
});

// The page's footer getting shorter (here the strip of attached images,
// gone as they are queued with a steer) makes the transcript's view
// taller: the browser pulls it up to the same end, its scroll event as
// late.
pageTest("playground: the transcript follows its end when its view grows taller and the transcript grows again before the scroll event", async (page) => {
  await open(page);
  await pageModel(page, [say(paragraphs("A long answer", 60)) + ended("stop"), null]);
  await send(page, "Go");
  await idle(page);
  await send(page, "Go on");
  await page.waitForFunction(() => window.__model.push);
  await page.evaluate((s) => window.__model.push(s), think("Thinking."));
  await page.locator("#transcript > .msg.thinking").waitFor();
  const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=", "base64");
  await page.setInputFiles("#attach-file", { name: "one.png", mimeType: "image/png", buffer: png });
  await page.locator("#attachments img").waitFor();
  await page.fill("#prompt", "and this");
  await atEnd(page);
  const at = await raceAt(page, "steer", say(paragraphs("The answer", 30)));
  assert.equal(await page.locator("#steer-queue .chip").count(), 1, "the steer was not queued");
  assert.ok(at.taller > 0, `the view did not grow taller (${at.taller} px)`);
  await followedRace(page, at);
});

// A <details> at the end (the thinking streaming) the user closes makes
// the transcript shorter, as a shrinking card does: it does not stop the
// following either. One the user opens there while it follows grows the
// transcript under the view, and the view follows the end.
pageTest("playground: the transcript follows its end when the user closes a thinking block at the end and the transcript grows again before the scroll event", async (page) => {
  await open(page);
  await pageModel(page, [null]);
  await send(page, "Go");
  await page.waitForFunction(() => window.__model.push);
  await page.evaluate((s) => window.__model.push(s), say(paragraphs("Before", 60)) + think(paragraphs("Thinking", 40)));
  const block = page.locator("#transcript > details.msg.thinking");
  await block.waitFor();
  await atEnd(page);
  await block.locator("summary").click();
  assert.equal(await block.evaluate((d) => d.open), true);
  await pushed(page, think("\n\n" + paragraphs("Thinking on", 5)));
  await atEnd(page);
  const at = await raceAt(page, "close", say(paragraphs("The answer", 30)));
  assert.equal(await block.evaluate((d) => d.open), false, "the thinking block did not close");
  assert.ok(at.shorter > 300, `the transcript got ${at.shorter} px shorter only`);
  await followedRace(page, at);
});

// The user's scroll stops the following however it is made: here by a
// script, as a screen reader's, a find in the page's or the focus of an
// element brings what it shows into view; back at the end, the transcript
// follows again, in the same run.
pageTest("playground: a scroll up by other means than a wheel, touch or keys stops the following during a run; back at the end it follows again", async (page) => {
  await open(page);
  await pageModel(page, [null]);
  await send(page, "Go");
  await page.waitForFunction(() => window.__model.push);
  const push = (s) => page.evaluate((s) => window.__model.push(s), s);
  await push(say(paragraphs("Streaming", 60)));
  await atEnd(page);
  const top = await page.evaluate(() => {
    const t = document.getElementById("transcript");
    return new Promise((resolve) => {
      t.addEventListener("scroll", () => resolve(t.scrollTop), { once: true });
      document.querySelector("#transcript > .msg.prompt").scrollIntoView();
    });
  });
  const h = await page.evaluate(() => document.getElementById("transcript").scrollHeight);
  await push(say("\n\n" + paragraphs("More", 30)));
  await page.waitForFunction((h) => document.getElementById("transcript").scrollHeight > h + 500, h);
  await frames(page);
  assert.equal(await page.evaluate(() => document.getElementById("transcript").scrollTop), top, "the transcript scrolled after the user's scroll up");
  assert.ok((await gapOf(page)) > 1000);
  await page.evaluate(() => {
    const t = document.getElementById("transcript");
    return new Promise((resolve) => {
      t.addEventListener("scroll", resolve, { once: true });
      t.scrollTop = t.scrollHeight;
    });
  });
  const h2 = await page.evaluate(() => document.getElementById("transcript").scrollHeight);
  await push(say("\n\n" + paragraphs("Yet more", 30)));
  await page.waitForFunction((h) => document.getElementById("transcript").scrollHeight > h + 500, h2);
  await frames(page);
  assert.ok((await gapOf(page)) < 1, "the transcript did not follow once the user was back at its end");
  await endStream(page);
});

// Only the user's reaching the end starts the following again. A view
// made taller, or a scroll down short of the end to where the page last
// scrolled, once the transcript has grown since, is no such return.
pageTest("playground: the transcript does not follow again when its view grows taller after the user scrolled up", async (page) => {
  await open(page);
  await pageModel(page, [null]);
  await send(page, "Go");
  await page.waitForFunction(() => window.__model.push);
  await pushed(page, say(paragraphs("Streaming", 60)));
  await atEnd(page);
  await frames(page);
  const left = (await scrollTop(page)) - 200;
  assert.equal(await userScroll(page, left), left);
  await pushed(page, say("\n\n" + paragraphs("More", 30)));
  await page.setViewportSize({ width: 1280, height: 1260 });
  await frames(page);
  await pushed(page, say("\n\n" + paragraphs("Yet more", 30)));
  assert.equal(await scrollTop(page), left, "the transcript scrolled once its view grew taller");
  assert.ok((await gapOf(page)) > 1000);
  // A scroll of the user's own after, still short of the end.
  assert.equal(await userScroll(page, left - 10), left - 10);
  await pushed(page, say("\n\n" + paragraphs("Still more", 30)));
  assert.equal(await scrollTop(page), left - 10, "the transcript followed again after the user's scroll up");
  await endStream(page);
});

pageTest("playground: the transcript does not follow again when the user scrolls down to where it last followed, short of its end", async (page) => {
  await open(page);
  await pageModel(page, [null]);
  await send(page, "Go");
  await page.waitForFunction(() => window.__model.push);
  await pushed(page, say(paragraphs("Streaming", 60)));
  await atEnd(page);
  await frames(page);
  const followed = await scrollTop(page);
  assert.equal(await userScroll(page, 0), 0);
  await pushed(page, say("\n\n" + paragraphs("More", 30)));
  assert.equal(await userScroll(page, followed), followed);
  await pushed(page, say("\n\n" + paragraphs("Yet more", 30)));
  assert.equal(await scrollTop(page), followed, "the transcript followed again from short of its end");
  assert.ok((await gapOf(page)) > 1000);
  await endStream(page);
});

// The user's scroll up is in the transcript shown: another session opened
// shows its end and follows its runs, as one opened after no scroll up does.
pageTest("playground: a session opened after the user scrolled up in another shows its end and follows its run", async (page) => {
  await open(page, "/static/?pace=0.05"); // three replies of 400 words, streamed about four times as fast
  await send(page, "stream 400");
  await idle(page);
  const first = await shownID(page);
  await page.click("#reset");
  await otherSession(page, first);
  await send(page, "stream 400");
  await idle(page);
  await atEnd(page);
  assert.equal(await userScroll(page, 0), 0);
  await showSessions(page);
  await rowOf(page, first).locator(".session-open").click();
  await page.waitForFunction((id) => document.getElementById("session-id").textContent === id, first);
  await page.locator("#transcript > .notice", { hasText: "Resumed from storage" }).waitFor();
  await frames(page);
  assert.ok((await gapOf(page)) < 1, `the session opened shows ${await gapOf(page)} px above its end`);
  await send(page, "stream 400");
  await idle(page);
  await frames(page);
  assert.ok((await gapOf(page)) < 1, `the run's reply ended ${await gapOf(page)} px below the view`);
});

pageTest("playground: the Stream panel draws a fragment's deltas as one row, counted, its JSON the last delta's, across its redraws", async (page) => {
  await open(page);
  const words = "one two three four five six seven eight nine ten eleven twelve".split(" ");
  await send(page, "echo: " + words.join(" "));
  await idle(page);
  const rows = await page.evaluate(() =>
    [...document.querySelectorAll("#stream > li")].map((li, i) => ({
      i,
      type: li.querySelector(".type").textContent,
      detail: li.querySelector(".detail").textContent,
    })),
  );
  for (const type of ["partial_thinking", "partial_text"]) {
    const deltas = rows.filter((r) => r.type === type && r.detail.startsWith("delta"));
    assert.deepEqual(deltas.map((r) => r.detail), [`delta ×${words.length}`], type);
    const row = page.locator("#stream > li").nth(deltas[0].i);
    await row.locator("button.row").click();
    assert.equal(await row.locator("button.row").getAttribute("aria-expanded"), "true");
    const p = JSON.parse(await row.locator("pre.json").innerText()).payload;
    assert.equal(p.text ?? p.thinking, words.at(-1), `${type}: the row's JSON is its last delta`);
    await row.locator("button.row").click();
    await row.locator("pre.json").waitFor({ state: "detached" });
    assert.equal(await row.locator("button.row").getAttribute("aria-expanded"), "false");
  }
  const count = await page.locator("#stream-count").textContent();
  assert.ok(Number(count) > 2 * words.length, `the count of messages (${count}) takes in every delta`);
});

pageTest("playground: a tool output's images and a prompt's are drawn from data: URLs, named, in boxes of a fixed size; a remote one is a link, never loaded", async (page, ctx, log) => {
  await open(page);
  const remote = [];
  page.on("request", (r) => {
    if (r.url().includes("images.example")) remote.push(r.url());
  });
  const svg = (w, h, fill) => "data:image/svg+xml;base64," + Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}"><rect width="${w}" height="${h}" fill="${fill}"/></svg>`).toString("base64");
  const wide = svg(800, 200, "teal");
  const tall = svg(100, 600, "tomato");
  const ts = "2026-01-02T00:00:00.000Z";
  const sid = "session-2026-01-02-00-00-00-00aa00aa";
  const lines = [
    { timestamp: ts, type: "session_meta", payload: { session_id: sid, provider: "x", model_id: "m", model_context_window: 1000, system_prompt: "s", agent_state: "m", workspace: "w" } },
    { timestamp: ts, type: "model_msg", payload: { type: "text", role: "user", text: "what is on screen?" } },
    { timestamp: ts, type: "model_msg", payload: { type: "image_url", role: "user", image_url: tall } },
    { timestamp: ts, type: "event_msg", payload: { type: "request_begin" } },
    { timestamp: ts, type: "model_msg", payload: { type: "tool_call", role: "assistant", name: "screenshot", arguments: "{}", tool_call_id: "c1", stop_reason: "completed" } },
    { timestamp: ts, type: "event_msg", payload: { type: "request_end", status: "completed" } },
    { timestamp: ts, type: "event_msg", payload: { type: "approval_decision", decision: "allow", tool_call_id: "c1" } },
    {
      timestamp: ts,
      type: "model_msg",
      payload: { type: "tool_call_output", role: "user", output: "three images", images: [wide, "https://images.example/chart.png", "javascript:alert(1)"], tool_call_id: "c1", stop_reason: "completed" },
    },
  ];
  await page.setInputFiles("#import", { name: "shots.jsonl", mimeType: "application/x-ndjson", buffer: Buffer.from(lines.map((l) => JSON.stringify(l)).join("\n") + "\n") });
  await page.locator("#note", { hasText: `Imported ${sid}.` }).waitFor();
  await page.locator(`#sessions li[data-session-id="${sid}"] .session-open`).click();
  const card = page.locator("#transcript > .card", { has: page.locator(".tool-name", { hasText: "screenshot" }) });
  await card.waitFor();

  // The prompt's image, with the prompt; the tool's, in its card.
  const prompt = page.locator("#transcript > .msg.prompt");
  assert.equal(await prompt.locator(".body").innerText(), "what is on screen?");
  const imgs = (scope) =>
    scope.locator("img").evaluateAll((all) =>
      all.map((i) => ({ alt: i.alt, loading: i.loading, loaded: i.complete && i.naturalWidth > 0, w: i.getBoundingClientRect().width, h: i.getBoundingClientRect().height, fit: getComputedStyle(i).objectFit })),
    );
  await page.waitForFunction(() => [...document.querySelectorAll("#transcript img")].every((i) => i.complete), null, { timeout: WAIT });
  const shown = [...(await imgs(prompt)), ...(await imgs(card))];
  assert.deepEqual(
    shown.map((i) => [i.alt, i.loading, i.loaded, i.fit]),
    [
      ["Image 1 of 1 sent with the prompt", "lazy", true, "contain"],
      ["Image 1 of 3 from screenshot", "lazy", true, "contain"],
    ],
  );
  // One box for every image, whatever its shape: nothing moves when one loads.
  assert.deepEqual(shown.map((i) => [i.w, i.h]), [[240, 180], [240, 180]]);
  // The remote image: named, a link that says why it is not shown; never fetched.
  const notes = await card.locator(".image-note").allInnerTexts();
  assert.equal(notes.length, 2);
  assert.match(notes[0], /^Image 2 of 3 from screenshot: a remote image, not loaded: this page shows data: images only/);
  const link = card.locator(".image-note a");
  assert.equal(await link.getAttribute("href"), "https://images.example/chart.png");
  assert.equal(await link.getAttribute("rel"), "noopener noreferrer");
  assert.match(notes[1], /^Image 3 of 3 from screenshot: not drawn: not a data: or http\(s\) URL$/);
  assert.equal(await card.locator(".image-note a").count(), 1, "a javascript: URL is not a link");
  assert.deepEqual(remote, [], "the page fetched a remote image");
});

pageTest("playground: the composer takes images (the Attach image button, a paste, a drop), each with its remove button; they go with the prompt as image_url messages and come back after a reload; a refused type is named", async (page) => {
  await open(page);
  const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=", "base64");
  const alts = () => page.locator("#attachments img").evaluateAll((all) => all.map((i) => i.alt));

  // The button opens the file picker. It is a button of its own, in the
  // tab order, so Enter and Space open it too. (Pressed after a focus
  // here, Enter raced the page's own focus of the prompt once it loaded.)
  const attach = page.getByRole("button", { name: "Attach image" });
  assert.equal(await attach.count(), 1);
  assert.deepEqual(await attach.evaluate((b) => [b.tagName, b.tabIndex, b.disabled]), ["BUTTON", 0, false]);
  const [chooser] = await Promise.all([page.waitForEvent("filechooser"), attach.click()]);
  await chooser.setFiles([
    { name: "one.png", mimeType: "image/png", buffer: png },
    { name: "two.png", mimeType: "image/png", buffer: png },
  ]);
  await page.locator("#attachments img").nth(1).waitFor();
  assert.deepEqual(await alts(), ["Attached image 1: one.png", "Attached image 2: two.png"]);

  // A paste of an image file attaches it; the text stays the prompt's.
  await page.evaluate(() => {
    const gif = Uint8Array.from(atob("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"), (c) => c.charCodeAt(0));
    const dt = new DataTransfer();
    dt.items.add(new File([gif], "pasted.gif", { type: "image/gif" }));
    document.getElementById("prompt").dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
  });
  await page.locator("#attachments img").nth(2).waitFor();
  assert.deepEqual(await alts(), ["Attached image 1: one.png", "Attached image 2: two.png", "Attached image 3: pasted.gif"]);

  // A file of another type dropped on the composer is refused, named.
  await page.evaluate(() => {
    const dt = new DataTransfer();
    dt.items.add(new File(["<svg xmlns='http://www.w3.org/2000/svg'/>"], "logo.svg", { type: "image/svg+xml" }));
    document.getElementById("composer").dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
  });
  await page.locator("#note", { hasText: "logo.svg not attached: it is image/svg+xml; the composer takes PNG, JPEG, GIF and WebP images." }).waitFor();
  assert.equal(await page.locator("#attachments li").count(), 3);

  // Removed by keyboard: the focus goes to the remove button taking its place.
  await page.getByRole("button", { name: "Remove image 2: two.png" }).press("Enter");
  await page.locator("#attachments li").nth(2).waitFor({ state: "detached" });
  assert.deepEqual(await alts(), ["Attached image 1: one.png", "Attached image 2: pasted.gif"]);
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute("aria-label")), "Remove image 2: pasted.gif");

  // Sent with the prompt: drawn on it; the composer is empty again.
  await send(page, "help");
  await idle(page);
  assert.equal(await page.locator("#attachments").isHidden(), true);
  const prompt = page.locator("#transcript > .msg.prompt").last();
  const drawn = () =>
    prompt.locator("img").evaluateAll((all) => all.map((i) => [i.alt, i.src.slice(0, 22)]));
  const want = [
    ["Image 1 of 2 sent with the prompt", "data:image/png;base64,"],
    ["Image 2 of 2 sent with the prompt", "data:image/gif;base64,"],
  ];
  assert.deepEqual(await drawn(), want);

  // Stored: the Trace holds the prompt's text and one image_url record each.
  await page.click("#tab-trace");
  await page.locator("#trace li:last-child .type:text-is('request_end')").waitFor();
  assert.equal(await page.locator("#trace li .type:text-is('image_url')").count(), 2);
  await page.reload();
  await idle(page);
  await page.locator("#transcript > .msg.prompt img").nth(1).waitFor();
  assert.equal(await prompt.locator(".body").innerText(), "help");
  assert.deepEqual(await drawn(), want);
});

pageTest("playground: images pasted while a run is in flight go with the steering text, drawn with the delivered steering message; steering the run did not deliver gives its text and images back", async (page) => {
  await open(page);
  const paste = (name) =>
    page.evaluate((name) => {
      const png = Uint8Array.from(atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([png], name, { type: "image/png" }));
      document.getElementById("prompt").dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
    }, name);

  await send(page, "How long is store.go?");
  await decide(page, "list_files", "allow");
  await askCard(page, "count_lines").waitFor({ timeout: RUN });
  assert.equal(await page.locator("#send").innerText(), "Steer");
  await paste("screenshot.png");
  await page.locator("#attachments img").waitFor();
  await page.fill("#prompt", "look at this instead");
  await page.press("#prompt", "Enter");
  await page.locator('.chip:text("queued: look at this instead + 1 image(s)")').waitFor();
  assert.equal(await page.locator("#attachments").isHidden(), true, "the images went with the steering");
  assert.equal(await page.inputValue("#prompt"), "");
  await decide(page, "count_lines", "allow");
  await idle(page);
  assert.match(await lastReply(page), /You added: “look at this instead” with an image\./, "the model got the image with the text");
  const steering = page.locator("#transcript > .msg.user", { has: page.locator('.label:text("steering · delivered to the model")') });
  assert.equal(await steering.locator(".body").innerText(), "look at this instead");
  assert.deepEqual(
    await steering.locator("img").evaluateAll((all) => all.map((i) => [i.alt, i.src.slice(0, 22)])),
    [["Image 1 of 1 sent with the steering", "data:image/png;base64,"]],
  );
  assert.equal(await page.locator("#note").innerText(), "", "no note says the images stay");

  // Steering of images only, then Stop: its images come back.
  await send(page, "stream 3000");
  await paste("late.png");
  await page.locator("#attachments img").waitFor();
  await page.press("#prompt", "Enter");
  await page.locator('.chip:text("queued: 1 image(s)")').waitFor();
  assert.equal(await page.locator("#attachments").isHidden(), true);
  await page.click("#stop");
  await idle(page);
  assert.match(await page.locator("#note").innerText(), /1 steering message\(s\) not delivered: the run ended first\. Their images are back in the composer\./);
  assert.deepEqual(await page.locator("#attachments img").evaluateAll((all) => all.map((i) => i.alt)), ["Attached image 1: late.png"]);
});

// A model without vision (DeepSeek's answers 400 to any image): Settings
// say so for the OpenAI adapters and Anthropic's (DeepSeek's
// Anthropic-compatible API takes no images either), the composer says the
// images go as a text, and they do, the history's too once a session goes
// on with such a model; a model that takes images gets them again.
pageTest("playground: a model without vision: its images go as a text, said under the composer and in the header; a session going on with a model that takes them sends them again", async (page, ctx, log, t) => {
  const server = await modelServer(t);
  const url = `http://127.0.0.1:${server.address().port}/v1`;
  await open(page);
  // The setting is offered for the OpenAI adapters and Anthropic, not for the scripted demo.
  await page.click("#open-settings");
  for (const [provider, shown] of [["openai-compatible", true], ["openai", true], ["openai-responses", true], ["anthropic", true], ["scripted", false]]) {
    await page.selectOption("#set-provider", provider);
    assert.equal(await page.locator("#set-images").isVisible(), shown, provider);
  }
  assert.equal(await page.isChecked("#set-images"), true, "a model takes images by default");
  await page.click("#settings-cancel");

  await configure(page, { provider: "openai-compatible", baseURL: url, model: "deepseek-chat", images: false });
  assert.match(await page.locator("#model-label").innerText(), /deepseek-chat · no images/);
  assert.equal(JSON.parse(await page.evaluate(() => localStorage.getItem("floe-playground:settings"))).noImages, true);
  const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=", "base64");
  assert.equal(await page.locator("#attach-hint").isVisible(), false);
  await page.setInputFiles("#attach-file", { name: "shot.png", mimeType: "image/png", buffer: png });
  await page.locator("#attachments img").waitFor();
  assert.equal(await page.locator("#attach-hint").innerText(), "This session's model takes no images (Settings): they are stored with your message, and the model gets the text “[image not sent: the model takes no images]” in their place.");
  const id = await shownID(page);
  await send(page, "What is in the picture?");
  await idle(page);
  assert.equal(await page.locator("#attach-hint").isVisible(), false, "the hint stays with no image attached");
  const sent = JSON.stringify(server.requests.at(-1).body.messages);
  assert.match(sent, /\[image not sent: the model takes no images\]/);
  assert.doesNotMatch(sent, /data:image\/png/, "an image reached a model without vision");
  assert.ok((await page.locator("#transcript img").count()) > 0, "the prompt's image is not drawn");

  // A model that takes images: the session reopened sends its image.
  await configure(page, { provider: "openai-compatible", baseURL: url, model: "gpt-4o", images: true });
  assert.doesNotMatch(await page.locator("#model-label").innerText(), /no images/);
  await page.setInputFiles("#attach-file", { name: "shot.png", mimeType: "image/png", buffer: png });
  await page.locator("#attachments img").waitFor();
  assert.equal(await page.locator("#attach-hint").isVisible(), false, "a model with vision gets the hint");
  await page.locator('#attachments button[data-index="0"]').click();
  await rowOf(page, id).locator(".session-open").click();
  await page.locator("#transcript > .notice", { hasText: "Resumed from storage" }).waitFor();
  assert.doesNotMatch(await page.locator("#note").innerText(), /takes no images/);
  await send(page, "Look again.");
  await idle(page);
  assert.match(JSON.stringify(server.requests.at(-1).body.messages), /data:image\/png/, "the image did not reach a model that takes images");

  // Back to the model without vision: the session reopened says its image goes as a text.
  await configure(page, { provider: "openai-compatible", baseURL: url, model: "deepseek-chat", images: false });
  await rowOf(page, id).locator(".session-open").click();
  await page.locator("#transcript > .notice", { hasText: "Resumed from storage" }).last().waitFor();
  await page.locator("#note", { hasText: "Its model takes no images (Settings): the 1 image(s) of this session go to it as a text" }).waitFor();
  await send(page, "And now?");
  await idle(page);
  assert.doesNotMatch(JSON.stringify(server.requests.at(-1).body.messages), /data:image\/png/);

  // Through Anthropic's Messages API (DeepSeek's Anthropic-compatible
  // endpoint): the image goes as the same text, its bytes not at all.
  const messages = await replayServer(t, (req, res) => writeResponse(res, { status: 200, headers: SSE_HEADERS, body: anthropicStream({ text: ["A picture."] }) }), { cors: new URL(baseURL()).origin });
  await configure(page, { provider: "anthropic", baseURL: messages.url + "/v1", model: "deepseek-chat", key: "sk-x", images: false });
  assert.match(await page.locator("#model-label").innerText(), /deepseek-chat · no images/);
  await page.setInputFiles("#attach-file", { name: "shot.png", mimeType: "image/png", buffer: png });
  await page.locator("#attachments img").waitFor();
  assert.match(await page.locator("#attach-hint").innerText(), /takes no images \(Settings\)/);
  await send(page, "What is in it?");
  await idle(page);
  assert.equal(await lastReply(page), "A picture.");
  const toAnthropic = JSON.parse(messages.requests.at(-1).body).messages;
  assert.match(JSON.stringify(toAnthropic), /\[image not sent: the model takes no images\]/);
  assert.doesNotMatch(JSON.stringify(toAnthropic), /"type":"image"|iVBORw0KGgo/, "an image reached a model without vision");
});

// A chat template that opens the thinking (DeepSeek-R1's, QwQ's: the
// prompt ends in <think>) has the reply "reasoning…</think>answer":
// Settings say so for the OpenAI adapters, kept with the others, and the
// reply shows as thinking, then text, through Chat Completions and the
// Responses API; without it, all text.
pageTest("playground: a chat template that opens the thinking: Settings say so, kept; the reply is thinking until its </think>", async (page, ctx, log, t) => {
  const reply = "Okay, the user greets me.</think>\n\nHi there.";
  const server = await chatServer(t, (server, req, body, res, sse) => {
    server.requests.push(req.url);
    res.writeHead(200, { ...sse.cors, "content-type": "text/event-stream" });
    if (req.url.endsWith("/responses")) {
      const ev = (o) => `data: ${JSON.stringify(o)}\n\n`;
      res.write(ev({ type: "response.output_text.delta", output_index: 0, content_index: 0, delta: reply.slice(0, 20) }));
      res.write(ev({ type: "response.output_text.delta", output_index: 0, content_index: 0, delta: reply.slice(20) }));
      return res.end(ev({ type: "response.completed", response: { status: "completed", output: [], usage: { input_tokens: 12, output_tokens: 4, total_tokens: 16 } } }));
    }
    res.write(sse({ choices: [{ index: 0, delta: { role: "assistant", content: reply.slice(0, 20) }, finish_reason: null }] }));
    res.write(sse({ choices: [{ index: 0, delta: { content: reply.slice(20) }, finish_reason: "stop" }] }));
    sse.end(res);
  });
  const url = `http://127.0.0.1:${server.address().port}/v1`;
  await open(page);
  await page.click("#open-settings");
  for (const [provider, shown] of [["openai-compatible", true], ["openai", true], ["openai-responses", true], ["anthropic", false], ["scripted", false]]) {
    await page.selectOption("#set-provider", provider);
    assert.equal(await page.locator("#set-opened").isVisible(), shown, provider);
  }
  assert.equal(await page.isChecked("#set-opened"), false, "off by default");
  await page.click("#settings-cancel");

  const thinking = () => page.locator("#transcript > details.thinking");
  for (const provider of ["openai-compatible", "openai-responses"]) {
    await configure(page, { provider, baseURL: url, model: "qwq", opened: true });
    assert.match(await page.locator("#model-label").innerText(), /qwq · starts in thinking$/);
    await send(page, "Hello.");
    await idle(page);
    assert.equal(await lastReply(page), "Hi there.", provider);
    assert.equal(await thinking().count(), 1, provider);
    assert.match(await thinking().textContent(), /Okay, the user greets me\.$/, provider);
  }
  assert.deepEqual(server.requests, ["/v1/chat/completions", "/v1/responses"]);
  // Kept with the other settings: a reload shows it ticked.
  assert.equal(JSON.parse(await page.evaluate(() => localStorage.getItem("floe-playground:settings"))).startsInThinking, true);
  await page.reload();
  await idle(page);
  await page.click("#open-settings");
  assert.equal(await page.isChecked("#set-opened"), true, "the setting is not kept");
  await page.click("#settings-cancel");

  // Unticked: the reply is all text, </think> and all.
  await configure(page, { provider: "openai-compatible", baseURL: url, model: "qwq", opened: false });
  assert.doesNotMatch(await page.locator("#model-label").innerText(), /starts in thinking/);
  await send(page, "Hello.");
  await idle(page);
  assert.equal(await thinking().count(), 0);
  assert.match(await lastReply(page), /^Okay, the user greets me\.<\/think>\s+Hi there\.$/);
});

// The system prompt of a new real-model session is Settings'; a session
// keeps the prompt it was made with (a resume reads it from its Trace's
// session_meta, ENGINE.md E-17.1), whatever Settings say later, and the
// Settings dialog shows the prompt of the session shown.
pageTest("playground: Settings give a new session's system prompt; a session reopened keeps its own; the dialog shows the prompt of the session shown", async (page, ctx, log, t) => {
  const server = await modelServer(t);
  const url = `http://127.0.0.1:${server.address().port}/v1`;
  await open(page);
  await page.click("#open-settings");
  assert.match(await page.locator("#set-current-prompt").textContent(), /^You are the Floe playground's scripted model/);
  await page.selectOption("#set-provider", "openai-compatible");
  assert.match(await page.getAttribute("#set-system-prompt", "placeholder"), /^You are an agent working in the Floe playground/);
  await page.click("#settings-cancel");

  await configure(page, { provider: "openai-compatible", baseURL: url, model: "test-model", systemPrompt: "Answer in French." });
  const french = await shownID(page);
  await send(page, "Say hello");
  await idle(page);
  assert.deepEqual(server.requests.at(-1).body.messages[0], { role: "system", content: "Answer in French." });
  assert.equal(JSON.parse(await page.evaluate(() => localStorage.getItem("floe-playground:settings"))).systemPrompt, "Answer in French.");

  await configure(page, { provider: "openai-compatible", baseURL: url, model: "test-model", systemPrompt: "Answer in German." });
  await send(page, "Say hello");
  await idle(page);
  assert.equal(server.requests.at(-1).body.messages[0].content, "Answer in German.");
  await page.click("#open-settings");
  assert.equal(await page.locator("#set-current-prompt").textContent(), "Answer in German.");
  await page.click("#settings-cancel");

  // The first session, reopened (after a reload too), keeps its own.
  await page.reload();
  await idle(page);
  await rowOf(page, french).locator(".session-open").click();
  await page.locator("#transcript > .notice", { hasText: "Resumed from storage" }).waitFor();
  await send(page, "Again");
  await idle(page);
  assert.equal(server.requests.at(-1).body.messages[0].content, "Answer in French.");
  await page.click("#open-settings");
  assert.equal(await page.locator("#set-current-prompt").textContent(), "Answer in French.");
  assert.equal(await page.inputValue("#set-system-prompt"), "Answer in German.", "Settings keep the prompt for new sessions");
  // Emptied: the playground's own prompt again.
  await page.fill("#set-system-prompt", "  ");
  await page.click("#settings-save");
  await page.locator("#settings").waitFor({ state: "hidden" });
  await page.click("#reset");
  await send(page, "Say hello");
  await idle(page);
  assert.match(server.requests.at(-1).body.messages[0].content, /^You are an agent working in the Floe playground/);
});

// Settings that the browser's local storage refuses to keep (full: a long
// system prompt, a demo script) apply to the page, and the note says they
// are not kept after a reload.
pageTest("playground: Settings that local storage refuses apply to the page and the note says they are not kept", async (page) => {
  await open(page);
  await page.evaluate(() => {
    const set = Storage.prototype.setItem;
    Storage.prototype.setItem = function (key, value) {
      if (key === "floe-playground:settings") throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
      return set.call(this, key, value);
    };
  });
  await page.click("#open-settings");
  await page.fill("#set-compact-tokens", "5000");
  await page.click("#settings-save");
  await page.locator("#settings").waitFor({ state: "hidden" });
  await page.locator("#note", { hasText: "Settings apply to the next new session, but are not kept after a reload (this browser's local storage refused to keep it: The quota has been exceeded.)" }).waitFor();
  await page.click("#open-settings");
  assert.equal(await page.inputValue("#set-compact-tokens"), "5000", "the page uses them");
  await page.click("#settings-cancel");
  assert.equal(await page.evaluate(() => localStorage.getItem("floe-playground:settings")), null);
});

pageTest("playground: with local storage full, a rename is kept for the page and the note says so; a new session works", async (page) => {
  // Titles, the session to reopen and import times went to local storage
  // unguarded: its refusal was a panic, with its Go stack, on the page.
  await open(page);
  await send(page, "echo: one");
  await idle(page);
  await page.evaluate(() => {
    Storage.prototype.setItem = function () {
      throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
    };
  });
  await showSessions(page);
  await page.locator("#sessions li.session [data-do=rename]").first().click();
  await page.fill(".rename-input", "Kept for the page");
  await page.press(".rename-input", "Enter");
  await page.locator("#sessions .title", { hasText: "Kept for the page" }).waitFor();
  await page.locator("#note", { hasText: "Renamed, but the title is not kept after a reload (this browser's local storage refused to keep it: The quota has been exceeded.)" }).waitFor();
  await page.click("#reset");
  await send(page, "echo: two");
  await idle(page);
  assert.equal(await lastReply(page), "two");
  assert.equal(await page.locator("#error").isVisible(), false, await page.locator("#error").innerText());
});

pageTest("playground: a tool output is cut by characters: 700 Japanese ones (2,100 bytes) are shown whole, without \"show all\"; 1,300 are cut", async (page) => {
  // Cut by bytes, the first had a "show all" that showed nothing more.
  await open(page);
  const output = async (n) => {
    await send(page, `js: "あ".repeat(${n})`);
    await decide(page, "run_js", "allow");
    await idle(page);
    return page.locator("#transcript > .card").last();
  };
  let card = await output(700);
  assert.ok((await card.locator(".output").innerText()).includes("あ".repeat(700)));
  assert.equal(await card.locator('button.more[data-part="output"]').isVisible(), false, "show all over an output shown whole");
  card = await output(1300);
  assert.ok(!(await card.locator(".output").innerText()).includes("あ".repeat(1200)), "1,300 characters shown uncut");
  await card.locator('button.more[data-part="output"]', { hasText: "show all" }).click();
  await card.locator('button.more[data-part="output"]', { hasText: "show less" }).waitFor();
  assert.ok((await card.locator(".output").innerText()).includes("あ".repeat(1300)));
});

// An imported session's last activity is its last record's time, not the
// import's (the time the store gives it): the list sorts it by when it
// was last used, across a reload, until it is used again.
pageTest("playground: an imported session is listed by the time of its last record until it is used again", async (page) => {
  await open(page);
  const current = await shownID(page);
  await send(page, "echo: today");
  await idle(page);
  await rowOf(page, current).waitFor();
  const old = "session-2024-01-02-12-00-00-0badcafe";
  const meta = { timestamp: "2024-01-02T12:00:00.000Z", type: "session_meta", payload: { session_id: old, provider: "floe-playground", model_id: "scripted", model_context_window: 32000, system_prompt: "You are the Floe playground's scripted model. Explore the workspace with its tools, then report.", agent_state: "memory", workspace: "opfs://workspace" } };
  const prompt = { timestamp: "2024-01-02T12:30:00.000Z", type: "model_msg", payload: { type: "text", role: "user", text: "An old question", stop_reason: "completed" } };
  const body = [meta, prompt].map((m) => JSON.stringify(m) + "\n").join("");
  await page.setInputFiles("#import", { name: `${old}_001.jsonl`, mimeType: "application/jsonl", buffer: Buffer.from(body) });
  await page.locator("#note", { hasText: `Imported ${old}.` }).waitFor();
  const order = () => page.locator("#sessions li.session").evaluateAll((all) => all.map((li) => li.dataset.sessionId));
  await page.waitForFunction((n) => document.querySelectorAll("#sessions li.session").length === n, 2);
  assert.deepEqual(await order(), [current, old], "the imported session is listed as used now");
  assert.match(await rowOf(page, old).locator(".when").innerText(), /^Jan 2 /);
  await page.reload();
  await idle(page);
  await rowOf(page, old).waitFor();
  assert.deepEqual(await order(), [current, old]);
  assert.match(await rowOf(page, old).locator(".when").innerText(), /^Jan 2 /);
  // Used again: now its last activity.
  await rowOf(page, old).locator(".session-open").click();
  await page.locator("#transcript > .notice", { hasText: "Resumed from storage" }).waitFor();
  await send(page, "echo: again");
  await idle(page);
  await page.waitForFunction((id) => document.querySelector("#sessions li.session")?.dataset.sessionId === id, old);
  assert.doesNotMatch(await rowOf(page, old).locator(".when").innerText(), /^Jan 2 /);
  assert.equal(await page.evaluate(() => localStorage.getItem("floe-playground:imported")), "{}");
});

// An import over its bound (MaxImportBytes, 128 MiB) is refused before a
// byte of it is read, naming the file, its size and the bound; the
// sessions imported before stay. The page read a chosen file whole, and
// one of hundreds of MB ran it out of memory. The File is 129 parts of one
// 1 MiB Blob, which the browser shares rather than copies.
pageTest("playground: an import over its bound is refused before it is read, naming the file, its size and the bound; what was imported stays", async (page) => {
  await open(page);
  const old = "session-2024-01-02-12-00-00-0badcafe";
  const meta = { timestamp: "2024-01-02T12:00:00.000Z", type: "session_meta", payload: { session_id: old, provider: "floe-playground", model_id: "scripted", model_context_window: 32000, system_prompt: "You are the Floe playground's scripted model.", agent_state: "memory", workspace: "opfs://workspace" } };
  const prompt = { timestamp: "2024-01-02T12:30:00.000Z", type: "model_msg", payload: { type: "text", role: "user", text: "An old question", stop_reason: "completed" } };
  const body = [meta, prompt].map((m) => JSON.stringify(m) + "\n").join("");
  await page.setInputFiles("#import", { name: `${old}_001.jsonl`, mimeType: "application/jsonl", buffer: Buffer.from(body) });
  await page.locator("#note", { hasText: `Imported ${old}.` }).waitFor();
  const big = "session-2024-01-03-12-00-00-0badcafe_001.jsonl";
  await page.evaluate((name) => {
    const mib = new Blob([new Uint8Array(1 << 20)]);
    const dt = new DataTransfer();
    dt.items.add(new File(Array(129).fill(mib), name));
    const input = document.querySelector("#import");
    input.files = dt.files;
    input.dispatchEvent(new Event("change"));
  }, big);
  const note = page.locator("#note", { hasText: "Import refused" });
  await note.waitFor({ timeout: RUN });
  const want = `Import refused: "${big}" is 135266304 bytes (129.0 MiB), over the 134217728 bytes (128 MiB) an import reads: nothing was imported`;
  assert.ok((await note.innerText()).includes(want), await note.innerText());
  await showSessions(page);
  await rowOf(page, old).waitFor();
  await page.reload();
  await idle(page);
  await rowOf(page, old).waitFor();
});

// holdCompletions holds back the page's news that an IndexedDB
// transaction of the given mode completed, until window.__release();
// window.__busy counts the transactions whose news has not been handled.
async function holdCompletions(page, mode) {
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

// A stored session's open that the user's next choice made stale (New
// session clicked while its Trace was read) is dropped: the open landed
// after the new session was shown and replaced it. The test holds back the
// news that IndexedDB's reads completed until the new session is shown,
// then lets them through and waits until none is left, each one's handler
// (and the Go code it wakes) having run.
pageTest("playground: New session clicked while a stored session is opened wins: the open, stale, is dropped", async (page) => {
  await open(page);
  const first = await shownID(page);
  await send(page, "echo: first");
  await idle(page);
  await showSessions(page);
  await rowOf(page, first).waitFor();
  await page.click("#reset");
  await page.waitForFunction((id) => document.querySelector("#session-id").textContent !== id, first);
  await holdCompletions(page, "readonly");
  await rowOf(page, first).locator(".session-open").click();
  await page.locator("#note", { hasText: `Opening ${first}` }).waitFor();
  const before = await shownID(page);
  await page.click("#reset");
  await page.waitForFunction((id) => document.querySelector("#session-id").textContent !== id, before);
  const chosen = await shownID(page);
  await page.evaluate(() => window.__release());
  await page.waitForFunction(() => window.__busy === 0, null, { timeout: RUN });
  await idle(page);
  assert.equal(await shownID(page), chosen, "the stale open replaced the new session");
  assert.equal(await page.locator("#transcript > .notice", { hasText: "Resumed from storage" }).count(), 0);
});

// An export while a run is in flight holds every record the run made
// until then: it read the store past the records still on their way to
// it. The test holds back the page's news that a write to IndexedDB
// completed, so that the records the run makes meanwhile wait in the page;
// it lets the news through once the export is done (without the fix) or
// once the page says it waits for those records.
pageTest("playground: an export during a run holds the records not yet stored, and says it was made during the run", async (page, ctx, log, t) => {
  await open(page);
  const id = await shownID(page);
  await send(page, "How long is store.go?");
  await askCard(page, "list_files").waitFor({ timeout: RUN });
  await rowOf(page, id).waitFor();
  await holdCompletions(page, "readwrite");
  await decide(page, "list_files", "allow");
  await askCard(page, "count_lines").waitFor({ timeout: RUN });
  const [download] = await Promise.all([
    page.waitForEvent("download", { timeout: RUN }),
    (async () => {
      await rowOf(page, id).locator('button:text("Export")').click();
      await page.locator("#note", { hasText: /^Export(ing|ed) / }).waitFor();
      await page.evaluate(() => window.__release());
    })(),
  ]);
  const dir = await mkdtemp(join(tmpdir(), "floe-export-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, download.suggestedFilename());
  await download.saveAs(file);
  const records = (await readFile(file, "utf8")).trim().split("\n").map((l) => JSON.parse(l));
  // The request's second call, made after the first one's approval (whose
  // record was on its way to the store when the test held it).
  const calls = records.filter((r) => r.payload.type === "tool_call").map((r) => r.payload.name);
  assert.deepEqual(calls, ["list_files", "count_lines"], "the export left out the records the run had made");
  await page.locator("#note", { hasText: `Exported ${id} (1 file(s)) during its run: every record until now; export again once the run ends for the rest.` }).waitFor();
  await decide(page, "count_lines", "allow");
  await idle(page);
});

// An export of the session shown before, right after switching to another
// one, holds the records of its last run: it read the store past the
// records still on their way to it (queued in the Batcher the page had
// let go). The test holds back the news of IndexedDB's writes, as the one
// above does, while the first session's last run ends and the page
// switches to a new session.
pageTest("playground: an export of the session shown before, right after a switch, holds its last records", async (page, ctx, log, t) => {
  await open(page);
  const id = await shownID(page);
  await send(page, "echo: first");
  await idle(page);
  await rowOf(page, id).waitFor();
  await holdCompletions(page, "readwrite");
  await send(page, "echo: the last words");
  await idle(page);
  await page.click("#reset");
  await otherSession(page, id);
  const [download] = await Promise.all([
    page.waitForEvent("download", { timeout: RUN }),
    (async () => {
      await rowOf(page, id).locator('button:text("Export")').click();
      await page.locator("#note", { hasText: /^Export(ing|ed) / }).waitFor();
      await page.evaluate(() => window.__release());
    })(),
  ]);
  const dir = await mkdtemp(join(tmpdir(), "floe-export-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, download.suggestedFilename());
  await download.saveAs(file);
  const records = (await readFile(file, "utf8")).trim().split("\n").map((l) => JSON.parse(l));
  const answers = records.filter((r) => r.payload.type === "text" && r.payload.role === "assistant").map((r) => r.payload.text);
  assert.deepEqual(answers, ["first", "the last words"], "the export left out the last run's records");
  await page.locator("#note", { hasText: `Exported ${id} (1 file(s)).` }).waitFor();
});

// A teacher's demo script, loaded from a file in Settings: a bad file is
// refused naming its rule, line and field; the example file answers the
// prompts it matches (thinking, answer, two tool calls each approved, then
// its text), and is kept over a reload; cleared, the scripted demo answers
// from its own script again.
pageTest("playground: a demo script loaded in Settings answers the prompts it matches; a bad one is refused naming the rule; kept over a reload; cleared", async (page, ctx, log, t) => {
  await open(page);
  const dir = await mkdtemp(join(tmpdir(), "floe-demo-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const bad = join(dir, "lesson.json");
  await writeFile(bad, JSON.stringify([{ match: "a", say: "b" }, { match: "c", calls: [{ tool: "rm_rf" }] }], null, 2));
  await page.click("#open-settings");
  await page.locator("#set-demo-status", { hasText: "None: the scripted demo answers from its own script." }).waitFor();
  await page.setInputFiles("#set-demo-file", bad);
  await page.locator("#set-demo-file-error", { hasText: 'lesson.json: rule 2 (line 6): calls[0].tool: unknown tool "rm_rf"' }).waitFor();
  await page.setInputFiles("#set-demo-file", fileURLToPath(new URL("../../examples/playground-demo.json", import.meta.url)));
  await page.locator("#set-demo-status", { hasText: "Loaded: playground-demo.json, 3 rule(s)." }).waitFor();
  assert.equal(await page.locator("#set-demo-file-error").isVisible(), false, "the refusal stays");
  await page.click("#settings-cancel");
  // The session shown was empty: the script answers in a new one at once.
  await page.locator("#note", { hasText: "Demo script playground-demo.json loaded (3 rule(s))." }).waitFor();
  assert.match(await page.locator("#model-label").innerText(), /scripted demo \(offline\) · demo script playground-demo\.json/);

  await send(page, "How long is the store?");
  await decide(page, "read_file", "allow");
  await decide(page, "count_lines", "allow");
  await idle(page);
  assert.match(await lastReply(page), /^That was two tool calls: read_file returned the file and count_lines counted it\./);
  assert.match(await page.locator('#transcript > .msg.text[data-kind="text"] .body').first().innerText(), /^Let me open it and count its lines\.$/);
  assert.match(await page.locator('#transcript > .card[data-call-id="call_1_1"] .output').innerText(), /Package store keeps notes/);
  await page.locator("#transcript details.thinking", { hasText: "The student wants to see tools at work" }).waitFor();

  await page.reload();
  await idle(page);
  assert.match(await page.locator("#model-label").innerText(), /demo script playground-demo\.json/);
  await send(page, "What is a tool call?");
  await idle(page);
  assert.match(await lastReply(page), /^A tool call is the model asking the program around it/);

  await page.click("#open-settings");
  await page.locator("#set-demo-status", { hasText: "Loaded: playground-demo.json, 3 rule(s)." }).waitFor();
  await page.click("#set-demo-clear");
  await page.locator("#set-demo-status", { hasText: "None:" }).waitFor();
  await page.click("#settings-cancel");
  await page.locator("#note", { hasText: "Demo script cleared. It applies to the next new session." }).waitFor();
  assert.equal(await page.evaluate(() => localStorage.getItem("floe-playground:demo")), null);
  await page.click("#reset");
  await page.locator("#model-label", { hasText: /^Model: scripted demo \(offline\)$/ }).waitFor();
  await send(page, "What is a tool call?");
  await decide(page, "list_files", "deny");
  await decide(page, "count_lines", "deny");
  await idle(page);
});

// Safari before 26 (iOS 17 and 18 too) has the private file system but no
// FileSystemFileHandle.createWritable: a page cannot write a file there.
// The workspace is kept in memory, as without OPFS, and the demo's files
// are there: they were seeded into a directory no write reached, an empty
// workspace, and every write_file failed.
pageTest("playground: an OPFS without createWritable (Safari before 26): the workspace is in memory, seeded and writable, and the page says so", async (page) => {
  await page.addInitScript(() => {
    delete FileSystemFileHandle.prototype.createWritable;
  });
  await open(page);
  assert.equal(await page.locator("#tab-files").innerText(), "Files · in memory");
  assert.ok(await page.locator("#intro-memory").isVisible(), "no note in the intro");
  await page.click("#tab-files");
  await page.locator('#files [data-path="internal/store/store.go"]').waitFor();
  await send(page, "write notes/todo.md: # Todo");
  await decide(page, "write_file", "allow");
  await idle(page);
  await page.locator('#files [data-path="notes/todo.md"]').waitFor();
  assert.doesNotMatch(await page.locator("#transcript > .card .output").last().innerText(), /createWritable|error/i);
});

// Where the browser refuses the page its private file system (Firefox's
// private windows, WebKit's ephemeral sessions), the workspace is kept in memory: the page says so
// where the workspace is shown, not only in the console.
pageTest("playground: without OPFS the page says the workspace is in memory and its files last until a reload", async (page, ctx) => {
  await page.addInitScript(() => {
    navigator.storage.getDirectory = () => Promise.reject(new DOMException("The operation is insecure.", "SecurityError"));
  });
  await open(page);
  const note = "the workspace is kept in memory, and its files last until the page is closed or reloaded.";
  assert.ok(await page.locator("#intro-memory").isVisible(), "no note in the intro");
  assert.match(await page.locator("#intro-memory").innerText(), new RegExp(note.replace(/[.]/g, "\\.")));
  assert.equal(await page.locator("#intro-workspace").innerText(), "kept in memory");
  assert.equal(await page.locator("#tab-files").innerText(), "Files · in memory");
  await page.click("#tab-files");
  assert.equal(await page.locator("#files-memory").getAttribute("role"), "note");
  assert.ok(await page.locator("#files-memory").isVisible(), "no note in the Files panel");
  assert.match(await page.locator("#files-memory").innerText(), /these files last until the page is closed or reloaded/);
  // With OPFS: none of it.
  await page.close();
  const other = await ctx.newPage();
  await open(other);
  assert.equal(await other.locator("#intro-memory").isVisible(), false);
  assert.equal(await other.locator("#tab-files").innerText(), "Files");
  await other.click("#tab-files");
  assert.equal(await other.locator("#files-memory").isVisible(), false);
  assert.match(await other.locator("#files-hint").innerText(), /Origin Private File System/);
});

// Deleting a workspace file removes the directories it leaves empty: a
// write_file of such a directory's path then writes the file, as in the
// in-memory workspace. OPFS kept "notes" after notes/a.md was deleted, and
// writing "notes" failed, "not a file". An empty directory left by an
// earlier version gives way to a file too; one that holds a file does not.
pageTest("playground: deleting a workspace file removes the directories it leaves empty; a file may take an empty directory's path", async (page) => {
  await open(page);
  const entries = (dir) =>
    page.evaluate(async (dir) => {
      let d = await (await navigator.storage.getDirectory()).getDirectoryHandle("workspace");
      for (const s of dir ? dir.split("/") : []) d = await d.getDirectoryHandle(s);
      const out = [];
      for await (const [name, h] of d.entries()) out.push(name + (h.kind === "directory" ? "/" : ""));
      return out.sort();
    }, dir);
  const run = async (prompt, tool) => {
    await send(page, prompt);
    await decide(page, tool, "allow");
    await idle(page);
    return page.locator("#transcript > .card .output").last().innerText();
  };
  assert.match(await run("write notes/deep/a.md: one", "write_file"), /wrote 3 bytes to notes\/deep\/a\.md/);
  assert.match(await run("write notes/b.md: two", "write_file"), /wrote 3 bytes to notes\/b\.md/);
  assert.match(await run("delete notes/deep/a.md", "delete_file"), /deleted notes\/deep\/a\.md/);
  assert.deepEqual(await entries("notes"), ["b.md"], "notes/deep is left behind");
  assert.match(await run("delete notes/b.md", "delete_file"), /deleted notes\/b\.md/);
  assert.ok(!(await entries("")).includes("notes/"), "notes is left behind");
  assert.match(await run("write notes: three", "write_file"), /wrote 5 bytes to notes/);
  assert.ok((await entries("")).includes("notes"));
  // An empty directory left behind before: the file takes its path.
  await page.evaluate(async () => {
    const w = await (await navigator.storage.getDirectory()).getDirectoryHandle("workspace");
    await w.getDirectoryHandle("old", { create: true });
  });
  assert.match(await run("write old: four", "write_file"), /wrote 4 bytes to old/);
  assert.ok((await entries("")).includes("old"));
  // A directory that holds a file is no file's.
  assert.match(await run("write internal: five", "write_file"), /not a file: "internal" is a directory/);
  assert.deepEqual(await entries("internal"), ["store/", "web/"]);
  await page.click("#tab-files");
  await page.locator('#files [data-path="notes"]').waitFor();
  await page.locator('#files [data-path="old"]').waitFor();
});

// Markdown nested thousands deep (">" 5,000 times: 5 KB) was drawn as
// as many nested elements, and Chromium's tab crashed laying them out:
// past 64 levels, quotes, lists and emphasis are drawn flat.
pageTest("playground: a reply of Markdown nested 5,000 deep is drawn, 64 levels deep at most", async (page, ctx, log, t) => {
  const reply = ">".repeat(5000) + " deep quote";
  const server = await replayServer(t, (req, res) => writeResponse(res, { status: 200, headers: SSE_HEADERS, body: anthropicStream({ text: [reply] }) }), { cors: new URL(baseURL()).origin });
  await open(page);
  await configure(page, { provider: "anthropic", baseURL: server.url + "/v1", model: "claude-test", key: "sk-ant-x" });
  await send(page, "Nest");
  await idle(page);
  const body = page.locator("#transcript > .msg.text .body").last();
  assert.match(await body.innerText(), /deep quote/);
  const depth = await body.evaluate((b) => {
    let most = 0;
    for (const e of b.querySelectorAll("*")) {
      let n = 0;
      for (let x = e; x !== b; x = x.parentElement) n++;
      most = Math.max(most, n);
    }
    return most;
  });
  assert.ok(depth <= 64 + 4, `${depth} elements deep`);
});
