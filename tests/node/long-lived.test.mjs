// A long-lived program (a server process, a page open for days) creates
// and closes sessions of every kind, with one AbortSignal that outlives
// them all (a server's shutdown, a page's Stop button): once every session
// is closed, nothing of them is left on that signal, in the shim's tables
// or in Go's memory, and a script that does the same exits on its own.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { getEventListeners } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { floe, meta } from "./helpers.mjs";
import { hanging, kinds } from "./long-lived-kinds.mjs";

const debug = floe[Symbol.for("floe.debug")];
const listeners = (signal) => getEventListeners(signal, "abort").length;

test("a run or compaction this program's lock refuses as session_busy lets go of its signal", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "floe-long-lived-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const store of ["memory", { dir }]) {
    const id = `session-2026-01-01-00-00-00-${store === "memory" ? "0000b0b0" : "0000d1d1"}`;
    const ac = new AbortController();
    const a = floe.createSession({ meta: meta(id), llm: hanging(), store });
    const b = floe.createSession({ meta: meta(id), llm: hanging(), store, onDiagnostic: () => {} });
    const it = a.run("go")[Symbol.asyncIterator]();
    await it.next(); // a holds the session's lock
    for (let i = 0; i < 3; i++) {
      assert.throws(() => b.run("too", { signal: ac.signal }), (e) => e.code === "session_busy");
      assert.throws(() => b.compact({ signal: ac.signal }), (e) => e.code === "session_busy");
    }
    assert.equal(listeners(ac.signal), 0, `${JSON.stringify(store)}: the refused runs left listeners on their signal`);
    await a.close();
    await b.close();
    await floe.deleteSession(id, { store });
  }
});

test("sessions of every kind created, run and closed with one long-lived signal leave nothing behind", async (t) => {
  const page = new AbortController();
  const all = kinds(page.signal);
  const cycle = async () => {
    for (const f of Object.values(all)) await f();
  };
  const mem = () => debug.memoryBytes();
  for (let i = 0; i < 30; i++) await cycle(); // warm-up (see hardening.test.mjs growth)
  const windows = [];
  for (let w = 0; w < 2; w++) {
    const before = mem();
    for (let i = 0; i < 30; i++) await cycle();
    windows.push(mem() - before);
  }
  const grew = Math.min(...windows);
  t.diagnostic(`wasm memory grew ${grew} bytes`);
  assert.equal(listeners(page.signal), 0, "listeners left on the long-lived signal");
  const { pumps, ticking } = debug.calls();
  assert.deepEqual({ pumps, ticking }, { pumps: 0, ticking: 0 });
  const { waits, refd } = debug.timers();
  assert.deepEqual({ waits, refd }, { waits: 0, refd: 0 });
  assert.ok(grew < 1 << 20, `grew ${grew} bytes`);
});

test("a script that runs sessions of every kind and closes them exits on its own at once", { timeout: 60_000 }, async () => {
  const src = `
const t0 = Date.now();
const { kinds } = await import(${JSON.stringify(new URL("./long-lived-kinds.mjs", import.meta.url).href)});
const page = new AbortController();
for (const f of Object.values(kinds(page.signal))) await f();
// What keeps the event loop alive once the work is done (a ref'd timer,
// a port, a socket): nothing may, or the script waits for it to end.
const left = process.getActiveResourcesInfo().filter((r) => !/^(TTYWrap|PipeWrap|Immediate)$/.test(r)); // an Immediate runs at the next turn
console.log(JSON.stringify({ ran: Date.now() - t0, left }));
`;
  // It ends on its own (a hang fails at the timeout); nothing is left at
  // the end of its work that could hold it open a while.
  const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", src], { timeout: 30_000 });
  const out = JSON.parse(stdout.trim().split("\n").at(-1));
  assert.deepEqual(out.left, [], `left at the end of the script's work: ${JSON.stringify(out)}`);
});

