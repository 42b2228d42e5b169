// Builders of OmniMessages: the same shapes (and key order) as the Go
// builders of package omni (tested against engine/omni/testdata/builders.jsonl).
// Envelopes carry no timestamp: the engine stamps what it streams.

import { badArg, describe, floeError, imagesProblem, isObject, knownKeys } from "./internal.mjs";

// Each builder checks its arguments against PROTOCOL.md, so that a wrong
// one is named where the message is built (bad_argument), not later by
// the engine as an invalid message of the callback that yielded it.
const STOP_REASONS = ["completed", "failed", "aborted", "timeout", "malformed", "auth"];
const SENDERS = ["user", "parent_agent", "harness", "server"];
const EVENT_TYPES = ["start", "delta", "stop"];

const str = (v, name) => {
  if (typeof v !== "string") throw badArg(name, "a string", v);
  return v;
};
const nonEmpty = (v, name) => {
  if (typeof v !== "string" || v === "") throw badArg(name, "a non-empty string", v);
  return v;
};
const oneOf = (v, list, name) => {
  if (!list.includes(v)) {
    throw floeError("bad_argument", `${name}: want ${list.map((x) => JSON.stringify(x)).join(", ")}, got ${typeof v === "string" ? JSON.stringify(v) : describe(v)}`);
  }
  return v;
};

const model = (payload) => ({ type: "model_msg", payload });
const stop = (p, stopReason, name) => {
  if (stopReason !== undefined) p.stop_reason = oneOf(stopReason, STOP_REASONS, name + ": stopReason");
  return p;
};
const COUNT_KEYS = new Set(["cache_read", "cache_write", "output", "total"]);
const counts = (c = {}, name) => {
  if (!isObject(c)) throw badArg(name, "TokenCounts {cache_read?, cache_write?, output?, total?}", c);
  // A misspelt count ({ totl: 5 }) would be a 0 without a word.
  knownKeys(c, COUNT_KEYS, name);
  const n = (k) => {
    const v = c[k] ?? 0;
    if (!Number.isSafeInteger(v) || v < 0) {
      throw floeError("bad_argument", `${name}.${k}: want a count (an integer, 0 or more), got ${typeof v === "number" ? String(v) : describe(v)}`);
    }
    return v;
  };
  return { cache_read: n("cache_read"), cache_write: n("cache_write"), output: n("output"), total: n("total") };
};

export const msg = Object.freeze({
  /** A user text; sender "parent_agent" | "harness" | "server" when not the user. */
  userText(text, sender) {
    const p = { type: "text", role: "user", text: str(text, "msg.userText: text"), stop_reason: "completed" };
    if (sender !== undefined && oneOf(sender, SENDERS, "msg.userText: sender") !== "user") p.sender = sender;
    return model(p);
  },
  /** A complete assistant text. */
  text(text, stopReason = "completed") {
    return model(stop({ type: "text", role: "assistant", text: str(text, "msg.text: text") }, stopReason, "msg.text"));
  },
  /** A complete assistant thinking block. */
  thinking(thinking, stopReason = "completed") {
    return model(stop({ type: "thinking", role: "assistant", thinking: str(thinking, "msg.thinking: thinking") }, stopReason, "msg.thinking"));
  },
  /** A complete tool call; args is its JSON text, or a value to serialize. */
  toolCall(id, name, args = "{}") {
    nonEmpty(id, "msg.toolCall: id");
    nonEmpty(name, "msg.toolCall: name");
    let a = args;
    if (typeof a !== "string") {
      try {
        a = JSON.stringify(args);
      } catch (e) {
        throw floeError("bad_argument", `msg.toolCall: args: cannot be encoded as JSON: ${e instanceof Error ? e.message : String(e)}`);
      }
      if (typeof a !== "string") throw badArg("msg.toolCall: args", "a JSON text or a value JSON can encode", args);
    }
    return model({ type: "tool_call", role: "assistant", name, arguments: a, tool_call_id: id, stop_reason: "completed" });
  },
  /** A complete tool output; images are data: URLs. */
  toolOutput(id, output, stopReason = "completed", images) {
    nonEmpty(id, "msg.toolOutput: id");
    const p = { type: "tool_call_output", role: "user", output: str(output, "msg.toolOutput: output") };
    if (images !== undefined && images !== null) {
      const bad = imagesProblem(images);
      if (bad) throw floeError("bad_argument", `msg.toolOutput: images: ${bad}`);
      if (images.length) p.images = [...images];
    }
    p.tool_call_id = id;
    return model(stop(p, stopReason, "msg.toolOutput"));
  },
  /** A partial_text fragment ("start" and "stop" carry ""). */
  partialText(eventType, text = "", stopReason) {
    const e = oneOf(eventType, EVENT_TYPES, "msg.partialText: eventType");
    return model(stop({ type: "partial_text", role: "assistant", event_type: e, text: str(text, "msg.partialText: text") }, stopReason, "msg.partialText"));
  },
  partialThinking(eventType, thinking = "", stopReason) {
    const e = oneOf(eventType, EVENT_TYPES, "msg.partialThinking: eventType");
    return model(
      stop({ type: "partial_thinking", role: "assistant", event_type: e, thinking: str(thinking, "msg.partialThinking: thinking") }, stopReason, "msg.partialThinking"),
    );
  },
  partialToolCall(eventType, args, id, name, stopReason) {
    const e = oneOf(eventType, EVENT_TYPES, "msg.partialToolCall: eventType");
    const p = {
      type: "partial_tool_call",
      role: "assistant",
      event_type: e,
      name: str(name ?? "", "msg.partialToolCall: name"),
      arguments: str(args ?? "", "msg.partialToolCall: args"),
      tool_call_id: nonEmpty(id, "msg.partialToolCall: id"),
    };
    return model(stop(p, stopReason, "msg.partialToolCall"));
  },
  partialToolOutput(eventType, output, id, stopReason) {
    const e = oneOf(eventType, EVENT_TYPES, "msg.partialToolOutput: eventType");
    const p = {
      type: "partial_tool_call_output",
      role: "user",
      event_type: e,
      output: str(output ?? "", "msg.partialToolOutput: output"),
      tool_call_id: nonEmpty(id, "msg.partialToolOutput: id"),
    };
    return model(stop(p, stopReason, "msg.partialToolOutput"));
  },
  /** token_usage; absent counts are 0, request defaults to session. */
  tokenUsage(session, request = session) {
    return { type: "event_msg", payload: { type: "token_usage", session: counts(session, "msg.tokenUsage: session"), request: counts(request, "msg.tokenUsage: request") } };
  },
});

/**
 * Reports whether m is a message whose payload type is type (or, for
 * "session_meta", whose envelope type is).
 */
export function isMessage(m, type) {
  if (m === null || typeof m !== "object") return false;
  if (type === "session_meta") return m.type === "session_meta";
  return m.payload !== null && typeof m.payload === "object" && m.payload.type === type;
}
