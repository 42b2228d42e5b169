// Helpers of the persistence tests: a Chromium profile that outlives a
// browser (restart = close, then launch again on the same --user-data-dir;
// the test server's port stays fixed, so the IndexedDB origin is the same),
// and bounded calls into the test page's window.persist.
import { chromium } from "playwright-core";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { baseURL, CHROMIUM, explain, FLAGS, WAIT } from "./harness.mjs";

export const PAGE = "/tests/browser/pages/persist.html";

/** Bound of waits for the store and for runs that should finish promptly. */
export const STEP = 20_000;

/**
 * A profile directory, deleted after the test, and a browser on it.
 * browser.restart() closes the browser and launches it again on the same
 * profile. browser.page is its current test page (the last open() without
 * fresh).
 */
export async function profileBrowser(t) {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium) or set FLOE_CHROMIUM`);
  }
  const dir = await mkdtemp(join(tmpdir(), "floe-persist-"));
  const log = [];
  const b = { dir, log, ctx: null, launches: 0 };
  b.launch = async () => {
    b.ctx = await chromium.launchPersistentContext(dir, {
      executablePath: CHROMIUM,
      headless: true,
      args: FLAGS,
      timeout: WAIT,
    });
    b.launches++;
    b.ctx.setDefaultTimeout(WAIT);
    const tag = `[browser ${b.launches}] `;
    b.ctx.on("console", (m) => log.push(tag + `console.${m.type()}: ${m.text()}`));
    b.ctx.on("weberror", (e) => log.push(tag + `page error: ${e.error()}`));
    return b.ctx;
  };
  b.close = async () => {
    if (b.ctx) await b.ctx.close().catch(() => {});
    b.ctx = null;
  };
  b.restart = async () => {
    await b.close();
    await b.launch();
  };
  /** Opens the test page in a tab (the first one unless fresh) and waits until Floe loaded. */
  b.open = async ({ fresh = false } = {}) => {
    const page = (!fresh && b.ctx.pages()[0]) || (await b.ctx.newPage());
    await page.goto(baseURL() + PAGE);
    await ready(page, log);
    if (!fresh) b.page = page;
    return page;
  };
  t.after(async () => {
    await b.close();
    await rm(dir, { recursive: true, force: true });
  });
  await b.launch();
  return b;
}

/** Waits until the test page loaded Floe (after goto or reload). */
export async function ready(page, log) {
  await page.waitForFunction(() => window.persistReady !== undefined, null, { timeout: WAIT }).catch((e) => {
    throw new Error(`the test page did not start within ${WAIT} ms: ${e.message}${explain(log)}`);
  });
  const r = await bounded(page.evaluate(() => window.persistReady), WAIT, "loading Floe in the test page");
  if (r !== true) throw new Error(`the test page could not load Floe: ${r}${explain(log)}`);
}

/** Rejects with a clear message when p has not settled after ms. */
export function bounded(p, ms, what) {
  let timer;
  const t = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

/**
 * Calls window.persist[method](...args) in page, bounded by ms. Methods that
 * return { ok } / { error } are unwrapped: an error throws, naming method.
 */
export async function call(page, method, args = [], ms = STEP, { raw = false } = {}) {
  const r = await bounded(
    page.evaluate(([m, a]) => window.persist[m](...a), [method, args]),
    ms,
    `window.persist.${method}(${args.map((a) => JSON.stringify(a)?.slice(0, 60)).join(", ")})`,
  );
  const envelope = r !== null && typeof r === "object" && Object.keys(r).length === 1 && ("ok" in r || "error" in r);
  if (raw || !envelope) return r;
  if (r.error) {
    const e = new Error(`${method}: ${r.error.where} failed: ${r.error.name}${r.error.code ? " [" + r.error.code + "]" : ""}: ${r.error.message}`);
    Object.defineProperty(e, "info", { value: r.error, enumerable: false });
    throw e;
  }
  return r.ok;
}
