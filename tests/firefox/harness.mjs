// Shared helpers of the Firefox tests: launching Debian's Firefox ESR
// through puppeteer-core over WebDriver BiDi (puppeteer-core downloads no
// browser), the test server's address, bounded waits and bounded calls into
// the pages the Chromium tests use (tests/browser/fixtures, pages).
import { after } from "node:test";
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

let shared; // this process's Firefox (a test file's), launched by the first launch() that needs it and closed after the file's tests

/** The Firefox options of every launch; prefs and args are added to them. */
function options(dir, prefs, args) {
  return {
    browser: "firefox",
    executablePath: FIREFOX,
    headless: true,
    userDataDir: dir,
    timeout: WAIT,
    protocolTimeout: WAIT * 2,
    args,
    // No updates, telemetry or first-run pages in a test profile.
    extraPrefsFirefox: { "app.update.auto": false, "browser.shell.checkDefaultBrowser": false, ...prefs },
  };
}

/**
 * The Firefox every test of this process (one test file) opens its
 * browser contexts in, on a fresh profile deleted after the file's tests:
 * one launch for the file instead of one for each test. Launched again if
 * it crashed or was closed.
 */
async function sharedBrowser() {
  const s = shared && (await shared.catch(() => null));
  if (s?.browser.connected) return s.browser;
  shared = (async () => {
    const dir = await mkdtemp(join(tmpdir(), "floe-firefox-"));
    try {
      return { dir, browser: await puppeteer.launch(options(dir, {}, [])) };
    } catch (e) {
      await rm(dir, { recursive: true, force: true });
      throw e;
    }
  })();
  return (await shared).browser;
}

after(async () => {
  const s = shared && (await shared.catch(() => null));
  if (!s) return;
  await s.browser.close().catch(() => {});
  await rm(s.dir, { recursive: true, force: true });
});

/**
 * A browser for the test, closed after it. By default it is a fresh
 * browser context (a WebDriver BiDi user context) of the file's shared
 * Firefox: its storage (cookies, localStorage, IndexedDB, the origin
 * private file system, Cache Storage) is its own, and nothing of another
 * test's is seen.
 * With profile: true, or prefs (Firefox preferences, say
 * browser.privatebrowsing.autostart) or args (command-line arguments),
 * which are the browser's, Firefox is launched for the test alone on a
 * fresh profile (deleted after the test); b.restart() then closes it and
 * launches it again on the same profile (the test server's port stays
 * fixed, so IndexedDB's origin is the same). b.browser is the Browser,
 * b.context the test's context (the shared Firefox's) or null (a Firefox
 * of the test's own). b.log collects console messages and page errors for
 * failure reports.
 */
export async function launch(t, { prefs = {}, args = [], profile = Object.keys(prefs).length > 0 || args.length > 0 } = {}) {
  if (!existsSync(FIREFOX)) {
    throw new Error(`${FIREFOX} not found: install Debian's firefox-esr (apt-get install -y firefox-esr) or set FLOE_FIREFOX`);
  }
  const log = [];
  const b = { dir: null, log, browser: null, context: null, launches: 0 };
  /** A new tab, its console and errors logged. */
  b.newPage = async () => {
    const page = await (b.context ?? b.browser).newPage();
    page.setDefaultTimeout(WAIT);
    const tag = b.context ? "[firefox] " : `[firefox ${b.launches}] `;
    page.on("console", (m) => log.push(tag + `console.${m.type()}: ${m.text()}`));
    page.on("pageerror", (e) => log.push(tag + `page error: ${e?.message ?? e}`));
    return page;
  };
  if (!profile) {
    b.browser = await sharedBrowser();
    b.context = await b.browser.createBrowserContext();
    b.restart = () => {
      throw new Error("restart: this test's browser is a context of the file's shared Firefox; launch(t, { profile: true }) for a Firefox of its own");
    };
    t.after(() => b.context.close().catch(() => {}));
    return b;
  }
  const dir = await mkdtemp(join(tmpdir(), "floe-firefox-"));
  b.dir = dir;
  b.launch = async () => {
    b.browser = await puppeteer.launch(options(dir, prefs, args));
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
