// The persistence test page: scripted Floe sessions with the IndexedDB
// store, driven by the test through window.persist. Nothing here uses a
// timer to order events: the model, the tools, the approver and the clock
// wait on named gates that the test opens, or on messages the page has seen
// on the stream. The test cuts the page off (reload, browser restart) while
// a run waits on a gate, then resumes the session in a fresh page.
//
// Scenarios of a first run (prompt "say hi"; the model calls the tool echo
// once, call_1, then answers with its output):
//   approve    — the approver waits on gate "approve" (the run waits for the
//                decision; the request stays open);
//   toolStream — allowed; the tool streams "h", then waits on gate "tool";
//                the model waits on gate "llm" after the call, so the request
//                stays open while the tool streams;
//   lateOutput — allowed; the tool waits on gate "tool" before any output;
//                the request ends, the tool's output is due after it;
//   backoff    — the first attempt ends with outcome timeout; the injected
//                clock's sleep waits on gate "sleep" (the reconnect backoff);
//   flood      — the model waits on gate "flood", then streams FLOOD
//                complete texts (one record each) and waits on gate "llm":
//                the test cuts the page off while they are being stored;
//   plain      — no gate: runs to the end (the tool outputs after
//                request_end, so the stream order is fixed).
// With compaction, the session can compact (session.compact(), mode
// summarize): the model answers the compaction prompt with a summary.
// A resumed run (prompt "Continue.") is plain unless told otherwise; each run
// of a session gets its own call id.
import { compact } from "../fixtures/scripted.mjs";
import { canon, isRecordable, recordsOf, brief } from "../trace-rules.mjs";

const model = (payload) => ({ timestamp: new Date().toISOString(), type: "model_msg", payload });
const event = (payload) => ({ timestamp: new Date().toISOString(), type: "event_msg", payload });

/** Texts of the flood scenario. */
export const FLOOD = 2000;
const COMPACT_PROMPT = "Summarize the conversation so far.";
const COMPACTION = { mode: "summarize", prompt: COMPACT_PROMPT };

const BODY = { partial_text: "text", partial_tool_call: "arguments", partial_tool_call_output: "output" };

function* fragment(type, chunks, extra = {}) {
  const role = type === "partial_tool_call_output" ? "user" : "assistant";
  const key = BODY[type];
  yield model({ type, role, event_type: "start", [key]: "", ...extra });
  for (const c of chunks) yield model({ type, role, event_type: "delta", [key]: c, ...extra });
  yield model({ type, role, event_type: "stop", [key]: "", ...extra, stop_reason: "completed" });
}

function usage(n) {
  const request = { cache_read: 0, cache_write: 0, output: 3, total: 10 };
  const session = { cache_read: 0, cache_write: 0, output: 3 * n, total: 10 * n };
  return event({ type: "token_usage", session, request });
}

export const TOOLS = [
  { name: "echo", description: "Echo text.", parameters: { type: "object", properties: { text: { type: "string" } } } },
];

export function meta(sessionId) {
  return {
    session_id: sessionId,
    provider: "test",
    model_id: "scripted",
    model_context_window: 100000,
    system_prompt: "You are a scripted test model.",
    agent_state: "memory",
    workspace: "memory",
  };
}

/** A plain object for an error (errors do not cross page.evaluate intact). */
function errInfo(e, where) {
  if (e && typeof e === "object") {
    return { where, name: String(e.name), code: e.code, message: String(e.message), stack: String(e.stack ?? "") };
  }
  return { where, name: typeof e, message: String(e) };
}

/** One run of a session in this page: what it saw, reached and was handed. */
class Run {
  constructor(name, sessionId, scenario, callId, word) {
    Object.assign(this, { name, sessionId, scenario, callId, word });
    this.seen = []; // every message of the run's stream, in order
    this.reached = []; // labels, in order: message compacts, "approve:ID", "tool:ID", "sleep", "run:done", "run:error"
    this.requests = []; // newMessages of each model call
    this.history = null; // what loadHistory received
    this.sleeps = [];
    this.diagnostics = [];
    this.error = null;
    this.done = false;
    this.gates = new Map();
    this.waiters = new Set();
  }
  mark(label) {
    this.reached.push(label);
    for (const w of [...this.waiters]) w.check();
  }
  has(label) {
    return this.reached.includes(label);
  }
  ended() {
    return this.done || this.error !== null;
  }
  gate(name) {
    if (!this.gates.has(name)) {
      let open;
      const p = new Promise((resolve) => (open = resolve));
      this.gates.set(name, { p, open });
    }
    return this.gates.get(name);
  }
  /** Resolves once label is reached (no bound: callers inside the page only). */
  until(label) {
    return new Promise((resolve) => {
      const w = { check: () => this.has(label) && (this.waiters.delete(w), resolve()) };
      this.waiters.add(w);
      w.check();
    });
  }
  /** Resolves with the first of labels reached; rejects after ms or when the run ended without it. */
  waitFor(labels, ms) {
    return new Promise((resolve, reject) => {
      let timer;
      const w = {
        check: () => {
          const hit = labels.find((l) => this.has(l));
          if (hit || this.ended()) {
            this.waiters.delete(w);
            clearTimeout(timer);
            if (hit) resolve(hit);
            else reject(new Error(`run ${this.name} ended (${this.error ? "error: " + this.error.message : "done"}) without reaching ${labels.join(" or ")}; reached: ${this.reached.join(", ")}`));
          }
        },
      };
      timer = setTimeout(() => {
        this.waiters.delete(w);
        reject(new Error(`run ${this.name} did not reach ${labels.join(" or ")} within ${ms} ms; reached: ${this.reached.join(", ") || "nothing"}`));
      }, ms);
      this.waiters.add(w);
      w.check();
    });
  }
  state() {
    const { name, sessionId, scenario, seen, reached, requests, history, sleeps, diagnostics, error, done } = this;
    return { name, sessionId, scenario, seen, reached, requests, history, sleeps, diagnostics, error, done };
  }
}

// Waits on the named gate of run, or until signal aborts (then returns false).
function waitGate(run, name, signal) {
  const g = run.gate(name).p.then(() => true);
  if (!signal) return g;
  return Promise.race([g, new Promise((resolve) => signal.addEventListener("abort", () => resolve(false), { once: true }))]);
}

/** The callbacks of a scripted run (its scenario names the gates it waits on). */
function script(run) {
  const gated = (s) => run.scenario === s;
  const callId = run.callId;
  const llm = {
    async *streamGenerate({ newMessages, signal }) {
      run.requests.push(newMessages);
      const n = run.requests.length;
      run.mark(`llm:${n}`);
      if (gated("backoff") && n === 1) return { status: "timeout", errorMessage: "connection dropped" };
      if (newMessages.some((m) => m.payload?.role === "user" && m.payload.text === COMPACT_PROMPT)) {
        yield model({ type: "text", role: "assistant", text: "[summary]The user said hi; echo said hi.[/summary]", stop_reason: "completed" });
        yield usage(n);
        return { status: "completed" };
      }
      if (gated("flood") && n === 1) {
        if (!(await waitGate(run, "flood", signal))) return { status: "aborted" };
        for (let i = 0; i < FLOOD; i++) yield model({ type: "text", role: "assistant", text: `t${i}`, stop_reason: "completed" });
        await waitGate(run, "llm", signal);
        return { status: "aborted" };
      }
      const out = newMessages.find((m) => m.payload?.type === "tool_call_output" && m.payload.tool_call_id === callId);
      if (out) {
        const said = out.payload.output;
        yield* fragment("partial_text", ["Echo said: ", said]);
        yield model({ type: "text", role: "assistant", text: "Echo said: " + said, stop_reason: "completed" });
      } else {
        const word = run.word;
        yield* fragment("partial_text", ["Let me ", "check."]);
        yield model({ type: "text", role: "assistant", text: "Let me check.", stop_reason: "completed" });
        const call = { name: "echo", tool_call_id: callId };
        const args = JSON.stringify({ text: word });
        yield* fragment("partial_tool_call", [args.slice(0, 8), args.slice(8)], call);
        yield model({ type: "tool_call", role: "assistant", ...call, arguments: args, stop_reason: "completed" });
        if (gated("toolStream") && !(await waitGate(run, "llm", signal))) {
          return { status: "aborted" };
        }
      }
      yield usage(n);
      return { status: "completed" };
    },
    loadHistory(history) {
      run.history = history;
      run.mark("loadHistory");
    },
  };
  const environment = {
    async *executeTool({ toolCall, signal }) {
      const id = toolCall.payload.tool_call_id;
      const { text } = JSON.parse(toolCall.payload.arguments);
      run.mark(`tool:${id}`);
      if (gated("lateOutput")) {
        if (!(await waitGate(run, "tool", signal))) return;
      } else if (!gated("toolStream")) {
        // Output after the request ended: a fixed place in the stream.
        await run.until("request_end:completed");
      }
      const chars = [...text];
      yield model({ type: "partial_tool_call_output", role: "user", event_type: "start", output: "", tool_call_id: id });
      for (let i = 0; i < chars.length; i++) {
        yield model({ type: "partial_tool_call_output", role: "user", event_type: "delta", output: chars[i], tool_call_id: id });
        if (i === 0 && gated("toolStream") && !(await waitGate(run, "tool", signal))) return;
      }
      yield model({ type: "partial_tool_call_output", role: "user", event_type: "stop", output: "", tool_call_id: id, stop_reason: "completed" });
      yield model({ type: "tool_call_output", role: "user", output: text, tool_call_id: id, stop_reason: "completed" });
    },
  };
  const approve = async (call) => {
    run.mark(`approve:${call.payload.tool_call_id}`);
    if (gated("approve")) {
      await run.gate("approve").p;
      return run.gate("approve").value ?? "allow";
    }
    return "allow";
  };
  const clock = {
    now: () => Date.now(),
    sleep(ms, signal) {
      run.sleeps.push(ms);
      run.mark("sleep");
      if (!gated("backoff")) return true;
      return waitGate(run, "sleep", signal);
    },
  };
  const onDiagnostic = (d) => run.diagnostics.push({ kind: d.kind, message: d.message });
  const newLLM = () => script(run).llm;
  return { llm, newLLM, environment, approve, clock, onDiagnostic };
}

// Drains a session's run into run (in the background).
async function drain(run, session, prompt, approve) {
  let stream;
  try {
    stream = session.run(prompt, { approve });
  } catch (e) {
    run.error = errInfo(e, "run()");
    run.mark("run:error");
    return;
  }
  try {
    for await (const m of stream) {
      run.seen.push(m);
      const label = compact(m);
      run.mark(label);
      // The tightest cut: reload from inside the consumer, records in flight.
      if (label === run.reloadOn) location.reload();
    }
    run.done = true;
    run.mark("run:done");
  } catch (e) {
    run.error = errInfo(e, "iterator");
    run.mark("run:error");
  }
}

/** Loads Floe with load and installs window.persist. */
export async function install(load) {
  const floe = await load();
  const api = ["listSessions", "resumeSession", "exportSession", "importSession", "deleteSession"];
  const missing = api.filter((f) => typeof floe[f] !== "function");
  if (missing.length) throw new Error(`floe.mjs has no persistence API: missing ${missing.join(", ")}`);
  const runs = new Map();
  const getRun = (name) => {
    const r = runs.get(name);
    if (!r) throw new Error(`no run named ${name} in this page`);
    return r;
  };
  const settle = async (where, f) => {
    try {
      return { ok: await f() };
    } catch (e) {
      return { error: errInfo(e, where) };
    }
  };

  window.persist = {
    /** Creates a session and starts its first run in the background. */
    start({ name = "first", sessionId, scenario = "plain", prompt = "say hi", store = "indexeddb", callId = "call_1", word = "hi", compaction = false }) {
      const run = new Run(name, sessionId, scenario, callId, word);
      runs.set(name, run);
      const cb = script(run);
      let session;
      try {
        session = floe.createSession({
          meta: meta(sessionId),
          llm: cb.llm,
          newLLM: cb.newLLM,
          environment: cb.environment,
          tools: TOOLS,
          config: { reconnectBackoffMs: 1500, ...(compaction ? { compaction: COMPACTION } : {}) },
          clock: cb.clock,
          onDiagnostic: cb.onDiagnostic,
          store,
        });
      } catch (e) {
        return { error: errInfo(e, "createSession") };
      }
      run.session = session;
      drain(run, session, prompt, cb.approve);
      return { ok: { id: session.id } };
    },

    /**
     * Resumes a session and starts a run in the background (plain unless
     * scenario says otherwise); with go: false the run waits for go(name).
     */
    async resume({ name = "resumed", sessionId, prompt = "Continue.", callId = "call_2", word = "ok", scenario = "plain", go = true, compaction = false }) {
      const run = new Run(name, sessionId, scenario, callId, word);
      runs.set(name, run);
      const cb = script(run);
      let session;
      try {
        session = await floe.resumeSession(sessionId, {
          llm: cb.llm,
          newLLM: cb.newLLM,
          environment: cb.environment,
          tools: TOOLS,
          config: { reconnectBackoffMs: 1500, ...(compaction ? { compaction: COMPACTION } : {}) },
          clock: cb.clock,
          onDiagnostic: cb.onDiagnostic,
        });
      } catch (e) {
        run.error = errInfo(e, "resumeSession");
        run.mark("run:error");
        return { error: run.error };
      }
      run.session = session;
      run.go = () => drain(run, session, prompt, cb.approve);
      if (go) run.go();
      return { ok: { id: session.id } };
    },

    /** Starts the run of a session resumed with go: false. */
    go(name) {
      getRun(name).go();
    },

    /** Makes the page reload itself as soon as run name's consumer sees label. */
    reloadOn(name, label) {
      getRun(name).reloadOn = label;
    },

    /** A manual compaction of the session of run name (after its run): its messages. */
    compact(name) {
      return settle("compact", async () => {
        const out = [];
        for await (const m of getRun(name).session.compact()) out.push(m);
        return out;
      });
    },

    waitFor(name, labels, ms) {
      return settle("waitFor", () => getRun(name).waitFor(Array.isArray(labels) ? labels : [labels], ms));
    },

    release(name, gate, value) {
      const g = getRun(name).gate(gate);
      g.value = value;
      g.open();
    },

    state(name) {
      return getRun(name).state();
    },

    /**
     * Exports the session until every recordable message the run saw is in
     * the store (bounded by ms; the store commits asynchronously).
     */
    async waitStored(name, ms) {
      const run = getRun(name);
      const want = run.seen.filter(isRecordable).map(canon);
      const deadline = performance.now() + ms;
      let polls = 0;
      for (;;) {
        polls++;
        let files = [];
        try {
          files = await floe.exportSession(run.sessionId);
        } catch (e) {
          // Not stored yet: the store may create the session with its first commit.
          if (e?.code !== "not_found") return { error: errInfo(e, "exportSession") };
        }
        const have = recordsOf(files).map(canon);
        let k = 0;
        for (const h of have) if (k < want.length && h === want[k]) k++;
        if (k === want.length) return { ok: { files, polls } };
        if (performance.now() > deadline) {
          const missing = run.seen.filter(isRecordable).slice(k).map(brief);
          return { ok: { files, polls, missing } };
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },

    list: () => settle("listSessions", () => floe.listSessions()),
    export: (id) => settle("exportSession", () => floe.exportSession(id)),
    read: (id) => settle("readSession", () => floe.readSession(id)),
    import: (files) => settle("importSession", () => floe.importSession(files)),
    delete: (id) => settle("deleteSession", () => floe.deleteSession(id)),
  };
}
