// The README's zod example (under "Tools with zod, Valibot or ArkType"), as
// written, run with real zod and floe/test's mockModel as its llm: a valid
// call (the default filled in), an invalid one (the output the README
// quotes), and the JSON Schema the model got.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync, rmSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
const section = readme.slice(readme.indexOf("### Tools with zod, Valibot or ArkType"));
const example = section.match(/```js\n([\s\S]*?)```/)[1];

test("the README's zod example runs as written: the default filled in, invalid arguments named as the README says", async () => {
  assert.match(example, /^import \{ z \} from "zod";$/m);
  const floe = new URL("../../static/floe-node.mjs", import.meta.url).href;
  const code =
    `import { mockModel } from ${JSON.stringify(new URL("../../static/test.mjs", import.meta.url).href)};\n` +
    `export const llm = mockModel([[{ toolCall: { name: "convert_temperature", args: { value: 21, from: "C" }, id: "ok" } }, { toolCall: { name: "convert_temperature", args: { value: "21", from: "K" }, id: "bad" } }], "70 °F"]);\n` +
    `export const seen = [];\nconst render = (m) => seen.push(m);\n` +
    example.replace('from "@floehq/floe";', `from ${JSON.stringify(floe)};`).replace('from "zod";', `from ${JSON.stringify(import.meta.resolve("zod"))};`) +
    "\nexport { convert };\n";
  const dir = mkdtempSync(join(tmpdir(), "floe-readme-zod-"));
  let ex;
  try {
    writeFileSync(join(dir, "example.mjs"), code);
    ex = await import(join(dir, "example.mjs"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const { assertStream } = await import("../../static/test.mjs");
  assertStream(ex.seen);
  const outputs = Object.fromEntries(ex.seen.filter((m) => m.payload.type === "tool_call_output").map((m) => [m.payload.tool_call_id, [m.payload.output, m.payload.stop_reason]]));
  assert.deepEqual(outputs.ok, ["69.8 °F", "completed"]);
  const bad = '[invalid arguments] convert_temperature: $.value: Invalid input: expected number, received string; $.from: Invalid option: expected one of "C"|"F"';
  assert.deepEqual(outputs.bad, [bad, "failed"]);
  // the README quotes it (its lines wrapped)
  assert.ok(section.replace(/\s+/g, " ").includes("`" + bad + "`"), "the README's quoted output");
  assert.deepEqual(ex.llm.calls[0].tools[0].parameters, {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: {
      value: { type: "number" },
      from: { type: "string", enum: ["C", "F"] },
      digits: { default: 1, type: "integer", minimum: 0, maximum: 6 },
    },
    required: ["value", "from"],
  });
  assert.deepEqual(ex.convert.parameters, ex.llm.calls[0].tools[0].parameters);
});
