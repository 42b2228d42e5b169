// Values real JavaScript hands a library, at the places the last rounds'
// hardening tests do not reach: a string that starts with U+FEFF crossing
// from Go, a run's input the Trace could not keep, tool() schemas that
// JSON would change, a transcript's methods passed as callbacks.
import { test } from "node:test";
import assert from "node:assert/strict";
import { floe, meta, scriptedLLM, say, collect } from "./helpers.mjs";

// TextDecoder drops a leading byte order mark unless told not to: a Go
// string handed to JavaScript lost its first character when it was U+FEFF.
test("strings that start with U+FEFF reach JavaScript whole: the model's system prompt, listSessions' id and first prompt", async () => {
  const id = "\ufeffsession-bom";
  const llm = scriptedLLM(say("hi"));
  const session = floe.createSession({ meta: { ...meta(id), system_prompt: "\ufeffSYS" }, llm });
  await collect(session.run("\ufeffprompt"));
  await session.close();
  assert.equal(llm.calls[0].systemPrompt, "\ufeffSYS");
  assert.equal(llm.calls[0].newMessages[0].payload.text, "\ufeffprompt");
  const row = (await floe.listSessions()).find((s) => s.id.endsWith("session-bom"));
  assert.equal(row?.id, id);
  assert.equal(row.firstPrompt, "\ufeffprompt");
  await floe.deleteSession(id);
});

// A run's input is written to the Trace (E-3.6); a fragment or a message
// with origin never is (E-16.4): accepted, it reached the model but not
// the Trace, and a resumed session's model never saw it.
test("run() and steer() refuse input the Trace cannot keep (a partial_*, a message with origin): bad_argument naming it", async () => {
  const user = { type: "model_msg", payload: { type: "text", role: "user", text: "a" } };
  const cases = [
    ["a message with origin", { ...user, origin: ["child"] }, /input\[0\].*origin/],
    ["a fragment", { type: "model_msg", payload: { type: "partial_text", role: "assistant", event_type: "delta", text: "x" } }, /input\[0\].*partial_text/],
  ];
  for (const [what, m, named] of cases) {
    const llm = scriptedLLM(say("hi"));
    const session = floe.createSession({ meta: meta(), llm });
    assert.throws(() => session.run([m, user]), (e) => e?.code === "bad_argument" && named.test(e.message), what);
    let steered;
    const msgs = await collect(session.run("go"));
    assert.equal(msgs.at(-1).payload.type, "request_end");
    // steer() is checked before it looks for a run in flight.
    try {
      steered = session.steer([user, m]);
    } catch (e) {
      steered = e;
    }
    assert.equal(steered?.code, "bad_argument", `${what}: steer gave ${steered}`);
    assert.match(steered.message, /input\[1\]/);
    assert.equal(llm.calls.length, 1, what);
    await session.close();
  }
});

// The model gets a tool's parameters as JSON, the validator the object: a
// value JSON changes made them disagree (a hole in required: the model was
// told [null, "a"] and every call failed "missing the required property
// undefined"; a function const: the model was told nothing, the validator
// wanted null).
test("tool(): a schema value JSON would change is bad_argument naming its path; an undefined key is absent, as in JSON", () => {
  const cases = [
    [{ type: "object", required: [, "a"] }, "parameters.required[0]: a hole"],
    [{ type: "object", properties: { a: { const: () => 1 } } }, "parameters.properties.a.const: a function"],
    [{ type: "object", properties: { a: { enum: ["x", NaN] } } }, "parameters.properties.a.enum[1]: NaN"],
    [{ type: "object", properties: { a: { anyOf: [, { type: "string" }] } } }, "parameters.properties.a.anyOf[0]: a hole"],
    [{ type: "object", properties: { a: { type: "number", maximum: Infinity } } }, "parameters.properties.a.maximum: Infinity"],
    [{ type: "object", properties: { a: { $ref: "#/%E0%A4%A" } } }, 'parameters.properties.a.$ref: "#/%E0%A4%A" is not a JSON pointer'],
  ];
  for (const [parameters, named] of cases) {
    assert.throws(
      () => floe.tool({ name: "t", parameters, execute() {} }),
      (e) => e?.code === "bad_argument" && e.message.includes(named),
      named,
    );
  }
  const t = floe.tool({ name: "t", parameters: { type: "object", description: undefined, properties: { a: { type: "string", title: undefined } } }, execute() {} });
  assert.equal(t.name, "t");
});

// A transcript's push passed alone (messages.forEach(view.push)) threw
// "Cannot read properties of undefined"; a message whose payload getter
// throws threw that error, not bad_argument.
test("transcript: push, consume and end work detached; a message that cannot be read is bad_argument", async () => {
  const view = floe.transcript();
  const { push, consume, end } = view;
  [floe.msg.userText("a")].forEach(push);
  await consume([floe.msg.userText("b")]);
  end();
  assert.deepEqual(view.turns.map((t) => t.text), ["a", "b"]);
  assert.equal(view.status, "done");
  const hostile = new Proxy({}, { get() { throw new Error("hostile read"); } });
  assert.throws(() => push(hostile), (e) => e?.code === "bad_argument" && /transcript\.push: message: reading it threw: hostile read/.test(e.message));
});
