// The agent both pages and the background service worker run: a scripted
// model that calls the tool `reverse`, and the tool. A real extension would
// call a provider here (floe.openai(…), with the endpoint in the manifest's
// host_permissions).
const now = () => new Date().toISOString();
const model = (payload) => ({ timestamp: now(), type: "model_msg", payload });
const usage = (total) => ({
  timestamp: now(),
  type: "event_msg",
  payload: {
    type: "token_usage",
    session: { cache_read: 0, cache_write: 0, output: total, total },
    request: { cache_read: 0, cache_write: 0, output: total, total },
  },
});

// The first request of a run calls `reverse`, the second reports its output.
export const llm = {
  async *streamGenerate({ newMessages }) {
    const output = newMessages.find((m) => m.payload.type === "tool_call_output");
    if (!output) {
      const args = JSON.stringify({ text: "floe" });
      const id = `call_${crypto.randomUUID().slice(0, 8)}`; // unique in the session, as a provider's
      const call = { role: "assistant", name: "reverse", tool_call_id: id };
      yield model({ type: "partial_tool_call", ...call, event_type: "start", arguments: "" });
      yield model({ type: "partial_tool_call", ...call, event_type: "delta", arguments: args });
      yield model({ type: "partial_tool_call", ...call, event_type: "stop", arguments: "", stop_reason: "completed" });
      yield model({ type: "tool_call", ...call, arguments: args, stop_reason: "completed" });
      yield usage(12);
    } else {
      const text = `Reversed: ${output.payload.output}`;
      yield model({ type: "partial_text", role: "assistant", event_type: "start", text: "" });
      yield model({ type: "partial_text", role: "assistant", event_type: "delta", text });
      yield model({ type: "partial_text", role: "assistant", event_type: "stop", text: "", stop_reason: "completed" });
      yield model({ type: "text", role: "assistant", text, stop_reason: "completed" });
      yield usage(20);
    }
    return { status: "completed" };
  },
};

// The tool: reverses its text argument.
export const environment = {
  async *executeTool({ toolCall }) {
    const { text } = JSON.parse(toolCall.payload.arguments);
    const output = [...text].reverse().join("");
    yield model({ type: "tool_call_output", role: "user", output, tool_call_id: toolCall.payload.tool_call_id, stop_reason: "completed" });
  },
};

export const tools = [{ name: "reverse", description: "Reverse a text.", parameters: { type: "object" } }];

/**
 * The session with this id: its stored Trace resumed (the page was opened
 * before, or the worker ran it and was stopped), else a new one. Its Trace
 * is in the extension's IndexedDB, shared by its pages and its worker.
 */
export async function openSession(floe, id) {
  try {
    return { session: await floe.resumeSession(id, { llm, environment, tools }), resumed: true };
  } catch (e) {
    if (e?.code !== "not_found") throw e;
  }
  const meta = { session_id: id, provider: "example", model_id: "scripted", model_context_window: 1000, system_prompt: "", agent_state: "extension", workspace: "extension" };
  return { session: floe.createSession({ meta, llm, environment, tools }), resumed: false };
}
