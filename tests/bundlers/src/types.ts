// tsc over the installed package (moduleResolution bundler and nodenext,
// strict, exactOptionalPropertyTypes).
import { load, tool, isMessage, type OmniMessage, type ToolCallMessage } from "@floehq/floe";
import { mockModel, checkStream } from "@floehq/floe/test";

export async function typed(signal?: AbortSignal): Promise<string[]> {
  const floe = await load({ wasm: undefined });
  const read = tool({ name: "read", execute: async ({ path }: { path: string }) => path });
  const session = floe.createSession({ llm: mockModel(["hi"]), tools: [read], system: "s" });
  const seen: OmniMessage[] = [];
  for await (const m of session.run("x", { signal, approve: (c: ToolCallMessage) => (c.payload.name === "read" ? "allow" : "deny") })) {
    seen.push(m);
    if (isMessage(m, "tool_call")) void m.payload.tool_call_id;
  }
  return checkStream(seen);
}
