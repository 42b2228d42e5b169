// The npm package with Vite 7: `npm pack` of static/ installed from the
// tarball into a fresh copy of tests/vite-app, built with `vite build` and
// served, and run by Vite's dev server without configuration, each in
// Chromium. Only the tarball is used, as a user would. (Vite 8, esbuild,
// webpack, Node and tsc: bundlers.test.mjs.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { awaitGlobal, explain, launch, ROOT, serveDir } from "./harness.mjs";
import { devServer, freePort, freshApp, pack, run } from "./pack.mjs";
import { compact, EXPECTED } from "./fixtures/scripted.mjs";

test("npm package: pack, install into a Vite 7 app; vite build and the dev server, in Chromium", { timeout: 420_000 }, async (t) => {
  const work = await mkdtemp(join(tmpdir(), "floe-package-"));
  t.after(() => rm(work, { recursive: true, force: true }));
  const { main } = await pack(work);
  const app = join(work, "app");
  await freshApp(join(ROOT, "tests/vite-app"), app, [main]);
  await cp(join(ROOT, "tests/browser/fixtures/scripted.mjs"), join(app, "src/scripted.mjs"));
  const vite = join(app, "node_modules/.bin/vite");
  const { ctx, log } = await launch(t);
  const check = async (url, what) => {
    const page = await ctx.newPage();
    try {
      await page.goto(url + "/");
      const result = await awaitGlobal(page, "floeResult");
      assert.equal(result.error, undefined, `${what}: the session failed: ${result.error}${explain(log)}`);
      assert.deepEqual(result.messages.map(compact), EXPECTED, `${what}: stream order` + explain(log));
    } finally {
      await page.close();
    }
  };

  await t.test("vite build", async () => {
    const build = await run(vite, ["build"], app);
    const assets = await readdir(join(app, "dist/assets"));
    assert.ok(
      assets.some((f) => /^floe-.*\.wasm$/.test(f)),
      `vite build emitted no floe*.wasm asset (new URL("./floe.wasm", import.meta.url) not handled): ${assets}\n${build}`,
    );
    assert.ok(!assets.some((f) => f.startsWith("floe-node")), `the Node build leaked into the browser bundle: ${assets}`);
    await check(await serveDir(t, join(app, "dist")), "vite 7 build");
  });

  await t.test("Node without @floehq/floe-node: floe.wasm runs; a {dir} store names the package to install", async () => {
    const src = `import { load } from "@floehq/floe";
import { mockModel } from "@floehq/floe/test";
const floe = await load();
const types = [];
for await (const m of floe.createSession({ llm: mockModel(["hi"]) }).run("x")) types.push(m.payload.type);
let dir = "";
try { floe.createSession({ llm: mockModel([]), store: { dir: "traces" } }); } catch (e) { dir = e.code + ": " + e.message; }
console.log(JSON.stringify({ types, dir }));`;
    const out = JSON.parse(await run(process.execPath, ["--input-type=module", "-e", src], app));
    assert.deepEqual(out.types, ["request_begin", "partial_text", "partial_text", "partial_text", "text", "token_usage", "request_end"]);
    assert.match(out.dir, /^bad_argument: .*install @floehq\/floe-node next to @floehq\/floe/);
  });

  await t.test("vite dev server, without configuration", async () => {
    // Vite 7 takes no port 0: FLOE_VITE_PORT, or a port free a moment
    // before (a fixed one could be another suite's, run beside this one).
    const port = process.env.FLOE_VITE_PORT ?? String(await freePort());
    await check(await devServer(t, vite, ["--port", port, "--host", "127.0.0.1", "--strictPort"], app), "vite 7 dev");
  });
});
