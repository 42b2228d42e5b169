// tool() with real zod, Valibot and ArkType schemas in whole sessions with
// floe/test's mockModel: the JSON Schema each library gives the model, a
// valid call (execute gets the schema's output: defaults and transforms
// applied), an invalid one (the [invalid arguments] output with each
// issue's path, which the model gets), an async refinement, and the
// schemas Floe refuses.
import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import * as v from "valibot";
import { toStandardJsonSchema } from "@valibot/to-json-schema";
import { type } from "arktype";
import { mockModel, assertStream } from "../../static/test.mjs";
import { floe, collect, find } from "../node/helpers.mjs";

/** Runs one session whose model makes the calls [{ args, id }] of tool t in one turn, then answers "ok". */
async function run(t, calls) {
  const llm = mockModel([calls.map(({ args, id }) => ({ toolCall: { name: t.name, args, id } })), "ok"]);
  const out = await collect(floe.createSession({ llm, tools: [t] }).run("go", { approve: () => "allow" }));
  assertStream(out);
  const outputs = Object.fromEntries(find(out, "tool_call_output").map((m) => [m.payload.tool_call_id, [m.payload.output, m.payload.stop_reason]]));
  // the model's next request carries every output
  assert.deepEqual(llm.calls[1].newMessages.map((m) => m.payload.tool_call_id), calls.map((c) => c.id));
  return { llm, outputs };
}

test("zod: the model gets the input's JSON Schema (draft-07); execute gets the output, defaults and transforms applied; invalid arguments are named with their paths", async () => {
  const ran = [];
  const readFile = floe.tool({
    name: "read_file",
    description: "Read a file",
    parameters: z.object({
      path: z.string().min(1).describe("The file's path"),
      lines: z.number().int().positive().default(20),
      encoding: z.enum(["utf8", "latin1"]).optional(),
      range: z.object({ from: z.number(), to: z.number() }).optional(),
      tags: z.array(z.string()).default([]),
      name: z.string().transform((s) => s.trim().toLowerCase()),
    }),
    execute: (args) => (ran.push(args), "read"),
  });
  assert.deepEqual(readFile.parameters, {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: {
      path: { type: "string", minLength: 1, description: "The file's path" },
      lines: { default: 20, type: "integer", exclusiveMinimum: 0, maximum: 9007199254740991 },
      encoding: { type: "string", enum: ["utf8", "latin1"] },
      range: { type: "object", properties: { from: { type: "number" }, to: { type: "number" } }, required: ["from", "to"] },
      tags: { default: [], type: "array", items: { type: "string" } },
      name: { type: "string" },
    },
    required: ["path", "name"],
  });
  const { llm, outputs } = await run(readFile, [
    { id: "ok", args: { path: "a.md", name: "  README " } },
    { id: "bad", args: { path: "", lines: 1.5, encoding: "ascii", range: { from: "1" }, tags: ["x", 2] } },
  ]);
  assert.deepEqual(llm.calls[0].tools, [{ name: "read_file", description: "Read a file", parameters: readFile.parameters }]);
  assert.deepEqual(ran, [{ path: "a.md", name: "readme", lines: 20, tags: [] }]);
  assert.deepEqual(outputs.ok, ["read", "completed"]);
  assert.deepEqual(outputs.bad, [
    "[invalid arguments] read_file: " +
      [
        "$.path: Too small: expected string to have >=1 characters",
        "$.lines: Invalid input: expected int, received number",
        '$.encoding: Invalid option: expected one of "utf8"|"latin1"',
        "$.range.from: Invalid input: expected number, received string",
        "$.range.to: Invalid input: expected number, received undefined",
        "$.tags[1]: Invalid input: expected string, received number",
        "$.name: Invalid input: expected string, received undefined",
      ].join("; "),
    "failed",
  ]);
});

test("zod: an async refinement is awaited; its message is the output; a refinement that throws is a tool error", async () => {
  const known = new Set(["a.md"]);
  const ran = [];
  const t = floe.tool({
    name: "open",
    parameters: z.object({
      path: z.string().refine(async (p) => (await Promise.resolve(), known.has(p)), { message: "no such file" }),
      mode: z.string().refine((m) => {
        if (m === "boom") throw new Error("the check broke");
        return true;
      }).optional(),
    }),
    execute: (args) => (ran.push(args), "opened"),
  });
  const { outputs } = await run(t, [
    { id: "known", args: { path: "a.md" } },
    { id: "unknown", args: { path: "b.md" } },
    { id: "throws", args: { path: "a.md", mode: "boom" } },
  ]);
  assert.deepEqual(ran, [{ path: "a.md" }]);
  assert.deepEqual(outputs.known, ["opened", "completed"]);
  assert.deepEqual(outputs.unknown, ["[invalid arguments] open: $.path: no such file", "failed"]);
  assert.deepEqual(outputs.throws, ["[tool error] the check broke", "failed"]);
});

test("Valibot (toStandardJsonSchema of @valibot/to-json-schema): its JSON Schema, its output, its issues' paths", async () => {
  const ran = [];
  const t = floe.tool({
    name: "search",
    parameters: toStandardJsonSchema(
      v.object({
        query: v.pipe(v.string(), v.minLength(2)),
        limit: v.optional(v.pipe(v.number(), v.integer()), 10),
        filters: v.optional(v.array(v.object({ field: v.string() }))),
      }),
    ),
    execute: (args) => (ran.push(args), "found"),
  });
  assert.deepEqual(t.parameters, {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: {
      query: { type: "string", minLength: 2 },
      limit: { type: "integer", default: 10 },
      filters: { type: "array", items: { type: "object", properties: { field: { type: "string" } }, required: ["field"] } },
    },
    required: ["query"],
  });
  const { outputs } = await run(t, [
    { id: "ok", args: { query: "floe" } },
    { id: "bad", args: { query: "f", limit: 2.5, filters: [{ field: "a" }, { field: 3 }] } },
  ]);
  assert.deepEqual(ran, [{ query: "floe", limit: 10 }]);
  assert.deepEqual(outputs.ok, ["found", "completed"]);
  assert.deepEqual(outputs.bad, [
    "[invalid arguments] search: " +
      [
        "$.query: Invalid length: Expected >=2 but received 1",
        "$.limit: Invalid integer: Received 2.5",
        '$.filters[1].field: Invalid type: Expected string but received 3',
      ].join("; "),
    "failed",
  ]);
});

test("ArkType: its JSON Schema, its output (a morph applied), its issues' paths", async () => {
  const ran = [];
  const t = floe.tool({
    name: "add",
    parameters: type({ a: "number", "b?": "number.integer", op: "'+' | '-'", note: type("string").pipe((s) => s.length) }),
    execute: (args) => (ran.push(args), "added"),
  });
  assert.deepEqual(t.parameters, {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: { a: { type: "number" }, b: { type: "integer" }, note: { type: "string" }, op: { enum: ["+", "-"] } },
    required: ["a", "note", "op"],
  });
  const { outputs } = await run(t, [
    { id: "ok", args: { a: 1, op: "+", note: "four" } },
    { id: "bad", args: { a: "1", b: 0.5, op: "*", note: "n" } },
  ]);
  assert.deepEqual(ran, [{ a: 1, op: "+", note: 4 }]);
  assert.deepEqual(outputs.ok, ["added", "completed"]);
  assert.deepEqual(outputs.bad, [
    "[invalid arguments] add: " +
      ['$.a: a must be a number (was a string)', '$.op: op must be "+" or "-" (was "*")', "$.b: b must be an integer (was 0.5)"].join("; "),
    "failed",
  ]);
});

test("schemas Floe refuses: without Standard JSON Schema, not an object schema, not representable in JSON Schema; a plain definition's zod schema gives the model its JSON Schema", async () => {
  const bad = (parameters, want) =>
    assert.throws(() => floe.tool({ name: "t", parameters, execute: () => "" }), (e) => floe.isFloeError(e) && e.code === "bad_argument" && e.message === want, want);
  bad(
    v.object({ q: v.string() }),
    "tool t: parameters: this valibot schema has no Standard JSON Schema interface (~standard.jsonSchema), from which the model's JSON Schema comes: wrap it in toStandardJsonSchema() from @valibot/to-json-schema, or pass a JSON Schema object",
  );
  bad(z.string(), 'tool t: parameters: this zod schema\'s JSON Schema has type "string": want "object" (a tool\'s arguments are an object: z.object(), v.object(), type({ … }))');
  bad(type("string[]"), 'tool t: parameters: this arktype schema\'s JSON Schema has type "array": want "object" (a tool\'s arguments are an object: z.object(), v.object(), type({ … }))');
  bad(z.union([z.object({ a: z.string() }), z.object({ b: z.string() })]), 'tool t: parameters: this zod schema\'s JSON Schema has type none: want "object" (a tool\'s arguments are an object: z.object(), v.object(), type({ … }))');
  bad(z.object({ when: z.date() }), "tool t: parameters: this zod schema's JSON Schema (~standard.jsonSchema.input) threw: Date cannot be represented in JSON Schema");

  const llm = mockModel(["ok"]);
  await collect(floe.createSession({ llm, tools: [{ name: "plain", description: "d", parameters: z.object({ q: z.string() }) }] }).run("go"));
  assert.deepEqual(llm.calls[0].tools, [
    { name: "plain", description: "d", parameters: { $schema: "http://json-schema.org/draft-07/schema#", type: "object", properties: { q: { type: "string" } }, required: ["q"] } },
  ]);
});
