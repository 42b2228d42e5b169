// (c) The playground page (static/index.html + playground.wasm): a prompt
// runs to the end with approvals clicked and steering delivered; Stop aborts
// a run waiting for approval; Deny reaches the model; New session clears.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { baseURL, explain, launch, page as firstPage, WAIT } from "./harness.mjs";

const RUN = 60_000; // bound of one paced playground run

// approve answers the approval the page is waiting for, on the card of tool.
async function approve(page, tool, decision) {
  const card = page.locator(".card.ask", { has: page.locator(".tool-name", { hasText: tool }) });
  await card.locator(`button[data-decision="${decision}"]`).click({ timeout: RUN });
}

async function send(page, prompt) {
  await page.locator('body[data-state="idle"]').waitFor({ timeout: RUN });
  await page.fill("#prompt", prompt);
  await page.press("#prompt", "Enter");
  await page.locator('body:not([data-state="idle"])').waitFor();
}

const idle = (page) => page.locator('body[data-state="idle"]').waitFor({ timeout: RUN });
const lastReply = (page) => page.locator('.msg.text[data-kind="text"] .body').last().innerText();

test("playground: prompt, approvals, steering, Stop, Deny, New session", { timeout: 240_000 }, async (t) => {
  const shots = process.env.FLOE_SCREENSHOT_DIR || (await mkdtemp(join(tmpdir(), "floe-shots-")));
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  await page.setViewportSize({ width: 1280, height: 860 });
  t.after(() => {
    const bad = log.filter((l) => l.startsWith("page error") || l.includes("Playground error"));
    assert.deepEqual(bad, [], "errors in the page" + explain(log));
  });
  try {
    await steps(t, page, shots, log);
  } catch (e) {
    await page.screenshot({ path: join(shots, "failure.png") }).catch(() => {});
    e.message += `\n(screenshot of the failure: ${join(shots, "failure.png")})` + explain(log);
    throw e;
  }
  t.diagnostic(`screenshots in ${shots}`);
});

async function steps(t, page, shots, log) {
  await page.goto(baseURL() + "/static/");
  await idle(page).catch((e) => assert.fail("the playground did not become idle: " + e.message + explain(log)));
  assert.match(await page.locator("#session-id").innerText(), /^session-\d{4}(-\d\d){5}-[0-9a-f]{8}$/);

  // 1. A full run: allow both tools, steer while the second waits.
  await send(page, "How long is store.go?");
  await approve(page, "list_files", "allow");
  await page.locator('.card.ask .tool-name:text("count_lines")').waitFor({ timeout: RUN });
  await page.screenshot({ path: join(shots, "1-approval.png") });
  await page.fill("#steer", "mention the tests");
  await page.press("#steer", "Enter");
  await page.locator('.chip:text("queued: mention the tests")').waitFor();
  await approve(page, "count_lines", "allow");
  await idle(page);
  const reply = await lastReply(page);
  assert.match(reply, /add up to \d+ lines/, "final reply" + explain(log));
  assert.match(reply, /You added: “mention the tests”/);
  assert.equal(await page.locator('.card .badge.status[data-status="completed"]').count(), 2);
  assert.equal(await page.locator('.card .badge.decision[data-decision="allow"]').count(), 2);
  assert.equal(await page.locator('.request[data-status="completed"]').count(), 2);
  await page.locator('.msg.user .label:text("steering · delivered to the model")').waitFor();
  assert.equal(await page.locator(".chip").count(), 0, "the steering chip stays after delivery");
  const n = Number(await page.locator("#stream-count").innerText());
  assert.ok(n > 40, `stream count ${n}`);
  await page.screenshot({ path: join(shots, "2-done.png") });

  // 2. Stop while the engine waits for approval: the run ends with abort.
  await send(page, "What is in this project?");
  await page.locator(".card.ask").waitFor({ timeout: RUN });
  await page.click("#stop");
  await idle(page);
  await page.locator('.notice:text("Run aborted: aborted by user")').waitFor();
  assert.equal(await page.locator(".card.ask").count(), 0, "approval buttons left after Stop");

  // 3. Deny reaches the model as a denial output.
  await send(page, "Count the lines of go.mod");
  await approve(page, "list_files", "deny");
  await approve(page, "count_lines", "allow");
  await idle(page);
  assert.match(await lastReply(page), /You denied list_files/);
  await page.screenshot({ path: join(shots, "3-deny.png") });

  // 4. New session: a fresh session id, an empty transcript and stream.
  const before = await page.locator("#session-id").innerText();
  await page.click("#reset");
  await page.waitForFunction((id) => document.getElementById("session-id").textContent !== id, before);
  await page.locator("#intro").waitFor();
  assert.equal(await page.locator("#transcript [data-kind]").count(), 0);
  assert.equal(await page.locator("#stream-count").innerText(), "0");
}
