// Runs one Floe session in this extension page. floe.mjs, floe.wasm and
// wasm_exec.js are copied next to this file from the build (see README.md);
// the manifest's CSP allows them with 'wasm-unsafe-eval' and nothing looser.
import { load } from "./floe.mjs";

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

// A scripted model: the first request calls `reverse`, the second reports
// the tool's output. A real extension would call a provider here.
const llm = {
  async *streamGenerate({ newMessages }) {
    const output = newMessages.find((m) => m.payload.type === "tool_call_output");
    if (!output) {
      const args = JSON.stringify({ text: "floe" });
      yield model({ type: "partial_tool_call", role: "assistant", event_type: "start", name: "reverse", arguments: "", tool_call_id: "call_1" });
      yield model({ type: "partial_tool_call", role: "assistant", event_type: "delta", name: "reverse", arguments: args, tool_call_id: "call_1" });
      yield model({ type: "partial_tool_call", role: "assistant", event_type: "stop", name: "reverse", arguments: "", tool_call_id: "call_1", stop_reason: "completed" });
      yield model({ type: "tool_call", role: "assistant", name: "reverse", arguments: args, tool_call_id: "call_1", stop_reason: "completed" });
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
const environment = {
  async *executeTool({ toolCall }) {
    const { text } = JSON.parse(toolCall.payload.arguments);
    const output = [...text].reverse().join("");
    yield model({ type: "tool_call_output", role: "user", output, tool_call_id: toolCall.payload.tool_call_id, stop_reason: "completed" });
  },
};

async function main() {
  const floe = await load();
  const session = floe.createSession({
    meta: {
      session_id: "session-2026-01-01-00-00-00-e0e0e0e0",
      provider: "example",
      model_id: "scripted",
      model_context_window: 1000,
      system_prompt: "",
      agent_state: "extension",
      workspace: "extension",
    },
    llm,
    environment,
    tools: [{ name: "reverse", description: "Reverse a text.", parameters: { type: "object" } }],
  });
  const list = document.getElementById("stream");
  const messages = [];
  // A real extension would ask the user; this example allows every call.
  for await (const m of session.run("Reverse 'floe'.", { approve: async () => "allow" })) {
    messages.push(m);
    const li = document.createElement("li");
    li.textContent = m.payload.type + (m.payload.event_type ? ` ${m.payload.event_type}` : "");
    list.append(li);
    if (m.payload.type === "text") document.getElementById("reply").textContent = m.payload.text;
  }
  await session.close();
  return messages;
}

window.floeResult = main().then(
  (messages) => {
    document.body.dataset.state = "done";
    return { messages };
  },
  (err) => {
    document.body.dataset.state = "error";
    document.getElementById("error").textContent = String(err?.stack ?? err);
    return { error: String(err?.stack ?? err) };
  },
);
