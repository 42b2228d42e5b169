// Floe: an agent context engine in Go, compiled to WebAssembly.
//
// This module is the thin shim between JavaScript and the Go bridge
// (package jsbridge): it loads floe.wasm, turns the user's objects into the
// small string-based calls the bridge understands, drains the user's async
// iterators into batches and serves the run's messages from a buffer.
// Types: floe.d.ts. It works in a page, a dedicated Worker (type "module"),
// an extension page, an extension's module service worker and Node 20.
import "./wasm_exec.js";
import { applyDefaults, newSessionId } from "./options.mjs";
import { subagentTool, tool } from "./tool.mjs";
import { isMessage, msg } from "./msg.mjs";
import { MAX_MS, asyncIterableOf, badArg, describe, errMessage, floeError, head, intArg, isArrayArg, isObject, knownKeys, nodeHooks, ownKeys, plainObject, readKeys, sessionIdArg } from "./internal.mjs";
import { transcript } from "./transcript.mjs";
import { httpOutcome, readEvents, readLines } from "./http.mjs";

export { tool, msg, isMessage, transcript, newSessionId, httpOutcome, readLines, readEvents };
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

// The key of the test hooks on a Floe object (not enumerable).
const DEBUG = Symbol.for("floe.debug");
const OWNER = Symbol("floe.owner"); // a stream's session or subagent (see owners)

/** Reports whether e is an error thrown or rejected by Floe for API misuse. */
export function isFloeError(e) {
  return e instanceof Error && e.name === "FloeError" && typeof e.code === "string";
}

const isNode = typeof process === "object" && typeof process.versions?.node === "string";

// User-supplied values are read here, on the JavaScript side, and only
// plain data (strings, numbers, booleans, the shim's own objects) crosses
// into Go: a getter or Proxy trap that throws while Go reads a value would
// unwind through Go's frames and leave its call unfinished forever.

/** Reads obj[key]; a throwing getter or Proxy trap is bad_argument naming it. */
function get(obj, key, name) {
  try {
    return obj[key];
  } catch (e) {
    throw floeError("bad_argument", `${name}: reading it threw: ${errMessage(e)}`);
  }
}

/** Array.isArray that names the value when a Proxy throws. */
function isArray(v, name) {
  try {
    return Array.isArray(v);
  } catch (e) {
    throw floeError("bad_argument", `${name}: reading it threw: ${errMessage(e)}`);
  }
}


/**
 * JSON.stringify of a user value: BigInt, circular, too deeply nested
 * values and throwing getters or toJSON are bad_argument naming it.
 */
function jsonArg(v, name) {
  let s;
  try {
    s = JSON.stringify(v);
  } catch (e) {
    const why = e instanceof RangeError ? "is nested too deeply for JSON" : "cannot be encoded as JSON";
    throw floeError("bad_argument", `${name}: ${why}: ${errMessage(e)}`);
  }
  if (typeof s !== "string") throw badArg(name, "a value JSON can encode", v);
  return s;
}

// The largest values the engine honours: a duration in milliseconds must
// fit the hosts' timers (MAX_MS); a count, an int32; a token or turn limit,
// an exact integer.
const MAX_COUNT = 2 ** 31 - 1;

// Runs f at the next macrotask: setImmediate (Node), else a MessageChannel
// (pages, Workers; made on first use), else setTimeout (a Cloudflare Worker
// without the expose_global_message_channel flag).
let macrotaskImpl = null;
function macrotask(f) {
  if (!macrotaskImpl) {
    if (typeof setImmediate === "function") macrotaskImpl = setImmediate;
    else if (typeof MessageChannel === "function") {
      const ch = new MessageChannel();
      const queue = [];
      ch.port1.onmessage = () => queue.shift()();
      macrotaskImpl = (g) => {
        queue.push(g);
        ch.port2.postMessage(0);
      };
    } else macrotaskImpl = (g) => setTimeout(g, 0);
  }
  macrotaskImpl(f);
}

// The batches waiting for a macrotask to pass (a pump's onTick each) share
// one: a pump whose batch is delivered first takes its callback out, so
// nothing holds the pump's state once it has stopped. With a macrotask of
// its own per batch, each pump was held until its macrotask ran, and a
// loop of tasks that never yields to the event loop (every scripted
// callback) held every pump of every task (about a hundred a W1 task).
let tickWaiters = new Set();
let tickScheduled = false;
function runTicks() {
  tickScheduled = false;
  const ws = tickWaiters;
  tickWaiters = new Set();
  let error = null;
  for (const f of ws) {
    try {
      f();
    } catch (e) {
      error ??= e; // the other batches are still delivered
    }
  }
  if (error) throw error;
}
function waitTick(f) {
  tickWaiters.add(f);
  if (!tickScheduled) {
    tickScheduled = true;
    macrotask(runTicks);
  }
}

// ---- loading ----------------------------------------------------------------

let loading;

/**
 * Loads floe.wasm once and returns the floe API. Later calls return the same
 * promise (their options are ignored).
 */
export function load(opts = {}) {
  if (loading) {
    // Loaded (or loading) once: later calls get the same Floe whatever
    // wasm they name, but an argument of the wrong kind is still refused.
    try {
      loadOptions(opts);
    } catch (e) {
      return Promise.reject(e);
    }
  }
  if (!loading) {
    loading = doLoad(opts);
    loading.catch(() => {
      loading = undefined;
    });
  }
  return loading;
}

// loadOptions checks load()'s argument and returns its wasm option.
function loadOptions(opts) {
  plainObject(opts, "load: opts");
  knownKeys(opts, LOAD_KEYS, "load: opts");
  const wasm = get(opts, "wasm", "load: opts.wasm");
  const ok =
    wasm == null ||
    typeof wasm === "string" ||
    wasm instanceof URL ||
    wasm instanceof ArrayBuffer ||
    ArrayBuffer.isView(wasm) ||
    wasm instanceof WebAssembly.Module ||
    (typeof Response === "function" && wasm instanceof Response);
  if (!ok) throw badArg("load: opts.wasm", "a URL, a string, an ArrayBuffer, a WebAssembly.Module or a Response", wasm);
  return wasm;
}

const LOAD_KEYS = new Set(["wasm"]);

async function doLoad(opts) {
  const wasm = loadOptions(opts);
  const Go = globalThis.Go;
  if (typeof Go !== "function") throw floeError("internal", "load: wasm_exec.js did not define globalThis.Go");
  const go = new Go();
  const quick = quickPendingEvent(go);
  const timers = runtimeTimers(go);
  const readyName = "__floeReady_" + Math.random().toString(36).slice(2);
  const ready = new Promise((resolve) => {
    globalThis[readyName] = resolve;
  });
  go.argv = ["floe", readyName];
  go.env = { ...go.env, FLOE_READY: readyName }; // read by main()
  try {
    const instance = await (wasm != null ? instantiate(wasm, go.importObject) : instantiateDefault(go.importObject));
    let exited = false;
    const run = go.run(instance);
    const gone = run.then(() => {
      exited = true;
      throw floeError("internal", "load: floe.wasm exited before it was ready");
    });
    const api = await Promise.race([ready, gone]);
    gone.catch(() => {});
    return makeFloe(api, () => exited, () => instance.exports.mem, instance.exports, go, quick, timers);
  } finally {
    delete globalThis[readyName];
  }
}

// The default floe.wasm is the one beside this module, as bundlers emit
// it. A dev server that pre-bundled the package away from its files (Vite 7's
// dependency optimizer, node_modules/.vite/deps/) serves the package's own
// file from node_modules instead.
async function instantiateDefault(imports) {
  const here = new URL("./floe.wasm", import.meta.url);
  try {
    return await instantiate(here, imports);
  } catch (e) {
    if (!/\/node_modules\/\.vite\/deps\//.test(import.meta.url)) throw e;
    // webpackIgnore: webpack reads new URL("…", import.meta.url) as an asset
    // to resolve at build time, and fails where node_modules is not in its
    // context (a workspace's hoisted node_modules); this one is Vite's only.
    return instantiate(new URL(/* webpackIgnore: true */ "/node_modules/@floehq/floe/floe.wasm", import.meta.url), imports);
  }
}

// This module fetches; reading files is the Node entry's (floe-node.mjs,
// the package's "node" condition), so that browser bundles never see node:fs.
async function instantiate(src, imports) {
  if (src instanceof WebAssembly.Module) return WebAssembly.instantiate(src, imports);
  if (src instanceof ArrayBuffer || ArrayBuffer.isView(src)) return fromBytes(src, "opts.wasm", imports);
  if (typeof Response === "function" && src instanceof Response) return fromResponse(src, imports);
  if (typeof src !== "string" && !(src instanceof URL)) {
    throw badArg("load: opts.wasm", "a URL, a string, an ArrayBuffer or a Response", src);
  }
  const base = globalThis.location?.href ?? import.meta.url;
  const url = new URL(src, base);
  if (url.protocol === "file:") {
    throw floeError(
      "bad_argument",
      `load: ${url.href} is a file: URL, which floe.mjs does not read (it fetches): import floe-node.mjs beside it, or the package by name (its "node" export condition, which Node, Deno and Bun follow), or pass load({ wasm }) the file's bytes`,
    );
  }
  let resp;
  try {
    resp = await fetch(url);
  } catch (e) {
    // A file an extension lacks fails the fetch (there is no 404), as a
    // server that cannot be reached does.
    throw floeError(
      "bad_wasm",
      `load: fetching ${url.href}: ${errMessage(e)}; is floe.wasm there? Put it next to floe.mjs (with the other files of the package), or pass load({ wasm }) its URL`,
    );
  }
  return fromResponse(resp, imports, url.href);
}

async function fromResponse(resp, imports, href = resp.url) {
  if (!resp.ok) {
    throw floeError("bad_wasm", `load: fetching ${href}: HTTP ${resp.status}; serve floe.wasm next to floe.mjs, or pass load({ wasm }) its URL`);
  }
  const type = resp.headers.get("content-type") ?? "";
  let bytes;
  try {
    if (typeof WebAssembly.instantiateStreaming === "function" && type.startsWith("application/wasm")) {
      return (await WebAssembly.instantiateStreaming(resp, imports)).instance;
    }
    bytes = await resp.arrayBuffer();
  } catch (e) {
    throw bodyFailed(e, href);
  }
  return fromBytes(bytes, href, imports, type);
}

// A body that fails after its headers came is named with the file's place,
// as a failed fetch is: Firefox answers a file an extension lacks with 200
// (application/wasm for a .wasm name) and a body that aborts. The module's
// own errors (it does not compile or link) pass as they are.
function bodyFailed(e, href) {
  const { CompileError, LinkError, RuntimeError } = WebAssembly;
  if (e instanceof CompileError || e instanceof LinkError || e instanceof RuntimeError) return e;
  return floeError(
    "bad_wasm",
    `load: ${href ? `fetching ${href}` : "reading opts.wasm"}: its body failed: ${errMessage(e).trim()}; is floe.wasm there? Put it next to floe.mjs (with the other files of the package), or pass load({ wasm }) its URL`,
  );
}

// fromBytes instantiates bytes after checking the wasm magic ("\0asm"):
// an HTML page in their place is named with its likely causes.
async function fromBytes(src, what, imports, type = "") {
  const b = src instanceof ArrayBuffer ? new Uint8Array(src) : new Uint8Array(src.buffer, src.byteOffset, src.byteLength);
  if (!(b.length >= 4 && b[0] === 0 && b[1] === 0x61 && b[2] === 0x73 && b[3] === 0x6d)) {
    throw floeError("bad_wasm", notWasm(b, what, type));
  }
  return (await WebAssembly.instantiate(src, imports)).instance;
}

function notWasm(b, what, type) {
  // A character the 64th byte cuts is left out (stream), not U+FFFD.
  const start = new TextDecoder().decode(b.subarray(0, 64), { stream: true }).replace(/\s+/g, " ").trim();
  const got = `${b.length} bytes${type ? ` of ${type}` : ""} starting ${JSON.stringify(head(start, 40))}`;
  if (/^(\ufeff)?\s*</.test(start) || type.startsWith("text/html")) {
    return (
      `load: ${what} is an HTML page, not floe.wasm (${got}). Likely causes: a dev server answering a missing file with its ` +
      `index.html fallback, or a wrong path. Fix: serve floe.wasm next to floe.mjs (as application/wasm), or pass its real URL ` +
      `with load({ wasm: url }); with a bundler, keep the package's own new URL("./floe.wasm", import.meta.url) (Vite: ` +
      `optimizeDeps: { exclude: ["@floehq/floe"] } when its dev server pre-bundles the package)`
    );
  }
  return `load: ${what} is not a WebAssembly module (${got}, want the magic bytes "\\0asm")`;
}

// runtimeTimers makes the Go runtime's timers keep Node's event loop alive
// only while JavaScript waits for Floe. The runtime sets a timer
// (setTimeout, through wasm_exec.js's scheduleTimeoutEvent) for its next
// timer whenever it goes idle, and its memory scavenger sleeps up to about
// a second between bursts: a script whose runs were done would otherwise
// wait for those before Node exits (two seconds after three W2 tasks).
// While a pull of a stream or a Promise the bridge made is pending (hold),
// the runtime's timers are ref'd, so a run whose next step is a Go timer
// (a retry's backoff, an abort's grace) still ends; with none pending they
// are unref'd. Hosts whose setTimeout returns a number (browsers, Workers)
// keep no process alive: nothing changes there.
function runtimeTimers(go) {
  const gojs = go.importObject?.gojs;
  const schedule = gojs?.["runtime.scheduleTimeoutEvent"];
  const live = go._scheduledTimeouts;
  const counts = { waits: 0, hold() {}, release() {} };
  if (typeof schedule !== "function" || !(live instanceof Map)) return counts;
  const each = (f) => {
    for (const t of live.values()) if (typeof t?.[f] === "function") t[f]();
  };
  gojs["runtime.scheduleTimeoutEvent"] = (sp) => {
    schedule(sp);
    if (counts.waits === 0) {
      const t = live.get(go.mem.getInt32((sp >>> 0) + 16, true));
      if (typeof t?.unref === "function") t.unref();
    }
  };
  counts.hold = () => {
    if (counts.waits++ === 0) each("ref");
  };
  counts.release = () => {
    if (--counts.waits === 0) each("unref");
  };
  return counts;
}

// quickPendingEvent answers syscall/js's read of go._pendingEvent, which
// starts every resume of the runtime, itself when there is no event (the
// resumes of floe_call's calls): wasm_exec.js's valueGet decodes the
// property's name with a TextDecoder each time, about 2% of a short turn.
// Where the name's bytes are, the go object's reference and how null is
// written are learned from the first such read that valueGet answers; the
// name's bytes are compared each time, and any other read is valueGet's.
// Returns the count of reads answered (for the debug hooks).
function quickPendingEvent(go) {
  const counts = { reads: 0 };
  const gojs = go.importObject?.gojs;
  const get = gojs?.["syscall/js.valueGet"];
  if (typeof get !== "function") return counts;
  const name = "_pendingEvent";
  let ptr = -1; // where the name's bytes are, once learned
  let recv = 0; // the go object's reference, low and high words
  let recvHi = 0;
  let null0 = 0; // null as valueGet writes it
  let null1 = 0;
  const isName = (m, at) => {
    for (let i = 0; i < name.length; i++) if (m.getUint8(at + i) !== name.charCodeAt(i)) return false;
    return true;
  };
  gojs["syscall/js.valueGet"] = (sp) => {
    sp >>>= 0;
    const m = go.mem;
    if (m.getUint32(sp + 24, true) !== name.length || m.getUint32(sp + 28, true) !== 0) return get(sp);
    const at = m.getUint32(sp + 16, true);
    if (at === ptr) {
      if (go._pendingEvent === null && m.getUint32(sp + 8, true) === recv && m.getUint32(sp + 12, true) === recvHi && isName(m, at)) {
        m.setUint32(sp + 32, null0, true);
        m.setUint32(sp + 36, null1, true);
        counts.reads++;
        return;
      }
      return get(sp);
    }
    const learn = ptr === -1 && go._pendingEvent === null && go._values?.[m.getUint32(sp + 8, true)] === go && isName(m, at);
    get(sp);
    if (learn && go.mem === m) {
      ptr = at;
      recv = m.getUint32(sp + 8, true);
      recvHi = m.getUint32(sp + 12, true);
      null0 = m.getUint32(sp + 32, true);
      null1 = m.getUint32(sp + 36, true);
    }
  };
  return counts;
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

// The most arguments an export takes through floe_call (jsbridge/bridge.go
// maxIndexedArgs).
const MAX_INDEXED_ARGS = 8;

// fastCalls gives api the calls a run makes most: send (a producer's batch),
// settleText (a settled Promise whose value is a string or undefined) and
// pullNext (a consumer's pull). Each is queued and made at the end of the
// current JavaScript task, with Go idle: through the module's own export
// floe_call (jsbridge/fast.go), numbers and bytes written in its memory,
// then one resume of the runtime for all of them, which runs what they woke.
// A js.Func call of the bridge costs about six times a resume. Values the
// export's numbers and bytes do not carry (a model's outcome with more
// than its status, a settle with a boolean) take its export call (op 4,
// below), in the same order and within the same resume; any other export
// called while Go is idle first makes the calls queued before it, so Go
// sees them in the order JavaScript made them.
function fastCalls(api, exited, memory, ex, go) {
  const call = ex?.floe_call; // (op, a, b, c)
  const fast = typeof call === "function" && typeof go?._resume === "function";
  const stats = (api.fastStats = { fast: 0, funcs: 0, resumes: 0, slow: false });
  let depth = 0; // resumes in progress: Go runs (and may be calling JavaScript)
  if (fast) {
    const resume = go._resume;
    go._resume = function () {
      depth++;
      try {
        return resume.call(this);
      } finally {
        depth--;
      }
    };
  }
  let queue = [];
  let queued = false;
  const flush = () => {
    queued = false;
    const q = queue;
    queue = [];
    let resume = false;
    let error = null;
    for (const f of q) {
      try {
        if (f()) resume = true;
      } catch (e) {
        error ??= e;
      }
    }
    if (resume && !exited()) {
      stats.resumes++;
      go._resume();
    }
    if (error) throw error;
  };
  const later = (f) => {
    queue.push(f);
    if (!queued) {
      queued = true;
      queueMicrotask(flush);
    }
  };
  const { deliver, settle, pull } = api;
  // Every export is also called through floe_call (op 4, jsbridge/bridge.go
  // callIndexed) while Go is idle: its arguments in argv (the port's), its
  // result at argv[0], then a resume, which runs what the call woke before
  // it returns, as a js.Func call's end does: a task's createSession and
  // its run's start, for instance.
  const index = api.exportIndex ?? {};
  const argv = (api.argv = []);
  // indexed calls export i with args through floe_call, without a resume,
  // and returns its value, or notCalled when it cannot (no port yet, the
  // debug hook's slowCalls, too many arguments).
  const notCalled = {};
  const indexed = (i, args) => {
    if (i === undefined || !fast || stats.slow || args.length > MAX_INDEXED_ARGS) return notCalled;
    for (let j = 0; j < args.length; j++) argv[j] = args[j];
    let done = false;
    depth++; // a call from JavaScript that Go makes meanwhile takes its js.Func
    try {
      done = call(4, i, args.length, 0) === 1;
    } finally {
      depth--;
    }
    const r = argv[0];
    argv.length = 0;
    if (!done) return notCalled;
    stats.fast++;
    return r;
  };
  for (const [k, f] of Object.entries(api)) {
    if (typeof f !== "function") continue;
    const i = index[k];
    api[k] = (...args) => {
      if (depth === 0 && queue.length) flush();
      if (depth > 0) return f(...args);
      const r = indexed(i, args);
      if (r === notCalled) return f(...args);
      if (!exited()) {
        stats.resumes++;
        go._resume();
      }
      return r;
    };
  }
  const funcs = (f) => {
    stats.funcs++;
    return f();
  };
  // text writes s to the module's inbox and returns its length in bytes. A
  // long text is encoded first, so the inbox is asked for its exact size
  // rather than three bytes a UTF-16 unit.
  const text = (s) => {
    if (s.length === 0) return 0;
    const bytes = s.length > 1 << 16 ? utf8Enc.encode(s) : null;
    const max = bytes ? bytes.length : s.length * 3; // UTF-8 bytes of a UTF-16 unit, at most
    const ptr = call(0, max, 0, 0);
    if (ptr === 0) throw floeError("internal", "floe.wasm: no room for a batch");
    const view = new Uint8Array(memory().buffer, ptr, max);
    if (bytes) {
      view.set(bytes);
      return max;
    }
    return utf8Enc.encodeInto(s, view).written;
  };
  // bytes copies b, a producer's records (RecordBytes), into the inbox and
  // returns their length.
  const bytes = (b) => {
    if (b.length === 0) return 0;
    const ptr = call(0, b.length, 0, 0);
    if (ptr === 0) throw floeError("internal", "floe.wasm: no room for a batch");
    new Uint8Array(memory().buffer, ptr, b.length).set(b);
    return b.length;
  };
  const use = () => fast && !stats.slow && (stats.fast++, true);
  api.send = (id, records, end, value) =>
    later(() => {
      try {
        if (value === undefined && use()) return call(1, id, bytes(records), end) === 1;
        // A value the export does not carry (a model's outcome with more
        // than its status): through floe_call's export call, whose resume
        // is the queue's.
        const json = utf8Dec.decode(records);
        if (indexed(index.deliver, [id, json, end, value]) !== notCalled) return true;
        funcs(() => deliver(id, json, end, value));
        return false;
      } finally {
        releaseRecords(records);
      }
    });
  api.settleText = (wid, ok, value) =>
    later(() => {
      if ((value === undefined || typeof value === "string") && use()) {
        return call(2, wid, ok ? 1 : 0, value === undefined ? -1 : text(value)) === 1;
      }
      if (indexed(index.settle, [wid, ok, value]) !== notCalled) return true;
      funcs(() => settle(wid, ok, value));
      return false;
    });
  api.pullNext = (id, ticket, jsonOnly, fail) =>
    later(() => {
      if (use()) return call(3, id, ticket, jsonOnly ? 1 : 0) === 1;
      const r = funcs(() => pull(id, ticket, jsonOnly));
      if (r instanceof Error) fail(r);
      return false;
    });
}

function makeFloe(api, exited, memory, exports, go, quick, timers) {
  // A Promise the bridge makes holds the runtime's timers until it is
  // settled (runtimeTimers).
  api.useDeferred(() => {
    const d = deferred();
    const [, resolve, reject] = d;
    let held = true;
    timers.hold();
    const letGo = () => {
      if (held) {
        held = false;
        timers.release();
      }
    };
    d[1] = (v) => {
      letGo();
      resolve(v);
    };
    d[2] = (e) => {
      letGo();
      reject(e);
    };
    return d;
  });
  fastCalls(api, exited, memory, exports, go);
  // A stream's pulls are answered with numbers only: the batch is read from
  // the module's memory during the call (jsbridge/stream.go).
  const tickets = new Map(); // ticket → [resolve, reject]
  let nextTicket = 0;
  // text(ptr, n): n bytes of UTF-8 at ptr in the module's memory, which Go
  // keeps for the duration of the call that hands them over.
  api.text = (ptr, n) => (n === 0 ? "" : utf8Dec.decode(new Uint8Array(memory().buffer, ptr, n)));
  const pumps = (api.pumps = new PumpTable()); // pump id → the shim's pump
  // Sessions and subagents dropped without close(): once the object is
  // collected, its Go side is closed as close() would (a run in flight is
  // aborted, its records stored). A stream holds its owner (OWNER), so an
  // owner is collected only when none of its streams can be read either;
  // callbacks that refer to their own session keep it (Go holds them).
  const dropped = (api.dropped = { sessions: 0, streams: 0 }); // for the debug hooks
  const owners = registry(([fn, handle]) => {
    if (exited()) return;
    dropped.sessions++;
    try {
      Promise.resolve(api[fn](handle, true)).catch(() => {});
    } catch {}
  });
  const owned = (stream, owner) => {
    Object.defineProperty(stream, OWNER, { value: owner });
    return stream;
  };
  const portCalls = (api.portCalls = { pulls: 0, stops: 0 }); // from Go, for the debug hooks
  api.usePort({
    argv: api.argv,
    // lockHeld(dir, id): undefined while this program holds the { dir }
    // lock of session id's run, if any; once another process took it, why
    // (Go's trace.FileStore asks it before each write).
    lockHeld(dir, id) {
      try {
        return nodeHooks.lockHeld?.(dir, id);
      } catch {}
    },
    pull(id) {
      portCalls.pulls++;
      pumps.get(id)?.pull();
    },
    abort(id, reason) {
      pumps.get(id)?.abort(reason);
    },
    stop(id) {
      portCalls.stops++;
      const p = pumps.get(id);
      if (p) {
        pumps.delete(id);
        p.stop();
      }
    },
    batch(ticket, ptr, n) {
      const t = answer(ticket);
      if (!t) return;
      t[0](n < 0 ? null : api.text(ptr, n));
    },
    fail(ticket, err) {
      const t = answer(ticket);
      if (!t) return;
      t[1](err);
    },
  });
  // answer takes a pull's ticket out, once: its Promise no longer holds the
  // runtime's timers.
  const answer = (ticket) => {
    const t = tickets.get(ticket);
    if (t === undefined) return undefined;
    tickets.delete(ticket);
    timers.release();
    return t;
  };
  // pullBatch(streamID, jsonOnly) → Promise<string | null>.
  api.pullBatch = (id, jsonOnly) => {
    const ticket = ++nextTicket;
    const p = new Promise((resolve, reject) => tickets.set(ticket, [resolve, reject]));
    timers.hold(); // released when the ticket is answered (runtimeTimers)
    api.pullNext(id, ticket, jsonOnly, (err) => answer(ticket)?.[1](err));
    return p;
  };
  // call runs a synchronous Go export: a returned Error is thrown.
  const call = (fn, ...args) => {
    if (exited()) throw floeError("internal", "floe.wasm has exited");
    const r = api[fn](...args);
    if (r instanceof Error) throw r;
    return r;
  };

  function createSession(opts) {
    const own = applyDefaults(opts, "createSession", true);
    const spec = sessionSpec(api, "createSession", opts, own);
    const store = storeArg(get(opts, "store", "createSession: store"), "createSession: store", true);
    if (store) spec[SPEC_STORE] = store; // none ("") is absent: a string costs Go a finalizer
    const [id, handle] = sessionRef(call("createSession", packed(spec)));
    return makeSession(id, handle, store, modelThinking(own.llm), spec[SPEC_DIAG]);
  }

  // runLocks makes what a session object, or a createSubagent object,
  // starts its runs through: open(fn, start, signal) → the run's stream,
  // where start() starts it in Go and returns its stream id. The run's
  // stream (see Stream) tells once the run has ended and its records are
  // stored. With a persisted store and Web
  // Locks, each run (and compaction) holds the lock lockName(store, id)
  // from its first next() until then: one writer per session across the
  // tabs of an origin. Without Web Locks, and for the memory store, the
  // lock is this program's (and, on a { dir } store, the process's lock
  // file), taken at once. isClosed() tells whether the object was closed:
  // a run still waiting for its Web Lock then never starts, and
  // resumeSession and deleteSession wait for the run in flight rather
  // than fail; owner() is the object, which its streams hold. finish()
  // ends the run in flight of an object closed (its Go side aborted it):
  // its stream is read to its end, where its reader still finds it, or,
  // dropped by its reader, abandoned.
  // diag(kind, message) reports a diagnostic of the session.
  function runLocks(id, store, diag, isClosed, owner) {
    // The runs and compactions of this object that hold the session's
    // lock, and what lets it go once the last of them has ended (hold).
    let holds = 0;
    let letGo = noop;
    // The stream of the last run or compaction started, held weakly (a
    // stream dropped by its reader is abandoned once collected:
    // droppedStreams), and the id of its run, for finish(). A run that
    // waits for its Web Lock is not one: a second run() made then
    // (refused at its first next()) took the place of the run in flight,
    // and a session's close() resolved before that run had ended.
    let active = null;
    let activeId = 0;
    const lockable = store !== "";
    let unlockedSaid = false; // the diagnostic of a page without Web Locks, once
    let lostLock; // why the session's lock was lost, once it was
    // open starts a run or compaction; signal is its stand-in signal
    // (released if the run never starts: a run this program's lock
    // refused kept its listener on the user's signal, one more for each
    // refusal until that signal aborted).
    const open = (fn, start, signal) => {
      let s;
      try {
        s = openStream(fn, () => (activeId = start()), signal);
      } catch (e) {
        signal?.unlink();
        throw e;
      }
      const stream = owned(s, owner());
      if (stream instanceof Stream) active = { deref: weakly(stream) };
      return stream;
    };
    // hold starts a run or compaction that holds the session's lock, let
    // go once every run holding it has ended.
    const hold = (start) => {
      holds++;
      let over = false;
      const ended = () => {
        if (over) return;
        over = true;
        if (--holds > 0) return;
        const f = letGo;
        letGo = noop;
        f();
      };
      try {
        return new Stream(api, start(), ended);
      } catch (e) {
        ended();
        throw e;
      }
    };
    const openStream = (fn, start, signal) => {
      if (!lockable) return new Stream(api, start());
      // This object holds the lock: Go refuses the run (session_busy)
      // while the one in flight lasts, but takes it once that run has
      // ended in the engine and only its stream's end waits (its records
      // being written). It then holds the lock too: the other run's end
      // let it go under it, and a resume or another process wrote beside it.
      if (holds > 0) return hold(start);
      // Another process took the { dir } lock of an earlier run (this one
      // stopped or blocked too long): the Trace holds records this object
      // never read, and its own later ones were not written.
      if (lostLock) throw busy(fn, id, lostLock);
      if (!webLocks(store)) {
        // This program's lock, taken at once: the run starts now, as one
        // of a session not stored does.
        const name = lockName(store, id);
        if (localLocks.has(name)) throw busy(fn, id);
        if (store === "indexeddb" && !unlockedSaid) {
          // A page that is not a secure context has IndexedDB and no Web
          // Locks, and so has a browser without them (an old one): the
          // tabs of the origin share the session, unlocked.
          unlockedSaid = true;
          const why = globalThis.isSecureContext === false ? "it is not a secure context: serve it over HTTPS or from localhost" : "this browser or runtime has none: use one that has";
          diag(
            "trace",
            `session ${JSON.stringify(id)} is stored, and this page has no Web Locks (${why}): another tab's run of it is not refused, and two tabs running it at once interleave their records in its Trace`,
          );
        }
        const unlockDir = dirLock(store, id, true, fn);
        if (typeof unlockDir === "string") throw busy(fn, id, unlockDir);
        localLocks.add(name);
        const h = holding(name, isClosed);
        holders.set(name, h);
        h.held = true;
        letGo = () => {
          localLocks.delete(name);
          lostLock ??= unlockDir();
          h.settle();
        };
        return hold(start);
      }
      return new LockedStream(store, id, fn, (release) => {
        if (isClosed()) {
          // close() came while the lock was awaited: the run never starts
          // and its stream ends empty, as one not pulled before close().
          release();
          signal?.unlink();
          return null;
        }
        letGo = () => {
          lostLock ??= release();
        };
        const stream = hold(start);
        active = { deref: weakly(stream) };
        return stream;
      }, () => signal?.unlink(), () => holds > 0, isClosed);
    };
    const finish = () => {
      const stream = active?.deref();
      if (stream) return stream.drain();
      if (activeId) return call("closeStream", activeId); // its reader dropped it
    };
    return { open, finish };
  }

  // makeSession wraps a bridge session; its runs and compactions hold the
  // session's lock (runLocks).
  // diag(kind, message) reports a diagnostic of the session.
  function makeSession(id, handle, store, defaultThinking, diag) {
    let closed = false;
    let closing = null; // close()'s promise
    const live = (fn) => {
      if (closed) throw floeError("closed", `${fn}: the session is closed`);
    };
    const { open, finish } = runLocks(id, store, diag, () => closed, () => me.deref());
    // No closure made here refers to the session object itself: Go holds
    // some of them (a run's approver), and they share this scope.
    const me = { deref: () => undefined }; // the session object, weakly (below)
    const token = {}; // its unregister token in owners
    const self = {
      id,
      run(prompt, runOpts = {}) {
        live("run");
        plainObject(runOpts, "run: options");
        knownKeys(runOpts, RUN_KEYS, "run: options");
        const [kind, input] = inputArg(prompt, "run: prompt");
        const approve = get(runOpts, "approve", "run: approve");
        const thinkingLevel = get(runOpts, "thinkingLevel", "run: thinkingLevel");
        if (approve != null && typeof approve !== "function") throw badArg("run: approve", "a function", approve);
        if (thinkingLevel != null && typeof thinkingLevel !== "string") {
          throw badArg("run: thinkingLevel", "a string", thinkingLevel);
        }
        const signal = signalArg(get(runOpts, "signal", "run: signal"), "run: signal");
        const approveHost = approve == null ? undefined : approverHost(api, approve);
        return open(
          "run",
          () => withSignal(signal, () => call("start", handle, kind, input, approveHost, signal, thinkingLevel ?? defaultThinking)),
          signal,
        );
      },
      steer(input) {
        live("steer");
        const [kind, data] = inputArg(input, "steer: input");
        return call("steer", handle, kind, data);
      },
      unsteer(steerID) {
        live("unsteer");
        if (!Number.isSafeInteger(steerID) || steerID < 1) throw badArg("unsteer: id", "an id returned by steer()", steerID);
        return call("unsteer", handle, steerID);
      },
      skipReconnectWait() {
        live("skipReconnectWait");
        return call("skipReconnectWait", handle);
      },
      compact(compactOpts = {}) {
        live("compact");
        plainObject(compactOpts, "compact: options");
        knownKeys(compactOpts, COMPACT_KEYS, "compact: options");
        const signal = signalArg(get(compactOpts, "signal", "compact: signal"), "compact: signal");
        return open("compact", () => withSignal(signal, () => call("compact", handle, signal)), signal);
      },
      compactability() {
        live("compactability");
        return call("compactability", handle);
      },
      // close aborts the run or compaction in flight, if any (its stream
      // ends as an abort does: request_end{aborted} … abort), and resolves
      // once that stream has ended and its records are stored: the second
      // closeSession, after it, writes once more the records held after a
      // failed write (a full quota), or reports their loss.
      close() {
        if (closing) return closing;
        closed = true;
        owners.unregister(token);
        try {
          call("closeSession", handle);
          closing = Promise.resolve()
            .then(finish)
            .then(() => call("closeSession", handle, true))
            .then(() => undefined);
        } catch (e) {
          closing = Promise.reject(e);
        }
        return closing;
      },
    };
    me.deref = weakly(self);
    owners.register(self, ["closeSession", handle], token);
    return self;
  }

  function createSubagent(opts) {
    const spec = sessionSpec(api, "createSubagent", opts, applyDefaults(opts, "createSubagent", true, "subagent"));
    const store = storeArg(get(opts, "store", "createSubagent: store"), "createSubagent: store", true);
    if (store) spec[SPEC_STORE] = store; // the child's own Trace (E-15.6)
    const [id, handle] = sessionRef(call("createSubagent", packed(spec)));
    let closed = false;
    // Its runs hold the session's lock, as a session's do: a deleteSession
    // or resumeSession of its id, another object's run of it, and another
    // tab's or process's, are refused while one is in flight.
    const { open, finish } = runLocks(id, store, spec[SPEC_DIAG], () => closed, () => me.deref());
    const me = { deref: () => undefined }; // as in makeSession
    const token = {};
    const self = {
      id,
      run(prompt, runOpts = {}) {
        if (closed) throw floeError("closed", "subagent.run: the subagent is closed");
        if (typeof prompt !== "string") throw badArg("subagent.run: prompt", "a string", prompt);
        plainObject(runOpts, "subagent.run: options");
        knownKeys(runOpts, SUBAGENT_RUN_KEYS, "subagent.run: options");
        const approve = get(runOpts, "approve", "subagent.run: approve");
        if (approve != null && typeof approve !== "function") {
          throw badArg("subagent.run: approve", "a function", approve);
        }
        const toolID = approve == null ? undefined : get(approve, TOOL_APPROVE, "subagent.run: approve");
        const signal = signalArg(get(runOpts, "signal", "subagent.run: signal"), "subagent.run: signal");
        const approveHost = approve == null || toolID ? undefined : approverHost(api, approve);
        return open("subagent.run", () => withSignal(signal, () => call("subagentRun", handle, prompt, approveHost, toolID, signal)), signal);
      },
      close() {
        if (!closed) {
          closed = true;
          owners.unregister(token);
          call("closeSubagent", handle);
          // The run in flight, aborted, ends (and lets go of the lock) once
          // its stream is read to its end: its reader may never read on.
          Promise.resolve().then(finish).catch(noop);
        }
      },
    };
    me.deref = weakly(self);
    owners.register(self, ["closeSubagent", handle], token);
    return self;
  }

  // ---- persisted sessions (the store option: see storeArg) ----

  async function resumeSession(id, opts) {
    sessionIdArg(id, "resumeSession: id");
    const own = applyDefaults(opts, "resumeSession", false);
    const spec = sessionSpec(api, "resumeSession", opts, own, false);
    const given = get(opts, "store", "resumeSession: store");
    const store = storeArg(given, "resumeSession: store");
    // Resume may write (a failed compaction_end, E-17.4): one writer.
    const release = await tryLock(store, id, "resumeSession", { wait: true });
    if (typeof release !== "function") throw busy("resumeSession", id, release);
    try {
      const [sid, handle] = sessionRef(await call("resumeSession", id, packed(spec), store).catch((e) => notFoundWhere(e, given, store)));
      return makeSession(sid, handle, store, modelThinking(own.llm), spec[SPEC_DIAG]);
    } finally {
      release();
    }
  }

  // A session not found says where it was looked for: in the memory store
  // it defaulted to (Node's), a program that resumes by id at its next
  // start without store: { dir } found nothing; a relative { dir } is
  // read from the working directory, which a CLI started elsewhere does
  // not share. "not found" alone said neither.
  const notFoundWhere = (e, given, store) => {
    if (e?.code !== "not_found" || typeof e.message !== "string") throw e;
    if (given == null && store === "memory") {
      e.message += " in the memory store, the default here, which keeps the sessions of this program only (store: { dir } keeps them in a directory)";
    } else if (store.startsWith("dir:")) {
      const dir = given.dir; // as given (the store's is resolved)
      const cwd = isNode && !/^([\\/]|[A-Za-z]:)/.test(dir) ? ` (relative to the working directory ${process.cwd()})` : "";
      e.message += ` in the directory ${JSON.stringify(dir)}${cwd}`;
    }
    throw e;
  };

  // storeOpt reads the store of a store function's options object;
  // storeGiven also returns the option as given (undefined: defaulted).
  const storeOpt = (opts, fn) => storeGiven(opts, fn)[0];
  const storeGiven = (opts, fn) => {
    plainObject(opts, `${fn}: options`);
    // A misspelt key would read the default store without a word (and an
    // import would go to memory, lost when the program ends).
    const keys = ownKeys(opts, `${fn}: options`);
    if (keys.includes("dir") && !keys.includes("store")) {
      throw floeError("bad_argument", `${fn}: options.dir: unknown option (did you mean store: { dir }?); known: store`);
    }
    knownKeys(opts, STORE_FN_KEYS, `${fn}: options`);
    const given = get(opts, "store", `${fn}: store`);
    return [storeArg(given, `${fn}: store`), given];
  };

  async function listSessions(opts = {}) {
    const rows = await call("listSessions", storeOpt(opts, "listSessions"));
    return rows.map(([id, firstPrompt, lastActivity, size, files, source]) => ({ id, firstPrompt, lastActivity, size, files, source: source || null }));
  }

  async function exportSession(id, opts = {}) {
    sessionIdArg(id, "exportSession: id");
    const [store, given] = storeGiven(opts, "exportSession");
    const files = await call("exportSession", id, store).catch((e) => notFoundWhere(e, given, store));
    return files.map(([name, text]) => ({ name, text }));
  }

  async function readSession(id, opts = {}) {
    sessionIdArg(id, "readSession: id");
    const [store, given] = storeGiven(opts, "readSession");
    return JSON.parse(await call("readSession", id, store).catch((e) => notFoundWhere(e, given, store)));
  }

  async function importSession(files, opts = {}) {
    const store = storeOpt(opts, "importSession");
    const given = filesArg(files, "importSession: files");
    // The lock of each session it stores, as a run takes it: a session
    // whose run has not stored its first record yet was taken by the
    // import, and the run's records were not written.
    const held = [];
    try {
      for (const id of (await call("importSession", given, store, true)).split("\n")) {
        if (!id) continue;
        const release = await tryLock(store, id, "importSession", { wait: true });
        if (typeof release !== "function") {
          throw floeError("session_busy", `importSession: session ${JSON.stringify(id)} is busy, and nothing was imported: ${release ?? "another tab or worker (or a session or subagent object of this program) is running it"}`);
        }
        held.push(release);
      }
      return await call("importSession", given, store);
    } finally {
      for (const release of held) release();
    }
  }

  async function deleteSession(id, opts = {}) {
    sessionIdArg(id, "deleteSession: id");
    const [store, given] = storeGiven(opts, "deleteSession");
    // The session's lock, as a run takes it: a run in flight (this tab's,
    // another tab's or another session object's) would otherwise go on
    // writing its records after the delete, leaving a session without its
    // session_meta that lists but never resumes.
    // So does each of its subagents' child sessions, deleted with it: a
    // child's run may go on after its parent's (a createSubagent object of
    // its id, a run its parent's abort grace left), and was deleted under
    // it. One busy refuses the whole delete before anything is deleted.
    // So does a child its pointers name that is not stored yet (its run
    // has not written its first record), which would write its Trace
    // under a parent gone. The children are listed once the session is
    // held (none is added then but by a child's run, whose lock is then
    // refused), and again until no new one shows.
    const held = [];
    try {
      const release = await tryLock(store, id, "deleteSession", { wait: true });
      if (typeof release !== "function") throw busy("deleteSession", id, release);
      held.push(release);
      for (const locked = new Set([id]); ; ) {
        const children = (await call("deleteSession", id, store, true)).split("\n").filter((c) => c && !locked.has(c));
        if (children.length === 0) break;
        for (const c of children) {
          const release = await tryLock(store, c, "deleteSession", { wait: true });
          if (typeof release !== "function") {
            const who = release ?? "another tab or worker (or a session or subagent object of this program) is running it";
            throw floeError("session_busy", `deleteSession: session ${JSON.stringify(id)} is not deleted, nor any of its subagents' sessions: its subagent's session ${JSON.stringify(c)} is busy: ${who}`);
          }
          held.push(release);
          locked.add(c);
        }
      }
      return await call("deleteSession", id, store).catch((e) => notFoundWhere(e, given, store));
    } finally {
      for (const release of held) release();
    }
  }

  const floe = {
    connect,
    createSession,
    createSubagent,
    resumeSession,
    listSessions,
    exportSession,
    readSession,
    importSession,
    deleteSession,
    isFloeError,
    tool,
    subagentTool: (spec) => subagentTool(createSubagent, spec),
    msg,
    isMessage,
    transcript,
    newSessionId,
    httpOutcome,
    readLines,
    readEvents,
    ...modelFactories,
  };
  // Test hooks, off the public surface: panic(mode) makes Go panic ("sync"
  // in the export, "async" on a goroutine); jsonOnly(on) makes batches carry
  // every message as JSON (no fragment records); memoryBytes() is the size
  // of the Go instance's linear memory (it only grows); calls() counts the
  // queued calls made through floe_call (fast), through js.Func (funcs) and
  // the resumes that ran them, Go's pulls and stops of producers' pumps,
  // and gives the number of live pumps and of batches waiting for a
  // macrotask to pass (ticking), and the reads of go._pendingEvent that
  // quickPendingEvent answered (quickReads); slowCalls(on) makes the queued
  // calls all js.Func calls; dropped() counts the sessions and subagents
  // closed, and the streams abandoned, because they were collected first;
  // timers() gives the pulls and bridge Promises pending (waits), the
  // runtime's timers set and how many of them hold Node's event loop
  // (runtimeTimers); readBatch(s) reads a consumer batch's records as a stream does.
  Object.defineProperty(floe, DEBUG, {
    value: Object.freeze({
      panic: (mode) => call("debugPanic", mode),
      jsonOnly: (on) => {
        jsonOnly = !!on;
      },
      memoryBytes: () => memory().buffer.byteLength,
      calls: () => {
        const { fast, funcs, resumes } = api.fastStats;
        const { pulls, stops } = api.portCalls;
        return { fast, funcs, resumes, pulls, stops, pumps: api.pumps.size, ticking: tickWaiters.size, quickReads: quick?.reads ?? 0 };
      },
      dropped: () => ({ ...dropped }),
      timers: () => {
        const live = [...(go?._scheduledTimeouts?.values() ?? [])];
        return { waits: timers.waits, live: live.length, refd: live.filter((t) => t?.hasRef?.() === true).length };
      },
      readBatch: (s) => {
        const b = new Batch(s);
        const out = [];
        for (let m; (m = b.read()) !== undefined; ) out.push(m);
        return out;
      },
      slowCalls: (on) => {
        api.fastStats.slow = !!on;
      },
    }),
  });
  return floe;
}

// inputArg converts a run or steer input: a string is one user text, an
// array is OmniMessage[].
function inputArg(v, name) {
  if (typeof v === "string") return ["text", v];
  if (isArray(v, name)) return ["json", jsonArg(v, name)];
  throw badArg(name, "a string or an OmniMessage[]", v);
}

// filesArg copies importSession's files into plain {name, text} objects
// (one JSONL string is one file without a name).
function filesArg(files, name) {
  if (typeof files === "string") return [{ name: "", text: files }];
  if (!isArray(files, name)) throw badArg(name, "an array of {name, text} or a JSONL string", files);
  const n = get(files, "length", name);
  if (n === 0) throw badArg(name, "a non-empty array of {name, text} or a JSONL string", files);
  const out = [];
  for (let i = 0; i < n; i++) {
    const at = `${name}[${i}]`;
    const f = get(files, i, at);
    if (!isObject(f)) throw badArg(at, "a {name, text} object", f);
    const fileName = get(f, "name", `${at}.name`);
    const text = get(f, "text", `${at}.text`);
    if (typeof fileName !== "string") throw badArg(`${at}.name`, "a string", fileName);
    if (typeof text !== "string") throw badArg(`${at}.text`, "a string", text);
    out.push({ name: fileName, text });
  }
  return out;
}

// The runs listening to each user signal: one listener on it for them
// all, removed with the last (one each made Node warn of a leak when a
// signal, a Stop button's or a server's shutdown, aborted more than ten
// runs at once).
const linkedSignals = new WeakMap(); // signal → { fires, listener, remove }

// signalArg reads an optional AbortSignal on the JavaScript side and
// returns the shim's stand-in that Go listens to (or undefined): Go never
// touches the user's object. The stand-in's listener on the user's signal
// is removed when Go removes its own (the run ended) or when the call that
// was given it failed (withSignal).
function signalArg(signal, name) {
  if (signal == null) return undefined;
  if (!isObject(signal)) throw badArg(name, "an AbortSignal", signal);
  const aborted = get(signal, "aborted", name + ".aborted");
  const add = get(signal, "addEventListener", name + ".addEventListener");
  const remove = get(signal, "removeEventListener", name + ".removeEventListener");
  if (typeof aborted !== "boolean" || typeof add !== "function" || typeof remove !== "function") {
    throw badArg(name, "an AbortSignal", signal);
  }
  const listeners = new Set();
  let linked = false;
  // Go reads aborted when the run starts, which with Web Locks is after
  // the lock is granted: an abort before then is seen there (a snapshot
  // taken here lost it, and the run went on).
  let isAborted = aborted;
  // The user's reason, which Go hands on to the callbacks' signals.
  let reason;
  const readReason = () => {
    try {
      reason = signal.reason;
    } catch {}
  };
  if (aborted) readReason();
  const fire = () => {
    isAborted = true;
    readReason();
    unlink(); // an abort fires once
    for (const f of [...listeners]) {
      try {
        f();
      } catch {}
    }
  };
  const unlink = () => {
    if (!linked) return;
    linked = false;
    const l = linkedSignals.get(signal);
    if (!l) return; // it fired
    l.fires.delete(fire);
    if (l.fires.size === 0) {
      linkedSignals.delete(signal);
      try {
        l.remove.call(signal, "abort", l.listener);
      } catch {}
    }
  };
  if (!aborted) {
    let l = linkedSignals.get(signal);
    if (!l) {
      const fires = new Set();
      const listener = () => {
        linkedSignals.delete(signal);
        try {
          remove.call(signal, "abort", listener);
        } catch {}
        for (const f of [...fires]) f();
        fires.clear();
      };
      try {
        add.call(signal, "abort", listener);
      } catch (e) {
        throw floeError("bad_argument", `${name}.addEventListener threw: ${errMessage(e)}`);
      }
      l = { fires, listener, remove };
      linkedSignals.set(signal, l);
    }
    l.fires.add(fire);
    linked = true;
  }
  return {
    get aborted() {
      return isAborted;
    },
    get reason() {
      return reason;
    },
    addEventListener(_type, f) {
      listeners.add(f);
    },
    removeEventListener(_type, f) {
      listeners.delete(f);
      if (listeners.size === 0) unlink();
    },
    unlink,
  };
}

// withSignal runs f (a call into Go given the stand-in signal); when it
// throws, the stand-in's listener on the user's signal is removed.
function withSignal(signal, f) {
  try {
    return f();
  } catch (e) {
    signal?.unlink();
    throw e;
  }
}

// ---- session options --------------------------------------------------------------

// The integer keys of config (floe.d.ts SessionConfig) with the range each
// may take: a limit that is ≤ 0 disables it (ENGINE.md §2: maxTurns,
// compaction's maxContextLength and maxSessionTurns); a count of retries or
// a duration is never negative.
const CONFIG_INTS = [
  ["maxTurns", MAX_COUNT, -MAX_COUNT],
  ["maxReconnects", MAX_COUNT],
  ["reconnectBackoffMs", MAX_MS],
  ["reconnectBackoffMaxMs", MAX_MS],
  ["compactionMaxReconnects", MAX_COUNT],
];

// configArg copies the config option into plain data for Go, checking each
// value (a number the engine cannot honour is refused, never clamped).
const CONFIG_KEYS = new Set([...CONFIG_INTS.map(([k]) => k), "compaction"]);
const COMPACTION_KEYS = new Set(["maxContextLength", "maxSessionTurns", "mode", "prompt"]);
const RUN_KEYS = new Set(["approve", "signal", "thinkingLevel"]);
const SUBAGENT_RUN_KEYS = new Set(["approve", "signal"]);
const COMPACT_KEYS = new Set(["signal"]);

function configArg(config, name) {
  if (config == null) return undefined;
  plainObject(config, name);
  knownKeys(config, CONFIG_KEYS, name);
  const out = {};
  for (const [key, max, min] of CONFIG_INTS) {
    const v = get(config, key, `${name}.${key}`);
    if (v != null) out[key] = intArg(v, `${name}.${key}`, max, min);
  }
  const c = get(config, "compaction", `${name}.compaction`);
  if (c != null) {
    const at = `${name}.compaction`;
    plainObject(c, at);
    knownKeys(c, COMPACTION_KEYS, at);
    const comp = {};
    for (const key of ["maxContextLength", "maxSessionTurns"]) {
      const v = get(c, key, `${at}.${key}`);
      if (v != null) comp[key] = intArg(v, `${at}.${key}`, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER);
    }
    const mode = get(c, "mode", `${at}.mode`);
    if (mode !== "summarize" && mode !== "discard") {
      throw floeError("bad_argument", `${at}.mode: want "summarize" or "discard", got ${typeof mode === "string" ? JSON.stringify(mode) : describe(mode)}`);
    }
    comp.mode = mode;
    const prompt = get(c, "prompt", `${at}.prompt`);
    if (prompt != null) {
      if (typeof prompt !== "string") throw badArg(`${at}.prompt`, "a string", prompt);
      comp.prompt = prompt;
    }
    out.compaction = comp;
  }
  return out;
}

// The index of the store in a session spec (sessionSpec), and of the
// diagnostic callback, diag(kind, message).
const SPEC_STORE = 3;
const SPEC_DIAG = 7;

// sessionSpec checks the options, those applyDefaults made (own) in place
// of the user's, and makes the bridge's session spec (jsbridge/config.go
// sessionSpec): an array of the values Go reads, in a fixed order, the
// common ones first; the caller sets the store of createSession
// (SPEC_STORE) and packs it.
function sessionSpec(api, fn, opts, own, needMeta = true) {
  plainObject(opts, `${fn}: options`);
  const opt = (key) => (Object.hasOwn(own, key) ? own[key] : get(opts, key, `${fn}: ${key}`));
  const meta = needMeta ? opt("meta") : undefined;
  if (needMeta) plainObject(meta, `${fn}: meta`, "a session_meta payload object");
  const llm = checkLLM(opt("llm"), `${fn}: llm`);
  const newLLM = opt("newLLM");
  if (newLLM != null && typeof newLLM !== "function" && !isModel(newLLM)) {
    throw badArg(`${fn}: newLLM`, "a function or a model of floe.openai() and the like", newLLM);
  }
  const environment = opt("environment");
  let executeTool;
  if (environment != null) {
    executeTool = isObject(environment) ? get(environment, "executeTool", `${fn}: environment.executeTool`) : undefined;
    if (typeof executeTool !== "function") throw badArg(`${fn}: environment`, "an object with executeTool()", environment);
  }
  const tools = opt("tools");
  if (tools != null && !isArray(tools, `${fn}: tools`)) throw badArg(`${fn}: tools`, "a ToolDefinition[]", tools);
  // The reference's environment lists its own tools; Floe announces the
  // tools option only, so such an environment, its tools not given, would
  // run nothing: the model is told of no tool, without a word.
  if (tools == null && environment != null && typeof get(environment, "listTools", `${fn}: environment.listTools`) === "function") {
    throw floeError("bad_argument", `${fn}: environment.listTools: not called (the tools a session announces are its tools option): give tools: await environment.listTools()`);
  }
  const config = configArg(opt("config"), `${fn}: config`);
  const clock = opt("clock");
  let now, sleep;
  if (clock != null) {
    if (isObject(clock)) {
      now = get(clock, "now", `${fn}: clock.now`);
      sleep = get(clock, "sleep", `${fn}: clock.sleep`);
    }
    if (typeof now !== "function" || typeof sleep !== "function") {
      throw badArg(`${fn}: clock`, "an object with now() and sleep()", clock);
    }
  }
  const trace = opt("trace");
  let write, rotate;
  if (trace != null) {
    if (isObject(trace)) {
      write = get(trace, "write", `${fn}: trace.write`);
      rotate = get(trace, "rotate", `${fn}: trace.rotate`);
    }
    if (typeof write !== "function" || (rotate != null && typeof rotate !== "function")) {
      throw badArg(`${fn}: trace`, "an object with write() (and, optionally, rotate())", trace);
    }
  }
  const onDiagnostic = opt("onDiagnostic");
  if (onDiagnostic != null && typeof onDiagnostic !== "function") {
    throw badArg(`${fn}: onDiagnostic`, "a function", onDiagnostic);
  }
  const abortGraceMs = opt("abortGraceMs");
  if (abortGraceMs != null) intArg(abortGraceMs, `${fn}: abortGraceMs`, MAX_MS);
  const foldInputImages = opt("foldInputImages");
  if (foldInputImages != null && typeof foldInputImages !== "function") {
    throw badArg(`${fn}: foldInputImages`, "a function", foldInputImages);
  }
  const diag = (kind, message) => {
    try {
      (onDiagnostic ?? warnDiagnostic)({ kind, message });
    } catch {}
  };
  return [
    needMeta ? jsonArg(meta, `${fn}: meta`) : undefined,
    llmHost(api, llm),
    environment == null ? undefined : environmentHost(api, environment, executeTool),
    undefined, // SPEC_STORE
    tools == null ? undefined : jsonArg(tools, `${fn}: tools`),
    config,
    newLLM == null ? undefined : isModel(newLLM) ? modelSpec(api, newLLM) : newLLMHost(api, newLLM, `${fn}: newLLM`),
    (kind, message, stack) => {
      try {
        (onDiagnostic ?? warnDiagnostic)(stack ? { kind, message, stack } : { kind, message });
      } catch {}
    },
    clock == null ? undefined : clockHost(api, clock, now, sleep),
    trace == null ? undefined : traceHost(trace, write, rotate, diag),
    foldInputImages == null ? undefined : foldHost(api, foldInputImages),
    abortGraceMs ?? undefined,
  ];
}

// warnDiagnostic reports a diagnostic of a session made without
// onDiagnostic on the console: a Trace write that failed (a full quota, an
// id already stored) lost records without a word.
// A message that starts with its kind ("llm: …", "trace: …") is not
// prefixed with it again.
function warnDiagnostic(d) {
  const text = String(d.message).startsWith(d.kind + ": ") ? d.message : `${d.kind}: ${d.message}`;
  console.warn(`floe: ${text}` + (d.stack ? "\n" + d.stack : ""));
}

// sessionRef splits what createSession, createSubagent and resumeSession
// return, "<handle> <id>" (jsbridge/session.go), into [id, handle].
function sessionRef(ref) {
  const i = ref.indexOf(" ");
  return [ref.slice(i + 1), Number(ref.slice(0, i))];
}

// packed drops the absent values at the end of a spec: Go reads only the
// values the array holds, one call each.
function packed(spec) {
  let n = spec.length;
  while (n > 0 && spec[n - 1] === undefined) n--;
  spec.length = n;
  return spec;
}

// checkLLM reads a model object's methods once: {self, streamGenerate, loadHistory?}.
function checkLLM(llm, name) {
  if (isModel(llm)) return { model: llm };
  const streamGenerate = isObject(llm) ? get(llm, "streamGenerate", `${name}.streamGenerate`) : undefined;
  if (typeof streamGenerate !== "function") {
    throw badArg(name, "an object with streamGenerate() or a model of floe.openai() and the like", llm);
  }
  const loadHistory = get(llm, "loadHistory", `${name}.loadHistory`);
  if (loadHistory != null && typeof loadHistory !== "function") {
    throw badArg(`${name}.loadHistory`, "a function", loadHistory);
  }
  return { self: llm, streamGenerate, loadHistory };
}

// The model: start(pumpID, newMessagesPtr, newMessagesLen, thinkingLevel,
// toolsJSON, systemPrompt) creates the request's pump (the new messages'
// records, readInput, are read from memory during the call). toolsJSON (a
// tool_list_ready message) is parsed once per distinct text; every request
// gets the same frozen array.
function llmHost(api, llm) {
  if (llm.model) return modelSpec(api, llm.model); // a built-in adapter: runs in Go
  let toolsJSON = "";
  let tools = Object.freeze([]);
  const host = {
    start: (id, ptr, n, thinkingLevel, tj, systemPrompt) => {
      const input = api.text(ptr, n);
      if (tj !== toolsJSON) {
        toolsJSON = tj;
        tools = Object.freeze(tj ? JSON.parse(tj).payload.tools : []);
      }
      pump(
        api,
        id,
        "llm.streamGenerate",
        (signal) =>
          llm.streamGenerate.call(
            llm.self,
            callArgs({ newMessages: readInput(input), thinkingLevel: thinkingLevel || undefined, tools, systemPrompt: systemPrompt ?? "" }, signal),
          ),
        plainOutcome,
      );
    },
  };
  if (llm.loadHistory) {
    // Go aborts the returned controller when the run is aborted or the
    // session closed while the history loads.
    host.loadHistory = (wid, json, totals) => {
      const ac = new AbortController();
      settleWith(api, wid, () => llm.loadHistory.call(llm.self, JSON.parse(json), JSON.parse(totals), { signal: ac.signal }), () => undefined);
      return ac;
    };
  }
  return host;
}

// plainOutcome checks the outcome a model returned and copies it into
// plain data for Go. A wrong shape, or a getter that throws, is the request
// failing with that message (ENGINE.md E-1.2, E-1.3). retryAfterMs, the
// wait the model's server asked for, is bounded as the adapters' wait is
// (provider.MaxRetryAfter): a longer one fails the request, permanent,
// naming it.
function plainOutcome(v) {
  if (v === undefined) return undefined; // a generator that ends without return: completed
  const bad = (what, want, got) => new TypeError(`llm.streamGenerate: outcome${what}: want ${want}, got ${describe(got)}`);
  if (!isObject(v) || Array.isArray(v)) throw bad("", "{status, errorMessage?, permanent?, retryAfterMs?}", v);
  const { status, errorMessage, permanent, retryAfterMs } = v;
  for (const k of Object.keys(v)) {
    // A misspelt key (permanet, error) would be lost without a word.
    if (k !== "status" && k !== "errorMessage" && k !== "permanent" && k !== "retryAfterMs") {
      throw new TypeError(`llm.streamGenerate: outcome.${k}: unknown key; known: status, errorMessage, permanent, retryAfterMs`);
    }
  }
  if (typeof status !== "string") throw bad(".status", "a string", status);
  if (errorMessage != null && typeof errorMessage !== "string") throw bad(".errorMessage", "a string", errorMessage);
  if (permanent != null && typeof permanent !== "boolean") throw bad(".permanent", "a boolean", permanent);
  if (retryAfterMs != null && !(typeof retryAfterMs === "number" && retryAfterMs >= 0 && retryAfterMs < Infinity)) {
    const got = typeof retryAfterMs === "number" ? String(retryAfterMs) : describe(retryAfterMs);
    throw new TypeError(`llm.streamGenerate: outcome.retryAfterMs: want a number of milliseconds, 0 or more, got ${got}`);
  }
  // A plain completion means what undefined means, and undefined is an end
  // value the batch's fast call carries (api.send).
  if (status === "completed" && !errorMessage && !permanent) return undefined;
  const wait = retryAfterMs == null ? undefined : Math.ceil(retryAfterMs);
  if (wait > MAX_RETRY_AFTER_MS && (status === "timeout" || status === "malformed" || (status === "failed" && !permanent))) {
    const why = `the model asks for a wait of ${Math.ceil(wait / 1000)} s before another request, longer than a retry waits (at most ${MAX_RETRY_AFTER_MS / 1000} s)`;
    return { status: "failed", errorMessage: errorMessage ? `${errorMessage}: ${why}` : why, permanent: true };
  }
  return { status, errorMessage: errorMessage ?? undefined, permanent: permanent ?? undefined, retryAfterMs: wait };
}

// The longest wait a model's outcome may ask of a retry (Go's
// provider.MaxRetryAfter).
const MAX_RETRY_AFTER_MS = 120_000;

// newLLM(tokensJSON) → a model host. When newLLM throws or returns no
// model, the host fails every request of the context with that error,
// permanently: the same context would fail every retry again, so the run
// stops at once instead of waiting through the backoff ladder (about a
// minute at the defaults) at every run.
function newLLMHost(api, newLLM, name) {
  return (tokensJSON) => {
    let llm;
    try {
      llm = checkLLM(newLLM(JSON.parse(tokensJSON)), `${name}() result`);
    } catch (e) {
      const outcome = { status: "failed", errorMessage: `newLLM: ${errMessage(e)}`, permanent: true };
      llm = { streamGenerate: async function* () { return outcome; } };
    }
    return llmHost(api, llm);
  };
}

// The tools: start(pumpID, toolCallPtr, toolCallLen, hasApprover) creates
// the execution's pump (the tool call's records, readCall, are read from
// memory during the call).
function environmentHost(api, env, executeTool) {
  const done = () => undefined; // a tool's return value means nothing
  const args = (toolCall, approve, signal) => callArgs({ toolCall, approve }, signal);
  return {
    start(id, ptr, n, hasApprover) {
      const call = api.text(ptr, n);
      let approve;
      if (hasApprover) {
        let over = false;
        approve = (toolCall) => {
          if (over) return Promise.reject(floeError("closed", "approve: the tool execution has ended"));
          if (!isObject(toolCall)) return Promise.reject(badArg("approve: toolCall", "an OmniMessage", toolCall));
          let r;
          try {
            r = api.approve(id, jsonArg(toolCall, "approve: toolCall"));
          } catch (e) {
            return Promise.reject(e);
          }
          return r instanceof Error ? Promise.reject(r) : r;
        };
        approve[TOOL_APPROVE] = id;
        const start = (signal) => executeTool.call(env, args(readCall(call), approve, signal));
        pump(api, id, "environment.executeTool", start, done, () => (over = true));
        return;
      }
      pump(api, id, "environment.executeTool", (signal) => executeTool.call(env, args(readCall(call), undefined, signal)), done);
    },
  };
}

// The image fold of a model without vision: (waiterID, messagesJSON),
// settled with the JSON of the OmniMessage[] it returns.
function foldHost(api, fold) {
  return (wid, json) =>
    settleWith(api, wid, () => fold(JSON.parse(json)), (out) => {
      if (!isArray(out, "foldInputImages result")) throw new TypeError(`returned ${describe(out)}, want an OmniMessage[]`);
      return jsonArg(out, "foldInputImages result");
    });
}

// The run's approver: (waiterID, toolCallPtr, toolCallLen), the tool
// call's records (readCall) read from memory during the call, settled
// through api.settle with the decision string, or as failed (the engine
// denies, E-5.4). A decision returned at once, a string rather than a
// Promise (a policy rather than a prompt), is the call's own result: Go
// then waits for no settle (jsbridge/await.go).
function approverHost(api, approve) {
  const plain = (v) => {
    if (typeof v !== "string") throw new TypeError(`resolved to ${describe(v)}, want "allow", "deny" or "forbidden"`);
    return v;
  };
  return (wid, ptr, n) => {
    const call = api.text(ptr, n);
    let v;
    try {
      v = approve(readCall(call));
    } catch (e) {
      api.settleText(wid, false, errMessage(e));
      return undefined;
    }
    if (typeof v === "string") return v;
    settleWith(api, wid, () => v, plain);
    return undefined;
  };
}

// settleWith calls f and settles the Go waiter wid with plain(its awaited
// result) — plain data only — or with the message of its error (also of an
// error plain throws).
function settleWith(api, wid, f, plain) {
  const fail = (e) => api.settleText(wid, false, errMessage(e));
  let p;
  try {
    p = Promise.resolve(f());
  } catch (e) {
    fail(e);
    return;
  }
  p.then((v) => {
    let out;
    try {
      out = plain(v);
    } catch (e) {
      fail(e);
      return;
    }
    api.settleText(wid, true, out);
  }, fail);
}

function clockHost(api, clock, now, sleep) {
  return {
    now() {
      try {
        const v = now.call(clock);
        // Go's time holds the years 1678 to 2262 (±2^63 ns).
        if (typeof v === "number" && Math.abs(v) <= 9223372036854) return v;
        const what = typeof v === "number" ? String(v) : describe(v);
        return `clock.now: returned ${what}, want a number of milliseconds since 1970 (a time of the years 1678 to 2262)`;
      } catch (e) {
        return `clock.now: ${errMessage(e)}`;
      }
    },
    sleep(wid, ms) {
      const ac = new AbortController();
      settleWith(api, wid, () => sleep.call(clock, ms, ac.signal), (v) => {
        if (v != null && typeof v !== "boolean") throw new TypeError(`resolved ${describe(v)}, want true or undefined (slept) or false (aborted first); taken as slept`);
        return v !== false;
      });
      return ac;
    },
  };
}

function traceHost(trace, write, rotate, diag) {
  const sink = (f, what) => {
    try {
      const r = f();
      if (isObject(r) && typeof r.then === "function") {
        r.then(undefined, (e) => diag("trace", `${what}: ${errMessage(e)}`));
      }
      return undefined;
    } catch (e) {
      return `${what}: ${errMessage(e)}`;
    }
  };
  return {
    write: (json) => sink(() => write.call(trace, JSON.parse(json)), "trace.write"),
    rotate: () => sink(() => rotate?.call(trace), "trace.rotate"),
  };
}

// ---- producers: user async iterators → batches for Go ----------------------------

// asIterator returns the async (or sync) iterator of what a callback
// returned, awaiting a Promise first.
async function asIterator(v, what) {
  if (isObject(v) && typeof v.then === "function" && typeof v.next !== "function") v = await v;
  if (!isObject(v) && typeof v !== "function") throw new TypeError(`${what} returned ${describe(v)}, want an async iterator`);
  const it = asyncIterableOf(v);
  if (it) return it[Symbol.asyncIterator]();
  if (typeof v.next === "function") return v;
  if (typeof v[Symbol.iterator] === "function") return v[Symbol.iterator]();
  // Two slips name themselves: a fetch's Response returned rather than
  // messages read from its body, and a generator function returned (or
  // passed through) rather than called. Both said "an object".
  let hint = "";
  if (typeof v === "function") hint = ": call it (an async generator function's call returns its iterator)";
  else if (typeof Response === "function" && v instanceof Response) hint = ": read its body and yield OmniMessages (readEvents, readLines)";
  throw new TypeError(`${what} returned ${describe(v)}, which is not an async iterator${hint}`);
}

// Batches cross the boundary as records in UTF-8 (jsbridge/records.go): a
// streamed fragment, or a complete text, thinking, tool_call or
// tool_call_output, and a token_usage event, with exactly the standard keys
// travels without JSON, any other message as "J" + its JSON. Every string
// is "<length>:<text>". A producer's records are written as bytes
// (RecordBytes); a consumer's batch is one string, read a message at a
// time (Batch).

// Test hook (jsonOnly): no fragment records in either direction.
let jsonOnly = false;

// What fragmentRecord last accepted, for RecordBytes.fragment: the
// message's timestamp ("" when it had none; the pump writes it as a "t"
// record when it changes), the record's kind, event and role codes and its
// strings (id and name "" when the kind has none; usage: the U record's
// text after its tag).
let fragTs = "";
let recKind = 0;
let recEvent = 0;
let recRole = 0;
let recBody = "";
let recID = "";
let recName = "";
let recStop = "";

// stopCode returns the one-byte code of a stop_reason in a record ("-"
// for none, the initial of a standard status, h for auth), or 0 for any
// other string, which the record then carries as a string (a digit starts
// it: "<n>:<text>").
function stopCode(s) {
  switch (s) {
    case "completed":
      return 99;
    case "":
      return 45;
    case "failed":
      return 102;
    case "aborted":
      return 97;
    case "timeout":
      return 116;
    case "malformed":
      return 109;
    case "auth":
      return 104;
  }
  return 0;
}

// fragmentRecord returns the record kind (a character code) of a partial_*
// message, or of a complete text, thinking, tool_call or tool_call_output
// (event "c": no event_type), that is a plain object with exactly the
// standard keys (and, optionally, a string timestamp), string values, a
// standard role and event, and neither an empty stop_reason nor an empty
// tool_call_id nor a tool_call's empty name, or of a token_usage event
// (usageRecord); else 0 (the message goes as JSON). What it accepted is in
// fragTs and the rec* variables. Go decodes such a record to a message
// that encodes and validates as the one its JSON decodes to.
function fragmentRecord(v) {
  if (Object.getPrototypeOf(v) !== Object.prototype) return 0;
  let keys = 0; // JSON.stringify writes enumerable own keys only: so do we
  let ts = "";
  for (const k in v) {
    if (k === "timestamp") {
      const t = v.timestamp;
      if (typeof t !== "string") return 0;
      ts = t;
      continue;
    }
    if (k !== "type" && k !== "payload") return 0;
    keys++;
  }
  if (keys !== 2) return 0;
  const p = v.payload;
  if (!isObject(p) || Object.getPrototypeOf(p) !== Object.prototype) return 0;
  if (v.type === "event_msg") {
    const r = usageRecord(p);
    if (r === null) return 0;
    fragTs = ts;
    recBody = r;
    return (recKind = 85); // U
  }
  if (v.type !== "model_msg") return 0;
  let type, body, bodyKey;
  let role = 0;
  let ev = 99; // c: no event_type, a complete message
  let id = "";
  let name = "";
  let hasID = false;
  let hasName = false;
  let stop = "";
  for (const k in p) {
    const x = p[k];
    if (typeof x !== "string") return 0;
    switch (k) {
      case "type":
        type = x;
        break;
      case "role":
        role = x === "assistant" ? 97 : x === "user" ? 117 : -1;
        break;
      case "event_type":
        ev = x === "delta" ? 100 : x === "start" ? 115 : x === "stop" ? 120 : -1;
        break;
      case "text":
      case "thinking":
      case "arguments":
      case "output":
        if (bodyKey !== undefined) return 0;
        bodyKey = k;
        body = x;
        break;
      case "tool_call_id":
        id = x;
        hasID = true;
        break;
      case "name":
        name = x;
        hasName = true;
        break;
      case "stop_reason":
        if (x === "") return 0;
        stop = x;
        break;
      default:
        return 0;
    }
  }
  if (role <= 0 || ev < 0 || body === undefined) return 0;
  // A complete type with an event_type, or a partial one without, goes as
  // JSON.
  const complete = ev === 99;
  let kind;
  switch (type) {
    case "partial_text":
    case "text":
      if (complete !== (type === "text") || bodyKey !== "text" || hasID || hasName) return 0;
      kind = 84; // T
      break;
    case "partial_thinking":
    case "thinking":
      if (complete !== (type === "thinking") || bodyKey !== "thinking" || hasID || hasName) return 0;
      kind = 75; // K
      break;
    case "partial_tool_call": // an empty tool_call_id (or tool_call name) is checked as absent: as JSON
    case "tool_call":
      if (complete !== (type === "tool_call") || bodyKey !== "arguments" || !id || !hasName || (complete && !name)) return 0;
      kind = 67; // C
      break;
    case "partial_tool_call_output":
    case "tool_call_output":
      if (complete !== (type === "tool_call_output") || bodyKey !== "output" || !id || hasName) return 0;
      kind = 79; // O
      break;
    default:
      return 0;
  }
  fragTs = ts;
  recEvent = ev;
  recRole = role;
  recBody = body;
  recID = id;
  recName = name;
  recStop = stop;
  return (recKind = kind);
}

// usageRecord returns the U record (after its tag) of a token_usage
// payload with exactly its keys, session and request plain objects with
// exactly the four counts, each a non-negative safe integer; else null.
function usageRecord(p) {
  let keys = 0;
  for (const k in p) {
    if (k !== "type" && k !== "session" && k !== "request") return null;
    keys++;
  }
  if (keys !== 3 || p.type !== "token_usage") return null;
  const s = counts(p.session);
  if (s === null) return null;
  const r = counts(p.request);
  return r === null ? null : s + "," + r + ";";
}

// counts returns the four counts of a U record's half ("n,n,n,n"), or null.
function counts(c) {
  if (!isObject(c) || Object.getPrototypeOf(c) !== Object.prototype) return null;
  let keys = 0;
  for (const k in c) {
    if (k !== "cache_read" && k !== "cache_write" && k !== "output" && k !== "total") return null;
    keys++;
  }
  if (keys !== 4) return null;
  const { cache_read, cache_write, output, total } = c;
  if (!count(cache_read) || !count(cache_write) || !count(output) || !count(total)) return null;
  return cache_read + "," + cache_write + "," + output + "," + total;
}

const count = (n) => Number.isSafeInteger(n) && n >= 0;

const utf8Enc = new TextEncoder();
const utf8Dec = new TextDecoder("utf-8", { ignoreBOM: true }); // a leading U+FEFF is text

// Buffers for RecordBytes, kept for the next batch: most producers (a
// tool's execution, a short request) fill one small batch, and a new
// ArrayBuffer each time costs more than the batch.
const recordPool = [];

// releaseRecords gives the buffer of a batch taken (RecordBytes.take) back
// to the pool, once its bytes were copied to Go.
function releaseRecords(b) {
  const n = b.buffer.byteLength;
  if (n >= 4096 && n <= 1 << 16 && recordPool.length < 16) recordPool.push(new Uint8Array(b.buffer));
}

const noRecords = new Uint8Array(0);

// RecordBytes is the batch a producer's pump fills: its records written as
// UTF-8 as each message comes, so that the batch's messages waiting for Go
// are bytes outside V8's heap, not strings that outlive its
// young-generation collections (which then grow it: W2's peak RSS).
class RecordBytes {
  constructor() {
    this.b = null; // from the pool when the first record is written
    this.n = 0; // bytes written
    this.count = 0; // messages written
  }

  // room makes room for k more bytes.
  room(k) {
    if (this.b === null) this.b = recordPool.pop() ?? new Uint8Array(4096);
    if (this.n + k <= this.b.length) return;
    let c = this.b.length * 2;
    while (c < this.n + k) c *= 2;
    const b = new Uint8Array(c);
    b.set(this.b.subarray(0, this.n));
    this.b = b;
  }

  // str writes "<n>:<s>", n counting UTF-16 units: a short ASCII string
  // byte by byte, any other through TextEncoder (a long one encoded first,
  // so that the buffer grows by its size rather than three bytes a unit).
  str(s) {
    const len = s.length;
    const long = len > 1 << 16 ? utf8Enc.encode(s) : null;
    this.room((long ? long.length : len * 3) + 17);
    const b = this.b;
    let n = this.n;
    if (len < 10) b[n++] = 48 + len;
    else {
      const d = String(len);
      for (let i = 0; i < d.length; i++) b[n++] = d.charCodeAt(i);
    }
    b[n++] = 58; // :
    if (long) {
      b.set(long, n);
      this.n = n + long.length;
      return;
    }
    if (len <= 64) {
      let i = 0;
      for (; i < len; i++) {
        const c = s.charCodeAt(i);
        if (c >= 128) break;
        b[n + i] = c;
      }
      if (i === len) {
        this.n = n + len;
        return;
      }
    }
    this.n = n + utf8Enc.encodeInto(s, b.subarray(n)).written;
  }

  // ascii writes s, which is ASCII, as it is.
  ascii(s) {
    this.room(s.length);
    const b = this.b;
    const n = this.n;
    for (let i = 0; i < s.length; i++) b[n + i] = s.charCodeAt(i);
    this.n = n + s.length;
  }

  // fragment writes the record fragmentRecord last accepted.
  fragment() {
    this.count++;
    if (recKind === 85) {
      this.ascii("U");
      this.ascii(recBody);
      return;
    }
    this.room(3);
    const b = this.b;
    b[this.n] = recKind;
    b[this.n + 1] = recEvent;
    b[this.n + 2] = recRole;
    this.n += 3;
    this.str(recBody);
    if (recKind === 67 /* C */) {
      this.str(recID);
      this.str(recName);
    } else if (recKind === 79 /* O */) this.str(recID);
    const c = stopCode(recStop);
    if (c === 0) this.str(recStop);
    else {
      this.room(1);
      this.b[this.n++] = c;
    }
  }

  // record writes a record of kind k (a character code) with one string.
  record(k, s) {
    this.room(1);
    this.b[this.n++] = k;
    this.str(s);
  }

  // take returns the bytes written (in a buffer that is now the caller's,
  // to be given back with releaseRecords) and empties the batch.
  take() {
    const out = this.b === null ? noRecords : this.b.subarray(0, this.n);
    this.b = null;
    this.n = 0;
    this.count = 0;
    return out;
  }
}

const usageCounts = new Float64Array(8); // Batch.counts's

// Batch reads a consumer batch of records (the same kinds, the complete
// messages included) one message at a time, as JSON.parse would give it
// (keys in the protocol's order). A stream keeps the batch's string and
// makes each message when next() asks for it, so the messages not yet
// read are one compact string rather than live objects (fewer survivors of
// V8's young-generation collections, which otherwise grow it).
class Batch {
  constructor(s) {
    this.s = s;
    this.i = 0;
    this.ts = "";
  }

  // str reads "<n>:<text>".
  str() {
    const s = this.s;
    let i = this.i;
    let n = 0;
    for (;;) {
      const c = s.charCodeAt(i++);
      if (c === 58) break;
      if (!(c >= 48 && c <= 57)) throw floeError("internal", "pull: a malformed batch");
      n = n * 10 + c - 48;
    }
    this.i = i + n;
    return s.slice(i, i + n);
  }

  // stop reads a record's stop_reason: its code (see stopCode) or a string.
  stop() {
    switch (this.s.charCodeAt(this.i++)) {
      case 99:
        return "completed";
      case 45:
        return "";
      case 102:
        return "failed";
      case 97:
        return "aborted";
      case 116:
        return "timeout";
      case 109:
        return "malformed";
      case 104:
        return "auth";
    }
    this.i--;
    return this.str();
  }

  // counts reads a U record's eight counts, "n,n,n,n,n,n,n,n;", digit by
  // digit (each a safe integer, which a double holds exactly) into one
  // reused array: splitting the record and mapping Number over the parts
  // was a quarter of reading the requests shape's messages.
  counts() {
    const s = this.s;
    const n = usageCounts;
    let i = this.i;
    for (let j = 0; j < 8; j++) {
      let v = 0;
      const from = i;
      let c = s.charCodeAt(i++);
      while (c >= 48 && c <= 57) {
        v = v * 10 + (c - 48); // v * 10 + c could pass 2 ** 53
        c = s.charCodeAt(i++);
      }
      if (i - from === 1 || c !== (j === 7 ? 59 /* ; */ : 44) /* , */) throw floeError("internal", "pull: a malformed batch");
      n[j] = v;
    }
    this.i = i;
    return n;
  }

  // event reads an E record's payload (after its tag): request_begin,
  // request_end with its status, or approval_decision.
  event() {
    const s = this.s;
    switch (s.charCodeAt(this.i++)) {
      case 98 /* b */:
        return { type: "request_begin" };
      case 101 /* e */:
        return { type: "request_end", status: this.stop() };
      case 97 /* a */: {
        const d = s.charCodeAt(this.i++);
        const decision = d === 97 ? "allow" : d === 100 ? "deny" : d === 102 ? "forbidden" : "";
        if (decision === "") break;
        return { type: "approval_decision", decision, tool_call_id: this.str() };
      }
    }
    throw floeError("internal", "pull: a malformed batch");
  }

  // read returns the next message, or undefined at the batch's end.
  read() {
    const s = this.s;
    for (;;) {
      if (this.i >= s.length) return undefined;
      const k = s.charCodeAt(this.i++);
      if (k === 74 /* J */) return JSON.parse(this.str());
      if (k === 116 /* t */) {
        this.ts = this.str();
        continue;
      }
      if (k === 82 /* R: the rest */) {
        const v = JSON.parse(s.slice(this.i));
        this.i = s.length;
        return v;
      }
      const ts = this.ts;
      if (k === 69 /* E: the engine's own events */) {
        const payload = this.event();
        return ts === "" ? { type: "event_msg", payload } : { timestamp: ts, type: "event_msg", payload };
      }
      if (k === 85 /* U */) {
        const n = this.counts();
        const session = { cache_read: n[0], cache_write: n[1], output: n[2], total: n[3] };
        const payload = { type: "token_usage", session, request: { cache_read: n[4], cache_write: n[5], output: n[6], total: n[7] } };
        return ts === "" ? { type: "event_msg", payload } : { timestamp: ts, type: "event_msg", payload };
      }
      const e = s.charCodeAt(this.i++);
      const event_type = e === 100 ? "delta" : e === 115 ? "start" : "stop";
      const role = s.charCodeAt(this.i++) === 97 ? "assistant" : "user";
      const body = this.str();
      const tool_call_id = k === 67 /* C */ || k === 79 /* O */ ? this.str() : "";
      const name = k === 67 ? this.str() : "";
      // Each payload is one literal with its stop_reason, or one without:
      // a stop_reason set after the literal was made took a property
      // array of its own (40 bytes a message in V8's heap) and a map
      // transition.
      const stop = this.stop();
      const c = e === 99; /* c: a complete message, without event_type */
      let payload;
      switch (k) {
        case 84 /* T */:
          if (c) payload = stop === "" ? { type: "text", role, text: body } : { type: "text", role, text: body, stop_reason: stop };
          else
            payload =
              stop === ""
                ? { type: "partial_text", role, event_type, text: body }
                : { type: "partial_text", role, event_type, text: body, stop_reason: stop };
          break;
        case 75 /* K */:
          if (c) payload = stop === "" ? { type: "thinking", role, thinking: body } : { type: "thinking", role, thinking: body, stop_reason: stop };
          else
            payload =
              stop === ""
                ? { type: "partial_thinking", role, event_type, thinking: body }
                : { type: "partial_thinking", role, event_type, thinking: body, stop_reason: stop };
          break;
        case 67 /* C */:
          if (c)
            payload =
              stop === ""
                ? { type: "tool_call", role, name, arguments: body, tool_call_id }
                : { type: "tool_call", role, name, arguments: body, tool_call_id, stop_reason: stop };
          else
            payload =
              stop === ""
                ? { type: "partial_tool_call", role, event_type, name, arguments: body, tool_call_id }
                : { type: "partial_tool_call", role, event_type, name, arguments: body, tool_call_id, stop_reason: stop };
          break;
        case 79 /* O */:
          if (c)
            payload =
              stop === ""
                ? { type: "tool_call_output", role, output: body, tool_call_id }
                : { type: "tool_call_output", role, output: body, tool_call_id, stop_reason: stop };
          else
            payload =
              stop === ""
                ? { type: "partial_tool_call_output", role, event_type, output: body, tool_call_id }
                : { type: "partial_tool_call_output", role, event_type, output: body, tool_call_id, stop_reason: stop };
          break;
        default:
          throw floeError("internal", "pull: a malformed batch");
      }
      return ts === "" ? { type: "model_msg", payload } : { timestamp: ts, type: "model_msg", payload };
    }
  }
}

// readCall reads a tool call that Go wrote as records for the approver
// and the tool (jsbridge/messages.go, appendCall): a C record, or J or R
// for a call the records do not carry. The object is the one JSON.parse
// gives the call's JSON, made for less.
function readCall(s) {
  return new Batch(s).read();
}

// readInput reads a request's new messages, which Go wrote as records, or
// as a JSON array when one of them could not be a record but at the end
// (jsbridge/messages.go, appendInput).
function readInput(s) {
  if (s.charCodeAt(0) === 91 /* [ */) return JSON.parse(s);
  const b = new Batch(s);
  const out = [];
  for (let m; (m = b.read()) !== undefined; ) out.push(m);
  return out;
}

// PumpTable maps pump ids to the live pumps: a Map, made anew whenever it
// empties. A long-lived Map kept the pumps it had held alive through V8's
// young-generation collections long after their delete, and promoted them
// (1.2 MB a collection on a turn of 16 tool calls); a plain object, made
// anew the same way, kept nothing but cost about 1 µs a pump: the ids
// only grow, and an object keyed by a large index keeps its entries in a
// dictionary.
class PumpTable {
  #m = new Map();
  get size() {
    return this.#m.size;
  }
  get(id) {
    return this.#m.get(id);
  }
  set(id, p) {
    this.#m.set(id, p);
  }
  delete(id) {
    if (this.#m.delete(id) && this.#m.size === 0) this.#m = new Map();
  }
}

// callArgs adds to o, the argument of a model's or tool's callback, its
// signal: an accessor that makes the AbortSignal when first read (most
// scripted callbacks never do). The accessor is one function for every
// argument, not a getter written in each object literal: with a getter per
// object, V8's young-generation collections kept each callback's state
// alive and promoted it (measured on the tools shape, --trace-gc-nvp).
const SIGNAL = Symbol("floe.signal");
const signalAccessor = {
  get() {
    return this[SIGNAL]();
  },
  enumerable: true,
  configurable: true,
};
function callArgs(o, signal) {
  Object.defineProperty(o, SIGNAL, { value: signal });
  return Object.defineProperty(o, "signal", signalAccessor);
}

const isHighSurrogate = (c) => c >= 0xd800 && c <= 0xdbff;

// pump drains the iterator that start(signal) returns and answers Go's
// pulls with batches of records through api.send(id, batch, end, value);
// done(returnValue) gives the plain data Go gets as the end value (it may
// throw: the callback then failed with that message); onStop, if given,
// runs when the pump stops.
function pump(api, id, what, start, done, onStop) {
  // The AbortSignal is made when the callback first reads it: most scripted
  // callbacks never do.
  // Its reason is the run's signal's when that abort is what ended the
  // call (Go passes it on), else an AbortError.
  let ac = null;
  let aborted = false;
  let why;
  const signal = () => {
    if (!ac) {
      ac = new AbortController();
      if (aborted) ac.abort(why);
    }
    return ac.signal;
  };
  const abort = (reason) => {
    if (aborted) return;
    aborted = true;
    why = reason;
    ac?.abort(reason);
  };
  const buf = new RecordBytes(); // the records of the batch being filled
  let bufTs = ""; // the timestamp Go gives the batch's next fragment record
  let end = null; // [code, value] once the iterator ended
  let want = true; // Go waits for a batch (for the first one from the start)
  let tick = false; // a macrotask passed since the batch's first message
  let ticking = false; // the batch waits for that macrotask (waitTick)
  const onTick = () => {
    if (ticking) {
      tick = true;
      check();
    }
  };
  let stopped = false;
  let it = null;
  let space = null; // resolves the reader paused on a full batch

  const finish = (code, value) => {
    if (!end) {
      if (held !== null) flushPairs();
      end = [code, value];
    }
    check();
  };
  const deliver = () => {
    want = false;
    const records = buf.take();
    bufTs = "";
    tick = false;
    if (ticking) {
      ticking = false;
      tickWaiters.delete(onTick);
    }
    if (space) {
      const s = space;
      space = null;
      s();
    }
    if (!end) {
      api.send(id, records, END_MORE, undefined);
      return;
    }
    // The producer's end: Go forgets the pump when it reads it and does
    // not stop it, so the pump stops itself (jsbridge/pump.go).
    api.send(id, records, end[0], end[1]);
    if (api.pumps.get(id) === p) api.pumps.delete(id);
    p.stop();
  };
  const check = () => {
    if (want && !stopped && (end || buf.count >= BATCH_CAP || (buf.count > 0 && tick))) deliver();
  };
  // held: per fragment, the first half of a surrogate pair its last delta
  // ended with (a delta sliced out of a string by UTF-16 units can split an
  // emoji), which the next delta of that fragment starts with: a half alone
  // would cross to Go as U+FFFD, and the deltas would no longer join to the
  // complete message (malformed) nor to what the producer sent.
  let held = null; // Map: fragment key → the delta message to send it in
  const holdPair = (key, type, bodyKey, body, p) => {
    const h = held?.get(key);
    if (h !== undefined) {
      held.delete(key);
      if (held.size === 0) held = null;
      body = h.payload[bodyKey] + body;
    }
    const last = body.charCodeAt(body.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      const payload = { type, role: p.role, event_type: "delta", [bodyKey]: body.slice(-1) };
      if (p.tool_call_id !== undefined) payload.tool_call_id = p.tool_call_id;
      if (type === "partial_tool_call") payload.name = p.name;
      (held ??= new Map()).set(key, { type: "model_msg", payload });
      body = body.slice(0, -1);
    }
    return body;
  };
  // flushPairs sends the held half of fragment key (every fragment's when
  // key is undefined) as a delta of its own: the pair's second half did not
  // come (it crosses as U+FFFD, as any lone half does).
  const flushPairs = (key) => {
    for (const [k, m] of held) {
      if (key !== undefined && k !== key) continue;
      held.delete(k);
      buf.record(74 /* J */, JSON.stringify(m));
      buf.count++;
    }
    if (held.size === 0) held = null;
  };
  // pairs applies held to the record fragmentRecord accepted.
  const pairs = () => {
    const type = recKind === 84 ? "partial_text" : recKind === 75 ? "partial_thinking" : recKind === 67 ? "partial_tool_call" : "partial_tool_call_output";
    const key = type + "\n" + recID;
    if (recEvent !== 100) {
      if (held?.has(key)) flushPairs(key);
      return;
    }
    const bodyKey = recKind === 84 ? "text" : recKind === 75 ? "thinking" : recKind === 67 ? "arguments" : "output";
    recBody = holdPair(key, type, bodyKey, recBody, { role: recRole === 97 ? "assistant" : "user", tool_call_id: recKind === 67 || recKind === 79 ? recID : undefined, name: recName });
  };
  // pairsJSON does the same for a message that goes as JSON, returning it,
  // or a copy with the delta's body changed. As with records, a held half
  // goes only before its own fragment's next message: sent before another
  // message (a usage event, another call's complete tool_call), the pair
  // crossed as two U+FFFD, or a delta came after another call's stop.
  const pairsJSON = (v) => {
    const p = v.payload;
    if (v.type !== "model_msg" || !isObject(p)) return v;
    const t = p.type;
    const type = t === "partial_text" || t === "text" ? "partial_text" : t === "partial_thinking" || t === "thinking" ? "partial_thinking" : t === "partial_tool_call" || t === "tool_call" ? "partial_tool_call" : t === "partial_tool_call_output" || t === "tool_call_output" ? "partial_tool_call_output" : "";
    if (type === "") return v;
    const bodyKey = type === "partial_text" ? "text" : type === "partial_thinking" ? "thinking" : type === "partial_tool_call" ? "arguments" : "output";
    const key = type + "\n" + (typeof p.tool_call_id === "string" ? p.tool_call_id : "");
    if (t !== type || p.event_type !== "delta" || typeof p[bodyKey] !== "string") {
      if (held?.has(key)) flushPairs(key);
      return v;
    }
    const body = holdPair(key, type, bodyKey, p[bodyKey], p);
    return body === p[bodyKey] ? v : { ...v, payload: { ...p, [bodyKey]: body } };
  };
  const push = (v) => {
    let kind;
    try {
      if (!isObject(v) || Array.isArray(v)) {
        finish(END_BAD, `yielded ${describe(v)}, want an OmniMessage object`);
        return false;
      }
      kind = jsonOnly ? 0 : fragmentRecord(v);
      if (kind === 0) v = pairsJSON(v);
      else if (kind !== 85 && (held !== null || (recEvent === 100 && isHighSurrogate(recBody.charCodeAt(recBody.length - 1))))) pairs();
    } catch (e) {
      finish(END_BAD, `yielded a message that cannot be read: ${errMessage(e)}`);
      return false;
    }
    if (kind === 0) {
      let s;
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
      buf.record(74 /* J */, s);
      buf.count++;
    } else {
      if (fragTs !== bufTs) {
        bufTs = fragTs;
        buf.record(116 /* t */, fragTs);
      }
      buf.fragment();
    }
    if (!ticking) {
      // The batch's first message (after a t record, perhaps): deliver it
      // within a macrotask even if no more come.
      ticking = true;
      waitTick(onTick);
    }
    check();
    return true;
  };
  // The iterator is drained by then() with the pump's own two callbacks,
  // not an await in a loop: the await allocated about 200 bytes a message
  // in V8's heap (a sixth of all a W2 run allocated there), the then()
  // about 100. Whatever the callbacks throw ends the producer, as the
  // loop's catch did.
  const threw = (e) => {
    if (!stopped) finish(END_THREW, errMessage(e));
  };
  const onResult = (r) => {
    if (stopped) return;
    try {
      if (!isObject(r)) {
        finish(END_THREW, `${what}: iterator.next() resolved to ${describe(r)}, want {done, value}`);
        return;
      }
      if (r.done) {
        finish(END_DONE, done(r.value));
        return;
      }
      if (!push(r.value)) {
        stopIterator();
        return;
      }
      step();
    } catch (e) {
      threw(e);
    }
  };
  // step asks the iterator for its next result, or waits for room in a
  // full batch first.
  const step = () => {
    if (stopped) return;
    if (buf.count >= BATCH_CAP) {
      new Promise((resolve) => {
        space = resolve;
      }).then(step);
      return;
    }
    try {
      Promise.resolve(it.next()).then(onResult, threw);
    } catch (e) {
      threw(e);
    }
  };
  const read = async () => {
    try {
      it = await asIterator(start(signal), what);
    } catch (e) {
      threw(e);
      return;
    }
    // Stopped while the callback's Promise was pending (it ignored its
    // signal): the iterator is closed all the same, so a fetch body's
    // stream is cancelled rather than left open.
    if (stopped) stopIterator();
    else step();
  };
  const stopIterator = () => {
    try {
      if (it && typeof it.return === "function") Promise.resolve(it.return()).catch(() => {});
    } catch {}
  };
  const p = {
    pull() {
      want = true;
      check();
    },
    abort,
    stop() {
      if (stopped) return;
      stopped = true;
      if (ticking) tickWaiters.delete(onTick);
      onStop?.();
      if (space) space();
      if (!end) {
        abort();
        stopIterator();
      }
    },
  };
  api.pumps.set(id, p);
  read();
  return p;
}

// ---- the consumer: Go batches → an async iterator ---------------------------------

// weakly returns a function that returns v while it lives (a WeakRef's
// deref; where there is no WeakRef, v itself). No closure here may refer
// to v: closures of one scope share it.
function weakly(v) {
  if (typeof WeakRef !== "function") return strongly(v);
  const r = new WeakRef(v);
  return r.deref.bind(r);
}

function strongly(v) {
  return () => v;
}

// registry is a FinalizationRegistry calling f with the held value of each
// collected target; where there is none, nothing is ever called.
function registry(f) {
  if (typeof FinalizationRegistry === "function") return new FinalizationRegistry(f);
  return { register() {}, unregister() {} };
}

// A stream dropped before its end, with no pull pending (a pending pull is
// a promise someone may await, and keeps it): once it is collected, its run
// is abandoned as return() would (E-3.3a), so the run ends and its session
// takes the next one.
const droppedStreams = registry(([api, id, ended]) => {
  api.dropped.streams++;
  let p;
  try {
    p = api.closeStream(id);
    if (typeof p?.catch === "function") p.catch(() => {});
  } catch {}
  endedAfter(p, ended);
});

// endedAfter calls a stream's ended callback, if any, once p, what
// closeStream answered, has settled: the abandoned run has then ended in
// Go and its records are stored.
function endedAfter(p, ended) {
  if (ended) Promise.resolve(p).then(() => callEnded(ended), () => callEnded(ended));
}

const callEnded = (ended) => {
  try {
    ended();
  } catch {}
};

// A run whose callbacks answer at once (a scripted or mock model, a tool
// that returns a value, an approver that decides at once) is one chain of
// microtasks from its first next() to its last: no timer, I/O callback or
// UI event would run until it ended, so a page would freeze and a
// setTimeout that aborts the run would not fire. next() therefore hands
// its message over in a macrotask once such a chain has run for SLICE_MS.
// The clock is read every sliceEvery messages, a macrotask marking the
// chain's end when a chain's first read is made; sliceEvery starts each
// chain at 8 and adapts so that the reads are about SLICE_READ_MS apart
// (from 1 to 128 messages):
// a fixed 256 let a first run, whose messages are slow while V8 compiles,
// go 300 ms without a macrotask, and a read every 32 messages cost W1 3%
// in a benchmark. A run that waits for the network ends its chains itself
// and never pays for it. Where the clock does not move while code runs
// (Cloudflare Workers), nothing changes.
const SLICE_MS = 16;
const SLICE_READ_MS = 1;
const SLICE_MAX_EVERY = 128;
let sliceStart = -1; // when the current chain's first read was made; -1: a macrotask ran since
let sliceLast = 0; // the chain's last read
let sliceCount = 0; // messages since the last read
const SLICE_FIRST_EVERY = 8; // a chain's first reads: its messages may be slow
let sliceEvery = SLICE_FIRST_EVERY;
const clockNow = typeof performance === "object" && typeof performance.now === "function" ? () => performance.now() : () => Date.now();
function sliceOver() {
  if (++sliceCount < sliceEvery) return false;
  const now = clockNow();
  if (sliceStart < 0) {
    sliceStart = sliceLast = now;
    sliceCount = 0;
    macrotask(() => {
      sliceStart = -1;
      sliceEvery = SLICE_FIRST_EVERY;
    });
    return false;
  }
  // sliceCount messages took now − sliceLast: aim the next read at
  // SLICE_READ_MS from this one.
  const took = now - sliceLast;
  if (took * 2 < SLICE_READ_MS) sliceEvery = Math.min(sliceEvery * 2, SLICE_MAX_EVERY);
  else if (took > SLICE_READ_MS * 2) sliceEvery = Math.max(1, Math.floor((sliceCount * SLICE_READ_MS) / took));
  sliceLast = now;
  sliceCount = 0;
  return now - sliceStart > SLICE_MS;
}

const streamEnd = () => ({ value: undefined, done: true });

/** A run's (or compaction's, or subagent run's) message stream. */
class Stream {
  #api;
  #id;
  #batches = []; // Batch: the pulled batches not yet read, oldest first
  #done = false;
  #pending = null;
  #closing = null;
  #ended; // see the constructor

  // ended, if given, is called once the run has ended in Go and its
  // records are stored: at the stream's end, or once its run, abandoned
  // (return(), a failed pull, the stream dropped), has ended. Called
  // more than once, it must act once.
  constructor(api, id, ended) {
    this.#api = api;
    this.#id = id;
    this.#ended = ended;
    droppedStreams.register(this, [api, id, ended], this);
  }

  #end() {
    this.#done = true;
    droppedStreams.unregister(this);
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  next() {
    const bs = this.#batches;
    while (bs.length) {
      let m;
      try {
        m = bs[0].read();
      } catch (e) {
        this.#fail();
        return Promise.reject(e);
      }
      if (m !== undefined) {
        const r = { value: m, done: false };
        return sliceOver() ? new Promise((resolve) => macrotask(() => resolve(r))) : Promise.resolve(r);
      }
      bs.shift();
    }
    if (this.#done) {
      // After a return() made elsewhere (a Stop button's, a callback's),
      // the end comes once the engine has stopped, as return()'s does: the
      // loop ended at once, and a run() right after it was session_busy.
      if (this.#closing) return this.#closing.then(streamEnd, streamEnd);
      return Promise.resolve(streamEnd());
    }
    if (!this.#pending) this.#pending = this.#pull();
    return this.#pending.then(() => this.next());
  }

  async #pull() {
    try {
      const batch = await this.#api.pullBatch(this.#id, jsonOnly);
      if (this.#done) return;
      if (batch === null) {
        this.#end(); // what drain() buffered is still served
        if (this.#ended) callEnded(this.#ended);
        return;
      }
      this.#batches.push(new Batch(batch));
    } catch (e) {
      this.#fail();
      throw e;
    } finally {
      this.#pending = null;
    }
  }

  // #fail ends the stream after a failed pull or a malformed batch: what
  // is buffered is dropped and the run abandoned.
  #fail() {
    if (!this.#done) {
      this.#end();
      this.#batches = [];
      endedAfter(this.#api.closeStream(this.#id), this.#ended);
    }
  }

  /**
   * Pulls the rest of the stream into the buffer, where next() still finds
   * it, and resolves at its end (Session.close, after the abort). After a
   * return() made elsewhere (a Stop button's, not awaited) the stream is
   * done at once but its run is not: it resolves once the engine has
   * stopped, as that return() does (close() resolved before the run's
   * records were stored).
   */
  async drain() {
    while (!this.#done) {
      this.#pending ??= this.#pull();
      try {
        await this.#pending;
      } catch {
        return; // the consumer's next() rejects with it
      }
    }
    if (this.#closing) await this.#closing.then(noop, noop);
  }

  /** Aborts the run (a `break`) and resolves once the engine has finished. */
  return(value) {
    if (!this.#closing) {
      this.#batches = [];
      if (this.#done) {
        this.#closing = Promise.resolve();
      } else {
        this.#end();
        const p = this.#api.closeStream(this.#id);
        endedAfter(p, this.#ended);
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
const STORE_KEYS = new Set(["dir"]);
const STORE_FN_KEYS = new Set(["store"]);

function storeArg(store, name, allowNone = false) {
  if (store == null) return !isNode && globalThis.indexedDB ? "indexeddb" : "memory";
  if (store === false && allowNone) return "";
  if (store === "indexeddb" || store === "memory") return store;
  if (!isObject(store) || isArrayArg(store, name)) throw badArg(name, `"indexeddb", "memory", ${allowNone ? "false, " : ""}or {dir: string}`, store);
  knownKeys(store, STORE_KEYS, name);
  const dir = get(store, "dir", name + ".dir");
  // One store per directory, however it is spelt ("traces", "./traces",
  // its absolute path): each store keeps what it learnt of its sessions
  // (a session's date directory), which a delete through another spelling
  // left stale. Resolved from the working directory of the call.
  if (typeof dir === "string" && dir !== "") return "dir:" + (nodeHooks.resolveDir?.(dir) ?? dir);
  if (dir === "") throw floeError("bad_argument", `${name}.dir: want a directory's path, got an empty string`);
  throw badArg(name + ".dir", "a directory's path (a string)", dir);
}

// The locks of a session's runs: the Web Locks of the origin (every tab)
// for a stored session where there are Web Locks; else, and for the
// memory store (one program's), locks of this program (Node has no Web
// Locks, and two session objects of one session ran at once there).
const webLocks = (store) => (store !== "memory" ? globalThis.navigator?.locks : undefined);
const localLocks = new Set(); // the names held in this program
// The runs of this program where there are Web Locks whose stream has not
// taken its lock yet (a LockedStream not pulled), by lock name: count.
// Without Web Locks a run takes this program's lock at run(); here its
// first next() takes the Web Lock, and until then a resume, import or
// delete of its session (a parent's delete of its child) went through,
// and the run then wrote after it or was refused its writes. Those are
// refused in this program as they are without Web Locks.
const unpulled = new Map();
// The Web Locks this program has released whose request has not settled
// yet, by name: a lock manager may see a release only a while later
// (Deno's, a macrotask), and a session's next run or resume, asking
// ifAvailable meanwhile, was refused as busy. The request's promise
// settles once the lock is let go.
const releasing = new Map();

function busy(fn, id, holder) {
  const who = holder ?? "another tab or worker (or another session object of this program) is running it";
  return floeError("session_busy", `${fn}: session ${JSON.stringify(id)} is busy: ${who}`);
}

const noop = () => {};

// dirLock takes the lock of a session of a {dir} store across processes
// (Node: floe-node.mjs's lock file): a release function, or the end of
// session_busy's message naming the process that holds it. create: the
// store's directory may be made for it (a run writes there). A lock file
// that cannot be made, written or read throws storage, naming fn, the
// session, the file and the system's error (it was no lock, or taken for
// another process's).
function dirLock(store, id, create, fn) {
  const lock = nodeHooks.lockDir;
  if (!lock || !store.startsWith("dir:")) return noop;
  try {
    return lock(store.slice(4), id, create);
  } catch (e) {
    throw floeError("storage", `${fn}: session ${JSON.stringify(id)}: ${e?.message ?? e}`);
  }
}

// lockName is the name of a session's lock in store: the Web Lock
// "floe:session:<id>" of an origin's IndexedDB sessions (every tab), and
// one of this program's for each other store's (two { dir } stores, or
// the memory store and one, each hold a session of that id of their own).
const lockName = (store, id) => "floe:session:" + id + (store === "indexeddb" ? "" : "\n" + store);

// tryLock takes the session's lock if it is free; it resolves to the
// function that releases it, or null (or the holder, named by dirLock)
// when another holder has it. yielding tells whether this attempt, and
// the hold it gets, ends by itself (see holders); wait: a holder of this
// program that yields is waited for rather than refusing. fn names the
// call in dirLock's error. run: a run's stream asks (one not pulled
// refuses every other caller, see unpulled).
async function tryLock(store, id, fn, { create = false, yielding = yields, wait = false, run = false } = {}) {
  const release = await tryLockHere(store, id, yielding, wait, run);
  if (!release) return null;
  let unlockDir;
  try {
    unlockDir = dirLock(store, id, create, fn);
  } catch (e) {
    release();
    throw e;
  }
  if (typeof unlockDir === "string") {
    release();
    return unlockDir;
  }
  return () => {
    const lost = unlockDir();
    release();
    return lost; // another process took the lock: why
  };
}

// The attempts and holds of the session locks in this program, by name
// (one at a time: the first attempt, then its holder), each with whether
// it ends by itself soon (a resume, a delete, a run of a closed session:
// yielding()) and a promise that settles when it has let go. resumeSession
// and deleteSession wait for those rather than fail: React's StrictMode
// runs an effect twice at once (two resumes of one session), and a
// component that closes its session on unmount resumes it when mounted
// again while the closed run still stores its records.
// done resolves to whether it held the lock (an attempt refused did not).
const holders = new Map(); // name → { yielding, held, done, settle }
const yields = () => true;

function holding(name, yielding) {
  let settle;
  const h = { yielding, held: false, done: new Promise((r) => (settle = r)) };
  h.settle = () => {
    if (holders.get(name) === h) holders.delete(name);
    settle(h.held);
  };
  if (!holders.has(name)) holders.set(name, h);
  return h;
}

async function tryLockHere(store, id, yielding, wait, run) {
  const name = lockName(store, id);
  let waited = false; // the last holder waited for held the lock
  for (let h; wait && (h = holders.get(name)) && h.yielding(); ) waited = await h.done;
  const h = holding(name, yielding);
  const web = webLocks(store);
  if (web && !run && unpulled.has(name)) {
    h.settle();
    return null;
  }
  while (web && releasing.has(name)) await releasing.get(name);
  if (!web) {
    if (localLocks.has(name)) {
      h.settle();
      return null;
    }
    localLocks.add(name);
    holders.set(name, h);
    h.held = true;
    let held = true;
    return () => {
      if (held) localLocks.delete(name); // at once: the next run may follow in the same task
      held = false;
      h.settle();
    };
  }
  // After this program's holder let go, the request queues: its release
  // may not have reached the lock manager yet. After an attempt that was
  // refused it does not: another tab holds the lock, and this one is
  // refused too rather than queued behind that tab's run.
  return new Promise((resolve, reject) => {
    const asked = web
      .request(name, waited ? {} : { ifAvailable: true }, (lock) => {
        if (!lock) {
          h.settle();
          return resolve(null);
        }
        holders.set(name, h);
        h.held = true;
        return new Promise((release) =>
          resolve(() => {
            const gone = asked.then(noop, noop).then(() => {
              if (releasing.get(name) === gone) releasing.delete(name);
            });
            releasing.set(name, gone);
            h.settle();
            release();
          }),
        );
      })
      .catch((e) => {
        h.settle();
        reject(e);
      });
  });
}

// A persisted run's stream dropped before its first next() never starts:
// once it is collected, its skip releases the run's signal.
const unstarted = registry((skip) => {
  try {
    skip();
  } catch {}
});

/**
 * A run (or compaction) of a persisted session where Web Locks exist: its
 * first next() takes the session's lock, then starts the run through
 * open(release), which releases the lock once the run's records are stored.
 * Without the lock it fails with session_busy before anything is streamed
 * or traced.
 */
class LockedStream {
  #store;
  #id;
  #fn;
  #open;
  #inner = null;
  #first = null;
  #done = false;
  #skip; // called once if the run never starts (releases its signal)
  #mine; // reports whether the lock is held by a run of this stream's session object
  #yielding; // reports whether its session was closed (holders)

  constructor(store, id, fn, open, skip, mine, yielding) {
    this.#store = store;
    this.#id = id;
    this.#fn = fn;
    this.#open = open;
    this.#skip = skip;
    this.#mine = mine;
    this.#yielding = yielding;
    const name = (this.#name = lockName(store, id));
    unpulled.set(name, (unpulled.get(name) ?? 0) + 1);
    // A stream dropped unpulled never pulls: its count goes once it is
    // collected, and its signal is released.
    unstarted.register(
      this,
      () => {
        try {
          skip?.();
        } finally {
          LockedStream.#unpull(name);
        }
      },
      this,
    );
  }

  #name; // its lock's name (unpulled)
  #pulled = false;

  static #unpull(name) {
    const n = unpulled.get(name) - 1;
    if (n > 0) unpulled.set(name, n);
    else unpulled.delete(name);
  }

  /** The run has asked for its lock, or will never: it is not unpulled. */
  #asked() {
    if (this.#pulled) return;
    this.#pulled = true;
    LockedStream.#unpull(this.#name);
  }

  #skipped() {
    const f = this.#skip;
    this.#skip = null;
    unstarted.unregister(this);
    this.#asked();
    f?.();
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
    let release;
    try {
      release = await tryLock(this.#store, this.#id, this.#fn, { create: true, yielding: this.#yielding, run: true });
    } catch (e) {
      this.#done = true; // a { dir } lock file that cannot be made or read
      this.#skipped();
      throw e;
    }
    if (typeof release !== "function") {
      this.#done = true;
      this.#skipped();
      // Two run()s of one session object, neither pulled when the second
      // was made: the first pulled took the lock.
      if (!release && this.#mine?.()) throw floeError("session_busy", `${this.#fn}: the session is busy: a run or compaction is already in flight`);
      throw busy(this.#fn, this.#id, release);
    }
    if (this.#done) {
      this.#skipped();
      return release(); // return() or close() came first
    }
    this.#skip = null; // from here the run owns the signal
    unstarted.unregister(this);
    this.#asked();
    try {
      this.#inner = this.#open(release);
    } catch (e) {
      this.#done = true;
      throw e;
    }
    if (!this.#inner) this.#done = true; // the session was closed meanwhile
  }

  /** Session.close: a run not yet started never starts; a started one is drained. */
  async drain() {
    if (!this.#first) {
      this.#done = true;
      this.#skipped();
    }
    await Promise.resolve(this.#first).catch(() => {});
    if (this.#inner) await this.#inner.drain();
  }

  return(value) {
    if (this.#inner) return this.#inner.return(value);
    this.#done = true;
    if (!this.#first) this.#skipped();
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

// ---- models: the built-in provider adapters ----------------------------------------
//
// floe.openai(), openaiCompatible(), openaiResponses() and anthropic() return
// a model: a frozen description (provider, model, baseURL) to pass as `llm`
// (or `newLLM`) of createSession. The session then runs the Go adapter of
// package provider inside floe.wasm: requests go out through `fetch`, and
// only the response's byte chunks cross into Go (jsbridge/fetch.go). The
// key is kept out of the model object (in MODELS), so logging or
// serializing a model never shows it, and it is sent only to baseURL:
// redirects are not followed.

const MODELS = new WeakMap(); // model object → its spec for the bridge

function isModel(v) {
  return isObject(v) && MODELS.has(v);
}

// A page, a Worker or an extension: the runtimes where fetch is subject to
// CORS and Anthropic wants its browser-access header.
const isBrowser = !isNode && /^Mozilla\//.test(String(globalThis.navigator?.userAgent ?? ""));

const defaultFetch = (url, init) => globalThis.fetch(url, init);

const PROVIDERS = {
  openai: { provider: "openai-chat", baseURL: "https://api.openai.com/v1", key: true },
  openaiCompatible: { provider: "openai-chat", baseURL: null, key: false },
  openaiResponses: { provider: "openai-responses", baseURL: "https://api.openai.com/v1", key: true },
  anthropic: { provider: "anthropic", baseURL: "https://api.anthropic.com/v1", key: true },
};

// The request body's members each adapter writes itself (provider/*/
// request.go): body may add others, not give these a second time.
const BODY_OWN = {
  "openai-chat": { model: "model", stream: "", messages: "", tools: "", reasoning_effort: "thinkingLevel", max_tokens: "maxTokens", max_completion_tokens: "maxTokens" },
  "openai-responses": { model: "model", stream: "", store: "", instructions: "", input: "", tools: "", include: "", reasoning: "thinkingLevel", max_output_tokens: "maxTokens" },
  anthropic: { model: "model", max_tokens: "maxTokens", stream: "", system: "", messages: "", tools: "", thinking: "thinkingLevel" },
};

// A header's name is an HTTP token; its value Latin-1 without a line
// break or another control character but a tab (what fetch() and Go's
// net/http both accept). A value is never shown: it may be a key.
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_VALUE = /^[^\0-\x08\x0a-\x1f\x7f\u0100-\uffff]*$/;
const HEADER_VALUE_WHY = "a header value cannot hold a line break, another control character or a character above U+00FF";

const MODEL_KEYS = new Set(["model", "apiKey", "baseURL", "headers", "maxTokens", "temperature", "topP", "thinkingLevel", "body", "fetch", "idleTimeoutMs", "maxImageBytes", "maxImages"]);
const ANTHROPIC_KEYS = new Set([...MODEL_KEYS, "browserAccess", "version", "cache", "images"]);
const CHAT_KEYS = new Set([...MODEL_KEYS, "gemini", "images", "startsInThinking"]);
const RESPONSES_KEYS = new Set([...MODEL_KEYS, "images", "startsInThinking"]);

// The thinkingLevel of a model's options: the default of its session's runs.
function modelThinking(llm) {
  return isModel(llm) ? MODELS.get(llm).thinkingLevel : undefined;
}

function makeModel(fname, opts) {
  const d = PROVIDERS[fname];
  const name = `${fname}: options`;
  plainObject(opts, name);
  for (const k of ["browserAccess", "version", "cache"]) {
    if (d.provider !== "anthropic" && Object.hasOwn(opts, k)) throw floeError("bad_argument", `${name}.${k}: unknown option of ${fname}() (anthropic() has it)`);
  }
  if (d.provider !== "openai-chat" && Object.hasOwn(opts, "gemini")) {
    throw floeError("bad_argument", `${name}.gemini: unknown option of ${fname}() (openaiCompatible() and openai() have it)`);
  }
  if (d.provider === "anthropic" && Object.hasOwn(opts, "startsInThinking")) {
    throw floeError("bad_argument", `${name}.startsInThinking: unknown option of ${fname}() (openaiCompatible(), openai() and openaiResponses() have it)`);
  }
  const keys = d.provider === "anthropic" ? ANTHROPIC_KEYS : d.provider === "openai-chat" ? CHAT_KEYS : RESPONSES_KEYS;
  knownKeys(opts, keys, name);
  // Each option is read once; a getter that throws is bad_argument naming it.
  const o = readKeys(opts, keys, name);
  const { model, apiKey, headers, maxTokens, temperature, topP, thinkingLevel, body, fetch, browserAccess, version, idleTimeoutMs, gemini, images, cache, maxImageBytes, maxImages, startsInThinking } = o;
  if (typeof model !== "string" || model === "") throw badArg(`${name}.model`, "a model name", model);
  let baseURL = o.baseURL ?? d.baseURL;
  if (baseURL == null && d.baseURL == null) {
    throw badArg(`${name}.baseURL`, 'the server\'s URL (e.g. "http://localhost:11434/v1")', o.baseURL);
  }
  if (typeof baseURL !== "string") throw badArg(`${name}.baseURL`, "a URL string", baseURL);
  let url;
  try {
    url = new URL(baseURL);
  } catch {
    throw floeError("bad_argument", `${name}.baseURL: ${JSON.stringify(baseURL)} is not an absolute URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw floeError("bad_argument", `${name}.baseURL: want an http: or https: URL, got ${url.protocol}`);
  }
  // fetch() refuses a URL with credentials (the password then in every
  // request_end), and a fragment is not sent. A query is kept: the
  // adapters put their paths (/chat/completions…) before it (Azure
  // OpenAI's ?api-version=).
  if (url.username || url.password) {
    throw floeError("bad_argument", `${name}.baseURL: want the API's base URL without credentials (user:password@): send a key with apiKey or headers`);
  }
  if (baseURL.includes("#")) {
    throw floeError("bad_argument", `${name}.baseURL: want the API's base URL without a fragment (#…): a fragment is not sent to the server`);
  }
  const q = baseURL.includes("?") ? baseURL.indexOf("?") : baseURL.length;
  baseURL = baseURL.slice(0, q).replace(/\/+$/, "") + baseURL.slice(q);
  if (apiKey != null && typeof apiKey !== "string") throw badArg(`${name}.apiKey`, "a string", apiKey);
  // Sent as a header: fetch() refused it at every request (a key read from
  // a file with its line break), each retried as a network error.
  if (apiKey && !HEADER_VALUE.test(apiKey)) {
    throw floeError("bad_argument", `${name}.apiKey: ${HEADER_VALUE_WHY}${/[\r\n]$/.test(apiKey) ? " (it ends in one: read from a file with it?)" : ""}`);
  }
  if (d.key && !apiKey && o.baseURL == null) {
    throw badArg(`${name}.apiKey`, "the API key (or a baseURL of a proxy that adds it)", apiKey);
  }
  let hdrText = "";
  if (headers != null) {
    if (!isObject(headers) || Array.isArray(headers)) throw badArg(`${name}.headers`, "an object of header strings", headers);
    const seen = new Map(); // lower-case name → as given
    let entries;
    try {
      entries = Object.entries(headers);
    } catch (e) {
      throw floeError("bad_argument", `${name}.headers: reading it threw: ${errMessage(e)}`);
    }
    for (const [k, v] of entries) {
      if (typeof v !== "string") throw badArg(`${name}.headers[${JSON.stringify(k)}]`, "a string", v);
      if (!HEADER_NAME.test(k)) throw floeError("bad_argument", `${name}.headers[${JSON.stringify(k)}]: not a header name (letters, digits and !#$%&'*+-.^_\`|~ only)`);
      if (!HEADER_VALUE.test(v)) throw floeError("bad_argument", `${name}.headers[${JSON.stringify(k)}]: ${HEADER_VALUE_WHY}`);
      // Header names are case-insensitive: written in lower case, as the
      // adapter's own are, an extra header replaces the adapter's of that
      // name (Authorization: a proxy's token) rather than being joined to it.
      const lower = k.toLowerCase();
      if (seen.has(lower)) throw floeError("bad_argument", `${name}.headers: ${JSON.stringify(seen.get(lower))} and ${JSON.stringify(k)} name one header`);
      seen.set(lower, k);
      hdrText += lower + "\n" + v + "\n";
    }
  }
  if (maxTokens != null && !(Number.isInteger(maxTokens) && maxTokens > 0)) {
    throw badArg(`${name}.maxTokens`, "a positive integer", maxTokens);
  }
  // At most a day: its watchdog's ticks, a quarter of it, stay within
  // what setTimeout takes (2^31 − 1 ms).
  if (idleTimeoutMs != null && !(Number.isInteger(idleTimeoutMs) && idleTimeoutMs >= 0 && idleTimeoutMs <= 86400000)) {
    throw badArg(`${name}.idleTimeoutMs`, "a whole number of milliseconds up to 86400000 (0 = no idle timeout)", idleTimeoutMs);
  }
  // What a request's images may take (Go's MaxImageBytes, MaxImages): past
  // it the oldest go as a text saying so; 0 = no limit.
  for (const [k, v, what] of [["maxImageBytes", maxImageBytes, "bytes"], ["maxImages", maxImages, "images"]]) {
    if (v != null && !(Number.isSafeInteger(v) && v >= 0)) throw badArg(`${name}.${k}`, `a whole number of ${what} (0 = no limit)`, v);
  }
  for (const [k, v] of [["temperature", temperature], ["topP", topP]]) {
    if (v != null && !(typeof v === "number" && Number.isFinite(v))) throw badArg(`${name}.${k}`, "a number", v);
  }
  if (body != null && (!isObject(body) || Array.isArray(body))) throw badArg(`${name}.body`, "an object", body);
  if (fetch != null && typeof fetch !== "function") throw badArg(`${name}.fetch`, "a function", fetch);
  if (browserAccess != null && typeof browserAccess !== "boolean") {
    throw badArg(`${name}.browserAccess`, "a boolean", browserAccess);
  }
  if (version != null && typeof version !== "string") throw badArg(`${name}.version`, "a string", version);
  if (gemini != null && typeof gemini !== "boolean") throw badArg(`${name}.gemini`, "a boolean", gemini);
  if (images != null && typeof images !== "boolean") throw badArg(`${name}.images`, "a boolean (false: a model without vision)", images);
  if (startsInThinking != null && typeof startsInThinking !== "boolean") {
    throw badArg(`${name}.startsInThinking`, "a boolean (true: the chat template opens the thinking)", startsInThinking);
  }
  if (cache != null && typeof cache !== "boolean" && cache !== "5m" && cache !== "1h") {
    const want = 'true, false, "5m" or "1h"';
    if (typeof cache !== "string") throw badArg(`${name}.cache`, want, cache);
    throw floeError("bad_argument", `${name}.cache: want ${want}, got ${JSON.stringify(cache.slice(0, 20))}`);
  }
  if (version && !HEADER_VALUE.test(version)) throw floeError("bad_argument", `${name}.version: ${HEADER_VALUE_WHY}`);
  if (thinkingLevel != null && (typeof thinkingLevel !== "string" || thinkingLevel === "")) {
    throw badArg(`${name}.thinkingLevel`, 'a level such as "low", "medium" or "high"', thinkingLevel);
  }
  let extra;
  if (body != null || temperature != null || topP != null) {
    try {
      extra = { ...body };
    } catch (e) {
      throw floeError("bad_argument", `${name}.body: reading it threw: ${errMessage(e)}`);
    }
    for (const k of Object.keys(extra)) {
      const own = BODY_OWN[d.provider][k];
      if (own !== undefined) {
        throw floeError("bad_argument", `${name}.body.${k}: the adapter writes it${own ? ` (use the ${own} option)` : ""}`);
      }
    }
    if (temperature != null) extra.temperature = temperature;
    if (topP != null) extra.top_p = topP;
    extra = jsonArg(extra, `${name}.body`);
  }
  const spec = {
    provider: d.provider,
    model,
    baseURL,
    apiKey: apiKey ?? "",
    version: version ?? "",
    body: extra ?? "",
    headers: hdrText,
    maxTokens: maxTokens ?? 0,
    idleMs: idleTimeoutMs == null ? 0 : idleTimeoutMs === 0 ? -1 : idleTimeoutMs, // Go's 0 is its default
    maxImageBytes: maxImageBytes == null ? 0 : maxImageBytes || -1, // the same
    maxImages: maxImages == null ? 0 : maxImages || -1,
    browserAccess: d.provider === "anthropic" && (browserAccess ?? isBrowser),
    gemini: gemini === true, // Gemini's dialect behind a proxy (its own host is told by the adapter)
    noImages: images === false, // a model without vision: each image goes as a text saying so
    startsInThinking: startsInThinking === true, // the reply is thinking until its </think>
    noCache: cache === false, // Anthropic's prompt-cache breakpoints, on by default
    cacheTTL: typeof cache === "string" ? cache : "", // their TTL; "" the API's default (5 minutes)
    fetch: fetch ?? defaultFetch,
    thinkingLevel: thinkingLevel ?? undefined,
  };
  const m = Object.freeze({ provider: d.provider, model, baseURL });
  MODELS.set(m, Object.freeze(spec));
  return m;
}

// modelSpec is the bridge's spec of a model (jsbridge/provider.go), with
// the HTTP host its requests go through.
function modelSpec(api, m) {
  const { fetch, thinkingLevel, ...spec } = MODELS.get(m);
  return { ...spec, http: httpHost(api, fetch) };
}

// The JavaScript half of the HTTP seam (jsbridge/fetch.go): one fetch per
// request, aborted through its AbortController, and the body read with its
// ReadableStream reader, each chunk handed to Go as it arrives. Redirects
// are not followed, so a key goes only to the configured endpoint.
function httpHost(api, fetch) {
  return {
    send(wid, url, method, headerText, body) {
      const ac = new AbortController();
      let reader = null;
      let synthetic = null; // the body of a redirect
      const headers = {};
      const h = headerText.split("\n");
      for (let i = 0; i + 1 < h.length; i += 2) headers[h[i]] = h[i + 1];
      // answer settles the request with the response's status, headers and
      // whether it has a body to read.
      const answer = (res) => {
        if (!isObject(res) || typeof res.status !== "number") {
          api.settle(wid, false, `fetch ${url}: the fetch function resolved to ${describe(res)}, want a Response`);
          return;
        }
        let status = res.status;
        let text = "";
        try {
          for (const [k, v] of res.headers) text += k + "\n" + v + "\n";
        } catch {}
        if (res.type === "opaqueredirect" || (status >= 300 && status < 400) || res.redirected === true) {
          // Not followed, so the key cannot reach another address; the
          // body says so (the adapter quotes an error body's message).
          // A fetch function that followed it anyway (ignoring redirect:
          // "manual") is refused too, rather than its answer used. Its
          // body is not read: cancelled, also that of a fetch function
          // that did not pass the signal on, which stayed open.
          ac.abort();
          try {
            Promise.resolve(res.body.cancel(ac.signal.reason)).catch(noop);
          } catch {}
          let message;
          if (res.redirected === true && !(status >= 300 && status < 400)) {
            message = `the fetch function followed a redirect${typeof res.url === "string" && res.url ? ` to ${res.url}` : ""} although asked not to (redirect: "manual"), so the request and its key went there too; Floe does not use an answer from another address: set baseURL to the final address`;
            status = 302;
          } else {
            const to = res.headers?.get?.("location");
            const where = to ? ` to ${to}` : res.type === "opaqueredirect" ? " (the browser hides where to)" : "";
            message = `the server redirected${where}; Floe does not follow redirects, so that the key goes only to the configured endpoint: set baseURL to the final address`;
          }
          synthetic = new TextEncoder().encode(JSON.stringify({ error: { message } }));
          api.settle(wid, true, [status || 302, text, true]);
          return;
        }
        const b = res.body;
        reader = b && typeof b.getReader === "function" ? b.getReader() : null;
        api.settle(wid, true, [status, text, reader !== null]);
      };
      let p;
      try {
        p = Promise.resolve(fetch(url, { method, headers, body, signal: ac.signal, redirect: "manual" }));
      } catch (e) {
        p = Promise.reject(e);
      }
      p.then(
        (res) => {
          if (ac.signal.aborted) {
            // The request was given up first (the run's abort, the idle
            // timeout) and a fetch function that did not heed the signal
            // answered anyway: nobody reads its body, which would stay open.
            try {
              Promise.resolve(res.body.cancel(ac.signal.reason)).catch(noop);
            } catch {}
            return;
          }
          try {
            answer(res);
          } catch (e) {
            // A Response of the fetch function's that cannot be read (its
            // body already read, a getter that throws) ends the request
            // now, naming why: it waited for the idle timeout (for ever
            // with none), behind an unhandled rejection.
            ac.abort();
            api.settle(wid, false, `fetch ${url}: the fetch function's Response cannot be read: ${errorText(e)}`);
          }
        },
        (e) => api.settle(wid, false, networkError(url, e)),
      );
      const failed = (rid, e) => api.settle(rid, false, "reading the response: " + errorText(e));
      return {
        read(rid) {
          if (!reader) {
            api.settle(rid, true, synthetic);
            synthetic = null;
            return;
          }
          let next;
          try {
            next = Promise.resolve(reader.read());
          } catch (e) {
            next = Promise.reject(e);
          }
          // The reader of a body the fetch function made may answer
          // anything: what is not a chunk fails the read, naming it.
          next.then(
            (r) => {
              try {
                if (!isObject(r)) api.settle(rid, false, `reading the response: the body's reader resolved to ${describe(r)}, want {done, value}`);
                else if (r.done) api.settle(rid, true, null);
                else if (r.value instanceof Uint8Array) api.settle(rid, true, r.value);
                else api.settle(rid, false, `reading the response: the body yielded ${describe(r.value)}, want a Uint8Array`);
              } catch (e) {
                failed(rid, e);
              }
            },
            (e) => failed(rid, e),
          );
        },
        abort(reason) {
          ac.abort(reason);
          // The body is cancelled too: a fetch function that did not pass
          // the signal on (one that copies init's method, headers and body)
          // left it streaming after the run's abort or the idle timeout, the
          // connection open.
          if (!reader) return;
          try {
            Promise.resolve(reader.cancel(ac.signal.reason)).catch(noop);
          } catch {}
        },
      };
    },
  };
}

// errorText renders a rejection: "Name: message", with the cause Node's
// fetch gives (ECONNREFUSED and the like).
function errorText(e) {
  if (!(e instanceof Error)) return errMessage(e);
  let s = `${e.name}: ${e.message}`;
  const c = e.cause;
  if (isObject(c)) {
    const detail = [c.code, c.message].filter((x) => typeof x === "string" && x !== "");
    if (detail.length) s += ` (${[...new Set(detail)].join(" ")})`;
  }
  return s;
}

// networkError says why a fetch gave no response; a browser does not tell
// the page a refused connection from a CORS refusal.
function networkError(url, e) {
  let s = `fetch ${url}: ${errorText(e)}`;
  if (isBrowser) {
    s += " (no response reached the page: the server is unreachable, or it refused this origin — a cross-origin endpoint must allow it with CORS headers; the browser console says which)";
  }
  return s;
}

// The factories need no floe.wasm (a model is a description until a session
// runs it), so they are named exports as well as methods of the loaded floe.

/** OpenAI Chat Completions. */
export const openai = (opts) => makeModel("openai", opts);
/** An OpenAI-compatible server (the Chat Completions wire); baseURL required. */
export const openaiCompatible = (opts) => makeModel("openaiCompatible", opts);
/** The OpenAI Responses API. */
export const openaiResponses = (opts) => makeModel("openaiResponses", opts);
/** Anthropic Messages. */
export const anthropic = (opts) => makeModel("anthropic", opts);

const modelFactories = { openai, openaiCompatible, openaiResponses, anthropic };

export default { load, isFloeError, connect, tool, msg, isMessage, transcript, newSessionId, httpOutcome, readLines, readEvents, ...modelFactories };
