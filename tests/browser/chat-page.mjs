// What the component-framework chats' tests share (react.test.mjs,
// vue-svelte.test.mjs): the app copied from its folder with the packed
// tarball installed, and the helpers that drive a chat page through its
// events (window.chatEvents), its conversation and its buttons.
import { mkdtemp, rm } from "node:fs/promises";
import assert from "node:assert/strict";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { explain, launch, ROOT } from "./harness.mjs";
import { freshApp, pack } from "./pack.mjs";

/** The app of tests/<folder> in a work directory removed after t, with the tarball and a browser. */
export async function chatApp(t, folder) {
  const work = await mkdtemp(join(tmpdir(), `floe-${folder}-`));
  t.after(() => rm(work, { recursive: true, force: true, maxRetries: 3 })); // a dev server killed may still write its cache
  const tarballs = await pack(work);
  const app = join(work, "app");
  await freshApp(join(ROOT, "tests", folder), app, [tarballs.main]);
  const { ctx, log } = await launch(t);
  return { app, vite: join(app, "node_modules/.bin/vite"), ctx, log };
}

/** The page's helpers: its events, its conversation, waiting for both; a failure shows the page's events and text. */
export function chatHelpers(log) {
  const events = (page) => page.evaluate(() => window.chatEvents ?? []);
  const waitEvent = async (page, pattern, count = 1) => {
    await page
      .waitForFunction(([src, n]) => (window.chatEvents ?? []).filter((e) => new RegExp(src).test(e)).length >= n, [pattern.source, count])
      .catch(async (e) => assert.fail(`no ${count} event(s) ${pattern}: ${JSON.stringify(await events(page))}${explain(log)}\n${e.message}`));
  };
  const noErrors = async (page) => {
    const bad = (await events(page)).filter((e) => e.startsWith("error"));
    assert.deepEqual(bad, [], "the chat failed to load its session" + explain(log));
  };
  const send = async (page, prompt) => {
    await page.getByLabel("Prompt").fill(prompt);
    await page.getByRole("button", { name: /^Send/ }).click();
  };
  // see waits for a locator, or fails with the page's events and text.
  const see = (page, locator, what) =>
    locator.waitFor().catch(async (e) => {
      const body = await page.locator("body").innerText().catch(() => "");
      assert.fail(`${what}: not shown: ${e.message.split("\n")[0]}\nevents: ${JSON.stringify(await events(page))}\npage: ${body}${explain(log)}`);
    });
  const line = (page, text) => see(page, page.getByRole("listitem").filter({ hasText: text }).first(), `the line ${JSON.stringify(text)}`);
  const status = (page, s) => see(page, page.getByLabel("Status").filter({ hasText: new RegExp(`^${s}$`) }), `status ${s}`);
  const button = (page, name) => see(page, page.getByRole("button", { name }), `the button ${name}`);
  return { events, waitEvent, noErrors, send, see, line, status, button };
}
