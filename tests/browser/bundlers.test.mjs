// The npm tarballs installed into a fresh app (tests/bundlers, its
// committed lock file) and used unchanged by Vite 8 (build and dev
// server), esbuild (browser and node platforms), webpack 5, Node 20 and tsc
// (moduleResolution bundler and nodenext). The browser builds run in
// Chromium; each gives the same result as Node.
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFile, mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { awaitGlobal, explain, launch, ROOT, serveDir } from "./harness.mjs";
import { devServer, freshApp, pack, run } from "./pack.mjs";
import { EXPECTED } from "../bundlers/src/expected.mjs";

// Everything a browser bundle must not contain.
const NODE_ONLY = /["'`]node:[a-z/]+["'`]|floe-node\.wasm|import\.meta\.resolve/;

test("npm package in a fresh app: Vite 8, esbuild, webpack 5 (also in a workspace), Node 20, tsc", { timeout: 600_000 }, async (t) => {
  const work = await mkdtemp(join(tmpdir(), "floe-bundlers-"));
  t.after(() => rm(work, { recursive: true, force: true }));
  const tarballs = await pack(work);
  const app = join(work, "app");
  await freshApp(join(ROOT, "tests/bundlers"), app, [tarballs.main, tarballs.node]);
  const bin = (name) => join(app, "node_modules/.bin", name);
  const { ctx, log } = await launch(t);

  // inBrowser opens url and compares the agent's result with Node's.
  const inBrowser = async (url, what) => {
    const page = await ctx.newPage();
    try {
      await page.goto(url + "/");
      const result = await awaitGlobal(page, "floeResult");
      assert.equal(result.error, undefined, `${what}: ${result.error}${explain(log)}`);
      assert.deepEqual({ ...result, stored: undefined }, { ...EXPECTED, stored: undefined }, what + explain(log));
    } finally {
      await page.close();
    }
  };
  const noNodeCode = async (dir, what) => {
    for (const f of await readdir(dir, { recursive: true })) {
      if (f.endsWith(".wasm")) assert.ok(!f.includes("floe-node"), `${what}: the Node build leaked into the bundle: ${f}`);
      if (!/\.(m?js)$/.test(f)) continue;
      const m = (await readFile(join(dir, f), "utf8")).match(NODE_ONLY);
      assert.equal(m, null, `${what}: ${f} contains Node-only code: ${m?.[0]}`);
    }
  };

  await t.test("Node 20: import by name (the node condition); a {dir} store through @floehq/floe-node", async () => {
    for (const f of ["@floehq/floe/floe.wasm", "@floehq/floe-node/floe-node.wasm"]) {
      const { mode } = await (await import("node:fs/promises")).stat(join(app, "node_modules", f));
      assert.equal(mode & 0o111, 0, `${f} is packed executable (mode ${mode.toString(8)})`);
    }
    const out = JSON.parse(await run(process.execPath, ["src/node.mjs"], app));
    assert.deepEqual({ ...out, stored: undefined }, { ...EXPECTED, stored: undefined });
    const traces = join(work, "traces");
    const stored = JSON.parse(await run(process.execPath, ["src/node.mjs", traces], app));
    assert.deepEqual(stored.stored, [true]);
    const [day] = await readdir(traces);
    assert.match((await readdir(join(traces, day)))[0], /^session-.*_001\.jsonl$/);
  });

  await t.test("esbuild --platform=node: the bundle runs, finding the wasm through the installed packages", async () => {
    await run(bin("esbuild"), ["src/node.mjs", "--bundle", "--platform=node", "--format=esm", "--outfile=dist-node/app.mjs", "--log-level=warning"], app);
    const out = JSON.parse(await run(process.execPath, ["dist-node/app.mjs"], app));
    assert.deepEqual({ ...out, stored: undefined }, { ...EXPECTED, stored: undefined });
  });

  await t.test("esbuild --platform=node, its default CommonJS output: the bundle finds the wasm through the installed packages", async () => {
    // import.meta.url is empty there: load() threw "Invalid URL".
    await run(bin("esbuild"), ["src/node-cjs.mjs", "--bundle", "--platform=node", "--outfile=dist-node/app.cjs", "--log-level=error"], app);
    const out = JSON.parse(await run(process.execPath, ["dist-node/app.cjs"], app));
    assert.deepEqual({ ...out, stored: undefined }, { ...EXPECTED, stored: undefined });
  });

  await t.test("esbuild --platform=browser: no flags, no Node code; runs with floe.wasm copied beside the bundle", async () => {
    const dist = join(app, "dist-esbuild");
    await run(bin("esbuild"), ["src/main.js", "--bundle", "--platform=browser", "--format=esm", "--outfile=dist-esbuild/app.js", "--log-level=warning"], app);
    await noNodeCode(dist, "esbuild");
    await copyFile(join(app, "node_modules/@floehq/floe/floe.wasm"), join(dist, "floe.wasm"));
    await copyFile(join(app, "index.html"), join(dist, "index.html"));
    const html = (await readFile(join(dist, "index.html"), "utf8")).replace("/src/main.js", "/app.js");
    await (await import("node:fs/promises")).writeFile(join(dist, "index.html"), html);
    await inBrowser(await serveDir(t, dist), "esbuild");
  });

  await t.test("webpack 5: no loaders or plugins; the wasm is an emitted asset", async () => {
    const dist = join(app, "dist-webpack");
    await run(process.execPath, ["webpack.mjs"], app);
    await noNodeCode(dist, "webpack");
    assert.ok((await readdir(dist)).some((f) => f.endsWith(".wasm")), "webpack emitted no wasm asset");
    const html = (await readFile(join(app, "index.html"), "utf8")).replace("/src/main.js", "/main.js");
    await (await import("node:fs/promises")).writeFile(join(dist, "index.html"), html);
    await inBrowser(await serveDir(t, dist), "webpack");
  });

  await t.test("webpack 5 in a workspace: node_modules above the build's directory", async () => {
    // An npm workspace hoists node_modules above the app: webpack took the
    // Vite dev server's fallback URL for an asset and failed to resolve it.
    const ws = join(app, "packages/web");
    await (await import("node:fs/promises")).cp(join(app, "src"), join(ws, "src"), { recursive: true });
    // Not minimized: what this build checks is resolution (the first
    // build ran the minimized output).
    await run(process.execPath, [join(app, "webpack.mjs"), "--no-minimize"], ws);
    const dist = join(app, "dist-webpack");
    const html = (await readFile(join(app, "index.html"), "utf8")).replace("/src/main.js", "/main.js");
    await (await import("node:fs/promises")).writeFile(join(dist, "index.html"), html);
    await inBrowser(await serveDir(t, dist), "webpack in a workspace");
  });

  await t.test("Vite 8: vite build, served; the wasm is an emitted asset", async () => {
    await run(bin("vite"), ["build", "--logLevel", "warn"], app);
    const dist = join(app, "dist");
    await noNodeCode(dist, "vite 8");
    assert.ok((await readdir(join(dist, "assets"))).some((f) => /^floe-.*\.wasm$/.test(f)), "vite build emitted no floe*.wasm");
    await inBrowser(await serveDir(t, dist), "vite 8 build");
  });

  await t.test("Vite 8: the dev server, without configuration", async () => {
    const url = await devServer(t, bin("vite"), ["--port", "0", "--host", "127.0.0.1", "--strictPort"], app);
    await inBrowser(url, "vite 8 dev");
  });

  await t.test("tsc: strict, exactOptionalPropertyTypes, moduleResolution bundler and nodenext, over the installed types", async () => {
    // --skipLibCheck: src/types.ts is checked against the installed
    // declarations as each resolution finds them; the declarations
    // themselves (and @types/node's, which took two thirds of the
    // processor time) are checked with skipLibCheck false by the
    // WebAssembly step: tests/types (DOM lib, @types/node, neither) and
    // tests/node/dts-resolution.test.mjs (node16, nodenext, bundler).
    await run(bin("tsc"), ["-p", "tsconfig.bundler.json", "--skipLibCheck"], app);
    await run(bin("tsc"), ["-p", "tsconfig.nodenext.json", "--skipLibCheck"], app);
  });
});
