// A surrogate pair split between two deltas of one fragment (a string
// sliced by UTF-16 units: an emoji's halves in two deltas) crosses whole,
// with records and as JSON: each half alone crossed as U+FFFD, the deltas
// no longer joined to the complete message, and the request was malformed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { floe, meta, usage, instantClock, collect, inMode } from "./helpers.mjs";
import { msg, tool } from "../../static/floe-node.mjs";
import { mockModel } from "../../static/test.mjs";

const TEXT = "smile 😀, wave 👋🏽 and 𝄞!";

/** TEXT in pieces of n UTF-16 units: some end inside a pair. */
const slices = (s, n) => {
  const out = [];
  for (let i = 0; i < s.length; i += n) out.push(s.slice(i, i + n));
  return out;
};

const delta = (type, body, extra = {}) => ({ type: "model_msg", payload: { type, role: type.endsWith("output") ? "user" : "assistant", event_type: "delta", [bodyKey(type)]: body, ...extra } });
const bodyKey = (type) => (type.includes("text") ? "text" : type.includes("thinking") ? "thinking" : type.includes("output") ? "output" : "arguments");

/** Runs one request whose model yields msgs (and tools that stream TEXT), in both modes. */
async function run(msgs, jsonOnly) {
  return inMode(jsonOnly, async () => {
    let turn = 0;
    const llm = {
      async *streamGenerate() {
        if (turn++ === 0) yield* msgs;
        yield usage();
      },
    };
    const streamed = tool({ name: "streamed", parameters: { type: "object" }, async *execute() { yield* slices(TEXT, 3); } });
    const session = floe.createSession({ meta: meta(), llm, tools: [streamed], clock: instantClock(), config: { maxReconnects: 0 } });
    const out = await collect(session.run("go", { approve: () => "allow" }));
    await session.close();
    return out;
  });
}

/** The deltas of each fragment joined, and the complete messages' bodies, by type and call. */
function joined(out) {
  const deltas = {};
  const complete = {};
  for (const m of out) {
    const p = m.payload;
    if (!p.type || m.type !== "model_msg") continue;
    const key = p.type.replace("partial_", "") + (p.tool_call_id ? ":" + p.tool_call_id : "");
    const body = p[bodyKey(p.type)];
    if (p.event_type === "delta") deltas[key] = (deltas[key] ?? "") + body;
    else if (!p.event_type) complete[key] = body;
  }
  return { deltas, complete };
}

test("deltas that split a surrogate pair: text, thinking, two interleaved tool calls and a tool's output cross whole", async () => {
  const parts = slices(TEXT, 7); // "smile \ud83d" | "\ude00, wave " …
  const args = JSON.stringify({ q: TEXT });
  const argParts = slices(args, 5);
  const model = [];
  for (const [type, key, pieces, extra, complete] of [
    ["partial_thinking", "thinking", parts, {}, { type: "thinking", role: "assistant", thinking: TEXT, stop_reason: "completed" }],
    ["partial_text", "text", parts, {}, { type: "text", role: "assistant", text: TEXT, stop_reason: "completed" }],
  ]) {
    model.push({ type: "model_msg", payload: { type, role: "assistant", event_type: "start", [key]: "" } });
    for (const piece of pieces) model.push(delta(type, piece, extra));
    model.push({ type: "model_msg", payload: { type, role: "assistant", event_type: "stop", [key]: "" } });
    model.push({ type: "model_msg", payload: complete });
  }
  // Two tool calls whose argument deltas alternate: each keeps its own half.
  for (const id of ["c1", "c2"]) model.push(msg.partialToolCall("start", "", id, "streamed"));
  for (const piece of argParts) for (const id of ["c1", "c2"]) model.push(msg.partialToolCall("delta", piece, id, "streamed"));
  for (const id of ["c1", "c2"]) model.push(msg.partialToolCall("stop", "", id, "streamed"), msg.toolCall(id, "streamed", args));

  const outs = [await run(model, false), await run(model, true)];
  assert.deepEqual(outs[0], outs[1], "records and JSON give the same stream");
  const out = outs[0];
  const ends = out.filter((m) => m.payload.type === "request_end").map((m) => m.payload.status);
  assert.deepEqual(ends, ["completed", "completed"], JSON.stringify(out.filter((m) => m.payload.type === "request_end")));
  const { deltas, complete } = joined(out);
  assert.deepEqual(deltas, { thinking: TEXT, text: TEXT, "tool_call:c1": args, "tool_call:c2": args, "tool_call_output:c1": TEXT, "tool_call_output:c2": TEXT });
  assert.deepEqual(complete, deltas);
  for (const m of out) {
    const body = m.payload[bodyKey(m.payload.type ?? "")];
    assert.ok(typeof body !== "string" || !body.includes("\ufffd"), `a replacement character in ${JSON.stringify(m)}`);
  }
});

test("a half whose pair never comes is U+FFFD, as any lone half, and the stream still ends", async () => {
  const model = [
    msg.partialText("start"),
    msg.partialText("delta", "alone \ud83d"),
    msg.partialText("delta", "next"),
    msg.partialText("delta", "end \ud83d"),
    msg.partialText("stop"),
    msg.text("alone \ud83dnextend \ud83d"),
  ];
  const outs = [await run(model, false), await run(model, true)];
  assert.deepEqual(outs[0], outs[1]);
  const texts = outs[0].filter((m) => m.payload.type === "partial_text" && m.payload.event_type === "delta").map((m) => m.payload.text);
  assert.deepEqual(texts, ["alone ", "\ufffdnext", "end ", "\ufffd"]);
  const end = outs[0].find((m) => m.payload.type === "request_end");
  assert.equal(end.payload.status, "completed", JSON.stringify(end));
  assert.equal(outs[0].find((m) => m.payload.type === "text").payload.text, "alone \ufffdnextend \ufffd");
});

test("mockModel's chunks may split a pair", async () => {
  const session = floe.createSession({ meta: meta(), llm: mockModel([{ text: TEXT, chunks: slices(TEXT, 7) }]), config: { maxReconnects: 0 } });
  const out = await collect(session.run("go"));
  await session.close();
  const { deltas, complete } = joined(out);
  assert.equal(deltas.text, TEXT);
  assert.equal(complete.text, TEXT);
});

test("a held half waits across other messages: a thinking fragment, another call's stop and complete tool_call", async () => {
  const args = JSON.stringify({ q: "😀" }); // {"q":"\ud83d | \ude00"}
  const cut = args.indexOf("\ude00");
  const model = [
    msg.partialText("start"),
    msg.partialText("delta", "a\ud83d"),
    msg.partialThinking("start"),
    msg.partialThinking("delta", "hm"),
    msg.partialThinking("stop"),
    msg.thinking("hm"),
    msg.partialText("delta", "\ude00b"),
    msg.partialText("stop"),
    msg.text("a😀b"),
    msg.partialToolCall("start", "", "c1", "streamed"),
    msg.partialToolCall("start", "", "c2", "streamed"),
    msg.partialToolCall("delta", args.slice(0, cut), "c2", "streamed"),
    msg.partialToolCall("delta", "{}", "c1", "streamed"),
    msg.partialToolCall("stop", "", "c1", "streamed"),
    msg.toolCall("c1", "streamed", "{}"),
    msg.partialToolCall("delta", args.slice(cut), "c2", "streamed"),
    msg.partialToolCall("stop", "", "c2", "streamed"),
    msg.toolCall("c2", "streamed", args),
  ];
  const outs = [await run(model, false), await run(model, true)];
  assert.deepEqual(outs[0], outs[1], "records and JSON give the same stream");
  const ends = outs[0].filter((m) => m.payload.type === "request_end").map((m) => m.payload.status);
  assert.deepEqual(ends, ["completed", "completed"], JSON.stringify(outs[0].filter((m) => m.payload.type === "request_end")));
  const { deltas, complete } = joined(outs[0]);
  assert.equal(deltas.text, "a😀b");
  assert.equal(deltas["tool_call:c2"], args);
  assert.equal(complete["tool_call:c2"], args);
});
