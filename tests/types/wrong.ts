// Mistakes that must not compile, each with a readable message
// (check-errors.mjs runs tsc over this file and matches every error to the
// "error:" comment on the line above it).
import { load, tool, msg } from "floe";
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

// These compile (no comment above them):
export const fine = tool({ name: "ok", async *execute() { yield "a"; } });
floe.createSession({ llm: { async *streamGenerate() { yield msg.text("x"); } }, tools: [fine] });
