// The README's first JavaScript example, as written: at most 45 non-blank
// lines, copied from the README and run twice. Once with the real
// floe.openai(...) adapter against a loopback server replaying Chat
// Completions SSE bytes (only the OpenAI endpoint is moved, by the global
// fetch the adapter looks up at each request), once with the scripted model
// of floe/test in its place. Both get stubs for the page (the tools'
// backends, confirm, document).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync, rmSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkStream } from "../../static/test.mjs";
import { replayServer, openaiStream, SSE_HEADERS } from "./replay.mjs";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
const section = readme.slice(readme.indexOf("## JavaScript"));
const example = section.match(/```js\n([\s\S]*?)```/)[1];

const MODEL = /floe\.openai\(\{[^)]*\}\)/;
const SYSTEM = "You answer questions about this project. Read files before you quote them.";
const ANSWER = "Set config.maxReconnects.";

test("the README's first example is a complete agent in at most 45 non-blank lines", () => {
  const lines = example.split("\n").filter((l) => l.trim() !== "");
  assert.ok(lines.length <= 45, `${lines.length} non-blank lines`);
  for (const part of ["tool({", "floe.openai(", "approve:", "signal: stop.signal", "floe.transcript("]) assert.ok(example.includes(part), part);
  assert.equal(example.match(/\btool\(\{/g).length, 2, "two tool()s");
  assert.match(example, MODEL);
  assert.match(example, /^import \{[^}]*\} from "@floehq\/floe";$/m);
});

// The stubs of the page, declared ahead of the example: the tools' fetch
// (the example's own calls of fetch resolve to this module-level const;
// the adapter's requests go through globalThis.fetch), confirm, document.
const pageStubs = `
const OPENAI_API_KEY = "sk-readme-test";
export const fetched = [];
const fetch = async (url, { signal }) => {
  fetched.push([url, signal instanceof AbortSignal]);
  return url.startsWith("/search")
    ? { json: async () => [{ title: "Retries", url: "/docs/retries" }, { title: "Config", url: "/docs/config" }] }
    : { text: async () => "maxReconnects: 5" };
};
export const asked = [];
const confirm = (q) => (asked.push(q), true);
export const rendered = [];
const document = { querySelector: (sel) => ({ set textContent(v) { rendered.push([sel, v]); } }) };
export const seen = [];
`;

/** Writes the example (its import pointed at this checkout, preamble first, model replaced when given) and runs it. */
async function runExample(preamble, model) {
  const entry = new URL("../../static/floe-node.mjs", import.meta.url).href;
  let code = example.replace(/from "@floehq\/floe";/, `from ${JSON.stringify(entry)};`).replace("view.push(m);", "view.push(m); seen.push(m);");
  if (model) code = code.replace(MODEL, model);
  code = pageStubs + preamble + code + "\nexport { view, session, stop };\n";
  const dir = mkdtempSync(join(tmpdir(), "floe-readme-"));
  try {
    const file = join(dir, "example.mjs");
    writeFileSync(file, code);
    return await import(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What both runs must show: the stream, the view, the approvals, the tools' calls and the page. */
function checkRun(ex, ids) {
  assert.deepEqual(checkStream(ex.seen), []);
  assert.equal(ex.view.text, ANSWER);
  assert.equal(ex.view.status, "done", "the example's view does not say the run is done");
  assert.deepEqual(ex.asked, ["Run read_file?", "Run read_file?"], "read_file needs the user's confirmation, search_docs does not");
  const card = (id) => [ex.view.card(id).status, ex.view.card(id).output];
  assert.deepEqual(card(ids.search), ["done", "Retries: /docs/retries\nConfig: /docs/config\n"]);
  assert.deepEqual(card(ids.read), ["done", "maxReconnects: 5"]);
  assert.equal(card(ids.bad)[0], "failed");
  assert.match(card(ids.bad)[1], /^\[invalid arguments\] read_file: \$\.path: "docs\/\*" does not match the pattern/);
  // The two valid calls run concurrently: the order of their fetches is not fixed.
  assert.deepEqual([...ex.fetched].sort(), [["/project/docs/retries.md", true], ["/search?q=retries", true]], "the invalid call never ran");
  assert.deepEqual(ex.rendered.at(-1), ["#answer", ANSWER]);
}

/** The text of a Chat Completions message content: a string or text parts. */
const textOf = (c) => (typeof c === "string" ? c : (c ?? []).map((x) => x.text ?? "").join(""));

test("the README's first example runs with the real floe.openai adapter against a loopback Chat Completions server", async (t) => {
  // Two responses: the three tool calls (one with arguments its schema
  // refuses), then the answer in pieces.
  const srv = await replayServer(t, async (req, res) => {
    res.writeHead(200, SSE_HEADERS);
    if (srv.requests.length === 1) {
      res.end(
        openaiStream({
          calls: [
            { id: "call_search", name: "search_docs", args: ['{"que', 'ry":"retries"}'] },
            { id: "call_read", name: "read_file", args: ['{"path":"docs/retries.md"}'] },
            { id: "call_bad", name: "read_file", args: ['{"path":"docs/*"}'] },
          ],
        }),
      );
    } else {
      res.end(openaiStream({ text: ["Set config.", "maxReconnects."] }));
    }
  });
  // The adapter's requests go to https://api.openai.com/v1, the default of
  // floe.openai(); the test moves that endpoint (and only it) to the
  // loopback server, so the example keeps its own line.
  const realFetch = globalThis.fetch;
  const sentTo = [];
  globalThis.fetch = (url, init) => {
    sentTo.push(String(url));
    return realFetch(String(url).replace(/^https:\/\/api\.openai\.com\/v1\//, `${srv.url}/v1/`), init);
  };
  let ex;
  try {
    ex = await runExample("");
  } finally {
    globalThis.fetch = realFetch;
  }
  checkRun(ex, { search: "call_search", read: "call_read", bad: "call_bad" });
  assert.deepEqual(sentTo, ["https://api.openai.com/v1/chat/completions", "https://api.openai.com/v1/chat/completions"]);
  assert.equal(srv.requests.length, 2, "one request for the calls, one with their outputs");
  const [first, second] = srv.requests.map((r) => ({ ...r, json: JSON.parse(r.body) }));
  for (const r of [first, second]) {
    assert.equal(r.url, "/v1/chat/completions");
    assert.equal(r.headers.authorization, "Bearer sk-readme-test");
    assert.equal(r.json.model, "gpt-4.1-mini");
    assert.equal(r.json.stream, true);
    assert.deepEqual(r.json.tools.map((x) => x.function.name).sort(), ["read_file", "search_docs"]);
  }
  assert.deepEqual(first.json.messages.map((m) => [m.role, textOf(m.content)]), [
    ["system", SYSTEM],
    ["user", "How do I configure retries?"],
  ]);
  const readFile = first.json.tools.find((x) => x.function.name === "read_file").function;
  assert.equal(readFile.parameters.properties.path.pattern, "^[\\w./-]+$", "the schema is sent as written");
  // The second request carries the assistant's calls and each call's output.
  const msgs = second.json.messages;
  const calls = msgs.find((m) => m.role === "assistant" && m.tool_calls)?.tool_calls ?? [];
  assert.deepEqual(calls.map((c) => [c.id, c.function.name, JSON.parse(c.function.arguments)]), [
    ["call_search", "search_docs", { query: "retries" }],
    ["call_read", "read_file", { path: "docs/retries.md" }],
    ["call_bad", "read_file", { path: "docs/*" }],
  ]);
  const outputs = Object.fromEntries(msgs.filter((m) => m.role === "tool").map((m) => [m.tool_call_id, textOf(m.content)]));
  assert.deepEqual(Object.keys(outputs).sort(), ["call_bad", "call_read", "call_search"]);
  assert.equal(outputs.call_search, "Retries: /docs/retries\nConfig: /docs/config\n");
  assert.equal(outputs.call_read, "maxReconnects: 5");
  assert.match(outputs.call_bad, /^\[invalid arguments\] read_file: \$\.path: "docs\/\*" does not match the pattern/);
});

test("the README's first example runs with the scripted model of floe/test in place of floe.openai(...)", async () => {
  // The model is any object with streamGenerate: mockModel records what
  // the engine asked of it (system prompt, tools), as the adapter's requests do.
  const testEntry = new URL("../../static/test.mjs", import.meta.url).href;
  const preamble = `
import { mockModel } from ${JSON.stringify(testEntry)};
export const llm = mockModel([
  [{ toolCall: { name: "search_docs", args: { query: "retries" }, id: "s" } }, { toolCall: { name: "read_file", args: { path: "docs/retries.md" }, id: "r" } }, { toolCall: { name: "read_file", args: { path: "docs/*" }, id: "bad" } }],
  ${JSON.stringify(ANSWER)},
]);
`;
  const ex = await runExample(preamble, "llm");
  checkRun(ex, { search: "s", read: "r", bad: "bad" });
  assert.equal(ex.llm.calls.length, 2);
  assert.equal(ex.llm.calls[0].systemPrompt, SYSTEM);
  assert.deepEqual(ex.llm.calls[0].tools.map((t) => t.name), ["read_file", "search_docs"]);
});

