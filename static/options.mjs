// Session option defaults: createSession({ llm }) needs nothing else.
import { deriveTools } from "./tool.mjs";
import { badArg, errMessage, floeError, isObject, knownKeys, ownKeys, sessionIdArg } from "./internal.mjs";

// The options of createSession and createSubagent (floe.d.ts
// SessionOptions), of resumeSession (ResumeOptions), and the keys of a
// session_meta payload (PROTOCOL.md §2).
const RESUME_KEYS = ["llm", "newLLM", "environment", "tools", "config", "clock", "trace", "onDiagnostic", "abortGraceMs", "foldInputImages", "store"];
const SESSION_KEYS = new Set([...RESUME_KEYS, "meta", "system"]);
const RESUME_KEY_SET = new Set(RESUME_KEYS);
const META_KEYS = new Set(["type", "session_id", "provider", "model_id", "model_context_window", "system_prompt", "agent_state", "workspace", "source"]);

const pad = (n) => String(n).padStart(2, "0");

/**
 * A session id in the reference's format, session-YYYY-MM-DD-HH-mm-ss-<8 hex>,
 * from the UTC time of now (milliseconds) and 32 random bits.
 */
export function newSessionId(now = Date.now()) {
  if (!Number.isFinite(now) || now < 0 || now > 8.64e15) throw badArg("newSessionId: now", "a time in milliseconds since 1970 (Date.now())", now);
  const d = new Date(now);
  return (
    `session-${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}-` +
    `${pad(d.getUTCHours())}-${pad(d.getUTCMinutes())}-${pad(d.getUTCSeconds())}-${random32().toString(16).padStart(8, "0")}`
  );
}

// random32 returns 32 random bits from crypto.getRandomValues, drawn 64
// values at a time: in Node one call costs about 10 µs, whatever its size.
const randoms = new Uint32Array(64);
let randomsLeft = 0;
function random32() {
  if (randomsLeft === 0) {
    globalThis.crypto.getRandomValues(randoms);
    randomsLeft = randoms.length;
  }
  const v = randoms[--randomsLeft];
  randoms[randomsLeft] = 0; // handed out once: not kept
  return v;
}

/** The default workspace: the page's origin, the working directory in Node, else "". */
function defaultWorkspace() {
  const origin = globalThis.location?.origin;
  if (typeof origin === "string" && origin !== "null") return origin;
  if (typeof process === "object" && typeof process.cwd === "function") {
    try {
      return process.cwd();
    } catch {}
  }
  return "";
}

/** Reads o[key]; a throwing getter or Proxy trap is bad_argument naming it. */
export function read(o, key, name) {
  try {
    return o[key];
  } catch (e) {
    throw floeError("bad_argument", `${name}: reading it threw: ${errMessage(e)}`);
  }
}

/**
 * Fills in the session_meta (when withMeta) and derives tools and
 * environment from tool() entries. meta keys given win; system sets
 * system_prompt; provider, model_id and model_context_window come from the
 * llm object (provider, modelId or a string model, contextWindow). It
 * returns the options it made, {tools, environment, llm, meta?}, which
 * replace those of opts (llm as read: once); the caller reads every other
 * option from opts, key by key.
 * (An object inheriting from opts cost about 2 µs: V8 remakes an object
 * that becomes a prototype.)
 */
export function applyDefaults(opts, fn, withMeta, source) {
  if (!isObject(opts)) return {}; // the caller names the error
  if (!withMeta) {
    // A resumed session's meta and system prompt are its Trace's.
    for (const k of ownKeys(opts, `${fn}: options`)) {
      if (k === "meta" || k === "system") {
        const what = k === "system" ? "its system prompt with it" : "as its session was created";
        throw floeError("bad_argument", `${fn}: options.${k}: unknown option: a resumed session keeps the session_meta its Trace holds, ${what}; known: ${RESUME_KEYS.join(", ")}`);
      }
    }
  }
  knownKeys(opts, withMeta ? SESSION_KEYS : RESUME_KEY_SET, `${fn}: options`);
  const own = {};
  own.llm = read(opts, "llm", `${fn}: llm`);
  const derived = deriveTools(read(opts, "tools", `${fn}: tools`), read(opts, "environment", `${fn}: environment`), fn, read);
  own.tools = derived.tools;
  own.environment = derived.environment;
  const system = read(opts, "system", `${fn}: system`);
  if (system != null && typeof system !== "string") throw badArg(`${fn}: system`, "a string", system);
  if (withMeta) {
    const meta = read(opts, "meta", `${fn}: meta`);
    if (meta != null && !isObject(meta)) throw badArg(`${fn}: meta`, "a session_meta payload object", meta);
    let given;
    try {
      if (meta != null && Object.prototype.toString.call(meta) !== "[object Object]") {
        throw badArg(`${fn}: meta`, "a session_meta payload object", meta);
      }
      given = meta == null ? [] : Object.entries(meta);
      if (meta != null) knownKeys(meta, META_KEYS, `${fn}: meta`);
    } catch (e) {
      if (e?.name === "FloeError") throw e;
      throw floeError("bad_argument", `${fn}: meta: reading it threw: ${errMessage(e)}`);
    }
    const sp = given.find(([k]) => k === "system_prompt")?.[1];
    if (system != null && sp != null && sp !== system) {
      throw floeError("bad_argument", `${fn}: system and meta.system_prompt differ: give one`);
    }
    const m = isObject(own.llm) ? own.llm : {};
    const str = (what) => {
      const v = read(m, what, `${fn}: llm.${what}`);
      if (v == null) return undefined;
      if (typeof v !== "string") throw badArg(`${fn}: llm.${what}`, "a string", v);
      return v;
    };
    const window = read(m, "contextWindow", `${fn}: llm.contextWindow`);
    if (window != null && !(typeof window === "string" || (typeof window === "number" && Number.isFinite(window)))) {
      throw badArg(`${fn}: llm.contextWindow`, "a number", window);
    }
    // What JSON would change (a NaN to null, a function left out) is named
    // here: Go would see null, or the key missing.
    for (const [k, v] of given) {
      if (v === undefined || k === "type") continue;
      if (k === "model_context_window" ? !(typeof v === "string" || (typeof v === "number" && Number.isFinite(v))) : typeof v !== "string") {
        throw badArg(`${fn}: meta.${k}`, k === "model_context_window" ? "a number of tokens" : "a string", v);
      }
      if (k === "session_id") sessionIdArg(v, `${fn}: meta.session_id`);
    }
    own.meta = {
      session_id: given.some(([k, v]) => k === "session_id" && v !== undefined) ? "" : newSessionId(), // a given id replaces it below
      provider: str("provider") ?? "custom",
      model_id: str("modelId") ?? (typeof read(m, "model", `${fn}: llm.model`) === "string" ? m.model : "custom"),
      model_context_window: window ?? 0,
      system_prompt: system ?? "",
      agent_state: "floe",
      workspace: defaultWorkspace(),
      ...(source ? { source } : {}),
    };
    for (const [k, v] of given) if (v !== undefined) own.meta[k] = v; // an undefined key takes the default
  }
  return own;
}
