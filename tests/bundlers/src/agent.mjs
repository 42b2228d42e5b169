// The app the package test bundles and runs everywhere: an agent with two
// tool()s, the scripted model of floe/test, a transcript and the stream
// checker, all imported from the installed package as a user would.
import { load, tool, transcript } from "@floehq/floe";
import { mockModel, checkStream } from "@floehq/floe/test";

export async function runAgent(options = {}) {
  const floe = await load();
  const readFile = tool({
    name: "read_file",
    description: "Read a file",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    execute: ({ path }) => `the notes in ${path}`,
  });
  const count = tool({
    name: "count_words",
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    async *execute({ text }) {
      yield "counted: ";
      yield String(text.split(/\s+/).length);
    },
  });
  const llm = mockModel([
    ["Reading.", { toolCall: { name: "read_file", args: { path: "notes.txt" }, id: "a" } }, { toolCall: { name: "read_file", args: { path: 5 }, id: "b" } }],
    { toolCall: { name: "count_words", args: { text: "the notes in notes.txt" }, id: "c" } },
    "There are 4 words.",
  ]);
  const session = floe.createSession({ llm, tools: [readFile, count], system: "Be brief.", store: options.store ?? "memory" });
  const view = transcript();
  const messages = [];
  for await (const m of session.run("Count the words of notes.txt", { approve: async () => "allow" })) {
    messages.push(m);
    view.push(m);
  }
  view.end();
  const stored = options.store ? (await floe.listSessions({ store: options.store })).map((s) => s.id === session.id) : [];
  return {
    text: view.text,
    cards: view.cards.map((c) => [c.id, c.status, c.output]),
    problems: checkStream(messages),
    systemPrompt: llm.calls[0].systemPrompt,
    idFormat: /^session-\d{4}(-\d{2}){5}-[0-9a-f]{8}$/.test(session.id),
    stored,
  };
}
