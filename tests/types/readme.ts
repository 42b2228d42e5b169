// The README's first example as TypeScript (strict): the tools' argument types come from their schemas.
import { load, tool } from "floe";
declare const OPENAI_API_KEY: string;
export async function main() {
const floe = await load();
const readFile = tool({
  name: "read_file",
  description: "Read a text file of the project",
  parameters: {
    type: "object",
    properties: { path: { type: "string", pattern: "^[\\w./-]+$" } },
    required: ["path"],
    additionalProperties: false,
  },
  execute: async ({ path }, { signal }) => (await fetch(`/project/${path}`, { signal })).text(),
});
const searchDocs = tool({
  name: "search_docs",
  description: "Search the documentation; one line per hit",
  parameters: { type: "object", properties: { query: { type: "string", minLength: 2 } }, required: ["query"] },
  async *execute({ query }, { signal }) {
    const hits = await (await fetch(`/search?q=${encodeURIComponent(query)}`, { signal })).json();
    for (const hit of hits) yield `${hit.title}: ${hit.url}\n`;
  },
});
const session = floe.createSession({
  llm: floe.openai({ model: "gpt-4.1-mini", apiKey: OPENAI_API_KEY }),
  system: "You answer questions about this project. Read files before you quote them.",
  tools: [readFile, searchDocs],
});
const stop = new AbortController();
const view = floe.transcript({ onChange: render });
function render(t: { text: string }) {
  document.querySelector("#answer")!.textContent = t.text;
}
for await (const m of session.run("How do I configure retries?", {
  signal: stop.signal,
  approve: async (call) => (call.payload.name === "search_docs" || confirm(`Run ${call.payload.name}?`) ? "allow" : "deny"),
})) {
  view.push(m);
}
view.end();
}
