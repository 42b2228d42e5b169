// Shared helpers of the Firefox tests: launching Debian's Firefox ESR
// through puppeteer-core over WebDriver BiDi (puppeteer-core downloads no
// browser), the test server's address, bounded waits and bounded calls into
// the pages the Chromium tests use (tests/browser/fixtures, pages).
import puppeteer from "puppeteer-core";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const FIREFOX = process.env.FLOE_FIREFOX || "/usr/bin/firefox-esr";

/** Default bound of every wait, in milliseconds. */
export const WAIT = 30_000;

/** The test server (floe-serve over the repository root), without a trailing slash. */
export function baseURL() {
  const u = process.env.FLOE_BASE_URL;
  if (!u) {
    throw new Error("FLOE_BASE_URL is not set: run scripts/test-firefox.sh, which builds, starts floe-serve and sets it");
  }
  return u.replace(/\/$/, "");
}

/**
 * A fresh Firefox profile (deleted after the test) and a browser on it.
 * b.restart() closes the browser and launches it again on the same profile
 * (the test server's port stays fixed, so IndexedDB's origin is the same).
 * b.log collects console messages and page errors for failure reports.
 * prefs adds Firefox preferences (say, browser.privatebrowsing.autostart),
 * args command-line arguments.
 */
export async function launch(t, { prefs = {}, args = [] } = {}) {
  if (!existsSync(FIREFOX)) {
    throw new Error(`${FIREFOX} not found: install Debian's firefox-esr (apt-get install -y firefox-esr) or set FLOE_FIREFOX`);
  }
  const dir = await mkdtemp(join(tmpdir(), "floe-firefox-"));
  const log = [];
  const b = { dir, log, browser: null, launches: 0 };
  b.launch = async () => {
    b.browser = await puppeteer.launch({
      browser: "firefox",
      executablePath: FIREFOX,
      headless: true,
      userDataDir: dir,
      timeout: WAIT,
      protocolTimeout: WAIT * 2,
      args,
      // No updates, telemetry or first-run pages in a test profile.
      extraPrefsFirefox: { "app.update.auto": false, "browser.shell.checkDefaultBrowser": false, ...prefs },
    });
    b.launches++;
    return b.browser;
  };
  b.close = async () => {
    if (b.browser) await b.browser.close().catch(() => {});
    b.browser = null;
  };
  b.restart = async () => {
    await b.close();
    await b.launch();
  };
  /** A new tab, its console and errors logged. */
  b.newPage = async () => {
    const page = await b.browser.newPage();
    page.setDefaultTimeout(WAIT);
    const tag = `[firefox ${b.launches}] `;
    page.on("console", (m) => log.push(tag + `console.${m.type()}: ${m.text()}`));
    page.on("pageerror", (e) => log.push(tag + `page error: ${e?.message ?? e}`));
    return page;
  };
  t.after(async () => {
    await b.close();
    await rm(dir, { recursive: true, force: true });
  });
  await b.launch();
  return b;
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
 * Waits until fn(arg), evaluated in page's current document, is truthy,
 * asking again every 50 ms; fails after ms naming what and where the page
 * was. Each ask is a page.evaluate of its own, so it always reaches the
 * page's current realm: puppeteer's waitForFunction over WebDriver BiDi
 * can keep polling a realm a navigation has left and time out (seen once
 * in CI on the worker page, whose global is set before "load").
 */
export async function waitTrue(page, fn, arg, ms, what) {
  const deadline = Date.now() + ms;
  let last = null;
  for (;;) {
    try {
      // Each ask is bounded too: one sent to a realm that is going away
      // may never be answered.
      if (await bounded(page.evaluate(fn, arg), Math.min(ms, 5_000), what)) return;
      last = null;
    } catch (e) {
      last = e; // a navigation between asks: ask the new document
    }
    if (Date.now() >= deadline) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const where = await bounded(page.evaluate(() => `${location.href} (${document.readyState})`), 5_000, "the page's address")
    .catch((e) => `unknown (${e.message})`);
  throw new Error(`${what}: not within ${ms} ms; the page is at ${where}${last ? `; last error: ${last.message}` : ""}`);
}

/** Evaluates the promise at window[name] in page, failing after ms. */
export async function awaitGlobal(page, name, ms = WAIT) {
  await waitTrue(page, (n) => window[n] !== undefined, name, ms, `window.${name} was not set`);
  return bounded(page.evaluate((n) => window[n], name), ms, `window.${name}`);
}

/** Failure context: the browser log, one line each. */
export function explain(log) {
  return log.length ? "\nbrowser log:\n  " + log.join("\n  ") : "";
}

/** The persistence test page of the Chromium tests (window.persist). */
export const PERSIST_PAGE = "/tests/browser/pages/persist.html";

/** Waits until the persistence page loaded Floe (after goto or reload). */
export async function persistReady(page, log) {
  const r = await awaitGlobal(page, "persistReady").catch((e) => {
    throw new Error(`the test page did not start within ${WAIT} ms: ${e.message}${explain(log)}`);
  });
  if (r !== true) throw new Error(`the test page could not load Floe: ${r}${explain(log)}`);
}

/**
 * Calls window.persist[method](...args) in page, bounded by ms. Answers of
 * the form { ok } / { error } are unwrapped: an error throws, naming method.
 */
export async function call(page, method, args = [], ms = 20_000, { raw = false } = {}) {
  const r = await bounded(
    page.evaluate((m, a) => window.persist[m](...a), method, args),
    ms,
    `window.persist.${method}(${args.map((a) => JSON.stringify(a)?.slice(0, 60)).join(", ")})`,
  );
  const envelope = r !== null && typeof r === "object" && Object.keys(r).length === 1 && ("ok" in r || "error" in r);
  if (raw || !envelope) return r;
  if (r.error) {
    throw new Error(`${method}: ${r.error.where} failed: ${r.error.name}${r.error.code ? " [" + r.error.code + "]" : ""}: ${r.error.message}`);
  }
  return r.ok;
}
