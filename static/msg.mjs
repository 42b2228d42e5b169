// Builders of OmniMessages: the same shapes (and key order) as the Go
// builders of package omni (tested against engine/omni/testdata/builders.jsonl).
// Envelopes carry no timestamp: the engine stamps what it streams.

const model = (payload) => ({ type: "model_msg", payload });
const stop = (p, stopReason) => {
  if (stopReason) p.stop_reason = stopReason;
  return p;
};
const counts = (c = {}) => ({
  cache_read: c.cache_read ?? 0,
  cache_write: c.cache_write ?? 0,
  output: c.output ?? 0,
  total: c.total ?? 0,
});

export const msg = Object.freeze({
  /** A user text; sender "parent_agent" | "harness" | "server" when not the user. */
  userText(text, sender) {
    const p = { type: "text", role: "user", text: String(text), stop_reason: "completed" };
    if (sender && sender !== "user") p.sender = sender;
    return model(p);
  },
  /** A complete assistant text. */
  text(text, stopReason = "completed") {
    return model({ type: "text", role: "assistant", text: String(text), stop_reason: stopReason });
  },
  /** A complete assistant thinking block. */
  thinking(thinking, stopReason = "completed") {
    return model({ type: "thinking", role: "assistant", thinking: String(thinking), stop_reason: stopReason });
  },
  /** A complete tool call; args is its JSON text, or a value to serialize. */
  toolCall(id, name, args = "{}") {
    const a = typeof args === "string" ? args : JSON.stringify(args);
    return model({ type: "tool_call", role: "assistant", name, arguments: a, tool_call_id: id, stop_reason: "completed" });
  },
  /** A complete tool output; images are data: URLs. */
  toolOutput(id, output, stopReason = "completed", images) {
    const p = { type: "tool_call_output", role: "user", output: String(output) };
    if (images && images.length) p.images = [...images];
    p.tool_call_id = id;
    p.stop_reason = stopReason;
    return model(p);
  },
  /** A partial_text fragment ("start" and "stop" carry ""). */
  partialText(eventType, text = "", stopReason) {
    return model(stop({ type: "partial_text", role: "assistant", event_type: eventType, text }, stopReason));
  },
  partialThinking(eventType, thinking = "", stopReason) {
    return model(stop({ type: "partial_thinking", role: "assistant", event_type: eventType, thinking }, stopReason));
  },
  partialToolCall(eventType, args, id, name, stopReason) {
    return model(stop({ type: "partial_tool_call", role: "assistant", event_type: eventType, name, arguments: args ?? "", tool_call_id: id }, stopReason));
  },
  partialToolOutput(eventType, output, id, stopReason) {
    return model(stop({ type: "partial_tool_call_output", role: "user", event_type: eventType, output: output ?? "", tool_call_id: id }, stopReason));
  },
  /** token_usage; absent counts are 0, request defaults to session. */
  tokenUsage(session, request = session) {
    return { type: "event_msg", payload: { type: "token_usage", session: counts(session), request: counts(request) } };
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
