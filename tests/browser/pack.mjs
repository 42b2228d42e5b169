// Packing for the package tests: the npm tarballs of static/ (@floehq/floe)
// and npm/floe-node (@floehq/floe-node), and a fresh copy of an app
// directory with its committed lock file installed by npm ci and the
// tarballs added, as a user would.
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { cp, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { ROOT, WAIT } from "./harness.mjs";

export { freePort } from "../free-port.mjs"; // Vite 7 takes --port 0 for its default, 5173

const exec = promisify(execFile);

/** What the @floehq/floe tarball holds: no Node-only wasm (that is @floehq/floe-node's). */
export const PACKAGE_FILES = [
  "LICENSE", "LICENSE-wasm_exec", "NOTICE", "README.md", "ai-sdk.d.ts", "ai-sdk.mjs", "connect.d.ts", "connect.mjs", "floe-node.mjs", "floe.d.ts", "floe.mjs", "floe.wasm",
  "http.mjs", "internal.mjs", "msg.mjs", "options.mjs", "package.json", "schema.mjs", "test.d.ts", "test.mjs", "tool.mjs",
  "transcript.mjs", "wasm_exec.js",
];

/** run runs a command with a time bound; a failure carries its output. */
export async function run(cmd, args, cwd, timeout = 180_000) {
  try {
    return (await exec(cmd, args, { cwd, timeout, maxBuffer: 16 << 20 })).stdout;
  } catch (e) {
    throw new Error(`${cmd} ${args.join(" ")} (in ${cwd}) failed: ${e.message}\n${e.stdout ?? ""}${e.stderr ?? ""}`);
  }
}

/**
 * Packs both packages into work; returns their tarball paths (and checks
 * the main one's files). With FLOE_PACK_DIR set (scripts/test-browser.sh
 * sets it to a folder of its run), they are packed there once a run (or
 * once by each of the files that ask at the same time) and the later
 * calls return the same tarballs: each test installs them into a fresh
 * app still.
 */
export async function pack(work) {
  const dir = process.env.FLOE_PACK_DIR;
  if (!dir) return packInto(work);
  const done = join(dir, "tarballs.json"); // written once both are packed and checked
  try {
    return JSON.parse(await readFile(done, "utf8"));
  } catch (e) {
    if (e.code !== "ENOENT") throw e;
  }
  // Test files run two at a time (scripts/test-browser.sh): two may pack
  // at once. Each packs into a folder of its own and the list is renamed
  // into place whole, so a reader sees either no list or a complete one
  // whose tarballs no other packing overwrites.
  const tarballs = await packInto(await mkdtemp(join(dir, "pack-")));
  await writeFile(done + ".edit" + process.pid, JSON.stringify(tarballs));
  await rename(done + ".edit" + process.pid, done);
  return tarballs;
}

async function packInto(work) {
  const [main] = JSON.parse(await run("npm", ["pack", "--json", "--pack-destination", work], join(ROOT, "static")));
  assert.deepEqual(main.files.map((f) => f.path).sort(), PACKAGE_FILES);
  const [node] = JSON.parse(await run("npm", ["pack", "--json", "--pack-destination", work], join(ROOT, "npm/floe-node")));
  assert.deepEqual(node.files.map((f) => f.path).sort(), ["LICENSE", "LICENSE-wasm_exec", "NOTICE", "floe-node.wasm", "package.json"]);
  return { main: join(work, main.filename), node: join(work, node.filename) };
}

/**
 * Copies the app at src (without node_modules or build output) to dst,
 * runs npm ci, installs the tarballs. The lock file pins each package and
 * its integrity: --prefer-offline takes a package's metadata from npm's
 * cache when it is there, instead of asking the registry whether it
 * changed (it asked for each of a hundred packages, up to 2 s each, on
 * every install).
 *
 * With FLOE_PACK_DIR set, the node_modules so installed is also kept
 * there, before anything ran in the app, keyed by the app's package
 * files and the tarballs: a later test of the run installing the same
 * gets a copy of it (cp -a: a seventh of the processor time of npm ci
 * and npm install; react.test.mjs and usechat.test.mjs share tests/react).
 * What is kept is hard links to the first app's files (cp -al, a fifth of
 * a second), which nothing writes to in place: Vite's cache is a new
 * folder, node_modules/.vite. Two installing at once each install; the
 * first kept stays.
 */
export async function freshApp(src, dst, tarballs) {
  await cp(src, dst, { recursive: true, filter: (p) => !/[\\/](node_modules|dist[^\\/]*)([\\/]|$)/.test(p) });
  const dir = process.env.FLOE_PACK_DIR;
  const installed = dir && join(dir, "app-" + (await installKey(src, tarballs)));
  if (installed && existsSync(installed)) {
    await run("cp", ["-a", join(installed, "node_modules"), dst]);
    return;
  }
  await run("npm", ["ci", "--no-audit", "--no-fund", "--prefer-offline"], dst);
  await run("npm", ["install", "--no-audit", "--no-fund", "--no-save", ...tarballs], dst);
  if (!installed) return;
  const kept = await mkdtemp(join(dir, "install-"));
  try {
    await run("cp", ["-al", join(dst, "node_modules"), kept]);
    await rename(kept, installed);
  } catch {
    // Another test's is in place, or FLOE_PACK_DIR is on another file
    // system than dst (no hard links): the next test installs.
    await rm(kept, { recursive: true, force: true });
  }
}

/** What an install of src with the tarballs depends on: its package files, the tarballs' paths (a pack's are never overwritten). */
async function installKey(src, tarballs) {
  const hash = createHash("sha256");
  for (const f of ["package.json", "package-lock.json", ".npmrc"]) {
    hash.update(f + "\0");
    hash.update(await readFile(join(src, f)).catch((e) => (e.code === "ENOENT" ? "" : Promise.reject(e))));
    hash.update("\0");
  }
  hash.update(JSON.stringify(tarballs));
  return hash.digest("hex").slice(0, 16);
}

/**
 * Writes a dev server's source file whole at once (a file beside it,
 * renamed over it): written in place, the watcher may read it truncated
 * or half written, and the hot update then sees a module without its
 * exports ("Could not Fast Refresh (export removed)") and does not come.
 */
export async function edit(path, text) {
  await writeFile(path + ".edit", text);
  await rename(path + ".edit", path);
}

/**
 * Starts a dev server (cmd args in cwd, in its own process group) and
 * resolves to the first http://127.0.0.1:<port> URL it prints; it is
 * killed after the test.
 */
export function devServer(t, cmd, args, cwd) {
  const child = spawn(cmd, args, { cwd, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  t.after(() => {
    try {
      // SIGKILL: on SIGTERM Vite 7 waits for its server to close, which a
      // page still connected (a failed test's) holds open for ever.
      process.kill(-child.pid, "SIGKILL");
    } catch {}
  });
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`${cmd} printed no URL within ${WAIT} ms:\n${out}`)), WAIT);
    const onData = (b) => {
      out += b;
      const m = out.replace(/\x1b\[[0-9;]*m/g, "").match(/http:\/\/127\.0\.0\.1:\d+/);
      if (m) {
        clearTimeout(timer);
        resolve(m[0]);
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} exited (${code}):\n${out}`));
    });
  });
}
