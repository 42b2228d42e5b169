// floe/test: a scripted model for tests, and a checker of a collected
// stream against the engine's ordering guarantees (ENGINE.md §7).
import { msg } from "./msg.mjs";
import { badArg, describe, errMessage, floeError, isObject, knownKeys, plainObject, readKeys } from "./internal.mjs";

const OPTION_KEYS = new Set(["provider", "modelId", "contextWindow", "sleep"]);
// The keys of each kind of part, the first one naming the kind.
const PARTS = [
  ["text", "chunks"],
  ["thinking", "chunks"],
  ["toolCall"],
  ["delay"],
  ["error", "status", "permanent"],
  ["throws"],
];
// An { error } part's statuses: every stop reason but "completed".
const STATUSES = ["failed", "aborted", "timeout", "malformed", "auth"];

// checkPart refuses, when the model is made, a part mockModel could not play.
function checkPart(p, name) {
  if (typeof p === "string") return;
  if (!isObject(p) || Array.isArray(p)) throw badArg(name, "a string or a part object ({ text }, { thinking }, { toolCall }, { delay }, { error }, { throws })", p);
  const kind = PARTS.find(([k]) => k in p);
  if (!kind) throw floeError("bad_argument", `${name}: want one of the keys ${PARTS.map(([k]) => k).join(", ")}, got ${JSON.stringify(Object.keys(p))}`);
  knownKeys(p, new Set(kind), name);
  const [k] = kind;
  if ((k === "text" || k === "thinking") && typeof p[k] !== "string") throw badArg(`${name}.${k}`, "a string", p[k]);
  if (p.chunks !== undefined && !(Array.isArray(p.chunks) && p.chunks.every((c) => typeof c === "string"))) throw badArg(`${name}.chunks`, "an array of strings", p.chunks);
  // The deltas and the complete message must agree (PROTOCOL P-6), or the
  // request would end malformed.
  if (p.chunks !== undefined && p.chunks.join("") !== p[k]) {
    throw floeError("bad_argument", `${name}.chunks: want pieces that join to the ${k} ${JSON.stringify(p[k])}, got ${JSON.stringify(p.chunks.join(""))}`);
  }
  if (k === "toolCall") {
    const t = p.toolCall;
    if (!isObject(t)) throw badArg(`${name}.toolCall`, "{ name, args?, id? }", t);
    knownKeys(t, new Set(["name", "args", "id"]), `${name}.toolCall`);
    if (typeof t.name !== "string" || t.name === "") throw badArg(`${name}.toolCall.name`, "a non-empty string", t.name);
    if (t.id !== undefined && (typeof t.id !== "string" || t.id === "")) throw badArg(`${name}.toolCall.id`, "a non-empty string", t.id);
    // What JSON cannot encode (a function, a BigInt, a cycle) would fail
    // the request, or end it malformed, when the part is played.
    if (t.args !== undefined && typeof t.args !== "string") {
      let a;
      try {
        a = JSON.stringify(t.args);
      } catch (e) {
        throw floeError("bad_argument", `${name}.toolCall.args: cannot be encoded as JSON: ${errMessage(e)}`);
      }
      if (typeof a !== "string") throw badArg(`${name}.toolCall.args`, "a JSON text or a value JSON can encode", t.args);
    }
  }
  if (k === "delay" && !(Number.isFinite(p.delay) && p.delay >= 0)) throw badArg(`${name}.delay`, "a number of milliseconds, 0 or more", p.delay);
  // A thrown Error or a message object would reach the stream as String(value).
  if ((k === "error" || k === "throws") && typeof p[k] !== "string") throw badArg(`${name}.${k}`, "a message string", p[k]);
  if (k === "error" && p.permanent !== undefined && typeof p.permanent !== "boolean") throw badArg(`${name}.permanent`, "a boolean", p.permanent);
  if (k === "error" && p.status !== undefined && !STATUSES.includes(p.status)) {
    throw floeError("bad_argument", `${name}.status: want one of ${STATUSES.join(", ")}, got ${typeof p.status === "string" ? JSON.stringify(p.status) : describe(p.status)}`);
  }
}

/**
 * mockModel(replies, options) → a model for createSession({ llm }) that
 * answers request k with replies[k]. A reply is one part or an array of
 * parts, streamed in order:
 *   "text" or { text, chunks? }     partial_text start, a delta per chunk
 *                                   (default: per word), stop, then text
 *   { thinking, chunks? }           the same as partial_thinking / thinking
 *   { toolCall: { name, args?, id? } }  partial_tool_call start, delta, stop,
 *                                   then tool_call (id default "call_<n>")
 *   { delay: ms }                   waits (an abort ends the request "aborted")
 *   { error, status?, permanent? }  ends the request with that outcome
 *                                   (status default "failed")
 *   { throws }                      the model throws that message
 * A reply that ends without error yields token_usage and returns
 * { status: "completed" }. Requests past the last reply fail permanently.
 * options: provider ("mock"), modelId ("mock-model"), contextWindow
 * (200000), sleep(ms, signal) (default: setTimeout).
 * The model records every request's params in .calls.
 */
export function mockModel(replies, opts = {}) {
  if (!Array.isArray(replies)) throw badArg("mockModel: replies", "an array of replies", replies);
  plainObject(opts, "mockModel: options");
  knownKeys(opts, OPTION_KEYS, "mockModel: options");
  const options = readKeys(opts, OPTION_KEYS, "mockModel: options"); // each once; a getter that throws is named
  // Checked here, not at the first request or delay that would trip on them.
  for (const k of ["provider", "modelId"]) if (options[k] !== undefined && typeof options[k] !== "string") throw badArg(`mockModel: options.${k}`, "a string", options[k]);
  const cw = options.contextWindow;
  if (cw !== undefined && !(Number.isSafeInteger(cw) && cw >= 0)) throw badArg("mockModel: options.contextWindow", "a number of tokens (an integer, 0 or more)", cw);
  if (options.sleep !== undefined && typeof options.sleep !== "function") throw badArg("mockModel: options.sleep", "a function (ms, signal) → Promise<boolean | void>", options.sleep);
  replies.forEach((r, k) => (Array.isArray(r) ? r : [r]).forEach((p, j) => checkPart(p, Array.isArray(r) ? `mockModel: replies[${k}][${j}]` : `mockModel: replies[${k}]`)));
  const sleep = options.sleep ?? defaultSleep;
  let calls = 0;
  let ids = 0;
  let session = { cache_read: 0, cache_write: 0, output: 0, total: 0 };
  const model = {
    provider: options.provider ?? "mock",
    modelId: options.modelId ?? "mock-model",
    contextWindow: options.contextWindow ?? 200000,
    calls: [],
    history: null,
    // A resumed session's context: its session totals go on from the Trace's.
    loadHistory(history, sessionTokens) {
      model.history = history;
      if (sessionTokens) session = { ...session, ...sessionTokens };
    },
    async *streamGenerate(params) {
      model.calls.push(params);
      const k = calls++;
      if (k >= replies.length) {
        return { status: "failed", errorMessage: `mockModel: no reply for request ${k + 1} (${replies.length} scripted)`, permanent: true };
      }
      const parts = Array.isArray(replies[k]) ? replies[k] : [replies[k]];
      let out = 0;
      for (const part of parts) {
        if (params.signal.aborted) return { status: "aborted" };
        const p = typeof part === "string" ? { text: part } : part;
        if (p === null || typeof p !== "object") throw new TypeError(`mockModel: reply ${k}: a part is ${p === null ? "null" : typeof p}`);
        if ("delay" in p) {
          const ok = await sleep(p.delay, params.signal);
          if (ok === false || params.signal.aborted) return { status: "aborted" };
        } else if ("text" in p) {
          yield* streamed("text", p.text, p.chunks);
          out += p.text.length;
        } else if ("thinking" in p) {
          yield* streamed("thinking", p.thinking, p.chunks);
          out += p.thinking.length;
        } else if ("toolCall" in p) {
          const { name, args = {}, id = `call_${++ids}` } = p.toolCall;
          const a = typeof args === "string" ? args : JSON.stringify(args);
          yield msg.partialToolCall("start", "", id, name);
          yield msg.partialToolCall("delta", a, id, name);
          yield msg.partialToolCall("stop", "", id, name);
          yield msg.toolCall(id, name, a);
          out += a.length;
        } else if ("error" in p) {
          const o = { status: p.status ?? "failed", errorMessage: String(p.error) };
          if (p.permanent) o.permanent = true;
          return o;
        } else if ("throws" in p) {
          throw new Error(String(p.throws));
        } else {
          throw new TypeError(`mockModel: reply ${k}: unknown part ${JSON.stringify(p)}`);
        }
      }
      const request = { cache_read: 0, cache_write: 0, output: out, total: out + 10 };
      session = { ...session, output: session.output + request.output, total: session.total + request.total };
      yield msg.tokenUsage(session, request);
      return { status: "completed" };
    },
  };
  return model;
}

function* streamed(kind, body, chunks) {
  const partial = kind === "text" ? msg.partialText : msg.partialThinking;
  const pieces = chunks ?? (body.match(/\s*\S+\s*/g) || (body === "" ? [] : [body]));
  yield partial("start", "");
  for (const c of pieces) yield partial("delta", c);
  yield partial("stop", "");
  yield kind === "text" ? msg.text(body) : msg.thinking(body);
}

// defaultSleep waits ms, or until signal aborts; its listener goes with
// the wait (a reply of many delays would pile them on the signal).
function defaultSleep(ms, signal) {
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(t);
      resolve(false);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

const BODY = {
  partial_text: "text",
  partial_thinking: "thinking",
  partial_tool_call: "tool_call",
  partial_tool_call_output: "tool_call_output",
};
const BODY_FIELD = { partial_text: "text", partial_thinking: "thinking", partial_tool_call: "arguments", partial_tool_call_output: "output", text: "text", thinking: "thinking", tool_call: "arguments", tool_call_output: "output" };
// The fragment key of a complete message (that of its fragments) or of a fragment.
const BODY_KEY = (type, p) => (BODY[type] ?? type) + "\u0000" + (type in BODY || type === "tool_call" || type === "tool_call_output" ? p.tool_call_id ?? "" : "");
const LLM_TYPES = new Set(["text", "thinking", "tool_call", "image_url", "inline_data", "inline_thinking", "partial_text", "partial_thinking", "partial_tool_call"]);

/**
 * checkStream(messages) → the list of broken guarantees (empty when the
 * stream keeps them all), each "#<index> <what>". Checked per origin chain:
 * fragment discipline (start → delta… → stop → the complete message),
 * approval_decision after its tool_call and before its output, a denial's
 * output right after its decision, exactly one output per decided call,
 * request_begin/request_end bracketing the model's messages with
 * token_usage its last, every output of an attempt before the next
 * request_begin, and abort last.
 */
export function checkStream(messages) {
  if (!Array.isArray(messages)) throw badArg("checkStream: messages", "an array of the stream's messages", messages);
  const bad = [];
  const groups = new Map();
  messages.forEach((m, i) => {
    const k = Array.isArray(m?.origin) ? m.origin.join("/") : "";
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k).push([m, i]);
  });
  for (const [origin, list] of groups) {
    const at = (i, what) => bad.push(`#${i}${origin ? ` [origin ${origin}]` : ""} ${what}`);
    const open = new Map(); // fragment key → "open" | "stopped"
    const bodies = new Map(); // fragment key → the deltas joined
    const stopped = new Map(); // producer → [fragment key, body, index of the stop]
    const calls = new Map(); // id → {decided, decision, outputs, attempt}
    let inAttempt = false;
    let usageSeen = false;
    let denialDue = null; // id whose output must come next
    let aborted = -1;
    // The max_turns notice (ENGINE.md E-12.2) is the engine's own text,
    // streamed after the last request_end: its four messages are in no
    // request.
    const notice = new Set(); // indexes in list
    for (let j = 0; j + 3 < list.length; j++) {
      const ps = list.slice(j, j + 4).map(([m]) => m?.payload);
      const T = ps[1]?.text;
      if (
        typeof T === "string" &&
        /^\[reached max turns \(\d+\); stopping\]$/.test(T) &&
        ps.every((p) => p?.role === "assistant") &&
        ps[0].type === "partial_text" && ps[0].event_type === "start" &&
        ps[1].type === "partial_text" && ps[1].event_type === "delta" &&
        ps[2].type === "partial_text" && ps[2].event_type === "stop" && ps[2].stop_reason === "failed" &&
        ps[3].type === "text" && ps[3].text === T && ps[3].stop_reason === "failed"
      ) {
        for (let k = j; k < j + 4; k++) notice.add(k);
      }
    }
    for (let j = 0; j < list.length; j++) {
      const [m, i] = list[j];
      const p = m?.payload;
      if (!p || typeof p !== "object") {
        at(i, "is not an OmniMessage");
        continue;
      }
      if (aborted >= 0) at(i, `comes after abort (#${aborted})`);
      const type = m.type === "session_meta" ? "session_meta" : p.type;
      // P-6: after a stop, the producer's next message is its complete message
      const prod = LLM_TYPES.has(type) || type === "token_usage" ? "llm" : type in BODY || Object.values(BODY).includes(type) ? p.tool_call_id : undefined;
      if (prod !== undefined && stopped.has(prod)) {
        const [fk, body, at0] = stopped.get(prod);
        stopped.delete(prod);
        if (type in BODY || fk !== BODY_KEY(type, p)) at(i, `${type}${p.event_type ? " " + p.event_type : ""} between the stop at #${at0} and its complete message`);
        else if (String(p[BODY_FIELD[type]] ?? "") !== body) at(i, `complete ${type} differs from its deltas joined (P-7)`);
      }
      if (denialDue !== null) {
        if (!(type === "tool_call_output" && p.tool_call_id === denialDue)) at(i, `${type} between the denial of ${denialDue} and its output`);
        denialDue = null;
      }
      // fragment discipline (P-6)
      if (type in BODY) {
        const fk = BODY[type] + "\u0000" + (p.tool_call_id ?? "");
        const st = open.get(fk);
        if (p.event_type === "start") {
          if (st === "open") at(i, `${type} start while one is open`);
          open.set(fk, "open");
          bodies.set(fk, String(p[BODY_FIELD[type]] ?? "")); // a start may carry the body so far (a resync's snapshot)
        } else if (p.event_type === "delta") {
          if (st !== "open") at(i, `${type} delta without start`);
          bodies.set(fk, (bodies.get(fk) ?? "") + String(p[BODY_FIELD[type]] ?? ""));
        } else if (p.event_type === "stop") {
          if (st !== "open") at(i, `${type} stop without start`);
          open.set(fk, "stopped");
          stopped.set(LLM_TYPES.has(type) ? "llm" : p.tool_call_id, [fk, bodies.get(fk) ?? "", i]);
        } else at(i, `${type} with event_type ${JSON.stringify(p.event_type)}`);
      } else if (Object.values(BODY).includes(type)) {
        const fk = type + "\u0000" + (type === "tool_call" || type === "tool_call_output" ? p.tool_call_id ?? "" : "");
        if (open.get(fk) === "open") at(i, `complete ${type} before its fragments stopped`);
        open.delete(fk);
      }
      if (LLM_TYPES.has(type) && !(type === "text" && p.role === "user") && !(notice.has(j) && !inAttempt)) {
        if (!inAttempt) at(i, `${type} outside a request (request_begin … request_end)`);
        else if (usageSeen) at(i, `${type} after token_usage (token_usage is the model's last message)`);
      }
      switch (type) {
        case "request_begin":
          if (inAttempt) at(i, "request_begin inside a request");
          for (const [id, c] of calls) {
            if (c.decided && c.outputs === 0) at(i, `request_begin before the output of ${id} (a call of the previous request)`);
          }
          inAttempt = true;
          usageSeen = false;
          break;
        case "token_usage":
          if (inAttempt) usageSeen = true;
          break;
        case "request_end":
          if (!inAttempt) at(i, "request_end without request_begin");
          inAttempt = false;
          usageSeen = false;
          break;
        case "tool_call":
          calls.set(p.tool_call_id, { decided: false, outputs: 0 });
          break;
        case "approval_decision": {
          const c = calls.get(p.tool_call_id);
          if (!c) at(i, `approval_decision for ${p.tool_call_id} before its tool_call`);
          else {
            if (c.decided) at(i, `a second approval_decision for ${p.tool_call_id}`);
            if (c.outputs > 0) at(i, `approval_decision for ${p.tool_call_id} after its output`);
            c.decided = true;
          }
          if (p.decision !== "allow") denialDue = p.tool_call_id;
          break;
        }
        case "partial_tool_call_output":
        case "tool_call_output": {
          const c = calls.get(p.tool_call_id);
          if (c && !c.decided) at(i, `output of ${p.tool_call_id} before its approval_decision`);
          if (type === "tool_call_output" && c) {
            c.outputs++;
            if (c.outputs === 2) at(i, `a second tool_call_output for ${p.tool_call_id}`);
          }
          break;
        }
        case "abort":
          aborted = i;
          break;
      }
    }
    const last = list.length ? list[list.length - 1][1] : -1;
    if (denialDue !== null) at(last, `the denial of ${denialDue} has no output`);
    for (const [k, st] of open) {
      const [kind, id] = k.split("\u0000");
      at(last, `the ${kind}${id ? " " + id : ""} fragments ${st === "open" ? "never stopped" : "have no complete message"}`);
    }
    for (const [id, c] of calls) if (c.decided && c.outputs === 0) at(last, `the decided call ${id} has no tool_call_output`);
    if (inAttempt && aborted < 0) at(last, "the stream ends inside a request (no request_end)");
  }
  return bad;
}

/** Throws an Error listing what checkStream found; returns messages when nothing. */
export function assertStream(messages) {
  const bad = checkStream(messages);
  if (bad.length) throw new Error(`the stream breaks ${bad.length} ordering guarantee(s):\n  ${bad.join("\n  ")}`);
  return messages;
}
