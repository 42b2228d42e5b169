// A Node script that uses Floe exits when its work is done, and not before:
// the Go runtime's timers hold the event loop only while JavaScript waits
// for Floe (floe.mjs runtimeTimers). Each test runs a fresh process, which
// must end on its own: a timer left holding the loop would keep it alive
// (it is killed after a minute), and one let go too early would end it
// inside its top-level await, with exit status 13.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";

const exec = promisify(execFile);
const entry = new URL("../../static/floe-node.mjs", import.meta.url).href;

const prelude = `import { load } from ${JSON.stringify(entry)};
const floe = await load();
const debug = floe[Symbol.for("floe.debug")];
const counts = { cache_read: 0, cache_write: 0, output: 1, total: 2 };
const meta = (id) => ({ session_id: id, provider: "test", model_id: "scripted", model_context_window: 1000000, system_prompt: "", agent_state: "", workspace: "" });
const delta = (event_type, text) => ({ type: "model_msg", payload: { type: "partial_text", role: "assistant", event_type, text } });
`;

async function child(src) {
  const { stdout } = await exec(process.execPath, ["--input-type=module", "-e", prelude + src], { timeout: 60_000 });
  return JSON.parse(stdout);
}

test("after long streams the runtime keeps a timer set, and it holds no event loop: the script exits on its own", async () => {
  // Long streams grow the Go heap; once it shrinks, the runtime's scavenger
  // sleeps up to about a second between its bursts, on a timer. Runs go on
  // until one ends with that timer set (the first few leave none).
  const out = await child(`
let runs = 0, timers;
do {
  const session = floe.createSession({ meta: meta("exit-" + runs), llm: { async *streamGenerate() {
    yield delta("start", "");
    for (let i = 0; i < 100000; i++) yield delta("delta", "abcdefg ");
    yield delta("stop", "");
    yield { type: "model_msg", payload: { type: "text", role: "assistant", text: "abcdefg ".repeat(100000), stop_reason: "completed" } };
    yield { type: "event_msg", payload: { type: "token_usage", session: counts, request: counts } };
  } } });
  for await (const m of session.run("go")) if (m.payload.type === "request_end" && m.payload.status !== "completed") throw new Error(JSON.stringify(m));
  await session.close();
  runs++;
  timers = debug.timers();
} while (timers.live === 0 && runs < 20);
// A wait that begins holds the timers already set, before Go runs again.
const ac = new AbortController();
const session = floe.createSession({ meta: meta("exit-wait"), abortGraceMs: 10, llm: { async *streamGenerate() { await new Promise(() => {}); } } });
const it = session.run("go", { signal: ac.signal })[Symbol.asyncIterator]();
const first = it.next();
const waiting = debug.timers();
ac.abort();
for (let r = await first; !r.done; r = await it.next());
await session.close();
console.log(JSON.stringify({ timers, runs, waiting, after: debug.timers() }));`);
  assert.ok(out.timers.live > 0, `no runtime timer was left set after ${out.runs} runs: the test checks nothing`);
  assert.deepEqual(out.timers, { waits: 0, live: out.timers.live, refd: 0 });
  assert.ok(out.waiting.waits > 0 && out.waiting.refd === out.waiting.live && out.waiting.live > 0, JSON.stringify(out.waiting));
  assert.equal(out.after.waits, 0);
  assert.equal(out.after.refd, 0);
});

test("a run whose next step is a Go timer (an abort's grace) still ends in a script with nothing else pending", async () => {
  // The model ignores its abort and never returns: the run ends when the
  // engine abandons it after abortGraceMs, on a runtime timer, while the
  // script's only wait is the stream's next().
  const out = await child(`
const ac = new AbortController();
const session = floe.createSession({ meta: meta("grace"), abortGraceMs: 30, llm: { async *streamGenerate() {
  yield delta("start", "");
  yield delta("delta", "thinking");
  await new Promise(() => {});
} } });
const seen = [];
for await (const m of session.run("go", { signal: ac.signal })) {
  if (m.payload.event_type === "delta") {
    ac.abort();
    seen.push(debug.timers().waits > 0 || "no wait");
  }
  seen.push(m.payload.type);
}
await session.close();
console.log(JSON.stringify({ seen, timers: debug.timers() }));`);
  assert.equal(out.seen.at(-1), "abort");
  assert.ok(out.seen.includes("request_end"));
  assert.equal(out.timers.waits, 0);
  assert.equal(out.timers.refd, 0);
});
