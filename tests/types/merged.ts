// The API of the merged surface, typed: a built-in Model as llm and newLLM
// with tool()s, steer() / unsteer(), abortGraceMs, foldInputImages and the
// provider options; `tsc --noEmit -p tests/types` checks it.
import { load, tool, openai, type Model, type OmniMessage, type SteerID } from "floe";

export async function merged(signal: AbortSignal): Promise<string> {
  const floe = await load();
  const read = tool({
    name: "read_file",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    execute: async ({ path }: { path: string }, { signal: s }) => (s.aborted ? "" : `contents of ${path}`),
  });
  const llm: Model = openai({
    apiKey: "sk-…",
    model: "gpt-4.1-mini",
    fetch: async (url, init) => {
      const h: Record<string, string> = init.headers;
      const r: "manual" = init.redirect;
      void h;
      void r;
      return fetch(url, { method: init.method, headers: init.headers, body: init.body, signal: init.signal });
    },
  });
  const session = floe.createSession({
    llm,
    newLLM: floe.anthropic({ apiKey: "sk-ant-…", model: "claude-haiku-4-5", maxTokens: 1024 }),
    tools: [read, { name: "raw", description: "run by environment" }],
    abortGraceMs: 250,
    foldInputImages: async (messages: OmniMessage[]) =>
      messages.map((m) => (m.payload.type === "image_url" ? floe.msg.userText("[attached image: a.png]") : m)),
  });
  const id: SteerID | false = session.steer("also check b.md");
  const withdrawn: boolean = id !== false && session.unsteer(id);
  let text = "";
  for await (const m of session.run("Read a.md", { signal, approve: () => "allow", thinkingLevel: "low" })) {
    if (m.payload.type === "text") text += m.payload.text;
  }
  // @ts-expect-error steer() may return false: narrow it before unsteer()
  session.unsteer(session.steer("x"));
  // @ts-expect-error abortGraceMs is a number of milliseconds
  floe.createSession({ llm, abortGraceMs: "1s" });
  // @ts-expect-error foldInputImages returns messages
  floe.createSession({ llm, foldInputImages: () => "no" });
  // @ts-expect-error fetch is a function
  openai({ apiKey: "k", model: "m", fetch: "no" });
  // @ts-expect-error maxTokens is a number
  floe.openaiResponses({ apiKey: "k", model: "m", maxTokens: "many" });
  return `${text} ${withdrawn}`;
}
