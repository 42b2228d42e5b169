// floe/ai-sdk: a language model of the Vercel AI SDK (specification v3 or
// v4: @ai-sdk/anthropic, @ai-sdk/openai, @ai-sdk/google, @ai-sdk/openai-compatible…)
// as a Floe model. It calls the model's doStream itself, so it needs no
// package of the AI SDK: the conversation is kept in the specification's
// prompt format, and the stream's parts become OmniMessages.
import { msg } from "./msg.mjs";
import { badArg, describe, errMessage, floeError, isObject, knownKeys, plainObject } from "./internal.mjs";

const VERSIONS = ["v3", "v4"];
const OPTION_KEYS = new Set([
  "providerOptions", "maxOutputTokens", "temperature", "topP", "topK", "presencePenalty", "frequencyPenalty",
  "stopSequences", "seed", "headers", "contextWindow", "sessionTokens",
]);
const NUMBERS = ["temperature", "topP", "topK", "presencePenalty", "frequencyPenalty"];
// Floe's thinking levels (provider.ParseThinking's words) as v4's `reasoning`.
const LEVELS = { none: "none", off: "none", minimal: "minimal", low: "low", medium: "medium", high: "high", xhigh: "xhigh", max: "max" };
// Errors a retry cannot mend: the prompt or an option the model refused before sending.
const PERMANENT = new Set(["AI_InvalidPromptError", "AI_UnsupportedFunctionalityError", "AI_InvalidArgumentError"]);
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
  const session = { cache_read: 0, cache_write: 0, output: 0, total: 0 };
  if (o.sessionTokens !== undefined) Object.assign(session, msg.tokenUsage(o.sessionTokens).payload.session);
  const label = typeof model.provider === "string" && model.provider ? model.provider : "ai-sdk";
  const settings = {};
  for (const k of ["maxOutputTokens", ...NUMBERS, "stopSequences", "seed", "headers"]) if (o[k] !== undefined) settings[k] = o[k];

  const history = []; // the prompt's messages of every completed request
  const names = new Map(); // tool call id → tool name (a tool result names its tool)
  let toolsIn = null;
  let toolsOut;

  const llm = {
    provider: label,
    modelId: typeof model.modelId === "string" ? model.modelId : "",
    loadHistory(messages, tokens) {
      history.push(...toPrompt(messages, version, names));
      if (tokens) Object.assign(session, tokens);
    },
    async *streamGenerate({ newMessages, thinkingLevel, signal, tools, systemPrompt }) {
      const call = { ...settings, abortSignal: signal };
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
      call.prompt = [...(systemPrompt ? [{ role: "system", content: systemPrompt }] : []), ...history, ...input];

      let reader;
      try {
        reader = (await model.doStream(call)).stream.getReader();
      } catch (e) {
        return failure(e, signal, label, false);
      }
      const reply = []; // the complete messages, for the history
      const skip = new Set(); // ids of tool calls the provider runs itself
      const started = new Set(); // ids of tool calls whose input streams
      const renamed = new Map(); // a streamed call's id at its end → the id it started with
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
        open = { kind, id: p.id, body: "", meta: merge(null, p.providerMetadata), name, raw: p.inputEncoding === "text" };
        if (kind === "text") yield msg.partialText("start");
        else if (kind === "reasoning") yield msg.partialThinking("start");
        else yield msg.partialToolCall("start", "", p.id, name);
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
        if (p.type === "tool-input-end" && open?.kind === "tool" && id !== open.id && !started.has(id)) renamed.set(id, open.id);
        id = renamed.get(id) ?? id;
        const mine = open?.kind === "tool" && id === open.id;
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
            else yield* start("tool", p, String(p.toolName ?? ""));
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
              names.set(p.toolCallId, p.toolName);
              yield complete(msg.toolCall(p.toolCallId, p.toolName, p.input ?? "{}"), merge(null, p.providerMetadata));
              return;
            }
            open.meta = merge(open.meta, p.providerMetadata);
            names.set(open.id, open.name);
            yield* close(typeof p.input === "string" ? p.input : undefined);
            return;
          case "finish":
            finish = p;
            return;
          case "error":
            failed = failure(p.error, signal, label, false);
            return;
          default:
            // tool-input-end, stream-start, response-metadata, raw, ping, source,
            // file, reasoning-file, custom, tool-result, tool-approval-request,
            // and a type this module does not know: not part of the conversation.
            return;
        }
      }

      try {
        for (;;) {
          let r;
          try {
            r = await reader.read();
          } catch (e) {
            return failure(e, signal, label, true);
          }
          if (r.done) break;
          yield* part(r.value);
          if (failed) return failed;
        }
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
        history.push(...input, ...toPrompt(reply, version, names));
        return { status: "completed" };
      } finally {
        reader.cancel().catch(() => {});
      }
    },
  };
  if (o.contextWindow !== undefined) llm.contextWindow = o.contextWindow;
  return llm;
}

// merge adds provider metadata b to a (per provider, later keys winning).
function merge(a, b) {
  if (!isObject(b)) return a;
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = isObject(v) ? { ...out[k], ...v } : v;
  return out;
}

// failure is the outcome of what doStream threw, a read of its stream
// threw (read), or an error part carried.
function failure(e, signal, label, read) {
  if (signal.aborted || e?.name === "AbortError") return { status: "aborted", errorMessage: `${label}: aborted` };
  let text = isObject(e) ? String(e.message ?? JSON.stringify(e)) : errMessage(e);
  if (e?.cause !== undefined) text += ` (${errMessage(e.cause)})`; // e.g. a cut body: "… (terminated)"
  const status = isObject(e) ? e.statusCode : undefined;
  if (Number.isInteger(status)) {
    const after = e.responseHeaders?.["retry-after"];
    const errorMessage = `${label}: HTTP ${status}: ${text}${after ? ` (Retry-After: ${after})` : ""}`;
    if (status === 401 || status === 403) return { status: "auth", errorMessage };
    if (e.isRetryable === true) return { status: "timeout", errorMessage };
    return { status: "failed", errorMessage, permanent: e.isRetryable === false };
  }
  const errorMessage = `${label}: ${text}`;
  if (e?.name === "AI_APICallError") return e.isRetryable === false ? { status: "failed", errorMessage } : { status: "timeout", errorMessage };
  if (MALFORMED.has(e?.name)) return { status: "malformed", errorMessage };
  if (PERMANENT.has(e?.name)) return { status: "failed", errorMessage, permanent: true };
  return { status: read ? "timeout" : "failed", errorMessage }; // a read that failed is the network's
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

const parseArgs = (s) => {
  try {
    return JSON.parse(s);
  } catch {
    return s;
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
        break;
      case "thinking":
        add("assistant", options({ type: "reasoning", text: p.thinking }, p));
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
