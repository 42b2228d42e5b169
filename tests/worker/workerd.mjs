// Runs the built Cloudflare target (build/worker) under local workerd: no
// account, no network. start() writes a workerd config beside the build
// and resolves once the front Worker answers.
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { after } from "node:test";
import { copyFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const BUILD = join(ROOT, "build/worker");
const WORKERD = join(ROOT, "tests/worker/node_modules/.bin/workerd");

// vars are more text bindings (FLOE_MODEL and the rest, a secret); with
// loopback the Worker's fetch may reach 127.0.0.1 (a test's model server);
// with sqlLimits the session object's storage refuses what Cloudflare's
// refuses and local workerd takes (sql-limits.mjs); with readyProbe
// /readyz's check is counted and held (ready-probe.mjs); with sessions
// false the SESSIONS binding is left out; with main, that module of
// tests/worker is the main module (one-instant.mjs).
export function config({ port, storage, token = "", delayMs = 0, mode = "ask", replayEvents = 0, vars = {}, loopback = false, sqlLimits = false, readyProbe = false, sessions = true, main = "" }) {
  const text = (s) => JSON.stringify(String(s));
  const more = Object.entries(vars).map(([k, v]) => `    (name = ${text(k)}, text = ${text(v)}),\n`).join("");
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .floe),
    (name = "storage", disk = (path = ${text(storage)}, writable = true)),${loopback ? `\n    (name = "internet", network = (allow = ["public", "local"])),` : ""}
  ],
  sockets = [(name = "http", address = ${text("127.0.0.1:" + port)}, http = (), service = "main")],
);
const floe :Workerd.Worker = (
  modules = [
${main ? `    (name = ${text(main)}, esModule = embed ${text(main)}),\n` : ""}${sqlLimits ? `    (name = "sql-limits.mjs", esModule = embed "sql-limits.mjs"),\n` : ""}${readyProbe ? `    (name = "ready-probe.mjs", esModule = embed "ready-probe.mjs"),\n` : ""}    (name = "index.mjs", esModule = embed "index.mjs"),
    (name = "worker.mjs", esModule = embed "worker.mjs"),
    (name = "runtime.mjs", esModule = embed "runtime.mjs"),
    (name = "session_object.mjs", esModule = embed "session_object.mjs"),
    (name = "wasm_exec.js", esModule = embed "wasm_exec.js"),
    (name = "app.wasm", wasm = embed "app.wasm"),
    (name = "object.wasm", wasm = embed "object.wasm"),
  ],
  compatibilityDate = "2026-11-01",
  bindings = [
${sessions ? `    (name = "SESSIONS", durableObjectNamespace = "SessionObject"),\n` : ""}    (name = "FLOE_TOKEN", text = ${text(token)}),
    (name = "FLOE_DELAY_MS", text = ${text(delayMs)}),
    (name = "FLOE_MODE", text = ${text(mode)}),
    (name = "FLOE_REPLAY_EVENTS", text = ${text(replayEvents)}),
${more}  ],
  durableObjectNamespaces = [(className = "SessionObject", uniqueKey = "floe-sessions", enableSql = true)],
  durableObjectStorage = (localDisk = "storage"),
);
`;
}

// ports hands out the ports first..last of one test file, one at a time.
// The files run in parallel on a machine of more than two cores: a file
// that went past its block started a workerd on another file's port, or
// took the other file's workerd, already answering there, for its own.
export function ports(first, last) {
  let next = first;
  return () => {
    if (next > last) throw new Error(`this file's ports are ${first}-${last}: all taken; widen its block, disjoint from the other files' blocks`);
    return next++;
  };
}

// live holds a kill for each workerd still running: the test process
// kills them as it exits or is stopped. One set of listeners for all (a
// pair per workerd went past Node's ten and printed its warning).
const live = new Set();
const killAll = () => live.forEach((kill) => kill());
process.on("exit", killAll);
for (const sig of ["SIGTERM", "SIGINT"]) process.once(sig, () => (killAll(), process.exit(1)));

// start runs workerd and resolves to {url, stop()} once it answers.
export async function start(opts) {
  mkdirSync(opts.storage, { recursive: true });
  const file = join(BUILD, `config-${opts.port}.capnp`);
  writeFileSync(file, config(opts));
  if (opts.sqlLimits) copyFileSync(join(ROOT, "tests/worker/sql-limits.mjs"), join(BUILD, "sql-limits.mjs"));
  if (opts.readyProbe) copyFileSync(join(ROOT, "tests/worker/ready-probe.mjs"), join(BUILD, "ready-probe.mjs"));
  if (opts.main) copyFileSync(join(ROOT, "tests/worker", opts.main), join(BUILD, opts.main));
  // With logs (an array), what workerd prints (the Worker's console) is
  // kept there instead of shown.
  const proc = spawn(WORKERD, ["serve", file, "--experimental", ...(opts.logs ? ["--verbose"] : [])], { stdio: ["ignore", opts.logs ? "pipe" : "inherit", opts.logs ? "pipe" : "inherit"] });
  if (opts.logs) for (const s of [proc.stdout, proc.stderr]) s.on("data", (d) => opts.logs.push(String(d)));
  let exited = null;
  proc.on("exit", (code, signal) => (exited = code ?? signal));
  const kill = () => exited === null && proc.kill("SIGKILL");
  live.add(kill);
  proc.on("exit", () => live.delete(kill));
  const url = `http://127.0.0.1:${opts.port}`;
  for (let i = 0; ; i++) {
    if (exited !== null) throw new Error(`workerd exited with ${exited}`);
    try {
      await fetch(url + "/api/nothing");
      break;
    } catch {
      if (i > 300) throw new Error("workerd did not start within 30 s");
      await new Promise((r) => setTimeout(r, 100)); // waiting for the listener, not ordering events
    }
  }
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        if (exited !== null) return resolve();
        proc.on("close", resolve); // its output read to the end (start's logs)
        proc.kill("SIGKILL");
      }),
  };
}

// modelServer answers each request with the next of its replies ({status,
// headers, body}; hold: the body written and the connection held open)
// and keeps what it was sent; it closes after the test file.
export async function modelServer() {
  const replies = [];
  const seen = [];
  const srv = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      seen.push({ method: req.method, path: req.url, headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      const r = replies.shift() ?? { status: 500, headers: { "content-type": "application/json" }, body: '{"error":{"message":"the test has no reply left"}}' };
      res.writeHead(r.status, r.headers);
      if (r.hold) res.write(r.body); // then nothing more: the connection held open
      else res.end(r.body);
    });
  });
  await new Promise((resolve) => srv.listen(0, "127.0.0.1", resolve));
  after(() => srv.close());
  return { url: `http://127.0.0.1:${srv.address().port}`, replies, seen };
}
