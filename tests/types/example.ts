// A typed example of the floe.mjs API; `tsc --noEmit -p tests/types` checks it.
import { load, isFloeError, connect, type SteerID, type ToolCallMessage, type Decision, type OmniMessage, type Outcome, type LLM } from "floe";

const usage = { cache_read: 0, cache_write: 0, output: 3, total: 10 };

export async function main(): Promise<string> {
  const floe = await load();
  const session = floe.createSession({
    meta: {
      session_id: "session-2026-01-01-00-00-00-0000abcd",
      provider: "local",
      model_id: "echo",
      model_context_window: 8192,
      system_prompt: "You are terse.",
      agent_state: "",
      workspace: "",
    },
    tools: [{ name: "read_file", description: "Reads a file", parameters: { type: "object" } }],
    config: { maxTurns: 8, maxReconnects: 2, compaction: { mode: "summarize", maxContextLength: 100000 } },
    newLLM: () => ({ streamGenerate: async function* () {} }),
    llm: {
      async *streamGenerate({ newMessages, signal }) {
        if (signal.aborted) return { status: "aborted" };
        yield { type: "model_msg", payload: { type: "partial_text", role: "assistant", event_type: "start", text: "" } };
        yield { type: "model_msg", payload: { type: "text", role: "assistant", text: `${newMessages.length}`, stop_reason: "completed" } };
        yield { type: "event_msg", payload: { type: "token_usage", session: usage, request: usage } };
        return { status: "completed" };
      },
    },
    environment: {
      async *executeTool({ toolCall, approve, signal }) {
        if (approve) {
          const child = floe.createSubagent({
            meta: { session_id: "child", provider: "p", model_id: "m", model_context_window: "1k", system_prompt: "", agent_state: "", workspace: "", source: "subagent" },
            llm: { streamGenerate: async function* () { return { status: "completed" } } },
          });
          for await (const m of child.run("look", { approve, signal })) yield m;
        }
        yield {
          type: "model_msg",
          payload: { type: "tool_call_output", role: "user", output: "ok", tool_call_id: toolCall.payload.tool_call_id, stop_reason: "completed" },
        };
      },
    },
    clock: { now: () => Date.now(), sleep: async (_ms, _signal) => true },
    trace: { write: (record) => void record.type, rotate: () => {} },
    onDiagnostic: (d) => console.warn(d.kind, d.message),
  });

  const approve = async (tc: ToolCallMessage): Promise<Decision> => (tc.payload.name === "read_file" ? "allow" : "deny");
  const ac = new AbortController();
  let text = "";
  try {
    for await (const m of session.run("hello", { approve, signal: ac.signal, thinkingLevel: "low" })) {
      if (m.origin) continue; // subagent traffic
      switch (m.payload.type) {
        case "partial_text":
          if (m.payload.event_type === "delta") text += m.payload.text;
          break;
        case "tool_call":
          console.log(m.payload.name, JSON.parse(m.payload.arguments));
          break;
        case "request_end":
          if (m.payload.status !== "completed") console.warn(m.payload.error_message, m.payload.retry_in_ms);
          break;
        case "abort":
          console.warn(m.payload.reason);
          break;
        case "token_usage":
          if (m.payload.session.total > 1e6) break;
          break;
        case undefined: // session_meta of a subagent (has origin)
          console.log(m.payload.session_id);
          break;
      }
      if (text.length > 1000) break; // aborts the run
    }
  } catch (e) {
    if (isFloeError(e) && e.code === "session_busy") return "busy";
    throw e;
  }
  const steerID: SteerID | false = session.steer([{ type: "model_msg", payload: { type: "text", role: "user", text: "more" } }]);
  const steered: boolean = steerID !== false && session.unsteer(steerID);
  const state = session.compactability();
  if (state === "ok") for await (const m of session.compact()) void m;
  await session.close();
  return `${text} ${steered} ${state}`;
}

// The types refuse what the protocol refuses.
export function refused(m: OmniMessage): Outcome {
  // @ts-expect-error text is not on every payload: narrow on payload.type first
  void m.payload.text;
  if (m.type === "event_msg" && m.payload.type === "request_end") {
    // @ts-expect-error not one of the six stop reasons
    m.payload.status = "done";
  }
  // @ts-expect-error an Outcome needs a stop reason
  return { status: "ok" };
}

// Persisted sessions: list, resume, export → import, delete.
export async function persisted(): Promise<number> {
  const floe = await load();
  const list = await floe.listSessions({ store: { dir: "traces" } });
  const first = list[0];
  if (!first) return 0;
  const when: string | null = first.lastActivity;
  const session = await floe.resumeSession(first.id, {
    store: "indexeddb",
    llm: { streamGenerate: async function* () {}, loadHistory: async (history: OmniMessage[]) => void history.length },
  });
  const loading: LLM = {
    streamGenerate: async function* () {},
    loadHistory: (history, tokens, { signal }) => new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve())),
  };
  void loading;
  const files = await floe.exportSession(session.id);
  await floe.deleteSession(session.id);
  try {
    await floe.importSession(files.map((f) => ({ name: f.name, text: f.text })));
    await floe.importSession(files[0]?.text ?? "", { store: "memory" });
  } catch (e) {
    if (isFloeError(e) && (e.code === "session_exists" || e.code === "invalid_trace")) return -1;
    throw e;
  }
  floe.createSession({ meta: { session_id: "x", provider: "p", model_id: "m", model_context_window: 1, system_prompt: "", agent_state: "", workspace: "" }, llm: { streamGenerate: async function* () {} }, store: false });
  return files.length + first.size + first.files + (when ? 1 : 0);
}

// A remote session: follow, run with approvals, steer, abort.
export async function remote(): Promise<number> {
  const floe = await load();
  const s = floe.connect("http://127.0.0.1:8787", "session-x", { token: "t", reconnectDelayMs: 500 });
  const direct = connect("http://127.0.0.1:8787", "session-x");
  direct.close();
  let n = 0;
  for await (const m of s.run("hi", { approve: (call) => (call.payload.name === "read" ? "allow" : "deny") })) {
    if (m.type === "model_msg" && m.payload.type === "partial_text") n += m.payload.text.length;
  }
  const steered: boolean = await s.steer("more");
  const aborted: boolean = await s.abort();
  await s.approve("call_1", "allow");
  // @ts-expect-error remote approvals are allow or deny
  await s.approve("call_1", "forbidden");
  const skipped: boolean = await s.retryNow();
  const h = await s.history();
  const cursor: string | undefined = h.live?.cursor;
  const state: "idle" | "running" | "compacting" = s.state;
  for await (const m of s.messages()) if (m.type === "event_msg") break;
  s.close();
  return n + (steered ? 1 : 0) + (aborted ? 1 : 0) + (skipped ? 1 : 0) + (cursor?.length ?? 0) + state.length + s.pendingApprovals.length;
}
