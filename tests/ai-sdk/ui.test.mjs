// floe/ai-sdk for the AI SDK's UI: toUIMessageStream read back with the
// AI SDK's own readUIMessageStream, each chunk checked against its
// uiMessageChunkSchema; floeChatTransport driven by its Chat core
// (AbstractChat, what useChat wraps) sending, approving, denying,
// stopping; toUIMessages of a stored session against what the chat showed.
import { test } from "node:test";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import assert from "node:assert/strict";
import { AbstractChat, readUIMessageStream, uiMessageChunkSchema, lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";
import { safeValidateTypes } from "@ai-sdk/provider-utils";
import { MockLanguageModelV4, simulateReadableStream } from "ai/test";
import { floeChatTransport, fromAISDK, toUIMessageStream, toUIMessages } from "../../static/ai-sdk.mjs";
import { mockModel } from "../../static/test.mjs";
import { msg } from "../../static/msg.mjs";
import { floe, instantClock, scriptedLLM } from "../node/helpers.mjs";

const echo = floe.tool({
  name: "echo",
  description: "Echoes s, twice",
  parameters: { type: "object", properties: { s: { type: "string" } }, required: ["s"] },
  async *execute({ s }) {
    yield s;
    yield s;
  },
});
const broken = floe.tool({ name: "broken", description: "Throws", parameters: { type: "object", properties: {} }, execute: () => { throw new Error("disk on fire"); } });
const tools = [echo, broken];

/** Every chunk, checked against the AI SDK's schema, and the last UIMessage readUIMessageStream made of them. */
async function read(stream) {
  const chunks = [];
  const errors = [];
  const tee = stream.pipeThrough(
    new TransformStream({
      async transform(chunk, c) {
        const r = await safeValidateTypes({ value: chunk, schema: uiMessageChunkSchema });
        assert.ok(r.success, `chunk ${JSON.stringify(chunk)} is not a UIMessageChunk: ${r.error?.message}`);
        chunks.push(chunk);
        c.enqueue(chunk);
      },
    }),
  );
  let message;
  for await (const m of readUIMessageStream({ stream: tee, onError: (e) => errors.push(e.message) })) message = m;
  return { chunks, message, errors };
}

/** A part as a test compares it: its type, state and what it shows. */
const shape = (p) => {
  const out = { type: p.type };
  for (const k of ["state", "text", "input", "output", "errorText"]) if (p[k] !== undefined) out[k] = p[k];
  if (p.approval) out.approval = { ...(p.approval.approved !== undefined ? { approved: p.approval.approved } : {}), ...(p.approval.isAutomatic ? { isAutomatic: true } : {}) };
  return out;
};

test("toUIMessageStream: thinking, text, a call allowed with its streamed output, a call denied, a failed call, the next step's text", async () => {
  const llm = mockModel([
    [{ thinking: "They want echoes." }, "Let me echo.", { toolCall: { name: "echo", args: { s: "hi" } } }, { toolCall: { name: "echo", args: { s: "no" } } }, { toolCall: { name: "broken" } }],
    ["Done."],
  ]);
  const session = floe.createSession({ llm, tools, store: false });
  const { chunks, message, errors } = await read(
    toUIMessageStream(session.run("Echo hi", { approve: (call) => (JSON.parse(call.payload.arguments).s === "no" ? "deny" : "allow") })),
  );
  assert.deepEqual(errors, []);
  assert.equal(chunks[0].type, "start");
  assert.deepEqual(chunks.at(-1), { type: "finish", finishReason: "stop" });
  assert.deepEqual(
    chunks.filter((c) => c.toolCallId === "call_1").map((c) => c.type),
    ["tool-input-start", "tool-input-delta", "tool-input-available", "tool-output-available", "tool-output-available", "tool-output-available"],
  );
  assert.deepEqual(chunks.filter((c) => c.type === "tool-output-available" && c.toolCallId === "call_1").map((c) => [c.output, c.preliminary]), [["hi", true], ["hihi", true], ["hihi", undefined]]);
  assert.deepEqual(message.parts.map(shape), [
    { type: "step-start" },
    { type: "reasoning", state: "done", text: "They want echoes." },
    { type: "text", state: "done", text: "Let me echo." },
    { type: "tool-echo", state: "output-available", input: { s: "hi" }, output: "hihi" },
    { type: "tool-echo", state: "output-denied", input: { s: "no" }, approval: { approved: false, isAutomatic: true } },
    { type: "tool-broken", state: "output-error", input: {}, errorText: "[tool error] disk on fire" },
    { type: "step-start" },
    { type: "text", state: "done", text: "Done." },
  ]);
  // The ids are Floe's: a tool part's toolCallId is the call's tool_call_id.
  assert.deepEqual(message.parts.filter((p) => p.toolCallId).map((p) => p.toolCallId), ["call_1", "call_2", "call_3"]);
});

test("toUIMessageStream: a failed attempt's parts go at its retry (reset-step); a run that fails ends with an error chunk", async () => {
  const llm = mockModel([["Half an ans", { error: "overloaded" }], ["Whole answer."]]);
  const ok = await read(toUIMessageStream(floe.createSession({ llm, store: false, clock: instantClock() }).run("Hi")));
  assert.deepEqual(ok.errors, []);
  assert.ok(ok.chunks.some((c) => c.type === "reset-step"));
  assert.deepEqual(ok.message.parts.map(shape), [{ type: "step-start" }, { type: "text", state: "done", text: "Whole answer." }]);

  const bad = mockModel([{ error: "quota exhausted", permanent: true }]);
  const failed = await read(toUIMessageStream(floe.createSession({ llm: bad, store: false, clock: instantClock() }).run("Hi")));
  assert.deepEqual(failed.errors, ["llm request error: quota exhausted"]);
  assert.deepEqual(failed.chunks.slice(-2), [{ type: "error", errorText: "llm request error: quota exhausted" }, { type: "finish", finishReason: "error" }]);
});

test("toUIMessageStream: a failed attempt's calls go with its parts at the retry: a call of the retry under one's id streams as a part of its own, and an abort after the retry shows none of them not run", async () => {
  // The retry's call has the failed attempt's id (a model that numbers its calls by reply).
  const again = mockModel([[{ toolCall: { name: "echo", args: { s: "a" }, id: "c1" } }, { error: "overloaded" }], [{ toolCall: { name: "echo", args: { s: "b" }, id: "c1" } }], ["Done."]]);
  const retried = await read(toUIMessageStream(floe.createSession({ llm: again, tools, store: false, clock: instantClock() }).run("Hi", { approve: () => "allow" })));
  assert.deepEqual(retried.errors, []);
  assert.deepEqual(retried.message.parts.map(shape), [
    { type: "step-start" },
    { type: "tool-echo", state: "output-available", input: { s: "b" }, output: "bb" },
    { type: "step-start" },
    { type: "text", state: "done", text: "Done." },
  ]);

  // The failed attempt's call was cut while its input streamed; the retry is stopped.
  const stop = new AbortController();
  const llm = scriptedLLM(
    async function* () {
      yield msg.partialToolCall("start", "", "c1", "echo");
      yield msg.partialToolCall("delta", '{"s":', "c1", "echo");
      return { status: "timeout", errorMessage: "connection reset" };
    },
    async function* ({ signal }) {
      yield msg.partialText("start");
      yield msg.partialText("delta", "Hel");
      await new Promise((r) => signal.addEventListener("abort", r));
      return { status: "aborted" };
    },
  );
  const run = toUIMessageStream(floe.createSession({ llm, tools, store: false, clock: instantClock() }).run("Hi", { signal: stop.signal }));
  const stopped = await read(run.pipeThrough(new TransformStream({ transform: (ch, c) => (ch.type === "text-delta" && stop.abort(), c.enqueue(ch)) })));
  assert.deepEqual(stopped.errors, []);
  assert.ok(stopped.chunks.some((c) => c.type === "reset-step"));
  assert.deepEqual(stopped.chunks.at(-1), { type: "abort", reason: "aborted by user" });
  assert.deepEqual(stopped.message.parts.map(shape), [{ type: "step-start" }, { type: "text", state: "done", text: "Hel" }]);
});

test("toUIMessageStream: cancelling the stream aborts the run, and settles once the run has ended", async () => {
  const llm = mockModel([["Starting", { delay: 600_000 }, "never"], ["Again."]]);
  const session = floe.createSession({ llm, store: false });
  const reader = toUIMessageStream(session.run("Go")).getReader();
  for (;;) {
    const { value } = await reader.read();
    if (value.type === "text-delta") break;
  }
  await reader.cancel();
  // The run has ended: the session takes another at once (session_busy otherwise).
  const again = await read(toUIMessageStream(session.run("Again")));
  assert.equal(again.message.parts.at(-1).text, "Again.");
  assert.equal(llm.calls[0].signal.aborted, true);
});

test("toUIMessageStream: what is refused", () => {
  assert.throws(() => toUIMessageStream("hi"), { name: "FloeError", message: "toUIMessageStream: stream: want a run's message stream (session.run(…)), got a string" });
  assert.throws(() => toUIMessageStream((async function* () {})(), { messageId: "x" }), { message: /toUIMessageStream: options\.messageId: unknown option/ });
});

/** chat() over transport, with the chunks of each response it sent kept in responses (one array a response). */
function recordingChat(transport) {
  const responses = [];
  const c = chat({
    ...transport,
    async sendMessages(o) {
      const chunks = [];
      responses.push(chunks);
      const stream = await transport.sendMessages(o);
      return stream.pipeThrough(new TransformStream({ transform: (ch, ctl) => (chunks.push(ch), ctl.enqueue(ch)) }));
    },
  });
  return { c, responses };
}

/** The Chat of the AI SDK's UI (useChat's core) over a plain state; finished() resolves at each response's end. */
function chat(transport, init = {}) {
  const state = {
    status: "ready",
    error: undefined,
    messages: [],
    pushMessage(m) {
      this.messages = [...this.messages, m];
    },
    popMessage() {
      this.messages = this.messages.slice(0, -1);
    },
    replaceMessage(i, m) {
      this.messages = this.messages.map((x, j) => (j === i ? m : x));
      state.onReplace?.(m);
    },
    snapshot: (v) => structuredClone(v),
  };
  let ends = [];
  class Chat extends AbstractChat {}
  const c = new Chat({
    transport,
    state,
    onFinish: (e) => {
      const waiting = ends;
      ends = [];
      for (const r of waiting) r(e);
    },
    ...init,
  });
  c.finished = () => new Promise((r) => ends.push(r));
  c.state = state;
  return c;
}

const assistant = (c) => c.messages.at(-1);
const NOT_RUN = "no output: the run ended before the call did";

test("floeChatTransport: a call asked in the chat, approved with addToolApprovalResponse, runs; the run goes on in the same message", async () => {
  const llm = mockModel([["Echoing.", { toolCall: { name: "echo", args: { s: "yo" } } }], ["It said yoyo."]]);
  const session = floe.createSession({ llm, tools });
  const c = chat(floeChatTransport({ session }), { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
  await c.sendMessage({ text: "Echo yo" });
  assert.equal(c.status, "ready");
  const asked = assistant(c).parts.find((p) => p.type === "tool-echo");
  assert.equal(asked.state, "approval-requested");
  assert.equal(llm.calls.length, 1); // the run waits on the answer

  const done = c.finished();
  await c.addToolApprovalResponse({ id: asked.approval.id, approved: true });
  const end = await done;
  assert.equal(end.isError, false);
  assert.equal(c.messages.length, 2);
  assert.deepEqual(assistant(c).parts.map(shape), [
    { type: "step-start" },
    { type: "text", state: "done", text: "Echoing." },
    { type: "tool-echo", state: "output-available", input: { s: "yo" }, output: "yoyo", approval: { approved: true } },
    { type: "step-start" },
    { type: "text", state: "done", text: "It said yoyo." },
  ]);
  assert.deepEqual(llm.calls[1].newMessages.map((m) => [m.payload.type, m.payload.output]), [["tool_call_output", "yoyo"]]);

  // The stored session, as UIMessages: what the chat showed (a user
  // message, the assistant's), to give useChat({ messages }) after a reload.
  const restored = toUIMessages(await floe.readSession(session.id));
  assert.deepEqual(restored.map((m) => m.role), ["user", "assistant"]);
  assert.deepEqual(restored[0].parts, [{ type: "text", text: "Echo yo" }]);
  // An allowed call's approval is not in the Trace's records as the chat's answer: the part has none.
  const { approval, ...allowed } = shape(assistant(c).parts[2]);
  assert.deepEqual(approval, { approved: true });
  assert.deepEqual(restored[1].parts.map(shape), [...assistant(c).parts.slice(0, 2).map(shape), allowed, ...assistant(c).parts.slice(3).map(shape)]);
  assert.deepEqual(toUIMessages(await floe.readSession(session.id)), restored); // the ids are stable
  await session.close();
});

test("floeChatTransport: a call denied in the chat gets the denial; a policy decides the calls it knows", async () => {
  const llm = mockModel([[{ toolCall: { name: "echo", args: { s: "a" } } }, { toolCall: { name: "broken" } }], ["Fine."]]);
  const session = floe.createSession({ llm, tools, store: false });
  const approve = (call) => (call.payload.name === "echo" ? "allow" : "ask");
  const c = chat(floeChatTransport({ session, approve }), { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
  await c.sendMessage({ text: "Go" });
  const parts = assistant(c).parts;
  assert.deepEqual(parts.map(shape), [
    { type: "step-start" },
    { type: "tool-echo", state: "output-available", input: { s: "a" }, output: "aa" },
    { type: "tool-broken", state: "approval-requested", input: {}, approval: {} },
  ]);
  const done = c.finished();
  await c.addToolApprovalResponse({ id: parts[2].approval.id, approved: false });
  await done;
  assert.deepEqual(assistant(c).parts.map(shape).slice(2), [
    { type: "tool-broken", state: "output-denied", input: {}, approval: { approved: false } },
    { type: "step-start" },
    { type: "text", state: "done", text: "Fine." },
  ]);
  assert.deepEqual(llm.calls[1].newMessages.map((m) => m.payload.output), ["aa", "Tool call denied by user."]);
});

test("floeChatTransport: a policy that throws or gives another value denies; a subagent's call it would ask is denied, not asked in the chat", async () => {
  const llm = mockModel([[{ toolCall: { name: "echo", args: { s: "a" } } }, { toolCall: { name: "echo", args: { s: "b" } } }, { toolCall: { name: "echo", args: { s: "c" } } }], ["Fine."]]);
  const session = floe.createSession({ llm, tools, store: false });
  const approve = (call) => {
    const { s } = JSON.parse(call.payload.arguments);
    if (s === "a") throw new Error("policy broke");
    return s === "b" ? "yes" : Promise.resolve(true);
  };
  const c = chat(floeChatTransport({ session, approve }));
  await c.sendMessage({ text: "Go" });
  assert.deepEqual(llm.calls[1].newMessages.map((m) => m.payload.output), ["Tool call denied by user.", "Tool call denied by user.", "Tool call denied by user."]);
  assert.ok(assistant(c).parts.every((p) => p.state !== "approval-requested" && p.state !== "output-available"), JSON.stringify(assistant(c).parts.map(shape)));

  // A subagent's call: the chat has no part of it to ask on.
  const childLLM = mockModel([{ toolCall: { name: "echo", args: { s: "deep" } } }, "Child done."]);
  const research = floe.subagentTool({ name: "research", create: () => ({ llm: childLLM, tools, store: false }) });
  const parentLLM = mockModel([{ toolCall: { name: "research", args: { prompt: "Look." } } }, "Parent done."]);
  const parent = floe.createSession({ llm: parentLLM, tools: [research], store: false });
  const asked = [];
  const c2 = chat(floeChatTransport({ session: parent, approve: (call) => (asked.push(call.payload.name), call.payload.name === "research" ? "allow" : undefined) }));
  await c2.sendMessage({ text: "Go" });
  assert.deepEqual(asked, ["research", "echo"]);
  assert.equal(c2.status, "ready");
  assert.deepEqual(childLLM.calls[1].newMessages.map((m) => m.payload.output), ["Tool call denied by user."]);
  assert.deepEqual(assistant(c2).parts.filter((p) => p.type.startsWith("tool-")).map((p) => [p.type, p.state]), [["tool-research", "output-available"]]);
  assert.equal(assistant(c2).parts.at(-1).text, "Parent done.");
  await Promise.all([session.close(), parent.close()]);
});

test("floeChatTransport: a call under the id of an earlier step's call is asked in the chat as a call of its own (the response ended at once, the run waiting on an answer never shown)", async () => {
  const llm = mockModel([[{ toolCall: { name: "echo", args: { s: "a" }, id: "call_0" } }], [{ toolCall: { name: "echo", args: { s: "b" }, id: "call_0" } }], ["Done."]]);
  const session = floe.createSession({ llm, tools, store: false });
  const c = chat(floeChatTransport({ session }), { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
  await c.sendMessage({ text: "Go" });
  for (const s of ["a", "b"]) {
    const asked = assistant(c).parts.at(-1);
    assert.deepEqual([asked.type, asked.state, asked.input], ["tool-echo", "approval-requested", { s }]);
    const done = c.finished();
    await c.addToolApprovalResponse({ id: asked.approval.id, approved: true });
    await done;
  }
  assert.equal(c.status, "ready");
  assert.deepEqual(assistant(c).parts.map(shape), [
    { type: "step-start" },
    { type: "tool-echo", state: "output-available", input: { s: "a" }, output: "aa", approval: { approved: true } },
    { type: "step-start" },
    { type: "tool-echo", state: "output-available", input: { s: "b" }, output: "bb", approval: { approved: true } },
    { type: "step-start" },
    { type: "text", state: "done", text: "Done." },
  ]);
  await session.close();
});

test("floeChatTransport: thinkingLevel is forwarded to every run", async () => {
  const llm = mockModel(["One.", "Two."]);
  const session = floe.createSession({ llm, store: false });
  const c = chat(floeChatTransport({ session, thinkingLevel: "high" }));
  await c.sendMessage({ text: "First" });
  await c.sendMessage({ text: "Second" });
  assert.deepEqual(llm.calls.map((p) => p.thinkingLevel), ["high", "high"]);
  await session.close();
});

test("floeChatTransport: two calls asked in the chat: the run asks them one at a time, in call order, each answer sending on", async () => {
  const llm = mockModel([[{ toolCall: { name: "echo", args: { s: "1" } } }, { toolCall: { name: "echo", args: { s: "2" } } }], ["Both."]]);
  const session = floe.createSession({ llm, tools, store: false });
  const c = chat(floeChatTransport({ session }), { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
  await c.sendMessage({ text: "Echo twice" });
  assert.deepEqual(assistant(c).parts.map((p) => p.state).slice(1), ["approval-requested"]);
  let done = c.finished();
  await c.addToolApprovalResponse({ id: assistant(c).parts[1].approval.id, approved: true });
  await done;
  assert.deepEqual(assistant(c).parts.map((p) => p.state).slice(1), ["output-available", "approval-requested"]);
  done = c.finished();
  await c.addToolApprovalResponse({ id: assistant(c).parts[2].approval.id, approved: true });
  await done;
  assert.deepEqual(assistant(c).parts.map(shape).slice(1), [
    { type: "tool-echo", state: "output-available", input: { s: "1" }, output: "11", approval: { approved: true } },
    { type: "tool-echo", state: "output-available", input: { s: "2" }, output: "22", approval: { approved: true } },
    { type: "step-start" },
    { type: "text", state: "done", text: "Both." },
  ]);
});

test("floeChatTransport: stop aborts the run; the next message runs after it; regenerate and edits are refused", async () => {
  const llm = mockModel([["Starting", { delay: 600_000 }, "never"], ["Second."]]);
  const session = floe.createSession({ llm, store: false });
  const c = chat(floeChatTransport({ session }));
  const started = new Promise((r) => (c.state.onReplace = (m) => m.parts.some((p) => p.text === "Starting") && r()));
  const sent = c.sendMessage({ text: "First" });
  await started;
  await c.stop();
  await sent;
  assert.equal(c.status, "ready");
  assert.equal(llm.calls[0].signal.aborted, true);
  assert.equal(assistant(c).parts.find((p) => p.type === "text").text, "Starting");

  await c.sendMessage({ text: "Next" });
  assert.equal(assistant(c).parts.at(-1).text, "Second.");

  await c.regenerate();
  assert.equal(c.status, "error");
  assert.match(c.error.message, /^floeChatTransport: regenerate: a Floe session cannot take back a reply/);
  c.clearError();
  const first = c.messages[0].id;
  await c.sendMessage({ text: "First, edited", messageId: first });
  assert.equal(c.status, "error");
  assert.equal(c.error.message, `floeChatTransport: editing message ${JSON.stringify(first)}: a Floe session cannot take back a prompt it ran (its Trace keeps every run); send a new message instead`);
});

test("floeChatTransport: a new message while the run waits on an approval aborts that run first", async () => {
  const llm = mockModel([[{ toolCall: { name: "echo", args: { s: "x" } } }], ["Other."]]);
  const session = floe.createSession({ llm, tools, store: false });
  const c = chat(floeChatTransport({ session }));
  await c.sendMessage({ text: "Echo" });
  assert.equal(assistant(c).parts.at(-1).state, "approval-requested");
  const [prompt, asked] = c.messages;
  await c.sendMessage({ text: "Never mind" });
  assert.equal(c.status, "ready");
  assert.equal(assistant(c).parts.at(-1).text, "Other.");
  assert.equal(llm.calls.length, 2);
  // The call was not run: the model is told it was interrupted, before the new prompt.
  assert.deepEqual(
    llm.calls[1].newMessages.map((m) => [m.payload.type, m.payload.output ?? m.payload.text]),
    [["tool_call_output", "[interrupted: tool aborted by user]"], ["text", "Never mind"]],
  );
  // The chat's part of the call no longer waits: it was not run, as toUIMessages tells it.
  assert.deepEqual(shape(c.messages[1].parts.at(-1)), { type: "tool-echo", state: "output-error", input: { s: "x" }, errorText: NOT_RUN });
  // In a new message object (a UI keeping copies redraws a new one only); the one shown before is as it was.
  assert.notEqual(c.messages[1], asked);
  assert.equal(asked.parts.at(-1).state, "approval-requested");
  assert.equal(c.messages[0], prompt);
});

test("floeChatTransport: a new message while a reply streams ends that reply's response as aborted (an abort chunk, no finish), then runs", async () => {
  const llm = mockModel([["Starting", { delay: 600_000 }, "never"], ["Second."]]);
  const session = floe.createSession({ llm, store: false });
  const transport = floeChatTransport({ session });
  const { c, responses } = recordingChat(transport);
  const ends = [];
  const started = new Promise((r) => (c.state.onReplace = (m) => m.parts.some((p) => p.text === "Starting") && r()));
  const first = c.finished().then((e) => ends.push(e));
  const sent = c.sendMessage({ text: "First" });
  await started;
  await c.sendMessage({ text: "Next" });
  await Promise.all([sent, first]);
  assert.equal(llm.calls[0].signal.aborted, true);
  assert.equal(responses.length, 2);
  assert.deepEqual(responses[0].slice(-2), [{ type: "finish-step" }, { type: "abort", reason: "aborted by user" }]);
  assert.equal(responses[0].some((ch) => ch.type === "finish"), false);
  assert.equal(ends[0].finishReason, undefined); // not a reply that finished
  assert.deepEqual(responses[1].at(-1), { type: "finish", finishReason: "stop" });
  assert.equal(c.status, "ready");
  assert.deepEqual(c.messages.map((m) => m.parts.filter((p) => p.type === "text").map((p) => p.text).join("")), ["First", "Starting", "Next", "Second."]);
});

test("floeChatTransport: a new message while the run waits to retry a failed request (its backoff) ends that run's response as aborted, not as an error", async () => {
  let sleeping;
  const slept = new Promise((r) => (sleeping = r));
  const clock = { now: () => Date.UTC(2025, 0, 1), sleep: (ms, signal) => new Promise((r) => (sleeping(), signal.addEventListener("abort", () => r(false)))) };
  const llm = mockModel([["Half", { error: "overloaded" }], ["Second."]]);
  const session = floe.createSession({ llm, store: false, clock });
  const errors = [];
  const { c, responses } = recordingChat(floeChatTransport({ session }));
  c.onError = (e) => errors.push(e.message);
  const first = c.sendMessage({ text: "First" });
  await slept;
  await c.sendMessage({ text: "Next" });
  await first;
  assert.deepEqual(errors, []);
  assert.deepEqual(responses[0].at(-1), { type: "abort", reason: "aborted during reconnect backoff" });
  assert.equal(c.status, "ready");
  assert.deepEqual(c.messages.map((m) => m.parts.filter((p) => p.type === "text").map((p) => p.text).join("")), ["First", "Half", "Next", "Second."]);
  await session.close();
});

test("floeChatTransport: stop(chatId) while the run waits on an approval ends it; its function shows the call not run; the next message is a new turn", async () => {
  const llm = mockModel([["Echoing.", { toolCall: { name: "echo", args: { s: "x" } } }], ["Other."]]);
  const session = floe.createSession({ llm, tools });
  const transport = floeChatTransport({ session });
  const c = chat(transport, { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
  await c.sendMessage({ text: "Echo" });
  assert.equal(assistant(c).parts.at(-1).state, "approval-requested");
  await c.stop(); // the chat has no response to stop: the run waits on
  assert.notEqual(session.steer("still there?"), false);

  const settle = await transport.stop(c.id);
  assert.equal(session.steer("still there?"), false); // the session is idle
  assert.equal(c.status, "ready");
  const before = c.messages;
  c.messages = settle(c.messages);
  assert.equal(c.messages[0], before[0]); // a message without such a call is kept as it was
  assert.deepEqual(assistant(c).parts.map(shape), [
    { type: "step-start" },
    { type: "text", state: "done", text: "Echoing." },
    { type: "tool-echo", state: "output-error", input: { s: "x" }, errorText: NOT_RUN },
  ]);
  assert.equal(before[1].parts.at(-1).state, "approval-requested"); // settle changes no message it was given
  // The Trace: the run aborted by the user, the chat's messages as toUIMessages restores them.
  const stored = await floe.readSession(session.id);
  assert.deepEqual(stored.at(-1).payload, { type: "abort", reason: "aborted by user" });
  assert.deepEqual(toUIMessages(stored).map((m) => m.parts.map(shape)), c.messages.map((m) => m.parts.map(shape)));
  assert.deepEqual(settle(c.messages), c.messages);
  assert.deepEqual((await transport.stop(c.id))(c.messages), c.messages); // nothing more to stop

  // The next message is a new turn; the model is told the call was interrupted.
  await c.sendMessage({ text: "Never mind" });
  assert.equal(c.status, "ready");
  assert.equal(assistant(c).parts.at(-1).text, "Other.");
  assert.deepEqual(
    llm.calls[1].newMessages.map((m) => [m.payload.type, m.payload.output ?? m.payload.text]),
    [["tool_call_output", "[interrupted: tool aborted by user]"], ["text", "Never mind"]],
  );
  await session.close();
});

test("floeChatTransport: stop(chatId) while a response streams ends the run and the response, once the run has ended", async () => {
  const llm = mockModel([["Starting", { delay: 600_000 }, "never"], ["Second."]]);
  const session = floe.createSession({ llm, store: false });
  const transport = floeChatTransport({ session });
  const c = chat(transport);
  const started = new Promise((r) => (c.state.onReplace = (m) => m.parts.some((p) => p.text === "Starting") && r()));
  const sent = c.sendMessage({ text: "First" });
  await started;
  await transport.stop(c.id);
  assert.equal(session.steer("still there?"), false);
  await sent;
  assert.equal(c.status, "ready");
  assert.equal(c.error, undefined);
  assert.equal(llm.calls[0].signal.aborted, true);
  await c.sendMessage({ text: "Next" });
  assert.equal(assistant(c).parts.at(-1).text, "Second.");
  await assert.rejects(transport.stop(7), { name: "FloeError", message: "floeChatTransport: stop: chatId: want a chat's id (a string), got a number" });
});

test("floeChatTransport: stop(chatId) while a response is open and no longer read ends the run all the same", { timeout: 30_000 }, async () => {
  const llm = mockModel([["Starting", { delay: 600_000 }, "never"], ["Second."]]);
  const session = floe.createSession({ llm, store: false });
  const transport = floeChatTransport({ session });
  const messages = [{ id: "u1", role: "user", parts: [{ type: "text", text: "First" }] }];
  const reader = (await transport.sendMessages({ trigger: "submit-message", chatId: "c", messages })).getReader();
  while ((await reader.read()).value?.type !== "text-delta");
  await transport.stop("c"); // it waited for the response's reads, which never came
  assert.equal(llm.calls[0].signal.aborted, true);
  assert.equal(session.steer("still there?"), false); // the session is idle
  const rest = [];
  for (let r; !(r = await reader.read()).done; ) rest.push(r.value.type);
  assert.equal(rest.at(-1), "abort");
  await session.close();
});

test("floeChatTransport: stop(chatId) while the chat's createSession is pending, or a previous run's abort is: the run starts aborted, its response ends with abort, the next message is a normal turn", async () => {
  const llm = mockModel([[{ toolCall: { name: "echo", args: { s: "x" } } }], ["Second."]]);
  const session = floe.createSession({ llm, tools });
  let open;
  const gate = new Promise((r) => (open = r));
  let asked;
  const made = new Promise((r) => (asked = r));
  const transport = floeChatTransport({ createSession: () => (asked(), gate) });
  const { c, responses } = recordingChat(transport);
  const sent = c.sendMessage({ text: "First" });
  await made; // the session is being made
  const stopped = transport.stop(c.id);
  open(session);
  await stopped;
  assert.equal(session.steer("still there?"), false); // the session is idle
  await sent;
  assert.equal(c.status, "ready");
  assert.equal(c.error, undefined);
  assert.equal(llm.calls.length, 0); // nothing ran
  assert.deepEqual(responses[0].at(-1), { type: "abort", reason: "aborted by user" });
  assert.equal(responses[0].some((ch) => ch.type === "finish"), false);

  // A stop while a new message waits for the run it aborts (one waiting on an approval).
  await c.sendMessage({ text: "Echo" });
  assert.equal(assistant(c).parts.at(-1).state, "approval-requested");
  assert.equal(llm.calls.length, 1);
  const messages = [...c.messages, { id: "u3", role: "user", parts: [{ type: "text", text: "Never mind" }] }];
  const next = transport.sendMessages({ trigger: "submit-message", chatId: c.id, messages });
  await transport.stop(c.id);
  assert.equal(session.steer("still there?"), false);
  const rest = [];
  for (const r = (await next).getReader(); ; ) {
    const { done, value } = await r.read();
    if (done) break;
    rest.push(value);
  }
  assert.deepEqual(rest.at(-1), { type: "abort", reason: "aborted by user" });
  assert.equal(llm.calls.length, 1); // "Never mind" was not run
  c.messages = (await transport.stop(c.id))(messages);

  // The next message is a normal turn: the prompts stopped before their runs are the model's, as useChat's stop() leaves them.
  await c.sendMessage({ text: "Go on" });
  assert.equal(c.status, "ready");
  assert.equal(assistant(c).parts.at(-1).text, "Second.");
  assert.deepEqual(
    llm.calls[1].newMessages.map((m) => [m.payload.type, m.payload.output ?? m.payload.text]),
    [["tool_call_output", "[interrupted: tool aborted by user]"], ["text", "Never mind"], ["text", "Go on"]],
  );
  assert.deepEqual(llm.calls[0].newMessages.map((m) => m.payload.text), ["First", "Echo"]);
  await session.close();
});

test("floeChatTransport: a session the app closed is made again by createSession at the next message; a session given as such is not", async () => {
  const sessions = [];
  const transport = floeChatTransport({
    createSession: () => {
      const s = floe.createSession({ llm: mockModel([[`Session ${sessions.length + 1}.`]]), store: false });
      sessions.push(s);
      return s;
    },
  });
  const c = chat(transport);
  await c.sendMessage({ text: "Hi" });
  assert.equal(c.status, "ready");
  assert.equal(assistant(c).parts.at(-1).text, "Session 1.");
  await sessions[0].close(); // the app's own cleanup (a component unmounted)
  await c.sendMessage({ text: "Again" });
  assert.equal(c.status, "ready", c.error?.message);
  assert.equal(sessions.length, 2);
  assert.equal(assistant(c).parts.at(-1).text, "Session 2.");
  await c.sendMessage({ text: "And on" }); // the new session is kept
  assert.equal(sessions.length, 2);
  await sessions[1].close();

  const only = floe.createSession({ llm: mockModel([["Only."]]), store: false });
  const d = chat(floeChatTransport({ session: only }));
  await only.close();
  await d.sendMessage({ text: "Hi" });
  assert.equal(d.status, "error");
  assert.match(d.error.message, /the session is closed/);
});

test("floeChatTransport: a run whose stream throws midway shows its calls without output not run, and the chat the error", async () => {
  // A session of one's own (createSession gives any object with run) whose
  // stream throws after a call was asked: the part waits no more.
  const session = {
    run: () =>
      (async function* () {
        yield msg.text("Let me look.");
        yield msg.toolCall("c1", "echo", { s: "x" });
        throw new Error("the store went away");
      })(),
  };
  const c = chat(floeChatTransport({ createSession: () => session }));
  await c.sendMessage({ text: "Hi" });
  assert.equal(c.status, "error");
  assert.match(c.error.message, /the store went away/);
  const part = assistant(c).parts.find((p) => p.toolCallId === "c1");
  assert.equal(part?.state, "output-error", JSON.stringify(assistant(c).parts));
  assert.equal(part.errorText, "no output: the run ended before the call did");
});

test("floeChatTransport: files: an image goes as image_url, another file as inline_data; a web URL of a non-image is refused", async () => {
  const PNG = "data:image/png;base64,iVBORw0KGgo=";
  const llm = mockModel([["Seen."], ["An image."]]);
  const session = floe.createSession({ llm, store: false });
  const c = chat(floeChatTransport({ createSession: (id) => (assert.equal(typeof id, "string"), session) }));
  await c.sendMessage({ text: "What are these?", files: [{ type: "file", mediaType: "image/png", url: PNG }, { type: "file", mediaType: "text/plain", url: "data:text/plain;base64,aGk=" }] });
  assert.deepEqual(llm.calls[0].newMessages.map((m) => m.payload), [
    { type: "text", role: "user", text: "What are these?", stop_reason: "completed" },
    { type: "image_url", role: "user", image_url: PNG },
    { type: "inline_data", role: "user", mime_type: "text/plain", data: "aGk=" },
  ]);
  await c.sendMessage({ files: [{ type: "file", mediaType: "image/png", url: PNG }] }); // no text: the image alone
  assert.equal(c.status, "ready");
  assert.deepEqual(llm.calls[1].newMessages.map((m) => m.payload), [{ type: "image_url", role: "user", image_url: PNG }]);
  await c.sendMessage({ text: "And this?", files: [{ type: "file", mediaType: "application/pdf", url: "https://example.com/a.pdf" }] });
  assert.equal(c.status, "error");
  assert.match(c.error.message, /parts\[0\]: a file of type "application\/pdf" must be a base64 data: URL \(only images may be web URLs\)/);
});

test("floeChatTransport: a createSession that failed is asked again at the next message; one that gives no session is refused naming it", async () => {
  const session = floe.createSession({ llm: mockModel([["Hello."]]), store: false });
  const made = [new Error("the session is held by another tab"), undefined, session];
  const c = chat(floeChatTransport({ createSession: async () => { const r = made.shift(); if (r instanceof Error) throw r; return r; } }));
  await c.sendMessage({ text: "Hi" });
  assert.equal(c.status, "error");
  assert.equal(c.error.message, "the session is held by another tab");
  c.clearError();
  await c.sendMessage({ text: "Hi again" });
  assert.equal(c.status, "error");
  assert.match(c.error.message, /^floeChatTransport: options\.createSession\(".+"\): want a Floe session \(with run\), got undefined$/);
  c.clearError();
  await c.sendMessage({ text: "And now?" });
  assert.equal(c.status, "ready");
  assert.equal(assistant(c).parts.at(-1).text, "Hello.");
});

test("floeChatTransport and toUIMessages: what is refused", () => {
  const session = floe.createSession({ llm: mockModel([]), store: false });
  assert.throws(() => floeChatTransport({}), { name: "FloeError", message: /want one of session .* or createSession .*, got neither/ });
  assert.throws(() => floeChatTransport({ session, createSession: () => session }), { message: /got both/ });
  assert.throws(() => floeChatTransport({ session, aprove: () => "allow" }), { message: /floeChatTransport: options\.aprove: unknown option \(did you mean approve\?\)/ });
  assert.throws(() => floeChatTransport({ session: {} }), { message: "floeChatTransport: options.session: want a Floe session (with run), got an object" });
  assert.throws(() => floeChatTransport({ session, approve: "allow" }), { message: /options\.approve: want a function/ });
  assert.throws(() => toUIMessages("x"), { message: "toUIMessages: messages: want an array of OmniMessages (readSession's), got a string" });
  const transport = floeChatTransport({ session });
  assert.throws(() => toUIMessages([], { transport: { ...transport } }), { name: "FloeError", message: "toUIMessages: options.transport: want a transport floeChatTransport made, got an object" });
  assert.throws(() => toUIMessages([], { transport: null }), { message: "toUIMessages: options.transport: want a transport floeChatTransport made, got null" });
});

/** A gate: wait() resolves once open() is called; reached resolves at the first wait(). */
function gate() {
  let open, reach;
  const opened = new Promise((r) => (open = r));
  const reached = new Promise((r) => (reach = r));
  return { open, reached, wait: () => (reach(), opened) };
}

/** The session's runs: run(…) as the session's, each call resolving runs[k] once made. */
function watched(session) {
  const started = [];
  const runs = [0, 1, 2, 3].map(() => new Promise((r) => started.push(r)));
  let n = 0;
  return { runs, session: { run: (prompt, o) => { const s = session.run(prompt, o); started[n++]?.(); return s; } } };
}

/** The chunks of a response, read to its end. */
async function chunksOf(stream) {
  const out = [];
  for (const r = stream.getReader(); ; ) {
    const { done, value } = await r.read();
    if (done) return out;
    out.push(value);
  }
}

test("floeChatTransport: an approval that reaches the transport after a new message skipped its call is ignored quietly: the call shown not run, no error", async () => {
  const llm = mockModel([[{ toolCall: { name: "echo", args: { s: "x" } } }], ["Other."]]);
  const real = floe.createSession({ llm, tools, store: false });
  const { runs, session } = watched(real);
  const errors = [];
  const decide = gate(); // holds the chat's decision to send the answer
  let held = false;
  const finishes = [];
  let bothEnded;
  const ended = new Promise((r) => (bothEnded = r));
  const c = chat(floeChatTransport({ session }), {
    sendAutomaticallyWhen: async ({ messages }) => {
      const send = lastAssistantMessageIsCompleteWithApprovalResponses({ messages });
      if (held) await decide.wait();
      return send;
    },
    onError: (e) => errors.push(e.message),
    onFinish: (e) => finishes.push(e) === 2 && bothEnded(),
  });
  await c.sendMessage({ text: "Echo" });
  const asked = assistant(c).parts.at(-1);
  assert.equal(asked.state, "approval-requested");
  finishes.length = 0;

  // Approve is clicked; before the chat sends the answer, a new message starts its run.
  held = true;
  const approving = c.addToolApprovalResponse({ id: asked.approval.id, approved: true });
  await decide.reached;
  held = false;
  const sending = c.sendMessage({ text: "Never mind" });
  await runs[1]; // the new message's run has started: the call was skipped
  decide.open();
  await Promise.all([approving, sending, ended]);
  assert.deepEqual(errors, []);
  assert.equal(c.status, "ready");
  assert.equal(llm.calls.length, 2);
  assert.deepEqual(
    llm.calls[1].newMessages.map((m) => [m.payload.type, m.payload.output ?? m.payload.text]),
    [["tool_call_output", "[interrupted: tool aborted by user]"], ["text", "Never mind"]],
  );
  assert.deepEqual(c.messages.map((m) => m.parts.map(shape).filter((p) => p.type !== "step-start")), [
    [{ type: "text", text: "Echo" }],
    [{ type: "tool-echo", state: "output-error", input: { s: "x" }, errorText: NOT_RUN }],
    [{ type: "text", text: "Never mind" }],
    [{ type: "text", state: "done", text: "Other." }],
  ]);
  await real.close();
});

test("floeChatTransport: an approval sent with a new message after it: the answer is applied while the call waits, and the new message then runs", async () => {
  // Each request answered by what it carries: after the call's output the model waits until its run is aborted.
  const untilAborted = (ms, signal) => new Promise((r) => signal.addEventListener("abort", () => r(false)));
  const llm = {
    calls: [],
    streamGenerate(params) {
      llm.calls.push(params);
      const last = params.newMessages.at(-1).payload;
      const reply = last.type === "tool_call_output" ? [{ delay: 1 }] : last.text === "Echo" ? [{ toolCall: { name: "echo", args: { s: "x" } } }] : ["Other."];
      return mockModel([reply], { sleep: untilAborted }).streamGenerate(params);
    },
  };
  const session = floe.createSession({ llm, tools, store: false });
  const transport = floeChatTransport({ session });
  const user = (id, text) => ({ id, role: "user", parts: [{ type: "text", text }] });
  const first = await chunksOf(await transport.sendMessages({ trigger: "submit-message", chatId: "c", messages: [user("u1", "Echo")] }));
  const req = first.find((ch) => ch.type === "tool-approval-request");
  const a1 = { id: "a1", role: "assistant", parts: [{ type: "step-start" }, { type: "tool-echo", toolCallId: req.toolCallId, state: "approval-responded", input: { s: "x" }, approval: { id: req.approvalId, approved: true } }] };
  // useChat's request for the answer names the assistant message; a message sent since follows it.
  const messages = [user("u1", "Echo"), a1, user("u2", "Never mind")];
  const answer = (await transport.sendMessages({ trigger: "submit-message", chatId: "c", messageId: "a1", messages })).getReader();
  const seen = [];
  for (let r; !seen.some((ch) => ch.type === "tool-output-available" && !ch.preliminary) && !(r = await answer.read()).done; ) seen.push(r.value);
  assert.deepEqual(seen.find((ch) => ch.type === "tool-approval-response"), { type: "tool-approval-response", approvalId: req.approvalId, approved: true });
  assert.equal(seen.at(-1).output, "xx");
  // The new message's own request: it aborts the run the answer went on with, then runs.
  const next = await chunksOf(await transport.sendMessages({ trigger: "submit-message", chatId: "c", messages }));
  assert.deepEqual(next.at(-1), { type: "finish", finishReason: "stop" });
  assert.equal(next.find((ch) => ch.type === "text-delta").delta, "Other.");
  for (let r; !(r = await answer.read()).done; ) seen.push(r.value);
  assert.deepEqual(seen.at(-1), { type: "abort", reason: "aborted by user" });
  // The call's output reaches the model once: in the request the abort ended, or, if the abort came first, before the new prompt.
  const sent = llm.calls.flatMap((call) => call.newMessages.map((m) => [m.payload.type, m.payload.output ?? m.payload.text]));
  assert.deepEqual(sent.filter(([type]) => type === "tool_call_output"), [["tool_call_output", "xx"]]);
  assert.deepEqual(sent.at(-1), ["text", "Never mind"]);
  await session.close();
});

test("floeChatTransport: Approve clicked after Stop ended the run, before the chat's messages were set: ignored quietly, the call shown not run", async () => {
  const llm = mockModel([[{ toolCall: { name: "echo", args: { s: "x" } } }], ["Other."]]);
  const session = floe.createSession({ llm, tools, store: false });
  const transport = floeChatTransport({ session });
  const errors = [];
  const c = chat(transport, { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses, onError: (e) => errors.push(e.message) });
  await c.sendMessage({ text: "Echo" });
  const asked = assistant(c).parts.at(-1);
  const settle = await transport.stop(c.id); // Stop: the run has ended
  const done = c.finished();
  await c.addToolApprovalResponse({ id: asked.approval.id, approved: true }); // its button was still shown
  const end = await done;
  assert.equal(end.isError, false);
  assert.deepEqual(errors, []);
  assert.equal(c.status, "ready");
  assert.deepEqual(shape(assistant(c).parts.at(-1)), { type: "tool-echo", state: "output-error", input: { s: "x" }, errorText: NOT_RUN });
  c.messages = settle(c.messages);
  assert.deepEqual(shape(assistant(c).parts.at(-1)), { type: "tool-echo", state: "output-error", input: { s: "x" }, errorText: NOT_RUN });
  assert.equal(llm.calls.length, 1); // nothing ran
  await c.sendMessage({ text: "Never mind" });
  assert.equal(assistant(c).parts.at(-1).text, "Other.");
});

test("floeChatTransport: stop(chatId) after an answer reached the transport, before its decision reached the run: the call shown not run, and the chat sends the answer once (it sent it again and again)", async () => {
  const llm = mockModel([[{ toolCall: { name: "echo", args: { s: "x" } } }], ["Other."]]);
  const real = floe.createSession({ llm, tools });
  // The chat's decision reaches the run once held opens: the stop comes first.
  const held = gate();
  const session = { run: (prompt, o) => real.run(prompt, { ...o, approve: async (call) => { const d = await o.approve(call); await held.wait(); return d; } }) };
  const transport = floeChatTransport({ session });
  let sends = 0;
  let stopped;
  let settled;
  const quiet = new Promise((r) => (settled = r)); // the chat sends no more
  const errors = [];
  const c = chat(
    {
      ...transport,
      async sendMessages(o) {
        if (++sends > 2) throw new Error(`the answer sent again (request ${sends})`);
        const stream = await transport.sendMessages(o);
        if (sends === 2) stopped = held.reached.then(() => transport.stop(o.chatId));
        return stream;
      },
    },
    {
      sendAutomaticallyWhen: (o) => {
        const send = lastAssistantMessageIsCompleteWithApprovalResponses(o);
        if (!send && sends === 2) settled();
        return send;
      },
      onError: (e) => (errors.push(e.message), settled()),
    },
  );
  await c.sendMessage({ text: "Echo" });
  await c.addToolApprovalResponse({ id: assistant(c).parts.at(-1).approval.id, approved: true });
  await quiet;
  const settle = await stopped;
  held.open();
  assert.deepEqual(errors, []);
  assert.equal(sends, 2);
  assert.equal(c.status, "ready");
  assert.equal(llm.calls.length, 1); // nothing ran
  // The part keeps the chat's answer; the Trace does not record who decided: toUIMessages restores it without.
  const { approval, ...notRun } = shape(assistant(c).parts.at(-1));
  assert.deepEqual(approval, { approved: true });
  assert.deepEqual(notRun, { type: "tool-echo", state: "output-error", input: { s: "x" }, errorText: NOT_RUN });
  assert.deepEqual(settle(c.messages), c.messages);
  const restored = toUIMessages(await floe.readSession(real.id));
  assert.deepEqual(restored.map((m) => m.parts.map(shape)), [c.messages[0].parts.map(shape), [...assistant(c).parts.slice(0, -1).map(shape), notRun]]);
  await real.close();
});

test("floeChatTransport: Stop as the example has it (the chat's stop(), then stop(chatId)'s function) while a call's input streams, or just after an answer: the function shows the call not run, as toUIMessages restores it", async () => {
  // A model that streams a call's input, then waits for the abort.
  const llm = scriptedLLM(async function* ({ signal }) {
    yield msg.partialToolCall("start", "", "call_1", "echo");
    yield msg.partialToolCall("delta", '{"s":', "call_1", "echo");
    await new Promise((r) => signal.addEventListener("abort", r));
    return { status: "aborted" };
  });
  const session = floe.createSession({ llm, tools });
  const transport = floeChatTransport({ session });
  const c = chat(transport);
  const streaming = new Promise((r) => (c.state.onReplace = (m) => m.parts.some((p) => p.state === "input-streaming") && r()));
  const sent = c.sendMessage({ text: "Echo" });
  await streaming;
  const stopped = c.stop();
  c.messages = (await transport.stop(c.id))(c.messages);
  await Promise.all([stopped, sent]);
  // The input as far as it streamed: the chat's parsed in part, the Trace's the text.
  const noInput = (messages) => messages.map((m) => m.parts.map((p) => { const { input, ...rest } = shape(p); return rest; }));
  assert.deepEqual(noInput(c.messages).at(-1), [{ type: "step-start" }, { type: "tool-echo", state: "output-error", errorText: NOT_RUN }]);
  assert.deepEqual(noInput(toUIMessages(await floe.readSession(session.id))), noInput(c.messages));
  await session.close();

  // An answer that reached the transport; the chat's decision reaches the run once held opens: the Stop comes first.
  const llm2 = mockModel([[{ toolCall: { name: "echo", args: { s: "x" } } }], ["Other."]]);
  const real = floe.createSession({ llm: llm2, tools, store: false });
  const held = gate();
  const transport2 = floeChatTransport({ session: { run: (prompt, o) => real.run(prompt, { ...o, approve: async (call) => { const d = await o.approve(call); await held.wait(); return d; } }) } });
  const d = chat(transport2, auto);
  await d.sendMessage({ text: "Echo" });
  await d.addToolApprovalResponse({ id: assistant(d).parts.at(-1).approval.id, approved: true });
  await held.reached;
  const halted = d.stop();
  d.messages = (await transport2.stop(d.id))(d.messages);
  await halted;
  held.open();
  assert.deepEqual(shape(assistant(d).parts.at(-1)), { type: "tool-echo", state: "output-error", input: { s: "x" }, errorText: NOT_RUN });
  assert.equal(llm2.calls.length, 1); // nothing ran
  await real.close();
});

test("floeChatTransport: an answer to a call a new message skipped does not answer the new run's call of the same id", async () => {
  // A model that names its calls alike in every reply (as some local models do).
  const llm = mockModel([[{ toolCall: { name: "echo", args: { s: "x" }, id: "call_0" } }], [{ toolCall: { name: "echo", args: { s: "y" }, id: "call_0" } }]]);
  const session = floe.createSession({ llm, tools, store: false });
  const transport = floeChatTransport({ session });
  const user = (id, text) => ({ id, role: "user", parts: [{ type: "text", text }] });
  const first = await chunksOf(await transport.sendMessages({ trigger: "submit-message", chatId: "c", messages: [user("u1", "Echo x")] }));
  const old = first.find((ch) => ch.type === "tool-approval-request");
  const a1 = { id: "a1", role: "assistant", parts: [{ type: "tool-echo", toolCallId: "call_0", state: "approval-requested", input: { s: "x" }, approval: { id: old.approvalId } }] };
  const second = await chunksOf(await transport.sendMessages({ trigger: "submit-message", chatId: "c", messages: [user("u1", "Echo x"), a1, user("u2", "Echo y")] }));
  const asked = second.find((ch) => ch.type === "tool-approval-request");
  assert.equal(asked.toolCallId, "call_0");
  // The first call's Approve, clicked late: it approves that call, not this one.
  const late = { ...a1, parts: [{ ...a1.parts[0], state: "approval-responded", approval: { id: old.approvalId, approved: true } }] };
  const a2 = { id: "a2", role: "assistant", parts: [{ type: "tool-echo", toolCallId: "call_0", state: "approval-requested", input: { s: "y" }, approval: { id: asked.approvalId } }] };
  const messages = [user("u1", "Echo x"), late, user("u2", "Echo y"), a2];
  const quiet = await chunksOf(await transport.sendMessages({ trigger: "submit-message", chatId: "c", messageId: "a1", messages }));
  assert.deepEqual(quiet, [{ type: "start" }, { type: "finish" }]);
  assert.equal(llm.calls.length, 2); // the second call still waits: nothing ran
  assert.deepEqual(shape(messages[1].parts[0]), { type: "tool-echo", state: "output-error", input: { s: "x" }, errorText: NOT_RUN });
  assert.equal(messages[3], a2);
  assert.notEqual(session.steer("still there?"), false); // the run waits on
  await transport.stop("c");
  await session.close();
});

test("floeChatTransport: two messages sent quickly, while the session is being made: the first's run starts aborted, the second runs, no error", async () => {
  const llm = mockModel([["Second."]]);
  const session = floe.createSession({ llm, store: false });
  const making = gate();
  const errors = [];
  const { c, responses } = recordingChat(floeChatTransport({ createSession: () => making.wait().then(() => session) }));
  c.onError = (e) => errors.push(e.message);
  const first = c.sendMessage({ text: "First" });
  await making.reached;
  const second = c.sendMessage({ text: "Again" });
  making.open();
  await Promise.all([first, second]);
  assert.deepEqual(errors, []);
  assert.equal(c.status, "ready");
  assert.equal(c.error, undefined);
  assert.deepEqual(responses[0].at(-1), { type: "abort", reason: "aborted by user" });
  assert.deepEqual(responses[1].at(-1), { type: "finish", finishReason: "stop" });
  assert.equal(llm.calls.length, 1);
  assert.deepEqual(llm.calls[0].newMessages.map((m) => m.payload.text), ["First", "Again"]);
  assert.equal(assistant(c).parts.at(-1).text, "Second.");
  await session.close();
});

/** mockModel's sleep held on gates: { delay: k } waits for held[k - 1] (or the request's abort). */
const heldSleep = (held) => (ms, signal) => Promise.race([held[ms - 1].wait(), new Promise((r) => signal.addEventListener("abort", () => r(false)))]);
const auto = { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses };

test("floeChatTransport: a chat dropped while its run streams and made again with its id reconnects (resumeStream): its message brought up to date, a call asked meanwhile answered, Stop reaching the run", async () => {
  const held = [gate(), gate()];
  const llm = mockModel([["Half", { delay: 1 }, "way.", { toolCall: { name: "echo", args: { s: "x" } } }], ["Echoed", { delay: 2 }, "never"]], { sleep: heldSleep(held) });
  const real = floe.createSession({ llm, tools, store: false });
  // The transport's approver, watched: with no approve option it has asked the chat when it returns.
  let asked;
  const askedNow = new Promise((r) => (asked = r));
  const session = { run: (prompt, o) => real.run(prompt, { ...o, approve: (call) => { const d = o.approve(call); asked(); return d; } }) };
  const transport = floeChatTransport({ session });
  // useChat({ id, resume: true }) mounting asks to reconnect: no run yet.
  const a = chat(transport, { id: "t", ...auto });
  await a.resumeStream();
  assert.equal(a.status, "ready");
  assert.deepEqual(a.messages, []);
  const half = new Promise((r) => (a.state.onReplace = (m) => m.parts.some((p) => p.text === "Half") && r()));
  const sent = a.sendMessage({ text: "Go" });
  await Promise.all([half, held[0].reached]);
  // Unmounted: useChat stops its chat. The run goes on, and asks for the call.
  await a.stop();
  await sent;
  const kept = a.messages; // the chat's messages, kept in a store
  assert.match(kept[1].id, /^floe-run-[0-9a-f]{24}$/);
  held[0].open();
  await askedNow;
  assert.equal(llm.calls[0].signal.aborted, false);

  const b = chat(transport, { id: "t", ...auto });
  b.messages = kept;
  await b.resumeStream();
  assert.equal(b.status, "ready");
  assert.equal(b.error, undefined);
  assert.deepEqual(b.messages.map((m) => m.id), kept.map((m) => m.id)); // the same message, brought up to date
  assert.equal(b.messages[0], kept[0]);
  assert.deepEqual(b.messages[1].parts.map(shape), [
    { type: "step-start" },
    { type: "text", state: "done", text: "Half" },
    { type: "text", state: "done", text: "way." },
    { type: "tool-echo", state: "approval-requested", input: { s: "x" }, approval: {} },
  ]);
  assert.deepEqual(a.messages, kept); // the chat dropped got nothing more
  assert.equal(a.messages[1].parts[1].state, "streaming");

  // The call answered in the new chat: the run goes on in the same message.
  const echoed = new Promise((r) => (b.state.onReplace = (m) => m.parts.some((p) => p.text === "Echoed") && r()));
  await b.addToolApprovalResponse({ id: b.messages[1].parts[3].approval.id, approved: true });
  await Promise.all([echoed, held[1].reached]);
  assert.equal(b.status, "streaming");
  assert.deepEqual(llm.calls[1].newMessages.map((m) => [m.payload.type, m.payload.output]), [["tool_call_output", "xx"]]);
  // Stop, as the README's: stop() ends the response, transport.stop(id) the run.
  await b.stop();
  assert.equal(llm.calls[1].signal.aborted, false); // a chat that reconnects: its stop() alone is a disconnect
  b.messages = (await transport.stop("t"))(b.messages);
  assert.equal(llm.calls[1].signal.aborted, true);
  assert.equal(real.steer("still there?"), false); // the session is idle
  assert.equal(b.status, "ready");
  assert.equal(b.messages.length, 2);
  assert.deepEqual(b.messages[1].parts.map(shape).slice(3), [
    { type: "tool-echo", state: "output-available", input: { s: "x" }, output: "xx", approval: { approved: true } },
    { type: "step-start" },
    { type: "text", state: "streaming", text: "Echoed" },
  ]);
  // Nothing left to reconnect to; nor after a reload (the page's transport made anew).
  assert.equal(await transport.reconnectToStream({ chatId: "t" }), null);
  assert.equal(await floeChatTransport({ session }).reconnectToStream({ chatId: "t" }), null);
  await assert.rejects(transport.reconnectToStream({}), { name: "FloeError", message: "floeChatTransport: reconnectToStream: chatId: want a chat's id (a string), got undefined" });
  await real.close();
});

test("floeChatTransport: a chat made again while the one it replaces still reads the run: both get the rest; a reconnected stream cancelled leaves the run waiting, answered from the new chat", async () => {
  const held = [gate()];
  const llm = mockModel([["Half", { delay: 1 }, "way.", { toolCall: { name: "echo", args: { s: "x" } } }], ["Done."]], { sleep: heldSleep(held) });
  const session = floe.createSession({ llm, tools, store: false });
  const transport = floeChatTransport({ session });
  const a = chat(transport, { id: "t", ...auto });
  await a.resumeStream();
  const half = new Promise((r) => (a.state.onReplace = (m) => m.parts.some((p) => p.text === "Half") && r()));
  const sent = a.sendMessage({ text: "Go" });
  await Promise.all([half, held[0].reached]);
  // A chat of the same id made while the first still reads (a UI that does not stop a chat it drops).
  const b = chat(transport, { id: "t", ...auto });
  b.messages = a.messages;
  const resumed = b.resumeStream();
  held[0].open();
  await Promise.all([sent, resumed]);
  const waiting = [
    { type: "step-start" },
    { type: "text", state: "done", text: "Half" },
    { type: "text", state: "done", text: "way." },
    { type: "tool-echo", state: "approval-requested", input: { s: "x" }, approval: {} },
  ];
  for (const c of [a, b]) {
    assert.equal(c.status, "ready");
    assert.deepEqual(c.messages.map((m) => m.role), ["user", "assistant"]);
    assert.deepEqual(c.messages[1].parts.map(shape), waiting);
  }
  // A reconnected stream cancelled (a chat dropped as it reconnected) is a disconnect, not a stop.
  const third = await transport.reconnectToStream({ chatId: "t" });
  await third.cancel();
  const steered = session.steer("still there?");
  assert.notEqual(steered, false); // the run still waits
  session.unsteer(steered);

  const done = b.finished();
  await b.addToolApprovalResponse({ id: b.messages[1].parts[3].approval.id, approved: true });
  assert.equal((await done).isError, false);
  assert.deepEqual(b.messages[1].parts.map(shape).slice(3), [
    { type: "tool-echo", state: "output-available", input: { s: "x" }, output: "xx", approval: { approved: true } },
    { type: "step-start" },
    { type: "text", state: "done", text: "Done." },
  ]);
  assert.equal(await transport.reconnectToStream({ chatId: "t" }), null); // read to its end
  await session.close();
});

test("floeChatTransport: a run that ended while no chat read it is replayed once to the chat made again; a chat that never reconnects still has its run aborted by stop()", async () => {
  const held = [gate(), gate()];
  const llm = mockModel([["Half", { delay: 1 }, "way."], ["Started", { delay: 2 }, "never"]], { sleep: heldSleep(held) });
  const real = floe.createSession({ llm, store: false });
  let over;
  const ended = new Promise((r) => (over = r));
  // The session's first run, watched to its end.
  const session = {
    run: (prompt, o) => {
      const s = real.run(prompt, o);
      return (async function* () {
        yield* s;
        over();
      })();
    },
  };
  const transport = floeChatTransport({ session });
  const a = chat(transport, { id: "t" });
  await a.resumeStream();
  const half = new Promise((r) => (a.state.onReplace = (m) => m.parts.some((p) => p.text === "Half") && r()));
  const sent = a.sendMessage({ text: "Go" });
  await Promise.all([half, held[0].reached]);
  await a.stop();
  await sent;
  held[0].open();
  await ended;
  const b = chat(transport, { id: "t" });
  b.messages = a.messages;
  await b.resumeStream();
  assert.deepEqual(b.messages.map((m) => m.id), a.messages.map((m) => m.id));
  assert.deepEqual(b.messages[1].parts.map(shape), [{ type: "step-start" }, { type: "text", state: "done", text: "Half" }, { type: "text", state: "done", text: "way." }]);
  assert.equal(await transport.reconnectToStream({ chatId: "t" }), null);

  // Another chat id that never asked to reconnect: stop() is a stop.
  const c = chat(transport, { id: "u" });
  const started = new Promise((r) => (c.state.onReplace = (m) => m.parts.some((p) => p.text === "Started") && r()));
  const next = c.sendMessage({ text: "Again" });
  await started;
  await c.stop();
  await next;
  assert.equal(llm.calls[1].signal.aborted, true);
  assert.equal(await transport.reconnectToStream({ chatId: "u" }), null);
  await real.close();
});

/** collected(ref): whether the object of a WeakRef was collected, after a full collection. */
async function collected(ref) {
  v8.setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc");
  await new Promise((r) => setImmediate(r)); // a WeakRef keeps its object to the end of the job that made it
  gc();
  return ref.deref() === undefined;
}

/** The first text delta of a response, held by a WeakRef only; with rest, the response is read to its end. */
async function oneDelta(reader, rest = true) {
  let ref;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return ref;
    if (value.type === "text-delta" && !ref) {
      ref = new WeakRef(value);
      if (!rest) return ref;
    }
  }
}

test("floeChatTransport: a run's chunks are kept for a chat that may reconnect only, and only until no chat can: a chat that never asked keeps none once read, its run going on; one that asked, none once its run is read to its end; one that went away, until it came back and read it", async () => {
  const llm = mockModel([["Hello", " there.", { toolCall: { name: "echo", args: { s: "x" } } }], ["Again", " here."], ["Held", " back."]]);
  const real = floe.createSession({ llm, tools, store: false });
  const ends = []; // each run's end
  const session = {
    run: (prompt, o) => {
      const s = real.run(prompt, o);
      let over;
      ends.push(new Promise((r) => (over = r)));
      return (async function* () {
        yield* s;
        over();
      })();
    },
  };
  const transport = floeChatTransport({ session });
  const send = (chatId, id, abortSignal) => transport.sendMessages({ trigger: "submit-message", chatId, abortSignal, messages: [{ id, role: "user", parts: [{ type: "text", text: "Go" }] }] });

  // A chat that never asked to reconnect (useChat without resume), its run waiting on the chat's answer.
  assert.equal(await collected(await oneDelta((await send("plain", "u1")).getReader())), true);
  await transport.stop("plain");

  // A chat that asked (resume: true), its run read to its end: nothing to reconnect to, nothing kept.
  assert.equal(await transport.reconnectToStream({ chatId: "resumed" }), null);
  assert.equal(await collected(await oneDelta((await send("resumed", "u2")).getReader())), true);
  assert.equal(await transport.reconnectToStream({ chatId: "resumed" }), null);

  // A chat that asked and went away as its response started: the run is kept for it, while the
  // chat made again reads it, and let go once it has read it to its end.
  assert.equal(await transport.reconnectToStream({ chatId: "away" }), null);
  const gone = new AbortController();
  const first = (await send("away", "u3", gone.signal)).getReader();
  assert.equal((await first.read()).value.type, "start");
  gone.abort();
  assert.deepEqual((await first.read()).value, { type: "abort" });
  await ends[2];
  const replay = (await transport.reconnectToStream({ chatId: "away" })).getReader();
  const ref = await oneDelta(replay, false);
  assert.equal(ref.deref().delta, "Held");
  assert.equal(await collected(ref), false);
  while (!(await replay.read()).done);
  assert.equal(await collected(ref), true);
  assert.equal(await transport.reconnectToStream({ chatId: "away" }), null);
  await real.close();
});

test("floeChatTransport and toUIMessages: a chat restored from the stored session while its run goes on (toUIMessages given the transport) gets the run's reply once: rebuilt by the replay, then live: the rest, a call asked, Stop", async () => {
  const held = [gate(), gate()];
  const llm = mockModel([["First."], ["Second."], ["Half", { delay: 1 }, "way.", { toolCall: { name: "echo", args: { s: "x" } } }], ["Echoed", { delay: 2 }, "never"]], { sleep: heldSleep(held) });
  const session = floe.createSession({ llm, tools });
  const transport = floeChatTransport({ session });
  const a = chat(transport, { id: "t", ...auto });
  await a.resumeStream();
  await a.sendMessage({ text: "One" });
  await a.sendMessage({ text: "Two" });
  const sent = a.sendMessage({ text: "Go" });
  await held[0].reached;
  // The chat unmounted (its route left): its run goes on.
  await a.stop();
  await sent;
  const run = a.messages[5].id;
  assert.match(run, /^floe-run-[0-9a-f]{24}$/);

  // The route mounted again restores its messages from the stored session.
  const stored = await floe.readSession(session.id);
  const plain = toUIMessages(stored);
  const restored = toUIMessages(stored, { transport });
  assert.deepEqual(restored.map((m) => m.role), ["user", "assistant", "user", "assistant", "user", "assistant"]);
  // The run's reply has the run's id; the earlier runs', and the prompts, the Trace's.
  assert.match(plain.at(-1).id, /^floe-\d+$/);
  assert.deepEqual(restored.map((m) => m.id), [...plain.slice(0, -1).map((m) => m.id), run]);
  assert.deepEqual(restored.map((m) => m.parts), plain.map((m) => m.parts));
  assert.equal(restored.at(-1).parts[0].type, "step-start");
  assert.deepEqual(toUIMessages(stored, { transport, idPrefix: "s-" }).map((m) => m.id), [...plain.slice(0, -1).map((m) => m.id.replace("floe-", "s-")), run]);
  assert.deepEqual(toUIMessages(stored, { transport }), restored); // stable

  const b = chat(transport, { id: "t", ...auto });
  b.messages = restored;
  const resumed = b.resumeStream();
  held[0].open();
  await resumed;
  assert.equal(b.status, "ready");
  assert.equal(b.error, undefined);
  // One reply: the Trace's copy, rebuilt by the replay and brought up to date.
  assert.deepEqual(b.messages.map((m) => m.id), restored.map((m) => m.id));
  assert.deepEqual(b.messages.slice(0, 5), restored.slice(0, 5));
  const waiting = [
    { type: "step-start" },
    { type: "text", state: "done", text: "Half" },
    { type: "text", state: "done", text: "way." },
    { type: "tool-echo", state: "approval-requested", input: { s: "x" }, approval: {} },
  ];
  assert.deepEqual(b.messages[5].parts.map(shape), waiting);

  // The call asked while no chat showed it, answered: the run goes on in the same message; Stop reaches it.
  const echoed = new Promise((r) => (b.state.onReplace = (m) => m.parts.some((p) => p.text === "Echoed") && r()));
  await b.addToolApprovalResponse({ id: b.messages[5].parts[3].approval.id, approved: true });
  await Promise.all([echoed, held[1].reached]);
  await b.stop();
  b.messages = (await transport.stop("t"))(b.messages);
  assert.equal(llm.calls[3].signal.aborted, true);
  assert.equal(b.messages.length, 6);
  assert.equal(b.messages[5].id, run);
  assert.deepEqual(b.messages[5].parts.map(shape).slice(3), [
    { type: "tool-echo", state: "output-available", input: { s: "x" }, output: "xx", approval: { approved: true } },
    { type: "step-start" },
    { type: "text", state: "streaming", text: "Echoed" },
  ]);
  assert.deepEqual((await floe.readSession(session.id)).at(-1).payload, { type: "abort", reason: "aborted by user" });
  await session.close();
});

test("floeChatTransport and toUIMessages: a run that ends between the restore and the reconnect shows once: replayed if no chat read its end, else the Trace's copy stays, under the run's id", async () => {
  const held = [gate(), gate()];
  const llm = mockModel([["Half", { delay: 1 }, "way."], ["Also", { delay: 2 }, "done."]], { sleep: heldSleep(held) });
  const real = floe.createSession({ llm });
  const ends = [];
  const session = {
    id: real.id,
    run: (prompt, o) => {
      const s = real.run(prompt, o);
      let over;
      ends.push(new Promise((r) => (over = r)));
      return (async function* () {
        yield* s;
        over();
      })();
    },
  };
  const transport = floeChatTransport({ session });

  // No chat reads the run's end: the chat restored mid-run gets it replayed, into the Trace's copy.
  const a = chat(transport, { id: "t" });
  await a.resumeStream();
  const sent = a.sendMessage({ text: "Go" });
  await held[0].reached;
  await a.stop();
  await sent;
  const restored = toUIMessages(await floe.readSession(real.id), { transport });
  assert.deepEqual(restored.map((m) => m.id).at(-1), a.messages[1].id);
  held[0].open();
  await ends[0];
  const b = chat(transport, { id: "t" });
  b.messages = restored;
  await b.resumeStream();
  assert.deepEqual(b.messages.map((m) => m.id), restored.map((m) => m.id));
  assert.deepEqual(b.messages[1].parts.map(shape), [{ type: "step-start" }, { type: "text", state: "done", text: "Half" }, { type: "text", state: "done", text: "way." }]);

  // A chat still reading reads its end: there is nothing to reconnect to, and the restored copy stays, once.
  const c = chat(transport, { id: "u" });
  await c.resumeStream();
  const again = c.sendMessage({ text: "Again" });
  await held[1].reached;
  const copy = toUIMessages(await floe.readSession(real.id), { transport });
  assert.equal(copy.at(-1).id, c.messages[1].id);
  held[1].open();
  await again;
  const d = chat(transport, { id: "u" });
  d.messages = copy;
  await d.resumeStream();
  assert.equal(d.error, undefined);
  assert.deepEqual(d.messages, copy);
  assert.equal(new Set(d.messages.map((m) => m.id)).size, 4);
  await real.close();
});

test("toUIMessages given the transport names the reply of the run whose prompt is the Trace's last only: a Trace read before a run began names the earlier run's; of two chats on one session, with the same prompt, the later run's alone", async () => {
  const held = [gate()];
  const llm = mockModel([["One."], ["Half", { delay: 1 }, "way."]], { sleep: heldSleep(held) });
  const session = floe.createSession({ llm });
  const transport = floeChatTransport({ session });
  const t = chat(transport, { id: "t" });
  await t.resumeStream();
  await t.sendMessage({ text: "Go" });
  const before = await floe.readSession(session.id);
  const ids = toUIMessages(before).map((m) => m.id);
  assert.deepEqual(toUIMessages(before, { transport }).map((m) => m.id), [ids[0], t.messages[1].id]);

  const u = chat(transport, { id: "u" });
  await u.resumeStream();
  const sent = u.sendMessage({ text: "Go" }); // the same prompt
  await held[0].reached;
  assert.deepEqual(toUIMessages(before, { transport }).map((m) => m.id), [ids[0], t.messages[1].id]);
  const during = toUIMessages(await floe.readSession(session.id), { transport });
  assert.deepEqual(during.map((m) => m.role), ["user", "assistant", "user", "assistant"]);
  assert.deepEqual([during[1].id, during[3].id], [ids[1], u.messages[1].id]);
  held[0].open();
  await sent;
  await session.close();
});

test("floeChatTransport lets go of the ids of messages and approvals once the chat's messages no longer hold them", async () => {
  const llm = mockModel([[{ toolCall: { name: "echo", args: { s: "a" } } }], ["Done."], [{ toolCall: { name: "echo", args: { s: "b" } } }], ["Fine."], ["New."]]);
  const session = floe.createSession({ llm, tools, store: false });
  const transport = floeChatTransport({ session });
  const held = () => transport[Symbol.for("floe.debug")].held("t");
  const c = chat(transport, { id: "t", ...auto });
  await c.sendMessage({ text: "One" });
  const done = c.finished();
  await c.addToolApprovalResponse({ id: assistant(c).parts.at(-1).approval.id, approved: true });
  await done;
  assert.equal(assistant(c).parts.at(-1).text, "Done.");
  await c.sendMessage({ text: "Two" });
  assert.equal(assistant(c).parts.at(-1).state, "approval-requested");
  c.messages = (await transport.stop("t"))(c.messages); // the call left asked, shown not run
  assert.deepEqual(held(), { sent: 2, left: 1, answered: 1 });
  // The next message's chat no longer holds the call left asked; the one answered it still shows.
  await c.sendMessage({ text: "Three" });
  assert.deepEqual(held(), { sent: 3, left: 0, answered: 1 });
  // A chat cleared (setMessages([])): its next message is all it holds.
  c.messages = [];
  await c.sendMessage({ text: "Four" });
  assert.equal(assistant(c).parts.at(-1).text, "New.");
  assert.deepEqual(held(), { sent: 1, left: 0, answered: 0 });
  assert.equal(transport[Symbol.for("floe.debug")].held("none"), null);
});

test("toUIMessages: a prompt of images only is a user message of its own, its run's reply another (not the earlier reply, which the transport's id would have the replay empty); a steer's images stay in its reply, its text shown as the user gave it", async () => {
  const PNG = "data:image/png;base64,iVBORw0KGgo=";
  const held = [gate(), gate()];
  const llm = mockModel([["First."], ["Steer me.", { delay: 1 }], ["Steered."], ["Half", { delay: 2 }, "way."]], { sleep: heldSleep(held) });
  const session = floe.createSession({ llm });
  const transport = floeChatTransport({ session });
  const c = chat(transport, { id: "t" });
  await c.resumeStream();
  await c.sendMessage({ text: "One" });
  const steered = c.sendMessage({ text: "Two" });
  await held[0].reached;
  assert.ok(session.steer([floe.msg.userText("Look"), { type: "model_msg", payload: { type: "image_url", role: "user", image_url: PNG } }]));
  held[0].open();
  await steered;
  const sent = c.sendMessage({ files: [{ type: "file", mediaType: "image/png", url: PNG }] });
  await held[1].reached;
  const stored = await floe.readSession(session.id);
  const plain = toUIMessages(stored);
  const restored = toUIMessages(stored, { transport });
  held[1].open();
  await sent;
  const look = (m) => [m.role, m.parts.map((p) => p.text ?? p.type)];
  assert.deepEqual(plain.map(look), [
    ["user", ["One"]],
    ["assistant", ["step-start", "First."]],
    ["user", ["Two"]],
    ["assistant", ["step-start", "Steer me.", "steering-message", "step-start", "Steered."]],
    ["user", ["file"]],
    ["assistant", ["step-start"]],
  ]);
  assert.deepEqual(plain[4].parts, [{ type: "file", mediaType: "image/png", url: PNG }]);
  // The steering part shows the words the user gave, not the markers the model gets.
  for (const m of [plain[3], c.messages[3]]) assert.deepEqual(m.parts.find((p) => p.type === "steering-message").parts, [{ type: "text", text: "Look" }]);
  assert.deepEqual(c.messages.slice(0, 5).map(look), plain.slice(0, 5).map(look));
  assert.deepEqual(restored.map((m) => m.id), [...plain.slice(0, -1).map((m) => m.id), c.messages[5].id]);
  await session.close();
});

test("toUIMessages leaves a compaction out, as the chat shows none: its prompt, request and summary; the reply of a run that compacted keeps the transport's id", async () => {
  const { msg } = floe;
  const held = gate();
  let k = 0;
  let compactions = 0;
  const context = () => ({
    async *streamGenerate({ newMessages }) {
      if (newMessages.some((m) => m.payload.type === "text" && m.payload.text === "Summarize.")) {
        if (++compactions === 2) await held.wait(); // the run's second compaction, at its end
        yield msg.text(`[summary]S${compactions}[/summary]`);
        yield msg.tokenUsage({ output: 5, total: 10 }, { output: 5, total: 10 });
        return;
      }
      const n = k++;
      yield msg.text(`Reply ${n}.`);
      if (n === 0) yield msg.toolCall("c1", "echo", { s: "x" }); // a compaction mid-task follows
      yield msg.tokenUsage({ output: 5, total: 500 }, { output: 5, total: 500 });
    },
  });
  const session = floe.createSession({ llm: context(), newLLM: context, tools, config: { compaction: { mode: "summarize", prompt: "Summarize.", maxContextLength: 400 } } });
  const transport = floeChatTransport({ session, approve: () => "allow" });
  const c = chat(transport, { id: "t" });
  await c.resumeStream();
  const sent = c.sendMessage({ text: "One" });
  await held.reached;
  const restored = toUIMessages(await floe.readSession(session.id), { transport });
  held.open();
  await sent;
  const look = (m) => [m.role, m.parts.map((p) => p.text ?? p.type)];
  assert.deepEqual(restored.map(look), [["user", ["One"]], ["assistant", ["step-start", "Reply 0.", "tool-echo", "step-start", "Reply 1."]]]);
  assert.deepEqual(restored.map(look), c.messages.map(look));
  assert.equal(restored[1].id, c.messages[1].id);
  await c.sendMessage({ text: "Two" });
  const after = toUIMessages(await floe.readSession(session.id), { transport });
  assert.deepEqual(after.map(look), c.messages.map(look));
  assert.equal(after[3].id, c.messages[3].id);
  await session.close();
});

test("toUIMessages: ids are idPrefix and the index of each message's first record; a call of a Trace cut while it ran (no output, no end) is output-error, not running", async () => {
  const llm = mockModel([["Echoing.", { toolCall: { name: "echo", args: { s: "a" } } }], ["Done."]]);
  const session = floe.createSession({ llm, tools });
  for await (const _ of session.run("Echo a", { approve: () => "allow" }));
  await session.close();
  const stored = await floe.readSession(session.id);
  const prompt = stored.findIndex((m) => m.payload.type === "text" && m.payload.role === "user");
  const begin = stored.findIndex((m) => m.payload.type === "request_begin");
  const ui = toUIMessages(stored);
  assert.deepEqual(ui.map((m) => [m.role, m.id]), [["user", `floe-${prompt}`], ["assistant", `floe-${begin}`]]);
  assert.deepEqual(toUIMessages(stored, { idPrefix: "s1:" }).map((m) => m.id), [`s1:${prompt}`, `s1:${begin}`]);
  // A crash while the tool ran: the Trace ends at the call's decision.
  const cut = stored.slice(0, stored.findIndex((m) => m.payload.type === "approval_decision") + 1);
  const [, reply] = toUIMessages(cut);
  const call = reply.parts.find((p) => p.type === "tool-echo");
  assert.deepEqual(shape(call), { type: "tool-echo", state: "output-error", input: { s: "a" }, errorText: NOT_RUN });
});

test("toUIMessages passes over a user text that is no string (a Trace from storage is data), as it passes over a message that is no object", () => {
  const user = (text) => ({ type: "model_msg", payload: { type: "text", role: "user", text } });
  const transport = floeChatTransport({ session: floe.createSession({ llm: mockModel([]), store: false }) });
  for (const bad of [5, null, {}, undefined]) {
    const messages = [null, user("Hi"), { type: "model_msg", payload: { type: "text", role: "assistant", text: "Hello." } }, user(bad)];
    for (const options of [{}, { transport }]) {
      assert.deepEqual(toUIMessages(messages, options).map((m) => [m.role, m.parts.map((p) => p.text ?? p.type)]), [["user", ["Hi"]], ["assistant", ["Hello."]]], String(bad));
    }
  }
});

// toUIMessages reads a Trace from storage, which is data. Mutated Traces of
// real sessions (keys dropped, values of other types, messages dropped,
// repeated, swapped or moved, payloads of other records spliced in) give
// UIMessages, never an exception, with and without the transport. Seeded:
// a failure names its seed and case, and comes back the same.
test("toUIMessages of 3,000 mutated Traces throws nothing, with or without the transport, and gives messages of unique string ids and parts", async () => {
  const { msg } = floe;
  const PNG = "data:image/png;base64,iVBORw0KGgo=";
  const llm = mockModel([
    [{ thinking: "Which?" }, "Let me echo.", { toolCall: { name: "echo", args: { s: "yes" } } }, { toolCall: { name: "echo", args: { s: "no" } } }, { toolCall: { name: "broken" } }],
    ["Done."],
    ["Seen."],
  ]);
  const session = floe.createSession({ llm, tools });
  for await (const _ of session.run("Echo", { approve: (call) => (JSON.parse(call.payload.arguments).s === "no" ? "deny" : "allow") }));
  for await (const _ of session.run([msg.userText("Look"), { type: "model_msg", payload: { type: "image_url", role: "user", image_url: PNG } }]));
  const traces = [await floe.readSession(session.id)];
  await session.close();
  // A compaction's records, as a session that compacts stores them.
  let k = 0;
  const context = () => ({
    async *streamGenerate({ newMessages }) {
      if (newMessages.some((m) => m.payload.type === "text" && m.payload.text === "Summarize.")) {
        yield msg.text("[summary]S[/summary]");
        yield msg.tokenUsage({ output: 5, total: 10 }, { output: 5, total: 10 });
        return;
      }
      yield msg.text(`Reply ${k}.`);
      if (k++ === 0) yield msg.toolCall("c1", "echo", { s: "x" });
      yield msg.tokenUsage({ output: 5, total: 500 }, { output: 5, total: 500 });
    },
  });
  const compacting = floe.createSession({ llm: context(), newLLM: context, tools, config: { compaction: { mode: "summarize", prompt: "Summarize.", maxContextLength: 400 } } });
  for await (const _ of compacting.run("One", { approve: () => "allow" }));
  traces.push(await floe.readSession(compacting.id));
  await compacting.close();
  assert.ok(traces.every((t) => t.length > 10), "the sessions stored their records");

  const transport = floeChatTransport({ session: floe.createSession({ llm: mockModel([]), store: false }) });
  let seed = 0x9e3779b9;
  const rand = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = (a) => a[Math.floor(rand() * a.length)];
  const pool = traces.flat();
  const values = () => [null, undefined, 0, -1, 1e300, NaN, true, "", "x".repeat(1 + Math.floor(rand() * 64)), "partial_text", "text", "user", "assistant", "tool_call", "compaction_begin", "compaction_end", [], [1, "a"], {}, { type: "text" }, structuredClone(pick(pool))];
  /** The objects and arrays of v, each with its parent and key. */
  const nodes = (v, out = [], parent = null, key = null) => {
    if (v !== null && typeof v === "object") {
      out.push({ v, parent, key });
      for (const k of Object.keys(v)) nodes(v[k], out, v, k);
    }
    return out;
  };
  const mutate = (trace) => {
    const t = structuredClone(trace);
    for (let n = 1 + Math.floor(rand() * 4); n > 0; n--) {
      const r = rand();
      if (r < 0.15 && t.length) t.splice(Math.floor(rand() * t.length), 1);
      else if (r < 0.25 && t.length) t.splice(Math.floor(rand() * (t.length + 1)), 0, structuredClone(pick(t)));
      else if (r < 0.35 && t.length > 1) {
        const [i, j] = [Math.floor(rand() * t.length), Math.floor(rand() * t.length)];
        [t[i], t[j]] = [t[j], t[i]];
      } else if (r < 0.45) t.splice(Math.floor(rand() * (t.length + 1)), 0, structuredClone(pick(pool)));
      else {
        const { v } = pick(nodes(t));
        const keys = Object.keys(v);
        if (keys.length === 0 || rand() < 0.1) v[pick(["type", "payload", "role", "text", "origin", "timestamp", "id"])] = pick(values());
        else if (rand() < 0.3) delete v[pick(keys)];
        else v[pick(keys)] = pick(values());
      }
    }
    return t;
  };
  for (let i = 0; i < 3000; i++) {
    const base = traces[i % traces.length];
    const before = seed;
    const t = mutate(base);
    for (const options of [{}, { transport }, { idPrefix: "m-" }]) {
      let out;
      try {
        out = toUIMessages(t, options);
      } catch (e) {
        assert.fail(`case ${i} (seed ${before}), options ${Object.keys(options)}: ${e.stack}\n${JSON.stringify(t).slice(0, 2000)}`);
      }
      assert.ok(Array.isArray(out), `case ${i}`);
      const ids = out.map((m) => m.id);
      assert.ok(ids.every((id) => typeof id === "string") && new Set(ids).size === ids.length, `case ${i} (seed ${before}): ids ${ids}`);
      assert.ok(out.every((m) => (m.role === "user" || m.role === "assistant") && Array.isArray(m.parts)), `case ${i} (seed ${before})`);
    }
  }
});

test("a file the model made (assistant inline_data, fromAISDK's file part) is a file chunk and part (a data: URL), in the run's stream and in toUIMessages of the stored session", async () => {
  const png = "iVBORw0KGgo=";
  const model = new MockLanguageModelV4({
    provider: "mock",
    modelId: "m",
    doStream: async () => ({
      stream: simulateReadableStream({
        chunks: [
          { type: "text-delta", id: "t", delta: "Here:" },
          { type: "file", mediaType: "image/png", data: { type: "data", data: png } },
          { type: "text-delta", id: "t", delta: "Done." },
          { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } } },
        ],
        initialDelayInMs: null,
        chunkDelayInMs: null,
      }),
    }),
  });
  const session = floe.createSession({ llm: fromAISDK(model) });
  const { chunks, message, errors } = await read(toUIMessageStream(session.run("Draw")));
  await session.close();
  assert.deepEqual(errors, []);
  assert.deepEqual(chunks.filter((c) => c.type === "file"), [{ type: "file", url: `data:image/png;base64,${png}`, mediaType: "image/png" }]);
  const want = [
    { type: "step-start" },
    { type: "text", state: "done", text: "Here:" },
    { type: "file", mediaType: "image/png", url: `data:image/png;base64,${png}` },
    { type: "text", state: "done", text: "Done." },
  ];
  assert.deepEqual(message.parts.map((p) => (p.type === "file" ? p : shape(p))), want);
  const [, reply] = toUIMessages(await floe.readSession(session.id));
  assert.deepEqual(reply.parts.map((p) => (p.type === "file" ? p : shape(p))), want);
});
