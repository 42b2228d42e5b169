// The npm package: `npm pack` of static/, installed from the tarball into a
// fresh copy of tests/vite-app (vite@7), built with `vite build`, served, and
// run in Chromium. Only the tarball is used, as a user would.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { awaitGlobal, explain, launch, page as firstPage, ROOT, serveDir } from "./harness.mjs";
import { compact, EXPECTED } from "./fixtures/scripted.mjs";

const exec = promisify(execFile);

// run runs a command with a time bound; a failure carries its output.
async function run(cmd, args, cwd, timeout = 180_000) {
  try {
    return (await exec(cmd, args, { cwd, timeout, maxBuffer: 16 << 20 })).stdout;
  } catch (e) {
    throw new Error(`${cmd} ${args.join(" ")} (in ${cwd}) failed: ${e.message}\n${e.stdout ?? ""}${e.stderr ?? ""}`);
  }
}

test("npm package: pack, install into a Vite app, build, run in Chromium", { timeout: 420_000 }, async (t) => {
  const work = await mkdtemp(join(tmpdir(), "floe-package-"));
  t.after(() => rm(work, { recursive: true, force: true }));

  const [packed] = JSON.parse(await run("npm", ["pack", "--json", "--pack-destination", work], join(ROOT, "static")));
  const files = packed.files.map((f) => f.path).sort();
  assert.deepEqual(files, ["README.md", "connect.mjs", "floe-node.wasm", "floe.d.ts", "floe.mjs", "floe.wasm", "package.json", "wasm_exec.js"]);
  const tarball = join(work, packed.filename);

  const app = join(work, "app");
  await cp(join(ROOT, "tests/vite-app"), app, {
    recursive: true,
    filter: (src) => !/[\\/](node_modules|dist)([\\/]|$)/.test(src),
  });
  await cp(join(ROOT, "tests/browser/fixtures/scripted.mjs"), join(app, "src/scripted.mjs"));
  await run("npm", ["ci", "--no-audit", "--no-fund"], app);
  await run("npm", ["install", "--no-audit", "--no-fund", tarball], app);
  const build = await run(join(app, "node_modules/.bin/vite"), ["build"], app);

  const assets = await readdir(join(app, "dist/assets"));
  assert.ok(
    assets.some((f) => /^floe-.*\.wasm$/.test(f)),
    `vite build emitted no floe*.wasm asset (new URL("./floe.wasm", import.meta.url) not handled): ${assets}\n${build}`,
  );
  assert.ok(!assets.some((f) => f.startsWith("floe-node")), `the Node build leaked into the browser bundle: ${assets}`);

  const url = await serveDir(t, join(app, "dist"));
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  await page.goto(url + "/");
  const result = await awaitGlobal(page, "floeResult");
  assert.equal(result.error, undefined, `the session failed in the built app: ${result.error}${explain(log)}`);
  assert.deepEqual(result.messages.map(compact), EXPECTED, "stream order" + explain(log));
});
