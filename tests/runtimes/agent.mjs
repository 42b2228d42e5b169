// An agent as a Deno or Bun user writes one from the README, run by
// runtimes.test.mjs in a fresh project where the packed @floehq/floe and
// @floehq/floe-node are installed. Prints one JSON line of what it saw.
// Arguments: a directory for a {dir} store, another to import into, and
// the base URL of a loopback server answering OpenAI's and Anthropic's
// streams.
import { load, tool, transcript } from "@floehq/floe";
import { mockModel, assertStream } from "@floehq/floe/test";

const [dir, dir2, base] = globalThis.Deno ? Deno.args : process.argv.slice(2);
const floe = await load();
const out = {};

const add = tool({
  name: "add",
  parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
  execute: ({ a, b }) => String(a + b),
});
const boom = tool({ name: "boom", parameters: { type: "object" }, execute: () => { throw new Error("kaboom"); } });
let started;
const slow = tool({
  name: "slow",
  parameters: { type: "object" },
  execute: (_, { signal }) => new Promise((_, reject) => {
    started();
    signal.addEventListener("abort", () => reject(signal.reason));
  }),
});
const tools = [add, boom, slow];

// Approvals (a Promise and a plain answer), a tool that throws, a denial.
{
  const llm = mockModel([
    [{ toolCall: { name: "add", args: { a: 2, b: 3 }, id: "a" } }, { toolCall: { name: "boom", id: "b" } }, { toolCall: { name: "add", args: { a: 1, b: 1 }, id: "d" } }],
    "It is 5.",
  ]);
  const messages = [];
  const view = transcript();
  for await (const m of floe.createSession({ llm, tools }).run("2 + 3?", { approve: async (c) => (c.payload.tool_call_id === "d" ? "deny" : "allow") })) {
    messages.push(m);
    view.push(m);
  }
  view.end();
  assertStream(messages);
  out.tools = { status: view.status, text: view.text, cards: ["a", "b", "d"].map((id) => [view.card(id).status, view.card(id).output]) };
}

// An abort while a tool runs.
{
  const ac = new AbortController();
  const running = new Promise((r) => (started = r));
  running.then(() => ac.abort());
  const llm = mockModel([{ toolCall: { name: "slow", id: "s" } }, "never"]);
  const view = transcript();
  await view.consume(floe.createSession({ llm, tools }).run("wait", { approve: () => "allow", signal: ac.signal }));
  out.abort = { status: view.status, card: [view.card("s").status, view.card("s").output] };
}

// A {dir} store: three runs of one session in a row, a resume after
// close(), an export imported into another directory.
{
  const store = { dir };
  const s = floe.createSession({ llm: mockModel(["one", "two", "three"]), store, meta: { session_id: "stored" } });
  const texts = [];
  for (const p of ["a", "b", "c"]) {
    const view = transcript();
    await view.consume(s.run(p));
    texts.push(view.text);
  }
  await s.close();
  const r = await floe.resumeSession("stored", { llm: mockModel(["four"]), store, onDiagnostic: () => {} });
  const view = transcript();
  await view.consume(r.run("d"));
  texts.push(view.text);
  await r.close();
  const files = await floe.exportSession("stored", { store });
  await floe.importSession(files, { store: { dir: dir2 } });
  const listed = await floe.listSessions({ store: { dir: dir2 } });
  out.stored = { texts, files: files.length, listed: listed.map((l) => [l.id, l.firstPrompt]) };
}

// The provider adapters, through this runtime's fetch.
{
  const models = [
    floe.openai({ model: "gpt-test", apiKey: "k", baseURL: `${base}/v1` }),
    floe.anthropic({ model: "claude-test", apiKey: "k", baseURL: `${base}/v1` }),
  ];
  out.models = [];
  for (const llm of models) {
    const view = transcript();
    await view.consume(floe.createSession({ llm, tools }).run("2 + 3?", { approve: () => "allow" }));
    out.models.push([llm.provider, view.status, view.text, view.cards.map((c) => c.output)]);
  }
}

out.timers = floe[Symbol.for("floe.debug")].timers();
console.log(JSON.stringify(out));
