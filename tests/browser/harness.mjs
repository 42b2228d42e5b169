// Shared helpers of the browser tests: launching Debian's Chromium through
// playwright-core, the test server's address, bounded waits.
import { after } from "node:test";
import { chromium } from "playwright-core";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const CHROMIUM = process.env.FLOE_CHROMIUM || "/usr/bin/chromium";

/** Flags that work as root in a container; playwright adds --headless. */
export const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Default bound of every wait, in milliseconds. */
export const WAIT = 30_000;

/** The test server (floe-serve over the repository root), without a trailing slash. */
export function baseURL() {
  const u = process.env.FLOE_BASE_URL;
  if (!u) {
    throw new Error("FLOE_BASE_URL is not set: run scripts/test-browser.sh, which builds, starts floe-serve and sets it");
  }
  return u.replace(/\/$/, "");
}

let shared; // this process's Chromium (a test file's), launched by the first browser() and closed after the file's tests

/**
 * The Chromium every test of this process (one test file) opens its
 * contexts in: one launch for the file instead of one for each test.
 * Launched again if it crashed or was closed.
 */
async function browser() {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium) or set FLOE_CHROMIUM`);
  }
  const b = shared && (await shared.catch(() => null));
  if (b?.isConnected()) return b;
  shared = chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS, timeout: WAIT });
  return shared;
}

after(async () => {
  const b = shared && (await shared.catch(() => null));
  await b?.close().catch(() => {});
});

/**
 * A fresh browser context, closed after the test, and a log of its page
 * errors and console messages for failure reports. It has storage of its
 * own (IndexedDB, OPFS, service workers, caches), in memory: nothing of
 * another test's is seen. By default it is a context of the file's shared
 * Chromium; with profile: true, or args or ignoreDefaultArgs (which are
 * the browser's, such as an extension to load or V8 flags), Chromium is
 * launched for the test alone on a fresh profile on disk (its
 * --user-data-dir, deleted after the test), as a user's browser keeps
 * its storage. context adds options of the context (a phone's viewport,
 * say: { viewport, isMobile, hasTouch }).
 */
export async function launch(t, { args = [], ignoreDefaultArgs, context = {}, profile = args.length > 0 || ignoreDefaultArgs !== undefined } = {}) {
  let ctx, dir;
  if (profile) {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`${CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium) or set FLOE_CHROMIUM`);
    }
    dir = await mkdtemp(join(tmpdir(), "floe-profile-"));
    ctx = await chromium.launchPersistentContext(dir, { executablePath: CHROMIUM, headless: true, args: [...FLAGS, ...args], ignoreDefaultArgs, timeout: WAIT, ...context });
  } else {
    ctx = await (await browser()).newContext(context);
  }
  ctx.setDefaultTimeout(WAIT);
  const log = [];
  ctx.on("console", (m) => log.push(`console.${m.type()}: ${m.text()}`));
  ctx.on("weberror", (e) => log.push(`page error: ${e.error()}`));
  t.after(async () => {
    await ctx.close().catch(() => {});
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return { ctx, log };
}

/** A page of ctx (the persistent context's first tab, or a new one). */
export async function page(ctx) {
  return ctx.pages()[0] ?? (await ctx.newPage());
}

/** Evaluates the promise at window[name] in page, failing after ms. */
export async function awaitGlobal(page, name, ms = WAIT) {
  await page.waitForFunction((n) => window[n] !== undefined, name, { timeout: ms });
  return page.evaluate(
    ([n, ms]) =>
      Promise.race([
        window[n],
        new Promise((_, reject) => setTimeout(() => reject(new Error(`window.${n} did not settle within ${ms} ms`)), ms)),
      ]),
    [name, ms],
  );
}

/** Failure context: the browser log, one line each. */
export function explain(log) {
  return log.length ? "\nbrowser log:\n  " + log.join("\n  ") : "";
}

/**
 * Serves dir with floe-serve on a free loopback port (the binary is
 * $FLOE_SERVE, built by scripts/test-browser.sh). Returns { url, close }.
 */
export function serveDir(t, dir) {
  const bin = process.env.FLOE_SERVE;
  if (!bin || !existsSync(bin)) {
    throw new Error("FLOE_SERVE is not set to the floe-serve binary: run scripts/test-browser.sh");
  }
  const child = spawn(bin, ["-addr", "127.0.0.1:0", "-dir", dir], { stdio: ["ignore", "pipe", "pipe"] });
  t.after(() => child.kill());
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`floe-serve printed no URL within ${WAIT} ms: ${out}`)), WAIT);
    const onData = (b) => {
      out += b;
      const m = out.match(/http:\/\/127\.0\.0\.1:\d+\//);
      if (m) {
        clearTimeout(timer);
        resolve(m[0].replace(/\/$/, ""));
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", (b) => (out += b));
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`floe-serve exited (${code}): ${out}`));
    });
  });
}
