#!/usr/bin/env node
// Rendering cost of Markdown in the playground, in headless Chromium: the
// same scripted answer of 10,000 words of Markdown (paragraphs, emphasis,
// inline code, links, lists, code blocks) streamed with no pacing, shown
// as Markdown (the page as it is) and as plain text (?render=plain), in two
// tabs of one browser, runs interleaved. A side's figure is the median
// time from pressing Enter to the page being idle again; the aim is
// Markdown ≤ 2× plain text.
//
//   node scripts/bench/playground-bench.mjs [--iters N] [--quick]
//
// Serves the repository root on a free loopback port; drives Debian's
// Chromium (or $FLOE_CHROMIUM) through the playwright-core of
// tests/browser. Without Chromium it says so and skips.
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
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const TYPES = { ".html": "text/html; charset=utf-8", ".mjs": "text/javascript; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".wasm": "application/wasm" };
const WORDS = Number(process.env.FLOE_BENCH_WORDS || 10000);
const WAIT = 300_000;

function serve() {
  const server = createServer((req, res) => {
    let path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    if (path.endsWith("/")) path += "index.html";
    const file = normalize(join(ROOT, path));
    let st = null;
    try {
      st = file.startsWith(ROOT) && !path.split("/").some((s) => s.startsWith(".")) ? statSync(file) : null;
    } catch {}
    if (req.method !== "GET" || !st || !st.isFile()) {
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
    const r = spawnSync("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: TESTS, stdio: "inherit" });
    if (r.status !== 0) throw new Error("npm ci in tests/browser failed");
  }
  return createRequire(join(TESTS, "package.json"))("playwright-core");
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

async function main() {
  const argv = process.argv.slice(2);
  const at = argv.indexOf("--iters");
  const iters = at >= 0 ? Number(argv[at + 1]) : argv.includes("--quick") ? 1 : 3;
  console.log(`== browser: the playground rendering ${WORDS.toLocaleString("en-US")} words of Markdown vs plain text (Chromium)`);
  if (!existsSync(CHROMIUM)) {
    console.log(`playground-bench: skipped: ${CHROMIUM} not found`);
    return;
  }
  if (!existsSync(join(ROOT, "static", "playground.wasm"))) throw new Error("static/playground.wasm is missing: run ./build.sh build");
  const { chromium } = playwright();
  const server = await serve();
  const profile = await mkdtemp(join(tmpdir(), "floe-playground-bench-"));
  let ctx;
  try {
    ctx = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, timeout: WAIT });
    ctx.setDefaultTimeout(WAIT);
    const base = `http://127.0.0.1:${server.address().port}/static/?pace=0&nosw`;
    const errors = [];
    const pages = {};
    for (const [side, q] of [["plain", "&render=plain"], ["markdown", ""]]) {
      const p = await ctx.newPage();
      await p.setViewportSize({ width: 1280, height: 860 });
      p.on("pageerror", (e) => errors.push(String(e)));
      p.on("crash", () => errors.push(side + ": the page crashed"));
      p.on("console", (m) => m.type() === "error" && errors.push(side + ": " + m.text()));
      await p.goto(base + q);
      await p.locator('body[data-state="idle"]').waitFor();
      pages[side] = p;
    }
    const once = async (side) => {
      const p = pages[side];
      await p.click("#reset");
      await p.locator("#intro").waitFor();
      await p.fill("#prompt", `stream ${WORDS}`);
      const ms = await p.evaluate(
        () =>
          new Promise((resolve) => {
            const t0 = performance.now();
            const obs = new MutationObserver(() => {
              if (document.body.dataset.state === "idle") {
                obs.disconnect();
                resolve(performance.now() - t0);
              }
            });
            obs.observe(document.body, { attributes: true, attributeFilter: ["data-state"] });
            document.getElementById("prompt").dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
          }),
      );
      const text = await p.locator("#transcript > .msg.text .body").last().innerText();
      if (!text.includes("Streaming")) throw new Error(`${side}: the answer was not rendered`);
      if (errors.length) throw new Error(errors.join("; "));
      return { ms, messages: Number(await p.locator("#stream-count").innerText()) };
    };
    const runs = { plain: [], markdown: [] };
    await once("plain");
    await once("markdown");
    for (let i = 0; i < iters; i++) {
      for (const s of i % 2 ? ["markdown", "plain"] : ["plain", "markdown"]) runs[s].push(await once(s));
    }
    console.log("side        messages        ms (median)");
    for (const s of ["plain", "markdown"]) {
      console.log(`${s.padEnd(10)}${String(runs[s][0].messages).padStart(10)}${median(runs[s].map((r) => r.ms)).toFixed(0).padStart(18)}`);
    }
    const ratio = median(runs.markdown.map((r) => r.ms)) / median(runs.plain.map((r) => r.ms));
    console.log(`playground-bench: markdown / plain = ${ratio.toFixed(2)}× the time (aim ≤ 2${ratio <= 2 ? ", met" : ", NOT met"}; median of ${iters} run(s) per side)`);
  } finally {
    if (ctx) await ctx.close().catch(() => {});
    server.close();
    await rm(profile, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error("playground-bench:", e);
    process.exit(1);
  },
);
