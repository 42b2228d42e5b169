// (d) The Manifest V3 example in examples/extension, loaded unpacked into
// headless Chromium as its README says to assemble it: its page runs a
// session under a CSP that adds only 'wasm-unsafe-eval' and resumes it when
// opened again; its background service worker runs the same agent for a
// page over a port, goes on when that page closes, and a run cut off by
// the worker's end resumes cleanly.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { awaitGlobal, explain, launch, ROOT, WAIT } from "./harness.mjs";
import { checkTrace, lostRecords, recordsOf } from "./trace-rules.mjs";
import { assemble, checkStream as checkRun, CSP, EXAMPLE, PAGE_SESSION, prompts, readmeFiles, WORKER_SESSION } from "./extension-example.mjs";

/**
 * The example plus the library files (but omit) and files, its manifest's
 * keys replaced by manifest's, loaded unpacked: { ctx, log, id, open, exportTrace, stopWorker }.
 */
async function loadExample(t, options) {
  const dir = await assemble(t, options);
  const { ctx, log } = await launch(t, {
    args: [`--disable-extensions-except=${dir}`, `--load-extension=${dir}`],
    ignoreDefaultArgs: ["--disable-extensions"],
  });
  const worker =
    ctx.serviceWorkers().find((w) => w.url().startsWith("chrome-extension://")) ??
    (await ctx
      .waitForEvent("serviceworker", { timeout: WAIT })
      .catch(() => assert.fail("the extension did not load: its service worker never started" + explain(log))));
  const id = new URL(worker.url()).host;
  const open = async (file) => {
    const page = await ctx.newPage();
    await page.goto(`chrome-extension://${id}/${file}`);
    return page;
  };
  // The Trace as exportSession gives it, read in an extension page.
  const exportTrace = async (page, session) =>
    page.evaluate(async (s) => (await (await import("./floe.mjs")).load()).exportSession(s), session);
  // Stops the service worker as Chrome does when it ends an idle one.
  const stopWorker = async () => {
    const cdp = await ctx.browser().newBrowserCDPSession();
    const { targetInfos } = await cdp.send("Target.getTargets");
    const sw = targetInfos.find((x) => x.type === "service_worker" && x.url.startsWith(`chrome-extension://${id}/`));
    assert.ok(sw, "no service worker target of the extension");
    await cdp.send("Target.closeTarget", { targetId: sw.targetId });
    await cdp.detach();
  };
  return { ctx, log, id, open, exportTrace, stopWorker };
}

// The stream of one run of the example's agent.
const checkStream = (messages, log) => checkRun(messages, explain(log));

// No console error, page error or CSP violation in the extension's pages and worker.
function checkQuiet(log) {
  const bad = log.filter((l) => /^(console\.error|page error)|Content Security Policy/i.test(l));
  assert.deepEqual(bad, [], "errors in the extension" + explain(log));
}

test("extension manifest: MV3, one module background for Chrome and Firefox, nothing looser than 'wasm-unsafe-eval'", async () => {
  const manifest = JSON.parse(await readFile(join(EXAMPLE, "manifest.json"), "utf8"));
  assert.equal(manifest.manifest_version, 3);
  assert.deepEqual(manifest.content_security_policy, { extension_pages: CSP });
  // Chrome runs service_worker, Firefox (no extension service workers)
  // runs scripts as an event page; each ignores the other key.
  assert.deepEqual(manifest.background, { service_worker: "background.js", scripts: ["background.js"], type: "module" });
  // Firefox keys an extension's storage by its id: without one, a
  // temporary add-on's is made from its folder's path.
  assert.match(manifest.browser_specific_settings?.gecko?.id ?? "", /^[\w.-]+@[\w.-]+$/);
});

test("extension: the library files its README copies in are ignored by git", async (t) => {
  // Copied as the README says, seven of the ten (the modules floe.mjs
  // imports) showed as new files of the repository, one `git add -A` away
  // from a commit.
  const git = spawnSync("git", ["rev-parse", "--is-inside-work-tree"], { cwd: ROOT, encoding: "utf8" });
  if (git.status !== 0) return t.skip("not a git checkout");
  const files = (await readmeFiles()).map((f) => join("examples/extension", f));
  const ignored = spawnSync("git", ["check-ignore", "--no-index", ...files], { cwd: ROOT, encoding: "utf8" });
  const listed = new Set(ignored.stdout.split("\n").filter(Boolean));
  assert.deepEqual(files.filter((f) => !listed.has(f)), [], "not ignored by git");
});

test("extension page runs a session", { timeout: 120_000 }, async (t) => {
  const { log, open } = await loadExample(t);
  const page = await open("session.html");
  const result = await awaitGlobal(page, "floeResult");
  assert.equal(result.error, undefined, `the session failed in the extension page: ${result.error}${explain(log)}`);
  checkStream(result.messages, log);
  assert.equal(result.resumed, false);
  assert.equal(await page.locator("#reply").innerText(), "Reversed: eolf");
  assert.equal(await page.locator("body").getAttribute("data-state"), "done");
  checkQuiet(log);
});

test("extension without floe.wasm: the page's error says where the file belongs", { timeout: 120_000 }, async (t) => {
  // An extension has no 404: a missing file fails the fetch, and the error
  // said only "Failed to fetch".
  const { log, open } = await loadExample(t, { omit: "floe.wasm" });
  const result = await awaitGlobal(await open("session.html"), "floeResult");
  assert.match(result.error ?? "", /load: fetching chrome-extension:\/\/\w+\/floe\.wasm: .*Put it next to floe\.mjs/, explain(log));
});

test("extension page opened again resumes its stored session", { timeout: 120_000 }, async (t) => {
  // The page used to create its session anew each time; with the id stored
  // already, the new session wrote nothing, and the second run was lost.
  const { log, open, exportTrace } = await loadExample(t);
  const first = await open("session.html");
  assert.equal((await awaitGlobal(first, "floeResult")).error, undefined, explain(log));
  await first.close();
  const page = await open("session.html");
  const result = await awaitGlobal(page, "floeResult");
  assert.equal(result.error, undefined, `the resumed session failed: ${result.error}${explain(log)}`);
  assert.equal(result.resumed, true);
  checkStream(result.messages, log);
  assert.match(await page.locator("#status").innerText(), /^Resumed session-/);
  const files = await exportTrace(page, PAGE_SESSION);
  assert.deepEqual(prompts(files), ["Reverse 'floe'.", "Reverse 'floe'."], "both runs are in the Trace");
  assert.deepEqual(checkTrace(files, { sessionId: PAGE_SESSION }), []);
  checkQuiet(log);
});

test("extension service worker runs the agent for a page; closing the page mid-run does not stop it", { timeout: 120_000 }, async (t) => {
  const { log, open, exportTrace } = await loadExample(t);
  const first = await open("panel.html");
  const allow = first.getByRole("button", { name: "Allow" });
  await allow.waitFor({ timeout: WAIT }).catch(() => assert.fail("panel.html asked for no approval" + explain(log)));
  // The worker holds the session's Web Lock as a tab does: a page cannot
  // resume the session while the worker runs it.
  const busy = await first.evaluate(async (s) => {
    const floe = await (await import("./floe.mjs")).load();
    return floe.resumeSession(s, { llm: { async *streamGenerate() {} } }).then(
      () => "resumed",
      (e) => `${e.code}: ${e.message}`,
    );
  }, WORKER_SESSION);
  assert.match(busy, /^session_busy: .*another tab or worker/);
  await first.close(); // mid-run: the worker waits for a decision
  const page = await open("panel.html");
  // The run in flight, from its start: its messages so far, then the question.
  await page.getByRole("button", { name: "Allow" }).click();
  const result = await awaitGlobal(page, "floeResult");
  assert.equal(result.error, undefined, `the worker's run failed: ${result.error}${explain(log)}`);
  checkStream(result.messages, log);
  // They crossed a port, which sends JSON: nothing was lost on the way.
  for (const m of result.messages) assert.deepEqual(JSON.parse(JSON.stringify(m)), m);
  assert.equal(await page.locator("#reply").innerText(), "Reversed: eolf");
  assert.equal(await page.locator("#approvals").innerText(), "", "the question is gone once decided");
  const files = await exportTrace(page, WORKER_SESSION);
  assert.deepEqual(prompts(files), ["Reverse 'floe'."]);
  assert.deepEqual(checkTrace(files, { sessionId: WORKER_SESSION }), []);
  checkQuiet(log);
});

test("extension service worker: a content script follows the worker's run over a port and gets the messages as the page does, and cannot drive it", { timeout: 120_000 }, async (t) => {
  // A content script of a web page connects as panel.html does; it keeps
  // what it got in the page's DOM, which both worlds share. It runs in
  // the web page's process, so what it sends is ignored: its deny and its
  // stop (which ended the run before) change nothing, and the panel's
  // Allow, clicked after them, decides the call.
  const follow = `const port = chrome.runtime.connect({ name: "floe" });
const got = [];
port.onMessage.addListener((msg) => {
  if (msg.message) got.push(msg.message);
  if (msg.approve) {
    port.postMessage({ decision: { key: msg.approve.key, decision: "deny" } });
    port.postMessage({ stop: true });
    document.documentElement.dataset.refused = "sent";
  }
  if (msg.end) document.documentElement.dataset.floe = JSON.stringify(got);
});
document.documentElement.dataset.connected = "yes";`;
  const { ctx, log, open } = await loadExample(t, {
    files: { "follow.js": follow },
    manifest: { content_scripts: [{ matches: ["http://floe.test/*"], js: ["follow.js"] }] },
  });
  await ctx.route("http://floe.test/**", (route) => route.fulfill({ contentType: "text/html", body: "<!doctype html><title>A web page</title>" }));
  const web = await ctx.newPage();
  await web.goto("http://floe.test/");
  await web.waitForFunction(() => document.documentElement.dataset.connected === "yes");
  const page = await open("panel.html");
  const allow = page.getByRole("button", { name: "Allow" });
  const ended = page.waitForFunction(() => ["done", "error", "disconnected"].includes(document.body.dataset.state), null, { timeout: WAIT }).then(() => "ended");
  ended.catch(() => {});
  const first = await Promise.race([allow.waitFor({ timeout: WAIT }).then(() => "asked"), ended]);
  assert.equal(first, "asked", "the run ended before the panel could allow its call: the content script's deny or stop was taken");
  await web.waitForFunction(() => document.documentElement.dataset.refused === "sent");
  // The content script's deny and stop were sent before the click.
  await allow.click();
  const result = await awaitGlobal(page, "floeResult");
  assert.equal(result.error, undefined, `the worker's run failed: ${result.error}${explain(log)}`);
  assert.equal(await page.locator("#reply").innerText(), "Reversed: eolf", "the panel's Allow decided the call");
  assert.ok(!result.messages.some((m) => m.payload.type === "abort"), "the content script's stop was ignored");
  await web.waitForFunction(() => document.documentElement.dataset.floe !== undefined);
  const got = JSON.parse(await web.evaluate(() => document.documentElement.dataset.floe));
  checkStream(got, log);
  assert.deepEqual(got, result.messages);
  checkQuiet(log);
});

test("extension service worker stopped mid-run: the page says so, the next run resumes the Trace cleanly", { timeout: 120_000 }, async (t) => {
  const { log, open, exportTrace, stopWorker } = await loadExample(t);
  const first = await open("panel.html");
  await first.getByRole("button", { name: "Allow" }).waitFor({ timeout: WAIT });
  // Records are stored off the run's path, in ordered batches: the first
  // may still be on its way when the approval is asked. Stopped before it,
  // the worker leaves no Trace, and there is nothing to resume.
  const deadline = Date.now() + WAIT;
  while (!(await exportTrace(first, WORKER_SESSION).then((f) => recordsOf(f).length > 0, () => false))) {
    assert.ok(Date.now() < deadline, "the run's first records were never stored" + explain(log));
  }
  await stopWorker();
  const cut = await awaitGlobal(first, "floeResult");
  assert.match(cut.error ?? "", /stopped mid-run/, "the page learns that the worker is gone" + explain(log));
  assert.equal(await first.locator("body").getAttribute("data-state"), "disconnected");
  const before = await exportTrace(first, WORKER_SESSION);
  assert.ok(recordsOf(before).length > 0, "the cut run stored its records");

  // Its Web Lock went with the worker: the next run resumes the session.
  const page = await open("panel.html");
  await page.getByRole("button", { name: "Allow" }).click();
  const result = await awaitGlobal(page, "floeResult");
  assert.equal(result.error, undefined, `the resumed run failed: ${result.error}${explain(log)}`);
  checkStream(result.messages, log);
  assert.match(await page.locator("#status").innerText(), /^Resumed session-/);
  const after = await exportTrace(page, WORKER_SESSION);
  assert.equal(lostRecords(recordsOf(before), recordsOf(after)), null);
  assert.deepEqual(checkTrace(after, { cut: recordsOf(before).length, sessionId: WORKER_SESSION }), []);
  assert.deepEqual(prompts(after), ["Reverse 'floe'.", "Reverse 'floe'."]);
});
