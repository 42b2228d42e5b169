// The package under Deno and Bun, as their users install it: `npm pack` of
// static/ and npm/floe-node, installed from the tarballs into a fresh
// project, and agent.mjs and lock.mjs run there by `deno run -A` and
// `bun run` (both from this folder's node_modules, at the versions its
// lock file fixes). Each process must end on its own once its work is
// done. Deno runs the agent with only the permissions it needs (reading,
// writing the stores' directory, the loopback network); a lock's holder
// is judged by its pid with -A (the host's name and kill(pid, 0) need
// --allow-sys and --allow-run).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { replayServer, openaiStream, anthropicStream, SSE_HEADERS } from "../node/replay.mjs";
import { floeServer } from "../floe-server.mjs";

const exec = promisify(execFile);
const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const bin = (name) => here(`./node_modules/.bin/${name}`);
const RUNTIMES = {
  deno: [bin("deno"), "run", "-A"],
  "deno (permissions)": [bin("deno"), "run", "--no-prompt", "--allow-read", "--allow-net=127.0.0.1"],
  bun: [bin("bun"), "run"],
  node: [process.execPath],
};

let work;
let app;
const server = floeServer("floe-runtimes-server-"); // built natively before the tests

before(async () => {
  work = await mkdtemp(join(tmpdir(), "floe-runtimes-"));
  app = join(work, "app");
  await mkdir(app);
  const tarballs = [];
  for (const dir of [here("../../static"), here("../../npm/floe-node")]) {
    const { stdout } = await exec("npm", ["pack", "--json", "--pack-destination", work], { cwd: dir });
    tarballs.push(join(work, JSON.parse(stdout)[0].filename));
  }
  await writeFile(join(app, "package.json"), JSON.stringify({ name: "runtime-user", private: true, type: "module" }));
  await exec("npm", ["install", "--offline", "--no-audit", "--no-fund", ...tarballs], { cwd: app });
  for (const f of ["agent.mjs", "lock.mjs", "connect.mjs"]) await copyFile(here(f), join(app, f));
});

after(() => rm(work, { recursive: true, force: true }));

/**
 * Starts `runtime flags… script args…` in the app; lines() gives its stdout's
 * lines so far, line(text) resolves once it printed text, exited with
 * its code, signal, stderr and the milliseconds from its last line to its
 * exit.
 */
function start(runtime, script, args, flags = []) {
  const [cmd, ...pre] = RUNTIMES[runtime];
  const child = spawn(cmd, [...pre, ...flags, script, ...args], { cwd: app, env: { ...process.env, NO_COLOR: "1" } });
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const lines = [];
  const waiting = [];
  let buf = "";
  let err = "";
  let lastLine = 0;
  child.stdout.setEncoding("utf8").on("data", (d) => {
    buf += d;
    for (let i; (i = buf.indexOf("\n")) >= 0; buf = buf.slice(i + 1)) {
      lines.push(buf.slice(0, i));
      lastLine = performance.now();
      for (const w of waiting) if (w.text === lines.at(-1)) w.resolve();
    }
  });
  child.stderr.setEncoding("utf8").on("data", (d) => (err += d));
  const exited = new Promise((resolve) =>
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr: err, lines, exitMs: performance.now() - lastLine });
    }),
  );
  const line = (text) =>
    lines.includes(text)
      ? Promise.resolve()
      : Promise.race([
          new Promise((resolve) => waiting.push({ text, resolve })),
          exited.then((r) => Promise.reject(new Error(`${runtime} ${script} exited before it printed ${text}: ${JSON.stringify(r)}`))),
        ]);
  return { child, line, exited };
}

for (const runtime of ["deno (permissions)", "bun"]) {
  test(`${runtime}: a README agent (approvals, a tool that throws, an abort, a {dir} store resumed, export and import, openai and anthropic through fetch) ends on its own`, { timeout: 120_000 }, async (t) => {
    const srv = await replayServer(t, async (req, res, text) => {
      const body = JSON.parse(text);
      res.writeHead(200, SSE_HEADERS);
      if (req.url === "/v1/messages") {
        const answered = body.messages.some((m) => Array.isArray(m.content) && m.content.some((c) => c.type === "tool_result"));
        res.end(answered ? anthropicStream({ text: ["It is ", "5."] }) : anthropicStream({ calls: [{ id: "toolu_1", name: "add", args: ['{"a":2,', '"b":3}'] }] }));
      } else {
        const answered = body.messages.some((m) => m.role === "tool");
        res.end(answered ? openaiStream({ text: ["It is ", "5."] }) : openaiStream({ calls: [{ id: "call_1", name: "add", args: ['{"a":2,', '"b":3}'] }] }));
      }
    });
    const dirs = join(work, runtime.split(" ")[0]);
    const deno = runtime.startsWith("deno") ? [`--allow-write=${dirs}`] : [];
    const { exited } = start(runtime, "agent.mjs", [join(dirs, "store"), join(dirs, "imported"), srv.url], deno);
    const r = await exited;
    assert.equal(r.code, 0, r.stderr);
    t.diagnostic(`${runtime} exited ${Math.round(r.exitMs)} ms after its last line`);
    const out = JSON.parse(r.lines.at(-1));
    assert.deepEqual(out.tools, {
      status: "done",
      text: "It is 5.",
      cards: [["done", "5"], ["failed", "[tool error] kaboom"], ["denied", "Tool call denied by user."]],
    });
    assert.deepEqual(out.abort, { status: "aborted", card: ["aborted", "[interrupted: tool aborted by user]"] });
    assert.deepEqual(out.stored, { texts: ["one", "two", "three", "four"], files: 1, listed: [["stored", "a"]] });
    assert.deepEqual(out.models, [
      ["openai-chat", "done", "It is 5.", ["5"]],
      ["anthropic", "done", "It is 5.", ["5"]],
    ]);
    assert.equal(srv.requests.length, 4);
    assert.deepEqual(out.timers, { waits: 0, live: out.timers.live, refd: 0 }, "the runtime's timers hold no event loop");
  });
}

test("a {dir} session's lock across runtimes: Bun is refused while Deno runs it, naming the process; a killed Bun's lock is taken by Deno, and Node's by Bun", { timeout: 120_000 }, async () => {
  const dir = join(work, "locks");
  const held = (who) => new RegExp(`^resumeSession: session "s" is busy: another process \\(pid ${who} on [^)]+\\) is running it \\(its lock file .*\\.s\\.lock`);

  const deno = start("deno", "lock.mjs", ["hold", dir, "s"]);
  await deno.line("holding");
  const refused = await start("bun", "lock.mjs", ["try", dir, "s"]).exited;
  assert.equal(refused.code, 0, refused.stderr);
  const e = JSON.parse(refused.lines.at(-1));
  assert.equal(e.code, "session_busy");
  assert.match(e.message, held(deno.child.pid));
  deno.child.stdin.end("go on\n");
  await deno.line("ended");
  assert.equal((await deno.exited).code, 0);

  for (const [holder, taker] of [["bun", "deno"], ["node", "bun"]]) {
    const h = start(holder, "lock.mjs", ["hold", dir, "s"]);
    await h.line("holding");
    h.child.kill("SIGKILL");
    await h.exited;
    const took = await start(taker, "lock.mjs", ["try", dir, "s"]).exited;
    assert.deepEqual([took.code, took.lines.at(-1)], [0, "ran"], `${taker} after a killed ${holder}: ${took.stderr}`);
  }
});

test("floe.connect under Deno and Bun against floe-server: a run with approvals, an abort while an approval waits; each ends on its own as under Node", { timeout: 120_000 }, async (t) => {
  const base = await server.start("--dir", ":memory:", "--delay", "0", "--token", "tok");
  const outs = {};
  for (const runtime of ["node", "deno (permissions)", "bun"]) {
    const r = await start(runtime, "connect.mjs", [base]).exited;
    assert.equal(r.code, 0, `${runtime}: ${r.stderr}`);
    t.diagnostic(`${runtime} exited ${Math.round(r.exitMs)} ms after its last line`);
    // Nothing of connect's holds the process: a stream's stall timer or a
    // reconnect's wait left behind would for tens of seconds.
    assert.ok(r.exitMs < 10_000, `${runtime} exited ${Math.round(r.exitMs)} ms after its last line`);
    outs[runtime] = JSON.parse(r.lines.at(-1));
  }
  assert.deepEqual(outs.node, {
    run: { asked: ["list_files", "count_lines"], outputs: 2, last: "request_end", state: "idle", history: 2 },
    abort: { asked: ["list_files"], last: ["abort", "aborted by user"], decided: false, ran: false },
  });
  assert.deepEqual(outs["deno (permissions)"], outs.node);
  assert.deepEqual(outs.bun, outs.node);
});
