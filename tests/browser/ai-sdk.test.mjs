// floe/ai-sdk in Chromium: fromAISDK over a hand-written specification v4
// model in a page, through a session stored in IndexedDB, then the page
// reloaded (a fresh floe.wasm) and the session resumed with a fresh model:
// each part's providerMetadata, kept as fidelity, survives the Trace in
// IndexedDB, loadHistory hands it back, and the model is sent it again as
// providerOptions, the conversation as it was before the reload.
import { test } from "node:test";
import assert from "node:assert/strict";
import { baseURL, explain, launch, page as firstPage, WAIT } from "./harness.mjs";

const PAGE = "/tests/browser/fixtures/ai-sdk.html";
const ID = "session-2026-01-01-00-00-00-aisdkpage1";

async function open(page) {
  await page.goto(baseURL() + PAGE);
  await page.waitForFunction(() => window.aisdkReady === true, null, { timeout: WAIT });
}

test("fromAISDK in a page: fidelity survives IndexedDB and a reload, and goes back to the model", { timeout: 120_000 }, async (t) => {
  const { ctx, log } = await launch(t);
  const page = await firstPage(ctx);
  await open(page);
  const one = await page.evaluate((id) => window.aisdk.first(id), ID);
  const kept = [
    ["thinking", { providerMetadata: { hand: { itemId: "rs_1", encrypted: "gAAAAB-opaque==" } } }],
    ["text", { providerMetadata: { hand: { itemId: "msg_1", phase: "commentary" } } }],
    ["tool_call", { providerMetadata: { hand: { thoughtSignature: "sig-1" } } }],
  ];
  assert.deepEqual(one.ends, ["completed", "completed"], explain(log));
  assert.deepEqual(one.fidelity, kept);
  // Within the run, the second request sends the reply back with its metadata.
  const sent = one.prompts[1];
  assert.deepEqual(sent.map((m) => m.role), ["system", "user", "assistant", "tool"]);
  assert.deepEqual(sent[2].content, [
    { type: "reasoning", text: "Read it first.", providerOptions: kept[0][1].providerMetadata },
    { type: "text", text: "Reading.", providerOptions: kept[1][1].providerMetadata },
    { type: "tool-call", toolCallId: "call_1", toolName: "read_file", input: { path: "a.md" }, providerOptions: kept[2][1].providerMetadata },
  ]);

  await page.reload();
  await page.waitForFunction(() => window.aisdkReady === true, null, { timeout: WAIT });
  const two = await page.evaluate((id) => window.aisdk.resumed(id), ID);
  assert.deepEqual(two.ends, ["completed"], explain(log));
  assert.deepEqual(two.loaded, kept, "loadHistory got the fidelity from IndexedDB");
  const again = two.prompts[0];
  assert.deepEqual(again.slice(0, 4), sent, "the conversation as it was sent before the reload");
  assert.deepEqual(again.slice(4), [
    { role: "assistant", content: [{ type: "text", text: "It says hi." }] },
    { role: "user", content: [{ type: "text", text: "And now?" }] },
  ]);
});
