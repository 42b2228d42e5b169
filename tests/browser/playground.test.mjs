// The playground page (static/index.html + playground.wasm), driven as a
// person would: type, press Enter, click Allow/Deny, Stop, steer; the
// assertions read what is on screen. Every test runs in a fresh browser context; a
// failing test saves a screenshot in FLOE_SCREENSHOT_DIR. No test may log
// a console error or a page error. This file: a run's approvals, steering,
// Stop and retries; stored sessions across reloads and restarts; the
// composer's keys. The other playground-*.test.mjs files hold the rest,
// playground-lib.mjs what they share (the files run side by side).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { explain } from "./harness.mjs";
import { RUN, PAGE, shotsDir, clean, pageTest, open, idle, send, askCard, decide, lastReply, storedIDs, profile, storedPrompt, sessionRow, rowOf, shownID, otherSession } from "./playground-lib.mjs";

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
