#!/usr/bin/env node
// Streaming throughput of session.run() in headless Chromium with the
// IndexedDB store on vs off (store "indexeddb" vs "memory"): the same page,
// the same browser, the runs of both sides interleaved.
//
//   node scripts/bench/idb-bench.mjs [--iters N] [--quick]
//
// Workload: 1 turn, 100,000 streamed text deltas of 8 bytes, no tools (the
// stream workload of wasm-bench.mjs). A side's figure is the median over
// its runs (after one warm-up run each) of messages per second, timed from
// run() until its iterator finishes (after the run's records are
// committed). The ratio is indexeddb / memory; the aim is ≥ 0.8.
//
// Serves the repository root on a free loopback port (the profile is fresh,
// so the origin does not matter), drives Debian's Chromium (or
// $FLOE_CHROMIUM) through the playwright-core of tests/browser, which it
// installs with npm ci when missing. Without Chromium it says so and skips.
import { createServer } from "node:http";
import { existsSync, createReadStream, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TESTS = join(ROOT, "tests", "browser");
const CHROMIUM = process.env.FLOE_CHROMIUM || "/usr/bin/chromium";
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".wasm": "application/wasm",
  ".json": "application/json",
};
const DELTAS = 100000;
const WAIT = 120_000; // bound of loading the page and of one run

function serve() {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    const file = normalize(join(ROOT, path));
    if (req.method !== "GET" || !file.startsWith(ROOT) || path.split("/").some((s) => s.startsWith("."))) {
      res.writeHead(404).end();
      return;
    }
    let st;
    try {
      st = statSync(file);
    } catch {
      st = null;
    }
    if (!st || !st.isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "Content-Type": TYPES[extname(file)] ?? "application/octet-stream", "Cache-Control": "no-store" });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve, reject) => {
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}

function playwright() {
  if (!existsSync(join(TESTS, "node_modules", "playwright-core"))) {
    console.log("idb-bench: installing playwright-core (npm ci in tests/browser)");
    const r = spawnSync("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: TESTS, stdio: "inherit" });
    if (r.status !== 0) throw new Error("npm ci in tests/browser failed");
  }
  return createRequire(join(TESTS, "package.json"))("playwright-core");
}

function bounded(p, what) {
  let timer;
  const t = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${WAIT} ms`)), WAIT);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const fmt = (n) => Math.round(n).toLocaleString("en-US");

async function main() {
  const argv = process.argv.slice(2);
  const quick = argv.includes("--quick");
  const at = argv.indexOf("--iters");
  const iters = at >= 0 ? Number(argv[at + 1]) : quick ? 1 : 3;
  console.log("== browser: the streaming task with the IndexedDB store on vs off (Chromium)");
  if (!existsSync(CHROMIUM)) {
    console.log(`idb-bench: skipped: ${CHROMIUM} not found (apt-get install -y chromium, or set FLOE_CHROMIUM)`);
    return;
  }
  if (!existsSync(join(ROOT, "static", "floe.wasm"))) throw new Error("static/floe.wasm is missing: run ./build.sh build");
  const { chromium } = playwright();
  const server = await serve();
  const profile = await mkdtemp(join(tmpdir(), "floe-idb-bench-"));
  let ctx;
  try {
    ctx = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, timeout: WAIT });
    const page = ctx.pages()[0] ?? (await ctx.newPage());
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`http://127.0.0.1:${server.address().port}/scripts/bench/idb-bench.html`);
    await page.waitForFunction(() => window.benchReady !== undefined, null, { timeout: WAIT });
    const ok = await bounded(page.evaluate(() => window.benchReady), "loading Floe in the page");
    if (ok !== true) throw new Error(`the bench page could not load Floe: ${ok} ${errors.join("; ")}`);

    let n = 0;
    const once = async (store) => {
      const id = `session-2026-01-01-00-00-00-${(n++).toString(16).padStart(8, "0")}`;
      const r = await bounded(page.evaluate(([s, i]) => window.bench.run(s, i), [store, id]), `a run with store ${store}`);
      if (r.textBytes !== DELTAS * 8) throw new Error(`store ${store}: ${r.textBytes} text bytes streamed, want ${DELTAS * 8}`);
      if (store === "indexeddb" && !(r.stored > DELTAS * 8)) {
        throw new Error(`store indexeddb: the export holds ${r.stored} characters, want the ${DELTAS * 8}-byte text record and more`);
      }
      return r;
    };
    const sides = { memory: [], indexeddb: [] };
    await once("memory");
    await once("indexeddb");
    for (let i = 0; i < iters; i++) {
      for (const s of i % 2 ? ["indexeddb", "memory"] : ["memory", "indexeddb"]) sides[s].push(await once(s));
    }
    console.log("workload               store         messages        ms   messages/s   ratio");
    const rate = {};
    for (const s of ["memory", "indexeddb"]) {
      const ms = median(sides[s].map((r) => r.ms));
      rate[s] = sides[s][0].messages / (ms / 1000);
      const ratio = s === "memory" ? "1.00" : (rate.indexeddb / rate.memory).toFixed(2);
      console.log(
        `${"stream (100k deltas)".padEnd(23)}${s.padEnd(10)}${fmt(sides[s][0].messages).padStart(12)}${ms.toFixed(1).padStart(10)}${fmt(rate[s]).padStart(13)}${ratio.padStart(8)}`,
      );
    }
    const ratio = rate.indexeddb / rate.memory;
    console.log(`idb-bench: indexeddb / memory = ${ratio.toFixed(2)} (aim ≥ 0.80${ratio >= 0.8 ? ", met" : ", NOT met"}; median of ${iters} run(s) per side)`);
  } finally {
    if (ctx) await ctx.close().catch(() => {});
    server.close();
    await rm(profile, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error("idb-bench:", e);
    process.exit(1);
  },
);
