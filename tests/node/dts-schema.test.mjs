// The arguments' type floe.d.ts reads from a JSON Schema (FromSchema, what
// tool()'s execute gets), against the validator: every value the validator
// accepts must be of that type, or execute is typed for values that never
// reach it while values that do reach it do not compile.
import { test } from "node:test";
import assert from "node:assert/strict";
import { compileSchema } from "../../static/schema.mjs";
import { types } from "./dts.mjs";

// [schema, values the validator accepts]
const cases = [
  [{ type: "object", properties: { a: { type: "string" }, n: { type: "integer" } }, required: ["a"] }, [{ a: "x" }, { a: "x", n: 2 }]],
  // nullable (OpenAPI) lets null through type and enum
  [{ type: "object", properties: { s: { type: "string", nullable: true } }, required: ["s"] }, [{ s: "x" }, { s: null }]],
  [{ type: "object", properties: { e: { enum: ["a", "b"], nullable: true } }, required: ["e"] }, [{ e: "a" }, { e: null }]],
  [{ type: "object", properties: { n: { type: "integer", nullable: true, enum: [1, 2] } }, required: ["n"], additionalProperties: false }, [{ n: 1 }, { n: null }]],
  [{ type: "object", properties: { l: { type: "array", items: { type: "number", nullable: true } } }, required: ["l"] }, [{ l: [1, null] }]],
  // prefixItems types the first items, items the rest
  [{ type: "object", properties: { t: { type: "array", prefixItems: [{ type: "string" }], items: { type: "integer" } } }, required: ["t"] }, [{ t: ["a", 1] }, { t: [] }]],
];

test("every value the validator accepts is of the arguments' type floe.d.ts reads from the schema (FromSchema)", () => {
  let src = `import type * as F from "./floe.js";\n`;
  cases.forEach(([schema, values], i) => {
    const validate = compileSchema(schema);
    src += `const s${i} = ${JSON.stringify(schema)} as const;\n`;
    values.forEach((v, j) => {
      assert.deepEqual(validate(v), [], `${JSON.stringify(v)} is valid for ${JSON.stringify(schema)}`);
      src += `export const v${i}_${j}: F.FromSchema<typeof s${i}> = ${JSON.stringify(v)};\n`;
    });
  });
  types(src); // throws naming each value that does not compile
});
