// floe/ai-sdk with the AI SDK's own providers, @ai-sdk/openai-compatible
// and @ai-sdk/anthropic (pinned in package.json), against a loopback
// server replaying the shared provider corpus's recorded bytes: each
// Chat Completions and Anthropic case through a Floe session, checked
// against its expectation.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { createAnthropic } from "@ai-sdk/anthropic";
import { fromAISDK } from "../../static/ai-sdk.mjs";
import { floe, meta, collect, instantClock } from "../node/helpers.mjs";
import { replayServer, writeResponse, loadCases, checkCase } from "../node/replay.mjs";

/** An AI SDK model of the case's provider against baseURL. */
export function sdkModel(provider, baseURL) {
  if (provider === "anthropic") return createAnthropic({ apiKey: "sk-test", baseURL })("claude-test");
  return createOpenAICompatible({ name: "compat", apiKey: "sk-test", baseURL, includeUsage: true }).chatModel("floe-test");
}

const cases = loadCases().filter((c) => c.provider === "anthropic" || c.provider === "openai-chat");

test("the shared corpus's Chat Completions and Anthropic cases through the AI SDK's providers", async (t) => {
  const byName = new Map(cases.map((c) => [c.name, c]));
  const srv = await replayServer(t, async (req, res) => writeResponse(res, byName.get(req.url.split("/")[1]).response));
  const failed = [];
  for (const c of cases) {
    await t.test(c.name, async () => {
      const session = floe.createSession({
        meta: meta(),
        store: false,
        llm: fromAISDK(sdkModel(c.provider, `${srv.url}/${c.name}/v1`)),
        tools: [{ name: "get_weather", description: "Weather of a city", parameters: { type: "object", properties: { city: { type: "string" } } } }],
        config: { maxTurns: 1, maxReconnects: 0 },
        clock: instantClock(),
      });
      const msgs = await collect(session.run("Go.", { approve: async () => "deny" }));
      await session.close();
      const diff = checkCase(c.expect, msgs);
      if (diff) failed.push(`${c.name}: ${diff}`);
    });
  }
  console.log(failed.join("\n"));
  assert.deepEqual(failed, []);
});
