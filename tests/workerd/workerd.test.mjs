// floe.mjs in a Cloudflare Worker under bare workerd (from npm): the
// worker of worker.mjs, with the package's modules and floe.wasm in its
// module map, answers one request by running a session.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { copyFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../free-port.mjs";

const here = new URL(".", import.meta.url).pathname;
const statics = new URL("../../static/", import.meta.url).pathname;
const MODULES = ["floe.mjs", "connect.mjs", "http.mjs", "internal.mjs", "msg.mjs", "options.mjs", "schema.mjs", "tool.mjs", "transcript.mjs", "test.mjs", "wasm_exec.js"];
// FLOE_WORKERD_PORT, or a port free a moment before (a fixed one could be
// another suite's, run beside this one).
const PORT = process.env.FLOE_WORKERD_PORT ?? (await freePort());

test("a Cloudflare Worker runs a session with load({ wasm }), without MessageChannel", { timeout: 120_000 }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "floe-workerd-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  for (const f of [...MODULES, "floe.wasm"]) await copyFile(join(statics, f), join(dir, f));
  await copyFile(join(here, "worker.mjs"), join(dir, "worker.mjs"));
  const modules = ["worker.mjs", ...MODULES].map((f) => `(name = "${f}", esModule = embed "${f}")`);
  modules.push(`(name = "floe.wasm", wasm = embed "floe.wasm")`);
  await writeFile(
    join(dir, "config.capnp"),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .worker)],
  sockets = [(name = "http", address = "127.0.0.1:${PORT}", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [${modules.join(", ")}],
  compatibilityDate = "2025-01-01",
);
`,
  );
  const child = spawn(join(here, "node_modules/.bin/workerd"), ["serve", join(dir, "config.capnp")], { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout.on("data", (b) => (log += b));
  child.stderr.on("data", (b) => (log += b));
  t.after(() => child.kill());
  const exited = new Promise((_, reject) => child.on("exit", (code) => reject(new Error(`workerd exited (${code}):\n${log}`))));
  exited.catch(() => {});
  // workerd prints nothing when it listens: try until it answers.
  let res;
  for (let i = 0; ; i++) {
    try {
      res = await Promise.race([fetch(`http://127.0.0.1:${PORT}/`), exited]);
      break;
    } catch (e) {
      if (i >= 200 || child.exitCode !== null) throw new Error(`workerd did not answer: ${e.message}\n${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const body = await res.text();
  assert.equal(res.status, 200, body + "\n" + log);
  assert.deepEqual(JSON.parse(body), { text: "It is 12:00.", output: "12:00", problems: [], messageChannel: "undefined", setImmediate: "undefined" });
});
