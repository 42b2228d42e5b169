// Floe: an agent context engine in Go, compiled to WebAssembly.
//
// This module is the thin shim between JavaScript and the Go bridge
// (package jsbridge): it loads floe.wasm, turns the user's objects into the
// small string-based calls the bridge understands, drains the user's async
// iterators into batches and serves the run's messages from a buffer.
// Types: floe.d.ts. It works in a page, a dedicated Worker (type "module"),
// an extension page and Node 20.
import "./wasm_exec.js";
import { connect } from "./connect.mjs";

export { connect };

// End codes of a producer batch (jsbridge/registry.go).
const END_MORE = 0;
const END_DONE = 1;
const END_THREW = 2;
const END_BAD = 3;

// A producer batch is handed to Go when it holds BATCH_CAP messages, when a
// macrotask has passed since its first message, or when the iterator ended.
const BATCH_CAP = 512;

// Marks the approve function handed to a tool, so a subagent run started
// with it uses the run's approver without a round trip through JavaScript.
const TOOL_APPROVE = Symbol("floe.toolApprove");

/** An Error whose name is "FloeError", with a code. */
function floeError(code, message) {
  const e = new Error(message);
  e.name = "FloeError";
  e.code = code;
  return e;
}

/** Reports whether e is an error thrown or rejected by Floe for API misuse. */
export function isFloeError(e) {
  return e instanceof Error && e.name === "FloeError" && typeof e.code === "string";
}

/** The message of a thrown value (ENGINE.md E-1.3). */
function errMessage(e) {
  if (e instanceof Error) return String(e.message);
  try {
    return String(e);
  } catch {
    return Object.prototype.toString.call(e);
  }
}

function describe(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return typeof v === "object" ? "an object" : `a ${typeof v}`;
}

const isObject = (v) => v !== null && typeof v === "object";

const isNode = typeof process === "object" && typeof process.versions?.node === "string";

function badArg(name, want, got) {
  return floeError("bad_argument", `${name}: want ${want}, got ${describe(got)}`);
}

// Runs f at the next macrotask.
const macrotask =
  typeof setImmediate === "function"
    ? setImmediate
    : (() => {
        const ch = new MessageChannel();
        const queue = [];
        ch.port1.onmessage = () => queue.shift()();
        return (f) => {
          queue.push(f);
          ch.port2.postMessage(0);
        };
      })();

// ---- loading ----------------------------------------------------------------

let loading;

/**
 * Loads floe.wasm once and returns the floe API. Later calls return the same
 * promise (their options are ignored).
 */
export function load(opts = {}) {
  if (!loading) {
    loading = doLoad(opts);
    loading.catch(() => {
      loading = undefined;
    });
  }
  return loading;
}

async function doLoad(opts) {
  if (!isObject(opts)) throw badArg("load: opts", "an object", opts);
  const Go = globalThis.Go;
  if (typeof Go !== "function") throw floeError("internal", "load: wasm_exec.js did not define globalThis.Go");
  const go = new Go();
  if (isNode) await useNodeFS();
  const readyName = "__floeReady_" + Math.random().toString(36).slice(2);
  const ready = new Promise((resolve) => {
    globalThis[readyName] = resolve;
  });
  go.argv = ["floe", readyName];
  go.env = { ...go.env, FLOE_READY: readyName }; // read by main()
  try {
    const instance = await instantiate(opts.wasm ?? (await defaultWasm()), go.importObject);
    let exited = false;
    const run = go.run(instance);
    const gone = run.then(() => {
      exited = true;
      throw floeError("internal", "load: floe.wasm exited before it was ready");
    });
    const api = await Promise.race([ready, gone]);
    gone.catch(() => {});
    return makeFloe(api, () => exited);
  } finally {
    delete globalThis[readyName];
  }
}

// In Node the default is floe-node.wasm, the build with directory stores
// (floe.wasm when it is missing); elsewhere floe.wasm.
async function defaultWasm() {
  const browser = new URL("./floe.wasm", import.meta.url);
  if (!isNode || browser.protocol !== "file:") return browser;
  // Built from parts so that bundlers do not copy the Node build (3.9 MB)
  // into browser bundles; they only follow literal new URL() arguments.
  const nodeName = "./floe-node" + ".wasm";
  const node = new URL(nodeName, import.meta.url);
  try {
    await (await import("node:fs/promises")).access(node);
    return node;
  } catch {
    return browser;
  }
}

// In Node, Go's file system calls (the {dir} store) go through Node's fs, as
// with the toolchain's wasm_exec_node.js; wasm_exec.js installs only a stub.
async function useNodeFS() {
  if (globalThis.fs?.constants?.O_WRONLY === -1) globalThis.fs = (await import("node:fs")).default;
}

async function instantiate(src, imports) {
  if (src instanceof WebAssembly.Module) return WebAssembly.instantiate(src, imports);
  if (src instanceof ArrayBuffer || ArrayBuffer.isView(src)) {
    return (await WebAssembly.instantiate(src, imports)).instance;
  }
  if (typeof Response === "function" && src instanceof Response) return fromResponse(src, imports);
  if (typeof src !== "string" && !(src instanceof URL)) {
    throw badArg("load: opts.wasm", "a URL, a string, an ArrayBuffer or a Response", src);
  }
  const base = globalThis.location?.href ?? import.meta.url;
  const url = new URL(src, base);
  if (url.protocol === "file:") {
    const { readFile } = await import("node:fs/promises");
    return (await WebAssembly.instantiate(await readFile(url), imports)).instance;
  }
  return fromResponse(await fetch(url), imports);
}

async function fromResponse(resp, imports) {
  if (!resp.ok) throw floeError("internal", `load: fetching ${resp.url}: HTTP ${resp.status}`);
  const type = resp.headers.get("content-type") ?? "";
  if (typeof WebAssembly.instantiateStreaming === "function" && type.startsWith("application/wasm")) {
    return (await WebAssembly.instantiateStreaming(resp, imports)).instance;
  }
  return (await WebAssembly.instantiate(await resp.arrayBuffer(), imports)).instance;
}

// ---- the API ------------------------------------------------------------------

// deferred returns [promise, resolve, reject]: the bridge makes its
// Promises with it (cheaper than a Go executor).
function deferred() {
  let resolve, reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return [promise, resolve, reject];
}

function makeFloe(api, exited) {
  api.useDeferred(deferred);
  // call runs a synchronous Go export: a returned Error is thrown.
  const call = (fn, ...args) => {
    if (exited()) throw floeError("internal", "floe.wasm has exited");
    const r = api[fn](...args);
    if (r instanceof Error) throw r;
    return r;
  };

  function createSession(opts) {
    const spec = sessionSpec(api, "createSession", opts);
    spec.store = storeArg(opts.store, "createSession: store", true);
    const { id, handle } = call("createSession", spec);
    return makeSession(id, handle, spec.store);
  }

  // makeSession wraps a bridge session. With a persisted store and Web
  // Locks, each run and compaction holds the lock "floe:session:<id>" from
  // its first next() until its records are stored: one writer per session
  // across the tabs of an origin.
  function makeSession(id, handle, store) {
    let closed = false;
    let running = false; // this object holds the session's lock
    const live = (fn) => {
      if (closed) throw floeError("closed", `${fn}: the session is closed`);
    };
    const lockable = (store === "indexeddb" || store.startsWith("dir:")) && locks() != null;
    // open starts a run or compaction: start(ended) → stream id.
    const open = (fn, start) => {
      if (!lockable || running) return new Stream(api, start(undefined));
      return new LockedStream(id, fn, (release) => {
        running = true;
        const ended = () => {
          running = false;
          release();
        };
        try {
          return new Stream(api, start(ended));
        } catch (e) {
          ended();
          throw e;
        }
      });
    };
    return {
      id,
      run(prompt, runOpts = {}) {
        live("run");
        if (!isObject(runOpts)) throw badArg("run: options", "an object", runOpts);
        const [kind, input] = inputArg(prompt, "run: prompt");
        const { approve, signal, thinkingLevel } = runOpts;
        if (approve != null && typeof approve !== "function") throw badArg("run: approve", "a function", approve);
        if (thinkingLevel != null && typeof thinkingLevel !== "string") {
          throw badArg("run: thinkingLevel", "a string", thinkingLevel);
        }
        const approveHost = approve == null ? undefined : approverHost(api, approve);
        return open("run", (ended) =>
          call("start", handle, kind, input, approveHost, signal ?? undefined, thinkingLevel ?? undefined, ended),
        );
      },
      steer(input) {
        live("steer");
        const [kind, data] = inputArg(input, "steer: input");
        return call("steer", handle, kind, data);
      },
      skipReconnectWait() {
        live("skipReconnectWait");
        return call("skipReconnectWait", handle);
      },
      compact(compactOpts = {}) {
        live("compact");
        if (!isObject(compactOpts)) throw badArg("compact: options", "an object", compactOpts);
        return open("compact", (ended) => call("compact", handle, compactOpts.signal ?? undefined, ended));
      },
      compactability() {
        live("compactability");
        return call("compactability", handle);
      },
      close() {
        if (closed) return Promise.resolve();
        closed = true;
        return call("closeSession", handle);
      },
    };
  }

  function createSubagent(opts) {
    const spec = sessionSpec(api, "createSubagent", opts);
    const { id, handle } = call("createSubagent", spec);
    let closed = false;
    return {
      id,
      run(prompt, runOpts = {}) {
        if (closed) throw floeError("closed", "subagent.run: the subagent is closed");
        if (typeof prompt !== "string") throw badArg("subagent.run: prompt", "a string", prompt);
        if (!isObject(runOpts)) throw badArg("subagent.run: options", "an object", runOpts);
        const { approve, signal } = runOpts;
        if (approve != null && typeof approve !== "function") {
          throw badArg("subagent.run: approve", "a function", approve);
        }
        const toolID = approve?.[TOOL_APPROVE];
        const approveHost = approve == null || toolID ? undefined : approverHost(api, approve);
        return new Stream(api, call("subagentRun", handle, prompt, approveHost, toolID, signal ?? undefined));
      },
      close() {
        if (!closed) {
          closed = true;
          call("closeSubagent", handle);
        }
      },
    };
  }

  // ---- persisted sessions (the store option: see storeArg) ----

  async function resumeSession(id, opts) {
    if (typeof id !== "string") throw badArg("resumeSession: id", "a string", id);
    const spec = sessionSpec(api, "resumeSession", opts, false);
    const store = storeArg(opts.store, "resumeSession: store");
    // Resume may write (a failed compaction_end, E-17.4): one writer.
    const release = locks() != null && store !== "memory" ? await tryLock(id) : () => {};
    if (!release) throw busy("resumeSession", id);
    try {
      const { id: sid, handle } = await call("resumeSession", id, spec, store);
      return makeSession(sid, handle, store);
    } finally {
      release();
    }
  }

  async function listSessions(opts = {}) {
    if (!isObject(opts)) throw badArg("listSessions: options", "an object", opts);
    const rows = await call("listSessions", storeArg(opts.store, "listSessions: store"));
    return rows.map(([id, firstPrompt, lastActivity, size, files]) => ({ id, firstPrompt, lastActivity, size, files }));
  }

  async function exportSession(id, opts = {}) {
    if (!isObject(opts)) throw badArg("exportSession: options", "an object", opts);
    const files = await call("exportSession", id, storeArg(opts.store, "exportSession: store"));
    return files.map(([name, text]) => ({ name, text }));
  }

  async function importSession(files, opts = {}) {
    if (!isObject(opts)) throw badArg("importSession: options", "an object", opts);
    if (typeof files === "string") files = [{ name: "", text: files }];
    else if (!Array.isArray(files)) throw badArg("importSession: files", "an array of {name, text} or a JSONL string", files);
    return call("importSession", files, storeArg(opts.store, "importSession: store"));
  }

  async function deleteSession(id, opts = {}) {
    if (!isObject(opts)) throw badArg("deleteSession: options", "an object", opts);
    return call("deleteSession", id, storeArg(opts.store, "deleteSession: store"));
  }

  return {
    connect,
    createSession,
    createSubagent,
    resumeSession,
    listSessions,
    exportSession,
    importSession,
    deleteSession,
    isFloeError,
    /** Test hook: makes Go panic ("sync" in the export, "async" on a goroutine). */
    _debugPanic(mode) {
      return call("debugPanic", mode);
    },
    /** Test hook: batches carry every message as JSON (no fragment records) while on. */
    _debugJSONOnly(on) {
      jsonOnly = !!on;
    },
  };
}

// inputArg converts a run or steer input: a string is one user text, an
// array is OmniMessage[].
function inputArg(v, name) {
  if (typeof v === "string") return ["text", v];
  if (Array.isArray(v)) return ["json", JSON.stringify(v)];
  throw badArg(name, "a string or an OmniMessage[]", v);
}

// ---- session options --------------------------------------------------------------

function sessionSpec(api, fn, opts, needMeta = true) {
  if (!isObject(opts)) throw badArg(`${fn}: options`, "an object", opts);
  const { meta, llm, newLLM, environment, tools, config, clock, trace, onDiagnostic, abortGraceMs } = opts;
  if (needMeta && !isObject(meta)) throw badArg(`${fn}: meta`, "a session_meta payload object", meta);
  checkLLM(llm, `${fn}: llm`);
  if (newLLM != null && typeof newLLM !== "function") throw badArg(`${fn}: newLLM`, "a function", newLLM);
  if (environment != null && (!isObject(environment) || typeof environment.executeTool !== "function")) {
    throw badArg(`${fn}: environment`, "an object with executeTool()", environment);
  }
  if (tools != null && !Array.isArray(tools)) throw badArg(`${fn}: tools`, "a ToolDefinition[]", tools);
  if (config != null && !isObject(config)) throw badArg(`${fn}: config`, "an object", config);
  if (clock != null) {
    if (!isObject(clock) || typeof clock.now !== "function" || typeof clock.sleep !== "function") {
      throw badArg(`${fn}: clock`, "an object with now() and sleep()", clock);
    }
  }
  if (trace != null && (!isObject(trace) || typeof trace.write !== "function")) {
    throw badArg(`${fn}: trace`, "an object with write() and rotate()", trace);
  }
  if (onDiagnostic != null && typeof onDiagnostic !== "function") {
    throw badArg(`${fn}: onDiagnostic`, "a function", onDiagnostic);
  }
  const diag = (kind, message) => {
    if (onDiagnostic) {
      try {
        onDiagnostic({ kind, message });
      } catch {}
    }
  };
  return {
    meta: needMeta ? JSON.stringify(meta) : undefined,
    tools: tools == null ? undefined : JSON.stringify(tools),
    config: config ?? undefined,
    abortGraceMs: abortGraceMs ?? undefined,
    llm: llmHost(api, llm),
    newLLM: newLLM == null ? undefined : newLLMHost(api, newLLM, `${fn}: newLLM`),
    environment: environment == null ? undefined : environmentHost(api, environment),
    clock: clock == null ? undefined : clockHost(api, clock),
    trace: trace == null ? undefined : traceHost(trace, diag),
    onDiagnostic:
      onDiagnostic == null
        ? undefined
        : (kind, message, stack) => {
            try {
              onDiagnostic(stack ? { kind, message, stack } : { kind, message });
            } catch {}
          },
  };
}

function checkLLM(llm, name) {
  if (!isObject(llm) || typeof llm.streamGenerate !== "function") {
    throw badArg(name, "an object with streamGenerate()", llm);
  }
  if (llm.loadHistory != null && typeof llm.loadHistory !== "function") {
    throw badArg(`${name}.loadHistory`, "a function", llm.loadHistory);
  }
}

// The model: start(pumpID, newMessagesJSON, thinkingLevel) → pump.
function llmHost(api, llm) {
  const host = {
    start: (id, json, thinkingLevel) =>
      pump(api, id, "llm.streamGenerate", (signal) =>
        llm.streamGenerate({ newMessages: JSON.parse(json), thinkingLevel: thinkingLevel || undefined, signal }),
      ),
  };
  if (typeof llm.loadHistory === "function") {
    host.loadHistory = (wid, json) => settleWith(api, wid, () => llm.loadHistory(JSON.parse(json)));
  }
  return host;
}

// newLLM(tokensJSON) → a model host, or the error message.
function newLLMHost(api, newLLM, name) {
  return (tokensJSON) => {
    try {
      const llm = newLLM(JSON.parse(tokensJSON));
      checkLLM(llm, `${name}() result`);
      return llmHost(api, llm);
    } catch (e) {
      return errMessage(e);
    }
  };
}

// The tools: start(pumpID, toolCallJSON, hasApprover) → pump.
function environmentHost(api, env) {
  return {
    start(id, json, hasApprover) {
      let approve;
      if (hasApprover) {
        let done = false;
        approve = (toolCall) => {
          if (done) return Promise.reject(floeError("closed", "approve: the tool execution has ended"));
          if (!isObject(toolCall)) return Promise.reject(badArg("approve: toolCall", "an OmniMessage", toolCall));
          const r = api.approve(id, JSON.stringify(toolCall));
          return r instanceof Error ? Promise.reject(r) : r;
        };
        approve[TOOL_APPROVE] = id;
        const p = pump(api, id, "environment.executeTool", (signal) =>
          env.executeTool({ toolCall: JSON.parse(json), approve, signal }),
        );
        const stop = p.stop;
        p.stop = () => {
          done = true;
          stop();
        };
        return p;
      }
      return pump(api, id, "environment.executeTool", (signal) =>
        env.executeTool({ toolCall: JSON.parse(json), approve, signal }),
      );
    },
  };
}

// The run's approver: (waiterID, toolCallJSON), settled through api.settle.
function approverHost(api, approve) {
  return (wid, json) => settleWith(api, wid, () => approve(JSON.parse(json)));
}

// settleWith calls f and settles the Go waiter wid with its (awaited) result
// or its error message.
function settleWith(api, wid, f) {
  let p;
  try {
    p = f();
  } catch (e) {
    api.settle(wid, false, errMessage(e));
    return;
  }
  Promise.resolve(p).then(
    (v) => api.settle(wid, true, v),
    (e) => api.settle(wid, false, errMessage(e)),
  );
}

function clockHost(api, clock) {
  return {
    now() {
      try {
        return clock.now();
      } catch (e) {
        return `clock.now: ${errMessage(e)}`;
      }
    },
    sleep(wid, ms) {
      const ac = new AbortController();
      settleWith(api, wid, () => clock.sleep(ms, ac.signal));
      return ac;
    },
  };
}

function traceHost(trace, diag) {
  const sink = (f, what) => {
    try {
      const r = f();
      if (r && typeof r.then === "function") r.then(undefined, (e) => diag("trace", `${what}: ${errMessage(e)}`));
      return undefined;
    } catch (e) {
      return `${what}: ${errMessage(e)}`;
    }
  };
  return {
    write: (json) => sink(() => trace.write(JSON.parse(json)), "trace.write"),
    rotate: () => sink(() => (typeof trace.rotate === "function" ? trace.rotate() : undefined), "trace.rotate"),
  };
}

// ---- producers: user async iterators → batches for Go ----------------------------

// asIterator returns the async (or sync) iterator of what a callback
// returned, awaiting a Promise first.
async function asIterator(v, what) {
  if (isObject(v) && typeof v.then === "function" && typeof v.next !== "function") v = await v;
  if (!isObject(v) && typeof v !== "function") throw new TypeError(`${what} returned ${describe(v)}, want an async iterator`);
  if (typeof v[Symbol.asyncIterator] === "function") return v[Symbol.asyncIterator]();
  if (typeof v.next === "function") return v;
  if (typeof v[Symbol.iterator] === "function") return v[Symbol.iterator]();
  throw new TypeError(`${what} returned an object that is not an async iterator`);
}

// Batches cross the boundary as strings of records (jsbridge/records.go):
// a streamed fragment with exactly the standard keys travels without JSON,
// any other message as "J" + its JSON. Every string is "<length>:<text>".

// Test hook (_debugJSONOnly): no fragment records in either direction.
let jsonOnly = false;

// fragmentRecord returns the record of a partial_* message that is a plain
// object with exactly the standard keys, string values, a standard role and
// event, and neither an empty stop_reason nor an empty tool_call_id; else
// null (the message goes as JSON). Go decodes such a record to a message
// that encodes and validates as the one its JSON decodes to.
function fragmentRecord(v) {
  if (Object.getPrototypeOf(v) !== Object.prototype) return null;
  let keys = 0; // JSON.stringify writes enumerable own keys only: so do we
  for (const k in v) {
    if (k !== "type" && k !== "payload") return null;
    keys++;
  }
  if (keys !== 2 || v.type !== "model_msg") return null;
  const p = v.payload;
  if (!isObject(p) || Object.getPrototypeOf(p) !== Object.prototype) return null;
  let type, role, ev, body, bodyKey, id, name;
  let stop = "";
  for (const k in p) {
    const x = p[k];
    if (typeof x !== "string") return null;
    switch (k) {
      case "type":
        type = x;
        break;
      case "role":
        role = x === "assistant" ? "a" : x === "user" ? "u" : null;
        break;
      case "event_type":
        ev = x === "delta" ? "d" : x === "start" ? "s" : x === "stop" ? "x" : null;
        break;
      case "text":
      case "thinking":
      case "arguments":
      case "output":
        if (bodyKey !== undefined) return null;
        bodyKey = k;
        body = x;
        break;
      case "tool_call_id":
        id = x;
        break;
      case "name":
        name = x;
        break;
      case "stop_reason":
        if (x === "") return null;
        stop = x;
        break;
      default:
        return null;
    }
  }
  if (!role || !ev || body === undefined) return null;
  const head = role === "a" ? ev + "a" : ev + "u";
  const tail = stop.length + ":" + stop;
  switch (type) {
    case "partial_text":
      if (bodyKey !== "text" || id !== undefined || name !== undefined) return null;
      return "T" + head + body.length + ":" + body + tail;
    case "partial_thinking":
      if (bodyKey !== "thinking" || id !== undefined || name !== undefined) return null;
      return "K" + head + body.length + ":" + body + tail;
    case "partial_tool_call": // an empty tool_call_id is checked as absent: as JSON
      if (bodyKey !== "arguments" || !id || name === undefined) return null;
      return "C" + head + body.length + ":" + body + id.length + ":" + id + name.length + ":" + name + tail;
    case "partial_tool_call_output":
      if (bodyKey !== "output" || !id || name !== undefined) return null;
      return "O" + head + body.length + ":" + body + id.length + ":" + id + tail;
  }
  return null;
}

// readRecords turns a consumer batch of records into message objects, as
// JSON.parse would give them (keys in the protocol's order).
function readRecords(s) {
  const out = [];
  let i = 0;
  let ts = "";
  const str = () => {
    let n = 0;
    for (;;) {
      const c = s.charCodeAt(i++);
      if (c === 58) break;
      if (!(c >= 48 && c <= 57)) throw floeError("internal", "pull: a malformed batch");
      n = n * 10 + c - 48;
    }
    const v = s.slice(i, i + n);
    i += n;
    return v;
  };
  while (i < s.length) {
    const k = s.charCodeAt(i++);
    if (k === 74 /* J */) {
      out.push(JSON.parse(str()));
      continue;
    }
    if (k === 116 /* t */) {
      ts = str();
      continue;
    }
    if (k === 82 /* R: the rest */) {
      out.push(JSON.parse(s.slice(i)));
      break;
    }
    const e = s.charCodeAt(i++);
    const event_type = e === 100 ? "delta" : e === 115 ? "start" : "stop";
    const role = s.charCodeAt(i++) === 97 ? "assistant" : "user";
    const body = str();
    let payload;
    switch (k) {
      case 84 /* T */:
        payload = { type: "partial_text", role, event_type, text: body };
        break;
      case 75 /* K */:
        payload = { type: "partial_thinking", role, event_type, thinking: body };
        break;
      case 67 /* C */: {
        const tool_call_id = str();
        payload = { type: "partial_tool_call", role, event_type, name: str(), arguments: body, tool_call_id };
        break;
      }
      case 79 /* O */:
        payload = { type: "partial_tool_call_output", role, event_type, output: body, tool_call_id: str() };
        break;
      default:
        throw floeError("internal", "pull: a malformed batch");
    }
    const stop = str();
    if (stop !== "") payload.stop_reason = stop;
    out.push(ts === "" ? { type: "model_msg", payload } : { timestamp: ts, type: "model_msg", payload });
  }
  return out;
}

// pump drains the iterator that start(signal) returns and answers Go's
// pulls with batches of records through api.deliver(id, batch, end, value).
function pump(api, id, what, start) {
  const ac = new AbortController();
  let buf = []; // records (fragmentRecord, or J + JSON) of the batch being filled
  let end = null; // [code, value] once the iterator ended
  let want = false; // Go waits for a batch
  let tick = false; // a macrotask passed since the batch's first message
  let gen = 0; // batch number, to match ticks to batches
  let stopped = false;
  let it = null;
  let space = null; // resolves the reader paused on a full batch

  const finish = (code, value) => {
    if (!end) end = [code, value];
    check();
  };
  const deliver = () => {
    want = false;
    const json = buf.length ? buf.join("") : "";
    buf = [];
    tick = false;
    gen++;
    if (space) {
      const s = space;
      space = null;
      s();
    }
    if (end) api.deliver(id, json, end[0], end[1]);
    else api.deliver(id, json, END_MORE, undefined);
  };
  const check = () => {
    if (want && !stopped && (end || buf.length >= BATCH_CAP || (buf.length > 0 && tick))) deliver();
  };
  const push = (v) => {
    if (!isObject(v) || Array.isArray(v)) {
      finish(END_BAD, `yielded ${describe(v)}, want an OmniMessage object`);
      return false;
    }
    let s = jsonOnly ? null : fragmentRecord(v);
    if (s === null) {
      try {
        s = JSON.stringify(v);
      } catch (e) {
        finish(END_BAD, `yielded a message JSON cannot encode: ${errMessage(e)}`);
        return false;
      }
      if (typeof s !== "string") {
        finish(END_BAD, `yielded a message JSON cannot encode (its toJSON returned ${describe(s)})`);
        return false;
      }
      s = "J" + s.length + ":" + s;
    }
    buf.push(s);
    if (buf.length === 1) {
      const g = gen;
      macrotask(() => {
        if (g === gen) {
          tick = true;
          check();
        }
      });
    }
    check();
    return true;
  };
  const read = async () => {
    try {
      it = await asIterator(start(ac.signal), what);
      while (!stopped) {
        if (buf.length >= BATCH_CAP) {
          await new Promise((resolve) => {
            space = resolve;
          });
          continue;
        }
        const r = await it.next();
        if (stopped) return;
        if (!isObject(r)) {
          finish(END_THREW, `${what}: iterator.next() resolved to ${describe(r)}, want {done, value}`);
          return;
        }
        if (r.done) {
          finish(END_DONE, r.value);
          return;
        }
        if (!push(r.value)) {
          stopIterator();
          return;
        }
      }
    } catch (e) {
      if (!stopped) finish(END_THREW, errMessage(e));
    }
  };
  const stopIterator = () => {
    if (it && typeof it.return === "function") {
      try {
        Promise.resolve(it.return()).catch(() => {});
      } catch {}
    }
  };
  read();
  return {
    pull() {
      want = true;
      check();
    },
    abort() {
      ac.abort();
    },
    stop() {
      if (stopped) return;
      stopped = true;
      if (space) space();
      if (!end) {
        ac.abort();
        stopIterator();
      }
    },
  };
}

// ---- the consumer: Go batches → an async iterator ---------------------------------

/** A run's (or compaction's, or subagent run's) message stream. */
class Stream {
  #api;
  #id;
  #buf = [];
  #i = 0;
  #done = false;
  #pending = null;
  #closing = null;

  constructor(api, id) {
    this.#api = api;
    this.#id = id;
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  next() {
    if (this.#i < this.#buf.length) return Promise.resolve({ value: this.#buf[this.#i++], done: false });
    if (this.#done) return Promise.resolve({ value: undefined, done: true });
    if (!this.#pending) this.#pending = this.#pull();
    return this.#pending.then(() => this.next());
  }

  async #pull() {
    try {
      const p = this.#api.pull(this.#id, jsonOnly);
      if (p instanceof Error) throw p;
      const batch = await p;
      if (this.#done) return;
      if (batch === null) {
        this.#done = true;
        this.#buf = [];
        return;
      }
      this.#buf = readRecords(batch);
      this.#i = 0;
    } catch (e) {
      if (!this.#done) {
        this.#done = true;
        this.#buf = [];
        this.#api.closeStream(this.#id);
      }
      throw e;
    } finally {
      this.#pending = null;
    }
  }

  /** Aborts the run (a `break`) and resolves once the engine has finished. */
  return(value) {
    if (!this.#closing) {
      if (this.#done) {
        this.#closing = Promise.resolve();
      } else {
        this.#done = true;
        this.#buf = [];
        const p = this.#api.closeStream(this.#id);
        this.#closing = p instanceof Error ? Promise.reject(p) : p;
      }
    }
    return this.#closing.then(() => ({ value, done: true }));
  }

  /** Aborts the run like return(), then rejects with err. */
  throw(err) {
    return this.return().then(() => {
      throw err;
    });
  }
}

// ---- persistence: stores and Web Locks --------------------------------------------

// storeArg normalizes a store option for the bridge: "indexeddb",
// "memory", "dir:<path>", or "" (none: only with allowNone, from false).
// The default is IndexedDB in a browser, memory elsewhere.
function storeArg(store, name, allowNone = false) {
  if (store == null) return !isNode && globalThis.indexedDB ? "indexeddb" : "memory";
  if (store === false && allowNone) return "";
  if (store === "indexeddb" || store === "memory") return store;
  if (isObject(store) && typeof store.dir === "string" && store.dir !== "") return "dir:" + store.dir;
  throw badArg(name, `"indexeddb", "memory", ${allowNone ? "false, " : ""}or {dir: string}`, store);
}

const locks = () => globalThis.navigator?.locks;

function busy(fn, id) {
  return floeError("session_busy", `${fn}: session ${JSON.stringify(id)} is busy: another tab (or another session object of this page) is running it`);
}

// tryLock takes the session's Web Lock if it is free; it resolves to the
// function that releases it, or null when another holder has it.
function tryLock(id) {
  return new Promise((resolve, reject) => {
    locks()
      .request("floe:session:" + id, { ifAvailable: true }, (lock) => {
        if (!lock) return resolve(null);
        return new Promise((release) => resolve(() => release()));
      })
      .catch(reject);
  });
}

/**
 * A run (or compaction) of a persisted session where Web Locks exist: its
 * first next() takes the session's lock, then starts the run through
 * open(release), which releases the lock once the run's records are stored.
 * Without the lock it fails with session_busy before anything is streamed
 * or traced.
 */
class LockedStream {
  #id;
  #fn;
  #open;
  #inner = null;
  #first = null;
  #done = false;

  constructor(id, fn, open) {
    this.#id = id;
    this.#fn = fn;
    this.#open = open;
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  next() {
    if (this.#inner) return this.#inner.next();
    if (this.#done) return Promise.resolve({ value: undefined, done: true });
    this.#first ??= this.#start();
    return this.#first.then(() => this.next());
  }

  async #start() {
    const release = await tryLock(this.#id);
    if (!release) {
      this.#done = true;
      throw busy(this.#fn, this.#id);
    }
    if (this.#done) return release(); // return() came first
    try {
      this.#inner = this.#open(release);
    } catch (e) {
      this.#done = true;
      throw e;
    }
  }

  return(value) {
    if (this.#inner) return this.#inner.return(value);
    this.#done = true;
    return Promise.resolve(this.#first)
      .catch(() => {})
      .then(() => (this.#inner ? this.#inner.return(value) : { value, done: true }));
  }

  throw(err) {
    return this.return().then(() => {
      throw err;
    });
  }
}

export default { load, isFloeError, connect };
