// The provider test page: floe.openaiCompatible() and floe.anthropic()
// against loopback replay servers of another origin (their addresses come
// in the page's query), each running a two-tool task with approvals in the
// page, rendering the stream into its section. The test drives it through
// window.providers and reads the DOM and IndexedDB afterwards.
const TOOLS = [
  { name: "read_file", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
  { name: "delete_file", description: "Delete a file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
];

const FILES = { "notes.txt": "buy milk" };

const meta = (id, provider, model) => ({
  session_id: id, provider, model_id: model, model_context_window: 200000,
  system_prompt: "You are a careful file assistant.", agent_state: "", workspace: "mem",
});

const environment = {
  async *executeTool({ toolCall }) {
    const { name, arguments: args, tool_call_id } = toolCall.payload;
    const { path } = JSON.parse(args);
    const output = name === "read_file" ? (FILES[path] ?? `no such file: ${path}`) : `deleted ${path}`;
    yield { type: "model_msg", payload: { type: "tool_call_output", role: "user", output, tool_call_id, stop_reason: "completed" } };
  },
};

// Reads are allowed, deletions denied: the user's approvals.
const approve = async (call) => (call.payload.name === "read_file" ? "allow" : "deny");

function render(section, m) {
  const el = document.getElementById(section);
  const p = m.payload;
  const li = (text) => {
    const x = document.createElement("li");
    x.textContent = text;
    el.querySelector(".events").append(x);
  };
  switch (p.type) {
    case "partial_text":
      if (p.event_type === "delta") el.querySelector(".text").append(p.text);
      break;
    case "text":
      el.querySelector(".text").append("\n");
      break;
    case "tool_call":
      li(`call ${p.name} ${p.arguments}`);
      break;
    case "approval_decision":
      li(`decision ${p.decision}`);
      break;
    case "tool_call_output":
      li(`output ${p.output}`);
      break;
    case "request_end":
      li(`request_end ${p.status}${p.error_message ? ": " + p.error_message : ""}`);
      break;
  }
}

export async function install(load) {
  const floe = await load();
  const q = new URLSearchParams(location.search);
  const models = {
    openai: () => floe.openaiCompatible({ baseURL: q.get("openai"), model: "floe-local", apiKey: "sk-local" }),
    anthropic: () => floe.anthropic({ baseURL: q.get("anthropic"), model: "claude-floe", apiKey: "sk-ant-test" }),
    nocors: () => floe.openaiCompatible({ baseURL: q.get("nocors"), model: "floe-local" }),
  };
  window.providers = {
    /** Runs the task of section (a new session with id) and returns what the stream gave. */
    async run(section, id) {
      const model = models[section]();
      const session = floe.createSession({
        meta: meta(id, model.provider, model.model),
        llm: model,
        tools: TOOLS,
        environment,
        config: section === "nocors" ? { maxReconnects: 0 } : {},
      });
      const types = [];
      try {
        for await (const m of session.run("Read notes.txt, then delete it.", { approve })) {
          types.push(m.payload.type);
          render(section, m);
        }
      } finally {
        await session.close();
      }
      document.querySelector(`#${section} .status`).textContent = "done";
      return types;
    },
    list: () => floe.listSessions(),
    export: (id) => floe.exportSession(id),
  };
}
