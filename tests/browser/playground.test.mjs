// The playground page (static/index.html + playground.wasm), driven as a
// person would: type, press Enter, click Allow/Deny, Stop, steer; the
// assertions read what is on screen. Every test runs in a fresh profile; a
// failing test saves a screenshot in FLOE_SCREENSHOT_DIR. No test may log
// a console error or a page error.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, writeFile, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { baseURL, CHROMIUM, explain, FLAGS, launch, page as firstPage, WAIT } from "./harness.mjs";

const RUN = 60_000; // bound of one paced playground run
const PAGE = "/static/?pace=0.2"; // the scripted model at five times its normal speed

const shotsDir = async () => process.env.FLOE_SCREENSHOT_DIR || (await mkdtemp(join(tmpdir(), "floe-shots-")));

/** Fails on console errors and page errors. */
function clean(log) {
  const bad = log.filter((l) => l.startsWith("page error") || l.startsWith("console.error") || l.includes("Playground error"));
  assert.deepEqual(bad, [], "errors in the page" + explain(log));
}

/** Runs body(page, ctx, log) in a fresh browser; screenshot on failure. */
function pageTest(name, body, { viewport = { width: 1280, height: 860 }, timeout = 240_000 } = {}) {
  test(name, { timeout }, async (t) => {
    const { ctx, log } = await launch(t);
    const page = await firstPage(ctx);
    await page.setViewportSize(viewport);
    try {
      await body(page, ctx, log, t);
      clean(log);
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

async function send(page, prompt) {
  await idle(page);
  await page.fill("#prompt", prompt);
  await page.press("#prompt", "Enter");
  await page.locator('body:not([data-state="idle"])').waitFor();
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
  await open(page);
  // A scripted failure: the countdown runs, Retry now ends the wait.
  await send(page, "fail: echo: recovered");
  const retry = page.locator(".request .retry");
  await retry.locator(".countdown").waitFor({ timeout: RUN });
  assert.match(await retry.locator(".countdown").innerText(), /retrying in \d\.\d s/);
  await retry.locator('button:text("Retry now")').click();
  await idle(page);
  assert.equal(await lastReply(page), "recovered");
  assert.equal(await page.locator('.request[data-status="failed"]').count(), 1);

  // Compaction: the button, then one collapsed row.
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
  await page.click("#tab-files");
  await page.locator('#files [data-path="notes/todo.md"]').waitFor();
  await send(page, "read notes/todo.md");
  await decide(page, "read_file", "allow");
  await idle(page);
  assert.match(await page.locator('#transcript > .card', { has: page.locator('.tool-name:text("read_file")') }).locator(".output").innerText(), /# Todo\n\n- ship it/);
  await page.click('#files [data-path="notes/todo.md"]');
  await page.locator('#file-view:text("ship it")').waitFor();
  // An exact-match edit.
  await send(page, "edit notes/todo.md: ship it => ship it today");
  await decide(page, "edit_file", "allow");
  await idle(page);
  await page.locator('#file-view:text("ship it today")').waitFor();

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
