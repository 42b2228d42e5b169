// The Manifest V3 example in examples/extension in headless Firefox ESR,
// assembled as its README says and installed as a temporary add-on
// (WebDriver BiDi's webExtension.install). Firefox has no extension service
// workers: it runs the manifest's background.scripts as an event page, the
// same background.js. Its page runs a session under a CSP that adds only
// 'wasm-unsafe-eval', and a reload resumes it from IndexedDB; without
// floe.wasm, its error says where the file belongs; the event page runs
// the agent for panel.html over a port, holds the session's Web Lock, goes
// on when that page closes, a content script of a web page follows the run
// as the page does, and a run cut off by its suspension resumes cleanly.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { awaitGlobal, baseURL, bounded, explain, launch, WAIT, waitTrue } from "./harness.mjs";
import { checkTrace, lostRecords, recordsOf } from "../browser/trace-rules.mjs";
import { assemble, checkStream, EXAMPLE, PAGE_SESSION, prompts, WORKER_SESSION } from "../browser/extension-example.mjs";

// The moz-extension:// host of the example: Firefox gives an add-on a
// random one unless the profile's extensions.webextensions.uuids maps its
// id to one already.
const UUID = "f10e0e0e-0000-4000-8000-00000000e0e0";

/**
 * The example assembled (see assemble) and installed in a fresh Firefox:
 * { b, log, open, exportTrace, stopBackground }.
 */
async function loadExample(t, options) {
  const dir = await assemble(t, options);
  const { id } = JSON.parse(await readFile(join(EXAMPLE, "manifest.json"), "utf8")).browser_specific_settings.gecko;
  const b = await launch(t, {
    prefs: { "extensions.webextensions.uuids": JSON.stringify({ [id]: UUID }) },
    // WebDriver navigates only to web pages unless allowed system access.
    args: ["--remote-allow-system-access"],
  });
  const installed = await bounded(b.browser.installExtension(dir), WAIT, "installing the example").catch((e) =>
    assert.fail(`Firefox did not install the example: ${e.message}`),
  );
  assert.equal(installed, id, "the installed add-on's id");
  const open = async (file) => {
    const page = await b.newPage();
    const url = `moz-extension://${UUID}/${file}`;
    // puppeteer's goto does not settle for a moz-extension:// page (its
    // frame moves to the extension process): wait for the page instead.
    page.goto(url).catch(() => {});
    await waitTrue(page, (u) => location.href === u && document.readyState !== "loading", url, WAIT, `${file} did not open`);
    return page;
  };
  // The Trace as exportSession gives it, read in an extension page.
  const exportTrace = async (page, session) =>
    bounded(page.evaluate(async (s) => (await (await import("./floe.mjs")).load()).exportSession(s), session), WAIT, "exportSession");
  // Stops the event page as Firefox does when it suspends an idle one
  // (about:debugging's "Terminate background script" asks for the same).
  // The button's request goes out asynchronously (about:debugging first
  // asks for the add-on's actor, then for the termination): closed right
  // after the click, the page could be gone before the request was sent,
  // leaving the event page running and the panel's run waiting. The page
  // is closed once it shows the background script stopped.
  const stopBackground = async () => {
    const page = await b.newPage();
    page.goto("about:debugging#/runtime/this-firefox").catch(() => {});
    const button = ".qa-temporary-extension-terminate-bgscript-button";
    const status = ".qa-extension-backgroundscript-status";
    const failed = ".qa-temporary-extension-terminate-backgroundscript-error";
    await waitTrue(page, (s) => document.querySelectorAll(s).length === 1, button, WAIT, "about:debugging shows no Terminate background script button");
    await waitTrue(
      page,
      (s) => document.querySelector(s)?.classList.contains("extension-backgroundscript__status--running") === true,
      status,
      WAIT,
      "about:debugging does not show the background script running",
    );
    await page.evaluate((s) => document.querySelector(s).click(), button);
    await waitTrue(
      page,
      ([s, f]) => document.querySelector(f) !== null || document.querySelector(s)?.classList.contains("extension-backgroundscript__status--stopped") === true,
      [status, failed],
      WAIT,
      "about:debugging does not show the background script stopped after Terminate",
    );
    const error = await page.evaluate((f) => document.querySelector(f)?.textContent ?? null, failed);
    assert.equal(error, null, "about:debugging could not terminate the background script");
    await page.close();
  };
  return { b, log: b.log, open, exportTrace, stopBackground };
}

// The page shows no error. (WebDriver BiDi reports no console message of
// a moz-extension:// page here, so the tests check what the page shows.)
async function checkQuiet(page) {
  assert.equal(await page.evaluate(() => document.getElementById("error").textContent), "", "the page shows an error");
}

const text = (page, sel) => page.evaluate((s) => document.querySelector(s)?.innerText, sel);

/** Clicks the first Allow button of panel.html once it shows. */
async function allow(page, log) {
  await waitTrue(page, () => document.querySelector("#approvals button") !== null, null, WAIT, "panel.html asked for no approval" + explain(log));
  await page.evaluate(() => [...document.querySelectorAll("#approvals button")].find((b) => b.textContent === "Allow").click());
}

test("extension page in Firefox runs a session, and a reload resumes its Trace", { timeout: 120_000 }, async (t) => {
  const { log, open, exportTrace } = await loadExample(t);
  const page = await open("session.html");
  const first = await awaitGlobal(page, "floeResult");
  assert.equal(first.error, undefined, `the session failed in the extension page: ${first.error}${explain(log)}`);
  checkStream(first.messages, explain(log));
  assert.equal(first.resumed, false);
  assert.equal(await text(page, "#reply"), "Reversed: eolf");
  assert.equal(await page.evaluate(() => document.body.dataset.state), "done");

  await page.evaluate(() => {
    window.beforeReload = true;
    location.reload();
  });
  await waitTrue(page, () => window.beforeReload === undefined && window.floeResult !== undefined, null, WAIT, "session.html did not load again");
  const again = await awaitGlobal(page, "floeResult");
  assert.equal(again.error, undefined, `the resumed session failed: ${again.error}${explain(log)}`);
  assert.equal(again.resumed, true);
  checkStream(again.messages, explain(log));
  assert.match(await text(page, "#status"), /^Resumed session-/);
  const files = await exportTrace(page, PAGE_SESSION);
  assert.deepEqual(prompts(files), ["Reverse 'floe'.", "Reverse 'floe'."], "both runs are in the Trace");
  assert.deepEqual(checkTrace(files, { sessionId: PAGE_SESSION }), []);
  await checkQuiet(page);
});

test("extension without floe.wasm in Firefox: the page's error says where the file belongs", { timeout: 120_000 }, async (t) => {
  const { log, open } = await loadExample(t, { omit: "floe.wasm" });
  const result = await awaitGlobal(await open("session.html"), "floeResult");
  assert.match(result.error ?? "", /load: fetching moz-extension:\/\/[\w-]+\/floe\.wasm: .*Put it next to floe\.mjs/, explain(log));
});

test("extension event page in Firefox runs the agent for a page; closing the page mid-run does not stop it", { timeout: 120_000 }, async (t) => {
  const { log, open, exportTrace } = await loadExample(t);
  const first = await open("panel.html");
  await waitTrue(first, () => document.querySelector("#approvals button") !== null, null, WAIT, "panel.html asked for no approval" + explain(log));
  // The event page holds the session's Web Lock as a tab does.
  const busy = await first.evaluate(async (s) => {
    const floe = await (await import("./floe.mjs")).load();
    return floe.resumeSession(s, { llm: { async *streamGenerate() {} } }).then(
      () => "resumed",
      (e) => `${e.code}: ${e.message}`,
    );
  }, WORKER_SESSION);
  assert.match(busy, /^session_busy: .*another tab or worker/);
  await first.close(); // mid-run: the event page waits for a decision
  const page = await open("panel.html");
  // The run in flight, from its start: its messages so far, then the question.
  await allow(page, log);
  const result = await awaitGlobal(page, "floeResult");
  assert.equal(result.error, undefined, `the event page's run failed: ${result.error}${explain(log)}`);
  checkStream(result.messages, explain(log));
  for (const m of result.messages) assert.deepEqual(JSON.parse(JSON.stringify(m)), m);
  assert.equal(await text(page, "#reply"), "Reversed: eolf");
  assert.equal(await text(page, "#approvals"), "", "the question is gone once decided");
  const files = await exportTrace(page, WORKER_SESSION);
  assert.deepEqual(prompts(files), ["Reverse 'floe'."]);
  assert.deepEqual(checkTrace(files, { sessionId: WORKER_SESSION }), []);
  await checkQuiet(page);
});

test("extension event page in Firefox: a content script of a web page follows the run over a port and gets the messages as the page does, and cannot drive it", { timeout: 120_000 }, async (t) => {
  // A content script connects as panel.html does and keeps what it got in
  // the page's DOM, which both worlds share. Its matches are a host
  // permission, opt-in for a Manifest V3 add-on in Firefox: Firefox 127
  // and later grant a manifest's host permissions at install
  // (extensions.originControls.grantByDefault), a temporary add-on's too.
  // A match pattern without a port matches every port of its host. It
  // runs in the web page's process, so its deny and its stop are ignored
  // and the panel's Allow, clicked after them, decides the call.
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
  const { b, log, open } = await loadExample(t, {
    files: { "follow.js": follow },
    manifest: { content_scripts: [{ matches: ["http://127.0.0.1/*"], js: ["follow.js"] }] },
  });
  const web = await b.newPage();
  const url = `${baseURL()}/tests/firefox/pages/web-page.html`;
  await bounded(web.goto(url), WAIT, `opening ${url}`);
  await waitTrue(web, () => document.documentElement.dataset.connected === "yes", null, WAIT, "the content script did not run in the web page" + explain(log));
  const page = await open("panel.html");
  await waitTrue(web, () => document.documentElement.dataset.refused === "sent", null, WAIT, "the content script was not asked" + explain(log));
  await allow(page, log);
  const result = await awaitGlobal(page, "floeResult");
  assert.equal(result.error, undefined, `the event page's run failed: ${result.error}${explain(log)}`);
  assert.equal(await text(page, "#reply"), "Reversed: eolf", "the panel's Allow decided the call");
  assert.ok(!result.messages.some((m) => m.payload.type === "abort"), "the content script's stop was ignored");
  await waitTrue(web, () => document.documentElement.dataset.floe !== undefined, null, WAIT, "the content script got no end of the run" + explain(log));
  const got = JSON.parse(await web.evaluate(() => document.documentElement.dataset.floe));
  checkStream(got, explain(log));
  assert.deepEqual(got, result.messages, "the content script's messages are the page's");
  await checkQuiet(page);
});

test("extension event page in Firefox stopped mid-run: the page says so, the next run resumes the Trace cleanly", { timeout: 120_000 }, async (t) => {
  const { log, open, exportTrace, stopBackground } = await loadExample(t);
  const first = await open("panel.html");
  await waitTrue(first, () => document.querySelector("#approvals button") !== null, null, WAIT, "panel.html asked for no approval" + explain(log));
  await stopBackground();
  const cut = await awaitGlobal(first, "floeResult");
  assert.match(cut.error ?? "", /stopped mid-run/, "the page learns that the event page is gone" + explain(log));
  assert.equal(await first.evaluate(() => document.body.dataset.state), "disconnected");
  const before = await exportTrace(first, WORKER_SESSION);
  assert.ok(recordsOf(before).length > 0, "the cut run stored its records");

  // Its Web Lock went with the page: the next run (its port wakes the
  // event page) resumes the session.
  const page = await open("panel.html");
  await allow(page, log);
  const result = await awaitGlobal(page, "floeResult");
  assert.equal(result.error, undefined, `the resumed run failed: ${result.error}${explain(log)}`);
  checkStream(result.messages, explain(log));
  assert.match(await text(page, "#status"), /^Resumed session-/);
  const after = await exportTrace(page, WORKER_SESSION);
  assert.equal(lostRecords(recordsOf(before), recordsOf(after)), null);
  assert.deepEqual(checkTrace(after, { cut: recordsOf(before).length, sessionId: WORKER_SESSION }), []);
  assert.deepEqual(prompts(after), ["Reverse 'floe'.", "Reverse 'floe'."]);
  await checkQuiet(page);
});
