// Typed use of the built-in model adapters; `tsc --noEmit -p tests/types` checks it.
import floeDefault, { load, openai, openaiCompatible, anthropic, openaiResponses, type Floe, type Model, type SessionMetaPayload } from "floe";

const meta: SessionMetaPayload = {
  session_id: "session-2026-12-01-00-00-00-0000abcd",
  provider: "ollama",
  model_id: "llama3.2",
  model_context_window: 131072,
  system_prompt: "You are terse.",
  agent_state: "",
  workspace: "",
};

export async function models(): Promise<Model[]> {
  const floe = await load();
  const local = floe.openaiCompatible({ baseURL: "http://localhost:11434/v1", model: "llama3.2" });
  const gpt = floe.openai({ apiKey: "sk-…", model: "gpt-4.1-mini", maxTokens: 2048, temperature: 0.2, thinkingLevel: "low" });
  const resp = floe.openaiResponses({ apiKey: "sk-…", model: "o4-mini", headers: { "OpenAI-Project": "proj_1" } });
  const claude = floe.anthropic({ apiKey: "sk-ant-…", model: "claude-sonnet-4-5", browserAccess: true, body: { top_k: 5 }, fetch: (u, i) => fetch(u, i) });
  const session = floe.createSession({ meta, llm: local, newLLM: gpt });
  floe.createSession({ meta, llm: claude, newLLM: () => resp });
  floe.createSession({ meta, llm: gpt, config: { compaction: { mode: "summarize" } } });
  await floe.resumeSession(meta.session_id, { llm: claude });
  for await (const m of session.run("hi", { thinkingLevel: "high" })) if (m.payload.type === "request_end") void m.payload.status;
  const p: "openai-chat" | "openai-responses" | "anthropic" = claude.provider;
  void p;
  // @ts-expect-error a model is made by a factory, not written by hand
  floe.createSession({ meta, llm: { provider: "openai-chat", model: "m", baseURL: "http://x" } });
  // @ts-expect-error an OpenAI-compatible server needs its baseURL
  floe.openaiCompatible({ model: "llama3.2" });
  // @ts-expect-error browserAccess is Anthropic's
  floe.openai({ apiKey: "k", model: "m", browserAccess: true });
  // @ts-expect-error cache (the prompt-cache breakpoints) is Anthropic's
  floe.openai({ apiKey: "k", model: "m", cache: false });
  // The factories are named exports too, the same functions as the loaded floe's and the default's.
  const named: Model[] = [
    openaiCompatible({ baseURL: "http://localhost:11434/v1", model: "llama3.2" }),
    openai({ apiKey: "sk-…", model: "gpt-4.1-mini" }),
    openaiResponses({ apiKey: "sk-…", model: "o4-mini" }),
    anthropic({ apiKey: "sk-ant-…", model: "claude-sonnet-4-5", version: "2023-06-01", cache: false }),
    anthropic({ apiKey: "sk-…", model: "deepseek-v4-flash", baseURL: "https://api.deepseek.com/anthropic/v1", images: false }),
    openaiCompatible({ baseURL: "https://r.openai.azure.com/openai/deployments/d?api-version=2024-10-21", model: "gpt-4o" }),
    floeDefault.openai({ apiKey: "sk-…", model: "gpt-4.1-mini" }),
  ];
  const same: Floe["openai"] = openai;
  const id: string = floeDefault.newSessionId() + floe.newSessionId(0);
  void same;
  void id;
  floe.createSession({ meta, llm: named[0]!, tools: [] });
  // @ts-expect-error an OpenAI-compatible server needs its baseURL, by name too
  openaiCompatible({ model: "llama3.2" });
  return [local, gpt, resp, claude, ...named];
}
