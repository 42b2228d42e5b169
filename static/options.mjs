// Session option defaults: createSession({ llm }) needs nothing else.
import { deriveTools } from "./tool.mjs";
import { badArg, floeError, isObject } from "./internal.mjs";

const pad = (n) => String(n).padStart(2, "0");

/**
 * A session id in the reference's format, session-YYYY-MM-DD-HH-mm-ss-<8 hex>,
 * from the UTC time of now (milliseconds) and 32 random bits.
 */
export function newSessionId(now = Date.now()) {
  const d = new Date(now);
  const rnd = new Uint32Array(1);
  globalThis.crypto.getRandomValues(rnd);
  return (
    `session-${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}-` +
    `${pad(d.getUTCHours())}-${pad(d.getUTCMinutes())}-${pad(d.getUTCSeconds())}-${rnd[0].toString(16).padStart(8, "0")}`
  );
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

/**
 * Fills in the session_meta (when withMeta) and derives tools and
 * environment from tool() entries. meta keys given win; system sets
 * system_prompt; provider, model_id and model_context_window come from the
 * llm object (provider, modelId, contextWindow).
 */
export function applyDefaults(opts, fn, withMeta, source) {
  if (!isObject(opts)) return opts; // sessionSpec names the error
  const out = { ...opts };
  const { tools, environment } = deriveTools(opts.tools, opts.environment, fn);
  out.tools = tools;
  out.environment = environment;
  if (opts.system != null && typeof opts.system !== "string") throw badArg(`${fn}: system`, "a string", opts.system);
  if (!withMeta) return out;
  const { meta, llm } = opts;
  if (meta != null && !isObject(meta)) throw badArg(`${fn}: meta`, "a session_meta payload object", meta);
  if (opts.system != null && meta?.system_prompt != null && meta.system_prompt !== opts.system) {
    throw floeError("bad_argument", `${fn}: system and meta.system_prompt differ: give one`);
  }
  const m = isObject(llm) ? llm : {};
  const str = (v, what) => {
    if (v == null) return undefined;
    if (typeof v !== "string") throw badArg(`${fn}: llm.${what}`, "a string", v);
    return v;
  };
  const window = m.contextWindow;
  if (window != null && typeof window !== "number" && typeof window !== "string") {
    throw badArg(`${fn}: llm.contextWindow`, "a number", window);
  }
  out.meta = {
    session_id: newSessionId(),
    provider: str(m.provider, "provider") ?? "custom",
    model_id: str(m.modelId, "modelId") ?? "custom",
    model_context_window: window ?? 0,
    system_prompt: opts.system ?? "",
    agent_state: "floe",
    workspace: defaultWorkspace(),
    ...(source ? { source } : {}),
    ...meta,
  };
  return out;
}
