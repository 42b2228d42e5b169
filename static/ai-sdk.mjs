// floe/ai-sdk: a language model of the Vercel AI SDK (specification v3 or
// v4: @ai-sdk/anthropic, @ai-sdk/openai, @ai-sdk/google, @ai-sdk/openai-compatible…)
// as a Floe model. It calls the model's doStream itself, so it needs no
// package of the AI SDK: the conversation is kept in the specification's
// prompt format, and the stream's parts become OmniMessages.
//
// And the other way, for the AI SDK's UI (useChat of @ai-sdk/react, Chat
// of @ai-sdk/vue and @ai-sdk/svelte): a run's messages as a stream of
// UIMessageChunks (toUIMessageStream), a ChatTransport that runs a Floe
// session in the page (floeChatTransport), and a stored session's
// messages as UIMessages (toUIMessages).
import { msg } from "./msg.mjs";
import { badArg, describe, errMessage, floeError, isObject, knownKeys, plainObject, retryWait, steeringText } from "./internal.mjs";

const VERSIONS = ["v3", "v4"];
const OPTION_KEYS = new Set([
  "providerOptions", "maxOutputTokens", "temperature", "topP", "topK", "presencePenalty", "frequencyPenalty",
  "stopSequences", "seed", "headers", "contextWindow", "sessionTokens", "idleTimeoutMs",
]);
const NUMBERS = ["temperature", "topP", "topK", "presencePenalty", "frequencyPenalty"];
// Floe's thinking levels (provider.ParseThinking's words) as v4's `reasoning`.
const LEVELS = { none: "none", off: "none", minimal: "minimal", low: "low", medium: "medium", high: "high", xhigh: "xhigh", max: "max" };
// Errors a retry cannot mend: the prompt or an option the model refused
// before sending, a setting it could not load, a model its provider has not.
const PERMANENT = new Set(["AI_InvalidPromptError", "AI_UnsupportedFunctionalityError", "AI_InvalidArgumentError", "AI_LoadSettingError", "AI_NoSuchModelError"]);
const MALFORMED = new Set(["AI_JSONParseError", "AI_TypeValidationError"]);
// A bad option's error, naming a number's value.
const want = (name, what, v) => floeError("bad_argument", `${name}: want ${what}, got ${typeof v === "number" ? String(v) : describe(v)}`);

/**
 * Returns a Floe model (one conversation) that streams from an AI SDK
 * LanguageModel. Checks the model and the options when called.
 */
export function fromAISDK(model, options = {}) {
  const name = "fromAISDK";
  if (typeof model === "string") {
    throw floeError("bad_argument", `${name}: model: want a LanguageModel object (e.g. anthropic("claude-sonnet-4-5")), got the string ${JSON.stringify(model)}: a model id needs a provider`);
  }
  if (!isObject(model)) throw badArg(`${name}: model`, "a LanguageModel of the AI SDK (an object with specificationVersion and doStream)", model);
  const version = model.specificationVersion;
  if (!VERSIONS.includes(version)) {
    const got = typeof version === "string" ? JSON.stringify(version) : describe(version);
    throw floeError("bad_argument", `${name}: model.specificationVersion: ${got} is not supported (supported: ${VERSIONS.join(", ")}; AI SDK 6 and later)`);
  }
  if (typeof model.doStream !== "function") throw badArg(`${name}: model.doStream`, "a function", model.doStream);
  plainObject(options, `${name}: options`);
  knownKeys(options, OPTION_KEYS, `${name}: options`);
  const o = { ...options };
  const po = o.providerOptions;
  if (po !== undefined && typeof po !== "function") plainObject(po, `${name}: options.providerOptions`, "an object (keyed by provider) or a function of { thinkingLevel }");
  for (const k of NUMBERS) if (o[k] !== undefined && !Number.isFinite(o[k])) throw want(`${name}: options.${k}`, "a finite number", o[k]);
  for (const k of ["maxOutputTokens", "seed", "contextWindow"]) {
    if (o[k] !== undefined && !(Number.isSafeInteger(o[k]) && o[k] >= (k === "seed" ? -(2 ** 53) : 1))) throw want(`${name}: options.${k}`, "an integer" + (k === "seed" ? "" : ", 1 or more"), o[k]);
  }
  if (o.stopSequences !== undefined && !(Array.isArray(o.stopSequences) && o.stopSequences.every((s) => typeof s === "string"))) {
    throw badArg(`${name}: options.stopSequences`, "an array of strings", o.stopSequences);
  }
  if (o.headers !== undefined) {
    plainObject(o.headers, `${name}: options.headers`);
    for (const [k, v] of Object.entries(o.headers)) if (typeof v !== "string") throw want(`${name}: options.headers.${k}`, "a string", v);
  }
  const idleMs = o.idleTimeoutMs ?? 300000; // the built-in adapters' default: five minutes
  if (!(Number.isSafeInteger(idleMs) && idleMs >= 0 && idleMs <= 86400000)) {
    throw want(`${name}: options.idleTimeoutMs`, "a whole number of milliseconds up to 86400000 (0 = no idle timeout)", idleMs);
  }
  const session = { cache_read: 0, cache_write: 0, output: 0, total: 0 };
  if (o.sessionTokens !== undefined) Object.assign(session, msg.tokenUsage(o.sessionTokens).payload.session);
  const label = typeof model.provider === "string" && model.provider ? model.provider : "ai-sdk";
  const settings = {};
  for (const k of ["maxOutputTokens", ...NUMBERS, "stopSequences", "seed", "headers"]) if (o[k] !== undefined) settings[k] = o[k];

  const history = []; // the prompt's messages of every completed request
  const names = new Map(); // tool call id → tool name (a tool result names its tool)
  // The ids of the calls in the conversation: a model that numbers its
  // calls afresh in each reply (Ollama's call_0) would give two calls of
  // the session one id, and outputs pair with calls by id.
  const taken = new Set();
  const note = (prompt) => {
    for (const m of prompt) if (m.role === "assistant") for (const c of m.content) if (c.type === "tool-call") taken.add(c.toolCallId);
  };
  let fresh = 0; // ids given to calls that repeat one of the session
  let toolsIn = null;
  let toolsOut;

  const llm = {
    provider: label,
    modelId: typeof model.modelId === "string" ? model.modelId : "",
    loadHistory(messages, tokens) {
      const loaded = toPrompt(messages, version, names);
      note(loaded);
      history.push(...loaded);
      if (tokens) Object.assign(session, tokens);
    },
    async *streamGenerate({ newMessages, thinkingLevel, signal, tools, systemPrompt }) {
      // doStream's abortSignal: the run's, or the idle timeout's (which
      // cancels the HTTP request too).
      const cancel = new AbortController();
      const call = { ...settings, abortSignal: cancel.signal };
      const level = thinkingLevel ? LEVELS[thinkingLevel] : undefined;
      if (typeof po === "function") {
        try {
          call.providerOptions = po({ thinkingLevel });
        } catch (e) {
          return { status: "failed", permanent: true, errorMessage: `${label}: options.providerOptions threw: ${errMessage(e)}` };
        }
      } else if (po !== undefined) call.providerOptions = po;
      if (thinkingLevel && version === "v4" && level) call.reasoning = level;
      else if (thinkingLevel && typeof po !== "function") {
        const why = version === "v4" ? `want ${Object.keys(LEVELS).join(", ")}` : "a specification v3 model takes no reasoning level";
        return { status: "failed", permanent: true, errorMessage: `${label}: thinkingLevel ${JSON.stringify(thinkingLevel)}: ${why} (or give providerOptions as a function of { thinkingLevel })` };
      }
      if (tools !== toolsIn) {
        toolsIn = tools;
        toolsOut = tools.length ? tools.map((t) => ({ type: "function", name: t.name, description: t.description, inputSchema: t.parameters ?? { type: "object", properties: {} } })) : undefined;
      }
      if (toolsOut) call.tools = toolsOut;
      const input = toPrompt(newMessages, version, names);
      note(input);
      call.prompt = [...(systemPrompt ? [{ role: "system", content: systemPrompt }] : []), ...history, ...input];

      // The abort cancels the request and the stream, so that one whose
      // model does not heed abortSignal ends (a pending wait is done) and
      // its source stops.
      let reader;
      let idle = null; // the timeout's outcome, once nothing came for idleMs
      let wake = () => {};
      const stop = () => {
        wake();
        cancel.abort(idle ? floeError("timeout", idle.errorMessage) : signal.reason);
        reader?.cancel().catch(() => {});
      };
      // wait is p (doStream's answer, a read), done early by the abort or
      // idleMs without it; the time the session holds the stream between
      // reads does not count.
      const wait = (p) => {
        let timer;
        const woken = new Promise((resolve) => {
          wake = resolve;
          if (idleMs) timer = setTimeout(() => ((idle = { status: "timeout", errorMessage: `${label}: nothing came from the model for ${idleMs} ms (idleTimeoutMs)` }), stop()), idleMs);
        });
        if (cancel.signal.aborted) wake();
        return Promise.race([p, woken.then(() => ({ done: true, woken: true }))]).finally(() => clearTimeout(timer));
      };
      signal.addEventListener("abort", stop);
      if (signal.aborted) stop();
      const ended = () => idle ?? failure(null, signal, label);
      try {
        const p = Promise.resolve(model.doStream(call));
        p.catch(() => {}); // its rejection after the race is over
        const r = await wait(p);
        if (r.woken) {
          p.then((a) => a?.stream?.cancel?.()).catch(() => {});
          signal.removeEventListener("abort", stop);
          return ended();
        }
        reader = r.stream.getReader();
      } catch (e) {
        signal.removeEventListener("abort", stop);
        return idle ? ended() : failure(e, signal, label, false);
      }
      const reply = []; // the complete messages, for the history
      const skip = new Set(); // ids of tool calls the provider runs itself
      const started = new Set(); // ids of tool calls whose input streams
      const renamed = new Map(); // a streamed call's id at its end → the id it started with
      const ids = new Set(); // the tool call ids of this request
      // claim is the id a call goes by: its own, or a new one when it has
      // none (no string, or an empty one) or another call of this request
      // (the engine refuses such a reply) or of the conversation has it.
      // A failed attempt's ids join no conversation: its retry may use them.
      const claim = (id) => {
        if (typeof id !== "string" || id === "") id = `call_floe_${++fresh}`;
        while (ids.has(id) || taken.has(id)) id = `call_floe_${++fresh}`;
        ids.add(id);
        return id;
      };
      let open = null; // the one segment streaming: { kind, id, body, meta, name?, raw? }
      let waiting = []; // parts that came while a tool call was open, played after it
      let finish = null;
      let failed = null;
      const complete = (m, meta) => {
        if (meta) m.payload.fidelity = { providerMetadata: meta };
        reply.push(m);
        return m;
      };
      // close ends the open segment: its stop, then its complete message.
      function* close(input) {
        const s = open;
        if (!s) return;
        open = null;
        if (s.kind === "text") {
          yield msg.partialText("stop");
          yield complete(msg.text(s.body), s.meta);
        } else if (s.kind === "reasoning") {
          yield msg.partialThinking("stop");
          yield complete(msg.thinking(s.body), s.meta);
        } else {
          // The call's input is the arguments: what streamed as deltas (no
          // text-encoded input does) is completed by one more delta; an input
          // that does not go on from them cannot be, and they stand.
          const shown = s.raw ? "" : s.body;
          let args = shown;
          if (typeof input === "string" && input.startsWith(shown)) {
            if (input !== shown) yield msg.partialToolCall("delta", input.slice(shown.length), s.id, s.name);
            args = input;
          }
          yield msg.partialToolCall("stop", "", s.id, s.name);
          yield complete(msg.toolCall(s.id, s.name, args), s.meta);
          const later = waiting;
          waiting = [];
          for (const p of later) yield* part(p);
        }
      }
      function* start(kind, p, name) {
        yield* close();
        // wire: the id the stream names the segment by; id: the call's.
        open = { kind, wire: p.id, id: name === undefined ? p.id : claim(p.id), body: "", meta: merge(null, p.providerMetadata), name, raw: p.inputEncoding === "text" };
        if (kind === "text") yield msg.partialText("start");
        else if (kind === "reasoning") yield msg.partialThinking("start");
        else yield msg.partialToolCall("start", "", open.id, name);
      }
      // part turns one stream part into messages; a tool call's own parts
      // stream, others wait until it is complete.
      function* part(p) {
        if (!isObject(p) || typeof p.type !== "string") {
          failed = { status: "malformed", errorMessage: `${label}: a stream part is not an object with a type: ${typeof p === "string" ? JSON.stringify(p.slice(0, 80)) : describe(p)}` };
          return;
        }
        let id = p.type === "tool-call" ? p.toolCallId : p.type.startsWith("tool-input-") ? p.id : undefined;
        if (p.type === "tool-input-start") started.add(id);
        // A call that ends under an id it did not start with, while it is the
        // one open (OpenAI's Responses API through a proxy that gives a call
        // another call_id when it is done): it is that call, under its first id.
        if (p.type === "tool-input-end" && open?.kind === "tool" && id !== open.wire && !started.has(id)) renamed.set(id, open.wire);
        id = renamed.get(id) ?? id;
        const mine = open?.kind === "tool" && id === open.wire;
        if (open?.kind === "tool" && !mine && p.type !== "error") {
          waiting.push(p);
          return;
        }
        switch (p.type) {
          case "text-start":
          case "reasoning-start":
            yield* start(p.type.slice(0, -6), p);
            return;
          case "text-delta":
          case "reasoning-delta": {
            const kind = p.type.slice(0, -6);
            if (open?.kind !== kind || open.id !== p.id) yield* start(kind, p);
            open.meta = merge(open.meta, p.providerMetadata);
            if (typeof p.delta === "string" && p.delta) {
              open.body += p.delta;
              yield kind === "text" ? msg.partialText("delta", p.delta) : msg.partialThinking("delta", p.delta);
            }
            return;
          }
          case "text-end":
          case "reasoning-end":
            if (open?.kind === p.type.slice(0, -4) && open.id === p.id) {
              open.meta = merge(open.meta, p.providerMetadata);
              yield* close();
            }
            return;
          case "tool-input-start":
            if (p.providerExecuted) skip.add(p.id);
            else yield* start("tool", p, toolName(p));
            return;
          case "tool-input-delta":
            if (mine && typeof p.delta === "string" && p.delta) {
              open.body += p.delta;
              if (!open.raw) yield msg.partialToolCall("delta", p.delta, open.id, open.name);
            }
            return;
          case "tool-call":
            if (p.providerExecuted || skip.has(p.toolCallId)) return;
            if (!mine) {
              // A call that did not stream: its complete message alone.
              yield* close();
              const cid = claim(p.toolCallId);
              names.set(cid, toolName(p));
              yield complete(msg.toolCall(cid, toolName(p), p.input ?? "{}"), merge(null, p.providerMetadata));
              return;
            }
            open.meta = merge(open.meta, p.providerMetadata);
            names.set(open.id, open.name);
            yield* close(typeof p.input === "string" ? p.input : undefined);
            return;
          case "file":
          case "reasoning-file": {
            // A file the model made (an image): assistant inline_data, or
            // inline_thinking for one of its reasoning. One by a web URL has
            // no place in the protocol (image_url is the user's): it is a
            // text (a thinking) naming its type and URL, not lost.
            const f = generated(p);
            if (!f) return;
            yield* close();
            if (f.url) {
              const note = `[file made by the model: ${f.mime}, at ${f.url}]`;
              yield complete(p.type === "file" ? msg.text(note) : msg.thinking(note));
              return;
            }
            const type = p.type === "file" ? "inline_data" : "inline_thinking";
            yield complete({ type: "model_msg", payload: { type, role: "assistant", data: f.data, mime_type: f.mime, stop_reason: "completed" } }, merge(null, p.providerMetadata));
            return;
          }
          case "finish":
            finish = p;
            return;
          case "error":
            failed = failure(p.error, signal, label, false);
            return;
          default:
            // tool-input-end, stream-start, response-metadata, raw, ping, source,
            // custom, tool-result, tool-approval-request,
            // and a type this module does not know: not part of the conversation.
            return;
        }
      }

      try {
        for (;;) {
          let r;
          try {
            r = await wait(reader.read());
          } catch (e) {
            return idle ? ended() : failure(e, signal, label, true);
          }
          if (r.done) break;
          yield* part(r.value);
          if (failed) return failed;
        }
        if (signal.aborted || idle) return ended();
        while (open) yield* close(); // a tool call open at the end runs with the arguments that came
        if (failed) return failed;
        if (!finish) return { status: "malformed", errorMessage: `${label}: the stream ended without a finish part` };
        const reason = typeof finish.finishReason === "string" ? finish.finishReason : finish.finishReason?.unified;
        const raw = finish.finishReason?.raw ? ` (${finish.finishReason.raw})` : "";
        if (reason === "error") return { status: "failed", errorMessage: `${label}: the model finished with an error${raw}` };
        if (reason === "interrupted") return { status: "malformed", errorMessage: `${label}: the stream ended before the reply did${raw}` };
        const u = finish.usage ?? {};
        const n = (v) => (Number.isSafeInteger(v) && v > 0 ? v : 0);
        const output = n(u.outputTokens?.total);
        const request = { cache_read: n(u.inputTokens?.cacheRead), cache_write: n(u.inputTokens?.cacheWrite), output, total: n(u.inputTokens?.total) + output };
        for (const k of Object.keys(session)) session[k] += request[k];
        yield msg.tokenUsage(session, request);
        const out = toPrompt(reply, version, names);
        note(out);
        history.push(...input, ...out);
        return { status: "completed" };
      } finally {
        signal.removeEventListener("abort", stop);
        wake();
        reader.cancel().catch(() => {});
      }
    },
  };
  if (o.contextWindow !== undefined) llm.contextWindow = o.contextWindow;
  return llm;
}

// toolName is the name a call goes by: a stream part's, or, when it has
// none, unnamed_tool (as the built-in adapters name it): a tool_call needs
// one, and the engine answers a call of a tool it does not know.
const toolName = (p) => (typeof p.toolName === "string" && p.toolName !== "" ? p.toolName : "unnamed_tool");

// merge adds provider metadata b to a (per provider, later keys winning).
function merge(a, b) {
  if (!isObject(b)) return a;
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = isObject(v) ? { ...out[k], ...v } : v;
  return out;
}

// The types and codes of an error a provider reports inside its stream
// that passes (an overload, a rate limit, a server error, a gateway's
// timeout; an HTTP status as the code, OpenRouter's) or is an
// authentication's: provider.Transient's and authError's words.
const TRANSIENT = new Set(["overloaded_error", "rate_limit_error", "rate_limit_exceeded", "server_error", "api_error",
  "internal_server_error", "service_unavailable", "timeout", "timeout_error", "overloaded", "too_many_requests", "408", "429"]);
const AUTH = new Set(["authentication_error", "permission_error", "invalid_api_key", "401", "403"]);
const PSE = Symbol.for("vercel.ai.providerStreamError"); // the AI SDK's mark of its stream errors

// event is the outcome of an error a provider reported inside its stream
// (an error part's object, not an Error, with a type or a code), as the
// built-in adapters take an error event: by its type and code, then by
// the retryability the AI SDK's provider gave it; null for another error.
function event(e, label) {
  if (!isObject(e) || e instanceof Error || Object.prototype.toString.call(e) === "[object Error]") return null; // an Error of any realm
  const typ = typeof e.type === "string" && e.type !== "error" ? e.type : "";
  const code = typeof e.code === "string" || Number.isFinite(e.code) ? String(e.code) : "";
  if (!typ && !code) return null;
  const errorMessage = `${label}: error event: ${typ && code && typ !== code ? `${typ} (${code})` : typ || code}${typeof e.message === "string" && e.message ? `: ${e.message}` : ""}`;
  const transient = (t) => TRANSIENT.has(t) || /^5\d\d$/.test(t);
  if (transient(typ) || transient(code)) return { status: "timeout", errorMessage };
  if (AUTH.has(typ) || AUTH.has(code) || (e[PSE] === true && (e.statusCode === 401 || e.statusCode === 403))) return { status: "auth", errorMessage };
  if (typ === "insufficient_quota" || code === "insufficient_quota" || typ === "billing_error") return { status: "failed", errorMessage, permanent: true };
  if (e[PSE] === true && e.isRetryable === true) return { status: "timeout", errorMessage };
  return { status: "failed", errorMessage, permanent: e[PSE] === true && e.isRetryable === false };
}

// failure is the outcome of what doStream threw, a read of its stream
// threw (read), or an error part carried.
function failure(e, signal, label, read) {
  if (signal.aborted || e?.name === "AbortError") return { status: "aborted", errorMessage: `${label}: aborted` };
  const ev = event(e, label);
  if (ev) return ev;
  let text;
  try {
    text = isObject(e) ? String(e.message ?? JSON.stringify(e)) : errMessage(e);
  } catch {
    text = `${describe(e)} that is not JSON`; // an error part's object with a cycle or a BigInt
  }
  if (e?.cause !== undefined) text += ` (${errMessage(e.cause)})`; // e.g. a cut body: "… (terminated)"
  const status = isObject(e) ? e.statusCode : undefined;
  if (Number.isInteger(status)) {
    const after = e.responseHeaders?.["retry-after"];
    const errorMessage = `${label}: HTTP ${status}: ${text}${after ? ` (Retry-After: ${after})` : ""}`;
    if (status === 401 || status === 403) return { status: "auth", errorMessage };
    if (e.isRetryable === true) {
      // The wait the server asked for, as the built-in adapters read it.
      const wait = retryWait((key) => {
        const v = isObject(e.responseHeaders) ? e.responseHeaders[key] : undefined;
        return typeof v === "string" ? v.trim() : "";
      }, e.responseBody);
      return wait === undefined ? { status: "timeout", errorMessage } : { status: "timeout", errorMessage, retryAfterMs: wait };
    }
    return { status: "failed", errorMessage, permanent: e.isRetryable === false };
  }
  const errorMessage = `${label}: ${text}`;
  if (e?.name === "AI_APICallError") return e.isRetryable === false ? { status: "failed", errorMessage } : { status: "timeout", errorMessage };
  if (e?.name === "AI_LoadAPIKeyError") return { status: "auth", errorMessage }; // no key given, none in the environment
  if (MALFORMED.has(e?.name)) return { status: "malformed", errorMessage };
  if (PERMANENT.has(e?.name)) return { status: "failed", errorMessage, permanent: true };
  return { status: read ? "timeout" : "failed", errorMessage }; // a read that failed is the network's
}

// generated is a file part's data as { data: base64, mime }: v3's base64
// or bytes, v4's { type: "data" } of either or { type: "url" } of a base64
// data: URL; null for another (a web URL, a reference).
function generated(p) {
  let d = p.data;
  const mime = typeof p.mediaType === "string" && p.mediaType ? p.mediaType : "";
  if (isObject(d) && !(d instanceof Uint8Array)) {
    if (d.type === "url" || d instanceof URL) {
      const url = String(d.type === "url" ? d.url : d);
      const m = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s.exec(url);
      if (!m) return { url, mime: mime || "application/octet-stream" };
      return { data: m[2].includes(";base64") ? m[3] : base64(percentBytes(m[3])), mime: mime || m[1] || "application/octet-stream" };
    }
    d = d.type === "data" ? d.data : undefined;
  }
  if (d instanceof Uint8Array) d = base64(d);
  return typeof d === "string" ? { data: d, mime: mime || "application/octet-stream" } : null;
}

function base64(bytes) {
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

// percentBytes returns the bytes of a data: URL's data not in base64:
// each %XX its byte, any other character its UTF-8.
function percentBytes(s) {
  const out = [];
  const utf8 = new TextEncoder();
  for (let i = 0; i < s.length; ) {
    if (s[i] === "%" && /^[0-9a-fA-F]{2}$/.test(s.slice(i + 1, i + 3))) {
      out.push(parseInt(s.slice(i + 1, i + 3), 16));
      i += 3;
    } else {
      const c = String.fromCodePoint(s.codePointAt(i));
      out.push(...utf8.encode(c));
      i += c.length;
    }
  }
  return Uint8Array.from(out);
}

// The specification's file data of an image (a data: URL or a web URL).
function image(url, version) {
  const m = /^data:([^;,]+)?((?:;[^;,]*)*),(.*)$/s.exec(url);
  if (m && m[2].includes(";base64")) return file(m[3], m[1] || "image/png", version);
  let u;
  try {
    u = new URL(url);
  } catch {
    return { type: "text", text: `[image not sent: ${JSON.stringify(url.slice(0, 80))} is not a URL]` };
  }
  return version === "v4" ? { type: "file", mediaType: "image", data: { type: "url", url: u } } : { type: "file", mediaType: "image/*", data: u };
}

function file(base64, mediaType, version) {
  return version === "v4" ? { type: "file", mediaType, data: { type: "data", data: base64 } } : { type: "file", mediaType, data: base64 };
}

// toolImage is a tool output's image (a data: URL) as tool result content.
function toolImage(url, version) {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (!m) return { type: "text", text: "[image not sent: not a base64 data: URL]" };
  return version === "v4" ? { type: "file", mediaType: m[1], data: { type: "data", data: m[2] } } : { type: "image-data", mediaType: m[1], data: m[2] };
}

const options = (part, p) => {
  const meta = p.fidelity?.providerMetadata;
  if (isObject(meta)) part.providerOptions = meta;
  return part;
};

// parseArgs is a call's arguments as the prompt's input: arguments that
// are no JSON (a call cut short, "" from a server for a tool without
// parameters) or null are an empty object, as the built-in adapters send
// them: as a string, a Chat API got them JSON-encoded ("\"\""), which
// servers that parse them refuse.
const parseArgs = (s) => {
  try {
    return JSON.parse(s) ?? {};
  } catch {
    return {};
  }
};

/**
 * toPrompt converts complete OmniMessages to the specification's prompt
 * messages, a run of parts of one role in one message. names learns the
 * tool of each call, for its result.
 */
function toPrompt(messages, version, names) {
  const out = [];
  const add = (role, part) => {
    const last = out[out.length - 1];
    if (last?.role === role) last.content.push(part);
    else out.push({ role, content: [part] });
  };
  for (const m of messages) {
    const p = m?.type === "model_msg" ? m.payload : undefined;
    switch (p?.type) {
      case "text":
        if (p.text === "") break; // a refusal's empty text: providers refuse empty blocks
        if (p.role === "user") add("user", { type: "text", text: p.text });
        else add("assistant", options({ type: "text", text: p.text }, p));
        break;
      case "image_url":
        add("user", image(p.image_url, version));
        break;
      case "inline_data":
        if (p.role === "user") add("user", file(p.data, p.mime_type, version));
        else if (p.role === "assistant") add("assistant", options(file(p.data, p.mime_type, version), p)); // a file the model made
        break;
      case "thinking":
        add("assistant", options({ type: "reasoning", text: p.thinking }, p));
        break;
      case "inline_thinking": // a file of the reasoning: v3 has no such part
        if (version === "v4") add("assistant", options({ type: "reasoning-file", mediaType: p.mime_type, data: { type: "data", data: p.data } }, p));
        break;
      case "tool_call":
        names.set(p.tool_call_id, p.name);
        add("assistant", options({ type: "tool-call", toolCallId: p.tool_call_id, toolName: p.name, input: parseArgs(p.arguments) }, p));
        break;
      case "tool_call_output": {
        const output = p.images?.length
          ? { type: "content", value: [{ type: "text", text: p.output }, ...p.images.map((u) => toolImage(u, version))] }
          : { type: "text", value: p.output };
        add("tool", { type: "tool-result", toolCallId: p.tool_call_id, toolName: names.get(p.tool_call_id) ?? "", output });
        break;
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// The AI SDK's UI: UIMessageChunks (AI SDK 5 and later's UI message stream).

// ENGINE.md's reasons of an abort by the user: in a turn, in the backoff
// before a retry, in a compaction mid-task.
const USER_ABORTS = new Set(["aborted by user", "aborted during reconnect backoff", "aborted during compaction"]);
const NOT_RUN = "no output: the run ended before the call did"; // a call's part the run ended without its output
const DECISIONS = new Set(["allow", "deny", "forbidden"]);
const WOKEN = Symbol("woken");
// Approval ids are the page's, not a run's: a model may name the calls of
// every reply alike, and an answer to one a run left must not answer
// another run's.
let asks = 0;

const parseInput = (s) => {
  if (typeof s !== "string" || s === "") return {};
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
};

/**
 * Chunker turns a run's messages (or a stored session's, complete ones
 * only) into UIMessageChunks. Messages of subagents (with an origin) are
 * left out. A run's fragments stream; a complete message that no
 * fragment streamed comes whole (start, one delta, end).
 */
class Chunker {
  constructor() {
    this.n = 0;
    this.text = null; // the id of the text part streaming
    this.reasoning = null;
    this.streamed = { text: false, thinking: false }; // its complete message follows: not again
    this.calls = new Map(); // tool call id → { name, started, done, decided, asked, denied, out }
    this.stepCalls = new Set(); // the ids of the calls of the step open
    this.running = new Set(); // calls allowed whose output has not come
    this.outputs = new Map(); // call id → the output streamed so far
    this.step = false; // a step is open
    this.failed = false; // the last request failed: the next one is its retry
    this.ended = false; // abort seen
    this.approvals = new Map(); // call id → approval id asked in the UI, shown once its call is
  }
  id(kind) {
    return `${kind}-${++this.n}`;
  }
  close(out) {
    if (this.text) out.push({ type: "text-end", id: this.text });
    if (this.reasoning) out.push({ type: "reasoning-end", id: this.reasoning });
    this.text = this.reasoning = null;
  }
  // frag handles partial_text and partial_thinking; whole their complete messages.
  frag(kind, p, body, out) {
    const [key, start, delta, end] = kind === "text" ? ["text", "text-start", "text-delta", "text-end"] : ["reasoning", "reasoning-start", "reasoning-delta", "reasoning-end"];
    if (p.event_type === "start" || !this[key]) {
      if (p.event_type === "stop") return;
      this.close(out);
      this[key] = this.id(key);
      out.push({ type: start, id: this[key] });
    }
    if (p.event_type === "delta" && body) out.push({ type: delta, id: this[key], delta: body });
    if (p.event_type === "stop") {
      out.push({ type: end, id: this[key] });
      this[key] = null;
      this.streamed[kind === "text" ? "text" : "thinking"] = true;
    }
  }
  whole(kind, body, out) {
    const flag = kind === "text" ? "text" : "thinking";
    if (this.streamed[flag]) {
      this.streamed[flag] = false;
      return;
    }
    this.close(out);
    const id = this.id(kind);
    out.push({ type: `${kind}-start`, id });
    if (body) out.push({ type: `${kind}-delta`, id, delta: body });
    out.push({ type: `${kind}-end`, id });
  }
  // approval is the approval request of a call asked in the UI, once its part exists.
  approval(callId, approvalId, out) {
    this.approvals.set(callId, approvalId);
    const c = this.calls.get(callId);
    if (c?.done && !c.asked && !c.decided) {
      c.asked = approvalId;
      out.push({ type: "tool-approval-request", approvalId, toolCallId: callId });
    }
  }
  push(m, out = []) {
    if (!isObject(m) || !isObject(m.payload) || (Array.isArray(m.origin) && m.origin.length)) return out;
    const p = m.payload;
    switch (p.type) {
      case "request_begin":
        this.close(out);
        if (this.failed && this.step) {
          // A retry: the failed attempt's parts go, its calls with them (a
          // call of the retry may have the id of one, and none waits on them).
          out.push({ type: "reset-step" });
          for (const id of this.stepCalls) this.calls.delete(id);
        } else {
          if (this.step) out.push({ type: "finish-step" });
          out.push({ type: "start-step" });
        }
        this.step = true;
        this.failed = false;
        this.stepCalls.clear();
        break;
      case "request_end":
        this.close(out);
        this.failed = p.status !== "completed";
        if (!this.failed && this.step) {
          out.push({ type: "finish-step" });
          this.step = false;
        }
        break;
      case "partial_text":
        if (p.role === "assistant") this.frag("text", p, p.text, out);
        break;
      case "partial_thinking":
        this.frag("reasoning", p, p.thinking, out);
        break;
      case "text":
        if (p.role === "assistant") this.whole("text", p.text, out);
        else if (m.type === "model_msg" && typeof p.text === "string") {
          // A user text in a run's stream: delivered steering.
          this.close(out);
          out.push({ type: "steering-message", id: this.id("steering"), parts: [{ type: "text", text: steeringText(p.text) ?? p.text }] });
        }
        break;
      case "thinking":
        this.whole("reasoning", p.thinking, out);
        break;
      case "inline_data":
        // A file the model made (an image): a file part, as a data: URL.
        if (p.role === "assistant" && typeof p.data === "string" && typeof p.mime_type === "string") {
          this.close(out);
          out.push({ type: "file", url: `data:${p.mime_type};base64,${p.data}`, mediaType: p.mime_type });
        }
        break;
      case "partial_tool_call": {
        const id = p.tool_call_id;
        let c = this.calls.get(id);
        // A call complete before (an earlier step's, under the same id) is another call.
        if (p.event_type === "start" || !c?.started || c.done) {
          if (c?.started && !c.done) break;
          this.close(out);
          c = { name: p.name, started: true };
          this.calls.set(id, c);
          this.stepCalls.add(id);
          out.push({ type: "tool-input-start", toolCallId: id, toolName: p.name });
        }
        if (p.event_type === "delta" && p.arguments) out.push({ type: "tool-input-delta", toolCallId: id, inputTextDelta: p.arguments });
        break;
      }
      case "tool_call": {
        this.close(out);
        const id = p.tool_call_id;
        const c = this.calls.get(id);
        if (!c?.started || c.done) this.calls.set(id, { name: p.name });
        this.calls.get(id).done = true;
        this.stepCalls.add(id);
        out.push({ type: "tool-input-available", toolCallId: id, toolName: p.name, input: parseInput(p.arguments) });
        const asked = this.approvals.get(id);
        if (asked) this.approval(id, asked, out);
        break;
      }
      case "approval_decision": {
        const id = p.tool_call_id;
        const c = this.calls.get(id);
        if (!c) break;
        c.decided = true;
        const allowed = p.decision === "allow";
        if (c.asked) out.push({ type: "tool-approval-response", approvalId: c.asked, approved: allowed });
        else if (!allowed) {
          // Decided without the UI (a policy, or no approver): an automatic denial.
          const approvalId = this.id("approval");
          out.push({ type: "tool-approval-request", approvalId, toolCallId: id, isAutomatic: true });
          out.push({ type: "tool-approval-response", approvalId, approved: false, reason: p.decision });
        }
        this.approvals.delete(id);
        if (allowed) this.running.add(id);
        else c.denied = true;
        break;
      }
      case "partial_tool_call_output": {
        const id = p.tool_call_id;
        if (!this.calls.has(id)) break;
        if (p.event_type === "start") this.outputs.set(id, "");
        else if (p.event_type === "delta") {
          const so = (this.outputs.get(id) ?? "") + p.output;
          this.outputs.set(id, so);
          out.push({ type: "tool-output-available", toolCallId: id, output: so, preliminary: true });
        }
        break;
      }
      case "tool_call_output": {
        const id = p.tool_call_id;
        this.running.delete(id);
        this.outputs.delete(id);
        const c = this.calls.get(id);
        if (!c) break;
        c.out = true;
        if (c.denied) out.push({ type: "tool-output-denied", toolCallId: id });
        else if (p.stop_reason === "completed") out.push({ type: "tool-output-available", toolCallId: id, output: p.output });
        else out.push({ type: "tool-output-error", toolCallId: id, errorText: p.output });
        break;
      }
      case "abort":
        this.close(out);
        // A call the run ends without its output was not run: its part
        // waits no more (an answer's part left approval-responded would
        // have the chat send the answer again).
        this.notRun(out);
        if (this.step) out.push({ type: "finish-step" });
        this.step = false;
        this.ended = true;
        if (USER_ABORTS.has(p.reason)) out.push({ type: "abort", reason: p.reason });
        else out.push({ type: "error", errorText: String(p.reason) }, { type: "finish", finishReason: "error" });
        break;
    }
    return out;
  }
  // unrun: the ids of the calls shown whose output has not come.
  unrun() {
    return [...this.calls].filter(([, c]) => !c.out).map(([id]) => id);
  }
  // notRun shows those calls not run: the run ended (an abort, its stream's throw).
  notRun(out) {
    for (const id of this.unrun()) out.push({ type: "tool-output-error", toolCallId: id, errorText: NOT_RUN });
  }
  // end is the stream's end: the run completed, or was aborted (abort seen).
  end(out = []) {
    if (this.ended) return out;
    this.close(out);
    if (this.step) out.push({ type: "finish-step" });
    this.step = false;
    this.ended = true;
    out.push({ type: "finish", finishReason: "stop" });
    return out;
  }
  // quiet: the run waits on the UI's answers: each approval asked is shown,
  // and no call allowed is still running (its output would come).
  quiet() {
    if (this.approvals.size === 0 || this.running.size > 0 || this.text || this.reasoning) return false;
    // Shown: its call's part has this approval (an earlier call of the id had another).
    for (const [id, asked] of this.approvals) if (this.calls.get(id)?.asked !== asked) return false;
    return true;
  }
}

/**
 * UIRun reads a run's messages into UIMessageChunks: one ReadableStream,
 * or (for the transport) several, each ending where the run waits on the
 * UI's answer to an approval and the next going on from there. Each
 * stream reads the run's chunks from its own place: two may read at once
 * (a chat dropped still reading, and the chat made again in its place),
 * and one may read them from the start (keep: a chat reconnecting). The
 * chunks are let go once no stream can read them again (release).
 */
class UIRun {
  constructor(stream, abort, { keep = false } = {}) {
    this.it = stream[Symbol.asyncIterator] ? stream[Symbol.asyncIterator]() : stream;
    // aborts the run (cancel, useChat's stop, the transport's stop), once
    this.abort = () => (this.aborting ??= Promise.resolve(abort()));
    this.chunker = new Chunker();
    this.log = []; // the run's chunks from base on (all of them if keep)
    this.base = 0;
    this.keep = keep;
    this.handed = 0; // the chunks handed to a response so far: the next response goes on from there
    this.unread = false; // a response left the run going (away): what follows may not have been read
    this.seen = false; // a response read the run to its end
    this.readers = 0; // the streams open
    this.next = null; // the pending next() of the run's stream
    this.done = false; // the run's stream ended
    this.ended = new Promise((r) => (this.end = r)); // settles when done
    this.asked = new Map(); // approval id → { callId, resolve }
    this.wakes = new Set(); // the waits of the streams reading
    this.anchor = undefined; // the run's first message its Trace records, as anchorOf gives it
  }
  wake() {
    for (const w of this.wakes) w(WOKEN);
  }
  // ask shows a call's approval request in the UI and resolves with its answer.
  ask(call) {
    return new Promise((resolve) => {
      const callId = call.payload.tool_call_id;
      const approvalId = `approval-${callId}-${++asks}`;
      this.asked.set(approvalId, { callId, resolve });
      this.chunker.approval(callId, approvalId, this.log);
      this.wake();
    });
  }
  answer(approvalId, decision) {
    const a = this.asked.get(approvalId);
    if (!a) return false;
    this.asked.delete(approvalId);
    this.chunker.approvals.delete(a.callId); // answered: no longer waited on
    a.resolve(decision);
    return true;
  }
  get waiting() {
    return this.asked.size > 0;
  }
  // denyAll answers every approval still asked with "deny" (a run given up).
  denyAll() {
    for (const id of [...this.asked.keys()]) {
      this.left?.add(id);
      this.answer(id, "deny");
    }
  }
  /**
   * A ReadableStream of the run's chunks, from where the last response
   * left them, or from the run's start (replay, kept runs only); it opens
   * with first, and pauses (ends) when the run waits on the UI if pause.
   * Its signal's abort or its cancel aborts the run, unless detach()
   * says the chat comes back to it: then only this stream ends.
   */
  stream({ pause = false, signal, replay = false, first = { type: "start" }, detach = () => false } = {}) {
    let at = replay ? 0 : this.handed;
    let gone = false; // detached: this stream ends, the run goes on
    let cancelled = false;
    let left = false;
    const leave = () => {
      if (left) return;
      left = true;
      this.readers--;
      this.release();
    };
    const onAbort = () => {
      if (!detach()) return void this.abort();
      gone = true;
      unlink();
      this.wake();
      this.away();
    };
    let linked = false;
    const unlink = () => {
      if (linked) signal.removeEventListener("abort", onAbort);
      linked = false;
    };
    return new ReadableStream({
      start: (c) => {
        this.readers++;
        c.enqueue(first);
        if (signal) {
          if (signal.aborted) onAbort();
          else {
            signal.addEventListener("abort", onAbort);
            linked = true;
          }
        }
      },
      pull: async (c) => {
        for (;;) {
          if (cancelled) return;
          if (gone) {
            c.enqueue({ type: "abort" });
            c.close();
            leave();
            return;
          }
          const end = this.base + this.log.length;
          if (at < end) {
            for (const chunk of this.log.slice(at - this.base)) c.enqueue(chunk);
            at = end;
            this.handed = Math.max(this.handed, at);
            if (!this.keep) {
              this.log = [];
              this.base = end;
            }
            return;
          }
          if (this.done) {
            unlink();
            this.seen = true;
            c.close();
            leave();
            return;
          }
          if (pause && this.chunker.quiet()) {
            unlink();
            c.enqueue({ type: "finish", finishReason: "tool-calls" });
            c.close();
            leave();
            return;
          }
          let wake;
          const woken = new Promise((r) => this.wakes.add((wake = r)));
          try {
            await Promise.race([this.pump(), woken]);
          } finally {
            this.wakes.delete(wake);
          }
        }
      },
      // Cancelling aborts the run (the promise settles once it has
      // ended), or, detached, ends this stream only.
      cancel: () => {
        cancelled = true;
        unlink();
        this.wake();
        if (!detach()) {
          const aborted = this.abort();
          leave();
          return aborted;
        }
        this.away();
        leave();
      },
    });
  }
  // pump reads the run's next message into the log: one read at a time,
  // whoever waits on it (a response's pull, drain, follow), so that a
  // response reading the run gets all of its chunks, its abort too.
  pump() {
    return (this.next ??= new Promise((r) => r(this.it.next())).then(
      (r) => {
        this.next = null;
        if (r.done) {
          this.finished();
          this.chunker.end(this.log);
          this.release();
        } else {
          this.anchor ??= anchorOf(r.value);
          this.chunker.push(r.value, this.log);
        }
      },
      (e) => {
        // The run's stream threw (a session_busy of another tab, a closed session).
        this.next = null;
        this.finished();
        this.chunker.close(this.log);
        this.chunker.notRun(this.log); // as at an abort
        this.log.push({ type: "error", errorText: errMessage(e) }, { type: "finish", finishReason: "error" });
        this.release();
      },
    ));
  }
  // over: no stream will be given the run again (reconnect gives null):
  // it was aborted (a stop, a new message), or it ended and no chat went
  // away from it, or one read its end since.
  get over() {
    return this.aborting !== undefined || (this.done && (!this.unread || this.seen));
  }
  // release lets go of the chunks once no stream reads them and none will
  // be given the run again: a run's chunks are kept while a chat may
  // reconnect to it only.
  release() {
    if (this.readers === 0 && this.over) {
      this.base += this.log.length;
      this.log = [];
    }
  }
  // away: a response left the run to go on (its chat went away, and may
  // come back): the run is read to its end whether or not a response reads it.
  away() {
    this.unread = true;
    this.follow();
  }
  async follow() {
    while (!this.done) await this.pump();
  }
  /** Reads the run to its end (a run given up): its chunks go to a response still reading it. */
  async drain() {
    this.denyAll();
    await this.follow();
  }
  finished() {
    this.done = true;
    this.denyAll();
    this.end();
  }
}

// anchorOf: a message of a run that its Trace records after its prompt
// (no session_meta, fragment or subagent's message), as the run's first
// such message is matched in a stored session: its type, payload type and
// timestamp; undefined for another message.
function anchorOf(m) {
  if (!isObject(m) || !isObject(m.payload) || (Array.isArray(m.origin) && m.origin.length)) return undefined;
  const kind = m.payload.type;
  if ((m.type !== "event_msg" && m.type !== "model_msg") || typeof kind !== "string" || kind.startsWith("partial_") || typeof m.timestamp !== "string") return undefined;
  return { type: m.type, kind, timestamp: m.timestamp };
}
const isAnchor = (m, a) => isObject(m) && isObject(m.payload) && !(Array.isArray(m.origin) && m.origin.length) && m.type === a.type && m.payload.type === a.kind && m.timestamp === a.timestamp;

const STREAM_KEYS = new Set([]);

/**
 * toUIMessageStream(stream) → a ReadableStream of the AI SDK's
 * UIMessageChunks for a run's messages (session.run(…)'s stream).
 * Cancelling it aborts the run (the stream's return()).
 */
export function toUIMessageStream(stream, options = {}) {
  const name = "toUIMessageStream";
  if (!isObject(stream) || (typeof stream.next !== "function" && typeof stream[Symbol.asyncIterator] !== "function")) {
    throw badArg(`${name}: stream`, "a run's message stream (session.run(…))", stream);
  }
  plainObject(options, `${name}: options`);
  knownKeys(options, STREAM_KEYS, `${name}: options`);
  let run;
  run = new UIRun(stream, () => {
    const it = run.it;
    return typeof it.return === "function" ? Promise.resolve(it.return()).then(() => {}, () => {}) : undefined;
  });
  return run.stream();
}

const TRANSPORT_KEYS = new Set(["session", "createSession", "approve", "thinkingLevel"]);

/**
 * floeChatTransport(options) → a ChatTransport of the AI SDK's UI
 * (useChat({ transport })) that runs a Floe session in the page.
 */
export function floeChatTransport(options) {
  const name = "floeChatTransport";
  plainObject(options, `${name}: options`, "{ session } or { createSession }");
  knownKeys(options, TRANSPORT_KEYS, `${name}: options`);
  const { session, createSession, approve, thinkingLevel } = options;
  if ((session === undefined) === (createSession === undefined)) {
    throw floeError("bad_argument", `${name}: options: want one of session (a Floe session) or createSession (a function of the chat id returning one), got ${session === undefined ? "neither" : "both"}`);
  }
  if (session !== undefined && !(isObject(session) && typeof session.run === "function")) throw badArg(`${name}: options.session`, "a Floe session (with run)", session);
  if (createSession !== undefined && typeof createSession !== "function") throw badArg(`${name}: options.createSession`, "a function of the chat id returning a session", createSession);
  if (approve !== undefined && typeof approve !== "function") throw badArg(`${name}: options.approve`, 'a function of a tool call returning "allow", "deny", "forbidden" or "ask"', approve);
  if (thinkingLevel !== undefined && typeof thinkingLevel !== "string") throw badArg(`${name}: options.thinkingLevel`, "a string", thinkingLevel);

  const made = (id) => (s) => {
    if (!(isObject(s) && typeof s.run === "function")) throw badArg(`${name}: options.createSession(${JSON.stringify(id)})`, "a Floe session (with run)", s);
    return s;
  };
  // chat id → { session: Promise, run: UIRun | null, controller, sent: Set of
  // user message ids, left: Set of approval ids asked and never answered,
  // answered: Set of approval ids the chat answered, starting: Set of the
  // messages waiting to start their runs }
  const chats = new Map();
  // The chats that reconnect (useChat({ resume: true }) asks as it mounts):
  // the abort of one's response is the chat going away (useChat's stop()
  // at an unmount), not a stop: its run goes on, for the chat made again.
  const resuming = new Set();
  const chat = (id) => {
    let c = chats.get(id);
    if (!c) {
      c = { id, session: session !== undefined ? Promise.resolve(session) : Promise.resolve().then(() => createSession(id)).then(made(id)), run: null, controller: null, sent: new Set(), left: new Set(), answered: new Set(), starting: new Set() };
      chats.set(id, c);
      // One that failed (a session another tab holds) is asked for again at the next message.
      c.session.catch(() => chats.get(id) === c && chats.delete(id));
    }
    return c;
  };

  // answer gives the run the answers of message to the approvals it waits
  // on, and it goes on. An answer no run waits on (a new message or a stop
  // ended the run first, as the answer was given) is not an error: its
  // call is shown not run, in the messages given (as a new message shows
  // it), and the response ends at once, changing no message.
  function answer(c, message, messages, signal) {
    const run = c.run;
    let answered = 0;
    for (const part of message.parts ?? []) {
      if (part?.state !== "approval-responded") continue;
      const id = part.approval?.id;
      if (run?.answer(id, part.approval?.approved === true ? "allow" : "deny")) {
        c.answered.add(id);
        answered++;
      } else if (!c.answered.has(id)) c.left.add(id);
    }
    if (answered) {
      prune(c, messages);
      return run.stream({ pause: true, signal, detach: () => run.keep && resuming.has(c.id) });
    }
    const settled = settle(messages, c.left, run);
    settled.forEach((m, i) => m !== messages[i] && (messages[i] = m));
    prune(c, messages);
    return new ReadableStream({
      start(ctl) {
        ctl.enqueue({ type: "start" });
        ctl.enqueue({ type: "finish" });
        ctl.close();
      },
    });
  }

  async function decide(call, run) {
    let d;
    if (approve) d = await approve(call);
    if (d === undefined || d === "ask") {
      // A subagent's call has no part of its own in the chat to ask on.
      if (Array.isArray(call.origin) && call.origin.length) return "deny";
      return run.ask(call);
    }
    return DECISIONS.has(d) ? d : "deny";
  }

  const transport = {
    async sendMessages({ trigger, chatId, messageId, messages, abortSignal } = {}) {
      if (trigger === "regenerate-message") {
        throw floeError("bad_argument", `${name}: regenerate: a Floe session cannot take back a reply (its Trace keeps every run); send a new message instead`);
      }
      if (!Array.isArray(messages) || messages.length === 0) throw badArg(`${name}: sendMessages: messages`, "a non-empty array of UIMessages", messages);
      const c = chat(chatId);
      const last = messages[messages.length - 1];
      // An assistant message sends the UI's answers to approvals: the last
      // message, or the one the request names (useChat names it, and a
      // message sent since the answer follows it).
      const named = messageId === undefined ? last : (messages.find((m) => m?.id === messageId) ?? last);
      if (named?.role === "assistant") return answer(c, named, messages, abortSignal);
      if (last?.role !== "user") {
        throw floeError("bad_argument", `${name}: sendMessages: the last message is not a user message (${describe(last?.role)}): nothing to run`);
      }
      if (messageId !== undefined && messageId === last.id) {
        throw floeError("bad_argument", `${name}: editing message ${JSON.stringify(messageId)}: a Floe session cannot take back a prompt it ran (its Trace keeps every run); send a new message instead`);
      }
      if (c.sent.has(last.id)) throw floeError("bad_argument", `${name}: message ${JSON.stringify(last.id)} was run already`);
      const prompt = promptOf(last, name);
      // Until its run starts the message waits (for the run it aborts, for
      // the session being made): a stop(chatId) then stops it, and its run
      // starts aborted (the prompt kept, as useChat's stop() leaves it).
      const start = { stopped: false };
      start.began = new Promise((r) => (start.begin = r));
      // A message sent before this one and still waiting starts its run
      // aborted (as a run streaming is aborted by a new message): this one
      // waits for that, or both would run at once and one be refused.
      const earlier = [...c.starting];
      for (const e of earlier) e.stopped = true;
      c.starting.add(start);
      try {
        await Promise.all(earlier.map((e) => e.began));
        if (c.run && !c.run.done) {
          // A new message while the run waits on the UI's approvals: the run is aborted.
          await c.run.abort();
        }
        // The calls it left asked wait no more: their parts show it. The chunks
        // reach the new message only, so the chat's messages change: a message
        // with such a call is replaced by a new one, as settle gives it (a UI
        // that keeps copies of the messages, useChat of @ai-sdk/vue, redraws
        // a message that is a new object only).
        const settled = settle(messages, c.left, c.run);
        settled.forEach((m, i) => m !== messages[i] && (messages[i] = m));
        prune(c, messages);
        let s = await c.session;
        const controller = new AbortController();
        if (start.stopped) controller.abort();
        let run;
        const runOptions = {
          approve: (call) => decide(call, run),
          signal: controller.signal,
          ...(thinkingLevel !== undefined ? { thinkingLevel } : {}),
        };
        let stream;
        try {
          stream = s.run(prompt, runOptions);
        } catch (e) {
          // A session the app closed (a component's cleanup) is made again
          // by createSession, once, and the message runs in it; a session
          // given as options.session cannot be.
          if (e?.code !== "closed" || session !== undefined || chats.get(chatId) !== c) throw e;
          c.session = Promise.resolve().then(() => createSession(chatId)).then(made(chatId));
          c.session.catch(() => chats.get(chatId) === c && chats.delete(chatId));
          s = await c.session;
          stream = s.run(prompt, runOptions);
        }
        run = new UIRun(
          stream,
          () => {
            controller.abort();
            return run.drain();
          },
          // Its chunks are kept for a chat that asked to reconnect (resume: true asks as it mounts).
          { keep: resuming.has(chatId) },
        );
        run.left = c.left;
        // The run's assistant message is named, for a chat that reconnects
        // to find it, and so is the Trace's copy of it (toUIMessages given
        // the transport finds the run by its session, prompt and anchor).
        run.messageId = messageIdOf();
        run.sessionId = typeof s.id === "string" ? s.id : undefined;
        run.prompt = prompt[0]?.payload?.type === "text" ? prompt[0].payload.text : undefined;
        c.run = run;
        c.controller = controller;
        c.sent.add(last.id);
        return run.stream({ pause: true, signal: abortSignal, first: { type: "start", messageId: run.messageId }, detach: () => run.keep && resuming.has(chatId) });
      } finally {
        c.starting.delete(start);
        start.begin();
      }
    },
    // useChat's stop() ends a response; a run waiting on an approval has
    // none (the response ended with the request), so stop(chatId) ends the
    // chat's run, and resolves once it has, with a function of the chat's
    // messages giving them with the calls it left asked, or without
    // output, as not run.
    async stop(chatId) {
      if (typeof chatId !== "string") throw badArg(`${name}: stop: chatId`, "a chat's id (a string)", chatId);
      const c = chats.get(chatId);
      // A message waiting to start its run starts it aborted: the stop waits for it.
      const starting = [...(c?.starting ?? [])];
      for (const start of starting) start.stopped = true;
      await Promise.all(starting.map((start) => start.began));
      const run = c?.run;
      // The run is aborted and read to its end: a response reading it
      // still gets its chunks, the abort's too, and ends; one left unread
      // (its reader not reading) holds no stop.
      if (run && !run.done) await run.abort();
      return (messages) => settle(messages, c?.left, run);
    },
    // A chat made again with the id of one whose run goes on (or ended
    // while no chat read it) gets that run from its start: its assistant
    // message is replayed into the message of its id (resumeStreamIsReplay),
    // then follows live. A run lives in the page: after a reload there is
    // none to reconnect to, and the chat's messages come from the stored
    // session (toUIMessages).
    resumeStreamIsReplay: true,
    async reconnectToStream({ chatId, abortSignal } = {}) {
      if (typeof chatId !== "string") throw badArg(`${name}: reconnectToStream: chatId`, "a chat's id (a string)", chatId);
      resuming.add(chatId);
      const run = chats.get(chatId)?.run;
      // None once a stop or a new message aborted it; one that ended, only
      // if a chat left it going and none read its end since; none started
      // before the chat first asked (its chunks were not kept).
      if (!run || !run.keep || run.over) return null;
      return run.stream({ pause: true, signal: abortSignal, replay: true, first: { type: "start", messageId: run.messageId }, detach: () => true });
    },
  };
  // toUIMessages(messages, { transport }) asks for the chats' runs.
  transports.set(transport, () => [...chats.values()].map((c) => c.run).filter(Boolean));
  // For tests: the ids a chat's bookkeeping holds.
  Object.defineProperty(transport, Symbol.for("floe.debug"), {
    value: { held: (chatId) => { const c = chats.get(chatId); return c ? { sent: c.sent.size, left: c.left.size, answered: c.answered.size } : null; } },
  });
  return transport;
}

// Each floeChatTransport → a function giving its chats' runs.
const transports = new WeakMap();

// messageIdOf names a run's assistant message: unique, so that it does not
// take the place of another message in a chat (the AI SDK's write() finds
// the message to update by its id).
function messageIdOf() {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(12));
  return `floe-run-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

// prune lets go of the ids of messages and approvals the chat's messages
// no longer hold: the chat cannot send them again.
function prune(c, messages) {
  const held = new Set();
  for (const m of messages) {
    if (!isObject(m)) continue;
    held.add(m.id);
    for (const part of Array.isArray(m.parts) ? m.parts : []) if (isObject(part?.approval)) held.add(part.approval.id);
  }
  for (const ids of [c.sent, c.left, c.answered]) for (const id of ids) if (!held.has(id)) ids.delete(id);
}

// leftOpen: a tool part asked in the chat whose run ended without its answer.
const leftOpen = (part, left) => isObject(part) && (part.state === "approval-requested" || part.state === "approval-responded") && left?.has(part.approval?.id) === true;
const notRun = (part) => {
  const { approval, ...rest } = part;
  return { ...rest, state: "output-error", errorText: NOT_RUN };
};
const WAITING = new Set(["input-streaming", "input-available", "approval-requested", "approval-responded"]);
// settle gives the messages with the calls left asked, and the calls of
// the ended run's message it left without output (a response the chat
// stopped reading did not get that), as not run (new objects where changed).
function settle(messages, left, run) {
  if (!Array.isArray(messages)) throw badArg("floeChatTransport: stop(…)'s function: messages", "an array of UIMessages", messages);
  const unrun = run?.done ? new Set(run.chunker.unrun()) : null;
  const open = (m, p) => leftOpen(p, left) || (unrun !== null && m.id === run.messageId && isObject(p) && WAITING.has(p.state) && unrun.has(p.toolCallId));
  return messages.map((m) => (isObject(m) && Array.isArray(m.parts) && m.parts.some((p) => open(m, p)) ? { ...m, parts: m.parts.map((p) => (open(m, p) ? notRun(p) : p)) } : m));
}

// promptOf is a user UIMessage as run()'s prompt: its texts, then its files.
function promptOf(message, name) {
  const parts = Array.isArray(message.parts) ? message.parts : [];
  const texts = [];
  const files = [];
  parts.forEach((part, i) => {
    if (part?.type === "text") texts.push(String(part.text ?? ""));
    else if (part?.type === "file") {
      const where = `${name}: message ${JSON.stringify(message.id)}: parts[${i}]`;
      const url = part.url;
      const type = String(part.mediaType ?? "");
      if (typeof url !== "string") throw badArg(`${where}.url`, "a URL string", url);
      if (type.startsWith("image/")) {
        files.push({ type: "model_msg", payload: { type: "image_url", role: "user", image_url: url } });
        return;
      }
      const m = /^data:([^;,]*)(?:;[^;,]*)*;base64,(.*)$/s.exec(url);
      if (!m) throw floeError("bad_argument", `${where}: a file of type ${JSON.stringify(type)} must be a base64 data: URL (only images may be web URLs), got ${JSON.stringify(url.slice(0, 40))}`);
      files.push({ type: "model_msg", payload: { type: "inline_data", role: "user", mime_type: type || m[1] || "application/octet-stream", data: m[2] } });
    }
  });
  if (texts.length === 0 && files.length === 0) throw floeError("bad_argument", `${name}: message ${JSON.stringify(message.id)}: no text or file part to send`);
  return texts.length ? [msg.userText(texts.join("\n")), ...files] : files;
}

const TO_UI_KEYS = new Set(["idPrefix", "transport"]);

/**
 * toUIMessages(messages) → the UIMessages of a stored session's messages
 * (readSession), for useChat({ messages }): a user message per prompt, an
 * assistant message per run. Given the transport, the reply of a run it
 * holds has the id the transport gives that run's message.
 */
export function toUIMessages(messages, options = {}) {
  const name = "toUIMessages";
  if (!Array.isArray(messages)) throw badArg(`${name}: messages`, "an array of OmniMessages (readSession's)", messages);
  plainObject(options, `${name}: options`);
  knownKeys(options, TO_UI_KEYS, `${name}: options`);
  const prefix = options.idPrefix ?? "floe-";
  if (typeof prefix !== "string") throw badArg(`${name}: options.idPrefix`, "a string", prefix);
  const runs = options.transport === undefined ? null : transports.get(options.transport);
  if (runs === undefined) throw badArg(`${name}: options.transport`, "a transport floeChatTransport made", options.transport);
  const out = [];
  let user = null;
  let prompt = -1; // the index of the last prompt
  let last = null; // the reply after it
  let reply = null; // { message, chunker, parts by id }
  let group = null; // the user messages last seen: a prompt's ("prompt") or a steer's ("steer")
  let compacting = false; // between a compaction's begin and its end
  const finish = () => {
    if (!reply) return;
    const chunks = reply.chunker.end();
    for (const ch of chunks) apply(reply, ch);
    // A call whose output never came (a run cut off): not waiting for ever.
    for (const part of reply.message.parts) {
      if (part.toolCallId && (part.state === "input-available" || part.state === "input-streaming" || part.state === "approval-requested" || part.state === "approval-responded")) {
        Object.assign(part, { state: "output-error", errorText: NOT_RUN });
        delete part.approval;
      }
    }
    reply = null;
  };
  messages.forEach((m, i) => {
    if (!isObject(m) || !isObject(m.payload) || (Array.isArray(m.origin) && m.origin.length)) return;
    const p = m.payload;
    // A compaction is not in a run's chunks: its prompt, request and
    // summary (stored, never streamed) are left out.
    if (p.type === "compaction_begin") compacting = true;
    else if (p.type === "compaction_end") compacting = false;
    if (compacting) return;
    const userSide = m.type === "model_msg" && p.role === "user" && p.type !== "tool_call_output";
    if (userSide && p.type === "text" && (typeof p.text !== "string" || p.text.trimStart().startsWith("[context_summary]"))) return;
    const file = userSide && (p.type === "image_url" || p.type === "inline_data");
    // A prompt is its text, then its files; one of files only starts
    // where no prompt's or steer's messages come before them.
    if ((userSide && p.type === "text" && steeringText(p.text) === null) || (file && group === null)) {
      finish();
      user = { id: `${prefix}${i}`, role: "user", parts: file ? [] : [{ type: "text", text: p.text }] };
      out.push(user);
      prompt = i;
      last = null;
      group = "prompt";
      if (!file) return;
    }
    if (file && group === "prompt") {
      user.parts.push(p.type === "image_url" ? { type: "file", mediaType: mediaOf(p.image_url), url: p.image_url } : { type: "file", mediaType: p.mime_type, url: `data:${p.mime_type};base64,${p.data}` });
      return;
    }
    group = userSide && (file || p.type === "text") ? "steer" : null;
    if (m.type === "session_meta") return;
    if (!reply) {
      const chunks = [];
      const chunker = new Chunker();
      chunker.push(m, chunks);
      if (chunks.length === 0) return;
      reply = { message: { id: `${prefix}${i}`, role: "assistant", parts: [] }, chunker, open: new Map() };
      out.push(reply.message);
      if (prompt !== -1) last = reply.message;
      for (const ch of chunks) apply(reply, ch);
      return;
    }
    for (const ch of reply.chunker.push(m)) apply(reply, ch);
  });
  finish();
  if (runs && last) {
    const id = liveRun(messages, prompt, runs());
    if (id !== undefined) last.id = id;
  }
  return out;
}

// liveRun is the id of the transport's run whose reply in a stored
// session is the one after its last prompt (at index prompt), if any: a
// run of that session and prompt whose first recorded message comes after
// it (a run's messages follow its prompt; its prompt is the last one
// stored only if one of them is).
function liveRun(messages, prompt, runs) {
  const meta = messages.find((m) => m?.type === "session_meta" && !(Array.isArray(m.origin) && m.origin.length));
  const session = meta?.payload?.session_id;
  const text = messages[prompt].payload.text;
  for (const run of runs) {
    if (!run.anchor || (run.sessionId !== undefined && session !== undefined && run.sessionId !== session)) continue;
    if (run.prompt !== undefined && run.prompt !== text) continue;
    for (let i = messages.length - 1; i > prompt; i--) if (isAnchor(messages[i], run.anchor)) return run.messageId;
  }
  return undefined;
}

const mediaOf = (url) => /^data:([^;,]+)/.exec(url)?.[1] ?? "image/*";

// apply folds one chunk into a stored reply's message (the chunks Chunker makes).
function apply(reply, ch) {
  const parts = reply.message.parts;
  const tool = (id) => {
    for (let i = parts.length - 1; i >= 0; i--) if (parts[i].toolCallId === id) return parts[i];
    return null;
  };
  switch (ch.type) {
    case "start-step":
      parts.push({ type: "step-start" });
      break;
    case "reset-step": {
      const at = parts.findLastIndex((p) => p.type === "step-start");
      parts.splice(at + 1);
      break;
    }
    case "text-start":
    case "reasoning-start": {
      const part = { type: ch.type === "text-start" ? "text" : "reasoning", text: "", state: "streaming" };
      reply.open.set(ch.id, part);
      parts.push(part);
      break;
    }
    case "text-delta":
    case "reasoning-delta":
      reply.open.get(ch.id).text += ch.delta;
      break;
    case "text-end":
    case "reasoning-end":
      reply.open.get(ch.id).state = "done";
      reply.open.delete(ch.id);
      break;
    case "tool-input-available":
      parts.push({ type: `tool-${ch.toolName}`, toolCallId: ch.toolCallId, state: "input-available", input: ch.input });
      break;
    case "tool-approval-request": {
      const part = tool(ch.toolCallId);
      if (part) Object.assign(part, { state: "approval-requested", approval: { id: ch.approvalId, ...(ch.isAutomatic ? { isAutomatic: true } : {}) } });
      break;
    }
    case "tool-approval-response": {
      const part = parts.find((p) => p.approval?.id === ch.approvalId);
      if (part) Object.assign(part, { state: "approval-responded", approval: { ...part.approval, approved: ch.approved, ...(ch.reason ? { reason: ch.reason } : {}) } });
      break;
    }
    case "tool-output-available":
    case "tool-output-error":
    case "tool-output-denied": {
      const part = tool(ch.toolCallId);
      if (!part) break;
      if (ch.type === "tool-output-denied") part.state = "output-denied";
      else if (ch.type === "tool-output-error") Object.assign(part, { state: "output-error", errorText: ch.errorText });
      else Object.assign(part, { state: "output-available", output: ch.output });
      break;
    }
    case "steering-message":
      parts.push({ type: "steering-message", id: ch.id, parts: ch.parts });
      break;
    case "file":
      parts.push({ type: "file", mediaType: ch.mediaType, url: ch.url });
      break;
  }
}
