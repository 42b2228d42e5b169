// floe/ai-sdk with @ai-sdk/openai's Responses model (openai(…), the
// provider's default) in whole Floe sessions against a loopback server: a
// tool call approved and its output in the next request as a
// function_call_output input item; reasoning with encrypted content (store:
// false) kept in fidelity and sent back, within a run and after a resume
// through loadHistory.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createOpenAI } from "@ai-sdk/openai";
import { fromAISDK } from "../../static/ai-sdk.mjs";
import { checkStream } from "../../static/test.mjs";
import { floe, meta, collect, find, instantClock } from "../node/helpers.mjs";
import { replayServer, SSE_HEADERS } from "../node/replay.mjs";

const readFile = floe.tool({
  name: "read_file",
  description: "Reads a file",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  execute: ({ path }) => `contents of ${path}`,
});

/**
 * A Responses API stream: reasoning (summary parts, its encrypted content
 * given when the item is done), text pieces, then function calls
 * [{id, callId, name, args: [pieces]}].
 */
function responsesStream({ id = "resp_1", reasoning = null, text = [], calls = [], usage = { input_tokens: 10, output_tokens: 5 } }) {
  const response = (status, extra = {}) => ({ id, object: "response", created_at: 1764583200, status, model: "gpt-5", output: [], ...extra });
  const ev = [{ type: "response.created", response: response("in_progress") }];
  let out = 0;
  if (reasoning) {
    const item = { type: "reasoning", id: reasoning.id, summary: [] };
    ev.push({ type: "response.output_item.added", output_index: out, item: { ...item, encrypted_content: null } });
    reasoning.summary.forEach((s, i) => {
      ev.push({ type: "response.reasoning_summary_part.added", item_id: reasoning.id, output_index: out, summary_index: i, part: { type: "summary_text", text: "" } });
      ev.push({ type: "response.reasoning_summary_text.delta", item_id: reasoning.id, output_index: out, summary_index: i, delta: s });
      ev.push({ type: "response.reasoning_summary_part.done", item_id: reasoning.id, output_index: out, summary_index: i, part: { type: "summary_text", text: s } });
    });
    ev.push({ type: "response.output_item.done", output_index: out, item: { ...item, encrypted_content: reasoning.encrypted, summary: reasoning.summary.map((s) => ({ type: "summary_text", text: s })) } });
    out++;
  }
  if (text.length) {
    const item = { type: "message", id: `msg_${id}`, role: "assistant", status: "in_progress", content: [] };
    ev.push({ type: "response.output_item.added", output_index: out, item });
    for (const t of text) ev.push({ type: "response.output_text.delta", item_id: item.id, output_index: out, content_index: 0, delta: t, logprobs: [] });
    ev.push({ type: "response.output_item.done", output_index: out, item: { ...item, status: "completed", content: [{ type: "output_text", text: text.join(""), annotations: [] }] } });
    out++;
  }
  for (const c of calls) {
    const item = { type: "function_call", id: c.id, call_id: c.callId, name: c.name, arguments: "", status: "in_progress" };
    ev.push({ type: "response.output_item.added", output_index: out, item });
    for (const a of c.args) ev.push({ type: "response.function_call_arguments.delta", item_id: c.id, output_index: out, delta: a });
    ev.push({ type: "response.output_item.done", output_index: out, item: { ...item, arguments: c.args.join(""), status: "completed" } });
    out++;
  }
  ev.push({ type: "response.completed", response: response("completed", { usage: { ...usage, total_tokens: usage.input_tokens + usage.output_tokens,
    input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } } }) });
  return ev.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("");
}

/** A server answering request k with replies[k]; the last repeats. */
async function server(t, replies) {
  const srv = await replayServer(t, async (req, res, body, entry) => {
    res.writeHead(200, SSE_HEADERS);
    res.end(replies[Math.min(srv.requests.indexOf(entry), replies.length - 1)]);
  });
  return srv;
}

test("openai(…) (Responses): a tool call's output goes back as function_call_output; encrypted reasoning goes back, after a resume too", async (t) => {
  const reasoning = { id: "rs_1", summary: ["**Planning**\n\nRead a.md first.", "**Then**\n\nAnswer."], encrypted: "gAAAAB-encrypted-reasoning" };
  const srv = await server(t, [
    responsesStream({ reasoning, text: ["Reading."], calls: [{ id: "fc_1", callId: "call_1", name: "read_file", args: ['{"path":', '"a.md"}'] }] }),
    responsesStream({ id: "resp_2", text: ["It says ", "hi."], usage: { input_tokens: 40, output_tokens: 6 } }),
    responsesStream({ id: "resp_3", text: ["Still hi."], usage: { input_tokens: 60, output_tokens: 3 } }),
  ]);
  const openai = createOpenAI({ baseURL: `${srv.url}/v1`, apiKey: "sk-test" });
  const options = { providerOptions: { openai: { store: false } } };
  const llm = fromAISDK(openai("gpt-5"), options);
  assert.equal(llm.provider, "openai.responses");
  const id = floe.newSessionId();
  const session = floe.createSession({ meta: { ...meta(id), system_prompt: "Be brief." }, store: "memory", llm, tools: [readFile], clock: instantClock() });
  const msgs = await collect(session.run("Read a.md", { approve: () => "allow", thinkingLevel: "high" }));
  await session.close();
  assert.deepEqual(checkStream(msgs), []);
  assert.equal(find(msgs, "request_end").every((m) => m.payload.status === "completed"), true);
  const thinking = find(msgs, "thinking");
  assert.deepEqual(thinking.map((m) => m.payload.thinking), reasoning.summary);
  // The last summary part carries the encrypted content (the provider gives it when the item is done).
  assert.deepEqual(thinking.at(-1).payload.fidelity, { providerMetadata: { openai: { itemId: "rs_1", reasoningEncryptedContent: reasoning.encrypted } } });
  assert.deepEqual(find(msgs, "tool_call").map((m) => [m.payload.tool_call_id, m.payload.name, m.payload.arguments]), [["call_1", "read_file", '{"path":"a.md"}']]);

  const bodies = () => srv.requests.map((r) => JSON.parse(r.body));
  const [first, second] = bodies();
  assert.equal(first.reasoning?.effort, "high");
  assert.equal(first.store, false);
  assert.deepEqual(first.include, ["reasoning.encrypted_content"]);
  assert.deepEqual(first.tools.map((x) => [x.type, x.name]), [["function", "read_file"]]);
  assert.deepEqual(first.input, [
    { role: "developer", content: "Be brief." },
    { role: "user", content: [{ type: "input_text", text: "Read a.md" }] },
  ]);
  // The next request: the reasoning item whole (both summaries, the encrypted
  // content), the text, the call and its output.
  const reasoningItem = { type: "reasoning", id: "rs_1", encrypted_content: reasoning.encrypted, summary: reasoning.summary.map((text) => ({ type: "summary_text", text })) };
  const turn = second.input;
  assert.deepEqual(turn.slice(0, 2), first.input);
  assert.deepEqual(turn[2], reasoningItem);
  assert.deepEqual([turn[3].role, turn[3].content], ["assistant", "Reading."]);
  assert.deepEqual([turn[4].type, turn[4].call_id, turn[4].name, turn[4].arguments], ["function_call", "call_1", "read_file", '{"path":"a.md"}']);
  assert.deepEqual(turn[5], { type: "function_call_output", call_id: "call_1", output: "contents of a.md" });
  assert.equal(turn.length, 6);

  // Resumed with a fresh model: loadHistory hands back the fidelity, and the
  // reasoning goes back as it came.
  const resumed = await floe.resumeSession(id, { llm: fromAISDK(openai("gpt-5"), options), store: "memory", tools: [readFile], clock: instantClock() });
  const again = await collect(resumed.run("And now?"));
  await resumed.close();
  await floe.deleteSession(id, { store: "memory" });
  assert.deepEqual(checkStream(again), []);
  const third = bodies()[2].input;
  assert.deepEqual(third.slice(0, 6), turn);
  assert.deepEqual([third[6].role, third[6].content], ["assistant", "It says hi."]);
  assert.deepEqual(third[7], { role: "user", content: [{ type: "input_text", text: "And now?" }] });
  assert.equal(third.length, 8);
});
