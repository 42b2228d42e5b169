// The npm tarball in a React 19 chat (tests/react, its committed lock
// file) on Vite 7's dev server, in StrictMode and with Fast Refresh, and
// built: a session stored in IndexedDB, resumed in an effect whose cleanup
// closes it, the transcript read through useSyncExternalStore, approvals
// as buttons, Stop through an AbortController. StrictMode mounts each
// effect twice at once (two resumes of one session), a route change
// unmounts the chat mid-run, Fast Refresh edits it mid-run.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { chatApp, chatHelpers } from "./chat-page.mjs";
import { serveDir } from "./harness.mjs";
import { devServer, edit, freePort, run } from "./pack.mjs";

const ID = "react-chat";

test("React 19 chat on Vite 7: StrictMode, unmount mid-run, Fast Refresh, vite build", { timeout: 240_000 }, async (t) => {
  const { app, vite, ctx, log } = await chatApp(t, "react");
  const { events, waitEvent, noErrors, send, see, line, status, button } = chatHelpers(log);

  await t.test("dev server (StrictMode, Fast Refresh)", async () => {
    const url = await devServer(t, vite, ["--port", String(await freePort()), "--host", "127.0.0.1", "--strictPort"], app);
    const page = await ctx.newPage();
    await page.goto(url + "/");
    // StrictMode: two mounts, each resumes (not found) and creates.
    await waitEvent(page, /^ready 0$/, 2);
    await noErrors(page);
    await send(page, "tool abc");
    await page.getByRole("button", { name: "Allow" }).click();
    await line(page, "The tool said: ABC");
    await status(page, "done");

    // The messages kept in React state are never changed afterwards and
    // are structured-cloneable (they cross postMessage and IndexedDB).
    const kept = await page.evaluate(() =>
      window.chatMessages.map(([m, json]) => [m.payload.type, JSON.stringify(m) === json, JSON.stringify(structuredClone(m)) === json]),
    );
    assert.ok(kept.length > 5, JSON.stringify(kept));
    assert.deepEqual(kept.filter(([, same, cloned]) => !same || !cloned), [], "messages changed after they were yielded");

    // A double click on Send: the second run is refused with session_busy,
    // the first goes on.
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

    // Reload: StrictMode resumes the stored session twice at once; both
    // get it (the second was refused with session_busy).
    await page.reload();
    await waitEvent(page, /^ready [1-9]\d*$/, 2);
    await noErrors(page);
    await line(page, "The tool said: ABC"); // the stored history

    // A route change unmounts the chat mid-run: its cleanup's close()
    // aborts the run, whose loop ends; mounted again (twice, StrictMode),
    // the chat resumes at once, waiting for the closed run's records.
    await send(page, "slow");
    await status(page, "running");
    await page.getByRole("button", { name: "About" }).click();
    await page.getByRole("button", { name: "Chat" }).click();
    await waitEvent(page, /^ended slow aborted$/);
    await waitEvent(page, /^ready [1-9]\d*$/, 4);
    await noErrors(page);
    await line(page, "slow");
    const trace = (await page.evaluate((id) => window.chatTrace(id), ID)).flatMap((f) => f.text.split("\n").filter(Boolean).map(JSON.parse));
    assert.deepEqual(
      trace.slice(-2).map((r) => [r.payload.type, r.payload.status ?? r.payload.reason]),
      [["request_end", "aborted"], ["abort", "aborted by user"]],
      "the Trace ends with the closed run's abort",
    );
    await send(page, "after the route change");
    await line(page, "You said: after the route change");

    // Fast Refresh mid-run: the component keeps its state and its run;
    // Stop still ends it, and the next run goes.
    const source = join(app, "src/Chat.jsx");
    const original = await readFile(source, "utf8");
    await send(page, "slow");
    await status(page, "running");
    await edit(source, original.replace(">Send<", ">Send it<"));
    await button(page, "Send it");
    await page.getByRole("button", { name: "Stop" }).click();
    await waitEvent(page, /^ended slow aborted$/, 2);
    await send(page, "after a refresh");
    await line(page, "You said: after a refresh");

    // An edit that remounts the component (// @refresh reset) mid-run: the
    // cleanup closes the session, the new mount resumes it.
    const before = (await events(page)).filter((e) => e.startsWith("ready")).length;
    await send(page, "slow");
    await status(page, "running");
    await edit(source, "// @refresh reset\n" + original);
    await button(page, /^Send$/);
    await waitEvent(page, /^ended slow aborted$/, 3);
    await waitEvent(page, /^ready [1-9]\d*$/, before + 1);
    await noErrors(page);
    await send(page, "after a remount");
    await line(page, "You said: after a remount");
    await edit(source, original);
    await page.close();
  });

  await t.test("vite build, served", async () => {
    await run(vite, ["build", "--logLevel", "warn"], app);
    const page = await ctx.newPage();
    await page.goto((await serveDir(t, join(app, "dist"))) + "/");
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
  });
});
