// The npm tarball in a Vue 3 chat and a Svelte 5 chat (tests/vue-svelte,
// its committed lock file: vue.html and svelte.html) on Vite 7's dev
// server, with hot updates, and built: a session stored in IndexedDB,
// resumed in a watcher (Vue) or an $effect (Svelte) whose cleanup closes
// it, the transcript held in a ref() and redrawn with triggerRef (Vue) or
// read as the store $view (Svelte), approvals as buttons, Stop through an
// AbortController. A route change unmounts a chat mid-run, and hot
// updates edit it mid-run: one that keeps the component (a Vue template)
// keeps its run, one that mounts it again closes and resumes it; so does
// one of a module holding a session at its top level (module.html).
// useChat and the Chat class of @ai-sdk/vue and Chat of @ai-sdk/svelte
// over floeChatTransport (usechat-vue.html, usechat-vue-chat.html,
// usechat-svelte.html): a reply streamed, Stop, a call approved, Stop
// while a call waits, a call a new message skipped redrawn, and the chat
// unmounted mid-run and mounted again (Hide chat, Show chat), picking its
// run up with resumeStream().
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { chatApp, chatHelpers } from "./chat-page.mjs";
import { explain, serveDir } from "./harness.mjs";
import { devServer, edit, freePort, run } from "./pack.mjs";

const NOT_RUN = "output-error: no output: the run ended before the call did";
/** The chat as rendered: per message its role and the text of each part shown. */
const rendered = (page) =>
  page.evaluate(() =>
    [...document.querySelectorAll("ol[aria-label=Messages] > li")].map((li) => [li.className, ...[...li.querySelectorAll(":scope > ul > li")].map((p) => p.textContent.replace(/\s+/g, " ").trim().replace(/ Approve Deny$/, ""))]),
  );

test("Vue 3 and Svelte 5 chats on Vite 7: unmount mid-run, hot updates, vite build", { timeout: 300_000 }, async (t) => {
  const { app, vite, ctx, log } = await chatApp(t, "vue-svelte");
  const { events, waitEvent, noErrors, send, see, line, status, button } = chatHelpers(log);
  const readies = async (page) => (await events(page)).filter((e) => e.startsWith("ready")).length;

  // chat runs what both chats must do on the dev server: a tool call
  // approved (its card redrawn as it changes), a double Send, a reload
  // with the history, a route change mid-run.
  const chat = async (page, id) => {
    await waitEvent(page, /^ready 0$/);
    await noErrors(page);
    await send(page, "tool abc");
    await line(page, "shout: awaiting_approval");
    await page.getByRole("button", { name: "Allow" }).click();
    await line(page, "The tool said: ABC");
    await line(page, "shout: ABC"); // the card, changed in place, is drawn again
    await status(page, "done");
    // What the frameworks keep of a message is a Proxy; toRaw and
    // $state.snapshot give what structuredClone and IndexedDB take.
    const kept = await page.evaluate(() => window.chatKept());
    assert.ok(kept.length > 5, JSON.stringify(kept));
    assert.deepEqual(kept.filter(([, same]) => !same), [], "kept messages");

    // A double click on Send: the second run is refused with session_busy.
    await page.getByLabel("Prompt").fill("twice");
    await page.evaluate(() => {
      const send = document.querySelector("button[type=submit]");
      send.click();
      send.click();
    });
    await waitEvent(page, /^failed twice session_busy$/);
    await see(page, page.getByRole("alert").filter({ hasText: "already in flight" }), "the session_busy alert");
    await waitEvent(page, /^ended twice done$/);
    await line(page, "You said: twice");

    await page.reload();
    await waitEvent(page, /^ready [1-9]\d*$/);
    await noErrors(page);
    await line(page, "The tool said: ABC"); // the stored history

    // A route change unmounts the chat mid-run: its cleanup's close()
    // aborts the run; mounted again, the chat resumes it at once.
    await send(page, "slow");
    await status(page, "running");
    await page.getByRole("button", { name: "About" }).click();
    await page.getByRole("button", { name: "Chat" }).click();
    await waitEvent(page, /^ended slow aborted$/);
    await waitEvent(page, /^ready [1-9]\d*$/, 2);
    await noErrors(page);
    await line(page, "slow");
    const trace = (await page.evaluate((id) => window.chatTrace(id), id)).flatMap((f) => f.text.split("\n").filter(Boolean).map(JSON.parse));
    assert.deepEqual(
      trace.slice(-2).map((r) => [r.payload.type, r.payload.status ?? r.payload.reason]),
      [["request_end", "aborted"], ["abort", "aborted by user"]],
      "the Trace ends with the closed run's abort",
    );
    await send(page, "after the route change");
    await line(page, "You said: after the route change");
  };

  // remount edits source mid-run so that the component is mounted again:
  // its cleanup closes the session (the run ends aborted), the new
  // instance resumes it, and the next run goes.
  const remount = async (page, source, text, aborted) => {
    const before = await readies(page);
    await send(page, "slow");
    await status(page, "running");
    await edit(source, text);
    await waitEvent(page, /^ended slow aborted$/, aborted);
    await waitEvent(page, /^ready [1-9]\d*$/, before + 1);
    await noErrors(page);
    await status(page, "aborted"); // the stored history ends with the abort
    await send(page, "after a remount");
    await line(page, "You said: after a remount");
  };

  const url = await devServer(t, vite, ["--port", String(await freePort()), "--host", "127.0.0.1", "--strictPort"], app);

  await t.test("Vue: dev server, hot updates", async () => {
    const page = await ctx.newPage();
    await page.goto(url + "/vue.html");
    await chat(page, "vue-chat");

    // A template edit mid-run keeps the component, its state and its run:
    // Stop still ends it.
    const source = join(app, "src/Chat.vue");
    const original = await readFile(source, "utf8");
    await send(page, "slow");
    await status(page, "running");
    await edit(source, original.replace(">Send<", ">Send it<"));
    await button(page, "Send it");
    await page.getByRole("button", { name: "Stop" }).click();
    await waitEvent(page, /^ended slow aborted$/, 2);
    await send(page, "after a template edit");
    await line(page, "You said: after a template edit");

    // A script edit mid-run mounts the component again.
    await remount(page, source, original.replace("const decisions", "// edited\nconst decisions"), 3);
    await edit(source, original);
    await page.close();
  });

  await t.test("Svelte: dev server, hot updates", async () => {
    const page = await ctx.newPage();
    await page.goto(url + "/svelte.html");
    await chat(page, "svelte-chat");
    // Svelte's hot update mounts the edited component again.
    const source = join(app, "src/Chat.svelte");
    const original = await readFile(source, "utf8");
    await remount(page, source, original.replace(">Send<", ">Send it<"), 2);
    await edit(source, original);
    await page.close();
  });

  // A session opened at a module's top level (store.js): an edit of it
  // mid-run evaluates it again, and its resumeSession waits for the run
  // that module.js's import.meta.hot.dispose closed (without the close it
  // is refused with session_busy: the old run goes on).
  await t.test("a store module's session: hot update mid-run", async () => {
    const page = await ctx.newPage();
    await page.goto(url + "/module.html");
    await waitEvent(page, /^ready created$/);
    const source = join(app, "src/store.js");
    const original = await readFile(source, "utf8");
    void page.evaluate(() => window.send("slow"));
    await waitEvent(page, /^running slow$/);
    await edit(source, original + "\n// edited\n");
    await waitEvent(page, /^ended slow abort$/);
    await waitEvent(page, /^ready resumed$/);
    await page.evaluate(() => window.send("after the update"));
    await waitEvent(page, /^ended after the update /);
    await noErrors(page);
    await edit(source, original);
    await page.close();
  });

  // useChat and the Chat class of @ai-sdk/vue and Chat of @ai-sdk/svelte
  // (pinned) over floeChatTransport (usechat-vue.html,
  // usechat-vue-chat.html, usechat-svelte.html): a reply
  // streams, Stop mid-stream, a call approved with addToolApprovalResponse,
  // Stop while a call waits (stop(), then the messages set with
  // transport.stop's function), and a new message instead of an answer:
  // the call it skipped is drawn again as not run, its buttons gone. Then
  // the chat unmounted while its run goes on and mounted again: the
  // component calls resumeStream() as it mounts and stop() as it unmounts.
  // One copy of ai: package.json's overrides give @ai-sdk/svelte (which
  // pins an older ai) the ai the pages import.
  assert.equal(existsSync(join(app, "node_modules/@ai-sdk/svelte/node_modules/ai")), false, "a second copy of ai under @ai-sdk/svelte");
  const pages = { vue: "useChat of @ai-sdk/vue", "vue-chat": "the Chat class of @ai-sdk/vue", svelte: "Chat of @ai-sdk/svelte" };
  for (const [name, what] of Object.entries(pages)) {
    await t.test(`useChat: ${what}`, async () => {
      const page = await ctx.newPage();
      await page.goto(`${url}/usechat-${name}.html`);
      const item = (text) => see(page, page.getByRole("listitem").filter({ hasText: text }).last(), `the part ${JSON.stringify(text)}`);
      const noAlert = async () => assert.deepEqual(await page.getByRole("alert").allInnerTexts(), [], "the chat's error" + explain(log));
      const approveButtons = () => page.getByRole("button", { name: "Approve" }).count();
      await status(page, "ready");

      await send(page, "hello");
      await item("You said: hello");
      await status(page, "ready");

      await send(page, "slow");
      await item("Thinking very slowly");
      await status(page, "streaming");
      await page.getByRole("button", { name: "Stop" }).click();
      await status(page, "ready");

      await send(page, "email bob");
      await item('send_email({"to":"bob"}) approval-requested');
      await page.getByRole("button", { name: "Approve" }).click();
      await item("The tool said: sent to bob");
      await status(page, "ready");
      await noAlert();

      // Stop while the call waits: the chat has no response to stop.
      await send(page, "email fay");
      await item('send_email({"to":"fay"}) approval-requested');
      await page.getByRole("button", { name: "Stop" }).click();
      await item(`send_email({"to":"fay"}) ${NOT_RUN}`);
      await status(page, "ready");
      assert.equal(await approveButtons(), 0);

      // A new message instead of an answer: the skipped call is drawn again.
      await send(page, "email carl");
      await item('send_email({"to":"carl"}) approval-requested');
      await send(page, "never mind");
      await item("You said: never mind");
      await status(page, "ready");
      await item(`send_email({"to":"carl"}) ${NOT_RUN}`);
      assert.equal(await approveButtons(), 0);
      await noAlert();
      assert.deepEqual(await rendered(page), [
        ["user", "hello"],
        ["assistant", "You said: hello"],
        ["user", "slow"],
        ["assistant", "Thinking very slowly"],
        ["user", "email bob"],
        ["assistant", "Reasoning: They want an email sent to bob.", "Sending it to bob.", 'send_email({"to":"bob"}) output-available: sent to bob', "The tool said: sent to bob"],
        ["user", "email fay"],
        ["assistant", "Reasoning: They want an email sent to fay.", "Sending it to fay.", `send_email({"to":"fay"}) ${NOT_RUN}`],
        ["user", "email carl"],
        ["assistant", "Reasoning: They want an email sent to carl.", "Sending it to carl.", `send_email({"to":"carl"}) ${NOT_RUN}`],
        ["user", "never mind"],
        ["assistant", "You said: never mind"],
      ]);

      // The chat unmounted while its run goes on (Hide chat), the call
      // asked meanwhile, and mounted again with the messages it had (Show
      // chat): its resumeStream() reconnects, the message is brought up to
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
      await status(page, "ready");
      await page.getByRole("button", { name: "Approve" }).click();
      await item("The tool said: sent to zoe");
      await status(page, "ready");
      await noAlert();
      assert.deepEqual((await rendered(page)).slice(-3), [
        ["assistant", "You said: never mind"],
        ["user", "hold zoe"],
        ["assistant", "Working for zoe.", "Done for zoe.", 'send_email({"to":"zoe"}) output-available: sent to zoe', "The tool said: sent to zoe"],
      ]);

      // Stop from the chat mounted again mid-stream reaches the run.
      await send(page, "slow");
      const slow = page.getByRole("listitem").filter({ hasText: "Thinking very slowly" });
      await page.waitForFunction(() => [...document.querySelectorAll("li.text")].filter((li) => li.textContent === "Thinking very slowly").length === 2);
      await page.getByRole("button", { name: "Hide chat" }).click();
      await page.getByRole("button", { name: "Show chat" }).click();
      await status(page, "streaming");
      assert.equal(await slow.count(), 4); // two messages and their text parts, the last one once
      const aborted = await page.evaluate(() => window.slowAborted);
      await page.getByRole("button", { name: "Stop" }).click();
      await page.waitForFunction((n) => window.slowAborted === n + 1, aborted);
      await status(page, "ready");
      await noAlert();
      assert.deepEqual((await rendered(page)).slice(-2), [["user", "slow"], ["assistant", "Thinking very slowly"]]);
      await send(page, "after a remount");
      await item("You said: after a remount");
      await status(page, "ready");
      await noAlert();
      await page.close();
    });
  }

  await t.test("vite build, served", async () => {
    await run(vite, ["build", "--logLevel", "warn"], app);
    const base = await serveDir(t, join(app, "dist"));
    for (const name of ["vue", "svelte"]) {
      const page = await ctx.newPage();
      await page.goto(`${base}/${name}.html`);
      await waitEvent(page, /^ready 0$/);
      await send(page, "tool built");
      await page.getByRole("button", { name: "Allow" }).click();
      await line(page, "The tool said: BUILT");
      await waitEvent(page, /^ended tool built done$/); // its records are stored
      await page.reload();
      await waitEvent(page, /^ready [1-9]\d*$/);
      await noErrors(page);
      await line(page, "The tool said: BUILT");
      await page.close();
    }
  });
});
