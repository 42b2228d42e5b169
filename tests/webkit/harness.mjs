// Shared helpers of the WebKit tests: WebKitGTK's MiniBrowser driven by
// Debian's WebKitWebDriver over classic W3C WebDriver (HTTP and JSON, a
// small client on fetch: no npm package), on an X display of its own (Xvfb)
// when none is set; the test server's address; bounded waits and bounded
// calls into the pages the Chromium tests use (tests/browser/fixtures,
// pages).
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { freePort } from "../free-port.mjs";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const DRIVER = process.env.FLOE_WEBKIT_DRIVER || "/usr/bin/WebKitWebDriver";

/** Default bound of every wait, in milliseconds. */
export const WAIT = 30_000;

/** The test server (floe-serve over the repository root), without a trailing slash. */
export function baseURL() {
  const u = process.env.FLOE_BASE_URL;
  if (!u) {
    throw new Error("FLOE_BASE_URL is not set: run scripts/test-webkit.sh, which builds, starts floe-serve and sets it");
  }
  return u.replace(/\/$/, "");
}

/** Rejects with a clear message when p has not settled after ms. */
export function bounded(p, ms, what) {
  let timer;
  const t = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}


/** Collects a child's output lines into log, each with tag. */
function collect(child, log, tag) {
  for (const s of [child.stdout, child.stderr]) {
    if (!s) continue;
    let rest = "";
    s.setEncoding("utf8");
    s.on("data", (d) => {
      const lines = (rest + d).split("\n");
      rest = lines.pop();
      for (const l of lines) if (l.trim()) log.push(tag + l);
    });
  }
}

/** Starts Xvfb on a free display; resolves to { display, stop }. */
function xvfb(log) {
  return new Promise((resolve, reject) => {
    const x = spawn("Xvfb", ["-displayfd", "3", "-screen", "0", "1280x1024x24", "-nolisten", "tcp"], {
      stdio: ["ignore", "ignore", "pipe", "pipe"],
    });
    collect({ stderr: x.stderr }, log, "[xvfb] ");
    let got = "";
    const timer = setTimeout(() => reject(new Error(`Xvfb did not name its display within ${WAIT} ms`)), WAIT);
    x.on("error", (e) => {
      clearTimeout(timer);
      reject(new Error(`Xvfb could not start (${e.message}): install it (apt-get install -y xvfb) or set DISPLAY`));
    });
    x.stdio[3].on("data", (d) => {
      got += d;
      if (got.includes("\n")) {
        clearTimeout(timer);
        resolve({ display: ":" + got.trim(), stop: () => x.kill() });
      }
    });
  });
}

/** A WebDriver error (the driver's answer), named by its command. */
class DriverError extends Error {}

/**
 * A browser: WebKitWebDriver on a free port and one WebDriver session of
 * MiniBrowser's (its website data in memory: IndexedDB survives a reload,
 * not the browser). b.log collects the driver's output, for failure
 * reports: WebKitGTK writes no console message of a page it runs for
 * automation. Windows of the session share its storage, as tabs do.
 * features names WebKit features to turn on (MiniBrowser --features).
 */
export async function launch(t, { features = [] } = {}) {
  if (!existsSync(DRIVER)) {
    throw new Error(`${DRIVER} not found: install Debian's webkit2gtk-driver (apt-get install -y webkit2gtk-driver xvfb) or set FLOE_WEBKIT_DRIVER`);
  }
  const log = [];
  const stops = [];
  let closing = null;
  const b = { log };
  // The driver, its browser and the display end with the test, even when
  // the browser never started.
  b.close = () =>
    (closing ??= (async () => {
      if (b.session) await b.send("DELETE", `/session/${b.session}`, undefined, 10_000).catch(() => {});
      for (const stop of stops) stop();
    })());
  t.after(() => b.close());
  const env = { ...process.env };
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) {
    const x = await xvfb(log);
    stops.push(x.stop);
    env.DISPLAY = x.display;
  }
  const port = await freePort();
  const driver = spawn(DRIVER, [`--port=${port}`], { env, stdio: ["ignore", "pipe", "pipe"] });
  stops.unshift(() => driver.kill());
  collect(driver, log, "[webkit] ");
  const exited = new Promise((resolve) => driver.on("exit", (code, sig) => resolve(`WebKitWebDriver exited (${sig ?? code})`)));
  const origin = `http://127.0.0.1:${port}`;
  b.send = send;

  async function send(method, path, body, ms = WAIT) {
    const what = `WebDriver ${method} ${path.replace(/^\/session\/[^/]+/, "")}`;
    const res = await bounded(
      Promise.race([
        fetch(origin + path, {
          method,
          headers: { "content-type": "application/json; charset=utf-8" },
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
        exited.then((why) => Promise.reject(new Error(why))),
      ]),
      ms,
      what,
    );
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      throw new DriverError(`${what}: ${res.status}, not JSON: ${text.slice(0, 200)}`);
    }
    if (!res.ok) throw new DriverError(`${what}: ${json.value?.error ?? res.status}: ${json.value?.message ?? text.slice(0, 200)}`);
    return json.value;
  }

  const ready = Date.now() + WAIT;
  for (;;) {
    try {
      const s = await send("GET", "/status", undefined, 2000);
      if (s?.ready) break;
    } catch (e) {
      if (Date.now() > ready) throw new Error(`WebKitWebDriver did not answer on ${origin} within ${WAIT} ms: ${e.message}${explain(log)}`);
    }
    await new Promise((r) => setTimeout(r, 50)); // polling the driver's start, bounded above
  }
  const created = await send("POST", "/session", {
    capabilities: {
      alwaysMatch: {
        "webkitgtk:browserOptions": {
          // MiniBrowser takes WebKit's features as an option: features
          // turns on those WebKitGTK leaves off and Safari ships.
          args: ["--automation", ...(features.length ? [`--features=${features.map((f) => "+" + f).join(",")}`] : [])],
        },
      },
    },
  });
  const sid = created.sessionId;
  const s = (p) => `/session/${sid}${p}`;
  b.session = sid;
  b.capabilities = created.capabilities;

  await send("POST", s("/timeouts"), { script: WAIT * 2, pageLoad: WAIT });
  b.goto = (url) => send("POST", s("/url"), { url: url.startsWith("/") ? baseURL() + url : url });
  b.reload = () => send("POST", s("/refresh"), {});
  b.url = () => send("GET", s("/url"));
  /** Opens a new window (a tab of the same browser) and switches to it; returns its handle. */
  b.newWindow = async () => {
    const w = await send("POST", s("/window/new"), { type: "tab" });
    await send("POST", s("/window"), { handle: w.handle });
    return w.handle;
  };
  b.window = () => send("GET", s("/window"));
  b.switchTo = (handle) => send("POST", s("/window"), { handle });
  b.setSize = (width, height) => send("POST", s("/window/rect"), { width, height });

  /**
   * Runs fn(...args) in the current window's page and returns what it
   * resolves to (JSON), bounded by ms; a rejection throws its message.
   */
  b.eval = async (fn, args = [], ms = WAIT) => {
    const script = `const done = arguments[arguments.length - 1];
      Promise.resolve().then(() => (${fn}).apply(null, Array.prototype.slice.call(arguments, 0, -1)))
        .then((v) => done({ ok: v === undefined ? null : v }), (e) => done({ error: String(e && e.stack ? e + "\\n" + e.stack : e) }));`;
    const r = await send("POST", s("/execute/async"), { script, args }, ms + 5000);
    if (r && r.error !== undefined) throw new Error(`in the page: ${r.error}`);
    return r?.ok;
  };

  /**
   * Waits until fn(...args) in the page is truthy (polled every 100 ms in
   * the page), failing after ms; returns its value. fn's source is part of
   * the script the driver runs, so a page whose Content-Security-Policy
   * refuses eval is waited on too.
   */
  b.waitFor = async (fn, args = [], ms = WAIT, what = String(fn).slice(0, 120)) => {
    // Each script polls for at most half the driver's script timeout
    // (WAIT * 2, above): a wait of that bound or more in one script was
    // ended by the driver first, and failed as "script timed out" without
    // naming what it waited for.
    const end = Date.now() + ms;
    for (;;) {
      const slice = Math.max(0, Math.min(end - Date.now(), WAIT));
      const script = `const done = arguments[arguments.length - 1];
        const args = Array.prototype.slice.call(arguments, 0, -1);
        const f = (${fn});
        const end = Date.now() + ${slice};
        const poll = async () => {
          let v;
          try {
            v = await f.apply(null, args);
          } catch (e) {
            v = undefined;
          }
          if (v) return done({ v: v instanceof Element ? true : v });
          if (Date.now() > end) return done({ timeout: true });
          setTimeout(poll, 100); // polling page state, bounded by slice
        };
        poll();`;
      const r = await send("POST", s("/execute/async"), { script, args }, slice + 5000);
      if (!r.timeout) return r.v;
      if (Date.now() >= end) throw new Error(`waited ${ms} ms for ${what}${explain(log)}`);
    }
  };

  /** The element css selects (waiting for it up to ms); its WebDriver id. */
  b.find = async (css, ms = WAIT) => {
    await b.waitFor((c) => document.querySelector(c), [css], ms, `an element ${css}`);
    const e = await send("POST", s("/element"), { using: "css selector", value: css });
    return Object.values(e)[0];
  };
  /** Clicks the element css selects, as a person would. */
  b.click = async (css, ms = WAIT) => send("POST", s(`/element/${await b.find(css, ms)}/click`), {});
  /**
   * Clicks the element fn(...args) returns in the page, waiting up to ms
   * for it to be there; what names it in a failure.
   */
  b.clickWhere = async (fn, args = [], ms = WAIT, what = String(fn).slice(0, 120)) => {
    const end = Date.now() + ms;
    for (;;) {
      await b.waitFor(fn, args, Math.max(0, end - Date.now()), what);
      const r = await send("POST", s("/execute/sync"), { script: `return (${fn}).apply(null, arguments)`, args });
      if (r) return send("POST", s(`/element/${Object.values(r)[0]}/click`), {});
      // Gone (or, for a fn that asks for it, moved) since the wait: look again.
      if (Date.now() >= end) throw new Error(`${what}: gone before the click${explain(log)}`);
    }
  };
  /** Types text into the element css selects ("\uE007" is Enter). */
  b.type = async (css, text, ms = WAIT) => send("POST", s(`/element/${await b.find(css, ms)}/value`), { text });
  return b;
}

/** Failure context: the browser log, one line each. */
export function explain(log) {
  return log.length ? "\nbrowser log:\n  " + log.slice(-80).join("\n  ") : "";
}

/** Waits for the promise at window[name] and returns what it resolved to. */
export async function awaitGlobal(b, name, ms = WAIT) {
  await b.waitFor((n) => window[n] !== undefined, [name], ms, `window.${name}`);
  return b.eval((n) => window[n], [name], ms);
}

/** The persistence test page of the Chromium tests (window.persist). */
export const PERSIST_PAGE = "/tests/browser/pages/persist.html";

/** Waits until the persistence page loaded Floe (after goto or reload). */
export async function persistReady(b) {
  const r = await awaitGlobal(b, "persistReady").catch((e) => {
    throw new Error(`the test page did not start within ${WAIT} ms: ${e.message}${explain(b.log)}`);
  });
  if (r !== true) throw new Error(`the test page could not load Floe: ${r}${explain(b.log)}`);
}

/**
 * Calls window.persist[method](...args) in the current window, bounded by
 * ms. Answers of the form { ok } / { error } are unwrapped: an error
 * throws, naming method.
 */
export async function call(b, method, args = [], ms = 20_000, { raw = false } = {}) {
  const r = await b.eval((m, a) => window.persist[m](...a), [method, args], ms);
  const envelope = r !== null && typeof r === "object" && Object.keys(r).length === 1 && ("ok" in r || "error" in r);
  if (raw || !envelope) return r;
  if (r.error) {
    throw new Error(`${method}: ${r.error.where} failed: ${r.error.name}${r.error.code ? " [" + r.error.code + "]" : ""}: ${r.error.message}`);
  }
  return r.ok;
}
