// A module Worker running one tool task per model (openaiCompatible and
// anthropic) against the replay servers named in the first message; it
// posts back each run's texts, tool calls and request_end statuses.
import { load } from "/static/floe.mjs";

const TOOLS = [{ name: "read_file", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } } } }];

onmessage = async ({ data }) => {
  try {
    const floe = await load();
    const out = {};
    const models = {
      openai: floe.openaiCompatible({ baseURL: data.openai, model: "floe-local" }),
      anthropic: floe.anthropic({ baseURL: data.anthropic, model: "claude-floe", apiKey: "sk-ant-test" }),
    };
    for (const [name, llm] of Object.entries(models)) {
      const session = floe.createSession({
        meta: { session_id: `worker-${name}`, provider: llm.provider, model_id: llm.model, model_context_window: 1000, system_prompt: "", agent_state: "", workspace: "" },
        store: false,
        llm,
        tools: TOOLS,
        environment: {
          async *executeTool({ toolCall }) {
            yield { type: "model_msg", payload: { type: "tool_call_output", role: "user", output: "buy milk", tool_call_id: toolCall.payload.tool_call_id, stop_reason: "completed" } };
          },
        },
      });
      const r = { texts: [], calls: [], ends: [] };
      for await (const m of session.run("Read notes.txt.", { approve: async () => "allow" })) {
        const p = m.payload;
        if (p.type === "text") r.texts.push(p.text);
        if (p.type === "tool_call") r.calls.push(p.tool_call_id);
        if (p.type === "request_end") r.ends.push(p.status + (p.error_message ? ": " + p.error_message : ""));
      }
      await session.close();
      out[name] = r;
    }
    postMessage(out);
  } catch (e) {
    postMessage({ error: String((e && e.stack) || e) });
  }
};
