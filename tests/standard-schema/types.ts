// tool() with zod, Valibot and ArkType schemas, as floe.d.ts types it:
// execute's argument is the schema's output (defaults and transforms
// applied), a schema without Standard JSON Schema does not compile.
import { tool, type Floe, type Tool, type LLM } from "@floehq/floe";
import { z } from "zod";
import * as v from "valibot";
import { toStandardJsonSchema } from "@valibot/to-json-schema";
import { type } from "arktype";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const same = <A, B>(ok: Equal<A, B>) => ok;

const zodTool = tool({
  name: "read_file",
  parameters: z.object({
    path: z.string().min(1),
    lines: z.number().int().default(20),
    tags: z.array(z.string()).optional(),
    size: z.string().transform((s) => s.length),
  }),
  execute: (args) => {
    same<typeof args, { path: string; lines: number; tags?: string[] | undefined; size: number }>(true);
    return `${args.path.toUpperCase()} ${args.lines.toFixed()} ${args.size.toFixed()}`;
  },
});
const asTool: Tool<{ path: string; lines: number; tags?: string[] | undefined; size: number }> = zodTool;

const valibotTool = tool({
  name: "search",
  parameters: toStandardJsonSchema(v.object({ query: v.pipe(v.string(), v.minLength(2)), limit: v.optional(v.number(), 10) })),
  execute: async ({ query, limit }) => {
    same<typeof query, string>(true);
    same<typeof limit, number>(true);
    return [query, limit];
  },
});

const arkTool = tool({
  name: "add",
  parameters: type({ a: "number", "b?": "number", op: "'+' | '-'" }),
  async *execute(args) {
    same<typeof args, { a: number; b?: number; op: "+" | "-" }>(true);
    yield String(args.a);
  },
});

// A Valibot schema without its JSON Schema: the model would have none.
tool({
  name: "no_json_schema",
  // @ts-expect-error: want a StandardJSONSchema (toStandardJsonSchema(schema))
  parameters: v.object({ q: v.string() }),
  execute: () => "",
});

// What execute returns is checked as with a JSON Schema.
tool({
  name: "bad_result",
  parameters: z.object({ a: z.string() }),
  // @ts-expect-error: a Symbol is no ToolResult
  execute: () => Symbol("x"),
});

declare const llm: LLM;
declare const floe: Floe;
floe.createSession({
  llm,
  tools: [zodTool, valibotTool, arkTool, { name: "plain", description: "run by the environment", parameters: z.object({ q: z.string() }) }],
});
void asTool;
