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
