// Mistakes that must not compile, each with a readable message
// (check-errors.mjs runs tsc over this file and matches every error to the
// "error:" comment on the line above it).
import { load, tool, msg } from "floe";
import { mockModel } from "floe/test";
const floe = await load();

// error: Error: a tool's async generator must yield strings (its output fragments)
export const yieldsNumber = tool({ name: "t", async *execute() { yield 5; } });

// error: Error: a tool's execute must return a string, a JSON value, { output, images }, or an async iterable of strings
export const returnsFunction = tool({ name: "f", execute: () => () => 1 });

floe.createSession({
  llm: {
    // error: Error: a yield of streamGenerate is not an OmniMessage (floe.msg builds them)
    async *streamGenerate() {
      yield { type: "model_msg", payload: { type: "partial_text", role: "assistant", event_type: "delta", text: 5 } };
    },
  },
});

floe.createSession({
  llm: {
    // error: Error: a yield of streamGenerate is not an OmniMessage (floe.msg builds them)
    async *streamGenerate() {
      yield "hello";
    },
  },
});

// The arguments' types come from the schema: path is a string, n a number, mode one of two.
export const typed = tool({
  name: "typed",
  parameters: {
    type: "object",
    properties: { path: { type: "string" }, n: { type: "integer" }, mode: { enum: ["a", "b"] }, tags: { type: "array", items: { type: "string" } } },
    required: ["path", "mode"],
    additionalProperties: false,
  },
  execute: ({ path, n, mode, tags }) => {
    const m: "a" | "b" = mode;
    const t: string[] | undefined = tags;
    // error: Property 'toFixed' does not exist on type 'string'
    return path.toFixed() + (n ?? 0).toFixed() + m + t;
  },
});

// error: Property 'extra' does not exist on type '{ path: string; }'
export const closed = tool({ name: "c", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"], additionalProperties: false }, execute: (a) => a.extra });

// A part of mockModel is of one kind: mockModel throws for a text with a delay.
// error: is not assignable to type 'Reply'
export const mixed = mockModel([{ text: "a", delay: 5 }]);

// gemini is an option of the Chat Completions factories only: openaiResponses throws for it.
// error: 'gemini' does not exist in type 'OpenAIResponsesOptions'
export const responses = floe.openaiResponses({ model: "m", apiKey: "k", gemini: true });

// These compile (no comment above them):
export const fine = tool({ name: "ok", async *execute() { yield "a"; } });
floe.createSession({ llm: { async *streamGenerate() { yield msg.text("x"); } }, tools: [fine] });
