// The README's first JavaScript example, as written: at most 45 non-blank
// lines, and run with the scripted model of floe/test in place of
// floe.openai(...) and stubs for the page (fetch, confirm, document).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync, rmSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkStream } from "../../static/test.mjs";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
const section = readme.slice(readme.indexOf("## JavaScript"));
const example = section.match(/```js\n([\s\S]*?)```/)[1];

test("the README's first example is a complete agent in at most 45 non-blank lines", () => {
  const lines = example.split("\n").filter((l) => l.trim() !== "");
  assert.ok(lines.length <= 45, `${lines.length} non-blank lines`);
  for (const part of ["tool({", "floe.openai(", "approve:", "signal: stop.signal", "floe.transcript("]) assert.ok(example.includes(part), part);
  assert.equal(example.match(/\btool\(\{/g).length, 2, "two tool()s");
});

test("the README's first example runs with the scripted model", async () => {
  const entry = new URL("../../static/floe-node.mjs", import.meta.url).href;
  const testEntry = new URL("../../static/test.mjs", import.meta.url).href;
  const model = /floe\.openai\(\{[^)]*\}\)/;
  assert.match(example, model);
  const stubs = `
import { mockModel } from ${JSON.stringify(testEntry)};
const OPENAI_API_KEY = "sk-test";
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
export const llm = mockModel([
  [{ toolCall: { name: "search_docs", args: { query: "retries" }, id: "s" } }, { toolCall: { name: "read_file", args: { path: "docs/retries.md" }, id: "r" } }, { toolCall: { name: "read_file", args: { path: "docs/*" }, id: "bad" } }],
  "Set config.maxReconnects.",
]);
export const seen = [];
`;
  let code = example
    .replace(/from "@floehq\/floe";/, `from ${JSON.stringify(entry)};`)
    .replace(model, "llm")
    .replace("view.push(m);", "view.push(m); seen.push(m);");
  code = stubs + code + "\nexport { view, session, stop };\n";
  const dir = mkdtempSync(join(tmpdir(), "floe-readme-"));
  try {
    const file = join(dir, "example.mjs");
    writeFileSync(file, code);
    const ex = await import(file);
    assert.deepEqual(checkStream(ex.seen), []);
    assert.equal(ex.view.text, "Set config.maxReconnects.");
    assert.deepEqual(ex.asked, ["Run read_file?", "Run read_file?"], "read_file needs the user's confirmation, search_docs does not");
    const card = (id) => [ex.view.card(id).status, ex.view.card(id).output];
    assert.deepEqual(card("s"), ["done", "Retries: /docs/retries\nConfig: /docs/config\n"]);
    assert.deepEqual(card("r"), ["done", "maxReconnects: 5"]);
    assert.equal(card("bad")[0], "failed");
    assert.match(card("bad")[1], /^\[invalid arguments\] read_file: \$\.path: "docs\/\*" does not match the pattern/);
    assert.deepEqual(ex.fetched, [["/search?q=retries", true], ["/project/docs/retries.md", true]], "the invalid call never ran");
    assert.deepEqual(ex.rendered.at(-1), ["#answer", "Set config.maxReconnects."]);
    assert.equal(ex.llm.calls[0].systemPrompt, "You answer questions about this project. Read files before you quote them.");
    assert.deepEqual(ex.llm.calls[0].tools.map((t) => t.name), ["read_file", "search_docs"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
