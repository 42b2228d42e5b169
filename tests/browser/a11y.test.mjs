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
