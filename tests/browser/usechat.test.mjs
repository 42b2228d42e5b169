// useChat of @ai-sdk/react (pinned in tests/react's lock file) over
// floeChatTransport in Chromium, on Vite's dev server in StrictMode: the
// page (tests/react/usechat.html) is the README's "Floe behind useChat"
// example as written, rendering text, reasoning and tool parts, Approve
// and Deny through addToolApprovalResponse, and Stop. A call approved and
// one denied go on in their assistant message; Stop mid-stream leaves the
// chat ready for the next prompt; after a reload the chat restored from
// toUIMessages(await floe.readSession(id)) shows what it showed, and the
// next prompt goes on in the session, the model given the earlier context;
// Stop while a call is asked ends the run (transport.stop), and a new
// message instead of an answer runs: either way the call shows it was not
// run, as it does restored. The chat unmounted while its run goes on and
// mounted again with the messages it had picks the run up (useChat's
// resume): the rest of its reply, a call asked meanwhile and answered,
// and Stop; mounted again with its messages restored from the stored
// session mid-run (toUIMessages given the transport), it shows the reply
// once.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { chatApp, chatHelpers } from "./chat-page.mjs";
import { explain, ROOT } from "./harness.mjs";
import { devServer, freePort } from "./pack.mjs";

/** The chat as rendered: per message its role and the text of each part shown. */
const rendered = (page) =>
  page.evaluate(() =>
    [...document.querySelectorAll("ol[aria-label=Messages] > li")].map((li) => [li.className, ...[...li.querySelectorAll(":scope > ul > li")].map((p) => p.textContent)]),
  );

/** A chat's messages without what only the live chat or only the Trace has: the ids, the approvals, keys set to undefined. */
const shown = (messages) => JSON.parse(JSON.stringify(messages.map((m) => ({ role: m.role, parts: m.parts.map(({ id, approval, ...p }) => p) }))));
/** The approval of each tool part, as the chat's UI reads it. */
const approvals = (messages) =>
  messages.flatMap((m) => m.parts.filter((p) => p.toolCallId).map((p) => p.approval && { approved: p.approval.approved, ...(p.approval.isAutomatic ? { isAutomatic: true } : {}) }));

test("the useChat page holds the README's example as written", async () => {
  const readme = await readFile(join(ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("#### Floe behind `useChat`"));
  const example = /```jsx\n([^]*?)```/.exec(section)[1];
  const page = await readFile(join(ROOT, "tests/react/src/usechat.jsx"), "utf8");
  const copy = /\/\/ --- the README's example ---\n([^]*?)\/\/ --- end of the example ---\n/.exec(page)[1];
  // The page's copy goes on after the comment the README's function ends with.
  assert.equal(copy + "}\n", example);
});

test("useChat with floeChatTransport: the README's example in React 19 on Vite 7", { timeout: 240_000 }, async (t) => {
  const { app, vite, ctx, log } = await chatApp(t, "react");
  const { send, see } = chatHelpers(log);
  const url = await devServer(t, vite, ["--port", String(await freePort()), "--host", "127.0.0.1", "--strictPort"], app);
  const page = await ctx.newPage();
  await page.goto(url + "/usechat.html");

  const item = (text) => see(page, page.getByRole("listitem").filter({ hasText: text }).last(), `the part ${JSON.stringify(text)}`);
  const ready = () => see(page, page.getByLabel("Status").filter({ hasText: /^ready$/ }), "status ready");
  const noAlert = async () => assert.deepEqual(await page.getByRole("alert").allInnerTexts(), [], "the chat's error" + explain(log));
  await ready();

  // 1. Streamed reasoning and text, then the call asked; approved, its
  // output and the answer come into the same assistant message.
  await send(page, "email bob");
  await item('send_email({"to":"bob"}) approval-requested');
  await page.getByRole("button", { name: "Approve" }).click();
  await item("The tool said: sent to bob");
  await ready();
  await noAlert();
  assert.deepEqual(await rendered(page), [
    ["user", "email bob"],
    ["assistant", "Reasoning: They want an email sent to bob.", "Sending it to bob.", 'send_email({"to":"bob"}) output-available: sent to bob', "The tool said: sent to bob"],
  ]);

  // 2. A call denied: the denial shown, the run goes on.
  await send(page, "email eve");
  await item('send_email({"to":"eve"}) approval-requested');
  await page.getByRole("button", { name: "Deny" }).click();
  await item("The tool said: Tool call denied by user.");
  await ready();
  await noAlert();
  assert.deepEqual((await rendered(page)).at(-1), [
    "assistant", "Reasoning: They want an email sent to eve.", "Sending it to eve.", 'send_email({"to":"eve"}) output-denied', "The tool said: Tool call denied by user.",
  ]);

  // 3. Stop mid-stream: the run aborts, the chat is ready, and the next
  // prompt runs (a call allowed by approve, never asked).
  await send(page, "slow");
  await item("Thinking very slowly");
  await page.getByRole("button", { name: "Stop" }).click();
  await ready();
  await send(page, "search floe");
  await item("The tool said: 3 pages about floe");
  await ready();
  await noAlert();
  assert.deepEqual((await rendered(page)).slice(-4), [
    ["user", "slow"],
    ["assistant", "Thinking very slowly"],
    ["user", "search floe"],
    ["assistant", 'search_docs({"query":"floe"}) output-available: 3 pages about floe', "The tool said: 3 pages about floe"],
  ]);

  // 4. A reload: the chat restored from the stored session shows the same
  // messages, and the next prompt goes on in the session.
  const before = await rendered(page);
  const live = await page.evaluate(() => window.uiMessages);
  await page.reload();
  await ready();
  await item("The tool said: 3 pages about floe");
  assert.deepEqual(await rendered(page), before);
  // The parts as the chat had them; a call allowed in the chat shows no
  // approval, one denied there an automatic denial (the Trace does not say
  // who decided).
  const restored = await page.evaluate(() => window.uiMessages);
  assert.deepEqual(shown(restored), shown(live));
  assert.deepEqual(approvals(live), [{ approved: true }, { approved: false }, undefined]);
  assert.deepEqual(approvals(restored), [undefined, { approved: false, isAutomatic: true }, undefined]);
  await send(page, "recall");
  await item("Earlier you said: email bob | email eve | slow | search floe");
  await ready();
  await noAlert();
  assert.deepEqual((await rendered(page)).slice(0, -2), before);

  // 5. Stop while the run waits on an approval: the chat has no response
  // to stop; transport.stop(id) ends the run, and the call shows it was
  // not run, its buttons gone.
  await send(page, "email fay");
  await item('send_email({"to":"fay"}) approval-requested');
  await page.getByRole("button", { name: "Stop" }).click();
  await item('send_email({"to":"fay"}) output-error: no output: the run ended before the call did');
  await ready();
  await noAlert();
  assert.equal(await page.getByRole("button", { name: "Approve" }).count(), 0);

  // 6. A new message instead of an answer: the waiting run is aborted and
  // the message runs (the model told the call was interrupted); the
  // earlier call shows it was not run, as it does restored.
  await send(page, "email carl");
  await item('send_email({"to":"carl"}) approval-requested');
  await send(page, "never mind");
  await item("You said: never mind");
  await ready();
  await noAlert();
  const last = await rendered(page);
  const notRun = "output-error: no output: the run ended before the call did";
  assert.deepEqual(last.slice(-5), [
    ["assistant", "Reasoning: They want an email sent to fay.", "Sending it to fay.", `send_email({"to":"fay"}) ${notRun}`],
    ["user", "email carl"],
    ["assistant", "Reasoning: They want an email sent to carl.", "Sending it to carl.", `send_email({"to":"carl"}) ${notRun}`],
    ["user", "never mind"],
    ["assistant", "Reasoning: An echo.", "You said: never mind"],
  ]);
  assert.equal(await page.getByRole("button", { name: "Approve" }).count(), 0);
  await page.reload();
  await ready();
  await item("You said: never mind");
  assert.deepEqual(await rendered(page), last);

  // 7. The chat unmounted while its run goes on (Hide chat), the call
  // asked meanwhile, and mounted again with the messages it had (Show
  // chat): useChat's resume reconnects, the message is brought up to
  // date (one message, not two), and the call is answered.
  await send(page, "hold zoe");
  await item("Working for zoe.");
  await page.waitForFunction(() => window.holding === true);
  await page.getByRole("button", { name: "Hide chat" }).click();
  assert.equal(await page.getByLabel("Messages").count(), 0);
  await page.evaluate(() => window.releaseHold());
  await page.waitForFunction(() => window.heldDone === true);
  await page.getByRole("button", { name: "Show chat" }).click();
  await item('send_email({"to":"zoe"}) approval-requested');
  await ready();
  await page.getByRole("button", { name: "Approve" }).click();
  await item("The tool said: sent to zoe");
  await ready();
  await noAlert();
  assert.deepEqual((await rendered(page)).slice(-3), [
    last.at(-1),
    ["user", "hold zoe"],
    ["assistant", "Working for zoe.", "Done for zoe.", 'send_email({"to":"zoe"}) output-available: sent to zoe', "The tool said: sent to zoe"],
  ]);

  // 8. Stop from the chat mounted again mid-stream reaches the run: the
  // Trace ends with the user's abort.
  await send(page, "slow");
  const slow = page.getByRole("listitem").filter({ hasText: "Thinking very slowly" });
  await page.waitForFunction(() => [...document.querySelectorAll("li.text")].filter((li) => li.textContent === "Thinking very slowly").length === 2);
  await page.getByRole("button", { name: "Hide chat" }).click();
  await page.getByRole("button", { name: "Show chat" }).click();
  await see(page, page.getByLabel("Status").filter({ hasText: /^streaming$/ }), "status streaming");
  assert.equal(await slow.count(), 4); // two messages and their text parts, the last one once
  await page.getByRole("button", { name: "Stop" }).click();
  await ready();
  await noAlert();
  assert.deepEqual((await page.evaluate(() => window.readTrace())).at(-1).payload, { type: "abort", reason: "aborted by user" });
  const remounted = await rendered(page);
  assert.deepEqual(remounted.slice(-2), [["user", "slow"], ["assistant", "Thinking very slowly"]]);
  await page.reload();
  await ready();
  await item("The tool said: sent to zoe");
  assert.deepEqual(await rendered(page), remounted);

  // 9. The chat unmounted while its run goes on and mounted again with
  // its messages restored from the stored session (toUIMessages given the
  // transport), the Trace holding part of the reply: the reply shows once,
  // brought up to date, then live (the call asked, answered).
  await send(page, "hold ann");
  await item("Working for ann.");
  await page.waitForFunction(() => window.holding === true);
  await page.getByRole("button", { name: "Hide chat" }).click();
  await page.evaluate(async () => {
    const stored = (m) => m.payload.type === "text" && m.payload.text === "Working for ann.";
    while (!(await window.readTrace()).some(stored)); // each read waits on IndexedDB
    await window.restore();
  });
  await page.getByRole("button", { name: "Show chat" }).click();
  await see(page, page.getByLabel("Status").filter({ hasText: /^streaming$/ }), "status streaming");
  await page.evaluate(() => window.releaseHold());
  await item('send_email({"to":"ann"}) approval-requested');
  await page.getByRole("button", { name: "Approve" }).click();
  await item("The tool said: sent to ann");
  await ready();
  await noAlert();
  const after = await rendered(page);
  assert.equal(after.filter(([role, first]) => role === "assistant" && first === "Working for ann.").length, 1, "the reply, once");
  assert.deepEqual(after.slice(0, -2), remounted);
  assert.deepEqual(after.slice(-2), [
    ["user", "hold ann"],
    ["assistant", "Working for ann.", "Done for ann.", 'send_email({"to":"ann"}) output-available: sent to ann', "The tool said: sent to ann"],
  ]);
  await page.close();
});
