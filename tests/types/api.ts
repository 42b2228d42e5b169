// The higher layer's types: tool(), builders, isMessage, transcript,
// floe/test, defaults. Checked with strict and exactOptionalPropertyTypes
// (tsconfig.json with the DOM lib, tsconfig.node.json with @types/node and
// no DOM, tsconfig.bare.json with neither: see bare.ts).
import { load, tool, msg, isMessage, transcript, newSessionId, type OmniMessage, type ToolCallMessage, type Transcript } from "floe";
import { mockModel, checkStream, assertStream } from "floe/test";

export async function agent(signal: AbortSignal | undefined): Promise<Transcript> {
  const floe = await load({ wasm: undefined });
  const readFile = tool({
    name: "read_file",
    description: "Read a file",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    execute: async ({ path }: { path: string }, { signal }) => (signal.aborted ? "" : `contents of ${path}`),
  });
  const search = tool({
    name: "search",
    parameters: { type: "object", properties: { query: { type: "string" } } },
    async *execute({ query }: { query?: string }, { emit }) {
      emit("searching… ");
      yield `hit for ${query ?? ""}\n`;
    },
  });
  const stats = tool({ name: "stats", execute: () => ({ files: 3, names: ["a", "b"] }) });
  // @ts-expect-error parameters is a schema object: tool() throws bad_argument for a boolean
  tool({ name: "any", parameters: true, execute: () => "" });
  tool({ name: "nested", parameters: { type: "object", properties: { x: true, y: false } }, execute: () => "" });
  const chart = tool({ name: "chart", execute: async () => ({ output: "a chart", images: ["data:image/png;base64,AAAA"] }) });
  tool({ name: "bounded", timeoutMs: 120_000, maxOutputLength: 16_000, execute: () => "", description: undefined });
  tool({ name: "unbounded", timeoutMs: undefined, maxOutputLength: 0, execute: () => "" });
  // @ts-expect-error timeoutMs is a number of milliseconds: tool() throws bad_argument for a string
  tool({ name: "bad_limit", timeoutMs: "120000", execute: () => "" });
  const research = floe.subagentTool({ name: "research", create: () => ({ llm: mockModel(["42"]), tools: [readFile] }) });
  const session = floe.createSession({
    llm: mockModel([{ toolCall: { name: "read_file", args: { path: "a" } } }, [{ thinking: "hm" }, "done", { delay: 1 }], { error: "x", status: "auth" }]),
    system: "Be brief.",
    tools: [readFile, search, stats, chart, research, { name: "raw", description: "run by environment" }],
    environment: { async *executeTool({ toolCall }) { yield msg.toolOutput(toolCall.payload.tool_call_id, "raw"); } },
    meta: { workspace: "/w" },
    store: undefined,
  });
  const view = transcript({ onChange: (t) => void t.version });
  const seen: OmniMessage[] = [];
  for await (const m of session.run("go", { signal, approve: async (call: ToolCallMessage) => (call.payload.name === "raw" ? "deny" : "allow"), thinkingLevel: undefined })) {
    seen.push(m);
    view.push(m);
    if (isMessage(m, "tool_call")) {
      const c: ToolCallMessage = m; // the whole message narrows
      void c.payload.arguments;
    }
    if (isMessage(m, "request_end") && m.payload.status !== "completed") console.log(m.payload.error_message ?? "");
    if (isMessage(m, "session_meta")) void m.payload.session_id;
  }
  assertStream(seen);
  const status: "idle" | "running" | "done" | "aborted" | "failed" = view.status;
  if (status === "failed") console.log(view.error);
  const problems: string[] = checkStream(seen);
  void problems;
  const card = view.card("call_1", []);
  if (card && card.status === "done" && card.late) void card.output.length;
  for (const turn of view.turns) if (turn.role === "assistant") for (const item of turn.items) if (item.kind === "tool") void item.decision;
  for (const turn of view.turns) if (turn.role === "user" && turn.steering) console.log(`steered: ${turn.text}`);
  session.compact({ signal: undefined });
  void newSessionId();
  return view;
}

export const model = {
  provider: "acme",
  modelId: "acme-1",
  async *streamGenerate({ tools, systemPrompt, signal }: import("floe").GenerateParams) {
    if (signal.aborted) return { status: "aborted" as const };
    yield msg.partialText("start");
    yield msg.partialText("delta", systemPrompt + tools.map((t) => t.name).join());
    yield msg.partialText("stop");
    yield msg.text("x");
    yield msg.tokenUsage({ output: 1, total: 2 });
    return undefined;
  },
};
export async function withModel() {
  const floe = await load();
  return floe.createSession({ llm: model });
}

// A test's failing tools: an execute that only throws returns never (or
// Promise<never>), which is a valid tool.
export const failing = [
  tool({ name: "boom", execute: () => { throw new Error("disk full"); } }),
  tool({ name: "boom_async", parameters: { type: "object", properties: { path: { type: "string" } } }, execute: async ({ path }) => { throw new Error(`no ${path ?? "path"}`); } }),
];

// A script written `as const` (so that a status stays a literal) is readonly.
const replies = [{ error: "overloaded", status: "timeout" }, [{ text: "ab", chunks: ["a", "b"] }, { toolCall: { name: "t", args: { paths: ["a", "b"] } } }]] as const;
export const script = mockModel(replies);
