// Hostile values anywhere in the API: a throwing getter, a Proxy whose
// every trap throws, a revoked Proxy, BigInt, circular and very deep values.
// Each is a FloeError bad_argument naming the argument when it is an
// argument, and the protocol's answer (failed, malformed, deny, [tool
// error]) when a callback returns it; no run hangs, no call leaks memory
// inside Go. Also: close() during a run, steer ids and unsteer().
import { test } from "node:test";
import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { load, tool } from "../../static/floe-node.mjs";
import { floe, meta, scriptedLLM, say, text, usage, toolCall, toolOutput, collect, find, types, instantClock, never } from "./helpers.mjs";

const boom = () => {
  throw new Error("hostile read");
};

/** Values whose reading throws, each made fresh. */
// Every key the API reads from an argument or a callback's result.
const keys = ("status errorMessage permanent type payload name text aborted addEventListener removeEventListener " +
  "dir maxTurns compaction mode meta llm newLLM environment tools config clock trace onDiagnostic abortGraceMs " +
  "store approve signal thinkingLevel done value next streamGenerate loadHistory executeTool now sleep write " +
  "rotate length 0 toJSON").split(" ");

const hostile = {
  "a throwing getter": () => {
    const o = {};
    for (const k of keys) Object.defineProperty(o, k, { get: boom, enumerable: true });
    return o;
  },
  "a Proxy whose every trap throws": () =>
    new Proxy({}, { get: boom, has: boom, ownKeys: boom, getPrototypeOf: boom, getOwnPropertyDescriptor: boom }),
  "a revoked Proxy": () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    return proxy;
  },
};

const deep = (n = 10000) => {
  const root = {};
  let cur = root;
  for (let i = 0; i < n; i++) cur = cur.x = {};
  return root;
};
const circular = () => {
  const o = { a: 1 };
  o.self = o;
  return o;
};
/** Values JSON cannot encode. */
const unencodable = { BigInt: () => 10n, circular, "10,000 deep": () => deep() };

const llm = () => scriptedLLM(say("hi"));

function isBadArgument(name) {
  return (e) => {
    assert.equal(e?.name, "FloeError", `${name}: ${e?.stack ?? e}`);
    assert.equal(e.code, "bad_argument", e.message);
    assert.ok(e.message.includes(name), `"${e.message}" does not name ${name}`);
    return true;
  };
}

/**
 * Each place of the API that takes an argument: [the name its error must
 * carry, f(value), whether the value is encoded as JSON]. An options
 * object is read key by key: its error names the key read first.
 */
// The sessions and subagents the places below open to reach an argument;
// the memory test closes them after each call (a session never closed
// stays in memory, by design: close() releases it).
const openedSessions = [];
const opened = (s) => (openedSessions.push(s), s);
async function closeOpened() {
  for (const s of openedSessions.splice(0)) await s.close();
}

const argumentPlaces = [
  ["createSession:", (v) => floe.createSession(v)],
  ["createSession: meta", (v) => floe.createSession({ meta: v, llm: llm() }), true],
  ["createSession: llm", (v) => floe.createSession({ meta: meta(), llm: v })],
  ["createSession: tools", (v) => floe.createSession({ meta: meta(), llm: llm(), tools: v }), true],
  ["createSession: tools", (v) => floe.createSession({ meta: meta(), llm: llm(), tools: [v] }), true],
  ["createSession: config", (v) => floe.createSession({ meta: meta(), llm: llm(), config: v })],
  ["createSession: config.maxTurns", (v) => floe.createSession({ meta: meta(), llm: llm(), config: { maxTurns: v } })],
  ["createSession: config.compaction", (v) => floe.createSession({ meta: meta(), llm: llm(), config: { compaction: v } })],
  ["createSession: environment", (v) => floe.createSession({ meta: meta(), llm: llm(), environment: v })],
  ["createSession: clock", (v) => floe.createSession({ meta: meta(), llm: llm(), clock: v })],
  ["createSession: trace", (v) => floe.createSession({ meta: meta(), llm: llm(), trace: v })],
  ["createSession: store", (v) => floe.createSession({ meta: meta(), llm: llm(), store: v })],
  ["createSession: abortGraceMs", (v) => floe.createSession({ meta: meta(), llm: llm(), abortGraceMs: v })],
  ["createSubagent: meta", (v) => floe.createSubagent({ meta: v, llm: llm() }), true],
  ["createSubagent: config", (v) => floe.createSubagent({ meta: meta(), llm: llm(), config: v })],
  ["run: prompt", (v) => opened(floe.createSession({ meta: meta(), llm: llm() })).run([v]), true],
  ["run:", (v) => opened(floe.createSession({ meta: meta(), llm: llm() })).run("x", v)],
  ["run: signal", (v) => opened(floe.createSession({ meta: meta(), llm: llm() })).run("x", { signal: v })],
  ["compact: signal", (v) => opened(floe.createSession({ meta: meta(), llm: llm() })).compact({ signal: v })],
  ["steer: input", (v) => opened(floe.createSession({ meta: meta(), llm: llm() })).steer([v]), true],
  ["subagent.run: signal", (v) => opened(floe.createSubagent({ meta: meta(), llm: llm() })).run("x", { signal: v })],
  ["importSession: files", (v) => floe.importSession(v)],
  ["importSession: files[0]", (v) => floe.importSession([v])],
  ["importSession:", (v) => floe.importSession("x", v)],
  ["listSessions:", (v) => floe.listSessions(v)],
  ["exportSession:", (v) => floe.exportSession("x", v)],
  ["readSession:", (v) => floe.readSession("x", v)],
  ["deleteSession:", (v) => floe.deleteSession("x", v)],
  ["resumeSession:", (v) => floe.resumeSession("x", v)],
];

/** Calls place(v) and checks the FloeError bad_argument naming name, thrown, rejected or at the first next(). */
async function refuses(name, place, v, what) {
  let r;
  try {
    r = place(v);
  } catch (e) {
    return isBadArgument(name)(e);
  }
  if (typeof r?.then === "function") return assert.rejects(r, isBadArgument(name));
  if (typeof r?.next === "function") return assert.rejects(r.next(), isBadArgument(name));
  assert.fail(`${name} accepted ${what}`);
}

// Arguments that cannot be read, and JSON that cannot be written.
for (const [name, place, json] of argumentPlaces) {
  for (const [what, make] of Object.entries(json ? { ...hostile, ...unencodable } : hostile)) {
    test(`${name} given ${what}: bad_argument naming it`, () => refuses(name, place, make(), what));
  }
}

// config: an options object, not a collection; numbers the engine honours.
const badConfigs = [
  ["an array", [], "createSession: config"],
  ["a Map", new Map([["maxTurns", 1]]), "createSession: config"],
  ["a Date", new Date(), "createSession: config"],
  ["compaction as a Map", { compaction: new Map() }, "createSession: config.compaction"],
  ["reconnectBackoffMs 2**60", { reconnectBackoffMs: 2 ** 60 }, "config.reconnectBackoffMs"],
  ["reconnectBackoffMs 2**31", { reconnectBackoffMs: 2 ** 31 }, "config.reconnectBackoffMs"],
  ["reconnectBackoffMs -1", { reconnectBackoffMs: -1 }, "config.reconnectBackoffMs"],
  ["reconnectBackoffMaxMs 1e300", { reconnectBackoffMaxMs: 1e300 }, "config.reconnectBackoffMaxMs"],
  ["reconnectBackoffMaxMs Infinity", { reconnectBackoffMaxMs: Infinity }, "config.reconnectBackoffMaxMs"],
  ["maxReconnects -3", { maxReconnects: -3 }, "config.maxReconnects"],
  ["maxReconnects NaN", { maxReconnects: NaN }, "config.maxReconnects"],
  ["maxReconnects 1.5", { maxReconnects: 1.5 }, "config.maxReconnects"],
  ["compactionMaxReconnects -1", { compactionMaxReconnects: -1 }, "config.compactionMaxReconnects"],
  ["maxTurns 2**53", { maxTurns: 2 ** 53 }, "config.maxTurns"],
  ["maxTurns 1n", { maxTurns: 1n }, "config.maxTurns"],
  ["compaction.maxContextLength 2**60", { compaction: { mode: "discard", maxContextLength: 2 ** 60 } }, "config.compaction.maxContextLength"],
  ["compaction.mode missing", { compaction: { maxContextLength: 10 } }, "config.compaction.mode"],
  ["compaction.mode unknown", { compaction: { mode: "fold" } }, "config.compaction.mode"],
];

for (const [what, config, name] of badConfigs) {
  test(`config ${what}: bad_argument`, () => {
    assert.throws(() => floe.createSession({ meta: meta(), llm: llm(), config }), isBadArgument(name));
  });
}

// An options object given as an array, a Map or a Date was taken as one
// with no option set: run("x", [message]) ran without a word.
test("options given as an array, a Map or a Date: bad_argument naming them", async () => {
  const places = [
    ["run: options", (v) => opened(floe.createSession({ meta: meta(), llm: llm() })).run("x", v)],
    ["compact: options", (v) => opened(floe.createSession({ meta: meta(), llm: llm() })).compact(v)],
    ["subagent.run: options", (v) => opened(floe.createSubagent({ meta: meta(), llm: llm() })).run("x", v)],
    ["createSession: options", (v) => floe.createSession(v)],
    ["listSessions: options", (v) => floe.listSessions(v)],
    ["readSession: options", (v) => floe.readSession("x", v)],
    ["tool: spec", (v) => tool(v)],
    ["subagentTool: spec", (v) => floe.subagentTool(v)],
    ["openai: options", (v) => floe.openai(v)],
    ["load: opts", (v) => load(v)],
    ["connect: options", (v) => floe.connect("http://127.0.0.1:9", "s1", v)],
    ["run: options", (v) => floe.connect("http://127.0.0.1:9", "s1").run("x", v)],
    ["messages: options", (v) => floe.connect("http://127.0.0.1:9", "s1").messages(v)],
  ];
  for (const [name, place] of places) {
    for (const [what, v] of [["an array", [1]], ["an empty array", []], ["a Map", new Map()], ["a Date", new Date()]]) {
      await refuses(name, place, v, what);
    }
  }
});

// meta values JSON would change were named as Go saw them: a NaN window
// as "null", a function workspace as "missing".
test("meta values JSON would change: bad_argument naming the key and the value", () => {
  const cases = [
    [{ meta: { model_context_window: NaN } }, "createSession: meta.model_context_window: want a number of tokens, got NaN"],
    [{ meta: { model_context_window: Infinity } }, "createSession: meta.model_context_window: want a number of tokens, got Infinity"],
    [{ meta: { workspace: () => "/w" } }, "createSession: meta.workspace: want a string, got a function"],
    [{ meta: { session_id: 7 } }, "createSession: meta.session_id: want a string, got a number"],
    [{ llm: { ...llm(), contextWindow: NaN } }, "createSession: llm.contextWindow: want a number, got NaN"],
  ];
  for (const [opts, want] of cases) {
    assert.throws(() => floe.createSession({ llm: llm(), ...opts }), (e) => isBadArgument("")(e) && e.message.includes(want), want);
  }
});

// A misspelt option is refused, naming it and the option meant: ignored,
// "aprove" denied every call and "tool" left the session without tools.
test("unknown option keys: bad_argument naming the key and the closest known one", async () => {
  const cases = [
    [() => floe.createSession({ llm: llm(), tool: [] }), "createSession: options.tool: unknown option (did you mean tools?)"],
    [() => floe.createSession({ llm: llm(), systemPrompt: "x" }), "createSession: options.systemPrompt: unknown option"],
    [() => floe.createSession({ llm: llm(), config: { maxReconects: 3 } }), "createSession: config.maxReconects: unknown option (did you mean maxReconnects?)"],
    [() => floe.createSession({ llm: llm(), newLLM: () => llm(), config: { compaction: { mode: "discard", maxContextLen: 5 } } }), "config.compaction.maxContextLen: unknown option"],
    [() => floe.createSession({ llm: llm(), meta: { bogus: 1 } }), "createSession: meta.bogus: unknown option"],
    [() => floe.createSession({ llm: llm() }).run("x", { aprove: () => "allow" }), "run: options.aprove: unknown option (did you mean approve?)"],
    [() => floe.createSession({ llm: llm() }).compact({ sigal: undefined }), "compact: options.sigal: unknown option (did you mean signal?)"],
    [() => floe.createSubagent({ llm: llm() }).run("x", { thinkingLevel: "high" }), "subagent.run: options.thinkingLevel: unknown option"],
    [() => tool({ name: "t", params: {}, execute: () => "" }), "tool: spec.params: unknown option"],
    [() => floe.subagentTool({ create: () => ({}), descripton: "x" }), "subagentTool: spec.descripton: unknown option (did you mean description?)"],
  ];
  for (const [f, want] of cases) assert.throws(f, (e) => isBadArgument("")(e) && e.message.includes(want), want);
  await assert.rejects(floe.resumeSession("session-x", { llm: llm(), meta: {} }), (e) => e.code === "bad_argument" && e.message.includes("resumeSession: options.meta: unknown option"));
  // Given again at resume, the system prompt or the meta is named as what the Trace keeps.
  for (const k of ["meta", "system"]) {
    await assert.rejects(floe.resumeSession("session-x", { llm: llm(), [k]: k === "system" ? "Be brief." : {} }), (e) =>
      e.code === "bad_argument" && e.message.startsWith(`resumeSession: options.${k}: unknown option: a resumed session keeps the session_meta its Trace holds`) && e.message.includes("; known: llm, newLLM"),
    );
  }
  // The store functions: a misspelt key would read, or import into, the
  // default store (memory in Node: an import lost when the program ends).
  const storeCases = [
    [() => floe.listSessions({ dir: "/tmp/x" }), "listSessions: options.dir: unknown option (did you mean store: { dir }?)"],
    [() => floe.listSessions({ stor: { dir: "/tmp/x" } }), "listSessions: options.stor: unknown option (did you mean store?)"],
    [() => floe.importSession("", { Store: { dir: "/tmp/x" } }), "importSession: options.Store: unknown option (did you mean store?)"],
    [() => floe.exportSession("x", { sotre: "memory" }), "exportSession: options.sotre: unknown option (did you mean store?)"],
    [() => floe.readSession("x", { sotre: "memory" }), "readSession: options.sotre: unknown option (did you mean store?)"],
    [() => floe.readSession(3), "readSession: id: want a string, got a number"],
    [() => floe.deleteSession("x", { store: { dir: "/tmp/x", dri: 1 } }), "deleteSession: store.dri: unknown option (did you mean dir?)"],
    [() => floe.listSessions({ store: { dir: "" } }), "listSessions: store.dir: want a directory's path, got an empty string"],
    [() => floe.createSession({ llm: llm(), store: { dir: 3 } }), "createSession: store.dir: want a directory's path (a string), got a number"],
  ];
  for (const [f, want] of storeCases) await assert.rejects(async () => f(), (e) => isBadArgument("")(e) && e.message.includes(want), want);
  // A model's options name only its own keys.
  assert.throws(() => floe.openai({ model: "m", apikey: "k" }), (e) => isBadArgument("")(e) && /options\.apikey: unknown option \(did you mean apiKey\?\); known: model, apiKey, baseURL, headers, maxTokens, temperature, topP, thinkingLevel, body, fetch, idleTimeoutMs, maxImageBytes, maxImages, gemini, images, startsInThinking$/.test(e.message));
  assert.throws(() => floe.anthropic({ model: "m", versoin: "x" }), (e) => isBadArgument("")(e) && e.message.includes("(did you mean version?); known: model, apiKey, baseURL, headers, maxTokens, temperature, topP, thinkingLevel, body, fetch, idleTimeoutMs, maxImageBytes, maxImages, browserAccess, version, cache"));
  // A class instance's own fields count; its methods and getters do not.
  class Config {
    maxTurns = 3;
    get extra() { return 1; }
  }
  floe.createSession({ llm: llm(), config: new Config() }).close();
});

// A compaction needs the fresh model context it continues in: without
// newLLM (or a built-in model as llm) it could never run, and nothing said so.
test("config.compaction without newLLM: bad_argument naming it, for createSession and resumeSession", async () => {
  const config = { compaction: { mode: "summarize", maxSessionTurns: 1 } };
  const says = (e) => isBadArgument("config.compaction")(e) && /needs newLLM/.test(e.message);
  assert.throws(() => floe.createSession({ meta: meta(), llm: llm(), config }), says);
  assert.throws(() => floe.createSession({ meta: meta(), llm: llm(), config: { compaction: { mode: "discard" } } }), says);
  const s = floe.createSession({ meta: meta("session-needs-newllm"), llm: llm(), store: "memory" });
  await s.close();
  await assert.rejects(floe.resumeSession("session-needs-newllm", { llm: llm(), store: "memory", config }), says);
  // With newLLM, or a built-in model as llm, it is accepted.
  floe.createSession({ meta: meta(), llm: llm(), newLLM: () => llm(), config }).close();
  floe.createSession({ meta: meta(), llm: floe.openaiCompatible({ baseURL: "http://127.0.0.1:9/v1", model: "m" }), config }).close();
});

test("abortGraceMs beyond a timer's range or negative: bad_argument", () => {
  for (const v of [-1, 2 ** 31, 2 ** 60, 0.5, NaN]) {
    assert.throws(() => floe.createSession({ meta: meta(), llm: llm(), abortGraceMs: v }), isBadArgument("abortGraceMs"));
  }
});

test("config as a class instance or an object of another realm is accepted", async () => {
  const { runInNewContext } = await import("node:vm");
  class Settings {
    maxTurns = 3;
  }
  for (const config of [new Settings(), runInNewContext("({ maxReconnects: 1 })"), Object.create(null)]) {
    const s = floe.createSession({ meta: meta(), llm: llm(), config });
    assert.equal(find(await collect(s.run("go")), "text").at(-1).payload.text, "hi");
  }
});

test("callback methods are read once, at createSession", async () => {
  const model = scriptedLLM(say("first"));
  const session = floe.createSession({ meta: meta(), llm: model });
  model.streamGenerate = () => {
    throw new Error("replaced");
  };
  assert.equal(find(await collect(session.run("go")), "text").at(-1).payload.text, "first");
});

test("the llm option is read once, by createSession, createSubagent and resumeSession (a getter read again could give another model, or throw after the session was made)", async () => {
  const stored = floe.createSession({ meta: meta(), llm: scriptedLLM(say("stored")), store: "memory" });
  await collect(stored.run("a"));
  await stored.close();
  const model = floe.openai({ apiKey: "k", model: "gpt-x", thinkingLevel: "high" });
  for (const [fn, make] of [
    ["createSession", (opts) => floe.createSession(opts)],
    ["createSubagent", (opts) => floe.createSubagent(opts)],
    ["resumeSession", (opts) => floe.resumeSession(stored.id, opts)],
  ]) {
    let reads = 0;
    const resume = fn === "resumeSession";
    const llm = resume ? scriptedLLM(say("resumed")) : model;
    const opts = resume ? {} : { meta: meta(), store: false };
    Object.defineProperty(opts, "llm", {
      enumerable: true,
      get() {
        if (++reads > 1) throw new Error("read again");
        return llm;
      },
    });
    const session = await make(opts);
    assert.equal(reads, 1, fn);
    await session.close();
  }
});

test("the models' options, tool()'s and subagentTool()'s spec, a model's headers: a getter that throws is bad_argument naming the option, each read once", () => {
  // base: what the call needs besides the key tried.
  const places = [
    ["openai: options", (o) => floe.openai(o), { model: "m", apiKey: "k" }, ["model", "apiKey", "baseURL", "headers", "maxTokens", "temperature", "topP", "thinkingLevel", "body", "fetch", "idleTimeoutMs", "maxImageBytes", "maxImages", "gemini", "images", "startsInThinking"]],
    ["openaiCompatible: options", (o) => floe.openaiCompatible(o), { model: "m", baseURL: "http://127.0.0.1:9/v1" }, ["baseURL", "gemini"]],
    ["openaiResponses: options", (o) => floe.openaiResponses(o), { model: "m", apiKey: "k" }, ["model", "startsInThinking"]],
    ["anthropic: options", (o) => floe.anthropic(o), { model: "m", apiKey: "k" }, ["model", "apiKey", "browserAccess", "version", "cache", "images"]],
    ["tool: spec", (o) => tool(o), { name: "t", description: "d", parameters: { type: "object" }, execute() {} }, ["name", "description", "parameters", "execute", "timeoutMs", "maxOutputLength"]],
    ["subagentTool: spec", (o) => floe.subagentTool(o), { create: () => ({}) }, ["name", "description", "create", "timeoutMs", "maxOutputLength"]],
  ];
  for (const [name, make, base, keys] of places) {
    for (const key of keys) {
      const o = { ...base };
      Object.defineProperty(o, key, { enumerable: true, get: boom });
      assert.throws(() => make(o), (e) => isBadArgument(`${name}.${key}: reading it threw: hostile read`)(e), `${name}.${key}`);
    }
    // Read once: a getter that gives the right value once, then throws.
    const o = { ...base };
    const [first] = keys;
    let reads = 0;
    Object.defineProperty(o, first, {
      enumerable: true,
      get() {
        if (++reads > 1) boom();
        return base[first];
      },
    });
    if (first in base) {
      make(o);
      assert.equal(reads, 1, `${name}.${first}`);
    }
  }
  const headers = {};
  Object.defineProperty(headers, "x-trace", { enumerable: true, get: boom });
  assert.throws(() => floe.openai({ model: "m", apiKey: "k", headers }), (e) => isBadArgument("openai: options.headers: reading it threw: hostile read")(e));
});

// ENGINE.md §2: a limit ≤ 0 disables it, so negative limits stay valid.
test("config limits that are ≤ 0 disable (maxTurns, compaction limits)", () => {
  const s = floe.createSession({
    meta: meta(),
    llm: llm(),
    newLLM: () => llm(),
    config: { maxTurns: -1, compaction: { mode: "discard", maxContextLength: -1, maxSessionTurns: 0 } },
  });
  assert.equal(s.compactability(), "empty");
});

// E-10.4: the largest backoff accepted is announced and slept as it is.
test("the largest reconnectBackoffMs is announced and slept exactly", async () => {
  const clock = instantClock();
  const max = 2 ** 31 - 1;
  const session = floe.createSession({
    meta: meta(),
    clock,
    config: { maxReconnects: 1, reconnectBackoffMs: max, reconnectBackoffMaxMs: max },
    llm: scriptedLLM(async function* () {
      yield usage();
      return { status: "failed", errorMessage: "down" };
    }, say("up")),
  });
  const ends = find(await collect(session.run("go")), "request_end").map((m) => m.payload);
  assert.equal(ends[0].retry_in_ms, max);
  assert.deepEqual(clock.sleeps, [max]);
  assert.equal(ends[1].status, "completed");
});

// ---- item: session_meta (PROTOCOL §2) and the session id ----

const required = ["session_id", "provider", "model_id", "model_context_window", "system_prompt", "agent_state", "workspace"];

test("createSession: every session_meta key mistyped is bad_argument naming it (a missing one takes its default)", () => {
  for (const key of required) {
    const m = meta();
    delete m[key];
    assert.doesNotThrow(() => floe.createSession({ meta: m, llm: llm() }), key);
    assert.doesNotThrow(() => floe.createSubagent({ meta: m, llm: llm() }), key);
    assert.throws(() => floe.createSession({ meta: { ...meta(), [key]: null }, llm: llm() }), isBadArgument(`createSession: meta.${key}`));
    assert.throws(() => floe.createSubagent({ meta: { ...meta(), [key]: null }, llm: llm() }), isBadArgument(`createSubagent: meta.${key}`));
    assert.throws(() => floe.createSession({ meta: { ...meta(), [key]: key === "model_context_window" ? true : 7 }, llm: llm() }), isBadArgument(`meta.${key}`));
  }
  assert.throws(() => floe.createSession({ meta: { ...meta(), source: "cron" }, llm: llm() }), isBadArgument("meta.source"));
  assert.throws(() => floe.createSession({ meta: { ...meta(), type: "x" }, llm: llm() }), isBadArgument("meta.type"));
  assert.throws(() => floe.createSession({ meta: [], llm: llm() }), isBadArgument("createSession: meta"));
});

test("createSession: a session id that cannot name Trace files is bad_argument, with every store", async (t) => {
  const { mkdtemp, rm, readdir } = await import("node:fs/promises");
  const { join } = await import("node:path");
  const { tmpdir } = await import("node:os");
  const dir = await mkdtemp(join(tmpdir(), "floe-ids-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  for (const id of ["../x", "a/b", "a\\b", ".hidden", "", "line\nbreak", "x".repeat(201)]) {
    for (const store of [false, "memory", { dir }]) {
      assert.throws(() => floe.createSession({ meta: meta(id), llm: llm(), store }), isBadArgument("createSession: meta.session_id"));
    }
  }
  assert.deepEqual(await readdir(dir), []);
  // The reference's format, and other plain ids, are fine.
  for (const id of ["session-2026-11-30-09-00-00-3f8a1c2d", "my session (2)", "日本語"]) {
    const s = floe.createSession({ meta: meta(id), llm: llm(), store: false });
    assert.equal(s.id, id);
  }
});

// ---- item: values a callback returns are read on the JavaScript side ----

/** Runs one session whose first request runs first(); the next says "recovered". Returns the messages. */
async function runWithFirst(first, extra = {}) {
  const clock = instantClock();
  const session = floe.createSession({
    meta: meta(),
    clock,
    config: { maxReconnects: 1, reconnectBackoffMs: 5 },
    llm: scriptedLLM(first, say("recovered")),
    ...extra,
  });
  const msgs = await collect(session.run("go", { approve: extra.approve }));
  await session.close();
  return { msgs, clock };
}

test("a model's outcome whose status getter throws: failed with that message, the ladder runs, the run ends", async () => {
  const { msgs, clock } = await runWithFirst(async function* () {
    yield* text("x");
    yield usage();
    return { get status() { throw new Error("status getter"); } };
  });
  const ends = find(msgs, "request_end").map((m) => m.payload);
  assert.equal(ends.length, 2, JSON.stringify(ends));
  assert.equal(ends[0].status, "failed");
  assert.match(ends[0].error_message, /status getter/);
  assert.equal(ends[0].retry_in_ms, 5);
  assert.deepEqual(clock.sleeps, [5]);
  assert.equal(ends[1].status, "completed");
});

// Go cannot even name a BigInt's type (syscall/js panics): none may reach it.
test("a model returning a BigInt or a Symbol as its outcome or status: failed, then retried, no Go panic", async () => {
  const logged = [];
  const error = console.error;
  console.error = (...a) => logged.push(a.join(" "));
  try {
    for (const v of [1n, Symbol("s")]) {
      for (const outcome of [v, { status: v }, { status: "failed", errorMessage: v }]) {
        const { msgs } = await runWithFirst(async function* () {
          yield usage();
          return outcome;
        });
        const ends = find(msgs, "request_end").map((m) => m.payload);
        assert.deepEqual(ends.map((e) => e.status), ["failed", "completed"]);
        assert.doesNotMatch(ends[0].error_message, /panic/);
      }
    }
  } finally {
    console.error = error;
  }
  assert.deepEqual(logged, []);
});

test("a model's outcome with a key it does not have (a misspelt permanent) fails the request naming the key", async () => {
  for (const [outcome, key] of [[{ status: "failed", permanet: true }, "permanet"], [{ status: "failed", error: "quota" }, "error"]]) {
    const { msgs } = await runWithFirst(async function* () {
      yield usage();
      return outcome;
    });
    const ends = find(msgs, "request_end").map((m) => m.payload);
    assert.deepEqual(ends.map((e) => e.status), ["failed", "completed"]);
    assert.equal(ends[0].error_message, `llm.streamGenerate: outcome.${key}: unknown key; known: status, errorMessage, permanent, retryAfterMs`);
  }
});

for (const [what, make] of Object.entries(hostile)) {
  for (const [where, outcome] of [
    ["the outcome", (v) => v],
    ["outcome.status", (v) => ({ status: v })],
    ["outcome.errorMessage", (v) => ({ status: "failed", errorMessage: v })],
    ["outcome.permanent", (v) => ({ status: "failed", permanent: v })],
  ]) {
    test(`a model returning ${what} as ${where}: failed, then retried`, async () => {
      const { msgs } = await runWithFirst(async function* () {
        yield usage();
        return outcome(make());
      });
      const ends = find(msgs, "request_end").map((m) => m.payload);
      assert.deepEqual(ends.map((e) => e.status), ["failed", "completed"], JSON.stringify(ends));
      assert.ok(ends[0].error_message, "no error message");
    });
  }

  test(`a model yielding ${what}: malformed, then retried`, async () => {
    // Not an async generator: its yield would await the value (reading then) and throw itself.
    let n = 0;
    const { msgs } = await runWithFirst(() => ({
      [Symbol.asyncIterator]() { return this; },
      next: async () => (n++ === 0 ? { done: false, value: make() } : { done: true }),
    }));
    assert.deepEqual(find(msgs, "request_end").map((m) => m.payload.status), ["malformed", "completed"]);
  });

  test(`a model yielding a message whose payload is ${what}: malformed, then retried`, async () => {
    const { msgs } = await runWithFirst(async function* () {
      yield { type: "model_msg", payload: make() };
    });
    assert.deepEqual(find(msgs, "request_end").map((m) => m.payload.status), ["malformed", "completed"]);
  });

  test(`a model throwing ${what}: failed, then retried`, async () => {
    const { msgs } = await runWithFirst(() => {
      throw make();
    });
    assert.deepEqual(find(msgs, "request_end").map((m) => m.payload.status), ["failed", "completed"]);
  });

  test(`a model whose iterator result is ${what}: failed, then retried`, async () => {
    const { msgs } = await runWithFirst(() => ({ [Symbol.asyncIterator]() { return this; }, next: async () => make() }));
    assert.deepEqual(find(msgs, "request_end").map((m) => m.payload.status), ["failed", "completed"]);
  });

  test(`an approver resolving to ${what}: deny`, async () => {
    const session = floe.createSession({
      meta: meta(),
      llm: scriptedLLM(async function* () {
        yield toolCall("t1");
        yield usage();
        return { status: "completed" };
      }, say("done")),
      environment: { executeTool: () => assert.fail("a denied tool ran") },
    });
    const msgs = await collect(session.run("go", { approve: async () => make() }));
    assert.deepEqual(find(msgs, "approval_decision").map((m) => m.payload.decision), ["deny"]);
    assert.equal(msgs.at(-1).payload.type, "request_end");
  });

  test(`a tool returning or throwing ${what}: the run goes on`, async () => {
    for (const executeTool of [
      async function* ({ toolCall: c }) {
        yield toolOutput(c.payload.tool_call_id, "ok");
        return make();
      },
      () => {
        throw make();
      },
      () => make(),
    ]) {
      const session = floe.createSession({
        meta: meta(),
        llm: scriptedLLM(async function* () {
          yield toolCall("t1");
          yield usage();
          return { status: "completed" };
        }, say("done")),
        environment: { executeTool },
      });
      const msgs = await collect(session.run("go", { approve: () => "allow" }));
      assert.equal(find(msgs, "tool_call_output").length, 1);
      assert.equal(find(msgs, "text").at(-1).payload.text, "done");
    }
  });

  test(`a clock returning ${what}: reported, the run goes on`, async () => {
    const { msgs, diags } = await runWithClock({ now: () => make(), sleep: async () => make() });
    assert.deepEqual(find(msgs, "request_end").map((m) => m.payload.status), ["failed", "completed"]);
    assert.ok(diags.some((d) => d.kind === "clock"), JSON.stringify(diags));
  });

  test(`loadHistory resolving to ${what}: the resumed run goes on`, async () => {
    const id = `hostile-history-${what.replace(/\W+/g, "-")}`;
    const first = floe.createSession({ meta: meta(id), llm: llm() });
    await collect(first.run("one"));
    await first.close();
    const l = scriptedLLM(say("two"));
    l.loadHistory = async () => make();
    const session = await floe.resumeSession(id, { llm: l });
    const msgs = await collect(session.run("again"));
    assert.equal(find(msgs, "text").at(-1).payload.text, "two");
  });
}

test("JSON a callback cannot encode: malformed for a model, [tool error] for a tool, bad_argument for approve()", async () => {
  for (const make of Object.values(unencodable)) {
    const { msgs } = await runWithFirst(async function* () {
      yield { type: "model_msg", payload: { type: "text", role: "assistant", text: "x", extra: make() } };
    });
    assert.deepEqual(find(msgs, "request_end").map((m) => m.payload.status), ["malformed", "completed"]);

    let approveErr;
    const session = floe.createSession({
      meta: meta(),
      llm: scriptedLLM(async function* () {
        yield toolCall("t1");
        yield usage();
        return { status: "completed" };
      }, say("done")),
      environment: {
        async *executeTool({ toolCall: c, approve }) {
          approveErr = await approve({ ...c, extra: make() }).catch((e) => e);
          yield { type: "model_msg", payload: { type: "tool_call_output", role: "user", output: "x", tool_call_id: c.payload.tool_call_id, stop_reason: "completed", extra: make() } };
        },
      },
    });
    const out = await collect(session.run("go", { approve: () => "allow" }));
    isBadArgument("approve: toolCall")(approveErr);
    const o = find(out, "tool_call_output");
    assert.equal(o.length, 1);
    assert.match(o[0].payload.output, /^\[tool error\]/);
  }
});

// callingSession is a session whose model calls the tool t1 once, then
// says "done"; the tool runs during(approve), its approve(), then answers.
function callingSession(during, opts = {}) {
  return floe.createSession({
    meta: meta(),
    llm: scriptedLLM(async function* () {
      yield toolCall("t1");
      yield usage();
      return { status: "completed" };
    }, say("done")),
    environment: {
      async *executeTool({ toolCall: c, approve }) {
        await during(approve);
        yield toolOutput(c.payload.tool_call_id, "ok");
      },
    },
    ...opts,
  });
}

test("a tool's approve() given a message that is not a tool call (an event, a text, a fragment of a call) rejects bad_argument naming it; the run's approver is not asked", async () => {
  const notCalls = [
    [{ type: "event_msg", payload: { type: "abort", reason: "x" } }, "event_msg abort"],
    [{ type: "model_msg", payload: { type: "text", role: "user", text: "rm -rf /" } }, "model_msg text"],
    [{ type: "model_msg", payload: { type: "partial_tool_call", role: "assistant", event_type: "start", name: "rm", arguments: "", tool_call_id: "z" } }, "model_msg partial_tool_call"],
  ];
  const asked = [];
  const results = [];
  const session = callingSession(async (approve) => {
    for (const [m] of notCalls) results.push(await approve(m).catch((e) => e));
    // A child's call, origin and all, is asked.
    results.push(await approve({ ...toolCall("z", "rm"), origin: ["child-1"] }));
  });
  await collect(session.run("go", { approve: (call) => (asked.push(call), "allow") }));
  notCalls.forEach(([, got], i) => {
    isBadArgument("approve: toolCall")(results[i]);
    assert.match(results[i].message, new RegExp(`want a model_msg tool_call, got ${got}$`));
  });
  assert.equal(results.at(-1), "allow");
  assert.deepEqual(asked.map((c) => [c.payload.tool_call_id, c.origin ?? []]), [["t1", []], ["z", ["child-1"]]]);
});

test("a tool's approve() when the run's approver throws, rejects or answers no decision: deny with an approver diagnostic, as the engine treats it (E-5.4), not an internal error", async () => {
  const answers = [
    ["throws", () => boom(), /: hostile read \(treated as deny\)$/],
    ["rejects", () => Promise.reject(new Error("no way")), /: no way \(treated as deny\)$/],
    ["resolves a number", async () => 5, /: resolved to a number, want "allow", "deny" or "forbidden" \(treated as deny\)$/],
    ["answers another word", () => "maybe", /returned "maybe", not allow\|deny\|forbidden \(treated as deny\)$/],
  ];
  for (const [what, answer, message] of answers) {
    const results = [];
    const diags = [];
    const session = callingSession(
      async (approve) => results.push(await approve({ ...toolCall("z", "rm"), origin: ["child-1"] }).catch((e) => e)),
      { onDiagnostic: (d) => diags.push(d) },
    );
    let n = 0;
    await collect(session.run("go", { approve: (call) => (++n === 1 ? "allow" : answer(call)) }));
    assert.deepEqual(results, ["deny"], what);
    assert.deepEqual(diags.map((d) => d.kind), ["approver"], what);
    assert.match(diags[0].message, message, what);
    assert.match(diags[0].message, /^approver for z/, what);
  }
});

// ---- item: close() during a run ends the stream as an abort does ----

/**
 * A session whose Trace is captured; returns {session, records}. The
 * model streams "a", then runs during(session, signal) and honours its
 * signal.
 */
function closable(during, where = "model") {
  const records = [];
  let session;
  const waitAbort = (signal) => new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", resolve)));
  const model = async function* ({ signal }) {
    yield* text("a");
    if (where === "model") {
      during(session);
      await waitAbort(signal);
      return { status: "aborted" };
    }
    yield toolCall("t1");
    yield usage();
    return { status: "completed" };
  };
  session = floe.createSession({
    meta: meta(),
    store: false,
    trace: { write: (r) => records.push(r), rotate() {} },
    llm: scriptedLLM(model, say("never")),
    environment: {
      async *executeTool({ signal }) {
        during(session);
        await waitAbort(signal);
        throw new Error("stopped");
      },
    },
  });
  const approve = where === "approver" ? () => (during(session), never()) : () => "allow";
  return { session, records, approve };
}

/** The stream without partials equals the Trace without its session_meta, and ends with abort. */
function assertEndsAsAbort(msgs, records, requested = true) {
  assert.equal(msgs.at(-1).payload.type, "abort", types(msgs).join(" "));
  assert.deepEqual(msgs.at(-1).payload, { type: "abort", reason: "aborted by user" });
  const streamed = msgs.filter((m) => !m.payload.type?.startsWith("partial_"));
  // The Trace also holds the session_meta and the run's input.
  const isInput = (r) => r.payload.type === "text" && r.payload.role === "user" && r.payload.text === "go";
  assert.deepEqual(streamed, records.filter((r) => r.type !== "session_meta" && !isInput(r)));
  if (requested) assert.ok(find(msgs, "request_end").length >= 1, "no request_end");
}

for (const where of ["model", "tool", "approver"]) {
  test(`close() called inside the ${where}: the stream ends as an abort does, identical to the Trace`, async () => {
    let closed;
    const { session, records, approve } = closable((s) => (closed ??= s.close()), where);
    const msgs = await collect(session.run("go", { approve }));
    assert.ok(closed, "close() was not called");
    await closed;
    assertEndsAsAbort(msgs, records);
    if (where === "model") assert.equal(find(msgs, "request_end")[0].payload.status, "aborted");
    assert.throws(() => session.run("x"), { name: "FloeError", code: "closed" });
  });
}

test("close() while the consumer does not pull: resolves after the run ended; the consumer still gets the rest", async () => {
  let release;
  const gate = new Promise((r) => (release = r));
  const records = [];
  const session = floe.createSession({
    meta: meta(),
    store: false,
    trace: { write: (r) => records.push(r), rotate() {} },
    llm: scriptedLLM(async function* ({ signal }) {
      yield* text("a");
      release();
      await new Promise((r) => signal.addEventListener("abort", r));
      yield usage();
      return { status: "aborted" };
    }),
  });
  const it = session.run("go")[Symbol.asyncIterator]();
  const msgs = [];
  for (;;) {
    const r = await it.next();
    msgs.push(r.value);
    if (r.value.payload.type === "partial_text") break;
  }
  await gate;
  await session.close(); // nobody pulls meanwhile
  assert.equal(records.at(-1).payload.type, "abort", "close() resolved before the run ended");
  for (let r = await it.next(); !r.done; r = await it.next()) msgs.push(r.value);
  assertEndsAsAbort(msgs, records);
  assert.equal(find(msgs, "request_end")[0].payload.status, "aborted");
  assert.equal(await session.close(), undefined, "a second close() resolves too");
});

test("close() after a return() not awaited (a Stop button's): resolves once the run has ended and its records are stored", async () => {
  // The model ignores its abort: the run ends only when the engine
  // abandons it, abortGraceMs later. close() resolved at once, before
  // then, with the abort not yet in the Trace.
  const records = [];
  const session = floe.createSession({
    meta: meta(),
    store: false,
    abortGraceMs: 300,
    trace: { write: (r) => records.push(r), rotate() {} },
    llm: scriptedLLM(async function* () {
      yield* text("a");
      await never();
    }),
  });
  const it = session.run("go")[Symbol.asyncIterator]();
  await it.next();
  let runEnded = false;
  const stopped = it.return().then(() => (runEnded = true));
  await session.close();
  assert.ok(runEnded, "close() resolved before the run's return() did");
  assert.equal(records.at(-1).payload.type, "abort", "close() resolved before the run's records were stored");
  await stopped;
  assert.deepEqual(await it.next(), { value: undefined, done: true });
});

test("close() before the first next(): the run streams only its abort, as in the Trace", async () => {
  const records = [];
  const session = floe.createSession({ meta: meta(), store: false, trace: { write: (r) => records.push(r) }, llm: llm() });
  const stream = session.run("go");
  await session.close();
  const msgs = await collect(stream);
  assert.deepEqual(types(msgs), ["abort"]);
  assertEndsAsAbort(msgs, records, false);
});

test("close() during a manual compaction: it ends as an aborted compaction, as in the Trace", async () => {
  const records = [];
  const session = floe.createSession({
    meta: meta(),
    store: false,
    trace: { write: (r) => records.push(r) },
    config: { compaction: { mode: "summarize" } },
    llm: llm(),
    newLLM: () =>
      scriptedLLM(async function* ({ signal }) {
        if (!signal.aborted) await new Promise((r) => signal.addEventListener("abort", r));
        return { status: "aborted" };
      }),
  });
  await collect(session.run("go"));
  const stream = session.compact();
  const msgs = [(await stream.next()).value];
  await session.close();
  msgs.push(...(await collect(stream)));
  assert.deepEqual(types(msgs), ["compaction_begin", "compaction_end"]);
  assert.equal(msgs[1].payload.status, "aborted");
  // The Trace also holds the compaction's own request; the stream's messages are in it, in order, compaction_end last.
  const at = records.findIndex((r) => r.payload.type === "compaction_begin");
  assert.deepEqual(records[at], msgs[0]);
  assert.deepEqual(records.at(-1), msgs[1]);
});

test("close() of a session that never ran, and twice, resolves", async () => {
  const session = floe.createSession({ meta: meta(), llm: llm() });
  const a = session.close();
  assert.equal(session.close(), a);
  await a;
  assert.throws(() => session.steer("x"), { name: "FloeError", code: "closed" });
});

test("a run's signal is listened to only while the run lives, also when it cannot start", async () => {
  const ac = new AbortController();
  const listeners = () => getEventListeners(ac.signal, "abort").length;
  const session = floe.createSession({ meta: meta(), llm: scriptedLLM(say("a"), say("b")) });
  await collect(session.run("one", { signal: ac.signal }));
  assert.equal(listeners(), 0, "after a run");
  const running = session.run("two", { signal: ac.signal });
  assert.throws(() => session.run("three", { signal: ac.signal }), { code: "session_busy" });
  assert.equal(listeners(), 1, "the busy run() left a listener");
  await collect(running);
  assert.equal(listeners(), 0, "after the second run");
  assert.throws(() => session.run([{ type: "bogus" }], { signal: ac.signal }), { code: "bad_argument" });
  assert.equal(listeners(), 0, "after a refused input");
});

test("one signal shared by many runs at once holds one listener on it, and its abort ends them all", async () => {
  // A Stop button's or a server's shutdown signal given to 30 runs: one
  // listener each made Node warn of a leak past ten.
  const ac = new AbortController();
  const listeners = () => getEventListeners(ac.signal, "abort").length;
  const warnings = [];
  const onWarning = (w) => warnings.push(w.name);
  process.on("warning", onWarning);
  try {
    let started = 0;
    let allStarted;
    const all = new Promise((r) => (allStarted = r));
    const waiting = () =>
      scriptedLLM(async function* ({ signal }) {
        yield* text("a");
        if (++started === 30) allStarted();
        await new Promise((r) => (signal.aborted ? r() : signal.addEventListener("abort", r)));
        return { status: "aborted" };
      });
    const sessions = Array.from({ length: 30 }, (_, i) => floe.createSession({ meta: meta("shared-" + i), llm: waiting() }));
    const runs = sessions.map((s) => collect(s.run("go", { signal: ac.signal })));
    await all;
    assert.equal(listeners(), 1);
    ac.abort();
    for (const msgs of await Promise.all(runs)) assert.deepEqual(msgs.at(-1).payload, { type: "abort", reason: "aborted by user" });
    assert.equal(listeners(), 0);
    // A run that ends on its own lets go of it too; the others keep it.
    const ac2 = new AbortController();
    const s = floe.createSession({ meta: meta("shared-a"), llm: scriptedLLM(say("a")) });
    const t = floe.createSession({ meta: meta("shared-b"), llm: waiting() });
    const long = collect(t.run("go", { signal: ac2.signal }));
    await collect(s.run("go", { signal: ac2.signal }));
    assert.equal(getEventListeners(ac2.signal, "abort").length, 1);
    ac2.abort();
    assert.equal((await long).at(-1).payload.type, "abort");
    assert.equal(getEventListeners(ac2.signal, "abort").length, 0);
    await new Promise((r) => setImmediate(r)); // a warning is emitted on the next tick
    assert.deepEqual(warnings, []);
  } finally {
    process.off("warning", onWarning);
  }
});

// ---- item: steer ids and unsteer ----

test("steer returns an id; unsteer withdraws what is still pending and says whether it was", async () => {
  let s;
  const got = {};
  const session = (s = floe.createSession({
    meta: meta(),
    llm: scriptedLLM(
      async function* () {
        got.keep = s.steer("keep this");
        got.drop = s.steer([{ type: "model_msg", payload: { type: "text", role: "user", text: "drop this" } }]);
        got.blank = s.steer("   ");
        got.unsteerDrop = s.unsteer(got.drop);
        got.unsteerDropAgain = s.unsteer(got.drop);
        got.unsteerBlank = s.unsteer(got.blank);
        got.unsteerUnknown = s.unsteer(987654);
        assert.throws(() => s.steer([{ type: "bogus" }]), isBadArgument("steer: input"));
        assert.throws(() => s.steer([{ type: "model_msg", payload: { type: "text", role: "user", text: "x", stop_reason: "nope" } }]), isBadArgument("steer: input"));
        for (const bad of [0, -1, 1.5, "1", null, 2 ** 60]) assert.throws(() => s.unsteer(bad), isBadArgument("unsteer: id"));
        yield* text("a");
        yield usage();
        return { status: "completed" };
      },
      async function* () {
        got.unsteerDelivered = s.unsteer(got.keep);
        yield* text("b");
        yield usage();
        return { status: "completed" };
      },
    ),
  }));
  assert.equal(session.steer("nobody runs"), false);
  const msgs = await collect(session.run("go"));
  for (const k of ["keep", "drop", "blank"]) assert.ok(Number.isSafeInteger(got[k]) && got[k] >= 1, `${k}: ${got[k]}`);
  assert.equal(new Set([got.keep, got.drop, got.blank]).size, 3);
  assert.equal(got.unsteerDrop, true);
  assert.equal(got.unsteerDropAgain, false);
  assert.equal(got.unsteerBlank, false);
  assert.equal(got.unsteerUnknown, false);
  assert.equal(got.unsteerDelivered, false);
  const steered = find(msgs, "text").filter((m) => m.payload.role === "user").map((m) => m.payload.text);
  assert.deepEqual(steered, ["[user_steering]\nkeep this\n[/user_steering]"]);
  assert.equal(session.unsteer(got.keep), false);
});

// ---- the bar: no memory grows inside Go ----

// growth runs f n times to warm up, then twice n times more, and returns
// how much the module's memory grew in the smaller of those two windows.
// The warm-up is as long as a window: until its collector has run a few
// cycles, Go's heap keeps growing towards its target (a few MB) whatever
// the program keeps. After that the memory still moves by up to about
// 1 MB in one window now and then (the heap's spans), but not in every
// one, while a leak grows it in every window.
async function growth(n, f) {
  for (let i = 0; i < n; i++) await f(i);
  const mem = () => floe[Symbol.for("floe.debug")].memoryBytes();
  const windows = [];
  for (let w = 0; w < 2; w++) {
    const before = mem();
    for (let i = 0; i < n; i++) await f(i);
    windows.push(mem() - before);
  }
  return Math.min(...windows);
}

const MB = 1 << 20;

test("memory: 2,000 createSession calls with a throwing config getter grow wasm memory by < 1 MB", async (t) => {
  const config = { get maxTurns() { throw new Error("getter"); } };
  const grew = await growth(2000, () => {
    assert.throws(() => floe.createSession({ meta: meta(), llm: llm(), config }), isBadArgument("config.maxTurns"));
  });
  t.diagnostic(`wasm memory grew ${grew} bytes`);
  assert.ok(grew < MB, `grew ${grew} bytes`);
});

test("memory: 2,000 hostile arguments across the API grow wasm memory by < 1 MB", async (t) => {
  const makers = Object.values(hostile);
  const grew = await growth(2000, async (i) => {
    const [name, place] = argumentPlaces[i % argumentPlaces.length];
    if (name.startsWith("resumeSession") || name.startsWith("import")) return; // they touch the store
    const v = makers[i % makers.length]();
    try {
      const r = place(v);
      if (typeof r?.then === "function") await r;
      else if (typeof r?.next === "function") await r.next();
    } catch (e) {
      assert.equal(e.name, "FloeError", `${name}: ${e.stack}`);
    }
    await closeOpened(); // the sessions it opened to reach the argument are not what is measured
  });
  t.diagnostic(`wasm memory grew ${grew} bytes`);
  assert.ok(grew < MB, `grew ${grew} bytes`);
});

test("memory: 2,000 sessions created, run and closed grow wasm memory by < 1 MB", async (t) => {
  const grew = await growth(2000, async (i) => {
    const session = floe.createSession({ meta: meta(`mem-${i}`), store: false, llm: llm() });
    await collect(session.run("hi"));
    await session.close();
  });
  t.diagnostic(`wasm memory grew ${grew} bytes`);
  assert.ok(grew < MB, `grew ${grew} bytes`);
});

test("memory: 2,000 sessions closed mid-run grow wasm memory by < 1 MB", async (t) => {
  const grew = await growth(2000, async (i) => {
    let s;
    s = floe.createSession({
      meta: meta(`memc-${i}`),
      store: false,
      llm: scriptedLLM(async function* ({ signal }) {
        yield* text("a");
        s.close(); // aborts the signal at once
        assert.equal(signal.aborted, true);
        return { status: "aborted" };
      }),
    });
    const msgs = await collect(s.run("hi"));
    assert.equal(msgs.at(-1).payload.type, "abort");
  });
  t.diagnostic(`wasm memory grew ${grew} bytes`);
  assert.ok(grew < MB, `grew ${grew} bytes`);
});

// A run whose callbacks all answer at once is one chain of microtasks:
// next() hands a message over in a macrotask now and then, so timers (and,
// in a page, UI events) run during it. Here the model calls a tool on
// every request, which no approver allows, for ever; a timer aborts it.
test("a run whose callbacks answer at once lets timers run: a setTimeout's abort ends it", async () => {
  let i = 0;
  const session = floe.createSession({
    store: false,
    llm: { async *streamGenerate() { yield toolCall("c" + ++i, "t"); } },
  });
  const ac = new AbortController();
  let firedAt = -1;
  let n = 0;
  setTimeout(() => {
    firedAt = n;
    ac.abort();
  }, 0);
  let last;
  for await (const m of session.run("go", { signal: ac.signal })) {
    last = m;
    if (++n === 500_000) break; // far beyond what the timer's first chance takes
  }
  assert.ok(firedAt >= 0, `the timer did not fire in ${n} messages`);
  assert.equal(last.payload.type, "abort");
  await session.close();
});

// The chain is measured in time, not in messages: when each message takes
// a millisecond (a consumer that renders, or a first run while V8
// compiles), a macrotask passes within about SLICE_MS of them. The clock
// used to be read every 256 messages: a first run went 300 ms without a
// macrotask.
test("a chain of slow messages hands one over in a macrotask within about 16 ms of them", async () => {
  let i = 0;
  const session = floe.createSession({
    store: false,
    llm: { async *streamGenerate() { yield toolCall("c" + ++i, "t"); } },
  });
  let ticks = 0;
  let done = false;
  const tick = () => {
    ticks++;
    if (!done) setImmediate(tick);
  };
  setImmediate(tick);
  let n = 0;
  let runStart = 0; // the first message seen at the current tick count
  let at = -1;
  let longest = 0;
  for await (const m of session.run("go")) {
    if (ticks !== at) {
      at = ticks;
      runStart = n;
    }
    longest = Math.max(longest, n - runStart + 1);
    for (const t = performance.now(); performance.now() - t < 1; ); // a millisecond's work per message
    if (++n === 300) break;
  }
  done = true;
  await session.close();
  assert.ok(ticks > 5, `${ticks} macrotasks in ${n} messages`);
  assert.ok(longest <= 40, `${longest} messages of a millisecond each went by without a macrotask`);
});

test("a clock's now() of NaN, Infinity or past the year 2262, and a sleep() resolving what it cannot mean, are reported as such; the run goes on", async () => {
  for (const [now, sleep, says] of [
    [NaN, true, "clock.now: returned NaN, want a number of milliseconds since 1970"],
    [Infinity, true, "clock.now: returned Infinity, want a number of milliseconds since 1970"],
    [1e20, true, "clock.now: returned 100000000000000000000, want a number of milliseconds since 1970 (a time of the years 1678 to 2262)"],
    [Date.UTC(2026, 0, 2), "yes", "clock.sleep: resolved a string, want true or undefined (slept) or false (aborted first); taken as slept"],
  ]) {
    const { msgs, diags } = await runWithClock({ now: () => now, sleep: async () => sleep });
    assert.deepEqual(find(msgs, "request_end").map((m) => m.payload.status), ["failed", "completed"]);
    assert.ok(diags.some((d) => d.kind === "clock" && d.message.startsWith(says)), `${says}\n${JSON.stringify(diags)}`);
    if (typeof now === "number" && Number.isFinite(now) && now < 1e15) assert.ok(msgs.every((m) => m.timestamp.startsWith("2026-01-02")), "the clock's time stamps the messages");
  }
});

// runWithClock runs a request that fails, then its retry, with clock: the
// stream and the diagnostics.
async function runWithClock(clock) {
  const diags = [];
  const session = floe.createSession({
    meta: meta(),
    config: { maxReconnects: 1, reconnectBackoffMs: 1 },
    clock,
    store: false,
    onDiagnostic: (d) => diags.push(d),
    llm: scriptedLLM(async function* () {
      yield usage();
      return { status: "failed" };
    }, say("up")),
  });
  const msgs = await collect(session.run("go"));
  await session.close();
  return { msgs, diags };
}

test("an Error of another realm (node:vm, an iframe) thrown by a model is its message (E-1.3), not its String()", async () => {
  const vm = await import("node:vm");
  const session = floe.createSession({ meta: meta(), store: false, config: { maxReconnects: 0 }, llm: { async *streamGenerate() { throw vm.runInNewContext('new RangeError("xr")'); } } });
  const msgs = await collect(session.run("go"));
  await session.close();
  assert.equal(find(msgs, "request_end")[0].payload.error_message, "xr");
});
