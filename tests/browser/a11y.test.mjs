// The playground checked by axe-core (the accessibility rules of WCAG 2.x
// A and AA that a program can check: contrast, names, headings, keyboard
// access to what scrolls) in the states a person sees most: a run waiting
// on an approval, the run done with its thinking, tool cards and raw
// stream, the Settings dialog, and the same page in a dark colour scheme.
// axe-core is evaluated into the page through the debugging protocol, which
// the page's Content-Security-Policy does not govern.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { baseURL, explain, launch, page as firstPage, WAIT } from "./harness.mjs";

const require = createRequire(import.meta.url);
const AXE = await readFile(require.resolve("axe-core/axe.min.js"), "utf8");

/** The violations axe finds in page now, one line a node. */
async function violations(page) {
  if (!(await page.evaluate(() => typeof window.axe === "object"))) await page.evaluate(AXE);
  const found = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ["violations"] })).violations);
  return found.flatMap((v) => v.nodes.map((n) => `[${v.impact}] ${v.id}: ${n.target.join(" ")}: ${n.failureSummary.split("\n").slice(1).join(" ").trim()}`));
}

test("playground: no accessibility violations axe-core finds, light and dark, running, done and in Settings", { timeout: 120_000 }, async (t) => {
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  await page.setViewportSize({ width: 1280, height: 860 });
  await page.goto(baseURL() + "/static/?pace=0");
  const idle = () => page.locator('body[data-state="idle"]').waitFor({ timeout: WAIT });
  await idle();
  const seen = {};
  seen["first view"] = await violations(page);

  await page.fill("#prompt", "How long is store.go?");
  await page.press("#prompt", "Enter");
  const ask = page.locator('.card.ask button[data-decision="allow"]');
  await ask.first().waitFor();
  seen["an approval waiting"] = await violations(page);
  // Allow each call the run asks for, until it ends.
  while (!(await page.locator('body[data-state="idle"]').count())) {
    await Promise.race([ask.first().waitFor({ timeout: WAIT }), idle()]);
    if (await ask.count()) await ask.first().click();
  }
  assert.ok((await page.locator("#stream li").count()) > 3, "the raw stream has the run's messages");
  seen["the run done"] = await violations(page);

  await page.click("#open-settings");
  await page.locator("dialog[open]").waitFor();
  seen["Settings open"] = await violations(page);
  await page.keyboard.press("Escape");

  await page.emulateMedia({ colorScheme: "dark" });
  seen["dark, the run done"] = await violations(page);

  const bad = Object.entries(seen).flatMap(([state, v]) => v.map((line) => `${state}: ${line}`));
  assert.deepEqual(bad, [], "accessibility violations" + explain(log));
});

// The tests below drive the playground as three people do: with the
// keyboard alone, through the accessibility tree a screen reader reads
// (the debugging protocol's Accessibility domain), and on a phone. They
// assert properties (where the focus is after an action, the names in the
// tree, the page's width), not pictures.

const PAGE = "/static/?pace=0";

/** A description of the element that has the focus, for assertions. */
const focused = (page) =>
  page.evaluate(() => {
    const e = document.activeElement;
    if (!e || e === document.body) return "body";
    const what = e.id ? "#" + e.id : e.tagName.toLowerCase() + (e.dataset.do ? `[data-do=${e.dataset.do}]` : "");
    return `${what} ${(e.getAttribute("aria-label") || e.textContent || "").trim().slice(0, 40)}`.trim();
  });

/** Presses Tab (or Shift+Tab) until the focused element matches selector; fails after limit presses. */
async function tabTo(page, selector, { back = false, limit = 40 } = {}) {
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press(back ? "Shift+Tab" : "Tab");
    if (await page.evaluate((s) => document.activeElement?.matches(s), selector)) return;
  }
  assert.fail(`${limit} presses of ${back ? "Shift+Tab" : "Tab"} did not reach ${selector}; the focus is on ${await focused(page)}`);
}

/** Sends prompt from the keyboard and allows each call with Enter on its Allow, until the run ends. */
async function runByKeyboard(page, prompt) {
  await page.locator('body[data-state="idle"]').waitFor({ timeout: WAIT });
  const n = await page.locator("#transcript > .msg.prompt").count();
  await page.focus("#prompt");
  await page.keyboard.type(prompt);
  await page.keyboard.press("Enter");
  await page.locator("#transcript > .msg.prompt").nth(n).waitFor({ timeout: WAIT });
  for (;;) {
    await page.locator('body[data-state="idle"], body[data-state="approval"]').waitFor({ timeout: WAIT });
    if ((await page.getAttribute("body", "data-state")) === "idle") return;
    await tabTo(page, '.card.ask button[data-decision="allow"]', { back: true });
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => document.activeElement !== document.body && document.activeElement?.offsetParent !== null, null, { timeout: WAIT })
      .catch(async () => assert.fail(`the focus was lost after Allow: ${await focused(page)}`));
  }
}

test("playground by keyboard alone: every action reached, the focus never left on the page's body", { timeout: 180_000 }, async (t) => {
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  await page.setViewportSize({ width: 1280, height: 860 });
  await page.goto(baseURL() + PAGE);
  await page.locator('body[data-state="idle"]').waitFor({ timeout: WAIT });
  assert.equal(await focused(page), "#prompt", "the prompt has the focus on load" + explain(log));
  // Panels only works as a drawer, on a narrow screen: not offered here
  // (pressed, it left an unseen drawer open that ate the next Escape).
  assert.equal(await page.locator("#toggle-side").isVisible(), false, "Panels shown on a wide screen");

  // An approval answered with Enter: the focus goes on, to the prompt (or the next approval).
  await page.keyboard.type("How long is store.go?");
  await page.keyboard.press("Enter");
  await page.locator('body[data-state="approval"]').waitFor({ timeout: WAIT });
  await tabTo(page, '.card.ask button[data-decision="allow"]', { back: true });
  await page.keyboard.press("Enter");
  await page.locator(".card:not(.ask) .badge.decision[data-decision=allow]").first().waitFor({ timeout: WAIT });
  assert.match(await focused(page), /^#prompt|Allow/, "after Allow");
  await page.keyboard.press("Escape"); // Escape stops the run
  await page.locator('body[data-state="idle"]').waitFor({ timeout: WAIT });

  // Settings: opened with Enter, closed with Escape, the focus back on its button.
  await page.focus("#prompt");
  await tabTo(page, "#open-settings");
  await page.keyboard.press("Enter");
  await page.locator("dialog[open]").waitFor();
  assert.ok(await page.evaluate(() => document.querySelector("#settings").contains(document.activeElement)), "the focus is not in the dialog");
  await page.keyboard.press("Escape");
  await page.locator("dialog:not([open])").waitFor({ state: "attached" });
  assert.equal(await focused(page), "#open-settings Settings", "after Escape in Settings");

  // Two stored sessions, then each action of a row, from the keyboard.
  await page.focus("#prompt");
  await tabTo(page, "#reset", { back: true });
  await page.keyboard.press("Enter");
  await runByKeyboard(page, "write notes.md: # Hello");
  await page.locator("#sessions li.session").nth(1).waitFor({ timeout: WAIT });
  const row = page.locator("#sessions li.session").first();
  const id = await row.getAttribute("data-session-id");
  await row.locator("[data-do=rename]").focus();
  await page.keyboard.press("Enter");
  await page.locator(".rename-input").waitFor();
  assert.match(await focused(page), /^#rename-/, "Rename opens a focused field");
  await page.keyboard.type(" (renamed)");
  await page.keyboard.press("Enter");
  await page.locator("#sessions .title", { hasText: "(renamed)" }).waitFor();
  assert.equal(await focused(page), "button[data-do=rename] Rename", "after the new title's Enter");
  await page.keyboard.press("Tab");
  assert.equal(await focused(page), "button[data-do=export] Export");
  await page.keyboard.press("Enter");
  await page.locator("#note", { hasText: "Exported" }).waitFor();
  assert.equal(await focused(page), "button[data-do=export] Export", "after Export");
  await page.keyboard.press("Tab");
  await page.keyboard.press("Enter");
  await page.locator("#sessions [data-do=delete]").waitFor();
  assert.equal(await focused(page), "button[data-do=delete] Confirm delete", "after Delete");
  await page.keyboard.press("Enter");
  await page.locator(`#sessions li[data-session-id="${id}"]`).waitFor({ state: "detached" });
  await page.locator("#note", { hasText: `Deleted ${id}.` }).waitFor();
  assert.match(await focused(page), /^button\[data-do=open\] How long is store\.go\?/, "after Confirm delete, the row that took its place");
  await page.keyboard.press("Enter"); // opens it
  await page.locator("#transcript .notice", { hasText: "Resumed from storage" }).waitFor({ timeout: WAIT });
  assert.match(await focused(page), /^button\[data-do=open\]/, "after opening a session");

  // The Files tab: the tabs are one stop of Tab, the arrow keys choose
  // one; a file opened with Enter keeps the focus on its button.
  await tabTo(page, "#tab-stream");
  await page.keyboard.press("ArrowRight");
  assert.equal(await focused(page), "#tab-files Files");
  await page.locator("#files [data-path]").first().waitFor();
  await tabTo(page, "#files [data-path]");
  await page.keyboard.press("Enter");
  await page.locator("#file-view:not([hidden])").waitFor();
  assert.ok(await page.evaluate(() => document.activeElement.matches("#files [data-path][aria-current=true]")), `after opening a file: ${await focused(page)}`);
  // The Trace tab: the list is one stop of Tab, the arrow keys reach its
  // rows; Enter opens a row's JSON and closes it again.
  await tabTo(page, "#tab-files", { back: true });
  await page.keyboard.press("ArrowRight");
  await page.locator("#trace button[data-n]").first().waitFor();
  await tabTo(page, "#trace");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("Enter");
  await page.locator("#trace pre.json").waitFor();
  assert.ok(await page.evaluate(() => document.activeElement.matches("#trace button[data-n]")), `after Enter on a Trace row: ${await focused(page)}`);
  await page.keyboard.press("Enter");
  await page.locator("#trace pre.json").waitFor({ state: "detached" });

  // Import JSONL: its file input is hidden; its button shows the focus.
  await tabTo(page, "#import", { back: true });
  const ring = await page.evaluate(() => getComputedStyle(document.querySelector('label[for="import"]')).outlineStyle);
  assert.notEqual(ring, "none", "no focus ring on Import JSONL… when its input has the focus");
});

test("playground by keyboard: Stop, Retry now and Give up, pressed, leave the focus on the prompt, never on the page's body", { timeout: 180_000 }, async (t) => {
  // Each is disabled or taken away once pressed: the focus went with it
  // to the page's body, and the next Tab started again from the top.
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  await page.setViewportSize({ width: 1280, height: 860 });
  await page.goto(baseURL() + "/static/?pace=0.2"); // paced: the runs last until they are stopped
  await page.locator('body[data-state="idle"]').waitFor({ timeout: WAIT });
  const streaming = () => page.locator("#transcript > .msg.text.streaming").last().waitFor({ timeout: WAIT });

  await page.keyboard.type("stream 4000");
  await page.keyboard.press("Enter");
  await streaming();
  await tabTo(page, "#stop");
  await page.keyboard.press("Enter");
  await page.locator('body[data-state="idle"]').waitFor({ timeout: WAIT });
  assert.equal(await focused(page), "#prompt", "after Stop" + explain(log));

  // Retry now: the run goes on, its countdown gone.
  await page.keyboard.type("fail: stream 4000");
  await page.keyboard.press("Enter");
  await page.locator('.request .retry button[data-action="retry-now"]').waitFor({ timeout: WAIT });
  await tabTo(page, 'button[data-action="retry-now"]', { back: true });
  await page.keyboard.press("Enter");
  await streaming();
  await page.locator(".request .retry .countdown").waitFor({ state: "detached" });
  assert.equal(await page.getAttribute("body", "data-state"), "running");
  assert.equal(await focused(page), "#prompt", "after Retry now, the run going on" + explain(log));
  await page.keyboard.press("Escape");
  await page.locator('body[data-state="idle"]').waitFor({ timeout: WAIT });

  await page.keyboard.type("fail: stream 4001");
  await page.keyboard.press("Enter");
  await page.locator('.request .retry button[data-action="give-up"]').waitFor({ timeout: WAIT });
  await tabTo(page, 'button[data-action="give-up"]', { back: true });
  await page.keyboard.press("Enter");
  await page.locator('body[data-state="idle"]').waitFor({ timeout: WAIT });
  assert.equal(await focused(page), "#prompt", "after Give up" + explain(log));
});

/** The accessibility tree of page now (CDP), without the nodes it ignores. */
async function axTree(cdp) {
  const { nodes } = await cdp.send("Accessibility.getFullAXTree");
  return nodes.filter((n) => !n.ignored).map((n) => ({
    role: n.role?.value ?? "",
    name: n.name?.value ?? "",
    props: Object.fromEntries((n.properties ?? []).map((p) => [p.name, p.value?.value])),
  }));
}

/** The controls of the tree a screen reader could not name. */
const CONTROLS = new Set(["button", "textbox", "combobox", "checkbox", "spinbutton", "tab", "link", "searchbox", "DisclosureTriangle", "image", "img", "dialog", "slider", "switch", "radio"]);
const unnamed = (tree) => tree.filter((n) => CONTROLS.has(n.role) && !n.name.trim()).map((n) => n.role);

test("playground for a screen reader: named controls, a labelled modal dialog, approvals and notes announced", { timeout: 180_000 }, async (t) => {
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  await page.setViewportSize({ width: 375, height: 740 }); // the drawers' buttons are shown
  await page.goto(baseURL() + PAGE);
  await page.locator('body[data-state="idle"]').waitFor({ timeout: WAIT });
  const cdp = await ctx.newCDPSession(page);
  let tree = await axTree(cdp);
  assert.deepEqual(unnamed(tree), [], "controls without a name, first view" + explain(log));
  for (const role of ["banner", "main", "contentinfo"]) assert.ok(tree.some((n) => n.role === role), `no ${role} landmark`);
  assert.ok(tree.some((n) => n.role === "button" && n.name === "Sessions"), "the sessions drawer's button (☰) is not named Sessions");
  assert.ok(tree.some((n) => n.role === "status"), "no status region (the note under the composer)");

  // What the live region is given during a run: the approval, the completed answer; never a delta.
  await page.evaluate(() => {
    window.liveAdded = [];
    new MutationObserver((records) => {
      for (const r of records) for (const n of r.addedNodes) window.liveAdded.push(n.textContent);
    }).observe(document.getElementById("live"), { childList: true, subtree: true, characterData: true });
  });
  await page.fill("#prompt", "write notes.md: # Hello");
  await page.press("#prompt", "Enter");
  await page.locator('body[data-state="approval"]').waitFor({ timeout: WAIT });
  tree = await axTree(cdp);
  assert.deepEqual(unnamed(tree), [], "controls without a name, an approval waiting");
  assert.ok(tree.some((n) => n.role === "group" && n.name === "Approve the call of write_file"), "the approval's group does not name its tool");
  await page.waitForFunction(() => window.liveAdded.some((s) => /write_file waits for your approval/.test(s)), null, { timeout: WAIT })
    .catch(async () => assert.fail(`the approval was not announced: ${JSON.stringify(await page.evaluate(() => window.liveAdded))}`));
  await page.click('.card.ask button[data-decision="allow"]');
  await page.locator('body[data-state="idle"]').waitFor({ timeout: WAIT });
  await page.fill("#prompt", "stream 2000");
  await page.press("#prompt", "Enter");
  await page.locator("#transcript > .msg.prompt").nth(1).waitFor({ timeout: WAIT });
  await page.locator('body[data-state="idle"]').waitFor({ timeout: WAIT });
  const added = await page.evaluate(() => window.liveAdded);
  const deltas = Number(await page.locator("#stream-count").innerText());
  assert.ok(added.length <= 4 && deltas > 50, `the live region changed ${added.length} times in ${deltas} messages: ${JSON.stringify(added)}`);

  // Settings: a modal dialog named by its heading, every field named.
  await page.click("#open-settings");
  await page.locator("dialog[open]").waitFor();
  tree = await axTree(cdp);
  assert.ok(tree.some((n) => n.role === "dialog" && n.name === "Settings" && n.props.modal === true), "Settings is not a modal dialog named Settings");
  assert.deepEqual(unnamed(tree), [], "controls without a name in Settings");
  await page.keyboard.press("Escape");
  // The sessions drawer open: its rows' buttons are named.
  await page.click("#toggle-sessions");
  await page.locator("#sessions li.session").first().waitFor();
  tree = await axTree(cdp);
  assert.deepEqual(unnamed(tree), [], "controls without a name, the sessions drawer open");

  // The note is a status region: it is read when it changes, so it is
  // not written again at every render of a streaming run.
  await page.goto(baseURL() + "/static/?pace=0.2");
  await page.locator('body[data-state="idle"]').waitFor({ timeout: WAIT });
  await page.evaluate(() => {
    window.noteChanges = 0;
    new MutationObserver((r) => (window.noteChanges += r.length)).observe(document.getElementById("note"), { childList: true, subtree: true, characterData: true });
  });
  await page.fill("#prompt", "stream 3000");
  await page.press("#prompt", "Enter");
  await page.locator('body[data-state="running"]').waitFor({ timeout: WAIT });
  await page.click("#toggle-sessions");
  await page.locator("#sessions [data-do=open]").first().click();
  await page.locator("#note", { hasText: "Stop the run in flight" }).waitFor();
  const seen = Number(await page.locator("#stream-count").innerText());
  await page.waitForFunction((n) => Number(document.getElementById("stream-count").textContent) > n + 20, seen, { timeout: WAIT });
  assert.equal(await page.evaluate(() => window.noteChanges), 1, "the note was written again during the run");
  await page.keyboard.press("Escape"); // closes the drawer
  await page.keyboard.press("Escape"); // stops the run
  await page.locator('body[data-state="idle"]').waitFor({ timeout: WAIT });
});

test("playground on a phone (375 and 320 px): no sideways scrolling, 24 px targets, drawers by keyboard, reduced motion", { timeout: 180_000 }, async (t) => {
  const { ctx, log } = await launch(t, { context: { viewport: { width: 375, height: 667 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 } });
  const page = await firstPage(ctx);
  await page.goto(baseURL() + PAGE);
  await page.locator('body[data-state="idle"]').waitFor({ timeout: WAIT });
  // Layout checks, the same at each width: the page as wide as the
  // screen, every control shown at least 24 × 24 px.
  const check = (state) =>
    page.evaluate((state) => {
      const d = document.documentElement;
      const bad = [];
      if (d.scrollWidth > d.clientWidth || window.innerWidth > screen.width) bad.push(`${state}: the page is ${d.scrollWidth} px wide in ${d.clientWidth}`);
      for (const e of document.querySelectorAll("button, input, select, textarea, summary, a[href], label.btn")) {
        if (!e.checkVisibility() || e.classList.contains("visually-hidden")) continue;
        const r = e.getBoundingClientRect();
        if (r.width < 24 || r.height < 24) bad.push(`${state}: ${e.id || e.className || e.tagName} "${e.textContent.trim().slice(0, 24)}" is ${r.width.toFixed(0)} × ${r.height.toFixed(0)} px`);
      }
      return bad;
    }, state);
  const bad = [...(await check("375 px, first view"))];

  await page.fill("#prompt", "echo: a long line\n\n```\n" + "x".repeat(400) + "\n```\n\n" + "y".repeat(300));
  await page.press("#prompt", "Enter");
  await page.locator('body[data-state="idle"]').waitFor({ timeout: WAIT });
  await page.fill("#prompt", "js: 'z'.repeat(2000)");
  await page.press("#prompt", "Enter");
  await page.locator('body[data-state="approval"]').waitFor({ timeout: WAIT });
  bad.push(...(await check("375 px, an approval waiting")));
  await page.setViewportSize({ width: 320, height: 568 });
  bad.push(...(await check("320 px, an approval waiting")));
  await page.click('.card.ask button[data-decision="allow"]');
  await page.locator('body[data-state="idle"]').waitFor({ timeout: WAIT });
  bad.push(...(await check("320 px, the run done")));

  // The sessions drawer by keyboard: Escape closes it, the focus back on its button.
  await page.focus("#toggle-sessions");
  await page.keyboard.press("Enter");
  await page.locator('body[data-drawer="sessions"]').waitFor();
  await page.locator("#sessions li.session").first().waitFor({ timeout: WAIT });
  bad.push(...(await check("320 px, the sessions drawer open")));
  await tabTo(page, "#sessions [data-do=rename]");
  await page.keyboard.press("Escape");
  await page.locator('body[data-drawer=""]').waitFor();
  assert.equal(await focused(page), "#toggle-sessions Sessions", "after Escape in the drawer" + explain(log));
  // A session opened from the drawer closes it: the focus goes to the prompt.
  await page.keyboard.press("Enter");
  await page.locator('body[data-drawer="sessions"]').waitFor();
  await tabTo(page, "#sessions [data-do=open]");
  await page.keyboard.press("Enter");
  await page.locator('body[data-drawer=""]').waitFor();
  assert.equal(await focused(page), "#prompt", "after opening a session from the drawer");

  // Settings fit the screen.
  await page.click("#open-settings");
  await page.locator("dialog[open]").waitFor();
  const box = await page.locator("dialog[open]").boundingBox();
  if (box.x < 0 || box.y < 0 || box.x + box.width > 320 || box.y + box.height > 568) bad.push(`Settings at ${JSON.stringify(box)} on a 320 × 568 screen`);
  bad.push(...(await check("320 px, Settings open")));
  await page.keyboard.press("Escape");
  assert.deepEqual(bad, [], "on a phone" + explain(log));

  // The streaming caret blinks, unless the person asked for less motion.
  const blink = () =>
    page.evaluate(() => {
      const m = document.createElement("div");
      m.className = "msg text streaming";
      m.innerHTML = '<div class="body">x</div>';
      document.getElementById("transcript").append(m);
      const name = getComputedStyle(m.firstChild, "::after").animationName;
      m.remove();
      return name;
    });
  assert.equal(await blink(), "blink");
  await page.emulateMedia({ reducedMotion: "reduce" });
  assert.equal(await blink(), "none", "the caret blinks with prefers-reduced-motion: reduce");
});

test("playground's side panel: tabs chosen with the arrow keys; Stream and Trace rows are buttons with a short name that show their JSON", { timeout: 180_000 }, async (t) => {
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  await page.setViewportSize({ width: 1280, height: 860 });
  await page.goto(baseURL() + PAGE);
  await runByKeyboard(page, "echo: a short answer");
  const cdp = await ctx.newCDPSession(page);

  // Tabs (the WAI-ARIA tabs pattern): one stop of Tab, the arrow keys,
  // Home and End choose one and show its panel.
  const tabs = () => page.evaluate(() => [...document.querySelectorAll('[role="tab"]')].map((e) => `${e.id}:${e.getAttribute("aria-selected")}:${e.tabIndex}`).join(" "));
  const shown = () => page.evaluate(() => [...document.querySelectorAll('[role="tabpanel"]')].filter((p) => !p.hidden).map((p) => p.id).join(" "));
  assert.equal(await tabs(), "tab-stream:true:0 tab-files:false:-1 tab-trace:false:-1", "tabs at first" + explain(log));
  await page.focus("#tab-stream");
  for (const [key, id] of [["ArrowRight", "files"], ["End", "trace"], ["ArrowRight", "stream"], ["ArrowLeft", "trace"], ["Home", "stream"], ["ArrowLeft", "trace"]]) {
    await page.keyboard.press(key);
    await page.locator(`#panel-${id}:not([hidden])`).waitFor();
    assert.match(await focused(page), new RegExp(`^#tab-${id} ${id[0].toUpperCase() + id.slice(1)}`), `after ${key}`);
    assert.equal(await shown(), `panel-${id}`, `after ${key}`);
    assert.match(await tabs(), new RegExp(`tab-${id}:true:0`), `after ${key}`);
    assert.equal((await tabs()).match(/:0\b/g).length, 1, `one tab in the Tab order after ${key}: ${await tabs()}`);
  }
  // Tab goes from the tab to its panel's list; the arrow keys reach its rows.
  await page.locator("#trace button[data-n]").first().waitFor();
  await page.keyboard.press("Tab");
  assert.match(await focused(page), /^#trace/, "Tab from the Trace tab");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  assert.equal(await page.evaluate(() => document.activeElement.dataset.n), "2", "ArrowDown twice from the list: its second row");
  await page.keyboard.press("End");
  const last = await page.locator("#trace button[data-n]").count();
  assert.equal(await page.evaluate(() => document.activeElement.dataset.n), String(last), "End: the last row");
  await page.keyboard.press("Home");
  assert.equal(await page.evaluate(() => document.activeElement.dataset.n), "1", "Home: the first row");

  // A row is a disclosure: a button, expanded or not, named by its
  // number, type and details (never its JSON); Enter and Space toggle it.
  const rows = async (list) =>
    (await axTree(cdp)).filter((n) => n.role === "button" && /^\d+ /.test(n.name)).map((n) => ({ name: n.name, expanded: n.props.expanded }));
  let trace = await rows("trace");
  assert.equal(trace.length, last, "Trace rows in the accessibility tree");
  assert.deepEqual(trace[0], { name: "1 session_meta", expanded: false });
  assert.ok(trace.every((r) => r.name.length < 80 && !r.name.includes("{")), `long names: ${JSON.stringify(trace.filter((r) => r.name.length >= 80 || r.name.includes("{")))}`);
  assert.ok(trace.some((r) => /^\d+ text user · (completed · )?\d+ bytes$/.test(r.name)), `no prompt row named by type, role and size: ${JSON.stringify(trace.map((r) => r.name))}`);
  await page.keyboard.press("Enter");
  await page.locator("#trace pre.json").waitFor();
  assert.match(await page.locator("#trace pre.json").innerText(), /"session_id":"session-/);
  trace = await rows("trace");
  assert.equal(trace[0].expanded, true, "Enter: expanded");
  await page.keyboard.press(" ");
  await page.locator("#trace pre.json").waitFor({ state: "detached" });
  assert.equal((await rows("trace"))[0].expanded, false, "Space: collapsed");

  // The Stream panel: the same, with each row its message.
  await tabTo(page, '[role="tab"][aria-selected="true"]', { back: true });
  await page.keyboard.press("Home");
  await page.keyboard.press("Tab");
  assert.match(await focused(page), /^#stream/, "Tab from the Stream tab");
  const tree = await axTree(cdp);
  assert.equal(tree.filter((n) => n.name.startsWith('{"')).length, 0, "a node of the tree is named by a message's JSON");
  const stream = await rows("stream");
  assert.equal(stream.length, await page.locator("#stream button.row").count());
  assert.ok(stream.some((r) => /^\d+ text assistant · completed · \d+ bytes$/.test(r.name)), `no answer's row named by type, role and size: ${JSON.stringify(stream.map((r) => r.name))}`);
  assert.ok(stream.some((r) => /^\d+ partial_text delta ×\d+$/.test(r.name)), "no delta row");
  await page.keyboard.press("End");
  await page.keyboard.press("Enter");
  const json = JSON.parse(await page.locator("#stream pre.json").innerText());
  assert.equal(json.type, "event_msg", "the last row's JSON");
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute("aria-expanded")), "true");
});

test("playground on a projector at 200% and 300% zoom (1280 × 720): the transcript keeps a screen's height, no control covered or cut off", { timeout: 180_000 }, async (t) => {
  // 1280 × 720 at 300% is a page of 427 × 240 CSS px: the header and the
  // composer took it all, the transcript (the approval card in it) 0 px.
  const { ctx, log } = await launch(t, { context: { viewport: { width: 427, height: 240 }, deviceScaleFactor: 3 } });
  const page = await firstPage(ctx);
  await page.goto(baseURL() + PAGE);
  await page.locator('body[data-state="idle"]').waitFor({ timeout: WAIT });
  // Each control shown, scrolled into view, is the element at its centre
  // (nothing covers it) and fits the screen; the transcript is at least
  // as high as the screen, less a line.
  const check = (state, scope = "main, header, footer") =>
    page.evaluate(([state, scope]) => {
      const bad = [];
      const d = document.documentElement;
      if (d.scrollWidth > d.clientWidth) bad.push(`${state}: the page is ${d.scrollWidth} px wide in ${d.clientWidth}`);
      const tr = document.getElementById("transcript").getBoundingClientRect();
      if (tr.height < innerHeight - 30) bad.push(`${state}: the transcript is ${tr.height.toFixed(0)} px high on a screen of ${innerHeight}`);
      const inScope = [...document.querySelectorAll(scope)];
      for (const e of document.querySelectorAll("button, input, select, textarea, summary, label.btn")) {
        if (!e.checkVisibility() || e.classList.contains("visually-hidden") || !inScope.some((s) => s.contains(e))) continue;
        if (e.closest("[inert]") || (scope !== ".sessions" && e.closest(".sessions, .side"))) continue;
        e.scrollIntoView({ block: "nearest", inline: "nearest" });
        const r = e.getBoundingClientRect();
        const name = `${state}: ${e.id || e.className} "${e.textContent.trim().slice(0, 24)}"`;
        if (r.top < 0 || r.left < 0 || r.bottom > innerHeight + 0.5 || r.right > innerWidth + 0.5) {
          bad.push(`${name} does not fit the screen (${JSON.stringify(r)})`);
          continue;
        }
        const at = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
        if (!at || !(e === at || e.contains(at) || (e.labels && [...e.labels].includes(at)))) bad.push(`${name} is covered by ${at && (at.id || at.className || at.tagName)}`);
      }
      return bad;
    }, [state, scope]);
  const bad = [];
  for (const [zoom, width, height] of [["300%", 427, 240], ["200%", 640, 360]]) {
    await page.setViewportSize({ width, height });
    await page.fill("#prompt", "How long is store.go?");
    await page.press("#prompt", "Enter");
    await page.locator('body[data-state="approval"]').waitFor({ timeout: WAIT });
    bad.push(...(await check(zoom + ", an approval waiting")));
    for (let i = 0; i < 2; i++) {
      await page.locator('body[data-state="approval"]').waitFor({ timeout: WAIT });
      await page.click('.card.ask button[data-decision="allow"]'); // fails when covered
    }
    await page.locator('body[data-state="idle"]').waitFor({ timeout: WAIT });
    bad.push(...(await check(zoom + ", the run done")));
    await page.click("#toggle-sessions");
    await page.locator("#sessions li.session").first().waitFor({ timeout: WAIT });
    bad.push(...(await check(zoom + ", the sessions drawer open", ".sessions")));
    const [row, list] = await page.evaluate(() => [document.querySelector("#sessions li.session"), document.getElementById("sessions")].map((e) => e.getBoundingClientRect().height));
    if (row > list) bad.push(`${zoom}: the sessions list shows ${list.toFixed(0)} px of a row of ${row.toFixed(0)}`);
    await page.keyboard.press("Escape");
    await page.locator('body[data-drawer=""]').waitFor();
  }
  assert.deepEqual(bad, [], "on a projector" + explain(log));
});

test("playground on a phone: an open drawer is modal (the page behind inert), closed by Escape; not on a wide screen", { timeout: 120_000 }, async (t) => {
  const { ctx, log } = await launch(t, { context: { viewport: { width: 375, height: 667 }, isMobile: true, hasTouch: true } });
  const page = await firstPage(ctx);
  await page.goto(baseURL() + PAGE);
  await page.locator('body[data-state="idle"]').waitFor({ timeout: WAIT });
  const inert = () => page.evaluate(() => [...document.querySelectorAll("[inert]")].map((e) => e.id).sort().join(" "));
  assert.equal(await inert(), "", "inert with no drawer open" + explain(log));
  /** Presses Tab n times; returns where the focus went outside the drawer. */
  const escapes = async (drawer, button, n = 30) => {
    const out = new Set();
    for (let i = 0; i < n; i++) {
      await page.keyboard.press("Tab");
      const where = await page.evaluate(([d, b]) => {
        const e = document.activeElement;
        return !e || e === document.body || e.closest(d) || e.matches(b) ? "" : e.id || e.className || e.tagName;
      }, [drawer, button]);
      if (where) out.add(where);
    }
    return [...out];
  };
  for (const [button, drawer, open] of [["#toggle-sessions", "#sessions-panel", "sessions"], ["#toggle-side", "#side", "side"]]) {
    await page.focus(button);
    await page.keyboard.press("Enter");
    await page.locator(`body[data-drawer="${open}"]`).waitFor();
    assert.equal(await inert(), open === "sessions" ? "composer open-settings side toggle-side transcript" : "composer open-settings sessions-panel toggle-sessions transcript");
    assert.deepEqual(await escapes(drawer, button), [], `Tab left the ${open} drawer`);
    await tabTo(page, `${drawer} button`);
    await page.keyboard.press("Escape");
    await page.locator('body[data-drawer=""]').waitFor();
    assert.equal(await inert(), "", `inert after Escape closed the ${open} drawer`);
    assert.match(await focused(page), new RegExp("^" + button), `the focus after Escape in the ${open} drawer`);
  }
  // A drawer left open when the screen grows is no drawer: nothing is inert.
  await page.click("#toggle-sessions");
  await page.locator('body[data-drawer="sessions"]').waitFor();
  await page.waitForFunction(() => document.getElementById("transcript").inert);
  await page.setViewportSize({ width: 1280, height: 860 });
  await page.waitForFunction(() => !document.querySelector("[inert]"), null, { timeout: WAIT });
});

test("playground on a phone: New session pressed in the sessions drawer closes it, as an open does", { timeout: 120_000 }, async (t) => {
  // It stayed open over the new session: nothing seemed to happen.
  const { ctx, log } = await launch(t, { context: { viewport: { width: 375, height: 667 }, isMobile: true, hasTouch: true } });
  const page = await firstPage(ctx);
  await page.goto(baseURL() + PAGE);
  await page.locator('body[data-state="idle"]').waitFor({ timeout: WAIT });
  await page.keyboard.type("echo: one");
  await page.keyboard.press("Enter");
  await page.locator("#transcript > .msg.text").waitFor({ timeout: WAIT });
  await page.locator('body[data-state="idle"]').waitFor({ timeout: WAIT });
  const id = await page.locator("#session-id").innerText();
  await page.focus("#toggle-sessions");
  await page.keyboard.press("Enter");
  await page.locator('body[data-drawer="sessions"]').waitFor();
  await tabTo(page, "#reset");
  await page.keyboard.press("Enter");
  await page.locator('body[data-drawer=""]').waitFor();
  assert.notEqual(await page.locator("#session-id").innerText(), id, "no new session");
  assert.equal(await page.evaluate(() => document.querySelector("[inert]")?.id ?? ""), "", "the page is inert" + explain(log));
  assert.equal(await focused(page), "#toggle-sessions Sessions", "the focus back on the drawer's button");
});

test("playground in a dark colour scheme: the approval pill and the error banner are dark, and pass axe's contrast", { timeout: 120_000 }, async (t) => {
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  await page.setViewportSize({ width: 1280, height: 860 });
  await page.emulateMedia({ colorScheme: "dark" });
  await page.goto(baseURL() + PAGE);
  await page.locator('body[data-state="idle"]').waitFor({ timeout: WAIT });
  await page.fill("#prompt", "write notes.md: # Hello");
  await page.press("#prompt", "Enter");
  await page.locator('body[data-state="approval"]').waitFor({ timeout: WAIT });
  // The banner shows a page error; one is staged here (its colours are the point).
  await page.evaluate(() => {
    const b = document.getElementById("error");
    b.textContent = "Playground error: a staged error";
    b.hidden = false;
  });
  const light = (sel, prop) => page.evaluate(([s, p]) => {
    const [r, g, b] = getComputedStyle(document.querySelector(s))[p].match(/\d+/g).map(Number);
    return (r + g + b) / 3;
  }, [sel, prop]);
  assert.ok((await light("#state", "backgroundColor")) < 80, "the approval pill's background is light in the dark scheme" + explain(log));
  assert.ok((await light("#error", "backgroundColor")) < 80, "the error banner's background is light in the dark scheme");
  assert.ok((await light("#error", "color")) > 160, "the error banner's text is dark in the dark scheme");
  assert.deepEqual(await violations(page), [], "dark, an approval waiting, the error banner shown");
  await page.emulateMedia({ colorScheme: "light" });
  assert.ok((await light("#state", "backgroundColor")) > 200, "the approval pill in the light scheme");
  assert.deepEqual(await violations(page), [], "light, an approval waiting, the error banner shown");
});
