#!/usr/bin/env node
// Conformance through the WebAssembly build: runs every *.json scenario
// (format omni-conformance/1) of a directory through static/floe.mjs and
// floe.wasm, with JavaScript callbacks built from the scenario.
//
//   node tests/conform-wasm.mjs [--resume] DIR
//
// Prints "PASS id name" or "FAIL id name" plus the first difference for each
// scenario, then "conformance (wasm): N passed, M failed"; exits 1 when a
// scenario failed or DIR holds none.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { load } from "../static/floe-node.mjs";

const TIMEOUT_MS = Number(process.env.FLOE_CONFORM_TIMEOUT_MS ?? 30000);
const EPOCH = Date.UTC(2025, 0, 1);

// ---- JSON values -----------------------------------------------------------------

const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

function jsonEqual(a, b) {
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isObj(a)) {
    if (!isObj(b)) return false;
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && jsonEqual(a[k], b[k]));
  }
  return a === b;
}

// norm drops the timestamp and an empty or null origin.
function norm(m) {
  if (!isObj(m)) return m;
  const { timestamp, ...rest } = m;
  if (rest.origin == null || (Array.isArray(rest.origin) && rest.origin.length === 0)) delete rest.origin;
  return rest;
}

function subset(m, v) {
  if (!isObj(m)) return jsonEqual(m, v);
  return isObj(v) && Object.keys(m).every((k) => k in v && subset(m[k], v[k]));
}

// matches applies a FORMAT §3 matcher to a normalized message.
function matches(matcher, msg) {
  for (const k of Object.keys(matcher)) {
    if (k !== "origin" && !(k in msg && subset(matcher[k], msg[k]))) return false;
  }
  const want = matcher.origin;
  if (want == null || (Array.isArray(want) && want.length === 0)) return !("origin" in msg);
  if (want === "*") return true;
  return "origin" in msg && jsonEqual(want, msg.origin);
}

function diffPath(want, got, p = "") {
  if (isObj(want)) {
    if (!isObj(got)) return p || "(root)";
    const keys = [...new Set([...Object.keys(want), ...Object.keys(got)])].sort();
    for (const k of keys) {
      const q = p ? `${p}.${k}` : k;
      if (!(k in got)) return `${q} (missing)`;
      if (!(k in want)) return `${q} (unexpected)`;
      const d = diffPath(want[k], got[k], q);
      if (d) return d;
    }
    return "";
  }
  return jsonEqual(want, got) ? "" : p || "(root)";
}

const show = (v) => JSON.stringify(v);

function compareMessages(where, want, got) {
  want = want.map(norm);
  got = got.map(norm);
  for (let i = 0; i < Math.min(want.length, got.length); i++) {
    const d = diffPath(want[i], got[i]);
    if (d) return `${where} [${i}] (${d}): expected ${show(want[i])} got ${show(got[i])}`;
  }
  if (got.length < want.length) {
    return `${where} length: expected ${want.length} got ${got.length}; first missing [${got.length}]: ${show(want[got.length])}`;
  }
  if (got.length > want.length) {
    return `${where} length: expected ${want.length} got ${got.length}; first extra [${want.length}]: ${show(got[want.length])}`;
  }
  return "";
}

// ---- one scenario ----------------------------------------------------------------------

class World {
  constructor(sc, floe) {
    this.sc = sc;
    this.floe = floe;
    this.ticks = 0;
    this.streams = []; // per run: the normalized messages the consumer received
    this.received = []; // every message the consumer received, as it came
    this.hooks = []; // hooks of the current run: {run, index, on, do, fired}
    this.failures = [];
    this.sessions = new Map(); // session id → {calls, contexts, inputs, newTokens, files}
    this.toolRuns = new Map();
    this.toolOrder = [];
    this.approverCalls = [];
    this.sleeps = [];
    this.backoffs = 0;
    this.waiters = new Set();
    this.handles = new Map(); // child session id → subagent
    this.top = null;
    this.abortRun = null;
    this.busy = new Set(); // what callbacks wait for, for timeout reports
  }

  fail(msg) {
    this.failures.push(msg);
  }

  now() {
    return EPOCH + ++this.ticks;
  }

  stamp(m) {
    return { timestamp: new Date(this.now()).toISOString(), ...m };
  }

  session(id) {
    let st = this.sessions.get(id);
    if (!st) {
      st = { calls: 0, contexts: 1, inputs: [], newTokens: [], files: [], cur: 0 };
      this.sessions.set(id, st);
    }
    return st;
  }

  current() {
    return this.streams[this.streams.length - 1] ?? [];
  }

  holds(c, aborted) {
    if (c.seen) return this.current().filter((m) => matches(c.seen, m)).length >= (c.nth ?? 1);
    if (c.abort) return aborted;
    return (c.any ?? []).some((s) => this.holds(s, aborted));
  }

  // wait resolves once c holds for the callback whose signal is given.
  wait(c, signal, where) {
    return new Promise((resolve) => {
      const what = `${where}: wait ${show(c)}`;
      const check = () => {
        if (!this.holds(c, signal.aborted)) return;
        this.waiters.delete(check);
        this.busy.delete(what);
        signal.removeEventListener("abort", check);
        resolve();
      };
      this.waiters.add(check);
      this.busy.add(what);
      signal.addEventListener("abort", check);
      check();
    });
  }

  wake() {
    for (const w of [...this.waiters]) w();
  }

  fireHooks(pred) {
    const fire = this.hooks.filter((h) => !h.fired && pred(h.on));
    for (const h of fire) h.fired = true;
    for (const h of fire) {
      h.do.forEach((a, j) => {
        if (a.action === "abort") this.abortRun?.();
        else if (a.action === "steer") {
          const want = a.expect ?? true;
          const got = this.top.steer(a.input.map((m) => this.stamp(m))) !== false; // an id, or false
          if (got !== want) {
            this.fail(`run ${h.run} hook ${h.index} action ${j + 1} (steer): steer returned ${got}, expected ${want}`);
          }
        }
      });
    }
  }

  // receive is the consumer's step after taking a message.
  receive(m) {
    this.received.push(m);
    const v = norm(m);
    const stream = this.current();
    stream.push(v);
    this.fireHooks(
      (t) => t.seen && matches(t.seen, v) && stream.filter((x) => matches(t.seen, x)).length === (t.nth ?? 1),
    );
    this.wake();
  }

  // ---- callbacks ----

  clock() {
    return {
      now: () => this.now(),
      sleep: (ms, signal) => {
        this.sleeps.push(ms);
        const n = ++this.backoffs;
        this.fireHooks((t) => t.backoff === n);
        return !signal.aborted;
      },
    };
  }

  llm(sid, context) {
    const world = this;
    return {
      async *streamGenerate({ newMessages, signal }) {
        const st = world.session(sid);
        st.calls++;
        st.inputs.push({ context, messages: newMessages });
        const k = st.calls;
        world.fireHooks((t) => t.llm_request?.session === sid && t.llm_request?.index === k);
        const req = world.sc.llm?.[sid]?.[k - 1];
        if (!req) {
          world.fail(`llm ${sid}: request ${k} is not scripted`);
          return { status: "failed", errorMessage: "conformance: unscripted LLM request", permanent: true };
        }
        yield* world.play(req.steps ?? [], `llm ${sid} request ${k}`, signal, null);
        const o = req.outcome ?? { status: "completed" };
        return { status: o.status, errorMessage: o.error_message, permanent: o.permanent };
      },
    };
  }

  async *play(steps, where, signal, approve) {
    for (const [i, step] of steps.entries()) {
      const at = `${where} step ${i + 1}`;
      if (step.emit) yield this.stamp(step.emit);
      else if (step.wait) await this.wait(step.wait, signal, at);
      else if (step.subagent) {
        const sa = step.subagent;
        const h = this.handle(sa);
        const what = `${at}: subagent ${sa.meta.session_id} running`;
        this.busy.add(what);
        try {
          for await (const m of h.run(sa.prompt, { approve, signal })) yield m;
        } finally {
          this.busy.delete(what);
        }
      }
    }
  }

  environment() {
    const world = this;
    return {
      async *executeTool({ toolCall, approve, signal }) {
        const id = toolCall.payload.tool_call_id;
        const n = (world.toolRuns.get(id) ?? 0) + 1;
        world.toolRuns.set(id, n);
        world.toolOrder.push(id);
        const script = world.sc.tools?.[id];
        if (!script) {
          world.fail(`tool ${id}: executed without a script`);
          throw new Error(`conformance: no script for tool call "${id}"`);
        }
        if (n > 1) {
          world.fail(`tool ${id}: executed ${n} times`);
          throw new Error(`conformance: tool call "${id}" executed again`);
        }
        yield* world.play(script.steps ?? [], `tool ${id}`, signal, approve);
        if (isObj(script.end) && "throw" in script.end) throw new Error(script.end.throw);
      },
    };
  }

  approve = (tc) => {
    const id = tc.payload.tool_call_id;
    this.approverCalls.push(id);
    const a = this.sc.approvals?.[id];
    const got = tc.origin ?? [];
    const want = a?.expect_origin ?? [];
    if (!a) this.fail(`approval ${id}: no entry`);
    else if (!jsonEqual(want, got)) this.fail(`approval ${id}: origin: expected ${show(want)} got ${show(got)}`);
    this.fireHooks((t) => t.approval === id);
    if (!a) throw new Error(`conformance: no approval scripted for "${id}"`);
    if (a.decision === "throw") throw new Error(a.message);
    return a.decision;
  };

  trace(sid) {
    const st = this.session(sid);
    const open = () => {
      while (st.files.length <= st.cur) st.files.push([]);
    };
    return {
      write(rec) {
        open();
        st.files[st.cur].push(rec);
      },
      rotate() {
        st.cur++;
        open();
      },
    };
  }

  options(ss) {
    const sid = ss.meta.session_id;
    this.session(sid);
    const c = ss.config ?? {};
    const config = {};
    const keys = {
      max_turns: "maxTurns",
      max_reconnects: "maxReconnects",
      reconnect_backoff_ms: "reconnectBackoffMs",
      reconnect_backoff_max_ms: "reconnectBackoffMaxMs",
      compaction_max_reconnects: "compactionMaxReconnects",
    };
    for (const [k, v] of Object.entries(keys)) if (c[k] != null) config[v] = c[k];
    const opts = {
      meta: ss.meta,
      llm: this.llm(sid, 1),
      environment: this.environment(),
      clock: this.clock(),
      trace: this.trace(sid),
      config,
      onDiagnostic: (d) => {
        if (d.kind === "panic") this.fail(`engine diagnostic panic: ${d.message}`);
      },
    };
    if (ss.tool_list) opts.tools = ss.tool_list;
    if (c.compaction) {
      const k = c.compaction;
      config.compaction = {
        maxContextLength: k.max_context_length,
        maxSessionTurns: k.max_session_turns,
        mode: k.mode,
        prompt: k.prompt,
      };
      opts.newLLM = (tokens) => {
        const st = this.session(sid);
        st.contexts++;
        st.newTokens.push(tokens);
        return this.llm(sid, st.contexts);
      };
    }
    return opts;
  }

  handle(sa) {
    const id = sa.meta.session_id;
    let h = this.handles.get(id);
    if (!h) {
      h = this.floe.createSubagent(this.options({ meta: sa.meta, config: sa.config, tool_list: sa.tool_list }));
      this.handles.set(id, h);
    }
    return h;
  }

  // ---- driving ----

  async drive() {
    this.top = this.floe.createSession(this.options(this.sc.session));
    for (const [i, rs] of (this.sc.runs ?? []).entries()) {
      const n = i + 1;
      const ac = new AbortController();
      this.abortRun = () => ac.abort();
      this.streams.push([]);
      this.hooks = (rs.hooks ?? []).map((h, j) => ({ run: n, index: j + 1, on: h.on, do: h.do ?? [], fired: false }));
      if (rs.pre_aborted) ac.abort();
      const input = (rs.input ?? []).map((m) => this.stamp(m));
      const approve = rs.approver === "none" ? undefined : this.approve;
      this.consumer = `run ${n}: run()`;
      const run = this.top.run(input, { approve, signal: ac.signal });
      let k = 0;
      for await (const m of run) {
        this.consumer = `run ${n}: next() for message ${++k + 1}`;
        this.receive(m);
      }
      for (const h of this.hooks) {
        if (!h.fired) this.fail(`run ${n} hook ${h.index} (on ${show(h.on)}) never fired`);
      }
      this.hooks = [];
      this.abortRun = null;
    }
    this.consumer = "";
  }

  problems() {
    const ps = [...this.failures];
    (this.sc.runs ?? []).forEach((rs, i) => {
      if (!rs.expect_stream) return;
      const d = compareMessages(`run ${i + 1} stream`, rs.expect_stream, this.streams[i] ?? []);
      if (d) ps.push(d);
    });
    const e = this.sc.expect ?? {};
    const add = (d) => d && ps.push(d);
    if (e.llm_inputs) {
      const ids = union(Object.keys(e.llm_inputs), [...this.sessions].filter(([, s]) => s.inputs.length).map(([id]) => id));
      for (const id of ids) {
        const w = e.llm_inputs[id] ?? [];
        const g = this.sessions.get(id)?.inputs ?? [];
        let d = "";
        for (let i = 0; i < Math.min(w.length, g.length) && !d; i++) {
          const at = `llm_inputs ${id} request ${i + 1}`;
          if (w[i].context !== g[i].context) d = `${at} context: expected ${w[i].context} got ${g[i].context}`;
          else d = compareMessages(`${at} messages`, w[i].messages, g[i].messages);
        }
        if (!d && w.length !== g.length) d = `llm_inputs ${id}: expected ${w.length} requests got ${g.length}`;
        if (d) {
          ps.push(d);
          break;
        }
      }
    }
    if (e.trace) {
      const ids = union(Object.keys(e.trace), [...this.sessions].filter(([, s]) => s.files.length).map(([id]) => id));
      outer: for (const id of ids) {
        const wf = e.trace[id] ?? [];
        const gf = this.sessions.get(id)?.files ?? [];
        for (let i = 0; i < Math.min(wf.length, gf.length); i++) {
          const d = compareMessages(`trace ${id} file ${i + 1}`, wf[i], gf[i]);
          if (d) {
            ps.push(d);
            break outer;
          }
        }
        if (wf.length !== gf.length) {
          ps.push(`trace ${id} files: expected ${wf.length} got ${gf.length}`);
          break;
        }
      }
    }
    if (e.sleeps_ms) add(jsonEqual(e.sleeps_ms, this.sleeps) ? "" : `sleeps_ms: expected ${show(e.sleeps_ms)} got ${show(this.sleeps)}`);
    if (e.approver_calls) {
      add(jsonEqual(e.approver_calls, this.approverCalls) ? "" : `approver_calls: expected ${show(e.approver_calls)} got ${show(this.approverCalls)}`);
    }
    if (e.tool_executions) {
      const w = [...e.tool_executions].sort();
      const g = [...this.toolOrder].sort();
      add(jsonEqual(w, g) ? "" : `tool_executions (any order): expected ${show(w)} got ${show(g)}`);
    }
    if (e.new_llm_tokens) {
      const ids = union(Object.keys(e.new_llm_tokens), [...this.sessions].filter(([, s]) => s.newTokens.length).map(([id]) => id));
      for (const id of ids) {
        const w = e.new_llm_tokens[id] ?? [];
        const g = this.sessions.get(id)?.newTokens ?? [];
        if (!jsonEqual(w, g)) {
          ps.push(`new_llm_tokens ${id}: expected ${show(w)} got ${show(g)}`);
          break;
        }
      }
    }
    for (const id of Object.keys(this.sc.llm ?? {}).sort()) {
      const calls = this.sessions.get(id)?.calls ?? 0;
      const n = this.sc.llm[id].length;
      if (calls < n) ps.push(`llm ${id}: ${n - calls} of ${n} scripted requests never made (first unused: request ${calls + 1})`);
    }
    for (const id of Object.keys(this.sc.tools ?? {}).sort()) {
      if (!this.toolRuns.get(id)) ps.push(`tool ${id}: script never executed`);
    }
    return ps;
  }
}

function union(a, b) {
  return [...new Set([...a, ...b])].sort();
}

/**
 * Runs scenario sc on a loaded floe; returns its problems ([] when it
 * passed). observe, when given, gets what the scenario saw: the messages
 * the consumer received and the Trace records of each session.
 */
export async function runScenario(floe, sc, observe) {
  if (sc.format !== "omni-conformance/1") return [`load: format ${show(sc.format)} is not omni-conformance/1`];
  const w = new World(sc, floe);
  if (observe) observe({ received: w.received, traces: w.sessions });
  let timer;
  const timeout = new Promise((resolve) => {
    timer = setTimeout(() => resolve("timeout"), TIMEOUT_MS);
  });
  let outcome;
  try {
    outcome = await Promise.race([w.drive().then(() => "done"), timeout]);
  } catch (e) {
    return [...w.failures, `runner: ${e?.stack ?? e}`];
  } finally {
    clearTimeout(timer);
  }
  if (outcome === "timeout") {
    const still = [...w.busy];
    if (w.consumer) still.push(`consumer: ${w.consumer}`);
    w.abortRun?.();
    return [`timeout after ${TIMEOUT_MS} ms; still waiting: ${still.join("; ") || "nothing in the runner"}`];
  }
  return w.problems();
}

async function main(argv) {
  const args = argv.filter((a) => !a.startsWith("-"));
  if (argv.includes("--resume") || argv.includes("-resume")) {
    console.log("conformance (wasm, resume): not implemented");
    return 1;
  }
  if (args.length !== 1) {
    console.error("usage: node tests/conform-wasm.mjs [--resume] DIR");
    return 2;
  }
  const dir = args[0];
  const files = (await readdir(dir)).filter((f) => f.endsWith(".json")).sort();
  const floe = await load();
  let passed = 0;
  let failed = 0;
  const ids = new Map();
  for (const f of files) {
    let sc;
    let problems;
    try {
      sc = JSON.parse(await readFile(path.join(dir, f), "utf8"));
      if (ids.has(sc.id)) problems = [`load: ${f}: id ${show(sc.id)} already used by ${ids.get(sc.id)}`];
      ids.set(sc.id, f);
    } catch (e) {
      sc = { id: f.replace(/\.json$/, ""), name: f };
      problems = [`load: ${f}: ${e.message}`];
    }
    problems ??= await runScenario(floe, sc);
    if (problems.length === 0) {
      passed++;
      console.log(`PASS ${sc.id} ${sc.name}`);
    } else {
      failed++;
      console.log(`FAIL ${sc.id} ${sc.name}`);
      console.log(`    ${problems[0].replaceAll("\n", "\n    ")}`);
    }
  }
  console.log(`conformance (wasm): ${passed} passed, ${failed} failed`);
  return failed > 0 || passed === 0 ? 1 : 0;
}

// Run as a program (not imported by a test).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      console.error(e);
      process.exit(2);
    },
  );
}
