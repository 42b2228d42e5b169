// Shared fixtures of the Node tests: they drive the built static/floe-node.mjs.
import { load } from "../../static/floe-node.mjs";

export const floe = await load();

// Each session without an id of its own gets a fresh one: the memory store
// is the process's, and a second session of a stored id writes nothing
// (and warns).
let metas = 0;
export const meta = (id = `session-test-${++metas}`) => ({
  session_id: id,
  provider: "test",
  model_id: "scripted",
  model_context_window: 1000,
  system_prompt: "",
  agent_state: "",
  workspace: "",
});

const counts = { cache_read: 0, cache_write: 0, output: 1, total: 2 };
export const usage = () => ({ type: "event_msg", payload: { type: "token_usage", session: counts, request: counts } });

/** An assistant text streamed as start, one delta per piece, stop, complete text. */
export function* text(...pieces) {
  const p = (event_type, t) => ({ type: "model_msg", payload: { type: "partial_text", role: "assistant", event_type, text: t } });
  yield p("start", "");
  for (const t of pieces) yield p("delta", t);
  yield p("stop", "");
  yield { type: "model_msg", payload: { type: "text", role: "assistant", text: pieces.join(""), stop_reason: "completed" } };
}

export const toolCall = (id, name = "echo", args = "{}") => ({
  type: "model_msg",
  payload: { type: "tool_call", role: "assistant", name, arguments: args, tool_call_id: id, stop_reason: "completed" },
});

export const toolOutput = (id, output) => ({
  type: "model_msg",
  payload: { type: "tool_call_output", role: "user", output, tool_call_id: id, stop_reason: "completed" },
});

/** A clock whose sleep resolves at once and records the durations. */
export function instantClock() {
  const sleeps = [];
  let t = Date.UTC(2025, 0, 1);
  return { sleeps, now: () => ++t, sleep: async (ms) => (sleeps.push(ms), true) };
}

/** A model that answers request k with turns[k](params) (an async generator function); the last turn repeats. */
export function scriptedLLM(...turns) {
  const calls = [];
  return {
    calls,
    streamGenerate(params) {
      calls.push(params);
      return turns[Math.min(calls.length, turns.length) - 1](params);
    },
  };
}

/** A turn that streams one text, then ends completed. */
export const say = (...pieces) =>
  async function* () {
    yield* text(...pieces);
    yield usage();
    return { status: "completed" };
  };

export async function collect(stream) {
  const out = [];
  for await (const m of stream) out.push(m);
  return out;
}

export const types = (msgs) => msgs.map((m) => m.payload.type ?? m.type);
export const find = (msgs, type) => msgs.filter((m) => m.payload.type === type);

/** A promise that never settles. */
export const never = () => new Promise(() => {});

/** Waits until pred() holds, polling each macrotask (for signals set by the engine). */
export async function until(pred, what, ms = 5000) {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

// inMode runs f with every message crossing as JSON (jsonOnly) or with
// records (the bridge's test hook).
export async function inMode(jsonOnly, f) {
  floe[Symbol.for("floe.debug")].jsonOnly(jsonOnly);
  try {
    return await f();
  } finally {
    floe[Symbol.for("floe.debug")].jsonOnly(false);
  }
}

/**
 * A {dir} session's second run started while its first run's last write
 * is held (the first run has ended in the engine; its stream ends once the
 * write is done), then, while the second run is in flight, a resume of the
 * session in this program. Returns what the lock let happen: whether the
 * lock file was there during the second run, the resume's error code (or
 * "resumed"), the second run's text, and whether the lock file outlived it.
 */
export async function runBesideLastWrite(t, dir, id) {
  const nodeFS = (await import("node:fs")).default;
  const store = { dir };
  const lockFile = `${dir}/.${id}.lock`;
  const { write } = nodeFS;
  let holdWrites = false;
  const held = [];
  let writeHeld;
  const aWriteHeld = new Promise((r) => (writeHeld = r));
  nodeFS.write = function (...args) {
    if (!holdWrites) return write.apply(this, args);
    held.push(() => write.apply(this, args));
    writeHeld();
  };
  t.after(() => Object.assign(nodeFS, { write }));
  let modelB, releaseB;
  const modelBStarted = new Promise((r) => (modelB = r));
  const gateB = new Promise((r) => (releaseB = r));
  const s = floe.createSession({
    meta: meta(id),
    store,
    llm: scriptedLLM(say("one"), async function* () {
      modelB();
      await gateB;
      yield* say("two")();
    }),
  });
  const a = s.run("first")[Symbol.asyncIterator]();
  for (let r = await a.next(); r.value.payload.type !== "request_end"; r = await a.next());
  holdWrites = true; // the first run's last write waits
  const aEnd = a.next();
  await aWriteHeld;
  holdWrites = false;
  const b = s.run("second"); // accepted: the first run has ended in the engine
  held.forEach((f) => f());
  const out = { firstEnded: (await aEnd).done };
  const bMsgs = [];
  const bDone = (async () => {
    for await (const m of b) bMsgs.push(m);
  })();
  await modelBStarted;
  out.lockFileDuring = nodeFS.existsSync(lockFile);
  out.resumeDuring = await floe.resumeSession(id, { llm: scriptedLLM(say("x")), store }).then(
    (r) => (r.close(), "resumed"),
    (e) => e.code,
  );
  releaseB();
  await bDone;
  out.text = find(bMsgs, "text").at(-1)?.payload.text;
  out.lockFileAfter = nodeFS.existsSync(lockFile);
  await s.close();
  return out;
}
